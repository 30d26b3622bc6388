#include "sim/io/model_loader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "sim/io/builtin_data.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/spellcheck.hpp"

namespace trainsim::io {
namespace {

using model::Activation;
using model::ModelSpec;
using model::Norm;
using model::PositionEmbedding;

// Hugging Face config.json keys that do not change the cost of training, accepted and noted
// on stderr. Token ids, initialisation, numerics (eps), dropout (0 in every released config),
// caching and the dtype the checkpoint was saved in do not change FLOPs or bytes; RoPE's base,
// scaling and element order change the positions' frequencies, not the work;
// max_position_embeddings is the longest context the checkpoint supports, not the training
// sequence length (the scenario's seq_len is); a checkpoint's storage format and code location
// (quantization_config, auto_map) are not the training dtype (the scenario's precision).
// docs/models.md has the whole mapping.
constexpr std::array<std::string_view, 24> kHfIgnoredKeys = {
    "architectures",
    "torch_dtype",
    "dtype",
    "transformers_version",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "initializer_range",
    "rms_norm_eps",
    "use_cache",
    "pretraining_tp",
    "attention_dropout",
    "mlp_dropout",
    "max_position_embeddings",
    "rope_theta",
    "rope_scaling",
    "rope_parameters",
    "tokenizer_class",
    "output_attentions",
    "output_hidden_states",
    "max_window_layers",  // read only for Qwen2/Qwen3/Qwen2-MoE (kHfMaxWindowTypes)
    "quantization_config",
    "auto_map",
    "rope_interleave",
};

// Families whose sliding window is switched by use_sliding_window (default false):
// Qwen2Config, Qwen3Config, Qwen2MoeConfig and Qwen3MoeConfig.
constexpr std::array<std::string_view, 4> kHfQwenWindowTypes = {"qwen2", "qwen3", "qwen2_moe",
                                                                "qwen3_moe"};
// Of those, the families whose window applies to the layers from max_window_layers on (default
// 28): transformers/models/qwen2/configuration_qwen2.py and qwen3/configuration_qwen3.py,
// `layer_types` default "sliding_attention" if sliding_window is not None and i >=
// max_window_layers; Qwen2-MoE's attention of transformers 4.x (modeling_qwen2_moe.py, its
// FlashAttention-2 path: use_sliding_window and layer_idx >= max_window_layers; later versions
// write layer_types, which governs). Qwen3MoeConfig has no max_window_layers: its attention
// applies sliding_window on every layer (modeling_qwen3_moe.py).
constexpr std::array<std::string_view, 3> kHfMaxWindowTypes = {"qwen2", "qwen3", "qwen2_moe"};

// Families whose attention applies sliding_window (transformers: modeling_mistral.py,
// modeling_mixtral.py, modeling_qwen2.py, modeling_qwen3.py and their MoE variants,
// modeling_gemma2.py, modeling_gpt_oss.py pass the window to their attention or build a
// sliding-window mask). Llama, Gemma, OLMo, OLMo 2, Granite and DeepSeek build a causal mask
// only (create_causal_mask), whatever the config holds.
constexpr std::array<std::string_view, 8> kHfWindowTypes = {
    "mistral", "mixtral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "gemma2", "gpt_oss"};

// Routing and checkpoint keys of mixture-of-experts configs that do not change the cost of
// training, accepted and noted like kHfIgnoredKeys: how the router picks and weighs its experts
// (which experts, not how many: normalisation, scaling, group-limited selection, the score
// function), the auxiliary loss (a few element-wise operations per token and expert), debugging
// switches, an inference deployment hint (ep_size), GPT-OSS's clamped SwiGLU's constants and its
// pre-extension context. They mean nothing without experts, so a dense config's are unknown.
constexpr std::array<std::string_view, 15> kHfMoeIgnoredKeys = {
    "norm_topk_prob",
    "router_aux_loss_coef",
    "output_router_logits",
    "router_jitter_noise",
    "n_group",
    "topk_group",
    "topk_method",
    "scoring_func",
    "routed_scaling_factor",
    "aux_loss_alpha",
    "seq_aux",
    "ep_size",
    "swiglu_limit",
    "swiglu_alpha",
    "initial_context_length",
};

// Keys of one family's configuration class only, accepted and noted: what each adds to a
// training step when set (not null), for the note's "not counted" part, or nothing. In another
// family's config they stay unknown, as that family's code does not read them.
//  - OlmoConfig clip_qkv (olmo/modeling_olmo.py: q, k and v clamped to +-clip_qkv when set).
//  - GraniteConfig (granite/modeling_granite.py): attention_multiplier is the score scale in
//    place of 1/sqrt(head_dim); embedding_multiplier scales the embeddings, residual_multiplier
//    each of a layer's two residual branches, logits_scaling divides the logits.
//  - Gemma2Config (gemma2/modeling_gemma2.py): query_pre_attn_scalar sets the score scale
//    (its inverse square root); attn_logit_softcapping and final_logit_softcapping cap the
//    attention scores and the logits with a tanh; cache_implementation is the inference cache;
//    sliding_window_size, beside sliding_window in google/gemma-2-9b's released
//    config.json (transformers 4.42.0.dev0), is read by no code of Gemma2Config's (the window is
//    sliding_window).
struct HfFamilyKey {
  std::string_view model_type;
  std::string_view key;
  bool nullable;          // null means the feature is off
  std::string_view cost;  // what a value adds, or empty
};
constexpr std::array<HfFamilyKey, 10> kHfFamilyKeys = {{
    {"olmo", "clip_qkv", true, "a clamp of Q, K and V in each layer"},
    {"granite", "attention_multiplier", false, ""},
    {"granite", "embedding_multiplier", false, "a scaling of the embeddings"},
    {"granite", "residual_multiplier", false, "a scaling of both residual branches of each layer"},
    {"granite", "logits_scaling", false, "a division of the logits"},
    {"gemma2", "query_pre_attn_scalar", false, ""},
    {"gemma2", "attn_logit_softcapping", true, "a tanh on the attention scores in each layer"},
    {"gemma2", "final_logit_softcapping", true, "a tanh on the logits"},
    {"gemma2", "cache_implementation", true, ""},
    {"gemma2", "sliding_window_size", false, ""},
}};

// The keys that say how many routed experts a Hugging Face config has, by family: Mixtral and
// GPT-OSS (num_local_experts), Qwen2-MoE and Qwen3-MoE (num_experts), DeepSeek-V2/V3
// (n_routed_experts).
constexpr std::array<std::string_view, 3> kHfExpertCountKeys = {"num_local_experts", "num_experts",
                                                                "n_routed_experts"};
// Keys that describe experts and mean nothing without an expert count.
constexpr std::array<std::string_view, 9> kHfExpertDetailKeys = {
    "num_experts_per_tok",
    "experts_per_token",
    "moe_intermediate_size",
    "n_shared_experts",
    "shared_expert_intermediate_size",
    "first_k_dense_replace",
    "moe_layer_freq",
    "decoder_sparse_step",
    "mlp_only_layers",
};
// Multi-head latent attention's keys (DeepseekV2Config, DeepseekV3Config).
constexpr std::array<std::string_view, 5> kHfMlaKeys = {
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"};

// Hugging Face model types whose MLP is gated (gate_proj, up_proj, down_proj) whatever the
// activation: GeGLU (Gemma) has the same shapes and FLOPs as SwiGLU, so it maps to SwiGlu.
// The MoE families' experts are gated too (MixtralBlockSparseTop2MLP, Qwen2MoeMLP,
// Qwen3MoeMLP, DeepseekV3MLP: gate_proj, up_proj, down_proj; GptOssExperts: gate_up_proj).
constexpr std::array<std::string_view, 15> kHfGatedModelTypes = {
    "llama",     "mistral",   "qwen2",       "qwen3",       "gemma",
    "gemma2",    "olmo",      "olmo2",       "granite",     "mixtral",
    "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_oss",
};

bool contains(const auto& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// Checks shared by both formats: the grouping of heads and the head size.
void check_heads(ObjectReader& r, const ModelSpec& m, const std::string& heads_key,
                 const std::string& kv_key, const std::string& hidden_key, bool head_dim_given,
                 const std::string& head_dim_key) {
  if (m.num_kv_heads > m.num_heads || m.num_heads % m.num_kv_heads != 0) {
    throw r.error(kv_key, "grouped-query attention needs the KV heads to divide the " + heads_key +
                              " (" + std::to_string(m.num_heads) + "); expected a divisor of " +
                              std::to_string(m.num_heads) + ", got " +
                              std::to_string(m.num_kv_heads));
  }
  if (!head_dim_given && m.hidden % m.num_heads != 0) {
    throw r.error(hidden_key, "without " + head_dim_key + " the head size is " + hidden_key +
                                  " / " + heads_key + "; expected a multiple of " +
                                  std::to_string(m.num_heads) + ", got " +
                                  std::to_string(m.hidden));
  }
}

// Bounds on products of the keys (model_spec.hpp), once the keys are each in range: the
// attention width and the parameter count. The count is estimated in double, where it cannot
// overflow, from the same terms as model::num_parameters (an upper bound: every bias counted).
void check_size(ObjectReader& r, const ModelSpec& m, const std::string& heads_key,
                const std::string& layers_key) {
  if (m.num_heads * m.head_dim > model::kMaxAttentionWidth) {
    throw r.error(heads_key, "heads x head_dim = " + std::to_string(m.num_heads) + " x " +
                                 std::to_string(m.head_dim) + " = " +
                                 std::to_string(m.num_heads * m.head_dim) +
                                 ": out of range; expected at most " +
                                 std::to_string(model::kMaxAttentionWidth));
  }
  if (m.num_heads * m.v_head_dim > model::kMaxAttentionWidth) {
    throw r.error(heads_key, "heads x v_head_dim = " + std::to_string(m.num_heads) + " x " +
                                 std::to_string(m.v_head_dim) + " = " +
                                 std::to_string(m.num_heads * m.v_head_dim) +
                                 ": out of range; expected at most " +
                                 std::to_string(model::kMaxAttentionWidth));
  }
  const auto h = static_cast<double>(m.hidden);
  const auto q = static_cast<double>(m.num_heads * m.head_dim);
  const auto kv = static_cast<double>(m.num_kv_heads * m.head_dim);
  const auto f = static_cast<double>(m.ffn_hidden);
  double layer = 2.0 * h * q + 2.0 * h * kv + 3.0 * h * f + 2.0 * q + 2.0 * kv + 3.0 * f + 6.0 * h;
  double total = static_cast<double>(m.num_layers) * layer;
  if (model::is_moe(m) || model::has_mla(m)) {
    // The same terms as sim/model/counts.cpp: latent attention, experts and router.
    const auto heads = static_cast<double>(m.num_heads);
    const auto rq = static_cast<double>(m.q_lora_rank);
    const auto rkv = static_cast<double>(m.kv_lora_rank);
    const auto v = static_cast<double>(m.v_head_dim);
    const double attention = model::has_mla(m)
                                 ? h * rq + (rq > 0.0 ? rq : h) * q +
                                       h * (rkv + static_cast<double>(m.qk_rope_head_dim)) +
                                       rkv * heads * (static_cast<double>(m.qk_nope_head_dim) + v) +
                                       heads * v * h + rq + rkv
                                 : 2.0 * h * q + 2.0 * h * kv + 2.0 * q + 2.0 * kv + h;
    const auto mlp = [h](double width) { return 3.0 * h * width + 2.0 * width + h; };
    const auto experts = static_cast<double>(m.num_experts);
    const double dense = attention + mlp(f) + 4.0 * h;
    const double moe = attention + experts * mlp(static_cast<double>(m.expert_ffn_hidden)) +
                       static_cast<double>(m.num_shared_experts) *
                           mlp(static_cast<double>(m.shared_expert_ffn_hidden)) +
                       h * experts + h + experts + 4.0 * h;
    const auto dense_layers =
        static_cast<double>(model::is_moe(m) ? m.num_dense_layers : m.num_layers);
    total = dense_layers * dense + (static_cast<double>(m.num_layers) - dense_layers) * moe;
    // Multi-token-prediction modules: a layer of the last kind each.
    layer = model::is_moe(m) ? moe : dense;
  }
  // Each multi-token-prediction module: its layer, the 2h x h projection and three norms.
  total += static_cast<double>(m.mtp_layers) * (layer + 2.0 * h * h + 6.0 * h);
  total +=
      2.0 * static_cast<double>(m.vocab) * h + static_cast<double>(m.max_positions) * h + 2.0 * h;
  if (total > static_cast<double>(model::kMaxParameters)) {
    char count[32];
    (void)std::snprintf(count, sizeof count, "%.3g", total);
    throw r.error(layers_key, std::string("the model has about ") + count +
                                  " parameters: out of range; expected at most 2^50 (about "
                                  "1.13e+15)");
  }
}

// The key names of the MoE fields in one format, for the errors of check_moe.
struct MoeKeys {
  std::string experts;
  std::string per_token;
  std::string dense_layers;
  std::string layers;
};

// Checks of an MoE model shared by both formats, once each key is in range.
void check_moe(ObjectReader& r, const ModelSpec& m, const MoeKeys& keys) {
  if (!model::is_moe(m)) return;
  if (m.num_experts_per_token > m.num_experts) {
    throw r.error(keys.per_token, "a token is routed to at most all " +
                                      std::to_string(m.num_experts) + " experts (" + keys.experts +
                                      "); expected at most " + std::to_string(m.num_experts) +
                                      ", got " + std::to_string(m.num_experts_per_token));
  }
  if (m.num_dense_layers >= m.num_layers) {
    throw r.error(keys.dense_layers,
                  "an MoE model needs at least one MoE layer; expected fewer dense layers than "
                  "the " +
                      std::to_string(m.num_layers) + " layers (" + keys.layers + "), got " +
                      std::to_string(m.num_dense_layers));
  }
}

// The load imbalance of trainsim's keys: the most-loaded expert's tokens over the mean, from 1
// (balanced) to num_experts / num_experts_per_token (every token picks that expert).
double read_imbalance(ObjectReader& r, const ModelSpec& m) {
  const std::string key = "expert_load_imbalance";
  if (!r.has(key)) return 1.0;
  const double v = r.number(key);
  const double most =
      static_cast<double>(m.num_experts) / static_cast<double>(m.num_experts_per_token);
  if (!(v >= 1.0 && v <= most)) {
    // The value in the shortest text that reads back as it (4.0000001, not %g's 4).
    char got[64];
    const auto end = std::to_chars(got, got + sizeof got, v).ptr;
    char bound[32];
    (void)std::snprintf(bound, sizeof bound, "%g", most);
    throw r.error(key, std::string("the most-loaded expert's tokens over the mean; expected 1 "
                                   "(balanced) to experts / experts_per_token = ") +
                           bound + ", got " + std::string(got, end));
  }
  return v;
}

// attention_window_layers of a trainsim model file: the layers that use attention_window, 0-based
// and ascending (ModelSpec::window_layers). A list of every layer is kept as "every layer" (an
// empty list) when the model has no multi-token-prediction module, so that it prices as a file
// without the key; with one, the list leaves the modules in full attention.
void read_window_layers(ObjectReader& r, model::ModelSpec& m) {
  const auto& layers = r.array("attention_window_layers");
  if (m.attention_window == 0) {
    throw r.error("attention_window_layers",
                  "the layers that use attention_window, but the model has no window; expected "
                  "an attention_window > 0 with it, or no attention_window_layers");
  }
  if (layers.empty()) {
    throw r.error("attention_window_layers",
                  "expected at least one layer index (leave the key out for a window on every "
                  "layer)");
  }
  std::int64_t previous = -1;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& v = layers[i];
    if (previous + 1 >= m.num_layers) {
      throw r.error("attention_window_layers",
                    "entry " + std::to_string(i) + ": no layer left after " +
                        std::to_string(previous) + " (layers = " + std::to_string(m.num_layers) +
                        "); expected at most " + std::to_string(m.num_layers) +
                        " ascending layer indices, got " + describe_json(v));
    }
    if (!v.is_number_integer() || v.get<std::int64_t>() <= previous ||
        v.get<std::int64_t>() >= m.num_layers) {
      throw r.error("attention_window_layers",
                    "entry " + std::to_string(i) + ": expected a layer index from " +
                        std::to_string(previous + 1) + " to " + std::to_string(m.num_layers - 1) +
                        " (0-based, ascending, below layers = " + std::to_string(m.num_layers) +
                        "), got " + describe_json(v));
    }
    previous = v.get<std::int64_t>();
    m.window_layers.push_back(static_cast<std::int32_t>(previous));
  }
  if (static_cast<std::int64_t>(m.window_layers.size()) == m.num_layers && m.mtp_layers == 0) {
    m.window_layers.clear();
  }
}

// trainsim's mixture-of-experts keys (docs/models.md): read with "experts", refused without.
void read_moe_keys(ObjectReader& r, ModelSpec& m) {
  constexpr std::array<const char*, 8> kDetails = {
      "experts_per_token", "expert_ffn_hidden", "shared_experts",     "shared_expert_ffn_hidden",
      "dense_layers",      "router_bias",       "shared_expert_gate", "expert_load_imbalance"};
  if (!r.has("experts")) {
    for (const char* key : kDetails) {
      if (r.has(key)) {
        throw r.error(key, std::string(key) +
                               " describes the experts of a mixture-of-experts model; expected "
                               "it with \"experts\", got no \"experts\" key");
      }
    }
    return;
  }
  m.num_experts = r.integer("experts", 1, model::kMaxExperts);
  m.num_experts_per_token = r.integer("experts_per_token", 1, model::kMaxExperts);
  // Mixtral's experts are full-width MLPs: the expert width defaults to ffn_hidden.
  m.expert_ffn_hidden = r.has("expert_ffn_hidden")
                            ? r.integer("expert_ffn_hidden", 1, model::kMaxFfnHidden)
                            : m.ffn_hidden;
  m.num_shared_experts =
      r.has("shared_experts") ? r.integer("shared_experts", 0, model::kMaxExperts) : 0;
  for (const char* key : {"shared_expert_ffn_hidden", "shared_expert_gate"}) {
    if (m.num_shared_experts == 0 && r.has(key)) {
      throw r.error(key, std::string(key) +
                             " describes shared experts; expected it with \"shared_experts\" "
                             ">= 1, got no shared experts");
    }
  }
  if (m.num_shared_experts > 0) {
    m.shared_expert_ffn_hidden =
        r.has("shared_expert_ffn_hidden")
            ? r.integer("shared_expert_ffn_hidden", 1, model::kMaxFfnHidden)
            : m.expert_ffn_hidden;
    m.shared_expert_gate = r.boolean_or("shared_expert_gate", false);
  }
  m.num_dense_layers = r.has("dense_layers") ? r.integer("dense_layers", 0, model::kMaxLayers) : 0;
  m.router_bias = r.boolean_or("router_bias", false);
  check_moe(r, m, MoeKeys{"experts", "experts_per_token", "dense_layers", "layers"});
  m.expert_load_imbalance = read_imbalance(r, m);
}

// trainsim's latent-attention keys: read with "kv_lora_rank", refused without. Sets head_dim to
// qk_nope_head_dim + qk_rope_head_dim.
void read_mla_keys(ObjectReader& r, ModelSpec& m) {
  if (!r.has("kv_lora_rank")) {
    for (const char* key : {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) {
      if (r.has(key)) {
        throw r.error(key, std::string(key) +
                               " describes multi-head latent attention; expected it with "
                               "\"kv_lora_rank\", got no \"kv_lora_rank\" key");
      }
    }
    return;
  }
  m.kv_lora_rank = r.integer("kv_lora_rank", 1, model::kMaxLoraRank);
  m.q_lora_rank = r.has("q_lora_rank") ? r.integer("q_lora_rank", 0, model::kMaxLoraRank) : 0;
  m.qk_nope_head_dim = r.integer("qk_nope_head_dim", 1, model::kMaxHeadDim);
  m.qk_rope_head_dim = r.integer("qk_rope_head_dim", 1, model::kMaxHeadDim);
  m.v_head_dim = r.integer("v_head_dim", 1, model::kMaxHeadDim);
  m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
}

// Checks of latent attention shared by both formats: one K and V per query head (the latent is
// shared, the up-projection is per head) and no biases.
void check_mla(ObjectReader& r, const ModelSpec& m, const std::string& kv_key,
               const std::string& bias_key) {
  if (!model::has_mla(m)) return;
  if (m.num_kv_heads != m.num_heads) {
    throw r.error(kv_key, "latent attention has one key and value head per query head; expected " +
                              std::to_string(m.num_heads) + ", got " +
                              std::to_string(m.num_kv_heads));
  }
  if (m.qkv_bias || m.out_proj_bias || m.mlp_bias) {
    throw r.error(bias_key,
                  "biases with latent attention are not modelled; expected false, got true");
  }
}

ModelSpec from_trainsim_keys(ObjectReader& r) {
  ModelSpec m;
  m.id = r.string_or("name", r.source());
  // The name stands for the model in messages and reports: a blank one names nothing.
  if (m.id.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw r.error("name", "expected a name with a visible character, got \"" + m.id + "\"");
  }
  m.num_layers = r.integer("layers", 1, model::kMaxLayers);
  m.hidden = r.integer("hidden", 1, model::kMaxHidden);
  m.num_heads = r.integer("heads", 1, model::kMaxHeads);
  m.num_kv_heads = r.integer("kv_heads", 1, model::kMaxHeads);
  const bool head_dim_given = r.has("head_dim");
  m.head_dim = head_dim_given ? r.integer("head_dim", 1, model::kMaxHeadDim) : 0;
  m.ffn_hidden = r.integer("ffn_hidden", 1, model::kMaxFfnHidden);
  m.vocab = r.integer("vocab", 1, model::kMaxVocab);
  m.activation = r.choice("activation", {"swiglu", "gelu"}) == "swiglu" ? Activation::SwiGlu
                                                                        : Activation::Gelu;
  m.norm = [&r] {
    const std::string norm = r.choice("norm", {"rmsnorm", "layernorm", "layernorm_no_affine"});
    return norm == "rmsnorm"     ? Norm::RmsNorm
           : norm == "layernorm" ? Norm::LayerNorm
                                 : Norm::NonParametricLayerNorm;
  }();
  m.tied_embeddings = r.boolean("tied_embeddings");
  const std::int64_t given_head_dim = m.head_dim;
  read_mla_keys(r, m);
  if (model::has_mla(m) && head_dim_given) {
    throw r.error("head_dim",
                  "with latent attention the head size is qk_nope_head_dim + qk_rope_head_dim; "
                  "expected no head_dim, got " +
                      std::to_string(given_head_dim));
  }
  const std::string pos = r.choice("position_embedding", {"rope", "learned", "alibi"});
  m.position_embedding = pos == "rope"      ? PositionEmbedding::Rope
                         : pos == "learned" ? PositionEmbedding::Learned
                                            : PositionEmbedding::Alibi;
  if (m.position_embedding == PositionEmbedding::Learned) {
    m.max_positions = r.integer("max_positions", 1, model::kMaxPositions);
  } else if (r.has("max_positions")) {
    throw r.error("max_positions",
                  "max_positions is the size of a learned position table; "
                  "expected it only with position_embedding \"learned\", got "
                  "position_embedding \"" +
                      pos + "\"");
  }
  // Biases: linear_bias is every group at once; the groups can also be given one by one.
  if (r.has("linear_bias")) {
    for (const char* group : {"qkv_bias", "out_proj_bias", "mlp_bias"}) {
      if (r.has(group)) {
        throw r.error(group, std::string("linear_bias already sets every group of biases; "
                                         "expected either linear_bias or ") +
                                 group + ", got both");
      }
    }
    const bool all = r.boolean("linear_bias");
    m.qkv_bias = all;
    m.out_proj_bias = all;
    m.mlp_bias = all;
  } else {
    m.qkv_bias = r.boolean_or("qkv_bias", false);
    m.out_proj_bias = r.boolean_or("out_proj_bias", false);
    m.mlp_bias = r.boolean_or("mlp_bias", false);
  }
  m.attention_window =
      r.has("attention_window") ? r.integer("attention_window", 0, model::kMaxPositions) : 0;
  m.mtp_layers = r.has("mtp_layers") ? r.integer("mtp_layers", 0, model::kMaxLayers) : 0;
  if (r.has("attention_window_layers")) read_window_layers(r, m);
  read_moe_keys(r, m);
  const bool head_size_given = head_dim_given || model::has_mla(m);
  check_heads(r, m, "heads", "kv_heads", "hidden", head_size_given, "head_dim");
  check_mla(r, m, "kv_heads",
            r.has("linear_bias") ? "linear_bias"
            : m.qkv_bias         ? "qkv_bias"
            : m.out_proj_bias    ? "out_proj_bias"
                                 : "mlp_bias");
  if (!head_size_given) m.head_dim = m.hidden / m.num_heads;
  check_size(r, m, head_dim_given ? "head_dim" : "heads", "layers");
  r.finish();
  return m;
}

// An integer key that Hugging Face allows to be null ("use the default").
std::optional<std::int64_t> nullable_integer(ObjectReader& r, const std::string& key,
                                             std::int64_t max_value) {
  if (!r.has(key) || r.raw(key).is_null()) return std::nullopt;
  return r.integer(key, 1, max_value);
}

// Where the notes about Hugging Face keys go; see set_model_note_sink.
struct NoteState {
  std::mutex mutex;
  ModelNoteSink sink = [](const std::string& line) { std::cerr << line << '\n'; };
  std::set<std::string> noted;  // source + pointer of every model already noted
};

NoteState& note_state() {
  static NoteState state;
  return state;
}

// One "note:" line per model location and process: a sweep resolves the same file for many
// scenarios, and the user needs to hear it once.
void note_once(const ObjectReader& r, const std::string& text) {
  const std::string where = r.pointer().empty() ? r.source() : r.source() + ": " + r.pointer();
  NoteState& state = note_state();
  const std::lock_guard<std::mutex> lock(state.mutex);
  if (!state.noted.insert(where).second) return;
  if (state.sink) state.sink("note: " + where + ": " + text);
}

// The windowed layers of a Hugging Face config: how many of num_layers use its sliding window,
// which (0-based, ascending), and the key that says so.
struct WindowLayers {
  std::int64_t count = 0;
  std::string key;
  std::vector<std::int32_t> layers;
};

WindowLayers hf_window_layers(ObjectReader& r, const std::string& model_type,
                              std::int64_t num_layers) {
  if (r.has("layer_types") && !r.raw("layer_types").is_null()) {
    // transformers >= 4.53 writes layer_types for every family with a window: one entry per
    // layer, "full_attention" or "sliding_attention".
    const auto& types = r.array("layer_types");
    if (static_cast<std::int64_t>(types.size()) != num_layers) {
      throw r.error("layer_types", "one entry per layer; expected " + std::to_string(num_layers) +
                                       " entries (num_hidden_layers), got " +
                                       std::to_string(types.size()));
    }
    WindowLayers windowed{.count = 0, .key = "layer_types", .layers = {}};
    for (std::size_t i = 0; i < types.size(); ++i) {
      const auto& t = types[i];
      if (!t.is_string() || (t.get<std::string>() != "full_attention" &&
                             t.get<std::string>() != "sliding_attention")) {
        throw r.error("layer_types", "entry " + std::to_string(i) +
                                         ": expected \"full_attention\" or \"sliding_attention\", "
                                         "got " +
                                         describe_json(t));
      }
      if (t.get<std::string>() == "sliding_attention") {
        ++windowed.count;
        windowed.layers.push_back(static_cast<std::int32_t>(i));
      }
    }
    // Qwen2/Qwen3 configs of transformers >= 4.53 keep max_window_layers beside the layer_types
    // derived from it; layer_types governs (the modeling code reads it alone), so the key is
    // only checked for its type.
    if (contains(kHfMaxWindowTypes, model_type) && r.has("max_window_layers")) {
      (void)r.integer("max_window_layers", 0, model::kMaxLayers);
    }
    return windowed;
  }
  const auto from = [num_layers](std::int64_t first, std::int64_t step, std::string key) {
    WindowLayers windowed{.count = 0, .key = std::move(key), .layers = {}};
    for (std::int64_t l = first; l < num_layers; l += step) {
      windowed.layers.push_back(static_cast<std::int32_t>(l));
    }
    windowed.count = static_cast<std::int64_t>(windowed.layers.size());
    return windowed;
  };
  if (contains(kHfMaxWindowTypes, model_type)) {
    // Qwen2Config: max_window_layers default 28; layers i >= max_window_layers are windowed.
    return from(r.integer_or("max_window_layers", 0, 28), 1, "max_window_layers");
  }
  if (model_type == "gemma2" || model_type == "gpt_oss") {
    // Gemma2Config and GptOssConfig: layer_types default "sliding_attention" if (i + 1) % 2
    // else "full_attention": the even layers (0, 2, ...) are windowed.
    return from(0, 2, "sliding_window");
  }
  // Mistral and the Llama layout: every layer uses the window
  // (transformers/models/mistral/modeling_mistral.py passes sliding_window to every layer).
  return from(0, 1, "sliding_window");
}

// The leading dense layers of a Qwen2-MoE/Qwen3-MoE config. Their layer i has an MoE block
// when i is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0
// (transformers/models/qwen3_moe/modeling_qwen3_moe.py, Qwen3MoeDecoderLayer); trainsim models
// a leading run of dense layers only, so the step must be 1 and mlp_only_layers 0..k-1.
std::int64_t hf_qwen_dense_layers(ObjectReader& r, const auto& has) {
  if (has("decoder_sparse_step")) {
    const std::int64_t step = r.integer("decoder_sparse_step", 1, model::kMaxLayers);
    if (step != 1) {
      throw r.error("decoder_sparse_step",
                    "MoE blocks on every n-th layer only are not modelled (trainsim models "
                    "leading dense layers, then MoE layers); expected 1, got " +
                        std::to_string(step));
    }
  }
  if (!has("mlp_only_layers") || r.raw("mlp_only_layers").is_null()) return 0;
  const auto& layers = r.array("mlp_only_layers");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& v = layers[i];
    if (!v.is_number_integer() || v.get<std::int64_t>() != static_cast<std::int64_t>(i)) {
      throw r.error("mlp_only_layers",
                    "dense layers other than a leading run are not modelled; expected [0, 1, "
                    "..., k - 1], got " +
                        describe_json(v) + " at entry " + std::to_string(i));
    }
  }
  return static_cast<std::int64_t>(layers.size());
}

// DeepSeek-V2 and -V3 configs (DeepseekV2Config, DeepseekV3Config): latent attention and
// their MoE keys, whose class defaults the reader requires to be written.
bool hf_deepseek(const std::string& model_type) {
  return model_type == "deepseek_v2" || model_type == "deepseek_v3";
}

// The expert keys each mixture-of-experts family's configuration class reads
// (transformers/models/<family>/configuration_<family>.py: MixtralConfig, GptOssConfig,
// Qwen2MoeConfig, Qwen3MoeConfig, DeepseekV2Config, DeepseekV3Config; DeepSeek-V3's released
// config.json also writes moe_layer_freq). Another family's key in a config is read by no code of
// its model: a Mixtral config's n_shared_experts or first_k_dense_replace, a Qwen3-MoE config's
// shared_expert_intermediate_size. Empty for other model types, whose expert keys are all read.
std::vector<std::string_view> hf_family_expert_keys(const std::string& model_type) {
  if (model_type == "mixtral") return {"num_local_experts", "num_experts_per_tok"};
  if (model_type == "gpt_oss") {
    return {"num_local_experts", "num_experts_per_tok", "experts_per_token"};
  }
  if (model_type == "qwen2_moe") {
    return {"num_experts",           "num_experts_per_tok",
            "moe_intermediate_size", "shared_expert_intermediate_size",
            "decoder_sparse_step",   "mlp_only_layers"};
  }
  if (model_type == "qwen3_moe") {
    return {"num_experts", "num_experts_per_tok", "moe_intermediate_size", "decoder_sparse_step",
            "mlp_only_layers"};
  }
  if (hf_deepseek(model_type)) {
    return {"n_routed_experts", "num_experts_per_tok",   "moe_intermediate_size",
            "n_shared_experts", "first_k_dense_replace", "moe_layer_freq"};
  }
  return {};
}

// The mixture-of-experts keys of a Hugging Face config (docs/models.md, "Mixture of experts").
// `ignored` and `uncounted` collect the keys for the note line.
void read_hf_moe(ObjectReader& r, const std::string& model_type, ModelSpec& m,
                 std::vector<std::string>& ignored, std::vector<std::string>& uncounted) {
  // Another family's expert keys are ignored, with the note naming them and the family, as its
  // model's code ignores them; they used to add shared experts or dense layers.
  const std::vector<std::string_view> family = hf_family_expert_keys(model_type);
  std::vector<std::string_view> foreign;
  if (!family.empty()) {
    for (const auto& list :
         {std::vector<std::string_view>(kHfExpertCountKeys.begin(), kHfExpertCountKeys.end()),
          std::vector<std::string_view>(kHfExpertDetailKeys.begin(), kHfExpertDetailKeys.end())}) {
      for (const auto key : list) {
        if (contains(family, key) || !r.has(std::string(key))) continue;
        foreign.push_back(key);
        ignored.push_back(std::string(key) + " (not a " + model_type + " key)");
      }
    }
  }
  const auto has = [&r, &foreign](std::string_view key) {
    return !contains(foreign, key) && r.has(std::string(key));
  };
  std::string count_key;
  for (const auto key : kHfExpertCountKeys) {
    if (!has(key)) continue;
    if (!count_key.empty()) {
      throw r.error(std::string(key), "the expert count is already given by " + count_key +
                                          "; expected one of num_local_experts, num_experts, "
                                          "n_routed_experts, got both");
    }
    count_key = key;
  }
  if (count_key.empty()) {
    // A mixture-of-experts family's config without its expert count would be priced as a dense
    // model in silence (transformers fills the family's default: MixtralConfig 8, top 2).
    const auto family_key = [&]() -> std::string {
      if (model_type == "mixtral" || model_type == "gpt_oss") return "num_local_experts";
      if (model_type == "qwen2_moe" || model_type == "qwen3_moe") return "num_experts";
      if (hf_deepseek(model_type)) return "n_routed_experts";
      return "";
    }();
    if (!family_key.empty()) {
      throw r.error(family_key, "missing required key; model_type '" + model_type +
                                    "' is a mixture of experts: expected " + family_key +
                                    ", the routed experts of each MoE layer");
    }
    for (const auto key : kHfExpertDetailKeys) {
      if (has(key)) {
        throw r.error(std::string(key),
                      std::string(key) +
                          " describes experts; expected it with an expert count "
                          "(num_local_experts, num_experts or n_routed_experts), got none");
      }
    }
    return;
  }
  m.num_experts = r.integer(count_key, 1, model::kMaxExperts);
  // GptOssConfig writes both experts_per_token and num_experts_per_tok.
  const bool alias = has("experts_per_token");
  const bool main = has("num_experts_per_tok");
  if (!alias && !main) {
    throw r.error("num_experts_per_tok",
                  "missing required key; expected an integer in [1, " +
                      std::to_string(model::kMaxExperts) +
                      "], the experts each token is routed to (or its alias experts_per_token)");
  }
  m.num_experts_per_token =
      r.integer(main ? "num_experts_per_tok" : "experts_per_token", 1, model::kMaxExperts);
  if (alias && main) {
    const std::int64_t other = r.integer("experts_per_token", 1, model::kMaxExperts);
    if (other != m.num_experts_per_token) {
      throw r.error("experts_per_token", "a second spelling of num_experts_per_tok; expected " +
                                             std::to_string(m.num_experts_per_token) + ", got " +
                                             std::to_string(other));
    }
  }
  // Mixtral and GPT-OSS have no moe_intermediate_size: their experts are intermediate_size wide.
  // The other families' config classes give the key a default of their own (Qwen3MoeConfig 768,
  // not intermediate_size): a config without it is refused, as a missing expert count is.
  if (!has("moe_intermediate_size") &&
      (model_type == "qwen2_moe" || model_type == "qwen3_moe" || model_type == "deepseek_v2" ||
       model_type == "deepseek_v3")) {
    throw r.error("moe_intermediate_size",
                  "missing required key; model_type '" + model_type +
                      "' sizes its experts apart from intermediate_size: expected "
                      "moe_intermediate_size, the width of each expert's MLP");
  }
  m.expert_ffn_hidden = has("moe_intermediate_size")
                            ? r.integer("moe_intermediate_size", 1, model::kMaxFfnHidden)
                            : m.ffn_hidden;
  // DeepSeek: n_shared_experts experts of moe_intermediate_size (DeepseekV3MoE builds them as one
  // MLP of n_shared_experts x moe_intermediate_size: the same weights and FLOPs). Qwen2-MoE: one
  // shared expert of shared_expert_intermediate_size behind a sigmoid gate (Qwen2MoeSparseMoeBlock
  // shared_expert_gate, nn.Linear(hidden_size, 1, bias=False)).
  // DeepseekV3Config defaults n_shared_experts to 1, DeepseekV2Config to 2, not to None (no
  // shared expert): a config without it is refused.
  if (!has("n_shared_experts") && hf_deepseek(model_type)) {
    throw r.error("n_shared_experts",
                  "missing required key; model_type '" + model_type + "' defaults it to " +
                      (model_type == "deepseek_v3" ? "1" : "2") +
                      " in its configuration class: expected n_shared_experts, the shared "
                      "experts of moe_intermediate_size (null or 0 for none)");
  }
  if (has("n_shared_experts") && !r.raw("n_shared_experts").is_null()) {
    m.num_shared_experts = r.integer("n_shared_experts", 0, model::kMaxExperts);
    m.shared_expert_ffn_hidden = m.num_shared_experts > 0 ? m.expert_ffn_hidden : 0;
  }
  // Qwen2MoeConfig's shared expert has a width of its own by default (the key absent is not
  // "no shared expert"): refused, as above.
  if (model_type == "qwen2_moe" && !has("shared_expert_intermediate_size")) {
    throw r.error("shared_expert_intermediate_size",
                  "missing required key; model_type 'qwen2_moe' has a shared expert: expected "
                  "shared_expert_intermediate_size, its width (0 for none)");
  }
  if (has("shared_expert_intermediate_size")) {
    const std::int64_t width =
        r.integer("shared_expert_intermediate_size", 0, model::kMaxFfnHidden);
    // Two descriptions of the shared experts, DeepSeek's count of moe_intermediate_size
    // and Qwen2-MoE's one gated expert of its own width: the second replaced the first.
    if (width > 0 && m.num_shared_experts > 0) {
      throw r.error("shared_expert_intermediate_size",
                    "the shared experts are already given by n_shared_experts (" +
                        std::to_string(m.num_shared_experts) +
                        " of moe_intermediate_size); expected one of n_shared_experts and "
                        "shared_expert_intermediate_size, got both");
    }
    if (width > 0) {
      m.num_shared_experts = 1;
      m.shared_expert_ffn_hidden = width;
      m.shared_expert_gate = true;
    }
  }
  std::string dense_key = "first_k_dense_replace";
  // DeepseekV3Config defaults first_k_dense_replace to 3 (DeepseekV2Config to 0): a DeepSeek-V3
  // config without it is refused, not priced with every layer MoE.
  if (!has("first_k_dense_replace") && model_type == "deepseek_v3") {
    throw r.error("first_k_dense_replace",
                  "missing required key; model_type 'deepseek_v3' defaults it to 3 in its "
                  "configuration class: expected first_k_dense_replace, the leading dense "
                  "layers (0 for none)");
  }
  if (has("first_k_dense_replace") || has("moe_layer_freq")) {
    // Qwen's keys for the dense layers beside DeepSeek's: two descriptions of one thing, which
    // the check of unread keys called unknown though both are read.
    for (const char* qwen : {"mlp_only_layers", "decoder_sparse_step"}) {
      if (!has(qwen)) continue;
      const char* deepseek =
          has("first_k_dense_replace") ? "first_k_dense_replace" : "moe_layer_freq";
      throw r.error(qwen, std::string("the dense layers are already given by ") + deepseek +
                              " (DeepSeek's keys); expected DeepSeek's first_k_dense_replace "
                              "and moe_layer_freq or Qwen's mlp_only_layers and "
                              "decoder_sparse_step, got both");
    }
    // DeepseekV3DecoderLayer: an MoE block when layer_idx >= first_k_dense_replace and
    // layer_idx % moe_layer_freq == 0 (DeepSeek's own modeling_deepseek.py; transformers'
    // classes have no moe_layer_freq, DeepSeek-V3's released config.json writes 1).
    // DeepseekV2Config: first_k_dense_replace 0 when absent.
    m.num_dense_layers =
        has("first_k_dense_replace") ? r.integer("first_k_dense_replace", 0, model::kMaxLayers) : 0;
    const std::int64_t freq = has("moe_layer_freq") ? r.integer("moe_layer_freq", 1) : 1;
    if (freq != 1) {
      throw r.error("moe_layer_freq",
                    "MoE blocks on every n-th layer only are not modelled (trainsim models "
                    "leading dense layers, then MoE layers); expected 1, got " +
                        std::to_string(freq));
    }
  } else {
    dense_key = "mlp_only_layers";
    m.num_dense_layers = hf_qwen_dense_layers(r, has);
  }
  // Router biases: DeepSeek-V3's e_score_correction_bias (modeling_deepseek.py, MoEGate with
  // topk_method "noaux_tc"), GPT-OSS's router (GptOssTopKRouter, a bias per expert). GPT-OSS's
  // experts carry biases too (GptOssExperts gate_up_proj_bias, down_proj_bias).
  if (model_type == "deepseek_v3") m.router_bias = true;
  if (model_type == "gpt_oss") {
    m.router_bias = true;
    m.mlp_bias = true;
    uncounted.emplace_back("attention sinks (gpt_oss: one learned logit per head and layer, " +
                           std::to_string(m.num_heads * m.num_layers) + " parameters)");
  }
  check_moe(r, m,
            MoeKeys{count_key, main ? "num_experts_per_tok" : "experts_per_token", dense_key,
                    "num_hidden_layers"});
  for (const auto key : kHfMoeIgnoredKeys) {
    if (r.has(std::string(key))) ignored.emplace_back(key);
  }
}

// Multi-head latent attention's keys of a Hugging Face config (DeepseekV2Config,
// DeepseekV3Config); q_lora_rank null means queries projected directly (DeepSeek-V2-Lite).
void read_hf_mla(ObjectReader& r, const std::string& model_type, ModelSpec& m) {
  // DeepseekV2Config and DeepseekV3Config default kv_lora_rank to 512 (latent attention, with
  // qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128), and their attention has no
  // other form: a config without it was priced as multi-head attention of hidden / heads.
  if (hf_deepseek(model_type) && (!r.has("kv_lora_rank") || r.raw("kv_lora_rank").is_null())) {
    throw r.error("kv_lora_rank",
                  std::string(r.has("kv_lora_rank") ? "null" : "missing required key") +
                      "; model_type '" + model_type +
                      "' is latent attention, its configuration class defaults "
                      "it to 512: expected kv_lora_rank, the rank of the "
                      "compressed keys and values");
  }
  if (!r.has("kv_lora_rank") || r.raw("kv_lora_rank").is_null()) {
    for (const auto key : kHfMlaKeys) {
      if (key != "kv_lora_rank" && r.has(std::string(key)) && !r.raw(std::string(key)).is_null()) {
        throw r.error(std::string(key), std::string(key) +
                                            " describes multi-head latent attention; expected it "
                                            "with kv_lora_rank, got no kv_lora_rank");
      }
    }
    return;
  }
  m.kv_lora_rank = r.integer("kv_lora_rank", 1, model::kMaxLoraRank);
  // DeepseekV2Config and DeepseekV3Config default q_lora_rank to 1536, not to None (queries
  // projected directly): a config without it is refused, not priced with a full q_proj.
  if (!r.has("q_lora_rank") && hf_deepseek(model_type)) {
    throw r.error("q_lora_rank", "missing required key; model_type '" + model_type +
                                     "' defaults it to 1536 (low-rank queries) in its "
                                     "configuration class: expected q_lora_rank (null for "
                                     "queries projected directly, as DeepSeek-V2-Lite)");
  }
  m.q_lora_rank = nullable_integer(r, "q_lora_rank", model::kMaxLoraRank).value_or(0);
  m.qk_nope_head_dim = r.integer("qk_nope_head_dim", 1, model::kMaxHeadDim);
  m.qk_rope_head_dim = r.integer("qk_rope_head_dim", 1, model::kMaxHeadDim);
  m.v_head_dim = r.integer("v_head_dim", 1, model::kMaxHeadDim);
}

// The value of an ignored Hugging Face key (kHfIgnoredKeys) checked for its type and range, as
// the config classes declare them (LlamaConfig, PreTrainedConfig), so that a damaged value is
// refused rather than noted as merely ignored. Keys checked where they are read (rope_* with
// rope_parameters' rope_theta, max_position_embeddings, dtypes, architectures) pass.
void check_ignored_value(ObjectReader& r, const std::string& key) {
  const nlohmann::json& v = r.raw(key);
  const auto fail = [&](const std::string& expected) {
    throw r.error(key, "expected " + expected + ", got " + describe_json(v));
  };
  const auto integer = [](const nlohmann::json& x) {
    return x.is_number_integer() || x.is_number_unsigned();
  };
  if (key == "attention_dropout" || key == "mlp_dropout") {
    if (!v.is_null() && !(v.is_number() && v.get<double>() >= 0.0 && v.get<double>() <= 1.0)) {
      fail("a dropout rate from 0 to 1");
    }
  } else if (key == "rms_norm_eps") {
    if (!(v.is_number() && v.get<double>() > 0.0)) fail("a number > 0");
  } else if (key == "initializer_range") {
    if (!(v.is_number() && v.get<double>() >= 0.0)) fail("a number >= 0");
  } else if (key == "use_cache" || key == "output_attentions" || key == "output_hidden_states" ||
             key == "rope_interleave") {
    if (!v.is_boolean()) fail("true or false");
  } else if (key == "bos_token_id" || key == "eos_token_id" || key == "pad_token_id") {
    const bool ids = v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), integer);
    if (!v.is_null() && !integer(v) && !(key == "eos_token_id" && ids)) {
      fail(key == "eos_token_id" ? "a token id, a list of them or null" : "a token id or null");
    }
  } else if (key == "pretraining_tp") {
    if (!(integer(v) && v.get<std::int64_t>() >= 1)) fail("an integer >= 1");
  } else if (key == "max_window_layers") {
    if (!v.is_null() && !(integer(v) && v.get<std::int64_t>() >= 0)) fail("an integer >= 0");
  } else if (key == "tokenizer_class" || key == "transformers_version") {
    if (!v.is_null() && !v.is_string()) fail("a name");
  } else if (key == "quantization_config" || key == "auto_map") {
    if (!v.is_null() && !v.is_object()) fail("an object");
  }
}

ModelSpec from_hugging_face(ObjectReader& r) {
  std::vector<std::string> ignored;    // present keys that do not change the cost
  std::vector<std::string> uncounted;  // parts that would add cost and are not counted
  ModelSpec m;
  m.id = r.source();
  // The families whose layout this reader knows (kHfGatedModelTypes: norms, biases, gating,
  // windows and experts by family, docs/models.md). Another family's config (gpt_neox's
  // LayerNorm, biases and parallel residual; gpt2's n_layer and n_embd; a misspelt name) would
  // be priced with the Llama layout in silence, or fail on a key its family names otherwise:
  // refused first, naming the families.
  const std::string model_type = r.choice_or(
      "model_type", std::vector<std::string>(kHfGatedModelTypes.begin(), kHfGatedModelTypes.end()),
      "llama");
  m.num_layers = r.integer("num_hidden_layers", 1, model::kMaxLayers);
  m.hidden = r.integer("hidden_size", 1, model::kMaxHidden);
  m.num_heads = r.integer("num_attention_heads", 1, model::kMaxHeads);
  // LlamaConfig: num_key_value_heads None means multi-head attention. Absent, the families
  // whose class gives it a number of its own take that number, not num_attention_heads
  // (configuration_<family>.py: MistralConfig, MixtralConfig and GptOssConfig 8, Qwen2Config and
  // Qwen3Config 32, Qwen2MoeConfig and GemmaConfig 16, Qwen3MoeConfig and Gemma2Config 4,
  // DeepseekV3Config 128): a config without it is refused where that number differs from the
  // heads, as a missing moe_intermediate_size is, rather than priced as multi-head attention.
  m.num_kv_heads =
      nullable_integer(r, "num_key_value_heads", model::kMaxHeads).value_or(m.num_heads);
  if (!r.has("num_key_value_heads")) {
    const std::int64_t class_default =
        model_type == "mistral" || model_type == "mixtral" || model_type == "gpt_oss" ? 8
        : model_type == "qwen2" || model_type == "qwen3"                              ? 32
        : model_type == "qwen2_moe" || model_type == "gemma"                          ? 16
        : model_type == "qwen3_moe" || model_type == "gemma2"                         ? 4
        : model_type == "deepseek_v3"                                                 ? 128
                                                                                      : 0;
    if (class_default > 0 && class_default != m.num_heads) {
      throw r.error("num_key_value_heads",
                    "missing required key; model_type '" + model_type + "' defaults it to " +
                        std::to_string(class_default) +
                        " in its configuration class, not to num_attention_heads (" +
                        std::to_string(m.num_heads) +
                        "): expected num_key_value_heads (null for one per attention head)");
    }
  }
  // LlamaConfig: head_dim None means hidden_size // num_attention_heads; an explicit one
  // (Gemma: 256 with hidden 2048 and 8 heads) sets the width of Q, K, V and O.
  // Absent, Gemma's, GPT-OSS's and Qwen3's classes give head_dim a default of their own
  // (GemmaConfig and Gemma2Config 256, GptOssConfig 64, Qwen3Config 128; configuration_*.py),
  // not hidden_size / num_attention_heads. Qwen3MoeConfig declares none, and its attention
  // reads getattr(config, "head_dim", hidden_size // num_attention_heads).
  const std::int64_t default_head_dim = model_type == "gemma" || model_type == "gemma2" ? 256
                                        : model_type == "gpt_oss"                       ? 64
                                        : model_type == "qwen3"                         ? 128
                                                                                        : 0;
  std::optional<std::int64_t> head_dim = nullable_integer(r, "head_dim", model::kMaxHeadDim);
  if (!r.has("head_dim") && default_head_dim > 0) head_dim = default_head_dim;
  m.ffn_hidden = r.integer("intermediate_size", 1, model::kMaxFfnHidden);
  m.vocab = r.integer("vocab_size", 1, model::kMaxVocab);

  // The names transformers' ACT2CLS maps (transformers/activations.py): each an elementwise
  // function of the MLP's hidden, priced alike (a memory-bound kernel over the same tensor), so
  // a ReLU fine-tune of Llama has the shapes and FLOPs of its base. Only the gated layout moves
  // cost (below). relu, relu2, quick_gelu and the others were refused as unknown.
  const std::vector<std::string> activations = {
      "silu",        "swish",      "gelu",          "gelu_new",   "gelu_fast", "gelu_pytorch_tanh",
      "gelu_python", "gelu_10",    "gelu_accurate", "quick_gelu", "relu",      "relu2",
      "relu6",       "leaky_relu", "laplace",       "linear",     "mish",      "sigmoid",
      "tanh",        "prelu"};
  std::string act = r.choice_or("hidden_act", activations, "silu");
  // GemmaConfig and Gemma2Config name the MLP's activation hidden_activation (GemmaMLP and
  // Gemma2MLP read it; GemmaConfig's hidden_act is its older name and null hidden_activation
  // falls back to gelu_pytorch_tanh: transformers/models/gemma/configuration_gemma.py,
  // gemma2/configuration_gemma2.py). google/gemma-7b's and gemma-2's config.json files carry it,
  // and it was refused as unknown. Their MLP is gated either way (kHfGatedModelTypes).
  if ((model_type == "gemma" || model_type == "gemma2") && r.has("hidden_activation") &&
      !r.raw("hidden_activation").is_null()) {
    act = r.choice_or("hidden_activation", activations, "gelu_pytorch_tanh");
  }
  const bool gated = contains(kHfGatedModelTypes, model_type) || act == "silu" || act == "swish";
  m.activation = gated ? Activation::SwiGlu : Activation::Gelu;
  // The Llama layout (LlamaRMSNorm); OLMo's OlmoLayerNorm is a LayerNorm with no weight and no
  // bias (modeling_olmo.py: F.layer_norm(x, shape, None, None)): no parameters.
  m.norm = model_type == "olmo" ? Norm::NonParametricLayerNorm : Norm::RmsNorm;
  // Each family's config class sets the default: GemmaConfig and Gemma2Config tie the LM head
  // to the embedding (tie_word_embeddings=True in transformers/models/gemma/
  // configuration_gemma.py and gemma2/configuration_gemma2.py; google/gemma-7b's config.json
  // has no such key and 8.54 billion parameters, one 256000 x 3072 matrix for both), the other
  // families' classes (LlamaConfig, MistralConfig, Qwen2Config, ...) untie it.
  const bool tied_by_default = model_type == "gemma" || model_type == "gemma2";
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", tied_by_default);
  m.position_embedding = PositionEmbedding::Rope;

  // Biases, by family (the modeling file of each in transformers/models/):
  //  - qwen2/modeling_qwen2.py: Qwen2Attention q_proj, k_proj, v_proj nn.Linear(..., bias=True),
  //    o_proj bias=False; Qwen2MLP bias=False. Qwen2Config has no bias keys: any are ignored.
  //  - mistral/modeling_mistral.py: every projection bias=False; MistralConfig has no bias keys.
  //  - llama/modeling_llama.py (and the other families, whose configs copy LlamaConfig's keys:
  //    qwen3, gemma, olmo, granite): q/k/v/o_proj bias=config.attention_bias, gate/up/down_proj
  //    bias=config.mlp_bias; both default False. Only LlamaMLP and GraniteMLP read mlp_bias:
  //    Qwen3MLP, GemmaMLP (Gemma 2's too), OlmoMLP (OLMo 2's too), Qwen3MoeMLP and
  //    DeepseekV2/V3MLP build gate/up/down_proj with bias=False, and GPT-OSS's experts always
  //    carry theirs (below): there the key is ignored.
  //  - qwen2_moe/modeling_qwen2_moe.py: Qwen2's attention biases; mixtral/modeling_mixtral.py:
  //    Mistral's (none).
  if (model_type == "qwen2" || model_type == "mistral" || model_type == "qwen2_moe" ||
      model_type == "mixtral") {
    m.qkv_bias = model_type == "qwen2" || model_type == "qwen2_moe";
    for (const char* key : {"attention_bias", "mlp_bias"}) {
      if (r.has(key)) {
        (void)r.boolean(key);
        ignored.emplace_back(key);
      }
    }
  } else {
    // GptOssConfig: attention_bias defaults to True (the released checkpoints carry q/k/v/o
    // biases).
    const bool attention_bias = r.boolean_or("attention_bias", model_type == "gpt_oss");
    m.qkv_bias = attention_bias;
    m.out_proj_bias = attention_bias;
    if (model_type == "llama" || model_type == "granite") {
      m.mlp_bias = r.boolean_or("mlp_bias", false);
    } else if (r.has("mlp_bias")) {
      (void)r.boolean("mlp_bias");
      ignored.emplace_back("mlp_bias (" + model_type + "'s MLP reads no such key)");
    }
  }

  read_hf_moe(r, model_type, m, ignored, uncounted);
  if (model::is_moe(m) && m.num_dense_layers == 0 && m.expert_ffn_hidden != m.ffn_hidden) {
    // Qwen3-MoE's intermediate_size sizes the MLP of mlp_only_layers, which it has none of:
    // ffn_hidden is then the expert width, as in a trainsim file without dense layers.
    ignored.emplace_back("intermediate_size (no dense layer)");
    m.ffn_hidden = m.expert_ffn_hidden;
  }
  read_hf_mla(r, model_type, m);
  // DeepSeek-V3 §2.2: D multi-token-prediction modules (ModelSpec::mtp_layers), trained with the
  // model and dropped at inference; not part of the 671B (README_WEIGHTS.md: 671B main model +
  // 14B MTP, whose checkpoint also stores copies of the shared embedding and head).
  // Only DeepseekV3Config has the key: another family's modelling code builds no such module,
  // so transformers would train the plain model (a Llama config given one is noted, not priced).
  if (r.has("num_nextn_predict_layers")) {
    const std::int64_t mtp = r.integer("num_nextn_predict_layers", 0, model::kMaxLayers);
    if (model_type == "deepseek_v3") {
      m.mtp_layers = mtp;
    } else {
      ignored.emplace_back("num_nextn_predict_layers (not a " + model_type + " key)");
    }
  }

  // Sliding window: sliding_window (null: none), switched off by use_sliding_window false
  // (Qwen2/Qwen3: default false), on the layers hf_window_layers finds.
  // 0 stands for no window here (a key of 0 is refused: nullable_integer reads at least 1).
  // Absent, Gemma 2's, GPT-OSS's and Mistral's classes set a window (Gemma2Config and
  // MistralConfig 4096, GptOssConfig 128), on the layers hf_window_layers gives them (the
  // alternating ones, every one of Mistral's). The Qwen classes' 4096 takes use_sliding_window
  // true, below.
  const bool qwen_window = contains(kHfQwenWindowTypes, model_type);
  const std::int64_t default_window =
      model_type == "gemma2" || model_type == "mistral" ||
              (qwen_window && r.has("use_sliding_window") &&
               r.raw("use_sliding_window").is_boolean() && r.raw("use_sliding_window").get<bool>())
          ? 4096
      : model_type == "gpt_oss" ? 128
                                : 0;
  std::int64_t sliding =
      r.has("sliding_window")
          ? nullable_integer(r, "sliding_window", model::kMaxPositions).value_or(0)
          : default_window;
  // The families whose attention applies no window (kHfWindowTypes) read no sliding_window: a
  // config that carries one trains with full attention in transformers, and is priced so.
  const bool window_dropped = !contains(kHfWindowTypes, model_type) && sliding > 0;
  if (window_dropped) {
    ignored.push_back("sliding_window (" + model_type + " applies no window)");
    sliding = 0;
  }
  // Only the Qwen config classes have use_sliding_window; the other families' attention reads
  // sliding_window alone, so there the key changes nothing (noted).
  bool use_window = true;
  if (qwen_window) {
    use_window = r.boolean_or("use_sliding_window", false);
  } else if (r.has("use_sliding_window")) {
    (void)r.boolean("use_sliding_window");
    ignored.push_back("use_sliding_window (read by the Qwen families only)");
  }
  const std::int64_t window = use_window ? sliding : 0;
  // A Qwen config's window switched off: its size, and the layers it would cover, change
  // nothing (noted, as a Llama config's sliding_window is).
  if (qwen_window && !use_window) {
    if (sliding > 0 && r.has("sliding_window")) {
      ignored.emplace_back("sliding_window (use_sliding_window false)");
    }
    if (contains(kHfMaxWindowTypes, model_type) && r.has("max_window_layers") &&
        !(r.has("layer_types") && !r.raw("layer_types").is_null())) {
      ignored.emplace_back("max_window_layers (use_sliding_window false)");
    }
  }
  WindowLayers windowed = hf_window_layers(r, model_type, m.num_layers);
  // layer_types naming windowed layers with no window to give them contradicts itself (the
  // config classes derive the list from the window: Qwen2Config's "sliding_attention" only
  // where sliding_window is set): refused, not priced as full attention in silence.
  if (window == 0 && windowed.count > 0 && windowed.key == "layer_types") {
    throw r.error(
        "layer_types",
        std::to_string(windowed.count) + " layers are \"sliding_attention\" but " +
            (window_dropped ? model_type + " applies no window (its attention builds a causal "
                                           "mask only); expected \"full_attention\" layers"
                            : "the config gives no window (sliding_window null or 0, or "
                              "use_sliding_window false); expected a sliding_window, or "
                              "\"full_attention\" layers"));
  }
  if (window > 0 && windowed.count > 0) {
    // A window on some layers only: those layers' list (ModelSpec::window_layers); on every
    // layer, none.
    m.attention_window = window;
    if (windowed.count < m.num_layers) m.window_layers = std::move(windowed.layers);
  }

  // RoPE, either spelling: rope_theta + rope_scaling (transformers < 5, most Hub checkpoints)
  // or rope_parameters (transformers >= 5). Only the types are checked; neither changes cost.
  if (r.has("rope_scaling") && !r.raw("rope_scaling").is_null()) (void)r.object("rope_scaling");
  if (r.has("rope_parameters") && !r.raw("rope_parameters").is_null()) {
    (void)r.object("rope_parameters");
  }
  if (r.has("rope_theta") && !(r.number("rope_theta") > 0.0)) {
    throw r.error("rope_theta",
                  "RoPE's base; expected a number > 0, got " + describe_json(r.raw("rope_theta")));
  }
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (!r.has(key) || r.raw(key).is_null()) continue;
    const nlohmann::json& rope = r.raw(key);
    if (const auto f = rope.find("factor");
        f != rope.end() && !(f->is_number() && f->get<double>() > 0.0)) {
      throw ConfigError(r.source(), r.pointer_of(key) + "/factor",
                        "expected a number > 0, got " + describe_json(*f));
    }
    // transformers v5 keeps RoPE's base inside rope_parameters: checked as the top-level one.
    if (const auto t = rope.find("rope_theta"); std::string_view(key) == "rope_parameters" &&
                                                t != rope.end() &&
                                                !(t->is_number() && t->get<double>() > 0.0)) {
      throw ConfigError(r.source(), r.pointer_of(key) + "/rope_theta",
                        "RoPE's base; expected a number > 0, got " + describe_json(*t));
    }
    for (const char* name : {"rope_type", "type"}) {
      if (const auto t = rope.find(name); t != rope.end() && !t->is_string()) {
        throw ConfigError(
            r.source(), r.pointer_of(key) + "/" + name,
            "expected a name such as \"linear\" or \"yarn\", got " + describe_json(*t));
      }
    }
  }
  // The other keys read for nothing but their type, so that a damaged file is not noted as
  // merely ignored: the context length the checkpoint supports, its dtype and class names.
  if (r.has("max_position_embeddings") && !r.raw("max_position_embeddings").is_null()) {
    (void)r.integer("max_position_embeddings", 1);
  }
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (r.has(key) && !r.raw(key).is_null() && !r.raw(key).is_string()) {
      throw r.error(key,
                    "expected a dtype name such as \"bfloat16\", got " + describe_json(r.raw(key)));
    }
  }
  if (r.has("architectures") && !r.raw("architectures").is_null()) {
    const nlohmann::json& names = r.raw("architectures");
    if (!names.is_array() ||
        !std::all_of(names.begin(), names.end(), [](const auto& n) { return n.is_string(); })) {
      throw r.error("architectures",
                    "expected a list of class names such as "
                    "[\"LlamaForCausalLM\"], got " +
                        describe_json(names));
    }
  }

