#include "calib/src/bench.hpp"

#include <array>
#include <cstdio>

#include "calib/src/check.hpp"

namespace trainsim::calib {

Bench::Bench(int device, TimingOptions timing, Document& doc, Nvml& nvml, Environment base)
    : device_(device), timing_(timing), doc_(doc), nvml_(nvml), base_(std::move(base)) {
  CALIB_CHECK(cudaSetDevice(device_));
  CALIB_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CALIB_CHECK(cudaEventCreate(&start_));
  CALIB_CHECK(cudaEventCreate(&stop_));
}

Bench::~Bench() {
  release_all();
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

Environment Bench::now() const {
  Environment e = base_;
  e.clocks = nvml_.clocks_text();
  // The software power cap is how a GPU runs heavy GEMMs (clocks drop to stay within the
  // board's power limit); it is recorded with the clocks, not rejected.
  const auto reasons = nvml_.throttle_reasons();
  if (!e.clocks.empty() && reasons && (*reasons & kThrottleSwPowerCap) != 0) {
    e.clocks += ", at the power cap";
  }
  e.timestamp = utc_timestamp();
  return e;
}

std::vector<double> Bench::time_calls(const std::function<void()>& call) {
  for (int i = 0; i < timing_.warmups; ++i) call();
  CALIB_CHECK(cudaGetLastError());
  CALIB_CHECK(cudaStreamSynchronize(stream_));
  const auto timed = [&](int calls) {
    CALIB_CHECK(cudaEventRecord(start_, stream_));
    for (int i = 0; i < calls; ++i) call();
    CALIB_CHECK(cudaEventRecord(stop_, stream_));
    CALIB_CHECK(cudaEventSynchronize(stop_));
    CALIB_CHECK(cudaGetLastError());
    float ms = 0.0f;
    CALIB_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms) * 1e-3 / calls;
  };
  const double estimate = timed(1);
  const int calls = calls_per_trial(estimate, timing_.trial_seconds, timing_.max_calls);
  std::vector<double> out;
  for (int t = 0; t < timing_.trials; ++t) out.push_back(timed(calls));
  return out;
}

bool Bench::accept(const std::string& what, const Summary& s) {
  std::string reason;
  const auto reasons = nvml_.throttle_reasons();
  if (reasons && (*reasons & kThrottleSlowdown) != 0) {
    std::array<char, 64> b{};
    std::snprintf(b.data(), b.size(), "clocks throttled (NVML reasons 0x%llx)",
                  static_cast<unsigned long long>(*reasons));
    reason = b.data();
  } else if (!steady(s, timing_.max_cv)) {
    std::array<char, 128> b{};
    std::snprintf(b.data(), b.size(), "coefficient of variation %.3f above %.3f over %zu trials",
                  s.cv, timing_.max_cv, s.count);
    reason = b.data();
  }
  if (reason.empty()) return true;
  std::fprintf(stderr, "trainsim-calib: %s: rejected: %s\n", what.c_str(), reason.c_str());
  doc_.reject({what, reason});
  return false;
}

void* Bench::allocate(std::size_t bytes) {
  void* p = nullptr;
  CALIB_CHECK(cudaMalloc(&p, bytes));
  buffers_.push_back(p);
  return p;
}

void Bench::release_all() {
  cudaDeviceSynchronize();
  for (void* p : buffers_) cudaFree(p);
  buffers_.clear();
}

}  // namespace trainsim::calib
