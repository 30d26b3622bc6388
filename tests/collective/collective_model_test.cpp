// Unit tests of the collective model against NCCL's own numbers (docs/sources.md A.5, A.9;
// the § numbers below are its sections) and the model's properties. Times in the comments are
// microseconds unless marked.
#include "trainsim/collective/collective_model.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/hardware_loader.hpp"
#include "sim/io/json_reader.hpp"

using namespace trainsim;
using namespace trainsim::collective;
using parallel::GroupShape;

namespace {

// A built-in profile with NCCL's formula as is: the measured terms fitted by calibration
// (collective.measured, hardware::MeasuredTerms) dropped, since these tests check NCCL's own
// numbers.
nlohmann::json builtin_json(const std::string& id) {
  auto j = io::parse_json(std::string(*io::builtin_file("hardware_profiles", id)), id);
  j["collective"].erase("measured");
  return j;
}

hardware::HardwareSpec from_json(const nlohmann::json& j) {
  return io::hardware_from_json(j, "mem.json", "");
}

hardware::HardwareSpec nccl_formula(const std::string& id) { return from_json(builtin_json(id)); }

// The setting of the NCCL 2.29.7 TUNING log of §A.9 (eunomia-bpf/nccl-eBPF): 2 ranks on 2
// hosts, one GPU each, socket transport (so no LL128), Intel hosts, current constants, and a
// ring graph of one channel at 2.4 GB/s (the log's Ring AllReduce Simple bandwidth 2.4 =
// busBw x n/nsteps = busBw x 2/2).
CollectiveModel nccl_log_model() {
  auto j = builtin_json("h200-dgx");  // Hopper, Intel host, nccl 2.28 constants
  j["node"]["gpus_per_node"] = 1;
  j["node"]["nvswitch_sharp"] = false;
  j["fabric"]["nics_per_node"] = 1;
  j["collective"]["ll128_enabled"] = false;
  const nlohmann::json one = {{"channels", 1}, {"bw_intra", "2.4 GB/s"}, {"bw_inter", "2.4 GB/s"}};
  const nlohmann::json none = {{"channels", 0}, {"bw_intra", "0 GB/s"}, {"bw_inter", "0 GB/s"}};
  j["collective"]["graphs"] = {{"ring", {{"single_node", one}, {"multi_node", one}}},
                               {"tree", {{"single_node", one}, {"multi_node", one}}},
                               {"nvls", {{"single_node", none}, {"multi_node", none}}}};
  return CollectiveModel(from_json(j));
}

// NCCL's table bandwidth of an entry: the call's transfer time is bytes / algBw (no tree
// correction for Ring/PAT).
double table_gbps(const CollectiveCost& c, double bytes) {
  return bytes / c.transfer.value() / 1e9;
}

const GroupShape kTwoNodes{.ranks = 2, .nodes = 2, .ranks_per_node = 1};

}  // namespace

TEST_CASE("collective: NCCL 2.29.7 log latencies reproduced exactly (§A.9)", "[collective]") {
  const CollectiveModel m = nccl_log_model();
  const Bytes small(64.0);  // 64 / (1 channel x 2 ranks) < 64: no ring plateau
  const auto lat_us = [&](Op op, Algorithm a, Protocol p) {
    const auto c = m.cost_with(op, kTwoNodes, small, a, p);
    REQUIRE(c.has_value());
    return c->latency.value() * 1e6;
  };
  // Ring AR LL: 6.6 + nInter 2(N-1)=2 network steps x 5.0 (ppn = 1 uses Tree's NET LL) = 16.6.
  REQUIRE(lat_us(Op::AllReduce, Algorithm::Ring, Protocol::Ll) == Approx(16.6).epsilon(1e-9));
  // Ring AR Simple: 8.4 + 2 x 14 (Tree NET Simple) = 36.4.
  REQUIRE(lat_us(Op::AllReduce, Algorithm::Ring, Protocol::Simple) == Approx(36.4).epsilon(1e-9));
  // Tree AR LL: 6.8 + 2 x ((ppn-1) x 0.6 + log2(2) x 5.0) = 16.8.
  REQUIRE(lat_us(Op::AllReduce, Algorithm::Tree, Protocol::Ll) == Approx(16.8).epsilon(1e-9));
  // Ring AG LL: 6.6 + (N-1) = 1 network step x 5.0 = 11.6.
  REQUIRE(lat_us(Op::AllGather, Algorithm::Ring, Protocol::Ll) == Approx(11.6).epsilon(1e-9));
  // Broadcast LL: 6.6 + one pipelined hop hwLat[NET][Ring][LL] 2.7 = 9.3.
  REQUIRE(lat_us(Op::Broadcast, Algorithm::Ring, Protocol::Ll) == Approx(9.3).epsilon(1e-9));
  // PAT AG: 8 + log2(2) x 14 / 3.5 + 2.8 x 2 = 17.6.
  REQUIRE(lat_us(Op::AllGather, Algorithm::Pat, Protocol::Simple) == Approx(17.6).epsilon(1e-9));
}

