#include "sim/io/hardware_loader.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>

#include "trainsim/calibrate/parameters.hpp"
#include "trainsim/error.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/spellcheck.hpp"
#include "sim/io/stack_loader.hpp"

namespace trainsim::io {
namespace {

// A parameter of trainsim calibrate's registry (sim/calibrate/parameters.cpp), whose bounds the
// loader holds profiles to, so that the two cannot drift apart.
const calibrate::Parameter& registered(const std::string& pointer) {
  const calibrate::Parameter* p = calibrate::find_parameter(pointer);
  if (p == nullptr) throw InternalError("hardware loader: no calibration parameter " + pointer);
  return *p;
}

// The lowest GEMM, attention or HBM efficiency (and attention backward ratio) a profile may give:
// the lower bound trainsim calibrate fits them within. A value near 0 is a slip (1e-300
// stretched a GEMM to an infinite time, an internal error; 1e-200 printed an iteration of
// 1e299 s).
double lowest_efficiency() {
  static const double lowest = registered("/gpu/gemm/max_efficiency").lower;
  return lowest;
}

// The most a kernel launch may add: the calibration's bound for the term, so that a profile the
// loader takes is one calibrate can refit.
double most_launch_overhead() {
  static const double most = registered("/gpu/kernel_launch_overhead").upper;
  return most;
}

// Counts stored as int (channels, SMs, GPUs or NICs per node): far above any hardware, and
// checked so that a value from a file is never truncated.
constexpr std::int64_t kMaxSmallCount = std::int64_t{1} << 16U;

using hardware::AlgorithmGraphs;
using hardware::ChannelGraph;
using hardware::CollectiveLibrarySpec;
using hardware::GpuArch;
using hardware::PerNodeClass;
using hardware::PerProtocol;

constexpr std::string_view kProfileFolder = "hardware_profiles";
constexpr std::string_view kNcclFolder = "hardware_profiles/nccl";

// JSON key names in the order of the enums they index (Algorithm, Protocol, LinkClass, node
// classes 1 / 2 / 3+ nodes).
constexpr std::array<const char*, hardware::kNumTunedAlgorithms> kAlgorithmKeys = {
    "tree", "ring", "nvls", "nvls_tree", "pat"};
constexpr std::array<const char*, hardware::kNumProtocols> kProtocolKeys = {"LL", "LL128",
                                                                            "Simple"};
constexpr std::array<const char*, hardware::kNumLinkClasses> kLinkKeys = {"nvlink", "pci", "net"};
constexpr std::array<const char*, hardware::kNumNodeClasses> kNodeClassKeys = {"1", "2", "3+"};

const std::vector<std::string> kArchNames = {"volta", "ampere", "hopper", "blackwell"};
const std::vector<std::string> kHostCpus = {"intel", "amd"};

std::string arch_key(GpuArch arch) { return kArchNames[static_cast<std::size_t>(arch)]; }

PerProtocol<Seconds> read_per_protocol(ObjectReader r) {
  PerProtocol<Seconds> out{};
  for (std::size_t p = 0; p < kProtocolKeys.size(); ++p) {
    out[p] = r.seconds(kProtocolKeys[p], /*allow_zero=*/true);
  }
  r.finish();
  return out;
}

PerNodeClass<BytesPerSecond> read_per_node_class(ObjectReader r) {
  PerNodeClass<BytesPerSecond> out{};
  for (std::size_t c = 0; c < kNodeClassKeys.size(); ++c) {
    out[c] = BytesPerSecond(r.unit(kNodeClassKeys[c], UnitKind::DataRate, /*allow_zero=*/true));
  }
  r.finish();
  return out;
}

// A number in [lo, hi].
double number_in(ObjectReader& r, const std::string& key, double lo, double hi) {
  const double v = r.number(key);
  if (!(v >= lo && v <= hi)) {
    throw r.error(key, "expected a number in [" + describe_json(lo) + ", " + describe_json(hi) +
                           "], got " + describe_json(v));
  }
  return v;
}

// A rate or time read at `key`, within the range a profile may state (hardware_spec.hpp, "The
// rates and times a profile may state"); outside it, the key's error with the value as written.
void check_plausible(ObjectReader& r, const std::string& key, double value, double lo, double hi,
                     const std::string& expected) {
  if (!(value >= lo && value <= hi)) {
    throw r.error(key, "expected " + expected + ", got " + describe_json(r.raw(key)));
  }
}

// An array of fractions in (0, 1].
std::vector<double> read_fractions(ObjectReader& r, const std::string& key) {
  const nlohmann::json& array = r.array(key);
  std::vector<double> out;
  out.reserve(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) {
    const auto& v = array[i];
    const double x = v.is_number() ? v.get<double>() : -1.0;
    if (!v.is_number() || !(x > 0.0 && x <= 1.0)) {
      throw ConfigError(r.source(), r.pointer_of(key) + "/" + std::to_string(i),
                        "expected a fraction in (0, 1], got " + describe_json(v));
    }
    out.push_back(x);
  }
  return out;
}

// The NCCL constants of one version (a built-in nccl-<v>.json or an inline object), resolved
// for the GPU architecture and host CPU of the profile.
void read_nccl_constants(ObjectReader v, GpuArch arch, const std::string& host_cpu,
                         CollectiveLibrarySpec& out) {
  out.version = v.string("nccl_version");
  {
    auto base = v.object("base_latency");
    for (std::size_t a = 0; a < kAlgorithmKeys.size(); ++a) {
      out.base_latency[a] = read_per_protocol(base.object(kAlgorithmKeys[a]));
    }
    base.finish();
  }
  {
    auto hw = v.object("hw_latency");
    for (std::size_t l = 0; l < kLinkKeys.size(); ++l) {
      auto link = hw.object(kLinkKeys[l]);
      for (std::size_t a = 0; a < kAlgorithmKeys.size(); ++a) {
        out.hw_latency[l][a] = read_per_protocol(link.object(kAlgorithmKeys[a]));
      }
      link.finish();
    }
    hw.finish();
  }
  {
    auto overhead = v.object("net_overhead");
    for (const auto& cpu : kHostCpus) {
      const Seconds s = overhead.seconds(cpu, /*allow_zero=*/true);
      if (cpu == host_cpu) out.net_overhead = s;
    }
    overhead.finish();
  }
  out.simple_net_overhead_factor = number_in(v, "simple_net_overhead_factor", 1.0, 100.0);
  out.net_plugin_latency = v.seconds("net_plugin_latency", /*allow_zero=*/true);
  out.one_ppn_uses_tree_net_latency = v.boolean("one_ppn_uses_tree_net_latency");
  out.ring_allreduce_inter_steps_2n = v.boolean("ring_allreduce_inter_steps_2n");
  out.ring_ll_factor = v.fraction("ring_ll_factor");
  out.ring_ll128_low_ppn_factor = v.fraction("ring_ll128_low_ppn_factor");
  out.pat_enabled = v.boolean("pat_enabled");
  out.pat_factor = v.fraction("pat_factor");
  {
    auto ll = v.object("ll_max_bw_multi_node");
    for (const auto& cpu : kHostCpus) {
      auto row = ll.object(cpu);
      const BytesPerSecond two = row.bandwidth("2");
      const BytesPerSecond many = row.bandwidth("3+");
      row.finish();
      if (cpu == host_cpu) {
        out.ll_max_bw[1] = two;
        out.ll_max_bw[2] = many;
      }
    }
    ll.finish();
  }
  {
    auto tc = v.object("tree_correction");
    for (std::size_t p = 0; p < kProtocolKeys.size(); ++p) {
      out.tree_correction[p] = read_fractions(tc, kProtocolKeys[p]);
      // NCCL's treeCorrectionFactor[protocol][23]: one factor per power of two from 64 B to
      // 256 MiB (tuning.cc); 24 since 2.29, whose last column only NVLSTree reads (sources.md
      // A.1). A short table left the larger sizes uncorrected in silence.
      const std::size_t entries = out.tree_correction[p].size();
      if (entries != 23 && entries != 24) {
        throw tc.error(std::string(kProtocolKeys[p]),
                       "expected 23 factors (NCCL's treeCorrectionFactor: one per power of two "
                       "from 64 B to 256 MiB), or 24 as NCCL 2.29 and later write it, got " +
                           std::to_string(entries));
      }
    }
    tc.finish();
  }
  {
    auto per_arch = v.object("per_arch");
    for (const auto& name : kArchNames) {
      auto row = per_arch.object(name);
      const double plateau = number_in(row, "ring_plateau_factor", 1.0, 10.0);
      const double nvls = number_in(row, "nvls_efficiency", 0.0, 1.0);
      const BytesPerSecond ll_single = row.bandwidth("ll_max_bw_single_node");
      const auto ring_ll128 = read_per_node_class(row.object("per_channel_max_ring_ll128_bw"));
      const auto tree_ll128 = read_per_node_class(row.object("per_channel_max_tree_ll128_bw"));
      const auto tree = read_per_node_class(row.object("per_channel_max_tree_bw"));
      const auto nvls_tree = read_per_node_class(row.object("per_channel_max_nvls_tree_bw"));
      row.finish();
      if (name != arch_key(arch)) continue;
      out.ring_plateau_factor = plateau;
      out.nvls_efficiency = nvls;
      out.ll_max_bw[0] = ll_single;
      out.per_channel_max_ring_ll128_bw = ring_ll128;
      out.per_channel_max_tree_ll128_bw = tree_ll128;
      out.per_channel_max_tree_bw = tree;
      out.per_channel_max_nvls_tree_bw = nvls_tree;
    }
    per_arch.finish();
  }
  v.finish();
}

ChannelGraph read_graph(ObjectReader r) {
  ChannelGraph g;
  g.channels = static_cast<int>(r.integer("channels", 0, kMaxSmallCount));
  if (g.channels > 64) throw r.error("channels", "expected at most 64 channels (NCCL's maximum)");
  // A graph with no channels has no bandwidth; one with channels needs both speeds.
  const bool none = g.channels == 0;
  g.bw_intra = BytesPerSecond(r.unit("bw_intra", UnitKind::DataRate, none));
  g.bw_inter = BytesPerSecond(r.unit("bw_inter", UnitKind::DataRate, none));
  r.finish();
  return g;
}

AlgorithmGraphs read_graphs(ObjectReader r) {
  AlgorithmGraphs g;
  g.single_node = read_graph(r.object("single_node"));
  g.multi_node = read_graph(r.object("multi_node"));
  r.finish();
  return g;
}

// A value of a calibration parameter (calibrate/parameters.hpp), range-checked against the
// parameter's bounds. `pointer` is the parameter's profile pointer; absent keys keep `fallback`.
double read_parameter(ObjectReader& r, const std::string& key, const std::string& pointer,
                      double fallback) {
  const calibrate::Parameter* p = &registered(pointer);
  if (!r.has(key)) return fallback;
  double v = 0.0;
  switch (p->unit) {
    case calibrate::ParameterUnit::Number:
      v = r.number(key);
      break;
    case calibrate::ParameterUnit::Seconds: {
      // A signed time where the bounds allow one ("-20 us"): the unit reader takes magnitudes.
      const nlohmann::json& raw = r.raw(key);
      if (p->lower < 0.0 && raw.is_string() && raw.get<std::string>().rfind('-', 0) == 0) {
        // Named as written: the magnitude's own message quoted the value without its sign.
        const auto signed_time_error = [&] {
          return r.error(key,
                         "expected a time like \"-20 us\" (a signed number and a unit: ns, "
                         "us, ms, s), got " +
                             describe_json(raw));
        };
        // The magnitude starts with its first digit: the unit reader takes a sign and spaces
        // of its own, so "--415.7 us" read as +415.7 us and "- 415.7 us" as -415.7 us.
        const std::string magnitude = raw.get<std::string>().substr(1);
        if (magnitude.empty() ||
            !(std::isdigit(static_cast<unsigned char>(magnitude[0])) || magnitude[0] == '.')) {
          throw signed_time_error();
        }
        try {
          v = -parse_unit(magnitude, UnitKind::Time);
        } catch (const ConfigError&) {
          throw signed_time_error();
        }
      } else {
        v = r.unit(key, UnitKind::Time, /*allow_zero=*/true);
      }
      break;
    }
    case calibrate::ParameterUnit::Bytes:
      v = r.unit(key, UnitKind::Data);
      break;
    case calibrate::ParameterUnit::Watts:
      v = r.unit(key, UnitKind::Power);
      break;
  }
  if (!(v >= p->lower && v <= p->upper)) {
    throw r.error(key, "expected a value in [" + describe_json(p->lower) + ", " +
                           describe_json(p->upper) + "] (SI units), got " + describe_json(v));
  }
  return v;
}

// collective.measured: per tuned algorithm and protocol ("ring": {"Simple": {...}}), how
// measured calls differ from NCCL's estimate
// (hardware::MeasuredTerms). Every block and key is optional; the documented default of each
// is NCCL's model unchanged.
void read_measured(ObjectReader m, CollectiveLibrarySpec& out) {
  for (std::size_t a = 0; a < kAlgorithmKeys.size(); ++a) {
    if (!m.has(kAlgorithmKeys[a])) continue;
    auto per_algorithm = m.object(kAlgorithmKeys[a]);
    for (std::size_t p = 0; p < kProtocolKeys.size(); ++p) {
      if (!per_algorithm.has(kProtocolKeys[p])) continue;
      auto r = per_algorithm.object(kProtocolKeys[p]);
      const auto algorithm = static_cast<hardware::Algorithm>(a);
      const auto protocol = static_cast<hardware::Protocol>(p);
      auto& t = out.measured[a][p];
      auto field = [&](const char* key, double fallback) {
        return read_parameter(r, key, calibrate::measured_pointer(algorithm, protocol, key),
                              fallback);
      };
      t.bandwidth_factor_single_node =
          field("bandwidth_factor_single_node", t.bandwidth_factor_single_node);
      t.bandwidth_factor_multi_node =
          field("bandwidth_factor_multi_node", t.bandwidth_factor_multi_node);
      t.inherits_efficiency_per_doubling = !r.has("efficiency_per_doubling");
      t.efficiency_per_doubling = field("efficiency_per_doubling", t.efficiency_per_doubling);
      t.inherits_latency_scale = !r.has("latency_scale");
      t.latency_scale = field("latency_scale", t.latency_scale);
      t.latency_offset_single_node =
          Seconds(field("latency_offset_single_node", t.latency_offset_single_node.value()));
      t.latency_offset_multi_node =
          Seconds(field("latency_offset_multi_node", t.latency_offset_multi_node.value()));
      t.fill_fraction = field("fill_fraction", t.fill_fraction);
      t.fill_saturation = Bytes(field("fill_saturation", t.fill_saturation.value()));
      r.finish();
    }
    per_algorithm.finish();
  }
  m.finish();
}

void read_collective(ObjectReader c, GpuArch arch, hardware::NodeSpec& node,
                     CollectiveLibrarySpec& out) {
  const std::string host_cpu = c.choice("host_cpu", kHostCpus);
  out.host_cpu = host_cpu;
  const std::string link = c.choice("intra_link", {"nvlink", "pci"});
  out.intra_link = link == "nvlink" ? hardware::LinkClass::NvLink : hardware::LinkClass::Pci;
  out.ll128_enabled = c.boolean("ll128_enabled");
  out.ib_sharp = c.boolean("ib_sharp");

  const nlohmann::json& version =
      c.raw("nccl", "a built-in NCCL version (\"2.20\") or an object of constants");
  if (version.is_string()) {
    const std::string id = "nccl-" + version.get<std::string>();
    const auto text = builtin_file(kNcclFolder, id);
    if (!text) {
      std::vector<std::string> known;
      for (const auto& v : builtin_ids(kNcclFolder)) known.push_back(v.substr(5));
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw c.error("nccl", "unknown NCCL version '" + version.get<std::string>() + "'" +
                                did_you_mean(version.get<std::string>(), known) +
                                "; expected one of " + list + " or an object of constants");
    }
    const std::string source = std::string(kNcclFolder) + "/" + id + ".json";
    const nlohmann::json constants = parse_builtin_json(*text, source);
    read_nccl_constants(ObjectReader(constants, source, ""), arch, host_cpu, out);
  } else if (version.is_object()) {
    read_nccl_constants(c.object("nccl"), arch, host_cpu, out);
  } else {
    // A number (2.20, read as 2.2) or null: the version is a string.
    throw c.error("nccl",
                  "expected a built-in NCCL version as a string (\"2.20\", \"2.28\") or "
                  "an object of constants, got " +
                      describe_json(version));
  }

  if (c.has("measured")) read_measured(c.object("measured"), out);

  auto graphs = c.object("graphs");
  out.ring = read_graphs(graphs.object("ring"));
  out.tree = read_graphs(graphs.object("tree"));
  out.nvls = read_graphs(graphs.object("nvls"));
  graphs.finish();
  if (out.ring.single_node.channels == 0 || out.ring.multi_node.channels == 0) {
    throw ConfigError(c.source(), c.pointer_of("graphs") + "/ring",
                      "expected ring graphs with at least one channel; every node has a ring");
  }
  if (out.nvls.single_node.channels > 0 && !node.nvswitch_sharp) {
    throw ConfigError(c.source(), c.pointer_of("graphs") + "/nvls/single_node/channels",
                      "expected 0 channels: NVLS needs /node/nvswitch_sharp true");
  }
  // NVLS runs on the NVSwitch's multicast over NVLink (docs/sources.md A.6): PCI's row of NCCL's
  // latency table has no NVLS entry (0 us), so "pci" beside an NVSwitch priced NVLS 25 us
  // faster than on NVLink (4 MiB all-reduce on one H100 node 119.6 us against 142.6).
  if (out.intra_link == hardware::LinkClass::Pci && node.nvswitch_sharp) {
    throw c.error("intra_link",
                  "NVLS needs NVLink: /node/nvswitch_sharp is true; expected "
                  "\"nvlink\", or nvswitch_sharp false for GPUs on PCIe");
  }
  c.finish();
}

// The record `trainsim calibrate` leaves in a profile it writes: what each fitted value was
// fitted to and how well. The simulator does not use it; the loader checks its shape and that
// every key names a calibration parameter.
void check_calibration_record(ObjectReader r) {
  (void)r.string("tool");
  const nlohmann::json& inputs = r.array("inputs");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_string()) {
      throw ConfigError(r.source(), r.pointer_of("inputs") + "/" + std::to_string(i),
                        "expected a string naming an input, got " + describe_json(inputs[i]));
    }
  }
  const nlohmann::json& fitted = r.raw("fitted", "an object keyed by parameter pointer");
  if (!fitted.is_object()) throw r.error("fitted", "expected an object keyed by parameter pointer");
  for (const auto& [pointer, record] : fitted.items()) {
    const std::string at = r.pointer_of("fitted") + pointer_token(pointer);
    if (calibrate::find_parameter(pointer) == nullptr) {
      throw ConfigError(r.source(), at,
                        "expected the JSON pointer of a calibration parameter "
                        "(docs/calibration.md), got \"" +
                            pointer + "\"");
    }
    ObjectReader f(record, r.source(), at);
    (void)f.number("value");
    // null: no standard error (no degrees of freedom, or a parameter the points do not move).
    if (!f.raw("sigma", "a number or null").is_null()) (void)f.number("sigma");
    (void)f.integer("points", 1);
    (void)f.number("rms_error");
    (void)f.number("max_error");
    (void)f.boolean("at_bound");
    const nlohmann::json& to = f.array("fitted_to");
    for (std::size_t i = 0; i < to.size(); ++i) {
      if (!to[i].is_string()) {
        throw ConfigError(
            r.source(), at + "/fitted_to/" + std::to_string(i),
            "expected a string naming a measurement set, got " + describe_json(to[i]));
      }
    }
    f.finish();
  }
  r.finish();
}

