// Board power by activity, for the profile's power levels (hardware profile "power"): idle, a
// bf16 GEMM loop (compute) and a STREAM triad loop (memory-bound, kept as a comment: the profile
// has no level for it). The average is the NVML energy counter's difference over the interval
// when the driver has one (exact), else the mean of the power samples after the first second.
// Samples every 50 ms give the spread.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "calib/src/bench.hpp"
#include "calib/src/check.hpp"
#include "calib/src/kernels.hpp"

namespace trainsim::calib {
namespace {

using Clock = std::chrono::steady_clock;

struct Reading {
  double watts = 0.0;
  Summary samples;
};

// Runs `step` (which enqueues a few milliseconds of work, or nothing) until `seconds` pass,
// synchronizing after each, while a thread samples the board power.
Reading measure(Bench& bench, double seconds, const std::function<void()>& step) {
  Nvml& nvml = bench.nvml();
  std::atomic<bool> done{false};
  std::mutex lock;
  std::vector<double> samples;
  const auto begin = Clock::now();
  std::thread sampler([&] {
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const double t = std::chrono::duration<double>(Clock::now() - begin).count();
      const auto w = nvml.power_watts();
      if (w && t > 1.0) {
        const std::lock_guard<std::mutex> guard(lock);
        samples.push_back(*w);
      }
    }
  });
  const auto energy_before = nvml.energy_joules();
  const auto start = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    step();
    CALIB_CHECK(cudaStreamSynchronize(bench.stream()));
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const auto energy_after = nvml.energy_joules();
  done.store(true);
  sampler.join();
  if (samples.empty()) throw CudaError("no NVML power sample was read");
  Reading r;
  r.samples = summarize(samples);
  r.watts = (energy_before && energy_after && *energy_after > *energy_before)
                ? (*energy_after - *energy_before) / elapsed
                : r.samples.mean;
  return r;
}

}  // namespace

void run_power(Bench& bench, double seconds) {
  if (!bench.nvml().available()) {
    bench.doc().note("power: not measured: " + bench.nvml().why());
    return;
  }
  const Reading idle =
      measure(bench, seconds, [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
  bench.doc().add_power("idle", idle.watts, idle.samples, bench.now(),
                        "nothing running on the GPU");

  cublasHandle_t blas = nullptr;
  CALIB_CHECK(cublasCreate(&blas));
  CALIB_CHECK(cublasSetStream(blas, bench.stream()));
  constexpr int n = 8192;
  const auto elements = static_cast<std::size_t>(n) * n;
  void* a = bench.allocate(2 * elements);
  void* b = bench.allocate(2 * elements);
  void* c = bench.allocate(2 * elements);
  fill(a, Element::BF16, elements, 1.0f, 9, bench.stream());
  fill(b, Element::BF16, elements, 1.0f, 10, bench.stream());
  const float one = 1.0f;
  const float zero = 0.0f;
  const Reading compute = measure(bench, seconds, [&] {
    for (int i = 0; i < 20; ++i) {
      CALIB_CHECK(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b,
                               CUDA_R_16BF, n, &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT));
    }
  });
  cublasDestroy(blas);
  bench.doc().add_power("compute", compute.watts, compute.samples, bench.now(),
                        "bf16 GEMM 8192x8192x8192 back to back");
  bench.release_all();

  const std::size_t count = (1ULL << 30) / sizeof(float);
  auto* x = static_cast<float*>(bench.allocate(count * sizeof(float)));
  auto* y = static_cast<float*>(bench.allocate(count * sizeof(float)));
  auto* z = static_cast<float*>(bench.allocate(count * sizeof(float)));
  fill(y, Element::F32, count, 1.0f, 11, bench.stream());
  fill(z, Element::F32, count, 1.0f, 12, bench.stream());
  const Reading memory = measure(bench, seconds, [&] {
    for (int i = 0; i < 20; ++i) stream_triad(x, y, z, 3.0f, count, bench.stream());
  });
  bench.doc().add_power("memory_bound", memory.watts, memory.samples, bench.now(),
                        "STREAM triad over 3 x 1 GiB back to back");
  bench.release_all();
}

}  // namespace trainsim::calib