TEST_CASE("collective: NCCL 2.29.7 log bandwidths reproduced exactly (§A.9)", "[collective]") {
  const CollectiveModel m = nccl_log_model();
  const double bytes = 1 << 20;
  const auto bw = [&](Op op, Algorithm a, Protocol p) {
    const auto c = m.cost_with(op, kTwoNodes, Bytes(bytes), a, p);
    REQUIRE(c.has_value());
    return table_gbps(*c, bytes);
  };
  // Ring AR Simple: 1 channel x 2.4 x n/nsteps (2/2) = 2.4.
  REQUIRE(bw(Op::AllReduce, Algorithm::Ring, Protocol::Simple) == Approx(2.4).epsilon(1e-9));
  // Ring AR LL: min(llMaxBw 39, 0.5 x 2.4) x 2/2 = 1.2.
  REQUIRE(bw(Op::AllReduce, Algorithm::Ring, Protocol::Ll) == Approx(1.2).epsilon(1e-9));
  // Ring AG Simple: 2.4 x n/nsteps (2/1) = 4.8.
  REQUIRE(bw(Op::AllGather, Algorithm::Ring, Protocol::Simple) == Approx(4.8).epsilon(1e-9));
  // PAT AG: 4.8 x 0.75 = 3.6.
  REQUIRE(bw(Op::AllGather, Algorithm::Pat, Protocol::Simple) == Approx(3.6).epsilon(1e-9));
  // No LL128 on a socket transport.
  REQUIRE_FALSE(
      m.cost_with(Op::AllReduce, kTwoNodes, Bytes(bytes), Algorithm::Ring, Protocol::Ll128));
}

TEST_CASE("collective: §A.5 worked latency table (Hopper, IB, Intel, current constants)",
          "[collective]") {
  // h200-dgx: Hopper, Intel hosts, nccl 2.28 constants: the setting of the §A.5 table.
  const CollectiveModel m(nccl_formula("h200-dgx"));
  const Bytes tiny(64.0);  // below every plateau threshold
  const auto lat_us = [&](const GroupShape& g, Algorithm a, Protocol p) {
    const auto c = m.cost_with(Op::AllReduce, g, tiny, a, p);
    REQUIRE(c.has_value());
    return c->latency.value() * 1e6;
  };
  SECTION("1 node x 8 GPUs") {
    const GroupShape g{.ranks = 8, .nodes = 1, .ranks_per_node = 8};
    // Ring: base + nsteps 14 x NVLink hop. LL 6.6 + 14 x 0.6 = 15.0; LL128 14 + 14 x 1.9 =
    // 40.6; Simple 8.4 + 14 x 3.4 = 56.0.
    REQUIRE(lat_us(g, Algorithm::Ring, Protocol::Ll) == Approx(15.0).epsilon(1e-9));
    REQUIRE(lat_us(g, Algorithm::Ring, Protocol::Ll128) == Approx(40.6).epsilon(1e-9));
    REQUIRE(lat_us(g, Algorithm::Ring, Protocol::Simple) == Approx(56.0).epsilon(1e-9));
    // Tree: base + 2 x 7 intra hops. LL 6.8 + 14 x 0.6 = 15.2; Simple 8.4 + 14 x 4 = 64.4.
    REQUIRE(lat_us(g, Algorithm::Tree, Protocol::Ll) == Approx(15.2).epsilon(1e-9));
    REQUIRE(lat_us(g, Algorithm::Tree, Protocol::Simple) == Approx(64.4).epsilon(1e-9));
    // NVLS: hwLat NVLink 25.
    REQUIRE(lat_us(g, Algorithm::Nvls, Protocol::Simple) == Approx(25.0).epsilon(1e-9));
    // No NVLSTree on one node.
    REQUIRE_FALSE(m.cost_with(Op::AllReduce, g, tiny, Algorithm::NvlsTree, Protocol::Simple));
  }
  SECTION("16 nodes x 8 GPUs (n = 128)") {
    const GroupShape g{.ranks = 128, .nodes = 16, .ranks_per_node = 8};
    // Ring, nsteps 254, nInter 30: LL 6.6 + 224 x max(0.6, 1.0) + 30 x 2.7 = 311.6.
    REQUIRE(lat_us(g, Algorithm::Ring, Protocol::Ll) == Approx(311.6).epsilon(1e-9));
    // LL128 14 + 224 x max(1.9, 1.0) + 30 x 4.0 = 559.6.
    REQUIRE(lat_us(g, Algorithm::Ring, Protocol::Ll128) == Approx(559.6).epsilon(1e-9));
    // Simple 8.4 + 224 x max(3.4, 3 x 1.0) + 30 x 14 = 1190.0.
    REQUIRE(lat_us(g, Algorithm::Ring, Protocol::Simple) == Approx(1190.0).epsilon(1e-9));
    // Tree LL 6.8 + 2 x (7 x 0.6 + log2(16) = 4 x 5) = 55.2; Simple 8.4 + 2 x (7 x 4 + 4 x 14)
    // = 176.4.
    REQUIRE(lat_us(g, Algorithm::Tree, Protocol::Ll) == Approx(55.2).epsilon(1e-9));
    REQUIRE(lat_us(g, Algorithm::Tree, Protocol::Simple) == Approx(176.4).epsilon(1e-9));
    // NVLSTree 25 + 2 x 4 x 20.9 = 192.2.
    REQUIRE(lat_us(g, Algorithm::NvlsTree, Protocol::Simple) == Approx(192.2).epsilon(1e-9));
    // Multi-node NVLS needs IB SHARP, which the profile lacks.
    REQUIRE_FALSE(m.cost_with(Op::AllReduce, g, tiny, Algorithm::Nvls, Protocol::Simple));
  }
  SECTION("ring plateau: x1.4 on Ring Simple AllReduce across nodes at large sizes") {
    const GroupShape g{.ranks = 128, .nodes = 16, .ranks_per_node = 8};
    // 1 MiB / (8 channels x 128 ranks) = 1024 B >= 64: 1190 x 1.4 = 1666.
    const auto c = m.cost_with(Op::AllReduce, g, Bytes(1 << 20), Algorithm::Ring, Protocol::Simple);
    REQUIRE(c->latency.value() * 1e6 == Approx(1666.0).epsilon(1e-9));
  }
}

