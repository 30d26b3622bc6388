#include "trainsim/model/kernels.hpp"

#include "trainsim/model/counts.hpp"

namespace trainsim::model {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// A GEMM of forward shape [m x k] * [k x n]: 2mnk FLOPs forward (a multiply and an add per
// term), and two GEMMs of the same size backward (dgrad and wgrad: 4mnk). HBM traffic: each
// operand read once and the result written once, e * (mk + kn + mn) forward; backward reads dY
// twice, X and W once and writes dX and dW: twice the forward bytes. (Narayanan et al. 2021
// §5.1 counts the same 2mnk / 4mnk.)
KernelSpec gemm(std::string name, std::int64_t m, std::int64_t n, std::int64_t k,
                std::int64_t element_bytes) {
  KernelSpec g;
  g.name = std::move(name);
  g.kind = KernelKind::Gemm;
  g.forward_flops = Flops(2.0 * d(m) * d(n) * d(k));
  g.backward_flops = g.forward_flops * 2.0;
  g.elements = GemmElements{.forward_read = d(m) * d(k) + d(k) * d(n),
                            .forward_written = d(m) * d(n),
                            .backward_read = 2.0 * d(m) * d(n) + d(m) * d(k) + d(k) * d(n),
                            .backward_written = d(m) * d(k) + d(k) * d(n)};
  g.forward_bytes = Bytes(d(element_bytes) * (d(m) * d(k) + d(k) * d(n) + d(m) * d(n)));
  g.backward_bytes = g.forward_bytes * 2.0;
  g.gemm = GemmShape{.m = m, .n = n, .k = k};
  return g;
}

// A linear layer of a transformer block that Transformer Engine runs in FP8 under fp8 training
// (KernelSpec::fp8_eligible): a TE Linear / LayerNormLinear / GroupedLinear in Megatron-Core's
// layer specs (megatron/core/models/gpt/gpt_layer_specs.py with TE: TELayerNormColumnParallel-
// Linear for QKV and MLP fc1, TERowParallelLinear for the projection and fc2, TEGroupedMLP for
// the experts, TE linears in the MLA and shared-expert submodules).
KernelSpec te_gemm(std::string name, std::int64_t m, std::int64_t n, std::int64_t k,
                   std::int64_t element_bytes) {
  KernelSpec g = gemm(std::move(name), m, n, k, element_bytes);
  g.fp8_eligible = true;
  return g;
}

// A strided-batched GEMM (torch.bmm / baddbmm): `batch` independent [m x k][k x n] products.
KernelSpec batched_gemm(std::string name, std::int64_t batch, std::int64_t m, std::int64_t n,
                        std::int64_t k, std::int64_t element_bytes) {
  KernelSpec g = gemm(std::move(name), m, n, k, element_bytes);
  g.forward_flops = g.forward_flops * d(batch);
  g.backward_flops = g.backward_flops * d(batch);
  g.forward_bytes = g.forward_bytes * d(batch);
  g.backward_bytes = g.backward_bytes * d(batch);
  g.elements = GemmElements{.forward_read = g.elements.forward_read * d(batch),
                            .forward_written = g.elements.forward_written * d(batch),
                            .backward_read = g.elements.backward_read * d(batch),
                            .backward_written = g.elements.backward_written * d(batch)};
  g.gemm.batch = batch;
  return g;
}

// A memory-bound kernel over `elements` elements. The per-element FLOPs and bytes are rough
// operation counts of the PyTorch/Megatron kernels; these kernels are bound by HBM bandwidth,
// so their FLOPs never set their time (they matter only for hardware-FLOPs totals).
KernelSpec elementwise(std::string name, double elements, double flops_fwd, double bytes_fwd,
                       double flops_bwd, double bytes_bwd) {
  KernelSpec k;
  k.name = std::move(name);
  k.kind = KernelKind::MemoryBound;
  k.forward_flops = Flops(elements * flops_fwd);
  k.backward_flops = Flops(elements * flops_bwd);
  k.forward_bytes = Bytes(elements * bytes_fwd);
  k.backward_bytes = Bytes(elements * bytes_bwd);
  return k;
}

// Tokens of the residual stream on this rank: all local tokens, or 1/tp of them with
// sequence parallelism (Korthikanti et al. 2022 §4.2.2).
double residual_tokens(const LayerShape& s) {
  const double t = d(local_tokens(s));
  return s.sequence_parallel ? t / d(s.tp) : t;
}

// HBM bytes per element of an eager dtype cast between the activations' dtype (e bytes) and
// fp32: reads e, writes 4 (or the reverse). None when the activations are fp32 already
// (`.float()` and `.type_as()` then return their input).
double fp32_cast_bytes(double e) { return e == 4.0 ? 0.0 : e + 4.0; }

// A pre-norm over `tokens` rows of `hidden`. RMSNorm: square, sum, scale, weight (4 FLOPs per
// element); LayerNorm adds the mean, subtraction and bias (7); without the weight and the bias
// (OLMo's non-parametric LayerNorm) 5. Forward reads x and writes y; backward reads x and dy and
// writes dx (weight gradients are reductions of negligible size).
//
// RMSNorm op by op in fp32 (s.eager_fp32_rmsnorm: torchtitan's norm_type "rmsnorm",
// torchtitan/models/norms.py of April 2024, `self._norm(x.float()).type_as(x) * self.weight`
// with `_norm(x) = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)`; Hugging Face's
// LlamaRMSNorm runs the same ops), per element with c = fp32_cast_bytes(e):
// - forward: x.float() (c), pow (reads 4, writes 4), mean (reads 4), the multiply by rsqrt
//   (reads 4, writes 4), type_as (c), the weight multiply (reads e, writes e): 2c + 2e + 20;
// - backward, autograd through the same ops: the weight multiply's input gradient (reads e,
//   writes e) and weight gradient (multiply: reads 2e, writes e; reduce: reads e), type_as (c),
//   the rsqrt multiply's input gradient (reads 4 + the row's rsqrt, writes 4) and the row
//   gradient (multiply: reads 8, writes 4; reduce: reads 4), mean (writes 4), pow (2 * x:
//   reads 4, writes 4; times the gradient: reads 8, writes 4), the sum of the two fp32
//   gradients (reads 8, writes 4), x.float() (c): 2c + 6e + 60.
// At bf16 (e = 2) that is 36 and 84 bytes against the fused kernel's 4 and 6.
KernelSpec norm_kernel(std::string name, const ModelSpec& m, const LayerShape& s, double tokens,
                       double e) {
  const bool rms = m.norm == Norm::RmsNorm;
  const double flops = rms ? 4.0 : m.norm == Norm::LayerNorm ? 7.0 : 5.0;
  const double elements = tokens * d(m.hidden);
  if (rms && s.eager_fp32_rmsnorm) {
    const double c = fp32_cast_bytes(e);
    return elementwise(std::move(name), elements, flops, 2.0 * c + 2.0 * e + 20.0, 2.0 * flops,
                       2.0 * c + 6.0 * e + 60.0);
  }
  return elementwise(std::move(name), elements, flops, 2.0 * e, 2.0 * flops, 3.0 * e);
}

// RoPE (Su et al. 2021) on `elements` elements of Q and K: x * cos + rotate(x) * sin, 3 FLOPs
// per element. Fused: reads and writes each element (the cos/sin tables are small and cached).
// Complex fp32 (s.complex_fp32_rope: Meta's Llama reference code and torchtitan's
// apply_rotary_emb, torchtitan/models/llama/model.py of April 2024: `torch.view_as_complex(
// xq.float().reshape(...))`, the product with the complex frequencies, `torch.view_as_real(
// ...).flatten(3)`, `.type_as(xq)`): per element the cast to fp32 (c), the complex multiply
// (reads 4, writes 4; the views are free) and the cast back (c), 2c + 8; backward the same
// three kernels in reverse, 2c + 8. At bf16: 20 bytes each way against 4.
KernelSpec rope_kernel(const LayerShape& s, double elements, double e) {
  if (s.complex_fp32_rope) {
    const double bytes = 2.0 * fp32_cast_bytes(e) + 8.0;
    return elementwise("rope", elements, 3.0, bytes, 3.0, bytes);
  }
  return elementwise("rope", elements, 3.0, 2.0 * e, 3.0, 2.0 * e);
}

// x + branch: reads two, writes one, one add per element. Backward: the residual gradient is
// accumulated (reads two, writes one).
KernelSpec residual_kernel(std::string name, const ModelSpec& m, double tokens, double e) {
  return elementwise(std::move(name), tokens * d(m.hidden), 1.0, 3.0 * e, 1.0, 3.0 * e);
}

// The residual add after a row-parallel GEMM (`prefix`: "attn" or "mlp"), appended to `k`.
// Unfused (s.unfused_bias_dropout_add, Megatron-LM of 2019: RowParallelLinear's
// `output_ + self.bias`, then `self.dropout`, then `hidden_states + output`; mpu/layers.py and
// mpu/transformer.py at 93ab4be): the bias add reads and writes the GEMM output (its backward
// reduces the gradient over tokens for the bias: reads it once); the dropout reads it and writes
// its output and a 1-byte mask (backward reads the gradient and the mask, writes the gradient);
// then the residual add.
void add_residual_kernels(const std::string& prefix, const ModelSpec& m, const LayerShape& s,
                          double tokens, double e, std::vector<KernelSpec>& k) {
  if (s.unfused_bias_dropout_add) {
    const double elements = tokens * d(m.hidden);
    k.push_back(elementwise(prefix + "_bias_add", elements, 1.0, 2.0 * e, 1.0, e));
    k.push_back(
        elementwise(prefix + "_hidden_dropout", elements, 2.0, 2.0 * e + 1.0, 1.0, 2.0 * e + 1.0));
  }
  k.push_back(residual_kernel(prefix + "_residual_add", m, tokens, e));
}

}  // namespace

