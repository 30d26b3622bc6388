// Cost of `trainsim validate` over every shipped published run, knob search included (the
// validation issue's budget: under 10 s on two cores). validate_shipped_runs/N: reading the
// embedded runs and validating them on N threads.
#include <benchmark/benchmark.h>

#include "trainsim/validation/validate_runs.hpp"

#include "sim/validation/runs_reader.hpp"

namespace {

using namespace trainsim;

void validate_shipped_runs(benchmark::State& state) {
  const auto jobs = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const auto runs = validation::read_published_runs(validation::builtin_runs_text(),
                                                      "validation/published_runs.json");
    benchmark::DoNotOptimize(validation::validate_runs(
        runs, {.jobs = jobs, .source_filter = "", .stacks = {}, .stack_files = {}}));
  }
}
BENCHMARK(validate_shipped_runs)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
