#include "trainsim/compute/kernel_cost.hpp"

#include <catch2/catch.hpp>

using namespace trainsim;
using namespace trainsim::literals;
using namespace trainsim::compute;
using hardware::Dtype;

namespace {

constexpr auto kBf16 = static_cast<std::size_t>(Dtype::Bf16);
constexpr auto kFp8 = static_cast<std::size_t>(Dtype::Fp8);

// A GPU with round numbers so the arithmetic is easy to follow: 100 SMs, 1000 TFLOP/s bf16
// (10 TFLOP/s per SM), 2000 TFLOP/s fp8, K loop at 0.8 of peak. The largest tile is 64x64, so
// 64x64 is the only candidate: one tile shape, and the formulas reduce to the guide's.
hardware::GpuSpec gpu() {
  hardware::GpuSpec g;
  g.sms = 100;
  g.peak_dense[kBf16] = tflop_per_s(1000);
  g.peak_dense[kFp8] = tflop_per_s(2000);
  g.hbm_bandwidth = BytesPerSecond(4e12);
  g.memory_efficiency = 0.8;
  g.gemm.max_efficiency = 0.8;
  g.gemm.tile_m = 64;
  g.gemm.tile_n = 64;
  g.gemm.half_size = 0.0;
  g.gemm.reuse_knee = 0.0;
  g.attention =
      hardware::AttentionEfficiency{.max_efficiency = 0.5, .half_size = 0.0, .head_dim_half = 0.0};
  g.kernel_launch_overhead = 4_us;
  return g;
}

double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

}  // namespace

TEST_CASE("kernel_cost: wave quantization, one tile more than SMs takes a second wave",
          "[compute]") {
  const auto g = gpu();
  // 6400 x 64 output in 64x64 tiles: 100 tiles on 100 SMs, one full wave: eff = 0.8.
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 6400, .n = 64, .k = 4096}) ==
          Approx(0.8).epsilon(1e-12));
  // 6464 x 64: 101 tiles, two waves, the second with one tile: tiles / (waves * SMs) =
  // 101 / 200, so eff = 0.8 * 101 / 200 = 0.404, about half.
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 6464, .n = 64, .k = 4096}) ==
          Approx(0.8 * 101.0 / 200.0).epsilon(1e-12));
  // Tile quantization: 6401 x 64 also needs 101 tiles (ceil(6401 / 64) = 101) but does only
  // 6401 / 6464 of their work: eff = 0.8 * (6401 * 64) / (200 * 64 * 64) = 0.8 * 6401 / 12800.
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 6401, .n = 64, .k = 4096}) ==
          Approx(0.8 * 6401.0 / 12800.0).epsilon(1e-12));
}

TEST_CASE("kernel_cost: a batched GEMM multiplies the tiles", "[compute]") {
  const auto g = gpu();
  // 3200 x 64, batch 2: 50 tiles per batch, 100 in all: one full wave, eff = 0.8, the same as
  // one 6400 x 64 call; batch 3 makes 150 tiles in two waves: 0.8 * 150 / 200 = 0.6.
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 3200, .n = 64, .k = 512, .batch = 2}) ==
          Approx(0.8).epsilon(1e-12));
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 3200, .n = 64, .k = 512, .batch = 3}) ==
          Approx(0.6).epsilon(1e-12));
}

