// fp8 training as Transformer Engine runs it: which kernels run at the FP8 rate (the linear
// layers) and which at the bf16 rate (attention core, LM head), the cast kernels each scaling
// recipe adds to an FP8 GEMM, and MFU against the FP8 and the bf16 peaks with mixed GEMMs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/compute/kernel_cost.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/simulate.hpp"
#include "trainsim/workload/iteration.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/scenario_loader.hpp"

#include "tests/build_iteration.hpp"

using namespace trainsim;

namespace {

// megatron-core with the given recipe and FP8 weight cache.
nlohmann::json megatron_core(const std::string& recipe, double weight_cache) {
  nlohmann::json j =
      nlohmann::json::parse(std::string(*io::builtin_file("stacks", "megatron-core")));
  j["fp8"]["recipe"] = recipe;
  j["fp8"]["weight_cache_bytes_per_param"] = weight_cache;
  return j;
}

// Two Llama-3-8B-shaped layers on one H100: hidden 4096, 32 heads and 8 KV heads of 128, SwiGLU
// 14336; by default micro-batch 2 of 4096 tokens (m = 8192 rows per GEMM), two micro-batches per
// step.
parallel::Scenario scenario(const std::string& precision, const std::string& recipe = "delayed",
                            double weight_cache = 0.0, const std::string& hardware = "h100-dgx",
                            std::int64_t seq_len = 4096, std::int64_t micro_batch = 2,
                            std::int64_t global_batch = 4) {
  io::ScenarioDocument doc;
  doc.source = "s.json";
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx",
    "model": {"layers": 2, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
              "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm",
              "tied_embeddings": false, "position_embedding": "rope"},
    "cluster": {"gpus": 1}})");
  doc.json["training"] = {{"seq_len", seq_len},
                          {"micro_batch", micro_batch},
                          {"global_batch", global_batch},
                          {"precision", precision}};
  doc.json["stack"] = megatron_core(recipe, weight_cache);
  doc.json["hardware"] = hardware;
  return io::scenario_from_document(doc);
}

workload::Iteration build(const parallel::Scenario& s) { return testing::build_iteration(s); }

// Duration of the first compute op named `name`.
double seconds(const workload::Iteration& it, const std::string& name) {
  for (engine::OpId op = 0; op < it.graph.num_ops(); ++op) {
    if (it.graph.op_kind(op) == engine::OpKind::Compute && it.graph.op_name(op) == name) {
      return it.graph.op_duration(op).value();
    }
  }
  FAIL("no compute op " << name);
  return 0.0;
}

}  // namespace

TEST_CASE("fp8: the attention core and the LM head run at the bf16 rate", "[workload][fp8]") {
  const auto bf16 = build(scenario("bf16"));
  const auto fp8 = build(scenario("fp8"));
  // Not Transformer Engine GEMMs: exactly the bf16 time under fp8.
  for (const char* name : {"attn_core", "attn_core_bwd", "lm_head", "lm_head_bwd", "attn_norm",
                           "mlp_act", "cross_entropy"}) {
    INFO(name);
    CHECK(seconds(fp8, name) == seconds(bf16, name));
  }
  // The linear layers run at the FP8 rate: with H100's FP8 peak twice its bf16 peak the
  // compute-bound GEMM takes well under its bf16 time even with its casts.
  for (const char* name : {"qkv_proj", "attn_out_proj", "mlp_up_gate", "mlp_down"}) {
    INFO(name);
    CHECK(seconds(fp8, name) < 0.8 * seconds(bf16, name));
  }
}

