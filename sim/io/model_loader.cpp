#include "sim/io/model_loader.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
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

// Hugging Face config.json keys that do not change the cost of training, accepted and ignored.
// Tokens ids, initialisation, numerics (eps), caching and the dtype the checkpoint was saved in
// do not change FLOPs or bytes; RoPE's base and scaling change the positions' frequencies, not
// the work; max_position_embeddings is the longest context the checkpoint supports, not the
// training sequence length (the scenario's seq_len is); sliding_window is modelled as full
// attention (exact when seq_len <= window, pessimistic beyond).
constexpr std::array<std::string_view, 24> kHfIgnoredKeys = {
    "architectures",
    "model_type",
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
    "sliding_window",
    "use_sliding_window",
    "max_window_layers",
    "tokenizer_class",
    "output_attentions",
    "output_hidden_states",
};

// Keys of mixture-of-experts configs (Mixtral, Qwen-MoE, DeepSeek): the dense model would be a
// wrong answer, so they are rejected rather than ignored.
constexpr std::array<std::string_view, 7> kHfMoeKeys = {
    "num_local_experts",     "num_experts_per_tok", "num_experts",           "n_routed_experts",
    "moe_intermediate_size", "n_shared_experts",    "first_k_dense_replace",
};

// Hugging Face model types whose MLP is gated (gate_proj, up_proj, down_proj) whatever the
// activation: GeGLU (Gemma) has the same shapes and FLOPs as SwiGLU, so it maps to SwiGlu.
constexpr std::array<std::string_view, 9> kHfGatedModelTypes = {
    "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "olmo", "olmo2", "granite",
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
// overflow, from the same terms as model::num_parameters.
void check_size(ObjectReader& r, const ModelSpec& m, const std::string& heads_key,
                const std::string& layers_key) {
  if (m.num_heads * m.head_dim > model::kMaxAttentionWidth) {
    throw r.error(heads_key, "heads x head_dim = " + std::to_string(m.num_heads) + " x " +
                                 std::to_string(m.head_dim) + " = " +
                                 std::to_string(m.num_heads * m.head_dim) +
                                 ": out of range; expected at most " +
                                 std::to_string(model::kMaxAttentionWidth));
  }
  const auto h = static_cast<double>(m.hidden);
  const auto q = static_cast<double>(m.num_heads * m.head_dim);
  const auto kv = static_cast<double>(m.num_kv_heads * m.head_dim);
  const auto f = static_cast<double>(m.ffn_hidden);
  const double layer =
      2.0 * h * q + 2.0 * h * kv + 3.0 * h * f + 2.0 * q + 2.0 * kv + 3.0 * f + 6.0 * h;
  const double total = static_cast<double>(m.num_layers) * layer +
                       2.0 * static_cast<double>(m.vocab) * h +
                       static_cast<double>(m.max_positions) * h + 2.0 * h;
  if (total > static_cast<double>(model::kMaxParameters)) {
    char count[32];
    (void)std::snprintf(count, sizeof count, "%.3g", total);
    throw r.error(layers_key, std::string("the model has about ") + count +
                                  " parameters: out of range; expected at most 2^50 (about "
                                  "1.13e+15)");
  }
}

ModelSpec from_trainsim_keys(ObjectReader& r) {
  ModelSpec m;
  m.id = r.string_or("name", r.source());
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
  m.norm =
      r.choice("norm", {"rmsnorm", "layernorm"}) == "rmsnorm" ? Norm::RmsNorm : Norm::LayerNorm;
  m.tied_embeddings = r.boolean("tied_embeddings");
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
  m.linear_bias = r.boolean_or("linear_bias", false);
  check_heads(r, m, "heads", "kv_heads", "hidden", head_dim_given, "head_dim");
  if (!head_dim_given) m.head_dim = m.hidden / m.num_heads;
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

ModelSpec from_hugging_face(ObjectReader& r) {
  for (const auto key : kHfMoeKeys) {
    if (r.has(std::string(key))) {
      throw r.error(std::string(key),
                    "mixture-of-experts models are not supported; expected a dense model");
    }
  }
  ModelSpec m;
  m.id = r.source();
  m.num_layers = r.integer("num_hidden_layers", 1, model::kMaxLayers);
  m.hidden = r.integer("hidden_size", 1, model::kMaxHidden);
  m.num_heads = r.integer("num_attention_heads", 1, model::kMaxHeads);
  // LlamaConfig: num_key_value_heads None means multi-head attention.
  m.num_kv_heads =
      nullable_integer(r, "num_key_value_heads", model::kMaxHeads).value_or(m.num_heads);
  const auto head_dim = nullable_integer(r, "head_dim", model::kMaxHeadDim);
  m.ffn_hidden = r.integer("intermediate_size", 1, model::kMaxFfnHidden);
  m.vocab = r.integer("vocab_size", 1, model::kMaxVocab);

  const std::string model_type = r.string_or("model_type", "llama");
  const std::string act =
      r.choice_or("hidden_act",
                  {"silu", "swish", "gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh"}, "silu");
  const bool gated = contains(kHfGatedModelTypes, model_type) || act == "silu" || act == "swish";
  m.activation = gated ? Activation::SwiGlu : Activation::Gelu;
  m.norm = Norm::RmsNorm;  // the Llama layout (LlamaRMSNorm)
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  m.position_embedding = PositionEmbedding::Rope;
  // Biases: LlamaConfig's attention_bias (Q, K, V, O) and mlp_bias; trainsim has one switch for
  // biases on every linear layer, so both must agree.
  const bool attention_bias = r.boolean_or("attention_bias", false);
  const bool mlp_bias = r.boolean_or("mlp_bias", false);
  if (attention_bias != mlp_bias) {
    throw r.error("mlp_bias", std::string("biases on only some linear layers are not modelled; "
                                          "expected the same as attention_bias (") +
                                  (attention_bias ? "true" : "false") + "), got " +
                                  (mlp_bias ? "true" : "false"));
  }
  m.linear_bias = attention_bias;

  // RoPE, either spelling: rope_theta + rope_scaling (transformers < 5, most Hub checkpoints)
  // or rope_parameters (transformers >= 5). Only the types are checked; neither changes cost.
  if (r.has("rope_scaling") && !r.raw("rope_scaling").is_null()) (void)r.object("rope_scaling");
  if (r.has("rope_parameters") && !r.raw("rope_parameters").is_null()) {
    (void)r.object("rope_parameters");
  }
  if (r.has("rope_theta")) (void)r.number("rope_theta");

  for (const auto key : kHfIgnoredKeys) (void)r.has(std::string(key));
  check_heads(r, m, "num_attention_heads", "num_key_value_heads", "hidden_size",
              head_dim.has_value(), "head_dim");
  m.head_dim = head_dim.value_or(m.hidden / std::max<std::int64_t>(m.num_heads, 1));
  check_size(r, m, head_dim ? "head_dim" : "num_attention_heads", "num_hidden_layers");
  r.finish();
  return m;
}

}  // namespace

model::ModelSpec model_from_json(const nlohmann::json& json, const std::string& source,
                                 const std::string& pointer) {
  ObjectReader r(json, source, pointer);
  const bool hugging_face = json.contains("num_hidden_layers") || json.contains("hidden_size");
  return hugging_face ? from_hugging_face(r) : from_trainsim_keys(r);
}

model::ModelSpec load_model_from_string(const std::string& text, const std::string& source) {
  return model_from_json(parse_json(text, source), source, "");
}

model::ModelSpec load_model(const std::string& name_or_path) {
  if (const auto builtin = builtin_file("models", name_or_path)) {
    auto m = model_from_json(parse_json(std::string(*builtin), "models/" + name_or_path + ".json"),
                             "models/" + name_or_path + ".json", "");
    m.id = name_or_path;
    return m;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(name_or_path, ec)) {
    throw ConfigError(name_or_path, "",
                      "is a directory; expected a model JSON file or a Hugging Face config.json");
  }
  if (std::filesystem::is_regular_file(name_or_path, ec)) {
    return model_from_json(read_json_file(name_or_path), name_or_path, "");
  }
  const auto ids = builtin_ids("models");
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
  throw ConfigError("unknown model '" + name_or_path + "'" + did_you_mean(name_or_path, ids) +
                    "; expected a built-in model (" + list + ") or a path to a model JSON file");
}

}  // namespace trainsim::io
