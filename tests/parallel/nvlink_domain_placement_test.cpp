// Placement on NVLink domains larger than a node (gb200-nvl72: 4-GPU trays, 72-GPU domains),
// and an end-to-end run that keeps a 16-way TP group on NVLink.
#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/simulate.hpp"
#include "trainsim/workload/iteration.hpp"

#include "sim/io/hardware_loader.hpp"
#include "sim/io/report_writer.hpp"
#include "sim/io/scenario_loader.hpp"

#include "tests/build_iteration.hpp"

using namespace trainsim;
using namespace trainsim::parallel;

namespace {

Scenario nvl72(std::int64_t gpus, std::int64_t tp, std::int64_t pp) {
  Scenario s;
  s.hardware = io::load_hardware("gb200-nvl72");
  s.gpus = gpus;
  s.parallel.tp = tp;
  s.parallel.pp = pp;
  s.parallel.dp = gpus / (tp * pp);
  return s;
}

}  // namespace

TEST_CASE("placement: TP 16 and TP 72 on GB200 NVL72 span trays but one NVLink domain",
          "[parallel]") {
  // TP 72 on two full racks, and TP 16 on 128 GPUs filling 16 of each rack's 18 trays: every
  // group starts at a multiple of its size, which the job's GPUs per domain (72, 64) divide.
  for (const auto& [tp, nodes_per_domain] : {std::pair<std::int64_t, std::int64_t>{16, 16},
                                             std::pair<std::int64_t, std::int64_t>{72, 0}}) {
    Scenario s = nvl72(tp == 16 ? 128 : 144, tp, 1);
    s.nodes_per_domain = nodes_per_domain;
    const Placement p = place(s);
    REQUIRE(p.tp.ranks == tp);
    REQUIRE(p.tp.nodes == tp / 4);  // 4 GPUs per tray
    REQUIRE(p.tp.ranks_per_node == 4);
    REQUIRE(p.tp.domains == 1);
    REQUIRE(p.tp.ranks_per_domain == tp);
  }
  // DP under tp 16 on 144 GPUs: the groups start at ranks 0-15; rank 0's is 0, 16, ..., 128:
  // 0-64 (5) in the first domain of 72, 80-128 (4) in the second; one per tray. Rank 8's is
  // 8-56 (4) and 72-136 (5): the same spans.
  const Placement p = place(nvl72(144, 16, 1));
  REQUIRE(p.dp.ranks == 9);
  REQUIRE(p.dp.nodes == 9);
  REQUIRE(p.dp.ranks_per_node == 1);
  REQUIRE(p.dp.domains == 2);
  REQUIRE(p.dp.ranks_per_domain == 5);
}

TEST_CASE("placement: a group that straddles two racks prices every group of its kind",
          "[parallel]") {
  // TP 16 on two full racks of 72: the groups start at 0, 16, ..., 128; the one of ranks 64-79
  // has 64-71 in the first rack and 72-79 in the second. Rank 0's group (0-15) stays in one.
  Scenario s = nvl72(144, 16, 1);
  REQUIRE(group_shape(16, 1, 4, 72).domains == 1);
  const Placement full = place(s);
  REQUIRE(full.tp.domains == 2);
  REQUIRE(full.tp.ranks_per_domain == 8);
  REQUIRE(full.tp.min_ranks_per_domain == 8);
  REQUIRE(full.tp.nodes == 4);  // trays 16-19: 64-79 start at a tray's first GPU
  REQUIRE(full.tp.ranks_per_node == 4);

  // tp 16, pp 4 on 256 GPUs (dp 4, the DP groups 16 apart spanning 64 ranks, one set per stage
  // starting at 0, 64, 128 and 192): on full racks (0-71, 72-143, 144-215, 216-255) rank 0's
  // group 0-48 is in one rack, 64-112 has 64 in the first and 80-112 in the second, 192-240 has
  // 192 and 208 in the third and 224 and 240 in the fourth. The worst: 2 racks; of those, the
  // one with the fewest ranks in its least-held rack, 64-112 (1 + 3), whose rank 64 alone
  // carries the group's traffic out of the first rack.
  s = nvl72(256, 16, 4);
  REQUIRE(s.parallel.dp == 4);
  const Placement racks = place(s);
  REQUIRE(racks.dp.domains == 2);
  REQUIRE(racks.dp.min_ranks_per_domain == 1);
  REQUIRE(racks.dp.ranks_per_domain == 3);
  REQUIRE(racks.dp.nodes == 4);
  // Filling 16 trays of each rack (Slurm's --segment 16: 64 GPUs per rack), each stage is a
  // rack: every DP group and every TP group in one.
  s.nodes_per_domain = 16;
  const Placement segment = place(s);
  REQUIRE(segment.dp.domains == 1);
  REQUIRE(segment.dp.ranks_per_domain == 4);
  REQUIRE(segment.dp.min_ranks_per_domain == 4);
  REQUIRE(segment.tp.domains == 1);
  // The pipeline's groups (stride 64) cross a rack at every stage either way.
  REQUIRE(segment.pp.domains == 4);
  REQUIRE(racks.pp.domains == 4);
}

