// Placement on NVLink domains larger than a node (gb200-nvl72: 4-GPU trays, 72-GPU domains),
// and an end-to-end run that keeps a 16-way TP group on NVLink.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "trainsim/parallel/placement.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/simulate.hpp"

#include "sim/io/hardware_loader.hpp"
#include "sim/io/scenario_loader.hpp"

using namespace trainsim;
using namespace trainsim::parallel;

namespace {

Scenario nvl72(std::int64_t gpus, std::int64_t tp, std::int64_t pp) {
  Scenario s;
  s.hardware = io::load_hardware("gb200-nvl72");
  s.gpus = gpus;
  s.parallel.tp = tp;
  s.parallel.pp = pp;
  s.parallel.dp = gpus / (tp * pp);
  return s;
}

}  // namespace

TEST_CASE("placement: TP 16 and TP 72 on GB200 NVL72 span trays but one NVLink domain",
          "[parallel]") {
  for (const std::int64_t tp : {16, 72}) {
    const Placement p = place(nvl72(144, tp, 1));
    REQUIRE(p.tp.ranks == tp);
    REQUIRE(p.tp.nodes == tp / 4);  // 4 GPUs per tray
    REQUIRE(p.tp.ranks_per_node == 4);
    REQUIRE(p.tp.domains == 1);
    REQUIRE(p.tp.ranks_per_domain == tp);
  }
  // DP under tp 16 on 144 GPUs: ranks 0, 16, ..., 128; ranks 0-64 (5) in the first domain of
  // 72, 80-128 (4) in the second; one per tray.
  const Placement p = place(nvl72(144, 16, 1));
  REQUIRE(p.dp.ranks == 9);
  REQUIRE(p.dp.nodes == 9);
  REQUIRE(p.dp.ranks_per_node == 1);
  REQUIRE(p.dp.domains == 2);
  REQUIRE(p.dp.ranks_per_domain == 5);
}

TEST_CASE("placement: pipeline stages share a domain or not by their stride", "[parallel]") {
  // 72 GPUs, tp 4, pp 2: stages 36 ranks apart, on trays 0 and 9 of one rack.
  const Placement in_rack = place(nvl72(72, 4, 2));
  REQUIRE(in_rack.pp.nodes == 2);
  REQUIRE(in_rack.pp.domains == 1);
  // 144 GPUs, tp 4, pp 2: stages 72 ranks apart, one per rack.
  const Placement racks = place(nvl72(144, 4, 2));
  REQUIRE(racks.pp.nodes == 2);
  REQUIRE(racks.pp.domains == 2);
  REQUIRE(racks.pp.ranks_per_domain == 1);
}

TEST_CASE("placement: a cluster smaller than a domain is one domain", "[parallel]") {
  // 16 GPUs on 4 trays: everything in one domain.
  const Placement p = place(nvl72(16, 1, 1));
  REQUIRE(p.dp.nodes == 4);
  REQUIRE(p.dp.domains == 1);
  REQUIRE(p.dp.ranks_per_domain == 16);
}

TEST_CASE("placement: with one node per domain the domains are the nodes", "[parallel]") {
  Scenario s;
  s.hardware.node.gpus_per_node = 8;
  s.gpus = 256;
  s.parallel.tp = 2;
  s.parallel.cp = 2;
  s.parallel.dp = 64;
  const Placement p = place(s);
  for (const GroupShape* g : {&p.tp, &p.cp, &p.dp, &p.pp, &p.shard}) {
    REQUIRE(g->domains == g->nodes);
    REQUIRE(g->ranks_per_domain == g->ranks_per_node);
  }
}

TEST_CASE("placement: a TP-16 run on gb200-nvl72 keeps TP on NVLink end to end",
          "[parallel][report]") {
  // GPT-3 175B (96 heads, 96 KV heads: both divisible by 16) on two racks, tp 16, dp 9.
  // Llama 3 70B has 8 KV heads, which tp 16 cannot split (validate.cpp, Megatron's rule).
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "gb200-nvl72", "cluster": {"gpus": 144}, "model": "gpt3-175b",
    "training": {"seq_len": 2048, "global_batch": 72, "micro_batch": 1},
    "parallel": {"tp": 16, "sequence_parallel": true, "sharding": "zero1"}
  })");
  const Scenario s = io::scenario_from_document(doc);
  REQUIRE(s.parallel.dp == 9);
  REQUIRE(validate(s).empty());
  const auto run = report::simulate(s);
  REQUIRE(run.report.tokens_per_s > 0.0);
  bool saw_tp = false;
  for (const auto& c : run.report.collectives) {
    if (c.group != "tp") continue;
    saw_tp = true;
    REQUIRE(c.ranks == 16);
    REQUIRE(c.nodes == 4);  // four trays, one NVLink domain
    REQUIRE(c.algorithm != "tree");
  }
  REQUIRE(saw_tp);

  // The same plan with every tray its own NVLink domain puts TP on the 400 Gb/s NICs: slower.
  Scenario trays = s;
  trays.hardware.node.nvlink_domain_gpus = 4;
  const auto slow = report::simulate(trays);
  REQUIRE(slow.report.iteration_time > run.report.iteration_time);
}
