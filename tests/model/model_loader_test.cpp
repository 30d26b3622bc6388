#include "sim/io/model_loader.hpp"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/hardware_loader.hpp"
#include "sim/io/json_reader.hpp"

#include "tests/note_capture.hpp"

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
  // 11 dense models and 5 mixture-of-experts ones (deepseek-v3, gpt-oss-120b, mixtral-8x7b,
  // qwen3-30b-a3b, qwen3-235b-a22b).
  REQUIRE(ids.size() == 16);
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
  REQUIRE_FALSE(m.qkv_bias);
  REQUIRE_FALSE(m.out_proj_bias);
  REQUIRE_FALSE(m.mlp_bias);
  REQUIRE(m.attention_window == 0);
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
    // A path that names no file is said to be missing, the built-in models listed beside;
    // a bare word that is neither is an unknown model (above).
    REQUIRE_THROWS_WITH(load_model("/nonexistent/model.json"),
                        Catch::StartsWith("no such file '/nonexistent/model.json'; expected a "
                                          "model JSON file or a Hugging Face config.json (or a "
                                          "built-in model: deepseek-v3, gpt-oss-120b, "));
    REQUIRE_THROWS_WITH(load_model("llama.json"), Catch::StartsWith("no such file 'llama.json'"));
  }
  SECTION("missing key") {
    const std::string text = R"({"layers": 32, "hidden": 4096})";
    REQUIRE_THROWS_AS(load_model_from_string(text, "m.json"), ConfigError);
    REQUIRE_THROWS_WITH(load_model_from_string(text, "m.json"),
                        "m.json: /heads: missing required key; expected an integer in [1, 65536]");
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
                        "m.json: /max_positions: missing required key; expected an integer in "
                        "[1, 4294967296]");
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
  SECTION("Hugging Face: unknown key; an expert count without its top-k") {
    std::string hf = kHfRopeParameters;
    hf.insert(hf.size() - 1, R"(, "use_parallel_residual": true)");
    REQUIRE_THROWS_WITH(load_model_from_string(hf, "config.json"),
                        Catch::StartsWith("config.json: /use_parallel_residual: unknown key"));
    // Mixture-of-experts configs load (tests/model/moe_counts_test.cpp); an expert count needs
    // the experts per token.
    std::string moe = kHfRopeParameters;
    moe.insert(moe.size() - 1, R"(, "num_local_experts": 8)");
    REQUIRE_THROWS_WITH(load_model_from_string(moe, "config.json"),
                        "config.json: /num_experts_per_tok: missing required key; expected an "
                        "integer in [1, 65536], the experts each token is routed to (or its "
                        "alias experts_per_token)");
  }
  SECTION("Hugging Face: rope_scaling of the wrong type") {
    std::string hf = kHfRopeParameters;
    hf.insert(hf.size() - 1, R"(, "rope_scaling": 8)");
    REQUIRE_THROWS_WITH(load_model_from_string(hf, "config.json"),
                        "config.json: /rope_scaling: expected an object, got 8");
  }
  SECTION("Hugging Face: keys read for their type only, when damaged") {
    // Each of these passed as merely ignored; a damaged value now names its key.
    const auto edited = [](const std::string& from, const std::string& to) {
      std::string hf = kHfRopeParameters;
      hf.replace(hf.find(from), from.size(), to);
      return hf;
    };
    const std::vector<std::pair<std::string, std::string>> cases = {
        {edited("\"max_position_embeddings\": 131072", "\"max_position_embeddings\": \"x\""),
         "config.json: /max_position_embeddings: expected an integer, got \"x\""},
        {edited("\"dtype\": \"bfloat16\"", "\"dtype\": 5"),
         "config.json: /dtype: expected a dtype name such as \"bfloat16\", got 5"},
        {edited("[\"LlamaForCausalLM\"]", "\"LlamaForCausalLM\""),
         "config.json: /architectures: expected a list of class names such as "
         "[\"LlamaForCausalLM\"], got \"LlamaForCausalLM\""},
        {edited("\"factor\": 8.0", "\"factor\": \"x\""),
         "config.json: /rope_parameters/factor: expected a number > 0, got \"x\""},
        {edited("\"rope_type\": \"llama3\"", "\"rope_type\": 3"),
         "config.json: /rope_parameters/rope_type: expected a name such as \"linear\" or "
         "\"yarn\", got 3"},
        {edited("\"dtype\": \"bfloat16\"", "\"rope_theta\": -1, \"dtype\": \"bfloat16\""),
         "config.json: /rope_theta: RoPE's base; expected a number > 0, got -1"},
    };
    for (const auto& [text, message] : cases) {
      REQUIRE_THROWS_WITH(load_model_from_string(text, "config.json"), message);
    }
  }
  SECTION("malformed JSON") {
    REQUIRE_THROWS_WITH(load_model_from_string("{\"layers\": ", "m.json"),
                        Catch::StartsWith("m.json: invalid JSON at line 1"));
  }
}

