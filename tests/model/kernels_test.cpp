#include "trainsim/model/kernels.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/compute/kernel_cost.hpp"
#include "trainsim/model/counts.hpp"

#include "sim/io/model_loader.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

const KernelSpec& find(const std::vector<KernelSpec>& ks, const std::string& name) {
  const auto it =
      std::find_if(ks.begin(), ks.end(), [&](const KernelSpec& k) { return k.name == name; });
  REQUIRE(it != ks.end());
  return *it;
}

// The worked example's micro-batch (docs/sources.md W.1): 2 sequences of 4096 tokens on one rank.
LayerShape paper_shape() { return LayerShape{.micro_batch = 2, .seq_len = 4096}; }

}  // namespace

TEST_CASE("kernels: a llama layer has the expected kernels in forward order", "[model]") {
  const auto ks = layer_kernels(io::load_model("llama2-7b"), paper_shape());
  std::vector<std::string> names;
  for (const auto& k : ks) names.push_back(k.name);
  REQUIRE(names == std::vector<std::string>{"attn_norm", "qkv_proj", "rope", "attn_core",
                                            "attn_out_proj", "attn_residual_add", "mlp_norm",
                                            "mlp_up_gate", "mlp_act", "mlp_down",
                                            "mlp_residual_add"});
  const auto gpt = layer_kernels(io::load_model("gpt3-175b"), paper_shape());
  REQUIRE(std::none_of(gpt.begin(), gpt.end(), [](const auto& k) { return k.name == "rope"; }));
  REQUIRE(find(gpt, "mlp_up").gemm.n == 49152);
}

