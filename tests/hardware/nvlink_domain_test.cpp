// The NVLink domain of a hardware profile (node.nvlink_domain_gpus) and the Blackwell and H800
// built-ins that use it or check against datasheets (docs/sources.md C.1, C.2).
#include <string>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

#include "sim/io/hardware_loader.hpp"
#include "sim/io/json_reader.hpp"

using namespace trainsim;
using trainsim::hardware::Dtype;
using trainsim::hardware::HardwareSpec;

namespace {

// The minimal profile of hardware_loader_test.cpp with 4-GPU nodes, which the cases mutate.
nlohmann::json tray_profile() {
  return io::parse_json(R"({
    "id": "test-tray", "name": "test",
    "gpu": {"name": "g", "arch": "blackwell",
            "peak_dense": {"fp32": "80 TFLOP/s", "tf32": "0 TFLOP/s", "fp16": "2500 TFLOP/s",
                           "bf16": "2500 TFLOP/s", "fp8": "0 TFLOP/s"},
            "sms": 148, "hbm_capacity": "186 GB", "hbm_bandwidth": "8 TB/s",
            "gemm": {"max_efficiency": 0.7, "half_size": 128, "tile": "256x128",
                     "reuse_knee": 60},
            "attention": {"max_efficiency": 0.35, "half_size": 512, "head_dim_half": 32,
                          "backward_ratio": 0.9},
            "memory_efficiency": 0.85, "kernel_launch_overhead": "4 us",
            "comm_compute_contention": 0.1},
    "node": {"gpus_per_node": 4, "intra": "nvswitch", "nvlink_bandwidth_per_direction": "900 GB/s",
             "nvlink_latency": "0.6 us", "nvswitch_sharp": true},
    "fabric": {"nics_per_node": 4, "nic_bandwidth": "400 Gb/s", "latency": "2.7 us",
               "topology": "rail_optimized", "oversubscription": 1, "nodes_per_leaf": 32},
    "power": {"idle": "140 W", "compute": "1149 W", "communication": "951 W", "tdp": "1200 W"},
    "price_per_gpu_hour": "10 USD/h",
    "collective": {"nccl": "2.28", "host_cpu": "intel", "intra_link": "nvlink",
                   "ll128_enabled": true, "ib_sharp": false,
                   "graphs": {
                     "ring": {"single_node": {"channels": 16, "bw_intra": "45 GB/s", "bw_inter": "45 GB/s"},
                              "multi_node": {"channels": 8, "bw_intra": "24 GB/s", "bw_inter": "24 GB/s"}},
                     "tree": {"single_node": {"channels": 16, "bw_intra": "45 GB/s", "bw_inter": "45 GB/s"},
                              "multi_node": {"channels": 8, "bw_intra": "24 GB/s", "bw_inter": "24 GB/s"}},
                     "nvls": {"single_node": {"channels": 8, "bw_intra": "80 GB/s", "bw_inter": "80 GB/s"},
                              "multi_node": {"channels": 8, "bw_intra": "80 GB/s", "bw_inter": "24 GB/s"}}}}
  })",
                        "mem.json");
}

HardwareSpec load(const nlohmann::json& j) { return io::hardware_from_json(j, "mem.json", ""); }

}  // namespace

TEST_CASE("nvlink_domain: without the key the domain is the node", "[hardware][io]") {
  const HardwareSpec hw = load(tray_profile());
  REQUIRE(hw.node.domain_gpus() == 4);
  REQUIRE(hw.node.hosts_per_domain() == 1);
  // Every existing built-in but gb200-nvl72 leaves the key out.
  for (const char* id :
       {"v100-dgx", "a100-dgx", "h100-dgx", "h200-dgx", "h200-sxm", "b200-dgx", "h800-dgx"}) {
    const HardwareSpec b = io::load_hardware(id);
    REQUIRE(b.node.domain_gpus() == b.node.gpus_per_node);
    REQUIRE(b.node.hosts_per_domain() == 1);
  }
}

TEST_CASE("nvlink_domain: a multiple of the node's GPUs loads", "[hardware][io]") {
  auto j = tray_profile();
  j["node"]["nvlink_domain_gpus"] = 72;
  const HardwareSpec hw = load(j);
  REQUIRE(hw.node.gpus_per_node == 4);
  REQUIRE(hw.node.domain_gpus() == 72);
  REQUIRE(hw.node.hosts_per_domain() == 18);
  j["node"]["nvlink_domain_gpus"] = 4;  // the node itself
  REQUIRE(load(j).node.domain_gpus() == 4);
}

