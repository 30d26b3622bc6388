// The report of one simulated scenario as JSON (DESIGN.md "Command line and report": the keys
// are a contract) and as a readable table.
#pragma once

#include <cstdint>
#include <ostream>

#include <nlohmann/json.hpp>

#include "trainsim/parallel/scenario.hpp"
#include "trainsim/report/report.hpp"

namespace trainsim::io {

// The report's JSON object: context, scenario and every metric key.
[[nodiscard]] nlohmann::json report_to_json(const parallel::Scenario& scenario,
                                            const report::Report& report);

// A hardware, model or stack name as text output shows it: escaped (escape_control), and marked
// " (inline)" when it names an object given inline in the scenario (`inline_text` non-empty), so
// that an inline model named like a built-in ("name": "llama2-7b" with 16 layers) does not read as
// the built-in. An inline object without a name already shows as "inline".
[[nodiscard]] std::string shown_name(const std::string& name, const std::string& inline_text);

// The memory object of the report ({"parameters_bytes", ..., "fits"}).
[[nodiscard]] nlohmann::json memory_to_json(const report::MemoryBreakdown& memory);

// Its keys that give which memory a plan may use, the same for every plan of a search
// (report::apply_memory_reserve): capacity_bytes, usable_bytes, reserved_bytes,
// headroom_fraction and the reserved object.
[[nodiscard]] nlohmann::json memory_reserve_to_json(const report::MemoryBreakdown& memory);

// A byte count as the integer JSON and CSV outputs write: the nearest whole byte (model bytes are
// whole already; a shard of an indivisible tensor rounds), so that counts never print as floats
// like 1.5e+10. Requires |bytes| < 2^63.
[[nodiscard]] std::int64_t byte_count(Bytes bytes);

// The versioned context block (schema and tool version), as google/benchmark's reporter has.
[[nodiscard]] nlohmann::json report_context();
// The same with the scenario's hardware, model and stack names, as `run`, `describe` and
// `compare` write it.
[[nodiscard]] nlohmann::json scenario_context(const parallel::Scenario& scenario);

// A human-readable table: time breakdown, throughput, MFU, memory, power, cost, collectives.
void write_report_table(std::ostream& out, const parallel::Scenario& scenario,
                        const report::Report& report);

}  // namespace trainsim::io
