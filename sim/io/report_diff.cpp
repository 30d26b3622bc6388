#include "sim/io/report_diff.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <tuple>
#include <utility>

#include "sim/io/json_reader.hpp"
#include "sim/io/report_writer.hpp"
#include "sim/io/scenario_loader.hpp"

namespace trainsim::io {
namespace {

// Below this share of the larger magnitude a change is floating-point noise.
constexpr double kNoise = 1e-9;

std::string fixed(double v, int decimals) { return fixed_text(v, decimals); }

std::string signed_text(double delta, const std::string& magnitude) {
  if (delta > 0.0) return "+" + magnitude;
  // A decrease that rounds to zero keeps its sign ("-188 us (..., -0.0 % of A's step time)"),
  // where fixed() writes 0.0.
  if (delta < 0.0 && magnitude.rfind('-', 0) != 0) return "-" + magnitude;
  return magnitude;
}

std::string format(MetricKind kind, double v) {
  switch (kind) {
    case MetricKind::Seconds:
      return to_string(Seconds(v));
    case MetricKind::Bytes:
      return to_string(Bytes(v));
    case MetricKind::Watts:
      return to_string(Watts(v));
    case MetricKind::Joules:
      return to_string(Joules(v));
    case MetricKind::Fraction:
      return fixed(100.0 * v, 1) + " %";
    case MetricKind::Rate:
      return fixed(v, 1);
    case MetricKind::Number: {
      // Three decimals, or three significant digits below 1 (GPU-hours per M tokens of a small
      // run are 0.00512, which three decimals printed as 0.005 beside 0.006).
      const double magnitude = std::fabs(v);
      const int decimals =
          magnitude > 0.0 && magnitude < 1.0
              ? std::min(12, std::max(3, 2 - static_cast<int>(std::floor(std::log10(magnitude)))))
              : 3;
      return fixed(v, decimals);
    }
    case MetricKind::Flag:
      return v != 0.0 ? "yes" : "no";
  }
  return fixed(v, 3);
}

// A delta as text: "+12.3 ms", "-4.0 %" (percentage points for fractions).
std::string format_delta(MetricKind kind, double delta) {
  if (kind == MetricKind::Fraction) return signed_text(delta, fixed(100.0 * delta, 1) + " pt");
  return signed_text(delta, format(kind, delta));
}

std::string relative_text(const std::optional<double>& r) {
  if (!r) return "-";
  return signed_text(*r, fixed(100.0 * *r, 1) + " %");
}

double denoise(double a, double b) {
  const double d = b - a;
  return std::fabs(d) <= kNoise * std::max(std::fabs(a), std::fabs(b)) ? 0.0 : d;
}

MetricDelta metric(std::string pointer, std::string label, MetricKind kind, double a, double b) {
  // Byte counts are whole bytes, as the reports and the JSON's delta give them (byte_count): a
  // change of 50 B in 80 GiB is a change, not noise, and the table, the relative change and the
  // JSON agree on it.
  const double delta = kind == MetricKind::Bytes
                           ? static_cast<double>(byte_count(Bytes(b)) - byte_count(Bytes(a)))
                           : denoise(a, b);
  MetricDelta m{.pointer = std::move(pointer),
                .label = std::move(label),
                .kind = kind,
                .a = a,
                .b = b,
                .delta = delta,
                .relative = std::nullopt};
  if (kind != MetricKind::Flag && a != 0.0) m.relative = m.delta / std::fabs(a);
  return m;
}

bool is_input(const std::string& pointer) {
  return pointer == "/hardware" || pointer == "/model" || pointer == "/stack";
}

// Leaves of a scenario by JSON pointer; arrays are leaves, and so are the hardware, model and
// stack unless `inputs_too` (a name, or an inline object: docs/diff.md).
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, nlohmann::json>& out, bool inputs_too = false) {
  if (j.is_object() && (inputs_too || !is_input(prefix))) {
    for (const auto& [key, value] : j.items()) {
      flatten(value, prefix + pointer_token(key), out, inputs_too);
    }
  } else {
    out[prefix] = j;
  }
}

// An input's value as the table and the reasons write it: a value one side lacks (null) is
// "none", an inline hardware, model or stack object "an inline object" (with its "id" or "name"
// where it has one), anything else its JSON.
std::string value_text(const nlohmann::json& v) {
  if (v.is_null()) return "none";
  if (!v.is_object()) return v.dump();
  for (const char* key : {"id", "name"}) {
    const auto it = v.find(key);
    if (it != v.end() && it->is_string())
      return "an inline object (" + std::string(key) + " " + it->dump() + ")";
  }
  return "an inline object";
}

std::vector<InputChange> input_changes(const parallel::Scenario& a, const parallel::Scenario& b) {
  std::map<std::string, nlohmann::json> fa;
  std::map<std::string, nlohmann::json> fb;
  flatten(scenario_to_json(a), "", fa);
  flatten(scenario_to_json(b), "", fb);
  // dp is derived, and an impossible plan has none (0): null, not a degree of 0; so have the
  // global batch and the hybrid shard group derived from it where the scenario gives none.
  for (auto* f : {&fa, &fb}) {
    for (const char* key : {"/parallel/dp", "/training/global_batch", "/parallel/shard_group"}) {
      const auto v = f->find(key);
      if (v != f->end() && v->second == 0) v->second = nullptr;
    }
  }
  // Full recomputation of every layer, the default (no recompute_layers) or as many layers as
  // the largest model chunk holds, is one plan: "all". recompute_layers 32 against none on
  // llama2-7b was listed as a change, and 16 against none read "none -> 16". More layers than
  // a chunk holds is no plan (parallel::validate) and stays a number: 41 on llama2-13b's 40
  // read "all", and the diff listed no input changed beside B's impossible plan.
  for (const auto& [f, s] : {std::pair{&fa, &a}, std::pair{&fb, &b}}) {
    const parallel::ParallelPlan& p = s->parallel;
    if (p.recompute != parallel::Recompute::Full) continue;
    std::int64_t largest = 0;
    for (std::int64_t c = 0; c < p.pp * p.virtual_stages; ++c) {
      largest = std::max(largest, parallel::chunk_layers(*s, c).count);
    }
    if (p.recompute_layers == 0 || p.recompute_layers == largest) {
      (*f)["/parallel/recompute_layers"] = "all";
    }
  }
  std::map<std::string, std::pair<nlohmann::json, nlohmann::json>> both;
  for (const auto& [k, v] : fa) both[k].first = v;
  for (const auto& [k, v] : fb) both[k].second = v;
  // The same name may be read as different files: a path written in each scenario resolves
  // beside its own file (A/model.json and B/model.json are both "model.json").
  const auto read_as = [](const std::string& name, const std::string& path) {
    return nlohmann::json(path == name ? name : name + " (" + path + ")");
  };
  const auto same_file = [](const std::string& x, const std::string& y) {
    if (x == y) return true;
    std::error_code ex;
    std::error_code ey;
    const auto cx = std::filesystem::weakly_canonical(x, ex);
    const auto cy = std::filesystem::weakly_canonical(y, ey);
    return !ex && !ey && cx == cy;
  };
  const std::array<std::tuple<const char*, std::string, std::string, std::string, std::string>, 3>
      refs{{{"/hardware", a.hardware_name, a.hardware_path, b.hardware_name, b.hardware_path},
            {"/model", a.model_name, a.model_path, b.model_name, b.model_path},
            {"/stack", a.stack_name, a.stack_path, b.stack_name, b.stack_path}}};
  for (const auto& [pointer, name_a, path_a, name_b, path_b] : refs) {
    auto& v = both[pointer];
    // Two spellings of one file's path (../shared/m.json from one folder, ../../shared/m.json
    // from another) are the same input; neither side inline (an inline object has no path).
    const bool files = !path_a.empty() && !path_b.empty();
    if (v.first != v.second) {
      if (files && same_file(path_a, path_b)) v.second = v.first;
      continue;
    }
    if (same_file(path_a, path_b)) continue;
    v.first = read_as(name_a, path_a);
    v.second = read_as(name_b, path_b);
  }
  // Two inline objects that differ: key by key, so that the lines say what differs (a name
  // against an object stays one line).
  for (const auto& ref : refs) {
    const std::string input = std::get<0>(ref);
    const auto it = both.find(input);
    if (it == both.end() || !it->second.first.is_object() || !it->second.second.is_object() ||
        it->second.first == it->second.second) {
      continue;
    }
    std::map<std::string, nlohmann::json> ia;
    std::map<std::string, nlohmann::json> ib;
    flatten(it->second.first, input, ia, true);
    flatten(it->second.second, input, ib, true);
    both.erase(it);
    for (const auto& [k, v] : ia) both[k].first = v;
    for (const auto& [k, v] : ib) both[k].second = v;
  }
  std::vector<InputChange> out;
  for (const auto& [k, v] : both) {
    if (v.first != v.second) out.push_back(InputChange{.pointer = k, .a = v.first, .b = v.second});
  }
  return out;
}

// "tp 1 -> 2" for an input that changed, "" otherwise.
std::string input_text(const std::vector<InputChange>& changes, const std::string& pointer,
                       const std::string& name) {
  for (const auto& c : changes) {
    if (c.pointer == pointer) return name + " " + value_text(c.a) + " -> " + value_text(c.b);
  }
  return "";
}

// input_text of a document input (/hardware, /stack): the reference when it changed, else the
// keys of two inline objects that differ, at most three ("stack iteration_overhead "0 ms" ->
// "50 ms""). An inline stack against its copy with one key changed gave a host-overhead line
// with no cause, where a named stack against an inline one named the change.
std::string document_input_text(const std::vector<InputChange>& changes, const std::string& pointer,
                                const std::string& name) {
  if (std::string whole = input_text(changes, pointer, name); !whole.empty()) return whole;
  constexpr std::size_t kShown = 3;
  std::vector<std::string> keys;
  std::size_t more = 0;
  for (const auto& c : changes) {
    if (!c.pointer.starts_with(pointer + "/")) continue;
    if (keys.size() == kShown) {
      ++more;
      continue;
    }
    keys.push_back(c.pointer.substr(pointer.size() + 1) + " " + value_text(c.a) + " -> " +
                   value_text(c.b));
  }
  if (keys.empty()) return "";
  std::string text = name;
  for (std::size_t i = 0; i < keys.size(); ++i) text += (i == 0 ? " " : ", ") + keys[i];
  if (more > 0) text += " (and " + std::to_string(more) + " more)";
  return text;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    out += (out.empty() ? "" : ", ") + p;
  }
  return out;
}

