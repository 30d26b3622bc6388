// Memory of mixture-of-experts layers under expert parallelism: the routed experts' weights,
// gradients and optimizer state divided by ep (and sharded over the expert-data-parallel
// ranks), and the activations of the dispatched tokens.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/model/kernels.hpp"
#include "trainsim/report/memory.hpp"

#include "sim/io/scenario_loader.hpp"

#include "tests/small_moe_model.hpp"

using namespace trainsim;

namespace {

// 4 layers (the first dense), hidden 1024, 8 heads of 128, 16 routed experts of width 1024, top
// 2, one shared expert of width 512, on 16 H100s (dp 16), bf16, AdamW, one sequence of 4096.
parallel::Scenario moe_scenario(std::int64_t ep, const char* sharding) {
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx",
    "cluster": {"gpus": 16},
    "training": {"seq_len": 4096, "micro_batch": 1}})");
  doc.json["model"] = testing::small_moe_model();
  io::set_path(doc, "parallel.ep", ep, "test");
  io::set_path(doc, "parallel.sharding", sharding, "test");
  return io::scenario_from_document(doc);
}

}  // namespace

TEST_CASE("moe memory: expert weights and gradients are divided by ep", "[report][memory]") {
  // Without sharding a rank holds its num_experts / ep experts of the 3 MoE layers: going from
  // ep 1 to ep 2 drops 8 experts x 3 x 1024 x 1024 = 25,165,824 weights per layer, 3 layers,
  // 2 B each: 150,994,944 B of parameters and as many of gradients; 12 B of AdamW state each:
  // 905,969,664 B.
  const auto one = report::memory_per_gpu(moe_scenario(1, "none"), 0);
  const auto two = report::memory_per_gpu(moe_scenario(2, "none"), 0);
  REQUIRE(one.parameters.value() - two.parameters.value() == 150'994'944.0);
  REQUIRE(one.gradients.value() - two.gradients.value() == 150'994'944.0);
  REQUIRE(one.optimizer.value() - two.optimizer.value() == 905'969'664.0);
  // ep 16: one expert per rank; the expert part is 1/16 of ep 1's, 3 x 3,145,728 weights.
  const auto sixteen = report::memory_per_gpu(moe_scenario(16, "none"), 0);
  REQUIRE(one.parameters.value() - sixteen.parameters.value() == 2.0 * 3.0 * 15.0 * 3'145'728.0);
}

TEST_CASE("moe memory: sharded state divides the experts over the dp / ep ranks holding them",
          "[report][memory]") {
  // zero1, dp 16, ep 4: the optimizer state of everything but the routed experts is sharded
  // over 16 ranks, that of the rank's 4 experts per MoE layer over the dp / ep = 4 ranks holding
  // the same experts: 12 x (P_dense / 16 + P_expert / 4) B.
  const parallel::Scenario s = moe_scenario(4, "zero1");
  REQUIRE(report::sharding_degree(s) == 16);
  REQUIRE(report::expert_sharding_degree(s) == 4);
  const auto moe = model::moe_layer_parameters_per_rank(s.model, 1, 4);
  // P_dense: the dense layer (4,194,304 attention + 2,048 norms + 3 x 1024 x 4096 MLP =
  // 16,779,264), 3 MoE layers' non-expert part, the embedding and the LM head (256 x 1024
  // each) and the final norm (1,024).
  const double dense =
      16'779'264.0 + 3.0 * static_cast<double>(moe.dense) + 2.0 * 262'144.0 + 1'024.0;
  const double experts = 3.0 * static_cast<double>(moe.expert);
  REQUIRE(moe.expert == 4 * 3'145'728);
  const auto m = report::memory_per_gpu(s, 0);
  REQUIRE(m.optimizer.value() == Approx(12.0 * (dense / 16.0 + experts / 4.0)).epsilon(1e-12));
  // Parameters and gradients stay whole under zero1.
  REQUIRE(m.parameters.value() == Approx(2.0 * (dense + experts)).epsilon(1e-12));
}

