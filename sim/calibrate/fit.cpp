#include "trainsim/calibrate/fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include <ceres/ceres.h>
#include <glog/logging.h>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/compute/kernel_cost.hpp"
#include "trainsim/error.hpp"
#include "trainsim/parallel/scenario.hpp"

#include "sim/calibrate/null_space.hpp"
#include "sim/collective/nccl_tuning.hpp"

namespace trainsim::calibrate {

namespace {

using collective::Op;
using hardware::Algorithm;
using hardware::HardwareSpec;

constexpr double kMiB = 1024.0 * 1024.0;

double element_bytes(hardware::Dtype d) {
  switch (d) {
    case hardware::Dtype::Fp32:
    case hardware::Dtype::Tf32:
      return 4.0;
    case hardware::Dtype::Fp8:
      return 1.0;
    default:
      return 2.0;
  }
}

// Where a point is, as errors name it after the file: its line in a log, its JSON pointer in a
// document (with `key`, the value's own key, when given).
std::string origin_text(const Origin& o, const std::string& key = "") {
  if (o.line > 0) return "line " + std::to_string(o.line);
  if (o.pointer.empty()) return o.label;
  return key.empty() ? o.pointer : o.pointer + "/" + key;
}

// What a point measures and how the model predicts it: `model(spec)` returns the modelled
// quantity in the point's unit (higher is faster for rates, so the residual is taken on time).
struct Case {
  PointResidual row;
  // Returns the modelled time (s) or power (W) on `hw`; measured_value is the same quantity.
  std::function<double(const HardwareSpec&)> model;
  double measured_value = 0.0;
  // Converts a modelled time or power into the reported unit (busbw, TFLOP/s, ...).
  std::function<double(double)> report;
  // Parameters this point informs (indices into parameters()).
  std::vector<std::size_t> informs;
  // The shortest time the hardware allows for the point (s; 0: no bound) and what sets it,
  // as the refusal names it ("the bf16 peak").
  double fastest = 0.0;
  std::string ceiling;
  std::string hint;  // what to check when the point is refused ("": unit, sizes and dtype)
  double bytes = 0.0;  // a collective's message size (0 for other points)
};

std::size_t index_of(const std::string& pointer) {
  const auto& all = parameters();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].pointer == pointer) return i;
  }
  throw InternalError("calibrate: no parameter " + pointer);
}

// A measured time or power the model could reach at all: a time from 1 ns to one day, a board
// power from 1 W to 5 kW (hardware::kMinGpuWatts, kMaxGpuWatts). Anything else is a unit
// mistake, and fitting it would only push parameters to their bounds.
// `key` is the record's key that holds the value ("time", "time_alone", "power").
void check_measured(const Origin& origin, double value, bool power, const std::string& key) {
  const double lo = power ? hardware::kMinGpuWatts : 1e-9;
  const double hi = power ? hardware::kMaxGpuWatts : 86400.0;
  if (!(value >= lo && value <= hi)) {
    char text[32];
    (void)std::snprintf(text, sizeof text, "%.4g", value);
    throw ConfigError(origin.source, origin_text(origin, key),
                      std::string("measured ") + (power ? "power " : "time ") + text +
                          (power ? " W; expected 1 W to 5 kW" : " s; expected 1 ns to one day"));
  }
}

// Refuses a time faster than the hardware allows: `fastest` is the work over the profile's
// ceiling rate, `rate` turns a time into the point's reported rate ("TFLOP/s", ...). Such a
// point is a unit or bookkeeping mistake (a time per element, a mislabelled dtype), and a fit
// would only move the profile towards it (a 4096^3 GEMM in 1 us moved max_efficiency by 6%).
// `hint` says what to check ("" for the time's unit and the record's sizes and dtype).
void check_ceiling(const Origin& origin, const std::string& key, double measured, double fastest,
                   const std::function<double(double)>& rate, const std::string& unit,
                   const std::string& ceiling, const HardwareSpec& hw,
                   const std::string& hint = "") {
  if (!(fastest > 0.0) || measured >= fastest) return;
  const auto g = [](double v) {
    std::array<char, 32> buf{};
    (void)std::snprintf(buf.data(), buf.size(), "%.4g", v);
    return std::string(buf.data());
  };
  throw ConfigError(
      origin.source, origin_text(origin, key),
      "measured time " + g(measured) + " s is " + g(rate(measured)) + " " + unit + ", above " +
          ceiling + " (" + g(rate(fastest)) + " " + unit + ") of profile '" + hw.id +
          "'; expected at least " + g(fastest) + " s (" +
          (hint.empty() ? "check the time's unit and the record's sizes and dtype" : hint) + ")");
}

// The shortest time `flops` take at the profile's peak for `dtype`, and that ceiling's name as
// a refusal gives it ("the bf16 peak"); a dtype the GPU lacks (a zero peak: V100 bf16) is an
// error at the record's dtype.
std::pair<double, std::string> peak_ceiling(double flops, hardware::Dtype dtype,
                                            const HardwareSpec& hw, const Origin& origin) {
  const double peak = hw.peak(dtype).value();
  if (!(peak > 0.0)) {
    throw ConfigError(origin.source, origin_text(origin, "dtype"),
                      "profile '" + hw.id + "' has no " + parallel::to_string(dtype) +
                          " peak (its GPU lacks the format); expected a dtype it runs");
  }
  return {flops / peak, "the " + std::string(parallel::to_string(dtype)) + " peak"};
}

// The fastest link of one GPU, one direction: NVLink, or its share of the node's NICs where
// that is more (a PCIe node's network can outrun its GPU-to-GPU path).
double fastest_link(const HardwareSpec& hw) {
  const double network = hw.fabric.nic_bandwidth.value() * hw.fabric.nics_per_node /
                         std::max(1, hw.node.gpus_per_node);
  return std::max(hw.node.nvlink_bandwidth_per_direction.value(), network);
}