TEST_CASE("fp8: each recipe's cast kernels add their bytes to the FP8 GEMMs", "[workload][fp8]") {
  // qkv_proj: m = 2 x 4096 = 8192 tokens, k = 4096, n = (32 + 2 x 8) x 128 = 6144. Forward
  // casts the input (m k elements) and the weight (k n), backward the output gradient (m n).
  // Bytes per element (stack::fp8_cast_bytes_per_element): delayed 3, current 5, blockwise
  // 4.0625 (mxfp8's too, which runs on Blackwell only).
  // Each cast is memory-bound, bytes / (HBM bandwidth x memory efficiency) + launch overhead,
  // so between two recipes only the bytes term differs.
  const double m = 8192.0, k = 4096.0, n = 6144.0;
  const parallel::Scenario base = scenario("fp8", "delayed");
  const double hbm = base.hardware.gpu.hbm_bandwidth.value() * base.hardware.gpu.memory_efficiency;
  const auto delayed = build(base);
  const auto current = build(scenario("fp8", "current"));
  const auto blockwise = build(scenario("fp8", "blockwise"));
  CHECK(seconds(current, "qkv_proj") - seconds(delayed, "qkv_proj") ==
        Approx(2.0 * (m * k + k * n) / hbm).epsilon(1e-9));
  CHECK(seconds(current, "qkv_proj_bwd") - seconds(delayed, "qkv_proj_bwd") ==
        Approx(2.0 * m * n / hbm).epsilon(1e-9));
  CHECK(seconds(blockwise, "qkv_proj") - seconds(delayed, "qkv_proj") ==
        Approx(1.0625 * (m * k + k * n) / hbm).epsilon(1e-9));
  // With FP8 weight copies kept across the step (weight_cache_bytes_per_param 2) the weight is
  // cast once per step: its time spread over the 2 micro-batches.
  const auto cached_delayed = build(scenario("fp8", "delayed", 2.0));
  const auto cached_current = build(scenario("fp8", "current", 2.0));
  CHECK(seconds(cached_current, "qkv_proj") - seconds(cached_delayed, "qkv_proj") ==
        Approx(2.0 * (m * k + k * n / 2.0) / hbm).epsilon(1e-9));
  // The bf16-rate kernels pay no cast.
  CHECK(seconds(current, "lm_head") == seconds(delayed, "lm_head"));
  // mxfp8 runs on Blackwell only: on a B200 it adds the same 1.0625 B per element over delayed,
  // at the B200's memory rate.
  const parallel::Scenario b200 = scenario("fp8", "delayed", 0.0, "b200-dgx");
  const double hbm_b200 =
      b200.hardware.gpu.hbm_bandwidth.value() * b200.hardware.gpu.memory_efficiency;
  CHECK(seconds(build(scenario("fp8", "mxfp8", 0.0, "b200-dgx")), "qkv_proj") -
            seconds(build(b200), "qkv_proj") ==
        Approx(1.0625 * (m * k + k * n) / hbm_b200).epsilon(1e-9));
}

TEST_CASE("fp8: a memory-bound FP8 GEMM reads its operands' FP8 casts", "[workload][fp8]") {
  // mlp_up_gate at micro-batch 1 of 32 tokens: m = 32, k = 4096, n = 2 x 14336 = 28672. Its
  // forward reads the input (m k) and the weight (k n) and writes the output (m n); backward
  // (dgrad and wgrad, one kernel) reads the output gradient twice (m n each), the input and the
  // weight, and writes their gradients (m k + k n). Under fp8 the operands are read as their
  // FP8 casts (stack::fp8_operand_bytes_per_element: 1 byte under the per-tensor recipes,
  // 1 + 4/128 under blockwise) and the results written in 16 bits. Delayed: forward 119.4 MB,
  // 40.5 us at 3.35 TB/s x 0.88; backward 354.5 MB, 120.3 us; counted at 2 bytes each, as
  // before, 80.4 and 160.8 us, the bf16 GEMM's bytes. Both passes are memory-bound at 32 rows
  // (checked below against the math alone: 7.5 and 15.0 GFLOP at h100-dgx's FP8 rate, about 5
  // and 11 us at full tile efficiency).
  const double m = 32.0, k = 4096.0, n = 28672.0;
  for (const auto& [recipe, operand, cast] :
       {std::tuple{"delayed", 1.0, 3.0}, std::tuple{"blockwise", 1.0 + 4.0 / 128.0, 4.0625}}) {
    INFO(recipe);
    const parallel::Scenario s = scenario("fp8", recipe, 0.0, "h100-dgx", 32, 1, 1);
    const double hbm = s.hardware.gpu.hbm_bandwidth.value() * s.hardware.gpu.memory_efficiency;
    const double launch = s.hardware.gpu.kernel_launch_overhead.value();
    REQUIRE(s.stack.kernel_dispatch.value() == 0.0);
    const auto it = build(s);
    // The math alone of each pass (compute::kernel_cost with no bytes): below the bytes' time.
    const auto i = [](double v) { return static_cast<std::int64_t>(v); };
    const auto math = [&](double flops, std::vector<compute::GemmCall> gemms) {
      const compute::KernelWork w{.kind = compute::KernelClass::Gemm,
                                  .flops = Flops(flops),
                                  .bytes = Bytes(0.0),
                                  .gemms = std::move(gemms),
                                  .attention = {}};
      return compute::kernel_cost(s.hardware.gpu, hardware::Dtype::Fp8, w).time.value() - launch;
    };
    const double gemm_fwd = (operand * (m * k + k * n) + 2.0 * m * n) / hbm;
    const double gemm_bwd = (operand * (2.0 * m * n + m * k + k * n) + 2.0 * (m * k + k * n)) / hbm;
    REQUIRE(math(2.0 * m * n * k, {{.m = i(m), .n = i(n), .k = i(k)}}) < gemm_fwd);
    REQUIRE(math(4.0 * m * n * k, {{.m = i(m), .n = i(k), .k = i(n)},
                                   {.m = i(k), .n = i(n), .k = i(m)}}) < gemm_bwd);
    // Forward: the GEMM, then the casts of the input and the weight: three kernels, three
    // launches. Backward: the GEMMs, then the cast of the output gradient.
    CHECK(seconds(it, "mlp_up_gate") ==
          Approx(gemm_fwd + cast * (m * k + k * n) / hbm + 3.0 * launch).epsilon(1e-9));
    CHECK(seconds(it, "mlp_up_gate_bwd") ==
          Approx(gemm_bwd + cast * m * n / hbm + 2.0 * launch).epsilon(1e-9));
  }
}

