#include "sim/io/model_loader.hpp"

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"

#include "sim/io/builtin_data.hpp"

using namespace trainsim;
using namespace trainsim::model;
using trainsim::io::load_model;
using trainsim::io::load_model_from_string;

namespace {

// llama3-8b's shape in trainsim's keys, to be edited per bad-input case.
std::string llama3_8b_keys(const std::string& extra = "") {
  return R"({"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
             "vocab": 128256, "activation": "swiglu", "norm": "rmsnorm",
             "tied_embeddings": false, "position_embedding": "rope")" +
         extra + "}";
}

// The same model as a Hugging Face config.json with transformers v5's rope_parameters.
constexpr const char* kHfRopeParameters = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
  "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
  "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
  "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "tie_word_embeddings": false,
  "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                      "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                      "original_max_position_embeddings": 8192},
  "dtype": "bfloat16", "transformers_version": "5.0.0"})";

}  // namespace

TEST_CASE("model_loader: every built-in model loads", "[model][io]") {
  const auto ids = io::builtin_ids("models");
  REQUIRE(ids.size() == 9);
  for (const auto& id : ids) {
    CAPTURE(id);
    const auto m = load_model(id);
    REQUIRE(m.id == id);
    REQUIRE(m.num_heads % m.num_kv_heads == 0);
  }
}

