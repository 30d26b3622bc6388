// Two simulated scenarios side by side (`trainsim diff`, docs/diff.md): the inputs that differ,
// the headline metrics with absolute and relative changes, the step-time change split into the
// components that add up to it, and the largest changes named in words. Every figure and every
// sentence is derived from the two resolved scenarios and their reports; nothing is estimated.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/parallel/scenario.hpp"
#include "trainsim/report/report.hpp"
#include "trainsim/units.hpp"

namespace trainsim::io {

// One side of a diff: a resolved scenario and its report, or why its plan is impossible.
// Invariant: exactly one of `report` and a non-empty `problems` is present.
struct DiffSide {
  std::string source;  // the scenario file as given on the command line
  parallel::Scenario scenario;
  std::optional<report::Report> report;
  std::vector<std::string> problems;  // "/parallel/tp: tp 3 does not divide heads 32; ..."
  // The flags that set the first problem's key ("command line (--tp)"), empty where none did.
  std::string problem_flags;
};

// A scenario key whose resolved value differs; a key present on one side only is null on the
// other.
struct InputChange {
  std::string pointer;  // JSON pointer into the report's "scenario" object: "/parallel/tp"
  nlohmann::json a;
  nlohmann::json b;
};

// How a metric is printed in the table (its JSON value is always the SI number).
enum class MetricKind { Seconds, Bytes, Watts, Joules, Fraction, Rate, Number, Flag };

// One headline metric of both reports. delta = b - a; relative = delta / |a|, absent when a is 0
// or the metric is a flag. A delta within 1e-9 of the larger magnitude is floating-point noise
// (the steady-state extrapolation is exact to about 1e-12) and is stored as exactly 0.
struct MetricDelta {
  std::string pointer;  // JSON pointer into the run report: "/memory/total_bytes"
  std::string label;    // "memory per GPU"
  MetricKind kind = MetricKind::Number;
  double a = 0.0;
  double b = 0.0;
  double delta = 0.0;
  std::optional<double> relative;
};

// One term of the step time. On the report's critical stage the iteration time is exactly
// compute + exposed communication + bubble (report/simulate.cpp: the stage's timeline splits
// into compute running, communication alone and nothing running, and the stack's host
// overhead is added to the last); the bubble is split here into GPU idle and host overhead.
struct StepComponent {
  std::string name;   // compute | exposed_communication | gpu_idle | host_overhead
  std::string label;  // "exposed communication"
  Seconds a;
  Seconds b;
  Seconds delta;
};

// One collective family (op and group) summed over the report's collective table.
struct CollectiveDelta {
  std::string op;     // "all_gather"
  std::string group;  // "dp", "shard", ...
  Seconds a_time;     // per iteration: sum of count x time per call
  Seconds b_time;
  std::int64_t a_calls = 0;  // sum of counts
  std::int64_t b_calls = 0;
  std::int64_t a_ranks = 0;  // largest group size of the family
  std::int64_t b_ranks = 0;
  std::int64_t a_nodes = 0;
  std::int64_t b_nodes = 0;
  std::int64_t a_domains = 0;  // most NVLink domains a call of the family spans
  std::int64_t b_domains = 0;
  Seconds delta;  // b_time - a_time
};

// A sentence of "why it moved", tied to the field it explains.
struct DiffReason {
  std::string component;  // a StepComponent name, "tokens_per_step", "memory", "plan"
  double delta = 0.0;     // SI change of that field (seconds, tokens or bytes); 0 for "plan"
  std::string text;
  bool count = false;  // delta counts whole things (tokens, GPUs, bytes): JSON writes an integer
};

struct ReportDiff {
  std::vector<InputChange> inputs_changed;  // in pointer order
  // The rest is empty unless both sides have a report.
  std::vector<MetricDelta> deltas;  // in table order
  std::vector<StepComponent> step_time;
  // (b - a iteration time) minus the sum of the component deltas: rounding, about 1e-16 s.
  Seconds residual;
  std::vector<CollectiveDelta> collectives;  // largest |delta| first
  std::vector<DiffReason> reasons;           // step-time components by |delta|, then others
};

// The diff of b against a. Requires both sides to satisfy DiffSide's invariant.
[[nodiscard]] ReportDiff diff_reports(const DiffSide& a, const DiffSide& b);

// {"context", "a": {source, scenario, report | null, plan_problems}, "b": ..., "inputs_changed",
//  "deltas", "step_time", "collectives", "reasons"}; keys in docs/diff.md.
[[nodiscard]] nlohmann::json diff_to_json(const DiffSide& a, const DiffSide& b,
                                          const ReportDiff& diff);

// The same as a table: inputs changed, metrics side by side, step-time components, why it moved.
void write_diff_table(std::ostream& out, const DiffSide& a, const DiffSide& b,
                      const ReportDiff& diff);

}  // namespace trainsim::io
