#include "trainsim/parallel/placement.hpp"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

namespace trainsim::parallel {

namespace {

// The units a group spans, and the most and the fewest of its members in one of them.
struct Span {
  std::int64_t units = 1;
  std::int64_t most = 1;
  std::int64_t fewest = 1;
};

// The span of the group of `size` ranks `stride` apart whose first member is rank `base`, with
// units of `g` consecutive ranks.
Span span_from(std::int64_t base, std::int64_t size, std::int64_t stride, std::int64_t g) {
  if (size <= 1) return Span{};
  // Consecutive members at least a unit apart: one member per unit.
  if (stride >= g) return Span{.units = size, .most = 1, .fewest = 1};
  // Consecutive members less than a unit apart: every unit from the first member's to the last
  // member's holds at least one.
  const std::int64_t first = base / g;
  const std::int64_t last = (base + (size - 1) * stride) / g;
  // Members below rank r: the j < size with base + j * stride < r.
  const auto below = [&](std::int64_t r) {
    return r <= base ? std::int64_t{0} : std::min(size, (r - base + stride - 1) / stride);
  };
  const auto in_unit = [&](std::int64_t k) { return below((k + 1) * g) - below(k * g); };
  // A unit's count depends on k * g mod stride, which repeats every stride / gcd(stride, g)
  // units: the first units of one period and the last unit cover every distinct count.
  const std::int64_t period = stride / std::gcd(stride, g);
  std::int64_t most = in_unit(last);
  std::int64_t fewest = most;
  for (std::int64_t k = first; k <= std::min(last, first + period + 1); ++k) {
    const std::int64_t count = in_unit(k);
    most = std::max(most, count);
    fewest = std::min(fewest, count);
  }
  return Span{.units = last - first + 1, .most = most, .fewest = fewest};
}

// The same group's shape in nodes of `g` ranks and NVLink domains of `d` (domains hold
// consecutive ranks as nodes do, only more of them).
GroupShape shape_from(std::int64_t base, std::int64_t size, std::int64_t stride, std::int64_t g,
                      std::int64_t d) {
  const Span nodes = span_from(base, size, stride, g);
  const Span domains = d == g ? nodes : span_from(base, size, stride, d);
  return GroupShape{.ranks = std::max<std::int64_t>(1, size),
                    .nodes = nodes.units,
                    .ranks_per_node = nodes.most,
                    .domains = domains.units,
                    .ranks_per_domain = domains.most,
                    .min_ranks_per_domain = domains.fewest};
}

// Every group of the kind has the shape of rank 0's in units of `g`: the stride reaches a unit
// (one member per unit), or the unit is a multiple of the stride and the groups' span (size x
// stride) is a multiple of the unit (every group starts less than a stride into a unit and
// fills units as rank 0's does) or divides it (every group lies inside one unit).
bool alike_in(std::int64_t size, std::int64_t stride, std::int64_t g) {
  const std::int64_t span = size * stride;
  return size <= 1 || stride >= g || (g % stride == 0 && (span % g == 0 || g % span == 0));
}

// Worse for a collective: more domains, then more nodes, then fewer ranks in the least-held
// domain, then fewer sharing the most-held domain and a node (the traffic between domains leaves
// through fewer hosts' NICs).
bool worse(const GroupShape& a, const GroupShape& b) {
  if (a.domains != b.domains) return a.domains > b.domains;
  if (a.nodes != b.nodes) return a.nodes > b.nodes;
  if (a.min_ranks_per_domain != b.min_ranks_per_domain) {
    return a.min_ranks_per_domain < b.min_ranks_per_domain;
  }
  if (a.ranks_per_domain != b.ranks_per_domain) return a.ranks_per_domain < b.ranks_per_domain;
  return a.ranks_per_node < b.ranks_per_node;
}

// `shape` and its variants with `active` GPUs of each host calling beside it (GroupShape::
// host_active).
void set_host_active(GroupShape& shape, std::int64_t active) {
  shape.host_active = active;
  for (GroupShape& v : shape.variants) v.host_active = active;
}

// The worst shape (`worse`) among a kind's groups of `size` ranks `stride` apart, with
// `gpus_per_node` ranks per node and `domain_gpus` per NVLink domain. The groups start at ranks
// base + i + size x stride x o for i < `starts` and o < `repeats`: for a dimension of the rank
// order, the ranks inside its stride and the groups of the dimensions outside it (from `base`,
// the first rank of the block they tile: 0 for the whole job, a pipeline stage's first rank for
// that stage's groups).
GroupShape worst_group_shape(std::int64_t size, std::int64_t stride, std::int64_t gpus_per_node,
                             std::int64_t domain_gpus, std::int64_t starts, std::int64_t repeats,
                             std::int64_t base = 0) {
  const std::int64_t g = gpus_per_node;
  const std::int64_t d = domain_gpus;
  GroupShape worst = shape_from(base, size, stride, g, d);
  if (alike_in(size, stride, g) && alike_in(size, stride, d)) return worst;
  // Here stride < d (alike_in holds for stride >= d, and g <= d). A group's shape depends on
  // its start's place in its domain (nodes tile domains), so the distinct starts modulo d are
  // all there is to look at: at most d of them, found in at most starts x d / gcd(span, d)
  // steps (the starts' offsets repeat modulo d after that many groups).
  const std::int64_t span = size * stride;
  const std::int64_t outer = std::min(repeats, d / std::gcd(span, d));
  std::vector<char> seen(static_cast<std::size_t>(d), 0);
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < std::min(starts, d); ++i) {
      seen[static_cast<std::size_t>((base + i + span * o) % d)] = 1;
    }
  }
  // Every distinct shape, in the order of their starts; the worst by `worse` leads.
  std::vector<GroupShape> shapes = {worst};
  for (std::int64_t r = 0; r < d; ++r) {
    if (seen[static_cast<std::size_t>(r)] == 0) continue;
    GroupShape shape = shape_from(r, size, stride, g, d);
    if (std::none_of(shapes.begin(), shapes.end(),
                     [&](const GroupShape& x) { return same_shape(x, shape); })) {
      shapes.push_back(std::move(shape));
    }
  }
  const auto lead = std::min_element(shapes.begin(), shapes.end(), worse);
  std::iter_swap(shapes.begin(), lead);
  worst = shapes.front();
  worst.variants.assign(shapes.begin() + 1, shapes.end());
  return worst;
}

}  // namespace

