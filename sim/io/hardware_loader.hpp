// Loading of hardware profiles (hardware_profiles/*.json, a file, or an inline JSON object in a
// scenario) into a validated hardware::HardwareSpec. The profile names the NCCL version whose
// constants it mimics; those come from a built-in hardware_profiles/nccl/nccl-<version>.json or
// an inline object. Every problem is a ConfigError naming the source and the JSON pointer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/hardware/hardware_spec.hpp"

namespace trainsim::io {

// The profile named by a built-in id ("h100-dgx") or, failing that, read from a file path.
// Throws ConfigError for an unknown name that is not a file ("unknown hardware profile 'h100';
// did you mean 'h100-dgx'?" with the list of built-ins), or for any problem in the profile.
[[nodiscard]] hardware::HardwareSpec load_hardware(const std::string& name_or_path);

// The profile in `json`; `source` (a file name) and `pointer` (where the object sits in it, ""
// for the whole document) locate errors. Strict: every key required, unknown keys rejected,
// dimensional values need units, values range-checked. Throws ConfigError.
[[nodiscard]] hardware::HardwareSpec hardware_from_json(const nlohmann::json& json,
                                                        const std::string& source,
                                                        const std::string& pointer);

// Parses `text` as a profile (tests and tools). Throws ConfigError.
[[nodiscard]] hardware::HardwareSpec load_hardware_from_string(const std::string& text,
                                                               const std::string& source);

// The JSON document of a profile named as load_hardware takes it (built-in id or path), with
// its keys in file order, and the source name errors use. Throws ConfigError as load_hardware.
struct HardwareDocument {
  nlohmann::ordered_json json;
  std::string source;
};
[[nodiscard]] HardwareDocument load_hardware_document(const std::string& name_or_path);

// Refuses a profile whose multi-node channel graphs carry more across nodes than its NICs:
// channels x bw_inter above nics_per_node x nic_bandwidth (ConfigError at the graph's
// bw_inter), or whose single-node graphs carry more out of a GPU than its NVLink: channels x
// bw_intra above nvlink_bandwidth_per_direction (at the graph's bw_intra). The loaders run it;
// exposed for tests.
void check_network_carries_graphs(const hardware::HardwareSpec& hw, const std::string& source,
                                  const std::string& pointer);

// Where a profile's NICs carry well beyond its multi-node ring graph (the graph under 0.9 of the
// NICs: the built-in profiles' are at 0.96), or its NVLink beyond its single-node ring graph
// (under 0.7 of it: the built-ins' are at 0.8), the note the loader writes once per profile on
// stderr: the fabric and NVLink keys do not set collective times, the graphs do. nullopt
// otherwise.
[[nodiscard]] std::optional<std::string> network_beyond_graphs(const hardware::HardwareSpec& hw);

// Ids of the built-in hardware profiles, sorted.
[[nodiscard]] std::vector<std::string> builtin_hardware_ids();

}  // namespace trainsim::io
