// One scenario end to end: build the iteration's op graph, simulate it, and turn the timeline
// into the report (time breakdown, throughput, MFU, memory, power, cost). This is what
// `trainsim run`, sweeps and plan search call.
#pragma once

#include "trainsim/engine/simulator.hpp"
#include "trainsim/parallel/scenario.hpp"
#include "trainsim/report/report.hpp"
#include "trainsim/workload/iteration.hpp"

namespace trainsim::report {

// A report with the graph and timeline it came from (for traces and tests).
struct Simulation {
  Report report;
  workload::Iteration iteration;
  engine::Timeline timeline;
};

// Simulates one iteration of `scenario`, which must be valid (parallel::validate empty).
// Throws PlanError if it is not.
[[nodiscard]] Simulation simulate(const parallel::Scenario& scenario,
                                  const workload::BuildOptions& options = {});

// Power of one GPU over a window from its activity: idle time at idle watts, time with compute
// running at compute watts, time with only communication at communication watts; capped at TDP.
[[nodiscard]] Watts average_power(const hardware::PowerSpec& power, Seconds compute_busy,
                                  Seconds exposed_communication, Seconds idle);

}  // namespace trainsim::report
