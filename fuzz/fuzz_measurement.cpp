// Fuzz harness for measurement documents ("schema": "trainsim-measurements";
// calibration/*/suite.json): the bytes are parsed by io::parse_measurement_document. Log
// references are resolved against the source name but not opened. ConfigError and PlanError are
// the expected outcome of bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "trainsim/error.hpp"

#include "sim/io/measurement_reader.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    static_cast<void>(trainsim::io::parse_measurement_document(trainsim::fuzz::as_text(data, size),
                                                               "measurements.json"));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
