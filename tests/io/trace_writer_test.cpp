// The trace spans what the report calls the iteration: the GPU work and, after it, the stack's
// host time per step, and it names the optimizer step's pass.
#include "sim/io/trace_writer.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/report/simulate.hpp"

#include "sim/io/scenario_loader.hpp"

using namespace trainsim;

namespace {

// llama2-7b on 16 H100s in two pipeline stages, two micro-batches of 2,048 tokens, under a
// stack given by name, with full_shard or another sharding, without recomputation or with it.
parallel::Scenario scenario(const std::string& stack, const std::string& sharding = "full_shard",
                            const std::string& recompute = "none") {
  io::ScenarioDocument doc;
  doc.source = "s.json";
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 16},
    "training": {"seq_len": 2048, "global_batch": 16, "micro_batch": 1},
    "parallel": {"pp": 2}})");
  doc.json["stack"] = stack;
  doc.json["parallel"]["sharding"] = sharding;
  doc.json["parallel"]["recompute"] = recompute;
  return io::scenario_from_document(doc);
}

nlohmann::json trace_of(const report::Simulation& sim) {
  std::ostringstream out;
  io::write_trace(out, sim.iteration, sim.timeline, sim.report.host_overhead);
  return nlohmann::json::parse(out.str());
}

}  // namespace

TEST_CASE("trace: the stack's host time per step is an event after the GPU work", "[io]") {
  // llm-foundry-torch21's iteration_overhead is 171 ms (stacks/llm-foundry-torch21.json, fitted).
  const parallel::Scenario s = scenario("llm-foundry-torch21");
  REQUIRE(s.stack.iteration_overhead.value() == Approx(0.171).epsilon(1e-12));
  const report::Simulation sim = report::simulate(
      s, report::SimulateOptions{.build = {}, .mode = report::SimulationMode::Full});
  REQUIRE(sim.report.host_overhead.value() == s.stack.iteration_overhead.value());
  const nlohmann::json trace = trace_of(sim);
  double end = 0.0;
  int host_events = 0;
  int host_threads = 0;
  std::set<int> tids;  // of every thread, across the stages' processes
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      // Each thread's tid is its own: Perfetto's JSON importer takes tids as system-wide, and
      // the two stages' host threads shared one.
      REQUIRE(tids.insert(e["tid"].get<int>()).second);
      if (e["args"]["name"] == "host") ++host_threads;
    }
    if (e["ph"] != "X") continue;
    end = std::max(end, e["ts"].get<double>() + e["dur"].get<double>());
    if (e["cat"] == "host") {
      ++host_events;
      REQUIRE(e["name"] == "iteration_overhead");
      // Microseconds, to the nanosecond the trace rounds to.
      REQUIRE(e["dur"].get<double>() == Approx(171'000.0).margin(1e-3));
      // It starts when the GPU work ends: the report's iteration less the overhead.
      REQUIRE(e["ts"].get<double>() ==
              Approx((sim.report.iteration_time.value() - 0.171) * 1e6).margin(1e-3));
    }
    if (e["name"] == "optimizer_step") REQUIRE(e["args"]["pass"] == "optimizer");
    // A layer's collectives in the backward pass are named so, as its kernels are.
    if (e["name"] == "fsdp_reduce_scatter") REQUIRE(e["args"]["pass"] == "backward");
  }
  // One per pipeline stage, and the trace ends where the report's iteration does.
  REQUIRE(host_events == 2);
  REQUIRE(host_threads == 2);
  REQUIRE(end == Approx(sim.report.iteration_time.value() * 1e6).margin(1e-3));
}

TEST_CASE("trace: without host time per step there is no host thread", "[io]") {
  // pytorch-2.3-fsdp has no iteration_overhead (0 s): the trace ends with the GPU work, which is
  // the report's iteration.
  const report::Simulation sim =
      report::simulate(scenario("pytorch-2.3-fsdp"),
                       report::SimulateOptions{.build = {}, .mode = report::SimulationMode::Full});
  REQUIRE(sim.report.host_overhead.value() == 0.0);
  const nlohmann::json trace = trace_of(sim);
  double end = 0.0;
  for (const auto& e : trace["traceEvents"]) {
    REQUIRE(e.value("cat", "") != "host");  // metadata events have no cat
    if (e["ph"] == "X") end = std::max(end, e["ts"].get<double>() + e["dur"].get<double>());
  }
  REQUIRE(end == Approx(sim.report.iteration_time.value() * 1e6).margin(1e-3));
}

