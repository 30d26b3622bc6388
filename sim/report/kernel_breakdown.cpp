#include "trainsim/report/kernel_breakdown.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <utility>

#include "trainsim/engine/simulator.hpp"
#include "trainsim/error.hpp"
#include "trainsim/model/kernels.hpp"

namespace trainsim::report {
namespace {

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Lowercase without underscores: "ncclDevKernel_ReduceScatter_Sum_bf16" and the "Collective
// name" argument "_reduce_scatter_base" both become searchable as "reducescatter".
std::string squashed(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

enum class Match { Prefix, Contains, TraceCategory };

struct Rule {
  Match match;
  std::string_view pattern;  // lowercase
  KernelCategory category;
};

// Kernel classification, first match wins, case-insensitive. Sources:
//  - NCCL: HTA hta/common/types.py classifies `^nccl.*` and `.*ncclKernel.*` as communication.
//    Names: NCCL <= 2.18 `ncclKernel_AllReduce_RING_LL_Sum_float`, NCCL >= 2.19
//    `ncclDevKernel_AllGather_RING_LL`, NCCL >= 2.27 symmetric kernels `ncclSymkDevKernel_*`
//    (NVIDIA/nccl src/device/generate.py, src/device/symmetric/generate.py); the "contains"
//    rows catch demangled forms such as `void ncclKernel_...(...)` (docs/sources.md §2.3).
//  - Memcpy/memset: Kineto's own categories gpu_memcpy / gpu_memset (libkineto
//    ActivityType.cpp; "Memcpy"/"Memset" in PyTorch 1.8/1.9 traces) and its names `Memcpy DtoD
//    (Device -> Device)`, `Memset (Device)`; HTA matches `^Memcpy` / `^Memset` the same way.
//  - Attention comes before GEMM because FlashAttention-3 (`flash::FlashAttnFwdSm90` inside
//    `cutlass::device_kernel<...>`) and PyTorch's memory-efficient SDPA (`fmha_cutlassF_*`,
//    xFormers) carry "cutlass" in their names. "flash": FlashAttention-2 `flash_fwd_kernel`,
//    `flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel`, PyTorch's `pytorch_flash::flash_fwd_kernel`,
//    cuDNN `..._flash_fprop_...`; "fmha": xFormers/PyTorch `fmha_cutlassB_*` and
//    TransformerEngine `fmha_*`; "sdpa": cuDNN's `cudnn_generated_fort_native_sdpa_*`;
//    "attention": `efficient_attention_*` and other named attention kernels; "cudnn::fusion::":
//    the helper kernels of cuDNN's fused attention backward (`compute_dot_do_o_specialized`,
//    `convert_dq_to_16bits`, `fmha_reduce_head`), seen beside `..._sdpa_..._flash_bprop_...` in
//    the H200 trace of tests/data/traces/h200-llama-small.json (PyTorch 2.11, cuDNN 9.19).
//  - GEMM: cuBLAS `ampere_bf16_s16816gemm_*`, `sm80_xmma_gemm_*`, `sm90_xmma_gemm_*`,
//    `volta_h884gemm_*` ("gemm", "xmma"); CUTLASS `cutlass::Kernel<cutlass_80_tensorop_*gemm*>`
//    and CUTLASS 3 `cutlass::device_kernel<...GemmUniversal...>` ("cutlass"); cuBLAS 12.x
//    Hopper kernels `nvjet_tst_*`/`nvjet_hsh_*` ("nvjet"); cuBLASLt helpers
//    `cublasLt::splitKreduce_kernel` ("cublas"); matrix-vector `gemv2T_kernel_val` ("gemv").
//  - Everything else (PyTorch `vectorized_elementwise_kernel`, `reduce_kernel`, norms,
//    `multi_tensor_apply_kernel`, Triton `triton_poi_*`/`triton_red_*`) is MemoryBound, the
//    simulator's class for kernels limited by HBM bandwidth.
constexpr std::array<Rule, 21> kRules = {{
    {Match::Prefix, "nccl", KernelCategory::Communication},
    {Match::Contains, "ncclkernel", KernelCategory::Communication},
    {Match::Contains, "nccldevkernel", KernelCategory::Communication},
    {Match::Contains, "ncclsymk", KernelCategory::Communication},
    {Match::TraceCategory, "gpu_memcpy", KernelCategory::Memcpy},
    {Match::TraceCategory, "gpu_memset", KernelCategory::Memset},
    {Match::TraceCategory, "memcpy", KernelCategory::Memcpy},
    {Match::TraceCategory, "memset", KernelCategory::Memset},
    {Match::Prefix, "memcpy", KernelCategory::Memcpy},
    {Match::Prefix, "memset", KernelCategory::Memset},
    {Match::Contains, "flash", KernelCategory::Attention},
    {Match::Contains, "fmha", KernelCategory::Attention},
    {Match::Contains, "sdpa", KernelCategory::Attention},
    {Match::Contains, "attention", KernelCategory::Attention},
    {Match::Contains, "cudnn::fusion::", KernelCategory::Attention},
    {Match::Contains, "gemm", KernelCategory::Gemm},
    {Match::Contains, "xmma", KernelCategory::Gemm},
    {Match::Contains, "cutlass", KernelCategory::Gemm},
    {Match::Contains, "nvjet", KernelCategory::Gemm},
    {Match::Contains, "cublas", KernelCategory::Gemm},
    {Match::Contains, "gemv", KernelCategory::Gemm},
}};

// NCCL ops by the squashed spelling of a kernel name or of PyTorch's "Collective name"
// argument; first match wins, so "reducescatter" and "allreduce" come before "reduce".
// Collective names from PyTorch's ProcessGroupNCCL (allreduce, _allgather_base,
// all_gather_into_tensor, _reduce_scatter_base, reduce_scatter_tensor, broadcast, reduce,
// alltoall_base, all_to_all, send, recv; HTA hta/configs/default_event_args.py); kernel names
// as in kRules. NCCL has no all-to-all kernel: it runs grouped SendRecv kernels, so only the
// "Collective name" argument can say all_to_all.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kOps = {{
    {"reducescatter", "reduce_scatter"},
    {"allreduce", "all_reduce"},
    {"allgather", "all_gather"},
    {"alltoall", "all_to_all"},
    {"broadcast", "broadcast"},
    {"sendrecv", "send_recv"},
    {"send", "send_recv"},
    {"recv", "send_recv"},
    {"reduce", "reduce"},
}};

std::string_view op_of(std::string_view text) {
  if (text.empty()) return {};
  const std::string s = squashed(text);
  for (const auto& [pattern, op] : kOps) {
    if (s.find(pattern) != std::string::npos) return op;
  }
  return {};
}

void add(CategoryTime& t, Seconds duration, std::int64_t count) {
  t.kernel_sum += duration;
  t.num_kernels += count;
}

}  // namespace

