// Properties of the simulated iteration (workload builder + engine + report), on built-in
// profiles and models loaded the way `trainsim run` loads them.
#include "trainsim/workload/iteration.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/engine/simulator.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/simulate.hpp"

#include "sim/io/scenario_loader.hpp"

#include "tests/build_iteration.hpp"
#include "tests/paper_scenario.hpp"

using namespace trainsim;

namespace {

// The paper's FSDP setting (sources.md P2) with overrides written as a JSON object.
parallel::Scenario scenario(std::int64_t gpus, const std::string& extra = "{}") {
  return testing::paper_fsdp(gpus, nlohmann::json::parse(extra));
}

// A small model whose embedding, LM head and optimizer are negligible next to its layers, so a
// pipeline's stages do equal work and textbook bubble formulas apply.
parallel::Scenario pipeline_scenario(const std::string& schedule, std::int64_t v,
                                     std::int64_t microbatches) {
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx",
    "model": {"layers": 16, "hidden": 4096, "heads": 32, "kv_heads": 32, "ffn_hidden": 11008,
              "vocab": 256, "activation": "swiglu", "norm": "rmsnorm", "tied_embeddings": false,
              "position_embedding": "rope"},
    "cluster": {"gpus": 4},
    "training": {"seq_len": 4096, "micro_batch": 1},
    "parallel": {"pp": 4, "sharding": "none"}})");
  io::set_path(doc, "training.global_batch", microbatches, "test");
  io::set_path(doc, "parallel.pipeline_schedule", schedule, "test");
  io::set_path(doc, "parallel.virtual_stages", v, "test");
  return io::scenario_from_document(doc);
}

const workload::BuildOptions kFreeCommunication{.communication_scale = 0.0};

}  // namespace

TEST_CASE("iteration: the time breakdown adds up to the iteration time", "[workload][report]") {
  // compute (one compute stream, so its kernel sum is its busy time) + exposed communication +
  // bubble covers the whole iteration on every stage (engine/activity.hpp invariant).
  for (const auto& s : {scenario(128), scenario(256, R"({"parallel.tp": 2, "parallel.pp": 2})")}) {
    const report::Report r = report::simulate(s).report;
    for (const auto& st : r.stages) {
      REQUIRE((st.compute + st.exposed_communication + st.bubble).value() ==
              Approx(r.iteration_time.value()).epsilon(1e-9));
    }
  }
}

