// ScenarioResolver: scenario documents resolved with each distinct hardware, model and stack
// reference loaded once. The sweep's spec check (sweep_spec.cpp) and its run (sweep_run.cpp)
// share it.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "trainsim/parallel/scenario.hpp"

#include "sim/io/scenario_loader.hpp"

namespace trainsim::sweep {

// Resolves scenario documents like io::scenario_from_document, loading each distinct hardware
// profile and model reference once. Loading a profile costs about twice as much as simulating
// a 7B plan, and sweeps repeat the same few references thousands of times. The first document
// with a given pair of references goes through the loader (strict checks, messages); later ones
// take a fast path that reads the scenario's scalar keys onto the cached specs, and fall back
// to the loader on anything it does not expect. Thread-safe.
class ScenarioResolver {
 public:
  [[nodiscard]] parallel::Scenario resolve(const io::ScenarioDocument& doc);
  // References resolved through the loader so far (for tests).
  [[nodiscard]] std::size_t loads() const;

 private:
  mutable std::mutex mutex_;
  // The first scenario resolved through the loader with each hardware, model and stack
  // reference and base dir (the key): its specs and its reference fields (names, inline text,
  // the files the names were read as) serve the later ones.
  std::map<std::string, std::shared_ptr<const parallel::Scenario>> cache_;
};

}  // namespace trainsim::sweep
