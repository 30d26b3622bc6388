// Mixture-of-experts layers with expert parallelism: the plan key, its validation, the MoE
// kernels and all-to-alls in the simulated iteration, load imbalance and the all-to-all overlap
// option, on a small MoE model written inline and on the built-in mixtral-8x7b.
#include <string>
#include <utility>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"
#include "trainsim/model/kernels.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/simulate.hpp"
#include "trainsim/workload/iteration.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/model_loader.hpp"
#include "sim/io/scenario_loader.hpp"
#include "sim/io/stack_loader.hpp"

#include "tests/build_iteration.hpp"
#include "tests/small_moe_model.hpp"

using namespace trainsim;

namespace {

// 4 layers (the first dense), hidden 1024, 8 heads of 128, 16 routed experts of width 1024, top
// 2, one shared expert of width 512; 16 H100s, micro-batch 4 of 4096 tokens (T = 16,384 tokens
// per micro-batch and rank), no sharding, one micro-batch per step.
parallel::Scenario moe_scenario(std::int64_t ep, const nlohmann::json& overrides = {}) {
  io::ScenarioDocument doc;
  doc.source = "s.json";
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx",
    "cluster": {"gpus": 16},
    "training": {"seq_len": 4096, "micro_batch": 4},
    "parallel": {"sharding": "none"}})");
  doc.json["model"] = testing::small_moe_model();
  io::set_path(doc, "parallel.ep", ep, "test");
  if (overrides.is_object()) {
    for (const auto& [key, value] : overrides.items()) io::set_path(doc, key, value, "test");
  }
  return io::scenario_from_document(doc);
}

