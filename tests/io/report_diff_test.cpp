// io/report_diff: the inputs that changed, the step-time attribution (its components add up to
// the change of the step time) and the order of the reasons (the component that moved most
// comes first), on hand-built reports and on two simulated scenarios.
#include "sim/io/report_diff.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "trainsim/report/simulate.hpp"

#include "sim/io/scenario_loader.hpp"

using namespace trainsim;

namespace {

// A small scenario (8-layer model on 8 GPUs of h100-dgx) with `tp`, `pp` and sharding set.
parallel::Scenario scenario(std::int64_t tp, std::int64_t pp, const std::string& sharding) {
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx",
    "model": {"layers": 8, "hidden": 1024, "heads": 8, "kv_heads": 8, "ffn_hidden": 4096,
              "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm",
              "tied_embeddings": false, "position_embedding": "rope"},
    "cluster": {"gpus": 16},
    "training": {"seq_len": 2048, "micro_batch": 1, "global_batch": 64}})");
  doc.json["parallel"] = {{"tp", tp}, {"pp", pp}, {"sharding", sharding}};
  return io::scenario_from_document(doc);
}

io::DiffSide simulated(const parallel::Scenario& s, const std::string& source) {
  return io::DiffSide{.source = source,
                      .scenario = s,
                      .report = report::simulate(s).report,
                      .problems = {},
                      .problem_flags = {}};
}

// A report whose step time is exactly compute + exposed + bubble, as report/simulate.cpp's is.
report::Report hand_report(double compute, double exposed, double bubble) {
  report::Report r;
  r.compute = Seconds(compute);
  r.communication = Seconds(exposed);
  r.exposed_communication = Seconds(exposed);
  r.bubble = Seconds(bubble);
  r.iteration_time = Seconds(compute + exposed + bubble);
  r.tokens_per_s = 1000.0 / r.iteration_time.value();
  r.memory.total = Bytes(10.0);
  r.memory.activations = Bytes(10.0);
  r.memory.capacity = Bytes(100.0);
  r.memory.fits = true;
  return r;
}

Seconds component_sum(const io::ReportDiff& d) {
  Seconds sum{};
  for (const auto& c : d.step_time) sum += c.delta;
  return sum;
}

// A side of the given report, with no plan problem.
io::DiffSide side(const std::string& source, const parallel::Scenario& s, report::Report r) {
  return io::DiffSide{
      .source = source, .scenario = s, .report = std::move(r), .problems = {}, .problem_flags = {}};
}
}  // namespace

TEST_CASE("report_diff: the inputs that changed are listed by JSON pointer", "[io]") {
  const parallel::Scenario a = scenario(1, 1, "shard_grad_op");
  const parallel::Scenario b = scenario(2, 1, "shard_grad_op");
  const io::ReportDiff d = io::diff_reports(simulated(a, "a.json"), simulated(b, "b.json"));
  // tp 1 -> 2 on 16 GPUs: dp = 16 / tp goes 16 -> 8; nothing else differs.
  REQUIRE(d.inputs_changed.size() == 2);
  CHECK(d.inputs_changed[0].pointer == "/parallel/dp");
  CHECK(d.inputs_changed[0].a == 16);
  CHECK(d.inputs_changed[0].b == 8);
  CHECK(d.inputs_changed[1].pointer == "/parallel/tp");
  CHECK(d.inputs_changed[1].a == 1);
  CHECK(d.inputs_changed[1].b == 2);
}

