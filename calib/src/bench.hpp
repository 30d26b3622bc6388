// What every sub-benchmark of trainsim-calib shares: the device and its stream, the timing
// rules, NVML, the document being written and the checks that keep an unsteady or throttled
// measurement out of it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "calib/host/document.hpp"
#include "calib/host/plan.hpp"
#include "calib/host/stats.hpp"
#include "calib/src/nvml.hpp"

namespace trainsim::calib {

struct TimingOptions {
  int warmups = 3;              // untimed calls before the trials (clocks up, caches, autotune)
  int trials = 7;               // timed trials; the record keeps their median
  double trial_seconds = 0.02;  // each trial repeats the call back to back for about this long
  int max_calls = 2000;         // ... but at most this many calls
  double max_cv = 0.05;         // a coefficient of variation above this rejects the record
};

class Bench {
 public:
  Bench(int device, TimingOptions timing, Document& doc, Nvml& nvml, Environment base);
  ~Bench();
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  [[nodiscard]] cudaStream_t stream() const { return stream_; }
  [[nodiscard]] const TimingOptions& timing() const { return timing_; }
  [[nodiscard]] Document& doc() { return doc_; }
  [[nodiscard]] Nvml& nvml() { return nvml_; }

  // The environment now: the base one with clocks (and whether the power cap holds them down)
  // and time stamp read afresh.
  [[nodiscard]] Environment now() const;

  // Per-call seconds of each trial of `call`, which enqueues one call on stream(): warm-ups,
  // then `calls` calls per trial between CUDA events, `calls` chosen from a first timed call
  // so that a trial lasts about trial_seconds.
  [[nodiscard]] std::vector<double> time_calls(const std::function<void()>& call);

  // Whether a summary may be recorded: steady (TimingOptions::max_cv) and no thermal or
  // hardware slowdown among NVML's throttle reasons when it is checked, right after the
  // trials. When not, the record goes to the document's rejections and a line to stderr.
  [[nodiscard]] bool accept(const std::string& what, const Summary& s);

  // Device memory freed on destruction.
  [[nodiscard]] void* allocate(std::size_t bytes);
  void release_all();

 private:
  int device_;
  TimingOptions timing_;
  Document& doc_;
  Nvml& nvml_;
  Environment base_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  std::vector<void*> buffers_;
};

// The sub-benchmarks (one file each). Each records into bench.doc() and throws CudaError when a
// call fails; main() catches it, notes it in the document and goes on with the next.
void run_gemm(Bench& bench, const std::vector<GemmCase>& cases);
void run_attention_unfused(Bench& bench, const std::vector<AttentionCase>& cases);
void run_memory(Bench& bench, std::size_t array_bytes);
void run_launch(Bench& bench);
void run_power(Bench& bench, double seconds);
// Each GEMM of `cases`, and the STREAM triad, alone and beside a stand-in for a communication
// kernel holding some SMs (overlap.cpp).
void run_overlap(Bench& bench, const std::vector<GemmCase>& cases);

}  // namespace trainsim::calib
