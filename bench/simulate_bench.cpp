// One scenario end to end (build the op graph, simulate, report), the budgets of the
// iteration-simulation issue: llama2-7b on 256 H100 under FSDP below 5 ms; llama3.1-405b on
// 16,384 H100 (TP 8, PP 16, interleaved) below 100 ms; run time flat in the GPU count.
#include <benchmark/benchmark.h>

#include "sim/io/scenario_loader.hpp"
#include "trainsim/report/simulate.hpp"

namespace {

trainsim::parallel::Scenario load(const char* json) {
  trainsim::io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(json);
  return trainsim::io::scenario_from_document(doc);
}

void simulate_llama7b_fsdp(benchmark::State& state) {
  auto s = load(R"({"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 256},
    "training": {"seq_len": 4096, "micro_batch": 2}, "parallel": {"sharding": "shard_grad_op"}})");
  s.gpus = state.range(0);
  s.parallel.dp = s.gpus;
  s.training.global_batch = 2 * s.gpus;
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::report::simulate(s));
}
BENCHMARK(simulate_llama7b_fsdp)->Arg(16)->Arg(256)->Arg(2048)->Unit(benchmark::kMillisecond);

void simulate_llama405b_16k(benchmark::State& state) {
  const auto s = load(R"({"hardware": "h100-dgx", "model": "llama3.1-405b",
    "cluster": {"gpus": 16384},
    "training": {"seq_len": 8192, "global_batch": 2048, "micro_batch": 1},
    "parallel": {"tp": 8, "pp": 16, "sequence_parallel": true,
                 "pipeline_schedule": "interleaved", "virtual_stages": 2,
                 "sharding": "zero1"}})");
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::report::simulate(s));
}
BENCHMARK(simulate_llama405b_16k)->Unit(benchmark::kMillisecond);

}  // namespace
