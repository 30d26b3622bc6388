#include "trainsim/model/counts.hpp"

namespace trainsim::model {

std::int64_t query_width(const ModelSpec& m) { return m.num_heads * m.head_dim; }
std::int64_t kv_width(const ModelSpec& m) { return m.num_kv_heads * m.head_dim; }

std::int64_t norm_parameters(const ModelSpec& m) {
  // RMSNorm has a scale only (Zhang & Sennrich 2019); LayerNorm a scale and a shift (Ba et al.
  // 2016).
  return m.norm == Norm::RmsNorm ? m.hidden : 2 * m.hidden;
}

LayerParameterCounts layer_parameter_counts(const ModelSpec& m) {
  const std::int64_t h = m.hidden;
  const std::int64_t q = query_width(m);
  const std::int64_t kv = kv_width(m);
  const std::int64_t f = m.ffn_hidden;
  const bool gated = m.activation == Activation::SwiGlu;
  LayerParameterCounts c;
  // Q: h x q, K and V: h x kv each, O: q x h.
  c.attention_weights = h * q + 2 * h * kv + q * h;
  // SwiGLU (Shazeer 2020): gate and up h x f, down f x h. GELU MLP: up h x f, down f x h.
  c.mlp_weights = (gated ? 3 : 2) * h * f;
  // A bias has one element per output feature of its projection.
  if (m.qkv_bias) c.attention_biases += q + 2 * kv;
  if (m.out_proj_bias) c.attention_biases += h;
  if (m.mlp_bias) c.mlp_biases = (gated ? 2 : 1) * f + h;
  c.norms = 2 * norm_parameters(m);
  return c;
}

std::int64_t layer_parameters(const ModelSpec& m) { return layer_parameter_counts(m).total(); }

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
  return m.num_layers * layer_parameters(m) + embedding_parameters(m) + lm_head_parameters(m) +
         final_norm_parameters(m);
}

std::int64_t matmul_parameters(const ModelSpec& m) {
  // Every layer, the final norm and the LM head (vocab * hidden, tied or not).
  return m.num_layers * layer_parameters(m) + final_norm_parameters(m) + m.vocab * m.hidden;
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

Flops model_flops_per_token(const ModelSpec& m, std::int64_t seq_len) {
  // PaLM Appendix B: 6N + 12 * L * H * Q * T with H heads of size Q and sequence length T,
  // times the sliding window's share r of the attention work.
  // In double: 12 * L * H * Q * T reaches 2^68 within the loaders' bounds (2^16 layers, an
  // attention width of 2^24, 2^24 tokens), past int64; N <= 2^50 keeps 6N exact.
  const double attention = 12.0 * static_cast<double>(m.num_layers) *
                           static_cast<double>(query_width(m)) * static_cast<double>(seq_len) *
                           attention_window_fraction(m, seq_len);
  return Flops(6.0 * static_cast<double>(matmul_parameters(m)) + attention);
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

}  // namespace trainsim::model
