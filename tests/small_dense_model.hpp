// A small dense model for tests, written inline as a scenario's "model": 8 layers, hidden 512,
// 8 heads (8 KV heads), FFN 1536 (SwiGLU), vocabulary 1024. Small enough for hundreds of full
// simulations in a test, deep enough for 4 pipeline stages of 2 virtual stages each.
#pragma once

#include <nlohmann/json.hpp>

namespace trainsim::testing {

inline nlohmann::json small_dense_model() {
  return nlohmann::json::parse(R"({
    "layers": 8, "hidden": 512, "heads": 8, "kv_heads": 8, "ffn_hidden": 1536, "vocab": 1024,
    "activation": "swiglu", "norm": "rmsnorm", "tied_embeddings": false,
    "position_embedding": "rope"})");
}

}  // namespace trainsim::testing
