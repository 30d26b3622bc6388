// trainsim validate: the mapping of published runs to scenarios (field by field, derived from
// the rows of validation/published_runs.json), the sources' FLOP conventions against hand
// derivations and the sources' own printed figures, skipped-row reasons, the knob search, the
// strict reader, and the accuracy bound on the shipped rows.
#include "trainsim/validation/validate_runs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"
#include "trainsim/sweep/evaluate.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/scenario_loader.hpp"
#include "sim/io/stack_loader.hpp"
#include "sim/validation/mapping.hpp"
#include "sim/validation/runs_reader.hpp"

using namespace trainsim;
using namespace trainsim::validation;
using Catch::Contains;

namespace {

// The overall mean absolute percentage error of `trainsim validate` on the shipped rows, as a
// fraction: the figure measured with the committed profiles and stacks (see docs/validation.md:
// all compared rows, the Megatron-Bridge MoE and FP8 rows and the deepspeed-zero3-2021 stack's
// ZeRO-3 rows included) plus a small margin. It is lowered whenever the figure falls. A change
// that raises the error above it has made the simulator worse on published measurements, unless
// it models what the rows' own code does: then the bound follows, with the rows that moved and
// why in docs/validation.md. Raised once so, 0.074 -> 0.075: Megatron-Core's
// --overlap-param-gather and its bucketing (docs/validation.md, Megatron-Core 2024 on H100).
// Raised once by data, not by the model, 0.075 -> 0.091: the 70 rows of llm-foundry's H100
// tables joined the file (the source's MAPE 13.7%; the 217 earlier rows stay at 7.4%), the gap
// they measure analysed in docs/validation.md ("Hopper, across sources"). Lowered 0.091 ->
// 0.083 when the llm-foundry stack took Composer's default BACKWARD_POST prefetch (measured
// 0.0820), then raised 0.083 -> 0.095 by modelling what the rows' code does: FSDP1 issues a
// BACKWARD_POST gather without waiting for the gradient's kernels (it had been priced after
// them), and the 18 large-scale H100 rows ran sweep.py's forward prefetch and FlashAttention 2
// (measured 0.0940; those rows +15.7% -> +22.6%). Lowered 0.095 -> 0.078 when the Hopper
// profiles took gemm_comm_contention 1, the GEMM kernels' own slowdown beside a collective
// (measured 0.0759). Lowered 0.078 -> 0.064 when llm-foundry's H100 tables took a stack of their
// own software, llm-foundry-torch21, whose time per step beyond the GPU work is fitted to one of
// the two tables and checked on the other (measured 0.0618). Raised 0.064 -> 0.071 by reading
// what the Megatron-Bridge rows ran from their code (Megatron-Bridge 0.2.0 and 0.3.0, the
// versions in the NeMo 25.11 and 26.02 containers): the distributed optimizer and no recompute
// (DeepSeek-V3: MLA up-projections only), where the knob search had picked full recompute, which
// the memory model wanted and the runs did not use; those 8 rows went from 9.6% to 37.1%, all
// fast (measured 0.0695, 0.0696 with B200's bf16 GEMM ceiling fitted to public measurements;
// docs/validation.md, the Megatron-Bridge rows). Raised by data, not by the model, 0.071 ->
// 0.073: three rows of the same tables joined to compare H100 with GB200 under one container
// (Llama 3 70B on 64 H100 +11.9%, on 64 GB200 +43.9%; Llama 3.1 405B on 1,024 H100 +27.6%;
// measured 0.0718; 0.0724 once the DeepSeek-V3 rows ran their recipe's mla_up_proj
// recomputation, memory settings and pipeline layout, docs/validation.md). Raised 0.073 -> 0.082
// when gemm_comm_contention was measured instead of derived: GEMMs on one H200 beside 16-32 SMs
// held by a stand-in for an NCCL kernel run 1.15-1.39x as long, not 2x, and the fit gives 0.24
// (docs/calibration.md, "GEMMs beside communication"); the Megatron-LM 2024 H100 rows went from
// 14.6% to 24.6% and llm-foundry's H100 tables from 4.1% to 6.2% (measured 0.0809). Lowered
// 0.082 -> 0.079 when the llm-foundry stack's attention_speed (FlashAttention in Triton against
// FlashAttention-2) was fitted with its elementwise_traffic to its A100 rows within Dao 2023's
// range, where it had been that range's middle: 0.5 and 1.5 (was 0.555 and 1.75), the A100 rows
// from 5.7% to 4.8% (their error no longer growing with the sequence length), the H100 ones,
// which take both values and refit their time per step (189 -> 171 ms), from 6.2% to 6.9%
// (measured 0.0783). Lowered 0.079 -> 0.078 when the backward under sequence parallelism
// gathered the column-parallel GEMMs' inputs again (Korthikanti et al. 2022 §4.2.2): README
// 2024 24.3% -> 23.6%, Megatron-Bridge 36.8% -> 36.7% (measured 0.0774).
constexpr double kShippedRowsMapeBound = 0.078;

const std::vector<PublishedRun>& shipped() {
  static const std::vector<PublishedRun> runs =
      read_published_runs(builtin_runs_text(), kBuiltinRunsName);
  return runs;
}

const PublishedRun& row(const std::string& id) {
  for (const PublishedRun& r : shipped()) {
    if (r.id == id) return r;
  }
  FAIL("no shipped row " << id);
  throw std::logic_error("unreachable");
}

Mapping mapped(const PublishedRun& run) {
  std::string reason;
  const auto m = map_run(run, reason);
  INFO(reason);
  REQUIRE(m.has_value());
  return *m;
}

std::string skip_reason(const PublishedRun& run) {
  std::string reason;
  REQUIRE_FALSE(map_run(run, reason).has_value());
  return reason;
}

// One row in memory, every key of the schema present (validation/README.md).
std::string row_json(const std::string& overrides_before_notes = "") {
  return R"J([{"id": "x", "source": "s", "source_locator": "l", "year": 2024,
    "hardware": {"gpu": "H100", "memory_gb": 80}, "gpus": 8, "gpus_per_node": 8,
    "intra_node": null, "inter_node": null, "framework": "torchtitan", "model": "m",
    "n_layers": 2, "hidden": 256, "n_heads": 4, "n_kv_heads": null, "ffn_hidden": 1024,
    "vocab": 1000, "seq_len": 128, "global_batch_sequences": 8, "micro_batch": 1, "tp": 1,
    "pp": 1, "dp": 8, "cp": 1, "virtual_pp": null, "sequence_parallel": false,
    "zero_stage_or_fsdp": "FSDP2 (full shard)", "activation_recompute": "none",
    "precision": "bf16", "tflops_per_gpu": null, "mfu": null, "hfu": null,
    "tokens_per_sec_per_gpu": 1000, "iteration_time_s": null, "extra_metrics": {},
    "derived_fields": [], "config_complete": true, "verification": "v",)J" +
         overrides_before_notes + R"J( "notes": "n", "source_group": "torchtitan docs"}])J";
}

}  // namespace

TEST_CASE("validate: the shipped file reads with 299 rows in file order", "[validation]") {
  REQUIRE(shipped().size() == 299);
  CHECK(shipped().front().id == "narayanan21-t1-1.7B-32gpu");
  CHECK(shipped()[44].index == 44);
}

TEST_CASE("validate: Narayanan 2021 Table 1 row maps field by field", "[validation]") {
  // narayanan21-t1-1.7B-32gpu: A100-SXM4 80 GB, GPT 1.7B, 24 layers, hidden 2304, 24 heads,
  // ffn 9216 = 4 x 2304, vocab 51200, seq 2048, batch 512, tp 1 pp 1 dp 32, full recompute,
  // "mixed precision 16-bit (fp16 ...)", "none (plain DP all-reduce)", 137 TFLOP/s.
  const Mapping m = mapped(row("narayanan21-t1-1.7B-32gpu"));
  CHECK(m.source->name == "narayanan21-t1");
  CHECK(m.base["hardware"] == "a100-dgx");
  CHECK(m.base["stack"] == "megatron-lm");
  const auto& model = m.base["model"];
  CHECK(model["layers"] == 24);
  CHECK(model["hidden"] == 2304);
  CHECK(model["heads"] == 24);
  CHECK(model["kv_heads"] == 24);  // n_kv_heads null: multi-head attention
  CHECK(model["ffn_hidden"] == 9216);
  CHECK(model["vocab"] == 51200);
  CHECK(model["activation"] == "gelu");  // ffn = 4h
  CHECK(model["norm"] == "layernorm");
  CHECK(model["position_embedding"] == "learned");
  CHECK(model["max_positions"] == 2048);  // the training sequence length
  CHECK(model["tied_embeddings"] == true);
  CHECK(model["linear_bias"] == true);
  CHECK(m.base["cluster"]["gpus"] == 32);
  CHECK(m.base["training"]["seq_len"] == 2048);
  CHECK(m.base["training"]["global_batch"] == 512);
  CHECK(m.base["training"]["precision"] == "fp16");
  CHECK(m.base["parallel"]["tp"] == 1);
  CHECK(m.base["parallel"]["pp"] == 1);
  CHECK(m.base["parallel"]["cp"] == 1);
  CHECK(m.base["parallel"]["sequence_parallel"] == false);
  CHECK(m.base["parallel"]["sharding"] == "none");
  CHECK(m.recomputes == std::vector<parallel::Recompute>{parallel::Recompute::Full});
  // micro_batch null: powers of two dividing the per-replica batch 512 / 32 = 16.
  CHECK(m.search_micro_batch);
  CHECK(m.micro_batches == std::vector<std::int64_t>{1, 2, 4, 8, 16});
  // pp 1: no interleaving to search.
  CHECK(m.virtual_stages == std::vector<std::int64_t>{1});
  CHECK(m.metric == Metric::FlopRatePerGpu);
  CHECK(m.measured == Approx(137e12).epsilon(1e-12));
}

