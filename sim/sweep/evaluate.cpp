#include "trainsim/sweep/evaluate.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <exception>
#include <future>
#include <limits>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "trainsim/error.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/memory.hpp"
#include "trainsim/report/simulate.hpp"

namespace trainsim::sweep {

const char* to_string(Status s) {
  switch (s) {
    case Status::Ok:
      return "ok";
    case Status::Invalid:
      return "invalid";
    case Status::OutOfMemory:
      return "out_of_memory";
  }
  return "ok";
}

std::string Evaluation::status_text() const {
  if (problem.empty()) return to_string(status);
  return std::string(to_string(status)) + ": " + problem;
}

namespace {

// A whole-iteration simulation holds every op of the step: past the command line's bound (run
// --full-simulation refuses it) a plan is an invalid row, not a run of minutes and gigabytes. So
// is a GPipe plan past it, which is always simulated whole.
bool too_large_to_simulate_whole(const parallel::Scenario& scenario, report::SimulationMode mode,
                                 Evaluation& e) {
  // GPipe is simulated whole in either mode (report::simulate): a problem of the plan, whose
  // remedy is not to drop --full-simulation.
  if (const std::string excess = report::gpipe_excess(scenario); !excess.empty()) {
    e.status = Status::Invalid;
    e.problem = std::string(report::kGpipeExcessKey) + ": " + excess;
    return true;
  }
  if (mode != report::SimulationMode::Full) return false;
  const std::string excess = report::full_simulation_excess(scenario);
  if (excess.empty()) return false;
  e.status = Status::Invalid;
  e.problem = "--full-simulation: " + excess +
              " (without --full-simulation the steady state is extrapolated)";
  return true;
}

}  // namespace

Evaluation evaluate(const parallel::Scenario& scenario, report::SimulationMode mode) {
  Evaluation e = screen(scenario);
  if (e.status != Status::Ok || too_large_to_simulate_whole(scenario, mode, e)) return e;
  report::Simulation sim =
      report::simulate(scenario, report::SimulateOptions{.build = {}, .mode = mode});
  e.memory = sim.report.memory;
  e.report = std::move(sim.report);
  return e;
}

report::Primitives SimulationMemo::primitives(std::int64_t key, const parallel::Scenario& scenario,
                                              report::SimulationMode mode) {
  std::promise<report::Primitives> promise;
  std::shared_future<report::Primitives> result;
  bool simulate_here = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto found = entries_.find(key);
    if (found != entries_.end()) {
      result = found->second;
    } else {
      // A waiting caller holds its own copy of the future, so forgetting every entry is safe.
      if (entries_.size() >= kMaxEntries) entries_.clear();
      result = promise.get_future().share();
      entries_.emplace(key, result);
      simulate_here = true;
    }
  }
  if (simulate_here) {
    try {
      promise.set_value(
          report::simulate(scenario, report::SimulateOptions{.build = {}, .mode = mode})
              .primitives);
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  return result.get();
}

Evaluation evaluate(const parallel::Scenario& scenario, report::SimulationMode mode,
                    SimulationMemo& memo, std::int64_t key) {
  if (!report::sharding_is_inert(scenario)) return evaluate(scenario, mode);
  Evaluation e = screen(scenario);
  if (e.status != Status::Ok || too_large_to_simulate_whole(scenario, mode, e)) return e;
  report::Report r = report::derive(scenario, memo.primitives(key, scenario, mode));
  e.memory = r.memory;
  e.report = std::move(r);
  return e;
}

Evaluation screen(const parallel::Scenario& scenario) {
  Evaluation e;
  const std::vector<parallel::Problem> problems = parallel::validate(scenario);
  if (!problems.empty()) {
    e.status = Status::Invalid;
    e.problem = problems.front().key + ": " + problems.front().message;
    return e;
  }
  e.memory = report::memory_peak(scenario);
  if (const std::string excess = report::memory_excess(e.memory, scenario.parallel.pp);
      !excess.empty()) {
    e.status = Status::Invalid;
    e.problem = std::string(report::kMemoryExcessKey) + ": " + excess;
    return e;
  }
  if (!e.memory.fits) {
    e.status = Status::OutOfMemory;
    // As `run --require-fit` says it: the bound is usable memory (report/memory.hpp), not HBM.
    e.problem = "needs " + to_string(e.memory.total) + " per GPU" +
                report::on_stage(e.memory, scenario.parallel.pp) + ", more than the " +
                to_string(e.memory.usable) + " usable of " + to_string(e.memory.capacity) +
                " of HBM";
  }
  return e;
}

int default_jobs() {
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxJobs);
}

int parse_jobs(std::string_view text, const std::string& origin) {
  const std::string got = "got '" + std::string(text) + "'";
  // As every number flag reads its value (cli/main.cpp): spaces around it dropped, decimal
  // digits only, no zero before the first ("-j 007" ran where "--top 007" was refused).
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.size() > 1 && text.front() == '0') {
    throw ConfigError(origin, "",
                      "a zero before the first digit; expected 0 (all cores) or 1 to " +
                          std::to_string(kMaxJobs) + " in decimal, " + got);
  }
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ptr != end || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    throw ConfigError(
        origin, "",
        "not an integer; expected 0 (all cores) or 1 to " + std::to_string(kMaxJobs) + ", " + got);
  }
  if (ec == std::errc::result_out_of_range || v > kMaxJobs) {
    throw ConfigError(origin, "",
                      "too many threads; expected 0 (all cores) or 1 to " +
                          std::to_string(kMaxJobs) + ", " + got);
  }
  if (v < 0) {
    throw ConfigError(
        origin, "",
        "negative; expected 0 (all cores) or 1 to " + std::to_string(kMaxJobs) + ", " + got);
  }
  return v == 0 ? default_jobs() : static_cast<int>(v);
}