// gpu.gemm (hardware::GemmEfficiency). The fitted terms are range-checked against their
// calibration parameters (calibrate/parameters.hpp); the tile is "<m>x<n>" with sides of 64,
// 128 or 256 (the guide's cuBLAS tiles, compute/kernel_cost.hpp).
hardware::GemmEfficiency read_gemm(ObjectReader r) {
  hardware::GemmEfficiency g;
  g.max_efficiency = r.fraction("max_efficiency", lowest_efficiency());
  g.half_size = read_parameter(r, "half_size", "/gpu/gemm/half_size", 0.0);
  if (!r.has("half_size")) (void)r.number("half_size");  // required: the reader's own message
  {
    const std::string tile = r.string("tile");
    const std::vector<std::string> sides = {"64", "128", "256"};
    const auto x = tile.find('x');
    const std::string m = x == std::string::npos ? "" : tile.substr(0, x);
    const std::string n = x == std::string::npos ? "" : tile.substr(x + 1);
    const bool ok = std::find(sides.begin(), sides.end(), m) != sides.end() &&
                    std::find(sides.begin(), sides.end(), n) != sides.end();
    if (!ok) {
      throw r.error("tile",
                    "expected the largest cuBLAS tile as \"<m>x<n>\" with sides 64, 128 "
                    "or 256, like \"256x128\", got \"" +
                        tile + "\"");
    }
    g.tile_m = std::stoi(m);
    g.tile_n = std::stoi(n);
  }
  if (!r.has("reuse_knee")) (void)r.number("reuse_knee");
  g.reuse_knee = read_parameter(r, "reuse_knee", "/gpu/gemm/reuse_knee", 0.0);
  if (r.has("max_efficiency_by_dtype")) {
    auto by = r.object("max_efficiency_by_dtype");
    const std::array<std::pair<const char*, hardware::Dtype>, hardware::kNumDtypes> keys = {
        {{"fp32", hardware::Dtype::Fp32},
         {"tf32", hardware::Dtype::Tf32},
         {"fp16", hardware::Dtype::Fp16},
         {"bf16", hardware::Dtype::Bf16},
         {"fp8", hardware::Dtype::Fp8}}};
    for (const auto& [key, dtype] : keys) {
      if (by.has(key))
        g.max_efficiency_by_dtype[static_cast<std::size_t>(dtype)] =
            by.fraction(key, lowest_efficiency());
    }
    by.finish();
  }
  r.finish();
  return g;
}