TEST_CASE("validate: torchtitan Llama 3 8B row maps to a SwiGLU, RoPE, GQA model", "[validation]") {
  // torchtitan-2024-a100-llama3-8b-64gpu-selective-op: 32 layers, hidden 4096, 32 heads, 8 KV
  // heads, ffn 14336 (not 4h: SwiGLU), vocab 128256, seq 8192, batch 64, micro-batch 1, FSDP2
  // full shard, "selective (op)", bf16, 2973 tokens/s per GPU.
  const Mapping m = mapped(row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op"));
  CHECK(m.base["stack"] == "torchtitan-fsdp2");
  CHECK(m.base["model"]["kv_heads"] == 8);
  CHECK(m.base["model"]["activation"] == "swiglu");
  CHECK(m.base["model"]["norm"] == "rmsnorm");
  CHECK(m.base["model"]["position_embedding"] == "rope");
  CHECK_FALSE(m.base["model"].contains("max_positions"));
  CHECK(m.base["model"]["tied_embeddings"] == false);
  CHECK(m.base["parallel"]["sharding"] == "full_shard");
  CHECK(m.recomputes == std::vector<parallel::Recompute>{parallel::Recompute::Selective});
  CHECK(m.micro_batches == std::vector<std::int64_t>{1});
  CHECK_FALSE(m.search_micro_batch);
  CHECK(m.metric == Metric::TokensPerSecondPerGpu);
  CHECK(m.measured == 2973.0);
}

TEST_CASE("validate: a group the table lacks is skipped and the reason says what groups choose",
          "[validation]") {
  PublishedRun run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.source_group = "My team runs";
  const std::string reason = skip_reason(run);
  CHECK_THAT(reason, Contains("source group 'My team runs' is not in the mapping table, which "
                              "chooses each source's stack and FLOP convention"));
  // Each text of the table once: the Narayanan 2021 Table 2 rows and the torchtitan rows share
  // theirs.
  CHECK(reason.find("'torchtitan'") == reason.rfind("'torchtitan'"));
  CHECK(reason.find("'Narayanan et al. 2021, Table 2'") ==
        reason.rfind("'Narayanan et al. 2021, Table 2'"));
}

TEST_CASE("validate: a row that offloads to the CPU is skipped with its reason", "[validation]") {
  // ZeRO-Offload and FSDP's CPUOffload move parameters or optimizer state over PCIe every step;
  // the model has no term for it, and "zero-3 offload" ran as plain full_shard with no word.
  PublishedRun run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.sharding = "ZeRO-3 offload";
  CHECK_THAT(skip_reason(run),
             Contains("sharding 'ZeRO-3 offload' offloads to the CPU, which is not modelled"));
}

TEST_CASE("validate: hybrid sharding lists its shard group as an assumption", "[validation]") {
  // The runs schema has no shard-group size: HYBRID_SHARD takes one node's ranks, torch's own
  // default, and the row says so (it was taken without a word).
  PublishedRun run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.sharding = "FSDP HYBRID_SHARD";
  const Mapping m = mapped(run);
  CHECK(m.base["parallel"]["sharding"] == "hybrid_shard");
  CHECK_THAT(m.assumptions, Catch::VectorContains(std::string(
                                "'FSDP HYBRID_SHARD': hybrid_shard with a shard group of one "
                                "node's ranks (the source does not state its size)")));
}

TEST_CASE("validate: a dense row with an expert-parallel degree is skipped and sp without tp said",
          "[validation]") {
  PublishedRun run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.ep = 8;
  CHECK_THAT(skip_reason(run), Contains("extra_metrics.ep 8 on 'Llama 3 8B', which the mapping "
                                        "knows as no mixture-of-experts model (it maps "
                                        "deepseek-v3, qwen3-30b-a3b, qwen3-235b-a22b, "
                                        "mixtral-8x7b, gpt-oss-120b); expected a model it knows "
                                        "as one, or no ep for a dense model"));
  run.ep = 1;
  (void)mapped(run);
  // Sequence parallelism splits over TP ranks: with tp 1 it is off, and the row says so.
  run.sequence_parallel = true;
  const Mapping m = mapped(run);
  CHECK(m.base["parallel"]["sequence_parallel"] == false);
  CHECK(std::find(m.assumptions.begin(), m.assumptions.end(),
                  "sequence_parallel true with tp 1: nothing to split, off") !=
        m.assumptions.end());
}

TEST_CASE("validate: torchtitan's layer-level checkpointing is full recompute of half the layers",
          "[validation]") {
  // "selective (layer)": torchtitan's selective_ac_option 2 checkpoints every second block
  // whole; Llama 3 8B has 32 layers, so 16 are recomputed (recompute_layers 16 of one chunk).
  const Mapping m = mapped(row("torchtitan-2024-a100-llama3-8b-64gpu-selective-layer"));
  CHECK(m.recomputes == std::vector<parallel::Recompute>{parallel::Recompute::Full});
  CHECK(m.base["parallel"]["recompute_layers"] == 16);
  CHECK(std::any_of(m.assumptions.begin(), m.assumptions.end(), [](const std::string& a) {
    return a.find("selective_ac_option 2") != std::string::npos;
  }));
  CHECK(mapped(row("torchtitan-2024-a100-llama2-13b-64gpu-lbs2-selective-layer"))
            .base["parallel"]["recompute_layers"] == 20);
}

TEST_CASE("validate: torchtitan's 70B rows run its eager RMSNorm, the others its fused one",
          "[validation]") {
  // train_configs at torchtitan 1ea476e9f (the commit that published the table): llama2_70b
  // and llama3_70b set norm_type "rmsnorm", llama3_8b and llama2_13b "fused_rmsnorm".
  for (const char* id : {"torchtitan-2024-a100-llama3-70b-64gpu-full",
                         "torchtitan-2024-a100-llama2-70b-64gpu-lbs1-selective-op",
                         "torchtitan-2024-a100-llama2-70b-64gpu-lbs2-full"}) {
    const Mapping m = mapped(row(id));
    CHECK(m.base["stack"] == "torchtitan-fsdp2-rmsnorm");
    CHECK(m.source->name == "torchtitan-2024");
  }
  CHECK(mapped(row("torchtitan-2024-a100-llama2-13b-64gpu-lbs2-none")).base["stack"] ==
        "torchtitan-fsdp2");
}

TEST_CASE("validate: A100 40GB rows get the 40 GiB inline profile", "[validation]") {
  // foundry-a100-40g-mpt-1b-s2048-g8-mb8: "A100 (40GB)", memory_gb 40.
  const Mapping m = mapped(row("foundry-a100-40g-mpt-1b-s2048-g8-mb8"));
  CHECK(m.hardware == "a100-dgx-40gb");
  REQUIRE(m.base["hardware"].is_object());
  CHECK(m.base["hardware"]["gpu"]["hbm_capacity"] == "40 GiB");
  CHECK(m.base["stack"] == "llm-foundry");
  CHECK(m.base["model"]["linear_bias"] == false);  // MPT: no_bias
  // The document loads through the scenario loader, with 40 GiB of HBM.
  io::ScenarioDocument doc;
  doc.json = candidate_document(m, 8, 1, parallel::Recompute::None);
  const parallel::Scenario s = io::scenario_from_document(doc);
  CHECK(s.hardware.gpu.hbm_capacity.value() == Approx(40.0 * 1024 * 1024 * 1024).epsilon(1e-12));
  CHECK(s.stack.id == "llm-foundry");
}

TEST_CASE("validate: Megatron README 2024 rows use the source's documented defaults",
          "[validation]") {
  // megatron-readme-h100-weak-7.1B-96gpu: ffn_hidden, sequence_parallel and recompute null,
  // tp 2: ffn 4 x 4096 (Megatron default), SP on (--tp-comm-overlap needs it), recompute
  // searched over none/selective/full, each assumption listed.
  const Mapping m = mapped(row("megatron-readme-h100-weak-7.1B-96gpu"));
  CHECK(m.base["hardware"] == "h100-dgx");
  CHECK(m.base["model"]["ffn_hidden"] == 16384);
  CHECK(m.base["model"]["tied_embeddings"] == false);
  CHECK(m.base["parallel"]["sequence_parallel"] == true);
  CHECK(m.base["parallel"]["sharding"] == "zero1");  // "distributed optimizer implied ..."
  CHECK(m.search_recompute);
  CHECK(m.recomputes.size() == 3);
  // micro_batch null: per-replica batch 192 / 48 = 4 -> {1, 2, 4}.
  CHECK(m.micro_batches == std::vector<std::int64_t>{1, 2, 4});
  CHECK(std::count_if(m.assumptions.begin(), m.assumptions.end(), [](const std::string& a) {
          return a.rfind("ffn_hidden 4 x hidden", 0) == 0 ||
                 a.rfind("sequence parallel on", 0) == 0;
        }) == 2);
}

TEST_CASE("validate: interleaving candidates are the divisors of layers per stage",
          "[validation]") {
  // Narayanan 145.6B: 80 layers over pp 8 = 10 per stage -> chunks {1, 2, 5, 10}.
  CHECK(virtual_stage_candidates(80, 8) == std::vector<std::int64_t>{1, 2, 5, 10});
  // 105 layers over pp 35 = 3 -> {1, 3}; pp 1 or an uneven split -> {1}.
  CHECK(virtual_stage_candidates(105, 35) == std::vector<std::int64_t>{1, 3});
  CHECK(virtual_stage_candidates(24, 1) == std::vector<std::int64_t>{1});
  CHECK(virtual_stage_candidates(70, 12) == std::vector<std::int64_t>{1});
}

TEST_CASE("validate: micro-batch candidates are searched unless the row implies one",
          "[validation]") {
  PublishedRun run;
  // Per-replica batch 96 (Narayanan 145.6B: 2304 / 24): powers of two dividing 96 and 96 itself.
  CHECK(micro_batch_candidates(run, 96) == std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 96});
  // grad_accum 4 pins 96 / 4 = 24: the row states it.
  run.grad_accum = 4;
  CHECK(micro_batch_candidates(run, 96) == std::vector<std::int64_t>{24});
  run.micro_batch = 3;
  CHECK(micro_batch_candidates(run, 96) == std::vector<std::int64_t>{3});
}

TEST_CASE("validate: free-text fields", "[validation]") {
  using parallel::Recompute;
  using parallel::Sharding;
  CHECK(parse_sharding("none (plain DP all-reduce)") == Sharding::None);
  CHECK(parse_sharding("ZeRO-3") == Sharding::FullShard);
  CHECK(parse_sharding("ZeRO-1 (BF16Optimizer)") == Sharding::Zero1);
  CHECK(parse_sharding("distributed optimizer implied by --overlap-param-gather") ==
        Sharding::Zero1);
  CHECK(parse_sharding("FSDP FULL_SHARD (mixed_precision PURE)") == Sharding::FullShard);
  CHECK(parse_sharding("FSDP SHARD_GRAD_OP") == Sharding::ShardGradOp);
  CHECK(parse_sharding("FSDP HYBRID_SHARD") == Sharding::HybridShard);
  // FSDP's NO_SHARD is DDP's layout (torch ShardingStrategy.NO_SHARD), not FSDP's default
  // FULL_SHARD: it read as full_shard and fitted where DDP did not.
  CHECK(parse_sharding("FSDP NO_SHARD") == Sharding::None);
  // A named ZeRO stage or Megatron's distributed optimizer before the bare words "fsdp" and
  // "ddp": these read as full_shard and none.
  CHECK(parse_sharding("ZeRO-1 (not FSDP)") == Sharding::Zero1);
  CHECK(parse_sharding("Megatron DDP with use_distributed_optimizer=True") == Sharding::Zero1);
  CHECK(parse_sharding("Megatron DDP") == Sharding::None);
  CHECK(parse_sharding("Megatron DDP with --use-distributed-optimizer") == Sharding::Zero1);
  CHECK(parse_sharding("use_distributed_optimizer: True") == Sharding::Zero1);
  CHECK(parse_sharding("(use_distributed_optimizer = True)") == Sharding::Zero1);
  CHECK(parse_sharding("DDP, use_distributed_optimizer=False") == Sharding::None);
  CHECK(parse_sharding("DDP, not FSDP") == Sharding::None);
  CHECK_FALSE(parse_sharding("something else").has_value());
  CHECK(parse_recompute("full (activation checkpointing on)") == Recompute::Full);
  CHECK(parse_recompute("selective (op)") == Recompute::Selective);
  CHECK_FALSE(parse_recompute("selective (layer)").has_value());
  CHECK(parse_precision("amp_bf16") == hardware::Dtype::Bf16);
  CHECK(parse_precision("mixed precision 16-bit") == hardware::Dtype::Fp16);
  CHECK_FALSE(parse_precision("fp8 hybrid").has_value());
}