// The collective cases and, per (algorithm, protocol) NCCL chose, which terms they inform.
void add_collectives(const MeasurementSet& m, const FitOptions& options, const HardwareSpec& hw,
                     std::vector<Case>& cases) {
  using hardware::Protocol;
  struct Seen {
    std::set<std::int64_t> bandwidth_node_counts;  // multi-node, transfer-dominated points
    std::set<std::int64_t> latency_node_counts;    // points where NCCL's latency matters
    std::set<double> sizes;
    std::set<double> single_sizes;
    std::set<double> multi_sizes;
    std::vector<std::size_t> single_node_cases;
    std::vector<std::size_t> cases;
    std::vector<std::size_t> multi_node_cases;
    std::vector<std::size_t> latency_cases;
  };
  std::map<std::pair<Algorithm, Protocol>, Seen> seen;
  hardware::HardwareSpec nccl_only = hw;
  nccl_only.collective.measured = {};
  for (const CollectivePoint& p : m.collectives) {
    if (p.bytes < options.min_collective_bytes) continue;
    Case c;
    if (p.op == Op::AllToAll || p.op == Op::SendRecv) {
      throw ConfigError(p.origin.source, origin_text(p.origin, "op"),
                        std::string(collective::to_string(p.op)) +
                            " is priced from link bandwidths, which calibration does not fit; "
                            "expected all_reduce, all_gather, reduce_scatter, broadcast or reduce");
    }
    if (p.group.ranks < 2) {
      throw ConfigError(p.origin.source, origin_text(p.origin, "ranks"),
                        "a collective on one rank moves nothing; expected 2 ranks or more");
    }
    // nccl-tests holds the whole message on every rank (the printed size is the reduced or
    // gathered buffer, in place or beside the other one): a size past one GPU's HBM was never
    // run, and fitting it pushed the latency offset to its bound (a "10 PB" record).
    if (p.bytes > hw.gpu.hbm_capacity) {
      throw ConfigError(p.origin.source, origin_text(p.origin, p.origin.line > 0 ? "" : "bytes"),
                        size_text(p.bytes.value()) + " per rank, more than the " +
                            size_text(hw.gpu.hbm_capacity.value()) +
                            " of HBM of a GPU of profile '" + hw.id +
                            "'; expected a message one GPU holds (check the unit)");
    }
    if (p.group.ranks_per_node > hw.node.gpus_per_node) {
      throw ConfigError(p.origin.source, origin_text(p.origin),
                        std::to_string(p.group.ranks_per_node) + " ranks per node on a " +
                            std::to_string(hw.node.gpus_per_node) + "-GPU node of profile '" +
                            hw.id + "'; expected at most " + std::to_string(hw.node.gpus_per_node));
    }
    // NCCL's own estimate, without the base's measured terms: which terms a point informs (its
    // latency against its transfer) must not depend on an earlier fit, or a refit of a fitted
    // profile on the same points counts them differently.
    const auto nccl =
        collective::restricted_cost(nccl_only, p.op, p.group, p.bytes, p.algorithm, p.protocol);
    if (!nccl || nccl->algorithm == Algorithm::None) {
      std::string forced;
      if (p.algorithm) forced += " NCCL_ALGO=" + std::string(collective::to_string(*p.algorithm));
      if (p.protocol) forced += " NCCL_PROTO=" + std::string(collective::to_string(*p.protocol));
      const std::string problem = "NCCL could not run " + std::string(collective::to_string(p.op)) +
                                  " on " + std::to_string(p.group.ranks) + " ranks over " +
                                  std::to_string(p.group.nodes) + " nodes with" + forced +
                                  " on profile '" + hw.id + "'";
      const std::string expected = "; expected an algorithm and protocol it has";
      // An algorithm or protocol a document declares for a log is the declaration's fault, not
      // the log line's (which the error named alone): the protocol where the algorithm runs
      // without it (nvls with LL), else the algorithm.
      const bool algorithm_runs =
          p.algorithm &&
          collective::restricted_cost(nccl_only, p.op, p.group, p.bytes, p.algorithm, std::nullopt)
              .has_value();
      const std::string& declared =
          !p.protocol_declared_at.empty() && (algorithm_runs || p.algorithm_declared_at.empty())
              ? p.protocol_declared_at
              : p.algorithm_declared_at;
      if (!declared.empty()) {
        throw ConfigError(
            declared, "",
            problem + " (" + p.origin.source + ", " + origin_text(p.origin) + ")" + expected);
      }
      throw ConfigError(p.origin.source, origin_text(p.origin), problem + expected);
    }
    const Algorithm chosen = nccl->algorithm;
    const Protocol chosen_protocol = nccl->protocol;
    const Op op = p.op;
    const parallel::GroupShape group = p.group;
    const Bytes bytes = p.bytes;
    const auto forced_algorithm = p.algorithm;
    const auto forced_protocol = p.protocol;
    c.model = [=](const HardwareSpec& h) {
      return collective::restricted_cost(h, op, group, bytes, forced_algorithm, forced_protocol)
          ->time.value();
    };
    c.measured_value = p.time.value();
    c.bytes = bytes.value();
    const double factor = collective::bus_factor(op, group.ranks);
    c.report = [=](double t) { return bytes.value() / t * factor / 1e9; };
    c.row.what = std::string(collective::to_string(op)) + " " + std::to_string(group.nodes) + "x" +
                 std::to_string(group.ranks_per_node) + " " + size_text(bytes.value());
    c.row.algorithm = std::string(collective::to_string(chosen)) + "/" +
                      std::string(collective::to_string(chosen_protocol));
    c.row.unit = "busbw GB/s";
    c.row.si_unit = "bytes_per_s";
    c.row.si_scale = 1e9;
    c.row.origin = p.origin;
    if (p.algorithm) {
      // A run faster than the forced algorithm allows may not have run it (an NVLS-tree log
      // declared ring).
      c.hint = "check the time's unit and the record's sizes and dtype, and the algorithm " +
               (p.algorithm_declared_at.empty() ? std::string("the record forces")
                                                : p.algorithm_declared_at + " declares") +
               ": NCCL may have run another";
    }
    // A bus bandwidth reaches at most twice a GPU's fastest link: in-network reductions (NVLS,
    // SHARP) send each byte once and receive the reduced result once, so an AllReduce's busbw,
    // which counts 2 (n - 1) / n of the data (nccl-tests' PERFORMANCE.md), tops out at 2x the
    // link. The other collectives stay under the link's rate, so the bound is loose for them
    // (one bound for all): it catches unit mistakes, not a slow fabric.
    c.fastest = bytes.value() * factor / (2.0 * fastest_link(hw));
    c.ceiling = "twice the fastest link of a GPU";
    // Tighter where the algorithm says which links carry which bytes: no call moves its bytes
    // faster than its NVLink and NICs do (collective::detail::line_rate_transfer). A Ring
    // AllGather inside an H100 node tops out at 450 GB/s busbw, where the bound above allowed
    // 900; a 2-node Ring AllReduce at the NICs' 400 GB/s. The algorithm the record forces, else
    // the most lenient of those NCCL could run on the group: the model's own pick may be what
    // the measurement corrects (a run NCCL gave NVLS Tree, where the model picks Ring).
    {
      namespace detail = collective::detail;
      const detail::Geometry g = detail::make_geometry(hw, group);
      std::optional<std::pair<double, Algorithm>> lenient;
      // The share of each line a protocol fills with payload (NCCL's protocol definitions,
      // docs/sources.md A.4): LL stores 4 B of data with a 4 B flag, LL128 120 B of each 128 B
      // line, Simple all of it. A record that forces LL moves its bytes at half the links'
      // rate at best: a 2-node LL AllReduce at 322 GB/s busbw was fitted, at its factor's bound.
      const auto payload = [](Protocol pr) {
        return pr == Protocol::Ll ? 0.5 : pr == Protocol::Ll128 ? 120.0 / 128.0 : 1.0;
      };
      // The traffic is averaged over the ranks (line_rate_transfer): a Broadcast's root sends
      // the whole buffer and a Reduce's root receives it, n / (n - 1) times the average of the
      // n - 1 sends of it over n ranks, whatever the algorithm. Averaged, a 1 GiB Broadcast of
      // 2 ranks in an H100 node passed at 826 GB/s of busbw where its root's NVLink carries 450.
      const double root_share =
          op == Op::Broadcast || op == Op::Reduce
              ? static_cast<double>(group.ranks) / static_cast<double>(group.ranks - 1)
              : 1.0;
      for (const Algorithm a : detail::kTunedAlgorithms) {
        if (forced_algorithm && *forced_algorithm != a) continue;
        std::optional<double> best_payload;
        for (const Protocol pr : detail::kProtocols) {
          if ((forced_protocol && *forced_protocol != pr) ||
              !detail::tuned_entry(hw, op, g, a, pr).has_value()) {
            continue;
          }
          best_payload = std::max(best_payload.value_or(0.0), payload(pr));
        }
        if (!best_payload) continue;
        const double t =
            detail::line_rate_transfer(hw, g, a, detail::tuned_traffic(op, g, a, bytes)).value() *
            root_share / *best_payload;
        if (!lenient || t < lenient->first) lenient = {t, a};
      }
      if (lenient && lenient->first > c.fastest) {
        c.fastest = lenient->first;
        c.ceiling =
            std::string("what its NVLink and NICs carry for ") +
            (forced_algorithm ? "NCCL's " : "the most lenient algorithm NCCL runs there, ") +
            std::string(collective::to_string(lenient->second)) +
            (forced_protocol && *forced_protocol != Protocol::Simple
                 ? std::string(" with ") + std::string(collective::to_string(*forced_protocol)) +
                       "'s payload per line"
                 : std::string());
      }
    }

    auto& s = seen[{chosen, chosen_protocol}];
    const bool multi = group.nodes > 1;
    c.informs.push_back(index_of(
        measured_pointer(chosen, chosen_protocol,
                         multi ? "bandwidth_factor_multi_node" : "bandwidth_factor_single_node")));
    const std::size_t at = cases.size();
    // A loss of bandwidth with the nodes shows only in calls whose time is mostly transfer;
    // in latency-bound calls it cannot be told from latency growth.
    if (multi) {
      s.multi_node_cases.push_back(at);
      s.multi_sizes.insert(bytes.value());
      if (nccl->transfer >= nccl->latency) s.bandwidth_node_counts.insert(group.nodes);
    } else {
      s.single_node_cases.push_back(at);
      s.single_sizes.insert(bytes.value());
    }
    // The latency terms are informed where NCCL's latency is a fifth of the transfer or more.
    if (nccl->latency.value() >= 0.2 * nccl->transfer.value()) {
      s.latency_node_counts.insert(group.nodes);
      if (multi) s.latency_cases.push_back(at);
    }
    s.sizes.insert(bytes.value());
    s.cases.push_back(at);
    cases.push_back(std::move(c));
  }
  auto add = [&cases](const std::vector<std::size_t>& to, std::size_t parameter) {
    for (const std::size_t i : to) cases[i].informs.push_back(parameter);
  };
  // Whether (algorithm, protocol)'s own growth term is informed, so that LL/LL128 points that
  // inherit Simple's (MeasuredTerms) are credited to Simple's instead.
  std::set<std::size_t> own_growth;
  for (auto& [key, s] : seen) {
    const auto [algorithm, protocol] = key;
    if (s.bandwidth_node_counts.size() >= 2) {
      const std::size_t i =
          index_of(measured_pointer(algorithm, protocol, "efficiency_per_doubling"));
      add(s.multi_node_cases, i);
      own_growth.insert(i);
    }
    // An offset per node class where NCCL's latency matters there, or where that class's
    // sizes span 8x or more, which separates a constant from a proportional term even when the
    // constant is small next to NCCL's transfer time.
    const auto wide = [](const std::set<double>& sizes) {
      return !sizes.empty() && *sizes.rbegin() >= 8.0 * *sizes.begin();
    };
    const bool latency_single = s.latency_node_counts.count(1) != 0;
    const bool latency_multi =
        s.latency_node_counts.size() > (latency_single ? std::size_t{1} : std::size_t{0});
    if (!s.single_node_cases.empty() && (latency_single || wide(s.single_sizes))) {
      add(s.single_node_cases,
          index_of(measured_pointer(algorithm, protocol, "latency_offset_single_node")));
    }
    if (!s.multi_node_cases.empty() && (latency_multi || wide(s.multi_sizes))) {
      add(s.multi_node_cases,
          index_of(measured_pointer(algorithm, protocol, "latency_offset_multi_node")));
    }
    // The scale: multi-node latency-informative points at two node counts or more.
    std::set<std::int64_t> multi_latency_counts = s.latency_node_counts;
    multi_latency_counts.erase(1);
    if (multi_latency_counts.size() >= 2) {
      const std::size_t i = index_of(measured_pointer(algorithm, protocol, "latency_scale"));
      add(s.latency_cases, i);
      own_growth.insert(i);
    }
    // The fill needs sizes on both sides of its saturation: six sizes over a factor of 256, two
    // of them at or past the saturation the fit starts from and two short of it. With every
    // size short of it the fill only scales the transfer, (1 + fill) / bandwidth factor, and the
    // two cannot be told apart (Tree LL points of 8 B to 128 KiB, saturation 64 MiB: a factor
    // of 1.924 with a fill of 0.914 and 1.3 with 0.293 fitted the same residuals, both with a
    // sigma).
    const double saturation =
        hw.collective
            .measured[static_cast<std::size_t>(algorithm)][static_cast<std::size_t>(protocol)]
            .fill_saturation.value();
    const auto past = static_cast<std::size_t>(
        std::count_if(s.sizes.begin(), s.sizes.end(), [&](double b) { return b >= saturation; }));
    if (s.sizes.size() >= 6 && *s.sizes.rbegin() >= 256.0 * *s.sizes.begin() && past >= 2 &&
        s.sizes.size() - past >= 2) {
      add(s.cases, index_of(measured_pointer(algorithm, protocol, "fill_fraction")));
      add(s.cases, index_of(measured_pointer(algorithm, protocol, "fill_saturation")));
    }
  }
  for (auto& [key, s] : seen) {
    const auto [algorithm, protocol] = key;
    if (protocol == Protocol::Simple) continue;
    for (const char* field : {"efficiency_per_doubling", "latency_scale"}) {
      const std::size_t own = index_of(measured_pointer(algorithm, protocol, field));
      const std::size_t simple = index_of(measured_pointer(algorithm, Protocol::Simple, field));
      if (own_growth.count(own) == 0 && own_growth.count(simple) != 0) {
        add(std::string(field) == "latency_scale" ? s.latency_cases : s.multi_node_cases, simple);
      }
    }
  }
}

