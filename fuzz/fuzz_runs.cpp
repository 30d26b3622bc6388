// Fuzz harness for published-runs files (validation/published_runs.json): the bytes are parsed by
// validation::read_published_runs. ConfigError and PlanError are the expected outcome of bad
// input; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "trainsim/error.hpp"

#include "sim/validation/runs_reader.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    static_cast<void>(trainsim::validation::read_published_runs(trainsim::fuzz::as_text(data, size),
                                                                "published_runs.json"));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
