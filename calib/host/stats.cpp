#include "calib/host/stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainsim::calib {

Summary summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("no samples to summarize");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!std::isfinite(samples[i]) || samples[i] < 0.0) {
      throw std::invalid_argument("sample " + std::to_string(i) +
                                  " is not a finite non-negative time");
    }
  }
  std::sort(samples.begin(), samples.end());
  Summary s;
  s.count = samples.size();
  const std::size_t mid = s.count / 2;
  s.median = s.count % 2 == 1 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
  s.min = samples.front();
  s.max = samples.back();
  double sum = 0.0;
  for (const double x : samples) sum += x;
  s.mean = sum / static_cast<double>(s.count);
  if (s.count > 1 && s.mean > 0.0) {
    double sq = 0.0;
    for (const double x : samples) sq += (x - s.mean) * (x - s.mean);
    s.cv = std::sqrt(sq / static_cast<double>(s.count - 1)) / s.mean;
  }
  s.range = s.median > 0.0 ? (s.max - s.min) / s.median : 0.0;
  return s;
}

bool steady(const Summary& s, double max_cv) { return s.count >= 3 && s.cv <= max_cv; }

int calls_per_trial(double estimate, double target, int cap) {
  if (!(estimate > 0.0) || !std::isfinite(estimate)) return cap;
  const double calls = std::ceil(target / estimate);
  if (calls < 1.0) return 1;
  if (calls > static_cast<double>(cap)) return cap;
  return static_cast<int>(calls);
}

}  // namespace trainsim::calib
