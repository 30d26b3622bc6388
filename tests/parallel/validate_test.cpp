#include <catch2/catch.hpp>

#include "trainsim/parallel/validate.hpp"
#include "trainsim/units.hpp"

using namespace trainsim;
using namespace trainsim::parallel;

namespace {

// A Llama-2-7B-shaped scenario on 8-GPU nodes with bf16 support.
Scenario llama7b(std::int64_t gpus, std::int64_t tp, std::int64_t pp) {
  Scenario s;
  s.hardware.id = "test-hw";
  s.hardware.node.gpus_per_node = 8;
  s.hardware.gpu.peak_dense[static_cast<std::size_t>(hardware::Dtype::Bf16)] = tflop_per_s(989);
  s.model.num_layers = 32;
  s.model.hidden = 4096;
  s.model.num_heads = 32;
  s.model.num_kv_heads = 32;
  s.model.ffn_hidden = 11008;
  s.gpus = gpus;
  s.parallel.tp = tp;
  s.parallel.pp = pp;
  s.parallel.dp = gpus / (tp * pp);
  s.training.seq_len = 4096;
  s.training.micro_batch = 2;
  s.training.global_batch = 2 * s.parallel.dp;
  return s;
}

bool has_problem(const std::vector<Problem>& ps, const std::string& key, const std::string& text) {
  for (const auto& p : ps) {
    if (p.key == key && p.message.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("validate: the paper's plan has no problems", "[parallel]") {
  REQUIRE(validate(llama7b(128, 1, 1)).empty());
  REQUIRE(validate(llama7b(256, 2, 4)).empty());
}

TEST_CASE("validate: each impossible plan gets one clear problem", "[parallel]") {
  SECTION("tp does not divide heads") {
    // 32 heads over tp 3: 3 does not divide 32 (and 3 x 1 divides 96 GPUs).
    auto ps = validate(llama7b(96, 3, 1));
    REQUIRE(has_problem(ps, "/parallel/tp", "tp 3 does not divide heads 32"));
  }
  SECTION("tp does not divide kv heads") {
    Scenario s = llama7b(128, 8, 1);
    s.model.num_kv_heads = 4;  // GQA with 4 groups over tp 8
    REQUIRE(has_problem(validate(s), "/parallel/tp", "does not divide kv_heads 4"));
  }
  SECTION("a sequence longer than a learned position table") {
    Scenario s = llama7b(128, 1, 1);
    s.model.position_embedding = model::PositionEmbedding::Learned;
    s.model.max_positions = 2048;  // GPT-3's table; the scenario runs 4096 tokens
    REQUIRE(has_problem(validate(s), "/training/seq_len", "exceeds the model's 2048 learned"));
    s.training.seq_len = 2048;
    REQUIRE(validate(s).empty());
  }
  SECTION("pp larger than the layer count") {
    Scenario s = llama7b(512, 1, 64);
    REQUIRE(has_problem(validate(s), "/parallel/pp", "exceeds the model's 32 layers"));
  }
  SECTION("gpus not divisible by tp x pp x cp") {
    Scenario s = llama7b(128, 1, 1);
    s.parallel.pp = 3;
    REQUIRE(has_problem(validate(s), "/parallel", "do not split into tp x pp x cp"));
  }
  SECTION("global batch not divisible by dp x micro-batch") {
    Scenario s = llama7b(128, 1, 1);
    s.training.global_batch = 300;  // dp 128 x mb 2 = 256 does not divide 300
    REQUIRE(has_problem(validate(s), "/training/global_batch", "not divisible by dp x micro_batch"));
  }
  SECTION("virtual stages without the interleaved schedule") {
    Scenario s = llama7b(128, 1, 4);
    s.parallel.virtual_stages = 2;
    REQUIRE(has_problem(validate(s), "/parallel/virtual_stages", "needs pipeline_schedule"));
  }
  SECTION("a precision the GPU lacks") {
    Scenario s = llama7b(128, 1, 1);
    s.training.precision = hardware::Dtype::Fp8;
    // The test GPU has a bf16 peak only: the problem names the profile's key and that one.
    REQUIRE(has_problem(validate(s), "/training/precision",
                        "hardware 'test-hw' has no fp8 tensor cores (its /gpu/peak_dense/fp8 is "
                        "0); expected a precision it supports (bf16) in training.precision "
                        "(--precision)"));
    // A profile read from a file is named by the file, with the id it carries (a copy of a
    // built-in keeps the built-in's id).
    s.hardware_name = "my-gpu.json";
    REQUIRE(has_problem(validate(s), "/training/precision",
                        "hardware 'my-gpu.json' (profile id 'test-hw') has no fp8 tensor cores"));
    // bf16, the default, on a GPU without it: the message says it is the default, and the list
    // holds training precisions only (tf32 is a math mode of fp32, which --precision refuses).
    s.hardware.gpu.peak_dense[static_cast<std::size_t>(hardware::Dtype::Bf16)] =
        FlopsPerSecond(0.0);
    s.hardware.gpu.peak_dense[static_cast<std::size_t>(hardware::Dtype::Fp16)] =
        FlopsPerSecond(1e14);
    s.hardware.gpu.peak_dense[static_cast<std::size_t>(hardware::Dtype::Tf32)] =
        FlopsPerSecond(5e13);
    s.training.precision = hardware::Dtype::Bf16;
    REQUIRE(has_problem(validate(s), "/training/precision",
                        "has no bf16 tensor cores (its /gpu/peak_dense/bf16 is 0; bf16 is also the "
                        "precision when none is given); expected a precision it supports (fp16) in "
                        "training.precision (--precision)"));
  }
  SECTION("a split counting the embedding and loss that does not divide the chunks") {
    // 32 layers + 1 (embedding) = 33 slots over pp 4: Megatron-Core requires an even split.
    Scenario s = llama7b(128, 1, 4);
    s.parallel.account_for_embedding_in_pipeline_split = true;
    REQUIRE(has_problem(validate(s), "/parallel/account_for_embedding_in_pipeline_split",
                        "plus 1 counted for the embedding, 33, do not split evenly over pp x "
                        "virtual_stages = 4"));
    // The loss alone names its own key.
    s.parallel.account_for_embedding_in_pipeline_split = false;
    s.parallel.account_for_loss_in_pipeline_split = true;
    REQUIRE(has_problem(validate(s), "/parallel/account_for_loss_in_pipeline_split",
                        "plus 1 counted for the loss, 33"));
    // 32 + 2 = 34 slots over 2 stages x 17 chunks: 1 slot per chunk leaves the first chunk no
    // transformer layer.
    s = llama7b(128, 1, 2);
    s.parallel.account_for_embedding_in_pipeline_split = true;
    s.parallel.account_for_loss_in_pipeline_split = true;
    s.parallel.schedule = PipelineSchedule::Interleaved;
    s.parallel.virtual_stages = 17;
    s.model.num_layers = 32;
    REQUIRE(has_problem(validate(s), "/parallel/account_for_embedding_in_pipeline_split",
                        "keeps no transformer layer"));
    // 30 + 2 = 32 slots over 4 stages: valid.
    s = llama7b(128, 1, 4);
    s.model.num_layers = 30;
    s.parallel.account_for_embedding_in_pipeline_split = true;
    s.parallel.account_for_loss_in_pipeline_split = true;
    REQUIRE(validate(s).empty());
  }
  SECTION("selective recomputation of latent attention's up-projections without them") {
    // Megatron-Core's recompute_modules ["mla_up_proj"] checkpoints nothing in a layer without
    // latent attention: "selective" would mean none.
    Scenario s = llama7b(128, 1, 1);
    s.stack_name = "up-proj";
    s.stack.selective = model::SelectiveRecompute::MlaUpProj;
    s.parallel.recompute = Recompute::Selective;
    REQUIRE(has_problem(validate(s), "/parallel/recompute",
                        "with stack up-proj, whose recompute.selective is \"mla_up_proj\", "
                        "recomputes nothing in a model without latent attention"));
    // The other policies, and this one with latent attention (a query LoRA and a KV latent),
    // are valid.
    s.parallel.recompute = Recompute::Full;
    REQUIRE(validate(s).empty());
    s.parallel.recompute = Recompute::Selective;
    s.model.kv_lora_rank = 512;
    s.model.qk_nope_head_dim = 128;
    s.model.qk_rope_head_dim = 64;
    s.model.v_head_dim = 128;
    REQUIRE(validate(s).empty());
  }
  SECTION("a pipeline layout that does not cover the plan or the model") {
    // Megatron-Core's pipeline_model_parallel_layout: one entry per model chunk (pp x
    // virtual_stages), summing to the model's layers, and no account_for_* option beside it.
    Scenario s = llama7b(128, 1, 4);
    s.parallel.pipeline_layout = {7, 9, 9};
    REQUIRE(has_problem(validate(s), "/parallel/pipeline_layout",
                        "has 3 model chunks where pp x virtual_stages = 4; expected 4 entries"));
    s.parallel.pipeline_layout = {7, 9, 9, 8};
    REQUIRE(has_problem(validate(s), "/parallel/pipeline_layout",
                        "hold 33 layers where the model has 32; expected entries summing to 32"));
    s.parallel.pipeline_layout = {7, 9, 9, 7};
    REQUIRE(validate(s).empty());
    s.parallel.account_for_loss_in_pipeline_split = true;
    REQUIRE(has_problem(validate(s), "/parallel/pipeline_layout",
                        "expected no account_for_embedding_in_pipeline_split or "
                        "account_for_loss_in_pipeline_split beside it"));
    // recompute_layers is checked against the layout's largest chunk, whichever it is.
    s.parallel.account_for_loss_in_pipeline_split = false;
    s.parallel.recompute = Recompute::Full;
    s.parallel.recompute_layers = 9;
    REQUIRE(validate(s).empty());
    s.parallel.recompute_layers = 10;
    REQUIRE(has_problem(validate(s), "/parallel/recompute_layers", "exceeds the 9 layers"));
  }
  SECTION("a partial node") {
    Scenario s = llama7b(12, 1, 1);
    s.training.global_batch = 24;
    REQUIRE(has_problem(validate(s), "/cluster/gpus", "not a whole number of 8-GPU nodes"));
  }
}

TEST_CASE("chunk_layers: a pipeline layout names each chunk's layers", "[parallel]") {
  // DeepSeek-V3's 61 layers as Megatron-Bridge's recipe lays them out over pp 4 x 4 chunks
  // (set_deepseek_v3_pipeline_model_parallel_layout): 15 chunks of 4, then 1.
  ParallelPlan p;
  p.pp = 4;
  p.virtual_stages = 4;
  p.schedule = PipelineSchedule::Interleaved;
  p.pipeline_layout.assign(15, 4);
  p.pipeline_layout.push_back(1);
  CHECK(chunk_layers(p, 61, 0).first == 0);
  CHECK(chunk_layers(p, 61, 0).count == 4);
  CHECK(chunk_layers(p, 61, 14).first == 56);
  CHECK(chunk_layers(p, 61, 15).first == 60);
  CHECK(chunk_layers(p, 61, 15).count == 1);
  // A chunk past a layout of the wrong length holds none (parallel::validate refuses the plan).
  CHECK(chunk_layers(p, 61, 16).count == 0);
}

TEST_CASE("chunk_layers: the embedding and the loss counted in the pipeline split", "[parallel]") {
  // A plan of pp stages x v chunks, counting the embedding and the loss or not.
  const auto plan = [](std::int64_t pp, std::int64_t v, bool counted) {
    ParallelPlan p;
    p.pp = pp;
    p.virtual_stages = v;
    p.account_for_embedding_in_pipeline_split = counted;
    p.account_for_loss_in_pipeline_split = counted;
    return p;
  };
  struct Expected {
    ParallelPlan plan;
    std::int64_t chunk, first, count;
  };
  // Llama 3.1 405B as its Megatron-Bridge recipe splits it: 126 layers + the embedding + the
  // loss = 128 slots over pp 16 x 4 chunks, 2 per chunk (Megatron-Core get_num_layers_to_build:
  // the first chunk of the first stage and the last chunk of the last stage build one fewer).
  // Without the flags, the even split: 126 = 64 x 1 + 62, the first 62 chunks one more. At pp 8
  // without interleaving: 16 slots per stage, the first and last stages building 15.
  const std::vector<Expected> cases = {
      {plan(16, 4, true), 0, 0, 1},    {plan(16, 4, true), 1, 1, 2},
      {plan(16, 4, true), 62, 123, 2}, {plan(16, 4, true), 63, 125, 1},
      {plan(16, 4, false), 0, 0, 2},   {plan(16, 4, false), 63, 125, 1},
      {plan(8, 1, true), 0, 0, 15},    {plan(8, 1, true), 3, 47, 16},
      {plan(8, 1, true), 7, 111, 15},
  };
  for (const Expected& e : cases) {
    INFO("pp " << e.plan.pp << " x " << e.plan.virtual_stages << ", chunk " << e.chunk);
    CHECK(chunk_layers(e.plan, 126, e.chunk).first == e.first);
    CHECK(chunk_layers(e.plan, 126, e.chunk).count == e.count);
  }
  // Every layer once, in order.
  std::int64_t next = 0;
  for (std::int64_t c = 0; c < 64; ++c) {
    CHECK(chunk_layers(plan(16, 4, true), 126, c).first == next);
    next += chunk_layers(plan(16, 4, true), 126, c).count;
  }
  CHECK(next == 126);
}
