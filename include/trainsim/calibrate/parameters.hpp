// The parameters calibration may change: every one named by the JSON pointer of its value in a
// hardware profile, with its unit, bounds, the value a fit starts from and what it means. This
// list is the whole fit surface: the loader range-checks against it, the fitter moves only
// these, and docs/calibration.md documents them.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/hardware/hardware_spec.hpp"

namespace trainsim::calibrate {

// How a value is written in a profile: a plain number, or a string with a unit.
enum class ParameterUnit { Number, Seconds, Bytes, Watts };

struct Parameter {
  std::string pointer;  // "/collective/measured/ring/Simple/bandwidth_factor_multi_node"
  ParameterUnit unit = ParameterUnit::Number;
  double lower = 0.0;  // bounds, SI units (seconds, bytes, watts)
  double upper = 1.0;
  double start = 0.0;  // where a fit starts, whatever the base profile says (reproducible refits)
  // The value that adds no knowledge: NCCL's model unchanged for collective terms, the start
  // value for the others. Leave-one-out predictions start from it (docs/calibration.md).
  double neutral = 0.0;
  std::string meaning;
  std::function<double(const hardware::HardwareSpec&)> get;
  std::function<void(hardware::HardwareSpec&, double)> set;
};

// Every parameter, in a fixed order (the order of fits and of printed tables).
[[nodiscard]] const std::vector<Parameter>& parameters();

// The parameter at `pointer`, or nullptr.
[[nodiscard]] const Parameter* find_parameter(std::string_view pointer);

// "/collective/measured/<algorithm>/<protocol>/<field>" for a tuned algorithm, e.g.
// "/collective/measured/ring/Simple/latency_offset".
[[nodiscard]] std::string measured_pointer(hardware::Algorithm algorithm,
                                           hardware::Protocol protocol, std::string_view field);

}  // namespace trainsim::calibrate
