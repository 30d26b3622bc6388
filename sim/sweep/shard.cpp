#include "trainsim/sweep/shard.hpp"

#include <charconv>

#include "trainsim/error.hpp"

#include "sim/sweep/sweep_spec.hpp"

namespace trainsim::sweep {
namespace {

// A non-negative decimal integer, the whole of `text`, written as the other integer flags take
// them: no sign and no leading zero ("00/2" was read as 0/2, where --gpus 016 is refused).
std::optional<std::int64_t> parse_count(std::string_view text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < 0) return std::nullopt;
  if (text.size() > 1 && text.front() == '0') return std::nullopt;
  return v;
}

Shard checked(std::optional<std::int64_t> index, std::optional<std::int64_t> count,
              const std::string& origin, const std::string& got) {
  if (!index || !count) {
    throw ConfigError(origin, "",
                      "malformed shard; expected K/N with decimal integers 0 <= K < N (no leading "
                      "zero), got '" +
                          got + "'");
  }
  // More shards than the largest sweep has scenarios would all be empty (and the end records
  // merge reads refuse such counts).
  if (*count > kMaxSweepSize) {
    throw ConfigError(origin, "",
                      "too many shards; expected K/N with N <= " + std::to_string(kMaxSweepSize) +
                          ", got '" + got + "'");
  }
  if (*count < 1 || *index >= *count) {
    throw ConfigError(origin, "",
                      "shard index out of range; expected K/N with 0 <= K < N, got '" + got + "'");
  }
  return Shard{.index = *index, .count = *count};
}

}  // namespace

Shard parse_shard(std::string_view text, const std::string& origin) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos)
    return checked(std::nullopt, std::nullopt, origin, std::string(text));
  return checked(parse_count(text.substr(0, slash)), parse_count(text.substr(slash + 1)), origin,
                 std::string(text));
}

Shard shard_from_environment(const ShardEnvironment& env) {
  const std::string origin = "--shard auto";
  // The count a flag gives is named as the flag: "--shard auto (SLURM_ARRAY_TASK_ID): shard
  // index out of range; ... got '1/0'" never said which of the two was wrong.
  if (env.shard_count && (*env.shard_count < 1 || *env.shard_count > kMaxSweepSize)) {
    throw ConfigError("--shard-count", "",
                      "expected a number of shards from 1 to " + std::to_string(kMaxSweepSize) +
                          ", got " + std::to_string(*env.shard_count));
  }
  if (env.slurm_array_task_id) {
    std::optional<std::int64_t> count = env.shard_count;
    std::string count_text = count ? std::to_string(*count) : "";
    if (!count) {
      if (!env.slurm_array_task_count) {
        throw ConfigError(origin, "",
                          "SLURM_ARRAY_TASK_COUNT is not set; expected it with "
                          "SLURM_ARRAY_TASK_ID, or --shard-count N, got nothing");
      }
      count_text = *env.slurm_array_task_count;
      count = parse_count(count_text);
    }
    return checked(parse_count(*env.slurm_array_task_id), count,
                   origin + (env.shard_count ? " (SLURM_ARRAY_TASK_ID, --shard-count)"
                                             : " (SLURM_ARRAY_TASK_ID)"),
                   *env.slurm_array_task_id + "/" + count_text);
  }
  if (env.job_completion_index) {
    if (!env.shard_count) {
      throw ConfigError(origin, "",
                        "JOB_COMPLETION_INDEX needs the number of shards; expected "
                        "--shard-count N (the job's completions), got nothing");
    }
    return checked(parse_count(*env.job_completion_index), env.shard_count,
                   origin + " (JOB_COMPLETION_INDEX, --shard-count)",
                   *env.job_completion_index + "/" + std::to_string(*env.shard_count));
  }
  throw ConfigError(origin, "",
                    "no shard in the environment; expected SLURM_ARRAY_TASK_ID or "
                    "JOB_COMPLETION_INDEX to be set, got neither");
}

Shard shard_from_flags(const std::string& shard, const ShardEnvironment& env) {
  if (shard == "auto") return shard_from_environment(env);
  if (env.shard_count) {
    throw ConfigError("--shard-count", "",
                      "only used with --shard auto; expected --shard auto, got " +
                          (shard.empty() ? std::string("no --shard") : "--shard '" + shard + "'"));
  }
  if (shard.empty()) return Shard{};
  return parse_shard(shard, "--shard");
}

}  // namespace trainsim::sweep
