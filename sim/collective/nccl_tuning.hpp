// Internals of the collective model: the group's geometry on the hardware, NCCL's per-
// (algorithm, protocol) bandwidth and latency tables (ncclTopoTuneModel), the per-call time
// (ncclTopoGetAlgoTime), and the point-to-point model of AllToAll and SendRecv.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/parallel/placement.hpp"

namespace trainsim::collective::detail {

// NCCL's tuned algorithms and its protocols, in NCCL's index and selection order (algorithm,
// then protocol; hardware::Algorithm, hardware::Protocol).
inline constexpr std::array<hardware::Algorithm, hardware::kNumTunedAlgorithms> kTunedAlgorithms = {
    hardware::Algorithm::Tree, hardware::Algorithm::Ring, hardware::Algorithm::Nvls,
    hardware::Algorithm::NvlsTree, hardware::Algorithm::Pat};
inline constexpr std::array<hardware::Protocol, hardware::kNumProtocols> kProtocols = {
    hardware::Protocol::Ll, hardware::Protocol::Ll128, hardware::Protocol::Simple};

// A group as NCCL's model sees it, plus the network share and fabric penalty of our topology
// rules (see make_geometry). NCCL's "node" is an NVLink domain: NCCL treats the GPUs of a
// multi-node NVLink domain as one node (MNNVL); with one host per domain it is the host.
struct Geometry {
  std::int64_t ranks = 1;
  std::int64_t nodes = 1;      // NVLink domains spanned (NCCL's nNodes)
  std::int64_t ppn = 1;        // ranks per NVLink domain (NCCL's ranks per node)
  std::size_t node_class = 0;  // NCCL's min(nNodes, 3) - 1
  double nic_share = 1.0;      // share of a host's NICs that the group's ranks on that host use
  // Hosts of the group in one domain whose NICs carry its network traffic (1 when the domain is
  // one host).
  std::int64_t hosts = 1;
  // The same for the least-held domain (the group's fewest ranks in one domain), whose NICs
  // carry all of its ranks' traffic to the other domains; equal to ppn, nic_share and hosts
  // when the group holds as many ranks in every domain.
  std::int64_t least_ppn = 1;
  double least_nic_share = 1.0;
  std::int64_t least_hosts = 1;
  double fabric_factor = 1.0;  // oversubscription; 1 inside one leaf
};

// Throws InternalError when the shape breaks CollectiveModel::cost's requirements.
[[nodiscard]] Geometry make_geometry(const hardware::HardwareSpec& hw,
                                     const parallel::GroupShape& group);

// One entry of NCCL's tables for an op and group: the algorithm bandwidth (bandwidths[][][])
// and latency (latencies[][][]) before the per-call corrections, with the channel count.
struct TunedEntry {
  BytesPerSecond algbw;
  Seconds latency;
  int channels = 0;
};

// The entry, or nothing when NCCL would not use (algorithm, protocol) for this op and group.
// Requires op to be one of AllReduce, AllGather, ReduceScatter, Broadcast, Reduce and
// algorithm a tuned one.
[[nodiscard]] std::optional<TunedEntry> tuned_entry(const hardware::HardwareSpec& hw, Op op,
                                                    const Geometry& g, Algorithm algorithm,
                                                    Protocol protocol);

// ncclTopoGetAlgoTime: the entry's latency (with the ring plateau) and transfer time (with the
// tree size correction) for one call of `bytes`.
struct CallTime {
  Seconds latency;
  Seconds transfer;
};
[[nodiscard]] CallTime call_time(const hardware::HardwareSpec& hw, Op op, const Geometry& g,
                                 Algorithm algorithm, Protocol protocol, const TunedEntry& entry,
                                 Bytes bytes);

// The time a measured call takes once NCCL has chosen (algorithm, protocol): NCCL's own
// estimate `nccl` corrected by the profile's MeasuredTerms of the algorithm and protocol (see
// hardware::MeasuredTerms for the formula). With the default terms it is `nccl` unchanged.
[[nodiscard]] CallTime measured_time(const hardware::HardwareSpec& hw, const Geometry& g,
                                     Algorithm algorithm, Protocol protocol, const CallTime& nccl,
                                     Bytes bytes);

// Bytes one rank sends on NVLink and on the network for the algorithm, averaged over ranks.
struct Traffic {
  Bytes nvlink;
  Bytes network;
};
[[nodiscard]] Traffic tuned_traffic(Op op, const Geometry& g, Algorithm algorithm, Bytes bytes);

// The shortest transfer the links allow for `traffic` of `algorithm`: each rank's NVLink bytes
// at the GPU's NVLink bandwidth one way, and a domain's network bytes (the group's over its
// domains) at the line rate of every NIC of the hosts it holds (nics x nic_bandwidth x hosts;
// not the model's own rules, the NIC share and the fabric's oversubscription, which a
// measurement may beat: PXN reaches other GPUs' NICs). Multi-node NVLS, whose switches reduce in
// the network, has no network floor. A lower bound only: `trainsim calibrate` refuses a
// measurement under it; the model itself does not apply it (docs/calibration.md says why).
[[nodiscard]] Seconds line_rate_transfer(const hardware::HardwareSpec& hw, const Geometry& g,
                                         hardware::Algorithm algorithm, const Traffic& traffic);

// AllToAll and SendRecv from link bandwidths (see p2p.cpp).
[[nodiscard]] CollectiveCost p2p_cost(const hardware::HardwareSpec& hw, Op op, const Geometry& g,
                                      Bytes bytes);

// Bandwidth available on the network to one rank of the group in its most-held domain
// (`least` false) or in its least-held one, and on NVLink, as NCCL's graphs see it (used by the
// point-to-point model).
[[nodiscard]] BytesPerSecond network_bw_per_rank(const hardware::HardwareSpec& hw,
                                                 const Geometry& g, bool least);
[[nodiscard]] BytesPerSecond nvlink_bw_per_rank(const hardware::HardwareSpec& hw);

}  // namespace trainsim::collective::detail
