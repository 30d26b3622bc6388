// The word embedding's gradient summed between the first and the last pipeline stage when both
// hold a copy (a tied LM head, or a multi-token-prediction module): Megatron's
// finalize_model_grads all-reduces it over the embedding group after the data-parallel
// reduction, and the optimizer step waits for it (workload::build_iteration,
// embedding_grad_sync).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/engine/simulator.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/simulate.hpp"
#include "trainsim/workload/iteration.hpp"

#include "sim/io/scenario_loader.hpp"

#include "tests/build_iteration.hpp"
#include "tests/small_dense_model.hpp"

using namespace trainsim;

namespace {

// The small dense model (8 layers, hidden 512, vocabulary 1024) on h100-dgx under the
// megatron-lm stack (bf16 gradients reduced in fp32): tp 2, pp `pp`, dp 2, 8 micro-batches of
// 1 x 1024 tokens per step.
parallel::Scenario scenario(bool tied, std::int64_t pp, const std::string& sharding,
                            std::int64_t gpus_per_stage = 4) {
  io::ScenarioDocument doc;
  doc.source = "s.json";
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx", "stack": "megatron-lm",
    "training": {"seq_len": 1024, "micro_batch": 1, "precision": "bf16"}})");
  doc.json["model"] = testing::small_dense_model();
  doc.json["model"]["tied_embeddings"] = tied;
  doc.json["cluster"] = {{"gpus", gpus_per_stage * pp}};
  doc.json["training"]["global_batch"] = 8 * (gpus_per_stage / 2);
  doc.json["parallel"] = {{"tp", 2}, {"pp", pp}, {"sharding", sharding}};
  parallel::Scenario s = io::scenario_from_document(doc);
  parallel::require_valid(s);
  return s;
}

workload::Iteration build(const parallel::Scenario& s) { return testing::build_iteration(s); }

// The iteration's embedding-group calls on `stage`: their count (ops) and the bytes of the one
// call (0 when there is none).
struct Calls {
  std::int64_t ops = 0;
  double bytes = 0.0;
  std::int64_t ranks = 0;
  std::int64_t nodes = 0;
};

Calls embedding_calls(const workload::Iteration& it, std::int32_t stage) {
  Calls out;
  for (engine::OpId op = 0; op < it.graph.num_ops(); ++op) {
    const auto& info = it.ops[static_cast<std::size_t>(op)];
    if (it.graph.op_name(op) != "embedding_grad_all_reduce" || info.stage != stage) continue;
    ++out.ops;
    const auto& call = it.collectives[static_cast<std::size_t>(info.collective)];
    CHECK(call.op == "all_reduce");
    CHECK(call.group == "embedding");
    out.bytes = call.bytes.value();
    out.ranks = call.shape.ranks;
    out.nodes = call.shape.nodes;
  }
  return out;
}

}  // namespace

TEST_CASE(
    "embedding sync: a tied head all-reduces the embedding's gradient on the first and last "
    "stage only",
    "[workload][embedding]") {
  const workload::Iteration it = build(scenario(true, 4, "none"));
  // The whole gradient of this TP rank's embedding shard in fp32: 1024 / 2 x 512 x 4 bytes =
  // 1,048,576 bytes, once per step.
  for (const std::int32_t stage : {0, 3}) {
    CAPTURE(stage);
    const Calls c = embedding_calls(it, stage);
    CHECK(c.ops == 1);
    CHECK(c.bytes == 1024.0 / 2 * 512 * 4);
    CHECK(c.ranks == 2);
    // 4 GPUs per stage, 16 in all on two 8-GPU nodes: stage 0's ranks 0-3 and stage 3's 12-15
    // sit on different nodes.
    CHECK(c.nodes == 2);
  }
  CHECK(embedding_calls(it, 1).ops == 0);
  CHECK(embedding_calls(it, 2).ops == 0);

  // An untied head is a weight of its own: nothing to sum. Nor without a pipeline.
  const workload::Iteration untied = build(scenario(false, 4, "none"));
  CHECK(embedding_calls(untied, 0).ops == 0);
  CHECK(embedding_calls(untied, 3).ops == 0);
  const workload::Iteration one_stage = build(scenario(true, 1, "none"));
  CHECK(embedding_calls(one_stage, 0).ops == 0);
}

