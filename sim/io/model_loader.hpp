// Loading of model architectures: built-in ids (models/*.json, embedded at build time), paths to
// trainsim model files, inline objects inside a scenario, and Hugging Face config.json files as
// they come from the Hub. Everything goes through the strict ObjectReader.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "trainsim/model/model_spec.hpp"

namespace trainsim::io {

// The model named by a built-in id ("llama2-7b") or a path to a JSON file (trainsim's keys or a
// Hugging Face config.json). Throws ConfigError: unknown name that is not a file (with "did you
// mean"), unreadable file, malformed JSON, or any problem model_from_json reports.
[[nodiscard]] model::ModelSpec load_model(const std::string& name_or_path);

// A model from JSON text; `source` names it in errors and becomes the spec's id.
[[nodiscard]] model::ModelSpec load_model_from_string(const std::string& text,
                                                      const std::string& source);

// A model from a JSON object located at `pointer` ("" for a whole file, "/model" when inline in
// a scenario) of `source`. Two formats:
//  - trainsim's own keys (DESIGN.md "Model"): layers, hidden, heads, kv_heads, ffn_hidden, vocab,
//    activation, norm, tied_embeddings, position_embedding; optional head_dim (default
//    hidden / heads), max_positions (required with learned positions, rejected otherwise),
//    qkv_bias, out_proj_bias, mlp_bias (default false) or linear_bias (all three at once, not
//    with them), attention_window (a sliding window; default 0, full attention),
//    attention_window_layers (the layers that use it; default every layer), name (becomes
//    the id). Unknown keys are rejected.
//  - a Hugging Face config.json, detected by num_hidden_layers or hidden_size. docs/models.md
//    lists the keys read, the keys accepted and ignored, and the keys rejected. When ignored
//    keys are present, one "note:" line naming them goes to the note sink, once per source and
//    pointer in the process.
// Throws ConfigError with source and pointer for a missing, unknown, ill-typed or inconsistent
// key (kv_heads not dividing heads, hidden not divisible by heads without head_dim, ...).
[[nodiscard]] model::ModelSpec model_from_json(const nlohmann::json& json,
                                               const std::string& source,
                                               const std::string& pointer);

// Receives the "note: <source>[: <pointer>]: ..." lines model_from_json writes about a Hugging
// Face config's ignored keys (one line, no newline). The default writes the line to std::cerr.
// Returns the previous sink; an empty sink drops the notes. Thread-safe.
using ModelNoteSink = std::function<void(const std::string& line)>;
ModelNoteSink set_model_note_sink(ModelNoteSink sink);

}  // namespace trainsim::io