TEST_CASE("report_diff: an inline input is one line against a name, key by key against another",
          "[io]") {
  // docs/diff.md: hardware, model and stack are compared by the name the scenario gives. Against
  // a name an inline object is one change at /hardware (its keys were listed one by one, under
  // pointers a key with '/' made ambiguous); two inline objects that differ are listed key by
  // key, escaped (RFC 6901), so that the line says what differs.
  const parallel::Scenario a = scenario(1, 1, "shard_grad_op");
  parallel::Scenario b = a;
  nlohmann::json model = nlohmann::json::parse(a.model_inline);
  model["vocab"] = 32768;
  model["a/b~c"] = 1;  // not a model key: only the pointer's escaping is tested
  b.model_inline = model.dump();
  const io::ReportDiff d = io::diff_reports(side("a.json", a, hand_report(1.0, 0.1, 0.0)),
                                            side("b.json", b, hand_report(1.0, 0.1, 0.0)));
  REQUIRE(d.inputs_changed.size() == 2);
  CHECK(d.inputs_changed[0].pointer == "/model/a~1b~0c");
  CHECK(d.inputs_changed[0].a.is_null());
  CHECK(d.inputs_changed[1].pointer == "/model/vocab");
  CHECK(d.inputs_changed[1].a == 32000);
  CHECK(d.inputs_changed[1].b == 32768);

  parallel::Scenario named = a;
  named.model_inline.clear();
  named.model_name = "llama2-7b";
  const io::ReportDiff n = io::diff_reports(side("a.json", named, hand_report(1.0, 0.1, 0.0)),
                                            side("b.json", b, hand_report(1.0, 0.1, 0.0)));
  REQUIRE(n.inputs_changed.size() == 1);
  CHECK(n.inputs_changed[0].pointer == "/model");
  CHECK(n.inputs_changed[0].a == "llama2-7b");
  CHECK(n.inputs_changed[0].b == model);
  std::ostringstream table;
  io::write_diff_table(table, side("a.json", named, hand_report(1.0, 0.1, 0.0)),
                       side("b.json", b, hand_report(1.0, 0.1, 0.0)), n);
  CHECK_THAT(table.str(), Catch::Contains("\"llama2-7b\" -> an inline object"));
}

TEST_CASE("report_diff: the step-time components add up to the step-time change", "[io]") {
  SECTION("hand-built reports") {
    // A: 1.0 + 0.5 + 0.25 = 1.75 s; B: 1.25 + 2.0 + 0.25 = 3.5 s. The deltas are +0.25 s of
    // compute, +1.5 s of exposed communication and 0 of bubble (no host overhead in a default
    // stack): +1.75 s in all, the step-time change.
    const parallel::Scenario s = scenario(1, 1, "shard_grad_op");
    io::DiffSide a = side("a", s, hand_report(1.0, 0.5, 0.25));
    io::DiffSide b = side("b", s, hand_report(1.25, 2.0, 0.25));
    a.scenario.stack.iteration_overhead = Seconds(0.0);
    b.scenario.stack.iteration_overhead = Seconds(0.0);
    const io::ReportDiff d = io::diff_reports(a, b);
    REQUIRE(d.step_time.size() == 4);
    CHECK(component_sum(d).value() == Approx(1.75).epsilon(1e-12));
    CHECK(d.residual.value() == Approx(0.0).margin(1e-15));
    // Exposed communication moved most (+1.5 s against +0.25 s), so it is the first reason.
    REQUIRE(d.reasons.size() >= 2);
    CHECK(d.reasons[0].component == "exposed_communication");
    CHECK(d.reasons[0].delta == Approx(1.5).epsilon(1e-12));
    CHECK(d.reasons[1].component == "compute");
  }
  SECTION("a host overhead is split out of the bubble") {
    // The bubble holds the stack's host overhead: 0.25 s of bubble with 0.1 s -> 0.2 s of
    // overhead is 0.15 s -> 0.05 s of GPU idle; the two deltas (+0.1, -0.1) cancel.
    const parallel::Scenario s = scenario(1, 1, "shard_grad_op");
    io::DiffSide a = side("a", s, hand_report(1.0, 0.5, 0.25));
    io::DiffSide b = side("b", s, hand_report(1.0, 0.5, 0.25));
    a.scenario.stack.iteration_overhead = Seconds(0.1);
    b.scenario.stack.iteration_overhead = Seconds(0.2);
    const io::ReportDiff d = io::diff_reports(a, b);
    CHECK(d.step_time[2].name == "gpu_idle");
    CHECK(d.step_time[2].delta.value() == Approx(-0.1).epsilon(1e-12));
    CHECK(d.step_time[3].name == "host_overhead");
    CHECK(d.step_time[3].delta.value() == Approx(0.1).epsilon(1e-12));
    CHECK(component_sum(d).value() == Approx(0.0).margin(1e-15));
  }
  SECTION("a component that moved by noise is reported as 0, and the residual holds it") {
    // Exposed communication 0.5 s -> 0.5 s + 1e-12 s, below kNoise (1e-9 of the larger): its
    // delta_s is 0. The residual was taken from the raw changes (0.25 s + 1e-12 s of step time
    // less 0.25 s + 1e-12 s of components: about 0), so the reported deltas and the residual
    // added up to 0.25 s against a step-time delta of 0.25 s + 1e-12 s. Now the residual is
    // the reported step-time delta less the reported components: 1e-12 s, to rounding.
    const parallel::Scenario s = scenario(1, 1, "shard_grad_op");
    io::DiffSide a = side("a", s, hand_report(1.0, 0.5, 0.25));
    io::DiffSide b = side("b", s, hand_report(1.25, 0.5 + 1e-12, 0.25));
    a.scenario.stack.iteration_overhead = Seconds(0.0);
    b.scenario.stack.iteration_overhead = Seconds(0.0);
    const io::ReportDiff d = io::diff_reports(a, b);
    REQUIRE(d.step_time[1].name == "exposed_communication");
    CHECK(d.step_time[1].delta.value() == 0.0);
    REQUIRE(d.deltas.front().pointer == "/iteration_time_s");
    const double reported = d.deltas.front().delta;
    CHECK(reported == Approx(0.25 + 1e-12).epsilon(1e-15));
    CHECK(d.residual.value() == Approx(1e-12).margin(1e-15));
    CHECK(component_sum(d).value() + d.residual.value() == Approx(reported).margin(1e-16));
  }
  SECTION("simulated scenarios") {
    // Whatever the plans, report/simulate.cpp makes the step time compute + exposed + bubble on
    // the critical stage, so the components add up to the change within rounding.
    const auto [tp, pp, sharding] = GENERATE(std::make_tuple(2, 1, std::string("shard_grad_op")),
                                             std::make_tuple(1, 2, std::string("none")),
                                             std::make_tuple(2, 2, std::string("full_shard")));
    const io::ReportDiff d = io::diff_reports(simulated(scenario(1, 1, "shard_grad_op"), "a"),
                                              simulated(scenario(tp, pp, sharding), "b"));
    const double change = d.deltas.front().b - d.deltas.front().a;
    REQUIRE(d.deltas.front().pointer == "/iteration_time_s");
    CHECK(component_sum(d).value() == Approx(change).margin(1e-9 * d.deltas.front().a));
    CHECK(std::fabs(d.residual.value()) < 1e-9 * d.deltas.front().a);
    // The first reason is the component whose |delta| is largest.
    double largest = 0.0;
    std::string name;
    for (const auto& c : d.step_time) {
      if (std::fabs(c.delta.value()) > largest) {
        largest = std::fabs(c.delta.value());
        name = c.name;
      }
    }
    REQUIRE_FALSE(d.reasons.empty());
    CHECK(d.reasons.front().component == name);
  }
}