std::vector<MetricDelta> metric_deltas(const report::Report& a, const report::Report& b) {
  using K = MetricKind;
  std::vector<MetricDelta> m;
  auto add = [&](const char* pointer, const char* label, K kind,
                 const std::function<double(const report::Report&)>& get) {
    m.push_back(metric(pointer, label, kind, get(a), get(b)));
  };
  add("/iteration_time_s", "step time", K::Seconds,
      [](const report::Report& r) { return r.iteration_time.value(); });
  add("/tokens_per_s", "tokens/s", K::Rate, [](const report::Report& r) { return r.tokens_per_s; });
  add("/tokens_per_s_per_gpu", "tokens/s per GPU", K::Rate,
      [](const report::Report& r) { return r.tokens_per_s_per_gpu; });
  add("/mfu", "MFU", K::Fraction, [](const report::Report& r) { return r.mfu; });
  add("/mfu_bf16", "MFU (bf16 peak)", K::Fraction,
      [](const report::Report& r) { return r.mfu_bf16; });
  add("/hfu", "HFU", K::Fraction, [](const report::Report& r) { return r.hfu; });
  add("/compute_s", "compute", K::Seconds,
      [](const report::Report& r) { return r.compute.value(); });
  add("/communication_s", "communication", K::Seconds,
      [](const report::Report& r) { return r.communication.value(); });
  add("/exposed_communication_s", "exposed communication", K::Seconds,
      [](const report::Report& r) { return r.exposed_communication.value(); });
  add("/bubble_s", "bubble", K::Seconds, [](const report::Report& r) { return r.bubble.value(); });
  add("/memory/total_bytes", "memory per GPU", K::Bytes,
      [](const report::Report& r) { return r.memory.total.value(); });
  add("/memory/parameters_bytes", "  parameters", K::Bytes,
      [](const report::Report& r) { return r.memory.parameters.value(); });
  add("/memory/gradients_bytes", "  gradients", K::Bytes,
      [](const report::Report& r) { return r.memory.gradients.value(); });
  add("/memory/optimizer_bytes", "  optimizer", K::Bytes,
      [](const report::Report& r) { return r.memory.optimizer.value(); });
  add("/memory/activations_bytes", "  activations", K::Bytes,
      [](const report::Report& r) { return r.memory.activations.value(); });
  add("/memory/buffers_bytes", "  buffers", K::Bytes,
      [](const report::Report& r) { return r.memory.buffers.value(); });
  add("/memory/capacity_bytes", "  capacity", K::Bytes,
      [](const report::Report& r) { return r.memory.capacity.value(); });
  add("/memory/reserved_bytes", "  reserved", K::Bytes,
      [](const report::Report& r) { return r.memory.reserved.value(); });
  add("/memory/usable_bytes", "  usable", K::Bytes,
      [](const report::Report& r) { return r.memory.usable.value(); });
  add("/memory/fits", "  fits", K::Flag,
      [](const report::Report& r) { return r.memory.fits ? 1.0 : 0.0; });
  add("/power/watts_per_gpu", "power per GPU", K::Watts,
      [](const report::Report& r) { return r.power.per_gpu.value(); });
  add("/power/cluster_watts", "cluster power", K::Watts,
      [](const report::Report& r) { return r.power.cluster.value(); });
  add("/power/energy_per_iteration_j", "energy per step", K::Joules,
      [](const report::Report& r) { return r.power.energy_per_iteration.value(); });
  add("/power/tokens_per_joule", "tokens per joule", K::Number,
      [](const report::Report& r) { return r.power.tokens_per_joule; });
  add("/cost/gpu_hours_per_million_tokens", "GPU-hours per M tokens", K::Number,
      [](const report::Report& r) { return r.cost.gpu_hours_per_million_tokens; });
  add("/cost/usd_per_million_tokens", "USD per M tokens", K::Number,
      [](const report::Report& r) { return r.cost.usd_per_million_tokens; });
  return m;
}