TEST_CASE(
    "placement: straddling names the inner kinds that cross racks and the segment that "
    "avoids it",
    "[parallel]") {
  // TP 16 on full racks of 72 (above): the TP group 64-79 spans 2 racks, rank 0's 1. With n
  // trays per rack the job has 4n GPUs per rack, and the TP groups (starting at multiples of
  // 16) all lie inside one when 16 divides 4n: n = 16, the largest below 18 (17 gives 68).
  Scenario s = nvl72(256, 16, 4);
  StraddleAdvice a = straddling(s);
  REQUIRE(a.kinds.size() == 1);
  REQUIRE(std::string(a.kinds[0].kind) == "tp");
  REQUIRE(a.kinds[0].domains == 1);
  REQUIRE(a.kinds[0].worst.domains == 2);
  REQUIRE(a.kinds[0].worst.min_ranks_per_domain == 8);
  REQUIRE(a.nodes_per_domain == 16);
  s.nodes_per_domain = 16;
  REQUIRE(straddling(s).kinds.empty());
  // EP 64 (tp 1, pp 4, dp 64: DeepSeek-V3's plan on 256 GB200): ranks 64-127 are 8 + 56.
  s = nvl72(256, 1, 4);
  s.parallel.ep = 64;
  a = straddling(s);
  REQUIRE(a.kinds.size() == 1);
  REQUIRE(std::string(a.kinds[0].kind) == "ep");
  REQUIRE(a.kinds[0].worst.min_ranks_per_domain == 8);
  REQUIRE(a.nodes_per_domain == 16);
  // A job already on segments of 9 trays (36 GPUs): EP 64 on 128 GPUs spans 2 domains at rank 0
  // (0-63) and 3 at ranks 64-127 (64-71, 72-107, 108-127). Full racks would straddle again
  // (64-127 over 64-71 and 72-127), so the advice is 16 trays, where each group fills a rack.
  s = nvl72(128, 1, 1);
  s.parallel.ep = 64;
  s.nodes_per_domain = 9;
  a = straddling(s);
  REQUIRE(a.kinds.size() == 1);
  REQUIRE(a.kinds[0].domains == 2);
  REQUIRE(a.kinds[0].worst.domains == 3);
  REQUIRE(a.nodes_per_domain == 16);
  // TP 19 on 152 GPUs: the group at 57-75 crosses the first rack's end; no segment of 1 to 17
  // trays (4 to 68 GPUs, never a multiple of 19 at or above it) puts every group in one rack.
  s = nvl72(152, 19, 1);
  a = straddling(s);
  REQUIRE(a.kinds.size() == 1);
  REQUIRE(a.nodes_per_domain == 0);
  // One host per domain: nothing to say.
  Scenario dgx;
  dgx.hardware = io::load_hardware("h100-dgx");
  dgx.gpus = 48;
  dgx.parallel.tp = 3;
  dgx.parallel.dp = 16;
  REQUIRE(straddling(dgx).kinds.empty());
}

TEST_CASE("placement: pipeline stages share a domain or not by their stride", "[parallel]") {
  // 72 GPUs, tp 4, pp 2: stages 36 ranks apart, on trays 0 and 9 of one rack.
  const Placement in_rack = place(nvl72(72, 4, 2));
  REQUIRE(in_rack.pp.nodes == 2);
  REQUIRE(in_rack.pp.domains == 1);
  // 144 GPUs, tp 4, pp 2: stages 72 ranks apart, one per rack.
  const Placement racks = place(nvl72(144, 4, 2));
  REQUIRE(racks.pp.nodes == 2);
  REQUIRE(racks.pp.domains == 2);
  REQUIRE(racks.pp.ranks_per_domain == 1);
}

TEST_CASE("placement: a cluster smaller than a domain is one domain", "[parallel]") {
  // 16 GPUs on 4 trays: everything in one domain.
  const Placement p = place(nvl72(16, 1, 1));
  REQUIRE(p.dp.nodes == 4);
  REQUIRE(p.dp.domains == 1);
  REQUIRE(p.dp.ranks_per_domain == 16);
}

TEST_CASE("placement: with one node per domain the domains are the nodes", "[parallel]") {
  Scenario s;
  s.hardware.node.gpus_per_node = 8;
  s.gpus = 256;
  s.parallel.tp = 2;
  s.parallel.cp = 2;
  s.parallel.dp = 64;
  const Placement p = place(s);
  for (const GroupShape* g : {&p.tp, &p.cp, &p.dp, &p.pp, &p.shard}) {
    REQUIRE(g->domains == g->nodes);
    REQUIRE(g->ranks_per_domain == g->ranks_per_node);
  }
}

