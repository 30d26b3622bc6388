#include "trainsim/sweep/evaluate.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/memory.hpp"
#include "trainsim/report/simulate.hpp"

namespace trainsim::sweep {

const char* to_string(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Invalid: return "invalid";
    case Status::OutOfMemory: return "out_of_memory";
  }
  return "ok";
}

std::string Evaluation::status_text() const {
  if (problem.empty()) return to_string(status);
  return std::string(to_string(status)) + ": " + problem;
}

Evaluation evaluate(const parallel::Scenario& scenario) {
  Evaluation e;
  const std::vector<parallel::Problem> problems = parallel::validate(scenario);
  if (!problems.empty()) {
    e.status = Status::Invalid;
    e.problem = problems.front().key + ": " + problems.front().message;
    return e;
  }
  e.memory = report::memory_peak(scenario);
  if (!e.memory.fits) {
    e.status = Status::OutOfMemory;
    e.problem = "needs " + to_string(e.memory.total) + " per GPU on stage " +
                std::to_string(e.memory.stage) + ", more than the " + to_string(e.memory.capacity) +
                " of HBM";
    return e;
  }
  report::Simulation sim = report::simulate(scenario);
  e.memory = sim.report.memory;
  e.report = std::move(sim.report);
  return e;
}

int default_jobs() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

void parallel_for(std::int64_t count, int jobs, const std::function<void(std::int64_t)>& fn,
                  const Progress& progress) {
  std::atomic<std::int64_t> next{0};
  std::mutex mutex;  // guards done, first_error, first_error_index and progress calls
  std::int64_t done = 0;
  std::exception_ptr first_error;
  std::int64_t first_error_index = std::numeric_limits<std::int64_t>::max();
  auto worker = [&]() {
    while (true) {
      const std::int64_t i = next.fetch_add(1);
      if (i >= count) return;
      std::exception_ptr error;
      try {
        fn(i);
      } catch (...) {
        error = std::current_exception();
      }
      const std::lock_guard<std::mutex> lock(mutex);
      if (error && i < first_error_index) {
        first_error = error;
        first_error_index = i;
      }
      ++done;
      if (progress) progress(done, count);
    }
  };
  const auto threads = static_cast<std::int64_t>(std::max(1, jobs));
  if (threads <= 1 || count <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    const std::int64_t n = std::min(threads, count);
    pool.reserve(static_cast<std::size_t>(n));
    for (std::int64_t t = 0; t < n; ++t) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace trainsim::sweep
