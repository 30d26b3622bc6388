#include "sim/cli/batch.hpp"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "sim/io/sweep_writer.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace trainsim::cli {

void keep_freed_memory() {
#ifdef __GLIBC__
  (void)mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);  // glibc's maximum on 64-bit
  (void)mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

sweep::Progress terminal_progress() {
  if (isatty(STDERR_FILENO) == 0) return {};
  const auto start = std::chrono::steady_clock::now();
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(start);
  return [start, last](std::int64_t done, std::int64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done != total && now - *last < std::chrono::milliseconds(100)) return;
    *last = now;
    std::cerr << io::progress_text(done, total, std::chrono::duration<double>(now - start).count())
              << (done == total ? "\n" : "") << std::flush;
  };
}

}  // namespace trainsim::cli
