// The outputs of `trainsim validate`: a readable table, a JSON document (snake_case keys, unit
// suffixes, a versioned context) and CSV. All deterministic: the same report gives the same
// bytes.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "trainsim/validation/validate_runs.hpp"

namespace trainsim::validation {

// Where the rows came from and how they were filtered, for the context block and the title.
struct RunsInfo {
  std::string runs;  // file path, or kBuiltinRunsName
  std::int64_t rows_in_file = 0;
  std::string source_filter;  // "" when none
  // Stacks replaced with --stack: built-in id -> file (the table's header names them; the JSON
  // and CSV name them in each row's assumptions).
  std::map<std::string, std::string> stack_files;
};

// {"context", "rows": [...], "sources": [...], "overall": {...}}.
[[nodiscard]] nlohmann::json validation_to_json(const ValidationReport& report,
                                                const RunsInfo& info);

// Header, one line per row, then one per source and one "overall" line (column "kind").
[[nodiscard]] std::string validation_to_csv(const ValidationReport& report);

// Compared rows, skipped rows with reasons, then per-source and overall MAPE and bias.
void write_validation_table(std::ostream& out, const ValidationReport& report,
                            const RunsInfo& info);

// "micro_batch=4 virtual_stages=2" for the searched knobs, "-" when nothing was searched.
[[nodiscard]] std::string choices_text(const SearchedChoices& choices);

}  // namespace trainsim::validation
