// Evaluation of many scenarios: each one is checked (parallel::validate), pruned when it cannot
// fit in memory (report::memory_peak, analytical and cheap) and only then simulated. Runs on a
// pool of std::threads that take the next index from a shared atomic counter; results land at
// their index, so the output order never depends on the number of threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "trainsim/parallel/scenario.hpp"
#include "trainsim/report/report.hpp"
#include "trainsim/report/simulate.hpp"

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
  std::string problem;                   // why, when not Ok ("/parallel/tp: tp 3 does not ...")
  report::MemoryBreakdown memory;        // filled unless Invalid
  std::optional<report::Report> report;  // filled when Ok

  // status, plus the problem when there is one: "invalid: /parallel/tp: ...".
  [[nodiscard]] std::string status_text() const;
};

// Validates, prunes by memory and simulates one scenario (in `mode`: report/simulate.hpp).
// Never throws for a plan that cannot run: that is a result.
[[nodiscard]] Evaluation evaluate(
    const parallel::Scenario& scenario,
    report::SimulationMode mode = report::SimulationMode::Extrapolate);

// Simulations shared by plans that differ only in an inert sharding mode
// (report::sharding_is_inert): a sweep over the five modes, or a search over the modes of its
// space, simulates each such plan once. The
// first caller of a key simulates; a caller of the same key meanwhile waits for its result. The
// reports are what evaluate() gives each plan alone, byte for byte, since the primitives are
// (the memo only saves the time). Thread-safe. Holds at most kMaxEntries results (each the
// primitives of one plan, about a kilobyte per pipeline stage) and forgets them all past that: a
// later caller then simulates again.
class SimulationMemo {
 public:
  static constexpr std::size_t kMaxEntries = 4096;

  // The primitives of `scenario` in `mode`. `key` names the plan apart from its sharding mode
  // (a sweep: ShardingAxis::first_of, the point with its sharding axis at the first value; a
  // search: the enumeration index of the plan's first twin, sim/sweep/search.cpp); one memo
  // serves one mode and one sweep or search.
  report::Primitives primitives(std::int64_t key, const parallel::Scenario& scenario,
                                report::SimulationMode mode);

 private:
  std::mutex mutex_;
  std::unordered_map<std::int64_t, std::shared_future<report::Primitives>> entries_;
};

// evaluate(), taking the simulation of a plan whose sharding mode is inert from `memo` under
// `key` (SimulationMemo::primitives); other plans are simulated as evaluate() does.
[[nodiscard]] Evaluation evaluate(const parallel::Scenario& scenario, report::SimulationMode mode,
                                  SimulationMemo& memo, std::int64_t key);

// evaluate() without the simulation: Invalid or OutOfMemory as evaluate() says them, or Ok
// with the memory model's breakdown and no report.
[[nodiscard]] Evaluation screen(const parallel::Scenario& scenario);

// Called after each finished item with (done, total). Calls are serialised (one at a time) but
// may come from worker threads.
using Progress = std::function<void(std::int64_t done, std::int64_t total)>;

// The most threads --jobs may ask for. A pool this size already far exceeds the cores of one
// machine (sharding scales further); larger values are typing errors, and each thread reserves
// stack address space (8 MiB by default), so 10^6 of them would exhaust the process.
inline constexpr int kMaxJobs = 1024;

// Runs fn(i) for i in [0, count) on `jobs` threads (jobs <= 1: on the calling thread). fn must
// be safe to call concurrently for different i. If some fn(i) throw, the exception of the
// smallest such i is rethrown after every thread has stopped (deterministic whatever `jobs`).
// A thread the system refuses to create (std::system_error) is not fatal: the work runs on the
// threads already started, or on the calling thread when none started.
void parallel_for(std::int64_t count, int jobs, const std::function<void(std::int64_t)>& fn,
                  const Progress& progress = {});

// Runs produce(i) for i in [0, count) on `jobs` threads that take the next i from a shared
// counter, and calls consume(i, result) on the calling thread in increasing i, each as soon as
// every smaller i is consumed. At most `window` results are produced ahead of the next one to
// consume (a thread that would run further ahead waits), so memory is bounded by the window,
// whatever `count`. progress(consumed, count) follows each consume.
// If produce(i) throws, every smaller i is still consumed, then the exception of the smallest
// such i is rethrown once every thread has stopped; if consume throws, the threads stop and it
// is rethrown. Thread creation failures are handled as in parallel_for.
// A thread takes `grain` consecutive i at once (the last take may be shorter), from i = 0: items
// that share work through a SimulationMemo then run on one thread, one after the other, instead
// of one thread waiting for another's simulation. Results are consumed as each is produced.
// Requires: window >= 1, grain >= 1; a grain above the window is lowered to it.
void parallel_ordered(std::int64_t count, int jobs, std::int64_t window,
                      const std::function<std::string(std::int64_t)>& produce,
                      const std::function<void(std::int64_t, std::string&)>& consume,
                      const Progress& progress = {}, std::int64_t grain = 1);

// std::thread::hardware_concurrency(), at least 1 and at most kMaxJobs.
[[nodiscard]] int default_jobs();

// The thread count a --jobs value asks for: "0" means default_jobs(), else an integer from 1 to
// kMaxJobs. `origin` ("--jobs") names the flag in errors.
// Throws ConfigError: "--jobs: too many threads; expected 0 (all cores) or 1 to 1024, got '5000'".
[[nodiscard]] int parse_jobs(std::string_view text, const std::string& origin);

}  // namespace trainsim::sweep