StepComponent component(std::string name, std::string label, Seconds a, Seconds b) {
  return StepComponent{.name = std::move(name),
                       .label = std::move(label),
                       .a = a,
                       .b = b,
                       .delta = Seconds(denoise(a.value(), b.value()))};
}

std::vector<CollectiveDelta> collective_deltas(const report::Report& a, const report::Report& b) {
  std::map<std::pair<std::string, std::string>, CollectiveDelta> families;
  // The calls of each report's critical stage, whose times the report gives (its
  // communication_s); with pipeline parallelism every stage's calls summed would count each kind
  // once per stage.
  auto add = [&families](const report::Report& r, bool is_b) {
    for (const auto& c : r.collectives) {
      if (c.stage != r.critical_stage) continue;
      CollectiveDelta& f = families[{c.op, c.group}];
      f.op = c.op;
      f.group = c.group;
      const Seconds t = c.time * static_cast<double>(c.count);
      if (is_b) {
        f.b_time += t;
        f.b_calls += c.count;
        f.b_ranks = std::max(f.b_ranks, c.ranks);
        f.b_nodes = std::max(f.b_nodes, c.nodes);
        f.b_domains = std::max(f.b_domains, c.domains);
      } else {
        f.a_time += t;
        f.a_calls += c.count;
        f.a_ranks = std::max(f.a_ranks, c.ranks);
        f.a_nodes = std::max(f.a_nodes, c.nodes);
        f.a_domains = std::max(f.a_domains, c.domains);
      }
    }
  };
  add(a, false);
  add(b, true);
  std::vector<CollectiveDelta> out;
  for (auto& [key, f] : families) {
    f.delta = Seconds(denoise(f.a_time.value(), f.b_time.value()));
    out.push_back(f);
  }
  // Largest change first; the map's (op, group) order breaks ties.
  std::stable_sort(out.begin(), out.end(), [](const CollectiveDelta& x, const CollectiveDelta& y) {
    return std::fabs(x.delta.value()) > std::fabs(y.delta.value());
  });
  return out;
}

