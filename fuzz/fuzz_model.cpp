// Fuzz harness for model files in trainsim's own format (models/*.json): the bytes are parsed
// by io::load_model_from_string. The same function also detects Hugging Face config.json keys;
// fuzz_hf_config.cpp drives that format through a file path. ConfigError and PlanError are the
// expected outcome of bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "trainsim/error.hpp"

#include "sim/io/model_loader.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    static_cast<void>(
        trainsim::io::load_model_from_string(trainsim::fuzz::as_text(data, size), "fuzz.json"));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
