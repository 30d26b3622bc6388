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
  // Sliding-window causal attention on every layer (Mistral): a query attends to itself and at
  // most attention_window - 1 earlier tokens. 0: full causal attention (the default).
  std::int64_t attention_window = 0;
};

}  // namespace trainsim::model
