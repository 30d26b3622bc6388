// Fuzz harness for nccl-tests logs (calibration/nccl_tests/*.txt): the bytes are parsed by
// io::parse_nccl_tests without a claimed op and, when that succeeds, again with the op picked by
// the input's length claimed, which drives the check of a claim against the table.
// ConfigError and PlanError are the expected outcome of bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/error.hpp"

#include "sim/io/nccl_tests_reader.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using trainsim::collective::Op;
  const std::string text = trainsim::fuzz::as_text(data, size);
  try {
    static_cast<void>(trainsim::io::parse_nccl_tests(text, "fuzz.txt"));
    constexpr Op kOps[] = {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::Broadcast,
                           Op::Reduce,    Op::AllToAll,  Op::SendRecv};
    static_cast<void>(
        trainsim::io::parse_nccl_tests(text, "fuzz.txt", kOps[size % std::size(kOps)]));
  } catch (const trainsim::ConfigError&) {
  } catch (const trainsim::PlanError&) {
  }
  return 0;
}
