#include "sim/io/hardware_loader.hpp"

#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/json_reader.hpp"

using namespace trainsim;
using trainsim::hardware::Algorithm;
using trainsim::hardware::Dtype;
using trainsim::hardware::HardwareSpec;
using trainsim::hardware::Protocol;

namespace {

constexpr auto kRing = static_cast<std::size_t>(Algorithm::Ring);
constexpr auto kTree = static_cast<std::size_t>(Algorithm::Tree);
constexpr auto kSimple = static_cast<std::size_t>(Protocol::Simple);
constexpr auto kLl = static_cast<std::size_t>(Protocol::Ll);
constexpr auto kNet = static_cast<std::size_t>(hardware::LinkClass::Net);

// A minimal valid profile, inline NCCL constants, that the bad-input tests mutate.
nlohmann::json small_profile() {
  return io::parse_json(R"({
    "id": "test-node", "name": "test",
    "gpu": {"name": "g", "arch": "hopper",
            "peak_dense": {"fp32": "67 TFLOP/s", "tf32": "0 TFLOP/s", "fp16": "989 TFLOP/s",
                           "bf16": "989 TFLOP/s", "fp8": "0 TFLOP/s"},
            "sms": 132, "hbm_capacity": "80 GiB", "hbm_bandwidth": "3.35 TB/s",
            "gemm": {"max_efficiency": 0.8, "half_size": 128, "tile": "256x128",
                     "reuse_knee": 60},
            "attention": {"max_efficiency": 0.35, "half_size": 512, "head_dim_half": 32,
                          "backward_ratio": 0.9},
            "memory_efficiency": 0.88, "kernel_launch_overhead": "4 us",
            "comm_compute_contention": 0.1},
    "node": {"gpus_per_node": 8, "intra": "nvswitch", "nvlink_bandwidth_per_direction": "450 GB/s",
             "nvlink_latency": "0.6 us", "nvswitch_sharp": true},
    "fabric": {"nics_per_node": 8, "nic_bandwidth": "400 Gb/s", "latency": "2.7 us",
               "topology": "rail_optimized", "oversubscription": 1, "nodes_per_leaf": 32},
    "power": {"idle": "100 W", "compute": "670 W", "communication": "555 W", "tdp": "700 W"},
    "price_per_gpu_hour": "2.99 USD/h",
    "collective": {"nccl": "2.20", "host_cpu": "intel", "intra_link": "nvlink",
                   "ll128_enabled": true, "ib_sharp": false,
                   "graphs": {
                     "ring": {"single_node": {"channels": 12, "bw_intra": "30 GB/s", "bw_inter": "30 GB/s"},
                              "multi_node": {"channels": 8, "bw_intra": "48 GB/s", "bw_inter": "48 GB/s"}},
                     "tree": {"single_node": {"channels": 12, "bw_intra": "30 GB/s", "bw_inter": "30 GB/s"},
                              "multi_node": {"channels": 8, "bw_intra": "48 GB/s", "bw_inter": "48 GB/s"}},
                     "nvls": {"single_node": {"channels": 8, "bw_intra": "40 GB/s", "bw_inter": "40 GB/s"},
                              "multi_node": {"channels": 8, "bw_intra": "40 GB/s", "bw_inter": "48 GB/s"}}}}
  })",
                        "mem.json");
}

HardwareSpec load(const nlohmann::json& j) { return io::hardware_from_json(j, "mem.json", ""); }

}  // namespace

TEST_CASE("hardware_loader: every built-in profile loads", "[hardware][io]") {
  const auto ids = io::builtin_hardware_ids();
  // The DGX/HGX generations and GB200 NVL72; the nccl/ constants files are not profiles.
  REQUIRE(ids == std::vector<std::string>{"a100-dgx", "b200-dgx", "gb200-nvl72", "h100-dgx",
                                          "h200-dgx", "h200-sxm", "h800-dgx", "v100-dgx"});
  for (const auto& id : ids) {
    const HardwareSpec hw = io::load_hardware(id);
    REQUIRE(hw.id == id);
    // 8-GPU nodes that are their own NVLink domain, except the 4-GPU trays of a 72-GPU domain.
    REQUIRE(hw.node.gpus_per_node == (id == "gb200-nvl72" ? 4 : 8));
    REQUIRE(hw.node.domain_gpus() == (id == "gb200-nvl72" ? 72 : 8));
    REQUIRE(hw.collective.ring.single_node.channels > 0);
    REQUIRE(hw.usd_per_gpu_hour > 0.0);
    REQUIRE(hw.power.compute <= hw.power.tdp);
  }
  // h200-dgx draws what the measured H200 SXM drew (h200-sxm, calibration/h200-sxm/suite.json):
  // idle 129 W and 684.1 W under back-to-back GEMMs, where it had taken h100-dgx's assumed
  // 100 W and chosen 670 W.
  const HardwareSpec h200 = io::load_hardware("h200-dgx");
  const HardwareSpec measured = io::load_hardware("h200-sxm");
  CHECK(h200.power.idle.value() == measured.power.idle.value());
  CHECK(h200.power.compute.value() == measured.power.compute.value());
  CHECK(h200.power.idle.value() == 129.0);
}

