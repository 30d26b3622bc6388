// The collective fit of the built-in profiles against the nccl-tests logs in calibration/
// (provenance in calibration/nccl_tests/README.md), checked against the done criteria of
// docs/calibration.md: every healthy log within 15% per size from 1 MiB and 10% on average.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "trainsim/calibrate/fit.hpp"
#include "trainsim/calibrate/parameters.hpp"
#include "trainsim/error.hpp"

#include "sim/io/calibration_inputs.hpp"
#include "sim/io/hardware_loader.hpp"

using namespace trainsim;
using namespace trainsim::calibrate;

namespace {

std::string calibration_file(const std::string& name) {
  return std::string(TRAINSIM_SOURCE_DIR) + "/calibration/" + name;
}

FitOptions options() {
  FitOptions o;
  return o;
}

}  // namespace

TEST_CASE("calibration: h100-dgx fits every healthy H100 log", "[calibrate][validation]") {
  const auto in = io::read_calibration_inputs({calibration_file("h100-dgx.json")}, false);
  // The three logs marked reported_problem are left out by default.
  REQUIRE(in.skipped.size() == 3);
  const FitResult r = fit(io::load_hardware("h100-dgx"), in.points, options());
  std::map<std::string, std::pair<double, int>> mean;
  std::set<std::string> above_15;
  for (const auto& p : r.residuals) {
    // The document's two published 32-node points (nccl#1218, approximate) are checked below.
    if (p.origin.label.find(":collectives[") != std::string::npos) {
      REQUIRE(std::abs(p.error()) <= 0.15);
      continue;
    }
    auto& [sum, n] = mean[p.origin.label];
    sum += std::abs(p.error());
    ++n;
    if (std::abs(p.error()) > 0.15) {
      above_15.insert(p.origin.label + ":" + std::to_string(p.origin.line));
    }
  }
  REQUIRE(mean.size() == 7);
  for (const auto& [label, s] : mean) {
    INFO(label);
    REQUIRE(s.first / s.second <= 0.10);
  }
  // Known gap, kept strict so that it shows when it closes: the one log's two points above
  // 15% are a 256 MiB row slower than its own 128 MiB row (235.9 against 249.2 GB/s busbw,
  // line 48: +25.7%), which no size-monotone model follows, and its 8 MiB row (68.0 GB/s, line
  // 43: +15.5%), where the 8-node log's 8 MiB row is slow too (+14.8%).
  REQUIRE(above_15 == std::set<std::string>{"h100-ndr-4node-all_reduce.txt:43",
                                            "h100-ndr-4node-all_reduce.txt:48"});
}

TEST_CASE("calibration: the committed h100-dgx terms are what the logs fit",
          "[calibrate][validation]") {
  // scripts/refit-profiles writes the fitted values with four significant digits, so a fit
  // from the committed profile finds them again within 5e-4 relative (plus the fits' own
  // convergence tolerance).
  const auto base = io::load_hardware("h100-dgx");
  const auto in = io::read_calibration_inputs({calibration_file("h100-dgx.json")}, false);
  const FitResult r = fit(base, in.points, options());
  REQUIRE(r.values.size() >= 10);
  for (const auto& v : r.values) {
    INFO(v.parameter->pointer);
    REQUIRE(v.parameter->get(base) == Approx(v.value).epsilon(2e-3).margin(1e-7));
  }
}

TEST_CASE("calibration: a reported-problem log fitted on purpose fits badly",
          "[calibrate][validation]") {
  // nccl-tests#319: 89 GB/s on 2 nodes where the healthy log of nccl-tests#309 reaches 469.
  // Fitted together with the healthy logs it cannot pull the shared NVLSTree terms down to it.
  const auto in = io::read_calibration_inputs({calibration_file("h100-dgx.json")}, true);
  REQUIRE(in.skipped.empty());
  const FitResult r = fit(io::load_hardware("h100-dgx"), in.points, options());
  double worst = 0.0;
  for (const auto& p : r.residuals) {
    if (p.origin.label == "h100-ndr-2node-all_reduce-lowbw.txt") {
      REQUIRE(p.origin.reported_problem);
      worst = std::max(worst, std::abs(p.error()));
    }
  }
  REQUIRE(worst > 0.5);
}

