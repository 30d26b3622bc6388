// The collective fit of the built-in profiles against the nccl-tests logs in calibration/
// (provenance in calibration/nccl_tests/README.md), checked against the done criteria of
// docs/calibration.md: every healthy log within 15% per size from 1 MiB and 10% on average.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <unistd.h>

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

TEST_CASE("calibration: the example document of docs/calibration-measurements.md fits",
          "[calibrate][validation]") {
  // The example (one record in every array) read from the page itself and fitted on h100-dgx,
  // its log beside it as the page names it. It was refused: a ring all-reduce at 449 busbw GB/s
  // on 2 nodes of 400 GB/s NICs, and the NVLS-tree log declared ring.
  std::ifstream page(std::string(TRAINSIM_SOURCE_DIR) + "/docs/calibration-measurements.md");
  std::stringstream text;
  text << page.rdbuf();
  const std::string md = text.str();
  const std::size_t begin = md.find("```json\n");
  REQUIRE(begin != std::string::npos);
  const std::size_t end = md.find("```", begin + 8);
  REQUIRE(end != std::string::npos);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("trainsim-calibration-doc-example-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "nccl_tests");
  std::filesystem::copy_file(calibration_file("nccl_tests/h100-ndr-2node-all_reduce-ring.txt"),
                             dir / "nccl_tests" / "h100-ndr-2node-all_reduce-ring.txt",
                             std::filesystem::copy_options::overwrite_existing);
  {
    std::ofstream out(dir / "example.json");
    out << md.substr(begin + 8, end - begin - 8);
  }
  const auto in = io::read_calibration_inputs({(dir / "example.json").string()}, false);
  std::filesystem::remove_all(dir);
  const FitResult r = fit(io::load_hardware("h100-dgx"), in.points, options());
  // 14 log rows from 1 MiB and one point of each other kind.
  REQUIRE(r.residuals.size() == 14 + 7);
  for (const auto& p : r.residuals) {
    INFO(p.origin.label << " " << p.what);
    REQUIRE(std::abs(p.error()) < 0.15);
  }
}

TEST_CASE("calibration: a fit from the base's values wins where it ends lower",
          "[calibrate][validation]") {
  // The forced-ring 2-node log of nccl-tests#309 alone, declared ring/Simple, on h100-dgx (whose
  // ring terms a joint fit of several logs set): 6.0% mean error before. The fit from the
  // documented start values alone ended at 18.5% (its latency offset past LL's floor, where the
  // points no longer move it, and the fill at its bound); the fit from h100-dgx's own values
  // ends at 3.7%, a cost 0.0147 against 0.0827, and is kept.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("trainsim-calibration-two-starts-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string doc = (dir / "ring.json").string();
  {
    std::ofstream out(doc);
    out << R"({"schema": "trainsim-measurements", "schema_version": 1,
               "environment": {"device": "NVIDIA H100 80GB HBM3"},
               "nccl_tests": [{"file": ")"
        << calibration_file("nccl_tests/h100-ndr-2node-all_reduce-ring.txt")
        << R"(", "op": "all_reduce", "ranks": 16, "nodes": 2, "algorithm": "ring",
               "protocol": "Simple"}]})";
  }
  const auto in = io::read_calibration_inputs({doc}, false);
  const FitResult r = fit(io::load_hardware("h100-dgx"), in.points, options());
  std::filesystem::remove_all(dir);
  REQUIRE(r.residuals.size() == 14);
  double before = 0.0;
  double after = 0.0;
  for (const auto& p : r.residuals) {
    before += std::abs(p.error_before()) / 14.0;
    after += std::abs(p.error()) / 14.0;
  }
  INFO("mean error before " << before << ", after " << after);
  CHECK(before == Approx(0.060).margin(0.001));
  REQUIRE(after < 0.045);
  REQUIRE(r.converged);
}

TEST_CASE("calibration: a refit from a profile the fit wrote keeps its values",
          "[calibrate][validation]") {
  // calibration/h100-ndr-min-ctas24.profile.json is what scripts/refit-profiles writes from
  // calibration/h100-ndr-min-ctas24.json (values rounded to 4 digits). Fitted again on the same
  // document from that profile, the run from its values lowers the cost by less than 0.1%, so
  // they stand: ring/Simple's multi-node latency offset had moved -309.1, -308.5, -307.8 us
  // over three such refits.
  const auto in =
      io::read_calibration_inputs({calibration_file("h100-ndr-min-ctas24.json")}, false);
  const auto base = io::load_hardware(calibration_file("h100-ndr-min-ctas24.profile.json"));
  const FitResult r = fit(base, in.points, options());
  REQUIRE(r.values.size() == 11);
  for (const auto& v : r.values) {
    INFO(v.parameter->pointer << ": " << v.before << " -> " << v.value);
    REQUIRE(v.value == v.before);
  }
}