TEST_CASE("nvlink_domain: bad values are one ConfigError naming file, key and expectation",
          "[hardware][io]") {
  auto j = tray_profile();
  const std::string where = "mem.json: /node/nvlink_domain_gpus: ";
  SECTION("not a multiple of gpus_per_node") {
    j["node"]["nvlink_domain_gpus"] = 70;
    REQUIRE_THROWS_AS(load(j), ConfigError);
    REQUIRE_THROWS_WITH(load(j), where +
                                     "expected a positive multiple of gpus_per_node (4) up to "
                                     "1024, got 70");
  }
  SECTION("smaller than a node") {
    j["node"]["nvlink_domain_gpus"] = 2;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains(where + "expected a positive multiple") &&
                                     Catch::Contains("got 2"));
  }
  SECTION("far above the bound, or zero: the domain's own bound is named") {
    // 1e9 said "expected at most 65536", a bound of no key's own; 1e20 past int64 and 0 said
    // other types' ranges.
    for (const nlohmann::json& v : {nlohmann::json(1'000'000'000), nlohmann::json(1e20),
                                    nlohmann::json(0), nlohmann::json(-5)}) {
      INFO(v.dump());
      j["node"]["nvlink_domain_gpus"] = v;
      REQUIRE_THROWS_WITH(load(j), Catch::StartsWith(where + "expected a positive multiple of "
                                                             "gpus_per_node (4) up to 1024, got "));
    }
  }
  SECTION("zero or negative") {
    j["node"]["nvlink_domain_gpus"] = 0;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains(where) && Catch::Contains("expected"));
    j["node"]["nvlink_domain_gpus"] = -72;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains(where) && Catch::Contains("expected"));
  }
  SECTION("beyond the bound") {
    j["node"]["nvlink_domain_gpus"] = 2048;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains(where) && Catch::Contains("up to 1024"));
  }
  SECTION("not an integer") {
    j["node"]["nvlink_domain_gpus"] = "72";
    REQUIRE_THROWS_WITH(load(j), Catch::Contains(where + "expected an integer"));
    // A fraction is no multiple of the node's GPUs.
    j["node"]["nvlink_domain_gpus"] = 7.5;
    REQUIRE_THROWS_WITH(load(j), where +
                                     "expected a positive multiple of gpus_per_node (4) up to "
                                     "1024, got 7.5");
  }
  SECTION("a domain beyond the node without NVSwitch") {
    j["node"]["intra"] = "cube_mesh";
    j["node"]["nvswitch_sharp"] = false;
    j["collective"]["graphs"]["nvls"]["single_node"]["channels"] = 0;
    j["node"]["nvlink_domain_gpus"] = 8;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains(where) && Catch::Contains("needs \"intra\": "
                                                                           "\"nvswitch\""));
  }
  SECTION("a misspelt key gets a suggestion") {
    j["node"]["nvlink_domain_gpu"] = 72;
    REQUIRE_THROWS_WITH(load(j), Catch::Contains("nvlink_domain_gpus"));
  }
}

TEST_CASE("nvlink_domain: gb200-nvl72 holds NVIDIA's GB200 NVL72 figures", "[hardware][io]") {
  const HardwareSpec hw = io::load_hardware("gb200-nvl72");
  // docs/sources.md C.1: per GPU 2.5 / 5 / 10 PFLOP/s TF32 / BF16 / FP8 sparse, halved for dense;
  // 186 GB HBM3e at 8 TB/s; NVLink 5 1.8 TB/s both ways = 900 GB/s per direction; 1,200 W.
  REQUIRE(hw.peak(Dtype::Bf16).value() == Approx(2500e12).epsilon(1e-12));
  REQUIRE(hw.peak(Dtype::Fp8).value() == Approx(5000e12).epsilon(1e-12));
  REQUIRE(hw.peak(Dtype::Tf32).value() == Approx(1250e12).epsilon(1e-12));
  REQUIRE(hw.peak(Dtype::Fp32).value() == Approx(80e12).epsilon(1e-12));
  // The datasheets' "GB" of HBM is about a GiB (hardware_profiles/, hbm_capacity's note): an
  // H100 80GB reports 81,559 MiB, a B200 180GB 183,359 MiB.
  REQUIRE(hw.gpu.hbm_capacity.value() == Approx(186.0 * 1024 * 1024 * 1024).epsilon(1e-12));
  REQUIRE(hw.gpu.hbm_bandwidth.value() == Approx(8e12).epsilon(1e-12));
  REQUIRE(hw.node.nvlink_bandwidth_per_direction.value() == Approx(900e9).epsilon(1e-12));
  REQUIRE(hw.power.tdp.value() == Approx(1200.0).epsilon(1e-12));
  // C.2: 4 GPUs per compute tray, 72 per NVLink domain with NVLS; one 400 Gb/s NIC per GPU.
  REQUIRE(hw.node.gpus_per_node == 4);
  REQUIRE(hw.node.domain_gpus() == 72);
  REQUIRE(hw.node.nvswitch_sharp);
  REQUIRE(hw.fabric.nics_per_node == 4);
  REQUIRE(hw.fabric.nic_bandwidth.value() == Approx(50e9).epsilon(1e-12));
}