TEST_CASE("hardware_loader: built-ins match the paper's Table 1 (P13)",
          "[hardware][validation][paper]") {
  // sources.md P13: V100/A100/H100 bf16 (V100: fp16) dense 125/312/989 TFLOP/s; HBM
  // 0.9/2.0/3.35 TB/s; NVLink 300/600/900 GB/s per GPU bidirectional; inter-node 100/200/400
  // GB/s per node.
  const HardwareSpec v100 = io::load_hardware("v100-dgx");
  const HardwareSpec a100 = io::load_hardware("a100-dgx");
  const HardwareSpec h100 = io::load_hardware("h100-dgx");

  REQUIRE(v100.peak(Dtype::Fp16).value() == Approx(125e12).epsilon(1e-12));
  REQUIRE(v100.peak(Dtype::Bf16).value() == 0.0);  // Volta has no bf16
  REQUIRE(a100.peak(Dtype::Bf16).value() == Approx(312e12).epsilon(1e-12));
  REQUIRE(h100.peak(Dtype::Bf16).value() == Approx(989e12).epsilon(1e-12));

  REQUIRE(v100.gpu.hbm_bandwidth.value() == Approx(0.9e12).epsilon(1e-12));
  // The A100 profile keeps the spec sheet's 2.039 TB/s; the paper rounds it to 2.0.
  REQUIRE(std::round(a100.gpu.hbm_bandwidth.value() / 1e11) / 10.0 == 2.0);
  REQUIRE(a100.gpu.hbm_bandwidth.value() == Approx(2.039e12).epsilon(1e-12));
  REQUIRE(h100.gpu.hbm_bandwidth.value() == Approx(3.35e12).epsilon(1e-12));

  // Bidirectional = 2 x per direction: 2 x 150, 2 x 300, 2 x 450 GB/s.
  REQUIRE(2.0 * v100.node.nvlink_bandwidth_per_direction.value() == Approx(300e9).epsilon(1e-12));
  REQUIRE(2.0 * a100.node.nvlink_bandwidth_per_direction.value() == Approx(600e9).epsilon(1e-12));
  REQUIRE(2.0 * h100.node.nvlink_bandwidth_per_direction.value() == Approx(900e9).epsilon(1e-12));

  // Per node, per direction: A100 8 x 200 Gb/s = 8 x 25e9 = 200e9 B/s; H100 8 x 400 Gb/s =
  // 400e9 B/s. V100 is a DGX-1: 4 x 100 Gb/s = 50e9 B/s per direction, which is the paper's
  // 100 GB/s counted in both directions (the profile's sources say so).
  const auto per_node = [](const HardwareSpec& hw) {
    return hw.fabric.nics_per_node * hw.fabric.nic_bandwidth.value();
  };
  REQUIRE(per_node(a100) == Approx(200e9).epsilon(1e-12));
  REQUIRE(per_node(h100) == Approx(400e9).epsilon(1e-12));
  REQUIRE(2.0 * per_node(v100) == Approx(100e9).epsilon(1e-12));

  // The paper's stack bundles NCCL 2.20: no PAT.
  REQUIRE(a100.collective.version == "2.20");
  REQUIRE(h100.collective.version == "2.20");
  REQUIRE_FALSE(h100.collective.pat_enabled);
}

TEST_CASE("hardware_loader: Hopper profiles slow GEMMs beside a collective as measured",
          "[hardware][io]") {
  // scripts/refit-profiles fits gemm_comm_contention to the overlap benchmark of one H200
  // (calibration/h200-sxm/overlap.json; calibration/h200-sxm-overlap.residuals.txt: 0.2404 from
  // 84 GEMMs beside 16 to 32 held SMs) and writes it into the four GH100 profiles. It lies above
  // the share of SMs the fewest held blocks take, 132 / (132 - 16) - 1 = 0.138, and far below the
  // 1 of a persistent GEMM that waits a whole round for one held SM, which the measurement
  // refuted (docs/calibration.md, "GEMMs beside communication"). Other GPUs leave it unset, so
  // their GEMMs take comm_compute_contention like every kernel.
  for (const char* id : {"h100-dgx", "h200-dgx", "h200-sxm", "h800-dgx"}) {
    INFO(id);
    const hardware::HardwareSpec hw = io::load_hardware(id);
    REQUIRE(hw.gpu.gemm_comm_contention.has_value());
    CHECK(*hw.gpu.gemm_comm_contention == Approx(0.2404).margin(5e-5));
    CHECK(*hw.gpu.gemm_comm_contention > 132.0 / 116.0 - 1.0);
    CHECK(*hw.gpu.gemm_comm_contention < 1.0);
  }
  for (const char* id : {"v100-dgx", "a100-dgx", "b200-dgx"}) {
    INFO(id);
    CHECK_FALSE(io::load_hardware(id).gpu.gemm_comm_contention.has_value());
  }
}

TEST_CASE("hardware_loader: built-in SM counts match the datasheets", "[hardware][io]") {
  // NVIDIA's architecture whitepapers (docs/sources.md C.1): V100 SXM2 80, A100 108,
  // H100 SXM5 132, H200 132 (the same GH100), B200 148 (2 dies x 74).
  REQUIRE(io::load_hardware("v100-dgx").gpu.sms == 80);
  REQUIRE(io::load_hardware("a100-dgx").gpu.sms == 108);
  REQUIRE(io::load_hardware("h100-dgx").gpu.sms == 132);
  REQUIRE(io::load_hardware("h200-dgx").gpu.sms == 132);
  REQUIRE(io::load_hardware("h200-sxm").gpu.sms == 132);
  REQUIRE(io::load_hardware("b200-dgx").gpu.sms == 148);
}