// gpu.attention (hardware::AttentionEfficiency); every key required.
hardware::AttentionEfficiency read_attention(ObjectReader r) {
  hardware::AttentionEfficiency a;
  a.max_efficiency = r.fraction("max_efficiency", lowest_efficiency());
  for (const char* key : {"half_size", "head_dim_half"}) {
    if (!r.has(key)) (void)r.number(key);  // required: the reader's own message
  }
  a.half_size = read_parameter(r, "half_size", "/gpu/attention/half_size", 0.0);
  a.head_dim_half = read_parameter(r, "head_dim_half", "/gpu/attention/head_dim_half", 0.0);
  a.backward_ratio = r.fraction("backward_ratio", lowest_efficiency());
  if (r.has("speed_over_flash2")) {
    a.speed_over_flash2 = r.number("speed_over_flash2");
    // The bounds of a stack's attention_speed (stack_loader.cpp), which it divides.
    if (!(a.speed_over_flash2 >= 0.05 && a.speed_over_flash2 <= 5.0)) {
      throw r.error("speed_over_flash2",
                    "expected how many times as fast as FlashAttention-2 the curve's kernel "
                    "runs, from 0.05 to 5, got " +
                        describe_json(r.raw("speed_over_flash2")));
    }
  }
  r.finish();
  return a;
}