TEST_CASE("validate: rows that cannot be mapped are skipped with the reason", "[validation]") {
  CHECK_THAT(skip_reason(row("gptneox20b-96gpu")), Contains("in parallel"));
  CHECK_THAT(skip_reason(row("opt175b-992gpu")),
             Contains("not stated by the source: vocab, global_batch_sequences, tp, pp, dp"));
  PublishedRun run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.gpu = "MI250X";
  CHECK_THAT(skip_reason(run), Contains("no built-in hardware profile for GPU 'MI250X'"));
  // Every field there, but the transcriber flagged the configuration incomplete
  // (validation/README.md: such a row is skipped).
  run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.config_complete = false;
  CHECK_THAT(skip_reason(run), Contains("config_complete is false"));
  run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.precision = "fp8 (float8 linears)";
  CHECK_THAT(skip_reason(run), Contains("fp8 training"));
  run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.source_group = "Somebody 2031";
  CHECK_THAT(skip_reason(run), Contains("not in the mapping table"));
  run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.dp = 32;  // 1 x 1 x 1 x 32 != 64
  CHECK_THAT(skip_reason(run), Contains("differs from gpus 64"));
  // A stated memory the profile does not have: the A100 rows map to 40 or 80 GB, and 1 GB ran as
  // the 80GB part.
  run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.memory_gb = 1.0;
  CHECK(skip_reason(run) ==
        "memory_gb 1 is not the 80 GiB of profile 'a100-dgx' within 10%: a GPU the profile does "
        "not model");
  // A GPU text naming the 80GB part in 2020 is the 80GB part: it ran as the 40GB one.
  run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.memory_gb.reset();
  run.gpu = "A100 (80GB) 2020";
  {
    std::string why;
    const auto mapped = map_run(run, why);
    REQUIRE(mapped.has_value());
    CHECK(mapped->hardware == "a100-dgx");
  }
  // Interleaving with one pipeline stage contradicts itself; it used to run as pp 1 silently.
  run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  REQUIRE(*run.pp == 1);
  run.virtual_pp = 2;
  CHECK(skip_reason(run) == "virtual_pp 2 with pp 1: interleaving needs pp > 1");
  run.virtual_pp = 1;  // one virtual stage per stage is no interleaving: mapped
  std::string reason;
  CHECK(map_run(run, reason).has_value());
  // Figures of one run agree. MPT-30B on 128 A100 40GB: 768 x 2048 tokens in 14.1951 s over 128
  // GPUs is 865.6 tokens/s per GPU, as printed (865); an iteration time of 5.0 s would give
  // 2457.6. Its grad_accum 1 is 768 / 128 = 6 sequences per replica at micro-batch 6; 3 would
  // not fit them.
  const std::string id = "foundry-a100-40g-mpt-30b-s2048-g128-mb6";
  CHECK(map_run(row(id), reason).has_value());
  run = row(id);
  run.iteration_time_s = 5.0;
  CHECK(skip_reason(run) ==
        "tokens_per_sec_per_gpu 865 and iteration_time_s 5 disagree: the time gives 2458 tokens/s "
        "per GPU (global batch x seq_len / time / gpus), more than 1% apart");
  run = row(id);
  run.grad_accum = 3;
  CHECK(skip_reason(run) ==
        "extra_metrics.grad_accum 3 does not fit the 6 sequences per replica (global batch 768 "
        "over dp 128) at micro-batch 6");
  // Without a micro-batch, a stated grad_accum pins it: 6 sequences over 3 steps is micro-batch
  // 2, not searched (grad_accum 32 of 32 sequences ran at micro-batch 8, 4 steps).
  run = row(id);
  run.micro_batch.reset();
  run.grad_accum = 3;
  const auto pinned = map_run(run, reason);
  REQUIRE(pinned.has_value());
  CHECK(pinned->micro_batches == std::vector<std::int64_t>{2});
  CHECK_FALSE(pinned->search_micro_batch);
  // MFU counts the model's FLOPs and HFU those with the recomputed ones: MFU 0.9 over HFU 0.5
  // contradicts itself (it was compared on MFU without a word).
  run = row(id);
  run.mfu = 0.9;
  run.hfu = 0.5;
  CHECK(skip_reason(run) ==
        "mfu 0.9 above hfu 0.5: the hardware FLOPs include the model's, so "
        "MFU <= HFU");
  // The Megatron-Bridge summaries' TFLOP/s halve the causal attention term: a row giving only
  // them is skipped (it was compared in Megatron-Core's full count, 7% off on Llama 3 70B).
  run = row("mbridge-2602-h100-llama3-70b-fp8-64gpu");
  run.tokens_per_s_per_gpu.reset();
  run.iteration_time_s.reset();
  run.mfu.reset();
  run.hfu.reset();
  REQUIRE(run.tflops_per_gpu.has_value());
  CHECK_THAT(skip_reason(run),
             Catch::StartsWith("only TFLOP/s, MFU or HFU measured: the summaries' "
                               "TFLOP/s halve the causal attention term"));
}

TEST_CASE("validate: a mixture-of-experts row measured in FLOPs alone is skipped",
          "[validation][moe]") {
  // The sources' counts are dense models' formulas: torchtitan's 6N takes every parameter, so
  // Mixtral 8x7B counted 46.7B where a token uses 12.9B, and a predicted MFU of 151% came out;
  // Megatron-Core's count without its moe_router_topk factor prices one expert's MLP per layer.
  PublishedRun run = row("torchtitan-2024-a100-llama2-13b-64gpu-lbs2-none");
  run.model = "Mixtral 8x7B";
  run.ep = 8;
  run.tokens_per_s_per_gpu.reset();
  run.iteration_time_s.reset();
  run.tflops_per_gpu.reset();
  run.mfu = 0.3;
  CHECK_THAT(skip_reason(run),
             Catch::StartsWith("only TFLOP/s, MFU or HFU measured, and the source counts FLOPs "
                               "with a dense model's formula, not by the experts each token of "
                               "'Mixtral 8x7B' is routed to"));
  run.model = "Llama 2 13B";  // the dense row itself is compared on its MFU
  run.ep.reset();
  CHECK(mapped(run).metric == Metric::Mfu);
}

TEST_CASE("validate: the memory a GPU's text states names the part", "[validation]") {
  // "A100 40 GB", spaced, ran as the 80GB part, with an assumption calling its memory unstated;
  // "A100 40GB" ran as the 40GB part.
  PublishedRun run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.memory_gb.reset();
  for (const char* gpu : {"A100 40 GB", "A100 40GB", "A100-SXM4-40GB"}) {
    run.gpu = gpu;
    INFO(gpu);
    CHECK(mapped(run).hardware == "a100-dgx-40gb");
  }
  // "A100 80 GB 2020" is the 80GB part, its memory stated: no assumption says otherwise.
  run.gpu = "A100 80 GB 2020";
  const Mapping m = mapped(run);
  CHECK(m.hardware == "a100-dgx");
  for (const auto& a : m.assumptions) CHECK_THAT(a, !Contains("memory unstated"));
  // A V100 of 16 GB is not the 32 GB part of v100-dgx: skipped, as memory_gb 16 is.
  run = row("megatron2020-v100-dgx2-8B-8gpu");  // "V100 (DGX-2)", memory not stated
  REQUIRE_FALSE(run.memory_gb.has_value());
  run.gpu = "V100-SXM2-16GB";
  CHECK(skip_reason(run) ==
        "the GPU's memory 16 is not the 32 GiB of profile 'v100-dgx' within 10%: a GPU the "
        "profile does not model");
  run.gpu = "V100-SXM2";
  run.memory_gb = 16.0;
  CHECK_THAT(skip_reason(run), Catch::StartsWith("memory_gb 16 is not the 32 GiB"));
  // A link's rate is no memory ("200 Gb/s HDR" read as a second size made the 40GB part's text
  // "memory unstated"), and a text that contradicts memory_gb, or names two sizes, is skipped
  // (memory_gb 80 beside "A100 (40GB)" ran as the 80GB part without a word).
  run = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  run.memory_gb.reset();
  run.gpu = "A100 40GB with 200 Gb/s HDR";
  CHECK(mapped(run).hardware == "a100-dgx-40gb");
  run.gpu = "A100 80GB, 200 Gbps HDR";
  for (const auto& a : mapped(run).assumptions) CHECK_THAT(a, !Contains("memory unstated"));
  run.gpu = "A100 (40GB)";
  run.memory_gb = 80.0;
  CHECK(skip_reason(run) ==
        "the GPU 'A100 (40GB)' states 40 GB where memory_gb is 80; expected one memory size for "
        "the row's GPU");
  run.memory_gb.reset();
  run.gpu = "A100 40GB or 80GB";
  CHECK_THAT(skip_reason(run),
             Catch::StartsWith("the GPU 'A100 40GB or 80GB' states two memory sizes"));
  // A V100 row's own node size is said as any other's; only DGX-2's 16 has its own sentence.
  run = row("megatron2020-v100-dgx2-8B-8gpu");
  run.gpu = "V100-SXM2";
  run.gpus_per_node = 4;
  CHECK_THAT(
      mapped(run).assumptions,
      Catch::VectorContains(std::string("the source's 4 GPUs per node simulated as v100-dgx's 8")));
}

TEST_CASE("validate: mixture-of-experts rows map to the built-in model with ep from the row",
          "[validation][moe]") {
  CHECK(moe_builtin_model("DeepSeek-V3 (w/o MTP)") == "deepseek-v3");
  CHECK(moe_builtin_model("DeepSeekV3") == "deepseek-v3");
  CHECK(moe_builtin_model("Qwen3_235B_a22B") == "qwen3-235b-a22b");
  CHECK(moe_builtin_model("Qwen3-30B-A3B") == "qwen3-30b-a3b");
  CHECK(moe_builtin_model("Mixtral 8x7B") == "mixtral-8x7b");
  CHECK(moe_builtin_model("GPT OSS 120B") == "gpt-oss-120b");
  CHECK_FALSE(moe_builtin_model("Llama 3.1 405B").has_value());
  CHECK_FALSE(moe_builtin_model("GPT 175B").has_value());
  // The reader takes the EP degree from extra_metrics.ep (the schema has no top-level key).
  CHECK(row("mbridge-2511-gb200-deepseek-v3-bf16-256gpu").ep == 64);
  CHECK(row("mbridge-2511-b200-llama3.1-405b-fp8-128gpu").ep == 1);
  CHECK_FALSE(row("mbridge-2602-gb200-llama3.1-405b-fp8-256gpu").ep.has_value());
  // The Megatron-Bridge MoE rows map to the built-in model, parallel.ep from extra_metrics.ep,
  // the printed micro-batch, TP, PP and VP, and recompute searched (not printed): the bf16 rows
  // train in bf16 on the megatron-core stack, the MXFP8 rows in fp8 with the mxfp8 recipe.
  // The 26.02 DeepSeek-V3 rows ran the recipe's multi-token-prediction module (their framework
  // text: mtp_num_layers 1): the built-in file inline with mtp_layers 1. The 25.11 row is
  // "w/o MTP".
  struct Expected {
    std::string id, model, precision;
    std::int64_t ep, pp, vp, mtp;
  };
  const std::vector<Expected> moe_rows = {
      {"mbridge-2602-gb200-deepseek-v3-mxfp8-256gpu", "deepseek-v3", "fp8", 64, 4, 4, 1},
      {"mbridge-2511-gb200-deepseek-v3-bf16-256gpu", "deepseek-v3", "bf16", 64, 4, 4, 0},
      {"mbridge-2602-b200-deepseek-v3-mxfp8-256gpu", "deepseek-v3", "fp8", 8, 16, 1, 1},
      {"mbridge-2511-gb200-qwen3-235b-a22b-bf16-256gpu", "qwen3-235b-a22b", "bf16", 32, 8, 3, 0},
      {"mbridge-2602-b200-qwen3-235b-a22b-mxfp8-256gpu", "qwen3-235b-a22b", "fp8", 8, 8, 1, 0},
      {"mbridge-2602-b200-qwen3-30b-a3b-mxfp8-8gpu", "qwen3-30b-a3b", "fp8", 8, 1, 1, 0},
  };
  for (const Expected& e : moe_rows) {
    INFO(e.id);
    const Mapping m = mapped(row(e.id));
    if (e.mtp == 0) {
      CHECK(m.base["model"] == e.model);
    } else {
      CHECK(m.base["model"]["name"] == e.model);
      CHECK(m.base["model"]["mtp_layers"] == e.mtp);
      CHECK(m.base["model"]["layers"] == 61);
    }
    CHECK(m.base["parallel"]["ep"] == e.ep);
    CHECK(m.base["parallel"]["tp"] == 1);
    CHECK(m.base["parallel"]["pp"] == e.pp);
    CHECK(m.virtual_stages == std::vector<std::int64_t>{e.vp});
    CHECK(m.micro_batches == std::vector<std::int64_t>{1});
    CHECK(m.base["training"]["precision"] == e.precision);
    CHECK(m.base["stack"]["id"] == "megatron-core");
    if (e.precision == "fp8") CHECK(m.base["stack"]["fp8"]["recipe"] == "mxfp8");
    // What the rows' code ran, not a search (the rows' zero_stage_or_fsdp and
    // activation_recompute, read from Megatron-Bridge 0.2.0 / 0.3.0): the recipes' distributed
    // optimizer, the perf scripts' gradients reduced in the training dtype, and their recompute:
    // none for Qwen3, the MLA up-projections for DeepSeek-V3 (selective with the stack's
    // selective policy mla_up_proj, inline, and said so).
    CHECK(m.base["parallel"]["sharding"] == "zero1");
    CHECK(m.base["stack"]["gradient_reduce_dtype"] == "precision");
    CHECK_FALSE(m.search_recompute);
    const bool deepseek = e.model == "deepseek-v3";
    CHECK(m.recomputes == std::vector<parallel::Recompute>{deepseek ? parallel::Recompute::Selective
                                                                    : parallel::Recompute::None});
    CHECK((m.base["stack"].contains("recompute") &&
           m.base["stack"]["recompute"]["selective"] == "mla_up_proj") == deepseek);
    CHECK(std::any_of(m.assumptions.begin(), m.assumptions.end(), [](const std::string& a) {
            return a.find("stack recompute.selective mla_up_proj") != std::string::npos;
          }) == deepseek);
    // DeepSeek-V3's recipe lays its 61 layers out as 15 chunks of 4 and one of 1
    // (set_deepseek_v3_pipeline_model_parallel_layout, from the rows' framework text).
    if (deepseek) {
      std::vector<std::int64_t> layout(15, 4);
      layout.push_back(1);
      CHECK(m.base["parallel"]["pipeline_layout"] == nlohmann::json(layout));
    } else {
      CHECK_FALSE(m.base["parallel"].contains("pipeline_layout"));
    }
    CHECK(m.metric == Metric::TokensPerSecondPerGpu);
  }
  // A row naming an MoE model without its EP degree is skipped, naming the key.
  PublishedRun no_ep = row("mbridge-2511-gb200-deepseek-v3-bf16-256gpu");
  no_ep.ep.reset();
  CHECK_THAT(skip_reason(no_ep), Contains("extra_metrics.ep"));
  // NeMo 25.02's Mixtral row says only "FP8" (no recipe); the DeepSeek-V3 report recomputes
  // RMSNorm and the MLA up-projections, none of trainsim's recompute modes.
  CHECK_THAT(skip_reason(row("nemo-2502-b200-mixtral-8x7b-fp8-64gpu")),
             Contains("names no scaling recipe"));
  CHECK_THAT(skip_reason(row("deepseek-v3-report-h800-2048gpu")),
             Contains("activation recompute 'partial"));
  CHECK(find_source(row("mbridge-2602-gb200-deepseek-v3-mxfp8-256gpu"))->name ==
        "nvidia-perf-summary");
  CHECK(find_source(row("nemo-2502-b200-mixtral-8x7b-fp8-64gpu"))->name == "nvidia-perf-summary");
  CHECK(find_source(row("deepseek-v3-report-h800-2048gpu"))->name == "deepseek-v3-report");
}

