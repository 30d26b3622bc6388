// Sharding of a sweep or a plan search across machines (Slurm job arrays, Kubernetes indexed
// jobs): shard K of N evaluates the scenarios whose index i has i % N == K (0-based round robin,
// so every shard gets a similar mix). `trainsim merge` joins the shards' outputs again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainsim::sweep {

// The K-th (0-based) of N slices. Invariant: 0 <= index < count.
struct Shard {
  std::int64_t index = 0;
  std::int64_t count = 1;

  [[nodiscard]] bool selects(std::int64_t scenario_index) const {
    return scenario_index % count == index;
  }
  // Scenarios of a sweep of `total` that this shard evaluates.
  [[nodiscard]] std::int64_t size_of(std::int64_t total) const {
    // ceil((total - index) / count), written so that no count up to INT64_MAX overflows.
    return total > index ? (total - index - 1) / count + 1 : 0;
  }
};

// Parses "K/N" (0 <= K < N). `origin` ("--shard") names the flag in errors.
// Throws ConfigError: "--shard: shard index out of range; expected K/N with 0 <= K < N, got '3/2'".
[[nodiscard]] Shard parse_shard(std::string_view text, const std::string& origin);

// The variables `--shard auto` reads, as the CLI found them (nullopt: unset).
struct ShardEnvironment {
  std::optional<std::string> slurm_array_task_id = {};     // SLURM_ARRAY_TASK_ID
  std::optional<std::string> slurm_array_task_count = {};  // SLURM_ARRAY_TASK_COUNT
  std::optional<std::string> job_completion_index = {};    // JOB_COMPLETION_INDEX (Kubernetes)
  std::optional<std::int64_t> shard_count = {};            // --shard-count
};

// `--shard auto`: SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT when the task id is set (the
// count from --shard-count when given; a Slurm array must then be 0-based: --array=0-(N-1)),
// else JOB_COMPLETION_INDEX of --shard-count. Throws ConfigError when neither is set, a count is
// missing or a value is not an integer in range.
[[nodiscard]] Shard shard_from_environment(const ShardEnvironment& env);

// The shard the flags ask for: `shard` empty means the whole sweep (0/1), "auto" reads `env`
// (see shard_from_environment), anything else is K/N. --shard-count goes only with auto.
// Throws ConfigError.
[[nodiscard]] Shard shard_from_flags(const std::string& shard, const ShardEnvironment& env);

}  // namespace trainsim::sweep