workload::Iteration build(const parallel::Scenario& s, double communication_scale = 1.0) {
  return testing::build_iteration(
      s, workload::BuildOptions{.communication_scale = communication_scale});
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Summed duration and executed FLOPs of the compute ops whose name passes `keep`.
struct Phase {
  double seconds = 0.0;
  double flops = 0.0;
};
template <typename Keep>
Phase phase(const workload::Iteration& it, Keep keep) {
  Phase p;
  for (engine::OpId op = 0; op < it.graph.num_ops(); ++op) {
    if (it.graph.op_kind(op) != engine::OpKind::Compute || !keep(it.graph.op_name(op))) continue;
    p.seconds += it.graph.op_duration(op).value();
    p.flops += it.ops[static_cast<std::size_t>(op)].flops.value();
  }
  return p;
}
Phase expert_forward(const workload::Iteration& it) {
  return phase(
      it, [](const std::string& n) { return starts_with(n, "expert_") && !ends_with(n, "_bwd"); });
}
Phase expert_backward(const workload::Iteration& it) {
  return phase(
      it, [](const std::string& n) { return starts_with(n, "expert_") && ends_with(n, "_bwd"); });
}
Phase other_compute(const workload::Iteration& it) {
  return phase(
      it, [](const std::string& n) { return !starts_with(n, "expert_") && n != "optimizer_step"; });
}

const workload::CollectiveCall* find_call(const workload::Iteration& it, const std::string& op,
                                          const std::string& group) {
  for (const auto& c : it.collectives) {
    if (c.op == op && c.group == group) return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("moe: ep is read, defaults to 1, and only MoE scenarios report it", "[workload][io]") {
  REQUIRE(moe_scenario(1).parallel.ep == 1);
  REQUIRE(moe_scenario(4).parallel.ep == 4);
  REQUIRE(io::scenario_to_json(moe_scenario(4))["parallel"]["ep"] == 4);
  // A dense scenario's resolved form keeps its keys (its report stays byte-identical).
  io::ScenarioDocument dense;
  dense.json = nlohmann::json::parse(R"({"hardware": "h100-dgx", "model": "llama2-7b",
      "cluster": {"gpus": 8}, "training": {"seq_len": 4096}})");
  const auto s = io::scenario_from_document(dense);
  REQUIRE(s.parallel.ep == 1);
  REQUIRE_FALSE(io::scenario_to_json(s)["parallel"].contains("ep"));
  // A dense scenario with ep 2 is an invalid plan (ep needs experts); its resolved form keeps
  // the value that makes it so (a sweep's JSON line dropped it where the CSV row had it).
  io::set_path(dense, "parallel.ep", 2, "test");
  CHECK(io::scenario_to_json(io::scenario_from_document(dense))["parallel"]["ep"] == 2);
  // Zero is out of range, named by its key.
  REQUIRE_THROWS_AS(moe_scenario(0), ConfigError);
  REQUIRE_THROWS_WITH(moe_scenario(0), Catch::Contains("/parallel/ep"));
}

TEST_CASE("moe: tp must divide the shared experts' width, and not an unused ffn_hidden",
          "[workload][parallel]") {
  // The shared experts run as one MLP of num_shared_experts x shared_expert_ffn_hidden split over
  // tp. A width of 100 at tp 8 loaded and was priced as 104 (13 columns per rank).
  nlohmann::json model = testing::small_moe_model();  // 1 shared expert, 1 dense layer
  model["shared_expert_ffn_hidden"] = 100;
  const auto shared = parallel::validate(moe_scenario(
      1, {{"model", model}, {"parallel.tp", 8}, {"parallel.sequence_parallel", true}}));
  REQUIRE(shared.size() == 1);
  CHECK(shared[0].key == "/parallel/tp");
  CHECK(shared[0].message ==
        "tp 8 does not divide the shared experts' width 100 (num_shared_experts x "
        "shared_expert_ffn_hidden, split over tp); expected a divisor of 100");
  // Without dense layers ffn_hidden is unused (docs/models.md): one tp does not divide is no
  // problem. With a dense layer it is the MLP's width again.
  model["shared_expert_ffn_hidden"] = 512;
  model["ffn_hidden"] = 1001;
  model.erase("dense_layers");
  CHECK(parallel::validate(
            moe_scenario(
                1, {{"model", model}, {"parallel.tp", 8}, {"parallel.sequence_parallel", true}}))
            .empty());
  model["dense_layers"] = 1;
  const auto dense = parallel::validate(moe_scenario(
      1, {{"model", model}, {"parallel.tp", 8}, {"parallel.sequence_parallel", true}}));
  REQUIRE(dense.size() == 1);
  CHECK(dense[0].message == "tp 8 does not divide ffn_hidden 1001; expected a divisor of 1001");
}

TEST_CASE("moe: shared experts count per rank as one MLP of their summed width",
          "[workload][model]") {
  // Two shared experts of width 100 at tp 8 run as one MLP of 200 (25 columns a rank); their
  // weights per rank were counted per expert, 2 x 13 columns. Without MLP biases they count as
  // one shared expert of width 200 does.
  nlohmann::json two = testing::small_moe_model();
  two["shared_experts"] = 2;
  two["shared_expert_ffn_hidden"] = 100;
  nlohmann::json one = two;
  one["shared_experts"] = 1;
  one["shared_expert_ffn_hidden"] = 200;
  const auto per_rank = [](const nlohmann::json& model) {
    const parallel::Scenario s = moe_scenario(1, {{"model", model}});
    return model::moe_layer_parameters_per_rank(s.model, 8, 1).dense;
  };
  CHECK(per_rank(two) == per_rank(one));
}

TEST_CASE("moe: ep must divide dp and the experts, and needs an MoE model",
          "[workload][parallel]") {
  // 16 GPUs, tp = pp = cp = 1: dp = 16, 16 experts.
  REQUIRE(parallel::validate(moe_scenario(8)).empty());
  REQUIRE(parallel::validate(moe_scenario(16)).empty());
  // 24 GPUs: dp 24, which ep 16 (a divisor of the 16 experts) does not divide.
  const auto not_dp = parallel::validate(moe_scenario(16, {{"cluster.gpus", 24}}));
  REQUIRE(not_dp.size() == 1);
  REQUIRE(not_dp[0].key == "/parallel/ep");
  REQUIRE(not_dp[0].message ==
          "ep 16 does not divide dp 24 (expert-parallel groups are carved out of the data-parallel "
          "ranks); expected a divisor of 24");
  // ep 3 divides neither: the experts are named, which no cluster size mends (dp was named).
  const auto neither = parallel::validate(moe_scenario(3));
  REQUIRE(neither.size() == 1);
  REQUIRE(neither[0].message == "ep 3 does not divide the 16 experts; expected a divisor of 16");
  // 32 GPUs: dp 32, but 16 experts do not split over 32 ranks.
  const auto not_experts = parallel::validate(moe_scenario(32, {{"cluster.gpus", 32}}));
  REQUIRE(not_experts.size() == 1);
  REQUIRE(not_experts[0].message ==
          "ep 32 does not divide the 16 experts; expected a divisor of 16");
  // EP out of CP ranks is not modelled.
  const auto with_cp = parallel::validate(moe_scenario(2, {{"parallel.cp", 2}}));
  REQUIRE(with_cp.size() == 1);
  REQUIRE(with_cp[0].key == "/parallel/ep");
  // A dense model has no experts to split.
  io::ScenarioDocument dense;
  dense.json = nlohmann::json::parse(R"({"hardware": "h100-dgx", "model": "llama2-7b",
      "cluster": {"gpus": 8}, "training": {"seq_len": 4096}, "parallel": {"ep": 2}})");
  const auto d = parallel::validate(io::scenario_from_document(dense));
  REQUIRE(d.size() == 1);
  REQUIRE(d[0].key == "/parallel/ep");
  REQUIRE_THROWS_AS(parallel::require_valid(io::scenario_from_document(dense)), PlanError);
}

TEST_CASE("moe: per-rank parameters split the routed experts over ep", "[workload][model]") {
  const model::ModelSpec m = moe_scenario(1).model;
  // dense: attention Q, K, V, O 4 x 1024 x 1024 = 4,194,304; two RMSNorms 2,048; the shared
  // expert 3 x 1024 x 512 = 1,572,864; the router 1024 x 16 = 16,384: 5,785,600.
  // expert: 16 / ep experts of 3 x 1024 x 1024 = 3,145,728.
  for (const std::int64_t ep : {1, 2, 4, 16}) {
    const auto p = model::moe_layer_parameters_per_rank(m, 1, ep);
    REQUIRE(p.dense == 5'785'600);
    REQUIRE(p.expert == (16 / ep) * 3'145'728);
  }
  // With ep 1 and tp 1 a rank holds the whole layer, as counted by counts.hpp.
  REQUIRE(model::moe_layer_parameters_per_rank(m, 1, 1).total() ==
          model::layer_parameter_counts(m, model::LayerKind::Moe, model::Experts::All).total());
  // tp 2 halves the attention, the shared expert and each expert; norms and router stay:
  // 2,097,152 + 2,048 + 786,432 + 16,384 = 2,902,016, experts 8 x 1,572,864.
  const auto tp2 = model::moe_layer_parameters_per_rank(m, 2, 2);
  REQUIRE(tp2.dense == 2'902'016);
  REQUIRE(tp2.expert == 8 * 1'572'864);
}

TEST_CASE("moe: the kernels of an MoE layer and their FLOPs", "[workload][model]") {
  const model::ModelSpec m = moe_scenario(1).model;
  const model::LayerShape shape{.micro_batch = 4, .seq_len = 4096, .ep = 4};
  const auto ks = model::moe_layer_kernels(m, shape);
  auto find = [&ks](const std::string& name) {
    for (const auto& k : ks) {
      if (k.name == name) return k;
    }
    FAIL("no kernel " << name);
    return model::KernelSpec{};
  };
  // T = 16,384 tokens, k = 2: R = 32,768 routed rows on the rank; 16 / 4 = 4 local experts of
  // R x ep / experts = 8,192 rows each.
  const auto up = find("expert_up_gate");
  REQUIRE(up.gemm.batch == 4);
  REQUIRE(up.gemm.m == 8192);
  REQUIRE(up.gemm.n == 2048);
  REQUIRE(up.gemm.k == 1024);
  // 2 R n k = 2 x 32,768 x 2,048 x 1,024 forward, twice that backward.
  REQUIRE(up.forward_flops.value() == 2.0 * 32768.0 * 2048.0 * 1024.0);
  REQUIRE(up.backward_flops.value() == 2.0 * up.forward_flops.value());
  REQUIRE(find("expert_down").forward_flops.value() == 2.0 * 32768.0 * 1024.0 * 1024.0);
  // The router: T x 16 x 1024; the shared expert: T x 1024 x 512 x 3 matrices.
  REQUIRE(find("moe_router").forward_flops.value() == 2.0 * 16384.0 * 16.0 * 1024.0);
  REQUIRE(find("shared_expert_up_gate").forward_flops.value() == 2.0 * 16384.0 * 1024.0 * 1024.0);
  REQUIRE(find("shared_expert_down").forward_flops.value() == 2.0 * 16384.0 * 1024.0 * 512.0);
  // No dense MLP in an MoE layer; the attention half is the dense layer's.
  for (const auto& k : ks) REQUIRE_FALSE(starts_with(k.name, "mlp_up"));
  REQUIRE(find("qkv_proj").forward_flops == model::layer_kernels(m, shape)[1].forward_flops);
  // Executed GEMM FLOPs of the layer's MLP block equal the model-FLOPs count of a token's
  // active MLP weights (router, top-2 experts, shared expert): 2 x active weights x T.
  const auto active =
      model::layer_parameter_counts(m, model::LayerKind::Moe, model::Experts::Active);
  double mlp_gemm_flops = 0.0;
  for (const auto& k : ks) {
    if (k.kind == model::KernelKind::Gemm && k.name != "qkv_proj" && k.name != "attn_out_proj") {
      mlp_gemm_flops += k.forward_flops.value();
    }
  }
  REQUIRE(mlp_gemm_flops ==
          Approx(2.0 * static_cast<double>(active.mlp_weights + active.router_weights) * 16384.0)
              .epsilon(1e-12));
}

TEST_CASE("moe: with free communication more EP leaves per-GPU expert compute unchanged",
          "[workload]") {
  // Every rank runs the grouped GEMMs of its R = T x k = 32,768 routed rows whatever ep is:
  // 16 / ep experts of 2,048 x ep rows each. The executed FLOPs are equal; the forward and
  // input-gradient GEMMs have m = 2,048 ep rows per expert, a multiple of every tile side
  // (64, 128, 256), so 16 / ep x (2,048 ep / tm) x (n / tn) = 32,768 n / (tm tn) tiles for
  // every ep: the same waves, the same time (compute/kernel_cost.hpp), the activation is
  // memory-bound on the same bytes. Only the weight-gradient GEMMs change shape (16 / ep
  // experts of K = 2,048 ep), so their time follows the wave model, not a constant.
  const workload::Iteration base = build(moe_scenario(1), 0.0);
  const Phase fwd1 = expert_forward(base);
  const Phase bwd1 = expert_backward(base);
  REQUIRE(fwd1.seconds > 0.0);
  for (const std::int64_t ep : {2, 4, 8, 16}) {
    const workload::Iteration it = build(moe_scenario(ep), 0.0);
    REQUIRE(expert_forward(it).seconds == Approx(fwd1.seconds).epsilon(1e-12));
    REQUIRE(expert_forward(it).flops == Approx(fwd1.flops).epsilon(1e-12));
    REQUIRE(expert_backward(it).flops == Approx(bwd1.flops).epsilon(1e-12));
    // Attention, router, shared expert, embedding and head are untouched by ep.
    REQUIRE(other_compute(it).seconds == Approx(other_compute(base).seconds).epsilon(1e-12));
  }
}

TEST_CASE("moe: load imbalance stretches the expert phase by its factor", "[workload]") {
  // moe_layer_kernels: the busiest EP rank receives c = 1.3 times the mean rows, so its grouped
  // GEMMs and activation take 1.3 times the balanced time; nothing else changes. Expert phase
  // time (forward and backward) with c = 1.3 over c = 1.0: exactly 1.3.
  parallel::Scenario balanced = moe_scenario(4);
  parallel::Scenario skewed = balanced;
  skewed.model.expert_load_imbalance = 1.3;
  const auto a = build(balanced, 0.0);
  const auto b = build(skewed, 0.0);
  REQUIRE(expert_forward(b).seconds == Approx(1.3 * expert_forward(a).seconds).epsilon(1e-12));
  REQUIRE(expert_backward(b).seconds == Approx(1.3 * expert_backward(a).seconds).epsilon(1e-12));
  REQUIRE(other_compute(b).seconds == Approx(other_compute(a).seconds).epsilon(1e-12));
  // The kernels' FLOPs stay the balanced ones (model FLOPs and MFU do not change either).
  REQUIRE(expert_forward(b).flops == expert_forward(a).flops);
}

TEST_CASE("moe: a rank's rows cannot exceed every token's copies: the imbalance within ep",
          "[workload]") {
  // The busiest EP rank holds num_experts / ep experts of the ep ranks' tokens x top-k copies:
  // at most ep x R rows, so its factor is min(c, ep) (model::expert_rank_imbalance). c = 3:
  // ep 1 (one rank, every expert) 1, ep 2 2, ep 4 3; the expert phase stretches by as much.
  for (const auto& [ep, factor] : {std::pair{1, 1.0}, std::pair{2, 2.0}, std::pair{4, 3.0}}) {
    INFO("ep " << ep);
    parallel::Scenario balanced = moe_scenario(ep);
    parallel::Scenario skewed = balanced;
    skewed.model.expert_load_imbalance = 3.0;
    REQUIRE(model::expert_rank_imbalance(skewed.model, ep) == factor);
    const auto a = build(balanced, 0.0);
    const auto b = build(skewed, 0.0);
    REQUIRE(expert_forward(b).seconds == Approx(factor * expert_forward(a).seconds).epsilon(1e-12));
    REQUIRE(expert_backward(b).seconds ==
            Approx(factor * expert_backward(a).seconds).epsilon(1e-12));
  }
}

TEST_CASE("moe: all-to-all dispatch and combine per call and per iteration",
          "[workload][collective]") {
  // Per call, nccl-tests' alltoall size (each rank's whole send buffer): T x k x hidden x e =
  // 16,384 x 2 x 1,024 x 2 B = 67,108,864 B, of which (ep - 1) / ep leaves the rank. Per MoE
  // layer and micro-batch: dispatch and combine forward, their gradients backward: 4 calls;
  // 3 MoE layers (the first is dense) x 1 micro-batch = 12 calls.
  for (const std::int64_t ep : {2, 8}) {
    const workload::Iteration it = build(moe_scenario(ep));
    const auto* a2a = find_call(it, "all_to_all", "ep");
    REQUIRE(a2a != nullptr);
    REQUIRE(a2a->bytes.value() == 67'108'864.0);
    REQUIRE(a2a->count == 12);
    REQUIRE(a2a->shape.ranks == ep);
    // It costs what the collective model says of that group and size.
    const auto cost = collective::CollectiveModel(moe_scenario(ep).hardware)
                          .cost(collective::Op::AllToAll, a2a->shape, a2a->bytes);
    REQUIRE(a2a->time.value() == Approx(cost.time.value()).epsilon(1e-12));
  }
  // ep 2 stays inside a node (ranks 0 and 1); ep 16 spans both nodes of the cluster.
  REQUIRE(find_call(build(moe_scenario(2)), "all_to_all", "ep")->shape.nodes == 1);
  REQUIRE(find_call(build(moe_scenario(16)), "all_to_all", "ep")->shape.nodes == 2);
  // ep 1: every expert is local, no all-to-all.
  REQUIRE(find_call(build(moe_scenario(1)), "all_to_all", "ep") == nullptr);
}

TEST_CASE("moe: expert gradients are reduced over the expert-data-parallel group", "[workload]") {
  // DDP, dp 16, ep 4: the routed experts of the 3 MoE layers (4 experts of 3,145,728 weights,
  // 2 B each: 25,165,824 B per layer) are all-reduced over the dp / ep = 4 ranks holding the
  // same experts, the rest over all 16.
  const workload::Iteration it = build(moe_scenario(4));
  const auto* experts = find_call(it, "all_reduce", "expert_dp");
  REQUIRE(experts != nullptr);
  REQUIRE(experts->shape.ranks == 4);
  REQUIRE(find_call(it, "all_reduce", "dp")->shape.ranks == 16);
  double expert_bytes = 0.0;
  for (const auto& c : it.collectives) {
    if (c.group == "expert_dp") expert_bytes += c.bytes.value() * static_cast<double>(c.count);
  }
  // 25 MiB buckets: one bucket of 24 MiB per layer.
  REQUIRE(expert_bytes == Approx(3.0 * 25'165'824.0).epsilon(1e-12));
}

TEST_CASE("moe: all-to-all overlap never slows the iteration and hides communication",
          "[workload][stack]") {
  // The option runs the all-to-all beside compute instead of stalling it.
  parallel::Scenario blocking = moe_scenario(16);
  parallel::Scenario overlapped = blocking;
  overlapped.stack.moe_a2a_overlap = true;
  const auto a = report::simulate(blocking).report;
  const auto b = report::simulate(overlapped).report;
  REQUIRE(b.iteration_time.value() <= a.iteration_time.value());
  REQUIRE(b.exposed_communication.value() < a.exposed_communication.value());
  // The stack key: "moe": {"a2a_overlap": true}; default false; unknown keys are refused.
  nlohmann::json j = nlohmann::json::parse(*io::builtin_file("stacks", "megatron-core"));
  REQUIRE_FALSE(io::stack_from_json(j, "s.json", "").moe_a2a_overlap);
  j["moe"] = {{"a2a_overlap", true}};
  REQUIRE(io::stack_from_json(j, "s.json", "").moe_a2a_overlap);
  j["moe"] = {{"a2a_overlap", 1}};
  REQUIRE_THROWS_WITH(io::stack_from_json(j, "s.json", ""), Catch::Contains("/moe/a2a_overlap"));
  j["moe"] = {{"a2a_overlap", true}, {"overlap", true}};
  REQUIRE_THROWS_WITH(io::stack_from_json(j, "s.json", ""), Catch::Contains("/moe"));
}

TEST_CASE("moe: expert GEMMs launched one by one take at least their launches' host time",
          "[workload][stack]") {
  // StackSpec::moe_expert_launch: forward one GEMM per local expert (and one input cast under
  // fp8), backward two (and one gradient cast). At 1 ms per launch every expert GEMM of the
  // small model is launch-bound: the largest, expert_up_gate at ep 1, is 2 x 32,768 rows x
  // 2,048 x 1,024 = 137 GFLOP, about 0.18 ms at an H100's sustained ~750 TFLOP/s (0.37 ms
  // backward), so each op lasts launches x 1 ms. The 3 MoE layers run once each per step (one
  // micro-batch).
  auto op_seconds = [](const workload::Iteration& it, const std::string& name) {
    return phase(it, [&](const std::string& n) { return n == name; }).seconds;
  };
  auto launched = [](std::int64_t ep, const char* precision) {
    parallel::Scenario s = moe_scenario(ep, {{"training.precision", precision}});
    s.stack.moe_expert_launch = Seconds(1e-3);
    return s;
  };
  // ep 1: 16 local experts; ep 16: one.
  const workload::Iteration bf16_16 = build(launched(1, "bf16"));
  REQUIRE(op_seconds(bf16_16, "expert_up_gate") == Approx(3 * 16 * 1e-3).epsilon(1e-12));
  REQUIRE(op_seconds(bf16_16, "expert_down_bwd") == Approx(3 * 32 * 1e-3).epsilon(1e-12));
  const workload::Iteration bf16_1 = build(launched(16, "bf16"));
  REQUIRE(op_seconds(bf16_1, "expert_up_gate") == Approx(3 * 1e-3).epsilon(1e-12));
  REQUIRE(op_seconds(bf16_1, "expert_down_bwd") == Approx(3 * 2e-3).epsilon(1e-12));
  const workload::Iteration fp8_16 = build(launched(1, "fp8"));
  REQUIRE(op_seconds(fp8_16, "expert_up_gate") == Approx(3 * 32 * 1e-3).epsilon(1e-12));
  REQUIRE(op_seconds(fp8_16, "expert_down_bwd") == Approx(3 * 48 * 1e-3).epsilon(1e-12));
  // Host time is not slowed by communication beside it (engine::ContentionClass::Host): a
  // launch-bound pass would otherwise take 1 + comm_compute_contention (h100-dgx: 0.1) times
  // its launches wherever a collective overlapped it. Passes priced by the GPU keep their class.
  for (engine::OpId op = 0; op < bf16_16.graph.num_ops(); ++op) {
    const std::string& name = bf16_16.graph.op_name(op);
    if (name.rfind("expert_up_gate", 0) == 0 || name.rfind("expert_down", 0) == 0) {
      INFO(name);
      REQUIRE(bf16_16.graph.op_contention_class(op) == engine::ContentionClass::Host);
    }
  }
  {
    const workload::Iteration gpu_bound = build(moe_scenario(1));
    bool found = false;
    for (engine::OpId op = 0; op < gpu_bound.graph.num_ops(); ++op) {
      if (gpu_bound.graph.op_name(op) == "expert_up_gate") {
        found = true;
        REQUIRE(gpu_bound.graph.op_contention_class(op) == engine::ContentionClass::Gemm);
      }
    }
    REQUIRE(found);
  }
  // The activation between them is one kernel over all experts' rows: no launch floor.
  const parallel::Scenario plain = moe_scenario(1);
  const workload::Iteration neutral = build(plain);
  REQUIRE(op_seconds(bf16_16, "expert_act") == op_seconds(neutral, "expert_act"));
  // A launch far shorter than the GPU time changes nothing.
  parallel::Scenario tiny = plain;
  tiny.stack.moe_expert_launch = Seconds(1e-9);
  REQUIRE(op_seconds(build(tiny), "expert_up_gate") == op_seconds(neutral, "expert_up_gate"));
  // The stack key: "moe": {"expert_gemm_launch": "22.8 us"}; a time with a unit, at most 1 ms.
  nlohmann::json j = nlohmann::json::parse(*io::builtin_file("stacks", "megatron-core"));
  j["moe"] = {{"expert_gemm_launch", "20 us"}};
  REQUIRE(io::stack_from_json(j, "s.json", "").moe_expert_launch.value() == Approx(20e-6));
  j["moe"] = nlohmann::json::object();
  REQUIRE(io::stack_from_json(j, "s.json", "").moe_expert_launch.value() == 0.0);
  j["moe"] = {{"expert_gemm_launch", "2 ms"}};
  REQUIRE_THROWS_WITH(
      io::stack_from_json(j, "s.json", ""),
      Catch::Contains("/moe/expert_gemm_launch") && Catch::Contains("at most 1 ms"));
  j["moe"] = {{"expert_gemm_launch", 20}};
  REQUIRE_THROWS_WITH(io::stack_from_json(j, "s.json", ""),
                      Catch::Contains("/moe/expert_gemm_launch"));
}

TEST_CASE("moe: mixtral-8x7b on 64 H100s with ep 8 simulates", "[workload][report]") {
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({"hardware": "h100-dgx", "model": "mixtral-8x7b",
      "stack": "megatron-core", "cluster": {"gpus": 64},
      "training": {"seq_len": 4096, "global_batch": 256, "micro_batch": 1},
      "parallel": {"tp": 2, "sequence_parallel": true, "ep": 8, "sharding": "zero1"}})");
  const parallel::Scenario s = io::scenario_from_document(doc);
  REQUIRE(parallel::validate(s).empty());
  const report::Report r = report::simulate(s).report;
  REQUIRE(r.iteration_time.value() > 0.0);
  REQUIRE(r.mfu > 0.0);
  REQUIRE(r.mfu < 1.0);
  bool all_to_all = false;
  for (const auto& c : r.collectives) all_to_all = all_to_all || c.op == "all_to_all";
  REQUIRE(all_to_all);
}

TEST_CASE("moe: latent attention is priced as its projections and attention", "[workload][model]") {
  const model::ModelSpec m =
      io::scenario_from_document([] {
        io::ScenarioDocument doc;
        doc.json = nlohmann::json::parse(R"({"hardware": "h800-dgx", "model": "deepseek-v3",
        "cluster": {"gpus": 8}, "training": {"seq_len": 4096}})");
        return doc;
      }())
          .model;
  const model::LayerShape shape{.micro_batch = 1, .seq_len = 4096, .causal = false};
  const auto ks = model::layer_kernels(m, shape);
  // The projections' forward FLOPs are 2 x T x the attention weights counts.hpp gives
  // (q_a, q_b, kv_a, kv_b, o), T = 4096.
  double projections = 0.0;
  double attention = 0.0;
  for (const auto& k : ks) {
    if (k.kind == model::KernelKind::Gemm && !starts_with(k.name, "mlp_")) {
      projections += k.forward_flops.value();
    }
    if (k.name == "attn_core") attention = k.forward_flops.value();
  }
  REQUIRE(
      projections ==
      Approx(2.0 * 4096.0 * static_cast<double>(model::layer_parameter_counts(m).attention_weights))
          .epsilon(1e-12));
  // Without the causal discount the attention core is 2 T S H (d_qk + d_v) = 2 x 4096 x 4096 x
  // 128 x (192 + 128): a third of the model-FLOPs attention term 6 H (d_qk + d_v) S per token.
  REQUIRE(attention == 2.0 * 4096.0 * 4096.0 * 128.0 * 320.0);
  // At tp 1 a rank holds a whole dense layer.
  REQUIRE(model::dense_layer_parameters_per_rank(m, 1) == model::layer_parameters(m));
}

