// A hardware profile: one GPU model in one kind of node on one kind of fabric, with the power
// draw, the price and the collective library's constants. Profiles are loaded from JSON
// (hardware_profiles/*.json) by io/hardware_loader; every number there carries its source.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "trainsim/hardware/collective_library.hpp"
#include "trainsim/units.hpp"

namespace trainsim::hardware {

// Numeric formats the tensor cores run. fp16 and bf16 share a peak on every GPU that has both.
enum class Dtype { Fp32, Tf32, Fp16, Bf16, Fp8 };
inline constexpr std::size_t kNumDtypes = 5;

// GPU generation, as NCCL's tuning tables index it (Volta, Ampere, Hopper, Blackwell).
enum class GpuArch { Volta, Ampere, Hopper, Blackwell };

// Achievable fraction of peak for a kernel family as a saturating curve of its size:
//   efficiency(x) = max_efficiency * x / (x + half_size)
// x is a GEMM's smallest dimension or attention's sequence length. A large, square GEMM
// approaches max_efficiency; a skinny one (x << half_size) falls toward 0. The curve is the
// simplest monotone saturating form; its two parameters are fitted by calibration.
struct EfficiencyCurve {
  double max_efficiency = 1.0;  // in (0, 1]
  double half_size = 0.0;       // elements; 0 means flat at max_efficiency
};

struct GpuSpec {
  std::string name;  // "NVIDIA H100 SXM5 80GB"
  GpuArch arch = GpuArch::Hopper;
  // Dense tensor-core peak per dtype; zero where the GPU lacks the dtype (V100 has no bf16).
  std::array<FlopsPerSecond, kNumDtypes> peak_dense{};
  Bytes hbm_capacity;              // usable HBM per GPU
  BytesPerSecond hbm_bandwidth;    // spec-sheet HBM bandwidth
  EfficiencyCurve gemm;            // matrix multiplies (cuBLAS)
  EfficiencyCurve attention;       // fused flash attention, x = sequence length
  double memory_efficiency = 1.0;  // achieved fraction of hbm_bandwidth for streaming kernels
  Seconds kernel_launch_overhead;  // added to every kernel
  // Fraction by which compute kernels slow while a communication kernel runs beside them
  // (NCCL kernels take SMs and HBM bandwidth): compute runs at 1 / (1 + contention).
  double comm_compute_contention = 0.0;
};

// Intra-node interconnect.
enum class IntraNodeKind { NvSwitch, CubeMesh };

struct NodeSpec {
  int gpus_per_node = 8;
  IntraNodeKind intra = IntraNodeKind::NvSwitch;
  // NVLink bandwidth of one GPU, one direction (the marketed figure counts both directions).
  BytesPerSecond nvlink_bandwidth_per_direction;
  Seconds nvlink_latency;
  bool nvswitch_sharp = false;  // NVLS in-switch reductions (NVSwitch gen3, H100 and newer)
};

enum class FabricTopology { FatTree, RailOptimized };

struct FabricSpec {
  int nics_per_node = 8;
  BytesPerSecond nic_bandwidth;  // one NIC, one direction ("400 Gb/s" = 50e9 B/s)
  Seconds latency;               // one network hop, end to end
  // Recorded for reports and calibration. The collective model prices both alike: NCCL's ring
  // and tree channels are rail-aligned (NIC i of every node) and PXN moves cross-rail point-to-
  // point traffic onto NVLink first, so a group leaves its leaf or rail switch only beyond
  // nodes_per_leaf nodes in either topology, where `oversubscription` applies.
  FabricTopology topology = FabricTopology::RailOptimized;
  double oversubscription = 1.0;  // >= 1; 2 means the upper tiers carry half the edge bandwidth
  // Nodes under one leaf switch (fat tree) or one rail switch per rail (rail-optimized, e.g. a
  // DGX SuperPOD scalable unit of 32 nodes). A group spanning more nodes crosses the upper
  // tiers, whose bandwidth is divided by `oversubscription`.
  int nodes_per_leaf = 32;
};

// Power draw of one GPU by activity (board power, what nvidia-smi reports).
struct PowerSpec {
  Watts idle;           // nothing running
  Watts compute;        // compute kernels running (with or without communication beside them)
  Watts communication;  // only communication kernels running
  Watts tdp;            // board limit; the model never draws more
};

struct HardwareSpec {
  std::string id;    // "h100-dgx"
  std::string name;  // "NVIDIA DGX H100 (8x H100 SXM5 80GB, 8x NDR 400 Gb/s)"
  GpuSpec gpu;
  NodeSpec node;
  FabricSpec fabric;
  PowerSpec power;
  CollectiveLibrarySpec collective;
  double usd_per_gpu_hour = 0.0;  // rental price used for cost per token

  [[nodiscard]] FlopsPerSecond peak(Dtype d) const {
    return gpu.peak_dense[static_cast<std::size_t>(d)];
  }
};

}  // namespace trainsim::hardware
