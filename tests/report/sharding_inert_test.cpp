// report::sharding_is_inert: with one replica (dp x cp = 1) the five sharding modes build the
// same op graph under every built-in stack, so their primitives agree bit for bit; with two
// replicas they do not. sweep::SimulationMemo relies on the first, and a sweep that uses it must
// print what each plan prints alone.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/report/simulate.hpp"
#include "trainsim/sweep/evaluate.hpp"
#include "trainsim/sweep/search.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/scenario_loader.hpp"
#include "sim/io/sweep_writer.hpp"
#include "sim/sweep/sweep_run.hpp"
#include "sim/sweep/sweep_spec.hpp"

#include "tests/small_dense_model.hpp"

using namespace trainsim;

namespace {

const std::vector<std::string> kShardings = {"none", "zero1", "shard_grad_op", "full_shard",
                                             "hybrid_shard"};

// The small dense model (tests/small_dense_model.hpp) on tp x pp x dp GPUs, 8 micro-batches per
// replica, under `stack`.
parallel::Scenario plan(const std::string& stack, const std::string& sharding, std::int64_t tp,
                        std::int64_t pp, std::int64_t chunks, std::int64_t dp,
                        const std::string& recompute) {
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx", "training": {"seq_len": 1024, "micro_batch": 1}})");
  doc.json["model"] = testing::small_dense_model();
  doc.json["stack"] = stack;
  doc.json["cluster"] = {{"gpus", tp * pp * dp}};
  doc.json["training"]["global_batch"] = 8 * dp;
  doc.json["parallel"] = {{"tp", tp},
                          {"pp", pp},
                          {"sequence_parallel", tp > 1},
                          {"pipeline_schedule", chunks > 1 ? "interleaved" : "1f1b"},
                          {"virtual_stages", chunks},
                          {"sharding", sharding},
                          {"recompute", recompute}};
  return io::scenario_from_document(doc);
}

bool same_activity(const engine::DeviceActivity& a, const engine::DeviceActivity& b) {
  return a.compute_busy == b.compute_busy && a.communication_busy == b.communication_busy &&
         a.exposed_communication == b.exposed_communication && a.idle == b.idle &&
         a.compute_kernel_sum == b.compute_kernel_sum &&
         a.gemm_contention_stretch == b.gemm_contention_stretch &&
         a.communication_kernel_sum == b.communication_kernel_sum;
}

bool same_call(const workload::CollectiveCall& a, const workload::CollectiveCall& b) {
  return a.op == b.op && a.group == b.group && a.shape.ranks == b.shape.ranks &&
         a.shape.nodes == b.shape.nodes && a.bytes == b.bytes && a.time == b.time &&
         a.algorithm == b.algorithm && a.protocol == b.protocol && a.stage == b.stage &&
         a.count == b.count;
}

// Bit for bit (== on doubles): the memo hands one plan's primitives to another.
bool same_primitives(const report::Primitives& a, const report::Primitives& b) {
  if (a.makespan != b.makespan || a.stages.size() != b.stages.size() ||
      a.collectives.size() != b.collectives.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.stages.size(); ++i) {
    if (!same_activity(a.stages[i], b.stages[i])) return false;
  }
  for (std::size_t i = 0; i < a.collectives.size(); ++i) {
    if (!same_call(a.collectives[i], b.collectives[i])) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("sharding: with one replica every mode gives the same primitives, with two not",
          "[report][sweep]") {
  struct Shape {
    std::int64_t tp, pp, chunks;
    const char* recompute;
  };
  // No pipeline, a 1F1B pipeline and an interleaved one, with and without TP and recomputation.
  const std::vector<Shape> shapes = {
      {1, 1, 1, "none"}, {2, 1, 1, "full"}, {1, 4, 1, "none"}, {2, 2, 2, "selective"}};
  const std::vector<std::string> stacks = io::builtin_ids("stacks");
  REQUIRE(stacks.size() >= 8);
  int compared = 0;
  int differing_at_two = 0;
  for (const std::string& stack : stacks) {
    for (const Shape& sh : shapes) {
      for (const std::int64_t dp : {1, 2}) {
        INFO(stack << ", tp " << sh.tp << ", pp " << sh.pp << ", chunks " << sh.chunks << ", "
                   << sh.recompute << ", dp " << dp);
        const parallel::Scenario reference =
            plan(stack, "none", sh.tp, sh.pp, sh.chunks, dp, sh.recompute);
        CHECK(report::sharding_is_inert(reference) == (dp == 1));
        const report::Simulation base = report::simulate(reference);
        bool any_differs = false;
        for (const std::string& sharding : kShardings) {
          INFO(sharding);
          const parallel::Scenario s =
              plan(stack, sharding, sh.tp, sh.pp, sh.chunks, dp, sh.recompute);
          const report::Simulation sim = report::simulate(s);
          const bool same = same_primitives(sim.primitives, base.primitives);
          if (dp == 1) {
            CHECK(same);
            ++compared;
          }
          any_differs = any_differs || !same;
          // derive() on the primitives gives the report simulate() gave.
          CHECK(report::derive(s, sim.primitives).iteration_time == sim.report.iteration_time);
        }
        // With two replicas the modes issue different collectives: the comparison can fail.
        if (dp == 2 && any_differs) ++differing_at_two;
      }
    }
  }
  CHECK(compared == static_cast<int>(stacks.size() * shapes.size() * kShardings.size()));
  // Every stack and shape tells at least two modes apart at dp 2.
  CHECK(differing_at_two == static_cast<int>(stacks.size() * shapes.size()));
}

TEST_CASE(
    "sweep: plans whose sharding is inert share a simulation and print what each alone "
    "prints",
    "[sweep]") {
  // 5 shardings x tp {1, 8} x pp {1, 2, 4} on 8 and 16 GPUs of llama3.2-1b (16 layers, 32
  // heads, 8 KV heads), 64 sequences per step: dp = gpus / (tp pp). dp is 1 for tp 8 pp 1 on 8
  // GPUs and tp 8 pp 2 on 16, in every mode: 10 inert plans; tp 8 with pp 2 or 4 on 8 GPUs and
  // pp 4 on 16 do not split the GPUs (invalid); the other plans have dp >= 2.
  const sweep::SweepSpec spec = sweep::parse_sweep_spec(
      R"({"base": {"hardware": "h100-dgx", "model": "llama3.2-1b", "cluster": {"gpus": 8},
                  "training": {"seq_len": 1024, "micro_batch": 1, "global_batch": 64}},
         "axes": {"cluster.gpus": [8, 16], "parallel.tp": [1, 8], "parallel.pp": [1, 2, 4],
                  "parallel.sharding": ["none", "zero1", "shard_grad_op", "full_shard",
                                        "hybrid_shard"]}})",
      "spec.json", "");
  for (const int jobs : {1, 2}) {
    const std::string csv = sweep::run_sweep(
        spec, sweep::SweepRunOptions{
                  .shard = {}, .jobs = jobs, .format = io::SweepFormat::Csv, .progress = {}});
    std::string alone = io::csv_header();
    int inert = 0;
    for (std::int64_t i = 0; i < spec.size(); ++i) {
      const parallel::Scenario s = io::scenario_from_document(spec.document(i));
      const sweep::Evaluation e = sweep::evaluate(s);
      if (e.status == sweep::Status::Ok && report::sharding_is_inert(s)) ++inert;
      alone += io::csv_row(i, s, e);
    }
    INFO("jobs " << jobs);
    CHECK(inert == 10);
    CHECK(csv == alone);
  }
}