TEST_CASE("collective: NCCL 2.20 counts 2N network steps in a Ring AllReduce, 2.23+ 2(N-1)",
          "[collective]") {
  // h100-dgx carries NCCL 2.20's constants, h200-dgx 2.28's; both Hopper DGX nodes with Intel
  // hosts, so every other term below is equal. 64 B: below the ring plateau threshold.
  // Ring Simple AllReduce latency = base 8.4 + (nsteps - nInter) x max(NVLink 3.4, net
  // overhead 1 x 3) + nInter x (NET Ring Simple 14 + plugin 0); nsteps = 2(n-1) (§A.3).
  const CollectiveModel v220(nccl_formula("h100-dgx"));
  const CollectiveModel v228(nccl_formula("h200-dgx"));
  const auto lat_us = [](const CollectiveModel& m, const GroupShape& g) {
    const auto c = m.cost_with(Op::AllReduce, g, Bytes(64.0), Algorithm::Ring, Protocol::Simple);
    REQUIRE(c.has_value());
    return c->latency.value() * 1e6;
  };
  const GroupShape two{.ranks = 16, .nodes = 2, .ranks_per_node = 8};
  const GroupShape four{.ranks = 32, .nodes = 4, .ranks_per_node = 8};
  // 2.20, nInter = 2N: 2 nodes 8.4 + 26 x 3.4 + 4 x 14 = 152.8; 4 nodes 8.4 + 54 x 3.4 + 8 x 14
  // = 304.0.
  REQUIRE(lat_us(v220, two) == Approx(152.8).epsilon(1e-9));
  REQUIRE(lat_us(v220, four) == Approx(304.0).epsilon(1e-9));
  // 2.28, nInter = 2(N-1): 8.4 + 28 x 3.4 + 2 x 14 = 131.6; 8.4 + 56 x 3.4 + 6 x 14 = 282.8.
  REQUIRE(lat_us(v228, two) == Approx(131.6).epsilon(1e-9));
  REQUIRE(lat_us(v228, four) == Approx(282.8).epsilon(1e-9));
  // AllGather keeps N-1 network steps in both: nsteps n-1 = 15, Simple 8.4 + 14 x 3.4 + 1 x 14
  // = 70.0 on 2 nodes.
  const auto ag =
      v220.cost_with(Op::AllGather, two, Bytes(64.0), Algorithm::Ring, Protocol::Simple);
  REQUIRE(ag.has_value());
  REQUIRE(ag->latency.value() * 1e6 == Approx(70.0).epsilon(1e-9));
}