TEST_CASE("iteration: recompute_layers recomputes each chunk's first layers only",
          "[workload][report]") {
  // 16 equal layers on 4 stages (4 per stage), communication free: a stage's compute is its
  // kernels' sum, so recomputing 1 of its 4 layers adds a quarter of what recomputing all adds,
  // and HFU counts a quarter of the recomputed FLOPs (hfu / mfu - 1).
  auto with = [](parallel::Recompute recompute, std::int64_t layers) {
    parallel::Scenario s = pipeline_scenario("1f1b", 1, 8);
    s.parallel.recompute = recompute;
    s.parallel.recompute_layers = layers;
    return report::simulate(s, report::SimulateOptions{.build = kFreeCommunication}).report;
  };
  const report::Report none = with(parallel::Recompute::None, 0);
  const report::Report full = with(parallel::Recompute::Full, 0);
  const report::Report one = with(parallel::Recompute::Full, 1);
  const report::Report all = with(parallel::Recompute::Full, 4);
  for (std::size_t i = 0; i < none.stages.size(); ++i) {
    const double added = (full.stages[i].compute - none.stages[i].compute).value();
    REQUIRE(added > 0.0);
    REQUIRE((one.stages[i].compute - none.stages[i].compute).value() ==
            Approx(added / 4.0).epsilon(1e-9));
    REQUIRE(all.stages[i].compute.value() == Approx(full.stages[i].compute.value()).epsilon(1e-12));
  }
  REQUIRE(one.hfu / one.mfu - 1.0 == Approx((full.hfu / full.mfu - 1.0) / 4.0).epsilon(1e-12));

  // Read from a scenario, checked: only with recompute full, at most a chunk's layers.
  const auto problems = [](const std::string& parallel_json) {
    io::ScenarioDocument doc;
    doc.json = nlohmann::json::parse(R"({"hardware": "h100-dgx", "model": "llama2-7b",
      "cluster": {"gpus": 8}, "training": {"seq_len": 4096, "micro_batch": 1}})");
    doc.json["parallel"] = nlohmann::json::parse(parallel_json);
    std::string out;
    for (const auto& p : parallel::validate(io::scenario_from_document(doc))) {
      out += p.key + ": " + p.message + "\n";
    }
    return out;
  };
  REQUIRE(problems(R"({"pp": 2, "recompute": "full", "recompute_layers": 16})").empty());
  REQUIRE_THAT(problems(R"({"pp": 2, "recompute": "full", "recompute_layers": 17})"),
               Catch::Contains("/parallel/recompute_layers") &&
                   Catch::Contains("exceeds the 16 layers"));
  REQUIRE_THAT(problems(R"({"recompute": "selective", "recompute_layers": 2})"),
               Catch::Contains("/parallel/recompute_layers") && Catch::Contains("full"));
  io::ScenarioDocument zero;
  zero.json = nlohmann::json::parse(R"({"hardware": "h100-dgx", "model": "llama2-7b",
    "cluster": {"gpus": 8}, "training": {"seq_len": 4096, "micro_batch": 1},
    "parallel": {"recompute": "full", "recompute_layers": 0}})");
  REQUIRE_THROWS_WITH(io::scenario_from_document(zero),
                      Catch::Contains("recompute_layers") && Catch::Contains("1"));
}

TEST_CASE("iteration: without communication nothing is exposed", "[workload][report]") {
  // One GPU has no collectives at all; any plan with communication priced at zero exposes none.
  const report::Report one = report::simulate(scenario(1)).report;
  REQUIRE(one.communication.value() == 0.0);
  REQUIRE(one.exposed_communication.value() == 0.0);
  const report::Report free = report::simulate(scenario(128), kFreeCommunication).report;
  REQUIRE(free.exposed_communication.value() == 0.0);
}

TEST_CASE("iteration: per-GPU compute does not depend on the GPU count", "[workload][report]") {
  // Same local batch (micro-batch 2, no accumulation) on 8 and 2048 GPUs: the kernels are the
  // same, so with contention off the compute time is identical. DDP keeps the optimizer step
  // the same size too (sharded optimizers shrink it with the GPU count, which is real).
  auto a = scenario(8, R"({"parallel.sharding": "none"})");
  auto b = scenario(2048, R"({"parallel.sharding": "none"})");
  a.hardware.gpu.comm_compute_contention = 0.0;
  b.hardware.gpu.comm_compute_contention = 0.0;
  a.hardware.gpu.gemm_comm_contention = 0.0;
  b.hardware.gpu.gemm_comm_contention = 0.0;
  REQUIRE(report::simulate(a).report.compute.value() ==
          Approx(report::simulate(b).report.compute.value()).epsilon(1e-12));
}

TEST_CASE("iteration: pipeline bubbles follow the textbook formulas", "[workload][report]") {
  // With free communication and equal stages, GPipe and 1F1B idle (p - 1) of (m + p - 1)
  // forward+backward slots (Narayanan et al. 2021 §2.2): p = 4, m = 8 -> 3 / 11. The stages
  // are only nearly equal (embedding on the first, LM head on the last, an optimizer step on
  // each), hence 5 %.
  for (const char* sched : {"gpipe", "1f1b"}) {
    const report::Report r = report::simulate(pipeline_scenario(sched, 1, 8), kFreeCommunication).report;
    const double share = r.bubble.value() / r.iteration_time.value();
    REQUIRE(share == Approx(3.0 / 11.0).epsilon(0.05));
  }
  // Interleaving v = 2 chunks divides the bubble time by v (same paper, §2.2.2).
  const report::Report plain = report::simulate(pipeline_scenario("1f1b", 1, 8), kFreeCommunication).report;
  const report::Report inter =
      report::simulate(pipeline_scenario("interleaved", 2, 8), kFreeCommunication).report;
  REQUIRE(inter.bubble.value() == Approx(plain.bubble.value() / 2.0).epsilon(0.03));
}