TEST_CASE("moe: deepseek-v3 on 1,024 H800s with pp 16 and ep 64 simulates", "[workload][report]") {
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({"hardware": "h800-dgx", "model": "deepseek-v3",
      "stack": "megatron-core", "cluster": {"gpus": 1024},
      "training": {"seq_len": 4096, "global_batch": 1024, "micro_batch": 1},
      "parallel": {"pp": 16, "ep": 64, "sharding": "zero1"}})");
  const parallel::Scenario s = io::scenario_from_document(doc);
  REQUIRE(parallel::validate(s).empty());
  const report::Report r = report::simulate(s).report;
  REQUIRE(r.iteration_time.value() > 0.0);
  REQUIRE(r.mfu > 0.0);
  REQUIRE(r.mfu < 1.0);
}

TEST_CASE("moe: tensor-parallel collectives of an MoE layer with sequence parallelism",
          "[workload][collective]") {
  const auto calls = [](const workload::Iteration& it, const std::string& op, double bytes) {
    std::int64_t n = 0;
    for (const auto& c : it.collectives) {
      if (c.op == op && c.group == "tp" && c.bytes.value() == bytes) n += c.count;
    }
    return n;
  };
  // Per layer and micro-batch, T x hidden x 2 B = 16,384 x 1,024 x 2 = 33,554,432 B AllGathers:
  // forward before the column-parallel entries, backward before the row-parallel exits and
  // again beside the backward of the column-parallel linears (QKV, MLP up, shared experts' up),
  // whose inputs are kept sequence-split (Korthikanti et al. 2022 §4.2.2); ReduceScatters the
  // mirror image of the first two (bf16: the input gather moves the same bytes). Beside the
  // layers, once per micro-batch, the vocabulary-parallel embedding's ReduceScatter (forward)
  // and AllGather (backward), and the LM head's AllGather of its input (forward) and
  // ReduceScatter of its input gradient (backward): 2 of each.
  const double block = 33'554'432.0;
  // The routed rows, T x top-k x hidden x 2 B = 16,384 x 2 x 1,024 x 2 = 67,108,864 B.
  const double routed = 67'108'864.0;
  SECTION("ep 1: every TP rank routes the gathered micro-batch") {
    // Dense layer: qkv_proj, mlp_up_gate in, attn_out_proj, mlp_down out: 2 + 2 of each. MoE
    // layers: qkv_proj, moe_router in; attn_out_proj, moe_unpermute, shared_expert_down out:
    // 2 + 3. 1 x 4 + 3 x 5 + 2 = 21 ReduceScatters; the AllGathers add the backward's second
    // gather of the dense layer's qkv_proj and mlp_up_gate inputs, of each MoE layer's
    // qkv_proj input (the router's is not) and of the LM head's: 21 + 2 + 3 + 1 = 27. Nothing
    // routed moves.
    const workload::Iteration it =
        build(moe_scenario(1, {{"parallel.tp", 2}, {"parallel.sequence_parallel", true}}));
    REQUIRE(calls(it, "all_gather", block) == 27);
    REQUIRE(calls(it, "reduce_scatter", block) == 21);
    REQUIRE(calls(it, "all_gather", routed) == 0);
    REQUIRE(calls(it, "reduce_scatter", routed) == 0);
  }
  SECTION("ep 4: each TP rank routes its own tokens (Megatron-Core's all-to-all dispatcher)") {
    // tp 2 with SP (dp 8, ep 4). The MoE block's TP region of T x hidden is its shared expert's
    // MLP alone (shared_expert_up_gate in, shared_expert_down out): MoE layers 2 + 2, so
    // 1 x 4 + 3 x 4 + 2 = 18 ReduceScatters, and the AllGathers the backward's second gather
    // of qkv_proj and mlp_up_gate (dense), qkv_proj and shared_expert_up_gate (each MoE layer)
    // and the LM head's input: 18 + 2 + 3 x 2 + 1 = 27. The routed rows: gathered over TP
    // after the dispatch
    // (forward) and after the combine's gradient (backward), scattered before the combine and
    // before the dispatch's gradient: 2 of each per MoE layer, 3 x 2 = 6.
    const workload::Iteration it =
        build(moe_scenario(4, {{"parallel.tp", 2}, {"parallel.sequence_parallel", true}}));
    REQUIRE(calls(it, "all_gather", block) == 27);
    REQUIRE(calls(it, "reduce_scatter", block) == 18);
    REQUIRE(calls(it, "all_gather", routed) == 6);
    REQUIRE(calls(it, "reduce_scatter", routed) == 6);
    // The all-to-all sends the rank's T / tp tokens x top-k rows: 67,108,864 / 2 B, 12 calls.
    const auto* a2a = find_call(it, "all_to_all", "ep");
    REQUIRE(a2a != nullptr);
    REQUIRE(a2a->bytes.value() == routed / 2.0);
    REQUIRE(a2a->count == 12);
    // The gather waits for the all-to-all, and the first expert GEMM for the gather.
    engine::OpId dispatch = -1;
    engine::OpId gather = -1;
    engine::OpId up = -1;
    for (engine::OpId op = 0; op < it.graph.num_ops(); ++op) {
      const std::string& name = it.graph.op_name(op);
      if (name == "moe_dispatch" && dispatch < 0) dispatch = op;
      if (name == "moe_tp_all_gather" && gather < 0) gather = op;
      if (name == "expert_up_gate" && up < 0) up = op;
    }
    REQUIRE(dispatch >= 0);
    REQUIRE(gather >= 0);
    REQUIRE(up >= 0);
    const auto waits_for = [&it](engine::OpId op, engine::OpId on) {
      for (const auto& d : it.graph.dependencies()) {
        if (d.before == on && d.after == op) return true;
      }
      return false;
    };
    REQUIRE(waits_for(gather, dispatch));
    REQUIRE(waits_for(up, gather));
  }
}