TEST_CASE("model_loader: bias groups and the sliding window in trainsim keys", "[model][io]") {
  SECTION("linear_bias sets every group") {
    const auto m = load_model_from_string(llama3_8b_keys(R"(, "linear_bias": true)"), "m.json");
    REQUIRE(m.qkv_bias);
    REQUIRE(m.out_proj_bias);
    REQUIRE(m.mlp_bias);
    REQUIRE(load_model("gpt3-175b").mlp_bias);
  }
  SECTION("groups one by one") {
    const auto m = load_model_from_string(llama3_8b_keys(R"(, "qkv_bias": true)"), "m.json");
    REQUIRE(m.qkv_bias);
    REQUIRE_FALSE(m.out_proj_bias);
    REQUIRE_FALSE(m.mlp_bias);
  }
  SECTION("linear_bias with a group is ambiguous") {
    REQUIRE_THROWS_WITH(
        load_model_from_string(llama3_8b_keys(R"(, "linear_bias": true, "mlp_bias": false)"),
                               "m.json"),
        "m.json: /mlp_bias: linear_bias already sets every group of biases; expected either "
        "linear_bias or mlp_bias, got both");
  }
  SECTION("attention_window") {
    const auto m =
        load_model_from_string(llama3_8b_keys(R"(, "attention_window": 4096)"), "m.json");
    REQUIRE(m.attention_window == 4096);
    REQUIRE(load_model("mistral-7b").attention_window == 4096);
    REQUIRE_THROWS_WITH(
        load_model_from_string(llama3_8b_keys(R"(, "attention_window": -1)"), "m.json"),
        "m.json: /attention_window: expected an integer >= 0, got -1");
  }
  SECTION("attention_window_layers") {
    const auto m = load_model_from_string(
        llama3_8b_keys(R"(, "attention_window": 4096, "attention_window_layers": [0, 5, 31])"),
        "m.json");
    REQUIRE(m.window_layers == std::vector<std::int32_t>{0, 5, 31});
    // Every layer listed is a window on every layer, as without the key.
    std::string all = R"(, "attention_window": 4096, "attention_window_layers": [0)";
    for (int l = 1; l < 32; ++l) all += ", " + std::to_string(l);
    REQUIRE(load_model_from_string(llama3_8b_keys(all + "]"), "all.json").window_layers.empty());
    REQUIRE_THROWS_WITH(
        load_model_from_string(llama3_8b_keys(R"(, "attention_window_layers": [0])"), "m.json"),
        "m.json: /attention_window_layers: the layers that use attention_window, but the model "
        "has no window; expected an attention_window > 0 with it, or no "
        "attention_window_layers");
    REQUIRE_THROWS_WITH(
        load_model_from_string(
            llama3_8b_keys(R"(, "attention_window": 4096, "attention_window_layers": [])"),
            "m.json"),
        "m.json: /attention_window_layers: expected at least one layer index (leave the key out "
        "for a window on every layer)");
    REQUIRE_THROWS_WITH(
        load_model_from_string(
            llama3_8b_keys(R"(, "attention_window": 4096, "attention_window_layers": [3, 3])"),
            "m.json"),
        "m.json: /attention_window_layers: entry 1: expected a layer index from 4 to 31 "
        "(0-based, ascending, below layers = 32), got 3");
    REQUIRE_THROWS_WITH(
        load_model_from_string(
            llama3_8b_keys(R"(, "attention_window": 4096, "attention_window_layers": [32])"),
            "m.json"),
        "m.json: /attention_window_layers: entry 0: expected a layer index from 0 to 31 "
        "(0-based, ascending, below layers = 32), got 32");
    // An entry after the last layer: said so, where it read 'from 32 to 31'.
    std::string long_list = R"(, "attention_window": 4096, "attention_window_layers": [0)";
    for (int l = 1; l < 33; ++l) long_list += ", " + std::to_string(l);
    REQUIRE_THROWS_WITH(
        load_model_from_string(llama3_8b_keys(long_list + "]"), "m.json"),
        "m.json: /attention_window_layers: entry 32: no layer left after 31 (layers = 32); "
        "expected at most 32 ascending layer indices, got 32");
    REQUIRE_THROWS_WITH(
        load_model_from_string(
            llama3_8b_keys(R"(, "attention_window": 4096, "attention_window_layers": "even")"),
            "m.json"),
        Catch::StartsWith("m.json: /attention_window_layers: expected an array"));
  }
}

namespace {

// Collects the note lines of the model loader while alive (the default sink is stderr).
using testing::NoteCapture;

std::string data(const std::string& file) {
  return std::string(TRAINSIM_TEST_DATA_DIR) + "/" + file;
}

// A Qwen2 config (Qwen/Qwen2-7B's shape) with `extra` keys appended.
std::string qwen2(const std::string& extra) {
  return R"({"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
    "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
    "vocab_size": 152064, "sliding_window": 4096)" +
         extra + "}";
}

}  // namespace

