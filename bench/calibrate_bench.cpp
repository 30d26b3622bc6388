// Cost of `trainsim calibrate` (the calibration issue's budget: a calibration on all healthy
// logs in under 5 s on two cores). calibrate_h100_logs: reading calibration/h100-dgx.json and
// its seven healthy nccl-tests logs and two published points, then the fit (17 parameters, 85
// points);
// calibrate_h100_leave_one_out: the same plus one refit per measurement set, as
// `trainsim calibrate --leave-one-out` does.
#include <set>
#include <string>

#include <benchmark/benchmark.h>

#include "trainsim/calibrate/fit.hpp"

#include "sim/io/calibration_inputs.hpp"
#include "sim/io/hardware_loader.hpp"

namespace {

using namespace trainsim;

calibrate::FitOptions options() {
  calibrate::FitOptions o;
  return o;
}

const std::string kDocument = std::string(TRAINSIM_SOURCE_DIR) + "/calibration/h100-dgx.json";

void calibrate_h100_logs(benchmark::State& state) {
  const hardware::HardwareSpec base = io::load_hardware("h100-dgx");
  for (auto _ : state) {
    const auto in = io::read_calibration_inputs({kDocument}, false);
    benchmark::DoNotOptimize(calibrate::fit(base, in.points, options()));
  }
}
BENCHMARK(calibrate_h100_logs)->Unit(benchmark::kMillisecond);

void calibrate_h100_leave_one_out(benchmark::State& state) {
  const hardware::HardwareSpec base = io::load_hardware("h100-dgx");
  for (auto _ : state) {
    const auto in = io::read_calibration_inputs({kDocument}, false);
    benchmark::DoNotOptimize(calibrate::fit(base, in.points, options()));
    std::set<std::string> labels;
    for (const auto& p : in.points.collectives) labels.insert(p.origin.label);
    for (const auto& held : labels) {
      calibrate::MeasurementSet rest = in.points;
      std::erase_if(rest.collectives,
                    [&](const calibrate::CollectivePoint& p) { return p.origin.label == held; });
      benchmark::DoNotOptimize(calibrate::fit(base, rest, options()));
    }
  }
}
BENCHMARK(calibrate_h100_leave_one_out)->Unit(benchmark::kMillisecond);

}  // namespace