TEST_CASE("search: plans whose sharding is inert share a simulation and rank as each alone",
          "[sweep][search]") {
  // llama3.2-1b (16 layers) on 8 GPUs, 64 sequences per step: tp {2, 8} x pp {1, 4} x
  // micro-batch {1, 2} x recompute {none, full} x sequence parallelism {on, off} x the default
  // space's three sharding modes, with pp 4 under 1f1b and interleaved (2 virtual stages). dp =
  // 8 / (tp pp): 4 for tp 2 pp 1; 1, inert, for tp 2 pp 4 (2 schedules x 2 x 2 x 2 = 16 twin
  // groups of 3 plans) and tp 8 pp 1 (8 groups); tp 8 pp 4 does not split the GPUs (invalid).
  // So 72 inert plans sharing 24 simulations, each group differing from the others in a key
  // field: a key that left out any of tp, pp, schedule, micro-batch, recomputation or sequence
  // parallelism would give some plan another's simulation, and its row would differ.
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx", "model": "llama3.2-1b", "cluster": {"gpus": 8},
    "training": {"seq_len": 1024, "micro_batch": 1, "global_batch": 64}})");
  const parallel::Scenario base = io::scenario_from_document(doc);
  sweep::SearchSpace space;
  space.tp = {2, 8};
  space.pp = {1, 4};
  space.micro_batch = {1, 2};
  space.recompute = {parallel::Recompute::None, parallel::Recompute::Full};
  space.sequence_parallel = {true, false};
  for (const int jobs : {1, 2}) {
    std::vector<std::int64_t> best;  // the exhaustive search's best 3 plans
    for (const std::int64_t keep_top : {0, 3}) {
      const sweep::SearchResult r =
          sweep::search(base, space, sweep::Objective::TokensPerS, jobs, {}, {},
                        report::SimulationMode::Extrapolate, keep_top);
      INFO("jobs " << jobs << ", keep_top " << keep_top);
      int inert = 0;
      for (const sweep::Candidate& c : r.ranked) {
        INFO("plan " << c.index);
        if (report::sharding_is_inert(c.scenario)) ++inert;
        // What the plan prints alone, simulated without the memo.
        CHECK(io::csv_row(c.index, c.scenario, c.evaluation) ==
              io::csv_row(c.index, c.scenario, sweep::evaluate(c.scenario)));
      }
      REQUIRE(r.ranked.size() >= 3);
      std::vector<std::int64_t> top;
      for (std::size_t k = 0; k < 3; ++k) top.push_back(r.ranked[k].index);
      if (keep_top == 0) {
        CHECK(inert == 72);  // every inert plan fits, so the exhaustive search ranks all 72
        best = top;
      } else {
        CHECK(top == best);  // the bounded search ranks fewer plans, the same best ones
      }
    }
  }
}
