// Exact parameter counts and model FLOPs of a ModelSpec: the numbers MFU, memory and the
// per-kernel workload are built on. Pure functions of the architecture.
#pragma once

#include <cstdint>

#include "trainsim/model/model_spec.hpp"
#include "trainsim/units.hpp"

namespace trainsim::model {

// Parameters of one transformer layer, by part. Attention: Q, K, V and output projections
// (Q and O are hidden x heads*head_dim, K and V hidden x kv_heads*head_dim), or with multi-head
// latent attention its down- and up-projections (mla in counts.cpp). MLP: gate, up and down
// (SwiGLU, 3 matrices) or up and down (GELU, 2 matrices), once in a dense layer, per expert in
// an MoE layer. Norms: two per layer (pre-attention, pre-MLP), a weight of `hidden` each for
// RMSNorm, weight and bias for LayerNorm, plus MLA's two latent RMSNorms. Router: an MoE
// layer's hidden x num_experts gate (and Qwen2-MoE's hidden x 1 shared-expert gate).
struct LayerParameterCounts {
  std::int64_t attention_weights = 0;
  std::int64_t attention_biases = 0;  // Q, K, V biases with qkv_bias; O's with out_proj_bias
  std::int64_t mlp_weights = 0;
  std::int64_t mlp_biases = 0;  // up (and gate) and down biases with mlp_bias
  std::int64_t norms = 0;
  std::int64_t router_weights = 0;  // 0 in a dense layer
  std::int64_t router_biases = 0;   // num_experts with router_bias