TEST_CASE("collective: with NCCL's model as is, Tree LL and LL128 keep NCCL's own times",
          "[collective]") {
  // The bound that keeps a measured LL or LL128 call from outrunning the measured Simple call
  // divided by its payload factor took Tree Simple's time, whose per-size correction is not
  // LL128's (§A.1 step 2), and so changed NCCL's own Tree times. v100-dgx (NCCL 2.20, Volta),
  // 64 nodes of 8, 16 MiB AllReduce, Tree LL128 (§A.4): bus bandwidth min(0.92 x 4 x 12,
  // 4 x 10) = 40, min(40 x 120/128, 4 x 20) = 37.5, x 0.5 = 18.75 GB/s, x the LL128 correction
  // 0.9 at 16 MiB (i = 18) = 16.875 GB/s: 16,777,216 B in 994.2 us; latency 14 + 2 x (7 x 1.25
  // + 6 x 8.5) = 133.5 us; 1,127.7 us in all (it was 1,436.1: Tree Simple's 1,198.4 us / 0.92).
  const CollectiveModel m(nccl_formula("v100-dgx"));
  const GroupShape g{.ranks = 512, .nodes = 64, .ranks_per_node = 8};
  const Bytes bytes(16777216.0);
  const auto c = m.cost_with(Op::AllReduce, g, bytes, Algorithm::Tree, Protocol::Ll128);
  REQUIRE(c.has_value());
  CHECK(c->latency.value() * 1e6 == Approx(133.5).epsilon(1e-9));
  CHECK(c->transfer.value() * 1e6 == Approx(16777216.0 / 16.875e3).epsilon(1e-9));
  // NCCL picks it itself there, and the call costs the same.
  const CollectiveCost chosen = m.cost(Op::AllReduce, g, bytes);
  CHECK(chosen.algorithm == Algorithm::Tree);
  CHECK(chosen.protocol == Protocol::Ll128);
  CHECK(chosen.time.value() == Approx(c->time.value()).epsilon(1e-12));
}

TEST_CASE("collective: the fastest eligible (algorithm, protocol) is chosen", "[collective]") {
  const CollectiveModel m(nccl_formula("h100-dgx"));
  const GroupShape node{.ranks = 8, .nodes = 1, .ranks_per_node = 8};
  for (const double bytes : {8.0, 4096.0, 1048576.0, 1073741824.0}) {
    const CollectiveCost best = m.cost(Op::AllReduce, node, Bytes(bytes));
    for (const Algorithm a : {Algorithm::Tree, Algorithm::Ring, Algorithm::Nvls}) {
      for (const Protocol p : {Protocol::Ll, Protocol::Ll128, Protocol::Simple}) {
        if (const auto c = m.cost_with(Op::AllReduce, node, Bytes(bytes), a, p)) {
          REQUIRE(best.time <= c->time);
        }
      }
    }
  }
  // Small messages take LL, large ones NVLS (Simple) on 8 H100s.
  REQUIRE(m.cost(Op::AllReduce, node, Bytes(8.0)).protocol == Protocol::Ll);
  REQUIRE(m.cost(Op::AllReduce, node, Bytes(1 << 30)).algorithm == Algorithm::Nvls);
  // The parts sum to the total.
  const auto c = m.cost(Op::AllReduce, node, Bytes(1 << 30));
  REQUIRE((c.latency + c.transfer).value() == Approx(c.time.value()).epsilon(1e-12));
}

TEST_CASE("collective: one rank or zero bytes cost nothing", "[collective]") {
  const CollectiveModel m(nccl_formula("h100-dgx"));
  const GroupShape one{.ranks = 1, .nodes = 1, .ranks_per_node = 1};
  for (const Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::Broadcast, Op::Reduce,
                      Op::AllToAll, Op::SendRecv}) {
    const auto c = m.cost(op, one, Bytes(1e9));
    REQUIRE(c.time.value() == 0.0);
    REQUIRE(c.algorithm == Algorithm::None);
    REQUIRE(c.nvlink_bytes.value() == 0.0);
    REQUIRE(c.network_bytes.value() == 0.0);
    REQUIRE(m.cost(op, GroupShape{.ranks = 8, .nodes = 1, .ranks_per_node = 8}, Bytes(0.0))
                .time.value() == 0.0);
  }
}

TEST_CASE("collective: time never decreases with bytes", "[collective]") {
  for (const char* id : {"v100-dgx", "a100-dgx", "h100-dgx", "h200-dgx", "b200-dgx"}) {
    const CollectiveModel m(nccl_formula(id));
    for (const GroupShape& g : {GroupShape{8, 1, 8}, GroupShape{4, 1, 4}, GroupShape{16, 2, 8},
                                GroupShape{256, 32, 8}, GroupShape{64, 64, 1}}) {
      for (const Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::Broadcast,
                          Op::Reduce, Op::AllToAll, Op::SendRecv}) {
        Seconds previous(0.0);
        for (double bytes = 1.0; bytes <= 16.0 * (1 << 30); bytes *= 2.0) {
          const Seconds t = m.cost(op, g, Bytes(bytes)).time;
          INFO(id << " " << to_string(op) << " ranks " << g.ranks << " bytes " << bytes);
          REQUIRE(t >= previous);
          previous = t;
        }
      }
    }
  }
}