std::int64_t local_tokens(const LayerShape& shape) {
  return shape.micro_batch * shape.seq_len / shape.cp;
}

bool moe_routes_tp_shares(const LayerShape& shape) {
  return shape.ep > 1 && shape.tp > 1 && shape.sequence_parallel;
}

std::int64_t moe_routed_tokens(const LayerShape& shape) {
  const std::int64_t tokens = local_tokens(shape);
  return moe_routes_tp_shares(shape) ? ceil_div(tokens, shape.tp) : tokens;
}

double expert_rank_imbalance(const ModelSpec& m, std::int64_t ep) {
  return std::min(m.expert_load_imbalance, static_cast<double>(ep));
}

namespace {

// Multi-head latent attention (DeepSeek-V2 §2.1.2 eqs. 9-14; DeepSeek-V3 §2.1.1), unabsorbed
// as training runs it, split over TP as Megatron-Core's MLASelfAttention does: the down
// projections (q_a hidden x q_lora_rank, kv_a hidden x (kv_lora_rank + rope)) and their
// RMSNorms replicated on every TP rank, the up projections (q_b, kv_b) column-parallel over
// heads, the output projection row-parallel. Attention per local head: QK^T with head size
// d_qk = nope + rope, AV with d_v = v_head_dim, as one fused flash-attention kernel.
// Names: attn_norm, mla_q_down, mla_q_norm, mla_q_up (or q_proj without q_lora_rank),
// mla_kv_down, mla_kv_norm, mla_kv_up, rope, attn_core, attn_out_proj, attn_residual_add.
void add_mla_attention_kernels(const ModelSpec& m, const LayerShape& s,
                               std::vector<KernelSpec>& k) {
  const std::int64_t tokens = local_tokens(s);
  const double e = d(s.element_bytes);
  const double t_res = residual_tokens(s);
  const std::int64_t heads_local = ceil_div(m.num_heads, s.tp);
  const std::int64_t d_qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
  const std::int64_t q_local = heads_local * d_qk;
  const std::int64_t v_local = heads_local * m.v_head_dim;
  k.push_back(norm_kernel("attn_norm", m, s, t_res, e));
  // An RMSNorm over a latent of `width`: 4 FLOPs per element, reads x and writes y; backward
  // reads x and dy, writes dx.
  auto latent_norm = [&](std::string name, std::int64_t width) {
    return elementwise(std::move(name), d(tokens) * d(width), 4.0, 2.0 * e, 8.0, 3.0 * e);
  };
  if (m.q_lora_rank > 0) {
    k.push_back(te_gemm("mla_q_down", tokens, m.q_lora_rank, m.hidden, s.element_bytes));
    k.push_back(latent_norm("mla_q_norm", m.q_lora_rank));
    k.push_back(te_gemm("mla_q_up", tokens, q_local, m.q_lora_rank, s.element_bytes));
  } else {
    k.push_back(te_gemm("q_proj", tokens, q_local, m.hidden, s.element_bytes));
  }
  k.push_back(te_gemm("mla_kv_down", tokens, m.kv_lora_rank + m.qk_rope_head_dim, m.hidden,
                      s.element_bytes));
  k.push_back(latent_norm("mla_kv_norm", m.kv_lora_rank));
  k.push_back(te_gemm("mla_kv_up", tokens, heads_local * (m.qk_nope_head_dim + m.v_head_dim),
                      m.kv_lora_rank, s.element_bytes));
  // RoPE on the queries' rotary part and the one shared rotary key: 3 FLOPs per element, read
  // and written.
  const std::int64_t rotary = heads_local * m.qk_rope_head_dim + m.qk_rope_head_dim;
  k.push_back(rope_kernel(s, d(tokens) * d(rotary), e));
  // As the standard attention_core (layer_kernels), with 2 T S d_qk (QK^T) + 2 T S d_v (AV)
  // FLOPs per head, halved by the causal kernel; backward 2.5x forward. Bytes: Q and K of
  // d_qk, V and O of d_v per head (K and V expanded per head by kv_up), the fp32 log-sum-exp.
  KernelSpec a;
  a.name = "attn_core";
  a.kind = KernelKind::Attention;
  const double full = 2.0 * d(tokens) * d(s.seq_len) * d(q_local + v_local) *
                      attention_window_fraction(m, s.seq_len);
  a.causal_discount = s.causal;
  a.head_dim = d_qk;
  a.attention_window = m.attention_window;
  a.forward_flops = Flops(s.causal ? full / 2.0 : full);
  a.backward_flops = a.forward_flops * 2.5;
  const double kv_rows = d(s.micro_batch) * d(s.seq_len);
  const double lse = 4.0 * d(tokens) * d(heads_local);
  a.forward_bytes =
      Bytes(e * (d(tokens) * d(q_local + v_local) + kv_rows * d(q_local + v_local)) + lse);
  a.backward_bytes =
      Bytes(e * (2.0 * d(tokens) * d(q_local + v_local) + 2.0 * kv_rows * d(q_local + v_local)) +
            3.0 * lse);
  a.selective_recompute = 1.0;
  a.cp_kv_share = 1.0;
  k.push_back(a);
  k.push_back(te_gemm("attn_out_proj", tokens, m.hidden, v_local, s.element_bytes));
  add_residual_kernels("attn", m, s, t_res, e, k);
}

// The attention half of a layer (attn_norm ... attn_residual_add), appended to `k`.
void add_attention_kernels(const ModelSpec& m, const LayerShape& s, std::vector<KernelSpec>& k) {
  if (has_mla(m)) {
    add_mla_attention_kernels(m, s, k);
    return;
  }
  const std::int64_t tokens = local_tokens(s);
  const double e = d(s.element_bytes);
  const double t_res = residual_tokens(s);
  const std::int64_t heads_local = ceil_div(m.num_heads, s.tp);
  const std::int64_t q_local = heads_local * m.head_dim;
  // Megatron replicates KV heads on every rank when tp exceeds their number.
  const std::int64_t kv_local = ceil_div(m.num_kv_heads, s.tp) * m.head_dim;

  k.push_back(norm_kernel("attn_norm", m, s, t_res, e));
  k.push_back(te_gemm("qkv_proj", tokens, q_local + 2 * kv_local, m.hidden, s.element_bytes));
  if (m.position_embedding == PositionEmbedding::Rope) {
    k.push_back(rope_kernel(s, d(tokens) * d(q_local + kv_local), e));
  }
  if (s.gqa_repeat_kv && kv_local < q_local && !s.unfused_attention) {
    // K and V copied to every local query head before the attention kernel (s.gqa_repeat_kv:
    // torchtitan's repeat_kv of April 2024, `x[:, :, :, None, :].expand(...).reshape(...)`,
    // a copy): per token reads 2 kv and writes 2 q elements; backward sums the copies' gradients
    // back (reads 2 q, writes 2 kv; 2 (q - kv) additions). The attention kernel then reads the
    // copies; its time is set by its FLOPs, not by those bytes.
    const double bytes = 2.0 * (d(q_local) + d(kv_local)) * e;
    k.push_back(elementwise("repeat_kv", d(tokens), 0.0, bytes,
                            2.0 * (d(q_local) - d(kv_local)), bytes));
  }
  if (s.unfused_attention) {
    // Megatron-LM's unfused attention (megatron/model/transformer.py, ParallelAttention, e.g.
    // commit aed2f75e of April 2021): per micro-batch and local head, the full s x s scores
    // (no causal skip: baddbmm computes the masked half too), FusedScaleMaskSoftmax (one fused
    // kernel: reads the fp16 scores, writes the fp16 probabilities), torch.nn.Dropout on the
    // probabilities (writes the output and a 1-byte mask) and bmm with V. Every s x s tensor
    // goes through HBM. Backward: the two bmm's dgrad and wgrad, the dropout backward (reads
    // the gradient and the mask, writes the gradient) and the softmax backward (reads the
    // probabilities and their gradient, writes the scores' gradient).
    const std::int64_t q_rows = tokens / s.micro_batch;  // this rank's queries per sequence
    const std::int64_t batch = s.micro_batch * heads_local;
    const double scores = d(batch) * d(q_rows) * d(s.seq_len);
    KernelSpec qk = batched_gemm("attn_scores", batch, q_rows, s.seq_len, m.head_dim,
                                 s.element_bytes);
    qk.selective_recompute = 1.0;
    // Under CP the keys come round the ring for the scores, the values for the context
    // (KernelSpec::cp_kv_share): K and V are equally wide here (latent attention has no
    // unfused form).
    qk.cp_kv_share = 0.5;
    k.push_back(qk);
    if (s.unfused_softmax) {
      // Megatron-LM of 2019 (mpu/transformer.py at 93ab4be): `attention_scores /
      // math.sqrt(hn)`, then `torch.mul(attention_scores, ltor_mask) - 10000.0 * (1.0 -
      // ltor_mask)`, then torch.nn.Softmax, each a kernel reading and writing the scores (the
      // s x s mask broadcasts from cache). Backward: the division and the multiplication each
      // read and write the gradient; the subtraction passes it through (no kernel).
      k.push_back(elementwise("attn_scale", scores, 1.0, 2.0 * e, 1.0, 2.0 * e));
      k.back().selective_recompute = 1.0;
      k.push_back(elementwise("attn_mask_mul", scores, 1.0, 2.0 * e, 1.0, 2.0 * e));
      k.back().selective_recompute = 1.0;
      k.push_back(elementwise("attn_mask_sub", scores, 1.0, 2.0 * e, 0.0, 0.0));
      k.back().selective_recompute = 1.0;
    }
    k.push_back(elementwise("attn_softmax", scores, 5.0, 2.0 * e, 4.0, 3.0 * e));
    k.back().selective_recompute = 1.0;
    if (s.attention_dropout) {
      k.push_back(elementwise("attn_dropout", scores, 2.0, 2.0 * e + 1.0, 1.0, 2.0 * e + 1.0));
      k.back().selective_recompute = 1.0;
    }
    KernelSpec av = batched_gemm("attn_context", batch, q_rows, m.head_dim, s.seq_len,
                                 s.element_bytes);
    av.selective_recompute = 1.0;
    av.cp_kv_share = 0.5;
    k.push_back(av);
  } else
  {
    // QK^T and AV: 2 * 2 * tokens * keys * head_dim per head, each local query against all
    // seq_len keys of its sequence (with CP too). The causal kernel runs half
    // (FlashAttention-2 skips masked blocks). Backward: 5 matmuls against the forward's 2, so
    // 2.5x forward (Dao 2023, FlashAttention-2, §4.1 benchmark convention). A sliding window
    // leaves the share r = attention_window_fraction of the causal work (FlashAttention-2 skips
    // the blocks outside the window too, its window_size argument); both conventions take r,
    // so the model-FLOPs count stays twice the executed one.
    KernelSpec a;
    a.name = "attn_core";
    a.kind = KernelKind::Attention;
    const double full =
        4.0 * d(tokens) * d(s.seq_len) * d(q_local) * attention_window_fraction(m, s.seq_len);
    a.causal_discount = s.causal;
    a.head_dim = m.head_dim;
    a.attention_window = m.attention_window;
    a.forward_flops = Flops(s.causal ? full / 2.0 : full);
    a.backward_flops = a.forward_flops * 2.5;
    // Forward reads Q (tokens x q) and this rank's keys and values for the whole sequence
    // (micro_batch * seq_len x kv each), writes O and the fp32 log-sum-exp per head and token.
    // Backward reads Q, O, dO, K, V and the log-sum-exp, writes dQ, dK, dV and the fp32
    // rowsum(dO * O) it then reads back (FlashAttention-2 Algorithm 2).
    const double kv_rows = d(s.micro_batch) * d(s.seq_len);
    const double lse = 4.0 * d(tokens) * d(heads_local);
    a.forward_bytes = Bytes(e * (2.0 * d(tokens) * d(q_local) + 2.0 * kv_rows * d(kv_local)) + lse);
    a.backward_bytes =
        Bytes(e * (4.0 * d(tokens) * d(q_local) + 4.0 * kv_rows * d(kv_local)) + 3.0 * lse);
    a.selective_recompute = 1.0;
    a.cp_kv_share = 1.0;
    k.push_back(a);
  }
  k.push_back(te_gemm("attn_out_proj", tokens, m.hidden, q_local, s.element_bytes));
  add_residual_kernels("attn", m, s, t_res, e, k);
}

// The activation between an MLP's up and down projections over `elements` outputs: SwiGLU
// silu(gate) * up, 6 FLOPs per output; fused (Megatron-Core's bias_swiglu) it reads gate and up
// and writes the product, backward reads gate, up and dy and writes dgate and dup. Eager
// (s.eager_swiglu: torchtitan's FeedForward of April 2024, `self.w2(F.silu(self.w1(x)) *
// self.w3(x))`): silu reads gate and writes its output, the multiply reads both and writes the
// product, 5e; backward the multiply's two input gradients (reads 2, writes 1, each) and silu's
// (reads gate and its gradient, writes 1), 9e. GELU (tanh form, Hendrycks & Gimpel 2016) about
// 8 FLOPs, one kernel in every stack (reads x, writes y; backward reads x and dy, writes dx).
KernelSpec activation_kernel(std::string name, const ModelSpec& m, const LayerShape& s,
                             double elements, double e) {
  if (m.activation == Activation::SwiGlu) {
    if (s.eager_swiglu) return elementwise(std::move(name), elements, 6.0, 5.0 * e, 12.0, 9.0 * e);
    return elementwise(std::move(name), elements, 6.0, 3.0 * e, 12.0, 5.0 * e);
  }
  return elementwise(std::move(name), elements, 8.0, 2.0 * e, 16.0, 3.0 * e);
}

// The dense MLP of a layer (mlp_norm ... mlp_residual_add), appended to `k`.
void add_dense_mlp_kernels(const ModelSpec& m, const LayerShape& s, std::vector<KernelSpec>& k) {
  const std::int64_t tokens = local_tokens(s);
  const double e = d(s.element_bytes);
  const double t_res = residual_tokens(s);
  const std::int64_t f_local = ceil_div(m.ffn_hidden, s.tp);
  const bool gated = m.activation == Activation::SwiGlu;
  k.push_back(norm_kernel("mlp_norm", m, s, t_res, e));
  if (gated) {
    k.push_back(te_gemm("mlp_up_gate", tokens, 2 * f_local, m.hidden, s.element_bytes));
  } else {
    k.push_back(te_gemm("mlp_up", tokens, f_local, m.hidden, s.element_bytes));
  }
  k.push_back(activation_kernel("mlp_act", m, s, d(tokens) * d(f_local), e));
  k.push_back(te_gemm("mlp_down", tokens, m.hidden, f_local, s.element_bytes));
  add_residual_kernels("mlp", m, s, t_res, e, k);
}

// A grouped GEMM (Megatron-Core's GroupedMLP, cutlass grouped GEMM): `groups` GEMMs of
// [rows_g x k] * [k x n], one per local expert, with `rows` rows in all. FLOPs and bytes are
// those of the rows themselves (2 rows n k forward, 4 rows n k backward; each expert's weight
// read once); the shape for the tile/wave model is `groups` batched GEMMs of the mean
// ceil(rows / groups) rows, so small per-expert batches pay tile quantization
// (compute/kernel_cost.hpp gemm_efficiency, NVIDIA's Matrix Multiplication Background guide
// §3.1-3.2), as a grouped GEMM that runs the experts' tiles together does.
KernelSpec grouped_gemm(std::string name, std::int64_t groups, std::int64_t rows, std::int64_t n,
                        std::int64_t k, std::int64_t element_bytes) {
  KernelSpec g;
  g.name = std::move(name);
  g.kind = KernelKind::Gemm;
  g.forward_flops = Flops(2.0 * d(rows) * d(n) * d(k));
  g.backward_flops = g.forward_flops * 2.0;
  const double weights = d(groups) * d(k) * d(n);
  g.elements = GemmElements{.forward_read = d(rows) * d(k) + weights,
                            .forward_written = d(rows) * d(n),
                            .backward_read = 2.0 * d(rows) * d(n) + d(rows) * d(k) + weights,
                            .backward_written = d(rows) * d(k) + weights};
  g.forward_bytes =
      Bytes(d(element_bytes) * (d(rows) * d(k) + d(groups) * d(k) * d(n) + d(rows) * d(n)));
  g.backward_bytes = g.forward_bytes * 2.0;
  g.gemm = GemmShape{.m = ceil_div(rows, groups), .n = n, .k = k, .batch = groups};
  g.fp8_eligible = true;  // TEGroupedLinear (Megatron-Core TEGroupedMLP)
  g.expert_groups = groups;
  return g;
}

// The MoE block of a layer, appended to `k` (see moe_layer_kernels in kernels.hpp).
void add_moe_kernels(const ModelSpec& m, const LayerShape& s, std::vector<KernelSpec>& k) {
  const std::int64_t tokens = local_tokens(s);
  const double e = d(s.element_bytes);
  const double t_res = residual_tokens(s);
  const bool gated = m.activation == Activation::SwiGlu;
  const std::int64_t routed = tokens * m.num_experts_per_token;  // token copies sent to experts
  const std::int64_t local_experts = m.num_experts / s.ep;
  const std::int64_t fe_local = ceil_div(m.expert_ffn_hidden, s.tp);
  const double imbalance = expert_rank_imbalance(m, s.ep);
  k.push_back(norm_kernel("mlp_norm", m, s, t_res, e));
  // The tokens this rank routes: its sequence-parallel share under the all-to-all dispatcher
  // (moe_routes_tp_shares), else every token of the micro-batch.
  const std::int64_t own = moe_routed_tokens(s);
  const std::int64_t own_routed = own * m.num_experts_per_token;
  // The router, hidden x num_experts, replicated on TP ranks.
  k.push_back(gemm("moe_router", own, m.num_experts, m.hidden, s.element_bytes));
  // Softmax (or sigmoid) and top-k over the scores in fp32: about 5 FLOPs per score; reads the
  // logits, writes the fp32 probabilities. Backward: 3 FLOPs, reads the probabilities and their
  // gradient, writes the logits' gradient.
  k.push_back(elementwise("moe_topk", d(own) * d(m.num_experts), 5.0, e + 4.0, 3.0, 8.0 + e));
  // Permute: each token's row copied once per chosen expert, grouped by expert (Megatron-Core
  // moe_utils.permute): reads and writes a row per copy. Backward sums the copies' gradients.
  k.push_back(elementwise("moe_permute", d(own_routed) * d(m.hidden), 0.0, 2.0 * e, 1.0, 2.0 * e));
  // Expert GEMMs on this EP rank: every rank sends and receives `routed` rows in balance
  // (tokens x k / num_experts per expert from each of the ep ranks, for num_experts / ep local
  // experts: tokens x k in all), so a rank's expert FLOPs do not depend on ep; only the rows
  // per expert (tokens x k x ep / num_experts) grow with it. Where moe_routes_tp_shares, a rank
  // receives a tp-th of them and the TP gather after the all-to-all brings the rest.
  KernelSpec up = grouped_gemm(gated ? "expert_up_gate" : "expert_up", local_experts, routed,
                               (gated ? 2 : 1) * fe_local, m.hidden, s.element_bytes);
  KernelSpec act = activation_kernel("expert_act", m, s, d(routed) * d(fe_local), e);
  KernelSpec down =
      grouped_gemm("expert_down", local_experts, routed, m.hidden, fe_local, s.element_bytes);
  for (KernelSpec* x : {&up, &act, &down}) {
    x->load_imbalance = imbalance;
    k.push_back(*x);
  }
  // Unpermute: each token's k expert outputs scaled by their router probabilities and summed
  // (a multiply-add per element); reads the copies, writes the token rows. Backward reads the
  // gradient and the copies, writes the copies' gradients (and the probabilities').
  k.push_back(
      elementwise("moe_unpermute", d(own_routed) * d(m.hidden), 2.0, 2.0 * e, 2.0, 3.0 * e));
  if (m.num_shared_experts > 0) {
    // Shared experts: a dense MLP of num_shared_experts x their width, split over TP as the
    // dense MLP (DeepSeekMoE §3.2; Megatron-Core SharedExpertMLP).
    const std::int64_t fs_local =
        ceil_div(m.num_shared_experts * m.shared_expert_ffn_hidden, s.tp);
    k.push_back(te_gemm(gated ? "shared_expert_up_gate" : "shared_expert_up", tokens,
                        (gated ? 2 : 1) * fs_local, m.hidden, s.element_bytes));
    k.push_back(activation_kernel("shared_expert_act", m, s, d(tokens) * d(fs_local), e));
    k.push_back(te_gemm("shared_expert_down", tokens, m.hidden, fs_local, s.element_bytes));
  }
  add_residual_kernels("mlp", m, s, t_res, e, k);
}

}  // namespace