// A compute kernel point: time of `work` in `dtype`, reported as TFLOP/s or GB/s.
Case kernel_case(hardware::Dtype dtype, compute::KernelWork work, Seconds measured,
                 std::vector<std::size_t> informs) {
  Case c;
  c.model = [=](const HardwareSpec& h) {
    return compute::kernel_cost(h.gpu, dtype, work).time.value();
  };
  c.measured_value = measured.value();
  if (work.kind == compute::KernelClass::MemoryBound) {
    c.report = [=](double t) { return work.bytes.value() / t / 1e9; };
    c.row.unit = "GB/s";
    c.row.si_unit = "bytes_per_s";
    c.row.si_scale = 1e9;
  } else {
    c.report = [=](double t) { return work.flops.value() / t / 1e12; };
    c.row.unit = "TFLOP/s";
    c.row.si_unit = "flop_per_s";
    c.row.si_scale = 1e12;
  }
  c.informs = std::move(informs);
  return c;
}

// The GEMM ceiling a dtype's points inform.
std::size_t gemm_ceiling_of(hardware::Dtype dtype) {
  switch (dtype) {
    case hardware::Dtype::Fp32:
      return index_of("/gpu/gemm/max_efficiency_by_dtype/fp32");
    case hardware::Dtype::Tf32:
      return index_of("/gpu/gemm/max_efficiency_by_dtype/tf32");
    case hardware::Dtype::Fp8:
      return index_of("/gpu/gemm/max_efficiency_by_dtype/fp8");
    case hardware::Dtype::Fp16:
    case hardware::Dtype::Bf16:
      break;
  }
  return index_of("/gpu/gemm/max_efficiency");
}

// Which GEMM terms the GEMM points inform (compute/kernel_cost.hpp): a dtype's K-loop maximum
// from any point of that dtype (fp16 and bf16 share max_efficiency); the fixed time per tile
// (half_size) when the points' K differ by 4x or more (else it is not separable from the
// maximum); the reuse knee when a point has fewer output elements than one wave of the largest
// tiles, so that smaller tiles can be chosen.
std::vector<std::size_t> gemm_parameters(const MeasurementSet& m, const HardwareSpec& hw) {
  std::set<std::size_t> out;
  std::int64_t k_min = 0;
  std::int64_t k_max = 0;
  for (const auto& g : m.gemms) {
    out.insert(gemm_ceiling_of(g.dtype));
    k_min = k_min == 0 ? g.k : std::min(k_min, g.k);
    k_max = std::max(k_max, g.k);
    const double one_wave =
        static_cast<double>(hw.gpu.sms) * hw.gpu.gemm.tile_m * hw.gpu.gemm.tile_n;
    if (static_cast<double>(g.m) * static_cast<double>(g.n) < one_wave) {
      out.insert(index_of("/gpu/gemm/reuse_knee"));
    }
  }
  if (k_min > 0 && k_max >= 4 * k_min) out.insert(index_of("/gpu/gemm/half_size"));
  return {out.begin(), out.end()};
}

