// The architecture of a decoder-only transformer: the shape every count, FLOP and byte of the
// simulation is derived from. Loaded from models/*.json, a path, inline keys or a Hugging Face
// config.json by io/model_loader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::model {

enum class Activation { SwiGlu, Gelu };
// RMSNorm (a scale per channel), LayerNorm (a scale and a shift), or LayerNorm with neither
// (OLMo's OlmoLayerNorm: F.layer_norm(x, shape, None, None)).
enum class Norm { RmsNorm, LayerNorm, NonParametricLayerNorm };
enum class PositionEmbedding { Rope, Learned, Alibi };

// Bounds on a ModelSpec, checked where a model is read (io::model_from_json). The largest
// published dense models (about 2e12 parameters, 200 layers, hidden 2^15, vocabularies of 2^18)
// are far inside them, and within them every count and product of counts that the simulation
// forms (parameters, bytes of a micro-batch's activations, FLOPs of one token) fits an int64.
inline constexpr std::int64_t kMaxLayers = std::int64_t{1} << 16U;  // 65,536
inline constexpr std::int64_t kMaxHidden = std::int64_t{1} << 20U;  // 1,048,576
inline constexpr std::int64_t kMaxHeads = std::int64_t{1} << 16U;   // also kv_heads
inline constexpr std::int64_t kMaxHeadDim = std::int64_t{1} << 16U;
inline constexpr std::int64_t kMaxAttentionWidth = std::int64_t{1} << 24U;  // heads * head_dim
inline constexpr std::int64_t kMaxFfnHidden = std::int64_t{1} << 24U;
inline constexpr std::int64_t kMaxVocab = std::int64_t{1} << 32U;
inline constexpr std::int64_t kMaxPositions = std::int64_t{1} << 32U;
inline constexpr std::int64_t kMaxParameters = std::int64_t{1} << 50U;  // about 1.1e15
// Mixture-of-experts and latent-attention bounds: published MoE models have at most a few
// hundred routed experts (config.json of DeepSeek-V3: 256; of Kimi K2: 384) and latent ranks
// of a few thousand (DeepSeek-V3: 1536 and 512).
inline constexpr std::int64_t kMaxExperts = std::int64_t{1} << 16U;   // also shared experts
inline constexpr std::int64_t kMaxLoraRank = std::int64_t{1} << 20U;  // q_lora_rank, kv_lora_rank

struct ModelSpec {
  std::string id;  // "llama2-7b", or the file it came from
  std::int64_t num_layers = 0;
  std::int64_t hidden = 0;
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;  // == num_heads without grouped-query attention
  std::int64_t head_dim = 0;      // hidden / num_heads unless the model says otherwise
  std::int64_t ffn_hidden = 0;    // MLP inner size (per projection for SwiGLU)
  std::int64_t vocab = 0;
  Activation activation = Activation::SwiGlu;
  Norm norm = Norm::RmsNorm;
  bool tied_embeddings = false;  // LM head shares the input embedding's weights
  PositionEmbedding position_embedding = PositionEmbedding::Rope;
  std::int64_t max_positions = 0;  // rows of the learned position table; 0 for rope/alibi
  // Biases by group of linear layers (GPT-2/3 have all three; Qwen2 only qkv_bias). Default none.
  bool qkv_bias = false;       // on the Q, K and V projections
  bool out_proj_bias = false;  // on the attention output projection
  bool mlp_bias = false;       // on the MLP's gate, up and down projections
  // Sliding-window causal attention (Mistral): a query attends to itself and at most
  // attention_window - 1 earlier tokens. 0: full causal attention (the default).
  std::int64_t attention_window = 0;
  // The layers (0-based, ascending, each below num_layers) that use attention_window when only
  // some do: Gemma 2 and GPT-OSS alternate windowed and full attention layer by layer, Qwen2
  // windows the layers from max_window_layers on. The other layers, and any
  // multi-token-prediction module, attend in full. Empty: every layer, and every
  // multi-token-prediction module, uses the window (Mistral). Meaningless without a window.
  std::vector<std::int32_t> window_layers{};
  // Multi-token prediction (DeepSeek-V3, arXiv:2412.19437, §2.2): mtp_layers sequential modules
  // trained with the model and dropped at inference. Module k combines the hidden state of depth
  // k - 1 (the decoder's output for k = 1) with the embedding of the token k positions ahead:
  // an RMSNorm of each, their concatenation projected by a 2h x h matrix, one transformer layer
  // of the kind of the model's last layer, a final norm, then the shared LM head and a loss.
  // The embedding and the LM head are the model's (shared). Megatron-Core builds them on the
  // last pipeline stage, which then also holds a copy of the embedding
  // (megatron/core/transformer/multi_token_prediction.py; models/gpt/gpt_model.py builds the
  // embedding where pre_process or mtp_process). 0: none (the default).
  std::int64_t mtp_layers = 0;