TEST_CASE("trace: a thread is named only where events run on it", "[io]") {
  // tp 8 on 8 GPUs: dp 1 and cp 1, so the data-parallel stream carries no call (the gradients
  // of one replica need no reduction) and the trace had an empty "dp comm" thread; with 16 GPUs
  // (dp 2) its calls run and it is named.
  const auto names = [](std::int64_t gpus) {
    io::ScenarioDocument doc;
    doc.json = nlohmann::json::parse(R"({
      "hardware": "h100-dgx", "model": "llama2-7b", "stack": "megatron-lm",
      "training": {"seq_len": 2048, "micro_batch": 1}, "parallel": {"tp": 8}})");
    doc.json["cluster"] = {{"gpus", gpus}};
    doc.json["training"]["global_batch"] = 2 * gpus / 8;
    const nlohmann::json trace = trace_of(report::simulate(io::scenario_from_document(doc)));
    std::set<std::string> threads;
    std::set<std::pair<int, int>> with_events;
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] == "X") with_events.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    }
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "thread_name") {
        threads.insert(e["args"]["name"].get<std::string>());
        CHECK(with_events.count({e["pid"].get<int>(), e["tid"].get<int>()}) == 1);
      }
    }
    return threads;
  };
  CHECK(names(8) == std::set<std::string>{"compute", "tp comm"});
  CHECK(names(16) == std::set<std::string>{"compute", "tp comm", "dp comm"});
}

TEST_CASE("trace: the events of a thread nest as Perfetto reads them", "[io]") {
  // Perfetto's JSON importer rounds ts and dur to nanoseconds each (llround(v * 1000),
  // json_trace_tokenizer.cc) and moves an event that starts before the previous one on its
  // thread ends, and ends after it, to an overflow track (slice_tracker.cc). An op and the next
  // on its stream share an instant in the timeline; written as separately rounded ts and dur,
  // they overlapped by 1 ns in 22 of the 425 events of llama3.2-1b on 2 H100s at tp 2, and here
  // in the backward of each layer. Each thread's events, in start order, must each end before
  // the next begins, in Perfetto's rounding.
  for (const auto& sharding : {"full_shard", "none"}) {
    const report::Simulation sim = report::simulate(
        scenario("pytorch-2.3-fsdp", sharding, "selective"),
        report::SimulateOptions{.build = {}, .mode = report::SimulationMode::Full});
    std::map<std::pair<int, int>, std::vector<std::pair<long long, long long>>> threads;
    const nlohmann::json trace = trace_of(sim);
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] != "X") continue;
      const long long ts = std::llround(e["ts"].get<double>() * 1000.0);
      const long long dur = std::llround(e["dur"].get<double>() * 1000.0);
      threads[{e["pid"].get<int>(), e["tid"].get<int>()}].emplace_back(ts, ts + dur);
    }
    REQUIRE(threads.size() > 4);
    std::size_t events = 0;
    for (auto& [thread, spans] : threads) {
      std::sort(spans.begin(), spans.end());
      for (std::size_t i = 0; i + 1 < spans.size(); ++i) {
        INFO("pid " << thread.first << " tid " << thread.second << " event " << i);
        REQUIRE(spans[i].second <= spans[i + 1].first);
      }
      events += spans.size();
    }
    REQUIRE(events > 400);
  }
}

TEST_CASE("trace: ZeRO-1's gather of the updated weights is in the optimizer pass", "[io]") {
  // Without overlap_param_gather (pytorch-2.3-fsdp), the distributed optimizer gathers the
  // weights it updated after the step, with no micro-batch: it was labelled "forward".
  const parallel::Scenario s = scenario("pytorch-2.3-fsdp", "zero1");
  const report::Simulation sim = report::simulate(
      s, report::SimulateOptions{.build = {}, .mode = report::SimulationMode::Full});
  const nlohmann::json trace = trace_of(sim);
  int gathers = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["name"] != "zero1_all_gather") continue;
    ++gathers;
    REQUIRE(e["args"]["pass"] == "optimizer");
  }
  REQUIRE(gathers == 2);  // one per stage
}

