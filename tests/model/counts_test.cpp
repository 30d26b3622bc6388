#include "trainsim/model/counts.hpp"

#include <catch2/catch.hpp>

#include "sim/io/model_loader.hpp"

using namespace trainsim;
using namespace trainsim::model;

TEST_CASE("counts: llama2-7b matches the worked example exactly", "[model]") {
  const auto m = io::load_model("llama2-7b");
  // h = 4096, ffn = 11008, 32 layers, 32 heads, MHA, vocab 32000, untied, RMSNorm.
  // attention 4h^2 = 67,108,864; SwiGLU 3 h ffn = 135,266,304; two RMSNorms 2h = 8,192.
  REQUIRE(layer_parameter_counts(m).attention_weights == 67'108'864);
  REQUIRE(layer_parameter_counts(m).mlp_weights == 135'266'304);
  REQUIRE(layer_parameter_counts(m).norms == 8'192);
  REQUIRE(layer_parameters(m) == 202'383'360);
  // 32 * 202,383,360 = 6,476,267,520; embedding + LM head 2 * 32000 * 4096 = 262,144,000;
  // final norm 4,096: 6,738,415,616 (docs/sources.md W.1).
  REQUIRE(num_parameters(m) == 6'738'415'616);
  // N drops the input embedding: 6,738,415,616 - 131,072,000 = 6,607,343,616.
  REQUIRE(matmul_parameters(m) == 6'607'343'616);
  // 6N + 12 L h s = 39,644,061,696 + 12 * 32 * 4096 * 4096 (= 6,442,450,944) = 46,086,512,640.
  REQUIRE(model_flops_per_token(m, 4096).value() == Approx(46'086'512'640.0).epsilon(1e-12));
}

TEST_CASE("counts: every built-in model has its exact parameter count", "[model]") {
  struct Row {
    const char* id;
    std::int64_t params;
  };
  // Each derivation: L * (attention + MLP + 2 norms) + embeddings + final norm.
  const auto row = GENERATE(
      // 40 * (4*5120^2 = 104,857,600 + 3*5120*13824 = 212,336,640 + 10,240) = 12,688,179,200;
      // + 2*32000*5120 = 327,680,000 + 5,120 = 13,015,864,320.
      Row{"llama2-13b", 13'015'864'320},
      // q,o 2*8192^2 = 134,217,728; k,v 2*8192*1024 = 16,777,216; MLP 3*8192*28672 =
      // 704,643,072; norms 16,384: 855,654,400 per layer * 80 = 68,452,352,000;
      // + 2*32000*8192 = 524,288,000 + 8,192 = 68,976,648,192.
      Row{"llama2-70b", 68'976'648'192},
      // q,o 2*4096^2 = 33,554,432; k,v 2*4096*1024 = 8,388,608; MLP 3*4096*14336 = 176,160,768;
      // norms 8,192: 218,112,000 * 32 = 6,979,584,000; + 2*128256*4096 = 1,050,673,152
      // + 4,096 = 8,030,261,248.
      Row{"llama3-8b", 8'030'261'248},
      // llama2-70b's layers (68,452,352,000) + 2*128256*8192 = 2,101,346,304 + 8,192.
      Row{"llama3-70b", 70'553'706'496},
      // q,o 2*16384^2 = 536,870,912; k,v 2*16384*1024 = 33,554,432; MLP 3*16384*53248 =
      // 2,617,245,696; norms 32,768: 3,187,703,808 * 126 = 401,650,679,808;
      // + 2*128256*16384 = 4,202,692,608 + 16,384 = 405,853,388,800.
      Row{"llama3.1-405b", 405'853'388'800},
      // q,o 2*2048^2 = 8,388,608; k,v 2*2048*512 = 2,097,152; MLP 3*2048*8192 = 50,331,648;
      // norms 4,096: 60,821,504 * 16 = 973,144,064; tied embedding 128256*2048 = 262,668,288;
      // + 2,048 = 1,235,814,400.
      Row{"llama3.2-1b", 1'235'814'400},
      // The same layers with a tied 32000*2048 = 65,536,000 embedding + 2,048.
      Row{"llama2-1b-32k", 1'038'682'112},
      // GPT-3 (Brown et al. 2020): per layer 12h^2 + 13h with h = 12288: attention 4h^2 + 4h
      // biases, MLP 8h^2 + 5h biases, two LayerNorms 4h: 1,811,939,328 + 159,744 =
      // 1,812,099,072; * 96 = 173,961,510,912; tied embedding 50257*12288 = 617,558,016;
      // positions 2048*12288 = 25,165,824; final LayerNorm 2h = 24,576: 174,604,259,328.
      Row{"gpt3-175b", 174'604'259'328},
      // Mistral 7B: llama3-8b's layers (6,979,584,000) + 2*32000*4096 = 262,144,000 + 4,096 =
      // 7,241,732,096 (Jiang et al. 2023: 7.24B).
      Row{"mistral-7b", 7'241'732'096},
      // Qwen2-7B: see "counts: Qwen2-7B ..." below.
      Row{"qwen2-7b", 7'615'616'512});
  CAPTURE(row.id);
  REQUIRE(num_parameters(io::load_model(row.id)) == row.params);
}

TEST_CASE("counts: tied embeddings still count the LM head as a matmul", "[model]") {
  const auto m = io::load_model("llama3.2-1b");
  // N = 16 layers (973,144,064) + final norm 2,048 + LM head 128256*2048 (262,668,288).
  REQUIRE(matmul_parameters(m) == 973'144'064 + 2'048 + 262'668'288);
  REQUIRE(lm_head_parameters(m) == 0);
}

TEST_CASE("counts: GPT-3 175B against Narayanan et al. 2021's formula", "[model]") {
  const auto m = io::load_model("gpt3-175b");
  const std::int64_t batch = 1536;  // Megatron-LM's GPT-3 175B example
  const std::int64_t s = 2048;
  const double l = 96;
  const double h = 12288;
  const double v = 50257;
  const double tokens = static_cast<double>(batch * s);
  // Megatron counts GEMMs only and N = 12 l h^2 + V h; then
  //   6 N + 12 l h s per token = 72 l h^2 + 6 V h + 12 l h s, and per iteration
  //   72 B s l h^2 (1 + s/6h + V/12lh)     (Korthikanti et al. 2022, model FLOPs).
  // Narayanan's eq. 3 adds a full-recompute forward to the layers (factor 4/3), not the head:
  //   96 B s l h^2 (1 + s/6h + V/16lh) = 4/3 (72 l h^2 + 12 l h s) B s + 6 V h B s.
  // trainsim's N also has biases and norms (13h per layer, 2h final norm): 6 (13 h l + 2 h)
  // more FLOPs per token. So model FLOPs = (megatron - (1/3)(72 l h^2 + 12 l h s) B s) +
  // 6 (13 h l + 2 h) B s.
  const double megatron = megatron_flops_per_iteration(m, batch, s).value();
  const double layer_term = (72.0 * l * h * h + 12.0 * l * h * s) * tokens;
  const double from_megatron =
      megatron - layer_term / 3.0 + 6.0 * (13.0 * h * l + 2.0 * h) * tokens;
  REQUIRE(model_flops_per_token(m, s).value() * tokens == Approx(from_megatron).epsilon(1e-12));
  // And the 72-form directly: 72 B s l h^2 (1 + s/6h + V/12lh) + the bias/norm term.
  const double korthikanti = 72.0 * tokens * l * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * l * h));
  REQUIRE(model_flops_per_token(m, s).value() * tokens ==
          Approx(korthikanti + 6.0 * (13.0 * h * l + 2.0 * h) * tokens).epsilon(1e-12));
}

TEST_CASE("counts: tensor parallelism splits layers as Megatron does", "[model]") {
  const auto m = io::load_model("llama2-70b");
  SECTION("tp 8: every matrix / 8, norms replicated") {
    // (855,654,400 - 16,384) / 8 + 16,384 = 106,954,752 + 16,384.
    REQUIRE(layer_parameters_per_tp_rank(m, 8) == 106'954'752 + 16'384);
  }
  SECTION("tp 16 > 8 KV heads: K and V replicated per rank (one head each)") {
    // Q,O: 2 * 8192 * (64/16 * 128) = 8,388,608; K,V: 2 * 8192 * 128 = 2,097,152;
    // MLP 3 * 8192 * 28672/16 = 44,040,192; norms 16,384.
    REQUIRE(layer_parameters_per_tp_rank(m, 16) == 8'388'608 + 2'097'152 + 44'040'192 + 16'384);
  }
  SECTION("vocab-parallel embedding and LM head") {
    // 32000 / 8 * 8192 = 32,768,000 each.
    REQUIRE(embedding_parameters_per_tp_rank(m, 8) == 32'768'000);
    REQUIRE(lm_head_parameters_per_tp_rank(m, 8, LmHeadCopy::SharedWithEmbedding) == 32'768'000);
  }
  SECTION("tp 1 gives the whole layer") {
    REQUIRE(layer_parameters_per_tp_rank(m, 1) == layer_parameters(m));
  }
}

TEST_CASE("counts: GPT-3's biases split with their matrices", "[model]") {
  const auto m = io::load_model("gpt3-175b");
  const std::int64_t h = 12288;
  // Column-parallel QKV (3h weights cols + 3h biases) and fc1 (4h + 4h biases) / 8; row-parallel
  // O and fc2 weights / 8 with their h biases replicated; LayerNorms 4h replicated.
  const std::int64_t expected = (12 * h * h) / 8 + (3 * h + 4 * h) / 8 + 2 * h + 4 * h;
  REQUIRE(layer_parameters_per_tp_rank(m, 8) == expected);
  // Tied weights on a separate last stage: a vocab-parallel copy, ceil(50257 / 8) = 6283 rows.
  REQUIRE(lm_head_parameters_per_tp_rank(m, 8, LmHeadCopy::Separate) == 6283 * h);
  REQUIRE(lm_head_parameters_per_tp_rank(m, 8, LmHeadCopy::SharedWithEmbedding) == 0);
}

TEST_CASE("counts: Qwen2-7B's Q, K, V biases and its published total", "[model]") {
  const auto m = io::load_model("qwen2-7b");
  // h = 3584, 28 heads of 128 (q = 3584), 4 KV heads (kv = 512), ffn 18944, vocab 152064,
  // untied, biases on Q, K and V only (modeling_qwen2.py: q/k/v_proj bias=True, o_proj False).
  // Attention: q, o 2 * 3584^2 = 25,690,112; k, v 2 * 3584 * 512 = 3,670,016: 29,360,128.
  // Biases: q + 2 kv = 3584 + 1024 = 4,608 (no O or MLP bias).
  // MLP: 3 * 3584 * 18944 = 203,685,888. Norms 2 * 3584 = 7,168.
  const auto c = layer_parameter_counts(m);
  REQUIRE(c.attention_weights == 29'360'128);
  REQUIRE(c.attention_biases == 4'608);
  REQUIRE(c.mlp_biases == 0);
  REQUIRE(c.mlp_weights == 203'685'888);
  // Layer 233,057,792 * 28 = 6,525,618,176; embedding and LM head 2 * 152064 * 3584 =
  // 1,089,994,752; final norm 3,584: 7,615,616,512.
  REQUIRE(num_parameters(m) == 7'615'616'512);
  // Published total 7.62B (Qwen/Qwen2-7B model card); 7.6156e9 / 7.62e9 - 1 = -0.06%.
  REQUIRE(static_cast<double>(num_parameters(m)) == Approx(7.62e9).epsilon(1e-3));
  SECTION("TP splits the column-parallel Q, K, V biases") {
    // tp 4: q_local = 7 heads * 128 = 896, kv_local = 1 * 128: weights
    // 3584 * 896 * 2 + 2 * 3584 * 128 = 7,340,032; biases 896 + 256 = 1,152;
    // MLP 3 * 3584 * 4736 = 50,921,472; norms 7,168.
    REQUIRE(layer_parameters_per_tp_rank(m, 4) == 7'340'032 + 1'152 + 50'921'472 + 7'168);
  }
}

TEST_CASE("counts: bias groups count one element per output feature", "[model]") {
  auto m = io::load_model("llama3-8b");  // q = 4096, kv = 1024, ffn 14336, SwiGLU
  const auto none = layer_parameters(m);
  m.qkv_bias = true;
  REQUIRE(layer_parameters(m) - none == 4096 + 2 * 1024);
  m.qkv_bias = false;
  m.out_proj_bias = true;
  REQUIRE(layer_parameters(m) - none == 4096);
  m.out_proj_bias = false;
  m.mlp_bias = true;  // gate and up: 2 * 14336; down: 4096
  REQUIRE(layer_parameters(m) - none == 2 * 14336 + 4096);
}

TEST_CASE("counts: a sliding window scales the attention FLOPs", "[model]") {
  const auto m = io::load_model("mistral-7b");  // window 4096
  SECTION("the share r of causal attention") {
    // T = 8192, w = 4096: sum min(i + 1, w) = 4096 * 4097 / 2 + (8192 - 4096) * 4096
    // = 8,390,656 + 16,777,216 = 25,167,872 against 8192 * 8193 / 2 = 33,558,528.
    REQUIRE(attention_window_fraction(m, 8192) ==
            Approx(25'167'872.0 / 33'558'528.0).epsilon(1e-12));
    // T <= w: every query sees all its keys.
    REQUIRE(attention_window_fraction(m, 4096) == 1.0);
    REQUIRE(attention_window_fraction(m, 1024) == 1.0);
    // w = 1: one key per query: T / (T (T + 1) / 2) = 2 / (T + 1).
    auto one = m;
    one.attention_window = 1;
    REQUIRE(attention_window_fraction(one, 8192) == Approx(2.0 / 8193.0).epsilon(1e-12));
  }
  SECTION("model FLOPs per token at seq 8192") {
    // N = 7,241,732,096 - 32000 * 4096 = 7,110,660,096; 6N = 42,663,960,576.
    // Attention 12 * 32 * 4096 * 8192 = 12,884,901,888, times r = 25,167,872 / 33,558,528.
    const double r = 25'167'872.0 / 33'558'528.0;
    REQUIRE(model_flops_per_token(m, 8192).value() ==
            Approx(42'663'960'576.0 + 12'884'901'888.0 * r).epsilon(1e-12));
    auto full = m;
    full.attention_window = 0;
    REQUIRE(model_flops_per_token(full, 8192).value() ==
            Approx(42'663'960'576.0 + 12'884'901'888.0).epsilon(1e-12));
    // Within the window nothing changes.
    REQUIRE(model_flops_per_token(m, 4096) == model_flops_per_token(full, 4096));
  }
  SECTION("a window on some layers only") {
    // The 16 even layers windowed, the 16 odd ones in full: attention
    // 12 * 4096 * 8192 * (16 r + 16) = 402,653,184 * 16 * (r + 1).
    const double r = 25'167'872.0 / 33'558'528.0;
    auto half = m;
    for (std::int32_t l = 0; l < 32; l += 2) half.window_layers.push_back(l);
    REQUIRE(mixed_attention_window(half));
    REQUIRE(layer_windowed(half, 30));
    REQUIRE_FALSE(layer_windowed(half, 31));
    REQUIRE(model_flops_per_token(half, 8192).value() ==
            Approx(42'663'960'576.0 + 402'653'184.0 * 16.0 * (r + 1.0)).epsilon(1e-12));
    // Without the list every layer is windowed; without the window none is.
    REQUIRE(layer_windowed(m, 31));
    REQUIRE_FALSE(mixed_attention_window(m));
    REQUIRE_FALSE(layer_windowed(without_attention_window(half), 30));
    REQUIRE(model_flops_per_token(without_attention_window(half), 8192).value() ==
            Approx(42'663'960'576.0 + 12'884'901'888.0).epsilon(1e-12));
  }
}
