// Fuzz harness for unit strings ("3.35 TB/s", "80 GiB", "1.5 us"): the bytes are parsed by
// io::parse_unit as every UnitKind in turn, so one corpus of strings covers the whole prefix
// table and each kind's mismatch messages. ConfigError and PlanError are the expected outcome
// of bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "trainsim/error.hpp"

#include "sim/io/unit_parse.hpp"

#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using trainsim::io::UnitKind;
  const std::string text = trainsim::fuzz::as_text(data, size);
  for (const UnitKind kind :
       {UnitKind::Time, UnitKind::Data, UnitKind::DataRate, UnitKind::Work, UnitKind::WorkRate,
        UnitKind::Power, UnitKind::Energy, UnitKind::Price}) {
    try {
      static_cast<void>(trainsim::io::parse_unit(text, kind));
    } catch (const trainsim::ConfigError&) {
    } catch (const trainsim::PlanError&) {
    }
  }
  return 0;
}