TEST_CASE("moe: under the all-to-all dispatcher with SP a TP rank routes tokens / tp",
          "[workload][model]") {
  // The router (T x hidden x experts FLOPs), top-k (T x experts scores), permute and unpermute
  // (T x k rows) run on the rank's sequence-parallel share, T / 2 at tp 2 (ep 4); at ep 1 on
  // all T.
  auto shape = model::LayerShape{
      .micro_batch = 4, .seq_len = 4096, .tp = 2, .sequence_parallel = true, .ep = 4};
  const model::ModelSpec moe = io::model_from_json(testing::small_moe_model(), "m.json", "");
  const auto at = [&moe](const model::LayerShape& s, const std::string& name) {
    for (const auto& k : model::moe_layer_kernels(moe, s)) {
      // The FLOPs, or for the permute (a copy) its bytes: the router's bytes hold its weights.
      if (k.name == name) {
        return k.forward_flops.value() > 0.0 ? k.forward_flops.value() : k.forward_bytes.value();
      }
    }
    return -1.0;
  };
  auto everyone = shape;
  everyone.ep = 1;
  REQUIRE(model::moe_routes_tp_shares(shape));
  REQUIRE_FALSE(model::moe_routes_tp_shares(everyone));
  for (const char* name : {"moe_router", "moe_topk", "moe_permute", "moe_unpermute"}) {
    INFO(name);
    REQUIRE(at(shape, name) > 0.0);
    REQUIRE(at(shape, name) == Approx(at(everyone, name) / 2.0).epsilon(1e-12));
  }
  // The experts take the gathered rows, T x k, either way.
  REQUIRE(at(shape, "expert_act") == Approx(at(everyone, "expert_act")).epsilon(1e-12));
}