hardware::HardwareSpec read_hardware(const nlohmann::json& json, const std::string& source,
                                     const std::string& pointer) {
  using hardware::Dtype;
  ObjectReader top(json, source, pointer);
  if (top.has("extends")) {
    // Stacks extend one another (docs/stacks.md); a profile is complete. Said first, before the
    // keys such a file lacks ("/name: missing required key" sent users to fill one in after
    // another). A file that extends a built-in stack is a stack given where a profile goes.
    const nlohmann::json& base = top.raw("extends");
    const std::vector<std::string> stacks = builtin_stack_ids();
    if (base.is_string() &&
        std::find(stacks.begin(), stacks.end(), base.get<std::string>()) != stacks.end()) {
      throw top.error("extends", "'" + base.get<std::string>() +
                                     "' is a software stack, so this file, which extends it, is "
                                     "a stack, not a hardware profile; expected a hardware "
                                     "profile");
    }
    throw top.error("extends",
                    "hardware profiles do not extend one another (stacks do); expected a whole "
                    "profile: a copy of a built-in (hardware_profiles/*.json) with the values "
                    "changed");
  }
  hardware::HardwareSpec hw;
  hw.id = top.string("id");
  if (hw.id.empty()) throw top.error("id", "expected a non-empty id like \"h100-dgx\"");
  hw.name = top.string("name");

  {
    auto g = top.object("gpu");
    hw.gpu.name = g.string("name");
    const std::string arch = g.choice("arch", kArchNames);
    for (std::size_t i = 0; i < kArchNames.size(); ++i) {
      if (kArchNames[i] == arch) hw.gpu.arch = static_cast<GpuArch>(i);
    }
    {
      auto peak = g.object("peak_dense");
      // Zero marks a dtype the GPU lacks (V100: no bf16); fp32 and a 16-bit format must exist.
      const std::array<std::pair<const char*, Dtype>, hardware::kNumDtypes> keys = {
          {{"fp32", Dtype::Fp32},
           {"tf32", Dtype::Tf32},
           {"fp16", Dtype::Fp16},
           {"bf16", Dtype::Bf16},
           {"fp8", Dtype::Fp8}}};
      for (const auto& [key, dtype] : keys) {
        const double rate = peak.unit(key, UnitKind::WorkRate, /*allow_zero=*/true);
        if (rate > 0.0) {
          check_plausible(peak, key, rate, hardware::kMinPeakFlops, hardware::kMaxPeakFlops,
                          "a GPU's dense rate from 1 TFLOP/s to 100 PFLOP/s, or 0 for a format "
                          "it lacks");
        }
        hw.gpu.peak_dense[static_cast<std::size_t>(dtype)] = FlopsPerSecond(rate);
      }
      if (hw.peak(Dtype::Fp32).value() <= 0.0) {
        throw peak.error("fp32", "expected a FLOP rate > 0, got 0");
      }
      if (hw.peak(Dtype::Fp16).value() <= 0.0 && hw.peak(Dtype::Bf16).value() <= 0.0) {
        throw peak.error("fp16", "expected fp16 or bf16 to be > 0; the GPU needs a 16-bit format");
      }
      // Tensor-core formats by architecture (NVIDIA's Volta, Ampere and Hopper whitepapers): TF32
      // and BF16 came with Ampere, FP8 with Hopper. A peak for one the architecture lacks is a
      // slip (a copied row): fp8 on an Ampere profile ran fp8 plans the built-in a100-dgx refuses.
      const auto lacks = [&](const char* key, Dtype dtype, const char* since) {
        if (hw.peak(dtype).value() > 0.0) {
          throw peak.error(key, std::string("arch \"") + arch + "\" has no " + key +
                                    " tensor cores (they came with " + since +
                                    "); expected 0, got " + describe_json(peak.raw(key)));
        }
      };
      if (hw.gpu.arch == GpuArch::Volta) {
        lacks("tf32", Dtype::Tf32, "Ampere");
        lacks("bf16", Dtype::Bf16, "Ampere");
      }
      if (hw.gpu.arch == GpuArch::Volta || hw.gpu.arch == GpuArch::Ampere) {
        lacks("fp8", Dtype::Fp8, "Hopper");
      }
      peak.finish();
    }
    hw.gpu.hbm_capacity = g.bytes("hbm_capacity");
    // Reports give byte counts as 64-bit integers; 1 PiB keeps every reserve term and plan
    // total far inside them (a plan's parameters are at most 2^50 too), where an HBM of
    // "1e12 GiB" printed a capacity of -9223372036854775808 bytes that fitted every plan.
    if (hw.gpu.hbm_capacity > Bytes(std::ldexp(1.0, 50))) {
      throw g.error("hbm_capacity",
                    "expected at most 1 PiB (1,125,899,906,842,624 B) of HBM, got " +
                        to_string(hw.gpu.hbm_capacity));
    }
    hw.gpu.hbm_bandwidth = g.bandwidth("hbm_bandwidth");
    check_plausible(g, "hbm_bandwidth", hw.gpu.hbm_bandwidth.value(), hardware::kMinHbmBandwidth,
                    hardware::kMaxHbmBandwidth, "a GPU's HBM bandwidth from 100 GB/s to 100 TB/s");
    // Optional: memory reserved before any tensor (hardware_spec.hpp gives the defaults).
    const Bytes default_context = hw.gpu.cuda_context;
    const Bytes default_buffers = hw.gpu.nccl_buffers;
    const bool written = g.has("reserved_memory");
    if (written) {
      auto reserved = g.object("reserved_memory");
      if (reserved.has("cuda_context")) {
        hw.gpu.cuda_context = Bytes(reserved.unit("cuda_context", UnitKind::Data, true));
      }
      if (reserved.has("nccl_buffers")) {
        hw.gpu.nccl_buffers = Bytes(reserved.unit("nccl_buffers", UnitKind::Data, true));
      }
      reserved.finish();
    }
    // The reserve must leave HBM for tensors. Checked with the defaults too: a profile of
    // 512 MiB of HBM and no reserved_memory loaded, and every plan then failed on the stack's
    // workspace ('expected a workspace below -256 MiB', exit 3). The key at fault is the HBM
    // unless the profile wrote a reserve other than the defaults (an 80 KiB HBM beside the
    // stock reserve was blamed on reserved_memory); the line says whether it wrote one.
    if (hw.gpu.cuda_context + hw.gpu.nccl_buffers >= hw.gpu.hbm_capacity) {
      const bool own_values =
          hw.gpu.cuda_context != default_context || hw.gpu.nccl_buffers != default_buffers;
      const std::string reserve =
          "the CUDA context and NCCL buffers reserved (" + to_string(hw.gpu.cuda_context) + " + " +
          to_string(hw.gpu.nccl_buffers) +
          (written ? ", /gpu/reserved_memory" : ", the defaults; /gpu/reserved_memory sets them") +
          ")";
      if (own_values) {
        throw g.error("reserved_memory", "expected " + reserve + " below hbm_capacity (" +
                                             to_string(hw.gpu.hbm_capacity) + ")");
      }
      throw g.error("hbm_capacity", to_string(hw.gpu.hbm_capacity) + " holds no more than " +
                                        reserve + "; expected more HBM than that");
    }
    // The SM count (datasheet): tiles of a GEMM run in waves of one per SM.
    hw.gpu.sms = static_cast<int>(g.integer("sms", 1, kMaxSmallCount));
    if (hw.gpu.sms > 100000) throw g.error("sms", "expected at most 100000 SMs");
    hw.gpu.gemm = read_gemm(g.object("gemm"));
    hw.gpu.attention = read_attention(g.object("attention"));
    hw.gpu.memory_efficiency = g.fraction("memory_efficiency", lowest_efficiency());
    hw.gpu.kernel_launch_overhead = g.seconds("kernel_launch_overhead", /*allow_zero=*/true);
    // Microseconds a kernel launch adds; above the calibration's bound for it (100 us,
    // calibrate/parameters.cpp) it is a unit slip: "4 s" made every step take 2,853 s.
    if (hw.gpu.kernel_launch_overhead.value() > most_launch_overhead()) {
      throw g.error("kernel_launch_overhead", "expected at most " +
                                                  to_string(Seconds(most_launch_overhead())) +
                                                  " (the time one kernel launch adds), got " +
                                                  describe_json(g.raw("kernel_launch_overhead")));
    }
    hw.gpu.comm_compute_contention = number_in(g, "comm_compute_contention", 0.0, 10.0);
    if (g.has("gemm_comm_contention")) {
      hw.gpu.gemm_comm_contention = number_in(g, "gemm_comm_contention", 0.0, 10.0);
    }
    g.finish();
  }
  {
    auto n = top.object("node");
    // At most 1024 GPUs per node, stated as the key's range, so that every message about the
    // key (a near miss's note included) gives the same bound: it said [1, 65536] there.
    constexpr std::int64_t kMaxGpusPerNode = 1024;
    hw.node.gpus_per_node = static_cast<int>(n.integer("gpus_per_node", 1, kMaxGpusPerNode));
    const std::string intra = n.choice("intra", {"nvswitch", "cube_mesh"});
    hw.node.intra =
        intra == "nvswitch" ? hardware::IntraNodeKind::NvSwitch : hardware::IntraNodeKind::CubeMesh;
    hw.node.nvlink_bandwidth_per_direction = n.bandwidth("nvlink_bandwidth_per_direction");
    check_plausible(n, "nvlink_bandwidth_per_direction",
                    hw.node.nvlink_bandwidth_per_direction.value(), hardware::kMinNvlinkBandwidth,
                    hardware::kMaxNvlinkBandwidth,
                    "a GPU's bandwidth inside its node from 1 GB/s to 100 TB/s per direction");
    hw.node.nvlink_latency = n.seconds("nvlink_latency");
    check_plausible(n, "nvlink_latency", hw.node.nvlink_latency.value(), 0.0,
                    hardware::kMaxHopLatency, "a hop's latency of at most 1 ms");
    hw.node.nvswitch_sharp = n.boolean("nvswitch_sharp");
    if (hw.node.nvswitch_sharp && hw.node.intra != hardware::IntraNodeKind::NvSwitch) {
      throw n.error("nvswitch_sharp",
                    "expected false: in-switch reductions need \"intra\": "
                    "\"nvswitch\"");
    }
    // Optional: GPUs per NVLink domain, whole hosts of it (default: one node). The bound is
    // above the largest NVLink domain NVIDIA's NVLink switches support (576 GPUs, sources.md C.2).
    hw.node.nvlink_domain_gpus = hw.node.gpus_per_node;
    if (n.has("nvlink_domain_gpus")) {
      constexpr std::int64_t kMaxDomainGpus = 1024;
      const std::int64_t per_node = hw.node.gpus_per_node;
      const std::string expected = "expected a positive multiple of gpus_per_node (" +
                                   std::to_string(per_node) + ") up to " +
                                   std::to_string(kMaxDomainGpus);
      // Any number outside the domain's bounds is told them (1e9 said "at most 65536", 0 "an
      // integer >= 1"), before it is read as an integer within them.
      if (const nlohmann::json& raw = n.raw("nvlink_domain_gpus"); raw.is_number()) {
        const double v = raw.get<double>();
        if (!(v >= static_cast<double>(per_node) && v <= static_cast<double>(kMaxDomainGpus) &&
              v == std::floor(v) && static_cast<std::int64_t>(v) % per_node == 0)) {
          throw n.error("nvlink_domain_gpus", expected + ", got " + describe_json(raw));
        }
      }
      // Within them now; anything but a number is the reader's to name.
      const std::int64_t domain = n.integer("nvlink_domain_gpus", 1, kMaxDomainGpus);
      if (domain > per_node && hw.node.intra != hardware::IntraNodeKind::NvSwitch) {
        throw n.error("nvlink_domain_gpus",
                      "expected gpus_per_node (" + std::to_string(per_node) +
                          "): an NVLink domain beyond a node needs \"intra\": \"nvswitch\", got " +
                          std::to_string(domain));
      }
      hw.node.nvlink_domain_gpus = static_cast<int>(domain);
    }
    n.finish();
  }
  {
    auto f = top.object("fabric");
    hw.fabric.nics_per_node = static_cast<int>(f.integer("nics_per_node", 1, kMaxSmallCount));
    hw.fabric.nic_bandwidth = f.bandwidth("nic_bandwidth");
    check_plausible(f, "nic_bandwidth", hw.fabric.nic_bandwidth.value(), hardware::kMinNicBandwidth,
                    hardware::kMaxNicBandwidth, "a NIC's bandwidth from 1 Gb/s to 100 Tb/s");
    hw.fabric.latency = f.seconds("latency");
    check_plausible(f, "latency", hw.fabric.latency.value(), 0.0, hardware::kMaxHopLatency,
                    "a hop's latency of at most 1 ms");
    const std::string topo = f.choice("topology", {"fat_tree", "rail_optimized"});
    hw.fabric.topology = topo == "fat_tree" ? hardware::FabricTopology::FatTree
                                            : hardware::FabricTopology::RailOptimized;
    hw.fabric.oversubscription = number_in(f, "oversubscription", 1.0, 1000.0);
    hw.fabric.nodes_per_leaf = static_cast<int>(f.integer("nodes_per_leaf", 1, kMaxSmallCount));
    if (f.has("efficiency_at_scale")) {
      throw f.error("efficiency_at_scale",
                    "moved: per-doubling efficiency is now fitted per algorithm at "
                    "/collective/measured/<algorithm>/<protocol>/efficiency_per_doubling");
    }
    f.finish();
  }
  {
    auto p = top.object("power");
    hw.power.idle = p.watts("idle");
    hw.power.compute = p.watts("compute");
    hw.power.communication = p.watts("communication");
    hw.power.tdp = p.watts("tdp");
    // A GPU draws from 1 W to 5 kW (hardware::kMinGpuWatts, kMaxGpuWatts), as calibrate holds a
    // measured power: a value outside is a unit mistake ("700 kW", "1e9 W"), which priced every
    // plan's energy and cluster watts a thousand times or more over without a word.
    for (const auto& [key, value] :
         {std::pair{"idle", hw.power.idle}, std::pair{"compute", hw.power.compute},
          std::pair{"communication", hw.power.communication}, std::pair{"tdp", hw.power.tdp}}) {
      if (value.value() < hardware::kMinGpuWatts || value.value() > hardware::kMaxGpuWatts) {
        // The value as read, not to_string's three digits: "5001 W" showed as "5.00 kW".
        throw p.error(key, "expected a GPU's draw from 1 W to 5 kW, got " + exact_to_string(value));
      }
    }
    for (const auto& [key, value] : {std::pair{"compute", hw.power.compute},
                                     std::pair{"communication", hw.power.communication}}) {
      if (value > hw.power.tdp) {
        const auto [tdp, draw] = to_strings_apart(hw.power.tdp, value);
        throw p.error(key, "expected at most the tdp (" + tdp + "), got " + draw);
      }
    }
    // A draw below idle names its own key, the one a unit slip ("0.067 kW") most likely hit,
    // with the idle draw it is below.
    for (const auto& [key, value] : {std::pair{"compute", hw.power.compute},
                                     std::pair{"communication", hw.power.communication}}) {
      if (value < hw.power.idle) {
        throw p.error(key, std::string("expected at least the idle draw (") +
                               exact_to_string(hw.power.idle) + "), got " + exact_to_string(value));
      }
    }
    p.finish();
  }
  hw.usd_per_gpu_hour = top.unit("price_per_gpu_hour", UnitKind::Price, /*allow_zero=*/true);
  check_plausible(top, "price_per_gpu_hour", hw.usd_per_gpu_hour, 0.0, hardware::kMaxUsdPerGpuHour,
                  "at most 1000 USD/h per GPU");
  read_collective(top.object("collective"), hw.gpu.arch, hw.node, hw.collective);
  if (top.has("calibration")) check_calibration_record(top.object("calibration"));
  top.finish();
  check_network_carries_graphs(hw, source, pointer);
  return hw;
}

