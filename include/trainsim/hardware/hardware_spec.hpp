// A hardware profile: one GPU model in one kind of node on one kind of fabric, with the power
// draw, the price and the collective library's constants. Profiles are loaded from JSON
// (hardware_profiles/*.json) by io/hardware_loader; every number there carries its source.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "trainsim/hardware/collective_library.hpp"
#include "trainsim/units.hpp"

namespace trainsim::hardware {

// Numeric formats the tensor cores run. fp16 and bf16 share a peak on every GPU that has both.
enum class Dtype { Fp32, Tf32, Fp16, Bf16, Fp8 };
inline constexpr std::size_t kNumDtypes = 5;

// GPU generation, as NCCL's tuning tables index it (Volta, Ampere, Hopper, Blackwell).
enum class GpuArch { Volta, Ampere, Hopper, Blackwell };

// How fast tiled GEMMs run (compute/kernel_cost.hpp has the formulas and their sources). A
// GEMM's output is cut into tiles, one per SM at a time (NVIDIA, "Matrix Multiplication
// Background User's Guide", DU-09799-001, 2023, §2.3 and §3): tile and wave quantization follow
// from the shape, the tile and the GPU's SM count; each tile costs a fixed time (pipeline fill
// and epilogue) on top of its K loop; smaller tiles reuse their operands less and run slower.
struct GemmEfficiency {
  // Achieved fraction of the dtype's peak in a tile's K loop, for fp16/bf16 and for any dtype
  // without its own entry in max_efficiency_by_dtype. In (0, 1].
  double max_efficiency = 1.0;
  // Per dtype (Dtype order); 0 means "use max_efficiency". Each in (0, 1] when set.
  std::array<double, kNumDtypes> max_efficiency_by_dtype{};
  // K (elements) at which the largest tile, at the 16-bit rate, spends as long in its fixed
  // per-tile work as in its K loop: the per-tile fixed time is
  // half_size * 2 * tile_m * tile_n / (peak_16bit / sms * max_efficiency). 0: none.
  double half_size = 0.0;
  // The largest (most efficient) output tile, M x N elements; the tile candidates are every
  // tm x tn with tm, tn in {64, 128, 256} and tm * tn <= tile_m * tile_n (both orientations).
  int tile_m = 256;
  int tile_n = 128;
  // Operand reuse tm * tn / (tm + tn) (elements) below which a tile's K loop is bound by the
  // bandwidth that feeds it: a tile of reuse r runs at min(1, r / reuse_knee) of the maximum.
  // 0: every candidate tile runs at the maximum.
  double reuse_knee = 0.0;

