// NCCL's tuning model (src/graph/tuning.cc: ncclTopoTuneModel, ncclTopoGetAlgoTime), 2.28+
// formulas with the constants of the profile's NCCL version. Section numbers (§A.x) refer to
// docs/sources.md, where the formulas are paraphrased from NCCL's sources; no NCCL code was
// copied.
#include "sim/collective/nccl_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "trainsim/error.hpp"

namespace trainsim::collective::detail {
namespace {

using hardware::ChannelGraph;
using hardware::HardwareSpec;
using hardware::LinkClass;

constexpr std::size_t idx(Algorithm a) { return static_cast<std::size_t>(a); }
constexpr std::size_t idx(Protocol p) { return static_cast<std::size_t>(p); }
constexpr std::size_t idx(LinkClass l) { return static_cast<std::size_t>(l); }

BytesPerSecond min_bw(BytesPerSecond a, BytesPerSecond b) { return a < b ? a : b; }

// NCCL's log2i: floor(log2(x)) for x >= 1.
int log2i(std::int64_t x) {
  int r = 0;
  while (x > 1) {
    x >>= 1;
    ++r;
  }
  return r;
}

bool is_nvls(Algorithm a) { return a == Algorithm::Nvls || a == Algorithm::NvlsTree; }

// nsteps of tuning.cc: 2(n-1) for AllReduce, n-1 for AllGather/ReduceScatter, n for
// Broadcast/Reduce (§A.4 step 3).
double nsteps(Op op, std::int64_t n) {
  switch (op) {
    case Op::AllReduce:
      return 2.0 * static_cast<double>(n - 1);
    case Op::AllGather:
    case Op::ReduceScatter:
      return static_cast<double>(n - 1);
    default:
      return static_cast<double>(n);
  }
}

// The channel graph of `algorithm` for this group (§A.2), adapted from the profile's full-node
// graphs by our rules:
// - One node: Ring and Tree keep the full-node graph (on NVSwitch every GPU keeps its whole
//   NVLink bandwidth whatever the group size; measured ring busbw is flat for 2-8 H100s,
//   nccl#1455). NVLS has one channel per GPU of the group (single-node NVLS forces nGPUs
//   channels, §A.2), each at the profile's per-channel speed.
// - Several nodes: Ring and Tree speeds (both sides: NCCL uses bwIntra at <= 2 nodes) scale
//   with the group's share of the node's NICs (nic_share) and the fabric factor. NVLS keeps
//   one channel per local rank (NVLS heads, at most the profile's count), each with its own NIC,
//   so only the fabric factor applies to its network side.
// - Across nodes, where the NICs outrun NVLink (H800), the channels carry at most the NVLink
//   graph's bus bandwidth.
// - Nodes here are NVLink domains. When the group holds several hosts of a domain, the profile's
//   multi-node graph (one host's NICs) repeats for each of them, since a ring or tree channel
//   may leave the domain through any host's NICs, until the channels carry a rank's whole
//   NVLink bandwidth (the single-node ring graph's bus bandwidth), which also carries every
//   channel inside the domain. Our rule, matched by GB200 ring busbw across NVLink partitions
//   growing with the NICs of the partition (NVIDIA/nccl#1801, sources.md B.2).
ChannelGraph group_graph(const HardwareSpec& hw, Algorithm algorithm, const Geometry& g) {
  const auto& c = hw.collective;
  const hardware::AlgorithmGraphs& graphs = algorithm == Algorithm::Tree ? c.tree
                                            : is_nvls(algorithm)         ? c.nvls
                                                                         : c.ring;
  if (g.nodes == 1) {
    ChannelGraph out = graphs.single_node;
    if (is_nvls(algorithm)) {
      out.channels = static_cast<int>(std::min<std::int64_t>(out.channels, g.ppn));
    }
    return out;
  }
  ChannelGraph out = graphs.multi_node;
  if (is_nvls(algorithm)) {
    // One head per channel in every domain: the least-held domain's ranks bound the channels.
    out.channels = static_cast<int>(std::min<std::int64_t>(out.channels, g.least_ppn));
    out.bw_inter *= g.fabric_factor;
  } else {
    // Every channel leaves and enters every domain: the least-held domain's NICs bound them.
    const double share = g.least_nic_share * g.fabric_factor;
    out.bw_intra *= share;
    out.bw_inter *= share;
    // A rank's share of its NVLink: the bus bandwidth of the single-node ring graph.
    const ChannelGraph& nvlink = c.ring.single_node;
    const double nvlink_bus = nvlink.bw_intra.value() * static_cast<double>(nvlink.channels);
    // A channel's speed as NCCL's step 1 reads it for this group (tuned_algbw): bwIntra at
    // <= 2 nodes, bwInter beyond. Taking the larger of the two instead let a faster network
    // (bwInter alone raised) cut the channels or the speed of a group of 2 nodes, which runs at
    // bwIntra: slower steps on a better machine.
    const auto step1 = [&g](const ChannelGraph& x) {
      return (g.nodes <= 2 ? x.bw_intra : x.bw_inter).value();
    };
    if (g.least_hosts > 1 && out.channels > 0) {
      const double per_channel = step1(out);
      const double fit = std::floor(nvlink_bus / per_channel);
      const double repeated =
          static_cast<double>(out.channels) * static_cast<double>(g.least_hosts);
      out.channels =
          static_cast<int>(std::max(static_cast<double>(out.channels), std::min(repeated, fit)));
    }
    // Where a host's NICs outrun its GPUs' NVLink (the full multi-node graph's network side
    // above the NVLink line rate per direction, as on H800), the channels, which also cross
    // NVLink, carry at most the NVLink graph's bus bandwidth (our rule; of the built-in profiles
    // it binds on h800-dgx only). The trigger is the line rate and the bound the ring graph's
    // bus, which is lower (360 against 450 GB/s on H100): a profile whose NICs are raised past
    // the line rate drops from up to 450 to 360 (docs/calibration.md, "The collective model being
    // fitted").
    const ChannelGraph& full = graphs.multi_node;
    const double full_bus = static_cast<double>(full.channels) * full.bw_inter.value();
    const double bus = static_cast<double>(out.channels) * step1(out);
    if (full_bus > hw.node.nvlink_bandwidth_per_direction.value() && bus > nvlink_bus) {
      out.bw_intra *= nvlink_bus / bus;
      out.bw_inter *= nvlink_bus / bus;
    }
  }
  return out;
}

// Whether NCCL could run (algorithm, protocol) for op on this group (§A.6 table and rules).
bool eligible(const HardwareSpec& hw, Op op, const Geometry& g, Algorithm a, Protocol p) {
  const auto& c = hw.collective;
  if (p == Protocol::Ll128 && !c.ll128_enabled) return false;
  const bool ag_rs = op == Op::AllGather || op == Op::ReduceScatter;
  switch (a) {
    case Algorithm::Ring:
      return true;
    case Algorithm::Tree:
      return op == Op::AllReduce;
    case Algorithm::Nvls:
    case Algorithm::NvlsTree: {
      // sm90+ (nvls_efficiency > 0), an NVSwitch with SHARP, >= 2 local ranks and >= 2 graph
      // channels, Simple only.
      if (p != Protocol::Simple || c.nvls_efficiency <= 0.0 || !hw.node.nvswitch_sharp) {
        return false;
      }
      if (g.ppn < 2 || std::min<std::int64_t>(c.nvls.single_node.channels, g.ppn) < 2) {
        return false;
      }
      if (a == Algorithm::NvlsTree) return op == Op::AllReduce && g.nodes > 1;
      if (op != Op::AllReduce && !ag_rs) return false;
      // AllGather and ReduceScatter over NVLS take at most NCCL_MAX_NVLS_ARITY (32) local ranks
      // (enqueue.cc, the algorithm loop: "info->func != ncclFuncAllReduce && comm->localRanks >
      // NCCL_MAX_NVLS_ARITY"). An MNNVL clique is one node there (its ring graph spans the
      // NVLink domain, init.cc's rankToNode), so a GB200 group of 36 to 72 ranks in a rack has
      // no NVLS AllGather or ReduceScatter.
      constexpr std::int64_t kMaxNvlsArity = 32;
      if (ag_rs && g.ppn > kMaxNvlsArity) return false;
      // Multi-node NVLS needs CollNet (IB SHARP); for AllGather/ReduceScatter also its plugin
      // collectives, which we take to come with it.
      return g.nodes == 1 || c.ib_sharp;
    }
    case Algorithm::Pat:
      // AllGather/ReduceScatter, exactly one rank per node, when the version has PAT.
      return p == Protocol::Simple && c.pat_enabled && ag_rs && g.ppn == 1 && g.nodes > 1;
    default:
      return false;
  }
}

// NCCL's bus bandwidth of (algorithm, protocol), then converted to algorithm bandwidth
// (§A.4, steps 1, 1', 2 and 3).
BytesPerSecond tuned_algbw(const HardwareSpec& hw, Op op, const Geometry& g, Algorithm a,
                           Protocol p, const ChannelGraph& graph) {
  const auto& c = hw.collective;
  const double nch = graph.channels;
  const std::size_t k = g.node_class;
  const auto n = static_cast<double>(g.ranks);
  const auto ppn = static_cast<double>(g.ppn);

  // Step 1: per-channel bwIntra at <= 2 nodes, else bwInter; busBw = nChannels x bw.
  BytesPerSecond bus = (g.nodes <= 2 ? graph.bw_intra : graph.bw_inter) * nch;

  // Step 1': NVLS and NVLSTree (Simple only).
  if (is_nvls(a)) {
    BytesPerSecond intra = graph.bw_intra * (c.nvls_efficiency * (nch - 1.0) / nch);
    if (op == Op::AllReduce) {
      intra *= 2.0;  // NVLS pipelines the reduce and the broadcast
    } else {
      intra *= (ppn - 1.0) / ppn;
    }
    BytesPerSecond bw = intra;
    if (g.nodes > 1) {
      const double tree_2n = a == Algorithm::NvlsTree && g.nodes <= 2 ? 2.0 : 1.0;
      bw = min_bw(bw, graph.bw_inter * tree_2n);
    }
    if (a == Algorithm::NvlsTree && c.per_channel_max_nvls_tree_bw[k].value() > 0.0) {
      bw = min_bw(bw, c.per_channel_max_nvls_tree_bw[k]);
    }
    bus = bw * nch;
  }

  // Step 2: refinements.
  if (a == Algorithm::Ring && p == Protocol::Ll) {
    // LL moves 4 B of payload per 8 B store.
    bus = min_bw(c.ll_max_bw[k], bus * c.ring_ll_factor);
  }
  if (a == Algorithm::Ring && p == Protocol::Ll128) {
    // 120 of 128 bytes are payload; NCCL uses 0.92 (and before 2.23, 0.7 below 2 ranks/node).
    const double f = g.ppn < 2 ? c.ring_ll128_low_ppn_factor : 0.92;
    bus = min_bw(bus * f, c.per_channel_max_ring_ll128_bw[k] * nch);
  }
  if (a == Algorithm::Tree) {
    bus = min_bw(bus * 0.92, c.per_channel_max_tree_bw[k] * nch);
    if (p == Protocol::Ll) bus = min_bw(bus / 3.8, c.ll_max_bw[k]);
    if (p == Protocol::Ll128) {
      const double f = g.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
      bus = min_bw(bus * f, c.per_channel_max_tree_ll128_bw[k] * nch);
    }
  }
  if (a == Algorithm::Pat) bus *= c.pat_factor;

  // Step 3: bus -> algorithm bandwidth. Tree: half (data goes up and down). NVLS on
  // AllGather/ReduceScatter: as is. Ring, NVLS AllReduce, NVLSTree and PAT: x n / nsteps. (§A.4
  // says PAT is used as is, but the NCCL 2.29.7 log of §A.9 shows PAT AllGather 3.6 GB/s =
  // ring's 2.4 x 2/1 x 0.75, i.e. converted like Ring; we follow the log.)
  if (a == Algorithm::Tree) return bus * 0.5;
  if (a == Algorithm::Nvls && op != Op::AllReduce) return bus;
  return bus * (n / nsteps(op, g.ranks));
}

// NCCL's latency of (algorithm, protocol) (§A.3, §A.5).
Seconds tuned_latency(const HardwareSpec& hw, Op op, const Geometry& g, Algorithm a, Protocol p) {
  const auto& c = hw.collective;
  const std::size_t ai = idx(a);
  const std::size_t pi = idx(p);
  const Seconds base = c.base_latency[ai][pi];
  const Seconds intra = c.hw_latency[idx(c.intra_link)][ai][pi];
  // interLat: the network hop of the algorithm (Tree's when one rank per node, 2.23+), plus
  // the plugin latency, twice for Simple ("flush").
  const Algorithm net_algo = g.ppn == 1 && c.one_ppn_uses_tree_net_latency ? Algorithm::Tree : a;
  Seconds inter = c.hw_latency[idx(LinkClass::Net)][idx(net_algo)][pi] + c.net_plugin_latency;
  if (p == Protocol::Simple) inter += c.net_plugin_latency;
  const auto nodes_log = static_cast<double>(log2i(g.nodes));
  const auto n = g.ranks;
  const auto big_n = g.nodes;

  switch (a) {
    case Algorithm::Ring: {
      if (op == Op::Broadcast || op == Op::Reduce) {
        // Pipelined along identical ring channels (sameChannels): one hop latency, of the
        // network class when the ring leaves the node.
        const LinkClass hw_class = big_n == 1 ? c.intra_link : LinkClass::Net;
        return base + c.hw_latency[idx(hw_class)][ai][pi];
      }
      // base + (nsteps - nInter) x max(intraLat, netOverhead) + nInter x interLat, with
      // nInter = 2(N-1) for AllReduce (2N before NCCL 2.23), N-1 for AllGather/ReduceScatter;
      // the net overhead (x3 for Simple) only when the ring spans nodes.
      const double steps = nsteps(op, n);
      const std::int64_t allreduce_inter =
          c.ring_allreduce_inter_steps_2n ? 2 * big_n : 2 * (big_n - 1);
      const double inter_steps =
          big_n == 1 ? 0.0 : static_cast<double>(op == Op::AllReduce ? allreduce_inter : big_n - 1);
      Seconds hop = intra;
      if (big_n > 1) {
        const double f = p == Protocol::Simple ? c.simple_net_overhead_factor : 1.0;
        hop = max(intra, c.net_overhead * f);
      }
      return base + hop * (steps - inter_steps) + inter * inter_steps;
    }
    case Algorithm::Tree:
      // base + 2((ppn-1) intraLat + log2i(N) interLat): log in nodes, linear in GPUs/node.
      return base + 2.0 * (intra * static_cast<double>(g.ppn - 1) + inter * nodes_log);
    case Algorithm::Nvls:
      return big_n > 1 ? base + intra + inter : base + intra;
    case Algorithm::NvlsTree:
      return base + intra + inter * (2.0 * nodes_log);
    case Algorithm::Pat: {
      // base + log2i(N) interLat / 3.5 + 2.8 us x n (§A.5; tuning.cc 2.23+).
      constexpr double kPatLogDivisor = 3.5;
      const Seconds per_rank(2.8e-6);
      return base + inter * (nodes_log / kPatLogDivisor) + per_rank * static_cast<double>(n);
    }
    default:
      throw InternalError("tuned_latency: not a tuned algorithm");
  }
}

}  // namespace

Geometry make_geometry(const HardwareSpec& hw, const parallel::GroupShape& group) {
  const auto inconsistent = [&group]() {
    return InternalError("collective model: inconsistent group shape (ranks " +
                         std::to_string(group.ranks) + ", nodes " + std::to_string(group.nodes) +
                         ", ranks per node " + std::to_string(group.ranks_per_node) + ", domains " +
                         std::to_string(group.domains) + ", ranks per domain " +
                         std::to_string(group.ranks_per_domain) + ", fewest per domain " +
                         std::to_string(group.min_ranks_per_domain) + ")");
  };
  if (group.ranks < 1 || group.nodes < 1 || group.ranks_per_node < 1 ||
      group.nodes * group.ranks_per_node < group.ranks || group.nodes > group.ranks) {
    throw inconsistent();
  }
  const std::int64_t gpus = hw.node.gpus_per_node;
  const std::int64_t host_ranks = group.nodes == 1 ? group.ranks : group.ranks_per_node;
  if (host_ranks > gpus) {
    throw InternalError("collective model: " + std::to_string(host_ranks) +
                        " ranks per node on a " + std::to_string(gpus) + "-GPU node");
  }
  // NVLink domains: from the placement, or for a shape without them, the group's nodes taken
  // as consecutive hosts from the start of a domain (one domain per node on most profiles).
  const std::int64_t per_domain = hw.node.hosts_per_domain();
  std::int64_t domains = group.domains;
  std::int64_t domain_ranks = group.ranks_per_domain;
  if (domains == 0 && domain_ranks == 0) {
    domains = (group.nodes + per_domain - 1) / per_domain;
    domain_ranks = std::min(group.ranks, host_ranks * std::min(group.nodes, per_domain));
  }
  // The least-held domain: given by the placement, else an even split.
  const std::int64_t least =
      group.min_ranks_per_domain > 0 ? group.min_ranks_per_domain : domain_ranks;
  if (domains < 1 || domain_ranks < 1 || domains > group.nodes ||
      domains * domain_ranks < group.ranks || domain_ranks < std::min(host_ranks, group.ranks) ||
      least > domain_ranks || least + (domains - 1) * domain_ranks < group.ranks) {
    throw inconsistent();
  }
  Geometry g;
  g.ranks = group.ranks;
  g.nodes = domains;
  g.ppn = domains == 1 ? group.ranks : domain_ranks;
  if (g.ppn > hw.node.domain_gpus()) {
    throw InternalError("collective model: " + std::to_string(g.ppn) +
                        " ranks per NVLink domain on a " + std::to_string(hw.node.domain_gpus()) +
                        "-GPU domain");
  }
  g.node_class = static_cast<std::size_t>(std::min<std::int64_t>(g.nodes, 3) - 1);
  // A domain holding `ranks` of the group, packed on its hosts as densely as the group's densest
  // host: the share of a host's NICs they reach, ceil(ranks x NICs / GPUs) of them
  // (rail-optimized DGX nodes pair GPU i with NIC i; a DGX-1 shares one NIC between two GPUs),
  // and the hosts whose NICs carry their traffic to other domains (our rule; measured on GB200:
  // ring AllReduce busbw over three NVLink partitions 197 GB/s with one 4-GPU tray each, 394 with
  // two, NVIDIA/nccl#1801, sources.md B.2).
  const std::int64_t nics = hw.fabric.nics_per_node;
  // Where other GPUs of the hosts call at the same moment (GroupShape::host_active, a training
  // step's groups of one kind), the NICs are split by GPU: per_host of the host_active GPUs'
  // share, no more than the group alone would take. A DGX-1's DP group of one rank per host got
  // a whole NIC of the 4 for each of the host's 8 groups, twice what the host has.
  const auto domain_side = [&](std::int64_t ranks, double& nic_share, std::int64_t& hosts) {
    const std::int64_t per_host = std::min(host_ranks, ranks);
    const std::int64_t used = std::min(nics, (per_host * nics + gpus - 1) / gpus);
    nic_share = static_cast<double>(used) / static_cast<double>(nics);
    if (group.host_active > per_host) {
      nic_share = std::min(nic_share,
                           static_cast<double>(per_host) / static_cast<double>(group.host_active));
    }
    hosts = std::max<std::int64_t>(1, std::min(group.nodes, (ranks + per_host - 1) / per_host));
  };
  domain_side(g.ppn, g.nic_share, g.hosts);
  // The least-held domain's ranks leave through its own hosts' NICs: a group of 8 + 56 GPUs
  // over two GB200 racks crosses between them through the 2 trays of the first.
  g.least_ppn = domains == 1 ? g.ppn : least;
  domain_side(g.least_ppn, g.least_nic_share, g.least_hosts);
  // Topology rule (ours): a group spanning more nodes than one leaf (fat tree) or one rail
  // switch (rail-optimized; NCCL's rings are rail-aligned) holds crosses the upper tiers, whose
  // bandwidth is 1/oversubscription of the edge (§A.9: NCCL's model assumes non-blocking).
  g.fabric_factor = group.nodes > hw.fabric.nodes_per_leaf ? 1.0 / hw.fabric.oversubscription : 1.0;
  return g;
}

std::optional<TunedEntry> tuned_entry(const HardwareSpec& hw, Op op, const Geometry& g,
                                      Algorithm algorithm, Protocol protocol) {
  if (!eligible(hw, op, g, algorithm, protocol)) return std::nullopt;
  const ChannelGraph graph = group_graph(hw, algorithm, g);
  if (graph.channels <= 0) return std::nullopt;
  const BytesPerSecond algbw = tuned_algbw(hw, op, g, algorithm, protocol, graph);
  if (!(algbw.value() > 0.0)) return std::nullopt;
  return TunedEntry{.algbw = algbw,
                    .latency = tuned_latency(hw, op, g, algorithm, protocol),
                    .channels = graph.channels};
}

CallTime call_time(const HardwareSpec& hw, Op op, const Geometry& g, Algorithm algorithm,
                   Protocol protocol, const TunedEntry& entry, Bytes bytes) {
  const auto& c = hw.collective;
  BytesPerSecond bw = entry.algbw;
  Seconds latency = entry.latency;
  // Tree AllReduce size correction: entry floor(log2(bytes / 64)) of the table (§A.1 step 2).
  if (algorithm == Algorithm::Tree && op == Op::AllReduce && bytes.value() >= 64.0) {
    const auto i = static_cast<std::size_t>(log2i(static_cast<std::int64_t>(bytes.value() / 64.0)));
    const auto& table = c.tree_correction[idx(protocol)];
    if (i < table.size()) bw *= table[i];
  }
  // Ring plateau: Ring Simple AllReduce across nodes once each rank's share of a channel
  // reaches 64 B (§A.1 step 3).
  if (algorithm == Algorithm::Ring && protocol == Protocol::Simple && op == Op::AllReduce &&
      g.nodes > 1 &&
      bytes.value() / (static_cast<double>(entry.channels) * static_cast<double>(g.ranks)) >=
          64.0) {
    latency *= c.ring_plateau_factor;
  }
  return CallTime{.latency = latency, .transfer = bytes / bw};
}

CallTime measured_time(const HardwareSpec& hw, const Geometry& g, Algorithm algorithm,
                       Protocol protocol, const CallTime& nccl, Bytes bytes) {
  const auto& per_protocol = hw.collective.measured[idx(algorithm)];
  const hardware::MeasuredTerms& m = per_protocol[idx(protocol)];
  const hardware::MeasuredTerms& simple = per_protocol[idx(Protocol::Simple)];
  const bool own = protocol == Protocol::Simple;
  const double per_doubling = own || !m.inherits_efficiency_per_doubling
                                  ? m.efficiency_per_doubling
                                  : simple.efficiency_per_doubling;
  const double latency_scale =
      own || !m.inherits_latency_scale ? m.latency_scale : simple.latency_scale;
  double bw_factor = g.nodes == 1 ? m.bandwidth_factor_single_node : m.bandwidth_factor_multi_node;
  if (g.nodes > 1) {
    bw_factor *= std::pow(per_doubling, std::log2(static_cast<double>(g.nodes)));
  }
  // transfer = bytes / bw, so the corrected transfer of the whole message and of the fill are
  // NCCL's transfer time scaled by their share of the bytes over the bandwidth factor.
  const double fill_bytes = m.fill_fraction * std::min(bytes.value(), m.fill_saturation.value());
  const double transfer_scale = (1.0 + fill_bytes / bytes.value()) / bw_factor;
  // A negative offset may not make the latency negative.
  // Inside a node nothing grows with the nodes: only the offset applies. A negative offset may
  // not make the latency negative.
  const Seconds latency =
      g.nodes == 1 ? max(Seconds(0.0), nccl.latency + m.latency_offset_single_node)
                   : max(Seconds(0.0), nccl.latency * latency_scale + m.latency_offset_multi_node);
  return CallTime{.latency = latency, .transfer = nccl.transfer * transfer_scale};
}

Traffic tuned_traffic(Op op, const Geometry& g, Algorithm algorithm, Bytes bytes) {
  const auto n = static_cast<double>(g.ranks);
  const auto nodes = static_cast<double>(g.nodes);
  const auto ppn = static_cast<double>(g.ppn);
  const bool multi = g.nodes > 1;
  switch (algorithm) {
    case Algorithm::Tree: {
      // Reduce up and broadcast down: 2(n-1) sends of the buffer over n ranks; N-1 of the
      // n-1 tree edges (each used both ways) cross the network.
      const Bytes sent = bytes * (2.0 * (n - 1.0) / n);
      const Bytes net = multi ? sent * ((nodes - 1.0) / (n - 1.0)) : Bytes(0.0);
      return {sent - net, net};
    }
    case Algorithm::Nvls:
    case Algorithm::NvlsTree: {
      // Each rank streams its buffer through the switch; the head GPU of each channel carries
      // one extra share: (ppn + 1) / ppn (sjeaugey, nccl-tests#212). AllGather/ReduceScatter
      // move their (n-1)/n share. Across nodes the node tree sends the buffer up and down
      // (N-1)/N of the time, spread over the node's ranks.
      const Bytes nv = op == Op::AllReduce ? bytes * ((ppn + 1.0) / ppn) : bytes * ((n - 1.0) / n);
      const Bytes net = multi ? bytes * (2.0 * (nodes - 1.0) / nodes / ppn) : Bytes(0.0);
      return {nv, net};
    }
    default: {
      // Ring and PAT: the bus traffic of the op, (n-1)/n of the buffer per pass (two passes
      // for AllReduce); N of a ring's n hops cross the network.
      const double passes = op == Op::AllReduce ? 2.0 : 1.0;
      const Bytes sent = bytes * (passes * (n - 1.0) / n);
      const Bytes net = multi ? sent * (nodes / n) : Bytes(0.0);
      return {sent - net, net};
    }
  }
}

Seconds line_rate_transfer(const HardwareSpec& hw, const Geometry& g, Algorithm algorithm,
                           const Traffic& traffic) {
  // Averages over ranks and domains: the busiest link carries at least the average, so the
  // floor never exceeds the true one.
  Seconds floor(0.0);
  const BytesPerSecond nvlink = hw.node.nvlink_bandwidth_per_direction;
  if (traffic.nvlink.value() > 0.0 && nvlink.value() > 0.0) floor = traffic.nvlink / nvlink;
  if (traffic.network.value() > 0.0 && g.nodes > 1 && algorithm != Algorithm::Nvls) {
    const Bytes per_domain =
        traffic.network * (static_cast<double>(g.ranks) / static_cast<double>(g.nodes));
    const BytesPerSecond nics =
        hw.fabric.nic_bandwidth *
        (static_cast<double>(hw.fabric.nics_per_node) * static_cast<double>(g.hosts));
    if (nics.value() > 0.0) floor = max(floor, per_domain / nics);
  }
  return floor;
}

BytesPerSecond network_bw_per_rank(const HardwareSpec& hw, const Geometry& g, bool least) {
  // The NICs of every host the group holds in a domain, shared by its ranks in the domain.
  const ChannelGraph& ring = hw.collective.ring.multi_node;
  const double share = least ? g.least_nic_share : g.nic_share;
  const auto hosts = static_cast<double>(least ? g.least_hosts : g.hosts);
  const auto ranks = static_cast<double>(least ? g.least_ppn : g.ppn);
  return ring.bw_inter *
         (static_cast<double>(ring.channels) * share * g.fabric_factor * hosts / ranks);
}

BytesPerSecond nvlink_bw_per_rank(const HardwareSpec& hw) {
  const ChannelGraph& ring = hw.collective.ring.single_node;
  return ring.bw_intra * static_cast<double>(ring.channels);
}

}  // namespace trainsim::collective::detail