TEST_CASE("moe memory: full_shard gathers a stage's two largest layers, not two of its largest",
          "[report][memory]") {
  // pp 2 on 16 GPUs (dp 8), ep 1: stage 0 holds the dense layer (16,779,264 weights) and the
  // first MoE layer, whose 16 experts are sharded over the 8 ranks and gathered with it
  // (moe.total(), larger). full_shard gathers those two at most; it counted the MoE layer twice
  // and needed more than shard_grad_op, which keeps the whole stage gathered.
  const auto stage0 = [](const char* sharding) {
    io::ScenarioDocument doc;
    doc.json = nlohmann::json::parse(R"({
      "hardware": "h100-dgx", "cluster": {"gpus": 16},
      "training": {"seq_len": 4096, "micro_batch": 1},
      "parallel": {"pp": 2, "pipeline_layout": [2, 2]}})");
    doc.json["model"] = testing::small_moe_model();
    io::set_path(doc, "parallel.sharding", sharding, "test");
    return report::memory_per_gpu(io::scenario_from_document(doc), 0);
  };
  const auto full = stage0("full_shard");
  const auto sgo = stage0("shard_grad_op");
  REQUIRE(full.total <= sgo.total);
  // Both gather the whole stage here (the root unit, the embedding, and its two layers) and count
  // the same unsharded gradients.
  CHECK(sgo.buffers.value() == Approx(full.buffers.value()).epsilon(1e-12));
}