// Which attention terms the attention points inform: the maximum from any point; the half size
// when the keys per query block (s, or s/2 when causal) differ by 4x or more; the head-dimension
// half when the points have two head dimensions or more.
std::vector<std::size_t> attention_parameters(const MeasurementSet& m) {
  if (m.attention.empty()) return {};
  std::vector<std::size_t> out{index_of("/gpu/attention/max_efficiency")};
  double lo = 0.0;
  double hi = 0.0;
  std::set<std::int64_t> head_dims;
  for (const auto& a : m.attention) {
    const double keys = static_cast<double>(a.seq_len) / (a.causal ? 2.0 : 1.0);
    lo = lo == 0.0 ? keys : std::min(lo, keys);
    hi = std::max(hi, keys);
    head_dims.insert(a.head_dim);
  }
  if (lo > 0.0 && hi >= 4.0 * lo) out.push_back(index_of("/gpu/attention/half_size"));
  if (head_dims.size() >= 2) out.push_back(index_of("/gpu/attention/head_dim_half"));
  return out;
}

// A GEMM as the residual tables name it: "gemm 8192x4096x4096 bf16".
std::string gemm_text(std::int64_t m, std::int64_t n, std::int64_t k, hardware::Dtype dtype) {
  return "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
         parallel::to_string(dtype);
}

void add_compute(const MeasurementSet& m, const HardwareSpec& hw, std::vector<Case>& cases) {
  const auto gemm_params = gemm_parameters(m, hw);
  // A point informs its own dtype's ceiling and the shape terms, not another dtype's ceiling:
  // every GEMM listed every ceiling the document had, so tf32's and fp8's reported the 62
  // points of a suite with 7 and 6 of theirs, and those points' errors.
  std::set<std::size_t> ceilings;
  for (const auto& g : m.gemms) ceilings.insert(gemm_ceiling_of(g.dtype));
  for (const auto& g : m.gemms) {
    std::vector<std::size_t> params;
    for (const std::size_t p : gemm_params) {
      if (ceilings.count(p) == 0 || p == gemm_ceiling_of(g.dtype)) params.push_back(p);
    }
    const double e = element_bytes(g.dtype);
    // An FP8 GEMM writes its result in 16 bits: the suite's records run e4m3 inputs with a bf16
    // output (calib/src/gemm.cpp, Transformer Engine's forward recipe), as the workload prices
    // an FP8 GEMM (KernelSpec::elements).
    const double out = g.dtype == hardware::Dtype::Fp8 ? 2.0 : e;
    const auto d = [](std::int64_t x) { return static_cast<double>(x); };
    compute::KernelWork w{
        .kind = compute::KernelClass::Gemm,
        .flops = Flops(2.0 * d(g.m) * d(g.n) * d(g.k)),
        .bytes = Bytes(e * (d(g.m) * d(g.k) + d(g.k) * d(g.n)) + out * d(g.m) * d(g.n)),
        .gemms = {{.m = g.m, .n = g.n, .k = g.k}},
        .attention = {}};
    Case c = kernel_case(g.dtype, w, g.time, params);
    std::tie(c.fastest, c.ceiling) = peak_ceiling(w.flops.value(), g.dtype, hw, g.origin);
    c.row.what = gemm_text(g.m, g.n, g.k, g.dtype);
    c.row.origin = g.origin;
    cases.push_back(std::move(c));
  }
  const auto attention_params = attention_parameters(m);
  for (const auto& a : m.attention) {
    // Forward FLOPs 4 b s^2 h d, halved when causal; bytes read Q, K, V and write O (all
    // b s h d) plus the fp32 log-sum-exp per head and token (sim/model/kernels.cpp, attn_core).
    const auto d = [](std::int64_t x) { return static_cast<double>(x); };
    const double full = 4.0 * d(a.batch) * d(a.seq_len) * d(a.seq_len) * d(a.heads) * d(a.head_dim);
    const double tokens = d(a.batch) * d(a.seq_len);
    compute::KernelWork w{
        .kind = compute::KernelClass::Attention,
        .flops = Flops(a.causal ? full / 2.0 : full),
        .bytes = Bytes(element_bytes(a.dtype) * 4.0 * tokens * d(a.heads) * d(a.head_dim) +
                       4.0 * tokens * d(a.heads)),
        .gemms = {},
        .attention = {.seq_len = a.seq_len, .head_dim = a.head_dim, .causal = a.causal}};
    Case c = kernel_case(a.dtype, w, a.time, attention_params);
    std::tie(c.fastest, c.ceiling) = peak_ceiling(w.flops.value(), a.dtype, hw, a.origin);
    c.row.what = "attention b" + std::to_string(a.batch) + " h" + std::to_string(a.heads) + " s" +
                 std::to_string(a.seq_len) + " d" + std::to_string(a.head_dim) +
                 (a.causal ? " causal " : " ") + parallel::to_string(a.dtype);
    c.row.origin = a.origin;
    cases.push_back(std::move(c));
  }
  for (const auto& p : m.memory) {
    compute::KernelWork w{.kind = compute::KernelClass::MemoryBound,
                          .flops = Flops(0.0),
                          .bytes = p.bytes,
                          .gemms = {},
                          .attention = {}};
    Case c = kernel_case(hardware::Dtype::Bf16, w, p.time, {index_of("/gpu/memory_efficiency")});
    c.fastest = p.bytes.value() / hw.gpu.hbm_bandwidth.value();
    c.ceiling = "the HBM bandwidth";
    c.hint =
        "check the time's unit; a copy small enough to stay in L2 outruns HBM, and memory "
        "records are for arrays far larger than L2, as the suite's 1 GiB";
    c.row.what = "memory " + size_text(p.bytes.value());
    c.row.origin = p.origin;
    cases.push_back(std::move(c));
  }
  const Parameter& launch = parameters()[index_of("/gpu/kernel_launch_overhead")];
  for (const auto& p : m.launches) {
    // The model's launch overhead is a term of each kernel, bounded at the parameter's upper
    // bound; a record above it cannot be fitted (a 200 us record left the fit at 97 us, not
    // flagged at its bound, and wrecked the GEMM terms beside it): a unit or a different kind
    // of measurement (a whole step, a synchronising call).
    if (p.time.value() > launch.upper) {
      std::array<char, 128> text{};
      (void)std::snprintf(text.data(), text.size(),
                          "measured launch time %.4g us, above the most %s may be (%.4g us)",
                          p.time.value() * 1e6, launch.pointer.c_str(), launch.upper * 1e6);
      throw ConfigError(
          p.origin.source, origin_text(p.origin, "time"),
          std::string(text.data()) + "; expected the time one kernel launch adds (check the unit)");
    }
    Case c;
    c.model = [](const HardwareSpec& h) { return h.gpu.kernel_launch_overhead.value(); };
    c.measured_value = p.time.value();
    c.report = [](double t) { return t * 1e6; };
    c.row.what = "launch";
    c.row.unit = "us";
    c.row.si_unit = "s";
    c.row.si_scale = 1e-6;
    c.row.origin = p.origin;
    c.informs = {index_of("/gpu/kernel_launch_overhead")};
    cases.push_back(std::move(c));
  }
  const std::size_t gemm_contention = index_of("/gpu/gemm_comm_contention");
  for (const auto& p : m.overlap) {
    // The engine stretches a GEMM's work by 1 + gemm_comm_contention while a collective runs
    // (engine/simulator.cpp); the base is the same GEMM measured alone, so that the point
    // informs the contention and nothing of the GEMM's own efficiency.
    check_measured(p.origin, p.time_alone.value(), false, "time_alone");
    // The stand-in holds one SM per block, and cuBLASLt's SM count target is a count of this
    // GPU's SMs: neither exceeds the profile's (the reader bounds them at 100,000 only).
    // A holder of every SM would leave the GEMM none.
    for (const auto& [key, most] :
         {std::pair{"held_sms", hw.gpu.sms - 1}, std::pair{"sm_count_target", hw.gpu.sms}}) {
      const std::int64_t count =
          key == std::string_view("held_sms") ? p.held_sms : p.sm_count_target;
      if (count > most) {
        throw ConfigError(p.origin.source, origin_text(p.origin, key),
                          std::to_string(count) + " SMs on a GPU of " + std::to_string(hw.gpu.sms) +
                              " (profile '" + hw.id + "'); expected at most " +
                              std::to_string(most) +
                              (most < hw.gpu.sms ? " (one SM at least is left to the GEMM)" : ""));
      }
    }
    const double alone = p.time_alone.value();
    {
      // Both times are of the GEMM, alone and beside the holder: neither beats the peak.
      const double flops =
          2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
      const auto [fastest, peak] = peak_ceiling(flops, p.dtype, hw, p.origin);
      const auto tflops = [flops](double t) { return flops / t / 1e12; };
      check_measured(p.origin, p.time.value(), false, "time");
      check_ceiling(p.origin, "time_alone", alone, fastest, tflops, "TFLOP/s", peak, hw);
      check_ceiling(p.origin, "time", p.time.value(), fastest, tflops, "TFLOP/s", peak, hw);
    }
    // Beside the holder the GEMM has fewer SMs and less bandwidth: it is not faster than alone
    // beyond timing noise. The suite keeps overlap records whose repeats vary by up to 10%
    // (trainsim-calib --max-cv 0.1, calibration/h200-sxm/README.md; the committed ones reach
    // 9.4%), so a time under 0.9 of the time alone is no noise; the committed records run
    // 1.09-1.76x alone. A faster one would pull gemm_comm_contention towards 0.
    if (p.time.value() < 0.9 * alone) {
      std::array<char, 160> text{};
      (void)std::snprintf(text.data(), text.size(),
                          "measured time %.4g s beside the holder is %.3g of the %.4g s alone",
                          p.time.value(), p.time.value() / alone, alone);
      throw ConfigError(p.origin.source, origin_text(p.origin, "time"),
                        std::string(text.data()) +
                            "; expected at least 0.9 of time_alone (a GEMM beside a holder of "
                            "its SMs is not faster than alone beyond the 10% timing noise the "
                            "suite accepts)");
    }
    const Parameter& contention = parameters()[gemm_contention];
    Case c;
    c.model = [&contention, alone](const HardwareSpec& h) {
      return alone * (1.0 + contention.get(h));
    };
    c.measured_value = p.time.value();
    c.report = [alone](double t) { return t / alone; };
    // The holder in the algorithm column: "24 SMs 900 GB/s", "24 SMs copying", "24 SMs waiting".
    std::array<char, 48> holder{};
    if (p.copying && p.rate) {
      std::snprintf(holder.data(), holder.size(), "%lld SMs %g GB/s",
                    static_cast<long long>(p.held_sms), p.rate->value() / 1e9);
    } else {
      std::snprintf(holder.data(), holder.size(), "%lld SMs %s", static_cast<long long>(p.held_sms),
                    p.copying ? "copying" : "waiting");
    }
    c.row.algorithm = holder.data();
    c.row.what = gemm_text(p.m, p.n, p.k, p.dtype);
    if (p.sm_count_target > 0) c.row.what += " for " + std::to_string(p.sm_count_target) + " SMs";
    c.row.unit = "x alone";
    c.row.si_unit = "ratio";
    c.row.origin = p.origin;
    c.informs = {gemm_contention};
    cases.push_back(std::move(c));
  }
  for (const auto& p : m.power) {
    static constexpr std::array<const char*, 3> kActivity = {"idle", "compute", "communication"};
    const std::string name = kActivity[static_cast<std::size_t>(p.activity)];
    const Parameter& param = parameters()[index_of("/power/" + name)];
    Case c;
    c.model = [&param](const HardwareSpec& h) { return param.get(h); };
    c.measured_value = p.power.value();
    c.report = [](double w) { return w; };
    c.row.what = "power " + name;
    c.row.unit = "W";
    c.row.si_unit = "w";
    c.row.origin = p.origin;
    c.informs = {index_of("/power/" + name)};
    cases.push_back(std::move(c));
  }
}

