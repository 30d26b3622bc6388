// Where the GPU time of one iteration goes, by kernel category and by collective op, computed the
// same way for a measured kernel timeline (a PyTorch profiler trace, read by
// sim/io/kineto_reader) and for a simulated one (one pipeline stage of a Simulation). This is
// what `trainsim compare` puts side by side. Definitions follow HTA and TraceLens
// (docs/sources.md §2.4-§2.5): busy time is the union of kernel intervals, so kernels that
// run at once on several streams are not counted twice.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/model/kernels.hpp"
#include "trainsim/report/simulate.hpp"
#include "trainsim/units.hpp"

namespace trainsim::report {

// What a GPU kernel does, decided from its name (and trace category) by classify_kernel().
enum class KernelCategory {
  Gemm,           // matrix multiplies: cuBLAS, cuBLASLt, CUTLASS
  Attention,      // fused attention: FlashAttention, cuDNN SDPA, memory-efficient attention
  MemoryBound,    // everything else that computes: elementwise, norms, reductions, optimizer
  Memcpy,         // copy-engine or kernel copies (Kineto "gpu_memcpy")
  Memset,         // Kineto "gpu_memset"
  Communication,  // NCCL kernels
};
inline constexpr std::array<KernelCategory, 6> kKernelCategories = {
    KernelCategory::Gemm,   KernelCategory::Attention, KernelCategory::MemoryBound,
    KernelCategory::Memcpy, KernelCategory::Memset,    KernelCategory::Communication};

// Copies and fills are GPU events but no kernel: not counted as kernels.
[[nodiscard]] constexpr bool is_copy_or_fill(KernelCategory c) {
  return c == KernelCategory::Memcpy || c == KernelCategory::Memset;
}

// "gemm", "attention", "memory_bound", "memcpy", "memset", "communication".
[[nodiscard]] std::string_view to_string(KernelCategory category);

// The category of a simulated compute op, from the rate it is priced at (model::KernelKind):
// Gemm, Attention or MemoryBound.
[[nodiscard]] KernelCategory category_of(model::KernelKind kind);

// The category of a GPU event from its kernel name and its Kineto category ("kernel",
// "gpu_memcpy", "gpu_memset"). The first matching row of the table in kernel_breakdown.cpp
// wins; the match ignores case. An unknown kernel is MemoryBound.
[[nodiscard]] KernelCategory classify_kernel(std::string_view name,
                                             std::string_view trace_category);

// The collective op of an NCCL kernel, spelled as collective::to_string spells it
// ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all",
// "send_recv"), or "other" when neither tells. `collective_name` is the kernel event's
// "Collective name" argument (recent PyTorch; empty if absent); it wins over the kernel name,
// since NCCL runs all-to-all as grouped SendRecv kernels.
[[nodiscard]] std::string nccl_op(std::string_view kernel_name, std::string_view collective_name);

// One kernel's [start, end) on the GPU clock, relative to any origin shared by the set.
struct KernelInterval {
  Seconds start;
  Seconds end;
};

// Total length of the union of `intervals` (HTA merge_kernel_intervals, hta/utils/utils.py).
[[nodiscard]] Seconds union_length(std::vector<KernelInterval> intervals);
// Length of (union of a) ∩ (union of b) (HTA communication_analysis.py's overlap sweep). A piece
// no longer than `resolution` (the times' reading resolution; a few units in the last place at
// least) is rounding, not overlap.
[[nodiscard]] Seconds intersection_length(std::vector<KernelInterval> a,
                                          std::vector<KernelInterval> b,
                                          Seconds resolution = Seconds(0.0));

// Time in one category or one collective op.
struct CategoryTime {
  Seconds busy;        // union of the kernels' intervals
  Seconds kernel_sum;  // sum of their durations (>= busy; larger when they overlap)
  std::int64_t num_kernels = 0;
};

// One GPU kernel of a breakdown's input.
struct TimedKernel {
  KernelCategory category = KernelCategory::MemoryBound;
  std::string op;  // Communication only: nccl_op()'s spelling; empty otherwise
  Seconds start;
  Seconds end;
  // The GPU kernels it stands for: 1 in a profiler trace (one event per kernel); a simulated
  // op may stand for several NCCL calls (DDP's buckets of a layer, a ring exchange's steps:
  // workload::CollectiveCall::calls_per_op), each one kernel.
  std::int64_t count = 1;
};

// The breakdown of one window of GPU work (one profiler step, or one simulated iteration).
// Invariants, up to rounding: busy <= span; idle = span - busy;
// exposed_communication = communication - overlapped_communication;
// compute + exposed_communication + idle = span.
struct StepBreakdown {
  std::int64_t step = 0;  // N of ProfilerStep#N; 0 for a simulation
  Seconds cpu_duration;   // the CPU ProfilerStep range; the iteration time for a simulation
  Seconds span;           // first kernel start to last kernel end; the iteration for a simulation
  std::int64_t num_kernels = 0;
  std::map<KernelCategory, CategoryTime> categories;  // only categories with kernels
  std::map<std::string, CategoryTime> collectives;    // NCCL kernels by op
  Seconds busy;                                       // union of all kernels
  Seconds compute;                                    // union of every non-communication kernel
  Seconds compute_kernel_sum;                         // sum of their durations
  Seconds communication;                              // union of communication kernels
  Seconds communication_kernel_sum;                   // sum of their durations
  Seconds overlapped_communication;                   // |communication ∩ compute|
  Seconds exposed_communication;  // |communication \ compute| (TraceLens exposed_comm)
  Seconds idle;                   // span - busy: nothing runs
};

// The breakdown of `kernels` over a window of length `span` (for a measured step the window is
// the kernels' own extent; pass the CPU step duration as `cpu_duration`).
// Requires: every kernel has end >= start.
// `resolution` is the times' reading resolution (compare's trace: twice the spacing of doubles
// at its timestamps): overlaps and idle time within it are 0.
[[nodiscard]] StepBreakdown breakdown(const std::vector<TimedKernel>& kernels, Seconds span,
                                      Seconds cpu_duration, std::int64_t step,
                                      Seconds resolution = Seconds(0.0));

// Field-by-field mean of `steps` (a category or op missing from a step counts as zero there);
// `step` of the result is -1. Requires: `steps` is not empty.
[[nodiscard]] StepBreakdown mean_breakdown(const std::vector<StepBreakdown>& steps);

// The breakdown of pipeline stage `stage` of a simulated iteration over the report's iteration
// time (the GPU work and the stack's host time per step after it, idle): compute ops by their
// kernel kind (GEMM, attention, memory-bound), collectives and pipeline sends by op. Zero-length
// ops (markers) are left out.
// Requires: 0 <= stage < number of stages.
[[nodiscard]] StepBreakdown simulated_breakdown(const Simulation& simulation, std::int64_t stage);

}  // namespace trainsim::report
