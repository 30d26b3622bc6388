// HBM bandwidth: the STREAM copy and triad kernels (McCalpin 1995) over arrays far larger than
// the L2 cache, counting bytes read plus written as STREAM does.
#include <string>

#include "calib/src/bench.hpp"
#include "calib/src/check.hpp"
#include "calib/src/kernels.hpp"

namespace trainsim::calib {

void run_memory(Bench& bench, std::size_t array_bytes) {
  const std::size_t count = array_bytes / sizeof(float) / 4 * 4;
  auto* a = static_cast<float*>(bench.allocate(count * sizeof(float)));
  auto* b = static_cast<float*>(bench.allocate(count * sizeof(float)));
  auto* c = static_cast<float*>(bench.allocate(count * sizeof(float)));
  fill(a, Element::F32, count, 1.0f, 6, bench.stream());
  fill(b, Element::F32, count, 1.0f, 7, bench.stream());
  fill(c, Element::F32, count, 1.0f, 8, bench.stream());
  const auto bytes = static_cast<std::int64_t>(count * sizeof(float));
  const Summary copy =
      summarize(bench.time_calls([&] { stream_copy(a, b, count, bench.stream()); }));
  if (bench.accept("memory copy", copy))
    bench.doc().add_memory("copy", 2 * bytes, copy, bench.now());
  const Summary triad =
      summarize(bench.time_calls([&] { stream_triad(a, b, c, 3.0f, count, bench.stream()); }));
  if (bench.accept("memory triad", triad)) {
    bench.doc().add_memory("triad", 3 * bytes, triad, bench.now());
  }
  bench.release_all();
}

// Kernel launch overhead as the simulator adds it to every kernel: the time per empty kernel
// launched back to back on one stream, from the first launch to the last completion.
void run_launch(Bench& bench) {
  const Summary s = summarize(bench.time_calls([&] { empty_kernel(bench.stream()); }));
  if (bench.accept("launch", s)) bench.doc().add_launch(s, bench.now());
}

}  // namespace trainsim::calib
