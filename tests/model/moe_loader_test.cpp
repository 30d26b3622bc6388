// Reading mixture-of-experts and latent-attention models: trainsim's keys, Hugging Face keys,
// the refusal of what is not modelled, the note line, and the scenario's refusal to simulate.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"

#include "sim/io/json_reader.hpp"
#include "sim/io/model_loader.hpp"
#include "sim/io/scenario_loader.hpp"

#include "tests/note_capture.hpp"

using namespace trainsim;
using namespace trainsim::model;
using trainsim::io::load_model_from_string;

namespace {

// mixtral-8x7b's shape in trainsim's keys with `extra` keys appended.
std::string mixtral_keys(const std::string& extra = "") {
  return R"({"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
             "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm",
             "tied_embeddings": false, "position_embedding": "rope", "experts": 8)" +
         extra + "}";
}

// A dense llama-like model in trainsim's keys with `extra` keys appended.
std::string dense_keys(const std::string& extra) {
  return R"({"layers": 4, "hidden": 512, "heads": 8, "kv_heads": 8, "ffn_hidden": 1024,
             "vocab": 1000, "activation": "swiglu", "norm": "rmsnorm",
             "tied_embeddings": false, "position_embedding": "rope")" +
         extra + "}";
}

// Mixtral's Hugging Face keys with `extra` keys appended.
std::string hf_mixtral(const std::string& extra) {
  return R"({"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 32000, "num_local_experts": 8)" +
         extra + "}";
}

// DeepSeek-V3's Hugging Face keys (without the ignored ones) with `extra` appended.
std::string hf_deepseek(const std::string& extra) {
  return R"({"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
    "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
    "vocab_size": 129280, "n_routed_experts": 256, "num_experts_per_tok": 8,
    "moe_intermediate_size": 2048, "n_shared_experts": 1, "first_k_dense_replace": 3,
    "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128)" +
         extra + "}";
}

// Collects the note lines of the model loader while alive (the default sink is stderr).
using testing::NoteCapture;

}  // namespace

TEST_CASE("moe loader: trainsim keys", "[model][io]") {
  const auto m = load_model_from_string(mixtral_keys(R"(, "experts_per_token": 2)"), "m.json");
  REQUIRE(m.num_experts == 8);
  REQUIRE(m.num_experts_per_token == 2);
  REQUIRE(m.expert_ffn_hidden == 14336);  // default: ffn_hidden
  REQUIRE(m.num_shared_experts == 0);
  REQUIRE(m.shared_expert_ffn_hidden == 0);
  REQUIRE(m.num_dense_layers == 0);
  REQUIRE(m.expert_load_imbalance == 1.0);
  SECTION("shared experts default to the expert width; an imbalance is kept") {
    const auto s =
        load_model_from_string(mixtral_keys(R"(, "experts_per_token": 2, "expert_ffn_hidden": 1024,
                        "shared_experts": 2, "dense_layers": 1, "expert_load_imbalance": 1.3)"),
                               "s.json");
    REQUIRE(s.shared_expert_ffn_hidden == 1024);
    REQUIRE(s.num_dense_layers == 1);
    REQUIRE(s.expert_load_imbalance == 1.3);
  }
}

