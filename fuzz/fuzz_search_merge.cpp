// Fuzz harness for `trainsim merge` of sharded plan searches (`trainsim search --format json
// --shard K/N` documents): the bytes are split at each 0x1E byte into shards ("shard-0",
// "shard-1", ...), each is classified by io::output_kind as the command does, and the
// shards are joined by io::merge_search_outputs. ConfigError and PlanError are the expected
// outcome of bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/error.hpp"

#include "sim/io/search_merge.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<trainsim::io::SweepOutput> outputs;
  for (std::string& part : trainsim::fuzz::split_records(trainsim::fuzz::as_text(data, size))) {
    static_cast<void>(trainsim::io::output_kind(part));
    outputs.push_back({"shard-" + std::to_string(outputs.size()), std::move(part)});
  }
  try {
    static_cast<void>(trainsim::io::merge_search_outputs(outputs));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
