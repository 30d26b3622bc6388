// Evaluation of many scenarios: each one is checked (parallel::validate), pruned when it cannot
// fit in memory (report::memory_peak, analytical and cheap) and only then simulated. Runs on a
// pool of std::threads that take the next index from a shared atomic counter; results land at
// their index, so the output order never depends on the number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "trainsim/parallel/scenario.hpp"
#include "trainsim/report/report.hpp"

namespace trainsim::sweep {

enum class Status {
  Ok,           // simulated; report filled
  Invalid,      // parallel::validate found a problem; nothing simulated
  OutOfMemory,  // valid but memory_peak exceeds HBM; memory filled, nothing simulated
};

// "ok", "invalid", "out_of_memory".
const char* to_string(Status s);

struct Evaluation {
  Status status = Status::Ok;
  std::string problem;                  // why, when not Ok ("/parallel/tp: tp 3 does not ...")
  report::MemoryBreakdown memory;       // filled unless Invalid
  std::optional<report::Report> report;  // filled when Ok

  // status, plus the problem when there is one: "invalid: /parallel/tp: ...".
  [[nodiscard]] std::string status_text() const;
};

// Validates, prunes by memory and simulates one scenario. Never throws for a plan that cannot
// run: that is a result.
[[nodiscard]] Evaluation evaluate(const parallel::Scenario& scenario);

// Called after each finished item with (done, total). Calls are serialised (one at a time) but
// come from worker threads.
using Progress = std::function<void(std::int64_t done, std::int64_t total)>;

// Runs fn(i) for i in [0, count) on `jobs` threads (jobs <= 1: on the calling thread). fn must
// be safe to call concurrently for different i. If some fn(i) throw, the exception of the
// smallest such i is rethrown after every thread has stopped (deterministic whatever `jobs`).
void parallel_for(std::int64_t count, int jobs, const std::function<void(std::int64_t)>& fn,
                  const Progress& progress = {});

// std::thread::hardware_concurrency(), at least 1.
[[nodiscard]] int default_jobs();

}  // namespace trainsim::sweep
