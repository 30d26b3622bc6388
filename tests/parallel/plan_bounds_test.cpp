// Scenario counts whose products would overflow int64, and plans too large to simulate: refused
// by the loader (ConfigError naming the key) or reported by validate (a plan problem).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"
#include "trainsim/parallel/validate.hpp"

#include "sim/io/scenario_loader.hpp"

using namespace trainsim;
using namespace trainsim::parallel;

namespace {

// h100-dgx (8 GPUs per node) and llama2-7b, with the keys of `json` over a minimal scenario.
Scenario load(const std::string& json) {
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({"hardware": "h100-dgx", "model": "llama2-7b",
      "cluster": {"gpus": 8}, "training": {"seq_len": 4096}})");
  doc.json.merge_patch(nlohmann::json::parse(json));
  doc.source = "s.json";
  return io::scenario_from_document(doc);
}

bool has_problem(const std::vector<Problem>& ps, const std::string& key, const std::string& text) {
  for (const auto& p : ps) {
    if (p.key == key && p.message.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("scenario_loader: counts above their bounds are out of range", "[parallel][io]") {
  // INT64_MAX GPUs: far above kMaxGpus = 2^24 = 16777216.
  REQUIRE_THROWS_WITH(load(R"({"cluster": {"gpus": 9223372036854775807}})"),
                      "s.json: /cluster/gpus: 9223372036854775807: out of range; expected at most "
                      "16777216");
  // 2^24 nodes of 8 GPUs = 2^27 GPUs: each count in range, the product not.
  REQUIRE_THROWS_WITH(load(R"({"cluster": {"gpus": null, "nodes": 16777216}})"),
                      "s.json: /cluster/nodes: 16777216 nodes of 8 GPUs: out of range; expected "
                      "at most 16777216 GPUs in all");
  REQUIRE_THROWS_WITH(
      load(R"({"training": {"seq_len": 1e12}})"),
      Catch::StartsWith("s.json: /training/seq_len: 1000000000000.0: out of range"));
  REQUIRE_THROWS_WITH(load(R"({"training": {"global_batch": 4611686018427387904}})"),
                      "s.json: /training/global_batch: 4611686018427387904: out of range; "
                      "expected at most 1073741824");
  REQUIRE_THROWS_WITH(load(R"({"parallel": {"tp": 1e15}})"),
                      Catch::StartsWith("s.json: /parallel/tp: 1e+15: out of range"));
  // virtual_stages and shard_group are at most the largest cluster, 2^24.
  REQUIRE_THROWS_WITH(load(R"({"parallel": {"virtual_stages": 4294967297}})"),
                      "s.json: /parallel/virtual_stages: 4294967297: out of range; expected at "
                      "most 16777216");
}

TEST_CASE("validate: micro_batch x seq_len above 2^32 tokens is a plan problem", "[parallel][io]") {
  // Each factor is read within its own bound (micro_batch at most 2^32, seq_len 2^24); their
  // product is the plan's, so that a sweep pairing them gets an invalid row.
  REQUIRE_THROWS_WITH(load(R"({"training": {"micro_batch": 4294967297}})"),
                      "s.json: /training/micro_batch: 4294967297: out of range; expected at most "
                      "4294967296");
  // 2^9 sequences of 2^24 tokens = 2^33 tokens > kMaxMicroBatchTokens = 2^32 = 4294967296.
  const Scenario over = load(R"({"training": {"seq_len": 16777216, "micro_batch": 512}})");
  const auto problems = parallel::validate(over);
  REQUIRE_FALSE(problems.empty());
  CHECK(problems.front().key == "/training/micro_batch");
  CHECK(problems.front().message ==
        "micro_batch 512 sequences of 16777216 tokens = 8589934592 tokens; expected micro_batch "
        "x seq_len at most 4294967296 tokens");
  CHECK(problems.front().also == std::vector<std::string>{"/training/seq_len"});
  // 2^8 sequences of 2^24 tokens is exactly the bound.
  const Scenario at = load(R"({"training": {"seq_len": 16777216, "micro_batch": 256}})");
  for (const auto& p : parallel::validate(at)) CHECK(p.key != "/training/micro_batch");
}

TEST_CASE("scenario_loader: tp, pp and cp are at most 2^20 each", "[parallel][io]") {
  // kMaxDegree = 2^20 = 1048576, so tp x pp x cp <= 2^60 fits an int64 wherever it is formed
  // (sweeps and searches multiply them without the loader).
  REQUIRE_THROWS_WITH(load(R"({"parallel": {"tp": 16777216}})"),
                      "s.json: /parallel/tp: 16777216: out of range; expected at most 1048576");
  // 2^20 each: 2^60 does not divide 8 GPUs; the loader leaves dp = 0 and validate explains.
  const Scenario s = load(R"({"parallel": {"tp": 1048576, "pp": 1048576, "cp": 1048576}})");
  REQUIRE(s.parallel.dp == 0);
  const auto problems = validate(s);
  REQUIRE(problems.size() == 1);
  REQUIRE(has_problem(problems, "/parallel",
                      "tp x pp x cp = 1048576 x 1048576 x 1048576 exceeds the 8 gpus"));
  REQUIRE_THROWS_AS(require_valid(s), PlanError);
}

TEST_CASE("validate: tp x pp x cp overflowing int64 is a plan problem", "[parallel]") {
  // A Scenario built in code is not bounded by the loader: 2^24 each, 2^72, does not fit an
  // int64 and must not wrap to 0 (a division by zero) or to a divisor of the GPUs.
  Scenario s = load("{}");
  s.parallel.tp = s.parallel.pp = s.parallel.cp = std::int64_t{1} << 24U;
  s.parallel.dp = 0;
  REQUIRE_FALSE(model_parallel_size(s.parallel).has_value());
  REQUIRE(has_problem(validate(s), "/parallel",
                      "tp x pp x cp = 16777216 x 16777216 x 16777216 exceeds the 8 gpus"));
}

TEST_CASE("validate: more than 2^16 micro-batches per step is a plan problem", "[parallel]") {
  // 8 GPUs, dp = 8, micro_batch 1: global_batch 2^30 makes 2^30 / 8 = 134217728 micro-batches,
  // above kMaxMicrobatches = 65536; simulating each would take hours.
  const Scenario s = load(R"({"training": {"global_batch": 1073741824}})");
  REQUIRE(has_problem(validate(s), "/training/global_batch",
                      "makes 134217728 micro-batches of dp x micro_batch = 8 sequences; expected "
                      "at most 65536"));
  // 65536 x 8 = 524288 sequences is the bound.
  REQUIRE(validate(load(R"({"training": {"global_batch": 524288}})")).empty());
}

TEST_CASE("validate: more than 2^21 layer passes per step is a plan problem", "[parallel]") {
  // llama2-70b has 80 layers. 65536 micro-batches (global_batch 8 x 65536 = 524288 on dp 8)
  // make 65536 x 80 = 5242880 layer passes, above kMaxLayerPasses = 2^21 = 2097152.
  const Scenario s = load(R"({"model": "llama2-70b", "training": {"global_batch": 524288}})");
  REQUIRE(has_problem(validate(s), "/training/global_batch",
                      "makes 65536 micro-batches of 80 layers = 5242880 layer passes to "
                      "simulate; expected at most 2097152"));
  // 26214 micro-batches x 80 = 2097120 <= 2097152: within the bound.
  REQUIRE(
      validate(load(R"({"model": "llama2-70b", "training": {"global_batch": 209712}})")).empty());
}