// One point's residual for Ceres: log(model / measured) with the fitted parameters set from
// their normalized values u in [0, 1] (x = lower + u (upper - lower)), so that seconds, bytes
// and factors are on one scale for the solver.
class PointResidualFunctor {
 public:
  PointResidualFunctor(const Case& c, HardwareSpec* spec, const std::vector<std::size_t>* fitted)
      : case_(c), spec_(spec), fitted_(fitted) {}

  bool operator()(double const* const* u, double* residual) const {
    const auto& all = parameters();
    for (std::size_t j = 0; j < fitted_->size(); ++j) {
      const Parameter& p = all[(*fitted_)[j]];
      // Numeric differentiation steps past the bounds at a bound; the model only ever sees
      // values inside them.
      const double x = std::clamp(u[0][j], 0.0, 1.0);
      p.set(*spec_, p.lower + x * (p.upper - p.lower));
    }
    const double model = case_.model(*spec_);
    if (!(model > 0.0) || !std::isfinite(model)) return false;
    residual[0] = std::log(model / case_.measured_value);
    return true;
  }

 private:
  const Case& case_;
  HardwareSpec* spec_;
  const std::vector<std::size_t>* fitted_;
};

// The points as cases. `hw` decides what NCCL chooses for each collective (NCCL's estimate,
// which no fitted term changes), so the cases price any spec of the same profile.
std::vector<Case> build_cases(const HardwareSpec& hw, const MeasurementSet& m,
                              const FitOptions& options) {
  std::vector<Case> cases;
  add_collectives(m, options, hw, cases);
  add_compute(m, hw, cases);
  for (const Case& c : cases) {
    const bool power = c.row.si_unit == "w";
    check_measured(c.row.origin, c.measured_value, power, power ? "power" : "time");
    check_ceiling(c.row.origin, "time", c.measured_value, c.fastest, c.report, c.row.unit,
                  c.ceiling, hw, c.hint);
  }
  return cases;
}

