// Builds a Scenario from a scenario document (a JSON file, inline keys, or nothing) with
// overrides at dotted paths ("parallel.tp"), which is how command-line flags and sweep axes
// both change a scenario. Resolves built-in or file hardware and models, derives dp and
// documents every default it applies.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/parallel/scenario.hpp"

namespace trainsim::io {

// Largest tp, pp and cp a scenario, a sweep axis or a search space accepts: 2^20 each, so that
// tp x pp x cp <= 2^60 fits an int64 wherever it is formed, not only where it is checked.
inline constexpr std::int64_t kMaxDegree = std::int64_t{1} << 20U;

// What a scenario is loaded for. Simulate (run, sweep, search, compare, diff, validate) refuses a
// model with layers the simulator cannot run yet (model::simulation_gap: latent attention);
// Describe (counts and FLOPs only) accepts it.
enum class ScenarioUse { Simulate, Describe };

// A scenario document and where it came from.
struct ScenarioDocument {
  nlohmann::json json = nlohmann::json::object();
  std::string source = "command line";  // file path, or "command line"
  std::string base_dir;                 // relative hardware/model paths resolve here first
  // JSON pointer -> what set it ("--tp"), so an error in an overridden value names the flag.
  std::map<std::string, std::string> overridden;
  // JSON pointer of an inline hardware, model or stack -> the file and pointer where it is
  // written, when elsewhere than at that pointer in `source` (a sweep axis's value,
  // "/axes/model/1"): its loader's notes and errors name that place.
  std::map<std::string, std::pair<std::string, std::string>> written_at;
  ScenarioUse use = ScenarioUse::Simulate;
};

// Reads a scenario file. Throws ConfigError for an unreadable file or malformed JSON.
[[nodiscard]] ScenarioDocument read_scenario_file(const std::string& path);

// Sets `value` at a dotted path ("parallel.tp", "cluster.gpus"), creating objects on the way.
// Setting cluster.gpus removes cluster.nodes and the reverse, since they say the same thing.
// `origin` ("--tp", "axis parallel.tp") is recorded for error messages.
void set_path(ScenarioDocument& doc, std::string_view dotted, nlohmann::json value,
              const std::string& origin);

// The sharding mode another tool's name for it is ("zero2", "ZeRO-3", "DDP", "FSDP", "HSDP":
// DeepSpeed's ZeRO stages and PyTorch's wrappers, compared in lower case without '-', '_' or
// spaces), or nullopt. For the error that names it: "did you mean" took "zero2" for "zero1".
[[nodiscard]] std::optional<std::string> sharding_alias(const std::string& value);

// The keys a scenario accepts, as dotted paths (for sweep axes and "did you mean").
[[nodiscard]] const std::vector<std::string>& scenario_paths();

// parallel.pipeline_layout written as text, "7,9,9,7" or "7, 9, 9, 7": comma-separated
// integers, blanks around each allowed, or nullopt (an empty item, anything but an optionally
// signed integer, a value past int64). Their ranges are the loader's to check
// (scenario_from_document names a bad entry by its index).
[[nodiscard]] std::optional<std::vector<std::int64_t>> parse_layer_counts(std::string_view text);

// Resolves and checks the document's keys (types, units, names, ranges) and derives dp.
// Documented defaults: cluster needs nodes or gpus; training.seq_len is required;
// global_batch defaults to dp x micro_batch (no accumulation); micro_batch 1; precision bf16;
// optimizer adamw; tp = pp = cp = 1; sequence_parallel false; pipeline_schedule 1f1b;
// virtual_stages 1; sharding none; recompute none; stack pytorch-2.3-fsdp (kDefaultStack).
// Counts are bounded (parallel::kMaxGpus, kMaxSeqLen, kMaxGlobalBatch, kMaxMicroBatchTokens
// in scenario.hpp): a larger one is "out of range; expected at most ...", so no product of
// counts overflows; micro_batch x seq_len is bounded by parallel::validate, a plan problem. Throws
// ConfigError for bad input. Plan problems (tp not dividing heads, ...) are not checked here: call
// parallel::validate. A gpus count not divisible by tp*pp*cp leaves dp = 0.
[[nodiscard]] parallel::Scenario scenario_from_document(const ScenarioDocument& doc);

// The resolved scenario as JSON, dp included: the report's "scenario" object.
[[nodiscard]] nlohmann::json scenario_to_json(const parallel::Scenario& s);

// What is wrong with a scenario read back as scenario_to_json writes it (a sweep row's or a
// search plan's, which merge copies): the key at its dotted path ("parallel.tp"), the value as
// written (cut to 40 bytes; empty where the key is missing) and what scenario_to_json writes there.
struct EchoProblem {
  std::string path;
  std::string value;
  std::string expected;
  bool unknown_key = false;  // a key scenario_to_json never writes there

  // "'scenario.parallel.tp' is 0; expected a degree, an integer from 1 to 1048576",
  // "'scenario.parallel.tp' missing; ..." where `value` is empty, or "unknown key
  // 'scenario.parallel.tpp'; ...".
  [[nodiscard]] std::string text() const {
    const std::string key = "'scenario" + (path.empty() ? "" : "." + path) + "'";
    if (unknown_key) return "unknown key " + key + "; expected " + expected;
    return key + (value.empty() ? " missing" : " is " + value) + "; expected " + expected;
  }
};

// Why `scenario` is not one scenario_to_json writes, or nullopt: a key it does not write, one it
// always writes missing, or a value it cannot write: a count below 1 (tp, pp, cp past
// kMaxDegree, gpus and nodes past parallel::kMaxGpus, more nodes than GPUs), a name outside the
// scenario reader's (precision, optimizer, pipeline_schedule, sharding, recompute), a flag that is
// not true or false (the pipeline-split flags, written only as true), a pipeline_layout that is not
// layer counts; and what the reader derives: dp is gpus / (tp x pp x cp), or 0 where that is not a
// whole number; shard_group is written exactly for hybrid_shard; sequence_parallel is false where
// tp is 1. The hardware, model and stack are a name or an inline object; their own keys are their
// loaders' (not read here).
[[nodiscard]] std::optional<EchoProblem> echoed_scenario_problem(const nlohmann::json& scenario);

}  // namespace trainsim::io
