#include "trainsim/compute/kernel_cost.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

namespace trainsim::compute {
namespace {

// The tile sides cuBLAS's kernels use (the guide's §2.3 list: 256x128 and 128x256 down to
// 64x64); a GPU's candidates are those no larger in area than its largest tile.
constexpr std::array<std::int64_t, 3> kTileSides = {64, 128, 256};

// The head dimension at which attention's head-dimension factor is 1 (the profiles' maxima are
// quoted there: FlashAttention-2/3 benchmarks and our H200 measurements at head dim 128).
constexpr double kReferenceHeadDim = 128.0;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

double d(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

double gemm_efficiency(const hardware::GpuSpec& gpu, hardware::Dtype dtype, const GemmCall& call) {
  const hardware::GemmEfficiency& g = gpu.gemm;
  const double e_max = g.max_for(dtype);
  const double peak = gpu.peak_dense[static_cast<std::size_t>(dtype)].value();
  if (call.m <= 0 || call.n <= 0 || call.k <= 0 || call.batch <= 0 || gpu.sms <= 0 || peak <= 0.0) {
    return e_max;
  }
  const double sms = d(gpu.sms);
  // The fixed time of one tile (pipeline fill and epilogue): half_size K-steps of the largest
  // tile at the 16-bit rate, so the same time on every dtype and tile.
  const double peak16 =
      std::max(gpu.peak_dense[static_cast<std::size_t>(hardware::Dtype::Fp16)].value(),
               gpu.peak_dense[static_cast<std::size_t>(hardware::Dtype::Bf16)].value());
  const double largest = d(g.tile_m) * d(g.tile_n);
  const double t_fixed =
      peak16 > 0.0 ? g.half_size * 2.0 * largest / (peak16 / sms * g.max_efficiency) : 0.0;
  const double per_sm = peak / sms * e_max;  // FLOP/s of one SM in a tile's K loop
  double best = -1.0;
  for (const std::int64_t tm : kTileSides) {
    for (const std::int64_t tn : kTileSides) {
      if (d(tm) * d(tn) > largest) continue;
      const double reuse = d(tm) * d(tn) / d(tm + tn);
      const double e_tile = g.reuse_knee > 0.0 ? std::min(1.0, reuse / g.reuse_knee) : 1.0;
      const std::int64_t tiles = ceil_div(call.m, tm) * ceil_div(call.n, tn) * call.batch;
      const double waves = d(ceil_div(tiles, gpu.sms));
      const double t = waves * (2.0 * d(tm) * d(tn) * d(call.k) / (per_sm * e_tile) + t_fixed);
      if (best < 0.0 || t < best) best = t;
    }
  }
  if (best <= 0.0) return e_max;  // no candidate fits (a largest tile under 64x64)
  return 2.0 * d(call.m) * d(call.n) * d(call.k) * d(call.batch) / (peak * best);
}

double attention_efficiency(const hardware::AttentionEfficiency& a, const AttentionShape& shape) {
  double eff = a.max_efficiency;
  if (shape.head_dim > 0 && a.head_dim_half > 0.0) {
    const double hd = d(shape.head_dim);
    eff *=
        hd * (kReferenceHeadDim + a.head_dim_half) / (kReferenceHeadDim * (hd + a.head_dim_half));
  }
  if (shape.seq_len > 0 && a.half_size > 0.0) {
    double keys = shape.causal ? d(shape.seq_len) / 2.0 : d(shape.seq_len);
    if (shape.window > 0 && shape.window < shape.seq_len) {
      // Query i visits min(i + 1, w) keys (model/counts.hpp, attention_window_fraction).
      const double w = d(shape.window);
      const double s = d(shape.seq_len);
      keys = (w * (w + 1.0) / 2.0 + (s - w) * w) / s;
    }
    eff *= keys / (keys + a.half_size);
  }
  if (shape.backward) eff *= a.backward_ratio;
  return std::min(1.0, eff);
}

KernelCost kernel_cost(const hardware::GpuSpec& gpu, hardware::Dtype dtype,
                       const KernelWork& work) {
  if (work.flops.value() <= 0.0 && work.bytes.value() <= 0.0) return KernelCost{};
  const auto peak = gpu.peak_dense[static_cast<std::size_t>(dtype)];
  double eff = 0.0;
  Seconds math_time{};
  Flops work_flops = work.flops;
  if (work.kind != KernelClass::MemoryBound && work.flops.value() > 0.0) {
    if (work.kind == KernelClass::Attention) {
      // A kernel `speed` times as fast as the curve's runs as 1 / speed of the FLOPs. Its
      // matmuls run on the tensor cores the GEMMs use, so it cannot outrun the sustained GEMM
      // ceiling: FlashAttention-3, the fastest published kernel on Hopper, reaches 75% of the
      // H100's peak (Shah et al. 2024, arXiv:2407.08608, abstract) against the profile's 0.756
      // for GEMMs. Without the bound a stack's Hopper speed-up over FlashAttention-2 (1.82)
      // took the A100's FlashAttention-2 curve (0.73) to 1.33 of the peak.
      work_flops = work.flops / work.attention.speed;
      eff = std::min(attention_efficiency(gpu.attention, work.attention),
                     gpu.gemm.max_for(dtype) / work.attention.speed);
    } else if (work.gemms.empty()) {
      eff = gpu.gemm.max_for(dtype);
    } else {
      // Calls run one after another: their times add, so the kernel's efficiency is the
      // FLOP-weighted harmonic mean of theirs.
      double flops = 0.0;
      double weighted = 0.0;
      for (const GemmCall& c : work.gemms) {
        const double f = 2.0 * d(c.m) * d(c.n) * d(c.k) * d(c.batch);
        flops += f;
        weighted += f / gemm_efficiency(gpu, dtype, c);
      }
      eff = weighted > 0.0 ? flops / weighted : gpu.gemm.max_for(dtype);
    }
    math_time = work_flops / (peak * eff);
  }
  const Seconds memory_time = work.bytes / (gpu.hbm_bandwidth * gpu.memory_efficiency);
  const bool compute_bound = math_time > memory_time;
  return KernelCost{.time = max(math_time, memory_time) + gpu.kernel_launch_overhead,
                    .efficiency = compute_bound ? eff : 0.0,
                    .compute_bound = compute_bound};
}

}  // namespace trainsim::compute