TEST_CASE("model_loader: Hugging Face sliding windows", "[model][io]") {
  SECTION("Mistral-7B-v0.1: sliding_window on every layer") {
    const auto m = load_model(data("hf_mistral_7b_config.json"));
    REQUIRE(m.attention_window == 4096);
    REQUIRE(num_parameters(m) == num_parameters(load_model("mistral-7b")));
  }
  SECTION("MistralConfig's window when the key is absent: 4096, every layer") {
    // MistralConfig defaults sliding_window to 4096 (configuration_mistral.py); a config
    // without the key was priced with full attention (55.5 GFLOP per token at seq 8192
    // against 52.3 windowed).
    auto j = nlohmann::json::parse(
        io::read_text_file(data("hf_mistral_7b_config.json"), 1U << 20U, "a config.json"));
    j.erase("sliding_window");
    const auto m = load_model_from_string(j.dump(), "no-window.json");
    CHECK(m.attention_window == 4096);
    CHECK(m.window_layers.empty());
  }
  SECTION("num_key_value_heads absent where the class's default is not the heads: refused") {
    // MistralConfig's num_key_value_heads defaults to 8 (None means one per head); without
    // the key Mistral-7B was priced with 32 KV heads. LlamaConfig's default is None.
    auto j = nlohmann::json::parse(
        io::read_text_file(data("hf_mistral_7b_config.json"), 1U << 20U, "a config.json"));
    j.erase("num_key_value_heads");
    REQUIRE_THROWS_WITH(
        load_model_from_string(j.dump(), "no-kv.json"),
        "no-kv.json: /num_key_value_heads: missing required key; model_type 'mistral' defaults "
        "it to 8 in its configuration class, not to num_attention_heads (32): expected "
        "num_key_value_heads (null for one per attention head)");
    j["num_key_value_heads"] = nullptr;
    CHECK(load_model_from_string(j.dump(), "null-kv.json").num_kv_heads == 32);
    j.erase("num_key_value_heads");
    j["model_type"] = "llama";
    j.erase("sliding_window");
    CHECK(load_model_from_string(j.dump(), "llama-kv.json").num_kv_heads == 32);
  }
  SECTION("Qwen3-MoE windows every layer: max_window_layers is not its key") {
    // Qwen3MoeConfig has no max_window_layers and its attention applies sliding_window on every
    // layer (modeling_qwen3_moe.py); the Qwen2 rule windowed layers 10 to 47 only.
    NoteCapture notes;
    auto j = nlohmann::json::parse(
        io::read_text_file(data("hf_qwen3_30b_a3b_moe_config.json"), 1U << 20U, "a config.json"));
    j["use_sliding_window"] = true;
    j["sliding_window"] = 4096;
    j["max_window_layers"] = 10;
    const auto m = load_model_from_string(j.dump(), "q3m.json");
    CHECK(m.attention_window == 4096);
    CHECK(m.window_layers.empty());
    REQUIRE(!notes.lines.empty());
    CHECK_THAT(notes.lines.back(), Catch::Contains("max_window_layers"));
  }
  SECTION("sliding_window null (Mistral v0.2, Mixtral today): full attention") {
    std::string hf = kHfRopeParameters;
    hf.insert(hf.size() - 1, R"(, "sliding_window": null)");
    REQUIRE(load_model_from_string(hf, "null-window.json").attention_window == 0);
  }
  SECTION("Llama and the other families without a window read none: full attention, noted") {
    // LlamaAttention and the models that copy it (Gemma, OLMo, Granite, DeepSeek) build a causal
    // mask only, whatever the config says (modeling_llama.py, create_causal_mask); a Llama
    // config with a window was priced as windowed, which transformers never trains.
    NoteCapture notes;
    std::string hf = kHfRopeParameters;
    hf.insert(hf.size() - 1, R"(, "sliding_window": 4096)");
    REQUIRE(load_model_from_string(hf, "llama-window.json").attention_window == 0);
    REQUIRE(notes.lines.size() == 1);
    CHECK_THAT(notes.lines.front(), Catch::Contains("sliding_window (llama applies no window)"));
    // Layers listed as windowed are refused with the reason, not as a config without a window.
    std::string listed = hf;
    std::string types = R"(, "layer_types": [)";
    for (int i = 0; i < 32; ++i) types += std::string(i ? ", " : "") + "\"sliding_attention\"";
    listed.insert(listed.size() - 1, types + "]");
    REQUIRE_THROWS_WITH(load_model_from_string(listed, "llama-types.json"),
                        "llama-types.json: /layer_types: 32 layers are \"sliding_attention\" but "
                        "llama applies no window (its attention builds a causal mask only); "
                        "expected \"full_attention\" layers");
    // A Mistral config with the same keys keeps its window.
    hf.replace(hf.find(R"("model_type": "llama")"), 21, R"("model_type": "mistral")");
    REQUIRE(load_model_from_string(hf, "mistral-window.json").attention_window == 4096);
  }
  SECTION("Qwen2: use_sliding_window false (the default) means none") {
    REQUIRE(load_model(data("hf_qwen2_7b_config.json")).attention_window == 0);
    REQUIRE(load_model_from_string(qwen2(""), "q0.json").attention_window == 0);
  }
  SECTION("Qwen2: layers from max_window_layers on use the window") {
    // max_window_layers 0: every layer windowed; 28 (the default) = all 28 layers full.
    REQUIRE(load_model_from_string(qwen2(R"(, "use_sliding_window": true, "max_window_layers": 0)"),
                                   "q1.json")
                .attention_window == 4096);
    REQUIRE(load_model_from_string(qwen2(R"(, "use_sliding_window": true)"), "q2.json")
                .attention_window == 0);
    // 21 of 28: layers 21-27 windowed, the first 21 in full.
    const auto q3 = load_model_from_string(
        qwen2(R"(, "use_sliding_window": true, "max_window_layers": 21)"), "q3.json");
    REQUIRE(q3.attention_window == 4096);
    REQUIRE(q3.window_layers == std::vector<std::int32_t>{21, 22, 23, 24, 25, 26, 27});
    // Every layer windowed needs no list.
    REQUIRE(load_model_from_string(qwen2(R"(, "use_sliding_window": true, "max_window_layers": 0)"),
                                   "q1.json")
                .window_layers.empty());
  }
  SECTION("layer_types, when given, says which layers use the window") {
    std::string all = R"(, "use_sliding_window": true, "layer_types": [)";
    for (int i = 0; i < 28; ++i) all += std::string(i == 0 ? "" : ", ") + "\"sliding_attention\"";
    REQUIRE(load_model_from_string(qwen2(all + "]"), "q4.json").attention_window == 4096);
    // The same list with the window switched off contradicts itself (Qwen2Config writes
    // "sliding_attention" only where sliding_window is set): refused, where it was priced as
    // full attention in silence.
    std::string off = all;
    off.replace(off.find("true"), 4, "false");
    REQUIRE_THROWS_WITH(load_model_from_string(qwen2(off + "]"), "q7.json"),
                        "q7.json: /layer_types: 28 layers are \"sliding_attention\" but the "
                        "config gives no window (sliding_window null or 0, or use_sliding_window "
                        "false); expected a sliding_window, or \"full_attention\" layers");
    std::string mixed = all;
    mixed.replace(mixed.find("\"sliding_attention\""), 19, "\"full_attention\"");
    // Layer 0 in full, layers 1-27 windowed.
    const auto q5 = load_model_from_string(qwen2(mixed + "]"), "q5.json");
    REQUIRE(q5.attention_window == 4096);
    REQUIRE(q5.window_layers.size() == 27);
    REQUIRE(q5.window_layers.front() == 1);
    REQUIRE(q5.window_layers.back() == 27);
    REQUIRE_THROWS_WITH(
        load_model_from_string(qwen2(R"(, "layer_types": ["full_attention"])"), "q6.json"),
        "q6.json: /layer_types: one entry per layer; expected 28 entries (num_hidden_layers), "
        "got 1");
    // transformers >= 4.53 saves Qwen2/Qwen3 configs with both keys (Qwen3-8B's config.json:
    // "max_window_layers": 36 beside 36 "full_attention"); layer_types governs, the other is
    // only type-checked. The pair was refused as "/max_window_layers: unknown key".
    const auto types = [](const char* kind) {
      std::string list = R"(, "layer_types": [)";
      for (int i = 0; i < 28; ++i) list += std::string(i == 0 ? "\"" : ", \"") + kind + "\"";
      return list + "]";
    };
    REQUIRE(load_model_from_string(qwen2(types("full_attention") + R"(, "max_window_layers": 21)"),
                                   "q7.json")
                .attention_window == 0);
    REQUIRE(
        load_model_from_string(qwen2(R"(, "use_sliding_window": true)" +
                                     types("sliding_attention") + R"(, "max_window_layers": 28)"),
                               "q8.json")
            .attention_window == 4096);
    REQUIRE_THROWS_WITH(
        load_model_from_string(qwen2(types("full_attention") + R"(, "max_window_layers": "x")"),
                               "q9.json"),
        Catch::StartsWith("q9.json: /max_window_layers: expected an integer"));
  }
  SECTION("Gemma 2 alternates windowed and full layers") {
    // Gemma2Config: layer_types "sliding_attention" where (i + 1) % 2, the even layers.
    const auto g = load_model_from_string(R"({"model_type": "gemma2", "hidden_size": 2304,
          "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8,
          "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000,
          "sliding_window": 4096})",
                                          "g.json");
    REQUIRE(g.attention_window == 4096);
    REQUIRE(g.window_layers ==
            std::vector<std::int32_t>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24});
  }
}

