// Constants of the collective library (NCCL) that its cost model uses, held in the hardware
// profile so a profile can mimic one NCCL version. The tables mirror NCCL's tuning constants
// (src/graph/tuning.cc, ncclTunerConstants since 2.28.3) and the channel graphs that NCCL's
// topology search (src/graph/search.cc) would find on the profile's node; the collective model
// (collective/collective_model.hpp) turns them into per-call times.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "trainsim/units.hpp"

namespace trainsim::hardware {

// Collective algorithms. The first five are NCCL's tuned algorithms in NCCL's index order less
// CollNet (Tree=0, Ring=1, NVLS=4, NVLSTree=5, PAT=6 in NCCL; CollNet needs a SHARP plugin that
// the profiles assume absent). P2p prices AllToAll and SendRecv, which NCCL does not tune; None
// is the cost of a one-rank group.
enum class Algorithm { Tree, Ring, Nvls, NvlsTree, Pat, P2p, None };
inline constexpr std::size_t kNumTunedAlgorithms = 5;

// NCCL protocols, NCCL's index order.
enum class Protocol { Ll, Ll128, Simple };
inline constexpr std::size_t kNumProtocols = 3;

// NCCL's hardware link classes for latencies (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET).
enum class LinkClass { NvLink, Pci, Net };
inline constexpr std::size_t kNumLinkClasses = 3;

// Node-count classes of NCCL's tuning tables: 1 node, 2 nodes, 3 or more (min(nNodes,3)-1).
inline constexpr std::size_t kNumNodeClasses = 3;

template <class T>
using PerProtocol = std::array<T, kNumProtocols>;
template <class T>
using PerNodeClass = std::array<T, kNumNodeClasses>;

// One algorithm's channels as NCCL's topology search finds them: `channels` parallel channels,
// each moving bw_intra inside a node and bw_inter to the network (both per channel, one
// direction). channels == 0 means the search finds no graph (the algorithm is unavailable).
struct ChannelGraph {
  int channels = 0;
  BytesPerSecond bw_intra;
  BytesPerSecond bw_inter;
};

// The graph of one algorithm for a group inside one node and for a group spanning nodes, both
// for a full node (every GPU of the node in the group).
struct AlgorithmGraphs {
  ChannelGraph single_node;
  ChannelGraph multi_node;
};

// How measured calls of one algorithm and protocol differ from NCCL's tuning model, which NCCL uses
// to choose and which its own authors call an estimate (docs/sources.md A.9: it ignores launch
// overhead, congestion and pipeline start-up). NCCL still chooses by its model; the time of the
// chosen call is (collective/collective_model.hpp):
//   bw   = NCCL's algbw x bandwidth_factor x efficiency_per_doubling^log2(nodes)
//   time = max(LL, latency) + (bytes + fill_fraction x min(bytes, fill_saturation)) / bw
//   (LL: NCCL's latency of the same call with the LL protocol; 0 where the algorithm has no LL)
//   latency = NCCL's latency + latency_offset_single_node             inside one node
//           = latency_scale x NCCL's latency + latency_offset_multi_node  across nodes
// The last term is a pipeline filling: a message cut into chunks that flow through D stages
// takes (chunks + D - 1) chunk times; chunks grow with the message up to NCCL's largest chunk,
// so the fill grows with the message up to fill_saturation and then stays. The defaults give
// NCCL's model unchanged. `trainsim calibrate` fits these from measured calls
// (docs/calibration.md); the bounds are in calibrate/parameters.cpp.
struct MeasuredTerms {
  double bandwidth_factor_single_node = 1.0;  // measured / modelled bandwidth inside a node
  double bandwidth_factor_multi_node = 1.0;   // the same across nodes (network-bound)
  // Share of the bandwidth kept per doubling of the nodes a group spans (link-speed variation,
  // congestion and adaptive routing cost a call more the more links it crosses).
  double efficiency_per_doubling = 1.0;
  // Across nodes, multiplies NCCL's latency: the part that grows with the ranks and nodes.
  double latency_scale = 1.0;
  Seconds latency_offset_single_node;  // added per call inside a node (may be negative)
  Seconds latency_offset_multi_node;   // added per call across nodes (may be negative)
  double fill_fraction = 0.0;  // pipeline fill, as a share of the bytes up to fill_saturation
  Bytes fill_saturation = Bytes(64.0 * 1024.0 * 1024.0);  // where the fill stops growing
  // LL and LL128 take the Simple terms' latency_scale and efficiency_per_doubling while these
  // are true: how latency and bandwidth change with the nodes belongs to the fabric the
  // protocols share (NCCL counts the same hops for all three), so a protocol whose own growth
  // no measurement informs follows Simple's. A profile or a fit that gives the protocol's own
  // value clears the flag. Ignored for Simple.
  bool inherits_latency_scale = true;
  bool inherits_efficiency_per_doubling = true;
};

struct CollectiveLibrarySpec {
  std::string version;   // the NCCL version these constants mimic, e.g. "2.20"
  std::string host_cpu;  // "intel" or "amd": picks the host-dependent constants