  [[nodiscard]] std::int64_t total() const {
    return attention_weights + attention_biases + mlp_weights + mlp_biases + norms +
           router_weights + router_biases;
  }
  // Weights of the layer's matrix multiplies (each costs 2 FLOPs per weight per token forward).
  [[nodiscard]] std::int64_t matmul_weights() const {
    return attention_weights + mlp_weights + router_weights;
  }
};

// The two kinds of layer of a mixture-of-experts model: a dense MLP of ffn_hidden (every layer
// of a dense model, the first num_dense_layers of an MoE model) or an MoE block.
enum class LayerKind { Dense, Moe };
// Which experts of an MoE layer to count: all of them (what the model stores) or those one
// token uses: num_experts_per_token routed experts, the shared experts and the whole router
// (every token scores every expert).
enum class Experts { All, Active };

// Width of all query heads together (heads * head_dim); equals hidden for every built-in model.
[[nodiscard]] std::int64_t query_width(const ModelSpec& m);
// Width of all key (or value) heads together (kv_heads * head_dim).
[[nodiscard]] std::int64_t kv_width(const ModelSpec& m);
// Parameters of one norm (RMSNorm: hidden; LayerNorm: 2 * hidden).
[[nodiscard]] std::int64_t norm_parameters(const ModelSpec& m);

// A dense layer: every layer of a dense model, a leading dense layer of an MoE model.
[[nodiscard]] LayerParameterCounts layer_parameter_counts(const ModelSpec& m);
[[nodiscard]] std::int64_t layer_parameters(const ModelSpec& m);
// A layer of the given kind. Requires is_moe(m) for LayerKind::Moe; `experts` only matters
// there.
[[nodiscard]] LayerParameterCounts layer_parameter_counts(const ModelSpec& m, LayerKind kind,
                                                          Experts experts);
// Layers with an MoE block: num_layers - num_dense_layers, or 0 for a dense model.
[[nodiscard]] std::int64_t num_moe_layers(const ModelSpec& m);
// Multi-token prediction (ModelSpec::mtp_layers): the kind of each module's layer, that of the
// model's last layer (Megatron-Core's get_gpt_mtp_block_spec takes the decoder's last layer
// spec): MoE in an MoE model (the loaders keep at least one MoE layer, and they come last).
[[nodiscard]] inline LayerKind mtp_layer_kind(const ModelSpec& m) {
  return is_moe(m) ? LayerKind::Moe : LayerKind::Dense;
}
// One module's parameters beside its layer: the 2h x h projection (eh_proj, no bias) and three
// norms (enorm, hnorm and final_layernorm; DeepSeek-V3 §2.2, the RMSNorms and M_k).
[[nodiscard]] std::int64_t mtp_extra_parameters(const ModelSpec& m);
// Every module's parameters, its layer counted with all experts or a token's; 0 without MTP.
// The shared embedding and LM head are not counted again.
[[nodiscard]] std::int64_t mtp_parameters(const ModelSpec& m, Experts experts);
// A module's parameters beside its layer on one TP rank: eh_proj column-parallel (h / tp output
// columns of 2h inputs), the norms replicated.
[[nodiscard]] std::int64_t mtp_extra_parameters_per_tp_rank(const ModelSpec& m, std::int64_t tp);
// Input-side tables: token embedding vocab * hidden plus learned positions max_positions * hidden.
[[nodiscard]] std::int64_t embedding_parameters(const ModelSpec& m);
// Separate LM-head weights: vocab * hidden, or 0 when tied to the token embedding.
[[nodiscard]] std::int64_t lm_head_parameters(const ModelSpec& m);
// The final norm before the LM head.
[[nodiscard]] std::int64_t final_norm_parameters(const ModelSpec& m);
// Every trainable parameter, each shared tensor once; every expert of an MoE model; the
// multi-token-prediction modules (mtp_parameters) included.
[[nodiscard]] std::int64_t num_parameters(const ModelSpec& m);
// The parameters one token uses (Experts::Active in every MoE layer), embedding and LM head
// included: the "activated parameters" of MoE model cards (Mixtral 12.9B, DeepSeek-V3 37B,
// which count no MTP module). Equals num_parameters for a dense model.
[[nodiscard]] std::int64_t num_active_parameters(const ModelSpec& m);

// N of the model-FLOPs formula (DESIGN.md "Metrics"): every parameter one token uses except the
// input-side tables (token and learned-position embeddings), with the LM head's vocab * hidden
// counted even when tied, since the LM head is still a matmul. Norm and bias parameters are
// included, as in Kaplan et al. 2020 §2.1 and the worked example (docs/sources.md W.1;
// llama2-7b: 6,607,343,616). For an MoE model only the active experts count (Experts::Active):
// the non-embedding active parameters, the convention of the GPT-OSS model card
// (arXiv:2508.10925, "active parameters": 5.13B for gpt-oss-120b). Multi-token prediction adds
// each module's active parameters and one more pass of the LM head (vocab * hidden) per module,
// as Megatron-LM's num_floating_point_operations counts it (training.py, mtp_num_layers).
[[nodiscard]] std::int64_t matmul_parameters(const ModelSpec& m);

// The share of causal full attention's QK^T and AV work that remains under the model's sliding
// window w at sequence length T. Query i (0-based) attends to min(i + 1, w) keys, so
//   r = sum_{i<T} min(i + 1, w) / sum_{i<T} (i + 1)
//     = (w (w + 1) / 2 + (T - w) w) / (T (T + 1) / 2)   for w < T
// (queries 0..w-1 see 1..w keys, the T - w later ones w each), and r = 1 for w >= T or no
// window. The window of Mistral (Jiang et al. 2023, arXiv:2310.06825, §2 "Sliding Window
// Attention"; transformers' sliding-window causal mask). Requires seq_len >= 1.
[[nodiscard]] double attention_window_fraction(const ModelSpec& m, std::int64_t seq_len);

// Whether decoder layer `layer` (0-based) attends within the model's sliding window: every layer
// of a windowed model without window_layers, else the layers window_layers lists (model_spec.hpp).
[[nodiscard]] bool layer_windowed(const ModelSpec& m, std::int64_t layer);

// Whether some layers of the model use its sliding window and others attend in full (Gemma 2,
// GPT-OSS).
[[nodiscard]] bool mixed_attention_window(const ModelSpec& m);

// `m` with full attention on every layer: the model whose kernels the layers outside
// window_layers run.
[[nodiscard]] ModelSpec without_attention_window(const ModelSpec& m);

// Model FLOPs of one trained token (forward + backward) at sequence length `seq_len`:
//   6 * N + 12 * layers * heads * head_dim * seq_len * r
// PaLM (Chowdhery et al. 2022, Appendix B): 6N for the weights (2 forward, 4 backward) and the
// attention QK^T and AV products without the causal discount. heads * head_dim is `hidden` in
// DESIGN.md's form; they are equal for every dense built-in model. r is
// attention_window_fraction (1 without a sliding window; with window_layers, each layer its
// own: 12 * heads * head_dim * seq_len * (W r + F) for W windowed and F full layers): the
// model-FLOPs attention term stays twice what a causal kernel executes, with or without a
// window. Requires seq_len >= 1.
// Mixture of experts: N is matmul_parameters, the active non-embedding parameters (top-k and
// shared experts and the router, not the unused experts), as the dense convention counts every
// matmul weight a token passes through. Multi-head latent attention: QK^T has a head size of
// d_qk = qk_nope_head_dim + qk_rope_head_dim and AV one of d_v = v_head_dim, so the attention
// term is 6 * layers * heads * (d_qk + d_v) * seq_len * r (12 L H Q T when d_qk = d_v = Q); the
// latent down- and up-projections are weights in N (DeepSeek-V2 §2.1.2, eqs. 9-10 and 12-14:
// the naive, unabsorbed form that training runs). Each multi-token-prediction module's layer
// counts as one more layer in the attention term.
[[nodiscard]] Flops model_flops_per_token(const ModelSpec& m, std::int64_t seq_len);
// The attention term of model_flops_per_token alone (12 * layers * heads * head_dim * seq_len *
// r, or latent attention's form), per trained token.
[[nodiscard]] Flops attention_model_flops_per_token(const ModelSpec& m, std::int64_t seq_len);

// FLOPs of one iteration of `batch` sequences by Narayanan et al. 2021 (Megatron-LM PTD-P, §5.1,
// eq. 3): F = 96 * B * s * l * h^2 * (1 + s / 6h + V / 16lh). It counts GEMMs only (ffn = 4h,
// multi-head attention), includes the extra forward pass of full activation recomputation in
// the layers (factor 4 instead of 3) but not in the LM head. Used to compare with that paper.
[[nodiscard]] Flops megatron_flops_per_iteration(const ModelSpec& m, std::int64_t batch,
                                                 std::int64_t seq_len);

// Ceiling of a / b for positive counts: the share of the largest tensor-parallel rank.
[[nodiscard]] constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Parameters one tensor-parallel rank holds, split as Megatron-LM does (Shoeybi et al. 2019
// §3), for a dense layer with standard attention (the simulator refuses MoE and latent-attention
// models: simulation_gap in model_spec.hpp): Q, K, V, gate and up column-parallel (weights and
// biases / tp, KV heads replicated when tp > kv_heads); output and down projections row-parallel
// (weights / tp, biases replicated); norms replicated. Embedding and LM head are vocab-parallel
// (vocab / tp rows); learned positions are replicated. Requires tp >= 1.
[[nodiscard]] std::int64_t layer_parameters_per_tp_rank(const ModelSpec& m, std::int64_t tp);
[[nodiscard]] std::int64_t embedding_parameters_per_tp_rank(const ModelSpec& m, std::int64_t tp);
// The LM head's weights on a TP rank of the last stage: vocab-parallel. With tied embeddings
// and more than one pipeline stage Megatron keeps a copy of the embedding on the last stage
// (LmHeadCopy::Separate); on a single stage the tied weights are the embedding's (no extra).
enum class LmHeadCopy { SharedWithEmbedding, Separate };
[[nodiscard]] std::int64_t lm_head_parameters_per_tp_rank(const ModelSpec& m, std::int64_t tp,
                                                          LmHeadCopy copy);
// The non-layer parameters one TP rank of the last of `pp` pipeline stages holds: the final norm
// and the LM head (a separate copy of tied weights when pp > 1, as above), and with multi-token
// prediction each module's extras (mtp_extra_parameters_per_tp_rank) and, when pp > 1,
// Megatron-Core's copy of the embedding for the modules' lookups (gpt_model.py builds the
// embedding where pre_process or mtp_process), which then also holds tied LM-head weights. With
// one stage the embedding is the first stage's (embedding_parameters_per_tp_rank).
[[nodiscard]] std::int64_t last_stage_parameters_per_tp_rank(const ModelSpec& m, std::int64_t tp,
                                                             std::int64_t pp);

}  // namespace trainsim::model