TEST_CASE("collective: more bandwidth is never slower", "[collective]") {
  auto j = builtin_json("h100-dgx");
  const CollectiveModel base(from_json(j));
  // Double every graph speed (NVLink and network sides), and the NICs and the NVLink that bound
  // them (hardware_loader.hpp, check_network_carries_graphs).
  j["fabric"]["nic_bandwidth"] = "800 Gb/s";
  j["node"]["nvlink_bandwidth_per_direction"] = "900 GB/s";
  for (const char* algo : {"ring", "tree", "nvls"}) {
    for (const char* where : {"single_node", "multi_node"}) {
      for (const char* side : {"bw_intra", "bw_inter"}) {
        auto& v = j["collective"]["graphs"][algo][where][side];
        const double gbps = std::stod(v.get<std::string>());
        v = std::to_string(2.0 * gbps) + " GB/s";
      }
    }
  }
  const CollectiveModel fast(from_json(j));
  for (const GroupShape& g : {GroupShape{8, 1, 8}, GroupShape{128, 16, 8}, GroupShape{32, 32, 1}}) {
    for (const Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::Broadcast,
                        Op::AllToAll, Op::SendRecv}) {
      for (double bytes = 8.0; bytes <= 8.0 * (1 << 30); bytes *= 16.0) {
        REQUIRE(fast.cost(op, g, Bytes(bytes)).time <= base.cost(op, g, Bytes(bytes)).time);
      }
    }
  }
}

TEST_CASE("collective: ring bus bandwidth never exceeds the physical link rate", "[collective]") {
  // Only NVLS (in-switch reduction: the switch does the adds, busbw is "the flat bandwidth you
  // would need", nccl-tests#212) and the 2-node tree (nccl-tests' AllReduce factor 2(n-1)/n
  // assumes ring traffic) may exceed it. Ring-only ops stay under NVLink per direction on one
  // node and under the node's NIC bandwidth across nodes.
  for (const char* id : {"v100-dgx", "a100-dgx", "h100-dgx", "b200-dgx"}) {
    const auto hw = nccl_formula(id);
    const CollectiveModel m(hw);
    const double nvlink = hw.node.nvlink_bandwidth_per_direction.value();
    const double nics = hw.fabric.nics_per_node * hw.fabric.nic_bandwidth.value();
    for (const Op op : {Op::AllGather, Op::ReduceScatter, Op::Broadcast, Op::Reduce}) {
      for (double bytes = 1024.0; bytes <= 8.0 * (1 << 30); bytes *= 8.0) {
        const auto single = m.cost(op, GroupShape{8, 1, 8}, Bytes(bytes));
        if (single.algorithm == Algorithm::Ring) REQUIRE(single.busbw.value() <= nvlink);
        const auto multi = m.cost(op, GroupShape{64, 8, 8}, Bytes(bytes));
        REQUIRE(multi.busbw.value() <= nics);
      }
    }
    // AllReduce forced to Ring, too.
    const auto ring = m.cost_with(Op::AllReduce, GroupShape{8, 1, 8}, Bytes(8.0 * (1 << 30)),
                                  Algorithm::Ring, Protocol::Simple);
    REQUIRE(ring->busbw.value() <= nvlink);
  }
}

TEST_CASE("collective: groups with fewer ranks per node than GPUs", "[collective]") {
  const CollectiveModel m(nccl_formula("h100-dgx"));
  // A DP group of stride 8: one rank per node on 16 nodes. Its rank uses one of the node's 8
  // NICs: ring graph 8 channels x 48 GB/s x 1/8 = 48 GB/s of bus bandwidth. AllGather of 1 GiB,
  // Ring Simple (NCCL 2.20: no PAT): algBw = 48 x 16/15; transfer = 2^30 x 15/16 / 48e9.
  const GroupShape dp{.ranks = 16, .nodes = 16, .ranks_per_node = 1};
  const double bytes = 1 << 30;
  const auto ring = m.cost_with(Op::AllGather, dp, Bytes(bytes), Algorithm::Ring, Protocol::Simple);
  REQUIRE(ring->transfer.value() == Approx(bytes * 15.0 / 16.0 / 48e9).epsilon(1e-12));
  // Every send crosses the network: (n-1)/n of the buffer.
  REQUIRE(ring->network_bytes.value() == Approx(bytes * 15.0 / 16.0).epsilon(1e-12));
  REQUIRE(ring->nvlink_bytes.value() == Approx(0.0).margin(1e-6));
  // NVLS needs at least two ranks on a node.
  REQUIRE_FALSE(
      m.cost_with(Op::AllReduce, dp, Bytes(bytes), Algorithm::NvlsTree, Protocol::Simple));
  // The cost is O(1) in the group size: a 2^20-rank group costs the same to evaluate.
  const auto huge = m.cost(Op::AllGather, GroupShape{1 << 20, 1 << 17, 8}, Bytes(bytes));
  REQUIRE(huge.time.value() > 0.0);
}

