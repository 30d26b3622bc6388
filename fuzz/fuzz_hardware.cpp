// Fuzz harness for hardware profiles (hardware_profiles/*.json): the bytes are parsed as a
// profile by io::load_hardware_from_string, which runs the same strict reader as a profile file
// (GPU, node, fabric, NCCL constants by version or inline, units, ranges). ConfigError and
// PlanError are the expected outcome of bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "trainsim/error.hpp"

#include "sim/io/hardware_loader.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    static_cast<void>(
        trainsim::io::load_hardware_from_string(trainsim::fuzz::as_text(data, size), "fuzz.json"));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
