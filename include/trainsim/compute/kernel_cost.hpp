// Time of one GPU kernel from its work: a roofline with fitted efficiency curves. The workload
// builder describes each kernel (FLOPs, bytes moved, shape); this prices it on one GPU.
#pragma once

#include <cstdint>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/units.hpp"

namespace trainsim::compute {

enum class KernelClass {
  Gemm,         // cuBLAS matrix multiply; efficiency from the GEMM curve of its smallest side
  Attention,    // fused flash attention; efficiency from the attention curve of the sequence
  MemoryBound,  // norms, activations, residuals, optimizer: HBM streaming
};

struct KernelWork {
  KernelClass kind = KernelClass::Gemm;
  Flops flops;              // floating-point operations the kernel executes
  Bytes bytes;              // bytes read plus written in HBM
  std::int64_t size = 0;    // GEMM: smallest of M, N, K; attention: sequence length per rank
};

struct KernelCost {
  Seconds time;             // launch overhead included
  double efficiency = 0.0;  // achieved fraction of peak FLOP/s (0 for memory-bound kernels)
  bool compute_bound = false;
};

// Roofline (Williams, Waterman and Patterson, CACM 2009) with size-dependent efficiency:
//   time = max(flops / (peak(dtype) * eff(size)), bytes / (hbm_bandwidth * memory_efficiency))
//          + kernel_launch_overhead,
// eff from the GPU's GEMM or attention EfficiencyCurve. A kernel with no work costs nothing.
// Requires: the GPU has a nonzero peak for `dtype` when the kernel has FLOPs (validate checks).
[[nodiscard]] KernelCost kernel_cost(const hardware::GpuSpec& gpu, hardware::Dtype dtype,
                                     const KernelWork& work);

// eff(x) = max_efficiency * x / (x + half_size); flat when half_size is 0.
[[nodiscard]] double curve_efficiency(const hardware::EfficiencyCurve& curve, double size);

}  // namespace trainsim::compute