TEST_CASE("collective: AllToAll and SendRecv from link bandwidths", "[collective]") {
  const CollectiveModel m(nccl_formula("h100-dgx"));
  const double bytes = 1 << 30;
  // Latency: ring Simple base 8.4 + one hop (NVLink 3.4 on a node, NET 14 across nodes).
  SECTION("AllToAll on one node: 7/8 of the buffer over NVLink at the ring's 12 x 30 GB/s") {
    const auto c = m.cost(Op::AllToAll, GroupShape{8, 1, 8}, Bytes(bytes));
    REQUIRE(c.algorithm == Algorithm::P2p);
    REQUIRE(c.latency.value() == Approx(11.8e-6).epsilon(1e-9));
    REQUIRE(c.transfer.value() == Approx(bytes * 7.0 / 8.0 / 360e9).epsilon(1e-12));
  }
  SECTION("AllToAll on 4 nodes: 24/32 of the buffer over the rank's 48 GB/s NIC share") {
    // NVLink part 7/32 at 360 GB/s is faster than the network part 24/32 at 384/8 = 48 GB/s.
    const auto c = m.cost(Op::AllToAll, GroupShape{32, 4, 8}, Bytes(bytes));
    REQUIRE(c.latency.value() == Approx(22.4e-6).epsilon(1e-9));
    REQUIRE(c.transfer.value() == Approx(bytes * 24.0 / 32.0 / 48e9).epsilon(1e-12));
    REQUIRE(c.busbw.value() == Approx(c.algbw.value() * 31.0 / 32.0).epsilon(1e-12));
  }
  SECTION("SendRecv across nodes at one NIC's 48 GB/s, on a node at 360 GB/s") {
    const auto net = m.cost(Op::SendRecv, GroupShape{2, 2, 1}, Bytes(bytes));
    REQUIRE(net.transfer.value() == Approx(bytes / 48e9).epsilon(1e-12));
    const auto nv = m.cost(Op::SendRecv, GroupShape{2, 1, 2}, Bytes(bytes));
    REQUIRE(nv.transfer.value() == Approx(bytes / 360e9).epsilon(1e-12));
    REQUIRE(nv.busbw.value() == Approx(nv.algbw.value()).epsilon(1e-12));
  }
}

TEST_CASE("collective: groups calling together split their hosts' NICs by GPU", "[collective]") {
  // v100-dgx, a DGX-1: 4 NICs for 8 GPUs; the multi-node ring graph's 4 channels at bw_inter
  // carry a whole NIC's share per rank pair. A pair of one rank per host alone (nccl-tests) takes
  // ceil(1 x 4 / 8) = 1 NIC; with the host's 8 GPUs sending at once (a pipeline stage's pairs, a
  // step's DP groups: GroupShape::host_active = 8) each pair gets 1/8 of the 4, half a NIC, so its
  // transfer takes twice as long.
  const CollectiveModel v100(nccl_formula("v100-dgx"));
  const double bytes = 1 << 30;
  GroupShape alone{2, 2, 1};
  GroupShape together = alone;
  together.host_active = 8;
  const double t_alone = v100.cost(Op::SendRecv, alone, Bytes(bytes)).transfer.value();
  REQUIRE(v100.cost(Op::SendRecv, together, Bytes(bytes)).transfer.value() ==
          Approx(2.0 * t_alone).epsilon(1e-12));
  // A ring AllGather of 16 ranks, one per host: the same halving of its network share.
  GroupShape ring_alone{16, 16, 1};
  GroupShape ring_together = ring_alone;
  ring_together.host_active = 8;
  const auto ring = [&](const GroupShape& g) {
    return v100.cost_with(Op::AllGather, g, Bytes(bytes), Algorithm::Ring, Protocol::Simple)
        ->transfer.value();
  };
  REQUIRE(ring(ring_together) == Approx(2.0 * ring(ring_alone)).epsilon(1e-12));
  // Four ranks per host take ceil(4 x 4 / 8) = 2 NICs alone, 4/8 of the 4 together: the same.
  GroupShape four{8, 2, 4};
  GroupShape four_together = four;
  four_together.host_active = 8;
  REQUIRE(ring(four_together) == Approx(ring(four)).epsilon(1e-12));
  // One NIC per GPU (h100-dgx): a rank's NIC is its own either way.
  const CollectiveModel h100(nccl_formula("h100-dgx"));
  REQUIRE(h100.cost(Op::SendRecv, together, Bytes(bytes)).transfer.value() ==
          Approx(h100.cost(Op::SendRecv, alone, Bytes(bytes)).transfer.value()).epsilon(1e-12));
}