TEST_CASE(
    "embedding sync: a pipeline inside one node sums over NVLink; the whole gradient in "
    "every sharding",
    "[workload][embedding]") {
  // 2 stages of 2 GPUs (tp 2, dp 1): ranks 0-1 and 2-3, one node.
  const Calls in_node = embedding_calls(build(scenario(true, 2, "none", 2)), 1);
  CHECK(in_node.ops == 1);
  CHECK(in_node.nodes == 1);
  // Megatron all-reduces the weight's whole gradient: zero1 keeps the whole main_grad buffer,
  // and a sharded gradient is gathered whole first (_unshard_if_dtensor), so the call carries
  // 1,048,576 bytes under every sharding, dp 2 or not.
  for (const std::string sharding : {"zero1", "shard_grad_op", "full_shard", "hybrid_shard"}) {
    CAPTURE(sharding);
    CHECK(embedding_calls(build(scenario(true, 2, sharding)), 0).bytes == 1024.0 / 2 * 512 * 4);
  }
}

TEST_CASE("embedding sync: an MTP module's copy of an untied embedding is summed too",
          "[workload][embedding]") {
  // Megatron-Core builds the embedding on the last stage for the module (pre_process or
  // mtp_process) and sums its gradient as it does a tied head's.
  parallel::Scenario s = scenario(false, 4, "none");
  s.model.mtp_layers = 1;
  REQUIRE(parallel::validate(s).empty());
  const workload::Iteration it = build(s);
  CHECK(embedding_calls(it, 0).ops == 1);
  CHECK(embedding_calls(it, 3).ops == 1);
  CHECK(embedding_calls(it, 3).bytes == 1024.0 / 2 * 512 * 4);
}

TEST_CASE("embedding sync: both ends start the sum together, when the later one is ready",
          "[workload][embedding]") {
  // The last stage finishes its backward passes before stage 0 (1F1B drains towards stage 0),
  // so without the dependency across the pipeline its call would start first; an AllReduce
  // needs both ends, and both calls start at stage 0's readiness.
  const workload::Iteration it = build(scenario(true, 4, "zero1"));
  const engine::Timeline t = engine::simulate(it.graph, engine::EngineOptions{});
  std::vector<engine::OpId> calls;
  for (engine::OpId op = 0; op < it.graph.num_ops(); ++op) {
    if (it.graph.op_name(op) == "embedding_grad_all_reduce") calls.push_back(op);
  }
  REQUIRE(calls.size() == 2);
  const engine::OpTiming a = t.ops[static_cast<std::size_t>(calls[0])];
  const engine::OpTiming b = t.ops[static_cast<std::size_t>(calls[1])];
  CHECK(a.start == b.start);
  CHECK(a.end == b.end);
  // The last stage's own backward passes ended before that start (the sum itself, the
  // backward's last gradient reduction, aside).
  SimTime last_stage_backward_end = SimTime::zero();
  for (engine::OpId op = 0; op < it.graph.num_ops(); ++op) {
    const auto& info = it.ops[static_cast<std::size_t>(op)];
    if (info.stage == 3 && info.backward && it.graph.op_name(op) != "embedding_grad_all_reduce") {
      last_stage_backward_end =
          std::max(last_stage_backward_end, t.ops[static_cast<std::size_t>(op)].end);
    }
  }
  CHECK(last_stage_backward_end < a.start);
}