TEST_CASE("validate: the Megatron-Bridge GB200 rows fill 16 trays of each rack", "[validation]") {
  // Megatron-Bridge's slurm_executor (scripts/performance/utils/executors.py, v0.2.0 and
  // v0.3.0) gives a 4-GPU-per-host job --segment = the largest divisor of its node count up to
  // 18: 256 GPUs = 64 nodes -> 16 (64 = 4 x 16; 18 and 17 do not divide it); 64 GPUs = 16
  // nodes -> 16. Rows on other hardware carry no such key.
  for (const char* id :
       {"mbridge-2602-gb200-llama3.1-405b-fp8-256gpu", "mbridge-2602-gb200-llama3-70b-mxfp8-64gpu",
        "mbridge-2602-gb200-deepseek-v3-mxfp8-256gpu", "mbridge-2511-gb200-deepseek-v3-bf16-256gpu",
        "mbridge-2511-gb200-qwen3-235b-a22b-bf16-256gpu"}) {
    INFO(id);
    const Mapping m = mapped(row(id));
    CHECK(m.base["hardware"] == "gb200-nvl72");
    CHECK(m.base["cluster"]["nodes_per_domain"] == 16);
    CHECK(std::any_of(m.assumptions.begin(), m.assumptions.end(), [](const std::string& a) {
      return a.rfind("nodes_per_domain 16: ", 0) == 0;
    }));
  }
  for (const char* id :
       {"mbridge-2602-h100-llama3-70b-fp8-64gpu", "mbridge-2602-b200-deepseek-v3-mxfp8-256gpu"}) {
    INFO(id);
    CHECK_FALSE(mapped(row(id)).base["cluster"].contains("nodes_per_domain"));
  }
  // A GB200 row of fewer GPUs than a tray (2: tp 2) has no node count to divide: no key.
  PublishedRun small = row("mbridge-2602-gb200-llama3-70b-mxfp8-64gpu");
  small.gpus = 2;
  small.tp = 2;
  small.pp = 1;
  small.dp = 1;
  small.virtual_pp.reset();
  small.grad_accum.reset();  // the row's 32 was for its dp; with dp 1 it would not fit
  CHECK_FALSE(mapped(small).base["cluster"].contains("nodes_per_domain"));
}

TEST_CASE("validate: fp8 rows map their precision text to a Transformer Engine recipe",
          "[validation][fp8]") {
  const auto recipe = [](const std::string& text) {
    const auto r = parse_fp8_recipe(text);
    return r ? r->recipe : std::string("none");
  };
  CHECK(recipe("fp8 (FP8-CS: per-tensor current scaling; 624 tokens/s with FP8-MX in "
               "parentheses)") == "current");
  CHECK(recipe("fp8 (Transformer Engine FP8, per-tensor current scaling 'FP8' in the table)") ==
        "current");
  CHECK(recipe("mxfp8") == "mxfp8");
  CHECK(recipe("FP8-MX") == "mxfp8");
  CHECK(recipe("fp8 delayed scaling") == "delayed");
  CHECK(recipe("fp8 blockwise") == "blockwise");
  CHECK(recipe("bf16_with_fp8_subchannel_scaling_mixed") == "blockwise");
  CHECK(recipe("fp8 hybrid") == "none");
  CHECK(recipe("bf16") == "none");
  // DeepSeek-V3's 1x128 / 128x128 block scaling is Transformer Engine's Float8BlockScaling,
  // which its H800 (Hopper) runs; it was priced as mxfp8, which Hopper cannot run.
  const auto ds = parse_fp8_recipe(*row("deepseek-v3-report-h800-2048gpu").precision);
  REQUIRE(ds.has_value());
  CHECK(ds->recipe == "blockwise");
  CHECK(ds->assumption.empty());
  // The dense FP8 Llama 3.1 405B rows: fp8 on megatron-core with current scaling, sequence
  // parallelism from the source's recipes (tp 4, not printed).
  for (const char* id : {"mbridge-2602-gb200-llama3.1-405b-fp8-256gpu",
                         "mbridge-2511-b200-llama3.1-405b-fp8-128gpu"}) {
    INFO(id);
    const Mapping m = mapped(row(id));
    CHECK(m.base["training"]["precision"] == "fp8");
    CHECK(m.base["stack"]["fp8"]["recipe"] == "current");
    CHECK(m.base["parallel"]["sequence_parallel"] == true);
    CHECK(std::any_of(m.assumptions.begin(), m.assumptions.end(), [](const std::string& a) {
      return a.find("fp8 recipe current") != std::string::npos;
    }));
  }
}

TEST_CASE("validate: the DeepSeek-V3 report row's throughput follows from its GPU-hours",
          "[validation][moe]") {
  // 180K H800 GPU-hours per trillion tokens: 1e12 / (180,000 x 3600 s) = 1543.2 tokens/s/GPU;
  // at the steady global batch of 15360 sequences of 4096 on 2048 GPUs one iteration takes
  // 15360 x 4096 / (1543.2 x 2048) = 19.91 s. PP 16, no TP: dp = 2048 / 16 = 128.
  const PublishedRun& r = row("deepseek-v3-report-h800-2048gpu");
  CHECK(*r.tokens_per_s_per_gpu == Approx(1e12 / (180e3 * 3600.0)).epsilon(1e-4));
  CHECK(*r.iteration_time_s ==
        Approx(15360.0 * 4096.0 / (1e12 / (180e3 * 3600.0) * 2048.0)).epsilon(1e-3));
  CHECK(*r.tp * *r.pp * *r.cp * *r.dp == *r.gpus);
  CHECK(*r.dp == 128);
}

