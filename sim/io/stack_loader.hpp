// Loading of software-stack profiles (stacks/*.json, a file, or an inline JSON object in a
// scenario) into a stack::StackSpec. Strict like hardware profiles: every key required,
// unknown keys rejected, times need units. Every problem is a ConfigError naming the source
// and the JSON pointer.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/stack/stack_spec.hpp"

namespace trainsim::io {

// The stack a scenario without a "stack" key runs: the scaling-trends paper's software.
inline constexpr const char* kDefaultStack = "pytorch-2.3-fsdp";

// The stack named by a built-in id ("megatron-lm") or, failing that, read from a file path.
// Throws ConfigError for an unknown name that is not a file, or for any problem in the file.
[[nodiscard]] stack::StackSpec load_stack(const std::string& name_or_path);

// The stack in `json`; `source` and `pointer` locate errors. Throws ConfigError.
// `json` with its "extends" chain resolved, as stack_from_json reads it: a relative path looked
// for beside `source` first. A stack document copied elsewhere (validate --stack inlines it into
// each row's scenario) keeps the base it was checked with. Each stack file the chain read is
// added to `files` where given.
[[nodiscard]] nlohmann::json resolved_stack_json(const nlohmann::json& json,
                                                 const std::string& source,
                                                 std::vector<std::string>* files = nullptr);

[[nodiscard]] stack::StackSpec stack_from_json(const nlohmann::json& json,
                                               const std::string& source,
                                               const std::string& pointer);

// Ids of the built-in stacks, sorted.
[[nodiscard]] std::vector<std::string> builtin_stack_ids();

}  // namespace trainsim::io