TEST_CASE("iteration: the same scenario gives the same report", "[workload][report]") {
  const auto s = scenario(256, R"({"parallel.tp": 2})");
  const report::Report a = report::simulate(s).report;
  const report::Report b = report::simulate(s).report;
  REQUIRE(a.iteration_time == b.iteration_time);
  REQUIRE(a.exposed_communication == b.exposed_communication);
}

TEST_CASE("iteration: every parallelism builds and runs", "[workload][report]") {
  const char* plans[] = {
      R"({"parallel.sharding": "none"})",
      R"({"parallel.sharding": "zero1"})",
      R"({"parallel.sharding": "full_shard"})",
      R"({"parallel.sharding": "hybrid_shard"})",
      R"({"parallel.tp": 4, "parallel.sequence_parallel": true})",
      R"({"parallel.tp": 2, "parallel.cp": 2})",
      R"({"parallel.pp": 4, "parallel.pipeline_schedule": "gpipe", "training.global_batch": 64})",
      R"({"parallel.pp": 4, "parallel.pipeline_schedule": "interleaved", "parallel.virtual_stages": 2, "training.global_batch": 256})",
      R"({"parallel.recompute": "full"})",
      R"({"parallel.recompute": "selective"})"};
  for (const char* extra : plans) {
    INFO(extra);
    const report::Report r = report::simulate(scenario(64, extra)).report;
    REQUIRE(r.iteration_time.value() > 0.0);
    REQUIRE(r.mfu > 0.0);
    REQUIRE(r.mfu < 1.0);
    REQUIRE(r.hfu >= r.mfu);
  }
}

TEST_CASE("iteration: the compute lower bound is the busiest stage's layer kernels",
          "[workload][report]") {
  // workload::compute_lower_bound, the bound of a bounded search: for each stage, the durations
  // of its compute ops of layers (forward, backward, recomputation; every micro-batch) summed
  // from the built graph; the largest is the bound, to rounding. It never exceeds the simulated
  // iteration, nor the busiest stage's compute time.
  const std::vector<parallel::Scenario> cases = {
      scenario(16),
      scenario(16, R"({"parallel.recompute": "full"})"),
      scenario(16, R"({"parallel.tp": 2, "parallel.sequence_parallel": true,
                       "parallel.recompute": "selective"})"),
      pipeline_scenario("1f1b", 1, 8),
      pipeline_scenario("interleaved", 2, 8),
      [] {
        io::ScenarioDocument doc;
        doc.json = nlohmann::json::parse(R"({"hardware": "h100-dgx", "model": "mixtral-8x7b",
            "stack": "megatron-core", "cluster": {"gpus": 64},
            "training": {"seq_len": 4096, "global_batch": 256, "micro_batch": 1,
                         "precision": "fp8"},
            "parallel": {"tp": 2, "pp": 2, "ep": 8, "sharding": "zero1",
                         "sequence_parallel": true, "recompute": "full"}})");
        return io::scenario_from_document(doc);
      }()};
  for (std::size_t n = 0; n < cases.size(); ++n) {
    INFO("case " << n);
    const parallel::Scenario& s = cases[n];
    const collective::CollectiveModel cm(s.hardware);
    const double bound = workload::compute_lower_bound(s, cm).value();
    const workload::Iteration it = workload::build_iteration(s, cm);
    std::vector<double> per_stage(static_cast<std::size_t>(s.parallel.pp), 0.0);
    for (engine::OpId op = 0; op < it.graph.num_ops(); ++op) {
      const workload::OpInfo& info = it.ops[static_cast<std::size_t>(op)];
      if (it.graph.op_kind(op) != engine::OpKind::Compute || info.layer < 0) continue;
      per_stage[static_cast<std::size_t>(info.stage)] += it.graph.op_duration(op).value();
    }
    const double busiest = *std::max_element(per_stage.begin(), per_stage.end());
    CHECK(bound == Approx(busiest).epsilon(1e-12));
    const report::Simulation sim = report::simulate(s);
    CHECK(bound <= sim.report.iteration_time.value());
    double most_compute = 0.0;
    for (const report::StageSummary& st : sim.report.stages) {
      most_compute = std::max(most_compute, st.compute.value());
    }
    CHECK(bound <= most_compute * (1.0 + 1e-12));
  }
}

