// Parameter counts and model FLOPs of mixture-of-experts and latent-attention models: the
// built-in models against their model cards, and the Hugging Face configs they come from.
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/model/counts.hpp"

#include "sim/io/model_loader.hpp"

using namespace trainsim;
using namespace trainsim::model;
using trainsim::io::load_model;
using trainsim::io::load_model_from_string;

namespace {

std::string data(const std::string& file) {
  return std::string(TRAINSIM_TEST_DATA_DIR) + "/" + file;
}

double d(std::int64_t v) { return static_cast<double>(v); }

// Every field of two specs but the id.
void require_same_shape(const ModelSpec& a, const ModelSpec& b) {
  REQUIRE(a.num_layers == b.num_layers);
  REQUIRE(a.hidden == b.hidden);
  REQUIRE(a.num_heads == b.num_heads);
  REQUIRE(a.num_kv_heads == b.num_kv_heads);
  REQUIRE(a.head_dim == b.head_dim);
  REQUIRE(a.ffn_hidden == b.ffn_hidden);
  REQUIRE(a.vocab == b.vocab);
  REQUIRE(a.activation == b.activation);
  REQUIRE(a.norm == b.norm);
  REQUIRE(a.tied_embeddings == b.tied_embeddings);
  REQUIRE(a.position_embedding == b.position_embedding);
  REQUIRE(a.max_positions == b.max_positions);
  REQUIRE(a.qkv_bias == b.qkv_bias);
  REQUIRE(a.out_proj_bias == b.out_proj_bias);
  REQUIRE(a.mlp_bias == b.mlp_bias);
  REQUIRE(a.attention_window == b.attention_window);
  REQUIRE(a.num_experts == b.num_experts);
  REQUIRE(a.num_experts_per_token == b.num_experts_per_token);
  REQUIRE(a.expert_ffn_hidden == b.expert_ffn_hidden);
  REQUIRE(a.num_shared_experts == b.num_shared_experts);
  REQUIRE(a.shared_expert_ffn_hidden == b.shared_expert_ffn_hidden);
  REQUIRE(a.num_dense_layers == b.num_dense_layers);
  REQUIRE(a.router_bias == b.router_bias);
  REQUIRE(a.shared_expert_gate == b.shared_expert_gate);
  REQUIRE(a.expert_load_imbalance == b.expert_load_imbalance);
  REQUIRE(a.q_lora_rank == b.q_lora_rank);
  REQUIRE(a.kv_lora_rank == b.kv_lora_rank);
  REQUIRE(a.qk_nope_head_dim == b.qk_nope_head_dim);
  REQUIRE(a.qk_rope_head_dim == b.qk_rope_head_dim);
  REQUIRE(a.v_head_dim == b.v_head_dim);
}

}  // namespace