TEST_CASE("moe: HFU counts the recomputed routed experts, top-k of them per token",
          "[workload][report]") {
  // mixtral-8x7b (32 layers, hidden 4096, GQA 32/8 heads of 128, 8 experts of 14,336 with
  // SwiGLU, top 2, vocab 32,000) at sequence 4096 with full recomputation: the recompute is one
  // more forward of the layers, 2 (N - E) + 4 L h s FLOPs per token with N the active matmul
  // parameters (12.75e9: per layer 41.9e6 attention + 2 x 176.2e6 experts + 32,768 router,
  // plus the 131.1e6 LM head) and E the LM head, against the model's 6 N + 12 L h s:
  // (2 x 12.618e9 + 2.147e9) / (6 x 12.749e9 + 6.442e9) = 27.38e9 / 82.94e9 = 0.3301.
  // Counting one expert (a dense MLP of ffn_hidden) would give 0.194.
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({"hardware": "h100-dgx", "model": "mixtral-8x7b",
      "stack": "megatron-core", "cluster": {"gpus": 8},
      "training": {"seq_len": 4096, "global_batch": 8, "micro_batch": 1},
      "parallel": {"ep": 8, "sharding": "zero1", "recompute": "full"}})");
  const report::Report r = report::simulate(io::scenario_from_document(doc)).report;
  REQUIRE(r.hfu / r.mfu - 1.0 == Approx(0.3301).epsilon(2e-3));
}