TEST_CASE("moe loader: bad mixture-of-experts keys name the key", "[model][io]") {
  SECTION("top-k above the experts") {
    REQUIRE_THROWS_AS(load_model_from_string(mixtral_keys(R"(, "experts_per_token": 9)"), "m.json"),
                      ConfigError);
    REQUIRE_THROWS_WITH(
        load_model_from_string(mixtral_keys(R"(, "experts_per_token": 9)"), "m.json"),
        "m.json: /experts_per_token: a token is routed to at most all 8 experts (experts); "
        "expected at most 8, got 9");
  }
  SECTION("negative or zero widths and counts") {
    REQUIRE_THROWS_WITH(
        load_model_from_string(mixtral_keys(R"(, "experts_per_token": 2, "expert_ffn_hidden": -5)"),
                               "m.json"),
        "m.json: /expert_ffn_hidden: expected an integer >= 1, got -5");
    REQUIRE_THROWS_WITH(
        load_model_from_string(mixtral_keys(R"(, "experts_per_token": 0)"), "m.json"),
        "m.json: /experts_per_token: expected an integer >= 1, got 0");
    REQUIRE_THROWS_WITH(
        load_model_from_string(mixtral_keys(R"(, "experts_per_token": 2, "shared_experts": -1)"),
                               "m.json"),
        "m.json: /shared_experts: expected an integer >= 0, got -1");
    REQUIRE_THROWS_WITH(
        load_model_from_string(mixtral_keys(R"(, "experts_per_token": 2, "shared_experts": 1,
                            "shared_expert_ffn_hidden": 0)"),
                               "m.json"),
        "m.json: /shared_expert_ffn_hidden: expected an integer >= 1, got 0");
  }
  SECTION("more experts than kMaxExperts") {
    std::string keys = mixtral_keys(R"(, "experts_per_token": 2)");
    keys.replace(keys.find("\"experts\": 8"), 12, "\"experts\": 65537");
    REQUIRE_THROWS_WITH(load_model_from_string(keys, "m.json"),
                        "m.json: /experts: 65537: out of range; expected at most 65536");
  }
  SECTION("a missing top-k") {
    REQUIRE_THROWS_WITH(load_model_from_string(mixtral_keys(), "m.json"),
                        "m.json: /experts_per_token: missing required key; expected an integer in "
                        "[1, 65536]");
  }
  SECTION("every layer dense") {
    REQUIRE_THROWS_WITH(
        load_model_from_string(mixtral_keys(R"(, "experts_per_token": 2, "dense_layers": 32)"),
                               "m.json"),
        "m.json: /dense_layers: an MoE model needs at least one MoE layer; expected fewer dense "
        "layers than the 32 layers (layers), got 32");
  }
  SECTION("load imbalance outside [1, experts / top-k]") {
    // 8 experts, top 2: the most-loaded expert takes at most every token, 8 / 2 = 4 times the
    // mean.
    REQUIRE_THROWS_WITH(
        load_model_from_string(
            mixtral_keys(R"(, "experts_per_token": 2, "expert_load_imbalance": 0.5)"), "m.json"),
        "m.json: /expert_load_imbalance: the most-loaded expert's tokens over the mean; expected "
        "1 (balanced) to experts / experts_per_token = 4, got 0.5");
    REQUIRE_THROWS_WITH(
        load_model_from_string(
            mixtral_keys(R"(, "experts_per_token": 2, "expert_load_imbalance": 4.5)"), "m.json"),
        Catch::EndsWith("= 4, got 4.5"));
    // Just past the bound: the value as written, not %g's "4", which reads as inside it.
    REQUIRE_THROWS_WITH(
        load_model_from_string(
            mixtral_keys(R"(, "experts_per_token": 2, "expert_load_imbalance": 4.0000001)"),
            "m.json"),
        Catch::EndsWith("= 4, got 4.0000001"));
    REQUIRE_THROWS_WITH(
        load_model_from_string(
            mixtral_keys(R"(, "experts_per_token": 2, "expert_load_imbalance": "1.3")"), "m.json"),
        Catch::StartsWith("m.json: /expert_load_imbalance: expected a plain number"));
  }
  SECTION("expert keys without experts; shared-expert keys without shared experts") {
    REQUIRE_THROWS_WITH(
        load_model_from_string(dense_keys(R"(, "experts_per_token": 2)"), "m.json"),
        "m.json: /experts_per_token: experts_per_token describes the experts of a "
        "mixture-of-experts model; expected it with \"experts\", got no \"experts\" key");
    REQUIRE_THROWS_WITH(
        load_model_from_string(
            mixtral_keys(R"(, "experts_per_token": 2, "shared_expert_gate": true)"), "m.json"),
        Catch::StartsWith("m.json: /shared_expert_gate: shared_expert_gate describes shared "
                          "experts; expected it with \"shared_experts\" >= 1"));
  }
  SECTION("a parameter count above 2^50") {
    // 65536 experts of 2^18 on hidden 2^16: 65536 * 3 * 2^16 * 2^18 = 3 * 2^50, about 3.4e15.
    REQUIRE_THROWS_WITH(
        load_model_from_string(R"({"layers": 1, "hidden": 65536, "heads": 64, "kv_heads": 1,
            "ffn_hidden": 262144, "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm",
            "tied_embeddings": false, "position_embedding": "rope", "experts": 65536,
            "experts_per_token": 1})",
                               "m.json"),
        Catch::StartsWith("m.json: /layers: the model has about 3.3") &&
            Catch::EndsWith("parameters: out of range; expected at most 2^50 (about 1.13e+15)"));
  }
}