TEST_CASE("hardware_loader: NCCL constants resolve by version, arch and host", "[hardware][io]") {
  const HardwareSpec h100 = io::load_hardware("h100-dgx");
  const auto& c = h100.collective;
  // nccl-2.20.json: Ring Simple base 8.4 us, Tree Simple NET hwLat 28 us (2.19-2.22).
  REQUIRE(c.base_latency[kRing][kSimple].value() == Approx(8.4e-6).epsilon(1e-12));
  REQUIRE(c.hw_latency[kNet][kTree][kSimple].value() == Approx(28e-6).epsilon(1e-12));
  // Hopper row: tree cap 36 GB/s per channel at 3+ nodes; Intel host: LL cap 20.4 GB/s.
  REQUIRE(c.per_channel_max_tree_bw[2].value() == Approx(36e9).epsilon(1e-12));
  REQUIRE(c.ll_max_bw[2].value() == Approx(20.4e9).epsilon(1e-12));
  REQUIRE(c.ll_max_bw[0].value() == Approx(141e9).epsilon(1e-12));
  REQUIRE(c.nvls_efficiency == Approx(0.85).epsilon(1e-12));
  REQUIRE(c.tree_correction[kLl].size() == 23);
  // DGX A100 has AMD hosts: net overhead 2 us, LL cap 19 GB/s at 3+ nodes.
  const HardwareSpec a100 = io::load_hardware("a100-dgx");
  REQUIRE(a100.collective.net_overhead.value() == Approx(2e-6).epsilon(1e-12));
  REQUIRE(a100.collective.ll_max_bw[2].value() == Approx(19e9).epsilon(1e-12));
  // h200-dgx mimics current NCCL: PAT on.
  REQUIRE(io::load_hardware("h200-dgx").collective.pat_enabled);
}

TEST_CASE("hardware_loader: a profile in memory loads", "[hardware][io]") {
  const HardwareSpec hw = load(small_profile());
  REQUIRE(hw.id == "test-node");
  // "400 Gb/s" = 400e9 / 8 = 50e9 B/s.
  REQUIRE(hw.fabric.nic_bandwidth.value() == Approx(50e9).epsilon(1e-12));
  REQUIRE(hw.usd_per_gpu_hour == Approx(2.99).epsilon(1e-12));
  REQUIRE(hw.collective.nvls.multi_node.bw_inter.value() == Approx(48e9).epsilon(1e-12));
}

TEST_CASE("hardware_loader: the GPU's SM count and GEMM and attention terms load",
          "[hardware][io]") {
  auto j = small_profile();
  SECTION("as written") {
    const HardwareSpec hw = load(j);
    REQUIRE(hw.gpu.sms == 132);
    REQUIRE(hw.gpu.gemm.tile_m == 256);
    REQUIRE(hw.gpu.gemm.tile_n == 128);
    REQUIRE(hw.gpu.gemm.reuse_knee == Approx(60.0).epsilon(1e-12));
    REQUIRE(hw.gpu.attention.backward_ratio == Approx(0.9).epsilon(1e-12));
    REQUIRE(hw.gpu.attention.head_dim_half == Approx(32.0).epsilon(1e-12));
    // No per-dtype entry: every dtype runs at max_efficiency.
    REQUIRE(hw.gpu.gemm.max_for(Dtype::Fp8) == Approx(0.8).epsilon(1e-12));
  }
  SECTION("a dtype's own maximum") {
    j["gpu"]["gemm"]["max_efficiency_by_dtype"] = {{"fp8", 0.7}};
    const HardwareSpec hw = load(j);
    REQUIRE(hw.gpu.gemm.max_for(Dtype::Fp8) == Approx(0.7).epsilon(1e-12));
    REQUIRE(hw.gpu.gemm.max_for(Dtype::Bf16) == Approx(0.8).epsilon(1e-12));
  }
  SECTION("the curve's kernel against FlashAttention-2") {
    // Default 1: a FlashAttention-2 curve, the kernel stacks' attention_speed is relative to.
    REQUIRE(load(j).gpu.attention.speed_over_flash2 == 1.0);
    j["gpu"]["attention"]["speed_over_flash2"] = 1.817;
    REQUIRE(load(j).gpu.attention.speed_over_flash2 == Approx(1.817).epsilon(1e-12));
    j["gpu"]["attention"]["speed_over_flash2"] = 0;
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /gpu/attention/speed_over_flash2: expected how many "
                        "times as fast as FlashAttention-2 the curve's kernel runs, "
                        "from 0.05 to 5, got 0");
  }
  SECTION("missing sms") {
    j["gpu"].erase("sms");
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /gpu/sms: missing required key; expected an integer in "
                        "[1, 65536]");
  }
  SECTION("negative or zero sms") {
    j["gpu"]["sms"] = -8;
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j), "mem.json: /gpu/sms: expected an integer >= 1, got -8");
    j["gpu"]["sms"] = 0;
    REQUIRE_THROWS_WITH(load(j), "mem.json: /gpu/sms: expected an integer >= 1, got 0");
  }
  SECTION("fractional sms") {
    j["gpu"]["sms"] = 131.5;
    REQUIRE_THROWS_WITH(load(j), "mem.json: /gpu/sms: expected an integer, got 131.5");
  }
  SECTION("a tile cuBLAS does not have") {
    j["gpu"]["gemm"]["tile"] = "96x128";
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("mem.json: /gpu/gemm/tile: expected the largest "
                                                 "cuBLAS tile as \"<m>x<n>\""));
  }
  SECTION("missing new keys") {
    j["gpu"]["gemm"].erase("reuse_knee");
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /gpu/gemm/reuse_knee: missing required key; "
                        "expected a number");
    j = small_profile();
    j["gpu"]["attention"].erase("head_dim_half");
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /gpu/attention/head_dim_half: missing required key; "
                        "expected a number");
  }
  SECTION("out of the calibration bounds") {
    j["gpu"]["gemm"]["reuse_knee"] = 1000;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/gpu/gemm/reuse_knee: expected a value in "
                                                 "[16.0, 256.0]"));
    j = small_profile();
    j["gpu"]["gemm"]["half_size"] = -1;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/gpu/gemm/half_size: expected a value in"));
  }
  SECTION("an unknown dtype") {
    j["gpu"]["gemm"]["max_efficiency_by_dtype"] = {{"fp4", 0.7}};
    REQUIRE_THROWS_WITH(load(j),
                        Catch::Contains("/gpu/gemm/max_efficiency_by_dtype/fp4: unknown key"));
  }
}

