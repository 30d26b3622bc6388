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

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/parallel/scenario.hpp"
#include "trainsim/sweep/evaluate.hpp"

namespace trainsim::io {

enum class SweepFormat { Csv, JsonLines };

// The keys of a report in JSON (io::report_to_json, less "context" and "scenario"), by what each
// holds: a number >= 0, a count (an integer >= 0), an object of such numbers (and flags), or an
// array of such objects. The
// readers of sweep rows and search plans (merge) check against it.
enum class ReportValue { Metric, Count, Object, Rows };
[[nodiscard]] const std::map<std::string, ReportValue>& report_json_keys();

// Why `value`, a report's object or rows at report key `key` (memory, power, cost, collectives,
// stages), does not have exactly the keys io::report_to_json writes there, naming the first
// unknown or missing one; nullopt when it has. Rows are checked entry by entry.
[[nodiscard]] std::optional<std::string> report_keys_problem(const nlohmann::json& value,
                                                             const std::string& key);

// Why `value`, a report's object or rows at report key `key` of kind `kind` (memory, power,
// cost, collectives, stages), holds a value io::report_to_json does not write there: a count
// (byte counts, calls, ranks, nodes, domains, stages) that is not an integer >= 0, a number that
// is not one >= 0, a flag that is not true or false; nullopt when it holds none (and for the
// other kinds, which their callers check).
[[nodiscard]] std::optional<std::string> report_values_problem(const nlohmann::json& value,
                                                               const std::string& key,
                                                               ReportValue kind);

// Rewrites as doubles the integers that `row`, a sweep row or search plan in JSON, holds where
// io::report_to_json writes doubles: every number of a report but its counts (byte counts,
// calls, ranks, nodes, domains, stages), which are integers. The row's index, rank and scenario
// are left alone. Another JSON tool may write the writer's 0.0 as 0 (jq 1.6 does): the same
// number, not in the writer's form. Returns the path of the first integer rewritten ("bubble_s",
// "collectives[].time_s"), nullopt when there was none.
std::optional<std::string> report_numbers_as_doubles(nlohmann::json& row);

// The shortest round-trip decimal form of v ("0.1", "1e+21"); "nan"/"inf" never occur in
// reports, but print as such.
[[nodiscard]] std::string format_number(double v);

// One CSV field: `text` as it is, or quoted (RFC 4180) where it holds a comma or a quote; line
// breaks become spaces and other control characters JSON escapes, so a row stays one line.
[[nodiscard]] std::string csv_field(std::string_view text);

// The CSV header line (with '\n').
[[nodiscard]] std::string csv_header();
// One CSV row (with '\n').
[[nodiscard]] std::string csv_row(std::int64_t index, const parallel::Scenario& scenario,
                                  const sweep::Evaluation& evaluation);
// One JSON line (with '\n').
[[nodiscard]] std::string json_line(std::int64_t index, const parallel::Scenario& scenario,
                                    const sweep::Evaluation& evaluation);

// The end record of a sharded sweep output (`trainsim sweep --shard K/N`), written as the last
// line only after the last row, so that its presence says the shard ran to the end. It names
// the sweep the rows belong to, so that `trainsim merge` can refuse shards of different sweeps:
//   CSV:        # trainsim shard 3/8 of 10000 scenarios, spec 5f1c0a9e12b4d7e3, 1250 rows
//   JSON lines: {"trainsim_shard":"3/8","scenarios":10000,"spec":"5f1c0a9e12b4d7e3","rows":1250}
// An unsharded output has no end record (its bytes are those of earlier versions).
struct ShardTrailer {
  std::int64_t shard_index = 0;   // K
  std::int64_t shard_count = 1;   // N
  std::int64_t scenarios = 0;     // in the whole sweep (all shards)
  std::uint64_t spec_digest = 0;  // sweep::spec_digest of the expanded spec
  std::int64_t rows = 0;          // rows of this shard before the end record
};

// A digest as written in end records and search documents: 16 lower-case hex digits.
[[nodiscard]] std::string digest_text(std::uint64_t digest);

// The end record line (with '\n').
[[nodiscard]] std::string trailer_line(const ShardTrailer& trailer, SweepFormat format);
// The end record `line` (without its '\n') holds, or nullopt when it is not exactly one.
[[nodiscard]] std::optional<ShardTrailer> parse_trailer(std::string_view line, SweepFormat format);

// A sharded output to merge: its name (for messages) and its whole text.
struct SweepOutput {
  std::string source;
  std::string text;
};

// Joins the outputs of every shard of one sweep (all CSV or all JSON lines, each ending with its
// end record) into the unsharded output: rows in index order, the CSV header once, no end
// record. Throws ConfigError naming the file (and line) for: an empty file or one without an end
// record (a shard cut short), a last line without its newline, mixed formats, a CSV header other
// than csv_header's, a row with the wrong number of fields or JSON that does not parse, a cell
// or key of a kind csv_row or json_line never writes (a metric that is not a finite number >= 0,
// an unknown status or key), a row without an index or not of its shard, a row count other than
// the end record's, shards of different specs, shard counts or sweep sizes, a shard given twice
// or missing, and `expected` (--expect) other than the sweep's size.
[[nodiscard]] std::string merge_outputs(const std::vector<SweepOutput>& outputs,
                                        std::optional<std::int64_t> expected);

// merge_outputs on files, in memory bounded by the longest line whatever their size: each file
// is read once to check it, then all are read in lockstep while `sink` receives the merged
// output. Throws ConfigError as merge_outputs, and for a path that is not a regular file (a FIFO,
// /dev/zero) or a line longer than 4 MiB (a binary or sparse file).
void merge_output_files(const std::vector<std::string>& paths, std::optional<std::int64_t> expected,
                        const std::function<void(std::string_view)>& sink);

// Opens an output file for reading. Throws ConfigError naming `path` when it cannot be read or
// is not a regular file (a FIFO would block, a device never end).
[[nodiscard]] std::ifstream open_output_file(const std::string& path);
// The whole of a small output file. Throws ConfigError as open_output_file, or when the file
// holds more than `max_bytes`.
[[nodiscard]] std::string read_output_file(const std::string& path, std::size_t max_bytes);

// A one-line progress bar for a terminal: "[#####.....]  512/10000  5.1%  ETA 12 s", starting
// with '\r' so that it overwrites itself.
[[nodiscard]] std::string progress_text(std::int64_t done, std::int64_t total, double elapsed_s);

}  // namespace trainsim::io
