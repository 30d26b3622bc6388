#include "trainsim/sweep/shard.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

#include "sim/sweep/sweep_spec.hpp"

using namespace trainsim;
using namespace trainsim::sweep;

TEST_CASE("shard: K/N selects indices round robin, every index exactly once", "[sweep]") {
  const Shard s = parse_shard("1/3", "--shard");
  CHECK(s.index == 1);
  CHECK(s.count == 3);
  // Of 0..9, shard 1/3 takes 1, 4, 7: 3 indices; shards 0/3 and 2/3 take 4 and 3.
  CHECK(s.size_of(10) == 3);
  CHECK(parse_shard("0/3", "--shard").size_of(10) == 4);
  CHECK(parse_shard("2/3", "--shard").size_of(10) == 3);
  CHECK(parse_shard("4/5", "--shard").size_of(3) == 0);
  for (std::int64_t i = 0; i < 10; ++i) {
    int owners = 0;
    for (std::int64_t k = 0; k < 3; ++k) owners += Shard{.index = k, .count = 3}.selects(i) ? 1 : 0;
    CHECK(owners == 1);
  }
}

TEST_CASE("shard: bad --shard values are ConfigErrors with one clear line", "[sweep]") {
  REQUIRE_THROWS_AS(parse_shard("3/2", "--shard"), ConfigError);
  REQUIRE_THROWS_WITH(parse_shard("3/2", "--shard"),
                      "--shard: shard index out of range; expected K/N with 0 <= K < N, got '3/2'");
  REQUIRE_THROWS_WITH(parse_shard("0/0", "--shard"),
                      "--shard: shard index out of range; expected K/N with 0 <= K < N, got '0/0'");
  // "00/2" and "0/01" were read as 0/2 and 0/1, where --gpus 016 is refused: a leading zero is
  // refused here too ("0" alone is the first shard).
  for (const char* bad : {"x", "1", "1/", "/2", "-1/2", "1/2/3", "a/b", "1 /2", "00/2", "0/01"}) {
    REQUIRE_THROWS_WITH(parse_shard(bad, "--shard"),
                        Catch::StartsWith("--shard: malformed shard; expected K/N"));
  }
  REQUIRE_THROWS_WITH(parse_shard("00/2", "--shard"),
                      "--shard: malformed shard; expected K/N with decimal integers 0 <= K < N "
                      "(no leading zero), got '00/2'");
  CHECK(parse_shard("0/10", "--shard").count == 10);
}

TEST_CASE("shard: auto reads Slurm, then Kubernetes, else fails", "[sweep]") {
  SECTION("Slurm job array") {
    const Shard s = shard_from_environment(
        {.slurm_array_task_id = "2", .slurm_array_task_count = "8", .job_completion_index = "5"});
    CHECK(s.index == 2);
    CHECK(s.count == 8);
  }
  SECTION("Kubernetes indexed job with --shard-count") {
    const Shard s = shard_from_environment({.job_completion_index = "5", .shard_count = 6});
    CHECK(s.index == 5);
    CHECK(s.count == 6);
  }
  SECTION("missing or bad values") {
    REQUIRE_THROWS_WITH(shard_from_environment({}),
                        Catch::Contains("no shard in the environment"));
    REQUIRE_THROWS_WITH(shard_from_environment({.job_completion_index = "5"}),
                        Catch::Contains("expected --shard-count N"));
    REQUIRE_THROWS_WITH(shard_from_environment({.job_completion_index = "6", .shard_count = 6}),
                        Catch::Contains("shard index out of range"));
    REQUIRE_THROWS_WITH(
        shard_from_environment({.slurm_array_task_id = "x", .slurm_array_task_count = "4"}),
        Catch::Contains("malformed shard"));
  }
  SECTION("a bad --shard-count is named as the flag") {
    // It said "--shard auto (SLURM_ARRAY_TASK_ID): shard index out of range; ... got '1/0'".
    REQUIRE_THROWS_WITH(
        shard_from_environment(
            {.slurm_array_task_id = "1", .slurm_array_task_count = "3", .shard_count = 0}),
        "--shard-count: expected a number of shards from 1 to " + std::to_string(kMaxSweepSize) +
            ", got 0");
    REQUIRE_THROWS_WITH(shard_from_environment({.job_completion_index = "0", .shard_count = -2}),
                        Catch::StartsWith("--shard-count: expected a number of shards from 1"));
    // An index past a count the flag gave names both.
    REQUIRE_THROWS_WITH(
        shard_from_environment({.slurm_array_task_id = "3", .shard_count = 3}),
        "--shard auto (SLURM_ARRAY_TASK_ID, --shard-count): shard index out of range; expected "
        "K/N with 0 <= K < N, got '3/3'");
  }
  SECTION("flags") {
    CHECK(shard_from_flags("", {}).count == 1);
    CHECK(shard_from_flags("1/4", {}).index == 1);
    REQUIRE_THROWS_WITH(shard_from_flags("1/4", {.shard_count = 4}),
                        Catch::Contains("--shard-count: only used with --shard auto"));
    // Without --shard the line said "got --shard ''".
    REQUIRE_THROWS_WITH(shard_from_flags("", {.shard_count = 2}),
                        "--shard-count: only used with --shard auto; expected --shard auto, got "
                        "no --shard");
  }
}

TEST_CASE("shard: size_of holds for every count, and counts beyond any sweep are refused",
          "[sweep]") {
  // Shard 1/3 of 7 scenarios holds 1 and 4 (7 is past the end): ceil((7 - 1) / 3) = 2.
  CHECK(Shard{.index = 1, .count = 3}.size_of(7) == 2);
  CHECK(Shard{.index = 2, .count = 3}.size_of(2) == 0);
  // The largest count: ceil(100 / (2^63 - 1)) = 1, with no overflow on the way.
  CHECK(Shard{.index = 0, .count = std::numeric_limits<std::int64_t>::max()}.size_of(100) == 1);
  REQUIRE_THROWS_WITH(parse_shard("0/1000000001", "--shard"),
                      "--shard: too many shards; expected K/N with N <= 100000000, got "
                      "'0/1000000001'");
}
