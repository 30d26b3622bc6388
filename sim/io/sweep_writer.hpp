// Sweep and search outputs: one CSV row or one JSON line per scenario, and `trainsim merge`,
// which joins the outputs of sharded runs into exactly the file an unsharded run writes.
//
// CSV: a header, then one row per scenario whose first column is its index in the sweep (so
// shards can be merged); scenario columns, metric columns, then status. Numbers use the
// shortest decimal form that reads back to the same double (std::to_chars: locale-independent),
// so the same inputs always give the same bytes. Fields holding a comma or a quote are quoted
// (RFC 4180). Metric cells are empty when the scenario was not simulated.
// JSON lines: one object per line, {"index", "scenario", "status", ...report keys...}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/parallel/scenario.hpp"
#include "trainsim/sweep/evaluate.hpp"

namespace trainsim::io {

enum class SweepFormat { Csv, JsonLines };

// The shortest round-trip decimal form of v ("0.1", "1e+21"); "nan"/"inf" never occur in
// reports, but print as such.
[[nodiscard]] std::string format_number(double v);

// The CSV header line (with '\n').
[[nodiscard]] std::string csv_header();
// One CSV row (with '\n').
[[nodiscard]] std::string csv_row(std::int64_t index, const parallel::Scenario& scenario,
                                  const sweep::Evaluation& evaluation);
// One JSON line (with '\n').
[[nodiscard]] std::string json_line(std::int64_t index, const parallel::Scenario& scenario,
                                    const sweep::Evaluation& evaluation);

// A sharded output to merge: its name (for messages) and its whole text.
struct SweepOutput {
  std::string source;
  std::string text;
};

// Joins sharded sweep outputs (all CSV or all JSON lines) into the unsharded output: rows sorted
// by index, the CSV header once. Throws ConfigError naming the file and line for: mixed formats,
// a CSV header that differs from the first file's, a line without an index, a duplicate index,
// a missing index (a gap below the largest index, or below `expected` rows when given).
[[nodiscard]] std::string merge_outputs(const std::vector<SweepOutput>& outputs,
                                        std::optional<std::int64_t> expected);

// A one-line progress bar for a terminal: "[#####.....]  512/10000  5.1%  ETA 12 s", starting
// with '\r' so that it overwrites itself.
[[nodiscard]] std::string progress_text(std::int64_t done, std::int64_t total, double elapsed_s);

}  // namespace trainsim::io