TEST_CASE("moe counts: mixtral-8x7b matches Mistral's 46.7B total and 12.9B active", "[model]") {
  const auto m = load_model("mixtral-8x7b");
  // h = 4096, 32 layers, 32 heads of 128, 8 KV heads, vocab 32000, 8 experts of 14336, top 2.
  // Attention: q, o 2 * 4096 * 4096 = 33,554,432; k, v 2 * 4096 * 1024 = 8,388,608.
  const auto all = layer_parameter_counts(m, LayerKind::Moe, Experts::All);
  REQUIRE(all.attention_weights == 41'943'040);
  // One expert 3 * 4096 * 14336 = 176,160,768; eight 1,409,286,144; two 352,321,536.
  REQUIRE(all.mlp_weights == 1'409'286'144);
  REQUIRE(layer_parameter_counts(m, LayerKind::Moe, Experts::Active).mlp_weights == 352'321'536);
  // Router 4096 x 8 = 32,768, no bias; two RMSNorms 8,192.
  REQUIRE(all.router_weights == 32'768);
  REQUIRE(all.router_biases == 0);
  REQUIRE(all.norms == 8'192);
  // 32 * (41,943,040 + 1,409,286,144 + 32,768 + 8,192 = 1,451,270,144) = 46,440,644,608;
  // + embedding and LM head 2 * 32000 * 4096 = 262,144,000 + final norm 4,096.
  REQUIRE(num_parameters(m) == 46'702'792'704);
  // 32 * (41,943,040 + 352,321,536 + 32,768 + 8,192 = 394,305,536) = 12,617,777,152
  // + 262,148,096 = 12,879,925,248.
  REQUIRE(num_active_parameters(m) == 12'879'925'248);
  // Mistral AI, "Mixtral of experts" (2023-12-11): 46.7B total, 12.9B per token; within 1%
  // (46.703 / 46.7 = 1.0001, 12.880 / 12.9 = 0.9984).
  REQUIRE(d(num_parameters(m)) == Approx(46.7e9).epsilon(0.01));
  REQUIRE(d(num_active_parameters(m)) == Approx(12.9e9).epsilon(0.01));
  // N drops the input embedding: 12,879,925,248 - 131,072,000 = 12,748,853,248.
  REQUIRE(matmul_parameters(m) == 12'748'853'248);
  // 6N = 76,493,119,488 + 12 * 32 * 4096 * 4096 = 6,442,450,944: 82,935,570,432.
  REQUIRE(model_flops_per_token(m, 4096).value() == Approx(82'935'570'432.0).epsilon(1e-12));
}

TEST_CASE("moe counts: qwen3-30b-a3b matches the Qwen3 model card", "[model]") {
  const auto m = load_model("qwen3-30b-a3b");
  // h = 2048, 48 layers, 32 heads of 128 (q = 4096), 4 KV heads (kv = 512), vocab 151936,
  // 128 experts of 768, top 8. Attention: q, o 2 * 2048 * 4096 = 16,777,216; k, v
  // 2 * 2048 * 512 = 2,097,152: 18,874,368. One expert 3 * 2048 * 768 = 4,718,592; router
  // 2048 * 128 = 262,144; norms 4,096.
  // All: 48 * (18,874,368 + 128 * 4,718,592 + 262,144 + 4,096 = 623,120,384) =
  // 29,909,778,432; + 2 * 151936 * 2048 = 622,329,856 + 2,048 = 30,532,110,336.
  REQUIRE(num_parameters(m) == 30'532'110'336);
  // Active: 48 * (18,874,368 + 8 * 4,718,592 + 262,144 + 4,096 = 56,889,344) = 2,730,688,512
  // + 622,331,904 = 3,353,020,416.
  REQUIRE(num_active_parameters(m) == 3'353'020'416);
  // Model card: 30.5B in total (30.532 / 30.5 = 1.0010) and 29.9B non-embedding
  // (30,532,110,336 - 622,329,856 = 29,909,780,480; / 29.9 = 1.0003): within 1%.
  REQUIRE(d(num_parameters(m)) == Approx(30.5e9).epsilon(0.01));
  REQUIRE(d(num_parameters(m) - 2 * m.vocab * m.hidden) == Approx(29.9e9).epsilon(0.01));
  // "3.3B activated" is 3.353B cut to one decimal (1.6% below; rounded it would read 3.4B):
  // the count lies in [3.3B, 3.4B).
  REQUIRE(num_active_parameters(m) >= 3'300'000'000);
  REQUIRE(num_active_parameters(m) < 3'400'000'000);
}

TEST_CASE("moe counts: qwen3-235b-a22b matches the Qwen3 model card", "[model]") {
  const auto m = load_model("qwen3-235b-a22b");
  // h = 4096, 94 layers, 64 heads of 128 (q = 8192), 4 KV heads (kv = 512), vocab 151936,
  // 128 experts of 1536, top 8. Attention: q, o 2 * 4096 * 8192 = 67,108,864; k, v
  // 2 * 4096 * 512 = 4,194,304: 71,303,168. One expert 3 * 4096 * 1536 = 18,874,368; router
  // 4096 * 128 = 524,288; norms 8,192.
  // All: 94 * (71,303,168 + 128 * 18,874,368 + 524,288 + 8,192 = 2,487,754,752) =
  // 233,848,946,688; + 2 * 151936 * 4096 = 1,244,659,712 + 4,096 = 235,093,610,496.
  REQUIRE(num_parameters(m) == 235'093'610'496);
  // Active: 94 * (71,303,168 + 8 * 18,874,368 + 524,288 + 8,192 = 222,830,592) =
  // 20,946,075,648 + 1,244,663,808 = 22,190,739,456.
  REQUIRE(num_active_parameters(m) == 22'190'739'456);
  // Model card: 235B in total (235.094 / 235 = 1.0004), 22B activated (22.191 / 22 = 1.0087),
  // 234B non-embedding (233,848,950,784 / 234e9 = 0.9994): within 1%.
  REQUIRE(d(num_parameters(m)) == Approx(235e9).epsilon(0.01));
  REQUIRE(d(num_active_parameters(m)) == Approx(22e9).epsilon(0.01));
  REQUIRE(d(num_parameters(m) - 2 * m.vocab * m.hidden) == Approx(234e9).epsilon(0.01));
}

TEST_CASE("moe counts: deepseek-v3 matches the technical report's 671B and 37B", "[model]") {
  const auto m = load_model("deepseek-v3");
  REQUIRE(m.head_dim == 192);  // qk_nope_head_dim 128 + qk_rope_head_dim 64
  // Multi-head latent attention, h = 7168, 128 heads: q_a 7168 * 1536 = 11,010,048; q_b
  // 1536 * 128 * 192 = 37,748,736; kv_a 7168 * (512 + 64) = 4,128,768; kv_b 512 * 128 *
  // (128 + 128) = 16,777,216; o 128 * 128 * 7168 = 117,440,512: 187,105,280.
  const auto dense = layer_parameter_counts(m);
  REQUIRE(dense.attention_weights == 187'105'280);
  // Norms: the latents' 1536 + 512 and two of 7168: 16,384.
  REQUIRE(dense.norms == 16'384);
  // Dense layer: MLP 3 * 7168 * 18432 = 396,361,728; 583,483,392 in all.
  REQUIRE(dense.total() == 583'483'392);
  // MoE layer: an expert 3 * 7168 * 2048 = 44,040,192; 256 routed 11,274,289,152 and 1 shared;
  // router 7168 * 256 = 1,835,008 and its 256 biases: 187,105,280 + 11,274,289,152 +
  // 44,040,192 + 1,835,008 + 256 + 16,384 = 11,507,286,272.
  const auto moe = layer_parameter_counts(m, LayerKind::Moe, Experts::All);
  REQUIRE(moe.router_weights == 1'835'008);
  REQUIRE(moe.router_biases == 256);
  REQUIRE(moe.total() == 11'507'286'272);
  // 3 * 583,483,392 = 1,750,450,176; 58 * 11,507,286,272 = 667,422,603,776; embedding and LM
  // head 2 * 129280 * 7168 = 1,853,358,080; final norm 7,168: 671,026,419,200.
  REQUIRE(num_moe_layers(m) == 58);
  REQUIRE(num_parameters(m) == 671'026'419'200);
  // Active MoE layer: 8 routed + 1 shared expert = 9 * 44,040,192 = 396,361,728 (the dense
  // MLP's size): 187,105,280 + 396,361,728 + 1,835,008 + 256 + 16,384 = 585,318,656;
  // 58 * 585,318,656 = 33,948,482,048 + 1,750,450,176 + 1,853,358,080 + 7,168 = 37,552,297,472.
  REQUIRE(layer_parameter_counts(m, LayerKind::Moe, Experts::Active).total() == 585'318'656);
  REQUIRE(num_active_parameters(m) == 37'552'297'472);
  // arXiv:2412.19437 §4.2: "671B total parameters, of which 37B are activated for each token".
  // Total within 1% (671.026 / 671 = 1.00004). The active 37.55B is the 37B figure cut to whole
  // billions (1.5% above it): it lies in [37B, 38B). Without the input embedding (the
  // matmul convention, 36,625,618,432) it is 1.01% below.
  REQUIRE(d(num_parameters(m)) == Approx(671e9).epsilon(0.01));
  REQUIRE(num_active_parameters(m) >= 37'000'000'000);
  REQUIRE(num_active_parameters(m) < 38'000'000'000);
  REQUIRE(matmul_parameters(m) == 37'552'297'472 - 926'679'040);
  // Model FLOPs at T = 4096: 6N = 6 * 36,625,618,432 = 219,753,710,592; attention with
  // d_qk = 192 and d_v = 128: 6 * 61 * 128 * (192 + 128) * 4096 = 61,404,610,560;
  // 281,158,321,152 in all.
  REQUIRE(model_flops_per_token(m, 4096).value() == Approx(281'158'321'152.0).epsilon(1e-12));
}

TEST_CASE("moe counts: gpt-oss-120b matches OpenAI's 116.83B total and 5.13B active", "[model]") {
  const auto m = load_model("gpt-oss-120b");
  // h = 2880, 36 layers, 64 heads of 64 (q = 4096), 8 KV heads (kv = 512), vocab 201088,
  // 128 experts of 2880, top 4, biases everywhere. Attention: q, o 2 * 2880 * 4096 =
  // 23,592,960; k, v 2 * 2880 * 512 = 2,949,120: 26,542,080; biases 4096 + 2 * 512 + 2880 =
  // 8,000. An expert 3 * 2880 * 2880 = 24,883,200 and biases 2 * 2880 + 2880 = 8,640:
  // 24,891,840. Router 2880 * 128 = 368,640 and 128 biases; norms 5,760.
  const auto all = layer_parameter_counts(m, LayerKind::Moe, Experts::All);
  REQUIRE(all.attention_weights + all.attention_biases == 26'550'080);
  REQUIRE(all.mlp_weights + all.mlp_biases == 3'186'155'520);  // 128 * 24,891,840
  // All: 36 * (26,550,080 + 3,186,155,520 + 368,768 + 5,760 = 3,213,080,128) =
  // 115,670,884,608; + 2 * 201088 * 2880 = 1,158,266,880 + 2,880 = 116,829,154,368.
  REQUIRE(num_parameters(m) == 116'829'154'368);
  // Active: 36 * (26,550,080 + 4 * 24,891,840 + 368,768 + 5,760 = 126,491,968) =
  // 4,553,710,848; + 1,158,266,880 + 2,880 = 5,711,980,608 with the embedding; the card counts
  // without it (the matmul convention): 5,711,980,608 - 579,133,440 = 5,132,847,168.
  REQUIRE(num_active_parameters(m) == 5'711'980'608);
  REQUIRE(matmul_parameters(m) == 5'132'847'168);
  // arXiv:2508.10925 Table 1: 116.83B total (1.00000), 5.13B active (1.0006): within 1%.
  REQUIRE(d(num_parameters(m)) == Approx(116.83e9).epsilon(0.01));
  REQUIRE(d(matmul_parameters(m)) == Approx(5.13e9).epsilon(0.01));
}

TEST_CASE("moe counts: Hugging Face configs load to the built-in specs", "[model][io]") {
  SECTION("mistralai/Mixtral-8x7B-v0.1") {
    const auto hf = load_model(data("hf_mixtral_8x7b_moe_config.json"));
    require_same_shape(hf, load_model("mixtral-8x7b"));
  }
  SECTION("Qwen/Qwen3-30B-A3B") {
    const auto hf = load_model(data("hf_qwen3_30b_a3b_moe_config.json"));
    require_same_shape(hf, load_model("qwen3-30b-a3b"));
  }
  SECTION("deepseek-ai/DeepSeek-V3") {
    const auto hf = load_model(data("hf_deepseek_v3_moe_config.json"));
    require_same_shape(hf, load_model("deepseek-v3"));
    // The config's num_nextn_predict_layers 1: one multi-token-prediction module, which the
    // built-in model (the 671B main model) leaves out. Its MoE layer: latent attention
    // 7168 x 1536 + 1536 x 128 x 192 + 7168 x 576 + 512 x 128 x 256 + 128 x 128 x 7168
    // = 187,105,280, norms 2 x 7168 + 1536 + 512 = 16,384, experts 257 x 3 x 7168 x 2048
    // = 11,318,329,344, router 7168 x 256 + 256 = 1,835,264: 11,507,286,272; beside it
    // eh_proj 2 x 7168^2 = 102,760,448 and three norms 21,504: 11,610,068,224. With the
    // shared embedding and head stored again (2 x 129,280 x 7168 = 1,853,423,616) that is
    // README_WEIGHTS.md's "14B" MTP module (13.46B) and its 685B total (684.49B).
    REQUIRE(hf.mtp_layers == 1);
    REQUIRE(load_model("deepseek-v3").mtp_layers == 0);
    REQUIRE(mtp_parameters(hf, Experts::All) == 11'610'068'224);
    REQUIRE(num_parameters(hf) == 671'026'419'200 + 11'610'068'224);
  }
}

TEST_CASE("moe counts: another family's expert keys are not read", "[model][io]") {
  // transformers' MixtralConfig has no shared experts or leading dense layers, Qwen3MoeConfig
  // no shared expert and no first_k_dense_replace: their models ignore such keys, so the
  // configs keep the built-in shapes (46.7B for Mixtral; before, n_shared_experts 2 made it
  // 58.0B, first_k_dense_replace 2 44.2B). The note that names each key and the family is
  // checked by cli.describe.hf_foreign_expert_key.
  const auto with = [](const std::string& file, const std::string& key, int value) {
    auto j = nlohmann::json::parse(std::ifstream(data(file)));
    j[key] = value;
    return load_model_from_string(j.dump(), file);
  };
  for (const char* key : {"n_shared_experts", "first_k_dense_replace",
                          "shared_expert_intermediate_size", "num_experts"}) {
    CAPTURE(key);
    require_same_shape(with("hf_mixtral_8x7b_moe_config.json", key, 2), load_model("mixtral-8x7b"));
  }
  for (const char* key :
       {"n_shared_experts", "first_k_dense_replace", "shared_expert_intermediate_size"}) {
    CAPTURE(key);
    require_same_shape(with("hf_qwen3_30b_a3b_moe_config.json", key, 2),
                       load_model("qwen3-30b-a3b"));
  }
  // The family's own keys are still read: Qwen3-MoE's mlp_only_layers gives it dense layers.
  auto j = nlohmann::json::parse(std::ifstream(data("hf_qwen3_30b_a3b_moe_config.json")));
  j["mlp_only_layers"] = {0, 1};
  CHECK(load_model_from_string(j.dump(), "q.json").num_dense_layers == 2);
}

TEST_CASE("moe counts: a multi-token-prediction module's model FLOPs", "[model][mtp]") {
  // DeepSeek-V3 with its module (num_nextn_predict_layers 1) at sequence 4096. Per token the
  // module adds 6 x its active matmul parameters: the MoE layer with 8 routed and 1 shared
  // experts (latent attention 187,105,280, norms 16,384, experts 9 x 3 x 7168 x 2048 =
  // 396,361,728, router 1,835,264: 585,318,656), the projection and norms 102,781,952 and the
  // LM head again 129,280 x 7168 = 926,679,040, together 1,614,779,648, x 6 = 9,688,677,888;
  // and its attention 6 x 128 x (192 + 128) x 4096 = 1,006,632,960: 10,695,310,848.
  ModelSpec m = load_model("deepseek-v3");
  const double without = model_flops_per_token(m, 4096).value();
  m.mtp_layers = 1;
  const double added = model_flops_per_token(m, 4096).value() - without;
  CHECK(added == 10'695'310'848.0);
  // The Megatron-Bridge summaries count the same module: their 26.02 DeepSeek-V3 rows (with
  // MTP) give 1,028 TFLOP/s at 3,955 tokens/s = 259.9 GFLOP per token, the 25.11 row
  // "w/o MTP" 782 at 3,139 = 249.1 (validation/published_runs.json), 10.8 GFLOP apart; the
  // tables' integer TFLOP/s leave about 0.1 GFLOP of rounding in each.
  const double tables = 1028e12 / 3955.0 - 782e12 / 3139.0;
  CHECK(added / tables == Approx(1.0).epsilon(0.02));
}

TEST_CASE("moe counts: Qwen2-MoE's gated shared expert and Q, K, V biases", "[model][io]") {
  // Qwen/Qwen1.5-MoE-A2.7B's shape (Qwen2MoeConfig keys): model card "14.3B parameters in total
  // and 2.7B activated".
  const auto m = load_model_from_string(R"({"model_type": "qwen2_moe", "hidden_size": 2048,
      "intermediate_size": 5632, "moe_intermediate_size": 1408,
      "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
      "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
      "vocab_size": 151936, "decoder_sparse_step": 1, "norm_topk_prob": false,
      "tie_word_embeddings": false})",
                                        "qwen1.5-moe.json");
  REQUIRE(m.qkv_bias);
  REQUIRE(m.shared_expert_gate);
  REQUIRE(m.num_shared_experts == 1);
  // Attention 4 * 2048^2 = 16,777,216 + Q, K, V biases 3 * 2048 = 6,144; an expert
  // 3 * 2048 * 1408 = 8,650,752; the shared one 3 * 2048 * 5632 = 34,603,008; router
  // 2048 * 60 = 122,880 and the shared gate 2048; norms 4,096.
  // All: 24 * (16,783,360 + 60 * 8,650,752 + 34,603,008 + 124,928 + 4,096 = 570,560,512) =
  // 13,693,452,288 + 2 * 151936 * 2048 = 622,329,856 + 2,048 = 14,315,784,192 (14.3B).
  REQUIRE(num_parameters(m) == 14'315'784'192);
  // Active: 24 * (16,783,360 + 4 * 8,650,752 + 34,603,008 + 124,928 + 4,096 = 86,118,400) =
  // 2,066,841,600 + 622,331,904 = 2,689,173,504 (2.7B: 0.996).
  REQUIRE(num_active_parameters(m) == 2'689'173'504);
  REQUIRE(d(num_active_parameters(m)) == Approx(2.7e9).epsilon(0.01));
}

TEST_CASE("moe counts: expert biases, router bias and the shared-expert gate", "[model]") {
  // A small SwiGLU model: h = 8, 4 routed experts of 2 (top 2), 1 shared expert of 3, biases
  // on every MLP, a router bias and a shared-expert gate.
  ModelSpec m;
  m.num_layers = 2;
  m.hidden = 8;
  m.num_heads = 2;
  m.num_kv_heads = 2;
  m.head_dim = 4;
  m.ffn_hidden = 16;
  m.vocab = 10;
  m.mlp_bias = true;
  m.num_experts = 4;
  m.num_experts_per_token = 2;
  m.expert_ffn_hidden = 2;
  m.num_shared_experts = 1;
  m.shared_expert_ffn_hidden = 3;
  m.num_dense_layers = 1;
  m.router_bias = true;
  m.shared_expert_gate = true;
  const auto all = layer_parameter_counts(m, LayerKind::Moe, Experts::All);
  const auto active = layer_parameter_counts(m, LayerKind::Moe, Experts::Active);
  // A routed expert: weights 3 * 8 * 2 = 48, biases gate and up 2 * 2 + down 8 = 12; the
  // shared one 3 * 8 * 3 = 72 and 2 * 3 + 8 = 14.
  REQUIRE(all.mlp_weights == 4 * 48 + 72);
  REQUIRE(all.mlp_biases == 4 * 12 + 14);
  REQUIRE(active.mlp_weights == 2 * 48 + 72);
  REQUIRE(active.mlp_biases == 2 * 12 + 14);
  // Router 8 * 4 + the gate 8 = 40; 4 biases; the same for a token (it scores every expert).
  REQUIRE(all.router_weights == 40);
  REQUIRE(active.router_weights == 40);
  REQUIRE(all.router_biases == 4);
  // The dense layer: MLP 3 * 8 * 16 = 384, biases 2 * 16 + 8 = 40, no router.
  REQUIRE(layer_parameter_counts(m).mlp_weights == 384);
  REQUIRE(layer_parameter_counts(m).router_weights == 0);
  // One dense and one MoE layer.
  REQUIRE(num_parameters(m) - num_active_parameters(m) == all.total() - active.total());
  REQUIRE(all.total() - active.total() == 2 * (48 + 12));
}

TEST_CASE("moe counts: a dense model is unchanged", "[model]") {
  // Active equals total without experts; the llama2-7b worked example (counts_test.cpp) holds.
  const auto m = load_model("llama2-7b");
  REQUIRE(!is_moe(m));
  REQUIRE(!has_mla(m));
  REQUIRE(simulation_gap(m).empty());
  REQUIRE(num_moe_layers(m) == 0);
  REQUIRE(num_active_parameters(m) == num_parameters(m));
  REQUIRE(num_parameters(m) == 6'738'415'616);
  // MoE layers (expert parallelism) and latent attention are simulated.
  REQUIRE(simulation_gap(load_model("mixtral-8x7b")).empty());
  REQUIRE(simulation_gap(load_model("deepseek-v3")).empty());
}
