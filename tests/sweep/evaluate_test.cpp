#include "trainsim/sweep/evaluate.hpp"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

using namespace trainsim;
using namespace trainsim::sweep;

TEST_CASE("parallel_ordered: results consumed in order, never more than the window ahead",
          "[sweep]") {
  const int jobs = GENERATE(1, 2, 4, 16);
  const std::int64_t window = GENERATE(1, 3, 64);
  const std::int64_t grain = GENERATE(1, 5);
  constexpr std::int64_t kCount = 2000;
  std::atomic<std::int64_t> consumed{0};
  std::atomic<bool> too_far_ahead{false};
  std::vector<std::int64_t> order;
  std::vector<std::thread::id> producer(kCount);
  std::int64_t last_progress = 0;
  parallel_ordered(
      kCount, jobs, window,
      [&](std::int64_t i) {
        // An index is taken only when i < consumed + window (consumed as the pool counts it,
        // which never exceeds this counter), so i - consumed stays below the window.
        if (i >= consumed.load() + window) too_far_ahead = true;
        producer[static_cast<std::size_t>(i)] = std::this_thread::get_id();
        return std::to_string(i * i);
      },
      [&](std::int64_t i, std::string& result) {
        order.push_back(i);
        if (result != std::to_string(i * i)) order.push_back(-1);
        consumed.fetch_add(1);
      },
      [&](std::int64_t done, std::int64_t total) {
        if (done == last_progress + 1 && total == kCount) last_progress = done;
      },
      grain);
  INFO("jobs " << jobs << ", window " << window << ", grain " << grain);
  CHECK_FALSE(too_far_ahead.load());
  REQUIRE(order.size() == static_cast<std::size_t>(kCount));
  for (std::int64_t i = 0; i < kCount; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
  // Each aligned block of `grain` items ran on one thread (a grain above the window is lowered
  // to it, and then blocks may split).
  if (grain <= window) {
    for (std::int64_t i = 0; i < kCount; ++i) {
      CHECK(producer[static_cast<std::size_t>(i)] ==
            producer[static_cast<std::size_t>(i - i % grain)]);
    }
  }
  // Progress after every consumed result, 1 to count.
  CHECK(last_progress == kCount);
}

TEST_CASE("parallel_ordered: a failure stops after the rows before it, whatever the jobs",
          "[sweep]") {
  const int jobs = GENERATE(1, 2, 8);
  std::vector<std::int64_t> seen;
  // Items 500 and 700 fail; 500 is the smallest, so rows 0..499 are consumed and its
  // exception is the one rethrown.
  REQUIRE_THROWS_WITH(parallel_ordered(
                          1000, jobs, 16,
                          [](std::int64_t i) -> std::string {
                            if (i == 500 || i == 700) {
                              throw std::runtime_error("item " + std::to_string(i));
                            }
                            return "";
                          },
                          [&](std::int64_t i, std::string&) { seen.push_back(i); }),
                      "item 500");
  REQUIRE(seen.size() == 500);
  CHECK(seen.back() == 499);
  // The consumer failing (a full disk) stops the workers and propagates.
  REQUIRE_THROWS_WITH(parallel_ordered(
                          100000, jobs, 16, [](std::int64_t) { return std::string("x"); },
                          [](std::int64_t i, std::string&) {
                            if (i == 10) throw ConfigError("out.csv", "", "disk full");
                          }),
                      "out.csv: disk full");
}

TEST_CASE("parallel_for: every item once, the smallest failure rethrown", "[sweep]") {
  const int jobs = GENERATE(1, 3);
  std::vector<std::atomic<int>> hits(100);
  REQUIRE_THROWS_WITH(parallel_for(100, jobs,
                                   [&](std::int64_t i) {
                                     hits[static_cast<std::size_t>(i)]++;
                                     if (i % 40 == 39) throw std::runtime_error(std::to_string(i));
                                   }),
                      "39");
  for (const std::atomic<int>& h : hits) CHECK(h.load() == 1);
}

TEST_CASE("parse_jobs: 0 means all cores, 1 to kMaxJobs as given, anything else an error",
          "[sweep]") {
  using Catch::Contains;
  CHECK(parse_jobs("0", "--jobs") == default_jobs());
  CHECK(default_jobs() >= 1);
  CHECK(default_jobs() <= kMaxJobs);
  CHECK(parse_jobs("4", "--jobs") == 4);
  // As the number flags read theirs: spaces around dropped, no zero before the first digit
  // ("007" ran as 7 where --top 007 was refused).
  CHECK(parse_jobs(" 2 ", "--jobs") == 2);
  REQUIRE_THROWS_WITH(parse_jobs("007", "--jobs"),
                      "--jobs: a zero before the first digit; expected 0 (all cores) or 1 to "
                      "1024 in decimal, got '007'");
  REQUIRE_THROWS_AS(parse_jobs("00", "--jobs"), ConfigError);
  CHECK(parse_jobs("1024", "--jobs") == kMaxJobs);
  REQUIRE_THROWS_AS(parse_jobs("1025", "--jobs"), ConfigError);
  REQUIRE_THROWS_WITH(parse_jobs("1025", "--jobs"),
                      "--jobs: too many threads; expected 0 (all cores) or 1 to 1024, got '1025'");
  // Beyond int64: still "too many", not a conversion failure.
  REQUIRE_THROWS_WITH(parse_jobs("99999999999999999999999", "--jobs"),
                      Contains("--jobs: too many threads"));
  REQUIRE_THROWS_WITH(parse_jobs("-1", "--jobs"), Contains("--jobs: negative"));
  REQUIRE_THROWS_WITH(parse_jobs("two", "--jobs"), Contains("--jobs: not an integer"));
  REQUIRE_THROWS_WITH(parse_jobs("", "--jobs"), Contains("--jobs: not an integer"));
  REQUIRE_THROWS_WITH(parse_jobs("4x", "--jobs"), Contains("got '4x'"));
}