TEST_CASE("model_loader: Hugging Face tie_word_embeddings defaults by family", "[model][io]") {
  // google/gemma-7b's config.json (tests/data/hf_gemma_7b_config.json) has no
  // tie_word_embeddings: GemmaConfig's default, True, ties the LM head. Gemma's report gives
  // 8.54 billion parameters: per layer attention 4 x 3072 x 4096 = 50,331,648, MLP
  // 3 x 3072 x 24576 = 226,492,416, two norms 6,144: 276,830,208; x 28 = 7,751,245,824, the
  // final norm 3,072 and one 256000 x 3072 embedding, 786,432,000: 8,537,680,896. Untied it was
  // 786,432,000 more.
  const auto gemma = load_model(data("hf_gemma_7b_config.json"));
  REQUIRE(gemma.tied_embeddings);
  REQUIRE(num_parameters(gemma) == 8'537'680'896);
  // Said explicitly, the key wins; the Llama family's default stays untied.
  std::ifstream in(data("hf_gemma_7b_config.json"));
  std::stringstream text;
  text << in.rdbuf();
  std::string untied = text.str();
  untied.insert(untied.rfind('}'), R"(, "tie_word_embeddings": false)");
  REQUIRE(num_parameters(load_model_from_string(untied, "untied.json")) ==
          8'537'680'896 + 786'432'000);
  REQUIRE_FALSE(load_model_from_string(kHfRopeParameters, "llama.json").tied_embeddings);
}

TEST_CASE("model_loader: Gemma's hidden_activation is read, other families' refused",
          "[model][io]") {
  // GemmaConfig and Gemma2Config name the MLP's activation hidden_activation (GemmaMLP reads it;
  // the google/gemma-7b config.json of a later revision carries "hidden_activation":
  // "gelu_pytorch_tanh" beside the older "hidden_act"). It was refused as unknown. Gated either
  // way, so the count is the test above's 8,537,680,896.
  std::ifstream in(data("hf_gemma_7b_config.json"));
  std::stringstream text;
  text << in.rdbuf();
  std::string gemma = text.str();
  gemma.insert(gemma.rfind('}'), R"(, "hidden_activation": "gelu_pytorch_tanh")");
  REQUIRE(num_parameters(load_model_from_string(gemma, "gemma.json")) == 8'537'680'896);
  std::string null_activation = text.str();
  null_activation.insert(null_activation.rfind('}'), R"(, "hidden_activation": null)");
  REQUIRE(num_parameters(load_model_from_string(null_activation, "null.json")) == 8'537'680'896);
  // Any name transformers' ACT2CLS maps is an elementwise function priced alike: relu and
  // quick_gelu were refused as unknown ("did you mean 'gelu'?"); a name it does not map still is.
  for (const char* name : {"relu", "quick_gelu", "relu2"}) {
    std::string other = text.str();
    other.insert(other.rfind('}'), std::string(R"(, "hidden_activation": ")") + name + "\"");
    REQUIRE(num_parameters(load_model_from_string(other, "other.json")) == 8'537'680'896);
  }
  std::string unknown = text.str();
  unknown.insert(unknown.rfind('}'), R"(, "hidden_activation": "relu7")");
  REQUIRE_THROWS_WITH(load_model_from_string(unknown, "relu7.json"),
                      Catch::Contains("relu7.json: /hidden_activation: unknown value 'relu7'"));
  // Not a Llama key.
  std::string llama = gemma;
  llama.replace(llama.find(R"("model_type": "gemma")"), 21, R"("model_type": "llama")");
  REQUIRE_THROWS_WITH(load_model_from_string(llama, "llama.json"),
                      Catch::Contains("llama.json: /hidden_activation: unknown key"));
}

TEST_CASE("model_loader: OLMo, Granite and Gemma 2 configs load with their class's own keys",
          "[model][io]") {
  NoteCapture notes;
  SECTION("OLMo: clip_qkv (null in allenai/OLMo-7B-hf, 8.0 in OLMo-7B-0424-hf)") {
    // allenai/OLMo-7B-hf's config.json. It was refused for /clip_qkv: unknown key.
    // OlmoLayerNorm has no weight and no bias (modeling_olmo.py, F.layer_norm(x, shape, None,
    // None)): 32 x (4 x 4096^2 + 3 x 4096 x 11008) + 2 x 50304 x 4096
    // = 32 x 202,375,168 + 412,090,368 = 6,888,095,744 (published: 6.89B). It counted
    // 266,240 norm weights more (two RMSNorm weights of 4096 per layer and the final one).
    std::string olmo = R"({"architectures": ["OlmoForCausalLM"], "attention_bias": false,
        "attention_dropout": 0.0, "bos_token_id": null, "clip_qkv": null, "eos_token_id": 50279,
        "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
        "intermediate_size": 11008, "max_position_embeddings": 2048, "model_type": "olmo",
        "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32,
        "pad_token_id": 1, "pretraining_tp": 1, "rope_scaling": null, "rope_theta": 10000.0,
        "tie_word_embeddings": false, "torch_dtype": "float32", "use_cache": true,
        "vocab_size": 50304})";
    REQUIRE(num_parameters(load_model_from_string(olmo, "olmo-null.json")) == 6'888'095'744);
    REQUIRE(notes.lines.size() == 1);
    CHECK_THAT(notes.lines.back(),
               Catch::Contains(", clip_qkv, ") && !Catch::Contains("not counted"));
    const std::string clip = R"("clip_qkv": null)";
    std::string clamped = olmo;
    clamped.replace(clamped.find(clip), clip.size(), R"("clip_qkv": 8.0)");
    REQUIRE(num_parameters(load_model_from_string(clamped, "olmo-clip.json")) == 6'888'095'744);
    CHECK_THAT(notes.lines.back(),
               Catch::Contains("not counted (would add cost): clip_qkv 8.0 (a clamp of Q, K and "
                               "V in each layer)"));
    std::string negative = olmo;
    negative.replace(negative.find(clip), clip.size(), R"("clip_qkv": -1)");
    REQUIRE_THROWS_WITH(load_model_from_string(negative, "olmo-neg.json"),
                        "olmo-neg.json: /clip_qkv: expected a number > 0 or null, got -1");
    // Not a Llama key: LlamaAttention clamps nothing.
    std::string llama = olmo;
    llama.replace(llama.find(R"("model_type": "olmo")"), 20, R"("model_type": "llama")");
    REQUIRE_THROWS_WITH(load_model_from_string(llama, "olmo-llama.json"),
                        Catch::Contains("olmo-llama.json: /clip_qkv: unknown key"));
  }
  SECTION("Granite: the four multipliers of ibm-granite/granite-3.0-8b-base") {
    // q and o 4096 x 4096, k and v 4096 x 1024 (8 KV heads of 128), MLP 3 x 4096 x 12800, two
    // norms: 199,237,632 per layer; x 40 + the tied 49155 x 4096 embedding + the final norm
    // = 7,969,505,280 + 201,338,880 + 4,096 = 8,170,848,256 (published: 8.17B).
    const std::string granite = R"({"architectures": ["GraniteForCausalLM"],
        "attention_bias": false, "attention_dropout": 0.1, "attention_multiplier": 0.0078125,
        "bos_token_id": 0, "embedding_multiplier": 12.0, "eos_token_id": 0, "hidden_act": "silu",
        "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 12800,
        "logits_scaling": 16.0, "max_position_embeddings": 4096, "mlp_bias": false,
        "model_type": "granite", "num_attention_heads": 32, "num_hidden_layers": 40,
        "num_key_value_heads": 8, "pad_token_id": 0, "residual_multiplier": 0.22,
        "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000.0,
        "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_cache": true,
        "vocab_size": 49155})";
    REQUIRE(num_parameters(load_model_from_string(granite, "granite.json")) == 8'170'848'256);
    REQUIRE(notes.lines.size() == 1);
    // attention_multiplier replaces 1/sqrt(head_dim) as the score scale: no work added.
    CHECK_THAT(
        notes.lines.back(),
        Catch::Contains("ignored (no effect on cost): architectures, attention_multiplier,") &&
            Catch::Contains("not counted (would add cost): attention_dropout 0.1 (a "
                            "dropout mask per layer), embedding_multiplier 12.0 (a scaling "
                            "of the embeddings), logits_scaling 16.0 (a division of the "
                            "logits), residual_multiplier 0.22 (a scaling of both "
                            "residual branches of each layer)"));
    std::string zero = granite;
    const std::string scaling = R"("logits_scaling": 16.0)";
    zero.replace(zero.find(scaling), scaling.size(), R"("logits_scaling": 0)");
    REQUIRE_THROWS_WITH(load_model_from_string(zero, "granite-zero.json"),
                        "granite-zero.json: /logits_scaling: expected a number > 0, got 0");
  }
  SECTION("Gemma 2: softcapping, the score scalar and the inference cache") {
    // google/gemma-2-2b's config.json with "sliding_window": null. q 2304 x (8 x 256), k and v 2304
    // x (4 x 256) each, o (8 x 256) x 2304: 3 x 4,718,592; MLP 3 x 2304 x 9216; two norms:
    // 77,861,376 per layer; x 26 + the tied 256000 x 2304 embedding + the final norm
    // = 2,024,395,776 + 589,824,000 + 2,304 = 2,614,222,080 (published 2,614,341,888: Gemma 2's
    // two extra norms per layer, 26 x 2 x 2304, are left out).
    const std::string gemma2 = R"({"architectures": ["Gemma2ForCausalLM"],
        "attention_bias": false, "attention_dropout": 0.0, "attn_logit_softcapping": 50.0,
        "bos_token_id": 2, "cache_implementation": "hybrid", "eos_token_id": [1, 107],
        "final_logit_softcapping": 30.0, "head_dim": 256, "hidden_act": "gelu_pytorch_tanh",
        "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 2304,
        "initializer_range": 0.02, "intermediate_size": 9216, "max_position_embeddings": 8192,
        "model_type": "gemma2", "num_attention_heads": 8, "num_hidden_layers": 26,
        "num_key_value_heads": 4, "pad_token_id": 0, "query_pre_attn_scalar": 256,
        "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": null,
        "torch_dtype": "float32", "use_cache": true, "vocab_size": 256000})";
    REQUIRE(num_parameters(load_model_from_string(gemma2, "gemma2.json")) == 2'614'222'080);
    REQUIRE(notes.lines.size() == 1);
    CHECK_THAT(
        notes.lines.back(),
        Catch::Contains(", cache_implementation, ") &&
            Catch::Contains(", query_pre_attn_scalar, ") &&
            Catch::Contains("not counted (would add cost): a scaling of the embeddings (gemma2: "
                            "by the square root of hidden_size in every forward), "
                            "attn_logit_softcapping 50.0 (a "
                            "tanh on the attention scores in each layer), "
                            "final_logit_softcapping 30.0 (a tanh on the logits), two "
                            "more norms per layer (gemma2: post-attention and "
                            "post-feedforward RMSNorm, 119808 parameters)"));
    // The note names the 2,614,341,888 - 2,614,222,080 = 119,808 = 2 x 2304 x 26 left out.
    // google/gemma-2-9b's released config carries sliding_window_size beside sliding_window
    // (read by no Gemma 2 code): noted as ignored, where it was refused as an unknown key.
    std::string nine = gemma2;
    const std::string no_window = R"("sliding_window": null,)";
    nine.replace(nine.find(no_window), no_window.size(),
                 R"("sliding_window": 4096, "sliding_window_size": 4096,)");
    const auto g9 = load_model_from_string(nine, "gemma2-9b.json");
    REQUIRE(g9.attention_window == 4096);
    REQUIRE(g9.window_layers.size() == 13);
    CHECK_THAT(notes.lines.back(), Catch::Contains(", sliding_window_size, "));
    std::string bad = gemma2;
    const std::string cache = R"("cache_implementation": "hybrid")";
    bad.replace(bad.find(cache), cache.size(), R"("cache_implementation": 3)");
    REQUIRE_THROWS_WITH(load_model_from_string(bad, "gemma2-cache.json"),
                        "gemma2-cache.json: /cache_implementation: expected a name or null, got 3");
  }
}

TEST_CASE("model_loader: OLMo 2's Q and K norms are named as not counted", "[model][io]") {
  // allenai/OLMo-2-1124-7B's shape: 32 layers of 32 heads (32 KV) of 128, MLP 11008, vocab
  // 100352, untied. 32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 2 x 100352 x 4096 + 4096
  // = 32 x 202,383,360 + 822,083,584 + 4,096 = 7,298,355,200; published 7,298,617,344, the
  // difference 262,144 = 32 x (4096 + 4096), q_norm and k_norm (modeling_olmo2.py).
  NoteCapture notes;
  const auto m = load_model_from_string(R"({"model_type": "olmo2", "hidden_size": 4096,
      "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 32, "vocab_size": 100352, "hidden_act": "silu",
      "tie_word_embeddings": false})",
                                        "olmo2.json");
  REQUIRE(num_parameters(m) == 7'298'355'200);
  REQUIRE(notes.lines.size() == 1);
  CHECK_THAT(notes.lines.back(),
             Catch::Contains("not counted (would add cost): Q and K norms (olmo2: RMSNorm over "
                             "the projections, 262144 parameters)"));
}

TEST_CASE("model_loader: mlp_bias counts only where the family's MLP reads it", "[model][io]") {
  // LlamaMLP and GraniteMLP build gate/up/down_proj with bias=config.mlp_bias; GemmaMLP (and
  // Qwen3MLP, OlmoMLP, ...) with bias=False whatever the config says (transformers/models/*/
  // modeling_*.py; docs/models.md, "Biases by family").
  auto gemma = nlohmann::json::parse(
      io::read_text_file(data("hf_gemma_7b_config.json"), 1U << 20U, "a config.json"));
  const auto plain = num_parameters(load_model_from_string(gemma.dump(), "gemma.json"));
  gemma["mlp_bias"] = true;
  NoteCapture notes;
  const auto biased = load_model_from_string(gemma.dump(), "gemma-mlp-bias.json");
  CHECK_FALSE(biased.mlp_bias);
  CHECK(num_parameters(biased) == plain);
  REQUIRE(notes.lines.size() == 1);
  CHECK_THAT(notes.lines.back(), Catch::Contains("mlp_bias (gemma's MLP reads no such key)"));
  // A Llama config's key is read: 32 layers x (2 x 14,336 + 4,096) = 1,048,576 more.
  auto llama = nlohmann::json::parse(
      io::read_text_file(data("hf_llama3_8b_config.json"), 1U << 20U, "a config.json"));
  const auto llama_plain = num_parameters(load_model_from_string(llama.dump(), "llama.json"));
  llama["mlp_bias"] = true;
  const auto llama_biased = load_model_from_string(llama.dump(), "llama-mlp-bias.json");
  CHECK(llama_biased.mlp_bias);
  CHECK(num_parameters(llama_biased) - llama_plain == 32 * (2 * 14'336 + 4'096));
}

TEST_CASE("model_loader: num_nextn_predict_layers is read for DeepSeek-V3 only", "[model][io]") {
  // DeepseekV3Config has the key; LlamaConfig has none and LlamaForCausalLM builds no
  // multi-token-prediction module, so a Llama config given one trains the plain model.
  auto llama = nlohmann::json::parse(
      io::read_text_file(data("hf_llama3_8b_config.json"), 1U << 20U, "a config.json"));
  const auto plain = load_model_from_string(llama.dump(), "llama.json");
  llama["num_nextn_predict_layers"] = 1;
  NoteCapture notes;
  const auto with_key = load_model_from_string(llama.dump(), "llama-nextn.json");
  CHECK(with_key.mtp_layers == 0);
  CHECK(num_parameters(with_key) == num_parameters(plain));
  REQUIRE(notes.lines.size() == 1);
  CHECK_THAT(notes.lines.back(), Catch::Contains("num_nextn_predict_layers (not a llama key)"));
  // Its value is still checked.
  llama["num_nextn_predict_layers"] = "1";
  REQUIRE_THROWS_WITH(load_model_from_string(llama.dump(), "llama-nextn.json"),
                      Catch::StartsWith("llama-nextn.json: /num_nextn_predict_layers: expected"));
}

TEST_CASE("model_loader: a blank model name is refused", "[model][io]") {
  // The name stands for the model in messages ("'' is dense"): it must show something.
  for (const char* name : {R"("")", R"("  ")"}) {
    REQUIRE_THROWS_WITH(
        load_model_from_string(llama3_8b_keys(std::string(R"(, "name": )") + name), "m.json"),
        std::string("m.json: /name: expected a name with a visible character, got ") + name);
  }
  CHECK(load_model_from_string(llama3_8b_keys(R"(, "name": "my 8b")"), "m.json").id == "my 8b");
}

TEST_CASE("model_loader: use_sliding_window is read by the Qwen families only", "[model][io]") {
  // MistralConfig has no use_sliding_window and MistralAttention reads sliding_window alone
  // (modeling_mistral.py): the window stays, the key is noted as ignored.
  auto mistral = nlohmann::json::parse(
      io::read_text_file(data("hf_mistral_7b_config.json"), 1U << 20U, "a config.json"));
  mistral["sliding_window"] = 4096;
  mistral["use_sliding_window"] = false;
  NoteCapture notes;
  CHECK(load_model_from_string(mistral.dump(), "mistral-usw.json").attention_window == 4096);
  REQUIRE(notes.lines.size() == 1);
  CHECK_THAT(notes.lines.back(),
             Catch::Contains("use_sliding_window (read by the Qwen families only)"));
  // A damaged value is still refused with its key.
  mistral["use_sliding_window"] = "no";
  CHECK_THROWS_WITH(load_model_from_string(mistral.dump(), "mistral-usw2.json"),
                    Catch::StartsWith("mistral-usw2.json: /use_sliding_window: "));
}

TEST_CASE("model_loader: a null kv_lora_rank on DeepSeek says null, not missing", "[model][io]") {
  auto ds = nlohmann::json::parse(
      io::read_text_file(data("hf_deepseek_v3_moe_config.json"), 1U << 20U, "a config.json"));
  ds["kv_lora_rank"] = nullptr;
  CHECK_THROWS_WITH(load_model_from_string(ds.dump(), "ds.json"),
                    Catch::StartsWith("ds.json: /kv_lora_rank: null; model_type 'deepseek_v3'"));
  ds.erase("kv_lora_rank");
  CHECK_THROWS_WITH(load_model_from_string(ds.dump(), "ds.json"),
                    Catch::StartsWith("ds.json: /kv_lora_rank: missing required key;"));
}

TEST_CASE("model_loader: Qwen3's head_dim defaults to Qwen3Config's 128", "[model][io]") {
  // Qwen/Qwen3-0.6B's config.json: hidden 1024 and 16 heads of 128 (2048 wide, not 1024).
  // Qwen3Config declares head_dim: int = 128 (transformers/models/qwen3/configuration_qwen3.py),
  // so a config without the key has heads of 128, not hidden / heads = 64: the counts agree.
  const std::string with = R"({"architectures": ["Qwen3ForCausalLM"], "attention_bias": false,
      "head_dim": 128, "hidden_act": "silu", "hidden_size": 1024, "intermediate_size": 3072,
      "model_type": "qwen3", "num_attention_heads": 16, "num_hidden_layers": 28,
      "num_key_value_heads": 8, "sliding_window": null, "tie_word_embeddings": true,
      "use_sliding_window": false, "vocab_size": 151936})";
  std::string without = with;
  const std::string key = R"("head_dim": 128, )";
  without.erase(without.find(key), key.size());
  // 28 x (1024 x 2048 x 2 + 1024 x 1024 x 2 + 3 x 1024 x 3072 + 2 x 1024) + 151936 x 1024 + 1024
  // = 28 x 15,730,688 + 155,582,464 + 1,024 = 596,042,752 (published 596,049,920 with
  // Qwen3's Q/K norms, 28 x 2 x 128, which docs/models.md leaves out).
  NoteCapture notes;
  REQUIRE(num_parameters(load_model_from_string(with, "qwen3-hd.json")) == 596'042'752);
  REQUIRE(num_parameters(load_model_from_string(without, "qwen3-nohd.json")) == 596'042'752);
  // The note names the 7,168 = 28 x 2 x 128 left out.
  REQUIRE(notes.lines.size() == 2);
  CHECK_THAT(notes.lines.back(),
             Catch::Contains("not counted (would add cost): Q and K norms (qwen3: RMSNorm per "
                             "head, 7168 parameters)"));
}