TEST_CASE("iteration: context parallelism's ring sends K and V as wide as they are",
          "[workload][report]") {
  // Each of the cp - 1 steps sends the rank's K and V blocks (backward: and their gradients):
  // local tokens x (K width + V width) / tp elements of 2 bytes.
  const auto cp_bytes = [](const parallel::Scenario& s) {
    std::vector<double> bytes;
    for (const auto& c : report::simulate(s).report.collectives) {
      if (c.group == "cp" && c.stage == 0) bytes.push_back(c.bytes.value());
    }
    return bytes;
  };
  // llama2-7b (32 KV heads of 128), micro-batches of 2 x 4096 tokens over cp 2, tp 2:
  // 4096 x (4096 + 4096) x 2 B / 2 = 33,554,432.
  const auto dense = cp_bytes(scenario(64, R"({"parallel.tp": 2, "parallel.cp": 2})"));
  REQUIRE(dense.size() == 2);
  CHECK(dense[0] == 33'554'432.0);
  CHECK(dense[1] == 2.0 * 33'554'432.0);
  // DeepSeek-V3's latent attention: K of 128 + 64 and V of 128 per head (v_head_dim), 128
  // heads over tp 8; seq 8192 over cp 2: 4096 x 16 x (192 + 128) x 2 B = 41,943,040. V was
  // priced at K's width: 50,331,648.
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({"hardware": "h100-dgx", "model": "deepseek-v3",
      "stack": "megatron-core", "cluster": {"gpus": 1024},
      "training": {"seq_len": 8192, "global_batch": 64, "micro_batch": 1},
      "parallel": {"tp": 8, "cp": 2, "pp": 8, "sharding": "zero1",
                   "sequence_parallel": true}})");
  const auto mla = cp_bytes(io::scenario_from_document(doc));
  REQUIRE(mla.size() == 2);
  CHECK(mla[0] == 41'943'040.0);
  CHECK(mla[1] == 2.0 * 41'943'040.0);
}

