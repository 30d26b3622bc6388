// The op graph of one training iteration, one device per pipeline stage, with the payload that
// says what each op is (kernel, collective, pipeline send). Built from a validated scenario;
// the engine simulates the graph, the report and the trace writer read the payload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/engine/graph.hpp"
#include "trainsim/model/kernels.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/parallel/scenario.hpp"
#include "trainsim/units.hpp"

namespace trainsim::collective {
class CollectiveModel;
}

namespace trainsim::workload {

// A distinct collective call of the iteration: same op, group and size on one stage.
struct CollectiveCall {
  std::string op;         // "all_gather", "reduce_scatter", "all_reduce", "send_recv", ...
  std::string group;      // "tp", "cp", "dp", "shard", "replicate", "pp", "ep", "expert_dp",
                          // "expert_shard", "embedding"
  parallel::GroupShape shape;
  Bytes bytes;   // per NCCL call, nccl-tests accounting
  Seconds time;  // per op: calls_per_op calls (and the host time around them)
  std::string algorithm;
  std::string protocol;
  std::int64_t stage = 0;
  std::int64_t count = 0;  // ops per iteration on this stage
  // NCCL calls one op stands for: DDP's gradient buckets of a layer, a ring exchange's cp - 1
  // steps; 1 elsewhere. The report counts calls, each of time / calls_per_op.
  std::int64_t calls_per_op = 1;
};

// What one engine op is; indexed by the op's tag.
struct OpInfo {
  std::int32_t stage = 0;
  std::int32_t microbatch = -1;  // -1 for per-iteration ops (optimizer, gradient sync)
  std::int32_t layer = -1;       // global layer index, -1 outside the layers
  bool backward = false;
  // The optimizer step, and ZeRO-1's gather of the weights it updated where that follows it.
  bool optimizer = false;
  // A forward op run again for the backward (activation recomputation, full or selective), with
  // the collectives of a recomputed layer.
  bool recompute = false;
  std::int32_t collective = -1;  // index into Iteration::collectives, -1 for compute kernels
  Flops flops;                   // executed FLOPs of a compute kernel
  // What a compute kernel is (GEMM, attention, memory-bound); meaningless for collectives and
  // for the zero-length markers on the compute stream.
  model::KernelKind kernel_kind = model::KernelKind::MemoryBound;
};

struct Iteration {
  engine::Graph graph;
  engine::CachedVector<OpInfo> ops;  // by op tag (== OpId)
  std::vector<CollectiveCall> collectives;
  std::vector<engine::DeviceId> stage_device; // device of each pipeline stage
  parallel::Placement placement;
};

// What-if knobs of the builder.
struct BuildOptions {
  // Multiplies every communication time (collectives and pipeline sends). 0 gives the ideal,
  // communication-free iteration: what compute and the pipeline schedule alone allow.
  double communication_scale = 1.0;
  // The micro-batches of the whole optimizer step when the graph holds fewer (a reduced run of
  // report::simulate); 0: the scenario's own. What is paid once per step and spread over its
  // micro-batches (the FP8 weight cast of a stack that caches FP8 weights) takes its share
  // per micro-batch from this count, so that a reduced run's micro-batches cost what the full
  // step's do.
  std::int64_t step_microbatches = 0;
};

// Builds the graph of one iteration of `scenario` (validated, dp derived), pricing kernels with
// the compute model and collectives with `collectives`.
[[nodiscard]] Iteration build_iteration(const parallel::Scenario& scenario,
                                        const collective::CollectiveModel& collectives,
                                        const BuildOptions& options = {});

// A lower bound on the simulated iteration time of `scenario` (validated, dp derived), without
// building the graph: the busiest pipeline stage's layer kernels (forward, backward and
// recomputation) over the step's micro-batches, which its compute stream runs in turn.
// Communication, contention, the bubble, the embedding, LM head and optimizer only add to the
// simulated time. Costs one pricing of the layer's kernels (microseconds).
[[nodiscard]] Seconds compute_lower_bound(const parallel::Scenario& scenario,
                                          const collective::CollectiveModel& collectives);

}  // namespace trainsim::workload