TEST_CASE("nvlink_domain: h800-dgx is an H100 with 400 GB/s NVLink", "[hardware][io]") {
  const HardwareSpec h800 = io::load_hardware("h800-dgx");
  const HardwareSpec h100 = io::load_hardware("h100-dgx");
  // docs/sources.md C.1: the same tensor-core rates and HBM as H100 SXM5; NVLink 400 GB/s
  // bidirectional = 200 per direction (arXiv:2505.09343); C.2: 8 x 400 Gb/s IB per node.
  REQUIRE(h800.peak(Dtype::Bf16).value() == Approx(h100.peak(Dtype::Bf16).value()));
  REQUIRE(h800.peak(Dtype::Fp8).value() == Approx(h100.peak(Dtype::Fp8).value()));
  REQUIRE(h800.gpu.hbm_capacity.value() == Approx(h100.gpu.hbm_capacity.value()));
  REQUIRE(h800.node.nvlink_bandwidth_per_direction.value() == Approx(200e9).epsilon(1e-12));
  REQUIRE(h800.node.gpus_per_node == 8);
  REQUIRE(h800.fabric.nics_per_node == 8);
  REQUIRE(h800.fabric.nic_bandwidth.value() == Approx(50e9).epsilon(1e-12));
  // A.9 rules: 8 links x 20.6 = 164.8 GB/s in NCCL; 4 channels at 40 duplicated to 8 at 20 =
  // 160 GB/s, DeepSeek's "NVLink offers 160 GB/s" (arXiv:2412.19437, section 3.2.2).
  const auto& ring = h800.collective.ring.single_node;
  REQUIRE(ring.channels * ring.bw_intra.value() == Approx(160e9).epsilon(1e-12));
}

TEST_CASE("nvlink_domain: b200-dgx matches NVIDIA's B200 datasheets", "[hardware][io]") {
  const HardwareSpec hw = io::load_hardware("b200-dgx");
  // docs/sources.md C.1: HGX B200 per GPU FP32 75 TFLOP/s; TF32 2.2, BF16 4.5, FP8 9 PFLOP/s
  // sparse, halved for dense; DGX B200: 1,440 GB and 64 TB/s for 8 GPUs; 1,000 W max.
  REQUIRE(hw.peak(Dtype::Fp32).value() == Approx(75e12).epsilon(1e-12));
  REQUIRE(hw.peak(Dtype::Tf32).value() == Approx(1100e12).epsilon(1e-12));
  REQUIRE(hw.peak(Dtype::Bf16).value() == Approx(2250e12).epsilon(1e-12));
  REQUIRE(hw.peak(Dtype::Fp8).value() == Approx(4500e12).epsilon(1e-12));
  // The "GB" read as GiB, as the other profiles do (hbm_capacity's note).
  REQUIRE(8.0 * hw.gpu.hbm_capacity.value() == Approx(1440.0 * 1024 * 1024 * 1024).epsilon(1e-12));
  REQUIRE(8.0 * hw.gpu.hbm_bandwidth.value() == Approx(64e12).epsilon(1e-12));
  REQUIRE(hw.power.tdp.value() == Approx(1000.0).epsilon(1e-12));
  REQUIRE(hw.node.nvlink_bandwidth_per_direction.value() == Approx(900e9).epsilon(1e-12));
}
