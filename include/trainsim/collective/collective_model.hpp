// The cost of one collective call on a group of GPUs, after NCCL's own cost model
// (src/graph/tuning.cc, 2.28+ formulas; docs/sources.md A.1-A.6): for every eligible algorithm
// (Ring, Tree, NVLS, NVLSTree, PAT) and protocol (LL, LL128, Simple) the time is latency +
// bytes / bandwidth, and the fastest is chosen, as NCCL does. The constants come from the
// hardware profile (hardware::CollectiveLibrarySpec), so a profile mimics one NCCL version.
// AllToAll and SendRecv, which NCCL does not tune, are priced from link bandwidths. The engine
// calls cost() for every communication op; `trainsim collective` prints its nccl-tests tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/units.hpp"

namespace trainsim::collective {

// The collective operations, with nccl-tests' byte accounting (see cost()).
enum class Op { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };

using hardware::Algorithm;
using hardware::Protocol;

// Names as the CLI and the JSON reports write them: "all_reduce", "ring", "LL128", ...
[[nodiscard]] std::string_view to_string(Op op);
[[nodiscard]] std::string_view to_string(Algorithm algorithm);
[[nodiscard]] std::string_view to_string(Protocol protocol);
// Throws ConfigError for an unknown name, with "did you mean" and the list of names.
[[nodiscard]] Op parse_op(std::string_view name);
[[nodiscard]] Algorithm parse_algorithm(std::string_view name);
[[nodiscard]] Protocol parse_protocol(std::string_view name);

// nccl-tests' bus-bandwidth factor for `op` on n ranks (doc/PERFORMANCE.md; sources.md A.11):
// AllReduce 2(n-1)/n; AllGather, ReduceScatter, AllToAll (n-1)/n; Broadcast, Reduce,
// SendRecv 1. Zero for one rank, as nccl-tests prints.
[[nodiscard]] double bus_factor(Op op, std::int64_t ranks);

// The cost of one call. time = latency + transfer. algbw = bytes / time and busbw = algbw x
// bus_factor, nccl-tests' definitions. nvlink_bytes and network_bytes are the bytes one rank
// sends on each link class, averaged over the group's ranks (an approximate accounting of the
// chosen algorithm's traffic, not NCCL's).
struct CollectiveCost {
  Seconds time;
  Seconds latency;
  Seconds transfer;
  Algorithm algorithm = Algorithm::None;
  Protocol protocol = Protocol::Simple;
  BytesPerSecond algbw;
  BytesPerSecond busbw;
  Bytes nvlink_bytes;
  Bytes network_bytes;
};

// Prices collectives on one hardware profile. Holds a copy of the spec; immutable after
// construction, so one model may be shared by threads. Every cost is O(1) in the group size.
class CollectiveModel {
 public:
  explicit CollectiveModel(hardware::HardwareSpec hardware);

  // The cost of `op` on `group` moving `bytes`, nccl-tests' size: the whole buffer for
  // AllReduce, Broadcast and Reduce; the whole gathered output (AllGather) or input
  // (ReduceScatter), i.e. ranks x per-rank bytes; each rank's whole send buffer for AllToAll;
  // the message for SendRecv. The fastest eligible (algorithm, protocol) is chosen; ties go to
  // NCCL's index order. One rank or zero bytes cost nothing (algorithm None). A group inside one
  // NVLink domain is priced on NVLink even when it spans nodes; NCCL's nodes are the domains.
  // Requires: group.ranks, nodes, ranks_per_node >= 1, nodes x ranks_per_node >= ranks,
  // ranks_per_node <= the node's GPUs, and domains and ranks_per_domain either both 0 (derived)
  // or consistent (1 <= domains <= nodes, domains x ranks_per_domain >= ranks, ranks_per_domain
  // <= the domain's GPUs), and min_ranks_per_domain 0 (an even split) or at most
  // ranks_per_domain with min + (domains - 1) x ranks_per_domain >= ranks. Throws InternalError
  // otherwise.
  [[nodiscard]] CollectiveCost cost(Op op, const parallel::GroupShape& group, Bytes bytes) const;

  // The cost with one (algorithm, protocol) forced, or nothing when NCCL could not use it for
  // this op and group (NCCL_ALGO / NCCL_PROTO). Same requirements as cost().
  [[nodiscard]] std::optional<CollectiveCost> cost_with(Op op, const parallel::GroupShape& group,
                                                        Bytes bytes, Algorithm algorithm,
                                                        Protocol protocol) const;

  // The fastest eligible pair within what NCCL_ALGO / NCCL_PROTO leave (nullopt: no
  // restriction), or nothing when no eligible pair is left. Same requirements as cost().
  [[nodiscard]] std::optional<CollectiveCost> cost_restricted(
      Op op, const parallel::GroupShape& group, Bytes bytes, std::optional<Algorithm> algorithm,
      std::optional<Protocol> protocol) const;

  [[nodiscard]] const hardware::HardwareSpec& hardware() const { return hw_; }

 private:
  hardware::HardwareSpec hw_;
};

// CollectiveModel::cost_restricted on a spec the caller keeps (no copy): for fitting loops that
// change a spec's parameters between calls. Requires a spec with a ring graph.
[[nodiscard]] std::optional<CollectiveCost> restricted_cost(const hardware::HardwareSpec& hw, Op op,
                                                            const parallel::GroupShape& group,
                                                            Bytes bytes,
                                                            std::optional<Algorithm> algorithm,
                                                            std::optional<Protocol> protocol);

}  // namespace trainsim::collective
