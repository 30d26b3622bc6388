// The op graph of one iteration of a scenario, as report::simulate builds it (the scenario's
// own collective model, default build options), for tests that inspect the graph itself.
#pragma once

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/workload/iteration.hpp"

namespace trainsim::testing {

// Requires: a valid scenario (checked: parallel::require_valid throws PlanError otherwise).
inline workload::Iteration build_iteration(const parallel::Scenario& s,
                                           workload::BuildOptions options = {}) {
  parallel::require_valid(s);
  return workload::build_iteration(s, collective::CollectiveModel(s.hardware), options);
}

}  // namespace trainsim::testing