bool same_shape(const GroupShape& a, const GroupShape& b) {
  return a.ranks == b.ranks && a.nodes == b.nodes && a.ranks_per_node == b.ranks_per_node &&
         a.domains == b.domains && a.ranks_per_domain == b.ranks_per_domain &&
         a.min_ranks_per_domain == b.min_ranks_per_domain;
}

GroupShape group_shape(std::int64_t size, std::int64_t stride, std::int64_t gpus_per_node) {
  return group_shape(size, stride, gpus_per_node, gpus_per_node);
}

GroupShape group_shape(std::int64_t size, std::int64_t stride, std::int64_t gpus_per_node,
                       std::int64_t domain_gpus) {
  return shape_from(0, size, stride, gpus_per_node, domain_gpus);
}

std::int64_t hybrid_shard_size(const Scenario& s) {
  const ParallelPlan& p = s.parallel;
  if (p.shard_group > 0) return p.shard_group;
  // Default: the data-parallel ranks of one node (PyTorch HYBRID_SHARD's usual setting).
  const std::int64_t inner = p.tp * p.cp;
  return std::max<std::int64_t>(1, std::min(p.dp, s.hardware.node.gpus_per_node / inner));
}

namespace {

// The job's ranks per node and per NVLink domain.
struct Units {
  std::int64_t node = 1;
  std::int64_t domain = 1;
};

Units units_of(const Scenario& s) {
  // A cluster smaller than one node packs its GPUs into that node, and one smaller than an
  // NVLink domain into that domain.
  const std::int64_t g = std::min<std::int64_t>(s.hardware.node.gpus_per_node, s.gpus);
  // The job's GPUs in each NVLink domain: the hosts it fills there (cluster.nodes_per_domain,
  // Slurm's --segment), by default the whole domain.
  const std::int64_t domain = s.nodes_per_domain > 0
                                  ? s.nodes_per_domain * s.hardware.node.gpus_per_node
                                  : s.hardware.node.domain_gpus();
  return Units{.node = g, .domain = std::max(g, std::min<std::int64_t>(domain, s.gpus))};
}

// The inner kinds' worst groups with the domains of rank 0's group under `s`.
std::vector<Straddle> inner_kinds(const Scenario& s) {
  const Placement pl = place(s);
  const Units u = units_of(s);
  const ParallelPlan& p = s.parallel;
  const auto kind = [&](const char* name, const GroupShape& worst, std::int64_t size,
                        std::int64_t stride) {
    return Straddle{.kind = name,
                    .worst = worst,
                    .domains = shape_from(0, size, stride, u.node, u.domain).domains};
  };
  return {kind("tp", pl.tp, p.tp, 1), kind("cp", pl.cp, p.cp, p.tp),
          kind("ep", pl.ep, p.ep, p.tp * p.cp)};
}

}  // namespace