TEST_CASE("kernels: GEMM and attention FLOPs sum to the model FLOPs", "[model]") {
  const auto m = io::load_model("llama2-7b");
  auto shape = paper_shape();
  shape.causal = false;  // the model-FLOPs convention: no causal discount
  const auto layer = layer_kernels(m, shape);
  const auto head = head_kernels(m, shape);
  const double tokens = 2.0 * 4096.0;

  SECTION("one layer forward = the worked example's 3.865e12 per iteration") {
    // (2 (4h^2 + 3 h ffn) + 4 h s) per token = 2 * 202,375,168 + 4 * 4096 * 4096
    // = 404,750,336 + 67,108,864 = 471,859,200; x 8192 tokens = 3,865,470,566,400.
    double matmul = 0.0;
    for (const auto& k : layer) {
      if (k.kind != KernelKind::MemoryBound) matmul += k.forward_flops.value();
    }
    REQUIRE(matmul == Approx(471'859'200.0 * tokens).epsilon(1e-12));
  }
  SECTION("forward + backward = 3x forward for the model-FLOPs kernels") {
    // Model FLOPs per token = 6N + 12 L h s, N = matmul weights + norm weights + LM head.
    // The GEMMs and attention give 2 (L * matmul weights + V h) + 4 L h s per token forward;
    // times 3 that is the model FLOPs less 6 * (L * 2h + h) for the RMSNorm weights, which are
    // in N but are no matmul.
    double forward = 0.0;
    for (const auto& k : layer) {
      if (k.kind != KernelKind::MemoryBound) forward += k.forward_flops.value();
    }
    forward *= static_cast<double>(m.num_layers);
    forward += find(head, "lm_head").forward_flops.value();
    const double norms = 6.0 * (32.0 * 2.0 * 4096.0 + 4096.0);
    REQUIRE(3.0 * forward ==
            Approx((model_flops_per_token(m, 4096).value() - norms) * tokens).epsilon(1e-12));
  }
  SECTION("backward: GEMMs 2x forward, flash attention 2.5x") {
    for (const auto& k : layer) {
      CAPTURE(k.name);
      if (k.kind == KernelKind::Gemm) {
        REQUIRE(k.backward_flops.value() == Approx(2.0 * k.forward_flops.value()).epsilon(1e-12));
      } else if (k.kind == KernelKind::Attention) {
        REQUIRE(k.backward_flops.value() == Approx(2.5 * k.forward_flops.value()).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("kernels: the causal discount halves the attention core only", "[model]") {
  const auto m = io::load_model("llama2-7b");
  auto full_shape = paper_shape();
  full_shape.causal = false;
  const auto causal = find(layer_kernels(m, paper_shape()), "attn_core");
  const auto full = find(layer_kernels(m, full_shape), "attn_core");
  // Full: 4 * tokens * s * h = 4 * 8192 * 4096 * 4096 = 549,755,813,888; causal half.
  REQUIRE(full.forward_flops.value() == Approx(549'755'813'888.0).epsilon(1e-12));
  REQUIRE(causal.forward_flops.value() == Approx(549'755'813'888.0 / 2).epsilon(1e-12));
  REQUIRE(causal.causal_discount);
  REQUIRE_FALSE(full.causal_discount);
}

TEST_CASE("kernels: tensor, sequence and context parallelism split as Megatron does", "[model]") {
  const auto m = io::load_model("llama2-70b");
  const auto one = layer_kernels(m, paper_shape());
  auto tp8 = paper_shape();
  tp8.tp = 8;
  const auto split = layer_kernels(m, tp8);
  const double tokens = 8192;

  SECTION("GEMM shapes per rank") {
    // QKV column-parallel: (64 + 2 * 8) heads * 128 / 8 = 1280 columns, k = h = 8192.
    const auto qkv = find(split, "qkv_proj").gemm;
    REQUIRE(qkv.m == 8192);
    REQUIRE(qkv.n == 1280);
    REQUIRE(qkv.k == 8192);
    // Output projection row-parallel: k = 8192 / 8 = 1024, n = h.
    REQUIRE(find(split, "attn_out_proj").gemm.k == 1024);
    REQUIRE(find(split, "attn_out_proj").gemm.n == 8192);
    // SwiGLU gate + up: 2 * 28672 / 8 = 7168 columns; down: k = 3584.
    REQUIRE(find(split, "mlp_up_gate").gemm.n == 7168);
    REQUIRE(find(split, "mlp_down").gemm.k == 3584);
  }
  SECTION("GEMM and attention FLOPs / tp; norms and residuals replicated without SP") {
    for (std::size_t i = 0; i < one.size(); ++i) {
      CAPTURE(one[i].name);
      if (one[i].kind == KernelKind::MemoryBound && one[i].name != "rope" &&
          one[i].name != "mlp_act") {
        REQUIRE(split[i].forward_bytes.value() == Approx(one[i].forward_bytes.value()));
      } else {
        REQUIRE(split[i].forward_flops.value() ==
                Approx(one[i].forward_flops.value() / 8).epsilon(1e-12));
      }
    }
  }
  SECTION("sequence parallelism splits norms and residuals too") {
    auto sp = tp8;
    sp.sequence_parallel = true;
    const auto ks = layer_kernels(m, sp);
    // RMSNorm forward: read + write 2 bytes x tokens/8 x h = 4 * 1024 * 8192.
    REQUIRE(find(ks, "attn_norm").forward_bytes.value() ==
            Approx(4.0 * tokens / 8 * 8192).epsilon(1e-12));
    REQUIRE(find(ks, "mlp_residual_add").forward_bytes.value() ==
            Approx(find(one, "mlp_residual_add").forward_bytes.value() / 8).epsilon(1e-12));
  }
  SECTION("context parallelism halves the queries, not the keys") {
    auto cp2 = paper_shape();
    cp2.cp = 2;
    const auto ks = layer_kernels(m, cp2);
    REQUIRE(find(ks, "qkv_proj").gemm.m == 4096);
    REQUIRE(find(ks, "attn_core").forward_flops.value() ==
            Approx(find(one, "attn_core").forward_flops.value() / 2).epsilon(1e-12));
  }
}

TEST_CASE("kernels: recomputation adds the attention core or the whole forward", "[model]") {
  const auto ks = layer_kernels(io::load_model("llama2-7b"), paper_shape());
  REQUIRE(selective_recompute_flops(ks) == find(ks, "attn_core").forward_flops);
  REQUIRE(full_recompute_flops(ks) == total_forward_flops(ks));
  REQUIRE(full_recompute_flops(ks) > selective_recompute_flops(ks));
}

TEST_CASE("kernels: head, embedding and optimizer step", "[model]") {
  const auto m = io::load_model("llama2-7b");
  auto tp2 = paper_shape();
  tp2.tp = 2;
  const auto head = head_kernels(m, tp2);
  // LM head vocab-parallel: 2 * 8192 tokens * 16000 * 4096.
  REQUIRE(find(head, "lm_head").forward_flops.value() ==
          Approx(2.0 * 8192 * 16000 * 4096).epsilon(1e-12));
  // Cross entropy reads bf16 logits and writes the fp32 softmax: (2 + 4) B per local logit.
  REQUIRE(find(head, "cross_entropy").forward_bytes.value() ==
          Approx(6.0 * 8192 * 16000).epsilon(1e-12));
  // Embedding lookup: reads and writes 8192 rows of 4096 bf16 values.
  REQUIRE(embedding_kernels(m, tp2).front().forward_bytes.value() ==
          Approx(2.0 * 2.0 * 8192 * 4096).epsilon(1e-12));
  // AdamW: 28 bytes per parameter with bf16 (reads 2 + 12, writes 12 + 2) and with fp32
  // (reads 16, writes 12).
  REQUIRE(adamw_step_kernel(1000, 2).forward_bytes.value() == Approx(28'000.0).epsilon(1e-12));
  REQUIRE(adamw_step_kernel(1000, 4).forward_bytes.value() == Approx(28'000.0).epsilon(1e-12));
  REQUIRE(adamw_step_kernel(1000, 2).backward_bytes.value() == 0.0);
  // A precision-aware optimizer's 16-bit moments (m and v, 2 B each): each read and written once,
  // 8 B less per parameter, 20 B with bf16 and fp32 main params; in fp32 training 12 + 2 x 4.
  REQUIRE(adamw_step_kernel(1000, 2, 4.0, 4.0).forward_bytes.value() ==
          Approx(20'000.0).epsilon(1e-12));
  REQUIRE(adamw_step_kernel(1000, 4, 4.0, 4.0).forward_bytes.value() ==
          Approx(20'000.0).epsilon(1e-12));
  REQUIRE(sgd_step_kernel(1000, 2).forward_bytes.value() == Approx(20'000.0).epsilon(1e-12));
}

TEST_CASE("kernels: the 2019 softmax and bias-dropout-add run op by op", "[model]") {
  // llama2-7b, the worked example's micro-batch (2 x 4096 tokens), unfused attention: 2 x 32
  // heads x 4096 x 4096 = 1,073,741,824 scores; 8192 tokens x 4096 = 33,554,432 hidden values.
  const auto m = io::load_model("llama2-7b");
  auto shape = paper_shape();
  shape.unfused_attention = true;
  const auto fused = layer_kernels(m, shape);
  shape.unfused_softmax = true;
  shape.unfused_bias_dropout_add = true;
  const auto ks = layer_kernels(m, shape);
  const double scores = 1'073'741'824.0;
  const double hidden = 8192.0 * 4096.0;
  // The scale and the mask's multiply read and write the 2-byte scores forward and backward;
  // the mask's subtraction only forward (its backward passes the gradient through).
  for (const char* name : {"attn_scale", "attn_mask_mul"}) {
    INFO(name);
    REQUIRE(find(ks, name).forward_bytes.value() == Approx(4.0 * scores).epsilon(1e-12));
    REQUIRE(find(ks, name).backward_bytes.value() == Approx(4.0 * scores).epsilon(1e-12));
  }
  REQUIRE(find(ks, "attn_mask_sub").forward_bytes.value() == Approx(4.0 * scores).epsilon(1e-12));
  REQUIRE(find(ks, "attn_mask_sub").backward_bytes.value() == 0.0);
  // After each row-parallel GEMM: the bias add (2 x 2 bytes forward; backward reads the
  // gradient once for the bias gradient: 2), the dropout (2 x 2 + a 1-byte mask, both ways),
  // then the residual add as before.
  for (const char* prefix : {"attn", "mlp"}) {
    const std::string p = prefix;
    INFO(p);
    REQUIRE(find(ks, p + "_bias_add").forward_bytes.value() == Approx(4.0 * hidden).epsilon(1e-12));
    REQUIRE(find(ks, p + "_bias_add").backward_bytes.value() == Approx(2.0 * hidden).epsilon(1e-12));
    REQUIRE(find(ks, p + "_hidden_dropout").forward_bytes.value() ==
            Approx(5.0 * hidden).epsilon(1e-12));
    REQUIRE(find(ks, p + "_residual_add").forward_bytes.value() ==
            find(fused, p + "_residual_add").forward_bytes.value());
  }
  // Seven kernels more per layer than the fused release, in order: the scale and the mask before the
  // softmax, the bias and dropout before each residual add.
  REQUIRE(ks.size() == fused.size() + 7);
  auto index = [&](const std::string& n) {
    return std::find_if(ks.begin(), ks.end(), [&](const KernelSpec& k) { return k.name == n; }) -
           ks.begin();
  };
  REQUIRE(index("attn_scale") < index("attn_mask_mul"));
  REQUIRE(index("attn_mask_sub") < index("attn_softmax"));
  REQUIRE(index("attn_out_proj") < index("attn_bias_add"));
  REQUIRE(index("attn_hidden_dropout") < index("attn_residual_add"));
  REQUIRE(index("mlp_down") < index("mlp_bias_add"));
}

TEST_CASE("kernels: Megatron's unfused cross entropy moves the fp32 logits op by op", "[model]") {
  // llama2-7b at tp 2: 8192 tokens x 16000 local logits = 131,072,000 logits. Op by op
  // (Megatron's vocab_parallel_cross_entropy): .float() reads 2 and writes 4 bytes per logit,
  // max reads 4, the in-place subtract, exp and divide read and write 4 each (24), the sum
  // reads 4: 2 + 4 + 4 + 24 + 4 = 38 = e + 36. Backward: the in-place multiply reads and writes
  // 4 (8), the cast back reads 4 and writes 2: 14 = 12 + e. Fused: 6 and 6 (test above).
  const auto m = io::load_model("llama2-7b");
  auto shape = paper_shape();
  shape.tp = 2;
  const double logits = 8192.0 * 16000.0;
  const auto fused = find(head_kernels(m, shape), "cross_entropy");
  shape.unfused_cross_entropy = true;
  const auto unfused = find(head_kernels(m, shape), "cross_entropy");
  REQUIRE(unfused.forward_bytes.value() == Approx(38.0 * logits).epsilon(1e-12));
  REQUIRE(unfused.backward_bytes.value() == Approx(14.0 * logits).epsilon(1e-12));
  REQUIRE(fused.backward_bytes.value() == Approx(6.0 * logits).epsilon(1e-12));
  // The FLOPs do not change: the same 5 per logit forward and 2 backward.
  REQUIRE(unfused.forward_flops.value() == fused.forward_flops.value());
  REQUIRE(unfused.backward_flops.value() == fused.backward_flops.value());
}

TEST_CASE("kernels: torchtitan's eager kernels move the bytes of their ops", "[model]") {
  // llama3-8b (hidden 4096, 32 heads, 8 KV heads of 128, ffn 14336, vocab 128256), one rank,
  // 2 x 4096 = 8192 tokens, bf16 (e = 2; a cast to or from fp32 moves e + 4 = 6 bytes).
  const auto m = io::load_model("llama3-8b");
  LayerShape fused = paper_shape();
  LayerShape eager = fused;
  eager.eager_fp32_rmsnorm = true;
  eager.complex_fp32_rope = true;
  eager.gqa_repeat_kv = true;
  eager.eager_swiglu = true;
  eager.fp32_logits_cross_entropy = true;
  const auto f = layer_kernels(m, fused);
  const auto g = layer_kernels(m, eager);
  const double tokens = 8192.0;

  // RMSNorm over 4096 per token. Forward: cast 6, pow 8, mean 4, rsqrt multiply 8, cast back 6,
  // weight multiply 4 = 36. Backward: the weight multiply's input gradient 2e = 4 and weight
  // gradient (multiply 3e, reduce e) 8, cast 6, the rsqrt multiply's input gradient 8 and row
  // gradient 12 + 4, mean 4, pow 8 + 12, the sum of the two fp32 gradients 12, cast 6 = 84.
  // Fused: 4 and 6.
  REQUIRE(find(g, "attn_norm").forward_bytes.value() == Approx(36.0 * tokens * 4096.0));
  REQUIRE(find(g, "mlp_norm").backward_bytes.value() == Approx(84.0 * tokens * 4096.0));
  REQUIRE(find(f, "attn_norm").forward_bytes.value() == Approx(4.0 * tokens * 4096.0));
  REQUIRE(find(g, "attn_norm").forward_flops.value() == find(f, "attn_norm").forward_flops.value());

  // RoPE on Q and K, 4096 + 1024 = 5120 per token: cast 6, complex multiply 8, cast back 6 = 20
  // each way; fused 4.
  REQUIRE(find(g, "rope").forward_bytes.value() == Approx(20.0 * tokens * 5120.0));
  REQUIRE(find(g, "rope").backward_bytes.value() == Approx(20.0 * tokens * 5120.0));
  REQUIRE(find(f, "rope").backward_bytes.value() == Approx(4.0 * tokens * 5120.0));

  // repeat_kv: K and V (1024 each) read, copied to 4096 each: 2 x (1024 + 4096) x 2 = 20,480
  // bytes per token each way; backward 2 x (4096 - 1024) = 6144 additions. Fused: no kernel.
  REQUIRE(find(g, "repeat_kv").forward_bytes.value() == Approx(20480.0 * tokens));
  REQUIRE(find(g, "repeat_kv").backward_bytes.value() == Approx(20480.0 * tokens));
  REQUIRE(find(g, "repeat_kv").backward_flops.value() == Approx(6144.0 * tokens));
  REQUIRE(std::none_of(f.begin(), f.end(), [](const auto& k) { return k.name == "repeat_kv"; }));
  // Multi-head attention has nothing to copy.
  const auto mha = layer_kernels(io::load_model("llama2-7b"), eager);
  REQUIRE(
      std::none_of(mha.begin(), mha.end(), [](const auto& k) { return k.name == "repeat_kv"; }));

  // SwiGLU over 14336 per token: silu 2e, multiply 3e = 5e = 10; backward two multiply
  // gradients 3e each and silu's 3e = 9e = 18. Fused: 3e and 5e.
  REQUIRE(find(g, "mlp_act").forward_bytes.value() == Approx(10.0 * tokens * 14336.0));
  REQUIRE(find(g, "mlp_act").backward_bytes.value() == Approx(18.0 * tokens * 14336.0));
  REQUIRE(find(f, "mlp_act").forward_bytes.value() == Approx(6.0 * tokens * 14336.0));

  // The loss over 128256 logits per token: the cast 6 and log_softmax's read and write 8 = 14;
  // backward zero fill 4, log_softmax backward 12, cast back 6 = 22.
  const double logits = tokens * 128256.0;
  const auto ce = find(head_kernels(m, eager), "cross_entropy");
  REQUIRE(ce.forward_bytes.value() == Approx(14.0 * logits));
  REQUIRE(ce.backward_bytes.value() == Approx(22.0 * logits));

  // In fp32 the casts are no-ops (x.float() returns x): RoPE 8 each way; the norm forward
  // 8 + 4 + 8 + 2e = 28 and backward 6e + 60 = 84 with e = 4.
  eager.element_bytes = 4;
  const auto fp32 = layer_kernels(m, eager);
  REQUIRE(find(fp32, "rope").forward_bytes.value() == Approx(8.0 * tokens * 5120.0));
  REQUIRE(find(fp32, "attn_norm").forward_bytes.value() == Approx(28.0 * tokens * 4096.0));
  REQUIRE(find(fp32, "attn_norm").backward_bytes.value() == Approx(84.0 * tokens * 4096.0));
}

TEST_CASE("kernels: a sliding window scales the attention core, both conventions", "[model]") {
  const auto m = io::load_model("mistral-7b");  // window 4096, q = 4096, kv = 1024
  auto full_model = m;
  full_model.attention_window = 0;
  const LayerShape causal{.micro_batch = 1, .seq_len = 8192};
  auto model_convention = causal;
  model_convention.causal = false;
  // r = 25,167,872 / 33,558,528 at T = 8192, w = 4096 (counts_test derives it).
  const double r = 25'167'872.0 / 33'558'528.0;
  // Causal full attention executes 4 * 8192 * 8192 * 4096 / 2 = 549,755,813,888 FLOPs forward.
  const auto causal_layer = layer_kernels(m, causal);
  const auto& windowed = find(causal_layer, "attn_core");
  REQUIRE(windowed.forward_flops.value() == Approx(549'755'813'888.0 * r).epsilon(1e-12));
  REQUIRE(windowed.backward_flops.value() == Approx(2.5 * 549'755'813'888.0 * r).epsilon(1e-12));
  REQUIRE(windowed.attention_window == 4096);
  // The model-FLOPs convention stays twice the executed count.
  const auto counted_layer = layer_kernels(m, model_convention);
  const auto& counted = find(counted_layer, "attn_core");
  REQUIRE(counted.forward_flops.value() ==
          Approx(2.0 * windowed.forward_flops.value()).epsilon(1e-12));
  // And the GEMMs are untouched.
  REQUIRE(find(layer_kernels(m, causal), "qkv_proj").forward_flops ==
          find(layer_kernels(full_model, causal), "qkv_proj").forward_flops);
  // The same model within its window: nothing changes.
  const LayerShape short_seq{.micro_batch = 1, .seq_len = 4096};
  REQUIRE(find(layer_kernels(m, short_seq), "attn_core").forward_flops ==
          find(layer_kernels(full_model, short_seq), "attn_core").forward_flops);
}

TEST_CASE("kernels: the attention kernel's efficiency sees the window's keys per query",
          "[model][compute]") {
  // The priced side of a windowed attn_core (workload passes KernelSpec::attention_window on).
  const hardware::AttentionEfficiency a{.max_efficiency = 0.5, .half_size = 200.0};
  const compute::AttentionShape full{.seq_len = 8192, .head_dim = 0, .causal = true};
  auto windowed = full;
  windowed.window = 4096;
  // Causal full: L = 8192 / 2 = 4096 keys per query on average: 0.5 * 4096 / 4296.
  REQUIRE(compute::attention_efficiency(a, full) == Approx(0.5 * 4096.0 / 4296.0).epsilon(1e-12));
  // Window 4096: L = (4096 * 4097 / 2 + 4096 * 4096) / 8192 = 25,167,872 / 8192 = 3072.25.
  REQUIRE(compute::attention_efficiency(a, windowed) ==
          Approx(0.5 * 3072.25 / 3272.25).epsilon(1e-12));
  // A window no shorter than the sequence changes nothing.
  windowed.window = 8192;
  REQUIRE(compute::attention_efficiency(a, windowed) == compute::attention_efficiency(a, full));
}

TEST_CASE("kernels: unfused attention is two batched GEMMs over the full scores and s x s traffic",
          "[model]") {
  // llama2-7b (32 heads of 128), the worked example's micro-batch (2 x 4096 tokens), one rank.
  const auto m = io::load_model("llama2-7b");
  auto shape = paper_shape();
  shape.unfused_attention = true;
  shape.attention_dropout = true;
  const auto ks = layer_kernels(m, shape);
  REQUIRE(std::none_of(ks.begin(), ks.end(), [](const KernelSpec& k) { return k.name == "attn_core"; }));
  const auto& scores = find(ks, "attn_scores");
  const auto& context = find(ks, "attn_context");
  // Each GEMM: 2 x batch x q x s x d = 2 x (2 x 32) x 4096 x 4096 x 128 = 274,877,906,944, the
  // masked half included (baddbmm computes it); together the unfused, full-attention count
  // 4 x tokens x s x h of the flash kernel without its causal discount (test above).
  REQUIRE(scores.forward_flops.value() == Approx(274'877'906'944.0).epsilon(1e-12));
  REQUIRE(context.forward_flops.value() == Approx(274'877'906'944.0).epsilon(1e-12));
  REQUIRE(scores.gemm.batch == 64);
  REQUIRE(scores.gemm.m == 4096);
  REQUIRE(scores.gemm.n == 4096);
  REQUIRE(scores.gemm.k == 128);
  REQUIRE(context.gemm.n == 128);
  REQUIRE(context.gemm.k == 4096);
  // The softmax reads the fp16 scores and writes the probabilities: 2 x 2 bytes per score, over
  // 64 x 4096 x 4096 = 1,073,741,824 scores; dropout writes a 1-byte mask beside its output.
  REQUIRE(find(ks, "attn_softmax").forward_bytes.value() ==
          Approx(4.0 * 1'073'741'824.0).epsilon(1e-12));
  REQUIRE(find(ks, "attn_dropout").forward_bytes.value() ==
          Approx(5.0 * 1'073'741'824.0).epsilon(1e-12));
  shape.attention_dropout = false;
  const auto without = layer_kernels(m, shape);
  REQUIRE(std::none_of(without.begin(), without.end(),
                       [](const KernelSpec& k) { return k.name == "attn_dropout"; }));
}

TEST_CASE("kernels: only Transformer Engine's linear layers are FP8-eligible", "[model][fp8]") {
  // Megatron-Core builds QKV, the attention projection, the MLP and the experts from TE modules
  // (FP8 under fp8 training); the attention core (cuDNN, bf16), the router (a torch matmul),
  // the LM head (Megatron's ColumnParallelLinear) and the embedding are not TE GEMMs.
  const auto eligible = [](const std::vector<KernelSpec>& ks) {
    std::vector<std::string> names;
    for (const auto& k : ks) {
      if (k.fp8_eligible) names.push_back(k.name);
      if (k.fp8_eligible) CHECK(k.kind == KernelKind::Gemm);
      // The workload prices an FP8 GEMM's bytes from its elements by role (GemmElements): an
      // eligible kernel without them would read and write nothing.
      if (k.fp8_eligible) {
        INFO(k.name);
        CHECK(k.elements.forward_read > 0.0);
        CHECK(k.elements.forward_written > 0.0);
        CHECK(k.elements.backward_read > 0.0);
        CHECK(k.elements.backward_written > 0.0);
      }
    }
    return names;
  };
  const auto llama = io::load_model("llama2-7b");
  CHECK(eligible(layer_kernels(llama, paper_shape())) ==
        std::vector<std::string>{"qkv_proj", "attn_out_proj", "mlp_up_gate", "mlp_down"});
  CHECK_FALSE(find(layer_kernels(llama, paper_shape()), "attn_core").fp8_eligible);
  CHECK(eligible(head_kernels(llama, paper_shape())).empty());  // lm_head stays bf16
  CHECK_FALSE(find(head_kernels(llama, paper_shape()), "lm_head").fp8_eligible);
  CHECK(eligible(embedding_kernels(llama, paper_shape())).empty());
  // DeepSeek-V3's MoE layer: the latent-attention projections, the routed experts' grouped
  // GEMMs and the shared expert are TE GEMMs; the router is not.
  auto shape = paper_shape();
  shape.ep = 64;
  const auto ds = moe_layer_kernels(io::load_model("deepseek-v3"), shape);
  CHECK(eligible(ds) == std::vector<std::string>{"mla_q_down", "mla_q_up", "mla_kv_down",
                                                 "mla_kv_up", "attn_out_proj", "expert_up_gate",
                                                 "expert_down", "shared_expert_up_gate",
                                                 "shared_expert_down"});
  CHECK_FALSE(find(ds, "moe_router").fp8_eligible);
  // The multi-token-prediction module's projection and layer: each eligible GEMM carries its
  // elements (checked inside `eligible`).
  CHECK_FALSE(eligible(mtp_kernels(io::load_model("deepseek-v3"), shape)).empty());
  // Unfused attention's batched GEMMs are attention, not linear layers.
  shape = paper_shape();
  shape.unfused_attention = true;
  CHECK_FALSE(find(layer_kernels(llama, shape), "attn_scores").fp8_eligible);
  CHECK_FALSE(find(layer_kernels(llama, shape), "attn_context").fp8_eligible);
}

TEST_CASE("kernels: torchtitan's op-level selective recomputation, kernel by kernel", "[model]") {
  // model::apply_op_level_selective: memory-bound ops recomputed (1), the flash-attention kernel
  // saved (0), and of torchtitan's mm calls in forward order (wq, wk, wv, wo, w1, w3, w2 for a
  // SwiGLU layer) every second one recomputed: wk, wo and w3.
  LayerShape shape = paper_shape();
  shape.selective = SelectiveRecompute::OpLevel;
  // llama2-7b: 32 heads, 32 KV heads of 128: q = kv = 4096, so wk is 1/3 of qkv_proj.
  const auto ks = layer_kernels(io::load_model("llama2-7b"), shape);
  CHECK(find(ks, "attn_norm").selective_recompute == 1.0);
  CHECK(find(ks, "qkv_proj").selective_recompute == Approx(1.0 / 3.0).epsilon(1e-15));
  CHECK(find(ks, "rope").selective_recompute == 1.0);
  CHECK(find(ks, "attn_core").selective_recompute == 0.0);
  CHECK(find(ks, "attn_out_proj").selective_recompute == 1.0);
  CHECK(find(ks, "mlp_norm").selective_recompute == 1.0);
  CHECK(find(ks, "mlp_up_gate").selective_recompute == 0.5);
  CHECK(find(ks, "mlp_act").selective_recompute == 1.0);
  CHECK(find(ks, "mlp_down").selective_recompute == 0.0);
  CHECK(find(ks, "mlp_residual_add").selective_recompute == 1.0);
  // llama3-8b: 32 heads and 8 KV heads of 128: wk is 1024 / (4096 + 2 x 1024) = 1/6 of qkv_proj.
  const auto gqa = layer_kernels(io::load_model("llama3-8b"), shape);
  CHECK(find(gqa, "qkv_proj").selective_recompute == Approx(1.0 / 6.0).epsilon(1e-15));
  // A GELU MLP has two mm calls, w1 (5th, saved) and w2 (6th, recomputed).
  const auto gpt = layer_kernels(io::load_model("gpt3-175b"), shape);
  CHECK(find(gpt, "mlp_up").selective_recompute == 0.0);
  CHECK(find(gpt, "mlp_down").selective_recompute == 1.0);
  // Megatron's policy (the default) recomputes the attention core alone.
  const auto megatron = layer_kernels(io::load_model("llama2-7b"), paper_shape());
  for (const KernelSpec& k : megatron) {
    INFO(k.name);
    CHECK(k.selective_recompute == (k.name == "attn_core" ? 1.0 : 0.0));
  }
  // The recomputed FLOPs (for HFU): wk, wo and w3 of llama2-7b at 8,192 tokens,
  // 2 x 8192 x 4096 x (4096 + 4096 + 11008) = 1.2885e12, plus the memory-bound kernels' FLOPs.
  double memory_bound = 0.0;
  for (const KernelSpec& k : ks) {
    if (k.kind == KernelKind::MemoryBound) memory_bound += k.forward_flops.value();
  }
  CHECK(selective_recompute_flops(ks).value() ==
        Approx(2.0 * 8192.0 * 4096.0 * (4096.0 + 4096.0 + 11008.0) + memory_bound)
            .epsilon(1e-12));
}

TEST_CASE("kernels: Megatron-Core's mla_up_proj recomputation reruns the up-projections and RoPE",
          "[model]") {
  // model::apply_mla_up_proj_selective: Megatron-Core's recompute_up_proj checkpoints
  // linear_q_up_proj, linear_kv_up_proj and RoPE and nothing else; the attention kernel runs once.
  LayerShape shape{.micro_batch = 1, .seq_len = 4096, .selective = SelectiveRecompute::MlaUpProj};
  const ModelSpec ds = io::load_model("deepseek-v3");
  const auto ks = moe_layer_kernels(ds, shape);
  double up = 0.0;
  for (const KernelSpec& k : ks) {
    INFO(k.name);
    const bool checkpointed = k.name == "mla_q_up" || k.name == "mla_kv_up" || k.name == "rope";
    CHECK(k.selective_recompute == (checkpointed ? 1.0 : 0.0));
    if (checkpointed) up += k.forward_flops.value();
  }
  // deepseek-v3 (q_lora_rank 1536, kv_lora_rank 512, 128 heads of nope 128 + rope 64 for q and
  // k, v 128), 4,096 tokens, no TP: q_up 2 x 4096 x 1536 x (128 x 192) and kv_up
  // 2 x 4096 x 512 x (128 x 256) FLOPs, plus RoPE's 3 per element of 4096 x (128 x 64 + 64).
  CHECK(selective_recompute_flops(ks).value() ==
        Approx(2.0 * 4096.0 * (1536.0 * 24576.0 + 512.0 * 32768.0) + 3.0 * 4096.0 * 8256.0)
            .epsilon(1e-12));
  CHECK(selective_recompute_flops(ks).value() == Approx(up).epsilon(1e-15));
  // A layer without latent attention has nothing this policy checkpoints.
  CHECK(selective_recompute_flops(layer_kernels(io::load_model("llama2-7b"), shape)).value() ==
        0.0);
}