  // Mixture of experts (Shazeer et al. 2017; Fedus et al. 2022 "Switch Transformers"; DeepSeekMoE,
  // Dai et al. 2024, arXiv:2401.06066). num_experts == 0 is a dense model: every field below
  // then keeps its default and every count is the dense one. Otherwise the first
  // num_dense_layers layers have a dense MLP of ffn_hidden and every later layer an MoE block:
  // a router (a hidden x num_experts linear layer), num_experts routed experts of which each
  // token uses num_experts_per_token, and num_shared_experts experts every token uses. Each
  // expert is an MLP of the model's activation (gate, up, down for SwiGLU).
  std::int64_t num_experts = 0;               // routed experts per MoE layer; 0: dense
  std::int64_t num_experts_per_token = 0;     // top-k, 1..num_experts
  std::int64_t expert_ffn_hidden = 0;         // a routed expert's MLP inner size
  std::int64_t num_shared_experts = 0;        // experts every token uses (DeepSeek, Qwen2-MoE)
  std::int64_t shared_expert_ffn_hidden = 0;  // a shared expert's inner size; 0 without one
  std::int64_t num_dense_layers = 0;  // leading dense layers (DeepSeek's first_k_dense_replace)
  // A bias of num_experts on the router (GPT-OSS's router bias; DeepSeek-V3's
  // e_score_correction_bias, which the balancing rule updates instead of the gradient).
  bool router_bias = false;
  // Qwen2-MoE's sigmoid gate on the shared experts' output: a hidden x 1 linear layer.
  bool shared_expert_gate = false;
  // Load imbalance: the tokens the most-loaded expert receives over the mean tokens per expert
  // (k * tokens / num_experts), >= 1. 1.0 is perfect balance; a capacity factor c caps it at c
  // (Fedus et al. 2022 §2.2), a measured skew is the observed ratio. At most
  // num_experts / num_experts_per_token (the expert that every token picks). It prices the
  // expert phase of a layer (all experts wait for the busiest EP rank, which takes
  // model::expert_rank_imbalance, min(c, ep), times the mean rows); it does not change counts.
  double expert_load_imbalance = 1.0;

  // Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, §2.1; DeepSeek-V3,
  // arXiv:2412.19437, §2.1.1). kv_lora_rank == 0: standard attention, the five fields keep
  // their defaults. Otherwise keys and values come from a compressed latent of kv_lora_rank
  // (plus a shared rotary key of qk_rope_head_dim), queries from one of q_lora_rank (0: queries
  // projected directly from hidden), each head has a query/key size of qk_nope_head_dim +
  // qk_rope_head_dim (== head_dim) and a value size of v_head_dim, and num_kv_heads ==
  // num_heads.
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

// Whether the model has routed experts / latent attention.
[[nodiscard]] inline bool is_moe(const ModelSpec& m) { return m.num_experts > 0; }
[[nodiscard]] inline bool has_mla(const ModelSpec& m) { return m.kv_lora_rank > 0; }

// The layers of `m` that the simulator cannot run yet, in words ("" when it runs them all).
// Every layer a ModelSpec describes is simulated today: MoE blocks with expert parallelism and
// latent attention as its projections (model/kernels.hpp); io::scenario_from_document refuses
// a model whose gap is not empty, and `trainsim describe` accepts it.
[[nodiscard]] inline std::string simulation_gap(const ModelSpec& /*m*/) { return ""; }

}  // namespace trainsim::model