TEST_CASE("moe loader: latent-attention keys", "[model][io]") {
  // dense_keys' 8 heads (and 8 KV heads) with latent attention.
  const std::string keys = dense_keys(
      R"(, "kv_lora_rank": 64, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32)");
  SECTION("read, with head_dim = nope + rope and no query compression by default") {
    const auto m = load_model_from_string(keys, "mla.json");
    REQUIRE(has_mla(m));
    REQUIRE(m.head_dim == 48);
    REQUIRE(m.q_lora_rank == 0);
    // h = 512, 8 heads: q 512 * 8 * 48 = 196,608; kv_a 512 * (64 + 16) = 40,960; kv_b 64 * 8 *
    // (32 + 32) = 32,768; o 8 * 32 * 512 = 131,072: 401,408. Norms: kv latent 64 + 2 * 512.
    REQUIRE(layer_parameter_counts(m).attention_weights == 401'408);
    REQUIRE(layer_parameter_counts(m).norms == 64 + 1024);
    // Attention term at T = 1024: 6 * 4 * 8 * (48 + 32) * 1024 = 15,728,640 beside 6N.
    REQUIRE(model_flops_per_token(m, 1024).value() ==
            Approx(6.0 * static_cast<double>(matmul_parameters(m)) + 15'728'640.0).epsilon(1e-12));
  }
  SECTION("one KV head per query head") {
    std::string bad = keys;
    bad.replace(bad.find("\"kv_heads\": 8"), 13, "\"kv_heads\": 4");
    REQUIRE_THROWS_WITH(load_model_from_string(bad, "mla.json"),
                        "mla.json: /kv_heads: latent attention has one key and value head per "
                        "query head; expected 8, got 4");
  }
  SECTION("head_dim is derived") {
    std::string bad = keys;
    bad.insert(bad.size() - 1, R"(, "head_dim": 64)");
    REQUIRE_THROWS_WITH(load_model_from_string(bad, "mla.json"),
                        "mla.json: /head_dim: with latent attention the head size is "
                        "qk_nope_head_dim + qk_rope_head_dim; expected no head_dim, got 64");
  }
  SECTION("no biases") {
    std::string bad = keys;
    bad.insert(bad.size() - 1, R"(, "qkv_bias": true)");
    REQUIRE_THROWS_WITH(load_model_from_string(bad, "mla.json"),
                        "mla.json: /qkv_bias: biases with latent attention are not modelled; "
                        "expected false, got true");
  }
  SECTION("latent keys without kv_lora_rank; negative sizes") {
    REQUIRE_THROWS_WITH(
        load_model_from_string(dense_keys(R"(, "v_head_dim": 128)"), "mla.json"),
        "mla.json: /v_head_dim: v_head_dim describes multi-head latent attention; expected it "
        "with \"kv_lora_rank\", got no \"kv_lora_rank\" key");
    std::string bad = keys;
    bad.replace(bad.find("\"qk_rope_head_dim\": 16"), 22, "\"qk_rope_head_dim\": -16");
    REQUIRE_THROWS_WITH(load_model_from_string(bad, "mla.json"),
                        "mla.json: /qk_rope_head_dim: expected an integer >= 1, got -16");
  }
}

TEST_CASE("moe loader: Hugging Face keys that are refused", "[model][io]") {
  SECTION("top-k above the experts") {
    REQUIRE_THROWS_WITH(
        load_model_from_string(hf_mixtral(R"(, "num_experts_per_tok": 9)"), "config.json"),
        "config.json: /num_experts_per_tok: a token is routed to at most all 8 "
        "experts (num_local_experts); expected at most 8, got 9");
  }
  SECTION("a negative expert width") {
    std::string hf = hf_deepseek("");
    hf.replace(hf.find("\"moe_intermediate_size\": 2048"), 29, "\"moe_intermediate_size\": -2048");
    REQUIRE_THROWS_WITH(load_model_from_string(hf, "config.json"),
                        "config.json: /moe_intermediate_size: expected an integer >= 1, got -2048");
  }
  SECTION("two expert counts; expert keys without a count") {
    // A model type whose configuration class names no expert keys reads them all, so two
    // counts contradict each other. (A Mixtral config's num_experts is Qwen's key, which
    // MixtralConfig does not read: ignored with a note, "moe counts: another family's expert
    // keys are not read".)
    std::string llama = hf_mixtral(R"(, "num_experts_per_tok": 2, "num_experts": 8)");
    llama.replace(llama.find("\"mixtral\""), 9, "\"llama\"");
    REQUIRE_THROWS_WITH(
        load_model_from_string(llama, "config.json"),
        Catch::StartsWith("config.json: /num_experts: the expert count is already given by "
                          "num_local_experts"));
    REQUIRE_THROWS_WITH(
        load_model_from_string(R"({"hidden_size": 64, "intermediate_size": 128,
            "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
            "moe_intermediate_size": 32})",
                               "config.json"),
        Catch::StartsWith("config.json: /moe_intermediate_size: moe_intermediate_size describes "
                          "experts; expected it with an expert count"));
  }
  SECTION("two descriptions of the shared experts or of the dense layers") {
    // A model type that reads every family's keys (llama) with DeepSeek's and Qwen's keys for
    // one thing: the Qwen2-MoE shared expert replaced DeepSeek's 3 without a word, and Qwen's
    // dense-layer keys beside DeepSeek's were called unknown though both are read.
    std::string shared = hf_mixtral(
        R"(, "num_experts_per_tok": 2, "moe_intermediate_size": 1024, "n_shared_experts": 3,
        "shared_expert_intermediate_size": 512)");
    shared.replace(shared.find("\"mixtral\""), 9, "\"llama\"");
    REQUIRE_THROWS_WITH(load_model_from_string(shared, "config.json"),
                        "config.json: /shared_expert_intermediate_size: the shared experts are "
                        "already given by n_shared_experts (3 of moe_intermediate_size); expected "
                        "one of n_shared_experts and shared_expert_intermediate_size, got both");
    std::string dense = hf_mixtral(
        R"(, "num_experts_per_tok": 2, "first_k_dense_replace": 1, "mlp_only_layers": [0])");
    dense.replace(dense.find("\"mixtral\""), 9, "\"llama\"");
    REQUIRE_THROWS_WITH(load_model_from_string(dense, "config.json"),
                        Catch::StartsWith("config.json: /mlp_only_layers: the dense layers are "
                                          "already given by first_k_dense_replace"));
    std::string sparse =
        hf_mixtral(R"(, "num_experts_per_tok": 2, "moe_layer_freq": 1, "decoder_sparse_step": 1)");
    sparse.replace(sparse.find("\"mixtral\""), 9, "\"llama\"");
    REQUIRE_THROWS_WITH(load_model_from_string(sparse, "config.json"),
                        Catch::StartsWith("config.json: /decoder_sparse_step: the dense layers "
                                          "are already given by moe_layer_freq"));
  }
  SECTION("a mixture-of-experts family without its expert count") {
    // transformers would fill the family's default (MixtralConfig: 8 experts, top 2; 46.7B):
    // priced as a dense 7.2B model in silence before.
    std::string mixtral = hf_mixtral("");
    mixtral.replace(mixtral.find(", \"num_local_experts\": 8"), 24, "");
    REQUIRE_THROWS_WITH(load_model_from_string(mixtral, "config.json"),
                        "config.json: /num_local_experts: missing required key; model_type "
                        "'mixtral' is a mixture of experts: expected num_local_experts, the "
                        "routed experts of each MoE layer");
    std::string deepseek = hf_deepseek("");
    deepseek.replace(deepseek.find("\"n_routed_experts\": 256, "), 25, "");
    deepseek.replace(deepseek.find("\"num_experts_per_tok\": 8,"), 25, "");
    REQUIRE_THROWS_WITH(load_model_from_string(deepseek, "config.json"),
                        Catch::StartsWith("config.json: /n_routed_experts: missing required key; "
                                          "model_type 'deepseek_v3' is a mixture of experts"));
  }
  SECTION("Qwen-MoE: MoE on every n-th layer, or dense layers that are not leading") {
    const std::string qwen = R"({"model_type": "qwen3_moe", "hidden_size": 2048,
        "intermediate_size": 6144, "num_hidden_layers": 48, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936, "num_experts": 128,
        "num_experts_per_tok": 8, "moe_intermediate_size": 768)";
    REQUIRE_THROWS_WITH(load_model_from_string(qwen + R"(, "decoder_sparse_step": 2})", "q.json"),
                        Catch::StartsWith("q.json: /decoder_sparse_step: MoE blocks on every n-th "
                                          "layer only are not modelled") &&
                            Catch::EndsWith("expected 1, got 2"));
    REQUIRE_THROWS_WITH(load_model_from_string(qwen + R"(, "mlp_only_layers": [1]})", "q.json"),
                        "q.json: /mlp_only_layers: dense layers other than a leading run are not "
                        "modelled; expected [0, 1, ..., k - 1], got 1 at entry 0");
    // A leading run is modelled: two dense layers of intermediate_size.
    const auto m = load_model_from_string(qwen + R"(, "mlp_only_layers": [0, 1]})", "q2.json");
    REQUIRE(m.num_dense_layers == 2);
    REQUIRE(m.ffn_hidden == 6144);
    REQUIRE(m.expert_ffn_hidden == 768);
  }
  SECTION("DeepSeek: MoE on every n-th layer; dense layers for all; attention biases") {
    REQUIRE_THROWS_WITH(
        load_model_from_string(hf_deepseek(R"(, "moe_layer_freq": 2)"), "config.json"),
        Catch::StartsWith("config.json: /moe_layer_freq: MoE blocks on every n-th layer"));
    std::string all_dense = hf_deepseek("");
    all_dense.replace(all_dense.find("\"first_k_dense_replace\": 3"), 26,
                      "\"first_k_dense_replace\": 61");
    REQUIRE_THROWS_WITH(load_model_from_string(all_dense, "config.json"),
                        "config.json: /first_k_dense_replace: an MoE model needs at least one MoE "
                        "layer; expected fewer dense layers than the 61 layers "
                        "(num_hidden_layers), got 61");
    REQUIRE_THROWS_WITH(
        load_model_from_string(hf_deepseek(R"(, "attention_bias": true)"), "config.json"),
        "config.json: /attention_bias: biases with latent attention are not modelled; expected "
        "false, got true");
    // transformers' head_dim of DeepSeek is the rotary part; another value is refused.
    REQUIRE_NOTHROW(load_model_from_string(hf_deepseek(R"(, "head_dim": 64)"), "hd.json"));
    REQUIRE_THROWS_WITH(
        load_model_from_string(hf_deepseek(R"(, "head_dim": 192)"), "config.json"),
        Catch::StartsWith("config.json: /head_dim: with latent attention head_dim is the rotary "
                          "part of a head (qk_rope_head_dim); expected 64, got 192"));
  }
  SECTION("GPT-OSS: alternating sliding-window and full layers") {
    std::string types;
    for (int i = 0; i < 36; ++i) {
      types += std::string(i == 0 ? "" : ", ") +
               (i % 2 == 0 ? "\"sliding_attention\"" : "\"full_attention\"");
    }
    const std::string gpt_oss = R"({"model_type": "gpt_oss", "hidden_size": 2880,
        "intermediate_size": 2880, "num_hidden_layers": 36, "num_attention_heads": 64,
        "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088,
        "num_local_experts": 128, "num_experts_per_tok": 4, "experts_per_token": 4,
        "attention_bias": true, "swiglu_limit": 7.0, "sliding_window": 128, "layer_types": [)" +
                                types + "]}";
    std::vector<std::int32_t> even;
    for (std::int32_t l = 0; l < 36; l += 2) even.push_back(l);
    const auto listed = load_model_from_string(gpt_oss, "gpt-oss.json");
    REQUIRE(listed.attention_window == 128);
    REQUIRE(listed.window_layers == even);
    // Without layer_types and sliding_window, GptOssConfig still alternates a window of 128
    // (configuration_gpt_oss.py: sliding_window = 128, layer_types "sliding_attention" where
    // (i + 1) % 2), as the released model and the built-in gpt-oss-120b do.
    const std::string bare = R"({"model_type": "gpt_oss", "hidden_size": 2880,
        "intermediate_size": 2880, "num_hidden_layers": 36, "num_attention_heads": 64,
        "num_key_value_heads": 8, "vocab_size": 201088, "num_local_experts": 128,
        "num_experts_per_tok": 4)";
    const auto by_default = load_model_from_string(bare + "}", "oss-bare.json");
    REQUIRE(by_default.attention_window == 128);
    REQUIRE(by_default.window_layers == even);
    const auto builtin = io::load_model("gpt-oss-120b");
    REQUIRE(builtin.attention_window == 128);
    REQUIRE(builtin.window_layers == even);
    // sliding_window null is full attention; the class's other defaults hold: head_dim 64 (not
    // 2880 / 64 = 45) and attention_bias true.
    const auto m = load_model_from_string(bare + R"(, "sliding_window": null})", "oss-null.json");
    REQUIRE(m.attention_window == 0);
    REQUIRE(m.head_dim == 64);
    REQUIRE(m.qkv_bias);
    REQUIRE(m.out_proj_bias);
    REQUIRE_FALSE(load_model_from_string(bare + R"(, "sliding_window": null,
                                                   "attention_bias": false})",
                                         "oss-nobias.json")
                      .qkv_bias);
  }
  SECTION("an expert width of the family's own is required, not taken from intermediate_size") {
    // Qwen3MoeConfig's moe_intermediate_size defaults to 768, not intermediate_size: without
    // the key, Qwen3-30B-A3B's experts (768 wide) were priced 6144 wide, 233 billion
    // parameters for 30.5.
    const std::string qwen3 = R"({"model_type": "qwen3_moe", "hidden_size": 2048,
        "intermediate_size": 6144, "num_hidden_layers": 48, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936, "num_experts": 128,
        "num_experts_per_tok": 8)";
    REQUIRE_THROWS_WITH(load_model_from_string(qwen3 + "}", "q3.json"),
                        "q3.json: /moe_intermediate_size: missing required key; model_type "
                        "'qwen3_moe' sizes its experts apart from intermediate_size: expected "
                        "moe_intermediate_size, the width of each expert's MLP");
    REQUIRE(load_model_from_string(qwen3 + R"(, "moe_intermediate_size": 768})", "q3ok.json")
                .expert_ffn_hidden == 768);
    // Qwen2-MoE's shared expert has a default width too (not "no shared expert").
    const std::string qwen2 = R"({"model_type": "qwen2_moe", "hidden_size": 2048,
        "intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 16,
        "vocab_size": 151936, "num_experts": 60, "num_experts_per_tok": 4,
        "moe_intermediate_size": 1408)";
    REQUIRE_THROWS_WITH(load_model_from_string(qwen2 + "}", "q2.json"),
                        "q2.json: /shared_expert_intermediate_size: missing required key; "
                        "model_type 'qwen2_moe' has a shared expert: expected "
                        "shared_expert_intermediate_size, its width (0 for none)");
    REQUIRE(
        load_model_from_string(qwen2 + R"(, "shared_expert_intermediate_size": 0})", "q2ok.json")
            .num_shared_experts == 0);
  }
}