std::string_view to_string(KernelCategory category) {
  switch (category) {
    case KernelCategory::Gemm:
      return "gemm";
    case KernelCategory::Attention:
      return "attention";
    case KernelCategory::MemoryBound:
      return "memory_bound";
    case KernelCategory::Memcpy:
      return "memcpy";
    case KernelCategory::Memset:
      return "memset";
    case KernelCategory::Communication:
      return "communication";
  }
  return "memory_bound";
}

KernelCategory category_of(model::KernelKind kind) {
  switch (kind) {
    case model::KernelKind::Gemm:
      return KernelCategory::Gemm;
    case model::KernelKind::Attention:
      return KernelCategory::Attention;
    case model::KernelKind::MemoryBound:
      return KernelCategory::MemoryBound;
  }
  return KernelCategory::MemoryBound;
}

KernelCategory classify_kernel(std::string_view name, std::string_view trace_category) {
  const std::string n = lowercase(name);
  const std::string c = lowercase(trace_category);
  for (const Rule& r : kRules) {
    // A kernel is no copy or fill whatever its name ("memset_zero_kernel", cat kernel): the
    // names "Memcpy ..." and "Memset ..." are those of events of the copy and fill categories.
    if (r.match == Match::Prefix && c == "kernel" &&
        (r.category == KernelCategory::Memcpy || r.category == KernelCategory::Memset)) {
      continue;
    }
    const bool hit = r.match == Match::Prefix     ? n.starts_with(r.pattern)
                     : r.match == Match::Contains ? n.find(r.pattern) != std::string::npos
                                                  : c == r.pattern;
    if (hit) return r.category;
  }
  return KernelCategory::MemoryBound;
}

std::string nccl_op(std::string_view kernel_name, std::string_view collective_name) {
  if (const auto op = op_of(collective_name); !op.empty()) return std::string(op);
  if (const auto op = op_of(kernel_name); !op.empty()) return std::string(op);
  return "other";
}

