// The order in which one pipeline stage runs the forward and backward passes of its
// micro-batches: GPipe, 1F1B (PipeDream-Flush) and interleaved 1F1B. The workload builder lays
// compute ops on a stage's in-order compute stream in exactly this order.
#pragma once

#include <cstdint>
#include <vector>

#include "trainsim/parallel/scenario.hpp"

namespace trainsim::workload {

struct PassStep {
  bool backward = false;
  std::int64_t microbatch = 0;
  std::int64_t chunk = 0;  // model chunk (virtual stage) on this rank; 0 unless interleaved
};

// The k-th forward (or backward) step of a stage of Megatron-LM's interleaved schedule: steps
// go through the `chunks` model chunks in groups of pp micro-batches, backward in the reverse
// chunk order (megatron/core/pipeline_parallel/schedules.py, get_model_chunk_id).
[[nodiscard]] PassStep interleaved_step(std::int64_t k, std::int64_t pp, std::int64_t chunks,
                                        bool backward);

// The forward steps `stage` of the interleaved schedule runs before its first backward, of
// `total` (micro-batches x chunks): (pp - stage - 1) x 2 + (chunks - 1) x pp, at most `total`;
// with as many micro-batches as stages, `total`: every forward, then every backward
// (Megatron-LM's forward_backward_pipelining_with_interleaving: "Run all forward passes and then
// all backward passes if number of microbatches is just the number of pipeline stages",
// all_warmup_microbatches).
[[nodiscard]] std::int64_t interleaved_warmup(std::int64_t pp, std::int64_t stage,
                                              std::int64_t chunks, std::int64_t total);

// Steps of `stage` (0-based) of `pp` stages running `microbatches` micro-batches with
// `chunks` model chunks per stage. Every (microbatch, chunk) appears once forward and once
// backward, and a backward never precedes its own forward.
//   GPipe (Huang et al. 2019): all forwards, then all backwards.
//   1F1B (Narayanan et al. 2021, PipeDream-Flush): min(pp - stage - 1, m) warm-up forwards,
//     then alternating forward/backward, then the remaining backwards.
//   Interleaved 1F1B (Narayanan et al. 2021 §2.2; Megatron-LM schedules.py): forwards of
//     chunk c of micro-batches in groups of pp, warm-up (pp - stage - 1) * 2 + (chunks - 1) * pp
//     steps (every step where microbatches == pp), then one forward one backward; requires
//     microbatches % pp == 0.
[[nodiscard]] std::vector<PassStep> pipeline_order(parallel::PipelineSchedule schedule,
                                                   std::int64_t pp, std::int64_t stage,
                                                   std::int64_t microbatches, std::int64_t chunks);

}  // namespace trainsim::workload
