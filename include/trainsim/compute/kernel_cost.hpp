// Time of one GPU kernel from its work: a roofline whose compute side depends on the kernel's
// shape. The workload builder describes each kernel (FLOPs, bytes moved, GEMM shapes, attention
// sequence and head dimension); this prices it on one GPU. docs/compute-model.md has the
// formulas, their sources, the fitted values and what is left out.
#pragma once

#include <cstdint>
#include <vector>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/units.hpp"

namespace trainsim::compute {

enum class KernelClass {
  Gemm,         // cuBLAS matrix multiplies; efficiency from their shapes (gemm_efficiency)
  Attention,    // fused flash attention; efficiency from its shape (attention_efficiency)
  MemoryBound,  // norms, activations, residuals, optimizer: HBM streaming
};

// One GEMM call: C[m x n] = A[m x k] B[k x n], `batch` times (a strided-batched call runs the
// batches' tiles together).
struct GemmCall {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
};

// The shape of a fused attention call.
struct AttentionShape {
  std::int64_t seq_len = 0;   // query (and key) length per call on this rank; 0: unknown
  std::int64_t head_dim = 0;  // 0: unknown
  // The kernel skips the masked blocks, so a query block visits half the keys on average. The
  // kernel's FLOPs (KernelWork::flops) already count only the executed half.
  bool causal = false;
  bool backward = false;  // the backward kernel: AttentionEfficiency::backward_ratio applies
  // Sliding window of the model (0: none): a query block visits at most the window's keys.
  std::int64_t window = 0;
  // How many times as fast as the profile's attention curve the kernel runs (a stack's
  // attention_speed over the curve's kernel's, AttentionEfficiency::speed_over_flash2): its
  // time is that of 1 / speed the FLOPs, at most as fast as the GPU's sustained GEMMs.
  double speed = 1.0;
};

struct KernelWork {
  KernelClass kind = KernelClass::Gemm;
  Flops flops;  // floating-point operations the kernel executes
  Bytes bytes;  // bytes read plus written in HBM
  // Gemm: the calls the kernel runs back to back (forward: one; backward: dgrad and wgrad).
  // Empty: shape unknown, the K-loop maximum applies.
  std::vector<GemmCall> gemms;
  AttentionShape attention;  // Attention only
};

struct KernelCost {
  Seconds time;             // launch overhead included
  // Achieved fraction of peak FLOP/s (0 for memory-bound kernels); for attention, of the FLOPs
  // the profile's curve counts, before AttentionShape::speed divides them.
  double efficiency = 0.0;
  bool compute_bound = false;
};

// Roofline (Williams, Waterman and Patterson, CACM 2009) with shape-dependent efficiency:
//   time = max(flops / (peak(dtype) * eff), bytes / (hbm_bandwidth * memory_efficiency))
//          + kernel_launch_overhead,
// eff = gemm_efficiency over the calls (FLOP-weighted harmonic mean: their times add) or
// attention_efficiency. A kernel with no work costs nothing.
// Requires: the GPU has a nonzero peak for `dtype` when the kernel has FLOPs (validate checks).
[[nodiscard]] KernelCost kernel_cost(const hardware::GpuSpec& gpu, hardware::Dtype dtype,
                                     const KernelWork& work);

// Achieved fraction of peak(dtype) of one GEMM call, from the tiling of its output (NVIDIA,
// "Matrix Multiplication Background User's Guide", DU-09799-001 v001, Feb 2023: §3.1 tile and
// §3.2 wave quantization; §2.3 "larger tiles have more data reuse ... more efficient than
// smaller tiles", and cuBLAS picks among tiles per call). For each candidate tile tm x tn:
//   tiles = ceil(m / tm) * ceil(n / tn) * batch,  waves = ceil(tiles / sms)
//   t     = waves * (2 tm tn k / (peak / sms * e_max(dtype) * e_tile) + t_fixed)
//   e_tile = min(1, (tm tn / (tm + tn)) / reuse_knee),  t_fixed from GemmEfficiency::half_size
// and eff = 2 m n k batch / (peak * min over tiles of t). For one tile and k >> half_size this is
// e_max * (m n) / (waves * sms * tm * tn) * k / (k + k_half): the guide's quantization times a
// saturation in K. Returns e_max(dtype) for an unknown shape (a zero side) or sms == 0.
[[nodiscard]] double gemm_efficiency(const hardware::GpuSpec& gpu, hardware::Dtype dtype,
                                     const GemmCall& call);

// Achieved fraction of peak of a fused attention call (FlashAttention-2, Dao 2023, §3.1-3.2:
// one thread block per query block, looping over key blocks, half of them when causal):
//   eff = min(1, max_efficiency * h(d) * L / (L + half_size)),  L = s (or s / 2 when causal;
//   with a window w < s, the mean keys per query (w (w + 1) / 2 + (s - w) w) / s)
//   h(d) = d (128 + head_dim_half) / (128 (d + head_dim_half))
// L / (L + half_size): the fixed work per query block (load Q, rescale and write O) amortized
// over the key blocks it visits. h(d): a score element costs 4d tensor-core FLOPs plus a fixed
// softmax cost on the slower exponential units (Shah et al. 2024, FlashAttention-3, §3: exp
// throughput is far below matmul throughput), normalized to 1 at head dimension 128.
// An unknown sequence length or head dimension (0) drops its factor.
[[nodiscard]] double attention_efficiency(const hardware::AttentionEfficiency& a,
                                          const AttentionShape& shape);

}  // namespace trainsim::compute