TEST_CASE("hardware_loader: each bad-input kind is a ConfigError naming key and problem",
          "[hardware][io]") {
  auto j = small_profile();
  SECTION("missing key") {
    j["node"].erase("gpus_per_node");
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /node/gpus_per_node: missing required key; "
                        "expected an integer in [1, 1024]");
  }
  SECTION("unknown key with a suggestion") {
    j["fabric"]["nic_bandwith"] = "400 Gb/s";
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /fabric/nic_bandwith: unknown key; did you mean "
                        "'nic_bandwidth'?");
  }
  SECTION("bare number for a dimensional value") {
    j["gpu"]["hbm_bandwidth"] = 3.35;
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /gpu/hbm_bandwidth: expected a bandwidth with a unit "
                        "like \"450 GB/s\", got 3.35");
  }
  SECTION("a launch overhead in seconds where microseconds were meant") {
    // "4 s" made every kernel 4 s long (an iteration of 2,853 s); 100 us is the calibration's
    // bound for the term (calibrate/parameters.cpp).
    j["gpu"]["kernel_launch_overhead"] = "4 s";
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /gpu/kernel_launch_overhead: expected at most 100 us "
                        "(the time one kernel launch adds), got \"4 s\"");
    j["gpu"]["kernel_launch_overhead"] = "100 us";
    REQUIRE_NOTHROW(load(j));
  }
  SECTION("wrong type") {
    j["node"]["nvswitch_sharp"] = "yes";
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /node/nvswitch_sharp: expected true or false, got \"yes\"");
  }
  SECTION("zero value") {
    j["fabric"]["nic_bandwidth"] = "0 Gb/s";
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j),
                        Catch::Contains("/fabric/nic_bandwidth: expected a bandwidth > 0"));
  }
  SECTION("negative value") {
    j["power"]["idle"] = "-5 W";
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/power/idle: expected a power > 0"));
  }
  SECTION("zero count") {
    j["fabric"]["nics_per_node"] = 0;
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /fabric/nics_per_node: expected an integer >= 1, got 0");
  }
  SECTION("fraction out of range") {
    j["gpu"]["gemm"]["max_efficiency"] = 1.5;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/gpu/gemm/max_efficiency: expected a fraction "
                                                 "in [0.05, 1]"));
    // An efficiency is at least calibrate's lower bound, 0.05: near 0 every kernel's time
    // overflows.
    for (const char* key : {"max_efficiency", "backward_ratio"}) {
      j = small_profile();
      j["gpu"]["attention"][key] = 0.01;
      REQUIRE_THROWS_WITH(load(j), std::string("mem.json: /gpu/attention/") + key +
                                       ": expected a fraction in [0.05, 1], got 0.01");
    }
    j = small_profile();
    j["gpu"]["gemm"]["max_efficiency_by_dtype"] = {{"fp8", 1e-300}};
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /gpu/gemm/max_efficiency_by_dtype/fp8: expected a "
                        "fraction in [0.05, 1], got 1e-300");
  }
  SECTION("GEMM contention out of range") {
    j["gpu"]["gemm_comm_contention"] = -0.5;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/gpu/gemm_comm_contention: expected a number in "
                                                 "[0.0, 10.0], got -0.5"));
  }
  SECTION("power above the TDP") {
    j["power"]["compute"] = "800 W";
    REQUIRE_THROWS_WITH(load(j),
                        Catch::Contains("/power/compute: expected at most the tdp (700 W), "
                                        "got 800 W"));
  }
  SECTION("power just above the TDP: both draws with the digits that tell them apart") {
    // Three digits read "expected at most the tdp (700 W), got 700 W".
    j["power"]["communication"] = "700.4 W";
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/power/communication: expected at most the tdp "
                                                 "(700 W), got 700.4 W"));
  }
  SECTION("unknown NCCL version with a suggestion") {
    j["collective"]["nccl"] = "2.2";
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/collective/nccl: unknown NCCL version '2.2'; "
                                                 "did you mean '2.20'?"));
  }
  SECTION("a tree correction table of another length") {
    // NCCL's treeCorrectionFactor has one factor per power of two from 64 B to 256 MiB (23): a
    // table of 22 left 256 MiB uncorrected in silence, one of 100 was taken as well.
    const auto text = io::builtin_file("hardware_profiles/nccl", "nccl-2.20");
    REQUIRE(text.has_value());
    nlohmann::json nccl = io::parse_json(std::string(*text), "nccl-2.20.json");
    REQUIRE(nccl["tree_correction"]["LL"].size() == 23);
    nccl["tree_correction"]["LL"].erase(22);
    j["collective"]["nccl"] = nccl;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/collective/nccl/tree_correction/LL: expected 23 "
                                                 "factors (NCCL's treeCorrectionFactor: one per "
                                                 "power of two from 64 B to 256 MiB), or 24 as "
                                                 "NCCL 2.29 and later write it, got 22"));
    // NCCL 2.29's table of 24 (its last column NVLSTree's) loads.
    nccl["tree_correction"]["LL"] = nccl["tree_correction"]["Simple"];
    nccl["tree_correction"]["LL"].push_back(1.0);
    REQUIRE(nccl["tree_correction"]["LL"].size() == 24);
    j["collective"]["nccl"] = nccl;
    CHECK_NOTHROW(load(j));
    j["collective"]["nccl"]["tree_correction"]["LL"] = nlohmann::json::array();
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/collective/nccl/tree_correction/LL: expected 23 "
                                                 "factors"));
  }
  SECTION("NVLS graph without in-switch reductions") {
    j["node"]["nvswitch_sharp"] = false;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/collective/graphs/nvls/single_node/channels"));
  }
  SECTION("a PCI link beside an NVSwitch that reduces in the switch") {
    // NCCL's latency table has no NVLS entry on PCI (0 us): the profile priced NVLS faster.
    j["collective"]["intra_link"] = "pci";
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/collective/intra_link: NVLS needs NVLink: "
                                                 "/node/nvswitch_sharp is true"));
  }
  SECTION("unknown choice") {
    j["gpu"]["arch"] = "hoper";
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/gpu/arch: unknown value 'hoper'; did you mean "
                                                 "'hopper'?"));
  }
}