// Two decimals, and the significant digits a ratio below 0.1 needs: 7.54 s -> 18.2 ms read
// "(0.00x)", as if the call had gone.
std::string ratio_text(double a, double b) {
  if (a <= 0.0) return "new";
  return fixed_significant(b / a, 2, 2) + "x";
}

// "shard all_gather per step 85.2 ms -> 170 ms (2.00x): calls 33 -> 33, per call 2.58 ms ->
// 5.16 ms, ranks 128 -> 256, nodes 16 -> 32", and "NVLink domains 1 -> 2" where the domains
// moved (the same hosts may be placed differently)
std::string collective_text(const CollectiveDelta& c) {
  const std::string name = c.group + " " + c.op;
  if (c.a_calls == 0 || c.b_calls == 0) {
    const bool is_new = c.a_calls == 0;
    const Seconds t = is_new ? c.b_time : c.a_time;
    const std::int64_t calls = is_new ? c.b_calls : c.a_calls;
    return name + (is_new ? " only in B: " : " only in A: ") + to_string(t) + " per step, " +
           counted(calls, "call") + ", " + counted(is_new ? c.b_ranks : c.a_ranks, "rank") +
           " on " + counted(is_new ? c.b_nodes : c.a_nodes, "node");
  }
  std::string s = name + " per step " + to_string(c.a_time) + " -> " + to_string(c.b_time) + " (" +
                  ratio_text(c.a_time.value(), c.b_time.value()) + ")";
  std::vector<std::string> why;
  why.push_back("calls " + std::to_string(c.a_calls) + " -> " + std::to_string(c.b_calls));
  why.push_back("per call " + to_string(c.a_time / static_cast<double>(c.a_calls)) + " -> " +
                to_string(c.b_time / static_cast<double>(c.b_calls)));
  if (c.a_ranks != c.b_ranks) {
    why.push_back("ranks " + std::to_string(c.a_ranks) + " -> " + std::to_string(c.b_ranks));
  }
  if (c.a_nodes != c.b_nodes) {
    why.push_back("nodes " + std::to_string(c.a_nodes) + " -> " + std::to_string(c.b_nodes));
  }
  if (c.a_domains != c.b_domains) {
    why.push_back("NVLink domains " + std::to_string(c.a_domains) + " -> " +
                  std::to_string(c.b_domains));
  }
  return why.empty() ? s : s + ": " + join(why);
}