TEST_CASE("fp8: MFU against the FP8 and the bf16 peaks with mixed GEMMs", "[report][fp8]") {
  // Both count model FLOPs over the iteration time: mfu_bf16 / mfu = FP8 peak / bf16 peak
  // (H100: 2), whichever rate each kernel ran at.
  const report::Report bf16 = report::simulate(scenario("bf16")).report;
  const report::Report fp8 = report::simulate(scenario("fp8")).report;
  const parallel::Scenario s = scenario("fp8");
  const double ratio = s.hardware.peak(hardware::Dtype::Fp8).value() /
                       s.hardware.peak(hardware::Dtype::Bf16).value();
  CHECK(fp8.mfu_bf16 / fp8.mfu == Approx(ratio).epsilon(1e-12));
  CHECK(bf16.mfu_bf16 == bf16.mfu);
  CHECK(fp8.mfu ==
        Approx(fp8.model_flops_per_gpu.value() / s.hardware.peak(hardware::Dtype::Fp8).value())
            .epsilon(1e-12));
  // fp8 is faster (mfu_bf16 above the bf16 run's), but with attention, the LM head and the
  // memory-bound kernels at bf16 speed and the casts on top, it is less than twice as fast:
  // its mfu (against the doubled peak) is below the bf16 run's.
  CHECK(fp8.mfu_bf16 > bf16.mfu_bf16);
  CHECK(fp8.mfu < bf16.mfu);
}

TEST_CASE("fp8: a profile without a bf16 peak runs the bf16 kernels at its fp16 rate",
          "[workload][fp8]") {
  // h100-dgx's bf16 and fp16 peaks are equal (989 TFLOP/s dense); with the bf16 peak set to 0,
  // the attention core, the LM head and the casts of an fp8 run were priced at an infinite time
  // and the engine refused the op ('internal error: ... duration inf s'). At the fp16 rate the
  // iteration is the profile's own.
  nlohmann::json hw =
      nlohmann::json::parse(std::string(*io::builtin_file("hardware_profiles", "h100-dgx")));
  hw["id"] = "h100-no-bf16";
  hw["gpu"]["peak_dense"]["bf16"] = "0 TFLOP/s";
  const parallel::Scenario with = scenario("fp8");
  io::ScenarioDocument doc;
  doc.source = "s.json";
  doc.json = nlohmann::json::parse(R"({
    "model": {"layers": 2, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
              "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm",
              "tied_embeddings": false, "position_embedding": "rope"},
    "cluster": {"gpus": 1},
    "training": {"seq_len": 4096, "micro_batch": 2, "global_batch": 4, "precision": "fp8"}})");
  doc.json["hardware"] = hw;
  doc.json["stack"] = megatron_core("delayed", 0.0);
  const report::Report r = report::simulate(io::scenario_from_document(doc)).report;
  REQUIRE(std::isfinite(r.iteration_time.value()));
  CHECK(r.iteration_time.value() ==
        Approx(report::simulate(with).report.iteration_time.value()).epsilon(1e-12));
}