  const bool qwen = contains(kHfMaxWindowTypes, model_type);
  for (const auto key : kHfIgnoredKeys) {
    if (key == "max_window_layers" && qwen) continue;  // read above
    if (!r.has(std::string(key))) continue;
    check_ignored_value(r, std::string(key));
    // A dropout of 0, as every released config has, costs nothing; any other rate samples and
    // applies a mask in each layer, which is not counted.
    if ((key == "attention_dropout" || key == "mlp_dropout") &&
        r.raw(std::string(key)).is_number() && r.number(std::string(key)) != 0.0) {
      uncounted.push_back(std::string(key) + " " + r.raw(std::string(key)).dump() +
                          " (a dropout mask per layer)");
      continue;
    }
    ignored.emplace_back(key);
  }
  for (const HfFamilyKey& f : kHfFamilyKeys) {
    const std::string key(f.key);
    if (f.model_type != model_type || !r.has(key)) continue;
    const nlohmann::json& v = r.raw(key);
    if (v.is_null() && f.nullable) {
      ignored.push_back(key);
      continue;
    }
    if (f.key == "cache_implementation") {
      if (!v.is_string()) throw r.error(key, "expected a name or null, got " + describe_json(v));
      ignored.push_back(key);
      continue;
    }
    if (!(v.is_number() && v.get<double>() > 0.0)) {
      throw r.error(key, std::string("expected a number > 0") + (f.nullable ? " or null" : "") +
                             ", got " + describe_json(v));
    }
    if (f.cost.empty()) {
      ignored.push_back(key);
    } else {
      uncounted.push_back(key + " " + v.dump() + " (" + std::string(f.cost) + ")");
    }
  }
  if (model::has_mla(m)) {
    // DeepseekV3Config sets head_dim = qk_rope_head_dim (the rotary part), and saved configs may
    // carry it: accepted when it says that. The query/key head size is nope + rope.
    if (head_dim && *head_dim != m.qk_rope_head_dim) {
      throw r.error("head_dim",
                    "with latent attention head_dim is the rotary part of a head "
                    "(qk_rope_head_dim); expected " +
                        std::to_string(m.qk_rope_head_dim) + ", got " + std::to_string(*head_dim));
    }
    check_mla(r, m, "num_key_value_heads", "attention_bias");
  }
  const bool head_size_given = head_dim.has_value() || model::has_mla(m);
  check_heads(r, m, "num_attention_heads", "num_key_value_heads", "hidden_size", head_size_given,
              "head_dim");
  m.head_dim = model::has_mla(m)
                   ? m.qk_nope_head_dim + m.qk_rope_head_dim
                   : head_dim.value_or(m.hidden / std::max<std::int64_t>(m.num_heads, 1));
  check_size(r, m, head_dim ? "head_dim" : "num_attention_heads", "num_hidden_layers");
  // Norms beyond the Llama layout's two per layer, left out of the counts and the kernels (a
  // few thousand parameters per layer, memory-bound kernels of a norm's cost): Gemma 2's
  // post-attention and post-feedforward RMSNorm (modeling_gemma2.py, Gemma2DecoderLayer:
  // four norms of hidden), OLMo 2's Q and K RMSNorm over the whole projections
  // (modeling_olmo2.py: q_norm of heads * head_dim, k_norm of kv_heads * head_dim).
  // GemmaModel and Gemma2Model scale the embeddings by sqrt(hidden_size) in every forward
  // (modeling_gemma.py, modeling_gemma2.py: `normalizer`), the elementwise pass a Granite config
  // names with its embedding_multiplier.
  if (model_type == "gemma" || model_type == "gemma2") {
    uncounted.push_back("a scaling of the embeddings (" + model_type +
                        ": by the square root of hidden_size in every forward)");
  }
  if (model_type == "gemma2") {
    uncounted.push_back(
        "two more norms per layer (gemma2: post-attention and post-feedforward "
        "RMSNorm, " +
        std::to_string(2 * m.hidden * m.num_layers) + " parameters)");
  }
  // Qwen3's per-head Q and K RMSNorm (modeling_qwen3.py and modeling_qwen3_moe.py: q_norm and
  // k_norm of head_dim, shared by the heads).
  if (model_type == "qwen3" || model_type == "qwen3_moe") {
    uncounted.push_back("Q and K norms (" + model_type + ": RMSNorm per head, " +
                        std::to_string(2 * m.head_dim * m.num_layers) + " parameters)");
  }
  if (model_type == "olmo2") {
    uncounted.push_back("Q and K norms (olmo2: RMSNorm over the projections, " +
                        std::to_string((m.num_heads + m.num_kv_heads) * m.head_dim * m.num_layers) +
                        " parameters)");
  }
  // trainsim's own documenting keys mean nothing in a Hugging Face config; transformers writes
  // "_name_or_path" and "_attn_implementation_autoset" there. Ignored like the rest, and named.
  for (std::string& key : r.unread_documentation_keys()) ignored.push_back(std::move(key));
  r.finish();
  if (!ignored.empty() || !uncounted.empty()) {
    const auto joined = [](std::vector<std::string> keys) {
      std::sort(keys.begin(), keys.end());
      std::string list;
      for (const auto& key : keys) list += (list.empty() ? "" : ", ") + key;
      return list;
    };
    std::string text;
    if (!ignored.empty())
      text = "Hugging Face keys ignored (no effect on cost): " + joined(ignored);
    if (!uncounted.empty()) {
      text += (text.empty() ? "" : "; ") + std::string("not counted (would add cost): ") +
              joined(uncounted);
    }
    note_once(r, text + "; docs/models.md lists the keys read");
  }
  return m;
}

}  // namespace

