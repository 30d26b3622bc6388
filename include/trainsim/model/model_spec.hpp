// The architecture of a decoder-only transformer: the shape every count, FLOP and byte of the
// simulation is derived from. Loaded from models/*.json, a path, inline keys or a Hugging Face
// config.json by io/model_loader.
#pragma once

#include <cstdint>
#include <string>

namespace trainsim::model {

enum class Activation { SwiGlu, Gelu };
enum class Norm { RmsNorm, LayerNorm };
enum class PositionEmbedding { Rope, Learned, Alibi };

struct ModelSpec {
  std::string id;                   // "llama2-7b", or the file it came from
  std::int64_t num_layers = 0;
  std::int64_t hidden = 0;
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;    // == num_heads without grouped-query attention
  std::int64_t head_dim = 0;        // hidden / num_heads unless the model says otherwise
  std::int64_t ffn_hidden = 0;      // MLP inner size (per projection for SwiGLU)
  std::int64_t vocab = 0;
  Activation activation = Activation::SwiGlu;
  Norm norm = Norm::RmsNorm;
  bool tied_embeddings = false;     // LM head shares the input embedding's weights
  PositionEmbedding position_embedding = PositionEmbedding::Rope;
  std::int64_t max_positions = 0;   // rows of the learned position table; 0 for rope/alibi
  bool linear_bias = false;         // biases on every linear layer (GPT-2/3 style)
};

}  // namespace trainsim::model