namespace {

// Starts up to `wanted` threads running `body`. The system may refuse one (std::system_error
// with EAGAIN: a process or memory limit); an exception escaping here while earlier threads are
// joinable would call std::terminate, so the pool stops growing and runs with what it has.
// Returns the started threads (possibly none: the caller then runs `body` itself).
std::vector<std::thread> start_threads(std::int64_t wanted, const std::function<void()>& body) {
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(wanted));
  for (std::int64_t t = 0; t < wanted; ++t) {
    try {
      pool.emplace_back(body);
    } catch (const std::system_error&) {
      // Not reported: the library does not print, and the results are the same with fewer
      // threads, only later.
      break;
    }
  }
  return pool;
}

// Joins every thread of `pool` when it goes out of scope, however the scope is left.
class JoinAll {
 public:
  explicit JoinAll(std::vector<std::thread>& pool) : pool_(pool) {}
  ~JoinAll() {
    for (std::thread& t : pool_) {
      if (t.joinable()) t.join();
    }
  }
  JoinAll(const JoinAll&) = delete;
  JoinAll& operator=(const JoinAll&) = delete;
  JoinAll(JoinAll&&) = delete;
  JoinAll& operator=(JoinAll&&) = delete;

 private:
  std::vector<std::thread>& pool_;
};

}  // namespace

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
    std::vector<std::thread> pool = start_threads(std::min(threads, count), worker);
    const JoinAll join(pool);
    if (pool.empty()) worker();
  }
  if (first_error) std::rethrow_exception(first_error);
}

void parallel_ordered(std::int64_t count, int jobs, std::int64_t window,
                      const std::function<std::string(std::int64_t)>& produce,
                      const std::function<void(std::int64_t, std::string&)>& consume,
                      const Progress& progress, std::int64_t grain) {
  const auto threads = std::min(static_cast<std::int64_t>(std::max(1, jobs)), count);
  if (threads <= 1) {
    for (std::int64_t i = 0; i < count; ++i) {
      std::string result = produce(i);
      consume(i, result);
      if (progress) progress(i + 1, count);
    }
    return;
  }
  window = std::max<std::int64_t>(1, window);
  grain = std::clamp<std::int64_t>(grain, 1, window);
  // Result i waits in slot i % window until consumed; a thread takes indices up to i only once
  // i < consumed + window, so their slots are free by then.
  struct Slot {
    bool ready = false;
    std::string result;
    std::exception_ptr error;
  };
  std::vector<Slot> slots(static_cast<std::size_t>(std::min(window, count)));
  const auto num_slots = static_cast<std::int64_t>(slots.size());
  std::mutex mutex;                    // guards everything below and the slots
  std::condition_variable has_room;    // workers wait here for the window to move
  std::condition_variable has_result;  // the consumer waits here for slot `consumed`
  std::int64_t next = 0;
  std::int64_t consumed = 0;
  bool stop = false;
  int waiting = 0;  // workers waiting on has_room
  // The last index of the take starting at `next`, and whether its slot is free.
  const auto last_of_take = [&] { return std::min(next + grain, count) - 1; };
  const auto room = [&] { return last_of_take() < consumed + num_slots; };
  auto worker = [&]() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      if (!stop && next < count && !room()) {
        ++waiting;
        has_room.wait(lock, [&] { return stop || next >= count || room(); });
        --waiting;
      }
      if (stop || next >= count) return;
      const std::int64_t first = next;
      const std::int64_t last = last_of_take();
      next = last + 1;
      for (std::int64_t i = first; i <= last && !stop; ++i) {
        lock.unlock();
        Slot produced;
        try {
          produced.result = produce(i);
        } catch (...) {
          produced.error = std::current_exception();
        }
        produced.ready = true;
        lock.lock();
        slots[static_cast<std::size_t>(i % num_slots)] = std::move(produced);
        if (i == consumed) has_result.notify_one();
      }
    }
  };
  std::vector<std::thread> pool = start_threads(threads, worker);
  if (pool.empty()) {
    for (std::int64_t i = 0; i < count; ++i) {
      std::string result = produce(i);
      consume(i, result);
      if (progress) progress(i + 1, count);
    }
    return;
  }
  // However this function is left, the workers are told to stop and then joined (members are
  // destroyed after the destructor body runs).
  struct StopAll {
    std::mutex& guard;
    bool& flag;
    std::condition_variable& wake;
    JoinAll join;
    ~StopAll() {
      {
        const std::lock_guard<std::mutex> hold(guard);
        flag = true;
      }
      wake.notify_all();
    }
  };
  const StopAll stop_all{mutex, stop, has_room, JoinAll(pool)};
  std::unique_lock<std::mutex> lock(mutex);
  while (consumed < count) {
    Slot& slot = slots[static_cast<std::size_t>(consumed % num_slots)];
    has_result.wait(lock, [&] { return slot.ready; });
    Slot taken = std::move(slot);
    slot = Slot{};
    if (taken.error) std::rethrow_exception(taken.error);
    lock.unlock();
    consume(consumed, taken.result);
    lock.lock();
    ++consumed;
    if (waiting > 0) has_room.notify_all();
    if (progress) progress(consumed, count);
  }
}

}  // namespace trainsim::sweep
