// Reading of PyTorch profiler (Kineto) traces: the Chrome-trace JSON that torch.profiler writes
// with prof.export_chrome_trace() or tensorboard_trace_handler, one file per rank. It keeps the
// GPU kernels (classified by report::classify_kernel), the CPU ProfilerStep#N ranges, assigns
// each kernel to a step and breaks every step down as report/kernel_breakdown.hpp defines.
// Format: docs/sources.md §2 (Kineto event categories, HTA's methodology).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/report/kernel_breakdown.hpp"
#include "trainsim/units.hpp"

namespace trainsim::io {

// How a kernel found its profiler step.
enum class StepAssignment {
  Correlation,  // its launch (the cuda_runtime/cuda_driver event with the same "correlation"
                // argument) lies inside a ProfilerStep range on the CPU
  Time,         // no launch event: its own start lies in [step start, next step start)
  None,         // neither: launched outside every step, or it ran before the first step
};

// One GPU event: a kernel (cat "kernel"), a copy ("gpu_memcpy") or a memset ("gpu_memset").
struct KinetoKernel {
  std::string name;
  std::string trace_category;  // lowercased: "kernel", "gpu_memcpy", "gpu_memset" (early Kineto:
                               // "memcpy", "memset")
  report::KernelCategory category = report::KernelCategory::MemoryBound;
  std::string op;                 // Communication only: report::nccl_op(); empty otherwise
  std::int64_t device = -1;       // args "device", else pid; -1 if neither is an integer
  std::int64_t stream = -1;       // args "stream", else tid; -1 if neither is an integer
  std::int64_t correlation = -1;  // args "correlation"; -1 if absent
  Seconds start;                  // since the trace's origin (its earliest event read)
  Seconds duration;
  std::int64_t step = -1;  // index into KinetoTrace::steps; -1 when unassigned
  StepAssignment assignment = StepAssignment::None;
};

// One iteration as the CPU saw it: the "ProfilerStep#N" range (cat user_annotation or cpu_op).
struct ProfilerStep {
  std::int64_t number = 0;  // N
  Seconds start;            // since the trace's origin
  Seconds duration;
};

// A trace as read. Times are relative to the earliest ts among the events read, which keeps
// double precision for traces whose ts are absolute microseconds near 1.7e15.
struct KinetoTrace {
  std::string source;
  std::optional<std::int64_t> rank;        // distributedInfo.rank, if the trace has it
  std::optional<std::int64_t> world_size;  // distributedInfo.world_size
  std::vector<std::int64_t> devices;       // distinct GPU devices of the kernels, ascending
  std::vector<std::int64_t> streams;       // distinct stream ids of the kernels, ascending
  // Streams counted per device: stream 7 of two GPUs is two streams.
  std::int64_t num_streams = 0;
  // Of `kernels`, the copies and fills (gpu_memcpy, gpu_memset), which are no kernel.
  std::int64_t num_copies_and_fills = 0;
  std::vector<KinetoKernel> kernels;       // by start time (then trace order)
  std::vector<ProfilerStep> steps;         // by start time; one per N
  std::int64_t num_by_correlation = 0;     // kernels per StepAssignment
  std::int64_t num_by_time = 0;
  std::int64_t num_unassigned = 0;
  // Events of a GPU category (kernel, copy) that are not complete ("X") events, skipped:
  // Kineto writes GPU work as complete events only.
  std::int64_t skipped_gpu_events = 0;
  // Events named ProfilerStep#N of the CPU side that are not read as steps: in another phase than
  // complete ("X"), or of another category than user_annotation, cpu_op (early: Operator). The
  // GPU copies (gpu_user_annotation) every Kineto trace has are not counted.
  std::int64_t skipped_step_events = 0;
  // GPU events recorded twice (the same name, category, device, stream, start, duration and
  // correlation), read once: one stream runs one kernel at a time, so two such events are one
  // kernel written twice (a trace concatenated or exported twice), not two kernels.
  std::int64_t duplicate_gpu_events = 0;
  // The resolution of the GPU events' timestamps, microseconds: the spacing of doubles at the
  // latest start. Traces relative to baseTimeNanoseconds (about 4e12 us) read to the nanosecond;
  // absolute Unix-epoch ones (about 1.7e15 us) to 0.25 us.
  double timestamp_resolution_us = 0.0;
  // One breakdown per step, in `steps` order, over the kernels assigned to it. A step with no
  // kernels has a zero span.
  std::vector<report::StepBreakdown> step_breakdowns;
  // Kernels (cat "kernel", not copies or fills) per step, in `steps` order: a step that holds
  // copies alone holds no kernel, and is left out as one that holds nothing (summarize).
  std::vector<std::int64_t> step_kernels;
};

// Parses trace text; `source` names it in errors.
// Throws ConfigError ("<source>: <json pointer>: <problem>; expected ..., got ...") for: gzip
// data (zlib is not linked: gunzip it first), text over 64 MiB, NUL bytes, nesting deeper than
// 64, malformed JSON, a document that is neither {"traceEvents": [...]} nor an array of events,
// an event that is not an object, a kernel, copy, launch or ProfilerStep event without a name or
// with ts/dur missing, not numbers, negative or not finite, a trace with no GPU kernels and a
// trace with no ProfilerStep#N ranges.
[[nodiscard]] KinetoTrace parse_kineto_trace(const std::string& text, const std::string& source);

// Reads the file (ConfigError naming it when unreadable, a directory or over 64 MiB) and parses
// it as parse_kineto_trace does, with `path` as the source.
[[nodiscard]] KinetoTrace read_kineto_trace(const std::string& path);

// Which steps the summary averages. The first recorded step often still pays one-time costs
// (caching-allocator growth, cuBLAS/cuDNN heuristics, NCCL communicator setup); for the same
// reason torch.profiler.schedule has a warmup phase, and HTA leaves out a boundary step (the
// last one, include_last_profiler_step=False in hta/common/trace.py).
// Either way a step that holds no GPU kernel is left out: its zeros are no measurement (a trace
// cut short, or a step whose kernels were launched outside it), and the selection applies to the
// steps that hold kernels.
enum class StepSelection {
  SkipFirst,  // all but the first when there are two or more
  All,
};

struct TraceSummary {
  std::vector<std::int64_t> used;     // step numbers averaged
  std::vector<std::int64_t> skipped;  // step numbers left out as the warm-up
  std::vector<std::int64_t> empty;    // step numbers left out as they hold no GPU kernel
  report::StepBreakdown mean;         // report::mean_breakdown of the used steps
};

[[nodiscard]] TraceSummary summarize(const KinetoTrace& trace, StepSelection selection);

}  // namespace trainsim::io