// The orderings the hardware loader holds a profile's power draws to (idle at most compute and
// communication, neither above the TDP), checked on the fit so that the measurements that break
// them are named, not the profile written from them.
void check_power(const HardwareSpec& fitted, const MeasurementSet& m) {
  const hardware::PowerSpec& w = fitted.power;
  const auto first = [&m](PowerActivity a) -> const PowerPoint* {
    for (const PowerPoint& p : m.power) {
      if (p.activity == a) return &p;
    }
    return nullptr;
  };
  const auto refuse = [&](PowerActivity blamed, PowerActivity other, const std::string& what) {
    const PowerPoint* p = first(blamed);
    if (p == nullptr) p = first(other);
    if (p == nullptr) return;  // the base profile's own values, which its loader checked
    throw ConfigError(p->origin.source, origin_text(p->origin, "power"), what);
  };
  for (const auto& [draw, name, activity] :
       {std::tuple{w.compute, "compute", PowerActivity::Compute},
        std::tuple{w.communication, "communication", PowerActivity::Communication}}) {
    if (w.idle > draw) {
      // Each draw is fitted where a record informs it and the profile's otherwise: the
      // message says which (an idle record alone was set against "the communication draw
      // 555 W (fitted from the power records)", h100-dgx's own value).
      const auto source = [&m](PowerActivity a) {
        const bool measured = std::any_of(m.power.begin(), m.power.end(),
                                          [a](const PowerPoint& p) { return p.activity == a; });
        return std::string(measured ? " (fitted from the power records)"
                                    : " (the base profile's own: no power record informs it)");
      };
      const auto [idle, other] = to_strings_apart(w.idle, draw);
      refuse(PowerActivity::Idle, activity,
             "idle draw " + idle + source(PowerActivity::Idle) + " above the " + name + " draw " +
                 other + source(activity) +
                 "; expected idle at most the compute and communication draws");
    }
    if (draw > w.tdp) {
      const auto [fitted_draw, tdp] = to_strings_apart(draw, w.tdp);
      refuse(activity, activity,
             std::string(name) + " draw " + fitted_draw + " above the TDP " + tdp +
                 " of profile '" + fitted.id +
                 "' (fitted from the power records); expected at most the TDP");
    }
  }
}