std::string head(const StepComponent& c, Seconds a_total) {
  std::string s = c.label + " " + signed_text(c.delta.value(), to_string(c.delta)) + " (" +
                  to_string(c.a) + " -> " + to_string(c.b);
  if (a_total.value() > 0.0) {
    s += ", " + signed_text(c.delta.value(), fixed(100.0 * c.delta.value() / a_total.value(), 1)) +
         " % of A's step time";
  }
  return s + ")";
}

std::string compute_reason(const DiffSide& a, const DiffSide& b, const ReportDiff& d) {
  const report::Report& ra = *a.report;
  const report::Report& rb = *b.report;
  // Model FLOPs one GPU does per step: achieved model FLOP/s per GPU x step time.
  const Flops fa(ra.model_flops_per_gpu.value() * ra.iteration_time.value());
  const Flops fb(rb.model_flops_per_gpu.value() * rb.iteration_time.value());
  std::vector<std::string> why;
  why.push_back("model FLOPs per GPU per step " + to_string(fa) + " -> " + to_string(fb) + " (" +
                ratio_text(fa.value(), fb.value()) + ")");
  const FlopsPerSecond pa = a.scenario.hardware.peak(a.scenario.training.precision);
  const FlopsPerSecond pb = b.scenario.hardware.peak(b.scenario.training.precision);
  if (denoise(pa.value(), pb.value()) != 0.0) {
    why.push_back("peak " + to_string(pa) + " -> " + to_string(pb) + " per GPU");
  }
  why.push_back("MFU " + fixed(100.0 * ra.mfu, 1) + " % -> " + fixed(100.0 * rb.mfu, 1) + " %");
  // The inputs that set the kernels' times and the recomputed share, where they changed (the
  // hardware also where its peak did not: h100-dgx -> h200-dgx).
  why.push_back(input_text(d.inputs_changed, "/parallel/recompute", "recompute"));
  why.push_back(input_text(d.inputs_changed, "/parallel/recompute_layers", "recompute layers"));
  why.push_back(document_input_text(d.inputs_changed, "/hardware", "hardware"));
  why.push_back(document_input_text(d.inputs_changed, "/stack", "stack"));
  return join(why);
}

std::string exposed_reason(const ReportDiff& d, const report::Report& ra,
                           const report::Report& rb) {
  std::vector<std::string> why;
  why.push_back("communication kernel time " + to_string(ra.communication) + " -> " +
                to_string(rb.communication));
  if (!d.collectives.empty() && d.collectives.front().delta.value() != 0.0) {
    why.push_back("largest collective change: " + collective_text(d.collectives.front()));
  }
  return join(why);
}

std::string idle_reason(const DiffSide& a, const DiffSide& b, const ReportDiff& d) {
  std::vector<std::string> why;
  why.push_back(input_text(d.inputs_changed, "/parallel/pp", "pp"));
  why.push_back(input_text(d.inputs_changed, "/parallel/pipeline_schedule", "schedule"));
  why.push_back(input_text(d.inputs_changed, "/parallel/virtual_stages", "virtual stages"));
  const std::int64_t ma = a.scenario.num_microbatches();
  const std::int64_t mb = b.scenario.num_microbatches();
  if (ma != mb) {
    why.push_back("micro-batches per step " + std::to_string(ma) + " -> " + std::to_string(mb));
  }
  if (a.report->critical_stage != b.report->critical_stage) {
    why.push_back("critical stage " + std::to_string(a.report->critical_stage) + " -> " +
                  std::to_string(b.report->critical_stage));
  }
  const std::string s = join(why);
  return s.empty() ? "pipeline bubble and waits on other devices; pp " +
                         std::to_string(b.scenario.parallel.pp) + ", " + std::to_string(mb) +
                         " micro-batches per step on both"
                   : s;
}