// A node's NIC bandwidth in all, nics_per_node x nic_bandwidth.
BytesPerSecond nic_total(const hardware::HardwareSpec& hw) {
  return hw.fabric.nic_bandwidth * static_cast<double>(hw.fabric.nics_per_node);
}

// "the node's 8 NICs of 50.0 GB/s"
std::string nics_text(const hardware::HardwareSpec& hw) {
  return "the node's " + std::to_string(hw.fabric.nics_per_node) +
         (hw.fabric.nics_per_node == 1 ? " NIC of " : " NICs of ") +
         to_string(hw.fabric.nic_bandwidth);
}

// What a multi-node graph's channels carry across nodes, channels x bw_inter.
BytesPerSecond carried_across_nodes(const hardware::ChannelGraph& g) {
  return g.bw_inter * static_cast<double>(g.channels);
}

// "8 channels x 48.0 GB/s"
std::string channels_text(const hardware::ChannelGraph& g) {
  return std::to_string(g.channels) + " channels x " + to_string(g.bw_inter);
}

// One "note:" line per profile location and process (a sweep loads a profile for every
// scenario).
void note_once(const std::string& where, const std::string& text) {
  static std::mutex mutex;
  static std::set<std::string> noted;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!noted.insert(where).second) return;
  std::cerr << "note: " << where << ": " << text << '\n';
}

}  // namespace