Seconds union_length(std::vector<KernelInterval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const KernelInterval& a, const KernelInterval& b) { return a.start < b.start; });
  Seconds total{};
  bool open = false;
  KernelInterval run{};
  for (const KernelInterval& i : intervals) {
    if (!open || i.start > run.end) {
      if (open) total += run.end - run.start;
      run = i;
      open = true;
    } else if (i.end > run.end) {
      run.end = i.end;
    }
  }
  if (open) total += run.end - run.start;
  return total;
}

namespace {

// The union of `intervals` as sorted, disjoint intervals.
std::vector<KernelInterval> merged(std::vector<KernelInterval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const KernelInterval& a, const KernelInterval& b) { return a.start < b.start; });
  std::vector<KernelInterval> out;
  for (const KernelInterval& i : intervals) {
    if (out.empty() || i.start > out.back().end) {
      out.push_back(i);
    } else if (i.end > out.back().end) {
      out.back().end = i.end;
    }
  }
  return out;
}

}  // namespace

namespace {

// Whether `d`, a difference of times of magnitude up to `scale`, is rounding: within a few units
// in the last place of `scale`. A trace's times are read from microseconds and a kernel's end is
// its start plus its duration, so a kernel and the next that starts where it ends can overlap by
// one rounding (ts 1.1 + dur 2.2 = 3.3000000000000003 us against a start at 3.3 us: 4.4e-22 s);
// summed as time, such a sliver showed as "0.00 ns" of overlapped communication against a
// simulated 0, a difference of -100%.
// A trace's absolute timestamps (about 4.5e12 us) read to about 1e-3 us, so a sliver there is
// up to about 1e-10 s: the reader's resolution, passed in, covers it.
bool rounding(Seconds d, Seconds scale, Seconds resolution) {
  return std::fabs(d.value()) <=
         std::max(resolution.value(),
                  4.0 * std::numeric_limits<double>::epsilon() * std::fabs(scale.value()));
}

}  // namespace

