// Sweep specs: a base scenario and axes of values at dotted scenario keys, expanded into the
// Cartesian product of the axes in the order they are written (the first axis varies slowest,
// as nested loops written in that order), with zipped axes advancing together. Private to the
// library and the CLI: it works on JSON scenario documents.
//
// {"base": {...scenario...} | "scenario.json",
//  "axes": {"parallel.tp": [1, 2, 4], "cluster.gpus": {"from": 8, "to": 2048, "times": 2}},
//  "zip":  [["cluster.gpus", "training.global_batch"]],
//  "description": "optional text"}
//
// An axis is a list of values or a range; a list may mix values and ranges, which are expanded
// in place. Ranges are inclusive integer progressions: {"from": a, "to": b, "step": s} gives
// a, a+s, ... <= b; {"from": a, "to": b, "times": t} gives a, a t, a t^2, ... <= b (a >= 1,
// t >= 2). For the keys hardware and model an object is an inline profile or model, not a range.
// Each zip group names two or more keys of "axes"; their lists must have equal lengths and they
// advance together, as one axis placed where the first of them is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/io/scenario_loader.hpp"

namespace trainsim::sweep {

// One dimension of the product: a plain axis (one key) or a zip group (several keys).
struct AxisGroup {
  std::vector<std::string> keys;                   // dotted scenario keys
  std::vector<std::vector<nlohmann::json>> values;  // values[k][j]: key k's j-th value
  [[nodiscard]] std::int64_t size() const {
    return values.empty() ? 1 : static_cast<std::int64_t>(values.front().size());
  }
};

struct SweepSpec {
  io::ScenarioDocument base;
  std::vector<AxisGroup> groups;  // in written order; the first varies slowest
  std::vector<std::string> keys;  // every axis key in written order
  // The spec's name, and where[k][j]: the spec pointer at which value j of keys[k]'s group is
  // written ("/axes/model/1"), so that an inline object on an axis is named where it is written.
  std::string source;
  std::vector<std::vector<std::string>> where;
  // The hardware, model and stack names the base and the axes give, as each was read
  // (Scenario::hardware_path: a file's path, or a built-in id), sorted and once each: the files
  // an output path must not replace.
  std::vector<std::string> references;
  // The FNV-1a digests of the content of the references that are files, when the spec was read
  // (sweep::reference_file_digests), so that shards run against edited copies of one file never
  // merge (spec_digest).
  std::string reference_files;

  // Scenarios in the sweep: the product of the group sizes.
  [[nodiscard]] std::int64_t size() const;
  // The document of scenario `index` (0 <= index < size()): base with the axis values set.
  [[nodiscard]] io::ScenarioDocument document(std::int64_t index) const;
  // The axis values of scenario `index`, one per key of `keys`.
  [[nodiscard]] std::vector<nlohmann::json> point(std::int64_t index) const;
};

// Sweeps larger than this are rejected (bad input rather than a run that never ends).
inline constexpr std::int64_t kMaxSweepSize = 100'000'000;

// Parses a spec; `source` names it in errors, `base_dir` resolves a base file and relative
// hardware/model paths. Throws ConfigError (malformed JSON, missing or unknown key, unknown axis
// key with "did you mean", empty axis, bad range, zip of unknown keys or unequal lengths).
[[nodiscard]] SweepSpec parse_sweep_spec(const std::string& text, const std::string& source,
                                         const std::string& base_dir);

// Reads and parses a spec file. Throws ConfigError.
[[nodiscard]] SweepSpec read_sweep_spec(const std::string& path);

}  // namespace trainsim::sweep
