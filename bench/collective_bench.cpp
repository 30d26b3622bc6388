// Cost of one collective-model evaluation: the engine prices every communication op with it,
// so a scenario's run time depends on it (DESIGN.md performance budget).
#include <benchmark/benchmark.h>

#include "trainsim/collective/collective_model.hpp"

#include "sim/io/hardware_loader.hpp"

namespace {

using trainsim::Bytes;
using trainsim::collective::CollectiveModel;
using trainsim::collective::Op;

void run(benchmark::State& state, Op op, trainsim::parallel::GroupShape group) {
  const CollectiveModel model(trainsim::io::load_hardware("h100-dgx"));
  double bytes = 404766720.0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.cost(op, group, Bytes(bytes)));
    bytes += 1.0;  // a new size each time, as the engine's ops vary
  }
}

// FSDP's per-layer AllGather over 2048 GPUs (256 nodes): ring, tree and NVLS entries priced.
void BM_CollectiveCostAllGather2048(benchmark::State& state) {
  run(state, Op::AllGather, {.ranks = 2048, .nodes = 256, .ranks_per_node = 8});
}
BENCHMARK(BM_CollectiveCostAllGather2048);

// AllReduce over 16,384 GPUs: every algorithm family eligible (Ring, Tree, NVLSTree).
void BM_CollectiveCostAllReduce16384(benchmark::State& state) {
  run(state, Op::AllReduce, {.ranks = 16384, .nodes = 2048, .ranks_per_node = 8});
}
BENCHMARK(BM_CollectiveCostAllReduce16384);

}  // namespace
