// One scenario end to end (build the op graph, simulate, report), the budgets of the
// iteration-simulation issue: llama2-7b on 256 H100 under FSDP below 5 ms; llama3.1-405b on
// 16,384 H100 (TP 8, PP 16, interleaved) below 20 ms; run time flat in the GPU count and in the
// number of micro-batches (the "Everyday use" issue: llama2-7b on 8 GPUs at global batch 16,
// 2,048 and 16,384, in both simulation modes; a fixed-global-batch plan sweep of 10,560 plans,
// whose target is under 5 s on two cores, and the same plans on one thread counted in ops
// simulated).
// `peak_rss_bytes` is the process's peak resident set when the case ends: run one case alone
// (--benchmark_filter) to read its own peak.
#include <cstdint>
#include <string>

#include <benchmark/benchmark.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef __linux__
#include <sys/resource.h>
#endif

#include "trainsim/report/simulate.hpp"
#include "trainsim/sweep/evaluate.hpp"

#include "sim/io/scenario_loader.hpp"
#include "sim/sweep/sweep_run.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace {

using namespace trainsim;

parallel::Scenario load(const char* json) {
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(json);
  return io::scenario_from_document(doc);
}

// Peak resident set of the process so far (Linux reports ru_maxrss in KiB); 0 elsewhere.
double peak_rss_bytes() {
#ifdef __linux__
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) return static_cast<double>(usage.ru_maxrss) * 1024.0;
#endif
  return 0.0;
}

void simulate_llama7b_fsdp(benchmark::State& state) {
  auto s = load(R"({"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 256},
    "training": {"seq_len": 4096, "micro_batch": 2}, "parallel": {"sharding": "shard_grad_op"}})");
  s.gpus = state.range(0);
  s.parallel.dp = s.gpus;
  s.training.global_batch = 2 * s.gpus;
  for (auto _ : state) benchmark::DoNotOptimize(report::simulate(s));
}
BENCHMARK(simulate_llama7b_fsdp)->Arg(16)->Arg(256)->Arg(2048)->Unit(benchmark::kMillisecond);

const char* const kLlama405b16k = R"({"hardware": "h100-dgx", "model": "llama3.1-405b",
    "cluster": {"gpus": 16384},
    "training": {"seq_len": 8192, "global_batch": 2048, "micro_batch": 1},
    "parallel": {"tp": 8, "pp": 16, "sequence_parallel": true,
                 "pipeline_schedule": "interleaved", "virtual_stages": 2,
                 "sharding": "zero1"}})";

void simulate_llama405b_16k(benchmark::State& state) {
  const auto s = load(kLlama405b16k);
  for (auto _ : state) benchmark::DoNotOptimize(report::simulate(s));
}
BENCHMARK(simulate_llama405b_16k)->Unit(benchmark::kMillisecond);

// llama2-7b on one 8-GPU node (DP 8, FSDP shard_grad_op, micro-batch 1, seq 4096): global batch
// 16 is 2 micro-batches per rank, 2,048 is 256 and 16,384 is 2,048. Arg 1 selects full
// simulation (report::SimulationMode::Full), arg 0 the default.
void simulate_llama7b_8gpu(benchmark::State& state) {
  auto s = load(R"({"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 8},
    "training": {"seq_len": 4096, "global_batch": 16, "micro_batch": 1},
    "parallel": {"sharding": "shard_grad_op"}})");
  s.training.global_batch = state.range(0);
  report::SimulateOptions options;
  options.mode =
      state.range(1) != 0 ? report::SimulationMode::Full : report::SimulationMode::Extrapolate;
  std::int64_t simulated = 0;
  for (auto _ : state) {
    const report::Simulation sim = report::simulate(s, options);
    simulated = sim.simulated_microbatches;
    benchmark::DoNotOptimize(sim.report.iteration_time);
  }
  state.counters["microbatches"] = static_cast<double>(s.num_microbatches());
  state.counters["simulated_microbatches"] = static_cast<double>(simulated);
  state.counters["peak_rss_bytes"] = peak_rss_bytes();
}
BENCHMARK(simulate_llama7b_8gpu)
    ->Args({16, 0})
    ->Args({2048, 0})
    ->Args({16384, 0})
    ->Args({16, 1})
    ->Args({2048, 1})
    ->Args({16384, 1})
    ->Unit(benchmark::kMillisecond);