TEST_CASE("hardware_loader: an unknown profile name suggests a built-in", "[hardware][io]") {
  REQUIRE_THROWS_AS(io::load_hardware("h100"), ConfigError);
  REQUIRE_THROWS_WITH(
      io::load_hardware("h100"),
      "unknown hardware profile 'h100'; did you mean 'h100-dgx'? (built-in "
      "profiles: a100-dgx, b200-dgx, gb200-nvl72, h100-dgx, h200-dgx, h200-sxm, h800-dgx, "
      "v100-dgx; or give a path "
      "to a JSON file)");
  REQUIRE_THROWS_WITH(io::load_hardware("h100-dxg"),
                      Catch::StartsWith("unknown hardware profile 'h100-dxg'; did you mean "
                                        "'h100-dgx'?"));
}

// A name with a path separator or a .json ending is a file the user meant, not a misspelt
// built-in id: the loader says the file is missing (tests/model and tests/stack check the
// model and stack loaders).
TEST_CASE("hardware_loader: a missing file is called missing, not an unknown id",
          "[hardware][io]") {
  REQUIRE_THROWS_WITH(io::load_hardware("no-such-dir/h100.json"),
                      Catch::StartsWith("no such file 'no-such-dir/h100.json'; expected a "
                                        "hardware profile JSON file (or a built-in profile: "));
  REQUIRE_THROWS_WITH(io::load_hardware("h100.json"),
                      Catch::StartsWith("no such file 'h100.json'"));
}

TEST_CASE("hardware_loader: malformed JSON text names the source", "[hardware][io]") {
  REQUIRE_THROWS_WITH(io::load_hardware_from_string("{\"id\": ", "bad.json"),
                      Catch::StartsWith("bad.json: invalid JSON"));
}

TEST_CASE("hardware_loader: measured collective terms load, inherit and are range-checked",
          "[hardware][io][calibrate]") {
  // Absent: NCCL's model unchanged (hardware::MeasuredTerms defaults).
  const HardwareSpec plain = load(small_profile());
  REQUIRE(plain.collective.measured[kRing][kSimple].bandwidth_factor_multi_node == 1.0);
  REQUIRE(plain.collective.measured[kRing][kLl].inherits_latency_scale);

  auto j = small_profile();
  j["collective"]["measured"] = io::parse_json(R"({
      "ring": {"Simple": {"bandwidth_factor_multi_node": 1.17, "latency_scale": 2.3,
                          "latency_offset_multi_node": "-26.8 us", "fill_saturation": "48 MiB"},
               "LL128": {"latency_offset_single_node": "12 us"}}})",
                                               "mem.json");
  const HardwareSpec hw = load(j);
  const auto& simple = hw.collective.measured[kRing][kSimple];
  REQUIRE(simple.bandwidth_factor_multi_node == Approx(1.17).epsilon(1e-12));
  // A signed time where the bounds allow one: -26.8 us.
  REQUIRE(simple.latency_offset_multi_node.value() == Approx(-26.8e-6).epsilon(1e-12));
  REQUIRE(simple.fill_saturation.value() == Approx(48.0 * 1024 * 1024).epsilon(1e-12));
  // LL128 gives its own offset but not its latency scale: it takes Simple's.
  const auto& ll128 = hw.collective.measured[kRing][static_cast<std::size_t>(Protocol::Ll128)];
  REQUIRE(ll128.inherits_latency_scale);
  REQUIRE_FALSE(simple.inherits_latency_scale);

  auto bound = small_profile();
  bound["collective"]["measured"]["tree"]["Simple"]["bandwidth_factor_multi_node"] = 3.0;
  REQUIRE_THROWS_WITH(
      load(bound), Catch::Contains("/collective/measured/tree/Simple/"
                                   "bandwidth_factor_multi_node: expected a value in [0.3, 2.0]"));
  auto unknown = small_profile();
  unknown["collective"]["measured"]["ring"]["Simple"]["bandwidth_factor"] = 1.0;
  REQUIRE_THROWS_WITH(load(unknown), Catch::Contains("did you mean"));
  auto moved = small_profile();
  moved["fabric"]["efficiency_at_scale"] = 0.9;
  REQUIRE_THROWS_WITH(load(moved), Catch::Contains("/fabric/efficiency_at_scale: moved"));
}

TEST_CASE("hardware_loader: the calibration record names parameters", "[hardware][io][calibrate]") {
  auto j = small_profile();
  j["calibration"] = io::parse_json(R"({"tool": "trainsim calibrate", "inputs": ["a.txt"],
      "fitted": {"/gpu/gemm/max_efficiency": {"value": 0.7, "sigma": 0.01, "points": 6,
                 "rms_error": 0.02, "max_error": 0.04, "at_bound": false,
                 "fitted_to": ["gemm.json"]}}})",
                                    "mem.json");
  REQUIRE_NOTHROW(load(j));
  auto bad = j;
  bad["calibration"]["fitted"]["/gpu/gemm/maximum"] =
      bad["calibration"]["fitted"]["/gpu/gemm/max_efficiency"];
  REQUIRE_THROWS_WITH(load(bad),
                      Catch::Contains("expected the JSON pointer of a calibration parameter"));
  // sigma is required (null when there is no standard error): a missing one says so.
  auto no_sigma = j;
  no_sigma["calibration"]["fitted"]["/gpu/gemm/max_efficiency"].erase("sigma");
  REQUIRE_THROWS_WITH(load(no_sigma),
                      Catch::EndsWith("/calibration/fitted/~1gpu~1gemm~1max_efficiency/sigma: "
                                      "missing required key; expected a number or null"));
  auto no_fitted = j;
  no_fitted["calibration"].erase("fitted");
  REQUIRE_THROWS_WITH(load(no_fitted),
                      Catch::EndsWith("/calibration/fitted: missing required key; expected an "
                                      "object keyed by parameter pointer"));
}

