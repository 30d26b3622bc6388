// Multi-token prediction (ModelSpec::mtp_layers; DeepSeek-V3 §2.2): where the module runs in the
// simulated iteration, what it adds to the last stage's memory, and how the loaders read it.
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/memory.hpp"
#include "trainsim/report/simulate.hpp"
#include "trainsim/workload/iteration.hpp"

#include "sim/io/model_loader.hpp"
#include "sim/io/scenario_loader.hpp"

#include "tests/build_iteration.hpp"
#include "tests/small_moe_model.hpp"

using namespace trainsim;

namespace {

// The small MoE model (4 layers, the first dense) on 16 H100s: pp 2 (layers 0-1 on stage 0,
// 2-3 on stage 1), tp `tp`, 2 micro-batches of 1 x 4096 tokens per step, no sharding.
parallel::Scenario scenario(std::int64_t mtp, std::int64_t tp = 1) {
  io::ScenarioDocument doc;
  doc.source = "s.json";
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx",
    "cluster": {"gpus": 16},
    "training": {"seq_len": 4096, "micro_batch": 1},
    "parallel": {"sharding": "none", "pp": 2}})");
  doc.json["model"] = testing::small_moe_model();
  doc.json["model"]["mtp_layers"] = mtp;
  io::set_path(doc, "parallel.tp", tp, "test");
  io::set_path(doc, "parallel.sequence_parallel", tp > 1, "test");
  const std::int64_t dp = 16 / (2 * tp);
  io::set_path(doc, "training.global_batch", 2 * dp, "test");
  parallel::Scenario s = io::scenario_from_document(doc);
  parallel::require_valid(s);
  return s;
}

workload::Iteration build(const parallel::Scenario& s) { return testing::build_iteration(s); }