TEST_CASE("moe loader: the note line names ignored keys and what is not counted", "[model][io]") {
  NoteCapture notes;
  // DeepSeek-V3's config.json as released, under a name no other test loads.
  const std::string text =
      io::read_text_file(std::string(TRAINSIM_TEST_DATA_DIR) + "/hf_deepseek_v3_moe_config.json",
                         1U << 20U, "a config.json");
  (void)load_model_from_string(text, "deepseek-note.json");
  REQUIRE(notes.lines ==
          std::vector<std::string>{
              "note: deepseek-note.json: Hugging Face keys ignored (no effect on cost): "
              "architectures, attention_dropout, auto_map, aux_loss_alpha, bos_token_id, "
              "eos_token_id, ep_size, initializer_range, max_position_embeddings, n_group, "
              "norm_topk_prob, pretraining_tp, quantization_config, rms_norm_eps, rope_scaling, "
              "rope_theta, routed_scaling_factor, scoring_func, seq_aux, topk_group, topk_method, "
              "torch_dtype, transformers_version, use_cache; docs/models.md lists the keys "
              "read"});
  // Its num_nextn_predict_layers is read (ModelSpec::mtp_layers), so nothing is left uncounted
  // there; GPT-OSS's attention sinks are: 64 heads x 36 layers = 2,304 logits.
  notes.lines.clear();
  (void)load_model_from_string(
      R"({"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
          "num_local_experts": 128, "num_experts_per_tok": 4, "num_hidden_layers": 36,
          "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
          "vocab_size": 201088, "tie_word_embeddings": false, "sliding_window": null})",
      "oss-note.json");
  REQUIRE(notes.lines ==
          std::vector<std::string>{
              "note: oss-note.json: not counted (would add cost): attention sinks (gpt_oss: one "
              "learned logit per head and layer, 2304 parameters); docs/models.md lists the keys "
              "read"});
}

