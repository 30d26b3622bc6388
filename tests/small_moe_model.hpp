// A small mixture-of-experts model for tests, written inline as a scenario's "model": 4 layers
// (the first dense), hidden 1024, 8 heads of 128 (8 KV heads), dense MLP 4096 (SwiGLU), 16
// routed experts of width 1024 with top 2, one shared expert of width 512, vocabulary 256.
#pragma once

#include <nlohmann/json.hpp>

namespace trainsim::testing {

inline nlohmann::json small_moe_model() {
  return nlohmann::json::parse(R"({
    "layers": 4, "hidden": 1024, "heads": 8, "kv_heads": 8, "ffn_hidden": 4096, "vocab": 256,
    "activation": "swiglu", "norm": "rmsnorm", "tied_embeddings": false,
    "position_embedding": "rope", "experts": 16, "experts_per_token": 2,
    "expert_ffn_hidden": 1024, "shared_experts": 1, "shared_expert_ffn_hidden": 512,
    "dense_layers": 1})");
}

}  // namespace trainsim::testing