TEST_CASE("moe memory: experts held whole at ep = dp are not gathered again", "[report][memory]") {
  // ep 16 on dp 16: each rank holds its one expert per MoE layer whole (expert-data-parallel
  // degree 1), so shard_grad_op gathers only the rest: 2 B x P_dense, where P_dense is as in the
  // test above with the ep 16 non-expert part, and the unsharded gradients of 2 units, the
  // stage's two largest gathered layers: its one dense layer (16,779,264 weights) and an MoE
  // layer's non-expert part (smaller). Counting the experts' 3 x 3,145,728 weights in the
  // gathered copy too made shard_grad_op need more than zero1; counting the dense layer twice
  // counted a second dense layer the model does not have.
  const parallel::Scenario s = moe_scenario(16, "shard_grad_op");
  REQUIRE(report::expert_sharding_degree(s) == 1);
  const auto moe = model::moe_layer_parameters_per_rank(s.model, 1, 16);
  REQUIRE(moe.expert == 3'145'728);
  REQUIRE(moe.dense < 16'779'264);
  const double dense =
      16'779'264.0 + 3.0 * static_cast<double>(moe.dense) + 2.0 * 262'144.0 + 1'024.0;
  const auto m = report::memory_per_gpu(s, 0);
  // The unsharded gradients at their largest: the LM head's (262,144 + the final norm's 1,024 =
  // 263,168) while those 2 layers' run backward, 2 B each.
  const double two_layers = 16'779'264.0 + static_cast<double>(moe.dense);
  REQUIRE(m.buffers.value() == Approx(2.0 * dense + 2.0 * (263'168.0 + two_layers)).epsilon(1e-12));
  // full_shard: the root unit (embedding, head and final norm, 2 x 262,144 + 1,024 = 525,312)
  // held and the same 2 layers gathered, and the same gradients, 2 B each; never more than
  // shard_grad_op, which keeps the whole stage gathered.
  const auto full = report::memory_per_gpu(moe_scenario(16, "full_shard"), 0);
  REQUIRE(full.buffers.value() ==
          Approx(2.0 * (525'312.0 + two_layers) + 2.0 * (263'168.0 + two_layers)).epsilon(1e-12));
  REQUIRE(full.total <= m.total);

  // On 2 GPUs at ep 2 an MoE layer holds 8 experts (25,165,824 weights) and outweighs the
  // dense layer, but its experts are still not gathered: the units stay the dense layer's (and
  // the root's, as above).
  const auto two_gpus = [](const char* sharding) {
    io::ScenarioDocument doc;
    doc.json = nlohmann::json::parse(R"({
      "hardware": "h100-dgx", "cluster": {"gpus": 2},
      "training": {"seq_len": 4096, "micro_batch": 1}, "parallel": {"ep": 2}})");
    doc.json["model"] = testing::small_moe_model();
    io::set_path(doc, "parallel.sharding", sharding, "test");
    return io::scenario_from_document(doc);
  };
  const auto moe2 = model::moe_layer_parameters_per_rank(s.model, 1, 2);
  REQUIRE(moe2.total() > 16'779'264);
  REQUIRE(report::expert_sharding_degree(two_gpus("full_shard")) == 1);
  REQUIRE(report::memory_per_gpu(two_gpus("full_shard"), 0).buffers.value() ==
          Approx(full.buffers.value()).epsilon(1e-12));
  REQUIRE(report::memory_per_gpu(two_gpus("shard_grad_op"), 0).buffers.value() ==
          Approx(m.buffers.value()).epsilon(1e-12));

  // Under FP8 with weight copies cached across the step (2 B per weight on Hopper: the FP8
  // weight and its transpose), full_shard keeps the copies of 2 gathered units, the stage's two
  // largest (its dense layer and an MoE layer's non-expert part), and of every expert the rank
  // holds whole (they are never gathered or freed): 2 B x (16,779,264 + the non-expert part +
  // 3 x 25,165,824) more than in bf16, where element bytes are the same 2.
  const auto fp8_two_gpus = [&](const char* precision) {
    io::ScenarioDocument doc;
    doc.json = nlohmann::json::parse(R"({
      "hardware": "h100-dgx", "cluster": {"gpus": 2},
      "stack": {"extends": "pytorch-2.3-fsdp", "id": "fsdp-fp8-cache",
                "fp8": {"weight_cache_bytes_per_param": 2}},
      "training": {"seq_len": 4096, "micro_batch": 1},
      "parallel": {"ep": 2, "sharding": "full_shard"}})");
    doc.json["model"] = testing::small_moe_model();
    io::set_path(doc, "training.precision", precision, "test");
    return report::memory_per_gpu(io::scenario_from_document(doc), 0).buffers.value();
  };
  REQUIRE(moe2.expert == 8 * 3'145'728);
  REQUIRE(fp8_two_gpus("fp8") - fp8_two_gpus("bf16") ==
          Approx(2.0 * (16'779'264.0 + static_cast<double>(moe2.dense) + 3.0 * 25'165'824.0))
              .epsilon(1e-12));

  // On a released model, sharding more then never needs more memory: qwen3-30b-a3b on 16 H100
  // under megatron-core, ep 16 (shard_grad_op needed 68.15 GiB against zero1's 67.65).
  const auto peak = [](const char* sharding) {
    io::ScenarioDocument doc;
    doc.json = nlohmann::json::parse(R"({
      "hardware": "h100-dgx", "model": "qwen3-30b-a3b", "stack": "megatron-core",
      "cluster": {"gpus": 16}, "training": {"seq_len": 4096, "micro_batch": 1},
      "parallel": {"ep": 16}})");
    io::set_path(doc, "parallel.sharding", sharding, "test");
    return report::memory_peak(io::scenario_from_document(doc)).total.value();
  };
  REQUIRE(peak("none") >= peak("zero1"));
  REQUIRE(peak("zero1") >= peak("shard_grad_op"));
  REQUIRE(peak("shard_grad_op") >= peak("full_shard"));
}