StraddleAdvice straddling(const Scenario& s) {
  StraddleAdvice out;
  const std::int64_t hosts = s.hardware.node.hosts_per_domain();
  if (hosts <= 1) return out;
  const std::vector<Straddle> now = inner_kinds(s);
  for (const Straddle& k : now) {
    if (k.worst.domains > k.domains) out.kinds.push_back(k);
  }
  if (out.kinds.empty()) return out;
  // The most hosts per domain under which no inner group straddles, nor spans more domains than
  // rank 0's does now (a job already on segments whose rank 0 group spans two domains is not
  // sent back to full racks where its groups straddle again).
  const std::int64_t current = s.nodes_per_domain > 0 ? s.nodes_per_domain : hosts;
  for (std::int64_t n = hosts; n >= 1; --n) {
    if (n == current) continue;
    Scenario t = s;
    t.nodes_per_domain = n;
    const std::vector<Straddle> then = inner_kinds(t);
    bool fits = true;
    for (std::size_t i = 0; i < then.size(); ++i) {
      fits = fits && then[i].worst.domains <= then[i].domains &&
             then[i].worst.domains <= now[i].domains;
    }
    if (fits) {
      out.nodes_per_domain = n;
      break;
    }
  }
  return out;
}

namespace {

// place() over the ranks [first, first + count): the groups of the inner kinds that lie there.
Placement place_ranks(const Scenario& s, std::int64_t first, std::int64_t count) {
  const ParallelPlan& p = s.parallel;
  const Units u = units_of(s);
  const std::int64_t g = u.node;
  const std::int64_t d = u.domain;
  // A dimension's groups start at the ranks inside its stride, once per group of the
  // dimensions outside it.
  const auto shape = [&](std::int64_t size, std::int64_t stride) {
    return worst_group_shape(size, stride, g, d, stride,
                             std::max<std::int64_t>(1, count / (size * stride)), first);
  };
  Placement out;
  // Strides follow the rank order TP (innermost), CP, DP, PP.
  out.tp = shape(p.tp, 1);
  out.cp = shape(p.cp, p.tp);
  out.dp = shape(p.dp, p.tp * p.cp);
  // The pipeline and embedding groups span the stages: every one, from rank 0.
  out.pp = worst_group_shape(p.pp, p.tp * p.cp * p.dp, g, d, p.tp * p.cp * p.dp, 1);
  if (p.sharding == Sharding::HybridShard) {
    // The shard group's DP ranks and their CP peers, which hold the same weights: torchtitan
    // shards HSDP over its flattened "dp_shard_cp" mesh dimension and replicates over
    // "dp_replicate" (torchtitan/models/llama3/infra/parallelize.py, dp_mesh_dim_names). Left
    // out, the CP ranks' gradients would never be summed.
    const std::int64_t shard = hybrid_shard_size(s);
    out.shard = shape(shard * p.cp, p.tp);
    out.replicate = shape(p.dp / shard, p.tp * p.cp * shard);
  } else {
    // CP ranks hold the same weights as their DP peers and join their gradient reduction.
    out.shard = shape(p.dp * p.cp, p.tp);
    out.replicate = GroupShape{};
  }
  out.ep = shape(p.ep, p.tp * p.cp);
  out.expert_shard = p.ep > 1 ? shape(p.dp * p.cp / p.ep, p.tp * p.cp * p.ep) : out.shard;
  // The embedding groups pair each rank of the first stage with its peer on the last.
  out.embedding = p.pp > 1 ? pipeline_pair(s, p.pp - 1) : GroupShape{};
  // Every rank is in one group of each kind, and a kind's groups call together: each host's
  // GPUs of the ranks placed (the job's, or a stage's) share its NICs among the groups
  // (GroupShape::host_active). The pairs of the pipeline's sends and of the embedding are a
  // stage's (pipeline_pair).
  for (GroupShape* kind : {&out.tp, &out.cp, &out.dp, &out.pp, &out.shard, &out.replicate, &out.ep,
                           &out.expert_shard}) {
    set_host_active(*kind, std::min(g, count));
  }
  return out;
}

}  // namespace

Placement place(const Scenario& s) { return place_ranks(s, 0, s.gpus); }

GroupShape pipeline_pair(const Scenario& s, std::int64_t stage) {
  const ParallelPlan& p = s.parallel;
  const Units u = units_of(s);
  const std::int64_t ranks = p.tp * p.cp * p.dp;
  // A pair from each rank of the stage: `ranks` starts from the stage's first rank, one group;
  // from the last stage back to the first, from each rank of the first (the embedding group).
  GroupShape pair = stage + 1 == p.pp
                        ? worst_group_shape(2, stage * ranks, u.node, u.domain, ranks, 1)
                        : worst_group_shape(2, ranks, u.node, u.domain, ranks, 1, stage * ranks);
  // The stage's ranks send together: those of each host it holds (all of it where a stage fills
  // hosts; a host shared with another stage sends from this one's ranks only).
  set_host_active(pair, std::min(u.node, ranks));
  return pair;
}

Placement place(const Scenario& s, std::int64_t stage) {
  const ParallelPlan& p = s.parallel;
  const std::int64_t ranks = p.tp * p.cp * p.dp;
  return place_ranks(s, stage * ranks, ranks);
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
