#include <catch2/catch.hpp>

#include "trainsim/parallel/placement.hpp"

using namespace trainsim::parallel;

namespace {

Scenario scenario(std::int64_t gpus, std::int64_t tp, std::int64_t pp, std::int64_t cp) {
  Scenario s;
  s.hardware.node.gpus_per_node = 8;
  s.gpus = gpus;
  s.parallel.tp = tp;
  s.parallel.pp = pp;
  s.parallel.cp = cp;
  s.parallel.dp = gpus / (tp * pp * cp);
  return s;
}

}  // namespace

TEST_CASE("placement: pure data parallelism puts 8 ranks of the DP group on each node",
          "[parallel]") {
  // 128 GPUs, tp = pp = cp = 1: DP stride 1, 128 ranks over 16 nodes of 8.
  const Placement p = place(scenario(128, 1, 1, 1));
  REQUIRE(p.dp.ranks == 128);
  REQUIRE(p.dp.nodes == 16);
  REQUIRE(p.dp.ranks_per_node == 8);
  REQUIRE(p.tp.ranks == 1);
  REQUIRE(p.tp.nodes == 1);
}

TEST_CASE("placement: TP innermost stays in a node and thins the DP group per node",
          "[parallel]") {
  // 256 GPUs, tp 2: TP ranks {0,1} share a node; DP stride 2, 128 ranks, 8/2 = 4 per node,
  // 128/4 = 32 nodes.
  const Placement p = place(scenario(256, 2, 1, 1));
  REQUIRE(p.tp.ranks == 2);
  REQUIRE(p.tp.nodes == 1);
  REQUIRE(p.tp.ranks_per_node == 2);
  REQUIRE(p.dp.ranks == 128);
  REQUIRE(p.dp.ranks_per_node == 4);
  REQUIRE(p.dp.nodes == 32);
}

TEST_CASE("placement: a group with stride of a node or more has one rank per node",
          "[parallel]") {
  // 256 GPUs, tp 8, pp 4: dp = 8 with stride 8 -> 8 nodes, 1 per node; pp stride 64 -> 4 nodes.
  const Placement p = place(scenario(256, 8, 4, 1));
  REQUIRE(p.dp.ranks == 8);
  REQUIRE(p.dp.nodes == 8);
  REQUIRE(p.dp.ranks_per_node == 1);
  REQUIRE(p.pp.ranks == 4);
  REQUIRE(p.pp.nodes == 4);
  // TP 16 spans two nodes of 8.
  const Placement q = place(scenario(256, 16, 1, 1));
  REQUIRE(q.tp.nodes == 2);
  REQUIRE(q.tp.ranks_per_node == 8);
}

TEST_CASE("placement: CP sits between TP and DP", "[parallel]") {
  // tp 2, cp 2 on 64 GPUs: CP stride 2 -> ranks {0,2}: one node, 2 per node;
  // DP stride 4, 16 ranks, 2 per node, 8 nodes.
  const Placement p = place(scenario(64, 2, 1, 2));
  REQUIRE(p.cp.ranks == 2);
  REQUIRE(p.cp.nodes == 1);
  REQUIRE(p.dp.ranks == 16);
  REQUIRE(p.dp.ranks_per_node == 2);
  REQUIRE(p.dp.nodes == 8);
}

TEST_CASE("placement: a cluster smaller than a node packs into one node", "[parallel]") {
  const Placement p = place(scenario(4, 1, 1, 1));
  REQUIRE(p.dp.ranks == 4);
  REQUIRE(p.dp.nodes == 1);
  REQUIRE(p.dp.ranks_per_node == 4);
}

TEST_CASE("placement: strides that do not divide the node are counted exactly", "[parallel]") {
  // 6 ranks 3 apart on 8-GPU nodes: ranks 0,3,6 | 9,12,15 -> nodes 0,0,0,1,1,1: 2 nodes, 3 each.
  const GroupShape g = group_shape(6, 3, 8);
  REQUIRE(g.nodes == 2);
  REQUIRE(g.ranks_per_node == 3);
}