TEST_CASE("calibration: the 128-node log, never fitted, follows the tuned cluster's profile",
          "[calibrate][validation]") {
  // nccl-tests#322: Ring/LL128 forced on 128 H100 nodes with NCCL_MIN_NCHANNELS=32 and 2 QPs;
  // marked reported_problem because the run aborted after its 16 GiB row (an NCCL allocator
  // bug), so no fit uses it. Its five rows reach 111.8, 215.8, 338.2, 365.6 and 367.4 GB/s
  // busbw (1 to 16 GiB, the larger column). Predicted without fitting:
  // - by h100-dgx (default NCCL: the ring keeps 0.907 of its bandwidth per doubling of nodes,
  //   fitted to default 4- and 8-node logs against a tuned 2-node ring) at 96, 132, 161, 181
  //   and 193 GB/s: -14% at 1 GiB, then 39-52% below from 2 GiB on;
  // - by calibration/h100-ndr-min-ctas24.profile.json (fitted to one other cluster's tuned
  //   2- and 8-node logs, NCCL_MIN_CTAS=24 and 2 QPs: no loss per doubling) at 122, 184, 247,
  //   298 and 332 GB/s: +9%, -15%, -27%, -18%, -10%.
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

namespace {

// A bound or start as docs/calibration.md's parameter table writes it, in SI: "0.05", "100 us",
// "-1 ms", "64 MiB", "4 GiB", "2000 W".
double doc_number(std::string text) {
  while (!text.empty() && text.front() == ' ') text.erase(0, 1);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  const auto space = text.find(' ');
  const double v = std::stod(text.substr(0, space));
  const std::string unit = space == std::string::npos ? "" : text.substr(space + 1);
  if (unit == "us") return v * 1e-6;
  if (unit == "ms") return v * 1e-3;
  if (unit == "MiB") return v * 1024.0 * 1024.0;
  if (unit == "GiB") return v * 1024.0 * 1024.0 * 1024.0;
  return v;  // plain, W
}

}  // namespace

TEST_CASE("calibrate: docs/calibration.md's parameter table lists every parameter as fitted",
          "[calibrate][docs]") {
  // The table (docs/calibration.md, "The parameter set") against the registry the fit and the
  // loader use: every parameter is in a row, with the row's bounds and start. The table had
  // drifted: five GEMM, attention and contention parameters missing, attention's half size
  // given bounds 0-1048576 where the fit has 0-65536.
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/docs/calibration.md");
  REQUIRE(in);
  std::set<std::string> listed;
  std::string line;
  std::string prefix;  // what a row's ".../" stands for: the row above's pointer, less its field
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("| `/", 0) != 0 && line.rfind("| `.../", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(cell);
    REQUIRE(cells.size() >= 5);
    // Pointers: each `...` in the first cell; "<a>/<p>" rows stand for every algorithm and
    // protocol.
    // A leading ".../" is the row above's folder; a later one in a row, the row's first's.
    std::vector<std::string> pointers;
    for (std::size_t at = cells[0].find('`'); at != std::string::npos;) {
      const auto end = cells[0].find('`', at + 1);
      std::string p = cells[0].substr(at + 1, end - at - 1);
      if (p.rfind(".../", 0) == 0) p = prefix + p.substr(4);
      pointers.push_back(p);
      prefix = pointers.front().substr(0, pointers.front().rfind('/') + 1);
      at = cells[0].find('`', end + 1);
    }
    // Bounds "lo-hi" or "lo to hi" (a negative lower bound), starts "a / b / c W".
    std::string bounds = cells[2];
    std::string lo;
    std::string hi;
    if (const auto to = bounds.find(" to "); to != std::string::npos) {
      lo = bounds.substr(0, to);
      hi = bounds.substr(to + 4);
    } else {
      const auto dash = bounds.find('-', bounds.find_first_not_of(' ') + 1);
      lo = bounds.substr(0, dash);
      hi = bounds.substr(dash + 1);
    }
    // A unit written once holds for every number of the cell: "0-100 us", "100 / 500 / 400 W".
    const auto trim = [](std::string t) {
      t.erase(0, t.find_first_not_of(' '));
      t.erase(t.find_last_not_of(' ') + 1);
      return t;
    };
    const auto unit_of = [&trim](const std::string& t) {
      const std::string v = trim(t);
      const auto space = v.find(' ');
      return space == std::string::npos ? std::string() : v.substr(space);
    };
    lo = trim(lo);
    hi = trim(hi);
    if (unit_of(lo).empty()) lo += unit_of(hi);
    std::vector<std::string> starts;
    {
      const std::string st = trim(cells[3]);
      const std::string unit =
          unit_of(st.substr(st.rfind('/') == std::string::npos ? 0 : st.rfind('/') + 1));
      std::stringstream parts(st);
      for (std::string part; std::getline(parts, part, '/');) {
        part = trim(part);
        if (unit_of(part).empty()) part += unit;
        starts.push_back(part);
      }
    }
    for (std::size_t i = 0; i < pointers.size(); ++i) {
      std::vector<std::string> expanded;
      const auto a_at = pointers[i].find("<a>/<p>");
      if (a_at == std::string::npos) {
        expanded.push_back(pointers[i]);
      } else {
        for (const char* a : {"tree", "ring", "nvls", "nvls_tree", "pat"}) {
          for (const char* pr : {"LL", "LL128", "Simple"}) {
            std::string p = pointers[i];
            p.replace(a_at, 7, std::string(a) + "/" + pr);
            expanded.push_back(p);
          }
        }
      }
      for (const std::string& p : expanded) {
        INFO(line << "\n" << p);
        const Parameter* param = find_parameter(p);
        REQUIRE(param != nullptr);
        CHECK(param->lower == Approx(doc_number(lo)).margin(1e-12));
        CHECK(param->upper == Approx(doc_number(hi)).margin(1e-12));
        CHECK(param->start ==
              Approx(doc_number(starts[std::min(i, starts.size() - 1)])).margin(1e-12));
        listed.insert(p);
      }
    }
    ++rows;
  }
  CHECK(rows >= 10);
  for (const Parameter& p : parameters()) {
    INFO(p.pointer);
    CHECK(listed.count(p.pointer) == 1);
  }
}

TEST_CASE("calibration: what the points do not determine keeps the base's value",
          "[calibrate][validation]") {
  const auto base = io::load_hardware("h100-dgx");
  const Parameter& factor =
      *find_parameter("/collective/measured/tree/LL128/bandwidth_factor_multi_node");
  const Parameter& offset =
      *find_parameter("/collective/measured/tree/LL128/latency_offset_multi_node");
  const double base_factor = factor.get(base);  // 0.3594, fitted to the 4- and 8-node logs
  const auto value_of = [](const FitResult& r, const Parameter& p) -> const FittedValue& {
    const auto it = std::find_if(r.values.begin(), r.values.end(),
                                 [&p](const FittedValue& v) { return v.parameter == &p; });
    REQUIRE(it != r.values.end());
    return *it;
  };
  SECTION("a null column: one 256 KiB point where the factor is capped") {
    // The 2-node log from 8 B runs tree/LL128 at one size, 256 KiB, where LL128's bandwidth is
    // capped and the factor acts on nothing at its start value 1. The fit from that start ended
    // there and won the tie with the fit from the base (both fit the point exactly), so the
    // written profile carried 1 for the base's 0.3594: the 8-node log's 4 MiB tree/LL128 point
    // then read +42% against +3.2% on the base.
    const auto in = io::read_calibration_inputs(
        {calibration_file("nccl_tests/h100-ndr-2node-all_reduce.txt")}, false);
    FitOptions o = options();
    o.min_collective_bytes = Bytes(0.0);
    const FitResult r = fit(base, in.points, o);
    const FittedValue& v = value_of(r, factor);
    CHECK(v.held);
    CHECK(!v.sigma);
    CHECK(v.value == base_factor);
    CHECK(factor.get(r.fitted) == base_factor);
    CHECK(v.points == 1);
  }
  SECTION("the only parameter left free") {
    // The same factor alone (every other parameter frozen), on a base that gives it 0.9: there
    // was no refit to try once a single parameter was left, and it ended at its start, 1. The
    // base's Tree Simple factor is 0.3, so that LL128 is held by the bound of the measured
    // Simple call (NCCL's ratio of the two) over the factor's whole range [0.3, 2]: the point
    // does not determine it.
    hardware::HardwareSpec b = base;
    factor.set(b, 0.9);
    find_parameter("/collective/measured/tree/Simple/bandwidth_factor_multi_node")->set(b, 0.3);
    const auto in = io::read_calibration_inputs(
        {calibration_file("nccl_tests/h100-ndr-2node-all_reduce.txt")}, false);
    FitOptions o = options();
    o.min_collective_bytes = Bytes(0.0);
    for (const Parameter& p : parameters()) {
      if (&p != &factor) o.frozen.push_back(p.pointer);
    }
    const FitResult r = fit(b, in.points, o);
    const FittedValue& v = value_of(r, factor);
    CHECK(v.held);
    CHECK(v.value == 0.9);
    CHECK(factor.get(r.fitted) == 0.9);
  }
  SECTION("one point, two parameters") {
    // The 4-node log holds one tree/LL128 point (1 MiB) for the factor and the latency offset:
    // a direction of the two leaves it unchanged. The pseudo-inverse gave the factor a standard
    // error of 0.0007 while it drifted from 0.3594 to 0.3312; held at the base's value, the
    // factor shows no error and the offset alone fits the point (-53.5 us, as with the factor
    // frozen by --freeze).
    const auto in = io::read_calibration_inputs(
        {calibration_file("nccl_tests/h100-ndr-4node-all_reduce.txt")}, false);
    const FitResult r = fit(base, in.points, options());
    const FittedValue& f = value_of(r, factor);
    CHECK(f.held);
    CHECK(!f.sigma);
    CHECK(f.value == base_factor);
    const FittedValue& l = value_of(r, offset);
    CHECK(!l.held);
    CHECK(l.sigma.has_value());
    CHECK(l.value == Approx(-53.52e-6).epsilon(1e-3));
  }
}
