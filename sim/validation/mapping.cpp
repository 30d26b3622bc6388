#include "sim/validation/mapping.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <numeric>
#include <sstream>
#include <utility>

#include "trainsim/error.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/hardware_loader.hpp"
#include "sim/io/scenario_loader.hpp"
#include "sim/io/unit_parse.hpp"

namespace trainsim::validation {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

namespace {

using parallel::Recompute;
using parallel::Sharding;

bool contains(std::string_view text, std::string_view word) {
  return text.find(word) != std::string_view::npos;
}

std::string str(std::int64_t v) { return std::to_string(v); }

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// Megatron-LM GPT: the GPT-2 architecture (Radford et al. 2019) with Megatron's defaults:
// pre-LayerNorm, learned absolute positions (--position-embedding-type learned_absolute), biases
// on every linear layer, LM head tied to the input embedding (untie_embeddings_and_output_weights
// false). Narayanan et al. 2021's parameter count 12 l h^2 (1 + 13/12h + (V + s)/12lh) counts V
// once, i.e. tied.
constexpr ModelStyle kMegatronGpt{.norm = model::Norm::LayerNorm,
                                  .tied_embeddings = true,
                                  .positions = model::PositionEmbedding::Learned,
                                  .linear_bias = true,
                                  .why = "Megatron-LM GPT defaults"};
// Megatron-Core GPT of the README 2024 benchmark: as above but untied; the README's model sizes
// count the 131,072-row vocabulary twice (1.7B = 12 * 24 * 2048^2 + 2 * 131072 * 2048 = 1.74e9;
// 177B = 12 * 96 * 12288^2 + 2 * 131072 * 12288 = 177.1e9; tied they would be 1.48B and 175.5B).
constexpr ModelStyle kMegatronGptUntied{.norm = model::Norm::LayerNorm,
                                        .tied_embeddings = false,
                                        .positions = model::PositionEmbedding::Learned,
                                        .linear_bias = true,
                                        .why = "Megatron-Core GPT, untied (README model sizes)"};
// MPT (llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml): no_bias true, learned positions
// (alibi off in the benchmark configs, see the rows' notes), tied embeddings, LayerNorm.
constexpr ModelStyle kMpt{.norm = model::Norm::LayerNorm,
                          .tied_embeddings = true,
                          .positions = model::PositionEmbedding::Learned,
                          .linear_bias = false,
                          .why = "MPT yaml: no_bias, learned positions, tied embeddings"};
// Llama 2/3 (Touvron et al. 2023; torchtitan's llama models): RMSNorm, RoPE, untied, no biases.
constexpr ModelStyle kLlama{.norm = model::Norm::RmsNorm,
                            .tied_embeddings = false,
                            .positions = model::PositionEmbedding::Rope,
                            .linear_bias = false,
                            .why = "Llama: RMSNorm, RoPE, untied, no biases"};
// BLOOM (BigScience 2022, arXiv 2211.05100 §3.2): ALiBi, LayerNorm, biases, tied embeddings.
constexpr ModelStyle kBloom{.norm = model::Norm::LayerNorm,
                            .tied_embeddings = true,
                            .positions = model::PositionEmbedding::Alibi,
                            .linear_bias = true,
                            .why = "BLOOM: ALiBi, LayerNorm, biases, tied embeddings"};
// OPT (Zhang et al. 2022) and minGPT: GPT-2 style (OPT's ReLU MLP has GELU's shapes and FLOPs).
constexpr ModelStyle kGpt2Style = kMegatronGpt;

constexpr std::string_view kMegatronV1Recompute =
    "Megatron-LM v1 ran with activation checkpointing (--checkpoint-activations in its GPT-2 "
    "scripts); the README 2020 TFLOP/s equal Narayanan 2021 eq. 3, which counts the recomputed "
    "forward (1B on one V100: 8.06e13 FLOPs / 1.121 s = 71.9 TFLOP/s as printed)";

}  // namespace

const std::vector<SourceProfile>& source_profiles() {
  // The one table of sources. Stacks: Megatron-LM papers, the 2020 README and BLOOM's
  // Megatron-DeepSpeed -> megatron-lm; Narayanan 2021's DeepSpeed ZeRO-3 rows ->
  // deepspeed-zero3-2021; the 2024 README (Megatron-Core, TE) -> megatron-core;
  // torchtitan -> torchtitan-fsdp2; llm-foundry -> llm-foundry (its H100 tables ->
  // llm-foundry-torch21); the PyTorch FSDP paper and OPT
  // (metaseq FSDP) -> pytorch-2.3-fsdp.
  static const std::vector<SourceProfile> table = {
      {.name = "narayanan21-t1",
       .group_contains = "Narayanan et al. 2021 (Megatron-LM PTD-P), Table 1",
       .stack = "megatron-lm",
       .convention = FlopConvention::Narayanan2021,
       .style = kMegatronGpt},
      {.name = "narayanan21-t2-zero3",
       .group_contains = "Narayanan et al. 2021, Table 2",
       // The ZeRO-3 rows: Megatron-LM's kernels, DeepSpeed's parameter fetch and reduction.
       .framework_contains = "DeepSpeed ZeRO-3",
       .stack = "deepspeed-zero3-2021",
       .convention = FlopConvention::Narayanan2021,
       .style = kMegatronGpt},
      {.name = "narayanan21-t2",
       .group_contains = "Narayanan et al. 2021, Table 2",
       .stack = "megatron-lm",
       .convention = FlopConvention::Narayanan2021,
       .style = kMegatronGpt},
      {.name = "korthikanti22",
       .group_contains = "Korthikanti",
       .stack = "megatron-lm",
       .convention = FlopConvention::Korthikanti2022,
       .style = kMegatronGpt},
      {.name = "megatron-readme-2024",
       .group_contains = "Megatron-LM README 2024",
       .stack = "megatron-core",
       .convention = FlopConvention::MegatronCore2024,
       .style = kMegatronGptUntied,
       .sequence_parallel_default = true,
       .sequence_parallel_default_why =
           "--tp-comm-overlap, among the README's benchmark flags, requires --sequence-parallel "
           "(Megatron-LM arguments.py)",
       .ffn_defaults_to_4h = true,
       .ffn_default_why =
           "Megatron-LM's --ffn-hidden-size defaults to 4 x hidden (arguments.py); the README's "
           "model sizes match 4h"},
      {.name = "megatron-readme-2020",
       .group_contains = "Megatron-LM README 2020",
       .stack = "megatron-lm",
       .convention = FlopConvention::Narayanan2021,
       .style = kMegatronGpt,
       .recompute_default = Recompute::Full,
       .recompute_default_why = kMegatronV1Recompute},
      {.name = "shoeybi19",
       .group_contains = "Shoeybi",
       // The paper's code release (September 2019), before the fused softmax and
       // bias-dropout-add of September 2020.
       .stack = "megatron-lm-2019",
       // Not stated in the paper; the same code base's README 2020 TFLOP/s follow eq. 3 exactly.
       .convention = FlopConvention::Narayanan2021,
       .style = kMegatronGpt,
       .recompute_default = Recompute::Full,
       .recompute_default_why = kMegatronV1Recompute},
      {.name = "bloom-176b",
       .group_contains = "BLOOM",
       .framework_contains = "Megatron-DeepSpeed",
       .stack = "megatron-lm",
       // "Hardware TFLOPs": Megatron-DeepSpeed's 24 * 4 * B s l h^2 (1 + s/6h + V/16lh) with
       // checkpointing, i.e. eq. 3.
       .convention = FlopConvention::Narayanan2021,
       .style = kBloom,
       .caveat =
           "BLOOM's embedding LayerNorm is not modelled, and Megatron-DeepSpeed's partition of "
           "70 layers plus 2 embedding blocks into 12 stages of 6 is modelled as trainsim's split "
           "of the 70 layers"},
      {.name = "opt-175b",
       .group_contains = "OPT-175B",
       .framework_contains = "metaseq",
       .stack = "pytorch-2.3-fsdp",
       .convention = FlopConvention::Unstated,
       .style = kGpt2Style},
      {.name = "gpt-neox-20b",
       .group_contains = "GPT-NeoX",
       .framework_contains = "GPT-NeoX",
       .convention = FlopConvention::Unstated,
       .style = kGpt2Style,
       .unsupported =
           "GPT-NeoX-20B computes attention and MLP in parallel from one LayerNorm "
           "(gpt_j_residual) with rotary embeddings on 25% of the head dims; trainsim models "
           "sequential blocks"},
      {.name = "pytorch-fsdp-2023",
       .group_contains = "PyTorch FSDP paper",
       .framework_contains = "PyTorch FSDP",
       .stack = "pytorch-2.3-fsdp",
       .convention = FlopConvention::Unstated,
       .style = kGpt2Style},
      // torchtitan's 70B train configs ran its eager RMSNorm (norm_type "rmsnorm"), the 8B and
      // 13B configs its Triton fused_rmsnorm (train_configs/*.toml at 1ea476e9f, the commit that
      // published the performance table).
      {.name = "torchtitan-2024",
       .group_contains = "torchtitan",
       .model_contains = "70B",
       .stack = "torchtitan-fsdp2-rmsnorm",
       .convention = FlopConvention::PalmWithEmbeddings,
       .style = kLlama},
      {.name = "torchtitan-2024",
       .group_contains = "torchtitan",
       .stack = "torchtitan-fsdp2",
       .convention = FlopConvention::PalmWithEmbeddings,
       .style = kLlama},
      // The same code base's H100 tables, a source of their own, run on later software (PyTorch
      // 2.1, amp_bf16): llm-foundry-torch21 keeps the llm-foundry stack's kernels and its
      // elementwise_traffic fitted to the A100 rows, which these rows check on another GPU
      // (scripts/refit-stacks holds them out of that fit); its time per optimizer step beyond
      // the GPU work is fitted to the 8-GPU table and checked on the large-scale one.
      {.name = "llm-foundry-h100",
       .group_contains = "llm-foundry MPT benchmarks, H100",
       .stack = "llm-foundry-torch21",
       .convention = FlopConvention::PalmWithEmbeddings,
       .style = kMpt},
      {.name = "llm-foundry",
       .group_contains = "llm-foundry",
       .stack = "llm-foundry",
       .convention = FlopConvention::PalmWithEmbeddings,
       .style = kMpt},
      // NVIDIA's NeMo / Megatron-Bridge performance summaries: Megatron-Core with Transformer
      // Engine; model TFLOP/s by Megatron-Core's count. Its dense models are Llama 3 / 3.1; its
      // MoE models map to the built-ins by name (moe_builtin_model).
      {.name = "nvidia-perf-summary",
       .group_contains = "NVIDIA NeMo / Megatron-Bridge performance summar",
       .stack = "megatron-core",
       .convention = FlopConvention::MegatronCore2024,
       .flops_not_compared =
           "the summaries' TFLOP/s halve the causal attention term (and count MoE layers their "
           "own way), which no convention here makes; tokens/s/GPU or the iteration time is "
           "compared",
       .style = kLlama,
       .sequence_parallel_default = true,
       .sequence_parallel_default_why =
           "the NeMo / Megatron-Bridge Llama 3.1 405B pre-training recipes set "
           "sequence_parallel=True with tensor parallelism (NeMo llm/recipes/llama31_405b.py, "
           "Megatron-Bridge recipes/llama/llama3.py), which --tp-comm-overlap also requires"},
      // DeepSeek-V3 technical report: DeepSeek's own HAI-LLM framework (DualPipe), which no
      // stack profile describes; megatron-core stands in. The report gives GPU-hours, no FLOPs.
      {.name = "deepseek-v3-report",
       .group_contains = "DeepSeek-V3 technical report",
       .stack = "megatron-core",
       .convention = FlopConvention::Unstated,
       .style = kLlama,
       .caveat = "DeepSeek's HAI-LLM framework (DualPipe) has no stack profile; megatron-core "
                 "stands in"},
  };
  return table;
}

const SourceProfile* find_source(const PublishedRun& run) {
  for (const SourceProfile& s : source_profiles()) {
    if (!contains(run.source_group, s.group_contains)) continue;
    if (!s.framework_contains.empty() && !contains(run.framework, s.framework_contains)) continue;
    if (!s.model_contains.empty() && !contains(run.model, s.model_contains)) continue;
    return &s;
  }
  return nullptr;
}

// The built-in mixture-of-experts models (models/*.json) and the text that names each (the
// row's model text without case, spaces or separators).
constexpr std::pair<std::string_view, std::string_view> kMoeBuiltins[] = {
    {"deepseekv3", "deepseek-v3"},        {"qwen330ba3b", "qwen3-30b-a3b"},
    {"qwen3235ba22b", "qwen3-235b-a22b"}, {"mixtral8x7b", "mixtral-8x7b"},
    {"gptoss120b", "gpt-oss-120b"},
};

std::optional<std::string> moe_builtin_model(std::string_view model_name) {
  // The row's model text without case, spaces or separators: "DeepSeek-V3 (w/o MTP)" ->
  // "deepseekv3(w/omtp)", "Qwen3_235B_a22B" -> "qwen3235ba22b", "Mixtral 8x7B" -> "mixtral8x7b".
  std::string key;
  for (const unsigned char c : model_name) {
    if (c == ' ' || c == '-' || c == '_' || c == '.') continue;
    key += static_cast<char>(std::tolower(c));
  }
  for (const auto& [text, id] : kMoeBuiltins) {
    if (contains(key, text)) return std::string(id);
  }
  return std::nullopt;
}

std::optional<Sharding> parse_sharding(std::string_view text) {
  const std::string t = lower(text);
  // Most specific first: "FSDP FULL_SHARD" must not read as plain FSDP, HYBRID_SHARD not as
  // FULL_SHARD, FSDP's NO_SHARD (torch ShardingStrategy.NO_SHARD: DDP's layout) not as FSDP.
  if (contains(t, "no_shard") || contains(t, "no shard")) return Sharding::None;
  if (contains(t, "hybrid")) return Sharding::HybridShard;
  if (contains(t, "shard_grad_op") || contains(t, "zero-2") || contains(t, "zero2")) {
    return Sharding::ShardGradOp;
  }
  if (contains(t, "full_shard") || contains(t, "full shard") || contains(t, "zero-3") ||
      contains(t, "zero3")) {
    return Sharding::FullShard;
  }
  // A named ZeRO stage, or Megatron's distributed optimizer (ZeRO-1 inside its DDP class:
  // "use_distributed_optimizer=True"), before the bare words "fsdp" and "ddp": "ZeRO-1 (not
  // FSDP)" read as FULL_SHARD, and "Megatron DDP with use_distributed_optimizer=True" as DDP.
  // Megatron's flag in any spelling: "--use-distributed-optimizer", "use_distributed_optimizer:
  // True", "use_distributed_optimizer = True" (not "=False").
  std::string squashed;
  for (const char ch : t) {
    if (ch != ' ') squashed += ch == '-' ? '_' : ch;
  }
  const bool megatron_flag = contains(squashed, "use_distributed_optimizer") &&
                             !contains(squashed, "use_distributed_optimizer=false") &&
                             !contains(squashed, "use_distributed_optimizer:false");
  if (contains(t, "zero-1") || contains(t, "zero1") || contains(t, "distributed optimizer") ||
      megatron_flag) {
    return Sharding::Zero1;
  }
  // FSDP's default ShardingStrategy is FULL_SHARD (metaseq's "FSDP (full sharding)", FSDP2);
  // "not FSDP" names what the run did not use.
  if (contains(t, "fsdp") && !contains(t, "not fsdp")) return Sharding::FullShard;
  if (t.rfind("none", 0) == 0 || contains(t, "ddp") || contains(t, "plain dp")) {
    return Sharding::None;
  }
  return std::nullopt;
}

std::optional<Recompute> parse_recompute(std::string_view text) {
  const std::string t = lower(text);
  if (t.rfind("none", 0) == 0) return Recompute::None;
  if (t.rfind("full", 0) == 0) return Recompute::Full;
  // torchtitan's op-level SAC saves the matmul and attention outputs and recomputes the cheap
  // ops: Megatron's selective recompute in kind. Its layer-level SAC checkpoints every other
  // layer whole, which is none of trainsim's modes.
  if (t.rfind("selective", 0) == 0 && !contains(t, "layer")) return Recompute::Selective;
  return std::nullopt;
}

std::optional<hardware::Dtype> parse_precision(std::string_view text) {
  const std::string t = lower(text);
  if (contains(t, "fp8") || contains(t, "float8")) return std::nullopt;
  if (contains(t, "bf16")) return hardware::Dtype::Bf16;
  if (contains(t, "fp16")) return hardware::Dtype::Fp16;
  // Narayanan et al. 2021 say only "mixed precision"; Megatron-LM trained with fp16 then (the
  // row's own text: "fp16 per paper era"). fp16 and bf16 share the A100's peak.
  if (contains(t, "mixed precision 16-bit")) return hardware::Dtype::Fp16;
  return std::nullopt;
}

std::optional<Fp8RecipeChoice> parse_fp8_recipe(std::string_view text) {
  const std::string t = lower(text);
  if (!contains(t, "fp8") && !contains(t, "float8")) return std::nullopt;
  // DeepSeek-V3 (arXiv 2412.19437 §3.3): scales per 1x128 activation tile and 128x128 weight
  // block, computed online from each block's amax: Transformer Engine's Float8BlockScaling,
  // "inspired by" it (TE docs, "FP8 Blockwise Scaling"), the stack's blockwise recipe. (It was
  // priced as mxfp8, which Hopper, the H800 of the row, cannot run.)
  // Megatron's --fp8-recipe blockwise; Megatron-Bridge names it subchannel scaling.
  if (contains(t, "fine-grained") || contains(t, "128x128") || contains(t, "1x128") ||
      contains(t, "blockwise") || contains(t, "subchannel")) {
    return Fp8RecipeChoice{.recipe = "blockwise", .assumption = ""};
  }
  // The Megatron-Bridge tables name current scaling "FP8-CS" and MXFP8 "FP8-MX"; a row that
  // mentions both measured FP8-CS (the other is a note), so current scaling is checked first.
  if (contains(t, "fp8-cs") || contains(t, "current scaling")) {
    return Fp8RecipeChoice{.recipe = "current", .assumption = ""};
  }
  if (contains(t, "mxfp8") || contains(t, "fp8-mx")) {
    return Fp8RecipeChoice{.recipe = "mxfp8", .assumption = ""};
  }
  if (contains(t, "delayed")) return Fp8RecipeChoice{.recipe = "delayed", .assumption = ""};
  return std::nullopt;
}

namespace {

// Built-in file `dir`/`id`.json as JSON, with `overrides` merged over it (RFC 7386).
nlohmann::json patched_builtin(const char* dir, std::string_view id,
                               const nlohmann::json& overrides) {
  const auto text = io::builtin_file(dir, id);
  if (!text)
    throw InternalError(std::string(dir) + "/" + std::string(id) + ".json is not built in");
  nlohmann::json doc = nlohmann::json::parse(std::string(*text));
  doc.merge_patch(overrides);
  return doc;
}

}  // namespace

std::optional<ScriptSettings> parse_script_settings(std::string_view framework,
                                                    std::string& reason) {
  const std::string t = lower(framework);
  ScriptSettings out;
  if (contains(t, "fp8_param_gather true")) {
    out.stack_overrides["fp8"]["param_gather"] = true;
    out.stack_overrides["fp8"]["sources"]["param_gather"] =
        "The row's precision config sets fp8_param_gather True (Megatron-Bridge "
        "src/megatron/bridge/training/mixed_precision.py): the layers' weights are held as FP8 "
        "tensors.";
    out.assumptions.emplace_back("fp8_param_gather True: stack fp8.param_gather, inline");
  }
  if (contains(t, "attn_impl flash")) {
    out.stack_overrides["attention_speed"] = 1.0;
    out.stack_overrides["sources"]["attention_speed"] =
        "1: the row's script sets attn_impl flash, MPT's FlashAttention 2 path (llm-foundry "
        "llmfoundry/models/layers/attention.py, flash_attn_fn), the kernel the profiles' "
        "attention curves describe.";
    out.assumptions.emplace_back("attn_impl flash: attention_speed 1 (FlashAttention 2)");
  }
  for (const char* mode : {"backward_pre", "backward_post"}) {
    if (!contains(t, std::string("backward_prefetch ") + mode)) continue;
    out.stack_overrides["fsdp"]["backward_prefetch"] = mode;
    out.stack_overrides["fsdp"]["sources"]["backward_prefetch"] =
        std::string(mode) + ": set by the row's script (its framework text).";
    out.assumptions.push_back(std::string("fsdp.backward_prefetch ") + mode +
                              " (the row's script)");
  }
  for (const char* key :
       {"account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split"}) {
    // Megatron-Core's pipeline split settings, as the row's recipe sets them (the Megatron-Bridge
    // Llama 3.1 405B recipe sets both).
    if (!contains(t, key)) continue;
    out.parallel_overrides[key] = true;
    out.assumptions.push_back(std::string(key) + " (the row's recipe)");
  }
  if (const auto at = t.find("pipeline layout "); at != std::string::npos) {
    // Megatron-Core's pipeline_model_parallel_layout as the row's recipe sets it, written as the
    // transformer layers of each model chunk: "pipeline layout 4,4,...,1" (the list ends at the
    // next space), read as --pipeline-layout reads it.
    const std::size_t from = at + std::string_view("pipeline layout ").size();
    const std::size_t to = std::min(t.find(' ', from), t.size());
    const auto counts = io::parse_layer_counts(std::string_view(t).substr(from, to - from));
    if (!counts) {
      reason =
          "'pipeline layout' in the framework text names no layer counts; expected "
          "'pipeline layout 4,4,...,1'";
      return std::nullopt;
    }
    const nlohmann::json layout = *counts;
    out.assumptions.push_back("pipeline_layout " + layout.dump() + " (the row's recipe)");
    out.parallel_overrides["pipeline_layout"] = layout;
  }
  if (const auto at = t.find("mtp_num_layers "); at != std::string::npos) {
    // Megatron-Core's multi-token-prediction modules, "mtp_num_layers 1" (the count ends at the
    // next space), read as the pipeline layout's counts are; the model key's bound then names
    // what is out of range.
    const std::size_t from = at + std::string_view("mtp_num_layers ").size();
    const std::size_t to = std::min(t.find(' ', from), t.size());
    const auto counts = io::parse_layer_counts(std::string_view(t).substr(from, to - from));
    if (!counts || counts->size() != 1) {
      reason =
          "'mtp_num_layers' in the framework text names no module count; expected "
          "'mtp_num_layers 1'";
      return std::nullopt;
    }
    out.model_overrides["mtp_layers"] = counts->front();
    out.assumptions.push_back("mtp_layers " + std::to_string(counts->front()) +
                              " (the row's recipe)");
  }
  if (contains(t, "cross_entropy_loss_fusion true")) {
    // Megatron-Core's fused vocab-parallel loss (cross_entropy_loss_fusion; with
    // cross_entropy_fusion_impl "te", Transformer Engine's parallel cross entropy: one pass for
    // each row's max and sum, one that writes the logits' gradient in place, 3e bytes per logit,
    // and backward a scale of that gradient in place, 2e): the stack's fused loss, which counts
    // e + 4 forward (3e at bf16) and 4 + e backward (2 bytes more).
    out.stack_overrides["loss"]["cross_entropy"] = "fused";
    out.stack_overrides["loss"]["sources"]["cross_entropy"] =
        "fused: the row's cross_entropy_loss_fusion True (its framework text): Megatron-Core's "
        "fused loss kernel instead of the op-by-op vocab_parallel_cross_entropy.";
    out.assumptions.emplace_back("cross_entropy_loss_fusion True: stack loss.cross_entropy fused");
  }
  if (contains(t, "forward_prefetch true")) {
    if (!contains(t, "limit_all_gathers true")) {
      reason =
          "forward_prefetch true without limit_all_gathers true: FSDP's forward gathers "
          "are then bounded by the host alone, a depth no stack key describes";
      return std::nullopt;
    }
    // The limiter (torch/distributed/fsdp/_limiter_utils.py) keeps at most 2 reshard events
    // unconfirmed: before a gather, _unshard synchronizes the oldest once 2 are queued. Unit
    // l's pre-forward hook prefetches unit l + 1 (_pre_forward_unshard, _prefetch_handle
    // FORWARD) after units l - 2 and l - 1 were resharded, so it waits for unit l - 2's
    // forward: the gather of layer k is issued when layer k - 3 ends. Without forward
    // prefetching unit l gathers itself in its own pre-forward hook, after unit l - 2: depth 2.
    out.stack_overrides["fsdp"]["forward_prefetch"] = 3;
    out.stack_overrides["fsdp"]["sources"]["forward_prefetch"] =
        "3: the row's script sets forward_prefetch true with limit_all_gathers true: PyTorch "
        "FSDP1 prefetches the next unit from the current unit's pre-forward hook "
        "(_runtime_utils.py, _pre_forward_unshard, _prefetch_handle), and the rate limiter "
        "(_limiter_utils.py, 2 reshard events in flight) issues that gather once the unit "
        "three back has ended.";
    out.assumptions.emplace_back(
        "forward_prefetch true with limit_all_gathers true: fsdp.forward_prefetch 3");
  }
  return out;
}

namespace {

// `section`.`key` of the chosen profile: the built-in's document, or the inline copy the mapping
// made of it.
template <class T>
T profile_value(const HardwareChoice& choice, const char* section, const char* key) {
  if (choice.document.is_string()) {
    return io::load_hardware_document(choice.id).json.at(section).at(key).template get<T>();
  }
  return choice.document.at(section).at(key).template get<T>();
}

}  // namespace

namespace {

// Whether a Hopper GPU's text (lower case) names a card other than the SXM part of the
// profiles: the PCIe and NVL cards ("h100 pcie", "h100-pci-e", "h100nvl") or a Grace Hopper
// superchip ("gh200", "grace hopper"). The links NVLink and NVSwitch are not cards: "h100 (sxm,
// nvlink)" is the SXM part. GH100 is the die of every H100, SXM included.
bool other_hopper_card(std::string text) {
  for (const std::string_view link : {"nvlink", "nvswitch"}) {
    for (std::size_t at = text.find(link); at != std::string::npos; at = text.find(link)) {
      text.erase(at, link.size());
    }
  }
  return contains(text, "nvl") || contains(text, "pci") || contains(text, "gh200") ||
         contains(text, "grace");
}

// Whether a GPU's text (lower case) names `model` ("a100"): the model not followed by a digit,
// so that an RTX A1000 is not an A100.
bool names_model(const std::string& text, std::string_view model) {
  for (std::size_t at = text.find(model); at != std::string::npos; at = text.find(model, at + 1)) {
    const std::size_t end = at + model.size();
    if (end == text.size() || std::isdigit(static_cast<unsigned char>(text[end])) == 0) {
      return true;
    }
  }
  return false;
}

// The memory a GPU's text (lower case) states, in GB: "a100 40gb", "a100 40 gb",
// "v100-sxm2-16gb" (a number of whole GB, not part of a longer number, before "gb"); not a
// link's rate ("200 gb/s", "200 gbps", "100 gbit"). None when it states none; nullopt too, with
// `conflict` set, when it states two different ones.
std::optional<double> memory_in_name(const std::string& text, bool& conflict) {
  conflict = false;
  std::optional<double> stated;
  for (std::size_t at = text.find("gb"); at != std::string::npos; at = text.find("gb", at + 1)) {
    const std::size_t after = at + 2;
    if (after < text.size() &&
        (text[after] == '/' || text[after] == 'p' || text.compare(after, 2, "it") == 0)) {
      continue;
    }
    std::size_t end = at;
    while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '-')) --end;
    std::size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1])) != 0) --begin;
    if (begin == end || end - begin > 4 || (begin > 0 && text[begin - 1] == '.')) continue;
    const double gb = std::stod(text.substr(begin, end - begin));
    if (stated && *stated != gb) {
      conflict = true;
      return std::nullopt;
    }
    stated = gb;
  }
  return stated;
}

}  // namespace