std::string memory_reason(const ReportDiff& d, const report::Report& ra, const report::Report& rb) {
  std::vector<const MetricDelta*> terms;
  const MetricDelta* total = nullptr;
  for (const auto& m : d.deltas) {
    if (m.pointer == "/memory/total_bytes") total = &m;
    if (m.pointer == "/memory/parameters_bytes" || m.pointer == "/memory/gradients_bytes" ||
        m.pointer == "/memory/optimizer_bytes" || m.pointer == "/memory/activations_bytes" ||
        m.pointer == "/memory/buffers_bytes") {
      if (m.delta != 0.0) terms.push_back(&m);
    }
  }
  if (total == nullptr || (total->delta == 0.0 && terms.empty() &&
                           denoise(ra.memory.usable.value(), rb.memory.usable.value()) == 0.0 &&
                           ra.memory.fits == rb.memory.fits)) {
    return "";
  }
  std::stable_sort(terms.begin(), terms.end(), [](const MetricDelta* x, const MetricDelta* y) {
    return std::fabs(x->delta) > std::fabs(y->delta);
  });
  // Only the usable memory (or the fit) moved: say the need did not, rather than "0.00 B".
  std::string s = total->delta == 0.0 && terms.empty()
                      ? "memory per GPU unchanged (" + to_string(rb.memory.total) + ")"
                      : "memory per GPU " + format_delta(MetricKind::Bytes, total->delta) + " (" +
                            to_string(ra.memory.total) + " -> " + to_string(rb.memory.total) + ")";
  std::vector<std::string> parts;
  for (const MetricDelta* t : terms) {
    // The label is indented for the table: "  activations".
    std::string name = t->label.substr(t->label.find_first_not_of(' '));
    parts.push_back(name + " " + format_delta(MetricKind::Bytes, t->delta));
  }
  if (!parts.empty()) s += ": " + join(parts);
  if (denoise(ra.memory.usable.value(), rb.memory.usable.value()) != 0.0) {
    s += "; usable " + to_string(ra.memory.usable) + " -> " + to_string(rb.memory.usable) +
         " (capacity less the reserve)";
  }
  if (ra.memory.fits != rb.memory.fits) {
    s += rb.memory.fits ? "; now fits in " : "; no longer fits in ";
    s += to_string(rb.memory.usable) + " usable of " + to_string(rb.memory.capacity);
  }
  return s;
}

}  // namespace

ReportDiff diff_reports(const DiffSide& a, const DiffSide& b) {
  ReportDiff d;
  d.inputs_changed = input_changes(a.scenario, b.scenario);
  if (!a.report || !b.report) {
    for (const auto* side : {&a, &b}) {
      if (side->report) continue;
      d.reasons.push_back(DiffReason{
          .component = "plan",
          .delta = 0.0,
          .text = std::string(side == &a ? "A" : "B") + " is an impossible plan: " +
                  (side->problems.empty() ? std::string("no report") : side->problems.front()) +
                  // The flags that set its key, as run names them ("command line (--gpus)").
                  (side->problem_flags.empty() ? std::string()
                                               : " (set by " + side->problem_flags + ")")});
    }
    return d;
  }
  const report::Report& ra = *a.report;
  const report::Report& rb = *b.report;
  d.deltas = metric_deltas(ra, rb);
  // mfu_bf16 is against the fp16 peak on a GPU without bf16 (V100; report::simulate), as run's
  // table names it.
  const auto no_bf16 = [](const DiffSide& side) {
    return !(side.scenario.hardware.peak(hardware::Dtype::Bf16).value() > 0.0);
  };
  if (no_bf16(a) || no_bf16(b)) {
    for (MetricDelta& m : d.deltas) {
      if (m.pointer != "/mfu_bf16") continue;
      m.label = no_bf16(a) && no_bf16(b) ? "MFU (fp16 peak, no bf16)"
                : no_bf16(a)             ? "MFU (bf16 peak; A's fp16, no bf16)"
                                         : "MFU (bf16 peak; B's fp16, no bf16)";
    }
  }

  // Step time = compute + exposed communication + bubble on the critical stage; the bubble
  // holds the stack's host overhead (report/simulate.cpp, derive()).
  const Seconds ha = a.scenario.stack.iteration_overhead;
  const Seconds hb = b.scenario.stack.iteration_overhead;
  d.step_time = {
      component("compute", "compute", ra.compute, rb.compute),
      component("exposed_communication", "exposed communication", ra.exposed_communication,
                rb.exposed_communication),
      component("gpu_idle", "GPU idle (pipeline bubble, waits)", ra.bubble - ha, rb.bubble - hb),
      component("host_overhead", "host overhead", ha, hb)};
  // Of the deltas as reported (a change below kNoise is reported as 0), so that the four
  // components' delta_s and residual_s add up to the iteration time's delta as reported.
  Seconds sum{};
  for (const auto& c : d.step_time) sum += c.delta;
  d.residual = Seconds(denoise(ra.iteration_time.value(), rb.iteration_time.value())) - sum;
  d.collectives = collective_deltas(ra, rb);

  // Step-time components that moved, the largest first (the fixed order above breaks ties).
  std::vector<const StepComponent*> moved;
  for (const auto& c : d.step_time) {
    if (c.delta.value() != 0.0) moved.push_back(&c);
  }
  std::stable_sort(moved.begin(), moved.end(), [](const StepComponent* x, const StepComponent* y) {
    return std::fabs(x->delta.value()) > std::fabs(y->delta.value());
  });
  for (const StepComponent* c : moved) {
    std::string why;
    if (c->name == "compute") why = compute_reason(a, b, d);
    if (c->name == "exposed_communication") why = exposed_reason(d, ra, rb);
    if (c->name == "gpu_idle") why = idle_reason(a, b, d);
    if (c->name == "host_overhead") {
      why = document_input_text(d.inputs_changed, "/stack", "stack");
    }
    d.reasons.push_back(
        DiffReason{.component = c->name,
                   .delta = c->delta.value(),
                   .text = head(*c, ra.iteration_time) + (why.empty() ? "" : ": " + why)});
  }
  if (moved.empty()) {
    d.reasons.push_back(
        DiffReason{.component = "step_time", .delta = 0.0, .text = "the step time did not move"});
  }
  // Throughput also moves with the tokens per step (global batch x sequence length).
  const double tokens_a = static_cast<double>(a.scenario.training.global_batch) *
                          static_cast<double>(a.scenario.training.seq_len);
  const double tokens_b = static_cast<double>(b.scenario.training.global_batch) *
                          static_cast<double>(b.scenario.training.seq_len);
  if (tokens_a != tokens_b) {
    d.reasons.push_back(DiffReason{.component = "tokens_per_step",
                                   .delta = tokens_b - tokens_a,
                                   .text = "tokens per step " + fixed(tokens_a, 0) + " -> " +
                                           fixed(tokens_b, 0) +
                                           " (tokens/s = tokens per step / step time)",
                                   .count = true});
  }
  if (a.scenario.gpus != b.scenario.gpus) {
    d.reasons.push_back(
        DiffReason{.component = "gpus",
                   .delta = static_cast<double>(b.scenario.gpus - a.scenario.gpus),
                   .text = "GPUs " + std::to_string(a.scenario.gpus) + " -> " +
                           std::to_string(b.scenario.gpus) +
                           " (per-GPU throughput, cluster power and cost scale with it)",
                   .count = true});
  }
  if (const std::string m = memory_reason(d, ra, rb); !m.empty()) {
    // In whole bytes as /memory/total_bytes gives each side (byte_count).
    d.reasons.push_back(DiffReason{
        .component = "memory",
        .delta = static_cast<double>(byte_count(rb.memory.total) - byte_count(ra.memory.total)),
        .text = m,
        .count = true});
  }
  return d;
}