TEST_CASE("report_diff: the memory reason names the term that moved most", "[io]") {
  // A: activations 10 B of 10 B; B: activations 30 B and buffers 5 B, total 35 B. The memory
  // reason lists activations (+20 B) before buffers (+5 B).
  const parallel::Scenario s = scenario(1, 1, "shard_grad_op");
  io::DiffSide a = side("a", s, hand_report(1.0, 0.5, 0.25));
  report::Report rb = hand_report(1.0, 0.5, 0.25);
  rb.memory.activations = Bytes(30.0);
  rb.memory.buffers = Bytes(5.0);
  rb.memory.total = Bytes(35.0);
  io::DiffSide b{.source = "b", .scenario = s, .report = rb, .problems = {}, .problem_flags = {}};
  const io::ReportDiff d = io::diff_reports(a, b);
  REQUIRE_FALSE(d.reasons.empty());
  const io::DiffReason& m = d.reasons.back();
  CHECK(m.component == "memory");
  CHECK(m.delta == Approx(25.0).epsilon(1e-12));
  CHECK_THAT(m.text, Catch::Contains("activations +20.0 B, buffers +5.00 B"));
}

TEST_CASE("report_diff: an impossible plan on one side is a reason, not a failure", "[io]") {
  const parallel::Scenario s = scenario(1, 1, "shard_grad_op");
  const io::DiffSide a = simulated(s, "a");
  io::DiffSide b{.source = "b",
                 .scenario = scenario(1, 1, "shard_grad_op"),
                 .report = {},
                 .problems = {},
                 .problem_flags = {}};
  b.scenario.parallel.tp = 3;
  b.problems = {"/parallel/tp: tp 3 does not divide heads 8"};
  const io::ReportDiff d = io::diff_reports(a, b);
  CHECK(d.deltas.empty());
  CHECK(d.step_time.empty());
  REQUIRE(d.reasons.size() == 1);
  CHECK(d.reasons[0].component == "plan");
  CHECK_THAT(d.reasons[0].text, Catch::Contains("B is an impossible plan: /parallel/tp"));
  const nlohmann::json j = io::diff_to_json(a, b, d);
  CHECK(j["b"]["report"].is_null());
  CHECK(j["inputs_changed"][0]["pointer"] == "/parallel/tp");
}

