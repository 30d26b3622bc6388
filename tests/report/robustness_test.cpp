// Random plans through the same path as `trainsim run`: every one either is rejected with a
// ConfigError / PlanError or yields a report whose numbers are all finite. Seeded, so the same
// plans run every time (STYLE B.9).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "sim/io/report_writer.hpp"
#include "sim/io/scenario_loader.hpp"
#include "trainsim/error.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/simulate.hpp"

using namespace trainsim;

namespace {

// True when every number anywhere in `j` is finite.
bool all_finite(const nlohmann::json& j) {
  if (j.is_number()) return std::isfinite(j.get<double>());
  if (j.is_object() || j.is_array()) {
    for (const auto& v : j) {
      if (!all_finite(v)) return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("robustness: random plans are rejected cleanly or give finite reports",
          "[report][slow]") {
  std::mt19937_64 rng(20261129);
  const std::vector<std::string> hardware = {"a100-dgx", "h100-dgx", "v100-dgx", "b200-dgx"};
  const std::vector<std::string> models = {"llama3.2-1b", "llama2-7b", "llama3-8b"};
  const std::vector<std::string> shardings = {"none", "zero1", "shard_grad_op", "full_shard",
                                              "hybrid_shard"};
  const std::vector<std::string> schedules = {"gpipe", "1f1b", "interleaved"};
  const std::vector<std::string> recomputes = {"none", "selective", "full"};
  auto pick = [&rng](const auto& v) { return v[rng() % v.size()]; };
  auto pow2 = [&rng](int max_log2) { return std::int64_t{1} << (rng() % (max_log2 + 1)); };
  int simulated = 0;
  int rejected = 0;
  for (int i = 0; i < 150; ++i) {
    io::ScenarioDocument doc;
    doc.json = {{"hardware", pick(hardware)},
                {"model", pick(models)},
                {"cluster", {{"gpus", pow2(9) * (rng() % 3 == 0 ? 3 : 1)}}},
                {"training",
                 {{"seq_len", pow2(13) * (rng() % 4 == 0 ? 3 : 1)},
                  {"micro_batch", pow2(3)},
                  {"global_batch", pow2(10)},
                  {"precision", rng() % 5 == 0 ? "fp16" : "bf16"}}},
                {"parallel",
                 {{"tp", pow2(4)},
                  {"pp", pow2(3)},
                  {"cp", pow2(2)},
                  {"sequence_parallel", rng() % 2 == 0},
                  {"pipeline_schedule", pick(schedules)},
                  {"virtual_stages", pow2(1)},
                  {"sharding", pick(shardings)},
                  {"recompute", pick(recomputes)}}}};
    INFO(doc.json.dump());
    try {
      const parallel::Scenario s = io::scenario_from_document(doc);
      if (!parallel::validate(s).empty()) {
        REQUIRE_THROWS_AS(report::simulate(s), PlanError);
        ++rejected;
        continue;
      }
      const report::Report r = report::simulate(s).report;
      REQUIRE(all_finite(io::report_to_json(s, r)));
      REQUIRE(r.iteration_time.value() > 0.0);
      ++simulated;
    } catch (const ConfigError&) {
      ++rejected;
    }
  }
  // The generator must exercise both outcomes, or the test says nothing.
  REQUIRE(simulated > 10);
  REQUIRE(rejected > 10);
}
