// Fuzz harness for software-stack files (stacks/*.json): io::load_stack takes a built-in id or a
// path, so the bytes are written to a file and loaded through its path. ConfigError and
// PlanError are the expected outcome of bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "trainsim/error.hpp"

#include "sim/io/stack_loader.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = trainsim::fuzz::scratch_dir().write("stack.json", data, size);
  try {
    static_cast<void>(trainsim::io::load_stack(path));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