TEST_CASE("iteration: ring attention's last block waits for the CP exchange",
          "[workload][report]") {
  // Ring attention attends to block i while block i + 1 arrives; the last block received is
  // attended to after the exchange. llama2-7b, tp 2, cp 8, sequence 16,384 (micro-batches of 2:
  // 4,096 local tokens), megatron-core's fused core: each forward attention core is two ops, 7/8
  // of the kernel beside the exchange and 1/8 after it. Here the exchange (7 steps of 32 MiB)
  // outlasts 7/8 of the kernel, so the last block starts as the exchange ends; before, the
  // kernel ran whole beside it and the layer went on when the exchange ended.
  const parallel::Scenario s =
      scenario(64, R"({"stack": "megatron-core", "parallel.tp": 2, "parallel.cp": 8,
              "training.seq_len": 16384, "parallel.sharding": "zero1"})");
  const workload::Iteration it = testing::build_iteration(s);
  const engine::Timeline t = engine::simulate(it.graph, engine::EngineOptions{});
  const auto at = [](engine::OpId op) { return static_cast<std::size_t>(op); };
  int checked = 0;
  for (engine::OpId x = 0; x < it.graph.num_ops(); ++x) {
    const workload::OpInfo& xi = it.ops[at(x)];
    if (it.graph.op_name(x) != "cp_kv_exchange" || xi.recompute) continue;
    std::vector<engine::OpId> cores;
    for (engine::OpId op = 0; op < it.graph.num_ops(); ++op) {
      const workload::OpInfo& oi = it.ops[at(op)];
      if (it.graph.op_name(op) == "attn_core" && oi.stage == xi.stage &&
          oi.microbatch == xi.microbatch && oi.layer == xi.layer && !oi.recompute) {
        cores.push_back(op);
      }
    }
    REQUIRE(cores.size() == 2);
    const double blocks = it.graph.op_duration(cores[0]).value();
    const double last = it.graph.op_duration(cores[1]).value();
    CHECK(blocks == Approx(7.0 * last).epsilon(1e-12));
    CHECK(it.ops[at(cores[0])].flops.value() ==
          Approx(7.0 * it.ops[at(cores[1])].flops.value()).epsilon(1e-12));
    CHECK(t.ops[at(x)].start == t.ops[at(cores[0])].start);
    REQUIRE(t.ops[at(x)].end > t.ops[at(cores[0])].end);
    CHECK(t.ops[at(cores[1])].start == t.ops[at(x)].end);
    if (++checked == 4) break;
  }
  CHECK(checked == 4);
}

TEST_CASE("iteration: unfused attention passes K and V round the CP ring too",
          "[workload][report]") {
  // megatron-lm's unfused attention (a scores GEMM, the softmax, a context GEMM) had no CP
  // exchange at all: the scores were priced against every key of the sequence, but no key or
  // value ever came from the other CP ranks. It now passes the keys beside the scores GEMM and
  // the values beside the context GEMM (KernelSpec::cp_kv_share, Li et al. 2021's Ring-QK and
  // Ring-AV): each exchange half of the fused core's, K of 4096 local tokens x 4096 x 2 B / tp 2
  // = 16,777,216 bytes forward and twice that backward (the gradients too), so the step
  // sends what the fused core's does.
  const auto cp_calls = [](const std::string& stack) {
    const parallel::Scenario s =
        scenario(64, R"({"stack": ")" + stack +
                         R"(", "parallel.tp": 2, "parallel.cp": 2, "parallel.sharding": "zero1"})");
    std::vector<std::pair<double, std::int64_t>> calls;
    for (const auto& c : report::simulate(s).report.collectives) {
      if (c.group == "cp" && c.stage == 0) calls.emplace_back(c.bytes.value(), c.count);
    }
    return calls;
  };
  const auto fused = cp_calls("megatron-core");
  const auto unfused = cp_calls("megatron-lm");
  REQUIRE(fused.size() == 2);
  REQUIRE(unfused.size() == 2);
  CHECK(unfused[0].first == 16'777'216.0);
  CHECK(unfused[1].first == 2.0 * 16'777'216.0);
  // Twice the calls of half the bytes: the same traffic per step.
  CHECK(unfused[0].second == 2 * fused[0].second);
  CHECK(unfused[1].second == 2 * fused[1].second);
  CHECK(unfused[0].first * static_cast<double>(unfused[0].second) ==
        fused[0].first * static_cast<double>(fused[0].second));
}

TEST_CASE("iteration: a recomputed attention core exchanges K/V over the CP ring again",
          "[workload][report]") {
  // Selective recomputation reruns the attention core, and under context parallelism the K/V
  // ring exchange runs inside it (Transformer Engine's context-parallel attention): as many
  // forward exchanges as full recomputation has, twice those without recomputation. It had the
  // latter's, and priced the recomputed attention without its communication.
  const auto forward_exchanges = [](const std::string& recompute) {
    const parallel::Scenario s = scenario(
        64, R"({"parallel.tp": 2, "parallel.cp": 2, "parallel.recompute": ")" + recompute + "\"}");
    for (const auto& c : report::simulate(s).report.collectives) {
      // The forward's exchange: K and V of 4096 local tokens, 33,554,432 bytes (above).
      if (c.group == "cp" && c.stage == 0 && c.bytes.value() == 33'554'432.0) return c.count;
    }
    return std::int64_t{-1};
  };
  const std::int64_t none = forward_exchanges("none");
  REQUIRE(none > 0);
  CHECK(forward_exchanges("full") == 2 * none);
  CHECK(forward_exchanges("selective") == 2 * none);
}

