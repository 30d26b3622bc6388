// Placement against brute force: every group of every kind listed from the rank order
// rank = t + tp x (c + cp x (d + dp x p)) (placement.hpp), its hosts and NVLink domains counted
// rank by rank, and the worst taken by the rule docs/placement.md states (most domains, then
// most hosts, then fewest ranks in the least-held domain, then fewest in the most-held domain,
// then in one host), with every other distinct shape of the kind's groups listed as its
// variants. parallel::place must give
// that shape and rank count for every kind (tp, cp, dp, pp, the gradient-reduction group, EP,
// expert data parallelism, the embedding's pairs, hybrid_shard's shard and replica groups), on
// hosts of 4 and 8 GPUs with domains of 1, 2, 3 and 18 hosts, filled whole or in part; and
// parallel::place(scenario, stage) the same over each pipeline stage's own groups.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/parallel/placement.hpp"

using namespace trainsim::parallel;

namespace {

using Fields = std::array<std::int64_t, 5>;  // nodes, per node, domains, per domain, least

struct Shape {
  std::int64_t nodes = 0, per_node = 0, domains = 0, per_domain = 0, least_domain = 0;
  std::set<Fields> all;  // every distinct shape of the kind's groups
};

Fields fields(const GroupShape& g) {
  return {g.nodes, g.ranks_per_node, g.domains, g.ranks_per_domain, g.min_ranks_per_domain};
}

struct Count {
  std::int64_t units = 0, most = 0, fewest = 0;
};

// Units spanned by `ranks`, and the most and the fewest of them in one unit of `unit`
// consecutive ranks (of the units they reach).
Count count(const std::vector<std::int64_t>& ranks, std::int64_t unit) {
  std::map<std::int64_t, std::int64_t> per;
  for (const std::int64_t r : ranks) ++per[r / unit];
  Count out{.units = static_cast<std::int64_t>(per.size()), .most = 0, .fewest = 0};
  for (const auto& [u, n] : per) {
    out.most = std::max(out.most, n);
    out.fewest = out.fewest == 0 ? n : std::min(out.fewest, n);
  }
  return out;
}

struct Coord {
  std::int64_t t = 0, c = 0, r = 0, p = 0;  // TP, CP, DP and pipeline coordinates
};
using Key = std::optional<std::array<std::int64_t, 3>>;

bool worse(const Shape& a, const Shape& b) {
  if (a.domains != b.domains) return a.domains > b.domains;
  if (a.nodes != b.nodes) return a.nodes > b.nodes;
  if (a.least_domain != b.least_domain) return a.least_domain < b.least_domain;
  if (a.per_domain != b.per_domain) return a.per_domain < b.per_domain;
  return a.per_node < b.per_node;
}

Shape worst(const std::vector<std::vector<std::int64_t>>& groups, std::int64_t g, std::int64_t d) {
  Shape out;
  std::set<Fields> all;
  bool first = true;
  for (const auto& ranks : groups) {
    const Count nodes = count(ranks, g);
    const Count domains = count(ranks, d);
    const Shape s{nodes.units, nodes.most, domains.units, domains.most, domains.fewest, {}};
    all.insert({s.nodes, s.per_node, s.domains, s.per_domain, s.least_domain});
    if (first || worse(s, out)) out = s;
    first = false;
  }
  out.all = std::move(all);
  return out;
}

void check(const GroupShape& got, const Shape& want, std::int64_t ranks) {
  CHECK(got.ranks == ranks);
  CHECK(got.nodes == want.nodes);
  CHECK(got.ranks_per_node == want.per_node);
  CHECK(got.domains == want.domains);
  CHECK(got.ranks_per_domain == want.per_domain);
  CHECK(got.min_ranks_per_domain == want.least_domain);
  // The other shapes: each distinct shape once, none repeating the one shown, none nested.
  std::set<Fields> listed = {fields(got)};
  for (const GroupShape& v : got.variants) {
    CHECK(v.ranks == ranks);
    CHECK(v.variants.empty());
    listed.insert(fields(v));
  }
  CHECK(listed.size() == got.variants.size() + 1);
  CHECK(listed == want.all);
}

}  // namespace