  // --- Latency (NCCL tuning.cc baseLat / hwLat), indexed [algorithm][protocol] for the five
  // tuned algorithms and [link class][algorithm][protocol].
  std::array<PerProtocol<Seconds>, kNumTunedAlgorithms> base_latency{};
  std::array<std::array<PerProtocol<Seconds>, kNumTunedAlgorithms>, kNumLinkClasses> hw_latency{};
  // Link class of the intra-node paths of the graphs (NVLink on every DGX, PCI without NVLink).
  LinkClass intra_link = LinkClass::NvLink;
  // Per-hop network post overhead of multi-node rings (1 us on Intel hosts, 2 us on AMD),
  // multiplied by simple_net_overhead_factor for Simple.
  Seconds net_overhead;
  double simple_net_overhead_factor = 3.0;
  // Latency the network plugin reports (NCCL's latencyInter; 0 for the built-in IB plugin).
  Seconds net_plugin_latency;
  // Since 2.23 a group with one rank per node uses Tree's network latency in every algorithm.
  bool one_ppn_uses_tree_net_latency = true;
  // Network steps of a multi-node Ring AllReduce: 2N before 2.23 (tuning.cc `nInterSteps =
  // 2*nNodes`), 2(N-1) since (docs/sources.md A.10).
  bool ring_allreduce_inter_steps_2n = false;

  // --- Bandwidth refinements (tuning.cc ncclTopoTuneModel).
  double ring_ll_factor = 0.5;              // Ring LL keeps this share of the bus bandwidth
  double ring_ll128_low_ppn_factor = 0.92;  // Ring LL128 share when ranks per node < 2
  double ring_plateau_factor = 1.4;         // Ring Simple AllReduce multi-node latency multiplier
  double nvls_efficiency = 0.0;             // 0: NVLS unusable (pre-Hopper)
  bool ll128_enabled = true;
  bool pat_enabled = false;  // PAT (AllGather/ReduceScatter, 1 rank per node), NCCL >= 2.23
  double pat_factor = 0.75;
  bool ib_sharp = false;  // CollNet/IB SHARP present: allows multi-node NVLS
  // Total LL bandwidth cap and per-channel caps by node-count class (N1, N2, N>=3).
  PerNodeClass<BytesPerSecond> ll_max_bw{};
  PerNodeClass<BytesPerSecond> per_channel_max_ring_ll128_bw{};
  PerNodeClass<BytesPerSecond> per_channel_max_tree_ll128_bw{};
  PerNodeClass<BytesPerSecond> per_channel_max_tree_bw{};
  PerNodeClass<BytesPerSecond> per_channel_max_nvls_tree_bw{};  // 0: no cap
  // Tree AllReduce bandwidth correction by message size: entry i applies to sizes in
  // [64 * 2^i, 64 * 2^(i+1)) bytes; sizes past the table are uncorrected.
  PerProtocol<std::vector<double>> tree_correction{};

  // --- Channel graphs of the profile's node (search.cc), given in the profile.
  AlgorithmGraphs ring;
  AlgorithmGraphs tree;
  AlgorithmGraphs nvls;  // NVLS and NVLSTree

  // --- Measured behaviour per tuned algorithm and protocol (index: [Algorithm][Protocol]),
  // fitted by calibration.
  std::array<PerProtocol<MeasuredTerms>, kNumTunedAlgorithms> measured{};
};

}  // namespace trainsim::hardware