TEST_CASE("model_loader: a config.json of another family is refused by its model_type",
          "[model][io]") {
  // openai-community/gpt2's keys (n_layer, n_embd, n_head): no num_hidden_layers or
  // hidden_size, so it was read as a trainsim model and failed on /layers.
  const std::string gpt2 =
      R"({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_ctx": 1024, )"
      R"("n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257})";
  REQUIRE_THROWS_WITH(load_model_from_string(gpt2, "gpt2.json"),
                      Catch::StartsWith("gpt2.json: /model_type: unknown value 'gpt2'; expected "
                                        "one of llama, "));
  // A trainsim model given a model_type is named at that key, the one it has of the other
  // format (the line named /num_hidden_layers, which the file lacks).
  REQUIRE_THROWS_WITH(
      load_model_from_string(R"({"layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256,
                                 "vocab": 100, "model_type": "llama"})",
                             "tm.json"),
      Catch::StartsWith("tm.json: /model_type: a Hugging Face key in a model that has the "
                        "trainsim key 'layers'"));
  // Without model_type (a nanoGPT-style file) it has none of trainsim's keys either: the line
  // says so and lists its keys, where it said only "/layers: missing required key".
  REQUIRE_THROWS_WITH(
      load_model_from_string(R"({"n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257,
                                 "n_positions": 1024, "activation_function": "gelu_new"})",
                             "nanogpt.json"),
      "nanogpt.json: /layers: missing required key; the file has none of trainsim's model keys "
      "(layers, hidden, heads) and no Hugging Face model_type (its keys: activation_function, "
      "n_embd, n_head, n_layer, ...): expected a trainsim model or a Hugging Face "
      "config.json of a family docs/models.md lists");
  // And a config.json given where a profile is expected is called a model.
  REQUIRE_THROWS_WITH(io::load_hardware_from_string(gpt2, "gpt2.json"),
                      "gpt2.json: the file is a model, not a hardware profile; expected a "
                      "hardware profile");
}