nlohmann::json diff_to_json(const DiffSide& a, const DiffSide& b, const ReportDiff& d) {
  auto side = [](const DiffSide& s) {
    return nlohmann::json{
        {"source", s.source},
        {"scenario", scenario_to_json(s.scenario)},
        {"report", s.report ? report_to_json(s.scenario, *s.report) : nlohmann::json(nullptr)},
        {"plan_problems", s.problems}};
  };
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& c : d.inputs_changed) {
    inputs.push_back({{"pointer", c.pointer}, {"a", c.a}, {"b", c.b}});
  }
  nlohmann::json deltas = nlohmann::json::object();
  for (const auto& m : d.deltas) {
    if (m.kind == MetricKind::Flag) {
      deltas[m.pointer] = {{"a", m.a != 0.0}, {"b", m.b != 0.0}, {"changed", m.a != m.b}};
    } else if (m.kind == MetricKind::Bytes) {
      // Whole bytes, as the reports give them (byte_count), and their difference.
      const std::int64_t bytes_a = byte_count(Bytes(m.a));
      const std::int64_t bytes_b = byte_count(Bytes(m.b));
      deltas[m.pointer] = {
          {"a", bytes_a},
          {"b", bytes_b},
          {"delta", bytes_b - bytes_a},
          {"relative", m.relative ? nlohmann::json(*m.relative) : nlohmann::json(nullptr)}};
    } else {
      deltas[m.pointer] = {
          {"a", m.a},
          {"b", m.b},
          {"delta", m.delta},
          {"relative", m.relative ? nlohmann::json(*m.relative) : nlohmann::json(nullptr)}};
    }
  }
  nlohmann::json step = nlohmann::json::object();
  if (!d.step_time.empty()) {
    nlohmann::json components = nlohmann::json::array();
    for (const auto& c : d.step_time) {
      components.push_back({{"component", c.name},
                            {"a_s", c.a.value()},
                            {"b_s", c.b.value()},
                            {"delta_s", c.delta.value()}});
    }
    step = {{"components", components}, {"residual_s", d.residual.value()}};
  }
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& c : d.collectives) {
    collectives.push_back({{"op", c.op},
                           {"group", c.group},
                           {"a_time_s", c.a_time.value()},
                           {"b_time_s", c.b_time.value()},
                           {"delta_s", c.delta.value()},
                           {"a_calls", c.a_calls},
                           {"b_calls", c.b_calls},
                           {"a_ranks", c.a_ranks},
                           {"b_ranks", c.b_ranks},
                           {"a_nodes", c.a_nodes},
                           {"b_nodes", c.b_nodes},
                           {"a_domains", c.a_domains},
                           {"b_domains", c.b_domains}});
  }
  nlohmann::json reasons = nlohmann::json::array();
  for (const auto& r : d.reasons) {
    // Counts (bytes, tokens, GPUs) as integers, as every byte count of a report; seconds as
    // numbers (the memory reason's -20635942400.0 read as a float).
    nlohmann::json delta = r.count
                               ? nlohmann::json(static_cast<std::int64_t>(std::llround(r.delta)))
                               : nlohmann::json(r.delta);
    reasons.push_back({{"component", r.component}, {"delta", delta}, {"text", r.text}});
  }
  return {{"context", report_context()}, {"a", side(a)},      {"b", side(b)},
          {"inputs_changed", inputs},    {"deltas", deltas},  {"step_time", step},
          {"collectives", collectives},  {"reasons", reasons}};
}