model::ModelSpec model_from_json(const nlohmann::json& json, const std::string& source,
                                 const std::string& pointer) {
  require_document_kind(json, DocumentKind::Model, source, pointer);
  ObjectReader r(json, source, pointer);
  // A config.json of any family carries model_type (PretrainedConfig.to_dict writes it), which
  // no trainsim model has: such a file is read, and refused, as Hugging Face's.
  const bool hugging_face = json.contains("num_hidden_layers") || json.contains("hidden_size") ||
                            (json.is_object() && json.contains("model_type"));
  if (hugging_face && json.is_object()) {
    // One key of either format in a file of the other would switch the reader and report the
    // other format's keys as missing: name the two keys instead.
    const char* hf_key = json.contains("hidden_size")         ? "hidden_size"
                         : json.contains("num_hidden_layers") ? "num_hidden_layers"
                                                              : "model_type";
    for (const char* key : {"layers", "hidden", "heads", "ffn_hidden"}) {
      if (json.contains(key)) {
        throw r.error(hf_key, std::string("a Hugging Face key in a model that has the trainsim "
                                          "key '") +
                                  key +
                                  "'; expected one format: trainsim's keys (layers, hidden, "
                                  "heads, ...) or a Hugging Face config.json's (num_hidden_layers, "
                                  "hidden_size, num_attention_heads, ...)");
      }
    }
  }
  if (hugging_face) return from_hugging_face(r);
  // None of trainsim's shape keys and no model_type (a nanoGPT or GPT-2 style file: n_layer,
  // n_embd, n_head): "/layers: missing required key" named a key the file never meant to use.
  if (json.is_object() && !json.empty() && !json.contains("layers") && !json.contains("hidden") &&
      !json.contains("heads")) {
    std::string keys;
    int shown = 0;
    for (const auto& [key, value] : json.items()) {
      if (shown++ == 4) {
        keys += ", ...";
        break;
      }
      keys += (keys.empty() ? "" : ", ") + key;
    }
    throw r.error("layers",
                  "missing required key; the file has none of trainsim's model keys "
                  "(layers, hidden, heads) and no Hugging Face model_type (its keys: " +
                      keys +
                      "): expected a trainsim model or a Hugging Face config.json of "
                      "a family docs/models.md lists");
  }
  // Only trainsim's keys: a Hugging Face config notes the keys it does not read, and a second
  // read would note them for a document the user did not write.
  ModelSpec m;
  with_near_miss_note(json, source, pointer, [&](const nlohmann::json& document) {
    ObjectReader reader(document, source, pointer);
    m = from_trainsim_keys(reader);
  });
  return m;
}