// A capacity-planning sweep at a fixed global batch of 2,048 sequences (seq 4096): 3 models
// (llama2-7b, 13b, 70b) x 11 cluster sizes from 64 to 1,024 GPUs x TP 1-8 x PP 1-8 x
// micro-batch 1-8 x 5 sharding modes = 10,560 plans, on 2 threads, CSV out, through the same
// path as `trainsim sweep`. Cluster sizes that are not powers of two leave no valid data-parallel
// split of the batch; those plans are rejected without simulation, as a user's sweep would be.
const char* const kFixedBatchSweep = R"({
  "base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 64},
           "training": {"seq_len": 4096, "global_batch": 2048, "micro_batch": 1},
           "parallel": {"sharding": "shard_grad_op"}},
  "axes": {"model": ["llama2-7b", "llama2-13b", "llama2-70b"],
           "cluster.gpus": [64, 96, 128, 192, 256, 384, 512, 640, 768, 896, 1024],
           "parallel.tp": [1, 2, 4, 8], "parallel.pp": [1, 2, 4, 8],
           "training.micro_batch": [1, 2, 4, 8],
           "parallel.sharding": ["none", "zero1", "shard_grad_op", "full_shard",
                                 "hybrid_shard"]}})";

void sweep_fixed_batch_2048(benchmark::State& state) {
#ifdef __GLIBC__
  // As `trainsim sweep` does: keep freed graph buffers in the heap between scenarios.
  (void)mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  (void)mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
  const sweep::SweepSpec spec = sweep::parse_sweep_spec(kFixedBatchSweep, "bench", "");
  for (auto _ : state) {
    const std::string out = sweep::run_sweep(
        spec, sweep::SweepRunOptions{
                  .shard = {}, .jobs = 2, .format = io::SweepFormat::Csv, .progress = {}});
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["plans"] = static_cast<double>(spec.size());
  state.counters["plans_per_s"] =
      benchmark::Counter(static_cast<double>(spec.size()) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["peak_rss_bytes"] = peak_rss_bytes();
}
BENCHMARK(sweep_fixed_batch_2048)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

// The same plans one by one on one thread, counting what was simulated: ops_simulated (every
// graph's ops, reduced runs and full ones: the sweep's cost in a measure that does not drift
// with the machine's load, which varies by a third between runs on a shared 2-core machine),
// plans run (valid and fitting), plans extrapolated, and reduced micro-batches simulated.
// ops_shared: the ops of the plans a sweep takes from sweep::SimulationMemo instead (a plan
// whose sharding is inert, at any but the first value of the sharding axis), counted in
// ops_simulated.
void simulate_fixed_batch_plans(benchmark::State& state) {
  const sweep::SweepSpec spec = sweep::parse_sweep_spec(kFixedBatchSweep, "bench", "");
  std::int64_t ops = 0;
  std::int64_t shared = 0;
  std::int64_t plans = 0;
  std::int64_t extrapolated = 0;
  std::int64_t reduced = 0;
  for (auto _ : state) {
    ops = shared = plans = extrapolated = reduced = 0;
    const sweep::ShardingAxis sharding_axis(spec);
    for (std::int64_t i = 0; i < spec.size(); ++i) {
      // Every row of this spec loads; a plan that cannot run or fit is screened out, as the
      // sweep writes it as a row without simulating it.
      const parallel::Scenario s = io::scenario_from_document(spec.document(i));
      if (sweep::screen(s).status != sweep::Status::Ok) continue;
      const report::Simulation sim = report::simulate(s);
      ++plans;
      ops += sim.ops_simulated;
      reduced += sim.reduced_microbatches_simulated;
      if (sim.extrapolated) ++extrapolated;
      if (report::sharding_is_inert(s) && sharding_axis.first_of(i) != i) {
        shared += sim.ops_simulated;
      }
    }
  }
  state.counters["ops_simulated"] = static_cast<double>(ops);
  state.counters["ops_shared"] = static_cast<double>(shared);
  state.counters["plans"] = static_cast<double>(plans);
  state.counters["extrapolated"] = static_cast<double>(extrapolated);
  state.counters["reduced_microbatches"] = static_cast<double>(reduced);
}
BENCHMARK(simulate_fixed_batch_plans)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