TEST_CASE("validate: Blackwell and H800 rows map to their profiles", "[validation]") {
  std::string reason;
  PublishedRun run = row("mbridge-2602-gb200-llama3.1-405b-fp8-256gpu");
  CHECK(choose_hardware(run, reason)->id == "gb200-nvl72");
  run.gpus_per_node = 8;  // GB200 NVL72 holds 4 GPUs per compute tray
  CHECK_THAT(choose_hardware(run, reason)->assumptions.at(0),
             Contains("8 GPUs per node simulated as gb200-nvl72's 4"));
  CHECK(choose_hardware(row("mbridge-2511-b200-llama3.1-405b-fp8-128gpu"), reason)->id ==
        "b200-dgx");
  const auto h800 = choose_hardware(row("deepseek-v3-report-h800-2048gpu"), reason);
  CHECK(h800->id == "h800-dgx");
  CHECK(h800->assumptions.empty());  // 8 per node, as the profile
  run.gpu = "GB300";
  CHECK_FALSE(choose_hardware(run, reason).has_value());
  CHECK_THAT(reason, Contains("no built-in hardware profile for GPU 'GB300'"));
  // H200 SXM rows run on h200-dgx (141 GB); the PCIe and NVL cards and Grace Hopper, whose
  // clocks, power or memory differ from the SXM parts', have no profile. GB200 NVL72 is not
  // an NVL card.
  run = row("deepseek-v3-report-h800-2048gpu");
  run.memory_gb = std::nullopt;
  run.gpu = "H200 SXM";
  CHECK(choose_hardware(run, reason)->id == "h200-dgx");
  run.memory_gb = 141.0;
  CHECK(choose_hardware(run, reason)->id == "h200-dgx");
  run.memory_gb = std::nullopt;
  for (const char* card :
       {"H100 NVL", "H100 PCIe", "H100-PCIE-80GB", "H200 NVL", "GH200", "H100NVL", "H100 PCI-e",
        "H100 PCI Express", "H800 PCIe", "Grace Hopper Superchip (H100)"}) {
    INFO(card);
    run.gpu = card;
    CHECK_FALSE(choose_hardware(run, reason).has_value());
    CHECK_THAT(reason, Contains("the PCIe and NVL cards and the Grace Hopper superchips"));
  }
  // The links are not cards, and GH100 is the die of every H100.
  for (const char* sxm : {"H100 (SXM, NVLink)", "H100 (GH100)", "H100 SXM5, NVSwitch"}) {
    INFO(sxm);
    run.gpu = sxm;
    CHECK(choose_hardware(run, reason)->id == "h100-dgx");
  }
  // A model is named whole: an RTX A1000 is not an A100 (it ran as a100-dgx, 80 GB); the A100
  // and V100 PCIe cards are not the SXM parts of a100-dgx and v100-dgx (they ran as them).
  run.gpu = "NVIDIA RTX A1000";
  CHECK_FALSE(choose_hardware(run, reason).has_value());
  CHECK_THAT(reason, Contains("no built-in hardware profile for GPU 'NVIDIA RTX A1000'"));
  for (const char* card : {"A100 PCIe 80GB", "A100-PCIE-40GB", "V100 PCIe"}) {
    INFO(card);
    run.gpu = card;
    CHECK_FALSE(choose_hardware(run, reason).has_value());
    CHECK_THAT(reason, Contains("the PCIe cards are not the SXM parts of a100-dgx and v100-dgx"));
  }
  run.gpu = "A100-SXM4-80GB";
  CHECK(choose_hardware(run, reason)->id == "a100-dgx");
  CHECK(choose_hardware(run, reason)->assumptions.empty());
  // Memory unstated and not of 2020: the 80GB part, listed (it was taken without a word).
  run.gpu = "A100";
  const auto unstated = choose_hardware(run, reason);
  REQUIRE(unstated.has_value());
  CHECK(unstated->id == "a100-dgx");
  CHECK_THAT(unstated->assumptions,
             Catch::VectorContains(std::string(
                 "A100 with its memory unstated (not of 2020): the 80GB part of a100-dgx")));
  // A V100 has no bf16 tensor cores (v100-dgx's peak_dense bf16 is 0): the row is skipped in its
  // own terms, where the scenario's check named --precision, a flag a runs file does not have.
  PublishedRun v100 = row("megatron2020-v100-dgx2-1B-1gpu");
  v100.precision = "bf16";
  CHECK(skip_reason(v100) ==
        "precision 'bf16' (bf16) on profile 'v100-dgx', whose GPU has no bf16 tensor cores (its "
        "peak_dense bf16 is 0); expected a precision the GPU runs");
  // The same plan in bf16 with sequence parallelism stated maps to a GB200 scenario on the
  // Megatron-Core stack, every degree as printed (tp 4, pp 16, 4 model chunks, dp 4).
  run = row("mbridge-2602-gb200-llama3.1-405b-fp8-256gpu");
  run.precision = "bf16";
  run.sequence_parallel = true;
  const Mapping m = mapped(run);
  CHECK(m.source->name == "nvidia-perf-summary");
  CHECK(m.hardware == "gb200-nvl72");
  CHECK(m.base["hardware"] == "gb200-nvl72");
  CHECK(m.base["stack"]["id"] == "megatron-core");
  // The recipe's distributed optimizer and no recompute (the row's zero_stage_or_fsdp and
  // activation_recompute, from Megatron-Bridge 0.3.0's code); bf16 gradients reduced in bf16
  // (the perf scripts' grad_reduce_in_fp32=False) where the stack's --bf16 default is fp32.
  CHECK(m.base["parallel"]["sharding"] == "zero1");
  CHECK(m.recomputes == std::vector<parallel::Recompute>{parallel::Recompute::None});
  CHECK(m.base["stack"]["gradient_reduce_dtype"] == "precision");
  // The recipe counts the embedding and the loss in the pipeline split (the row's framework
  // text): 126 + 2 = 128 slots, 2 per model chunk of pp 16 x 4.
  CHECK(m.base["parallel"]["account_for_embedding_in_pipeline_split"] == true);
  CHECK(m.base["parallel"]["account_for_loss_in_pipeline_split"] == true);
  CHECK(m.base["parallel"]["tp"] == 4);
  CHECK(m.base["parallel"]["pp"] == 16);
  CHECK(m.virtual_stages == std::vector<std::int64_t>{4});
  CHECK(m.micro_batches == std::vector<std::int64_t>{1});
  CHECK(m.base["model"]["layers"] == 126);
  CHECK(m.base["model"]["activation"] == "swiglu");
  CHECK(m.metric == Metric::TokensPerSecondPerGpu);
  CHECK(m.measured == 793.0);
}

TEST_CASE("validate: BLOOM's Omni-Path network maps to four 100 Gb/s links per node",
          "[validation]") {
  // The row's inter_node: "Omni-Path Architecture, 4 OmniPath links per node" (Jean Zay).
  // Omni-Path 100 series links run at 100 Gb/s; NCCL moves about 12 GB/s per such NIC
  // (docs/sources.md C.4), so each multi-node graph has 4 channels of 12 GB/s.
  std::string reason;
  const auto hw = choose_hardware(row("bloom176b-384gpu"), reason);
  REQUIRE(hw.has_value());
  CHECK(hw->id == "a100-opa4x100");
  CHECK(hw->document["fabric"]["nics_per_node"] == 4);
  CHECK(hw->document["fabric"]["nic_bandwidth"] == "100 Gb/s");
  CHECK(hw->document["collective"]["graphs"]["ring"]["multi_node"]["channels"] == 4);
  CHECK(hw->document["collective"]["graphs"]["tree"]["multi_node"]["bw_inter"] == "12 GB/s");
  CHECK_THAT(hw->assumptions.back(), Contains("Omni-Path"));
  // A row on InfiniBand keeps the built-in profile by name.
  PublishedRun ib = row("bloom176b-384gpu");
  ib.inter_node = "8x NVIDIA Mellanox 200 Gb/s HDR InfiniBand HCAs per node";
  CHECK(choose_hardware(ib, reason)->document == "a100-dgx");
}

TEST_CASE("validate: Narayanan eq. 3 reproduces the printed TFLOP/s", "[validation][flops]") {
  // megatron2020-v100-dgx2-1B-1gpu: B 8, s 1024, l 24, h 1920, V 51200, 1.121 s, 71.9 TFLOP/s.
  // F = 96 * 8 * 1024 * 24 * 1920^2 * (1 + 1024/11520 + 51200/737280)
  //   = 6.95784701952e13 * 1.158333... = 8.05950613e13; / 1.121 s = 71.90 TFLOP/s.
  const Mapping m = mapped(row("megatron2020-v100-dgx2-1B-1gpu"));
  io::ScenarioDocument doc;
  doc.json = candidate_document(m, 8, 1, parallel::Recompute::Full);
  const parallel::Scenario s = io::scenario_from_document(doc);
  const SourceFlops f =
      source_flops(FlopConvention::Narayanan2021, s.model, 8, 1024, parallel::Recompute::Full);
  const double expected =
      96.0 * 8 * 1024 * 24 * 1920.0 * 1920.0 * (1.0 + 1024.0 / 11520.0 + 51200.0 / 737280.0);
  CHECK(f.model.value() == Approx(expected).epsilon(1e-12));
  CHECK(f.hardware.value() == Approx(expected).epsilon(1e-12));
  CHECK(f.model.value() / 1.121 / 1e12 == Approx(71.9).epsilon(1e-3));
  CHECK(tflops_count_hardware_flops(FlopConvention::Narayanan2021));
}

TEST_CASE("validate: Korthikanti 2022 MFU and HFU from the printed iteration time",
          "[validation][flops]") {
  // korthikanti22-22B-selective-sp: B 4, L 48, s 2048, h 6144, v 51200, 8 GPUs, 1.1 s; printed
  // MFU 41.5 %, HFU 43.7 % of 312 TFLOP/s.
  // model    = 72 * 4 * 48 * 2048 * 6144^2 * (1 + 2048/36864 + 51200/3538944) = 1.14358e15
  // hardware = 72 * 4 * 48 * 2048 * 6144^2 * (1 + 2048/18432 + 51200/3538944) = 1.20294e15
  // MFU = 1.14358e15 / (1.1 * 8 * 312e12) = 0.4165; HFU = 0.4381.
  const Mapping m = mapped(row("korthikanti22-22B-selective-sp"));
  io::ScenarioDocument doc;
  doc.json = candidate_document(m, 4, 1, parallel::Recompute::Selective);
  const parallel::Scenario s = io::scenario_from_document(doc);
  const SourceFlops f = source_flops(FlopConvention::Korthikanti2022, s.model, 4, 2048,
                                     parallel::Recompute::Selective);
  const double base = 72.0 * 4 * 48 * 2048 * 6144.0 * 6144.0;
  CHECK(f.model.value() ==
        Approx(base * (1.0 + 2048.0 / 36864.0 + 51200.0 / 3538944.0)).epsilon(1e-12));
  CHECK(f.hardware.value() ==
        Approx(base * (1.0 + 2048.0 / 18432.0 + 51200.0 / 3538944.0)).epsilon(1e-12));
  const double denominator = 1.1 * 8 * 312e12;
  CHECK(f.model.value() / denominator == Approx(0.415).epsilon(5e-3));
  CHECK(f.hardware.value() / denominator == Approx(0.437).epsilon(5e-3));
  // Full recompute: every layer's forward twice = eq. 3.
  const SourceFlops full =
      source_flops(FlopConvention::Korthikanti2022, s.model, 4, 2048, parallel::Recompute::Full);
  CHECK(full.hardware.value() ==
        Approx(model::megatron_flops_per_iteration(s.model, 4, 2048).value()).epsilon(1e-12));
}

TEST_CASE("validate: Megatron-Core's count equals Korthikanti's for a GPT-3 block",
          "[validation][flops]") {
  // Multi-head attention (g/a = 1), q = h, ffn 4h, no gating:
  // 12 B s L h^2 ((1 + 1 + s/h) + 4 + V/2Lh) = 72 B s L h^2 (1 + s/6h + V/12Lh).
  model::ModelSpec m{.id = "gpt3-like",
                     .num_layers = 96,
                     .hidden = 12288,
                     .num_heads = 96,
                     .num_kv_heads = 96,
                     .head_dim = 128,
                     .ffn_hidden = 49152,
                     .vocab = 131072,
                     .activation = model::Activation::Gelu};
  const auto core =
      source_flops(FlopConvention::MegatronCore2024, m, 1152, 4096, parallel::Recompute::None);
  const auto korthikanti =
      source_flops(FlopConvention::Korthikanti2022, m, 1152, 4096, parallel::Recompute::None);
  CHECK(core.model.value() == Approx(korthikanti.model.value()).epsilon(1e-12));
  // SwiGLU multiplies the MLP term by 3/2; GQA with 8 of 64 groups shrinks K and V.
  m.activation = model::Activation::SwiGlu;
  m.num_kv_heads = 8;
  const double h = 12288, s = 4096, l = 96, v = 131072, f = 49152;
  const double expected =
      12.0 * 1152 * s * l * h * h *
      ((1.0 + 8.0 / 96.0 + s / h) * (96.0 * 128.0 / h) + f / h * 1.5 + v / (2.0 * l * h));
  CHECK(source_flops(FlopConvention::MegatronCore2024, m, 1152, 4096, parallel::Recompute::None)
            .model.value() == Approx(expected).epsilon(1e-12));
}

TEST_CASE("validate: torchtitan and llm-foundry count 6N + 12Lhs with embeddings",
          "[validation][flops]") {
  // A toy model: 1 layer, hidden 4, 1 head, ffn 16, vocab 10, LayerNorm, tied, learned
  // positions (8 rows), no biases. N = attention 4 * 4 * 4 = 64 + MLP 2 * 4 * 16 = 128 + norms
  // 2 * (2 * 4) = 16, embedding 10 * 4 = 40, positions 8 * 4 = 32, final norm 8: 288.
  const model::ModelSpec m{.id = "toy",
                           .num_layers = 1,
                           .hidden = 4,
                           .num_heads = 1,
                           .num_kv_heads = 1,
                           .head_dim = 4,
                           .ffn_hidden = 16,
                           .vocab = 10,
                           .activation = model::Activation::Gelu,
                           .norm = model::Norm::LayerNorm,
                           .tied_embeddings = true,
                           .position_embedding = model::PositionEmbedding::Learned,
                           .max_positions = 8};
  REQUIRE(model::num_parameters(m) == 288);
  // 2 sequences of 8 tokens: per token 6 * 288 + 12 * 1 * 4 * 8 = 2112; x 16 = 33792. HFU with
  // checkpointing: 8 * 288 + 16 * 1 * 4 * 8 = 2816; x 16 = 45056.
  const auto none =
      source_flops(FlopConvention::PalmWithEmbeddings, m, 2, 8, parallel::Recompute::None);
  CHECK(none.model.value() == Approx(33792.0).epsilon(1e-12));
  CHECK(none.hardware.value() == Approx(33792.0).epsilon(1e-12));
  const auto full =
      source_flops(FlopConvention::PalmWithEmbeddings, m, 2, 8, parallel::Recompute::Full);
  CHECK(full.hardware.value() == Approx(45056.0).epsilon(1e-12));
}