std::vector<double> weight_tensor_elements(const std::vector<KernelSpec>& layer,
                                           std::int64_t min_elements) {
  std::vector<double> out;
  for (const auto& k : layer) {
    if (k.kind != KernelKind::Gemm || k.name == "attn_scores" || k.name == "attn_context") {
      continue;
    }
    const std::int64_t elements = k.gemm.k * k.gemm.n;
    if (elements >= min_elements) out.push_back(static_cast<double>(elements));
  }
  return out;
}

namespace {

// Sets each kernel's selective_recompute by the shape's policy; the kernels come with the
// attention core's (AttentionCore).
void apply_selective_policy(std::vector<KernelSpec>& k, const ModelSpec& m, const LayerShape& s) {
  switch (s.selective) {
    case SelectiveRecompute::AttentionCore:
      return;
    case SelectiveRecompute::OpLevel:
      apply_op_level_selective(k, m, s);
      return;
    case SelectiveRecompute::MlaUpProj:
      apply_mla_up_proj_selective(k, m);
      return;
  }
}

}  // namespace

std::vector<KernelSpec> layer_kernels(const ModelSpec& m, const LayerShape& s) {
  std::vector<KernelSpec> k;
  add_attention_kernels(m, s, k);
  add_dense_mlp_kernels(m, s, k);
  apply_selective_policy(k, m, s);
  return k;
}

