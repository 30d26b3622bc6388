// AllToAll and SendRecv, which NCCL runs as grouped point-to-point transfers outside its
// tuning model. Our model (an assumption, to be calibrated against nccl-tests alltoall_perf and
// sendrecv_perf):
//   AllToAll of S bytes per rank (nccl-tests' size: each rank's whole send buffer, S/n to each
//   peer): the ppn-1 peers on the node get (ppn-1) S/n over NVLink, the n-ppn others get
//   (n-ppn) S/n over the network; both run at once, so
//     time = latency + max((ppn-1) S/n / B_nvlink, (n-ppn) S/n / B_net).
//   Where the group holds fewer ranks in some domain (least ppn, a group straddling racks),
//   those ranks send (n-least) S/n through their fewer hosts' NICs, B_net of that domain; the
//   slower side sets the time, and the network bytes reported are that side's.
//   SendRecv of S bytes: time = latency + S / B, B = B_net when the group spans nodes (each
//   rank's peer is on another node), else B_nvlink.
// B_nvlink is the ring graph's bus bandwidth on one node (nChannels x bwIntra: what NCCL's
// channels move per GPU over NVLink, §A.2/§A.9); B_net is one rank's share of the node's
// ring-graph network bandwidth (nChannels x bwInter x the group's NIC share / ppn) with the
// fabric factor. The latency is one pipelined ring Simple step, baseLat + hwLat[link] of
// Ring/Simple (§A.3), since the peers' transfers run concurrently; it ignores NCCL's per-peer
// scheduling at large n. Section numbers (§A.x) refer to docs/sources.md.
#include <algorithm>

#include "sim/collective/nccl_tuning.hpp"

namespace trainsim::collective::detail {

CollectiveCost p2p_cost(const hardware::HardwareSpec& hw, Op op, const Geometry& g, Bytes bytes) {
  const auto& c = hw.collective;
  constexpr auto kRing = static_cast<std::size_t>(Algorithm::Ring);
  constexpr auto kSimple = static_cast<std::size_t>(Protocol::Simple);
  const hardware::LinkClass link = g.nodes > 1 ? hardware::LinkClass::Net : c.intra_link;
  const Seconds latency =
      c.base_latency[kRing][kSimple] + c.hw_latency[static_cast<std::size_t>(link)][kRing][kSimple];
  const BytesPerSecond nvlink = nvlink_bw_per_rank(hw);
  // The least-held domain's ranks send the most across domains through the fewest NICs per
  // rank; with an even split both sides are the same.
  const BytesPerSecond net = network_bw_per_rank(hw, g, false);
  const BytesPerSecond least_net = network_bw_per_rank(hw, g, true);

  CollectiveCost cost;
  cost.algorithm = Algorithm::P2p;
  cost.protocol = Protocol::Simple;
  cost.latency = latency;
  if (op == Op::AllToAll) {
    const auto n = static_cast<double>(g.ranks);
    const auto ppn = static_cast<double>(g.ppn);
    const auto least = static_cast<double>(g.least_ppn);
    cost.nvlink_bytes = bytes * ((ppn - 1.0) / n);
    cost.network_bytes = bytes * ((n - least) / n);
    cost.transfer = cost.nvlink_bytes / nvlink;
    if (g.nodes > 1) {
      cost.transfer =
          max(cost.transfer, max(bytes * ((n - ppn) / n) / net, cost.network_bytes / least_net));
    }
  } else {
    if (g.nodes > 1) {
      cost.network_bytes = bytes;
      cost.transfer = bytes / least_net;
    } else {
      cost.nvlink_bytes = bytes;
      cost.transfer = bytes / nvlink;
    }
  }
  cost.time = cost.latency + cost.transfer;
  return cost;
}

}  // namespace trainsim::collective::detail
