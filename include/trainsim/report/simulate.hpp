// One scenario end to end: build the iteration's op graph, simulate it, and turn the timeline
// into the report (time breakdown, throughput, MFU, memory, power, cost). This is what
// `trainsim run`, sweeps and plan search call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/engine/activity.hpp"
#include "trainsim/engine/simulator.hpp"
#include "trainsim/parallel/scenario.hpp"
#include "trainsim/report/report.hpp"
#include "trainsim/workload/iteration.hpp"

namespace trainsim::report {

// How simulate() covers the iteration's micro-batches.
enum class SimulationMode {
  // Simulate a reduced micro-batch count and, when it holds a steady range (every op of a range
  // of micro-batches repeating the op a period earlier, shifted by one time), extrapolate every
  // quantity the report derives from to the real count; otherwise simulate every micro-batch
  // (simulate.cpp gives the method and its guards; GPipe is always simulated whole). The cost
  // stops growing with the number of micro-batches once it is large. The Simulation's graph and
  // timeline are then those of the reduced run the report comes from, not of the whole
  // iteration: callers that need the whole timeline (traces, kernel breakdowns) ask for Full.
  Extrapolate,
  // Simulate every micro-batch: the Simulation's graph and timeline are the whole iteration
  // (what traces and `compare` need). Cost proportional to the number of micro-batches.
  Full,
};

struct SimulateOptions {
  workload::BuildOptions build;
  SimulationMode mode = SimulationMode::Extrapolate;
  // The reduced micro-batch count of SimulationMode::Extrapolate; 0 chooses it from the schedule
  // and lengthens it as the runs show (simulate.cpp). A count given here, raised to the next
  // that equals m modulo the schedule's period, is the only run tried. A count inside the pipeline
  // fill holds no steady range, and the simulation falls back to the full one.
  std::int64_t reduced_microbatches = 0;
};

// What the report is derived from: the makespan, the activity of every stage over the whole
// iteration and the distinct collective calls with their per-iteration counts. Everything
// else in the report is a function of these and of the scenario (derive()).
struct Primitives {
  Seconds makespan;
  std::vector<engine::DeviceActivity> stages;
  std::vector<workload::CollectiveCall> collectives;
};

// A report with the graph and timeline it came from (for traces and tests).
struct Simulation {
  Report report;
  // What `report` was derived from, at the real micro-batch count (extrapolated or simulated).
  Primitives primitives;
  // The graph and timeline of `simulated_microbatches` micro-batches per data-parallel rank.
  workload::Iteration iteration;
  engine::Timeline timeline;
  // scenario.num_microbatches() when the whole iteration was simulated; the count of the reduced
  // run the report was extrapolated from, when it was.
  std::int64_t simulated_microbatches = 0;
  // True when the report was extrapolated, so that `iteration` and `timeline` cover fewer
  // micro-batches than the report.
  bool extrapolated = false;
  // Micro-batches simulated in reduced runs (every run the extrapolation tried), whether the
  // report came from them or not: the cost beside a full simulation. 0 when none was tried.
  std::int64_t reduced_microbatches_simulated = 0;
  // Ops of every graph simulated, reduced runs and the full one alike: the simulation's cost in
  // a measure that does not drift with the machine's load (bench/simulate_bench.cpp).
  std::int64_t ops_simulated = 0;
};

// Simulates one iteration of `scenario`, which must be valid (parallel::validate empty).
// The report of SimulationMode::Extrapolate equals the full one up to floating-point rounding
// (tests/report/extrapolation_test.cpp checks 1e-9 relative).
// Throws PlanError if it is not.
[[nodiscard]] Simulation simulate(const parallel::Scenario& scenario,
                                  const SimulateOptions& options = {});
// The same with the default mode and these builder options.
[[nodiscard]] Simulation simulate(const parallel::Scenario& scenario,
                                  const workload::BuildOptions& build);

// The report of `scenario` from its primitives (Simulation::primitives), as simulate() derives
// it: throughput, MFU, memory and power from the scenario, times from the primitives.
[[nodiscard]] Report derive(const parallel::Scenario& scenario, const Primitives& primitives);

// Whether `scenario`'s data-parallel sharding mode changes nothing that simulate() builds or
// simulates: true with one replica (dp x cp = 1), where every data-parallel collective, the
// copies and staging passes around them and the distributed optimizer's gathers have a group of
// one rank and are left out (workload/iteration_builder.cpp) and every sharding degree is 1
// (report::sharding_degree), so the five modes give the same primitives bit for bit
// (tests/report/sharding_inert_test.cpp compares them over every built-in stack). The report still
// differs in what it derives from the scenario (its memory breakdown). Sweeps and searches
// simulate such plans once for all their modes (sweep::SimulationMemo).
[[nodiscard]] bool sharding_is_inert(const parallel::Scenario& scenario);

// The ops of the scenario's whole op graph (what SimulationMode::Full builds, simulates and a
// trace writes), counted from the graphs of 1 and 2 micro-batches (pp and 2 pp with the
// interleaved schedule): every micro-batch adds the same ops. Costs two small graph builds.
[[nodiscard]] std::int64_t full_simulation_ops(const parallel::Scenario& scenario,
                                               const workload::BuildOptions& build = {});
// The most ops a whole-iteration simulation requested on the command line (--trace,
// --full-simulation, compare) may hold. Measured on one core of a 2-core machine, llama3.2-1b on
// 8 H100 at 1,000 micro-batches (360,000 ops): 0.25 s and 49 MB to simulate, 1.1 s with its
// 74 MB trace; so about 3 s and 400 MB to simulate at the limit, and some 12 s and 800 MB of
// trace, which no trace viewer opens whole. The 405B plan of bench/simulate_bench.cpp has
// 62,000 ops.
inline constexpr std::int64_t kMaxFullSimulationOps = 4'000'000;
// "the whole iteration has N ops (M micro-batches per step); expected at most 4000000 for a
// whole-iteration simulation" where the scenario's whole op graph is past that bound, else "":
// the one wording of the bound, which callers end with what to do instead.
[[nodiscard]] std::string full_simulation_excess(const parallel::Scenario& scenario);
// "gpipe is simulated whole, and the whole iteration has N ops ...; expected ..." where
// `scenario` runs GPipe (never extrapolated, simulate.cpp) past kMaxFullSimulationOps, else "":
// a problem of the plan at kGpipeExcessKey. simulate() throws it as a PlanError; a sweep makes it
// an invalid row; the command line names where the plan came from (require_simulable_plan).
[[nodiscard]] std::string gpipe_excess(const parallel::Scenario& scenario);
inline constexpr const char* kGpipeExcessKey = "/parallel/pipeline_schedule";

// Power of one GPU over a window from its activity: idle time at idle watts, time with compute
// running at compute watts, time with only communication at communication watts; capped at TDP.
// `contention_stretch` (DeviceActivity::gemm_contention_stretch), the time a collective added
// to GEMM kernels, by the profile's gemm_comm_contention or, where it gives none (a100-dgx,
// v100-dgx), by its comm_compute_contention, is billed at communication watts, out of
// compute_busy. Other kernels' slowdown stays at compute watts (SMs and HBM shared, not idle).
[[nodiscard]] Watts average_power(const hardware::PowerSpec& power, Seconds compute_busy,
                                  Seconds exposed_communication, Seconds idle,
                                  Seconds contention_stretch = Seconds(0.0));

}  // namespace trainsim::report
