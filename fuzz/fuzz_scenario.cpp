// Fuzz harness for scenario files: the bytes are written to a file and read as `trainsim run
// --scenario` reads one (io::read_scenario_file), then resolved (io::scenario_from_document:
// built-in or inline hardware, model and stack, units, defaults, dp) and written back
// (io::scenario_to_json). ConfigError and PlanError are the expected outcome of bad input;
// anything else escaping, a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>

#include "trainsim/error.hpp"

#include "sim/io/scenario_loader.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = trainsim::fuzz::scratch_dir().write("scenario.json", data, size);
  try {
    const trainsim::io::ScenarioDocument doc = trainsim::io::read_scenario_file(path);
    const trainsim::parallel::Scenario scenario = trainsim::io::scenario_from_document(doc);
    static_cast<void>(trainsim::io::scenario_to_json(scenario));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
