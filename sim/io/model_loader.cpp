#include "sim/io/model_loader.hpp"

#include <algorithm>
#include <array>
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
// caching and the dtype the checkpoint was saved in do not change FLOPs or bytes; RoPE's base and
// scaling change the positions' frequencies, not the work; max_position_embeddings is the
// longest context the checkpoint supports, not the training sequence length (the scenario's
// seq_len is). docs/models.md has the whole mapping.
constexpr std::array<std::string_view, 21> kHfIgnoredKeys = {
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
    "max_window_layers",  // read only for Qwen2/Qwen3 (kHfQwenWindowTypes)
};

// Families whose sliding window is switched by use_sliding_window (default false) and applies
// to the layers from max_window_layers on (default 28): transformers/models/qwen2/
// configuration_qwen2.py and qwen3/configuration_qwen3.py, `layer_types` default
// "sliding_attention" if sliding_window is not None and i >= max_window_layers.
constexpr std::array<std::string_view, 2> kHfQwenWindowTypes = {"qwen2", "qwen3"};

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
// and the key that says so (for an error about a mix).
struct WindowLayers {
  std::int64_t count = 0;
  std::string key;
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
    std::int64_t count = 0;
    for (std::size_t i = 0; i < types.size(); ++i) {
      const auto& t = types[i];
      if (!t.is_string() || (t.get<std::string>() != "full_attention" &&
                             t.get<std::string>() != "sliding_attention")) {
        throw r.error("layer_types", "entry " + std::to_string(i) +
                                         ": expected \"full_attention\" or \"sliding_attention\", "
                                         "got " +
                                         describe_json(t));
      }
      if (t.get<std::string>() == "sliding_attention") ++count;
    }
    return {count, "layer_types"};
  }
  if (contains(kHfQwenWindowTypes, model_type)) {
    // Qwen2Config: max_window_layers default 28; layers i >= max_window_layers are windowed.
    const std::int64_t full = r.integer_or("max_window_layers", 0, 28);
    return {std::max<std::int64_t>(0, num_layers - full), "max_window_layers"};
  }
  if (model_type == "gemma2") {
    // Gemma2Config: layer_types default "sliding_attention" if (i + 1) % 2 else
    // "full_attention": the even layers (0, 2, ...) are windowed.
    return {(num_layers + 1) / 2, "sliding_window"};
  }
  // Mistral and the Llama layout: every layer uses the window
  // (transformers/models/mistral/modeling_mistral.py passes sliding_window to every layer).
  return {num_layers, "sliding_window"};
}

ModelSpec from_hugging_face(ObjectReader& r) {
  for (const auto key : kHfMoeKeys) {
    if (r.has(std::string(key))) {
      throw r.error(std::string(key),
                    "mixture-of-experts models are not supported; expected a dense model");
    }
  }
  std::vector<std::string> ignored;  // present keys that do not change the cost
  ModelSpec m;
  m.id = r.source();
  m.num_layers = r.integer("num_hidden_layers", 1, model::kMaxLayers);
  m.hidden = r.integer("hidden_size", 1, model::kMaxHidden);
  m.num_heads = r.integer("num_attention_heads", 1, model::kMaxHeads);
  // LlamaConfig: num_key_value_heads None means multi-head attention.
  m.num_kv_heads =
      nullable_integer(r, "num_key_value_heads", model::kMaxHeads).value_or(m.num_heads);
  // LlamaConfig: head_dim None means hidden_size // num_attention_heads; an explicit one
  // (Gemma: 256 with hidden 2048 and 8 heads) sets the width of Q, K, V and O.
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

  // Biases, by family (the modeling file of each in transformers/models/):
  //  - qwen2/modeling_qwen2.py: Qwen2Attention q_proj, k_proj, v_proj nn.Linear(..., bias=True),
  //    o_proj bias=False; Qwen2MLP bias=False. Qwen2Config has no bias keys: any are ignored.
  //  - mistral/modeling_mistral.py: every projection bias=False; MistralConfig has no bias keys.
  //  - llama/modeling_llama.py (and the other families, whose configs copy LlamaConfig's keys:
  //    qwen3, gemma, olmo, granite): q/k/v/o_proj bias=config.attention_bias, gate/up/down_proj
  //    bias=config.mlp_bias; both default False.
  if (model_type == "qwen2" || model_type == "mistral") {
    m.qkv_bias = model_type == "qwen2";
    for (const char* key : {"attention_bias", "mlp_bias"}) {
      if (r.has(key)) {
        (void)r.boolean(key);
        ignored.emplace_back(key);
      }
    }
  } else {
    const bool attention_bias = r.boolean_or("attention_bias", false);
    m.qkv_bias = attention_bias;
    m.out_proj_bias = attention_bias;
    m.mlp_bias = r.boolean_or("mlp_bias", false);
  }

  // Sliding window: sliding_window (null: none), switched off by use_sliding_window false
  // (Qwen2/Qwen3: default false), on the layers hf_window_layers finds.
  auto window = nullable_integer(r, "sliding_window", model::kMaxPositions);
  const bool use_window =
      r.boolean_or("use_sliding_window", !contains(kHfQwenWindowTypes, model_type));
  if (!use_window) window.reset();
  const WindowLayers windowed = hf_window_layers(r, model_type, m.num_layers);
  if (window && windowed.count == m.num_layers) {
    m.attention_window = *window;
  } else if (window && windowed.count > 0) {
    throw r.error(windowed.key,
                  "layers that mix sliding-window and full attention are not modelled; expected "
                  "the window (" +
                      std::to_string(*window) + ") on all " + std::to_string(m.num_layers) +
                      " layers or on none, got it on " + std::to_string(windowed.count));
  }

  // RoPE, either spelling: rope_theta + rope_scaling (transformers < 5, most Hub checkpoints)
  // or rope_parameters (transformers >= 5). Only the types are checked; neither changes cost.
  if (r.has("rope_scaling") && !r.raw("rope_scaling").is_null()) (void)r.object("rope_scaling");
  if (r.has("rope_parameters") && !r.raw("rope_parameters").is_null()) {
    (void)r.object("rope_parameters");
  }
  if (r.has("rope_theta")) (void)r.number("rope_theta");

  const bool qwen = contains(kHfQwenWindowTypes, model_type);
  for (const auto key : kHfIgnoredKeys) {
    if (key == "max_window_layers" && qwen) continue;  // read above
    if (r.has(std::string(key))) ignored.emplace_back(key);
  }
  check_heads(r, m, "num_attention_heads", "num_key_value_heads", "hidden_size",
              head_dim.has_value(), "head_dim");
  m.head_dim = head_dim.value_or(m.hidden / std::max<std::int64_t>(m.num_heads, 1));
  check_size(r, m, head_dim ? "head_dim" : "num_attention_heads", "num_hidden_layers");
  r.finish();
  if (!ignored.empty()) {
    std::sort(ignored.begin(), ignored.end());
    std::string list;
    for (const auto& key : ignored) list += (list.empty() ? "" : ", ") + key;
    note_once(r, "Hugging Face keys ignored (no effect on cost): " + list +
                     "; docs/models.md lists the keys read");
  }
  return m;
}

}  // namespace

model::ModelSpec model_from_json(const nlohmann::json& json, const std::string& source,
                                 const std::string& pointer) {
  ObjectReader r(json, source, pointer);
  const bool hugging_face = json.contains("num_hidden_layers") || json.contains("hidden_size");
  return hugging_face ? from_hugging_face(r) : from_trainsim_keys(r);
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