TEST_CASE("collective: fabric oversubscription and efficiency at scale slow large groups",
          "[collective]") {
  auto j = builtin_json("h100-dgx");
  j["fabric"]["oversubscription"] = 2.0;
  j["fabric"]["nodes_per_leaf"] = 32;
  const CollectiveModel over(from_json(j));
  const CollectiveModel plain(nccl_formula("h100-dgx"));
  const double bytes = 1 << 30;
  // Inside one leaf (32 nodes) nothing changes; beyond it the network side runs at half speed.
  const GroupShape in_leaf{256, 32, 8};
  const GroupShape beyond{512, 64, 8};
  const auto ring = [&](const CollectiveModel& m, const GroupShape& g) {
    return m.cost_with(Op::AllGather, g, Bytes(bytes), Algorithm::Ring, Protocol::Simple)
        ->transfer.value();
  };
  REQUIRE(ring(over, in_leaf) == Approx(ring(plain, in_leaf)).epsilon(1e-12));
  REQUIRE(ring(over, beyond) == Approx(2.0 * ring(plain, beyond)).epsilon(1e-12));
  // Ring Simple efficiency_per_doubling 0.9 on 16 nodes: bandwidth x 0.9^log2(16) = 0.9^4.
  auto k = builtin_json("h100-dgx");
  k["collective"]["measured"]["ring"]["Simple"]["efficiency_per_doubling"] = 0.9;
  const CollectiveModel lossy(from_json(k));
  const GroupShape g16{128, 16, 8};
  REQUIRE(ring(lossy, g16) == Approx(ring(plain, g16) / std::pow(0.9, 4)).epsilon(1e-12));
}

TEST_CASE("collective: names print and parse", "[collective]") {
  for (const Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter, Op::Broadcast, Op::Reduce,
                      Op::AllToAll, Op::SendRecv}) {
    REQUIRE(parse_op(to_string(op)) == op);
  }
  for (const Algorithm a :
       {Algorithm::Ring, Algorithm::Tree, Algorithm::Nvls, Algorithm::NvlsTree, Algorithm::Pat}) {
    REQUIRE(parse_algorithm(to_string(a)) == a);
  }
  REQUIRE(to_string(Op::AllReduce) == "all_reduce");
  REQUIRE(to_string(Algorithm::NvlsTree) == "nvls_tree");
  REQUIRE(to_string(Protocol::Ll128) == "LL128");
  REQUIRE(parse_protocol("Simple") == Protocol::Simple);
  REQUIRE_THROWS_AS(parse_op("allreduce"), ConfigError);
  REQUIRE_THROWS_WITH(parse_op("all_reduse"),
                      "unknown collective op 'all_reduse'; did you mean 'all_reduce'?; expected "
                      "one of all_reduce, all_gather, reduce_scatter, broadcast, reduce, "
                      "all_to_all, send_recv");
  REQUIRE_THROWS_WITH(parse_protocol("LL64"), Catch::Contains("did you mean 'LL'?"));
}

TEST_CASE("collective: an inconsistent group shape is an internal error", "[collective]") {
  const CollectiveModel m(nccl_formula("h100-dgx"));
  REQUIRE_THROWS_AS(m.cost(Op::AllReduce, GroupShape{16, 1, 16}, Bytes(1e6)), InternalError);
  REQUIRE_THROWS_AS(m.cost(Op::AllReduce, GroupShape{16, 2, 4}, Bytes(1e6)), InternalError);
  REQUIRE_THROWS_AS(m.cost(Op::AllReduce, GroupShape{0, 1, 1}, Bytes(1e6)), InternalError);
}

TEST_CASE("collective: measured terms correct NCCL's time of the chosen call", "[collective]") {
  // Forced Ring Simple AllGather of 256 MiB on 4 nodes x 8 (NCCL_ALGO=Ring NCCL_PROTO=Simple).
  const GroupShape g{32, 4, 8};
  const Bytes bytes(256.0 * (1 << 20));
  const CollectiveModel plain(nccl_formula("h100-dgx"));
  const auto base = plain.cost_with(Op::AllGather, g, bytes, Algorithm::Ring, Protocol::Simple);
  auto j = builtin_json("h100-dgx");
  j["collective"]["measured"] = nlohmann::json::parse(R"({"ring": {"Simple": {
      "bandwidth_factor_multi_node": 1.2, "efficiency_per_doubling": 0.9, "latency_scale": 2,
      "latency_offset_multi_node": "-30 us", "fill_fraction": 0.5, "fill_saturation": "64 MiB"}}})");
  const CollectiveModel m(from_json(j));
  const auto c = m.cost_with(Op::AllGather, g, bytes, Algorithm::Ring, Protocol::Simple);
  // hardware::MeasuredTerms: latency 2 x NCCL's - 30 us; transfer NCCL's x (1 + 0.5 x 64/256)
  // / (1.2 x 0.9^log2(4)) = x 1.125 / 0.972.
  REQUIRE(c->latency.value() == Approx(2.0 * base->latency.value() - 30e-6).epsilon(1e-12));
  REQUIRE(c->transfer.value() ==
          Approx(base->transfer.value() * 1.125 / (1.2 * 0.81)).epsilon(1e-12));
  // The choice stays NCCL's: an unrestricted call picks what the plain model picks.
  REQUIRE(m.cost(Op::AllGather, g, bytes).algorithm ==
          plain.cost(Op::AllGather, g, bytes).algorithm);
  REQUIRE(m.cost(Op::AllGather, g, bytes).protocol == plain.cost(Op::AllGather, g, bytes).protocol);
}