TEST_CASE("kernel_cost: a fixed time per tile saturates the efficiency in K", "[compute]") {
  auto g = gpu();
  g.gemm.half_size = 128.0;
  // One full wave of 64x64 tiles. A tile's K loop takes 2*64*64*K / (10e12 * 0.8) and its fixed
  // time is that of 128 K-steps at the 16-bit rate, so eff = 0.8 * K / (K + 128):
  // K = 128 gives 0.4, K = 1024 gives 0.8 * 1024 / 1152.
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 6400, .n = 64, .k = 128}) ==
          Approx(0.4).epsilon(1e-12));
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 6400, .n = 64, .k = 1024}) ==
          Approx(0.8 * 1024.0 / 1152.0).epsilon(1e-12));
  SECTION("the fixed time covers twice the K at twice the rate") {
    // fp8 at 2000 TFLOP/s: the same fixed time is 256 fp8 K-steps, eff = 0.8 * K / (K + 256).
    REQUIRE(gemm_efficiency(g, Dtype::Fp8, GemmCall{.m = 6400, .n = 64, .k = 256}) ==
            Approx(0.4).epsilon(1e-12));
  }
  SECTION("a dtype's own maximum") {
    // fp8 at 0.7: the fixed time is still 128 bf16 K-steps at 0.8, i.e. 2 * 128 * 0.7 / 0.8 =
    // 224 fp8 K-steps at 0.7: eff = 0.7 * 224 / (224 + 224) = 0.35.
    g.gemm.max_efficiency_by_dtype[kFp8] = 0.7;
    REQUIRE(gemm_efficiency(g, Dtype::Fp8, GemmCall{.m = 6400, .n = 64, .k = 224}) ==
            Approx(0.35).epsilon(1e-12));
    REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 6400, .n = 64, .k = 128}) ==
            Approx(0.4).epsilon(1e-12));
  }
}

TEST_CASE("kernel_cost: the fastest tile is chosen; small tiles reuse less", "[compute]") {
  auto g = gpu();
  g.gemm.tile_m = 128;
  g.gemm.tile_n = 128;
  g.gemm.reuse_knee = 64.0;  // the reuse of a 128x128 tile (128*128/256): it runs at the maximum
  // 640 x 640 on 100 SMs. 128x128: 25 tiles in one wave, 640^2 / (100 * 128^2) = 0.25 of the
  // GPU. 64x128 and 128x64 (reuse 42.67, e_tile 2/3): 50 tiles, 0.5 of it: 1/3. 64x64 (reuse 32,
  // e_tile 0.5): 100 tiles, a full wave: 0.5. The best is 64x64: eff = 0.8 * 0.5 = 0.4.
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 640, .n = 640, .k = 1024}) ==
          Approx(0.4).epsilon(1e-12));
  // 1280 x 1280: 128x128 makes 100 tiles, a full wave at e_tile 1: eff = 0.8.
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 1280, .n = 1280, .k = 1024}) ==
          Approx(0.8).epsilon(1e-12));
  SECTION("more candidates never make a GEMM slower") {
    auto one_tile = g;
    one_tile.gemm.tile_m = 64;
    one_tile.gemm.tile_n = 64;
    for (const std::int64_t m : {64, 640, 1000, 1280, 4096}) {
      const GemmCall c{.m = m, .n = 1280, .k = 512};
      REQUIRE(gemm_efficiency(g, Dtype::Bf16, c) >= gemm_efficiency(one_tile, Dtype::Bf16, c));
    }
  }
}

TEST_CASE("kernel_cost: GEMM efficiency stays within the maximum; time grows with K", "[compute]") {
  auto g = gpu();
  g.gemm.tile_m = 256;
  g.gemm.tile_n = 128;
  g.gemm.half_size = 200.0;
  g.gemm.reuse_knee = 60.0;
  double previous = 0.0;
  for (const std::int64_t k : {16, 64, 256, 1024, 4096, 16384}) {
    const GemmCall c{.m = 3000, .n = 5000, .k = k};
    const double eff = gemm_efficiency(g, Dtype::Bf16, c);
    REQUIRE(eff > 0.0);
    REQUIRE(eff <= 0.8);
    const double time = gemm_flops(c.m, c.n, c.k) / (1e15 * eff);
    REQUIRE(time > previous);
    previous = time;
  }
  // An unknown shape (a zero side) or no SM count: the K-loop maximum.
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{}) == Approx(0.8).epsilon(1e-12));
  g.sms = 0;
  REQUIRE(gemm_efficiency(g, Dtype::Bf16, GemmCall{.m = 64, .n = 64, .k = 64}) ==
          Approx(0.8).epsilon(1e-12));
}