TEST_CASE("model_loader: Hugging Face biases by family", "[model][io]") {
  SECTION("Qwen2: Q, K and V biases only (modeling_qwen2.py)") {
    const auto m = load_model(data("hf_qwen2_7b_config.json"));
    REQUIRE(m.qkv_bias);
    REQUIRE_FALSE(m.out_proj_bias);
    REQUIRE_FALSE(m.mlp_bias);
    REQUIRE(num_parameters(m) == num_parameters(load_model("qwen2-7b")));
  }
  SECTION("Llama: attention_bias is Q, K, V and O; mlp_bias the MLP") {
    std::string hf = kHfRopeParameters;
    hf.insert(hf.size() - 1, R"(, "attention_bias": true)");
    const auto m = load_model_from_string(hf, "bias.json");
    REQUIRE(m.qkv_bias);
    REQUIRE(m.out_proj_bias);
    REQUIRE_FALSE(m.mlp_bias);
    // llama3-8b + per layer q + 2 kv + o = 4096 + 2048 + 4096 = 10,240; * 32 = 327,680.
    REQUIRE(num_parameters(m) == 8'030'261'248 + 327'680);
    hf.insert(hf.size() - 1, R"(, "mlp_bias": true)");
    REQUIRE(load_model_from_string(hf, "bias2.json").mlp_bias);
  }
  SECTION("head_dim other than hidden / heads sets the attention width") {
    // Gemma 7B: hidden 3072, 16 heads of 256 (4096 wide): Q and O are 3072 x 4096.
    const auto m = load_model_from_string(R"({"model_type": "gemma", "hidden_size": 3072,
        "intermediate_size": 24576, "num_hidden_layers": 28, "num_attention_heads": 16,
        "num_key_value_heads": 16, "head_dim": 256, "vocab_size": 256000})",
                                          "gemma7b.json");
    REQUIRE(query_width(m) == 4096);
    // q, o 2 * 3072 * 4096 + k, v 2 * 3072 * 4096 = 50,331,648.
    REQUIRE(layer_parameter_counts(m).attention_weights == 50'331'648);
  }
}