std::vector<KernelSpec> moe_layer_kernels(const ModelSpec& m, const LayerShape& s) {
  std::vector<KernelSpec> k;
  add_attention_kernels(m, s, k);
  add_moe_kernels(m, s, k);
  apply_selective_policy(k, m, s);
  return k;
}

void apply_op_level_selective(std::vector<KernelSpec>& layer, const ModelSpec& m,
                              const LayerShape& s) {
  const double q = d(ceil_div(m.num_heads, s.tp) * m.head_dim);
  const double kv = d(ceil_div(m.num_kv_heads, s.tp) * m.head_dim);
  std::int64_t mm_calls = 0;
  // The share of `widths` (one torch.mm each, in call order) that the policy recomputes.
  auto recomputed = [&mm_calls](std::initializer_list<double> widths) {
    double total = 0.0;
    double again = 0.0;
    for (const double w : widths) {
      total += w;
      if (++mm_calls % 2 == 0) again += w;
    }
    return total > 0.0 ? again / total : 0.0;
  };
  for (KernelSpec& k : layer) {
    if (k.kind == KernelKind::Attention) {
      k.selective_recompute = 0.0;  // SDPA: saved
    } else if (k.kind != KernelKind::Gemm || k.expert_groups > 0 || k.gemm.batch > 1) {
      k.selective_recompute = 1.0;  // not an mm: recomputed
    } else if (k.name == "qkv_proj") {
      k.selective_recompute = recomputed({q, kv, kv});
    } else if (k.name == "mlp_up_gate" || k.name == "shared_expert_up_gate") {
      k.selective_recompute = recomputed({1.0, 1.0});
    } else {
      k.selective_recompute = recomputed({1.0});
    }
  }
}