TEST_CASE("iteration: a window on some layers runs those layers windowed and the others in full",
          "[workload][report][model]") {
  // mistral-7b's shape at seq 8192 (window 4096): every layer windowed, the even 16 only, none.
  // Without communication nothing stretches a kernel, so each figure that sums over layers (the
  // compute kernel time, the model FLOPs, the recomputed FLOPs) of the half-windowed model is
  // the mean of the other two's.
  const auto scenario_with = [](const std::string& window) {
    io::ScenarioDocument doc;
    doc.json = nlohmann::json::parse(R"({
      "hardware": "h100-dgx",
      "model": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
                "vocab": 32000, "activation": "swiglu", "norm": "rmsnorm",
                "tied_embeddings": false, "position_embedding": "rope")" +
                                     window + R"(},
      "cluster": {"gpus": 8},
      "training": {"seq_len": 8192, "micro_batch": 1, "global_batch": 16},
      "parallel": {"sharding": "none", "recompute": "selective"}})");
    return io::scenario_from_document(doc);
  };
  std::string even = R"(, "attention_window": 4096, "attention_window_layers": [0)";
  for (int l = 2; l < 32; l += 2) even += ", " + std::to_string(l);
  const auto all = scenario_with(R"(, "attention_window": 4096)");
  const auto half = scenario_with(even + "]");
  const auto none = scenario_with("");
  const report::SimulateOptions free{.build = kFreeCommunication};
  const report::Simulation a = report::simulate(all, free);
  const report::Simulation h = report::simulate(half, free);
  const report::Simulation n = report::simulate(none, free);

  // Each layer's forward attention core lasts as the windowed or the full model's does.
  const auto attn_core = [](const report::Simulation& sim, std::int32_t layer) {
    const engine::Graph& g = sim.iteration.graph;
    for (engine::OpId op = 0; op < g.num_ops(); ++op) {
      const workload::OpInfo& info = sim.iteration.ops[static_cast<std::size_t>(g.op_tag(op))];
      if (g.op_name(op) == "attn_core" && info.layer == layer && info.microbatch == 0 &&
          !info.backward && !info.recompute) {
        return g.op_duration(op).value();
      }
    }
    return -1.0;
  };
  REQUIRE(attn_core(a, 0) > 0.0);
  REQUIRE(attn_core(a, 0) < attn_core(n, 0));  // r = 0.75 of the work
  REQUIRE(attn_core(h, 0) == attn_core(a, 0));
  REQUIRE(attn_core(h, 1) == attn_core(n, 1));
  REQUIRE(attn_core(h, 30) == attn_core(a, 30));
  REQUIRE(attn_core(h, 31) == attn_core(n, 31));

  const report::Report& ra = a.report;
  const report::Report& rh = h.report;
  const report::Report& rn = n.report;
  REQUIRE(rh.compute.value() ==
          Approx((ra.compute.value() + rn.compute.value()) / 2.0).epsilon(1e-12));
  REQUIRE(rh.model_flops_per_token.value() ==
          Approx((ra.model_flops_per_token.value() + rn.model_flops_per_token.value()) / 2.0)
              .epsilon(1e-12));
  // Recomputed FLOPs per token: (hfu / mfu - 1) x model FLOPs (report.hpp: HFU counts them).
  const auto recomputed = [](const report::Report& r) {
    return (r.hfu / r.mfu - 1.0) * r.model_flops_per_token.value();
  };
  REQUIRE(recomputed(ra) < recomputed(rn));  // selective recomputation redoes the attention core
  REQUIRE(recomputed(rh) == Approx((recomputed(ra) + recomputed(rn)) / 2.0).epsilon(1e-9));
}

