#include "trainsim/model/counts.hpp"

#include <algorithm>

namespace trainsim::model {

std::int64_t query_width(const ModelSpec& m) { return m.num_heads * m.head_dim; }
std::int64_t kv_width(const ModelSpec& m) { return m.num_kv_heads * m.head_dim; }

std::int64_t norm_parameters(const ModelSpec& m) {
  // RMSNorm has a scale only (Zhang & Sennrich 2019); LayerNorm a scale and a shift (Ba et al.
  // 2016); OLMo's LayerNorm neither (Groeneveld et al. 2024, OLMo §2.1: "non-parametric layer
  // norm", no affine transformation).
  switch (m.norm) {
    case Norm::RmsNorm:
      return m.hidden;
    case Norm::LayerNorm:
      return 2 * m.hidden;
    case Norm::NonParametricLayerNorm:
      return 0;
  }
  return 0;
}

namespace {

// Multi-head latent attention's weights, as transformers' DeepseekV3Attention builds them
// (DeepSeek-V2 §2.1.2 eqs. 9-14; DeepSeek-V3 §2.1.1): with H heads, d_qk = qk_nope + qk_rope,
//   queries   q_a_proj hidden x q_lora_rank and q_b_proj q_lora_rank x H d_qk
//             (or q_proj hidden x H d_qk when q_lora_rank is 0),
//   keys and values  kv_a_proj_with_mqa hidden x (kv_lora_rank + qk_rope) (the latent and the
//             shared rotary key), kv_b_proj kv_lora_rank x H (qk_nope + v_head_dim),
//   output    o_proj H v_head_dim x hidden.
std::int64_t mla_weights(const ModelSpec& m) {
  const std::int64_t h = m.hidden;
  const std::int64_t heads = m.num_heads;
  const std::int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
  const std::int64_t q =
      m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * heads * qk : h * heads * qk;
  const std::int64_t kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) +
                          m.kv_lora_rank * heads * (m.qk_nope_head_dim + m.v_head_dim);
  return q + kv + heads * m.v_head_dim * h;
}

// MLA's RMSNorms on the latents: q_a_layernorm (q_lora_rank) and kv_a_layernorm (kv_lora_rank).
std::int64_t mla_norms(const ModelSpec& m) { return m.q_lora_rank + m.kv_lora_rank; }

// The attention part of a layer, shared by both kinds.
void add_attention(const ModelSpec& m, LayerParameterCounts& c) {
  const std::int64_t h = m.hidden;
  if (has_mla(m)) {
    // The loaders refuse biases with MLA (attention_bias is not modelled there).
    c.attention_weights = mla_weights(m);
    c.norms += mla_norms(m);
    return;
  }
  const std::int64_t q = query_width(m);
  const std::int64_t kv = kv_width(m);
  // Q: h x q, K and V: h x kv each, O: q x h.
  c.attention_weights = h * q + 2 * h * kv + q * h;
  // A bias has one element per output feature of its projection.
  if (m.qkv_bias) c.attention_biases += q + 2 * kv;
  if (m.out_proj_bias) c.attention_biases += h;
}

// Weights and biases of `count` MLPs of inner size f (SwiGLU: gate and up h x f, down f x h,
// Shazeer 2020; GELU: up h x f, down f x h).
void add_mlps(const ModelSpec& m, std::int64_t count, std::int64_t f, LayerParameterCounts& c) {
  const bool gated = m.activation == Activation::SwiGlu;
  c.mlp_weights += count * (gated ? 3 : 2) * m.hidden * f;
  if (m.mlp_bias) c.mlp_biases += count * ((gated ? 2 : 1) * f + m.hidden);
}

}  // namespace

LayerParameterCounts layer_parameter_counts(const ModelSpec& m) {
  return layer_parameter_counts(m, LayerKind::Dense, Experts::All);
}

LayerParameterCounts layer_parameter_counts(const ModelSpec& m, LayerKind kind, Experts experts) {
  LayerParameterCounts c;
  add_attention(m, c);
  if (kind == LayerKind::Dense) {
    add_mlps(m, 1, m.ffn_hidden, c);
  } else {
    // DeepSeekMoE (arXiv:2401.06066 §3): routed experts, of which a token uses the top k, and
    // shared experts every token uses; the router scores all routed experts for every token.
    const std::int64_t routed = experts == Experts::All ? m.num_experts : m.num_experts_per_token;
    add_mlps(m, routed, m.expert_ffn_hidden, c);
    add_mlps(m, m.num_shared_experts, m.shared_expert_ffn_hidden, c);
    c.router_weights = m.hidden * m.num_experts + (m.shared_expert_gate ? m.hidden : 0);
    c.router_biases = m.router_bias ? m.num_experts : 0;
  }
  c.norms += 2 * norm_parameters(m);
  return c;
}