ModelNoteSink set_model_note_sink(ModelNoteSink sink) {
  NoteState& state = note_state();
  const std::lock_guard<std::mutex> lock(state.mutex);
  std::swap(state.sink, sink);
  return sink;
}

model::ModelSpec load_model_from_string(const std::string& text, const std::string& source) {
  return model_from_json(parse_json(text, source), source, "");
}

model::ModelSpec load_model(const std::string& name_or_path) {
  if (const auto builtin = builtin_file("models", name_or_path)) {
    auto m = model_from_json(parse_builtin_json(*builtin, "models/" + name_or_path + ".json"),
                             "models/" + name_or_path + ".json", "");
    m.id = name_or_path;
    return m;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(name_or_path, ec)) {
    throw ConfigError(name_or_path, "",
                      "is a directory; expected a model JSON file or a Hugging Face config.json");
  }
  if (names_readable_file(name_or_path)) {
    return model_from_json(read_json_file(name_or_path), name_or_path, "");
  }
  const auto ids = builtin_ids("models");
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
  if (names_a_file(name_or_path)) {
    throw ConfigError("no such file '" + name_or_path +
                      "'; expected a model JSON file or a Hugging Face config.json (or a "
                      "built-in model: " +
                      list + ")");
  }
  throw ConfigError("unknown model '" + name_or_path + "'" + did_you_mean(name_or_path, ids) +
                    "; expected a built-in model (" + list + ") or a path to a model JSON file");
}

}  // namespace trainsim::io
