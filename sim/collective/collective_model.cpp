#include "trainsim/collective/collective_model.hpp"

#include <array>
#include <utility>

#include "trainsim/error.hpp"

#include "sim/collective/nccl_tuning.hpp"

namespace trainsim::collective {
namespace {

// NCCL's selection order (algorithm, then protocol; strict < keeps the first of equals).
constexpr std::array<Algorithm, hardware::kNumTunedAlgorithms> kTunedAlgorithms = {
    Algorithm::Tree, Algorithm::Ring, Algorithm::Nvls, Algorithm::NvlsTree, Algorithm::Pat};
constexpr std::array<Protocol, hardware::kNumProtocols> kProtocols = {Protocol::Ll, Protocol::Ll128,
                                                                      Protocol::Simple};

bool is_p2p(Op op) { return op == Op::AllToAll || op == Op::SendRecv; }

void fill_bandwidths(Op op, std::int64_t ranks, Bytes bytes, CollectiveCost& cost) {
  cost.algbw = bytes / cost.time;
  cost.busbw = cost.algbw * bus_factor(op, ranks);
}

CollectiveCost tuned_cost(const hardware::HardwareSpec& hw, Op op, const detail::Geometry& g,
                          Bytes bytes, Algorithm a, Protocol p, const detail::TunedEntry& entry) {
  const detail::CallTime t = detail::call_time(hw, op, g, a, p, entry, bytes);
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

CollectiveCost CollectiveModel::cost(Op op, const parallel::GroupShape& group, Bytes bytes) const {
  const detail::Geometry g = detail::make_geometry(hw_, group);
  if (g.ranks == 1 || !(bytes.value() > 0.0)) return CollectiveCost{};
  if (is_p2p(op)) {
    CollectiveCost cost = detail::p2p_cost(hw_, op, g, bytes);
    fill_bandwidths(op, g.ranks, bytes, cost);
    return cost;
  }
  // argmin over the eligible (algorithm, protocol) of ncclTopoGetAlgoTime (enqueue.cc
  // topoGetAlgoInfo, §A.1 step 7). Ring is always eligible, so a choice exists.
  std::optional<CollectiveCost> best;
  for (const Algorithm a : kTunedAlgorithms) {
    for (const Protocol p : kProtocols) {
      const auto entry = detail::tuned_entry(hw_, op, g, a, p);
      if (!entry) continue;
      const detail::CallTime t = detail::call_time(hw_, op, g, a, p, *entry, bytes);
      const Seconds time = t.latency + t.transfer;
      if (!best || time < best->time) {
        best = tuned_cost(hw_, op, g, bytes, a, p, *entry);
      }
    }
  }
  if (!best)
    throw InternalError("collective model: no algorithm for " + std::string(to_string(op)));
  return *best;
}

std::optional<CollectiveCost> CollectiveModel::cost_with(Op op, const parallel::GroupShape& group,
                                                         Bytes bytes, Algorithm algorithm,
                                                         Protocol protocol) const {
  const detail::Geometry g = detail::make_geometry(hw_, group);
  if (g.ranks == 1 || !(bytes.value() > 0.0)) {
    return algorithm == Algorithm::None ? std::optional<CollectiveCost>(CollectiveCost{})
                                        : std::nullopt;
  }
  if (is_p2p(op)) {
    if (algorithm != Algorithm::P2p || protocol != Protocol::Simple) return std::nullopt;
    CollectiveCost cost = detail::p2p_cost(hw_, op, g, bytes);
    fill_bandwidths(op, g.ranks, bytes, cost);
    return cost;
  }
  if (static_cast<std::size_t>(algorithm) >= hardware::kNumTunedAlgorithms) return std::nullopt;
  const auto entry = detail::tuned_entry(hw_, op, g, algorithm, protocol);
  if (!entry) return std::nullopt;
  return tuned_cost(hw_, op, g, bytes, algorithm, protocol, *entry);
}

}  // namespace trainsim::collective