void check_network_carries_graphs(const hardware::HardwareSpec& hw, const std::string& source,
                                  const std::string& pointer) {
  // NCCL's topology search takes each channel's bandwidth off every link of its path, the NICs'
  // included (src/graph/search.cc, ncclTopoFollowPath), so the channels a multi-node graph sends
  // through a node's NICs carry at most what the NICs do: channels x bw_inter <= nics x
  // nic_bandwidth. The built-in profiles' graphs take 0.96 of it (8 x 48 GB/s of 8 x 400 Gb/s).
  const BytesPerSecond nics = nic_total(hw);
  const std::array<std::pair<const char*, const hardware::AlgorithmGraphs*>, 3> graphs = {
      {{"ring", &hw.collective.ring},
       {"tree", &hw.collective.tree},
       {"nvls", &hw.collective.nvls}}};
  for (const auto& [name, g] : graphs) {
    const hardware::ChannelGraph& m = g->multi_node;
    const BytesPerSecond carried = carried_across_nodes(m);
    if (m.channels > 0 && carried.value() > nics.value() * (1.0 + 1e-12)) {
      throw ConfigError(
          source, pointer + "/collective/graphs/" + name + "/multi_node/bw_inter",
          channels_text(m) + " = " + to_string(carried) + " across nodes, more than " +
              nics_text(hw) + " carry (" + to_string(nics) +
              "); expected the multi-node graphs' bw_inter scaled with /fabric/nic_bandwidth and "
              "nics_per_node: collective times follow the graphs (docs/calibration.md)");
    }
    // The same inside a node: a single-node graph's channels all leave a GPU through its
    // NVLink, channels x bw_intra <= nvlink_bandwidth_per_direction (the built-ins take 0.8 of
    // it: 12 x 30 GB/s of the H100's 450), and an NVLS channel costs its head GPU's links twice
    // (NCCL's search: 1x bw on every GPU's link, 2x on the head's; h100-dgx's graph notes), so
    // (channels + 1) x bw_intra there. A profile that lowered the NVLink alone kept its graphs,
    // which set the collective times: an AllGather inside a node of 100 GB/s NVLink ran at
    // 355.6 GB/s bus bandwidth.
    const hardware::ChannelGraph& single = g->single_node;
    const std::int64_t charged = single.channels + (g == &hw.collective.nvls ? 1 : 0);
    const BytesPerSecond inside = single.bw_intra * static_cast<double>(charged);
    const BytesPerSecond nvlink = hw.node.nvlink_bandwidth_per_direction;
    if (single.channels > 0 && inside.value() > nvlink.value() * (1.0 + 1e-12)) {
      throw ConfigError(
          source, pointer + "/collective/graphs/" + name + "/single_node/bw_intra",
          (charged > single.channels
               ? "(" + std::to_string(single.channels) + " channels + 1 for the head's links)"
               : std::to_string(single.channels) + " channels") +
              " x " + to_string(single.bw_intra) + " = " + to_string(inside) +
              " inside a node, more than the GPU's NVLink carries (" + to_string(nvlink) +
              " one way); expected the single-node graphs' bw_intra scaled with "
              "/node/nvlink_bandwidth_per_direction: collective times follow the graphs "
              "(docs/calibration.md)");
    }
  }
}