TEST_CASE("calibration: the 128-node log, never fitted, follows the tuned cluster's profile",
          "[calibrate][validation]") {
  // nccl-tests#322: Ring/LL128 forced on 128 H100 nodes with NCCL_MIN_NCHANNELS=32 and 2 QPs;
  // marked reported_problem because the run aborted after its 16 GiB row (an NCCL allocator
  // bug), so no fit uses it. Its five rows reach 111.8, 215.8, 338.2, 365.6 and 367.4 GB/s
  // busbw (1 to 16 GiB, the larger column). Predicted without fitting:
  // - by h100-dgx (default NCCL: the ring keeps 0.907 of its bandwidth per doubling of nodes,
  //   fitted to default 4- and 8-node logs against a tuned 2-node ring) at 98, 133, 162, 181
  //   and 193 GB/s: -12% at 1 GiB, then 38-52% below from 2 GiB on;
  // - by calibration/h100-ndr-min-ctas24.profile.json (fitted to one other cluster's tuned
  //   2- and 8-node logs, NCCL_MIN_CTAS=24 and 2 QPs: no loss per doubling) at 125, 187, 250,
  //   300 and 334 GB/s: +12%, -13%, -26%, -18%, -9%.
  // docs/calibration.md ("The ring beyond 8 nodes") draws the conclusion: the built-in's loss
  // per doubling is what default settings lose on the fabrics measured, not what a ring
  // must lose.
  const auto in = io::read_calibration_inputs({calibration_file("h100-dgx.json")}, true);
  calibrate::MeasurementSet log128;
  for (const auto& p : in.points.collectives) {
    if (p.origin.label == "h100-128node-all_reduce-ring-ll128.txt") {
      REQUIRE(p.origin.reported_problem);
      log128.collectives.push_back(p);
    }
  }
  REQUIRE(log128.collectives.size() == 5);
  const auto residuals = compare(
      io::load_hardware("h100-dgx"),
      io::load_hardware(calibration_file("h100-ndr-min-ctas24.profile.json")), log128, options());
  REQUIRE(residuals.size() == 5);
  for (const auto& p : residuals) {
    INFO(p.what << ": measured " << p.measured << ", h100-dgx " << p.before << ", tuned "
                << p.after);
    REQUIRE(std::abs(p.error()) <= 0.30);
    if (p.measured > 200.0) REQUIRE(p.error_before() < -0.35);
  }
}

TEST_CASE("calibration: h200-sxm's GEMM and attention terms are what its suite fits",
          "[calibrate][validation]") {
  // scripts/refit-profiles fits the H200 suite's 62 cuBLASLt GEMMs and 19 cuDNN attention calls
  // (calibration/h200-sxm/) with the launch overhead held; a fit from the committed profile
  // finds the written (four-digit) values again.
  const auto base = io::load_hardware("h200-sxm");
  const auto in = io::read_calibration_inputs(
      {calibration_file("h200-sxm/suite.json"), calibration_file("h200-sxm/attention.json")},
      false);
  FitOptions o = options();
  o.frozen = {"/gpu/kernel_launch_overhead"};
  const FitResult r = fit(base, in.points, o);
  int compute_terms = 0;
  for (const auto& v : r.values) {
    INFO(v.parameter->pointer);
    if (v.parameter->pointer.rfind("/gpu/", 0) == 0) ++compute_terms;
    REQUIRE(v.parameter->get(base) == Approx(v.value).epsilon(2e-3).margin(1e-7));
  }
  // gemm: max, tf32, fp8, half_size, reuse_knee; attention: max, half_size, head_dim_half;
  // memory efficiency.
  REQUIRE(compute_terms == 9);
  // The residuals docs/compute-model.md quotes: GEMMs within 8.2% on average (the old model of
  // one curve in the smallest side: 20.4%) and none off by 60% or more (the old: 177%);
  // attention within 3.8% on average (the old: 11.0%) and 15% at most (the old: 34%).
  double gemm_sum = 0.0;
  double gemm_max = 0.0;
  int gemms = 0;
  double attention_sum = 0.0;
  double attention_max = 0.0;
  int attentions = 0;
  for (const auto& p : r.residuals) {
    const double e = std::abs(p.error());
    if (p.what.rfind("gemm", 0) == 0) {
      gemm_sum += e;
      gemm_max = std::max(gemm_max, e);
      ++gemms;
    } else if (p.what.rfind("attention", 0) == 0) {
      attention_sum += e;
      attention_max = std::max(attention_max, e);
      ++attentions;
    }
  }
  REQUIRE(gemms == 62);
  REQUIRE(attentions == 19);
  CHECK(gemm_sum / gemms < 0.09);
  CHECK(gemm_max < 0.60);
  CHECK(attention_sum / attentions < 0.045);
  CHECK(attention_max < 0.15);
}