TEST_CASE("kernel_cost: a GEMM kernel is priced from its calls", "[compute]") {
  const auto g = gpu();
  // Forward 6400 x 64 x 4096 (eff 0.8) and a 6464 x 64 x 4096 call (eff 0.404) back to back:
  // their times add, 2*6400*64*4096 / (1e15 * 0.8) + 2*6464*64*4096 / (1e15 * 0.404).
  const double f1 = gemm_flops(6400, 64, 4096);
  const double f2 = gemm_flops(6464, 64, 4096);
  const KernelWork w{.kind = KernelClass::Gemm,
                     .flops = Flops(f1 + f2),
                     .bytes = 1_MB,
                     .gemms = {{.m = 6400, .n = 64, .k = 4096}, {.m = 6464, .n = 64, .k = 4096}},
                     .attention = {}};
  const KernelCost c = kernel_cost(g, Dtype::Bf16, w);
  const double math = f1 / (1e15 * 0.8) + f2 / (1e15 * 0.404);
  REQUIRE(c.compute_bound);
  REQUIRE(c.efficiency == Approx((f1 + f2) / (1e15 * math)).epsilon(1e-12));
  REQUIRE(c.time.value() == Approx(math + 4e-6).epsilon(1e-12));
  // No shape: the maximum, 0.8.
  const KernelWork unknown{
      .kind = KernelClass::Gemm, .flops = Flops(1e12), .bytes = 1_MB, .gemms = {}, .attention = {}};
  REQUIRE(kernel_cost(g, Dtype::Bf16, unknown).efficiency == Approx(0.8).epsilon(1e-12));
}

TEST_CASE("kernel_cost: attention saturates in the keys per query block", "[compute]") {
  const hardware::AttentionEfficiency a{
      .max_efficiency = 0.6, .half_size = 512.0, .head_dim_half = 0.0};
  // Non-causal: L = s. s = 512: 0.6 * 512 / 1024 = 0.3; s = 4096: 0.6 * 4096 / 4608.
  REQUIRE(attention_efficiency(a, {.seq_len = 512, .head_dim = 128, .causal = false}) ==
          Approx(0.3).epsilon(1e-12));
  REQUIRE(attention_efficiency(a, {.seq_len = 4096, .head_dim = 128, .causal = false}) ==
          Approx(0.6 * 4096.0 / 4608.0).epsilon(1e-12));
  SECTION("the causal kernel visits half the keys per query block") {
    // Causal s = 1024: L = 512, the same 0.3 as non-causal s = 512; causal is always slower.
    REQUIRE(attention_efficiency(a, {.seq_len = 1024, .head_dim = 128, .causal = true}) ==
            Approx(0.3).epsilon(1e-12));
    for (const std::int64_t s : {256, 1024, 8192, 65536}) {
      REQUIRE(attention_efficiency(a, {.seq_len = s, .head_dim = 128, .causal = true}) <
              attention_efficiency(a, {.seq_len = s, .head_dim = 128, .causal = false}));
    }
  }
  SECTION("longer sequences are never slower per FLOP") {
    double previous = 0.0;
    for (const std::int64_t s : {128, 512, 2048, 8192, 32768}) {
      const double e = attention_efficiency(a, {.seq_len = s, .head_dim = 64, .causal = true});
      REQUIRE(e > previous);
      previous = e;
    }
  }
}