std::int64_t layer_parameters(const ModelSpec& m) { return layer_parameter_counts(m).total(); }

std::int64_t num_moe_layers(const ModelSpec& m) {
  return is_moe(m) ? m.num_layers - m.num_dense_layers : 0;
}

namespace {

// Parameters of every layer, with all experts or a token's.
std::int64_t all_layers(const ModelSpec& m, Experts experts) {
  if (!is_moe(m)) return m.num_layers * layer_parameters(m);
  return m.num_dense_layers * layer_parameters(m) +
         num_moe_layers(m) * layer_parameter_counts(m, LayerKind::Moe, experts).total();
}

}  // namespace

std::int64_t mtp_extra_parameters(const ModelSpec& m) {
  return 2 * m.hidden * m.hidden + 3 * norm_parameters(m);
}

std::int64_t mtp_parameters(const ModelSpec& m, Experts experts) {
  if (m.mtp_layers == 0) return 0;
  const std::int64_t layer = layer_parameter_counts(m, mtp_layer_kind(m), experts).total();
  return m.mtp_layers * (layer + mtp_extra_parameters(m));
}

std::int64_t mtp_extra_parameters_per_tp_rank(const ModelSpec& m, std::int64_t tp) {
  return 2 * m.hidden * ceil_div(m.hidden, tp) + 3 * norm_parameters(m);
}

std::int64_t embedding_parameters(const ModelSpec& m) {
  const std::int64_t positions =
      m.position_embedding == PositionEmbedding::Learned ? m.max_positions * m.hidden : 0;
  return m.vocab * m.hidden + positions;
}

std::int64_t lm_head_parameters(const ModelSpec& m) {
  return m.tied_embeddings ? 0 : m.vocab * m.hidden;
}

std::int64_t final_norm_parameters(const ModelSpec& m) { return norm_parameters(m); }

std::int64_t num_parameters(const ModelSpec& m) {
  return all_layers(m, Experts::All) + mtp_parameters(m, Experts::All) + embedding_parameters(m) +
         lm_head_parameters(m) + final_norm_parameters(m);
}

std::int64_t num_active_parameters(const ModelSpec& m) {
  return all_layers(m, Experts::Active) + mtp_parameters(m, Experts::Active) +
         embedding_parameters(m) + lm_head_parameters(m) + final_norm_parameters(m);
}

std::int64_t matmul_parameters(const ModelSpec& m) {
  // Every layer (a token's experts), the final norm and the LM head (vocab * hidden, tied or
  // not), and per multi-token-prediction module its active parameters and the LM head again.
  return all_layers(m, Experts::Active) + final_norm_parameters(m) + m.vocab * m.hidden +
         mtp_parameters(m, Experts::Active) + m.mtp_layers * m.vocab * m.hidden;
}

double attention_window_fraction(const ModelSpec& m, std::int64_t seq_len) {
  const std::int64_t w = m.attention_window;
  if (w <= 0 || w >= seq_len) return 1.0;
  // In double: T (T + 1) / 2 passes 2^53 only beyond 2^26 tokens, where a relative error of
  // 1e-16 is still immaterial.
  const auto t = static_cast<double>(seq_len);
  const auto wd = static_cast<double>(w);
  return (wd * (wd + 1.0) / 2.0 + (t - wd) * wd) / (t * (t + 1.0) / 2.0);
}

bool layer_windowed(const ModelSpec& m, std::int64_t layer) {
  if (m.attention_window <= 0) return false;
  return m.window_layers.empty() ||
         std::binary_search(m.window_layers.begin(), m.window_layers.end(), layer);
}

bool mixed_attention_window(const ModelSpec& m) {
  return m.attention_window > 0 && !m.window_layers.empty();
}

ModelSpec without_attention_window(const ModelSpec& m) {
  ModelSpec full = m;
  full.attention_window = 0;
  full.window_layers.clear();
  return full;
}