void apply_mla_up_proj_selective(std::vector<KernelSpec>& layer, const ModelSpec& m) {
  for (KernelSpec& k : layer) {
    // add_mla_attention_kernels names the checkpointed kernels: mla_q_up (q_proj without a
    // query LoRA), mla_kv_up and the one RoPE kernel of the layer.
    const bool up =
        k.name == "mla_q_up" || k.name == "q_proj" || k.name == "mla_kv_up" || k.name == "rope";
    k.selective_recompute = has_mla(m) && up ? 1.0 : 0.0;
  }
}

std::int64_t dense_layer_parameters_per_rank(const ModelSpec& m, std::int64_t tp) {
  if (!has_mla(m)) return layer_parameters_per_tp_rank(m, tp);
  // Latent attention (the loaders refuse biases with it): q_a and kv_a replicated, q_b, kv_b
  // column-parallel over heads, o row-parallel; norms (two of the layer, two latent) replicated.
  const std::int64_t h = m.hidden;
  const std::int64_t heads_local = ceil_div(m.num_heads, tp);
  const std::int64_t d_qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
  const std::int64_t q = m.q_lora_rank > 0
                             ? h * m.q_lora_rank + m.q_lora_rank * heads_local * d_qk
                             : h * heads_local * d_qk;
  const std::int64_t kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) +
                          m.kv_lora_rank * heads_local * (m.qk_nope_head_dim + m.v_head_dim);
  const std::int64_t o = heads_local * m.v_head_dim * h;
  const std::int64_t norms = 2 * norm_parameters(m) + m.q_lora_rank + m.kv_lora_rank;
  const bool gated = m.activation == Activation::SwiGlu;
  const std::int64_t mlp = (gated ? 3 : 2) * h * ceil_div(m.ffn_hidden, tp);
  return q + kv + o + norms + mlp;
}

