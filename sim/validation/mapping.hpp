// How a published run becomes trainsim scenarios: the table of sources (software stack, FLOP
// convention, model family, documented defaults), the parsing of the rows' free-text fields,
// and the candidate plans of the knob search. docs/validation.md describes every rule here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/validation/published_run.hpp"
#include "trainsim/validation/validate_runs.hpp"

namespace trainsim::validation {

// Model style of a family: what the rows do not say but the family's code does.
struct ModelStyle {
  model::Norm norm = model::Norm::LayerNorm;
  bool tied_embeddings = true;
  model::PositionEmbedding positions = model::PositionEmbedding::Learned;
  bool linear_bias = true;
  std::string_view why;  // where the style comes from
};

// One entry of the source table. A row belongs to the first entry whose group_contains is in
// its source_group, whose framework_contains (when not empty) is in its framework and whose
// model_contains (when not empty) is in its model. Entries may share a name: their rows are
// one source in the reports.
struct SourceProfile {
  std::string_view name{};  // short name in reports ("narayanan21-t1")
  std::string_view group_contains{};
  std::string_view framework_contains{};
  std::string_view model_contains{};
  std::string_view stack{};  // built-in software-stack profile
  FlopConvention convention = FlopConvention::Unstated;
  // Non-empty: the source's FLOP count is one the model does not make (why); a row that gives
  // only TFLOP/s, MFU or HFU is skipped with it, as for an unstated count.
  std::string_view flops_not_compared{};
  ModelStyle style{};
  // Defaults for values the source's code fixes but the row leaves null; each with its reason.
  std::optional<parallel::Recompute> recompute_default{};
  std::string_view recompute_default_why{};
  std::optional<bool> sequence_parallel_default{};
  std::string_view sequence_parallel_default_why{};
  bool ffn_defaults_to_4h = false;
  std::string_view ffn_default_why{};
  // Non-empty: an approximation every mapped row of the source carries (listed with it).
  std::string_view caveat{};
  // Non-empty: the source's model has features trainsim lacks; every row is skipped with this.
  std::string_view unsupported{};
};

// The source table (one table in code: sim/validation/mapping.cpp).
[[nodiscard]] const std::vector<SourceProfile>& source_profiles();
// The entry of `run`, or nullptr.
[[nodiscard]] const SourceProfile* find_source(const PublishedRun& run);

// `text` with ASCII letters in lower case (source groups, precisions and sharding texts are
// matched ignoring case).
[[nodiscard]] std::string lower(std::string_view text);

// The built-in mixture-of-experts model a row's model text names ("DeepSeek-V3 (w/o MTP)" ->
// "deepseek-v3", "Qwen3_235B_a22B" -> "qwen3-235b-a22b"), or nullopt for any other model.
// Case, spaces, '-', '_' and '.' are ignored.
[[nodiscard]] std::optional<std::string> moe_builtin_model(std::string_view model_name);

// Free-text fields of the rows. Each returns nullopt for text it does not recognise.
[[nodiscard]] std::optional<parallel::Sharding> parse_sharding(std::string_view text);
// The row's activation_recompute; "selective (layer)" (torchtitan's every-other-layer
// checkpointing) is not one of trainsim's modes and gives nullopt.
[[nodiscard]] std::optional<parallel::Recompute> parse_recompute(std::string_view text);
// bf16, fp16 (also "mixed precision 16-bit": fp16 on the A100-era Megatron), or nullopt
// (fp8 recipes, unknown text).
[[nodiscard]] std::optional<hardware::Dtype> parse_precision(std::string_view text);

// The Transformer Engine FP8 recipe a row's precision text names (stack key fp8.recipe,
// docs/stacks.md), with the assumption to print when the mapping is approximate; nullopt for
// text that is not fp8 or names no recipe ("fp8" alone).
// "FP8-CS", "current scaling" -> "current"; "MXFP8", "FP8-MX" -> "mxfp8"; "delayed" ->
// "delayed"; DeepSeek-V3's fine-grained 1x128 / 128x128 block scaling -> "blockwise".
struct Fp8RecipeChoice {
  std::string recipe;      // "delayed", "current", "mxfp8" or "blockwise"
  std::string assumption;  // empty when the text names the recipe exactly
};
[[nodiscard]] std::optional<Fp8RecipeChoice> parse_fp8_recipe(std::string_view text);

// Software settings a row's framework text records from the script that ran it (the
// transcriber's words, the row listing "framework" among its derived_fields), as stack keys to
// merge over the row's stack, each with the assumption to print:
// - "attn_impl flash": FlashAttention 2, the kernel of the profiles' attention curves:
//   attention_speed 1 ("attn_impl triton" keeps the stack's own);
// - "backward_prefetch BACKWARD_PRE" / "BACKWARD_POST": fsdp.backward_prefetch;
// - "forward_prefetch true" with "limit_all_gathers true": PyTorch FSDP1 prefetches the next
//   unit from the current one's pre-forward hook and its rate limiter holds the gather until
//   the unit three back is resharded: fsdp.forward_prefetch 3;
// - "cross_entropy_loss_fusion True": Megatron-Core's fused loss kernel: loss.cross_entropy
//   fused;
// - "mtp_num_layers N": Megatron-Core's multi-token-prediction modules, as the row's recipe sets
//   them: the model key mtp_layers (model_overrides; merged over a built-in model's file).
// Empty overrides when the text names none of them; nullopt with `reason` set for
// "forward_prefetch true" without the rate limiter (a depth no stack key describes) and for a
// "pipeline layout" or "mtp_num_layers" without its numbers.
struct ScriptSettings {
  nlohmann::json stack_overrides = nlohmann::json::object();
  nlohmann::json parallel_overrides = nlohmann::json::object();  // keys of the scenario's plan
  nlohmann::json model_overrides = nlohmann::json::object();     // keys of the model
  std::vector<std::string> assumptions;
};
[[nodiscard]] std::optional<ScriptSettings> parse_script_settings(std::string_view framework,
                                                                  std::string& reason);

// The hardware a row maps to: a built-in profile id, or an inline override of one (A100 40GB).
struct HardwareChoice {
  std::string id;           // "a100-dgx", or "a100-dgx-40gb" for the override
  nlohmann::json document;  // a string (built-in id) or the inline profile object
  std::vector<std::string> assumptions;
};
// nullopt with `reason` set when no profile fits the row's GPU.
[[nodiscard]] std::optional<HardwareChoice> choose_hardware(const PublishedRun& run,
                                                            std::string& reason);

// Candidate values of the searched knobs (docs/validation.md, "Knob search").
// Micro-batch: the row's value; else the powers of two that divide the per-replica batch
// global_batch / dp, plus that batch itself (no gradient accumulation) and the micro-batch that
// extra_metrics.grad_accum implies. Requires per_replica >= 1.
[[nodiscard]] std::vector<std::int64_t> micro_batch_candidates(const PublishedRun& run,
                                                               std::int64_t per_replica);
// Interleaving depth (model chunks per pipeline rank) when pp > 1 and the row leaves it null:
// the divisors of layers / pp (Megatron-LM splits each stage's layers evenly into chunks, so
// layers must divide by pp); {1} when pp == 1 or layers % pp != 0.
[[nodiscard]] std::vector<std::int64_t> virtual_stage_candidates(std::int64_t layers,
                                                                 std::int64_t pp);

// A row mapped to a family of scenario documents that differ only in the searched knobs.
struct Mapping {
  const SourceProfile* source = nullptr;
  Metric metric = Metric::TokensPerSecondPerGpu;
  double measured = 0.0;
  std::string hardware;
  std::vector<std::string> assumptions;
  nlohmann::json base;  // the scenario document with every fixed key
  // The stack keys the row itself sets (its FP8 recipe, its gradient-reduce dtype), merged into
  // the source's stack in `base` and into a stack that replaces it (validate --stack): an object,
  // empty when the row sets none.
  nlohmann::json stack_overrides = nlohmann::json::object();
  std::vector<std::int64_t> micro_batches;
  std::vector<std::int64_t> virtual_stages;
  std::vector<parallel::Recompute> recomputes;
  bool search_micro_batch = false;
  bool search_virtual_stages = false;
  bool search_recompute = false;
};

// The mapping of `run`, or nullopt with `reason` set (a row that cannot be mapped is skipped,
// never an error).
[[nodiscard]] std::optional<Mapping> map_run(const PublishedRun& run, std::string& reason);

// The scenario document of one candidate (base plus the knobs).
[[nodiscard]] nlohmann::json candidate_document(const Mapping& mapping, std::int64_t micro_batch,
                                                std::int64_t virtual_stages,
                                                parallel::Recompute recompute);

}  // namespace trainsim::validation