TEST_CASE("placement: a TP-16 run on gb200-nvl72 keeps TP on NVLink end to end",
          "[parallel][report]") {
  // GPT-3 175B (96 heads, 96 KV heads: both divisible by 16) on two racks filled 16 trays
  // each, tp 16, dp 8. Llama 3 70B has 8 KV heads, which tp 16 cannot split (validate.cpp,
  // Megatron's rule).
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "gb200-nvl72", "cluster": {"gpus": 128, "nodes_per_domain": 16},
    "model": "gpt3-175b", "training": {"seq_len": 2048, "global_batch": 64, "micro_batch": 1},
    "parallel": {"tp": 16, "sequence_parallel": true, "sharding": "zero1"}
  })");
  const Scenario s = io::scenario_from_document(doc);
  REQUIRE(s.nodes_per_domain == 16);
  REQUIRE(s.parallel.dp == 8);
  REQUIRE(validate(s).empty());
  const auto run = report::simulate(s);
  REQUIRE(run.report.tokens_per_s > 0.0);
  bool saw_tp = false;
  for (const auto& c : run.report.collectives) {
    if (c.group != "tp") continue;
    saw_tp = true;
    REQUIRE(c.ranks == 16);
    REQUIRE(c.nodes == 4);  // four trays, one NVLink domain
    REQUIRE(c.domains == 1);
    REQUIRE(c.algorithm != "tree");
  }
  REQUIRE(saw_tp);
  // The JSON report gives each call's domains beside its nodes.
  const nlohmann::json json = io::report_to_json(s, run.report);
  REQUIRE(json["collectives"][0].contains("domains"));

  // The same plan with every tray its own NVLink domain puts TP on the 400 Gb/s NICs: slower.
  Scenario trays = s;
  trays.hardware.node.nvlink_domain_gpus = 4;
  trays.nodes_per_domain = 0;
  const auto slow = report::simulate(trays);
  REQUIRE(slow.report.iteration_time > run.report.iteration_time);

  // On two full racks (72 + 56 GPUs) the TP group of ranks 64-79 straddles them: TP leaves
  // NVLink there, and every rank waits for it.
  Scenario full = s;
  full.nodes_per_domain = 0;
  const auto straddled = report::simulate(full);
  REQUIRE(straddled.report.iteration_time > run.report.iteration_time);
  for (const auto& c : straddled.report.collectives) {
    if (c.group == "tp") REQUIRE(c.domains == 2);
  }
}

TEST_CASE("placement: a call over groups that lie differently is priced on its stage's slowest",
          "[parallel][workload]") {
  // llama2-7b, tp 1, pp 4 on 216 GB200 GPUs (three full racks): each stage's 54 data-parallel
  // ranks are consecutive, so stage 0's group (0-53) sits in the first rack, stage 1's (54-107)
  // has 18 ranks in the first and 36 in the second, stage 2's (108-161) 36 in the second and 18
  // in the third, and stage 3's (162-215) sits in the third. The job's placement shows a
  // two-rack group and lists the one-rack shape as a variant; each stage's holds its own.
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "gb200-nvl72", "cluster": {"gpus": 216}, "model": "llama2-7b",
    "training": {"seq_len": 4096, "global_batch": 108, "micro_batch": 1},
    "parallel": {"pp": 4, "sharding": "zero1"}
  })");
  const Scenario s = io::scenario_from_document(doc);
  const Placement pl = place(s);
  REQUIRE(pl.dp.domains == 2);
  REQUIRE(pl.dp.min_ranks_per_domain == 18);
  REQUIRE(std::any_of(pl.dp.variants.begin(), pl.dp.variants.end(),
                      [](const GroupShape& v) { return v.domains == 1; }));
  const std::array<std::int64_t, 4> stage_domains = {1, 2, 2, 1};
  for (std::int64_t stage = 0; stage < 4; ++stage) {
    const Placement at = place(s, stage);
    REQUIRE(at.dp.domains == stage_domains[static_cast<std::size_t>(stage)]);
    REQUIRE(at.dp.variants.empty());  // one stage's groups: one group here
    REQUIRE(same_shape(at.pp, pl.pp));
  }
  const collective::CollectiveModel cm(s.hardware);
  const workload::Iteration it = testing::build_iteration(s);
  std::array<std::int64_t, 4> checked = {};
  for (const auto& c : it.collectives) {
    if (c.group != "dp" || c.op != "reduce_scatter") continue;
    // Priced on the group of the call's own stage, whose shape the call records.
    const Placement at = place(s, c.stage);
    const collective::Op op = collective::Op::ReduceScatter;
    REQUIRE(c.time.value() == cm.cost(op, at.dp, c.bytes).time.value());
    REQUIRE(same_shape(c.shape, at.dp));
    REQUIRE(c.shape.domains == stage_domains[static_cast<std::size_t>(c.stage)]);
    REQUIRE(c.shape.variants.empty());
    ++checked[static_cast<std::size_t>(c.stage)];
  }
  for (const std::int64_t n : checked) REQUIRE(n > 0);
}