LayerRankParameters moe_layer_parameters_per_rank(const ModelSpec& m, std::int64_t tp,
                                                  std::int64_t ep) {
  const std::int64_t h = m.hidden;
  const bool gated = m.activation == Activation::SwiGlu;
  // An MLP of inner size f split over TP: gate/up column-parallel (weights and biases / tp),
  // down row-parallel (weights / tp, bias replicated).
  auto mlp = [&](std::int64_t f) {
    const std::int64_t f_local = ceil_div(f, tp);
    std::int64_t n = (gated ? 3 : 2) * h * f_local;
    if (m.mlp_bias) n += (gated ? 2 : 1) * f_local + h;
    return n;
  };
  // The dense layer's count less its MLP: attention, norms (counts.hpp).
  const std::int64_t attention_and_norms =
      dense_layer_parameters_per_rank(m, tp) - mlp(m.ffn_hidden);
  // The shared experts split over TP as one MLP of their summed width, as their kernels and
  // memory take them (moe_layer_kernels); per expert, two of width 100 at tp 8 counted 26
  // columns a rank where the kernels run 25. Their down projections' biases are one per expert
  // (counts.hpp). One shared expert: mlp(shared_expert_ffn_hidden) exactly.
  const std::int64_t shared_local = ceil_div(m.num_shared_experts * m.shared_expert_ffn_hidden, tp);
  std::int64_t shared = (gated ? 3 : 2) * h * shared_local;
  if (m.mlp_bias) shared += (gated ? 2 : 1) * shared_local + m.num_shared_experts * h;
  LayerRankParameters out;
  out.dense = attention_and_norms + shared + h * m.num_experts + (m.shared_expert_gate ? h : 0) +
              (m.router_bias ? m.num_experts : 0);
  out.expert = (m.num_experts / ep) * mlp(m.expert_ffn_hidden);
  return out;
}