TEST_CASE("report_diff: byte metrics are whole bytes in the JSON, as in the reports", "[io]") {
  // The reserve holds a fraction of HBM (fragmentation), so it is no whole number of bytes before
  // rounding: the deltas carry the reports' integers and their integer difference.
  const io::DiffSide a = simulated(scenario(1, 1, "shard_grad_op"), "a");
  const io::DiffSide b = simulated(scenario(2, 2, "none"), "b");
  const nlohmann::json j = io::diff_to_json(a, b, io::diff_reports(a, b));
  for (const char* key :
       {"/memory/reserved_bytes", "/memory/usable_bytes", "/memory/total_bytes"}) {
    INFO(key);
    const nlohmann::json& m = j["deltas"][key];
    REQUIRE(m["a"].is_number_integer());
    REQUIRE(m["b"].is_number_integer());
    CHECK(m["delta"].get<std::int64_t>() ==
          m["b"].get<std::int64_t>() - m["a"].get<std::int64_t>());
    const std::string field = std::string(key).substr(std::string("/memory/").size());
    CHECK(m["a"] == j["a"]["report"]["memory"][field]);
    CHECK(m["b"] == j["b"]["report"]["memory"][field]);
  }
}

TEST_CASE("report_diff: a change of a few bytes is a change, in the table and the JSON alike",
          "[io]") {
  // 50 B more in 80 GiB (85,899,345,920 B) is 5.8e-10 of the value, under the 1e-9 that makes a
  // change of seconds noise; but both sides are whole bytes, so the change is exact: +50 B, and
  // its relative change 50 / 85,899,345,920.
  const parallel::Scenario s = scenario(1, 1, "none");
  report::Report ra = hand_report(1.0, 0.0, 0.0);
  ra.memory.total = Bytes(85899345920.0);
  report::Report rb = ra;
  rb.memory.total = Bytes(85899345970.0);
  const io::DiffSide a = side("a", s, ra);
  const io::DiffSide b = side("b", s, rb);
  const io::ReportDiff d = io::diff_reports(a, b);
  const nlohmann::json j = io::diff_to_json(a, b, d);
  const nlohmann::json& m = j["deltas"]["/memory/total_bytes"];
  CHECK(m["delta"] == 50);
  REQUIRE(m["relative"].is_number());
  CHECK(m["relative"].get<double>() == 50.0 / 85899345920.0);
  std::ostringstream table;
  io::write_diff_table(table, a, b, d);
  CHECK_THAT(table.str(), Catch::Contains("+50.0 B"));
}

TEST_CASE("report_diff: collective families are one GPU's, the critical stage's", "[io]") {
  // With pp 4 every stage issues its own calls. Per family, the diff's time per step is that of
  // the report's critical stage, so the families together are that stage's communication kernel
  // time (communication_s), as with pp 1; summed over the stages they were about 4 times it.
  const io::DiffSide a = simulated(scenario(1, 1, "full_shard"), "a");
  const io::DiffSide b = simulated(scenario(1, 4, "full_shard"), "b");
  const io::ReportDiff d = io::diff_reports(a, b);
  Seconds sum_a{};
  Seconds sum_b{};
  for (const auto& c : d.collectives) {
    sum_a += c.a_time;
    sum_b += c.b_time;
  }
  CHECK(sum_a.value() == Approx(a.report->communication.value()).epsilon(1e-12));
  CHECK(sum_b.value() == Approx(b.report->communication.value()).epsilon(1e-12));
}

TEST_CASE("report_diff: the same inputs give the same JSON", "[io]") {
  const io::DiffSide a = simulated(scenario(1, 1, "shard_grad_op"), "a");
  const io::DiffSide b = simulated(scenario(2, 2, "none"), "b");
  CHECK(io::diff_to_json(a, b, io::diff_reports(a, b)).dump() ==
        io::diff_to_json(a, b, io::diff_reports(a, b)).dump());
}

