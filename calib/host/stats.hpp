// Statistics of repeated timings: the suite times each case in several trials and keeps the
// median, as nccl-tests and Google Benchmark's repetitions do, with the spread that says whether
// the median can be trusted.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace trainsim::calib {

struct Summary {
  std::size_t count = 0;
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  double mean = 0.0;
  // Coefficient of variation: sample standard deviation / mean (0 for one sample).
  double cv = 0.0;
  // (max - min) / median: the whole spread, which a single slow trial widens.
  double range = 0.0;
};

// Summarizes `samples`. Requires at least one sample, every one finite and >= 0 (throws
// std::invalid_argument otherwise, naming the offending index).
[[nodiscard]] Summary summarize(std::vector<double> samples);

// Whether a summary is steady enough to record: cv at most `max_cv`. A summary of fewer than
// three samples cannot show its spread and is not steady.
[[nodiscard]] bool steady(const Summary& s, double max_cv);

// How many back-to-back calls make one trial last about `target` seconds when one call takes
// `estimate` seconds: at least 1, at most `cap`.
[[nodiscard]] int calls_per_trial(double estimate, double target, int cap);

}  // namespace trainsim::calib
