// Fuzz harness for Hugging Face config.json files (the format io::model_from_json detects by
// num_hidden_layers or hidden_size): the bytes are parsed by io::load_model_from_string, whose
// reader is the one `--model path/config.json` reaches after reading the file. It differs from
// fuzz_model.cpp only in its corpus of config.json files (Llama, Mistral, Qwen2, Gemma, MoE,
// RoPE variants); mutations also reach trainsim's own model keys. ConfigError and PlanError are
// the expected outcome of bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "trainsim/error.hpp"

#include "sim/io/model_loader.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    static_cast<void>(
        trainsim::io::load_model_from_string(trainsim::fuzz::as_text(data, size), "config.json"));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
