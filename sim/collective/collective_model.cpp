// Section numbers (§A.x) refer to docs/sources.md.
#include "trainsim/collective/collective_model.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "trainsim/error.hpp"

#include "sim/collective/nccl_tuning.hpp"

namespace trainsim::collective {
namespace {

// NCCL's selection order (algorithm, then protocol; strict < keeps the first of equals).
using detail::kProtocols;
using detail::kTunedAlgorithms;

bool is_p2p(Op op) { return op == Op::AllToAll || op == Op::SendRecv; }

void fill_bandwidths(Op op, std::int64_t ranks, Bytes bytes, CollectiveCost& cost) {
  cost.algbw = bytes / cost.time;
  cost.busbw = cost.algbw * bus_factor(op, ranks);
}

CollectiveCost tuned_cost(const hardware::HardwareSpec& hw, Op op, const detail::Geometry& g,
                          Bytes bytes, Algorithm a, Protocol p, const detail::TunedEntry& entry) {
  const detail::CallTime estimate = detail::call_time(hw, op, g, a, p, entry, bytes);
  detail::CallTime t = detail::measured_time(hw, g, a, p, estimate, bytes);
  // LL and LL128 carry less payload per line than Simple over the same links, so a measured LL
  // or LL128 call is never faster per byte than the measured Simple call of the same algorithm
  // and group divided by a payload factor: the project's bound, taken from NCCL's Ring factors
  // (LL ring_ll_factor, LL128 120/128 ~ 0.92 of Simple's bus bandwidth, tuning.cc, §A.4) for
  // every algorithm. It keeps protocol terms fitted on a few node counts from overtaking Simple
  // where they extrapolate. Where NCCL's own estimates of the two calls are closer than that
  // factor (Tree: each protocol has its own per-size correction, §A.1 step 2, and Tree LL keeps
  // 1/3.8 of the bus bandwidth), their ratio is the bound instead, so that with every measured
  // term at its default (NCCL's model) it never binds: a 16 MiB Tree LL128 AllReduce on 64
  // nodes of 8 V100 took 1,436 us where NCCL's model gives 1,128. bytes > 0 here
  // (restricted_cost returns before pricing an empty call), so the ratio is finite.
  if (p != Protocol::Simple) {
    if (const auto simple = detail::tuned_entry(hw, op, g, a, Protocol::Simple)) {
      const detail::CallTime simple_estimate =
          detail::call_time(hw, op, g, a, Protocol::Simple, *simple, bytes);
      const detail::CallTime ts =
          detail::measured_time(hw, g, a, Protocol::Simple, simple_estimate, bytes);
      const double payload = p == Protocol::Ll128 ? 0.92 : hw.collective.ring_ll_factor;
      const double ratio =
          std::min(1.0 / payload, estimate.transfer.value() / simple_estimate.transfer.value());
      t.transfer = max(t.transfer, ts.transfer * ratio);
    }
  }
  // Nor does a corrected latency, LL's own included, fall below NCCL's latency of the same
  // algorithm and group with its lowest-latency protocol, LL: NCCL's per-hop latencies are the
  // path's, and measured latencies exceed NCCL's estimates (docs/sources.md B.4). A negative
  // fitted offset otherwise clamped the latency to 0 below the node counts of its data
  // (h100-dgx: a 512 KiB Broadcast on 2 nodes took 1.41 us, against 27.9 us at 128 KiB; a
  // fitted LL offset of -115 us made a 2-node Ring LL AllReduce free). measured_time's own
  // clamp at 0 remains for the algorithms without LL (NVLS, NVLSTree, PAT).
  if (p == Protocol::Ll) {
    t.latency = max(t.latency, entry.latency);
  } else if (const auto ll = detail::tuned_entry(hw, op, g, a, Protocol::Ll)) {
    t.latency = max(t.latency, ll->latency);
  }
  const detail::Traffic traffic = detail::tuned_traffic(op, g, a, bytes);
  CollectiveCost cost;
  cost.latency = t.latency;
  cost.transfer = t.transfer;
  cost.time = t.latency + t.transfer;
  cost.algorithm = a;
  cost.protocol = p;
  cost.nvlink_bytes = traffic.nvlink;
  cost.network_bytes = traffic.network;
  fill_bandwidths(op, g.ranks, bytes, cost);
  return cost;
}

}  // namespace

double bus_factor(Op op, std::int64_t ranks) {
  if (ranks <= 1) return 0.0;
  const auto n = static_cast<double>(ranks);
  switch (op) {
    case Op::AllReduce:
      return 2.0 * (n - 1.0) / n;
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::AllToAll:
      return (n - 1.0) / n;
    default:
      return 1.0;
  }
}

CollectiveModel::CollectiveModel(hardware::HardwareSpec hardware) : hw_(std::move(hardware)) {
  if (hw_.collective.ring.single_node.channels <= 0 ||
      hw_.collective.ring.multi_node.channels <= 0) {
    throw InternalError("collective model: profile '" + hw_.id + "' has no ring graph");
  }
}

std::optional<CollectiveCost> restricted_cost(const hardware::HardwareSpec& hw, Op op,
                                              const parallel::GroupShape& group, Bytes bytes,
                                              std::optional<Algorithm> algorithm,
                                              std::optional<Protocol> protocol) {
  const detail::Geometry g = detail::make_geometry(hw, group);
  if (g.ranks == 1 || !(bytes.value() > 0.0)) {
    if (algorithm && *algorithm != Algorithm::None) return std::nullopt;
    return CollectiveCost{};
  }
  if (is_p2p(op)) {
    if (algorithm && *algorithm != Algorithm::P2p) return std::nullopt;
    if (protocol && *protocol != Protocol::Simple) return std::nullopt;
    CollectiveCost cost = detail::p2p_cost(hw, op, g, bytes);
    fill_bandwidths(op, g.ranks, bytes, cost);
    return cost;
  }
  // argmin over the eligible (algorithm, protocol) of ncclTopoGetAlgoTime (enqueue.cc
  // topoGetAlgoInfo, §A.1 step 7), within what NCCL_ALGO / NCCL_PROTO leave. NCCL chooses by
  // its own estimate; the cost is then what the profile says such a call measures.
  // The measured cost is computed once, for the choice.
  struct Choice {
    Algorithm algorithm;
    Protocol protocol;
    detail::TunedEntry entry;
    Seconds estimate;
  };
  std::optional<Choice> best;
  for (const Algorithm a : kTunedAlgorithms) {
    if (algorithm && *algorithm != a) continue;
    for (const Protocol p : kProtocols) {
      if (protocol && *protocol != p) continue;
      const auto entry = detail::tuned_entry(hw, op, g, a, p);
      if (!entry) continue;
      const detail::CallTime t = detail::call_time(hw, op, g, a, p, *entry, bytes);
      const Seconds estimate = t.latency + t.transfer;
      if (!best || estimate < best->estimate) best = Choice{a, p, *entry, estimate};
    }
  }
  if (!best) return std::nullopt;
  return tuned_cost(hw, op, g, bytes, best->algorithm, best->protocol, best->entry);
}

CollectiveCost CollectiveModel::cost(Op op, const parallel::GroupShape& group, Bytes bytes) const {
  // Ring is always eligible, so an unrestricted choice exists.
  auto best = restricted_cost(hw_, op, group, bytes, std::nullopt, std::nullopt);
  if (!best)
    throw InternalError("collective model: no algorithm for " + std::string(to_string(op)));
  return *best;
}

std::optional<CollectiveCost> CollectiveModel::cost_with(Op op, const parallel::GroupShape& group,
                                                         Bytes bytes, Algorithm algorithm,
                                                         Protocol protocol) const {
  return restricted_cost(hw_, op, group, bytes, algorithm, protocol);
}

std::optional<CollectiveCost> CollectiveModel::cost_restricted(
    Op op, const parallel::GroupShape& group, Bytes bytes, std::optional<Algorithm> algorithm,
    std::optional<Protocol> protocol) const {
  return restricted_cost(hw_, op, group, bytes, algorithm, protocol);
}

}  // namespace trainsim::collective