TEST_CASE("placement: cluster.nodes_per_domain is read, bounded and printed back",
          "[parallel][io]") {
  const auto load = [](const std::string& cluster, const std::string& hardware) {
    io::ScenarioDocument doc;
    doc.json = nlohmann::json::parse(R"({"model": "llama2-7b", "training": {"seq_len": 4096}})");
    doc.json["hardware"] = hardware;
    doc.json["cluster"] = nlohmann::json::parse(cluster);
    doc.source = "s.json";
    return io::scenario_from_document(doc);
  };
  const Scenario s = load(R"({"gpus": 256, "nodes_per_domain": 16})", "gb200-nvl72");
  REQUIRE(s.nodes_per_domain == 16);
  REQUIRE(io::scenario_to_json(s)["cluster"]["nodes_per_domain"] == 16);
  // Unset: every host of a domain, and the report's cluster keeps its two keys.
  const Scenario whole = load(R"({"gpus": 256})", "gb200-nvl72");
  REQUIRE(whole.nodes_per_domain == 0);
  REQUIRE(io::scenario_to_json(whole)["cluster"].size() == 2);
  // 18 trays in a GB200 NVL72 rack; one host per domain on h100-dgx. The loader reads any
  // count; the plan check bounds it by the hardware, so a sweep across profiles gets rows.
  const auto problem = [](const Scenario& plan) {
    for (const Problem& p : validate(plan)) {
      if (p.key == "/cluster/nodes_per_domain") return p.message;
    }
    return std::string();
  };
  CHECK(problem(s).empty());
  CHECK(problem(load(R"({"gpus": 256, "nodes_per_domain": 19})", "gb200-nvl72")) ==
        "nodes_per_domain 19 exceeds the hosts of one NVLink domain of this hardware (18 of 4 "
        "GPUs each); expected 1 to 18");
  CHECK(problem(load(R"({"gpus": 64, "nodes_per_domain": 2})", "h100-dgx")) ==
        "nodes_per_domain 2 exceeds the hosts of one NVLink domain of this hardware (1 of 8 "
        "GPUs each); expected 1 to 1");
  CHECK(problem(load(R"({"gpus": 64, "nodes_per_domain": 1})", "h100-dgx")).empty());
  REQUIRE_THROWS_WITH(load(R"({"gpus": 64, "nodes_per_domain": 0})", "h100-dgx"),
                      Catch::StartsWith("s.json: /cluster/nodes_per_domain: expected an integer "
                                        ">= 1"));
}

TEST_CASE("scenario: a report's scenario reads back as the same plan", "[parallel][io]") {
  // The report echoes cluster.nodes beside cluster.gpus and the derived parallel.dp; both are
  // read back when they agree with what the scenario derives, and refused, naming the key,
  // when they do not.
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "gb200-nvl72", "cluster": {"gpus": 216, "nodes_per_domain": 16},
    "model": "llama2-7b", "training": {"seq_len": 4096, "global_batch": 108},
    "parallel": {"pp": 4, "sharding": "zero1"}
  })");
  doc.source = "first.json";
  const Scenario s = io::scenario_from_document(doc);
  io::ScenarioDocument echoed;
  echoed.json = io::scenario_to_json(s);
  echoed.source = "echoed.json";
  REQUIRE(echoed.json["cluster"].contains("nodes"));
  REQUIRE(echoed.json["parallel"]["dp"] == 54);
  const Scenario back = io::scenario_from_document(echoed);
  REQUIRE(io::scenario_to_json(back) == echoed.json);
  REQUIRE(report::simulate(back).report.iteration_time.value() ==
          report::simulate(s).report.iteration_time.value());

  io::ScenarioDocument bad = echoed;
  bad.json["parallel"]["dp"] = 27;
  REQUIRE_THROWS_WITH(
      io::scenario_from_document(bad),
      Catch::Contains("echoed.json: /parallel/dp: dp 27 is not") && Catch::Contains("= 54"));
  bad = echoed;
  bad.json["cluster"]["nodes"] = 53;  // 216 GPUs fill 54 trays of 4
  REQUIRE_THROWS_WITH(io::scenario_from_document(bad),
                      Catch::Contains("echoed.json: /cluster: nodes 53 and gpus 216 disagree"));
}
