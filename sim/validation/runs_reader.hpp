// Reads published_runs.json (the schema of validation/README.md) into typed rows. Strict: every
// documented key is required (null where the source is silent), unknown keys are rejected with
// "did you mean", and a value of the wrong type is a ConfigError naming the file and the row's
// JSON pointer ("/12/tp").
#pragma once

#include <string>
#include <vector>

#include "trainsim/validation/published_run.hpp"

namespace trainsim::validation {

// Parses the text of a runs file; `source` names it in errors. Throws ConfigError for text that
// is not JSON, not an array of objects, or a row with a missing, unknown or ill-typed key.
[[nodiscard]] std::vector<PublishedRun> read_published_runs(const std::string& text,
                                                            const std::string& source);

// The text of the runs file at `path`. Throws ConfigError naming it when it cannot be read.
[[nodiscard]] std::string read_runs_file(const std::string& path);

// The name errors and the report use for the built-in copy.
inline constexpr const char* kBuiltinRunsName = "validation/published_runs.json (built-in)";

// The built-in copy's text (validation/published_runs.json, embedded at build time).
[[nodiscard]] std::string builtin_runs_text();

}  // namespace trainsim::validation