TEST_CASE("report_diff: a family whose groups leave an NVLink domain says so", "[io]") {
  // llama2-7b, tp 16, pp 4 on 256 GB200 GPUs: with 16 trays per rack (64 GPUs) every TP group
  // of 16 lies in one rack; on full racks (72) the group of ranks 64-79 has 8 in each of two
  // (docs/placement.md). The same hosts per group (4 trays), so only the domains tell.
  const auto gb200 = [](std::int64_t nodes_per_domain) {
    io::ScenarioDocument doc;
    doc.json = nlohmann::json::parse(R"({
      "hardware": "gb200-nvl72", "model": "llama2-7b", "cluster": {"gpus": 256},
      "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 64},
      "parallel": {"tp": 16, "pp": 4}})");
    if (nodes_per_domain > 0) doc.json["cluster"]["nodes_per_domain"] = nodes_per_domain;
    return io::scenario_from_document(doc);
  };
  const io::DiffSide a = simulated(gb200(16), "segment");
  const io::DiffSide b = simulated(gb200(0), "full");
  const io::ReportDiff d = io::diff_reports(a, b);
  bool saw_tp = false;
  for (const auto& c : d.collectives) {
    if (c.group != "tp") continue;
    saw_tp = true;
    CHECK(c.a_nodes == 4);
    CHECK(c.b_nodes == 4);
    CHECK(c.a_domains == 1);
    CHECK(c.b_domains == 2);
  }
  REQUIRE(saw_tp);
  std::ostringstream table;
  io::write_diff_table(table, a, b, d);
  CHECK(table.str().find("NVLink domains 1 -> 2") != std::string::npos);
  const nlohmann::json json = io::diff_to_json(a, b, d);
  bool json_tp = false;
  for (const auto& c : json["collectives"]) {
    if (c["group"] != "tp") continue;
    json_tp = true;
    CHECK(c["a_domains"] == 1);
    CHECK(c["b_domains"] == 2);
  }
  CHECK(json_tp);
}

TEST_CASE("report_diff: small plain numbers keep three significant digits in the table", "[io]") {
  // GPU-hours per M tokens of a small run: 0.00503 and 0.00602 printed with three decimals as
  // 0.005 and 0.006 (delta +0.001) hid a 19.6% change. Below 1 a plain number prints with
  // 2 - floor(log10 |v|) decimals: 0.00503 -> 5 decimals, its delta 0.00099 -> 6.
  const parallel::Scenario s = scenario(1, 1, "shard_grad_op");
  report::Report ra = hand_report(1.0, 0.0, 0.0);
  report::Report rb = hand_report(1.0, 0.0, 0.0);
  ra.cost.gpu_hours_per_million_tokens = 0.00503;
  rb.cost.gpu_hours_per_million_tokens = 0.00602;
  ra.power.tokens_per_joule = 82.804;
  rb.power.tokens_per_joule = 70.327;
  const io::DiffSide a = side("a", s, ra);
  const io::DiffSide b = side("b", s, rb);
  std::ostringstream out;
  io::write_diff_table(out, a, b, io::diff_reports(a, b));
  const std::string text = out.str();
  CHECK_THAT(text, Catch::Matches("(.|\n)*GPU-hours per M tokens +0\\.00503 +0\\.00602 "
                                  "+\\+0\\.000990 +\\+19\\.7 %(.|\n)*"));
  // At 1 and above, three decimals as before.
  CHECK_THAT(text, Catch::Matches("(.|\n)*tokens per joule +82\\.804 +70\\.327 +-12\\.477 "
                                  "(.|\n)*"));
}

TEST_CASE("report_diff: file names in the table's head keep their control characters escaped",
          "[io]") {
  // A file named "a<newline>b.json" printed "A  a" and "b.json" on a line of its own; the
  // notes and errors write it "a\u000ab.json" (io::escape_control).
  const parallel::Scenario s = scenario(1, 1, "shard_grad_op");
  const io::DiffSide a = side("a\nb.json", s, hand_report(1.0, 0.0, 0.0));
  const io::DiffSide b = side("c\x1b[31m.json", s, hand_report(1.0, 0.0, 0.0));
  std::ostringstream out;
  io::write_diff_table(out, a, b, io::diff_reports(a, b));
  CHECK(out.str().rfind("A  a\\u000ab.json\nB  c\\u001b[31m.json\n\n", 0) == 0);
}