std::vector<KernelSpec> embedding_kernels(const ModelSpec& m, const LayerShape& s) {
  const double rows = d(local_tokens(s)) * d(m.hidden);
  const double e = d(s.element_bytes);
  // Lookup: read each token's row and write it (vocab-parallel ranks write zeros for rows they
  // do not own, then all-reduce). Backward scatter-adds dY into the embedding gradient: reads dY
  // and reads and writes the touched rows. One add per element.
  double fwd_flops = 0.0;
  double fwd_bytes = 2.0 * e;
  double bwd_flops = 1.0;
  double bwd_bytes = 3.0 * e;
  if (m.position_embedding == PositionEmbedding::Learned) {
    // Adding the position rows: reads two, writes one; backward accumulates their gradient.
    fwd_flops += 1.0;
    fwd_bytes += 3.0 * e;
    bwd_flops += 1.0;
    bwd_bytes += 3.0 * e;
  }
  return {elementwise("embedding", rows, fwd_flops, fwd_bytes, bwd_flops, bwd_bytes)};
}

std::vector<KernelSpec> mtp_kernels(const ModelSpec& m, const LayerShape& s) {
  const double e = d(s.element_bytes);
  const double t_res = residual_tokens(s);
  std::vector<KernelSpec> k;
  k.push_back(norm_kernel("mtp_enorm", m, s, t_res, e));
  k.push_back(norm_kernel("mtp_hnorm", m, s, t_res, e));
  // Reads both halves and writes them side by side: 2e bytes per element of the 2h row.
  k.push_back(elementwise("mtp_concat", t_res * 2.0 * d(m.hidden), 0.0, 2.0 * e, 0.0, 0.0));
  k.push_back(te_gemm("mtp_eh_proj", local_tokens(s), ceil_div(m.hidden, s.tp), 2 * m.hidden,
                      s.element_bytes));
  return k;
}