Seconds intersection_length(std::vector<KernelInterval> a, std::vector<KernelInterval> b,
                            Seconds resolution) {
  const auto x = merged(std::move(a));
  const auto y = merged(std::move(b));
  Seconds total{};
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < x.size() && j < y.size()) {
    const Seconds lo = std::max(x[i].start, y[j].start);
    const Seconds hi = std::min(x[i].end, y[j].end);
    const Seconds scale = std::max(Seconds(std::fabs(hi.value())), Seconds(std::fabs(lo.value())));
    if (hi > lo && !rounding(hi - lo, scale, resolution)) {
      total += hi - lo;
    }
    if (x[i].end < y[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

StepBreakdown breakdown(const std::vector<TimedKernel>& kernels, Seconds span, Seconds cpu_duration,
                        std::int64_t step, Seconds resolution) {
  StepBreakdown b;
  b.step = step;
  b.cpu_duration = cpu_duration;
  b.span = span;
  b.num_kernels = 0;
  for (const TimedKernel& k : kernels) {
    if (!is_copy_or_fill(k.category)) b.num_kernels += k.count;
  }
  std::vector<KernelInterval> all;
  std::vector<KernelInterval> compute;
  std::vector<KernelInterval> communication;
  std::map<KernelCategory, std::vector<KernelInterval>> by_category;
  std::map<std::string, std::vector<KernelInterval>> by_op;
  for (const TimedKernel& k : kernels) {
    const KernelInterval i{.start = k.start, .end = k.end};
    const Seconds d = k.end - k.start;
    all.push_back(i);
    by_category[k.category].push_back(i);
    add(b.categories[k.category], d, k.count);
    if (k.category == KernelCategory::Communication) {
      communication.push_back(i);
      b.communication_kernel_sum += d;
      by_op[k.op].push_back(i);
      add(b.collectives[k.op], d, k.count);
    } else {
      compute.push_back(i);
      b.compute_kernel_sum += d;
    }
  }
  for (auto& [category, intervals] : by_category) {
    b.categories[category].busy = union_length(std::move(intervals));
  }
  for (auto& [op, intervals] : by_op) b.collectives[op].busy = union_length(std::move(intervals));
  b.compute = union_length(compute);
  b.communication = union_length(communication);
  // TraceLens gpu_event_analyser.py: exposed_comm = |comm_union \ comp_union|
  //                                              = |comm_union| - |comm_union ∩ comp_union|.
  b.overlapped_communication = intersection_length(communication, compute, resolution);
  b.exposed_communication = b.communication - b.overlapped_communication;
  // The union of all of them, |compute ∪ comm| = |compute| + |comm| - |compute ∩ comm|, from
  // the same overlap: where an overlap within the timestamps' resolution is dropped as
  // rounding, the busy time drops it too, so that compute + exposed + idle = span still holds
  // (the union taken apart kept slivers the intersection had dropped). Elsewhere the two agree
  // to rounding.
  const Seconds all_busy = union_length(std::move(all));
  const Seconds split = b.compute + b.exposed_communication;
  b.busy = rounding(all_busy - split, span, resolution) ? split : all_busy;
  // HTA breakdown_analysis.py get_temporal_breakdown: idle = span - |union of all GPU events|.
  b.idle = rounding(span - b.busy, span, resolution) ? Seconds(0.0) : span - b.busy;
  return b;
}

StepBreakdown mean_breakdown(const std::vector<StepBreakdown>& steps) {
  if (steps.empty()) throw InternalError("mean_breakdown: no steps");
  const auto n = static_cast<double>(steps.size());
  StepBreakdown m;
  m.step = -1;
  auto mean_time = [&](CategoryTime& into, const CategoryTime& t) {
    into.busy += t.busy / n;
    into.kernel_sum += t.kernel_sum / n;
    into.num_kernels += t.num_kernels;
  };
  std::int64_t kernels = 0;
  for (const StepBreakdown& s : steps) {
    m.cpu_duration += s.cpu_duration / n;
    m.span += s.span / n;
    kernels += s.num_kernels;
    for (const auto& [c, t] : s.categories) mean_time(m.categories[c], t);
    for (const auto& [op, t] : s.collectives) mean_time(m.collectives[op], t);
    m.busy += s.busy / n;
    m.compute += s.compute / n;
    m.compute_kernel_sum += s.compute_kernel_sum / n;
    m.communication += s.communication / n;
    m.communication_kernel_sum += s.communication_kernel_sum / n;
    m.overlapped_communication += s.overlapped_communication / n;
    m.exposed_communication += s.exposed_communication / n;
    m.idle += s.idle / n;
  }
  // Counts are integers: the mean per step, rounded to the nearest.
  auto mean_count = [&](std::int64_t total) {
    return (total + static_cast<std::int64_t>(steps.size()) / 2) /
           static_cast<std::int64_t>(steps.size());
  };
  m.num_kernels = mean_count(kernels);
  for (auto& [c, t] : m.categories) t.num_kernels = mean_count(t.num_kernels);
  for (auto& [op, t] : m.collectives) t.num_kernels = mean_count(t.num_kernels);
  return m;
}

StepBreakdown simulated_breakdown(const Simulation& sim, std::int64_t stage) {
  const workload::Iteration& it = sim.iteration;
  if (stage < 0 || stage >= static_cast<std::int64_t>(it.stage_device.size())) {
    throw InternalError("simulated_breakdown: no stage " + std::to_string(stage));
  }
  if (sim.extrapolated) {
    throw InternalError(
        "simulated_breakdown: the simulation was extrapolated from reduced micro-batch counts; "
        "expected one from report::SimulationMode::Full");
  }
  const engine::Graph& g = it.graph;
  const engine::DeviceId device = it.stage_device[static_cast<std::size_t>(stage)];
  std::vector<TimedKernel> kernels;
  for (const engine::StreamId s : g.device_streams(device)) {
    for (const engine::OpId op : g.stream_ops(s)) {
      const engine::OpTiming& t = sim.timeline.ops[static_cast<std::size_t>(op)];
      if (!(t.end > t.start)) continue;
      const workload::OpInfo& info = it.ops[static_cast<std::size_t>(g.op_tag(op))];
      TimedKernel k{.category = KernelCategory::MemoryBound,
                    .op = {},
                    .start = t.start.since_start(),
                    .end = t.end.since_start()};
      if (info.collective >= 0) {
        k.category = KernelCategory::Communication;
        const workload::CollectiveCall& call =
            it.collectives[static_cast<std::size_t>(info.collective)];
        k.op = call.op;
        k.count = call.calls_per_op;
      } else {
        k.category = category_of(info.kernel_kind);
      }
      kernels.push_back(std::move(k));
    }
  }
  // The report's iteration: the GPU work, then the stack's host time per step, idle GPUs
  // (report::derive). Without it the breakdown's iteration_time_s and idle_s disagreed with
  // the report it is printed beside.
  const Seconds iteration = sim.timeline.end.since_start() + sim.report.host_overhead;
  return breakdown(kernels, iteration, iteration, 0);
}

}  // namespace trainsim::report
