// Where the ranks of each communication group sit. Rank order is TP innermost, then CP, then DP,
// then PP (Megatron's order), so rank = t + tp*(c + cp*(d + dp*p)); nodes hold consecutive
// ranks, and NVLink domains hold consecutive nodes. A group's shape (ranks, nodes and NVLink
// domains spanned, ranks per node and per domain) is all the collective model needs to price it.
#pragma once

#include <cstdint>
#include <vector>

#include "trainsim/parallel/scenario.hpp"

namespace trainsim::parallel {

enum class GroupKind { Tp, Cp, Dp, Pp };

struct GroupShape {
  std::int64_t ranks = 1;
  std::int64_t nodes = 1;           // distinct nodes (hosts) the group's ranks span
  std::int64_t ranks_per_node = 1;  // ranks of the group that share one node (the largest count)
  // Distinct NVLink domains the ranks span, and the most ranks sharing one. 0 (the default, for
  // shapes built without a placement): derived by the collective model as if the group's nodes
  // were consecutive hosts from the start of a domain; with one node per domain that is
  // domains = nodes.
  std::int64_t domains = 0;
  std::int64_t ranks_per_domain = 0;
  // The fewest ranks of the group in one of its domains (the least-held domain, whose hosts'
  // NICs carry all of its traffic to the others). 0: ranks_per_domain, an even split.
  std::int64_t min_ranks_per_domain = 0;
  // The GPUs of each of the group's hosts that run a call of this kind at the same moment as it,
  // its own ranks there included: a training step's groups of one kind all reduce, gather or send
  // together (parallel::place: every GPU of a full host; a pipeline's send pairs: the stage's
  // ranks on the host). They split the host's NICs by GPU: a DP group of one rank per DGX-1
  // (4 NICs for 8 GPUs) gets half a NIC, its 7 peers on the host the rest. 0: the group alone
  // on its hosts (nccl-tests), where one rank may drive a whole NIC (collective::detail::
  // make_geometry).
  std::int64_t host_active = 0;
  // The other shapes the groups of the same kind take, where they do not all lie alike
  // (parallel::place; empty otherwise, and in each of them). A stage waits for the slowest of
  // its groups, so a collective is priced on every shape of its stage's groups and the slowest
  // taken (workload::IterationBuilder); this shape, the worst by the rule of docs/placement.md,
  // is the one shown.
  std::vector<GroupShape> variants = {};
};

struct Placement {
  GroupShape tp;
  GroupShape cp;
  GroupShape dp;
  GroupShape pp;
  // The group that shares one copy of the model state and reduces gradients: the dp x cp ranks
  // of a TP rank (Megatron-LM's data-parallel-with-context group), or hybrid_shard's group.
  GroupShape shard;
  // hybrid_shard's replica group (ranks holding the same shard), 1 rank otherwise.
  GroupShape replicate;
  // Expert parallelism (MoE layers): the ep consecutive data-parallel ranks of an EP group
  // (stride tp x cp), among which the routed experts are split and tokens go all-to-all; and
  // the expert-data-parallel group, the dp / ep ranks holding the same experts (stride
  // tp x cp x ep), which shares and reduces the experts' state. With ep 1: one rank, and the
  // shard group. Megatron-Core's expert ranks with cp 1 (parallel_state.py, order tp-ep-dp-pp).
  GroupShape ep;
  GroupShape expert_shard;
  // The first and the last pipeline stage's ranks of one (tp, cp, dp) position (stride
  // tp x cp x dp x (pp - 1)): both hold the word embedding when the LM head is tied to it or a
  // multi-token-prediction module reads it, and sum its gradient (Megatron's embedding group,
  // parallel_state.py). One rank without pipeline parallelism.
  GroupShape embedding;

  [[nodiscard]] const GroupShape& of(GroupKind kind) const;
};

// The shape of the group of `size` ranks whose members are `stride` ranks apart (the product
// of the degrees inside it), starting at rank 0, with `gpus_per_node` ranks per node and
// `domain_gpus` ranks per NVLink domain (a multiple of gpus_per_node; the 3-argument form takes
// one node per domain).
// Requires: size, stride, gpus_per_node, domain_gpus >= 1.
[[nodiscard]] GroupShape group_shape(std::int64_t size, std::int64_t stride,
                                     std::int64_t gpus_per_node);
[[nodiscard]] GroupShape group_shape(std::int64_t size, std::int64_t stride,
                                     std::int64_t gpus_per_node, std::int64_t domain_gpus);

// Ranks per hybrid_shard shard group: parallel.shard_group, or when 0 the data-parallel ranks of
// one node (at least 1, at most dp).
[[nodiscard]] std::int64_t hybrid_shard_size(const Scenario& scenario);

// Whether two shapes place their ranks alike: every field but the variants.
[[nodiscard]] bool same_shape(const GroupShape& a, const GroupShape& b);

// Placement of every group of a scenario whose plan has dp filled in.
[[nodiscard]] Placement place(const Scenario& scenario);

// The same over the groups that pipeline stage `stage` holds: for the kinds inside a stage (tp,
// cp, dp, shard, replicate, ep, expert_shard), the worst of that stage's groups and that stage's
// other shapes; pp and embedding, which span the stages, as place(scenario). Stages whose ranks
// start at different places in their nodes or NVLink domains can hold differently shaped groups,
// and a stage's collectives run among its own ranks only. With pp 1, place(scenario).
// Requires: 0 <= stage < pp.
[[nodiscard]] Placement place(const Scenario& scenario, std::int64_t stage);

// The pairs of ranks between pipeline stage `stage` and the next (each rank and its peer
// tp x cp x dp ranks on), between which the stage's forward sends and the next stage's backward
// sends run: the worst of them, the others as its variants. For the last stage, the next is the
// first: the interleaved schedule's sends between a chunk on the last stage and the next chunk
// on the first (the embedding group's pairs). The pipeline group spans every stage, but a
// transfer joins two neighbours only: with tp 2 and pp 4 on two 8-GPU hosts, stages 0 and 1
// share host 0 and only the transfer between stages 1 and 2 crosses hosts.
// Requires: 0 <= stage < pp.
[[nodiscard]] GroupShape pipeline_pair(const Scenario& scenario, std::int64_t stage);

// A kind of the inner, bandwidth-heavy groups (tp, cp, ep) some of whose groups span more NVLink
// domains than the group at rank 0: the job's hosts in each domain do not fall on the groups'
// boundaries, as on full GB200 NVL72 racks with TP 16 or EP 64.
struct Straddle {
  const char* kind = "";     // "tp", "cp" or "ep"
  GroupShape worst;          // the worst group of the kind
  std::int64_t domains = 1;  // the domains rank 0's group spans
};

// The kinds that straddle (none on a profile whose domain is one host, or where every group lies
// as rank 0's does), and the most hosts per domain (cluster.nodes_per_domain), other than the
// job's, under which no group of those kinds straddles or spans more domains than rank 0's
// does now; 0 when no value does.
struct StraddleAdvice {
  std::vector<Straddle> kinds;
  std::int64_t nodes_per_domain = 0;
};
[[nodiscard]] StraddleAdvice straddling(const Scenario& scenario);

}  // namespace trainsim::parallel
