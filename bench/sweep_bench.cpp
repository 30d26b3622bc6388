// Cost of sweeps and plan search (DESIGN.md "Performance budget": 10,000 scenarios in seconds on
// two cores). sweep_10k_7b: 10,000 plans of 7B-class models (2 models x 5 cluster sizes from 64
// to 1,024 GPUs with global batch 2 x GPUs x 4 TP x 5 PP x 5 micro-batches x 5 sharding modes x
// 2 recompute policies) on 2 threads, CSV out; search_70b_1024: the default search space for
// llama3-70b on 1,024 H100 (global batch 1,024, seq 8,192) on 2 threads; resolve_*: turning one
// sweep point into a Scenario through the loader or through the resolver's cache.
#include <cstdint>
#include <string>

#include <benchmark/benchmark.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "sim/io/scenario_loader.hpp"
#include "sim/sweep/sweep_run.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "trainsim/sweep/search.hpp"

namespace {

using namespace trainsim;

const char* const kSweep10k = R"({
  "base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 64},
           "training": {"seq_len": 4096, "global_batch": 128, "micro_batch": 1},
           "parallel": {"sharding": "shard_grad_op"}},
  "axes": {"model": ["llama2-7b", "llama3-8b"],
           "cluster.gpus": {"from": 64, "to": 1024, "times": 2},
           "training.global_batch": {"from": 128, "to": 2048, "times": 2},
           "parallel.tp": [1, 2, 4, 8], "parallel.pp": [1, 2, 4, 8, 16],
           "training.micro_batch": [1, 2, 4, 8, 16],
           "parallel.sharding": ["none", "zero1", "shard_grad_op", "full_shard", "hybrid_shard"],
           "parallel.recompute": ["none", "selective"]},
  "zip": [["cluster.gpus", "training.global_batch"]]})";

// As `trainsim sweep` and `trainsim search` do (sim/cli/sweep.cpp): keep freed graph buffers
// in the heap instead of returning them to the kernel after every scenario.
void keep_freed_memory() {
#ifdef __GLIBC__
  (void)mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  (void)mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

void sweep_10k_7b(benchmark::State& state) {
  keep_freed_memory();
  const sweep::SweepSpec spec = sweep::parse_sweep_spec(kSweep10k, "bench", "");
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string out = sweep::run_sweep(
        spec, sweep::SweepRunOptions{.shard = {}, .jobs = 2, .format = io::SweepFormat::Csv,
                                     .progress = {}});
    bytes = out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["scenarios"] = static_cast<double>(spec.size());
  state.counters["csv_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(sweep_10k_7b)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

void search_70b_1024(benchmark::State& state) {
  keep_freed_memory();
  io::ScenarioDocument doc;
  io::set_path(doc, "hardware", "h100-dgx", "bench");
  io::set_path(doc, "model", "llama3-70b", "bench");
  io::set_path(doc, "cluster.gpus", 1024, "bench");
  io::set_path(doc, "training.seq_len", 8192, "bench");
  io::set_path(doc, "training.global_batch", 1024, "bench");
  const parallel::Scenario base = io::scenario_from_document(doc);
  std::int64_t simulated = 0;
  for (auto _ : state) {
    const sweep::SearchResult r =
        sweep::search(base, sweep::SearchSpace{}, sweep::Objective::TokensPerS, 2);
    simulated = r.simulated;
    benchmark::DoNotOptimize(r.ranked.data());
  }
  state.counters["simulated"] = static_cast<double>(simulated);
}
BENCHMARK(search_70b_1024)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

// The mixture-of-experts searches of docs/sweep.md, bounded by the CLI's default --top 5 as
// `trainsim search` runs them (sweep::search): deepseek-v3 on 1,024 H800 and on 256 GB200,
// global batch 4096, seq 4096, the default space with every EP degree. Target: under 60 s each
// on 2 threads.
void search_deepseek_v3(benchmark::State& state, const char* hardware, std::int64_t gpus) {
  keep_freed_memory();
  io::ScenarioDocument doc;
  io::set_path(doc, "hardware", hardware, "bench");
  io::set_path(doc, "model", "deepseek-v3", "bench");
  io::set_path(doc, "cluster.gpus", gpus, "bench");
  io::set_path(doc, "training.seq_len", 4096, "bench");
  io::set_path(doc, "training.global_batch", 4096, "bench");
  const parallel::Scenario base = io::scenario_from_document(doc);
  std::int64_t simulated = 0;
  std::int64_t bounded = 0;
  for (auto _ : state) {
    const sweep::SearchResult r =
        sweep::search(base, sweep::SearchSpace{}, sweep::Objective::TokensPerS, 2, {}, {},
                      report::SimulationMode::Extrapolate, 5);
    simulated = r.simulated;
    bounded = r.bounded;
    benchmark::DoNotOptimize(r.ranked.data());
  }
  state.counters["simulated"] = static_cast<double>(simulated);
  state.counters["bounded"] = static_cast<double>(bounded);
}
BENCHMARK_CAPTURE(search_deepseek_v3, h800_1024, "h800-dgx", 1024)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(search_deepseek_v3, gb200_256, "gb200-nvl72", 256)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();

void resolve_loader(benchmark::State& state) {
  const sweep::SweepSpec spec = sweep::parse_sweep_spec(kSweep10k, "bench", "");
  std::int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(io::scenario_from_document(spec.document(i++ % spec.size())).gpus);
  }
}
BENCHMARK(resolve_loader)->Unit(benchmark::kMicrosecond);

void resolve_cached(benchmark::State& state) {
  const sweep::SweepSpec spec = sweep::parse_sweep_spec(kSweep10k, "bench", "");
  sweep::ScenarioResolver resolver;
  std::int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(resolver.resolve(spec.document(i++ % spec.size())).gpus);
  }
}
BENCHMARK(resolve_cached)->Unit(benchmark::kMicrosecond);

// The spec's check of every axis value before a sweep runs: an axis of 10,000 global batches
// (4.1 s when each value loaded the profile and model again; 0.08 s through the resolver).
void parse_spec_10k_values(benchmark::State& state) {
  const std::string text = R"({"base": {"hardware": "h100-dgx", "model": "llama2-7b",
      "cluster": {"gpus": 8}, "training": {"seq_len": 1024}},
      "axes": {"training.global_batch": {"from": 8, "to": 80000, "step": 8}}})";
  for (auto _ : state) {
    benchmark::DoNotOptimize(sweep::parse_sweep_spec(text, "bench", "").size());
  }
}
BENCHMARK(parse_spec_10k_values)->Unit(benchmark::kMillisecond);

}  // namespace