namespace {

// The MFU llm-foundry prints for a row measured at `tokens_per_gpu`, recomputed from the row's
// mapped model at micro-batch `micro_batch` (seq 2048) in its count, 6N + 12 L h s per token
// with N every parameter, against `peak` FLOP/s.
double foundry_mfu(const std::string& id, std::int64_t micro_batch, double tokens_per_gpu,
                   double peak) {
  io::ScenarioDocument doc;
  doc.json = candidate_document(mapped(row(id)), micro_batch, 1, parallel::Recompute::None);
  const parallel::Scenario s = io::scenario_from_document(doc);
  const auto f =
      source_flops(FlopConvention::PalmWithEmbeddings, s.model, 1, 2048, parallel::Recompute::None);
  return tokens_per_gpu * f.model.value() / 2048.0 / peak;
}

}  // namespace

TEST_CASE("validate: llm-foundry's printed MFU follows from its throughput",
          "[validation][flops]") {
  // foundry-a100-40g-mpt-1b-s2048-g8-mb8: 19271 tokens/s per GPU, MFU 56.23 % of 312 TFLOP/s.
  // N = 24 * (12 * 2048^2 + 2 * 2 * 2048) + 50368 * 2048 + 2048 * 2048 + 2 * 2048 = 1.3155e9;
  // per token 6N + 12 * 24 * 2048 * 2048 = 9.1011e9; 19271 * 9.1011e9 / 312e12 = 0.5621.
  CHECK(foundry_mfu("foundry-a100-40g-mpt-1b-s2048-g8-mb8", 8, 19271.0, 312e12) ==
        Approx(0.5623).epsilon(2e-3));
}

TEST_CASE("validate: llm-foundry's H100 rows are a source of their own on h100-dgx",
          "[validation][flops]") {
  // foundry-h100-80g-mpt-7b-s2048-g8-mb6 (section 'H100 80GB BF16'): 10643 tokens/s per GPU,
  // MFU 46.44 % of 989 TFLOP/s. N = 32 * (12 * 4096^2 + 2 * 2 * 4096) + 50368 * 4096 +
  // 2048 * 4096 + 2 * 4096 = 6.6577e9; per token 6N + 12 * 32 * 4096 * 2048 = 4.3167e10;
  // 10643 * 4.3167e10 / 989e12 = 0.4645.
  const Mapping m = mapped(row("foundry-h100-80g-mpt-7b-s2048-g8-mb6"));
  CHECK(m.source->name == "llm-foundry-h100");
  CHECK(m.base["hardware"] == "h100-dgx");
  // The tables' own software: llm-foundry-torch21, llm-foundry's kernels with its own time per
  // step beyond the GPU work.
  CHECK(m.base["stack"]["id"] == "llm-foundry-torch21");
  CHECK(m.base["stack"]["extends"] == "llm-foundry");
  const stack::StackSpec resolved = io::stack_from_json(m.base["stack"], "row", "/stack");
  CHECK(resolved.iteration_overhead == io::load_stack("llm-foundry-torch21").iteration_overhead);
  CHECK(resolved.iteration_overhead > Seconds(0.0));
  CHECK(resolved.elementwise_traffic == io::load_stack("llm-foundry").elementwise_traffic);
  // "mixed_precision DEFAULT": Composer reduces gradients in fp32, inlined into the stack.
  CHECK(m.base["stack"]["gradient_reduce_dtype"] == "fp32");
  CHECK(m.stack_overrides["gradient_reduce_dtype"] == "fp32");
  // ... and its source says why, in place of the stack's own (PURE) reason.
  CHECK(m.base["stack"]["sources"]["gradient_reduce_dtype"].get<std::string>().find("DEFAULT") !=
        std::string::npos);
  // The A100 rows of the same README stay with the fitted source; PURE keeps the stack's own
  // reduction (in the training precision), by name.
  const Mapping pure = mapped(row("foundry-a100-40g-mpt-1b-s2048-g8-mb8"));
  CHECK(pure.source->name == "llm-foundry");
  CHECK(pure.base["stack"] == "llm-foundry");
  CHECK(pure.stack_overrides.empty());
  CHECK(foundry_mfu("foundry-h100-80g-mpt-7b-s2048-g8-mb6", 6, 10643.0, 989e12) ==
        Approx(0.4644).epsilon(2e-3));
}

TEST_CASE("validate: script settings in a row's framework text become stack keys", "[validation]") {
  std::string reason;
  // No setting named: nothing to merge.
  const auto none = parse_script_settings("llm-foundry / Composer + PyTorch FSDP", reason);
  REQUIRE(none);
  CHECK(none->stack_overrides.empty());
  CHECK(none->assumptions.empty());
  // FSDP1 with forward prefetching under the rate limiter: the gather of layer l waits for
  // layer l - 3 (the limiter's 2 reshard events plus the prefetch one unit ahead).
  const auto all = parse_script_settings(
      "attn_impl flash, limit_all_gathers true, forward_prefetch true, "
      "backward_prefetch BACKWARD_PRE",
      reason);
  REQUIRE(all);
  CHECK(all->stack_overrides["attention_speed"] == 1.0);
  CHECK(all->stack_overrides["fsdp"]["forward_prefetch"] == 3);
  CHECK(all->stack_overrides["fsdp"]["backward_prefetch"] == "backward_pre");
  CHECK(all->assumptions.size() == 3);
  // triton keeps the stack's own attention speed; BACKWARD_POST is recorded as such.
  const auto triton =
      parse_script_settings("attn_impl triton, backward_prefetch BACKWARD_POST", reason);
  REQUIRE(triton);
  CHECK_FALSE(triton->stack_overrides.contains("attention_speed"));
  CHECK(triton->stack_overrides["fsdp"]["backward_prefetch"] == "backward_post");
  // Forward prefetching without the limiter has no depth a stack key describes: skipped.
  CHECK_FALSE(parse_script_settings("forward_prefetch true", reason));
  CHECK_THAT(reason, Contains("limit_all_gathers"));
  // Megatron-Core's multi-token-prediction modules become the model key; a count that is not a
  // number skips the row.
  const auto mtp =
      parse_script_settings("recipe; multi-token prediction mtp_num_layers 2 (x)", reason);
  REQUIRE(mtp);
  CHECK(mtp->model_overrides["mtp_layers"] == 2);
  CHECK(mtp->stack_overrides.empty());
  CHECK(none->model_overrides.empty());
  CHECK_FALSE(parse_script_settings("mtp_num_layers one", reason));
  CHECK_THAT(reason, Contains("mtp_num_layers"));
  // Megatron-Core's fused loss kernel: the stack's fused cross entropy. Every Megatron-Bridge row
  // ran it (its model providers' default), so its mapped stack carries it.
  const auto loss = parse_script_settings("loss cross_entropy_loss_fusion True (te)", reason);
  REQUIRE(loss);
  CHECK(loss->stack_overrides["loss"]["cross_entropy"] == "fused");
  CHECK_FALSE(none->stack_overrides.contains("loss"));
  const Mapping bridge = mapped(row("mbridge-2602-b200-qwen3-30b-a3b-mxfp8-8gpu"));
  CHECK(bridge.base["stack"]["loss"]["cross_entropy"] == "fused");
  CHECK(io::stack_from_json(bridge.base["stack"], "row", "/stack").unfused_cross_entropy == false);
  CHECK(io::load_stack("megatron-core").unfused_cross_entropy);
}

TEST_CASE("validate: llm-foundry's large-scale H100 rows run their sweep script's settings",
          "[validation]") {
  // sweep.py, added with the table in 5e85bd62d: limit_all_gathers, forward_prefetch true,
  // BACKWARD_PRE for every model, attn_impl flash for 1b, 3b, 7b and 70b, triton for 13b, 30b.
  const Mapping flash = mapped(row("foundry-h100-80g-mpt-7b-s2048-g512-mb6"));
  CHECK(flash.base["stack"]["attention_speed"] == 1.0);
  CHECK(flash.base["stack"]["fsdp"]["forward_prefetch"] == 3);
  CHECK(flash.base["stack"]["fsdp"]["backward_prefetch"] == "backward_pre");
  // Composer's DEFAULT mixed precision is kept beside them.
  CHECK(flash.base["stack"]["gradient_reduce_dtype"] == "fp32");
  // The rows' stack extends llm-foundry: what the row leaves to it comes from there.
  const Mapping triton = mapped(row("foundry-h100-80g-mpt-13b-s2048-g512-mb16"));
  const stack::StackSpec builtin = io::load_stack("llm-foundry-torch21");
  const auto resolve = [](const Mapping& m) {
    return io::stack_from_json(m.base["stack"], "row", "/stack");
  };
  CHECK(resolve(triton).attention_speed == builtin.attention_speed);
  CHECK(builtin.attention_speed == io::load_stack("llm-foundry").attention_speed);
  CHECK(resolve(triton).fsdp_forward_prefetch == 3);
  // The 8-GPU table's rows (sweep.sh at b2a43a147) name none: the stack's own prefetch.
  const Mapping small = mapped(row("foundry-h100-80g-mpt-7b-s2048-g8-mb6"));
  CHECK(resolve(small).fsdp_forward_prefetch == builtin.fsdp_forward_prefetch);
  // llm-foundry's limit_all_gathers: PyTorch FSDP's rate limiter, 2 gathers in flight.
  CHECK(builtin.fsdp_forward_prefetch == 2);
  CHECK_FALSE(small.stack_overrides.contains("attention_speed"));
}

TEST_CASE(
    "validate: the H100 tables' time per step, fitted to the 8-GPU table, predicts the "
    "large-scale table",
    "[validation]") {
  // llm-foundry-torch21's iteration_overhead is fitted to the 52 rows of llm-foundry's H100
  // 8-GPU table alone (scripts/refit-stacks, fit_apart); the 18 rows of its large-scale table
  // (128 to 512 GPUs, their framework text naming sweep.py) are not in that fit. They must come
  // out better with it than without: docs/validation.md gives 6.9% (bias +5.3%) with it,
  // 21.2% at 0 ms; the bounds below leave about 1.5 points either way. (3.5% and 12.3% while the
  // Hopper profiles slowed GEMMs 2x beside a collective, the measured 0.24 leaving more of each
  // step to the time per step; 7.5% (+3.4%) and 20.1% before llm-foundry's Triton attention
  // speed and elementwise traffic were refitted, which these rows take from its stack.)
  std::vector<PublishedRun> large;
  for (const PublishedRun& run : shipped()) {
    if (run.source_group.find("llm-foundry MPT benchmarks, H100") != std::string::npos &&
        run.framework.find("sweep.py") != std::string::npos) {
      large.push_back(run);
    }
  }
  REQUIRE(large.size() == 18);
  nlohmann::json zero = nlohmann::json::parse(*io::builtin_file("stacks", "llm-foundry-torch21"));
  REQUIRE(io::load_stack("llm-foundry-torch21").iteration_overhead > Seconds(0.0));
  zero["iteration_overhead"] = "0 ms";
  const ValidationReport fitted =
      validate_runs(large, {.jobs = 2, .source_filter = "", .stacks = {}, .stack_files = {}});
  const ValidationReport without = validate_runs(large, {.jobs = 2,
                                                         .source_filter = "",
                                                         .stacks = {{"llm-foundry-torch21", zero}},
                                                         .stack_files = {}});
  REQUIRE(fitted.overall.compared == 18);
  REQUIRE(without.overall.compared == 18);
  INFO("held-out MAPE " << fitted.overall.mape << " with the fitted time per step, "
                        << without.overall.mape << " without");
  CHECK(fitted.overall.mape < 0.085);
  CHECK(without.overall.mape > 0.195);
  CHECK(std::abs(fitted.overall.bias) < 0.07);
}

