// Fuzz harness for sweep specs (examples/fig*.json): the bytes are parsed by
// sweep::parse_sweep_spec (base scenario, axes, ranges, zip groups), then the product is sized
// and its first and last scenario documents and axis points are built, as `trainsim sweep
// --list` does before any scenario runs. base_dir is an empty scratch directory, so a base or
// model named by a relative path is not found there. ConfigError and PlanError are the expected
// outcome of bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "trainsim/error.hpp"

#include "sim/sweep/sweep_spec.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const trainsim::sweep::SweepSpec spec = trainsim::sweep::parse_sweep_spec(
        trainsim::fuzz::as_text(data, size), "sweep.json", trainsim::fuzz::scratch_dir().path());
    const std::int64_t n = spec.size();
    if (n > 0) {
      static_cast<void>(spec.document(0));
      static_cast<void>(spec.point(0));
      static_cast<void>(spec.document(n - 1));
      static_cast<void>(spec.point(n - 1));
    }
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
