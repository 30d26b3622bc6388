// Model shapes whose counts would overflow int64 are refused where the model is read, and the
// FLOPs of the largest accepted shapes stay positive and finite.
#include <string>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"

#include "sim/io/model_loader.hpp"

using namespace trainsim;
using namespace trainsim::model;
using trainsim::io::load_model_from_string;

namespace {

std::string model_keys(const std::string& layers, const std::string& hidden,
                       const std::string& heads, const std::string& ffn,
                       const std::string& extra = "") {
  return R"({"layers": )" + layers + R"(, "hidden": )" + hidden + R"(, "heads": )" + heads +
         R"(, "kv_heads": 1, "ffn_hidden": )" + ffn +
         R"(, "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm",
             "tied_embeddings": false, "position_embedding": "rope")" +
         extra + "}";
}

}  // namespace

TEST_CASE("model_loader: each count above its bound is out of range", "[model][io]") {
  // 1e12 layers: a whole number, far above kMaxLayers = 2^16.
  REQUIRE_THROWS_AS(load_model_from_string(model_keys("1e12", "4096", "32", "11008"), "m.json"),
                    ConfigError);
  REQUIRE_THROWS_WITH(load_model_from_string(model_keys("1e12", "4096", "32", "11008"), "m.json"),
                      "m.json: /layers: 1000000000000.0: out of range; expected at most 65536");
  REQUIRE_THROWS_WITH(
      load_model_from_string(model_keys("32", "9223372036854775807", "32", "11008"), "m.json"),
      "m.json: /hidden: 9223372036854775807: out of range; expected at most 1048576");
}

TEST_CASE("model_loader: heads x head_dim above 2^24 is out of range", "[model][io]") {
  // 65536 heads of 65536 = 2^32 query width, above kMaxAttentionWidth = 2^24 = 16777216.
  REQUIRE_THROWS_WITH(
      load_model_from_string(model_keys("2", "64", "65536", "64", R"(, "head_dim": 65536)"),
                             "m.json"),
      "m.json: /head_dim: heads x head_dim = 65536 x 65536 = 4294967296: out of range; expected "
      "at most 16777216");
}

TEST_CASE("model_loader: a parameter count above 2^50 is out of range", "[model][io]") {
  // hidden h = 2^16, 64 heads of 1024 (q = 2^16), one KV head (kv = 1024), ffn f = 2^18:
  // a layer has 2 h q + 2 h kv + 3 h f = 2^33 + 2^27 + 3 * 2^34, about 6.0e10 parameters, and
  // 2^16 layers about 3.9e15 > 2^50 (1.13e15).
  REQUIRE_THROWS_WITH(
      load_model_from_string(model_keys("65536", "65536", "64", "262144"), "m.json"),
      Catch::StartsWith("m.json: /layers: the model has about 3.9") &&
          Catch::EndsWith("parameters: out of range; expected at most 2^50 (about 1.13e+15)"));
  // The same in a Hugging Face config names its key.
  const std::string hf = R"({"num_hidden_layers": 65536, "hidden_size": 65536,
      "num_attention_heads": 64, "num_key_value_heads": 1, "intermediate_size": 262144,
      "vocab_size": 32000})";
  REQUIRE_THROWS_WITH(load_model_from_string(hf, "config.json"),
                      Catch::StartsWith("config.json: /num_hidden_layers: the model has about"));
  // One layer of it (6.0e10 parameters) loads.
  REQUIRE_NOTHROW(load_model_from_string(model_keys("1", "65536", "64", "262144"), "m.json"));
}

TEST_CASE("counts: model FLOPs of the largest accepted shapes stay positive", "[model]") {
  // 2^16 layers with an attention width of 2^24 at 2^24 tokens: the attention term
  // 12 * L * q * T = 12 * 2^16 * 2^24 * 2^24 = 12 * 2^64 overflows int64, not a double.
  ModelSpec m;
  m.num_layers = std::int64_t{1} << 16U;
  m.hidden = 16;
  m.num_heads = 256;
  m.num_kv_heads = 1;
  m.head_dim = std::int64_t{1} << 16U;
  m.ffn_hidden = 1;
  m.vocab = 1;
  const std::int64_t seq_len = std::int64_t{1} << 24U;
  const double attention = 12.0 * 18446744073709551616.0;  // 12 * 2^64
  const double six_n = 6.0 * static_cast<double>(matmul_parameters(m));
  REQUIRE(matmul_parameters(m) > 0);
  REQUIRE(model_flops_per_token(m, seq_len).value() == Approx(six_n + attention).epsilon(1e-12));
}