// Each case against `before` and `after`.
std::vector<PointResidual> residuals(const std::vector<Case>& cases, const HardwareSpec& before,
                                     const HardwareSpec& after) {
  std::vector<PointResidual> out;
  for (const Case& c : cases) {
    PointResidual row = c.row;
    row.measured = c.report(c.measured_value);
    row.before = c.report(c.model(before));
    row.after = c.report(c.model(after));
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

// A fit from the base's values replaces the fit from the documented start values only when
// its cost is lower by more than this fraction. Two fits that end at one minimum differ by the
// solver's tolerances (relative 2.2e-9 at most in scripts/refit-profiles' fits); two minima by
// far more (the ring log of fit()'s comment: 0.0147 against 0.0827; the example cluster profile
// calibration/h100-ndr-min-ctas24.profile.json: 0.0394 against 0.0437).
constexpr double kOtherMinimum = 1e-3;

namespace {

// Singular values of the Jacobian below this fraction of the largest are zero: the threshold
// Ceres's covariance (DENSE_SVD) uses, min_reciprocal_condition_number's default.
constexpr double kRankTolerance = 1e-14;
// A parameter whose unit vector has more than this share (squared) in the Jacobian's null space
// is not determined by the points: some change of it, alone or with other parameters, leaves
// every residual where it is. A null column (a bandwidth held by a cap) has share 1; one point
// informing two parameters leaves a direction of both.
constexpr double kUndeterminedShare = 1e-6;
// A cost below this is an exact fit (residuals about 4e-8 in log time): two such costs are
// equal, whatever their ratio.
constexpr double kExactCost = 1e-15;

// One fit of the `fitted` parameters (indices into parameters(), the others at the base's
// values): the end of the runs from the two starts, its cost, and what the points determine.
struct Solution {
  std::vector<std::size_t> fitted;
  std::vector<double> u;       // normalized, at the end of the fit
  std::vector<double> values;  // SI
  double cost = 0.0;
  ceres::Solver::Summary summary;
  // The base's values stood (solve): no run's values were kept.
  bool base_kept = false;
  std::vector<std::optional<double>> sigma;
  // Each parameter's squared share in the Jacobian's null space at the end (0: determined).
  std::vector<double> null_share;
};

// The base's value of `p`, within its bounds: where the base's values stand, and what a held
// parameter keeps.
double base_value(const Parameter& p, const HardwareSpec& base) {
  return std::clamp(p.get(base), p.lower, p.upper);
}

// The fit's cost (Ceres's: half the sum of the Huber loss of the squared log errors) with every
// parameter at `hw`'s value.
double cost_at(const HardwareSpec& hw, const std::vector<Case>& cases, double loss_scale) {
  const double a2 = loss_scale * loss_scale;
  double cost = 0.0;
  for (const Case& c : cases) {
    const double r = std::log(c.model(hw) / c.measured_value);
    const double s = r * r;
    cost += 0.5 * (s <= a2 ? s : 2.0 * loss_scale * std::sqrt(s) - a2);
  }
  return cost;
}

// `warm`, where given, is the one start (normalized values of `fitted`): a refit from where a fit
// ended, with a parameter taken out and held, needs no second start.
Solution solve(const HardwareSpec& base, const std::vector<Case>& cases,
               std::vector<std::size_t> fitted, const FitOptions& options,
               const std::vector<double>* warm = nullptr) {
  const auto& all = parameters();
  // Two starts (docs/calibration.md, "The fit"): the parameters' documented start values, and
  // the base's own values where they differ. The base's start wins only at a cost lower by more
  // than kOtherMinimum: another minimum, not the same one reached by another path. The cost is
  // not convex (the latency floor of LL holds a latency offset still past it, the fill trades
  // against the bandwidth), and from the documented start alone a fit could end worse than the
  // base it began with: the 2-node ring log
  // calibration/nccl_tests/h100-ndr-2node-all_reduce-ring.txt on h100-dgx, 6.0% mean error
  // before, 18.5% after.
  Solution out;
  out.fitted = std::move(fitted);
  const std::size_t n = out.fitted.size();
  std::vector<double>& u = out.u;
  u.resize(n);
  std::vector<double> from_base(n);
  for (std::size_t j = 0; j < n; ++j) {
    const Parameter& p = all[out.fitted[j]];
    u[j] = (p.start - p.lower) / (p.upper - p.lower);
    from_base[j] = std::clamp((p.get(base) - p.lower) / (p.upper - p.lower), 0.0, 1.0);
  }
  if (warm != nullptr) {
    u = *warm;
    from_base = u;  // no second start
  }
  const std::vector<double> start_u = u;

  // Ceres reports through glog on stderr; the library never prints (a failed fit becomes a
  // ConfigError below), so glog keeps only fatal errors. Process-wide, as glog's flags are.
  FLAGS_minloglevel = google::GLOG_FATAL;

  ceres::Problem::Options problem_options;
  problem_options.cost_function_ownership = ceres::TAKE_OWNERSHIP;
  problem_options.loss_function_ownership = ceres::TAKE_OWNERSHIP;
  ceres::Problem problem(problem_options);
  HardwareSpec working = base;  // mutated by the functors
  for (const Case& c : cases) {
    auto* cost = new ceres::DynamicNumericDiffCostFunction<PointResidualFunctor, ceres::CENTRAL>(
        new PointResidualFunctor(c, &working, &out.fitted));
    cost->AddParameterBlock(static_cast<int>(n));
    cost->SetNumResiduals(1);
    problem.AddResidualBlock(cost, new ceres::HuberLoss(options.loss_scale), u.data());
  }
  for (std::size_t j = 0; j < n; ++j) {
    problem.SetParameterLowerBound(u.data(), static_cast<int>(j), 0.0);
    problem.SetParameterUpperBound(u.data(), static_cast<int>(j), 1.0);
  }
  ceres::Solver::Options solver;
  solver.linear_solver_type = ceres::DENSE_QR;
  solver.num_threads = 1;
  solver.max_num_iterations = 200;
  solver.function_tolerance = 1e-12;
  solver.parameter_tolerance = 1e-12;
  solver.gradient_tolerance = 1e-14;
  solver.logging_type = ceres::SILENT;
  ceres::Solver::Summary& summary = out.summary;
  ceres::Solve(solver, &problem, &summary);
  if (summary.termination_type == ceres::FAILURE || !std::isfinite(summary.final_cost)) {
    throw ConfigError("calibrate: the fit failed (" + summary.message +
                      "); expected measurements the model can reach (check their units)");
  }
  out.cost = summary.final_cost;
  // The second start. Where its run lowers the cost at the base's values by no more than
  // kOtherMinimum, the base's values stand as they are: a profile this fit wrote (its values
  // rounded to 4 digits) would otherwise move a little along a direction the points barely
  // pin down at every refit.
  bool keep_base = false;
  // Sets u to the base's values and returns the cost there, none where Ceres cannot evaluate it.
  const auto cost_at_base = [&]() -> std::optional<double> {
    u = from_base;
    double c = 0.0;
    if (problem.Evaluate(ceres::Problem::EvaluateOptions(), &c, nullptr, nullptr, nullptr) &&
        std::isfinite(c)) {
      return c;
    }
    return std::nullopt;
  };
  // Whether `cost` is no lower than the cost at the base's values by more than kOtherMinimum.
  const auto gains_nothing = [](double cost, const std::optional<double>& at_base) {
    return at_base && !(cost < (1.0 - kOtherMinimum) * *at_base - kExactCost);
  };
  if (from_base != start_u) {
    const std::vector<double> first = u;
    const std::optional<double> at_base = cost_at_base();
    ceres::Solver::Summary second;
    ceres::Solve(solver, &problem, &second);
    const bool ran = second.termination_type != ceres::FAILURE && std::isfinite(second.final_cost);
    const bool stays = gains_nothing(second.final_cost, at_base);
    const double cost = stays ? *at_base : second.final_cost;
    if (ran && cost < (1.0 - kOtherMinimum) * summary.final_cost) {
      summary = second;
      out.cost = cost;
      keep_base = stays;
      if (stays) u = from_base;  // the covariance and the bounds are read at the values kept
    } else {
      u = first;
    }
  }
  // Nor does a fit from the fixed start replace the base's values unless it lowers the cost at
  // them by more than kOtherMinimum: a 2-node 1 KiB ring all-reduce measured below the model's
  // latency floor (30 us against 40 us) pushed the ring's multi-node bandwidth factor from
  // 1.159 to its bound 2, moving that point's time by 5e-5 of itself, and the profile then
  // priced 1-4 GiB gathers at 1.7 times the NIC's line rate.
  if (warm == nullptr && !keep_base) {
    const std::vector<double> reached = u;
    if (const std::optional<double> at_base = cost_at_base(); gains_nothing(out.cost, at_base)) {
      out.cost = *at_base;
      keep_base = true;
    } else {
      u = reached;
    }
  }

  out.base_kept = keep_base;
  out.values.resize(n);
  HardwareSpec fitted_spec = base;
  for (std::size_t j = 0; j < n; ++j) {
    const Parameter& p = all[out.fitted[j]];
    // The base's own value, where it stands, not its round trip through u.
    out.values[j] = keep_base ? base_value(p, base) : p.lower + u[j] * (p.upper - p.lower);
    p.set(fitted_spec, out.values[j]);
  }

  // What the points determine: the Jacobian's null space at the end of the fit (u as kept).
  out.null_share.assign(n, 0.0);
  {
    double cost = 0.0;
    ceres::CRSMatrix jacobian;
    if (problem.Evaluate(ceres::Problem::EvaluateOptions(), &cost, nullptr, nullptr, &jacobian)) {
      out.null_share = null_space_share(jacobian, kRankTolerance);
    }
  }

  // Standard errors: the covariance of u at the optimum scaled by the residual variance
  // s^2 = sum r^2 / (m - p), then mapped back to SI.
  out.sigma.assign(n, std::nullopt);
  ceres::Covariance::Options cov_options;
  cov_options.algorithm_type = ceres::DENSE_SVD;
  cov_options.null_space_rank = -1;
  cov_options.num_threads = 1;
  ceres::Covariance covariance(cov_options);
  std::vector<std::pair<const double*, const double*>> blocks = {{u.data(), u.data()}};
  if (covariance.Compute(blocks, &problem)) {
    std::vector<double> cov(n * n);
    if (covariance.GetCovarianceBlock(u.data(), u.data(), cov.data())) {
      double ss = 0.0;
      for (const Case& c : cases) {
        const double r = std::log(c.model(fitted_spec) / c.measured_value);
        ss += r * r;
      }
      const double dof = static_cast<double>(cases.size()) - static_cast<double>(n);
      if (dof > 0.0) {
        const double s2 = ss / dof;
        for (std::size_t j = 0; j < n; ++j) {
          // A zero entry of the (pseudo-inverse) covariance means the points do not move
          // the residuals through this parameter at the optimum (its column of the
          // Jacobian is null, e.g. an LL128 bandwidth held by the cap at Simple's):
          // undetermined, as is a parameter with a share in the null space (one point, two
          // parameters: the pseudo-inverse gives each a finite entry all the same). Points
          // fitted exactly (s2 = 0) determine it with no error.
          const double unscaled = cov[j * n + j];
          if (unscaled > 1e-18 && std::isfinite(unscaled) &&
              !(out.null_share[j] > kUndeterminedShare)) {
            const Parameter& p = all[out.fitted[j]];
            out.sigma[j] = std::sqrt(unscaled * s2) * (p.upper - p.lower);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace

std::vector<PointResidual> compare(const HardwareSpec& before, const HardwareSpec& after,
                                   const MeasurementSet& points, const FitOptions& options) {
  return residuals(build_cases(before, points, options), before, after);
}

FitResult fit(const HardwareSpec& base, const MeasurementSet& points, const FitOptions& options) {
  // A bound on the work of one fit (each point is a residual block of Ceres): a calibration
  // suite writes thousands of points, not millions.
  constexpr std::size_t kMaxPoints = 100000;
  std::size_t count = 0;
  for_each_points([&count](const auto& v) { count += v.size(); }, points);
  if (count > kMaxPoints) {
    throw ConfigError("calibrate: " + std::to_string(count) +
                      " measured points; expected at most " + std::to_string(kMaxPoints) +
                      " (split the measurements or sample their sizes)");
  }
  const std::vector<Case> cases = build_cases(base, points, options);
  const auto& all = parameters();

  // The fitted parameters: those some point informs, less the frozen ones, in registry order.
  std::set<std::size_t> informed;
  for (const Case& c : cases) informed.insert(c.informs.begin(), c.informs.end());
  std::vector<std::size_t> fitted;
  for (const std::size_t i : informed) {
    if (std::find(options.frozen.begin(), options.frozen.end(), all[i].pointer) ==
        options.frozen.end()) {
      fitted.push_back(i);
    }
  }
  if (fitted.empty()) {
    throw ConfigError("calibrate: the measurements inform no parameter of profile '" + base.id +
                      "' left free (" + std::to_string(cases.size()) + " points at or above " +
                      std::to_string(static_cast<long long>(options.min_collective_bytes.value())) +
                      " bytes for collectives, " + std::to_string(options.frozen.size()) +
                      " parameters frozen); expected collective calls at or above the minimum "
                      "size, or GEMM, attention, memory, launch or power points");
  }

  // What the points do not determine keeps the base's value (docs/calibration.md, "The fit"):
  // where a parameter has a share in the Jacobian's null space at the end of the fit and has
  // moved off the base's value (the fixed start's, or a drift along the null direction), the one
  // with the largest share is held at the base's value and the rest fitted again; kept when the
  // cost does not rise by more than kOtherMinimum (the null space is local: a bandwidth held by
  // a cap at one value may act at another), until no such parameter is left. A 2-node log from
  // 8 B fitted tree/LL128's multi-node bandwidth factor to one 256 KiB point, where the factor
  // is capped and acts on nothing; it ended at its start, 1, replacing the base's 0.3594 fitted
  // to the 4- and 8-node logs, and the 8-node 4 MiB point went from +3.2% to +42%.
  Solution solution = solve(base, cases, std::move(fitted), options);
  // Solver steps over the runs kept (Ceres lists each run's start as iteration 0): a refit with
  // a parameter held adds its own, so that a fit whose values moved does not read "0 iterations"
  // where the refit started at its optimum.
  const auto steps = [](const Solution& s) {
    return s.base_kept ? 0 : std::max(0, static_cast<int>(s.summary.iterations.size()) - 1);
  };
  int iterations = steps(solution);
  std::vector<std::size_t> held;
  std::set<std::size_t> kept_moved;  // tried and refused: the cost rose with them at the base's
  for (;;) {
    std::optional<std::size_t> pick;
    for (std::size_t j = 0; j < solution.fitted.size(); ++j) {
      const Parameter& p = all[solution.fitted[j]];
      if (!(solution.null_share[j] > kUndeterminedShare)) continue;
      if (solution.values[j] == base_value(p, base)) continue;
      if (kept_moved.count(solution.fitted[j]) != 0) continue;
      if (!pick || solution.null_share[j] > solution.null_share[*pick]) pick = j;
    }
    if (!pick) break;
    std::vector<std::size_t> rest = solution.fitted;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(*pick));
    Solution again;
    const bool refit = !rest.empty();
    if (!refit) {
      // The last free parameter: nothing left to refit, the cost at the base's values decides.
      again.cost = cost_at(base, cases, options.loss_scale);
      again.summary = solution.summary;
    } else {
      // From where the fit ended, the held parameter at the base's value.
      std::vector<double> warm = solution.u;
      warm.erase(warm.begin() + static_cast<std::ptrdiff_t>(*pick));
      try {
        again = solve(base, cases, std::move(rest), options, &warm);
      } catch (const ConfigError&) {
        kept_moved.insert(solution.fitted[*pick]);  // Ceres could not run it: the fit stands
        continue;
      }
    }
    if (!(again.cost <= (1.0 + kOtherMinimum) * solution.cost + kExactCost)) {
      kept_moved.insert(solution.fitted[*pick]);
      continue;
    }
    held.push_back(solution.fitted[*pick]);
    if (refit) iterations += steps(again);
    solution = std::move(again);
  }

  FitResult result;
  result.fitted = base;
  for (std::size_t j = 0; j < solution.fitted.size(); ++j) {
    all[solution.fitted[j]].set(result.fitted, solution.values[j]);
  }
  check_power(result.fitted, points);
  result.residuals = residuals(cases, base, result.fitted);

  // The fitted and the held parameters, in registry order.
  std::vector<std::size_t> reported = solution.fitted;
  reported.insert(reported.end(), held.begin(), held.end());
  std::sort(reported.begin(), reported.end());
  for (const std::size_t i : reported) {
    const Parameter& p = all[i];
    const auto at = std::find(solution.fitted.begin(), solution.fitted.end(), i);
    const auto j = static_cast<std::size_t>(at - solution.fitted.begin());
    // Held: taken out above, or left at the base's value undetermined (where the base's values
    // stood, solve(), nothing moved it for the loop above to take out).
    const bool is_held =
        at == solution.fitted.end() ||
        (solution.null_share[j] > kUndeterminedShare && solution.values[j] == base_value(p, base));
    FittedValue v;
    v.parameter = &p;
    v.before = p.get(base);
    v.value = is_held ? base_value(p, base) : solution.values[j];
    v.sigma = is_held ? std::nullopt : solution.sigma[j];
    v.held = is_held;
    const double u = (v.value - p.lower) / (p.upper - p.lower);
    v.at_bound = u <= 1e-3 || u >= 1.0 - 1e-3;
    std::set<std::string> labels;
    double ss = 0.0;
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const auto& inf = cases[k].informs;
      if (std::find(inf.begin(), inf.end(), i) == inf.end()) continue;
      labels.insert(cases[k].row.origin.label);
      const double e = result.residuals[k].error();
      ss += e * e;
      v.max_error = std::max(v.max_error, std::abs(e));
      ++v.points;
    }
    v.fitted_to.assign(labels.begin(), labels.end());
    v.rms_error = v.points > 0 ? std::sqrt(ss / v.points) : 0.0;
    if (p.pointer.ends_with("/latency_scale") ||
        p.pointer.ends_with("/latency_offset_single_node") ||
        p.pointer.ends_with("/latency_offset_multi_node")) {
      for (std::size_t k = 0; k < cases.size(); ++k) {
        const auto& inf = cases[k].informs;
        if (cases[k].bytes <= 0.0 || std::find(inf.begin(), inf.end(), i) == inf.end()) {
          continue;
        }
        v.smallest_bytes = std::min(v.smallest_bytes.value_or(cases[k].bytes), cases[k].bytes);
      }
    }
    result.values.push_back(std::move(v));
  }
  // Where the base's values stood at the end, no run's steps were kept.
  result.iterations = solution.base_kept ? 0 : iterations;
  result.converged = solution.base_kept || solution.summary.termination_type == ceres::CONVERGENCE;
  result.base_kept = solution.base_kept;
  return result;
}

std::string size_text(double bytes) {
  std::array<char, 32> buf{};
  if (bytes >= 1024.0 * kMiB) {
    std::snprintf(buf.data(), buf.size(), "%g GiB", bytes / (1024.0 * kMiB));
  } else if (bytes >= kMiB) {
    std::snprintf(buf.data(), buf.size(), "%g MiB", bytes / kMiB);
  } else if (bytes >= 1024.0) {
    std::snprintf(buf.data(), buf.size(), "%g KiB", bytes / 1024.0);
  } else {
    std::snprintf(buf.data(), buf.size(), "%g B", bytes);  // 8 B, not 0.0078125 KiB
  }
  return buf.data();
}

std::optional<LineRateExcess> line_rate_excess(const HardwareSpec& hw) {
  namespace detail = collective::detail;
  const std::int64_t per_node = hw.node.gpus_per_node;
  const Bytes bytes(1024.0 * 1024.0 * 1024.0);
  std::optional<LineRateExcess> worst;
  for (std::int64_t nodes = 2; nodes <= 64; nodes *= 2) {
    const parallel::GroupShape group{
        .ranks = nodes * per_node, .nodes = nodes, .ranks_per_node = per_node};
    for (const Op op : {Op::AllReduce, Op::AllGather}) {
      const auto cost =
          collective::restricted_cost(hw, op, group, bytes, std::nullopt, std::nullopt);
      if (!cost || cost->algorithm == Algorithm::None || !(cost->time.value() > 0.0)) continue;
      const detail::Geometry g = detail::make_geometry(hw, group);
      const double floor =
          detail::line_rate_transfer(hw, g, cost->algorithm,
                                     detail::tuned_traffic(op, g, cost->algorithm, bytes))
              .value();
      if (!(floor > cost->time.value())) continue;
      const double factor = collective::bus_factor(op, group.ranks);
      const double excess = floor / cost->time.value() - 1.0;
      if (worst && worst->excess >= excess) continue;
      worst = LineRateExcess{.call = std::string(collective::to_string(op)) + " " +
                                     std::to_string(nodes) + "x" + std::to_string(per_node) + " " +
                                     size_text(bytes.value()),
                             .algorithm = std::string(collective::to_string(cost->algorithm)) +
                                          "/" + std::string(collective::to_string(cost->protocol)),
                             .busbw_gbs = bytes.value() * factor / cost->time.value() / 1e9,
                             .limit_gbs = bytes.value() * factor / floor / 1e9,
                             .excess = excess};
    }
  }
  return worst;
}

}  // namespace trainsim::calibrate
