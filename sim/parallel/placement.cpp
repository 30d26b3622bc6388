#include "trainsim/parallel/placement.hpp"

#include <algorithm>
#include <map>

namespace trainsim::parallel {

namespace {

// Ranks, units spanned and the most ranks in one unit, for units of `g` consecutive ranks.
GroupShape span(std::int64_t size, std::int64_t stride, std::int64_t g) {
  if (size <= 1) return GroupShape{.ranks = 1, .nodes = 1, .ranks_per_node = 1};
  // Members are ranks j*stride, j < size; node of rank r is r / g.
  if (stride >= g) {
    // Consecutive members are at least a node apart: one member per node.
    return GroupShape{.ranks = size, .nodes = size, .ranks_per_node = 1};
  }
  if (g % stride == 0) {
    // Each node holds g/stride members (fewer if the group is smaller than a node).
    const std::int64_t per_node = std::min(size, g / stride);
    return GroupShape{.ranks = size, .nodes = (size + per_node - 1) / per_node,
                      .ranks_per_node = per_node};
  }
  // Strides that do not divide the node size: count members per node directly. Happens only
  // for odd degrees (tp 3, cp 5, ...) and is bounded by the group size.
  std::map<std::int64_t, std::int64_t> per_node;
  for (std::int64_t j = 0; j < size; ++j) ++per_node[j * stride / g];
  std::int64_t most = 0;
  for (const auto& [node, count] : per_node) most = std::max(most, count);
  return GroupShape{.ranks = size, .nodes = static_cast<std::int64_t>(per_node.size()),
                    .ranks_per_node = most};
}

}  // namespace

GroupShape group_shape(std::int64_t size, std::int64_t stride, std::int64_t gpus_per_node) {
  return group_shape(size, stride, gpus_per_node, gpus_per_node);
}

GroupShape group_shape(std::int64_t size, std::int64_t stride, std::int64_t gpus_per_node,
                       std::int64_t domain_gpus) {
  GroupShape out = span(size, stride, gpus_per_node);
  if (domain_gpus == gpus_per_node) {
    out.domains = out.nodes;
    out.ranks_per_domain = out.ranks_per_node;
  } else {
    // Domains hold consecutive ranks as nodes do, only more of them.
    const GroupShape d = span(size, stride, domain_gpus);
    out.domains = d.nodes;
    out.ranks_per_domain = d.ranks_per_node;
  }
  return out;
}

std::int64_t hybrid_shard_size(const Scenario& s) {
  const ParallelPlan& p = s.parallel;
  if (p.shard_group > 0) return p.shard_group;
  // Default: the data-parallel ranks of one node (PyTorch HYBRID_SHARD's usual setting).
  const std::int64_t inner = p.tp * p.cp;
  return std::max<std::int64_t>(1, std::min(p.dp, s.hardware.node.gpus_per_node / inner));
}

Placement place(const Scenario& s) {
  const ParallelPlan& p = s.parallel;
  // A cluster smaller than one node packs its GPUs into that node, and one smaller than an
  // NVLink domain into that domain.
  const std::int64_t g = std::min<std::int64_t>(s.hardware.node.gpus_per_node, s.gpus);
  const std::int64_t d = std::max(g, std::min<std::int64_t>(s.hardware.node.domain_gpus(), s.gpus));
  Placement out;
  // Strides follow the rank order TP (innermost), CP, DP, PP.
  out.tp = group_shape(p.tp, 1, g, d);
  out.cp = group_shape(p.cp, p.tp, g, d);
  out.dp = group_shape(p.dp, p.tp * p.cp, g, d);
  out.pp = group_shape(p.pp, p.tp * p.cp * p.dp, g, d);
  if (p.sharding == Sharding::HybridShard) {
    const std::int64_t shard = hybrid_shard_size(s);
    out.shard = group_shape(shard, p.tp * p.cp, g, d);
    out.replicate = group_shape(p.dp / shard, p.tp * p.cp * shard, g, d);
  } else {
    // CP ranks hold the same weights as their DP peers and join their gradient reduction.
    out.shard = group_shape(p.dp * p.cp, p.tp, g, d);
    out.replicate = GroupShape{};
  }
  out.ep = group_shape(p.ep, p.tp * p.cp, g, d);
  out.expert_shard =
      p.ep > 1 ? group_shape(p.dp * p.cp / p.ep, p.tp * p.cp * p.ep, g, d) : out.shard;
  out.embedding = p.pp > 1 ? group_shape(2, p.tp * p.cp * p.dp * (p.pp - 1), g, d) : GroupShape{};
  return out;
}

const GroupShape& Placement::of(GroupKind kind) const {
  switch (kind) {
    case GroupKind::Tp:
      return tp;
    case GroupKind::Cp:
      return cp;
    case GroupKind::Dp:
      return dp;
    case GroupKind::Pp:
      return pp;
  }
  return tp;
}

}  // namespace trainsim::parallel
