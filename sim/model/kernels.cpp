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
  g.forward_bytes = Bytes(d(element_bytes) * (d(m) * d(k) + d(k) * d(n) + d(m) * d(n)));
  g.backward_bytes = g.forward_bytes * 2.0;
  g.gemm = GemmShape{.m = m, .n = n, .k = k};
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

// A pre-norm over `tokens` rows of `hidden`. RMSNorm: square, sum, scale, weight (4 FLOPs per
// element); LayerNorm adds the mean, subtraction and bias (7). Forward reads x and writes y;
// backward reads x and dy and writes dx (weight gradients are reductions of negligible size).
KernelSpec norm_kernel(std::string name, const ModelSpec& m, double tokens, double e) {
  const double flops = m.norm == Norm::RmsNorm ? 4.0 : 7.0;
  return elementwise(std::move(name), tokens * d(m.hidden), flops, 2.0 * e, 2.0 * flops, 3.0 * e);
}

// x + branch: reads two, writes one, one add per element. Backward: the residual gradient is
// accumulated (reads two, writes one).
KernelSpec residual_kernel(std::string name, const ModelSpec& m, double tokens, double e) {
  return elementwise(std::move(name), tokens * d(m.hidden), 1.0, 3.0 * e, 1.0, 3.0 * e);
}

}  // namespace

std::int64_t local_tokens(const LayerShape& shape) {
  return shape.micro_batch * shape.seq_len / shape.cp;
}

std::vector<KernelSpec> layer_kernels(const ModelSpec& m, const LayerShape& s) {
  const std::int64_t tokens = local_tokens(s);
  const double e = d(s.element_bytes);
  const double t_res = residual_tokens(s);
  const std::int64_t heads_local = ceil_div(m.num_heads, s.tp);
  const std::int64_t q_local = heads_local * m.head_dim;
  // Megatron replicates KV heads on every rank when tp exceeds their number.
  const std::int64_t kv_local = ceil_div(m.num_kv_heads, s.tp) * m.head_dim;
  const std::int64_t f_local = ceil_div(m.ffn_hidden, s.tp);
  const bool gated = m.activation == Activation::SwiGlu;

  std::vector<KernelSpec> k;
  k.push_back(norm_kernel("attn_norm", m, t_res, e));
  k.push_back(gemm("qkv_proj", tokens, q_local + 2 * kv_local, m.hidden, s.element_bytes));
  if (m.position_embedding == PositionEmbedding::Rope) {
    // RoPE (Su et al. 2021) on Q and K: x * cos + rotate(x) * sin, 3 FLOPs per element; reads
    // and writes each element (the cos/sin tables are small and cached).
    k.push_back(elementwise("rope", d(tokens) * d(q_local + kv_local), 3.0, 2.0 * e, 3.0, 2.0 * e));
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
    qk.selective_recompute = true;
    k.push_back(qk);
    k.push_back(elementwise("attn_softmax", scores, 5.0, 2.0 * e, 4.0, 3.0 * e));
    k.back().selective_recompute = true;
    if (s.attention_dropout) {
      k.push_back(elementwise("attn_dropout", scores, 2.0, 2.0 * e + 1.0, 1.0, 2.0 * e + 1.0));
      k.back().selective_recompute = true;
    }
    KernelSpec av = batched_gemm("attn_context", batch, q_rows, m.head_dim, s.seq_len,
                                 s.element_bytes);
    av.selective_recompute = true;
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
    a.selective_recompute = true;
    k.push_back(a);
  }
  k.push_back(gemm("attn_out_proj", tokens, m.hidden, q_local, s.element_bytes));
  k.push_back(residual_kernel("attn_residual_add", m, t_res, e));
  k.push_back(norm_kernel("mlp_norm", m, t_res, e));
  if (gated) {
    k.push_back(gemm("mlp_up_gate", tokens, 2 * f_local, m.hidden, s.element_bytes));
    // silu(gate) * up: sigmoid (4), two multiplies: 6 FLOPs per output. Forward reads gate and
    // up, writes the product; backward reads gate, up and dy, writes dgate and dup (a fused
    // kernel such as Megatron-core's bias_swiglu).
    k.push_back(elementwise("mlp_act", d(tokens) * d(f_local), 6.0, 3.0 * e, 12.0, 5.0 * e));
  } else {
    k.push_back(gemm("mlp_up", tokens, f_local, m.hidden, s.element_bytes));
    // GELU, tanh form (Hendrycks & Gimpel 2016): about 8 FLOPs per element. Reads x, writes y;
    // backward reads x and dy, writes dx.
    k.push_back(elementwise("mlp_act", d(tokens) * d(f_local), 8.0, 2.0 * e, 16.0, 3.0 * e));
  }
  k.push_back(gemm("mlp_down", tokens, m.hidden, f_local, s.element_bytes));
  k.push_back(residual_kernel("mlp_residual_add", m, t_res, e));
  return k;
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

std::vector<KernelSpec> head_kernels(const ModelSpec& m, const LayerShape& s) {
  const std::int64_t tokens = local_tokens(s);
  const double e = d(s.element_bytes);
  const std::int64_t vocab_local = ceil_div(m.vocab, s.tp);
  std::vector<KernelSpec> k;
  k.push_back(norm_kernel("final_norm", m, residual_tokens(s), e));
  k.push_back(gemm("lm_head", tokens, vocab_local, m.hidden, s.element_bytes));
  // Megatron's vocab-parallel cross entropy (fp32): max, subtract, exp, sum, normalise: about
  // 5 FLOPs per logit; a fused kernel reads the logits and writes the fp32 softmax it keeps for
  // backward. Backward subtracts the one-hot target and scales (2 FLOPs), reading the fp32
  // softmax and writing the logits' gradient.
  k.push_back(elementwise("cross_entropy", d(tokens) * d(vocab_local), 5.0, e + 4.0, 2.0, 4.0 + e));
  return k;
}

KernelSpec adamw_step_kernel(std::int64_t num_params, std::int64_t element_bytes) {
  // Per parameter, torch.optim.AdamW's update: m (3 FLOPs), v (4), bias corrections (2),
  // sqrt, eps, divide (3), decoupled weight decay (2), step (2): 16.
  const double bytes = element_bytes >= 4 ? 28.0 : 24.0 + 2.0 * d(element_bytes);
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
    if (k.selective_recompute) f += k.forward_flops;
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