TEST_CASE("trace: the gather issued as the iteration opens and the embedding's reduction", "[io]") {
  // megatron-core overlaps ZeRO-1's gather of the updated weights with the next forward
  // (dp_overlap_param_gather): issued as the iteration opens, it is still the optimizer's
  // gather, and was labelled "forward". With pp 2 and the LM head tied to the word embedding
  // (llama3.2-1b), the two stages all-reduce the embedding's gradient after the last backward
  // (embedding_grad_all_reduce), labelled "forward" too; it is the backward's last reduction.
  io::ScenarioDocument doc;
  doc.source = "s.json";
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx", "model": "llama3.2-1b", "cluster": {"gpus": 16},
    "training": {"seq_len": 2048, "global_batch": 16, "micro_batch": 1},
    "parallel": {"tp": 2, "pp": 2, "sharding": "zero1"}, "stack": "megatron-core"})");
  const parallel::Scenario s = io::scenario_from_document(doc);
  REQUIRE(s.stack.dp_overlap_param_gather);
  const report::Simulation sim = report::simulate(
      s, report::SimulateOptions{.build = {}, .mode = report::SimulationMode::Full});
  const nlohmann::json trace = trace_of(sim);
  int gathers = 0;
  int embedding = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["name"] == "zero1_all_gather") {
      ++gathers;
      REQUIRE(e["args"]["pass"] == "optimizer");
    }
    if (e["name"] == "embedding_grad_all_reduce") {
      ++embedding;
      REQUIRE(e["args"]["pass"] == "backward");
    }
  }
  REQUIRE(gathers > 0);
  REQUIRE(embedding == 2);  // one on each stage that holds a copy: the first and the last
}

TEST_CASE("trace: recomputed forward ops are in the recompute pass", "[io]") {
  // Full recomputation runs each layer's forward again before its backward: its kernels
  // (named *_recompute) and its collectives (FSDP's gathers aside, issued for the backward) were
  // labelled "forward", so a per-pass sum counted them as forward time.
  const report::Simulation sim =
      report::simulate(scenario("pytorch-2.3-fsdp", "full_shard", "full"),
                       report::SimulateOptions{.build = {}, .mode = report::SimulationMode::Full});
  const nlohmann::json trace = trace_of(sim);
  int recomputed = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string name = e["name"].get<std::string>();
    const bool named = name.size() > 10 && name.compare(name.size() - 10, 10, "_recompute") == 0;
    if (named) ++recomputed;
    // Every *_recompute kernel is in the recompute pass, and no other compute op is.
    if (e["cat"] == "compute") REQUIRE((e["args"]["pass"] == "recompute") == named);
  }
  REQUIRE(recomputed > 0);
}

TEST_CASE(
    "trace: a gather ahead of a recomputed layer is in the recompute pass where it feeds "
    "the recomputation alone",
    "[io]") {
  // deepspeed-zero3-2021 gathers a recomputed layer's weights for its recomputed forward and
  // again for its backward (fsdp.recompute_gather "separate"): of each layer's two backward-pass
  // gathers the first feeds the recomputation, so as many are "recompute" as "backward". They
  // were all "backward". PyTorch FSDP gathers once for both, in the backward pass.
  const auto gathers = [](const std::string& stack) {
    const report::Simulation sim = report::simulate(
        scenario(stack, "full_shard", "full"),
        report::SimulateOptions{.build = {}, .mode = report::SimulationMode::Full});
    std::map<std::string, int> by_pass;
    const nlohmann::json trace = trace_of(sim);
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] == "X" && e["name"] == "fsdp_all_gather_bwd") {
        ++by_pass[e["args"]["pass"].get<std::string>()];
      }
    }
    return by_pass;
  };
  const auto separate = gathers("deepspeed-zero3-2021");
  REQUIRE(separate.size() == 2);
  CHECK(separate.at("recompute") > 0);
  CHECK(separate.at("recompute") == separate.at("backward"));
  const auto once = gathers("pytorch-2.3-fsdp");
  REQUIRE(once.size() == 1);
  CHECK(once.at("backward") > 0);
}
