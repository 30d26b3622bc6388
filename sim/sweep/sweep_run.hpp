// Runs a sweep spec: resolves each scenario (hardware profiles and models loaded once per
// distinct reference), evaluates the ones the shard selects on a thread pool and formats one
// output line per scenario, in index order whatever the number of threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sim/io/scenario_loader.hpp"
#include "sim/io/sweep_writer.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "trainsim/sweep/evaluate.hpp"
#include "trainsim/sweep/shard.hpp"

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
  struct References {
    std::string hardware_name;
    std::string model_name;
    std::string stack_name;
    std::shared_ptr<const hardware::HardwareSpec> hardware;
    std::shared_ptr<const model::ModelSpec> model;
    std::shared_ptr<const stack::StackSpec> stack;
  };
  mutable std::mutex mutex_;
  std::map<std::string, References> cache_;  // key: hardware, model and stack refs, base dir
};

struct SweepRunOptions {
  Shard shard;
  int jobs = 1;
  io::SweepFormat format = io::SweepFormat::Csv;
  Progress progress;
};

// The output of the scenarios of `spec` that `options.shard` selects: the CSV header (for CSV)
// then one line per scenario in index order. Throws ConfigError for a scenario the loader
// rejects (the one of smallest index).
[[nodiscard]] std::string run_sweep(const SweepSpec& spec, const SweepRunOptions& options);

}  // namespace trainsim::sweep
