// Fuzz harness for the simulation behind `trainsim run`: the bytes are read as a scenario file
// (as fuzz_scenario reads them), and a scenario that resolves and can run (parallel::validate
// finds nothing) is simulated (report::simulate, the default extrapolating mode) and its report
// written as `run --format json` writes it. The readers' ConfigError and PlanError are the
// expected outcome of bad input; a valid plan must simulate without any exception, and its
// report must hold only finite numbers (DESIGN.md: never a NaN in the output). Anything else, a
// crash or a sanitizer report, is a finding.
//
// Plans whose whole op graph exceeds kMaxOps are skipped: they are valid, but their cost (not a
// bug) would read as a timeout. 300,000 ops simulate in about 0.2 s without instrumentation
// (report/simulate.hpp measures 360,000 in 0.25 s on one core, at kMaxFullSimulationOps), a few
// seconds under the sanitizers, inside the campaigns' 10 s timeout (README.md). The bound still
// lets extrapolated plans through (their reduced runs are shorter than the whole graph).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "trainsim/error.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/simulate.hpp"

#include "sim/io/report_writer.hpp"
#include "sim/io/scenario_loader.hpp"

#include "fuzz/fuzz_input.hpp"

namespace {

constexpr std::int64_t kMaxOps = 300'000;

// Aborts, naming the JSON pointer, at the first number that is not finite.
void require_finite(const nlohmann::json& j, const std::string& at) {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) {
    std::fprintf(stderr, "fuzz_simulate: the report's %s is %g\n", at.c_str(), j.get<double>());
    std::abort();
  }
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) require_finite(value, at + "/" + key);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) require_finite(j[i], at + "/" + std::to_string(i));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = trainsim::fuzz::scratch_dir().write("scenario.json", data, size);
  trainsim::parallel::Scenario scenario;
  try {
    const trainsim::io::ScenarioDocument doc = trainsim::io::read_scenario_file(path);
    scenario = trainsim::io::scenario_from_document(doc);
  } catch (const trainsim::ConfigError&) {
    return 0;
  } catch (const trainsim::PlanError&) {
    return 0;
  }
  if (!trainsim::parallel::validate(scenario).empty()) return 0;
  if (trainsim::report::full_simulation_ops(scenario) > kMaxOps) return 0;
  const trainsim::report::Simulation sim = trainsim::report::simulate(scenario);
  require_finite(trainsim::io::report_to_json(scenario, sim.report), "");
  return 0;
}