std::optional<HardwareChoice> choose_hardware(const PublishedRun& run, std::string& reason) {
  const std::string gpu = lower(run.gpu);
  HardwareChoice choice;
  // The row's memory, else the memory its GPU text states ("A100 40 GB", "V100-SXM2-16GB"):
  // either names the part.
  bool conflict = false;
  const std::optional<double> named = memory_in_name(gpu, conflict);
  // The row's memory and its GPU text disagreeing, or the text naming two: which part ran is
  // not known (memory_gb 80 beside "A100 (40GB)" ran as the 80GB part without a word).
  if (conflict || (run.memory_gb && named && *run.memory_gb != *named)) {
    std::ostringstream text;
    text << "the GPU '" << run.gpu << "' ";
    if (conflict) {
      text << "states two memory sizes";
    } else {
      text << "states " << *named << " GB where memory_gb is " << *run.memory_gb;
    }
    text << "; expected one memory size for the row's GPU";
    reason = text.str();
    return std::nullopt;
  }
  const std::optional<double> memory_gb = run.memory_gb ? run.memory_gb : named;
  const std::string memory_key = run.memory_gb ? "memory_gb" : "the GPU's memory";
  if (names_model(gpu, "gb200")) {
    // GB200 NVL72 (DGX GB200): 72 GPUs in one NVLink domain, 4 per compute tray.
    choice.id = "gb200-nvl72";
  } else if (names_model(gpu, "b200")) {
    choice.id = "b200-dgx";
  } else if ((names_model(gpu, "h100") || names_model(gpu, "h200") || names_model(gpu, "h800") ||
              contains(gpu, "grace")) &&
             other_hopper_card(gpu)) {
    // The PCIe and NVL cards run at lower clocks and power (H100 PCIe: 756 TFLOP/s bf16 dense
    // at 350 W, H100 NVL 835 at 400 W, against the SXM part's 989 at 700 W; H100 datasheet) and
    // the Grace Hopper superchips have another memory and host link: no profile models them.
    reason = "no built-in hardware profile for GPU '" + run.gpu +
             "': the PCIe and NVL cards and the Grace Hopper superchips are not the SXM parts "
             "of h100-dgx, h200-dgx and h800-dgx; expected an SXM A100, H100, H200, H800, B200, "
             "GB200 or V100";
    return std::nullopt;
  } else if ((names_model(gpu, "a100") || names_model(gpu, "v100")) && contains(gpu, "pci")) {
    // The PCIe cards run at lower power and clocks (A100 PCIe 250-300 W against the SXM4
    // part's 400 W; V100 PCIe 250 W against 300 W) on PCIe links: not the SXM parts.
    reason = "no built-in hardware profile for GPU '" + run.gpu +
             "': the PCIe cards are not the SXM parts of a100-dgx and v100-dgx; expected an SXM "
             "A100, H100, H200, H800, B200, GB200 or V100";
    return std::nullopt;
  } else if (names_model(gpu, "h800")) {
    choice.id = "h800-dgx";
  } else if (names_model(gpu, "h200")) {
    choice.id = "h200-dgx";
  } else if (names_model(gpu, "h100")) {
    choice.id = "h100-dgx";
  } else if (names_model(gpu, "a100")) {
    choice.id = "a100-dgx";
    // An A100 measured in 2020 with its memory unstated is a 40GB one: DGX A100 shipped with
    // A100 SXM4 40GB from May 2020, and NVIDIA announced the 80GB A100 on 16 November 2020
    // (the Megatron-LM README 2020 tables are of September 2020).
    // A GPU text that names the 80GB part says its memory ("A100 (80GB) 2020" ran as 40GB).
    const bool a100_of_2020 = !memory_gb && contains(gpu, "2020");
    if ((memory_gb && *memory_gb == 40.0) || a100_of_2020) {
      // A100 SXM4 40GB (NVIDIA A100 datasheet, 2020): 40 GB HBM2 at 1,555 GB/s, against the
      // profile's 80 GB HBM2e at 2,039 GB/s; compute, NVLink and network are the same.
      static const nlohmann::json k40gb = [] {
        nlohmann::json doc =
            nlohmann::json::parse(io::load_hardware_document("a100-dgx").json.dump());
        doc["id"] = "a100-dgx-40gb";
        doc["name"] = "NVIDIA DGX A100 (8x A100 SXM4 40GB, 8x HDR 200 Gb/s)";
        doc["gpu"]["name"] = "NVIDIA A100 SXM4 40GB";
        doc["gpu"]["hbm_capacity"] = "40 GiB";
        doc["gpu"]["hbm_bandwidth"] = "1.555 TB/s";
        return doc;
      }();
      choice.id = "a100-dgx-40gb";
      choice.document = k40gb;
      choice.assumptions.push_back(
          a100_of_2020
              ? "A100 40GB (memory unstated, measured in 2020, before the 80GB A100 of November "
                "2020): a100-dgx with HBM 40 GiB at 1.555 TB/s (A100 datasheet), inline"
              : "A100 40GB: a100-dgx with HBM 40 GiB at 1.555 TB/s (A100 datasheet), inline");
    } else if (!memory_gb) {
      // Neither the row's memory nor its GPU text says which A100: the profile's 80GB part,
      // said so as the 2020 rows' 40GB is.
      choice.assumptions.push_back(
          "A100 with its memory unstated (not of 2020): the 80GB part of a100-dgx");
    }
    if (run.inter_node && contains(lower(*run.inter_node), "omni-path") &&
        choice.document.is_null()) {
      // Jean Zay's A100 nodes (BLOOM-176B): 8 A100 SXM4 80GB on NVLink, 4 Omni-Path links per
      // node; Omni-Path Architecture 100 series links run at 100 Gb/s. NCCL moves about 12 GB/s
      // per 100 Gb/s NIC (docs/sources.md C.4): ring and tree multi-node graphs of 4 channels
      // at 12 GB/s (the DGX A100's are 8 at 24).
      static const nlohmann::json kOpa = [] {
        nlohmann::json doc =
            nlohmann::json::parse(io::load_hardware_document("a100-dgx").json.dump());
        doc["id"] = "a100-opa4x100";
        doc["name"] = "8x A100 SXM4 80GB, 4x Omni-Path 100 Gb/s";
        doc["fabric"]["nics_per_node"] = 4;
        doc["fabric"]["nic_bandwidth"] = "100 Gb/s";
        for (const char* a : {"ring", "tree"}) {
          doc["collective"]["graphs"][a]["multi_node"] = {
              {"channels", 4}, {"bw_intra", "12 GB/s"}, {"bw_inter", "12 GB/s"}};
        }
        return doc;
      }();
      choice.id = "a100-opa4x100";
      choice.document = kOpa;
      choice.assumptions.push_back(
          "inter-node 4 x Omni-Path 100 Gb/s per node (the source's network): a100-dgx with 4 "
          "NICs at 100 Gb/s and NCCL graphs of 4 channels at 12 GB/s, inline");
    }
  } else if (names_model(gpu, "v100")) {
    choice.id = "v100-dgx";
    if (contains(gpu, "dgx-2") || (run.gpus_per_node && *run.gpus_per_node == 16)) {
      choice.assumptions.push_back(
          "measured on DGX-2/DGX-2H (16 V100 per node on NVSwitch, 8 x 100 Gb/s); simulated on "
          "v100-dgx, a DGX-1 (8 V100 SXM2 per node, 4 x 100 Gb/s): the same 6.25 GB/s of network "
          "per GPU, NVLink priced as the profile's crossbar");
    }
  } else {
    reason = "no built-in hardware profile for GPU '" + run.gpu +
             "'; expected an A100, H100, H200, H800, B200, GB200 or V100 (a100-dgx, h100-dgx, "
             "h200-dgx, h800-dgx, b200-dgx, gb200-nvl72, v100-dgx)";
    return std::nullopt;
  }
  if (choice.document.is_null()) choice.document = choice.id;
  // (A V100 row of 16 per node has its DGX-2 said above.)
  if (run.gpus_per_node && !(names_model(gpu, "v100") && *run.gpus_per_node == 16)) {
    const auto profile_gpn = profile_value<std::int64_t>(choice, "node", "gpus_per_node");
    if (*run.gpus_per_node != profile_gpn) {
      choice.assumptions.push_back("the source's " + str(*run.gpus_per_node) +
                                   " GPUs per node simulated as " + choice.id + "'s " +
                                   str(profile_gpn));
    }
  }
  if (memory_gb) {
    // The stated memory names the GPU too: an A100 row of 1 GB used to run as the 80GB part.
    // Sources print capacities as marketed, "GB" for what the profiles hold in GiB (the H100's
    // 80, the B200's 180), so either unit matches, within 10%: the B200's 192 GB physical
    // against the profile's 180 GiB usable (193.3e9 bytes) is 0.7%. (An H100 NVL's 94 GB is within
    // it of 80 GiB, 85.9 GB: its name, or its stated peak, 835 TFLOP/s, tells it from the SXM
    // part.)
    const auto capacity = profile_value<std::string>(choice, "gpu", "hbm_capacity");
    const double bytes = io::parse_bytes(capacity).value();
    const auto near = [&](double unit) {
      return std::abs(*memory_gb * unit / bytes - 1.0) <= 0.10;
    };
    if (!near(1e9) && !near(1073741824.0)) {
      std::ostringstream text;
      text << memory_key << " " << *memory_gb << " is not the " << capacity << " of profile '"
           << choice.id << "' within 10%: a GPU the profile does not model";
      reason = text.str();
      return std::nullopt;
    }
  }
  return choice;
}

