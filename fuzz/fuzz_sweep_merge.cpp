// Fuzz harness for `trainsim merge` of sharded sweep outputs (CSV or JSON lines): the bytes are
// split at each 0x1E byte into shards ("shard-0", "shard-1", ...) and joined by
// io::merge_outputs, first without and then, if that succeeds, with an expected row count taken
// from the input's length. ConfigError and PlanError are the expected outcome of bad input;
// anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/error.hpp"

#include "sim/io/sweep_writer.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<trainsim::io::SweepOutput> outputs;
  for (std::string& part : trainsim::fuzz::split_records(trainsim::fuzz::as_text(data, size))) {
    outputs.push_back({"shard-" + std::to_string(outputs.size()), std::move(part)});
  }
  try {
    static_cast<void>(trainsim::io::merge_outputs(outputs, std::nullopt));
    static_cast<void>(trainsim::io::merge_outputs(outputs, static_cast<std::int64_t>(size % 16)));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