TEST_CASE("kernel_cost: attention is faster per FLOP at a larger head dimension", "[compute]") {
  const hardware::AttentionEfficiency a{
      .max_efficiency = 0.6, .half_size = 0.0, .head_dim_half = 64.0};
  // h(d) = d (128 + 64) / (128 (d + 64)): h(128) = 1, h(64) = 64 * 192 / (128 * 128) = 0.75,
  // h(256) = 256 * 192 / (128 * 320) = 1.2.
  REQUIRE(attention_efficiency(a, {.seq_len = 4096, .head_dim = 128, .causal = false}) ==
          Approx(0.6).epsilon(1e-12));
  REQUIRE(attention_efficiency(a, {.seq_len = 4096, .head_dim = 64, .causal = false}) ==
          Approx(0.45).epsilon(1e-12));
  REQUIRE(attention_efficiency(a, {.seq_len = 4096, .head_dim = 256, .causal = false}) ==
          Approx(0.72).epsilon(1e-12));
  // Never above 1: 0.9 * 1.2 = 1.08 is held at 1.
  const hardware::AttentionEfficiency high{
      .max_efficiency = 0.9, .half_size = 0.0, .head_dim_half = 64.0};
  REQUIRE(attention_efficiency(high, {.seq_len = 4096, .head_dim = 256, .causal = false}) ==
          Approx(1.0).epsilon(1e-12));
}

TEST_CASE("kernel_cost: a faster attention kernel runs no faster than the GEMM ceiling",
          "[compute]") {
  // The test GPU: 1000 TFLOP/s bf16, attention curve flat at 0.5, GEMM ceiling 0.8.
  // 1 PFLOP of attention (1 TB moved, 0.3125 s at 3.2 TB/s, so compute-bound throughout):
  const auto attention = [](double speed) {
    KernelWork w{.kind = KernelClass::Attention,
                 .flops = Flops(1e15),
                 .bytes = 1_GB,
                 .gemms = {},
                 .attention = {.seq_len = 4096, .head_dim = 128}};
    w.attention.speed = speed;
    return kernel_cost(gpu(), Dtype::Bf16, w).time.value();
  };
  // speed 1: 1e15 / (1e15 * 0.5) = 2 s; speed 1.5: 0.5 * 1.5 = 0.75 of peak, under the
  // ceiling, 1 / 0.75 = 1.333 s.
  CHECK(attention(1.0) == Approx(2.0 + 4e-6).epsilon(1e-12));
  CHECK(attention(1.5) == Approx(1.0 / 0.75 + 4e-6).epsilon(1e-12));
  // speed 2: 0.5 * 2 = 1.0 of peak, held at the GEMM ceiling 0.8: 1 / 0.8 = 1.25 s, as any
  // faster kernel (a Hopper speed-up over FlashAttention-2 on an A100 curve took it to 1.33).
  CHECK(attention(2.0) == Approx(1.25 + 4e-6).epsilon(1e-12));
  CHECK(attention(4.0) == Approx(1.25 + 4e-6).epsilon(1e-12));
}

TEST_CASE("kernel_cost: a memory-bound kernel streams at HBM bandwidth", "[compute]") {
  // 1 GB moved at 4 TB/s * 0.8 = 3.2 TB/s: 312.5 us, plus 4 us launch.
  const KernelCost c = kernel_cost(gpu(), Dtype::Bf16,
                                   KernelWork{.kind = KernelClass::MemoryBound,
                                              .flops = Flops(1e9),
                                              .bytes = 1_GB,
                                              .gemms = {},
                                              .attention = {}});
  REQUIRE_FALSE(c.compute_bound);
  REQUIRE(c.time.value() == Approx(1e9 / 3.2e12 + 4e-6).epsilon(1e-12));
}

TEST_CASE("kernel_cost: more FLOP/s or bandwidth is never slower; no work costs nothing",
          "[compute]") {
  const KernelWork w{.kind = KernelClass::Gemm,
                     .flops = Flops(gemm_flops(512, 1024, 1024)),
                     .bytes = 1_GB,
                     .gemms = {{.m = 512, .n = 1024, .k = 1024}},
                     .attention = {}};
  auto faster = gpu();
  faster.peak_dense[kBf16] = tflop_per_s(2000);
  faster.hbm_bandwidth = BytesPerSecond(8e12);
  REQUIRE(kernel_cost(faster, Dtype::Bf16, w).time <= kernel_cost(gpu(), Dtype::Bf16, w).time);
  REQUIRE(kernel_cost(gpu(), Dtype::Bf16, KernelWork{}).time.value() == 0.0);
}