TEST_CASE(
    "sequence parallelism's second gather runs beside its GEMM's backward, before the "
    "ReduceScatter",
    "[workload][collective]") {
  // Megatron-LM's column-parallel linear under sequence parallelism gathers its saved input
  // again while the input gradient's GEMM runs, and reduce-scatters that gradient after it
  // (LinearWithGradAccumulationAndAsyncCommunication.backward). In the simulated timeline of
  // the paper's setting on 16 H100 with tp 2 and SP: on the TP stream, each backward
  // ReduceScatter of a layer follows that layer's second AllGather, which overlaps the
  // GEMM's backward (mlp_up_gate_bwd, then qkv_proj_bwd) and ends before the ReduceScatter
  // starts: two per layer and micro-batch.
  const parallel::Scenario s =
      scenario(16, R"({"parallel.tp": 2, "parallel.sequence_parallel": true})");
  const report::Simulation sim = report::simulate(
      s, report::SimulateOptions{.build = {}, .mode = report::SimulationMode::Full});
  const engine::Graph& g = sim.iteration.graph;
  const auto info = [&](engine::OpId op) -> const workload::OpInfo& {
    return sim.iteration.ops[static_cast<std::size_t>(g.op_tag(op))];
  };
  const auto& t = sim.timeline.ops;
  // The backward GEMMs by (micro-batch, layer, name).
  std::map<std::tuple<std::int64_t, std::int32_t, std::string>, engine::OpId> gemm;
  for (engine::OpId op = 0; op < g.num_ops(); ++op) {
    const std::string& name = g.op_name(op);
    if (name == "mlp_up_gate_bwd" || name == "qkv_proj_bwd") {
      gemm[{info(op).microbatch, info(op).layer, name}] = op;
    }
  }
  std::int64_t pairs = 0;
  for (engine::StreamId st = 0; st < g.num_streams(); ++st) {
    const auto ops = g.stream_ops(st);
    for (std::size_t k = 1; k < ops.size(); ++k) {
      const engine::OpId gather = ops[k - 1];
      const engine::OpId scatter = ops[k];
      if (g.op_name(scatter) != "tp_reduce_scatter" || !info(scatter).backward ||
          info(scatter).layer < 0) {
        continue;
      }
      REQUIRE(g.op_name(gather) == "tp_all_gather");
      const workload::OpInfo& gi = info(gather);
      REQUIRE(gi.backward);
      REQUIRE(gi.layer == info(scatter).layer);
      REQUIRE(gi.microbatch == info(scatter).microbatch);
      // The GEMM the pair belongs to: of the layer's two, the one that ended last before the
      // ReduceScatter (the MLP's first in backward, then the attention's).
      engine::OpId c = -1;
      for (const char* name : {"mlp_up_gate_bwd", "qkv_proj_bwd"}) {
        const engine::OpId op = gemm.at({gi.microbatch, gi.layer, name});
        const auto& to = t[static_cast<std::size_t>(op)];
        if (to.end <= t[static_cast<std::size_t>(scatter)].start &&
            (c < 0 || t[static_cast<std::size_t>(c)].end < to.end)) {
          c = op;
        }
      }
      REQUIRE(c >= 0);
      const auto& tg = t[static_cast<std::size_t>(gather)];
      const auto& tc = t[static_cast<std::size_t>(c)];
      CHECK(tg.start < tc.end);  // beside the GEMM's backward
      CHECK(tc.start < tg.end);
      CHECK(tg.end <= t[static_cast<std::size_t>(scatter)].start);  // before the ReduceScatter
      ++pairs;
    }
  }
  // llama2-7b's 32 layers, 2 GEMMs each, in every micro-batch of the step.
  REQUIRE(s.num_microbatches() >= 1);
  CHECK(pairs == 2 * 32 * s.num_microbatches());
}