TEST_CASE("moe loader: a scenario simulates MoE and latent-attention models", "[model][io]") {
  io::ScenarioDocument doc;
  doc.source = "s.json";
  doc.json = nlohmann::json::parse(R"({"hardware": "h100-dgx", "model": "deepseek-v3",
      "cluster": {"gpus": 8}, "training": {"seq_len": 4096}})");
  REQUIRE(io::scenario_from_document(doc).model.num_experts == 256);
  doc.use = io::ScenarioUse::Describe;
  REQUIRE(io::scenario_from_document(doc).model.kv_lora_rank == 512);
  doc.use = io::ScenarioUse::Simulate;
  doc.json["model"] = "mixtral-8x7b";
  REQUIRE_NOTHROW(io::scenario_from_document(doc));
  // A dense model simulates as before.
  doc.json["model"] = "llama2-7b";
  REQUIRE_NOTHROW(io::scenario_from_document(doc));
}

TEST_CASE("moe loader: DeepSeek keys whose class default is not 0 are required", "[model][io]") {
  // DeepseekV3Config defaults q_lora_rank to 1536, first_k_dense_replace to 3 and
  // n_shared_experts to 1 (DeepseekV2Config: 1536, 0 and 2). A config without one of them was
  // priced with 0 in silence: without q_lora_rank 46.1B active parameters for DeepSeek-V3's
  // 38.2B (a full q_proj), without first_k_dense_replace every layer MoE, without
  // n_shared_experts no shared expert.
  const auto without = [](const std::string& key, const std::string& model_type) {
    auto j = nlohmann::json::parse(hf_deepseek(""));
    j["model_type"] = model_type;
    j.erase(key);
    return j.dump();
  };
  REQUIRE_THROWS_WITH(
      load_model_from_string(without("q_lora_rank", "deepseek_v3"), "config.json"),
      "config.json: /q_lora_rank: missing required key; model_type 'deepseek_v3' defaults it "
      "to 1536 (low-rank queries) in its configuration class: expected q_lora_rank (null for "
      "queries projected directly, as DeepSeek-V2-Lite)");
  REQUIRE_THROWS_WITH(
      load_model_from_string(without("first_k_dense_replace", "deepseek_v3"), "config.json"),
      "config.json: /first_k_dense_replace: missing required key; model_type 'deepseek_v3' "
      "defaults it to 3 in its configuration class: expected first_k_dense_replace, the "
      "leading dense layers (0 for none)");
  REQUIRE_THROWS_WITH(
      load_model_from_string(without("kv_lora_rank", "deepseek_v3"), "config.json"),
      "config.json: /kv_lora_rank: missing required key; model_type 'deepseek_v3' is latent "
      "attention, its configuration class defaults it to 512: expected kv_lora_rank, the rank "
      "of the compressed keys and values");
  REQUIRE_THROWS_WITH(
      load_model_from_string(without("n_shared_experts", "deepseek_v2"), "config.json"),
      "config.json: /n_shared_experts: missing required key; model_type 'deepseek_v2' defaults "
      "it to 2 in its configuration class: expected n_shared_experts, the shared experts of "
      "moe_intermediate_size (null or 0 for none)");
  // DeepseekV2Config's first_k_dense_replace is 0 when absent; DeepSeek's own config files
  // write moe_layer_freq beside it, which was refused as an unknown key without it.
  auto v2 = nlohmann::json::parse(without("first_k_dense_replace", "deepseek_v2"));
  v2["moe_layer_freq"] = 1;
  const ModelSpec m = load_model_from_string(v2.dump(), "config.json");
  CHECK(m.num_dense_layers == 0);
  CHECK(m.num_shared_experts == 1);
  CHECK(m.q_lora_rank == 1536);
  // Null: queries projected directly (DeepseekV3Attention's q_lora_rank None, as
  // DeepSeek-V2-Lite's config has it), and no shared expert (DeepSeek's own modeling_deepseek.py
  // builds shared experts only when n_shared_experts is not None; transformers' DeepseekV3MoE
  // multiplies by it, so such a config does not load there).
  auto lite = nlohmann::json::parse(hf_deepseek(""));
  lite["q_lora_rank"] = nullptr;
  lite["n_shared_experts"] = nullptr;
  const ModelSpec l = load_model_from_string(lite.dump(), "config.json");
  CHECK(l.q_lora_rank == 0);
  CHECK(l.num_shared_experts == 0);
}