std::optional<std::string> network_beyond_graphs(const hardware::HardwareSpec& hw) {
  std::string text;
  const hardware::ChannelGraph& ring = hw.collective.ring.multi_node;
  const BytesPerSecond carried = carried_across_nodes(ring);
  const BytesPerSecond nics = nic_total(hw);
  if (carried.value() < 0.9 * nics.value()) {
    text = nics_text(hw) + " carry " + to_string(nics) + ", its multi-node ring graph " +
           to_string(carried) + " (" + channels_text(ring) +
           "): collective times follow the graphs, so raise /collective/graphs/*/multi_node/" +
           "bw_inter with the NICs to model faster ones (docs/calibration.md)";
  }
  // The same inside a node: the single-node ring graph under 0.7 of the NVLink (the built-ins
  // take 0.8, 12 x 30 GB/s of the H100's 450). A copy of h100-dgx with 900 GB/s of NVLink ran
  // exactly as the stock profile, without a word.
  const hardware::ChannelGraph& single = hw.collective.ring.single_node;
  const BytesPerSecond inside = single.bw_intra * static_cast<double>(single.channels);
  const BytesPerSecond nvlink = hw.node.nvlink_bandwidth_per_direction;
  if (single.channels > 0 && inside.value() < 0.7 * nvlink.value()) {
    text += (text.empty() ? "" : "; ") + std::string("the GPU's NVLink carries ") +
            to_string(nvlink) + " one way, its single-node ring graph " + to_string(inside) + " (" +
            std::to_string(single.channels) + " channels x " + to_string(single.bw_intra) +
            "): collective times inside a node follow the graphs, so raise " +
            "/collective/graphs/*/single_node/bw_intra with the NVLink to model a faster one " +
            "(docs/calibration.md)";
  }
  if (text.empty()) return std::nullopt;
  return text;
}