std::vector<std::int64_t> micro_batch_candidates(const PublishedRun& run,
                                                 std::int64_t per_replica) {
  if (run.micro_batch) return {*run.micro_batch};
  // A stated gradient accumulation is the micro-batch's count (map_run has checked it divides
  // the replica's sequences): it was one candidate among the searched, and a row of grad_accum
  // 32 ran at the micro-batch of 4 steps.
  if (run.grad_accum && per_replica % *run.grad_accum == 0) {
    return {per_replica / *run.grad_accum};
  }
  std::vector<std::int64_t> out;
  for (std::int64_t m = 1; m <= per_replica; m *= 2) {
    if (per_replica % m == 0) out.push_back(m);
  }
  out.push_back(per_replica);  // no gradient accumulation
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::int64_t> virtual_stage_candidates(std::int64_t layers, std::int64_t pp) {
  if (pp <= 1 || layers % pp != 0) return {1};
  // Megatron-LM: --num-layers-per-virtual-pipeline-stage must divide layers / pp.
  const std::int64_t per_stage = layers / pp;
  std::vector<std::int64_t> out;
  for (std::int64_t v = 1; v <= per_stage; ++v) {
    if (per_stage % v == 0) out.push_back(v);
  }
  return out;
}

std::optional<Mapping> map_run(const PublishedRun& run, std::string& reason) {
  Mapping m;
  m.source = find_source(run);
  if (m.source == nullptr) {
    // Each text once, quoted: several rows of the table share one (a source's tables), and
    // they are matched as parts of the group's name, not whole names.
    std::vector<std::string> names;
    for (const auto& s : source_profiles()) {
      const std::string quoted = "'" + std::string(s.group_contains) + "'";
      if (std::find(names.begin(), names.end(), quoted) == names.end()) names.push_back(quoted);
    }
    reason = "source group '" + run.source_group +
             "' is not in the mapping table, which chooses each source's stack and FLOP "
             "convention (docs/validation.md, 'Source table'); expected a group containing one "
             "of: " +
             join(names, ", ");
    return std::nullopt;
  }
  const SourceProfile& src = *m.source;
  if (!src.unsupported.empty()) {
    reason = std::string(src.unsupported);
    return std::nullopt;
  }
  // Mixture-of-experts rows name their model; the row schema has no expert keys (the expert
  // count, top-k and expert widths are in the notes, the EP degree in extra_metrics.ep). They
  // map to the built-in model of that name (models/*.json, from the models' config.json files,
  // as the rows' notes say) with parallel.ep from extra_metrics.ep.
  const std::optional<std::string> moe = moe_builtin_model(run.model);
  if (moe && !run.ep) {
    reason = "mixture-of-experts model '" + run.model + "' (the built-in '" + *moe +
             "') without an expert-parallel degree (extra_metrics.ep)";
    return std::nullopt;
  }
  if (!moe && run.ep && *run.ep > 1) {
    // An expert-parallel degree on a model the table does not know as a mixture of experts:
    // the row's numbers do not describe one plan trainsim can run.
    std::string known;
    for (const auto& entry : kMoeBuiltins) {
      known += (known.empty() ? "" : ", ") + std::string(entry.second);
    }
    reason = "extra_metrics.ep " + str(*run.ep) + " on '" + run.model +
             "', which the mapping knows as no mixture-of-experts model (it maps " + known +
             "); expected a model it knows as one, or no ep for a dense model";
    return std::nullopt;
  }

  // The values every scenario needs.
  std::vector<std::string> missing;
  auto need = [&missing](const auto& value, const char* key) {
    if (!value) missing.emplace_back(key);
  };
  need(run.gpus, "gpus");
  need(run.layers, "n_layers");
  if (!moe) {  // a built-in MoE model brings its own dimensions
    need(run.hidden, "hidden");
    need(run.heads, "n_heads");
    need(run.vocab, "vocab");
  }
  need(run.seq_len, "seq_len");
  need(run.global_batch, "global_batch_sequences");
  need(run.tp, "tp");
  need(run.pp, "pp");
  need(run.dp, "dp");
  if (!src.ffn_defaults_to_4h && !moe) need(run.ffn_hidden, "ffn_hidden");
  need(run.precision, "precision");
  if (!missing.empty()) {
    reason = "not stated by the source: " + join(missing, ", ");
    return std::nullopt;
  }
  // The transcriber's own flag (validation/README.md: such rows are skipped): every field the
  // mapping needs is there, but the row says its configuration is not the source's whole one.
  if (!run.config_complete) {
    reason = "config_complete is false: the row's configuration is not complete in its source";
    return std::nullopt;
  }
  std::optional<hardware::Dtype> dtype = parse_precision(*run.precision);
  const std::optional<Fp8RecipeChoice> fp8 = parse_fp8_recipe(*run.precision);
  if (fp8) dtype = hardware::Dtype::Fp8;
  if (!dtype) {
    const std::string t = lower(*run.precision);
    reason = contains(t, "fp8") || contains(t, "float8")
                 ? "fp8 training ('" + *run.precision +
                       "') names no scaling recipe; expected current scaling (FP8-CS), MXFP8 "
                       "(FP8-MX), delayed scaling or block scaling (DeepSeek's fine-grained, "
                       "Megatron's blockwise)"
                 : "precision '" + *run.precision + "' not recognised; expected bf16 or fp16";
    return std::nullopt;
  }
  std::optional<HardwareChoice> hw = choose_hardware(run, reason);
  if (!hw) return std::nullopt;
  {
    // A GPU without tensor cores of the row's dtype (bf16 on a V100): said in the row's terms,
    // where the scenario's check would name --precision, a flag a runs file does not have.
    const hardware::HardwareSpec spec = hw->document.is_string()
                                            ? io::load_hardware(hw->id)
                                            : io::hardware_from_json(hw->document, hw->id, "");
    const std::string name = parallel::to_string(*dtype);
    if (spec.peak(*dtype).value() <= 0.0) {
      reason = "precision '" + *run.precision + "' (" + name + ") on profile '" + hw->id +
               "', whose GPU has no " + name + " tensor cores (its peak_dense " + name +
               " is 0); expected a precision the GPU runs";
      return std::nullopt;
    }
  }
  m.hardware = hw->id;
  m.assumptions = hw->assumptions;

  const std::int64_t gpus = *run.gpus, tp = *run.tp, pp = *run.pp, dp = *run.dp;
  const std::int64_t cp = run.cp.value_or(1);
  // Each degree is a count from the runs file (up to 2^53): the product may overflow int64,
  // and then it cannot equal gpus either.
  std::int64_t product = tp;
  const bool overflow = __builtin_mul_overflow(product, pp, &product) ||
                        __builtin_mul_overflow(product, cp, &product) ||
                        __builtin_mul_overflow(product, dp, &product);
  if (overflow || product != gpus) {
    reason = "tp x pp x cp x dp = " + str(tp) + " x " + str(pp) + " x " + str(cp) + " x " +
             str(dp) + " differs from gpus " + str(gpus);
    return std::nullopt;
  }
  if (*run.global_batch % dp != 0) {
    reason = "global batch " + str(*run.global_batch) + " does not split over dp " + str(dp);
    return std::nullopt;
  }
  // Measurements of one run agree: tokens/s per GPU is global batch x sequence / (iteration
  // time x GPUs). The sources print 3-4 digits, and the 211 shipped rows that give both agree
  // within 0.22%; a row off by more than 1% mixes runs or has a typo, and which figure to
  // compare would be a guess.
  if (run.tokens_per_s_per_gpu && run.iteration_time_s && *run.iteration_time_s > 0.0) {
    const double implied = static_cast<double>(*run.global_batch) *
                           static_cast<double>(*run.seq_len) / *run.iteration_time_s /
                           static_cast<double>(gpus);
    if (std::abs(implied / *run.tokens_per_s_per_gpu - 1.0) > 0.01) {
      std::ostringstream text;
      text << "tokens_per_sec_per_gpu " << *run.tokens_per_s_per_gpu << " and iteration_time_s "
           << *run.iteration_time_s << " disagree: the time gives " << std::setprecision(4)
           << implied << " tokens/s per GPU (global batch x seq_len / time / gpus), more than 1% "
           << "apart";
      reason = text.str();
      return std::nullopt;
    }
  }
  // MFU counts the model's FLOPs, HFU those and the recomputed ones: MFU <= HFU. Printed to 2-3
  // digits, a row whose MFU is more than 1% above its HFU contradicts itself (a swapped or
  // mistyped figure); comparing either would be a guess.
  if (run.mfu && run.hfu && *run.mfu > *run.hfu * 1.01) {
    std::ostringstream text;
    text << "mfu " << *run.mfu << " above hfu " << *run.hfu
         << ": the hardware FLOPs include the model's, so MFU <= HFU";
    reason = text.str();
    return std::nullopt;
  }
  // A stated gradient accumulation divides each replica's sequences, and with a stated
  // micro-batch it is their quotient: grad_accum 3 with micro-batch 6 and 768 sequences per
  // replica was left out of the micro-batch search without a word.
  if (run.grad_accum) {
    const std::int64_t per_replica = *run.global_batch / dp;
    if (per_replica % *run.grad_accum != 0 ||
        (run.micro_batch && *run.micro_batch * *run.grad_accum != per_replica)) {
      reason = "extra_metrics.grad_accum " + str(*run.grad_accum) + " does not fit the " +
               str(per_replica) + " sequences per replica (global batch " + str(*run.global_batch) +
               " over dp " + str(dp) + ")" +
               (run.micro_batch ? " at micro-batch " + str(*run.micro_batch) : std::string());
      return std::nullopt;
    }
  }

  Sharding sharding = Sharding::None;
  // Set when the row names a gradient-reduce dtype other than its stack's.
  std::string reduce_dtype;
  if (run.sharding) {
    // Parameters or optimizer state offloaded to the CPU (ZeRO-Offload, FSDP CPUOffload) move
    // over PCIe each step, which the model has no term for: the row is not one it can price.
    if (contains(lower(*run.sharding), "offload")) {
      reason = "sharding '" + *run.sharding + "' offloads to the CPU, which is not modelled";
      return std::nullopt;
    }
    const auto s = parse_sharding(*run.sharding);
    if (!s) {
      reason = "sharding '" + *run.sharding + "' not recognised";
      return std::nullopt;
    }
    sharding = *s;
    if (sharding == Sharding::HybridShard) {
      // The rows' schema has no shard-group size: the scenario's default, one node's ranks
      // (parallel::hybrid_shard_size), which torch's HYBRID_SHARD also takes by default.
      m.assumptions.push_back("'" + *run.sharding +
                              "': hybrid_shard with a shard group of one node's ranks (the "
                              "source does not state its size)");
    }
    const std::string text = lower(*run.sharding);
    if (contains(text, "mixed_precision default")) {
      // Composer's FSDP mixed_precision DEFAULT: parameters in the training precision,
      // gradients reduced in float32 (composer/trainer/mosaic_fsdp_utils.py of Composer
      // 0.16-0.17, the rows' versions, get_mixed_precision: reduce_dtype = torch.float32; in
      // composer/distributed/mosaic_parallelism.py since 2024-05); PURE reduces in the training
      // precision, the llm-foundry stack's own setting.
      reduce_dtype = "fp32";
      m.assumptions.push_back("'" + *run.sharding +
                              "': gradients reduced in fp32 (Composer's DEFAULT mixed precision)");
    } else if (contains(text, "grad_reduce_in_fp32=false")) {
      // Megatron-Bridge's perf scripts set ddp.grad_reduce_in_fp32 False (the Megatron-Bridge
      // rows' zero_stage_or_fsdp text): the gradient buffers and their reduction stay in the
      // training dtype, where Megatron-LM's --bf16 default reduces in fp32.
      reduce_dtype = "precision";
      m.assumptions.push_back(
          "gradients reduced in the training dtype (grad_reduce_in_fp32=False)");
    } else if (contains(text, "mixed_precision") && !contains(text, "mixed_precision pure")) {
      m.assumptions.push_back("'" + *run.sharding +
                              "': the gradient-reduce dtype is the stack's, whatever the row's");
    }
    if (contains(text, "precision-aware optimizer")) {
      // Megatron-Core's precision-aware optimizer with the state dtypes the row's recipe sets
      // ("main_params_dtype float32, exp_avg_dtype bfloat16, ..."), inline as the stack's
      // optimizer keys; a dtype the text does not name stays fp32 (OptimizerConfig's default).
      nlohmann::json state = nlohmann::json::object();
      for (const char* key : {"main_params_dtype", "exp_avg_dtype", "exp_avg_sq_dtype"}) {
        for (const auto& [torch_name, name] :
             {std::pair{"float32", "fp32"}, {"bfloat16", "bf16"}, {"float16", "fp16"}}) {
          if (contains(text, std::string(key) + " " + torch_name)) state[key] = name;
        }
      }
      m.assumptions.push_back("precision-aware optimizer: stack optimizer " + state.dump() +
                              ", inline");
      // It reads the reduced 16-bit gradient shards in place: no fp32 copy of them
      // (StackSpec::precision_aware_optimizer).
      state["precision_aware"] = true;
      state["sources"]["state"] =
          "The row's precision-aware optimizer (Megatron-Core OptimizerConfig "
          "use_precision_aware_optimizer) with the dtypes its recipe sets.";
      m.stack_overrides["optimizer"] = std::move(state);
    }
  } else if (dp > 1) {
    reason = "sharding (zero_stage_or_fsdp) not stated with dp " + str(dp);
    return std::nullopt;
  }

  const bool layer_level = run.recompute && contains(lower(*run.recompute), "selective") &&
                           contains(lower(*run.recompute), "layer");
  if (layer_level) {
    // torchtitan's layer-level selective checkpointing (parallelize_llama.py at 1ea476e9f,
    // checkpoint_wrapper: selective_ac_option a positive int x checkpoints every x-th
    // TransformerBlock whole, `_count % every_x_layer == 0`, and keeps the others' activations).
    m.recomputes = {Recompute::Full};
    m.assumptions.push_back(
        "recompute '" + *run.recompute +
        "': torchtitan's selective_ac_option 2, every second layer recomputed whole (its "
        "config's example; the source states no value), as recompute full with "
        "recompute_layers " +
        str(run.layers.value_or(0) / 2) +
        " (the first half of each model chunk's layers: the same count)");
  } else if (run.recompute) {
    const auto r = parse_recompute(*run.recompute);
    if (!r) {
      reason = "activation recompute '" + *run.recompute +
               "' is not modelled (trainsim recomputes all layers or none: none, selective, "
               "full; or full for each chunk's first layers)";
      return std::nullopt;
    }
    m.recomputes = {*r};
    if (contains(lower(*run.recompute), "mla_up_proj")) {
      // Megatron-Core's recompute_modules ["mla_up_proj"]: the source's stack with this
      // selective policy, inline (model::apply_mla_up_proj_selective).
      m.stack_overrides["recompute"]["selective"] = "mla_up_proj";
      m.stack_overrides["recompute"]["sources"]["selective"] =
          "The row's recompute_modules ['mla_up_proj']: Megatron-Core recomputes the latent "
          "attention's up-projections and RoPE before the attention's backward and frees the "
          "query, key and value after its forward (megatron/core/transformer/"
          "multi_latent_attention.py, recompute_up_proj).";
      m.assumptions.push_back("recompute '" + *run.recompute +
                              "': stack recompute.selective mla_up_proj, inline");
    }
  } else if (src.recompute_default) {
    m.recomputes = {*src.recompute_default};
    m.assumptions.push_back("recompute " +
                            std::string(parallel::to_string(*src.recompute_default)) + ": " +
                            std::string(src.recompute_default_why));
  } else {
    m.recomputes = {Recompute::None, Recompute::Selective, Recompute::Full};
    m.search_recompute = true;
  }

  bool sequence_parallel = false;
  if (run.sequence_parallel) {
    sequence_parallel = *run.sequence_parallel && tp > 1;
    if (*run.sequence_parallel && tp == 1) {
      m.assumptions.push_back("sequence_parallel true with tp 1: nothing to split, off");
    }
  } else if (tp > 1) {
    if (!src.sequence_parallel_default) {
      reason = "sequence_parallel not stated with tp " + str(tp);
      return std::nullopt;
    }
    sequence_parallel = *src.sequence_parallel_default;
    m.assumptions.push_back(std::string("sequence parallel ") + (sequence_parallel ? "on" : "off") +
                            ": " + std::string(src.sequence_parallel_default_why));
  }

  const std::int64_t hidden = run.hidden.value_or(0);
  std::int64_t ffn = 0;
  if (moe) {
    m.assumptions.push_back("model: the built-in '" + *moe + "' (the row names '" + run.model +
                            "'), expert parallelism " + str(*run.ep) +
                            " from extra_metrics.ep, carved from the data-parallel ranks");
  } else if (run.ffn_hidden) {
    ffn = *run.ffn_hidden;
  } else {
    ffn = 4 * hidden;
    m.assumptions.push_back("ffn_hidden 4 x hidden: " + std::string(src.ffn_default_why));
  }
  if (run.virtual_pp && *run.virtual_pp > 1 && pp == 1) {
    // Interleaving splits each pipeline stage's layers into chunks that take turns with the
    // other stages'; with one stage there is nothing to interleave, so the row contradicts
    // itself (it used to run as pp 1 without a word).
    reason = "virtual_pp " + str(*run.virtual_pp) + " with pp 1: interleaving needs pp > 1";
    return std::nullopt;
  }
  if (pp > 1 && run.virtual_pp) {
    m.virtual_stages = {*run.virtual_pp};
  } else {
    m.virtual_stages = virtual_stage_candidates(*run.layers, pp);
    m.search_virtual_stages = m.virtual_stages.size() > 1;
  }
  m.micro_batches = micro_batch_candidates(run, *run.global_batch / dp);
  m.search_micro_batch = !run.micro_batch && !run.grad_accum;
  if (!src.caveat.empty()) m.assumptions.emplace_back(src.caveat);
  if (!run.derived_fields.empty()) {
    m.assumptions.push_back("derived by the transcriber, not printed by the source: " +
                            join(run.derived_fields, ", "));
  }

  // The measured metric, in order of preference (docs/validation.md, "Metric").
  // The sources' FLOP counts (validation::source_flops) are dense models' formulas: for a
  // mixture-of-experts row they would count every expert as used by every token (the 6N of
  // torchtitan and llm-foundry counts Mixtral 8x7B's 46.7B parameters where 12.9B are active,
  // and an MFU of 151% came out) or one expert's MLP per layer (Megatron-Core's count without
  // its moe_router_topk factor). Only a throughput or an iteration time is compared for them.
  const bool convention_known =
      src.convention != FlopConvention::Unstated && src.flops_not_compared.empty() && !moe;
  if (run.tokens_per_s_per_gpu) {
    m.metric = Metric::TokensPerSecondPerGpu;
    m.measured = *run.tokens_per_s_per_gpu;
  } else if (run.iteration_time_s) {
    m.metric = Metric::IterationTime;
    m.measured = *run.iteration_time_s;
  } else if (run.tflops_per_gpu && convention_known) {
    m.metric = Metric::FlopRatePerGpu;
    m.measured = *run.tflops_per_gpu * 1e12;
  } else if (run.mfu && convention_known) {
    m.metric = Metric::Mfu;
    m.measured = *run.mfu;
  } else if (run.hfu && convention_known) {
    m.metric = Metric::Hfu;
    m.measured = *run.hfu;
  } else {
    reason = convention_known ? "no measured throughput, iteration time, TFLOP/s, MFU or HFU"
             : !src.flops_not_compared.empty()
                 ? "only TFLOP/s, MFU or HFU measured: " + std::string(src.flops_not_compared)
             : moe
                 ? "only TFLOP/s, MFU or HFU measured, and the source counts FLOPs with a "
                   "dense model's formula, not by the experts each token of '" +
                       run.model + "' is routed to; tokens/s/GPU or the iteration time is compared"
                 : "only TFLOP/s, MFU or HFU measured, and the source does not state how it "
                   "counts FLOPs";
    return std::nullopt;
  }

  const ModelStyle& style = src.style;
  nlohmann::json model;
  if (!moe) {
    model = {
        {"name", run.id},
        {"layers", *run.layers},
        {"hidden", hidden},
        {"heads", *run.heads},
        {"kv_heads", run.kv_heads.value_or(*run.heads)},
        {"ffn_hidden", ffn},
        {"vocab", *run.vocab},
        // GPT-2/MPT/BLOOM MLPs are 4h with GELU; Llama's SwiGLU MLP is not 4h (8h/3 rounded).
        {"activation", ffn == 4 * hidden ? "gelu" : "swiglu"},
        {"norm", style.norm == model::Norm::RmsNorm     ? "rmsnorm"
                 : style.norm == model::Norm::LayerNorm ? "layernorm"
                                                        : "layernorm_no_affine"},
        {"tied_embeddings", style.tied_embeddings},
        {"position_embedding", style.positions == model::PositionEmbedding::Rope      ? "rope"
                               : style.positions == model::PositionEmbedding::Learned ? "learned"
                                                                                      : "alibi"},
        {"linear_bias", style.linear_bias}};
    // A learned table as long as the training sequence (Megatron's --max-position-embeddings
    // equals --seq-length in these runs; MPT's max_seq_len is the benchmark's sequence length).
    if (style.positions == model::PositionEmbedding::Learned) model["max_positions"] = *run.seq_len;
  }

  m.base = nlohmann::json::object();
  m.base["hardware"] = hw->document;
  m.base["stack"] = std::string(src.stack);
  if (fp8) {
    m.stack_overrides["fp8"]["recipe"] = fp8->recipe;
    m.assumptions.push_back("fp8 recipe " + fp8->recipe + " (stack " + std::string(src.stack) +
                            " with fp8.recipe from the row's precision text)");
    if (!fp8->assumption.empty()) m.assumptions.push_back(fp8->assumption);
  }
  if (!reduce_dtype.empty()) {
    m.stack_overrides["gradient_reduce_dtype"] = reduce_dtype;
    m.stack_overrides["sources"]["gradient_reduce_dtype"] =
        reduce_dtype == "fp32"
            ? "The row's mixed_precision DEFAULT: Composer reduces gradients in float32 "
              "(composer/trainer/mosaic_fsdp_utils.py of Composer 0.16-0.17, get_mixed_precision)."
            : "The row's grad_reduce_in_fp32=False: Megatron-Core keeps the gradient buffers in "
              "the parameters' dtype and reduces them in it (DistributedDataParallelConfig).";
  }
  const std::optional<ScriptSettings> script = parse_script_settings(run.framework, reason);
  if (!script) return std::nullopt;
  if (!script->stack_overrides.empty()) m.stack_overrides.merge_patch(script->stack_overrides);
  m.assumptions.insert(m.assumptions.end(), script->assumptions.begin(), script->assumptions.end());
  if (!m.stack_overrides.empty()) {
    // The source's stack with the keys the row sets, inline.
    m.base["stack"] = patched_builtin("stacks", src.stack, m.stack_overrides);
  }
  if (moe && !script->model_overrides.empty()) {
    // The built-in model's file with the keys the row sets, inline.
    nlohmann::json model_doc = patched_builtin("models", *moe, script->model_overrides);
    model_doc["name"] = *moe;
    model_doc["notes"] = "models/" + *moe + ".json with the keys the row's recipe sets: " +
                         script->model_overrides.dump();
    m.base["model"] = std::move(model_doc);
  } else if (moe) {
    m.base["model"] = *moe;
  } else {
    model.merge_patch(script->model_overrides);
    m.base["model"] = std::move(model);
  }
  m.base["cluster"] = {{"gpus", gpus}};
  if (hw->id == "gb200-nvl72" && std::string_view(src.name) == "nvidia-perf-summary" && gpus >= 4) {
    // Megatron-Bridge's performance scripts submit a job of 4-GPU hosts (GB200) with Slurm's
    // --segment set to the node count up to 18 (one NVL72 rack; v0.3.0) and beyond it to the
    // largest divisor of the node count up to 18 (v0.2.0 and v0.3.0;
    // scripts/performance/utils/executors.py, slurm_executor): the job fills that many hosts of
    // each rack. 64 nodes: 16 per rack. (Up to 18 nodes the job fits one rack either way.)
    const std::int64_t nodes = gpus / 4;
    std::int64_t segment = std::min<std::int64_t>(nodes, 18);
    while (nodes % segment != 0) --segment;
    m.base["cluster"]["nodes_per_domain"] = segment;
    m.assumptions.push_back("nodes_per_domain " + str(segment) +
                            ": Megatron-Bridge's performance scripts run GB200 jobs with Slurm's "
                            "--segment, the largest divisor of the node count up to 18");
  }
  m.base["training"] = {{"seq_len", *run.seq_len},
                        {"global_batch", *run.global_batch},
                        {"precision", parallel::to_string(*dtype)}};
  m.base["parallel"] = {{"tp", tp},
                        {"pp", pp},
                        {"cp", cp},
                        {"sequence_parallel", sequence_parallel},
                        {"sharding", parallel::to_string(sharding)}};
  if (moe) m.base["parallel"]["ep"] = *run.ep;
  m.base["parallel"].merge_patch(script->parallel_overrides);
  if (layer_level) {
    m.base["parallel"]["recompute_layers"] = std::max<std::int64_t>(1, *run.layers / 2);
  }
  return m;
}

nlohmann::json candidate_document(const Mapping& mapping, std::int64_t micro_batch,
                                  std::int64_t virtual_stages, parallel::Recompute recompute) {
  nlohmann::json doc = mapping.base;
  doc["training"]["micro_batch"] = micro_batch;
  doc["parallel"]["virtual_stages"] = virtual_stages;
  doc["parallel"]["pipeline_schedule"] = virtual_stages > 1 ? "interleaved" : "1f1b";
  doc["parallel"]["recompute"] = parallel::to_string(recompute);
  return doc;
}

}  // namespace trainsim::validation