TEST_CASE("collective: LL128 is never faster per byte than Simple over the same links",
          "[collective]") {
  // Ring LL128 with a bandwidth factor of 2 against Simple at 1: LL128's transfer is held at
  // Simple's / 0.92 (NCCL's payload factor), and it inherits Simple's growth with nodes.
  const GroupShape g{64, 8, 8};
  const Bytes bytes(64.0 * (1 << 20));
  auto j = builtin_json("h100-dgx");
  j["collective"]["measured"] = nlohmann::json::parse(R"({"ring": {
      "LL128": {"bandwidth_factor_multi_node": 2.0},
      "Simple": {"efficiency_per_doubling": 0.8}}})");
  const CollectiveModel m(from_json(j));
  const auto ll = m.cost_with(Op::AllGather, g, bytes, Algorithm::Ring, Protocol::Ll128);
  const auto simple = m.cost_with(Op::AllGather, g, bytes, Algorithm::Ring, Protocol::Simple);
  REQUIRE(ll->transfer.value() >= simple->transfer.value() / 0.92 * (1.0 - 1e-12));
  // Simple: 384 x 0.8^3 bus; LL128 alone would be min(0.92 x 384, 8 x 36.7) x 2 x 0.8^3.
  REQUIRE(ll->transfer.value() == Approx(simple->transfer.value() / 0.92).epsilon(1e-12));
}

TEST_CASE("collective: a fitted latency never falls below NCCL's LL latency on the same path",
          "[collective]") {
  // Ring LL128 and Simple with offsets of -1 ms: the corrected latency would be clamped to 0;
  // it is held at NCCL's Ring LL latency of the same op and group (measured small-message
  // floors exceed NCCL's estimates, docs/sources.md B.4), which the plain model prices.
  const GroupShape g{16, 2, 8};
  const Bytes bytes(512.0 * 1024.0);
  const CollectiveModel plain(nccl_formula("h100-dgx"));
  auto j = builtin_json("h100-dgx");
  j["collective"]["measured"] = nlohmann::json::parse(R"({"ring": {
      "LL": {"latency_offset_multi_node": "-1000 us"},
      "LL128": {"latency_offset_multi_node": "-1000 us"},
      "Simple": {"latency_offset_multi_node": "-1000 us"}}})");
  const CollectiveModel m(from_json(j));
  for (const Op op : {Op::Broadcast, Op::AllGather, Op::AllReduce}) {
    const auto ll = plain.cost_with(op, g, bytes, Algorithm::Ring, Protocol::Ll);
    REQUIRE(ll);
    REQUIRE(ll->latency.value() > 0.0);
    for (const Protocol p : {Protocol::Ll, Protocol::Ll128, Protocol::Simple}) {
      INFO(to_string(op) << " " << to_string(p));
      const auto c = m.cost_with(op, g, bytes, Algorithm::Ring, p);
      REQUIRE(c->latency.value() == ll->latency.value());
    }
  }
  // NVLS has no LL protocol: its offsets keep the clamp at 0 (h100-dgx's NVLSTree offset,
  // -60 us, is fitted and well determined; docs/calibration.md).
  j["collective"]["measured"] =
      nlohmann::json::parse(R"({"nvls": {"Simple": {"latency_offset_single_node": "-1000 us"}}})");
  const CollectiveModel nvls(from_json(j));
  const auto c =
      nvls.cost_with(Op::AllReduce, GroupShape{8, 1, 8}, bytes, Algorithm::Nvls, Protocol::Simple);
  REQUIRE(c);
  REQUIRE(c->latency.value() == 0.0);
}

TEST_CASE("collective: with the fitted terms a larger message never takes less time",
          "[collective][calibrate]") {
  // The built-in h100-dgx with its measured terms, 2 to 512 nodes, 1 MiB to 8 GiB: NCCL's
  // choice changes with size, and the measured time of the chosen call must still grow.
  const CollectiveModel m(io::load_hardware("h100-dgx"));
  for (const Op op : {Op::AllReduce, Op::AllGather, Op::ReduceScatter}) {
    for (std::int64_t nodes = 1; nodes <= 512; nodes *= 2) {
      double previous = 0.0;
      for (double bytes = 1 << 20; bytes <= 8.0 * (1 << 30); bytes *= 2.0) {
        const double t = m.cost(op, GroupShape{nodes * 8, nodes, 8}, Bytes(bytes)).time.value();
        INFO(to_string(op) << " on " << nodes << " nodes, " << bytes << " B");
        REQUIRE(t >= previous);
        previous = t;
      }
    }
  }
}