  // The K-loop efficiency of `d`: its own entry, else max_efficiency.
  [[nodiscard]] double max_for(Dtype d) const {
    const double own = max_efficiency_by_dtype[static_cast<std::size_t>(d)];
    return own > 0.0 ? own : max_efficiency;
  }
};

// How fast fused (FlashAttention-style) attention runs: a saturating curve in the keys each
// query block visits, scaled by the share of a score element's time spent in tensor-core
// matmuls, which grows with the head dimension (compute/kernel_cost.hpp).
struct AttentionEfficiency {
  double max_efficiency = 1.0;  // long sequences at head dimension 128; in (0, 1]
  double half_size = 0.0;       // keys per query block at half the maximum (tokens); 0: flat
  // Head dimension at which the matmul and the per-score (softmax) work take equal time; 0: no
  // head-dimension effect.
  double head_dim_half = 0.0;
  // Backward kernel's maximum over the forward's: FlashAttention-2 reaches up to 73% of an
  // A100's peak forward and 63% backward (Dao 2023, arXiv:2307.08691, section 4.1).
  double backward_ratio = 1.0;
  // How many times as fast as FlashAttention-2 on this GPU the kernel the curve describes runs:
  // 1 for a FlashAttention-2 curve, the kernel every stack's attention_speed is relative to; a
  // curve fitted to another kernel (h200-sxm: cuDNN fused attention) says how much faster it
  // is, and a stack's speed is divided by it. In [0.05, 5].
  double speed_over_flash2 = 1.0;
};

struct GpuSpec {
  std::string name;  // "NVIDIA H100 SXM5 80GB"
  GpuArch arch = GpuArch::Hopper;
  // Streaming multiprocessors (datasheet). 0 only in specs built in code: no tile or wave
  // quantization then; the loader requires >= 1.
  int sms = 0;
  // Dense tensor-core peak per dtype; zero where the GPU lacks the dtype (V100 has no bf16).
  std::array<FlopsPerSecond, kNumDtypes> peak_dense{};
  Bytes hbm_capacity;              // HBM per GPU (datasheet)
  // Device memory taken before the framework allocates a tensor (report/memory.hpp "usable
  // memory"). The CUDA context with the kernel images it loads: about 0.5 GiB for PyTorch on
  // CUDA 12 with lazy loading (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2; CUDA C++
  // Programming Guide, "Lazy Loading"), as nvidia-smi shows for an idle process. Default 512 MiB.
  Bytes cuda_context = Bytes(512.0 * 1024 * 1024);
  // NCCL communicator buffers: NCCL_BUFFSIZE (4 MiB, Simple protocol; NCCL environment-variable
  // documentation) per channel and ring peer, estimated for 2 communicators (data parallel and
  // one model-parallel group) x 16 channels x 2 peers x 4 MiB = 256 MiB; LL/LL128 buffers and
  // proxy state left out. Default 256 MiB.
  Bytes nccl_buffers = Bytes(256.0 * 1024 * 1024);
  BytesPerSecond hbm_bandwidth;    // spec-sheet HBM bandwidth
  GemmEfficiency gemm;             // matrix multiplies (cuBLAS)
  AttentionEfficiency attention;   // fused flash attention
  double memory_efficiency = 1.0;  // achieved fraction of hbm_bandwidth for streaming kernels
  Seconds kernel_launch_overhead;  // added to every kernel
  // Fraction by which compute kernels slow while a communication kernel runs beside them
  // (NCCL kernels take SMs and HBM bandwidth): compute runs at 1 / (1 + contention).
  double comm_compute_contention = 0.0;
  // The same for GEMM kernels, when the profile gives it apart (Hopper's persistent cuBLAS
  // kernels, one CTA per SM, take two rounds when NCCL holds any SM); unset, the value above.
  std::optional<double> gemm_comm_contention;
};

// Intra-node interconnect.
enum class IntraNodeKind { NvSwitch, CubeMesh };

// A node is one host (the GPUs that share a CPU and its NICs). Its GPUs belong to one NVLink
// domain, which may span several hosts: NVLink switch trays join the 72 GPUs of 18 GB200 compute
// trays of 4 GPUs (NVIDIA GB200 NVL72; docs/sources.md C.2). The collective model prices a group
// whose ranks all lie in one NVLink domain on NVLink, and only traffic between domains on the
// scale-out fabric (NCCL treats a multi-node NVLink domain as one node).
struct NodeSpec {
  int gpus_per_node = 8;
  // GPUs in one NVLink domain: a multiple of gpus_per_node; domains hold consecutive hosts.
  // 0 (the default): the domain is the node.
  int nvlink_domain_gpus = 0;
  IntraNodeKind intra = IntraNodeKind::NvSwitch;
  // NVLink bandwidth of one GPU, one direction (the marketed figure counts both directions).
  BytesPerSecond nvlink_bandwidth_per_direction;
  Seconds nvlink_latency;
  bool nvswitch_sharp = false;  // NVLS in-switch reductions (NVSwitch gen3, H100 and newer)

  // GPUs in one NVLink domain (gpus_per_node unless nvlink_domain_gpus says more).
  [[nodiscard]] int domain_gpus() const {
    return nvlink_domain_gpus > 0 ? nvlink_domain_gpus : gpus_per_node;
  }
  // Hosts in one NVLink domain (1 unless the domain spans hosts).
  [[nodiscard]] int hosts_per_domain() const {
    return gpus_per_node > 0 ? domain_gpus() / gpus_per_node : 1;
  }
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

// The board powers a GPU can draw, in watts: a profile's draws and a measured power outside
// them are unit mistakes ("700 kW", a power in mW), refused by the hardware loader and calibrate.
inline constexpr double kMinGpuWatts = 1.0;
inline constexpr double kMaxGpuWatts = 5000.0;

// The rates and times a profile may state, in SI units (FLOP/s, B/s, s): an order of magnitude or
// more beyond every part of the built-in profiles either way (docs/sources.md C.1, C.2: V100's
// 15.7 TFLOP/s fp32 to GB200's 5 PFLOP/s fp8; HBM 0.9 to 8 TB/s; NVLink 150 to 900 GB/s per
// direction; NICs 100 to 400 Gb/s). A value outside is a unit slip ("989 GFLOP/s", "3.35 GB/s"),
// which ran every plan a thousand times slower, or faster, without a word; a "1e-30 TB/s" HBM
// reported no communication beside the calls it listed.
inline constexpr double kMinPeakFlops = 1e12;        // 1 TFLOP/s
inline constexpr double kMaxPeakFlops = 1e17;        // 100 PFLOP/s
inline constexpr double kMinHbmBandwidth = 1e11;     // 100 GB/s
inline constexpr double kMaxHbmBandwidth = 1e14;     // 100 TB/s
inline constexpr double kMinNvlinkBandwidth = 1e9;   // 1 GB/s (a PCIe-only node's links)
inline constexpr double kMaxNvlinkBandwidth = 1e14;  // 100 TB/s
inline constexpr double kMinNicBandwidth = 1.25e8;   // 1 Gb/s
inline constexpr double kMaxNicBandwidth = 1.25e13;  // 100 Tb/s
inline constexpr double kMaxHopLatency = 1e-3;       // 1 ms (NCCL's tables: 0.6 to 2.7 us a hop)
inline constexpr double kMaxUsdPerGpuHour = 1000.0;  // list prices are 0.5 to 11 USD/h

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