hardware::HardwareSpec hardware_from_json(const nlohmann::json& json, const std::string& source,
                                          const std::string& pointer) {
  require_document_kind(json, DocumentKind::Hardware, source, pointer);
  hardware::HardwareSpec hw;
  with_near_miss_note(json, source, pointer, [&](const nlohmann::json& document) {
    hw = read_hardware(document, source, pointer);
  });
  if (const auto text = network_beyond_graphs(hw)) {
    note_once(pointer.empty() ? source : source + ": " + pointer, *text);
  }
  return hw;
}

hardware::HardwareSpec load_hardware_from_string(const std::string& text,
                                                 const std::string& source) {
  return hardware_from_json(parse_json(text, source), source, "");
}

std::vector<std::string> builtin_hardware_ids() {
  std::vector<std::string> ids;
  for (auto& id : builtin_ids(kProfileFolder)) {
    // The nccl/ subfolder holds library constants, not profiles.
    if (id.find('/') == std::string::npos) ids.push_back(std::move(id));
  }
  return ids;
}

HardwareDocument load_hardware_document(const std::string& name_or_path) {
  // Validate first: the same errors as load_hardware, then the text in file order.
  (void)load_hardware(name_or_path);
  if (name_or_path.find('/') == std::string::npos) {
    if (const auto text = builtin_file(kProfileFolder, name_or_path)) {
      return {nlohmann::ordered_json::parse(std::string(*text)),
              std::string(kProfileFolder) + "/" + name_or_path + ".json"};
    }
  }
  // The file passed load_hardware's checks; read it bounded again for its key order.
  const std::string text = read_text_file(name_or_path, kMaxJsonBytes, "a hardware profile");
  // Bounded as the first read was (the file may have changed), and the ordered parse's width.
  check_json_text(text, name_or_path, kMaxJsonBytes, kMaxJsonDepth, "a hardware profile");
  (void)check_unique_keys(text, name_or_path, kMaxOrderedKeys);
  try {
    return {nlohmann::ordered_json::parse(text), name_or_path};
  } catch (const nlohmann::json::exception&) {
    // Changed between the two reads: parse it again for the project's message.
    (void)parse_json(text, name_or_path);
    throw;
  }
}

hardware::HardwareSpec load_hardware(const std::string& name_or_path) {
  if (name_or_path.find('/') == std::string::npos) {
    if (const auto text = builtin_file(kProfileFolder, name_or_path)) {
      const std::string source = std::string(kProfileFolder) + "/" + name_or_path + ".json";
      return hardware_from_json(parse_builtin_json(*text, source), source, "");
    }
  }
  std::error_code ec;
  if (std::filesystem::is_directory(name_or_path, ec)) {
    throw ConfigError(name_or_path, "", "is a directory; expected a hardware profile JSON file");
  }
  if (names_readable_file(name_or_path)) {
    return hardware_from_json(read_json_file(name_or_path), name_or_path, "");
  }
  const auto ids = builtin_hardware_ids();
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
  if (names_a_file(name_or_path)) {
    throw ConfigError("no such file '" + name_or_path +
                      "'; expected a hardware profile JSON file (or a built-in profile: " + list +
                      ")");
  }
  // Edit distance misses a bare GPU name ("h100" is 4 edits from "h100-dgx"): suggest the
  // built-in it begins, else the closest one.
  std::string suggestion;
  for (const auto& id : ids) {
    if (!name_or_path.empty() && id.rfind(name_or_path, 0) == 0) {
      suggestion = "; did you mean '" + id + "'?";
      break;
    }
  }
  if (suggestion.empty()) suggestion = did_you_mean(name_or_path, ids);
  throw ConfigError("unknown hardware profile '" + name_or_path + "'" + suggestion +
                    " (built-in profiles: " + list + "; or give a path to a JSON file)");
}

}  // namespace trainsim::io