std::vector<KernelSpec> head_kernels(const ModelSpec& m, const LayerShape& s) {
  const std::int64_t tokens = local_tokens(s);
  const double e = d(s.element_bytes);
  const std::int64_t vocab_local = ceil_div(m.vocab, s.tp);
  std::vector<KernelSpec> k;
  k.push_back(norm_kernel("final_norm", m, s, residual_tokens(s), e));
  k.push_back(gemm("lm_head", tokens, vocab_local, m.hidden, s.element_bytes));
  // Megatron's vocab-parallel cross entropy (fp32): max, subtract, exp, sum, normalise: about
  // 5 FLOPs per logit; a fused kernel reads the logits and writes the fp32 softmax it keeps for
  // backward. Backward subtracts the one-hot target and scales (2 FLOPs), reading the fp32
  // softmax and writing the logits' gradient.
  if (s.unfused_cross_entropy) {
    // Megatron's vocab_parallel_cross_entropy (core_r0.8.0 cross_entropy.py), op by op over the
    // logits: .float() (reads e, writes 4), max (reads 4), in-place subtract, exp and divide
    // (reads and writes 4 each), sum (reads 4): e + 36 bytes per logit. Backward: grad_input
    // .mul_(grad_output) in place (8) and autograd's cast of the fp32 gradient back to the
    // logits' dtype (reads 4, writes e): 12 + e.
    k.push_back(
        elementwise("cross_entropy", d(tokens) * d(vocab_local), 5.0, e + 36.0, 2.0, 12.0 + e));
  } else if (s.fp32_logits_cross_entropy) {
    // torchtitan of April 2024: `self.output(h).float()` in the model, then F.cross_entropy
    // (log_softmax, nll_loss) in train.py. Forward: the cast to fp32 (c = fp32_cast_bytes) and
    // log_softmax (reads the fp32 logits, writes the fp32 log-probabilities it keeps for
    // backward: 8, counting each pass over the row once; nll_loss reads one per row). Backward:
    // nll_loss fills the fp32 gradient with zeros (writes 4), log_softmax reads it and its
    // output and writes the logits' gradient (12), and the cast back (c): c + 8 and c + 16.
    const double c = fp32_cast_bytes(e);
    k.push_back(
        elementwise("cross_entropy", d(tokens) * d(vocab_local), 5.0, c + 8.0, 2.0, c + 16.0));
  } else {
    k.push_back(
        elementwise("cross_entropy", d(tokens) * d(vocab_local), 5.0, e + 4.0, 2.0, 4.0 + e));
  }
  return k;
}

KernelSpec adamw_step_kernel(std::int64_t num_params, std::int64_t element_bytes,
                             double master_bytes, double moment_bytes) {
  // Per parameter, torch.optim.AdamW's update: m (3 FLOPs), v (4), bias corrections (2),
  // sqrt, eps, divide (3), decoupled weight decay (2), step (2): 16.
  const double bytes = element_bytes >= 4
                           ? 12.0 + 2.0 * moment_bytes
                           : 2.0 * d(element_bytes) + 2.0 * (master_bytes + moment_bytes);
  return elementwise("optimizer_step", d(num_params), 16.0, bytes, 0.0, 0.0);
}

KernelSpec sgd_step_kernel(std::int64_t num_params, std::int64_t element_bytes) {
  // buf = mu * buf + g; p -= lr * buf: 4 FLOPs per parameter. fp32: reads g, p, buf (12),
  // writes p, buf (8). Mixed precision: reads g (e), master, buf (8); writes master, buf (8)
  // and the working copy (e).
  const double bytes = element_bytes >= 4 ? 20.0 : 16.0 + 2.0 * d(element_bytes);
  return elementwise("optimizer_step", d(num_params), 4.0, bytes, 0.0, 0.0);
}

Flops selective_recompute_flops(const std::vector<KernelSpec>& layer) {
  Flops f;
  for (const auto& k : layer) {
    f += k.forward_flops * k.selective_recompute;
  }
  return f;
}

Flops full_recompute_flops(const std::vector<KernelSpec>& layer) {
  return total_forward_flops(layer);
}

Flops total_forward_flops(const std::vector<KernelSpec>& kernels) {
  Flops f;
  for (const auto& k : kernels) f += k.forward_flops;
  return f;
}

Flops total_backward_flops(const std::vector<KernelSpec>& kernels) {
  Flops f;
  for (const auto& k : kernels) f += k.backward_flops;
  return f;
}

}  // namespace trainsim::model