TEST_CASE("hardware loader: the NICs bound the multi-node graphs, and the built-ins agree",
          "[hardware][io]") {
  // Every built-in profile's multi-node graphs carry at most its NICs and no less than 0.9 of
  // them (0.96: 8 x 48 GB/s of 8 x 400 Gb/s on the DGX profiles, 8 x 24 of 4 x 400 Gb/s per
  // GB200 tray, 4 x 12 of 4 x 100 Gb/s on V100): no error and no note.
  for (const std::string& id : io::builtin_hardware_ids()) {
    INFO(id);
    const hardware::HardwareSpec hw = io::load_hardware(id);
    REQUIRE_NOTHROW(io::check_network_carries_graphs(hw, id, ""));
    REQUIRE_FALSE(io::network_beyond_graphs(hw).has_value());
  }
  // h100-dgx with 4 NICs: 200 GB/s in all, under its ring graph's 8 x 48 = 384 GB/s.
  hardware::HardwareSpec fewer = io::load_hardware("h100-dgx");
  fewer.fabric.nics_per_node = 4;
  REQUIRE_THROWS_WITH(io::check_network_carries_graphs(fewer, "h.json", ""),
                      Catch::Contains("h.json: /collective/graphs/ring/multi_node/bw_inter: 8 "
                                      "channels x 48.0 GB/s = 384 GB/s across nodes, more than "
                                      "the node's 4 NICs of 50.0 GB/s carry (200 GB/s)"));
  // With 16 NICs the NICs carry 800 GB/s, the graph 384 < 0.9 x 800: the note.
  hardware::HardwareSpec more = io::load_hardware("h100-dgx");
  more.fabric.nics_per_node = 16;
  REQUIRE_NOTHROW(io::check_network_carries_graphs(more, "h.json", ""));
  REQUIRE(io::network_beyond_graphs(more).has_value());
  // With 900 GB/s of NVLink its single-node ring graph's 12 x 30 = 360 GB/s is under 0.7 x 900:
  // the note names the NVLink (the what-if ran as the stock profile without a word).
  hardware::HardwareSpec faster = io::load_hardware("h100-dgx");
  faster.node.nvlink_bandwidth_per_direction = BytesPerSecond(900e9);
  REQUIRE_NOTHROW(io::check_network_carries_graphs(faster, "h.json", ""));
  REQUIRE(io::network_beyond_graphs(faster) ==
          "the GPU's NVLink carries 900 GB/s one way, its single-node ring graph 360 GB/s (12 "
          "channels x 30.0 GB/s): collective times inside a node follow the graphs, so raise "
          "/collective/graphs/*/single_node/bw_intra with the NVLink to model a faster one "
          "(docs/calibration.md)");
  // Inside a node the NVLink bounds the single-node graphs: h100-dgx's ring graph sends 12 x 30
  // = 360 GB/s out of each GPU, under 450 GB/s of NVLink; at 300 GB/s it is refused, where the
  // graphs priced a ring AllGather at 355.6 GB/s over 100 GB/s of NVLink.
  hardware::HardwareSpec slow = io::load_hardware("h100-dgx");
  slow.node.nvlink_bandwidth_per_direction = BytesPerSecond(300e9);
  REQUIRE_THROWS_WITH(io::check_network_carries_graphs(slow, "h.json", ""),
                      "h.json: /collective/graphs/ring/single_node/bw_intra: 12 channels x 30.0 "
                      "GB/s = 360 GB/s inside a node, more than the GPU's NVLink carries (300 "
                      "GB/s one way); expected the single-node graphs' bw_intra scaled with "
                      "/node/nvlink_bandwidth_per_direction: collective times follow the graphs "
                      "(docs/calibration.md)");
  slow.node.nvlink_bandwidth_per_direction = BytesPerSecond(360e9);
  REQUIRE_NOTHROW(io::check_network_carries_graphs(slow, "h.json", ""));
  // NVLS charges its head GPU's links twice: 8 channels of 40 GB/s need (8 + 1) x 40 = 360 GB/s.
  slow.node.nvlink_bandwidth_per_direction = BytesPerSecond(330e9);
  slow.collective.ring.single_node.bw_intra = BytesPerSecond(27.5e9);  // 12 x 27.5 = 330
  slow.collective.tree.single_node.bw_intra = BytesPerSecond(27.5e9);
  REQUIRE_THROWS_WITH(io::check_network_carries_graphs(slow, "h.json", ""),
                      Catch::StartsWith("h.json: /collective/graphs/nvls/single_node/bw_intra: (8 "
                                        "channels + 1 for the head's links) x 40.0 GB/s = 360 "
                                        "GB/s inside a node, more than the GPU's NVLink carries "
                                        "(330 GB/s one way)"));
}

TEST_CASE("hardware_loader: HBM is at most 1 PiB", "[hardware][io]") {
  // Reports give byte counts as 64-bit integers: "1e12 GiB" (1.07e21 B) printed a capacity of
  // -9223372036854775808 bytes that fitted every plan. 1 PiB = 2^50 B loads, one byte more not.
  auto j = small_profile();
  j["gpu"]["hbm_capacity"] = "1048576 GiB";
  CHECK(load(j).gpu.hbm_capacity.value() == 1125899906842624.0);
  j["gpu"]["hbm_capacity"] = "1125899906842625 B";
  REQUIRE_THROWS_WITH(load(j), Catch::StartsWith("mem.json: /gpu/hbm_capacity: expected at most "
                                                 "1 PiB (1,125,899,906,842,624 B) of HBM"));
  j["gpu"]["hbm_capacity"] = "1e12 GiB";
  REQUIRE_THROWS_WITH(load(j), Catch::Contains("/gpu/hbm_capacity: expected at most 1 PiB"));
}