TEST_CASE("model_loader: a Hugging Face family the reader does not know is refused",
          "[model][io]") {
  // gpt_neox (LayerNorm, biases, parallel residual) or a misspelt "mistrall" used to be priced
  // with the Llama layout in silence.
  for (const char* type : {"gpt_neox", "mistrall"}) {
    std::string hf = kHfRopeParameters;
    const std::string llama = R"("model_type": "llama")";
    hf.replace(hf.find(llama), llama.size(), std::string(R"("model_type": ")") + type + "\"");
    REQUIRE_THROWS_WITH(load_model_from_string(hf, "neox.json"),
                        Catch::Contains("neox.json: /model_type: unknown value") &&
                            Catch::Contains("expected one of llama, mistral"));
  }
}

TEST_CASE("model_loader: Gemma's head_dim default is its class's", "[model][io]") {
  // GemmaConfig and Gemma2Config default head_dim to 256 (configuration_gemma.py), not
  // hidden_size / num_attention_heads: gemma-7b without the key has 16 heads of 256, not of
  // 3072 / 16 = 192, so its q and o are 3072 x 4096 (test above: 50,331,648 attention weights
  // per layer).
  const auto m = load_model_from_string(R"({"model_type": "gemma", "hidden_size": 3072,
      "intermediate_size": 24576, "num_hidden_layers": 28, "num_attention_heads": 16,
      "num_key_value_heads": 16, "vocab_size": 256000})",
                                        "gemma-nohd.json");
  REQUIRE(m.head_dim == 256);
  REQUIRE(layer_parameter_counts(m).attention_weights == 50'331'648);
  // Gemma 2 without sliding_window has its class's 4096 on every other layer.
  const auto g2 = load_model_from_string(R"({"model_type": "gemma2", "hidden_size": 3584,
          "intermediate_size": 14336, "num_hidden_layers": 42, "num_attention_heads": 16,
          "num_key_value_heads": 8, "vocab_size": 256000})",
                                         "gemma2-nowin.json");
  REQUIRE(g2.attention_window == 4096);
  REQUIRE(g2.window_layers.size() == 21);
  REQUIRE(g2.window_layers.back() == 40);
}