TEST_CASE("placement: groups whose starts fall differently in their nodes take the worst",
          "[parallel]") {
  // tp 2, dp 3, pp 4 on 24 GPUs of 8-GPU nodes: DP groups of ranks 2 apart start at 0, 1, 6, 7,
  // 12, 13, 18 and 19. Rank 0's, 0-2-4, is in node 0; 6-8-10 has 6 in node 0 and 8, 10 in node
  // 1; 7-9-11 and 12-14-16 likewise split 1 + 2; 18-20-22 is in node 2. The worst: 2 nodes.
  Scenario s = scenario(24, 2, 4, 1);
  REQUIRE(s.parallel.dp == 3);
  REQUIRE(group_shape(3, 2, 8).nodes == 1);
  const Placement p = place(s);
  REQUIRE(p.dp.ranks == 3);
  REQUIRE(p.dp.nodes == 2);
  REQUIRE(p.dp.ranks_per_node == 2);
  REQUIRE(p.dp.domains == 2);  // one node per domain
  REQUIRE(p.dp.ranks_per_domain == 2);

  // The embedding's groups pair a first-stage rank with its last-stage peer: tp 1, dp 3, pp 3
  // on 9 GPUs pairs 0-6, 1-7 and 2-8; rank 0's pair is in node 0, 2-8 spans nodes 0 and 1.
  Scenario e = scenario(9, 1, 3, 1);
  REQUIRE(e.parallel.dp == 3);
  const Placement pe = place(e);
  REQUIRE(pe.embedding.ranks == 2);
  REQUIRE(pe.embedding.nodes == 2);
  REQUIRE(pe.embedding.ranks_per_node == 1);
}

TEST_CASE("placement: hybrid_shard shards within a node and replicates across", "[parallel]") {
  Scenario s = scenario(64, 1, 1, 1);
  s.parallel.sharding = Sharding::HybridShard;
  // Default shard group: the 8 DP ranks of a node; replicas: 64 / 8 = 8, one per node.
  const Placement p = place(s);
  REQUIRE(p.shard.ranks == 8);
  REQUIRE(p.shard.nodes == 1);
  REQUIRE(p.replicate.ranks == 8);
  REQUIRE(p.replicate.nodes == 8);
  REQUIRE(p.replicate.ranks_per_node == 1);
}

TEST_CASE("placement: a pipeline send joins two neighbouring stages, priced where they sit",
          "[parallel]") {
  // 16 GPUs on two 8-GPU hosts, tp 2, pp 4, dp 2: a stage is 4 consecutive ranks, so stages 0
  // and 1 fill host 0 and stages 2 and 3 host 1. Rank r of stage i sends to rank r + 4: inside
  // host 0 between stages 0 and 1, across hosts between 1 and 2 (ranks 4-7 to 8-11), inside
  // host 1 between 2 and 3. The whole pipeline group (ranks 0, 4, 8, 12) spans both hosts,
  // which is how every send used to be priced.
  const Scenario s = scenario(16, 2, 4, 1);
  REQUIRE(place(s).pp.nodes == 2);
  CHECK(pipeline_pair(s, 0).nodes == 1);
  CHECK(pipeline_pair(s, 0).ranks_per_node == 2);
  CHECK(pipeline_pair(s, 1).nodes == 2);
  CHECK(pipeline_pair(s, 1).ranks_per_node == 1);
  CHECK(pipeline_pair(s, 2).nodes == 1);
  // The last stage's neighbour under interleaving is the first: ranks 12-15 and 0-3, across
  // hosts (the embedding group's pairs).
  CHECK(pipeline_pair(s, 3).nodes == 2);
  CHECK(same_shape(pipeline_pair(s, 3), place(s).embedding));
  // A stage of 3 ranks (tp 1, pp 4, dp 3 on 12 GPUs): stage 1 holds ranks 3-5, whose peers
  // 6-8 sit on host 0 for rank 3 and 4 (6, 7) and on host 1 for rank 5 (8): the pairs differ,
  // and the worst, across hosts, is the one priced.
  const Scenario odd = scenario(12, 1, 4, 1);
  const GroupShape pair = pipeline_pair(odd, 1);
  CHECK(pair.nodes == 2);
  REQUIRE(pair.variants.size() == 1);
  CHECK(pair.variants[0].nodes == 1);
}

TEST_CASE("placement: a kind's groups call together, every GPU of a host beside them",
          "[parallel]") {
  // 64 GPUs, tp 8, pp 2: each host's 8 GPUs are in 8 DP groups (one rank per host each), all
  // reducing at once (GroupShape::host_active = 8, the host's GPUs); the pipeline's send pairs
  // are a stage's 32 ranks, 8 on each of its hosts.
  const Scenario s = scenario(64, 8, 2, 1);
  const Placement p = place(s);
  REQUIRE(p.dp.ranks_per_node == 1);
  CHECK(p.dp.host_active == 8);
  CHECK(p.tp.host_active == 8);
  CHECK(p.shard.host_active == 8);
  CHECK(pipeline_pair(s, 0).host_active == 8);
  // tp 2, pp 8 on 16 GPUs: a stage holds 2 ranks, so a host's pairs send from 2 GPUs at a time.
  const Scenario small = scenario(16, 2, 8, 1);
  CHECK(pipeline_pair(small, 3).host_active == 2);
  // Fewer GPUs than a host: the job's only.
  CHECK(place(scenario(4, 1, 1, 1)).dp.host_active == 4);
  // A stage's groups: dp 3, pp 8 on 24 GPUs: a stage's 3 ranks call beside each other only.
  CHECK(place(scenario(24, 1, 8, 1), 2).dp.host_active == 3);
}