TEST_CASE("placement: every kind's shape is the worst of its groups listed rank by rank",
          "[parallel]") {
  std::int64_t plans = 0;
  std::int64_t differs_from_rank0 = 0;
  std::int64_t uneven = 0;
  std::int64_t stage_differs = 0;  // stages whose DP groups take other shapes than the job's
  for (const std::int64_t host : {4, 8})
    for (const std::int64_t hosts_per_domain : {1, 2, 3, 18}) {
      for (const std::int64_t filled : {0, 1, 2, 16}) {
        if (filled > hosts_per_domain) continue;
        for (const std::int64_t gpus : {24, 48, 72, 96, 144}) {
          for (const std::int64_t tp : {1, 2, 3, 4, 6, 8, 16}) {
            for (const std::int64_t cp : {1, 2, 3}) {
              for (const std::int64_t pp : {1, 2, 3, 4}) {
                if (gpus % (tp * cp * pp) != 0) continue;
                const std::int64_t dp = gpus / (tp * cp * pp);
                for (const std::int64_t ep : {1, 2, 3, 4}) {
                  if (dp % ep != 0 || (ep > 1 && cp > 1)) continue;
                  Scenario s;
                  s.hardware.node.gpus_per_node = static_cast<int>(host);
                  s.hardware.node.nvlink_domain_gpus = static_cast<int>(host * hosts_per_domain);
                  s.nodes_per_domain = filled;
                  s.gpus = gpus;
                  s.parallel.tp = tp;
                  s.parallel.cp = cp;
                  s.parallel.pp = pp;
                  s.parallel.dp = dp;
                  s.parallel.ep = ep;
                  const std::int64_t g = host;
                  const std::int64_t d = host * (filled > 0 ? filled : hosts_per_domain);
                  // Every rank's coordinates from rank = t + tp x (c + cp x (r + dp x p)); the
                  // groups of a kind are the ranks that agree on `key` (none for nullopt).
                  const auto groups_by = [&](const auto& key) {
                    std::map<std::array<std::int64_t, 3>, std::vector<std::int64_t>> by;
                    for (std::int64_t rank = 0; rank < gpus; ++rank) {
                      const Coord x{.t = rank % tp,
                                    .c = rank / tp % cp,
                                    .r = rank / (tp * cp) % dp,
                                    .p = rank / (tp * cp * dp)};
                      if (const Key k = key(x)) by[*k].push_back(rank);
                    }
                    std::vector<std::vector<std::int64_t>> out;
                    for (auto& [k, ranks] : by) out.push_back(std::move(ranks));
                    return out;
                  };
                  const auto tp_groups = groups_by([](const Coord& x) -> Key {
                    return std::array{x.c, x.r, x.p};
                  });
                  const auto cp_groups = groups_by([](const Coord& x) -> Key {
                    return std::array{x.t, x.r, x.p};
                  });
                  const auto dp_groups = groups_by([](const Coord& x) -> Key {
                    return std::array{x.t, x.c, x.p};
                  });
                  const auto pp_groups = groups_by([](const Coord& x) -> Key {
                    return std::array{x.t, x.c, x.r};
                  });
                  // The gradient-reduction group: the dp x cp ranks of one TP rank and stage.
                  const auto shard_groups = groups_by([](const Coord& x) -> Key {
                    return std::array<std::int64_t, 3>{x.t, x.p, 0};
                  });
                  // EP: ep consecutive data-parallel ranks (cp 1 here).
                  const auto ep_groups = groups_by([&](const Coord& x) -> Key {
                    return std::array{x.t, x.r / ep, x.p};
                  });
                  // The expert-data-parallel group: the data-parallel ranks holding the same
                  // experts, ep apart (cp 1 here).
                  const auto expert_shard_groups = groups_by([&](const Coord& x) -> Key {
                    return std::array{x.t, x.r % ep, x.p};
                  });
                  // The embedding's pairs: a first-stage rank and its last-stage peer.
                  const auto embedding_groups = groups_by([&](const Coord& x) -> Key {
                    if (x.p != 0 && x.p != pp - 1) return std::nullopt;
                    return std::array{x.t, x.c, x.r};
                  });
                  INFO("domain " << hosts_per_domain << " hosts, filled " << filled << ", gpus "
                                 << gpus << ", tp " << tp << " cp " << cp << " pp " << pp << " dp "
                                 << dp << " ep " << ep);
                  const Placement placed = place(s);
                  ++plans;
                  const Shape want_dp = worst(dp_groups, g, d);
                  check(placed.tp, worst(tp_groups, g, d), tp);
                  check(placed.cp, worst(cp_groups, g, d), cp);
                  check(placed.dp, want_dp, dp);
                  check(placed.pp, worst(pp_groups, g, d), pp);
                  check(placed.shard, worst(shard_groups, g, d), dp * cp);
                  if (cp == 1) check(placed.ep, worst(ep_groups, g, d), ep);
                  if (cp == 1 && ep > 1) {
                    check(placed.expert_shard, worst(expert_shard_groups, g, d), dp / ep);
                  }
                  if (pp > 1) check(placed.embedding, worst(embedding_groups, g, d), 2);
                  // hybrid_shard: FULL_SHARD within `shard` consecutive data-parallel ranks and
                  // all their CP peers (torchtitan's "dp_shard_cp" mesh dimension), replicated
                  // across the dp / shard groups (one per CP rank).
                  for (const std::int64_t group : {0, 2, 3}) {
                    Scenario h = s;
                    h.parallel.sharding = Sharding::HybridShard;
                    h.parallel.shard_group = group;
                    const std::int64_t shard = hybrid_shard_size(h);
                    if (dp % shard != 0) continue;
                    const Placement hp = place(h);
                    check(hp.shard,
                          worst(groups_by([&](const Coord& x) -> Key {
                                  return std::array{x.t, x.r / shard, x.p};
                                }),
                                g, d),
                          shard * cp);
                    check(hp.replicate,
                          worst(groups_by([&](const Coord& x) -> Key {
                                  return std::array{x.t * cp + x.c, x.r % shard, x.p};
                                }),
                                g, d),
                          dp / shard);
                  }
                  // Each stage's own groups (place(s, stage)): the inner kinds over the groups
                  // of that stage's ranks, the pipeline and embedding groups as for the job.
                  const std::int64_t stage_ranks = tp * cp * dp;
                  const auto in_stage = [&](const std::vector<std::vector<std::int64_t>>& all,
                                            std::int64_t stage) {
                    std::vector<std::vector<std::int64_t>> out;
                    for (const auto& ranks : all) {
                      if (ranks.front() / stage_ranks == stage) out.push_back(ranks);
                    }
                    return out;
                  };
                  for (std::int64_t stage = 0; stage < pp; ++stage) {
                    INFO("stage " << stage);
                    const Placement at = place(s, stage);
                    const Shape stage_dp = worst(in_stage(dp_groups, stage), g, d);
                    check(at.tp, worst(in_stage(tp_groups, stage), g, d), tp);
                    check(at.cp, worst(in_stage(cp_groups, stage), g, d), cp);
                    check(at.dp, stage_dp, dp);
                    check(at.shard, worst(in_stage(shard_groups, stage), g, d), dp * cp);
                    if (cp == 1) check(at.ep, worst(in_stage(ep_groups, stage), g, d), ep);
                    if (cp == 1 && ep > 1) {
                      check(at.expert_shard, worst(in_stage(expert_shard_groups, stage), g, d),
                            dp / ep);
                    }
                    check(at.pp, worst(pp_groups, g, d), pp);
                    if (pp > 1) check(at.embedding, worst(embedding_groups, g, d), 2);
                    if (stage_dp.all != want_dp.all) ++stage_differs;
                  }
                  const GroupShape rank0 = group_shape(dp, tp * cp, g, d);
                  if (rank0.nodes != want_dp.nodes || rank0.domains != want_dp.domains) {
                    ++differs_from_rank0;
                  }
                  if (want_dp.least_domain < want_dp.per_domain) ++uneven;
                }
              }
            }
          }
        }
      }
    }
  // The sweep above is not vacuous: it holds plans, and plans whose DP groups differ from rank
  // 0's (tp 3 or 6 on 4-GPU hosts, DP spans across domains of 3 or 18 hosts, ...).
  CHECK(plans > 500);
  CHECK(differs_from_rank0 > 20);
  // ... and plans whose worst DP group holds fewer ranks in one domain than in another.
  CHECK(uneven > 20);
  // ... and stages whose DP groups lie otherwise than the job's as a whole.
  CHECK(stage_differs > 20);
  INFO("plans " << plans << ", differing from rank 0 " << differs_from_rank0 << ", uneven "
                << uneven << ", stages differing " << stage_differs);
  CHECK(uneven < plans);
}