TEST_CASE("model_loader: a checkpoint's storage keys are ignored in any family", "[model][io]") {
  // meta-llama/Llama-3.1-405B-Instruct-FP8 and the AWQ checkpoints carry quantization_config;
  // remote-code checkpoints auto_map. Both were accepted in mixture-of-experts configs only, so
  // a dense FP8 checkpoint's config was refused as having an unknown key.
  NoteCapture notes;
  std::string hf = kHfRopeParameters;
  hf.insert(hf.size() - 1, R"(, "quantization_config": {"quant_method": "fbgemm_fp8",
      "activation_scheme": "dynamic"}, "auto_map": {"AutoConfig": "x.Config"},
      "rope_interleave": true)");
  REQUIRE(num_parameters(load_model_from_string(hf, "fp8-note.json")) == 8'030'261'248);
  REQUIRE(notes.lines.size() == 1);
  CHECK_THAT(notes.lines.front(),
             Catch::Contains("auto_map, dtype, ") &&
                 Catch::Contains("quantization_config, rms_norm_eps, rope_interleave, "));
  // Router keys still need experts: in a dense config they are unknown.
  std::string router = kHfRopeParameters;
  router.insert(router.size() - 1, R"(, "norm_topk_prob": true)");
  REQUIRE_THROWS_WITH(load_model_from_string(router, "router.json"),
                      Catch::StartsWith("router.json: /norm_topk_prob: unknown key"));
}

TEST_CASE("model_loader: the values of ignored Hugging Face keys are checked", "[model][io]") {
  // Each was accepted and noted as ignored (a string dropout never reached the "not counted"
  // note; a negative one printed as a rate), where the keys read beside them are refused.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("attention_dropout": "0.1")",
       "/attention_dropout: expected a dropout rate from 0 to 1, got \"0.1\""},
      {R"("attention_dropout": -0.5)",
       "/attention_dropout: expected a dropout rate from 0 to 1, got -0.5"},
      {R"("mlp_dropout": 1.5)", "/mlp_dropout: expected a dropout rate from 0 to 1, got 1.5"},
      {R"("rms_norm_eps": -1)", "/rms_norm_eps: expected a number > 0, got -1"},
      {R"("initializer_range": "x")", "/initializer_range: expected a number >= 0, got \"x\""},
      {R"("use_cache": "yes")", "/use_cache: expected true or false, got \"yes\""},
      {R"("eos_token_id": "x")",
       "/eos_token_id: expected a token id, a list of them or null, got \"x\""},
      {R"("bos_token_id": [1, 2])",
       "/bos_token_id: expected a token id or null, got an array [1,2]"},
      {R"("pretraining_tp": 0)", "/pretraining_tp: expected an integer >= 1, got 0"},
      {R"("quantization_config": "fp8")", "/quantization_config: expected an object, got \"fp8\""},
  };
  for (const auto& [extra, message] : cases) {
    // The key set (replaced where the config has it) on the Llama 3 config.
    auto json = nlohmann::json::parse(kHfRopeParameters);
    json.merge_patch(nlohmann::json::parse("{" + extra + "}"));
    const std::string hf = json.dump();
    CAPTURE(extra);
    REQUIRE_THROWS_WITH(load_model_from_string(hf, "v.json"), "v.json: " + message);
  }
  // transformers v5 keeps rope_theta inside rope_parameters: checked there as at the top level.
  std::string rope = kHfRopeParameters;
  const std::string theta = R"("rope_theta": 500000.0)";
  const std::size_t at = rope.find(theta);
  REQUIRE(at != std::string::npos);
  rope.replace(at, theta.size(), R"("rope_theta": -1)");
  REQUIRE_THROWS_WITH(load_model_from_string(rope, "rope.json"),
                      "rope.json: /rope_parameters/rope_theta: RoPE's base; expected a number > "
                      "0, got -1");
  // What released configs hold passes: an eos list (Llama 3.1), a pad id of -1 (the first LLaMA
  // conversions), null ids and dropout.
  std::string ok = kHfRopeParameters;
  ok.insert(ok.size() - 1, R"(, "eos_token_id": [128001, 128008], "pad_token_id": -1,
      "bos_token_id": null, "attention_dropout": null, "use_cache": true)");
  REQUIRE_NOTHROW(load_model_from_string(ok, "ok.json"));
}

TEST_CASE("model_loader: a dropout rate other than 0 is noted as not counted", "[model][io]") {
  // attention_dropout 0 (every released config) costs nothing and is an ignored key; 0.5 samples
  // and applies a mask the model has no kernel for: said so, where the note said "no effect on
  // cost".
  NoteCapture notes;
  std::string hf = kHfRopeParameters;
  hf.insert(hf.size() - 1, R"(, "attention_dropout": 0.5, "mlp_dropout": 0)");
  (void)load_model_from_string(hf, "dropout-note.json");
  REQUIRE(notes.lines.size() == 1);
  CHECK_THAT(notes.lines.front(),
             Catch::Contains("ignored (no effect on cost): ") && Catch::Contains(", mlp_dropout") &&
                 Catch::Contains("not counted (would add cost): attention_dropout 0.5 (a dropout "
                                 "mask per layer)"));
}

TEST_CASE("model_loader: one note line names the ignored Hugging Face keys", "[model][io]") {
  NoteCapture notes;
  // Mistral-7B-v0.1's config.json under a name no other test loads (notes are once per name).
  const std::string text =
      io::read_text_file(data("hf_mistral_7b_config.json"), 1U << 20U, "a config.json");
  // The key order of the JSON object (sorted): every key that does not change the cost.
  const std::string expected =
      "note: mistral-note.json: Hugging Face keys ignored (no effect on cost): architectures, "
      "bos_token_id, eos_token_id, initializer_range, max_position_embeddings, "
      "rms_norm_eps, rope_theta, torch_dtype, transformers_version, use_cache; docs/models.md "
      "lists the keys read";
  SECTION("once per file, however often it is loaded") {
    (void)load_model_from_string(text, "mistral-note.json");
    (void)load_model_from_string(text, "mistral-note.json");
    REQUIRE(notes.lines == std::vector<std::string>{expected});
  }
  SECTION("inline in a scenario: the pointer is named") {
    const auto json = nlohmann::json::parse(R"({"hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
        "rope_theta": 10000.0})");
    (void)io::model_from_json(json, "inline-note.json", "/model");
    REQUIRE(notes.lines == std::vector<std::string>{
                               "note: inline-note.json: /model: Hugging Face keys ignored (no "
                               "effect on cost): rope_theta; docs/models.md lists the keys read"});
  }
  SECTION("nothing ignored, nothing said; trainsim keys never") {
    (void)load_model_from_string(R"({"hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100})",
                                 "quiet.json");
    (void)load_model_from_string(llama3_8b_keys(), "quiet-trainsim.json");
    REQUIRE(notes.lines.empty());
  }
  SECTION("Qwen2's bias keys are not Qwen2Config's: ignored, and said so") {
    (void)load_model_from_string(qwen2(R"(, "attention_bias": false)"), "qwen-bias.json");
    REQUIRE(notes.lines.size() == 1);
    // Its sliding_window (4096; use_sliding_window absent, false) changes nothing either: named, as
    // a Llama config's sliding_window is.
    REQUIRE_THAT(notes.lines[0], Catch::Contains("): attention_bias, sliding_window "
                                                 "(use_sliding_window false); docs/models.md"));
  }
}