TEST_CASE("validate: llm-foundry's A100 error does not grow with the sequence length",
          "[validation]") {
  // The llm-foundry stack's attention_speed (FlashAttention in Triton against FlashAttention-2)
  // is fitted beside its elementwise_traffic to these rows (scripts/refit-stacks); the
  // sequence length sets the attention's share of the work, so the speed is what the trend
  // across sequence lengths measures. At the earlier assumption (1/1.80, with 1.75) the rows of
  // 16,384 to 65,536 tokens came out +5.8% on average and those of 512 and 1,024 -2.2%, 7.9
  // points apart; with the fit -0.7% and -1.0% (docs/validation.md, "Fitted stack parameters").
  // Within 3 points either way.
  std::vector<PublishedRun> a100;
  for (const PublishedRun& run : shipped()) {
    if (run.source_group == "MosaicML llm-foundry MPT benchmarks") {  // the A100 tables
      a100.push_back(run);
    }
  }
  REQUIRE(a100.size() == 139);
  const ValidationReport report =
      validate_runs(a100, {.jobs = 2, .source_filter = "", .stacks = {}, .stack_files = {}});
  REQUIRE(report.overall.compared == 139);
  double long_sum = 0.0;
  double short_sum = 0.0;
  int long_rows = 0;
  int short_rows = 0;
  for (std::size_t i = 0; i < a100.size(); ++i) {
    REQUIRE(report.rows[i].id == a100[i].id);
    const std::int64_t seq = a100[i].seq_len.value_or(0);
    if (seq >= 16384) {
      long_sum += report.rows[i].error;
      ++long_rows;
    } else if (seq <= 1024) {
      short_sum += report.rows[i].error;
      ++short_rows;
    }
  }
  REQUIRE(long_rows == 31);
  REQUIRE(short_rows > 20);
  const double gap = long_sum / long_rows - short_sum / short_rows;
  INFO("mean error, 16K-64K tokens minus 512-1K tokens: " << gap);
  CHECK(std::abs(gap) < 0.03);
}

TEST_CASE("validate: a measured throughput above the GPU's peak is skipped as a unit mistake",
          "[validation]") {
  const ValidationOptions options{.jobs = 1, .source_filter = "", .stacks = {}, .stack_files = {}};
  // narayanan21-t1-1.7B-32gpu measured 137 TFLOP/s on an A100 (312 peak): compared. Ten times
  // that, 1,370, is above any A100's peak; it was compared as a row 89.6% slow.
  PublishedRun flops = row("narayanan21-t1-1.7B-32gpu");
  REQUIRE(validate_runs({flops}, options).rows.front().compared);
  flops.tflops_per_gpu = 1370.0;
  flops.hfu.reset();
  const RowResult over = validate_runs({flops}, options).rows.front();
  CHECK_FALSE(over.compared);
  CHECK(over.skip_reason ==
        "tflops_per_gpu 1370 is above the GPU's peak of 312 TFLOP/s: a unit mistake?");
  // torchtitan's Llama 3 8B on 64 A100 measured 2,973 tokens/s per GPU; the whole cluster's
  // 190,272 in the per-GPU key is 190,272 x 6N = 6 x 7.5e9 = 45 GFLOP per token (the LM head
  // counted, the input embedding not), about 8.6 PFLOP/s per GPU.
  PublishedRun tokens = row("torchtitan-2024-a100-llama3-8b-64gpu-selective-op");
  REQUIRE(validate_runs({tokens}, options).rows.front().compared);
  tokens.tokens_per_s_per_gpu = *tokens.tokens_per_s_per_gpu * 64.0;
  const RowResult cluster = validate_runs({tokens}, options).rows.front();
  CHECK_FALSE(cluster.compared);
  CHECK_THAT(cluster.skip_reason,
             Catch::StartsWith("tokens_per_sec_per_gpu 190272 is ") &&
                 Catch::Contains("above the GPU's peak of 312 TFLOP/s: a unit mistake (the "
                                 "whole cluster's tokens/s, a time in another unit)?"));
}

TEST_CASE("validate: each row that fits nowhere takes its own least-memory report",
          "[validation]") {
  const ValidationOptions options{.jobs = 1, .source_filter = "", .stacks = {}, .stack_files = {}};
  // At sequence 65,536 no searched plan of narayanan21-t1-1.7B-32gpu or -3.6B-64gpu fits an
  // A100 (the activations of one sequence alone exceed 80 GB), so each is simulated at its
  // least-memory plan (fallback). The first, skipped by the peak check (1,370 TFLOP/s), used
  // to leave its report to the next fallback row: the 3.6B row then showed the 1.7B plan's.
  PublishedRun skipped = row("narayanan21-t1-1.7B-32gpu");
  PublishedRun compared = row("narayanan21-t1-3.6B-64gpu");
  skipped.seq_len = 65536;
  compared.seq_len = 65536;
  const RowResult own = validate_runs({compared}, options).rows.front();
  REQUIRE(own.compared);
  REQUIRE_THAT(own.assumptions.back(), Catch::Contains("the one needing the least memory"));
  // The two plans differ, so a report taken from the wrong row shows.
  const RowResult other = validate_runs({skipped}, options).rows.front();
  REQUIRE(other.compared);
  REQUIRE(other.predicted != own.predicted);
  skipped.tflops_per_gpu = 1370.0;
  skipped.hfu.reset();
  const ValidationReport both = validate_runs({skipped, compared}, options);
  REQUIRE(both.rows.size() == 2);
  CHECK_FALSE(both.rows[0].compared);
  REQUIRE(both.rows[1].compared);
  CHECK(both.rows[1].predicted == own.predicted);
}

TEST_CASE("validate: a stack replaced with --stack keeps a row's fp32 gradient reduction",
          "[validation]") {
  // foundry-h100-80g-mpt-13b-s2048-g8-mb2 ran Composer's DEFAULT mixed precision: map_run
  // inlines its stack, llm-foundry-torch21, with gradient_reduce_dtype fp32. Replacing that stack
  // by its own built-in text changed to reduce in the training precision must keep fp32 (the
  // row's) and the prediction.
  const PublishedRun& run = row("foundry-h100-80g-mpt-13b-s2048-g8-mb2");
  nlohmann::json builtin =
      nlohmann::json::parse(*io::builtin_file("stacks", "llm-foundry-torch21"));
  builtin["gradient_reduce_dtype"] = "precision";
  const ValidationReport plain =
      validate_runs({run}, {.jobs = 1, .source_filter = "", .stacks = {}, .stack_files = {}});
  const ValidationReport replaced =
      validate_runs({run}, {.jobs = 1,
                            .source_filter = "",
                            .stacks = {{"llm-foundry-torch21", builtin}},
                            .stack_files = {}});
  REQUIRE(plain.rows.size() == 1);
  REQUIRE(replaced.rows.size() == 1);
  REQUIRE(plain.rows.front().compared);
  CHECK(replaced.rows.front().predicted == plain.rows.front().predicted);
  const auto bf16 = static_cast<std::size_t>(hardware::Dtype::Bf16);
  CHECK(replaced.rows.front().scenario.stack.gradient_reduce_dtype[bf16] == hardware::Dtype::Fp32);
}

TEST_CASE("validate: a stack replaced with --stack keeps an fp8 row's recipe",
          "[validation][fp8]") {
  // The B200 Qwen3-30B-A3B row trains in MXFP8: map_run inlines megatron-core with fp8.recipe
  // mxfp8. Replacing megatron-core by its own built-in text (recipe "delayed") must give the same
  // prediction, the row's recipe carried over; before, the replacement dropped it.
  const PublishedRun& run = row("mbridge-2602-b200-qwen3-30b-a3b-mxfp8-8gpu");
  const nlohmann::json builtin =
      nlohmann::json::parse(*io::builtin_file("stacks", "megatron-core"));
  REQUIRE(builtin["fp8"]["recipe"] == "delayed");
  const ValidationReport plain =
      validate_runs({run}, {.jobs = 1, .source_filter = "", .stacks = {}, .stack_files = {}});
  const ValidationReport replaced = validate_runs(
      {run},
      {.jobs = 1, .source_filter = "", .stacks = {{"megatron-core", builtin}}, .stack_files = {}});
  REQUIRE(plain.rows.size() == 1);
  REQUIRE(replaced.rows.size() == 1);
  REQUIRE(plain.rows.front().compared);
  CHECK(replaced.rows.front().predicted == plain.rows.front().predicted);
  CHECK(replaced.rows.front().scenario.stack.fp8.recipe == stack::Fp8Recipe::Mxfp8);
}

TEST_CASE("validate: the knob search keeps the fastest plan that fits", "[validation]") {
  // megatron-readme-h100-weak-1.7B-48gpu leaves micro-batch and recompute out: 3 x 3 plans.
  const PublishedRun& run = row("megatron-readme-h100-weak-1.7B-48gpu");
  const ValidationReport r =
      validate_runs({run}, {.jobs = 2, .source_filter = "", .stacks = {}, .stack_files = {}});
  REQUIRE(r.rows.size() == 1);
  const RowResult& out = r.rows.front();
  REQUIRE(out.compared);
  CHECK(out.fits);
  CHECK(out.choices.candidates == 9);
  REQUIRE(out.choices.micro_batch.has_value());
  REQUIRE(out.choices.recompute.has_value());
  CHECK(out.scenario.training.micro_batch == *out.choices.micro_batch);
  // No other candidate that fits is faster.
  const Mapping m = mapped(run);
  const double chosen = sweep::evaluate(out.scenario).report->tokens_per_s;
  for (const auto rc : m.recomputes) {
    for (const auto mb : m.micro_batches) {
      io::ScenarioDocument doc;
      doc.json = candidate_document(m, mb, 1, rc);
      const sweep::Evaluation e = sweep::evaluate(io::scenario_from_document(doc));
      if (e.status == sweep::Status::Ok) CHECK(e.report->tokens_per_s <= chosen);
    }
  }
  // The prediction is the source's TFLOP/s: Megatron-Core FLOPs / (time x GPUs).
  CHECK(out.metric == Metric::FlopRatePerGpu);
  CHECK(out.measured == Approx(408.8e12).epsilon(1e-12));
}

TEST_CASE("validate: summaries are mean absolute and mean signed errors", "[validation]") {
  // Errors +10 % and -30 % in source a, +20 % in b, one skipped row in b:
  // a: MAPE 20 %, bias -10 %; b: 20 %, +20 %; overall MAPE (10 + 30 + 20) / 3 = 20 %,
  // bias (10 - 30 + 20) / 3 = 0.
  auto compared = [](std::string source, double error) {
    RowResult r;
    r.source = std::move(source);
    r.compared = true;
    r.error = error;
    return r;
  };
  RowResult skipped;
  skipped.source = "b";
  const ValidationReport r =
      summarize({compared("a", 0.1), compared("b", 0.2), skipped, compared("a", -0.3)});
  REQUIRE(r.sources.size() == 2);
  CHECK(r.sources[0].source == "a");
  CHECK(r.sources[0].mape == Approx(0.2).epsilon(1e-12));
  CHECK(r.sources[0].bias == Approx(-0.1).epsilon(1e-12));
  CHECK(r.sources[1].compared == 1);
  CHECK(r.sources[1].skipped == 1);
  CHECK(r.overall.mape == Approx(0.2).epsilon(1e-12));
  CHECK(r.overall.bias == Approx(0.0).margin(1e-12));
}