TEST_CASE("moe memory: activations of the dispatched tokens", "[report][memory]") {
  // Per MoE layer and micro-batch, beyond the attention half (the dense formula without an
  // MLP): per token the fp32 router probabilities 4 x 16 = 64 B, per routed copy (k = 2) the
  // permuted input and the expert output 2 x 2 x 1024 B and the SwiGLU tensors (gate, up 2 B
  // each, the product 2 B) 3 x 2 x 1024 B, times the imbalance; the shared expert's 3 x 2 x 512
  // B. With T = 4096 tokens: 4096 x (64 + 2 x (4096 + 6144) c + 3072).
  parallel::Scenario s = moe_scenario(4, "none");
  const model::LayerShape shape{.micro_batch = 1, .seq_len = 4096, .element_bytes = 2, .ep = 4};
  model::ModelSpec attention_only = s.model;
  attention_only.ffn_hidden = 0;
  const double base =
      report::activation_bytes_per_layer(attention_only, shape, parallel::Recompute::None).value();
  for (const double c : {1.0, 1.3}) {
    s.model.expert_load_imbalance = c;
    REQUIRE(
        report::activation_bytes_per_moe_layer(s.model, shape, parallel::Recompute::None).value() ==
        Approx(base + 4096.0 * (64.0 + 2.0 * 10'240.0 * c + 3'072.0)).epsilon(1e-12));
  }
  // At ep 1 one rank holds every expert and keeps every token's copies whatever the skew
  // (model::expert_rank_imbalance, min(c, ep)): c = 3 keeps what c = 1 does.
  model::LayerShape one_rank = shape;
  one_rank.ep = 1;
  s.model.expert_load_imbalance = 1.0;
  const double balanced =
      report::activation_bytes_per_moe_layer(s.model, one_rank, parallel::Recompute::None).value();
  s.model.expert_load_imbalance = 3.0;
  REQUIRE(report::activation_bytes_per_moe_layer(s.model, one_rank, parallel::Recompute::None)
              .value() == balanced);
  // Full recompute keeps only the layer input, as in a dense layer: T x hidden x 2 B.
  REQUIRE(
      report::activation_bytes_per_moe_layer(s.model, shape, parallel::Recompute::Full).value() ==
      4096.0 * 1024.0 * 2.0);
}

TEST_CASE("moe memory: under FP8 the router keeps the block input in bf16 and experts FP8 casts",
          "[report][memory]") {
  // FP8 GEMM inputs saved as 1-byte casts (Transformer Engine). The small MoE model: hidden
  // 1024, top 2, one shared expert, T = 4096 tokens, no TP. Against the bf16-saved formula of
  // the test above, per MoE layer: each routed copy's first expert GEMM input is a 1-byte cast
  // (-1 B x 1024 x 2 copies per token, SwiGLU's down-projection input -1 B x 1024 x 2 too, as the
  // dense MLP's), and the block's MLP input, which the attention half counts as a 1-byte GEMM
  // input, is the router's bf16 input (2 B) plus the shared expert's 1-byte cast: +2 B x 1024.
  parallel::Scenario s = moe_scenario(4, "none");
  const model::LayerShape shape{.micro_batch = 1, .seq_len = 4096, .element_bytes = 2, .ep = 4};
  report::ActivationOptions fp8;
  fp8.fp8_gemm_inputs = true;
  const auto layer = [&](const report::ActivationOptions& o) {
    return report::activation_bytes_per_moe_layer(s.model, shape, parallel::Recompute::None, o)
        .value();
  };
  const auto attention_half = [&](const report::ActivationOptions& o) {
    model::ModelSpec attention_only = s.model;
    attention_only.ffn_hidden = 0;
    return report::activation_bytes_per_layer(attention_only, shape, parallel::Recompute::None, o)
        .value();
  };
  const report::ActivationOptions bf16;
  // The routed and shared parts beside the attention half: bf16 4096 x (64 + 2 x 10,240 +
  // 3,072) as above; FP8 per routed copy (1 + 2) x 1024 + (2 + 2 + 1) x 1024 = 8,192 B, the shared
  // expert (2 + 2 + 1) x 512 = 2,560 B, and the block input +2,048 B over the attention half's
  // 1-byte one.
  CHECK(layer(bf16) - attention_half(bf16) ==
        Approx(4096.0 * (64.0 + 2.0 * 10'240.0 + 3'072.0)).epsilon(1e-12));
  CHECK(layer(fp8) - attention_half(fp8) ==
        Approx(4096.0 * (64.0 + 2.0 * 8'192.0 + 2'560.0 + 2'048.0)).epsilon(1e-12));
}