TEST_CASE("hardware_loader: a power draw is from 1 W to 5 kW", "[hardware][io]") {
  // The bounds calibrate holds a measured power to (calibrate/fit.cpp): a TDP of "700 kW" or
  // draws of 1e29 W were taken, and every plan's energy and cluster watts scaled with them.
  auto j = small_profile();
  j["power"] = {
      {"idle", "1 W"}, {"compute", "5000 W"}, {"communication", "555 W"}, {"tdp", "5 kW"}};
  CHECK(load(j).power.tdp.value() == 5000.0);
  j["power"]["tdp"] = "700 kW";
  REQUIRE_THROWS_WITH(load(j), Catch::StartsWith("mem.json: /power/tdp: expected a GPU's draw "
                                                 "from 1 W to 5 kW, got "));
  j["power"]["tdp"] = "700 W";
  j["power"]["compute"] = "670 W";
  j["power"]["idle"] = "0.5 W";
  REQUIRE_THROWS_WITH(load(j), Catch::StartsWith("mem.json: /power/idle: expected a GPU's draw "
                                                 "from 1 W to 5 kW"));
  // The refused value as written: three digits showed "5001 W" as "5.00 kW", inside the range.
  j["power"]["idle"] = "100 W";
  j["power"]["tdp"] = "5001 W";
  REQUIRE_THROWS_WITH(load(j),
                      "mem.json: /power/tdp: expected a GPU's draw from 1 W to 5 kW, "
                      "got 5001 W");
  j["power"]["tdp"] = "5000.00001 W";
  REQUIRE_THROWS_WITH(load(j),
                      "mem.json: /power/tdp: expected a GPU's draw from 1 W to 5 kW, "
                      "got 5000.00001 W");
  j["power"]["tdp"] = "70000 kW";
  REQUIRE_THROWS_WITH(load(j),
                      "mem.json: /power/tdp: expected a GPU's draw from 1 W to 5 kW, "
                      "got 70000000 W");
  j["power"]["tdp"] = "700 W";
  j["power"]["idle"] = "0.99999999 W";
  REQUIRE_THROWS_WITH(load(j),
                      "mem.json: /power/idle: expected a GPU's draw from 1 W to 5 kW, "
                      "got 0.99999999 W");
}

TEST_CASE("hardware_loader: a draw below idle names its own key", "[hardware][io]") {
  // A kW slip in compute ("0.067 kW") was blamed on /power/idle, whose value was right.
  auto j = small_profile();
  j["power"] = {
      {"idle", "100 W"}, {"compute", "0.067 kW"}, {"communication", "555 W"}, {"tdp", "700 W"}};
  REQUIRE_THROWS_WITH(load(j),
                      "mem.json: /power/compute: expected at least the idle draw (100 W), "
                      "got 67 W");
  j["power"]["compute"] = "99.999999999 W";
  REQUIRE_THROWS_WITH(load(j),
                      "mem.json: /power/compute: expected at least the idle draw (100 W), "
                      "got 99.999999999 W");
  j["power"]["compute"] = "670 W";
  j["power"]["communication"] = "55.5 W";
  REQUIRE_THROWS_WITH(load(j),
                      "mem.json: /power/communication: expected at least the idle draw "
                      "(100 W), got 55.5 W");
}

TEST_CASE("hardware_loader: a price of -0 is zero", "[hardware][io]") {
  // "-0 USD/h" passed the sign test as -0.0 and printed costs of "-0" in CSV and JSON.
  auto j = small_profile();
  j["price_per_gpu_hour"] = "-0 USD/h";
  const double price = load(j).usd_per_gpu_hour;
  CHECK(price == 0.0);
  CHECK_FALSE(std::signbit(price));
}

TEST_CASE("hardware_loader: slips a profile could carry silently are named", "[hardware][io]") {
  nlohmann::json j = small_profile();
  SECTION("a tensor-core format the architecture lacks") {
    // FP8 came with Hopper, TF32 and BF16 with Ampere (NVIDIA's architecture whitepapers): an
    // FP8 peak on an Ampere profile ran FP8 plans that the built-in a100-dgx refuses.
    j["gpu"]["arch"] = "ampere";
    j["gpu"]["peak_dense"]["fp8"] = "624 TFLOP/s";
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /gpu/peak_dense/fp8: arch \"ampere\" has no fp8 "
                        "tensor cores (they came with Hopper); expected 0, got \"624 "
                        "TFLOP/s\"");
    j = small_profile();
    j["gpu"]["arch"] = "volta";
    REQUIRE_THROWS_WITH(load(j), Catch::StartsWith("mem.json: /gpu/peak_dense/bf16: arch "
                                                   "\"volta\" has no bf16 tensor cores"));
  }
  SECTION("an NCCL version written as a number") {
    // 2.20 unquoted reads as 2.2: the message said "expected an object" only.
    j["collective"]["nccl"] = 2.20;
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /collective/nccl: expected a built-in NCCL version as "
                        "a string (\"2.20\", \"2.28\") or an object of constants, got 2.2");
  }
  SECTION("a signed time is quoted as written") {
    j["collective"]["measured"] = {
        {"ring", {{"Simple", {{"latency_offset_multi_node", "-5 GB"}}}}}};
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("/collective/measured/ring/Simple/"
                                                 "latency_offset_multi_node: expected a time like "
                                                 "\"-20 us\"") &&
                                     Catch::EndsWith("got \"-5 GB\""));
  }
  SECTION("a signed time has one sign, before its first digit") {
    // "--415.7 us" read as +415.7 us (the unit reader took the second sign), "- 415.7 us" and
    // "-+415.7 us" as -415.7 us; a sign the bounds allow is one minus before the digits.
    for (const char* text : {"--415.7 us", "- 415.7 us", "-+415.7 us", "-"}) {
      j["collective"]["measured"] = {{"ring", {{"Simple", {{"latency_offset_multi_node", text}}}}}};
      REQUIRE_THROWS_WITH(load(j), Catch::Contains("latency_offset_multi_node: expected a time "
                                                   "like \"-20 us\"") &&
                                       Catch::EndsWith("got \"" + std::string(text) + "\""));
    }
    j["collective"]["measured"] = {
        {"ring", {{"Simple", {{"latency_offset_multi_node", "-.5 us"}}}}}};
    REQUIRE_NOTHROW(load(j));
  }
}