TEST_CASE("validate: bad runs files name the file, the row and the key", "[validation][io]") {
  CHECK_NOTHROW(read_published_runs(row_json(), "t.json"));
  REQUIRE_THROWS_WITH(read_published_runs("not json", "t.json"),
                      Contains("t.json") && Contains("invalid JSON"));
  REQUIRE_THROWS_WITH(read_published_runs("{}", "t.json"),
                      Contains("t.json") && Contains("expected a JSON array of published runs"));
  std::string text = row_json();
  text.replace(text.find("\"tp\": 1"), 7, "\"tp\": \"1\"");
  REQUIRE_THROWS_AS(read_published_runs(text, "t.json"), ConfigError);
  REQUIRE_THROWS_WITH(read_published_runs(text, "t.json"),
                      Contains("t.json: /0/tp: expected an integer"));
  text = row_json();
  text.replace(text.find("\"mfu\": null"), 11, "\"mfu\": 41");
  REQUIRE_THROWS_WITH(read_published_runs(text, "t.json"),
                      Contains("/0/mfu: expected a fraction in (0, 1]"));
  REQUIRE_THROWS_WITH(read_published_runs(row_json(" \"tpp\": 2,"), "t.json"),
                      Contains("/0/tpp: unknown key"));
  text = row_json();
  text.erase(text.find("\"cp\": 1,"), 8);
  REQUIRE_THROWS_WITH(read_published_runs(text, "t.json"),
                      Contains("/0/cp: missing required key; expected an integer >= 1 or null"));
  // A missing measurement says what it holds: mfu a fraction, the others positive numbers.
  text = row_json();
  text.erase(text.find("\"mfu\": null,"), 13);
  REQUIRE_THROWS_WITH(
      read_published_runs(text, "t.json"),
      Contains("/0/mfu: missing required key; expected a fraction in (0, 1] or null"));
  text = row_json();
  text.erase(text.find("\"iteration_time_s\": null,"), 26);
  REQUIRE_THROWS_WITH(
      read_published_runs(text, "t.json"),
      Contains("/0/iteration_time_s: missing required key; expected a positive number or null"));
  // Two peaks that disagree: which one the MFU divides by cannot be told (the first in name
  // order used to win). The same value twice is one peak.
  text = row_json();
  text.replace(text.find("\"memory_gb\": 80}"), 16,
               R"("memory_gb": 80, "peak_tflops_bf16": 989, "peak_tflops_fp8": 1979})");
  REQUIRE_THROWS_WITH(read_published_runs(text, "t.json"),
                      "t.json: /0/hardware/peak_tflops_fp8: a second peak, 1979, where "
                      "peak_tflops_bf16 gives 989; expected one peak, the one the source's MFU "
                      "divides by");
  text = row_json();
  text.replace(text.find("\"memory_gb\": 80}"), 16,
               R"("memory_gb": 80, "peak_tflops_bf16": 989, "peak_tflops_dense": 989})");
  CHECK(read_published_runs(text, "t.json")[0].peak_tflops == 989.0);
  // A number under a key that is not memory_gb or a peak: a misspelling, said so.
  text = row_json();
  text.replace(text.find("\"memory_gb\": 80}"), 16, R"("memory_gb": 80, "peak_tflop_bf16": 989})");
  REQUIRE_THROWS_WITH(read_published_runs(text, "t.json"),
                      "t.json: /0/hardware/peak_tflop_bf16: not a number key of hardware "
                      "(memory_gb, peak_tflops_*); expected free text (a string) under any other "
                      "key, got 989");
  // An id is one line of text: empty or with a newline, it used to be accepted; with a space
  // at an end, "x " printed as "x" in the table.
  for (const char* id : {R"("")", R"("a\nb")", R"("x ")", R"(" x")"}) {
    text = row_json();
    text.replace(text.find(R"("id": "x")"), 9, std::string(R"("id": )") + id);
    REQUIRE_THROWS_WITH(read_published_runs(text, "t.json"),
                        Catch::StartsWith("t.json: /0/id: expected a non-empty id without "
                                          "control characters or spaces at its ends, got "));
  }
}

TEST_CASE("validate: a stated peak the profile does not have skips the row", "[validation]") {
  const auto with_peak = [](const std::string& peak) {
    std::string text = row_json();
    text.replace(text.find("\"memory_gb\": 80}"), 16,
                 R"("memory_gb": 80, "peak_tflops_bf16": )" + peak + "}");
    return validate_runs(read_published_runs(text, "t.json"),
                         {.jobs = 1, .source_filter = "", .stacks = {}, .stack_files = {}});
  };
  // h100-dgx's bf16 peak is 989 TFLOP/s; 1,000, as sources round it, is within 5%.
  CHECK(with_peak("989").rows[0].compared);
  CHECK(with_peak("1000").rows[0].compared);
  // An H100 PCIe (756 TFLOP/s bf16) or NVL (835) would be simulated as the SXM part.
  CHECK_FALSE(with_peak("835").rows[0].compared);
  const ValidationReport pcie = with_peak("756");
  REQUIRE_FALSE(pcie.rows[0].compared);
  CHECK(pcie.rows[0].skip_reason ==
        "stated peak 756 TFLOP/s differs from the bf16 peak of profile 'h100-dgx' (989 TFLOP/s) "
        "by more than 5%: a GPU the profile does not model");
}

TEST_CASE(
    "validate: overall MAPE on the shipped rows stays under the committed bound, and the accuracy "
    "tables of the README and docs/validation.md print the figures validate gives",
    "[validation][slow]") {
  // Every shipped row, knob search included, as `trainsim validate` runs them.
  const ValidationReport r = validate_runs(
      shipped(),
      {.jobs = sweep::default_jobs(), .source_filter = "", .stacks = {}, .stack_files = {}});
  INFO("overall MAPE " << r.overall.mape << " over " << r.overall.compared << " rows");
  CHECK(r.overall.compared >= 200);
  CHECK(r.overall.mape <= kShippedRowsMapeBound);

  // Every shipped row was run, so the memory model must fit its plan. The GB200 Llama 3.1 405B
  // row (the distributed optimizer, no recompute, the recipe's split counting the embedding and
  // the loss, FP8 parameters) needs 174.1 GiB: it fits the 175.9 usable of its 186 GiB of HBM,
  // not the 163.8 left when the profile read the datasheet's 186 GB as 186e9 bytes (docs/
  // validation.md, the Megatron-Bridge rows). The DeepSeek-V3 rows fit since their
  // recipe's precision-aware optimizer (bf16 moments), its mla_up_proj recomputation (the query,
  // key and value freed) and, for MXFP8, fp8_param_gather are modelled: 135-163 GiB, from
  // 198-220. The ZeRO-3 530B row at 640 GPUs fits since the per-tensor memory of
  // deepspeed-zero3-2021 (100 GiB of 75.2 usable before).
  std::vector<std::string> not_fitting;
  for (const RowResult& row : r.rows) {
    if (row.compared && !row.fits) not_fitting.push_back(row.id);
  }
  CHECK(not_fitting.empty());

  // The README's table ("How accurate is it") and docs/validation.md's ("Accuracy") print these
  // figures: rows, mean absolute error and bias per source, rounded to 0.1%. Each of their rows
  // must say what validate says now, so that a change that moves a figure cannot leave the docs
  // behind.
  const auto percent = [](double fraction, bool sign) {
    char text[32];
    (void)std::snprintf(text, sizeof text, sign ? "%+.1f%%" : "%.1f%%", 100.0 * fraction);
    return std::string(text);
  };
  std::map<std::string, Summary> by_source;
  for (const Summary& s : r.sources) by_source[s.source] = s;
  // The dense bf16/fp16 rows: every source but the Megatron-Bridge summaries (MoE, FP8),
  // summarized as validate summarizes all rows.
  std::vector<RowResult> dense_rows;
  std::copy_if(r.rows.begin(), r.rows.end(), std::back_inserter(dense_rows),
               [](const RowResult& row) { return row.source != "nvidia-perf-summary"; });
  const Summary dense = summarize(std::move(dense_rows)).overall;
  REQUIRE(dense.compared > 0);
  using Labels = std::vector<std::pair<std::string, std::string>>;
  // The rows of the table under `heading` in `file` with `width` cells whose first cell starts
  // with a label of `labels` (the first that matches: most specific first), the rows, MAPE and
  // bias in cells `rows`, `rows` + 1 and `rows` + 2; returns how many rows were checked.
  const auto check_table = [&](const std::string& file, const std::string& heading,
                               std::size_t width, std::size_t rows, const Labels& labels) {
    std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/" + file);
    REQUIRE(in);
    std::string line;
    bool in_section = false;
    int checked = 0;
    while (std::getline(in, line)) {
      if (line.rfind("## ", 0) == 0) in_section = line == heading;
      if (!in_section || line.rfind("| ", 0) != 0) continue;
      std::vector<std::string> cells;
      std::size_t at = 1;
      for (std::size_t bar; (bar = line.find(" |", at)) != std::string::npos; at = bar + 2) {
        std::string cell = line.substr(at, bar - at);
        cell.erase(0, cell.find_first_not_of(' '));
        cell.erase(std::remove(cell.begin(), cell.end(), '*'), cell.end());
        cells.push_back(cell);
      }
      if (cells.size() != width) continue;  // another table of the section
      const auto label = std::find_if(labels.begin(), labels.end(), [&](const auto& l) {
        return cells[0].rfind(l.first, 0) == 0;
      });
      if (label == labels.end()) continue;  // the header, or a row of another subset
      const Summary& s = label->second == "dense"     ? dense
                         : label->second == "overall" ? r.overall
                                                      : by_source.at(label->second);
      INFO(file << ": " << line);
      CHECK(cells[rows] == std::to_string(s.compared));
      CHECK(cells[rows + 1] == percent(s.mape, false));
      CHECK(cells[rows + 2] == percent(s.bias, true));
      ++checked;
    }
    return checked;
  };
  const Labels common = {
      {"Narayanan et al. 2021, Table 1", "narayanan21-t1"},
      {"Narayanan et al. 2021, Table 2, PTD-P", "narayanan21-t2"},
      {"Narayanan et al. 2021, Table 2, DeepSpeed ZeRO-3", "narayanan21-t2-zero3"},
      {"Korthikanti et al. 2022", "korthikanti22"},
      {"Megatron-LM README 2020", "megatron-readme-2020"},
      {"Megatron-LM README 2024", "megatron-readme-2024"},
      {"BLOOM-176B", "bloom-176b"},
      {"torchtitan 2024", "torchtitan-2024"},
      {"Shoeybi et al. 2019", "shoeybi19"},
      {"NeMo / Megatron-Bridge", "nvidia-perf-summary"},
      {"the 279 dense", "dense"}};
  Labels readme = common;
  readme.insert(readme.end(), {{"llm-foundry (PyTorch FSDP, A100", "llm-foundry"},
                               {"llm-foundry (PyTorch FSDP, H100", "llm-foundry-h100"},
                               {"all 290 rows", "overall"}});
  Labels docs = common;
  docs.insert(docs.end(), {{"llm-foundry, H100 tables", "llm-foundry-h100"},
                           {"llm-foundry", "llm-foundry"},
                           {"all rows", "overall"}});
  // Every source with compared rows, the dense rows and all rows, once each.
  CHECK(check_table("README.md", "## How accurate is it", 4, 1, readme) ==
        static_cast<int>(readme.size()));
  CHECK(check_table("docs/validation.md", "## Accuracy", 6, 2, docs) ==
        static_cast<int>(docs.size()));
}

TEST_CASE("validate: a scenario the loader refuses names the runs file's key", "[validation]") {
  // A global batch of 2^40 sequences is past the loader's 2^30: the reason quoted the scenario's
  // /training/global_batch, a key the runs file does not have; it names the row's
  // global_batch_sequences now.
  PublishedRun run = row("narayanan21-t1-1.7B-32gpu");
  run.global_batch = std::int64_t{1} << 40;
  const ValidationReport report =
      validate_runs({run}, {.jobs = 1, .source_filter = "", .stacks = {}, .stack_files = {}});
  REQUIRE(report.rows.size() == 1);
  REQUIRE_FALSE(report.rows[0].compared);
  CHECK_THAT(
      report.rows[0].skip_reason,
      Catch::StartsWith("scenario refused: narayanan21-t1-1.7B-32gpu: /training/global_batch: "
                        "1099511627776: out of range; expected at most 1073741824 (the "
                        "row's global_batch_sequences)"));
}