// Ops named `name` on pipeline stage `stage`.
std::int64_t count(const workload::Iteration& it, const std::string& name, std::int32_t stage) {
  std::int64_t n = 0;
  for (engine::OpId op = 0; op < it.graph.num_ops(); ++op) {
    if (it.graph.op_name(op) == name && it.ops[static_cast<std::size_t>(op)].stage == stage) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("mtp: a module runs on the last stage: its lookup, projection, layer and head",
          "[workload][mtp]") {
  const workload::Iteration base = build(scenario(0));
  const workload::Iteration it = build(scenario(1));
  // 2 micro-batches: the projection forward and backward once each per micro-batch, on the last
  // stage only.
  CHECK(count(it, "mtp_eh_proj", 1) == 2);
  CHECK(count(it, "mtp_eh_proj_bwd", 1) == 2);
  CHECK(count(it, "mtp_eh_proj", 0) == 0);
  CHECK(count(base, "mtp_eh_proj", 1) == 0);
  // The shared LM head runs twice per micro-batch there (the model's and the module's), and
  // the embedding lookup once more (the shifted tokens), where without MTP the last stage has
  // none.
  CHECK(count(base, "lm_head", 1) == 2);
  CHECK(count(it, "lm_head", 1) == 4);
  CHECK(count(it, "lm_head_bwd", 1) == 4);
  CHECK(count(base, "embedding", 1) == 0);
  CHECK(count(it, "embedding", 1) == 2);
  CHECK(count(it, "embedding", 0) == count(base, "embedding", 0));
  // The module's layer is an MoE layer (the model's last kind): stage 1 routes 3 layers per
  // micro-batch instead of 2; stage 0 (one dense, one MoE layer) is unchanged.
  CHECK(count(base, "moe_router", 1) == 4);
  CHECK(count(it, "moe_router", 1) == 6);
  CHECK(count(it, "moe_router", 0) == count(base, "moe_router", 0));
  // More work on the critical stage: a longer step.
  const report::Report with = report::simulate(scenario(1)).report;
  const report::Report without = report::simulate(scenario(0)).report;
  CHECK(with.iteration_time > without.iteration_time);
}

TEST_CASE("mtp: the projection's TP collectives", "[workload][mtp]") {
  // tp 2 with sequence parallelism, 2 micro-batches. Stage 1 holds layers 2 and 3, both MoE,
  // and the LM head, whose input is gathered over TP (forward), gathered again beside its
  // backward (sequence parallelism's second gather) and whose input gradient is scattered
  // (backward) once per micro-batch; with MTP the module's MoE layer too, whose TP collectives
  // are those of either: half of what stage 1's layers have without MTP. Beside them the
  // module adds per micro-batch: its projection, forward the gathers of its 2h-wide input and
  // of its h-wide output, backward the gather of the incoming gradient, the second gather of
  // its input and the ReduceScatter of the input gradient (multi_token_prediction.py,
  // _concat_embeddings); its embedding lookup, a ReduceScatter forward and a gather backward;
  // its pass through the shared head, a gather forward, the second gather and a ReduceScatter
  // backward: 7 gathers and 3 ReduceScatters, times 2 micro-batches.
  const workload::Iteration base = build(scenario(0, 2));
  const workload::Iteration it = build(scenario(1, 2));
  const std::int64_t gathers_per_layer = (count(base, "tp_all_gather", 1) - 2 * 2) / 2;
  const std::int64_t scatters_per_layer = (count(base, "tp_reduce_scatter", 1) - 2) / 2;
  CHECK(count(it, "tp_all_gather", 1) ==
        count(base, "tp_all_gather", 1) + gathers_per_layer + 2 * 7);
  CHECK(count(it, "tp_reduce_scatter", 1) ==
        count(base, "tp_reduce_scatter", 1) + scatters_per_layer + 2 * 3);
}

TEST_CASE(
    "mtp: the last stage holds the module, the embedding copy and a second head's "
    "activations",
    "[report][mtp]") {
  const parallel::Scenario base = scenario(0);
  const parallel::Scenario s = scenario(1);
  // No sharding, bf16: 2 bytes per parameter. The module's MoE layer (attention 4 x 1024^2 =
  // 4,194,304, 16 experts of 3 x 1024 x 1024 and a shared one of 3 x 1024 x 512 = 51,904,512,
  // router 16 x 1024 = 16,384, norms 2,048: 56,117,248), its projection 2 x 1024^2 = 2,097,152
  // and three norms 3,072, and the embedding copy 256 x 1024 = 262,144: 58,479,616 parameters.
  const auto layer =
      model::layer_parameter_counts(s.model, model::LayerKind::Moe, model::Experts::All).total();
  REQUIRE(layer == 56'117'248);
  const double added = 2.0 * 58'479'616.0;
  const report::MemoryBreakdown last = report::memory_per_gpu(s, 1);
  const report::MemoryBreakdown last_base = report::memory_per_gpu(base, 1);
  CHECK(last.parameters.value() - last_base.parameters.value() == Approx(added).epsilon(1e-12));
  CHECK(last.activations > last_base.activations);
  const report::MemoryBreakdown first = report::memory_per_gpu(s, 0);
  const report::MemoryBreakdown first_base = report::memory_per_gpu(base, 0);
  CHECK(first.parameters.value() == first_base.parameters.value());
  CHECK(first.activations.value() == first_base.activations.value());
}

TEST_CASE("mtp: the key is read and bounded", "[model][io][mtp]") {
  nlohmann::json m = testing::small_moe_model();
  m["mtp_layers"] = -1;
  REQUIRE_THROWS_WITH(io::load_model_from_string(m.dump(), "m.json"),
                      Catch::Contains("m.json") && Catch::Contains("mtp_layers"));
  m["mtp_layers"] = "one";
  REQUIRE_THROWS_WITH(io::load_model_from_string(m.dump(), "m.json"),
                      Catch::Contains("mtp_layers"));
  m["mtp_layers"] = 2;
  CHECK(io::load_model_from_string(m.dump(), "m.json").mtp_layers == 2);
}
