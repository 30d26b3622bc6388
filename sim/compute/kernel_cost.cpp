#include "trainsim/compute/kernel_cost.hpp"

namespace trainsim::compute {

double curve_efficiency(const hardware::EfficiencyCurve& curve, double size) {
  if (curve.half_size <= 0.0) return curve.max_efficiency;
  if (size <= 0.0) return curve.max_efficiency;  // unknown shape: assume large
  return curve.max_efficiency * size / (size + curve.half_size);
}

KernelCost kernel_cost(const hardware::GpuSpec& gpu, hardware::Dtype dtype,
                       const KernelWork& work) {
  if (work.flops.value() <= 0.0 && work.bytes.value() <= 0.0) return KernelCost{};
  const auto peak = gpu.peak_dense[static_cast<std::size_t>(dtype)];
  double eff = 0.0;
  Seconds math_time{};
  if (work.kind != KernelClass::MemoryBound && work.flops.value() > 0.0) {
    const auto& curve = work.kind == KernelClass::Gemm ? gpu.gemm : gpu.attention;
    eff = curve_efficiency(curve, static_cast<double>(work.size));
    math_time = work.flops / (peak * eff);
  }
  const Seconds memory_time = work.bytes / (gpu.hbm_bandwidth * gpu.memory_efficiency);
  const bool compute_bound = math_time > memory_time;
  return KernelCost{.time = max(math_time, memory_time) + gpu.kernel_launch_overhead,
                    .efficiency = compute_bound ? eff : 0.0,
                    .compute_bound = compute_bound};
}

}  // namespace trainsim::compute
