#include "trainsim/calibrate/parameters.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "trainsim/collective/collective_model.hpp"

#include "sim/collective/nccl_tuning.hpp"

namespace trainsim::calibrate {
namespace {

using hardware::Algorithm;
using hardware::HardwareSpec;
using hardware::MeasuredTerms;
using hardware::Protocol;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr auto kSimple = static_cast<std::size_t>(hardware::Protocol::Simple);
constexpr double kGiB = 1024.0 * kMiB;

// The tuned algorithms and the protocols in index order.
using collective::detail::kProtocols;
using collective::detail::kTunedAlgorithms;

Parameter number(std::string pointer, double lower, double upper, double start, std::string meaning,
                 std::function<double(const HardwareSpec&)> get,
                 std::function<void(HardwareSpec&, double)> set) {
  return Parameter{.pointer = std::move(pointer),
                   .unit = ParameterUnit::Number,
                   .lower = lower,
                   .upper = upper,
                   .start = start,
                   .neutral = start,
                   .meaning = std::move(meaning),
                   .get = std::move(get),
                   .set = std::move(set)};
}

// The eight measured terms of one algorithm and protocol (hardware::MeasuredTerms). Bounds:
// bandwidth factors from 0.3 (a fabric at a third of NCCL's estimate is broken, not calibrated) to
// 2 (NCCL's Hopper LL128 per-channel cap of 36.7 GB/s is below what 2-node rings measure with
// LL128, nccl-tests#309: 291 GB/s at 64 MiB against a capped 294 before latency);
// per-doubling efficiency 0.5-1 (a loss, never a gain, with scale); latency scale 0.2-10 and
// offset -1 ms to 1 ms (measured small-message floors are 12-47 us over NCCL's 6-25 us, B.4;
// a negative offset with a scale above 1 says the latency grows faster with the nodes than
// NCCL's model while its fixed part is smaller; the total is never below 0); fill
// up to 4 chunks-worth per chunk count and saturation between one NCCL buffer and 4 GiB.
void add_measured(std::vector<Parameter>& out, Algorithm a, Protocol pr) {
  const std::size_t first = out.size();
  const auto i = static_cast<std::size_t>(a);
  const auto k = static_cast<std::size_t>(pr);
  auto terms = [i, k](HardwareSpec& hw) -> MeasuredTerms& { return hw.collective.measured[i][k]; };
  auto cterms = [i, k](const HardwareSpec& hw) -> const MeasuredTerms& {
    return hw.collective.measured[i][k];
  };
  // A term that is a plain number of MeasuredTerms.
  auto plain = [&](const char* field, double MeasuredTerms::*member, double lower, double upper,
                   double start, std::string meaning) {
    out.push_back(number(
        measured_pointer(a, pr, field), lower, upper, start, std::move(meaning),
        [cterms, member](const HardwareSpec& hw) { return cterms(hw).*member; },
        [terms, member](HardwareSpec& hw, double v) { terms(hw).*member = v; }));
  };
  plain("bandwidth_factor_single_node", &MeasuredTerms::bandwidth_factor_single_node, 0.3, 2.0, 1.0,
        "measured / NCCL-model bandwidth for a group inside one node");
  plain("bandwidth_factor_multi_node", &MeasuredTerms::bandwidth_factor_multi_node, 0.3, 2.0, 1.0,
        "measured / NCCL-model bandwidth for a group across nodes");
  out.push_back(number(
      measured_pointer(a, pr, "efficiency_per_doubling"), 0.5, 1.0, 0.95,
      "share of the bandwidth kept per doubling of the nodes a group spans",
      [cterms, i, k](const HardwareSpec& hw) {
        const auto& t = cterms(hw);
        return k == kSimple || !t.inherits_efficiency_per_doubling
                   ? t.efficiency_per_doubling
                   : hw.collective.measured[i][kSimple].efficiency_per_doubling;
      },
      [terms](HardwareSpec& hw, double v) {
        terms(hw).efficiency_per_doubling = v;
        terms(hw).inherits_efficiency_per_doubling = false;
      }));
  out.push_back(number(
      measured_pointer(a, pr, "latency_scale"), 0.2, 10.0, 1.0,
      "across nodes, multiplies NCCL's latency (the part that grows with ranks and nodes)",
      [cterms, i, k](const HardwareSpec& hw) {
        const auto& t = cterms(hw);
        return k == kSimple || !t.inherits_latency_scale
                   ? t.latency_scale
                   : hw.collective.measured[i][kSimple].latency_scale;
      },
      [terms](HardwareSpec& hw, double v) {
        terms(hw).latency_scale = v;
        terms(hw).inherits_latency_scale = false;
      }));
  for (const bool single : {true, false}) {
    const char* field = single ? "latency_offset_single_node" : "latency_offset_multi_node";
    Parameter offset = number(
        measured_pointer(a, pr, field), -1e-3, 1e-3, 0.0,
        single ? "added to every call inside a node (launch, synchronization)"
               : "added to every call across nodes whatever their number; negative where "
                 "NCCL's fixed latency over-counts",
        [cterms, single](const HardwareSpec& hw) {
          return (single ? cterms(hw).latency_offset_single_node
                         : cterms(hw).latency_offset_multi_node)
              .value();
        },
        [terms, single](HardwareSpec& hw, double v) {
          (single ? terms(hw).latency_offset_single_node : terms(hw).latency_offset_multi_node) =
              Seconds(v);
        });
    offset.unit = ParameterUnit::Seconds;
    out.push_back(std::move(offset));
  }
  plain("fill_fraction", &MeasuredTerms::fill_fraction, 0.0, 4.0, 0.5,
        "pipeline fill: extra bytes-worth of transfer, as a share of the message up to "
        "fill_saturation");
  Parameter saturation = number(
      measured_pointer(a, pr, "fill_saturation"), 1.0 * kMiB, 4.0 * kGiB, 64.0 * kMiB,
      "message size from which NCCL's chunks stop growing, so the fill stops growing",
      [cterms](const HardwareSpec& hw) { return cterms(hw).fill_saturation.value(); },
      [terms](HardwareSpec& hw, double v) { terms(hw).fill_saturation = Bytes(v); });
  saturation.unit = ParameterUnit::Bytes;
  out.push_back(std::move(saturation));
  // Neutral: the MeasuredTerms defaults, which give NCCL's model unchanged.
  const HardwareSpec defaults;
  for (std::size_t j = first; j < out.size(); ++j) out[j].neutral = out[j].get(defaults);
}

std::vector<Parameter> make_parameters() {
  std::vector<Parameter> out;
  // Compute: the GEMM and attention efficiency terms of hardware::GemmEfficiency and
  // hardware::AttentionEfficiency (compute/kernel_cost.hpp; docs/compute-model.md) and the
  // roofline's memory and launch terms. Bounds: efficiencies in [0.05, 1]; a GEMM tile's fixed
  // time up to 64k K-steps and attention's half size up to 64k keys, far past any measured
  // knee; the reuse knee between the reuse of a 32x32 tile (16) and of a 256x256 tile (128)
  // doubled (256); attention's head-dimension half up to 1024, four times the largest head
  // dimension in use.
  out.push_back(number(
      "/gpu/gemm/max_efficiency", 0.05, 1.0, 0.7,
      "fp16/bf16 GEMM efficiency in a tile's K loop (and of dtypes without their own)",
      [](const HardwareSpec& hw) { return hw.gpu.gemm.max_efficiency; },
      [](HardwareSpec& hw, double v) { hw.gpu.gemm.max_efficiency = v; }));
  for (const auto& [key, dtype] :
       {std::pair{"fp32", hardware::Dtype::Fp32}, std::pair{"tf32", hardware::Dtype::Tf32},
        std::pair{"fp8", hardware::Dtype::Fp8}}) {
    const auto i = static_cast<std::size_t>(dtype);
    out.push_back(number(
        std::string("/gpu/gemm/max_efficiency_by_dtype/") + key, 0.05, 1.0, 0.7,
        std::string(key) + " GEMM efficiency in a tile's K loop (absent: max_efficiency)",
        [dtype = dtype](const HardwareSpec& hw) { return hw.gpu.gemm.max_for(dtype); },
        [i](HardwareSpec& hw, double v) { hw.gpu.gemm.max_efficiency_by_dtype[i] = v; }));
  }
  out.push_back(number(
      "/gpu/gemm/half_size", 0.0, 65536.0, 128.0,
      "K at which the largest tile's fixed time (fill, epilogue) equals its K loop, 16-bit rate",
      [](const HardwareSpec& hw) { return hw.gpu.gemm.half_size; },
      [](HardwareSpec& hw, double v) { hw.gpu.gemm.half_size = v; }));
  out.push_back(number(
      "/gpu/gemm/reuse_knee", 16.0, 256.0, 64.0,
      "tile operand reuse tm*tn/(tm+tn) below which a tile's K loop slows in proportion",
      [](const HardwareSpec& hw) { return hw.gpu.gemm.reuse_knee; },
      [](HardwareSpec& hw, double v) { hw.gpu.gemm.reuse_knee = v; }));
  out.push_back(number(
      "/gpu/attention/max_efficiency", 0.05, 1.0, 0.5,
      "fused attention efficiency, long sequences, head dimension 128",
      [](const HardwareSpec& hw) { return hw.gpu.attention.max_efficiency; },
      [](HardwareSpec& hw, double v) { hw.gpu.attention.max_efficiency = v; }));
  out.push_back(number(
      "/gpu/attention/half_size", 0.0, 65536.0, 512.0,
      "keys per query block (s, or s/2 when causal) at half the maximum",
      [](const HardwareSpec& hw) { return hw.gpu.attention.half_size; },
      [](HardwareSpec& hw, double v) { hw.gpu.attention.half_size = v; }));
  out.push_back(number(
      "/gpu/attention/head_dim_half", 0.0, 1024.0, 32.0,
      "head dimension at which matmul and per-score softmax work take equal time",
      [](const HardwareSpec& hw) { return hw.gpu.attention.head_dim_half; },
      [](HardwareSpec& hw, double v) { hw.gpu.attention.head_dim_half = v; }));
  out.push_back(number(
      "/gpu/memory_efficiency", 0.05, 1.0, 0.85, "achieved share of HBM bandwidth when streaming",
      [](const HardwareSpec& hw) { return hw.gpu.memory_efficiency; },
      [](HardwareSpec& hw, double v) { hw.gpu.memory_efficiency = v; }));
  Parameter launch = number(
      "/gpu/kernel_launch_overhead", 0.0, 100e-6, 5e-6, "added to every kernel",
      [](const HardwareSpec& hw) { return hw.gpu.kernel_launch_overhead.value(); },
      [](HardwareSpec& hw, double v) { hw.gpu.kernel_launch_overhead = Seconds(v); });
  launch.unit = ParameterUnit::Seconds;
  out.push_back(std::move(launch));
  // A GEMM's slowdown beside communication (engine: its work runs at 1 / (1 + c) while a
  // collective runs on the device), from the suite's overlap records. Bounds: none to 3, a GEMM
  // at a quarter speed, past the 2x of a persistent GEMM that waits a whole round for one SM.
  // Absent in a profile it is comm_compute_contention, which is what it reads then.
  out.push_back(number(
      "/gpu/gemm_comm_contention", 0.0, 3.0, 0.1,
      "GEMM time added, as a share, while a collective runs beside it",
      [](const HardwareSpec& hw) {
        return hw.gpu.gemm_comm_contention.value_or(hw.gpu.comm_compute_contention);
      },
      [](HardwareSpec& hw, double v) { hw.gpu.gemm_comm_contention = v; }));
  // Power by activity (hardware::PowerSpec); bounds 1 W to 5 kW, what the loader holds a profile's
  // power to and calibrate a measured one (hardware::kMinGpuWatts, kMaxGpuWatts; a 2 kW bound
  // fitted a 2,400 W measurement at 2,000 W), the loader then checks them against each other and
  // the TDP.
  auto watts = [&out](std::string pointer, std::string meaning, Watts hardware::PowerSpec::*field,
                      double start) {
    Parameter p = number(
        std::move(pointer), hardware::kMinGpuWatts, hardware::kMaxGpuWatts, start,
        std::move(meaning), [field](const HardwareSpec& hw) { return (hw.power.*field).value(); },
        [field](HardwareSpec& hw, double v) { hw.power.*field = Watts(v); });
    p.unit = ParameterUnit::Watts;
    out.push_back(std::move(p));
  };
  watts("/power/idle", "board power with nothing running", &hardware::PowerSpec::idle, 100.0);
  watts("/power/compute", "board power while compute kernels run", &hardware::PowerSpec::compute,
        500.0);
  watts("/power/communication", "board power while only communication runs",
        &hardware::PowerSpec::communication, 400.0);
  for (const Algorithm a : kTunedAlgorithms) {
    for (const Protocol pr : kProtocols) add_measured(out, a, pr);
  }
  return out;
}

}  // namespace

std::string measured_pointer(Algorithm algorithm, hardware::Protocol protocol,
                             std::string_view field) {
  return "/collective/measured/" + std::string(collective::to_string(algorithm)) + "/" +
         std::string(collective::to_string(protocol)) + "/" + std::string(field);
}

const std::vector<Parameter>& parameters() {
  static const std::vector<Parameter> all = make_parameters();
  return all;
}

const Parameter* find_parameter(std::string_view pointer) {
  for (const auto& p : parameters()) {
    if (p.pointer == pointer) return &p;
  }
  return nullptr;
}

}  // namespace trainsim::calibrate