TEST_CASE("hardware_loader: a rate, a latency or a price out of what hardware has is a slip",
          "[hardware][io]") {
  // The ranges (hardware_spec.hpp) reach an order of magnitude or more past every built-in part
  // either way; a 1000x unit slip outside them ran silently ("989 GFLOP/s" of bf16 made a 140 s
  // step, a "1e-30 TB/s" HBM reported no communication beside the calls it listed).
  auto j = small_profile();
  SECTION("the ends of each range load") {
    j["gpu"]["peak_dense"]["fp32"] = "1 TFLOP/s";
    j["gpu"]["peak_dense"]["fp8"] = "100 PFLOP/s";
    j["gpu"]["hbm_bandwidth"] = "100 GB/s";
    j["node"]["nvlink_bandwidth_per_direction"] = "100 TB/s";
    j["node"]["nvlink_latency"] = "1 ms";
    j["fabric"]["nic_bandwidth"] = "100 Tb/s";
    j["fabric"]["latency"] = "1000 us";
    j["price_per_gpu_hour"] = "1000 USD/h";
    const HardwareSpec hw = load(j);
    CHECK(hw.gpu.hbm_bandwidth.value() == 1e11);
    CHECK(hw.fabric.nic_bandwidth.value() == 1.25e13);
    CHECK(hw.usd_per_gpu_hour == 1000.0);
    j["gpu"]["hbm_bandwidth"] = "100 TB/s";
    CHECK(load(j).gpu.hbm_bandwidth.value() == 1e14);
    // The low ends of the links and NICs: a value just below is refused by its range, not by the
    // collective graphs' check that the links carry them (which 1 GB/s of NVLink would fail).
    j["node"]["nvlink_bandwidth_per_direction"] = "999 MB/s";
    REQUIRE_THROWS_WITH(load(j), Catch::StartsWith("mem.json: /node/"
                                                   "nvlink_bandwidth_per_direction: expected a "
                                                   "GPU's bandwidth inside its node from 1 GB/s"));
    j["node"]["nvlink_bandwidth_per_direction"] = "450 GB/s";
    j["fabric"]["nic_bandwidth"] = "0.999 Gb/s";
    REQUIRE_THROWS_WITH(load(j), Catch::StartsWith("mem.json: /fabric/nic_bandwidth: expected a "
                                                   "NIC's bandwidth from 1 Gb/s"));
  }
  SECTION("a FLOP rate") {
    j["gpu"]["peak_dense"]["bf16"] = "989 GFLOP/s";
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /gpu/peak_dense/bf16: expected a GPU's dense rate from 1 "
                        "TFLOP/s to 100 PFLOP/s, or 0 for a format it lacks, got \"989 GFLOP/s\"");
    j["gpu"]["peak_dense"]["bf16"] = "989 PFLOP/s";
    REQUIRE_THROWS_WITH(load(j), Catch::StartsWith("mem.json: /gpu/peak_dense/bf16: expected a "
                                                   "GPU's dense rate from 1 TFLOP/s"));
  }
  SECTION("HBM") {
    j["gpu"]["hbm_bandwidth"] = "3.35 GB/s";
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /gpu/hbm_bandwidth: expected a GPU's HBM bandwidth from 100 "
                        "GB/s to 100 TB/s, got \"3.35 GB/s\"");
    j["gpu"]["hbm_bandwidth"] = "1e-30 TB/s";
    REQUIRE_THROWS_WITH(load(j), Catch::EndsWith("got \"1e-30 TB/s\""));
    j["gpu"]["hbm_bandwidth"] = "3350 TB/s";
    REQUIRE_THROWS_WITH(load(j), Catch::StartsWith("mem.json: /gpu/hbm_bandwidth: expected"));
  }
  SECTION("links, NICs and hops") {
    j["node"]["nvlink_bandwidth_per_direction"] = "450 MB/s";
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /node/nvlink_bandwidth_per_direction: expected a GPU's "
                        "bandwidth inside its node from 1 GB/s to 100 TB/s per direction, got "
                        "\"450 MB/s\"");
    j = small_profile();
    j["fabric"]["nic_bandwidth"] = "400 Mb/s";
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /fabric/nic_bandwidth: expected a NIC's bandwidth from 1 "
                        "Gb/s to 100 Tb/s, got \"400 Mb/s\"");
    j = small_profile();
    j["fabric"]["latency"] = "2.7 ms";
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /fabric/latency: expected a hop's latency of at most 1 ms, "
                        "got \"2.7 ms\"");
    j = small_profile();
    j["node"]["nvlink_latency"] = "0.6 s";
    REQUIRE_THROWS_WITH(load(j), Catch::StartsWith("mem.json: /node/nvlink_latency: expected a "
                                                   "hop's latency of at most 1 ms"));
  }
  SECTION("the price") {
    j["price_per_gpu_hour"] = "2990 USD/h";
    REQUIRE_THROWS_WITH(load(j),
                        "mem.json: /price_per_gpu_hour: expected at most 1000 USD/h per GPU, got "
                        "\"2990 USD/h\"");
  }
}
