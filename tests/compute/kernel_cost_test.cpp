#include <catch2/catch.hpp>

#include "trainsim/compute/kernel_cost.hpp"

using namespace trainsim;
using namespace trainsim::literals;
using namespace trainsim::compute;

namespace {

// An H100-like GPU with round numbers so the arithmetic is easy to follow.
hardware::GpuSpec gpu() {
  hardware::GpuSpec g;
  g.peak_dense[static_cast<std::size_t>(hardware::Dtype::Bf16)] = tflop_per_s(1000);
  g.hbm_bandwidth = BytesPerSecond(4e12);
  g.memory_efficiency = 0.8;
  g.gemm = hardware::EfficiencyCurve{.max_efficiency = 0.8, .half_size = 256};
  g.attention = hardware::EfficiencyCurve{.max_efficiency = 0.5, .half_size = 0};
  g.kernel_launch_overhead = 4_us;
  return g;
}

}  // namespace

TEST_CASE("kernel_cost: a large GEMM is compute bound at the curve's efficiency", "[compute]") {
  // 4096^3 GEMM: 2 * 4096^3 = 1.374e11 FLOP; eff = 0.8 * 4096 / (4096 + 256) = 0.752941;
  // time = 1.374e11 / (1e15 * 0.752941) + 4 us = 182.5 us + 4 us.
  const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
  const KernelCost c = kernel_cost(
      gpu(), hardware::Dtype::Bf16,
      KernelWork{.kind = KernelClass::Gemm, .flops = Flops(flops), .bytes = Bytes(3 * 2 * 4096.0 * 4096.0), .size = 4096});
  const double eff = 0.8 * 4096.0 / (4096.0 + 256.0);
  REQUIRE(c.compute_bound);
  REQUIRE(c.efficiency == Approx(eff).epsilon(1e-12));
  REQUIRE(c.time.value() == Approx(flops / (1e15 * eff) + 4e-6).epsilon(1e-12));
}

TEST_CASE("kernel_cost: skinny GEMMs run at lower efficiency", "[compute]") {
  const auto g = gpu();
  REQUIRE(curve_efficiency(g.gemm, 64) < curve_efficiency(g.gemm, 1024));
  // Half the maximum at half_size: 0.8 * 256 / 512 = 0.4.
  REQUIRE(curve_efficiency(g.gemm, 256) == Approx(0.4).epsilon(1e-12));
}

TEST_CASE("kernel_cost: a memory-bound kernel streams at HBM bandwidth", "[compute]") {
  // 1 GB moved at 4 TB/s * 0.8 = 3.2 TB/s: 312.5 us, plus 4 us launch.
  const KernelCost c = kernel_cost(
      gpu(), hardware::Dtype::Bf16,
      KernelWork{.kind = KernelClass::MemoryBound, .flops = Flops(1e9), .bytes = 1_GB, .size = 0});
  REQUIRE_FALSE(c.compute_bound);
  REQUIRE(c.time.value() == Approx(1e9 / 3.2e12 + 4e-6).epsilon(1e-12));
}

TEST_CASE("kernel_cost: more FLOP/s or bandwidth is never slower; no work costs nothing",
          "[compute]") {
  const KernelWork w{.kind = KernelClass::Gemm, .flops = Flops(1e12), .bytes = 1_GB, .size = 512};
  auto faster = gpu();
  faster.peak_dense[static_cast<std::size_t>(hardware::Dtype::Bf16)] = tflop_per_s(2000);
  faster.hbm_bandwidth = BytesPerSecond(8e12);
  REQUIRE(kernel_cost(faster, hardware::Dtype::Bf16, w).time <=
          kernel_cost(gpu(), hardware::Dtype::Bf16, w).time);
  REQUIRE(kernel_cost(gpu(), hardware::Dtype::Bf16, KernelWork{}).time.value() == 0.0);
}
