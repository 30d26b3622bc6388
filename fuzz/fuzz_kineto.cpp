// Fuzz harness for PyTorch profiler (Kineto) traces: the bytes are parsed by
// io::parse_kineto_trace (events, kernel classes, step assignment by correlation and by time,
// per-step breakdowns) and the trace is summarized with both step selections, as `trainsim
// compare --trace` does. ConfigError and PlanError are the expected outcome of bad input;
// anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "trainsim/error.hpp"

#include "sim/io/kineto_reader.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using trainsim::io::StepSelection;
  try {
    const trainsim::io::KinetoTrace trace =
        trainsim::io::parse_kineto_trace(trainsim::fuzz::as_text(data, size), "trace.json");
    static_cast<void>(trainsim::io::summarize(trace, StepSelection::SkipFirst));
    static_cast<void>(trainsim::io::summarize(trace, StepSelection::All));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