void write_diff_table(std::ostream& out, const DiffSide& a, const DiffSide& b,
                      const ReportDiff& d) {
  out << "A  " << escape_control(a.source) << "\nB  " << escape_control(b.source) << "\n\n";
  out << "inputs changed (A -> B)\n";
  if (d.inputs_changed.empty()) out << "  none\n";
  std::array<char, 512> line{};
  for (const auto& c : d.inputs_changed) {
    // A value one side lacks (dp of an impossible plan) reads "none". Written whole: a path or
    // a value past a fixed line's 512 bytes was cut.
    out << "  " << column_text(escape_control(c.pointer), 30, false) << ' ' << value_text(c.a)
        << " -> " << value_text(c.b) << '\n';
  }
  for (const auto* s : {&a, &b}) {
    if (s->report) continue;
    out << "\n"
        << (s == &a ? "A" : "B") << " is an impossible plan"
        << (s->problem_flags.empty() ? std::string() : " (set by " + s->problem_flags + ")")
        << ":\n";
    for (const auto& p : s->problems) out << "  " << p << "\n";
  }
  if (!d.deltas.empty()) {
    out << "\n";
    // The cells first, so that each column is as wide as its widest cell (at least the widths
    // below): a relative change past +9,999.9 % ran into the delta beside it.
    struct Row {
      std::string a, b, delta, relative;
    };
    std::vector<Row> rows;
    std::array<std::size_t, 4> width = {14, 14, 14, 10};
    for (const auto& m : d.deltas) {
      Row r{format(m.kind, m.a), format(m.kind, m.b),
            m.kind == MetricKind::Flag ? (m.a == m.b ? "" : "changed")
                                       : format_delta(m.kind, m.delta),
            relative_text(m.relative)};
      width[0] = std::max(width[0], r.a.size());
      width[1] = std::max(width[1], r.b.size());
      width[2] = std::max(width[2], r.delta.size());
      width[3] = std::max(width[3], r.relative.size());
      rows.push_back(std::move(r));
    }
    const auto w = [&width](std::size_t i) { return static_cast<int>(width[i]); };
    std::snprintf(line.data(), line.size(), "%-26s %*s %*s %*s %*s\n", "metric", w(0), "A", w(1),
                  "B", w(2), "delta", w(3), "relative");
    out << line.data();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::snprintf(line.data(), line.size(), "%-26s %*s %*s %*s %*s\n", d.deltas[i].label.c_str(),
                    w(0), r.a.c_str(), w(1), r.b.c_str(), w(2), r.delta.c_str(), w(3),
                    r.relative.c_str());
      out << line.data();
    }
    out << "\nstep time = compute + exposed communication + GPU idle + host overhead\n";
    for (const auto& c : d.step_time) {
      std::snprintf(line.data(), line.size(), "  %-34s %12s %12s %12s\n", c.label.c_str(),
                    to_string(c.a).c_str(), to_string(c.b).c_str(),
                    signed_text(c.delta.value(), to_string(c.delta)).c_str());
      out << line.data();
    }
  }
  if (!d.collectives.empty()) {
    out << "\ncollectives per step (op, group; largest change first)\n";
    for (const auto& c : d.collectives) out << "  " << collective_text(c) << "\n";
  }
  out << "\nwhy it moved\n";
  int i = 0;
  for (const auto& r : d.reasons) out << "  " << ++i << ". " << r.text << "\n";
}

}  // namespace trainsim::io