TEST_CASE("embedding sync: the step waits for the sum after the first stage's last backward",
          "[workload][embedding]") {
  // Without sharding each stage ends with its gradient AllReduce over dp, the embedding sum
  // (tied only) and its optimizer step. 1F1B ends with stage 0's last backward, after every
  // other stage's, so the untied step ends with stage 0's: untied = ready_0 + opt_0. Tied, both
  // ends issue the sum once both are ready, at ready_0, and the step ends when the later of the
  // two optimizer steps does: tied = ready_0 + call + max(opt_0, opt_3). (With pp > 1 the last
  // stage holds its own copy of the head either way, so nothing else the timeline sees differs;
  // opt_3 exceeds opt_0 by the final norm's weights.)
  const auto tied_s = scenario(true, 4, "none");
  const auto untied_s = scenario(false, 4, "none");
  const double tied = report::simulate(tied_s).report.iteration_time.value();
  const double untied = report::simulate(untied_s).report.iteration_time.value();
  const workload::Iteration it = build(tied_s);
  double call = 0.0;
  for (const auto& c : it.collectives) {
    if (c.group == "embedding" && c.stage == 0) call = c.time.value();
  }
  double opt[4] = {0.0, 0.0, 0.0, 0.0};
  for (engine::OpId op = 0; op < it.graph.num_ops(); ++op) {
    if (it.graph.op_name(op) == "optimizer_step") {
      opt[it.ops[static_cast<std::size_t>(op)].stage] = it.graph.op_duration(op).value();
    }
  }
  REQUIRE(call > 0.0);
  REQUIRE(opt[0] > 0.0);
  REQUIRE(opt[3] > opt[0]);
  CHECK(tied == Approx(untied - opt[0] + call + std::max(opt[0], opt[3])).epsilon(1e-12));
}

TEST_CASE("vocabulary-parallel embedding and LM head: their TP collectives",
          "[workload][collective]") {
  // The untied small dense model (hidden 512, 1,024 tokens per micro-batch) under megatron-lm,
  // tp 2 without sequence parallelism, pp 2 (4 layers a stage), 8 micro-batches. Each layer
  // all-reduces its activations over TP twice forward (after the attention's and the MLP's
  // row-parallel GEMMs) and its input gradients twice backward (before the column-parallel
  // ones): 4 x 4 = 16 per micro-batch on either stage, of 1,024 x 512 x 2 B = 1,048,576 B.
  // The first stage adds the sum of the embedding's partial lookups (forward), the last the
  // reduction of the LM head's input gradient (backward): 17 x 8 = 136 each. The last stage's
  // vocabulary-parallel cross entropy (megatron-lm's unfused loss) reduces one fp32 value per
  // token three times, 1,024 x 4 = 4,096 B: 3 x 8 = 24.
  const workload::Iteration it = build(scenario(false, 2, "none"));
  const auto count = [&](std::int64_t stage, const std::string& op, double bytes) {
    std::int64_t n = 0;
    for (const auto& c : it.collectives) {
      if (c.stage == stage && c.group == "tp" && c.op == op && c.bytes.value() == bytes) {
        n += c.count;
      }
    }
    return n;
  };
  CHECK(count(0, "all_reduce", 1'048'576.0) == 136);
  CHECK(count(1, "all_reduce", 1'048'576.0) == 136);
  CHECK(count(1, "all_reduce", 4'096.0) == 24);
  CHECK(count(0, "all_reduce", 4'096.0) == 0);
  // Megatron-Core's fused loss (the built-in default) concatenates the last two reductions:
  // 4,096 B and 8,192 B once each per micro-batch.
  parallel::Scenario fused = scenario(false, 2, "none");
  fused.stack.unfused_cross_entropy = false;
  const workload::Iteration f = build(fused);
  std::int64_t small = 0;
  std::int64_t pair = 0;
  for (const auto& c : f.collectives) {
    if (c.group != "tp" || c.op != "all_reduce") continue;
    if (c.bytes.value() == 4'096.0) small += c.count;
    if (c.bytes.value() == 8'192.0) pair += c.count;
  }
  CHECK(small == 8);
  CHECK(pair == 8);
}