TEST_CASE("model_loader: trainsim keys", "[model][io]") {
  const auto m = load_model_from_string(llama3_8b_keys(), "m.json");
  REQUIRE(m.id == "m.json");
  REQUIRE(m.head_dim == 128);  // default hidden / heads = 4096 / 32
  REQUIRE(m.max_positions == 0);
  REQUIRE_FALSE(m.linear_bias);
  REQUIRE(num_parameters(m) == 8'030'261'248);
  SECTION("an explicit head_dim and a name") {
    const auto named = load_model_from_string(
        llama3_8b_keys(R"(, "head_dim": 64, "name": "small-heads")"), "m.json");
    REQUIRE(named.head_dim == 64);
    REQUIRE(named.id == "small-heads");
  }
}

TEST_CASE("model_loader: Hugging Face config.json, both RoPE spellings", "[model][io]") {
  SECTION("rope_theta + rope_scaling from a Hub file (tests/data)") {
    const std::string path = std::string(TRAINSIM_TEST_DATA_DIR) + "/hf_llama3_8b_config.json";
    const auto m = load_model(path);
    REQUIRE(m.id == path);
    REQUIRE(m.num_layers == 32);
    REQUIRE(m.num_kv_heads == 8);
    REQUIRE(m.head_dim == 128);
    REQUIRE(m.activation == Activation::SwiGlu);
    REQUIRE(m.norm == Norm::RmsNorm);
    REQUIRE(m.position_embedding == PositionEmbedding::Rope);
    REQUIRE_FALSE(m.tied_embeddings);
    REQUIRE(num_parameters(m) == num_parameters(load_model("llama3-8b")));
  }
  SECTION("rope_parameters (transformers v5)") {
    const auto m = load_model_from_string(kHfRopeParameters, "config.json");
    REQUIRE(num_parameters(m) == 8'030'261'248);
  }
  SECTION("rope_scaling as an object (Llama 3.2 1B, tied, head_dim 64)") {
    const auto m = load_model_from_string(R"({
      "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
      "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256,
      "tie_word_embeddings": true, "rope_theta": 500000.0,
      "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                       "original_max_position_embeddings": 8192, "rope_type": "llama3"}})",
                                          "config.json");
    REQUIRE(num_parameters(m) == num_parameters(load_model("llama3.2-1b")));
  }
  SECTION("num_key_value_heads absent or null means multi-head attention") {
    const std::string base = R"({"hidden_size": 4096, "intermediate_size": 11008,
        "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32000)";
    const auto absent = load_model_from_string(base + "}", "config.json");
    const auto null =
        load_model_from_string(base + R"(, "num_key_value_heads": null})", "config.json");
    REQUIRE(absent.num_kv_heads == 32);
    REQUIRE(null.num_kv_heads == 32);
    // Llama-2-7B's shape: the worked example's count (docs/sources.md W.1).
    REQUIRE(num_parameters(absent) == 6'738'415'616);
  }
  SECTION("gelu in a gated family is GeGLU, modelled with SwiGLU's shapes") {
    const auto m = load_model_from_string(R"({"model_type": "gemma",
        "hidden_act": "gelu_pytorch_tanh", "hidden_size": 2048, "intermediate_size": 16384,
        "num_hidden_layers": 18, "num_attention_heads": 8, "num_key_value_heads": 1,
        "head_dim": 256, "vocab_size": 256000})",
                                          "config.json");
    REQUIRE(m.activation == Activation::SwiGlu);
    REQUIRE(m.head_dim == 256);
  }
}

TEST_CASE("model_loader: each bad input is a ConfigError naming file and pointer", "[model][io]") {
  SECTION("unknown built-in name suggests the closest") {
    REQUIRE_THROWS_AS(load_model("llama2-7"), ConfigError);
    REQUIRE_THROWS_WITH(load_model("llama2-7"),
                        Catch::StartsWith("unknown model 'llama2-7'; did you mean 'llama2-7b'?"));
  }
  SECTION("unreadable file") {
    // A name that is neither built in nor a file reads as an unknown model.
    REQUIRE_THROWS_WITH(load_model("/nonexistent/model.json"),
                        Catch::Contains("expected a built-in model (gpt3-175b, "));
  }
  SECTION("missing key") {
    const std::string text = R"({"layers": 32, "hidden": 4096})";
    REQUIRE_THROWS_AS(load_model_from_string(text, "m.json"), ConfigError);
    REQUIRE_THROWS_WITH(load_model_from_string(text, "m.json"),
                        "m.json: /heads: missing required key");
  }
  SECTION("unknown key with a suggestion") {
    REQUIRE_THROWS_WITH(
        load_model_from_string(llama3_8b_keys(R"(, "linear_biass": true)"), "m.json"),
        "m.json: /linear_biass: unknown key; did you mean 'linear_bias'?");
  }
  SECTION("wrong type") {
    REQUIRE_THROWS_WITH(load_model_from_string(llama3_8b_keys(R"(, "head_dim": "128")"), "m.json"),
                        "m.json: /head_dim: expected an integer, got \"128\"");
  }
  SECTION("zero or negative count") {
    const std::string text = R"({"layers": 0})";
    REQUIRE_THROWS_WITH(load_model_from_string(text, "m.json"),
                        "m.json: /layers: expected an integer >= 1, got 0");
  }
  SECTION("unknown choice") {
    std::string text = llama3_8b_keys();
    text.replace(text.find("\"swiglu\""), 8, "\"swiglo\"");
    REQUIRE_THROWS_WITH(load_model_from_string(text, "m.json"),
                        Catch::StartsWith("m.json: /activation: unknown value 'swiglo'; did you "
                                          "mean 'swiglu'?"));
  }
  SECTION("kv heads that do not divide the heads") {
    std::string text = llama3_8b_keys();
    text.replace(text.find("\"kv_heads\": 8"), 13, "\"kv_heads\": 5");
    REQUIRE_THROWS_WITH(load_model_from_string(text, "m.json"),
                        Catch::StartsWith("m.json: /kv_heads: grouped-query attention needs") &&
                            Catch::EndsWith("expected a divisor of 32, got 5"));
  }
  SECTION("hidden not divisible by heads without head_dim") {
    std::string text = llama3_8b_keys();
    text.replace(text.find("\"hidden\": 4096"), 14, "\"hidden\": 4100");
    REQUIRE_THROWS_WITH(load_model_from_string(text, "m.json"),
                        Catch::Contains("m.json: /hidden: without head_dim") &&
                            Catch::EndsWith("expected a multiple of 32, got 4100"));
  }
  SECTION("learned positions need max_positions; rope rejects it") {
    std::string learned = llama3_8b_keys();
    learned.replace(learned.find("\"rope\""), 6, "\"learned\"");
    REQUIRE_THROWS_WITH(load_model_from_string(learned, "m.json"),
                        "m.json: /max_positions: missing required key");
    REQUIRE_THROWS_WITH(
        load_model_from_string(llama3_8b_keys(R"(, "max_positions": 4096)"), "m.json"),
        Catch::StartsWith("m.json: /max_positions: max_positions is the size of a "
                          "learned position table"));
  }
  SECTION("inline in a scenario: the pointer is kept") {
    const auto json = nlohmann::json::parse(R"({"layers": -3})");
    REQUIRE_THROWS_WITH(io::model_from_json(json, "s.json", "/model"),
                        "s.json: /model/layers: expected an integer >= 1, got -3");
  }
  SECTION("Hugging Face: unknown key, MoE, mixed biases") {
    std::string hf = kHfRopeParameters;
    hf.insert(hf.size() - 1, R"(, "use_parallel_residual": true)");
    REQUIRE_THROWS_WITH(load_model_from_string(hf, "config.json"),
                        Catch::StartsWith("config.json: /use_parallel_residual: unknown key"));
    std::string moe = kHfRopeParameters;
    moe.insert(moe.size() - 1, R"(, "num_local_experts": 8)");
    REQUIRE_THROWS_WITH(load_model_from_string(moe, "config.json"),
                        "config.json: /num_local_experts: mixture-of-experts models are not "
                        "supported; expected a dense model");
    std::string bias = kHfRopeParameters;
    bias.insert(bias.size() - 1, R"(, "attention_bias": true)");
    REQUIRE_THROWS_WITH(load_model_from_string(bias, "config.json"),
                        Catch::StartsWith("config.json: /mlp_bias: biases on only some linear"));
  }
  SECTION("Hugging Face: rope_scaling of the wrong type") {
    std::string hf = kHfRopeParameters;
    hf.insert(hf.size() - 1, R"(, "rope_scaling": 8)");
    REQUIRE_THROWS_WITH(load_model_from_string(hf, "config.json"),
                        "config.json: /rope_scaling: expected an object, got 8");
  }
  SECTION("malformed JSON") {
    REQUIRE_THROWS_WITH(load_model_from_string("{\"layers\": ", "m.json"),
                        Catch::StartsWith("m.json: invalid JSON at line 1"));
  }
}