Flops attention_model_flops_per_token(const ModelSpec& m, std::int64_t seq_len) {
  // PaLM Appendix B's 12 * L * H * Q * T with H heads of size Q and sequence length T, times
  // the sliding window's share r of the attention work.
  // In double: 12 * L * H * Q * T reaches 2^68 within the loaders' bounds (2^16 layers, an
  // attention width of 2^24, 2^24 tokens), past int64; N <= 2^50 keeps 6N exact.
  // Latent attention: 6 * L * H * (d_qk + d_v) * T * r, the same count with QK^T and AV of
  // different head sizes (the dense form is kept as it was, for identical results).
  // A multi-token-prediction module's layer attends as a decoder layer does.
  const auto layers = static_cast<double>(m.num_layers + m.mtp_layers);
  if (mixed_attention_window(m)) {
    // W windowed layers at the window's share r, the F others (multi-token-prediction modules
    // included) in full.
    const auto windowed = static_cast<double>(m.window_layers.size());
    const double r = attention_window_fraction(m, seq_len);
    const double per_layer =
        has_mla(m) ? 6.0 * static_cast<double>(m.num_heads * (m.head_dim + m.v_head_dim))
                   : 12.0 * static_cast<double>(query_width(m));
    return Flops(per_layer * static_cast<double>(seq_len) * (windowed * r + (layers - windowed)));
  }
  const double attention =
      has_mla(m) ? 6.0 * layers * static_cast<double>(m.num_heads * (m.head_dim + m.v_head_dim)) *
                       static_cast<double>(seq_len) * attention_window_fraction(m, seq_len)
                 : 12.0 * layers * static_cast<double>(query_width(m)) *
                       static_cast<double>(seq_len) * attention_window_fraction(m, seq_len);
  return Flops(attention);
}

Flops model_flops_per_token(const ModelSpec& m, std::int64_t seq_len) {
  // PaLM Appendix B: 6N + the attention term.
  return Flops(6.0 * static_cast<double>(matmul_parameters(m)) +
               attention_model_flops_per_token(m, seq_len).value());
}

Flops megatron_flops_per_iteration(const ModelSpec& m, std::int64_t batch, std::int64_t seq_len) {
  // Narayanan et al. 2021 eq. 3: 96 B s l h^2 (1 + s / 6h + V / 16lh).
  const auto b = static_cast<double>(batch);
  const auto s = static_cast<double>(seq_len);
  const auto l = static_cast<double>(m.num_layers);
  const auto h = static_cast<double>(m.hidden);
  const auto v = static_cast<double>(m.vocab);
  return Flops(96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h)));
}

std::int64_t layer_parameters_per_tp_rank(const ModelSpec& m, std::int64_t tp) {
  const std::int64_t h = m.hidden;
  const std::int64_t q_local = ceil_div(m.num_heads, tp) * m.head_dim;
  // Megatron replicates KV heads when tp exceeds their number (GQA with tp > kv_heads).
  const std::int64_t kv_local = ceil_div(m.num_kv_heads, tp) * m.head_dim;
  const std::int64_t f_local = ceil_div(m.ffn_hidden, tp);
  const bool gated = m.activation == Activation::SwiGlu;
  std::int64_t n = h * q_local + 2 * h * kv_local + q_local * h;  // column Q, K, V; row O
  n += (gated ? 3 : 2) * h * f_local;                             // column gate/up; row down
  if (m.qkv_bias) n += q_local + 2 * kv_local;                    // column-parallel: split
  if (m.out_proj_bias) n += h;                                    // row-parallel: replicated
  if (m.mlp_bias) n += (gated ? 2 : 1) * f_local + h;  // column biases split; down's replicated
  return n + 2 * norm_parameters(m);
}

std::int64_t embedding_parameters_per_tp_rank(const ModelSpec& m, std::int64_t tp) {
  const std::int64_t positions =
      m.position_embedding == PositionEmbedding::Learned ? m.max_positions * m.hidden : 0;
  return ceil_div(m.vocab, tp) * m.hidden + positions;
}

std::int64_t lm_head_parameters_per_tp_rank(const ModelSpec& m, std::int64_t tp, LmHeadCopy copy) {
  if (m.tied_embeddings && copy == LmHeadCopy::SharedWithEmbedding) return 0;
  return ceil_div(m.vocab, tp) * m.hidden;
}

std::int64_t last_stage_parameters_per_tp_rank(const ModelSpec& m, std::int64_t tp,
                                               std::int64_t pp) {
  std::int64_t n = final_norm_parameters(m);
  if (m.mtp_layers > 0 && pp > 1) {
    // The embedding copy; an untied LM head beside it.
    n += embedding_parameters_per_tp_rank(m, tp) +
         lm_head_parameters_per_tp_rank(m, tp, LmHeadCopy::SharedWithEmbedding);
  } else {
    n += lm_head_parameters_per_tp_rank(
        m, tp, pp > 1 ? LmHeadCopy::Separate : LmHeadCopy::SharedWithEmbedding);
  }
  return n + m.mtp_layers * mtp_extra_parameters_per_tp_rank(m, tp);
}

}  // namespace trainsim::model
