// The fit of a hardware profile's parameters (calibrate/parameters.hpp) to measured points:
// robust nonlinear least squares with bounds (Ceres Solver, Levenberg-Marquardt, Huber loss on
// the log of modelled over measured time), with the parameters' standard errors from the
// covariance at the optimum. Only the parameters the points inform are fitted; the others keep
// the base profile's values. Deterministic: one thread, a fixed start, a fixed order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "trainsim/calibrate/measurements.hpp"
#include "trainsim/calibrate/parameters.hpp"
#include "trainsim/hardware/hardware_spec.hpp"

namespace trainsim::calibrate {

struct FitOptions {
  // Collective points below this size are not fitted (nor reported): NCCL switches to LL and
  // LL128 there, and the done criteria of docs/calibration.md start at 1 MiB.
  Bytes min_collective_bytes = Bytes(1024.0 * 1024.0);
  // Huber loss scale on log(model / measured): residuals beyond it count linearly.
  double loss_scale = 0.05;
  // Parameters never to fit, by pointer, even when the points inform them.
  std::vector<std::string> frozen;
};

// One measured point against the model before and after the fit. `measured`, `before` and
// `after` are in `unit`: bus bandwidth (GB/s) for collectives, TFLOP/s for GEMM and attention,
// GB/s for memory, microseconds for launches, watts for power. error = after / measured - 1.
struct PointResidual {
  std::string what;       // "all_reduce 2x8 16 MiB", "gemm 4096x4096x4096 bf16"
  std::string algorithm;  // the algorithm NCCL chose or was forced to ("" for compute points)
  std::string unit;
  // The same values in SI for JSON: value x si_scale in `si_unit` ("bytes_per_s" for bus or
  // memory bandwidth, "flop_per_s", "s", "w").
  std::string si_unit;
  double si_scale = 1.0;
  double measured = 0.0;
  double before = 0.0;
  double after = 0.0;
  Origin origin;
  [[nodiscard]] double error() const { return after / measured - 1.0; }
  [[nodiscard]] double error_before() const { return before / measured - 1.0; }
};

struct FittedValue {
  const Parameter* parameter = nullptr;
  double before = 0.0;                 // the base profile's value (SI)
  double value = 0.0;                  // fitted (SI)
  std::optional<double> sigma;         // standard error, when the covariance could be computed
  // Not determined by the points (a share in the Jacobian's null space), and held at the base's
  // value: `value` is the base's.
  bool held = false;
  bool at_bound = false;               // within 0.1% of the bound's span of a bound
  std::vector<std::string> fitted_to;  // labels of the measurement sets that inform it
  int points = 0;
  double rms_error = 0.0;  // over the points that inform it, after the fit (relative)
  double max_error = 0.0;
  // For a collective's latency terms (latency_scale, latency_offset_single_node and
  // latency_offset_multi_node): the smallest message among the points that inform it (bytes).
  // Above the fill's saturation the fill adds a constant time, as a latency does, so a latency
  // fitted to such messages only is not told apart from the fill, and sets the time of smaller
  // messages by extrapolation.
  std::optional<double> smallest_bytes;
};

struct FitResult {
  hardware::HardwareSpec fitted;
  std::vector<FittedValue> values;       // in parameters() order
  std::vector<PointResidual> residuals;  // in the order of the measurement set
  // Solver steps (each run's start not counted): the run kept, at most 200, and those of the
  // refits with a parameter held.
  int iterations = 0;
  bool converged = false;
  // No run lowered the cost at the base's values by more than 0.1%: they stand (held ones
  // included), and `iterations` counts none.
  bool base_kept = false;
};

// A message size as the fit's points name it: "16 MiB", "1 GiB", "8 B" (binary units, %g).
[[nodiscard]] std::string size_text(double bytes);

// A call a profile prices faster than its NVLink and NICs carry it
// (collective::detail::line_rate_transfer): `call` as the fit's rows name one ("all_gather
// 2x8 1 GiB"), its busbw and the links' in GB/s, and `excess`, busbw / limit - 1.
struct LineRateExcess {
  std::string call;
  std::string algorithm;  // "ring/Simple": NCCL's choice as the model makes it
  double busbw_gbs = 0.0;
  double limit_gbs = 0.0;
  double excess = 0.0;
};

// The furthest above the line rate of the calls AllReduce and AllGather of 1 GiB on 2 to 64
// full nodes (the model's own algorithm and protocol), or nothing when none is above it. A fit
// to points of some node counts extrapolates its multi-node terms to the others: a ring factor
// fitted to 8 nodes alone priced 2 nodes 25% above their NICs.
[[nodiscard]] std::optional<LineRateExcess> line_rate_excess(const hardware::HardwareSpec& hw);

// Fits `base` to `points`. Throws ConfigError when a point cannot be modelled on this profile
// (a forced algorithm NCCL could not run there, a dtype the GPU lacks, a group larger than the
// node allows) and when the points inform no parameter.
[[nodiscard]] FitResult fit(const hardware::HardwareSpec& base, const MeasurementSet& points,
                            const FitOptions& options);

// The points against two profiles without fitting (for leave-one-out predictions).
[[nodiscard]] std::vector<PointResidual> compare(const hardware::HardwareSpec& before,
                                                 const hardware::HardwareSpec& after,
                                                 const MeasurementSet& points,
                                                 const FitOptions& options);

}  // namespace trainsim::calibrate
