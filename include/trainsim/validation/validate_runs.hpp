// `trainsim validate`: each published run becomes a scenario (sim/validation/mapping), goes
// through the same path as `trainsim run` (scenario loader, parallel::validate, simulate), and
// the prediction is compared with the measurement in the source's own metric and FLOP
// convention. Knobs the source leaves out are searched as the source tuned its runs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/parallel/scenario.hpp"
#include "trainsim/validation/published_run.hpp"

namespace trainsim::validation {

// The measured quantity a row is compared on, in order of preference: throughput when the row
// gives it, else iteration time, else the source's TFLOP/s, MFU or HFU.
enum class Metric {
  TokensPerSecondPerGpu,  // tokens/s per GPU
  IterationTime,          // seconds per optimizer step
  FlopRatePerGpu,         // the source's FLOPs per iteration / (time x GPUs), FLOP/s
  Mfu,                    // the source's model FLOPs / (time x GPUs x the source's peak)
  Hfu,                    // the same with the source's hardware FLOPs
};

// "tokens_per_s_per_gpu", "iteration_time_s", "flop_per_s_per_gpu", "mfu", "hfu".
[[nodiscard]] const char* to_string(Metric m);

// The knobs a row left out and the search chose; unset when the row states the value.
struct SearchedChoices {
  std::optional<std::int64_t> micro_batch;
  std::optional<std::int64_t> virtual_stages;
  std::optional<parallel::Recompute> recompute;
  std::int64_t candidates = 1;  // plans tried (1: nothing searched)
  std::int64_t fitting = 0;     // of which fit in memory

  [[nodiscard]] bool searched() const { return candidates > 1; }
};

// The outcome for one row: compared, or skipped with the reason.
struct RowResult {
  std::int64_t index = 0;
  std::string id;
  std::string source;        // short source name from the mapping table ("narayanan21-t1")
  std::string source_group;  // as in the file
  bool compared = false;
  std::string skip_reason;  // when !compared

  Metric metric = Metric::TokensPerSecondPerGpu;
  FlopConvention convention = FlopConvention::Unstated;
  double predicted = 0.0;  // in the metric's unit (SI; fractions for mfu/hfu)
  double measured = 0.0;
  // predicted / measured - 1 in throughput terms (measured / predicted - 1 for iteration time):
  // positive means the simulator predicts a faster run than was measured.
  double error = 0.0;

  std::string hardware;  // profile id, or the inline override's id
  std::string stack;
  parallel::Scenario scenario;  // the plan simulated (searched knobs applied)
  // Its scenario document, hardware, model and stack inline where the mapping made them so:
  // `trainsim run` on it reproduces the prediction (validate --scenarios writes it).
  nlohmann::json document;
  SearchedChoices choices;
  bool fits = true;  // trainsim's memory model says the simulated plan fits
  // Every assumption the mapping made beyond the row's own values (defaults it applied,
  // hardware it approximated), so that nothing is silent.
  std::vector<std::string> assumptions;
};

// Rows compared, rows skipped, mean absolute error and mean signed error (fractions).
struct Summary {
  std::string source;  // short name; "overall" for all rows
  std::int64_t compared = 0;
  std::int64_t skipped = 0;
  double mape = 0.0;
  double bias = 0.0;
};

struct ValidationReport {
  std::vector<RowResult> rows;   // file order (rows dropped by the filter are absent)
  std::vector<Summary> sources;  // in order of first appearance in the file
  Summary overall;
};

struct ValidationOptions {
  int jobs = 1;               // threads; the output never depends on it
  // Keep rows whose source_group contains this text, ignoring ASCII case ("": all).
  std::string source_filter;
  // Stacks to use instead of built-ins: built-in id -> stack JSON (an inline scenario "stack"),
  // for rows the mapping gives that stack. How a refitted or hand-edited stack is checked.
  std::map<std::string, nlohmann::json> stacks;
  // Where each replaced stack was read (built-in id -> file), named in the rows' assumptions;
  // a stack without an entry is named as the caller's document.
  std::map<std::string, std::string> stack_files;
};

// Whether the run's source_group, or the short source name the report prints for it
// ("llm-foundry-h100"), contains `filter`, ignoring ASCII case (--source bloom keeps
// BLOOM-176B; --source llm-foundry-h100 the H100 tables, as the report's source column names
// them).
[[nodiscard]] bool source_matches(const PublishedRun& run, const std::string& filter);

// Maps, simulates and compares `runs`. Never throws for a row that cannot be mapped or
// simulated: that row is skipped with the reason.
[[nodiscard]] ValidationReport validate_runs(const std::vector<PublishedRun>& runs,
                                             const ValidationOptions& options);

// Per-source and overall summaries of `rows`, sources in order of first appearance.
[[nodiscard]] ValidationReport summarize(std::vector<RowResult> rows);

}  // namespace trainsim::validation
