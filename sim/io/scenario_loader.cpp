#include "sim/io/scenario_loader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>

#include "trainsim/parallel/placement.hpp"
#include "trainsim/units.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/hardware_loader.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/model_loader.hpp"
#include "sim/io/spellcheck.hpp"
#include "sim/io/stack_loader.hpp"

namespace trainsim::io {
namespace {

using parallel::Optimizer;
using parallel::PipelineSchedule;
using parallel::Recompute;
using parallel::Sharding;

const std::vector<std::string> kShardings = {"none", "zero1", "shard_grad_op", "full_shard",
                                             "hybrid_shard"};
const std::vector<std::string> kRecomputes = {"none", "selective", "full"};
const std::vector<std::string> kSchedules = {"gpipe", "1f1b", "interleaved"};
const std::vector<std::string> kPrecisions = {"bf16", "fp16", "fp32", "fp8"};
const std::vector<std::string> kOptimizers = {"adamw", "sgd"};

}  // namespace

std::optional<std::string> sharding_alias(const std::string& value) {
  std::string key;
  for (const char c : value) {
    if (c == '-' || c == '_' || c == ' ') continue;
    key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  static const std::map<std::string, std::string> kAliases = {
      {"zero0", "none"},       {"ddp", "none"},        {"zero2", "shard_grad_op"},
      {"zero3", "full_shard"}, {"fsdp", "full_shard"}, {"hsdp", "hybrid_shard"}};
  const auto it = kAliases.find(key);
  if (it == kAliases.end()) return std::nullopt;
  return it->second;
}

namespace {

template <class E>
E pick(const std::string& name, const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  return static_cast<E>(0);
}

hardware::Dtype precision_from(const std::string& name) {
  if (name == "fp16") return hardware::Dtype::Fp16;
  if (name == "fp32") return hardware::Dtype::Fp32;
  if (name == "fp8") return hardware::Dtype::Fp8;
  return hardware::Dtype::Bf16;
}

// A hardware or model reference: a built-in id or path (string), or inline keys (object).
std::string resolve_path(const std::string& ref, const std::string& base_dir) {
  if (!base_dir.empty()) {
    const std::filesystem::path candidate = std::filesystem::path(base_dir) / ref;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate.string();
  }
  return ref;
}

// Resolves the `key` reference (hardware or model): inline keys through `from_json`, a
// built-in id or path through `load`. Returns the spec, the name the report shows, for an
// inline object its JSON text (Scenario::hardware_inline), and for a name what it was read as
// (Scenario::hardware_path).
template <class Spec, class FromJson, class Load>
std::tuple<Spec, std::string, std::string, std::string> load_ref(
    ObjectReader& r, const ScenarioDocument& doc, const std::string& key, const std::string& noun,
    std::string_view folder, FromJson from_json, Load load) {
  const nlohmann::json& v = r.raw(key, "a built-in " + noun + " name, a file path or an object");
  if (v.is_object()) {
    const auto written = doc.written_at.find(r.pointer_of(key));
    Spec spec = written != doc.written_at.end()
                    ? from_json(v, written->second.first, written->second.second)
                    : from_json(v, r.source(), r.pointer_of(key));
    // Its own id (a model's "name"), else "inline": one that extends a built-in inherits the
    // built-in's id, which would name an object that differs from it. A stack's or profile's
    // "name" is a label beside its id: an inline stack extending megatron-lm with a "name" and
    // other values was reported as "megatron-lm".
    const bool named =
        v.contains("id") || (std::is_same_v<Spec, model::ModelSpec> && v.contains("name"));
    std::string name = named && !spec.id.empty() ? spec.id : "inline";
    return {std::move(spec), std::move(name), v.dump(), ""};
  }
  if (!v.is_string()) {
    throw r.error(key, "expected a built-in " + noun + " name, a file path or an object, got " +
                           describe_json(v));
  }
  std::string name = v.get<std::string>();
  // A path given on the command line is the user's, relative to the working directory like
  // every other path there; one written in the scenario file (or a sweep axis) resolves beside
  // the file first.
  const auto set_by = doc.overridden.find(r.pointer_of(key));
  const bool from_command_line =
      set_by != doc.overridden.end() && set_by->second.rfind("command line", 0) == 0;
  // A built-in id is the built-in, wherever it is written: a file of that name beside a
  // scenario (a copy of h100-dgx with another GEMM efficiency, no extension) was read in its
  // place while the report named the built-in. A file is named by a path ("./h100-dgx").
  const bool builtin =
      name.find('/') == std::string::npos && builtin_file(folder, name).has_value();
  std::string path = from_command_line || builtin ? name : resolve_path(name, doc.base_dir);
  try {
    Spec spec = load(path);
    return {std::move(spec), std::move(name), "", std::move(path)};
  } catch (const ConfigError& e) {
    // A name that is neither built-in nor a file: say where it was written.
    if (e.source().empty()) throw e.located(r.source(), r.pointer_of(key));
    throw;
  }
}

// For a required key missing at `pointer` ("/model", "/training/seq_len"): the key of the same
// object that is no scenario key and is a near miss of the missing one, as " (the object has
// 'modle': a misspelling of 'model'?)"; empty when there is none. Keys the scenario knows are
// never suggested, so a present key cannot be taken for another's misspelling.
std::string near_miss_note(const nlohmann::json& json, const std::string& pointer) {
  const std::size_t slash = pointer.rfind('/');
  if (slash == std::string::npos) return "";
  const std::string parent_pointer = pointer.substr(0, slash);
  const std::string missing = pointer.substr(slash + 1);
  const nlohmann::json::json_pointer at(parent_pointer);
  if (!json.contains(at) || !json.at(at).is_object()) return "";
  // "training." for "/training"; "" at the top.
  std::string prefix = parent_pointer.empty() ? "" : parent_pointer.substr(1) + ".";
  std::replace(prefix.begin(), prefix.end(), '/', '.');
  const auto known = [&prefix](const std::string& key) {
    const std::string path = prefix + key;
    return std::any_of(
        scenario_paths().begin(), scenario_paths().end(),
        [&path](const std::string& p) { return p == path || p.rfind(path + ".", 0) == 0; });
  };
  for (const auto& [key, value] : json.at(at).items()) {
    if (known(key)) continue;
    if (const auto near = closest(key, {missing})) {
      return " (the object has '" + key + "': a misspelling of '" + *near + "'?)";
    }
  }
  return "";
}

parallel::Scenario parse(const ScenarioDocument& doc) {
  // A report (`run --format json`) read as a scenario would fail on its first report key: say
  // what it is, and where its scenario is.
  if (doc.json.is_object() && doc.json.contains("scenario") && doc.json.contains("context") &&
      doc.json.contains("iteration_time_s")) {
    throw ConfigError(doc.source, "",
                      "a trainsim report, not a scenario; expected a scenario document, such as "
                      "the report's \"scenario\" object");
  }
  // So would a sweep spec (docs/sweep.md: "base" and "axes"), on a missing /hardware.
  if (doc.json.is_object() && doc.json.contains("base") && doc.json.contains("axes")) {
    throw ConfigError(doc.source, "",
                      "a sweep spec, not a scenario; expected a scenario document, such as the "
                      "spec's \"base\" object (trainsim sweep runs the spec)");
  }
  // So would a diff report, on its "a".
  if (doc.json.is_object() && doc.json.contains("a") && doc.json.contains("b") &&
      doc.json.contains("deltas")) {
    throw ConfigError(doc.source, "",
                      "a trainsim diff report, not a scenario; expected a scenario document, "
                      "such as the report's \"a\" or \"b\" \"scenario\" object");
  }
  // And a model (a Hugging Face config.json too), hardware profile or stack, on a missing
  // /hardware, then on the next missing key each flag given for it leads to.
  if (const auto kind = document_kind(doc.json)) {
    const char* key = *kind == DocumentKind::Model      ? "model"
                      : *kind == DocumentKind::Hardware ? "hardware"
                                                        : "stack";
    const std::string noun = document_noun(*kind);
    throw ConfigError(doc.source, "",
                      noun + ", not a scenario; expected a scenario document, which names " + noun +
                          " file as its \"" + key + "\" (or --" + key +
                          " FILE on the command line)");
  }
  ObjectReader top(doc.json, doc.source, "");
  parallel::Scenario s;
  std::tie(s.hardware, s.hardware_name, s.hardware_inline, s.hardware_path) =
      load_ref<hardware::HardwareSpec>(top, doc, "hardware", "profile", "hardware_profiles",
                                       hardware_from_json, load_hardware);
  std::tie(s.model, s.model_name, s.model_inline, s.model_path) =
      load_ref<model::ModelSpec>(top, doc, "model", "model", "models", model_from_json, load_model);
  if (const std::string gap = model::simulation_gap(s.model);
      doc.use == ScenarioUse::Simulate && !gap.empty()) {
    throw top.error("model", "model '" + s.model_name + "' has " + gap +
                                 ", which is not simulated yet; expected a model without it "
                                 "(trainsim describe shows this model's counts)");
  }
  if (top.has("stack")) {
    std::tie(s.stack, s.stack_name, s.stack_inline, s.stack_path) = load_ref<stack::StackSpec>(
        top, doc, "stack", "stack", "stacks", stack_from_json, load_stack);
  } else {
    s.stack = load_stack(kDefaultStack);
    s.stack_name = kDefaultStack;
    s.stack_path = kDefaultStack;
  }

  ObjectReader cluster = top.object("cluster");
  const bool has_nodes = cluster.has("nodes");
  const bool has_gpus = cluster.has("gpus");
  if (!has_nodes && !has_gpus) {
    // A near miss of either key, as for a missing required key (near_miss_note).
    std::string note = near_miss_note(doc.json, "/cluster/nodes");
    if (note.empty()) note = near_miss_note(doc.json, "/cluster/gpus");
    throw ConfigError(
        doc.source, "/cluster",
        "missing nodes or gpus" + note + "; expected {\"nodes\": N} or {\"gpus\": G}");
  }
  if (has_gpus) {
    s.gpus = cluster.integer("gpus", 1, parallel::kMaxGpus);
    // Both, as a report's scenario gives them: read back when they agree (the nodes the GPUs
    // fill, the last one perhaps in part).
    if (has_nodes) {
      const std::int64_t nodes = cluster.integer("nodes", 1, parallel::kMaxGpus);
      if (nodes != s.nodes()) {
        throw ConfigError(doc.source, "/cluster",
                          "nodes " + std::to_string(nodes) + " and gpus " + std::to_string(s.gpus) +
                              " disagree: " + std::to_string(s.gpus) + " GPUs fill " +
                              counted(s.nodes(), "node") + " of " +
                              std::to_string(s.hardware.node.gpus_per_node) +
                              "; expected one of them, or both agreeing");
      }
    }
  } else {
    const std::int64_t per_node = s.hardware.node.gpus_per_node;
    const std::int64_t nodes = cluster.integer("nodes", 1, parallel::kMaxGpus);
    if (nodes > parallel::kMaxGpus / per_node) {
      throw cluster.error("nodes", std::to_string(nodes) + " nodes of " + std::to_string(per_node) +
                                       " GPUs: out of range; expected at most " +
                                       std::to_string(parallel::kMaxGpus) + " GPUs in all");
    }
    s.gpus = nodes * per_node;
  }
  // At most the hosts of one domain: checked with the plan (parallel::validate), so that a
  // sweep across hardware profiles gets a row for each value instead of one error.
  s.nodes_per_domain = cluster.has("nodes_per_domain")
                           ? cluster.integer("nodes_per_domain", 1, parallel::kMaxGpus)
                           : 0;
  cluster.finish();

  ObjectReader training = top.object("training");
  s.training.seq_len = training.integer("seq_len", 1, parallel::kMaxSeqLen);
  // At most kMaxMicroBatchTokens sequences, the most a micro-batch holds at seq_len 1; its
  // tokens with the seq_len (micro_batch x seq_len) are a plan's bound (parallel::validate), so
  // that a sweep pairing a long sequence with a large micro-batch gets a row, not an error
  // after the rows before it.
  s.training.micro_batch = training.has("micro_batch")
                               ? training.integer("micro_batch", 1, parallel::kMaxMicroBatchTokens)
                               : 1;
  s.training.precision = precision_from(training.choice_or("precision", kPrecisions, "bf16"));
  s.training.optimizer =
      pick<Optimizer>(training.choice_or("optimizer", kOptimizers, "adamw"), kOptimizers);
  const bool has_global_batch = training.has("global_batch");
  if (has_global_batch) {
    s.training.global_batch = training.integer("global_batch", 1, parallel::kMaxGlobalBatch);
  }

  parallel::ParallelPlan& p = s.parallel;
  std::optional<std::int64_t> given_dp;  // a report's scenario gives the derived dp back
  if (top.has("parallel")) {
    ObjectReader par = top.object("parallel");
    // tp, pp and cp are at most kMaxDegree, so their product fits an int64; the others at most
    // the largest cluster.
    auto degree = [&par](const char* key, std::int64_t fallback, std::int64_t max_value) {
      return par.has(key) ? par.integer(key, 1, max_value) : fallback;
    };
    p.tp = degree("tp", 1, kMaxDegree);
    p.pp = degree("pp", 1, kMaxDegree);
    p.cp = degree("cp", 1, kMaxDegree);
    p.ep = degree("ep", 1, kMaxDegree);
    p.sequence_parallel = par.boolean_or("sequence_parallel", false);
    p.schedule =
        pick<PipelineSchedule>(par.choice_or("pipeline_schedule", kSchedules, "1f1b"), kSchedules);
    p.virtual_stages = degree("virtual_stages", 1, parallel::kMaxGpus);
    if (par.has("sharding") && par.raw("sharding").is_string()) {
      const std::string given = par.raw("sharding").get<std::string>();
      if (const auto alias = sharding_alias(given)) {
        std::string list;
        for (const auto& k : kShardings) list += (list.empty() ? "" : ", ") + k;
        throw par.error("sharding", "unknown value '" + given + "'; it is '" + *alias +
                                        "' here; expected one of " + list);
      }
    }
    p.sharding = pick<Sharding>(par.choice_or("sharding", kShardings, "none"), kShardings);
    p.shard_group = degree("shard_group", 0, parallel::kMaxGpus);
    p.recompute = pick<Recompute>(par.choice_or("recompute", kRecomputes, "none"), kRecomputes);
    if (par.has("recompute_layers")) {
      p.recompute_layers = par.integer("recompute_layers", 1, model::kMaxLayers);
    }
    p.account_for_embedding_in_pipeline_split =
        par.boolean_or("account_for_embedding_in_pipeline_split", false);
    p.account_for_loss_in_pipeline_split =
        par.boolean_or("account_for_loss_in_pipeline_split", false);
    if (par.has("pipeline_layout")) {
      const auto& layout = par.array("pipeline_layout");
      if (layout.empty() || layout.size() > static_cast<std::size_t>(model::kMaxLayers)) {
        throw par.error("pipeline_layout",
                        "expected the transformer layers of each model chunk, 1 to " +
                            std::to_string(model::kMaxLayers) + " entries, got " +
                            describe_json(layout));
      }
      for (std::size_t i = 0; i < layout.size(); ++i) {
        const auto& v = layout[i];
        // A whole number written 8.0 is 8, as every other integer key reads it.
        const bool whole = is_whole_number(v);
        const double value = whole ? v.get<double>() : 0.0;
        if (!whole || value < 1.0 || value > static_cast<double>(model::kMaxLayers)) {
          throw ConfigError(par.source(),
                            par.pointer_of("pipeline_layout") + "/" + std::to_string(i),
                            "expected an integer from 1 to " + std::to_string(model::kMaxLayers) +
                                " (a model chunk's transformer layers), got " + describe_json(v));
        }
        p.pipeline_layout.push_back(static_cast<std::int64_t>(value));
      }
    }
    if (par.has("dp")) given_dp = par.integer("dp", 1, parallel::kMaxGpus);
    par.finish();
  } else {
    p.sharding = Sharding::None;
  }
  // Megatron-LM turns sequence parallelism off when tp == 1 (arguments.py); so does trainsim.
  if (p.tp == 1) p.sequence_parallel = false;
  // Checked all the same (a Scenario may be built in code): an overflowing tp x pp x cp cannot
  // divide the GPUs either, and dp = 0 marks the plan invalid for parallel::validate to explain.
  const auto model_parallel = parallel::model_parallel_size(p);
  p.dp = model_parallel && s.gpus % *model_parallel == 0 ? s.gpus / *model_parallel : 0;
  // dp is derived; a given one (a report's scenario read back) must be what the plan derives,
  // unless a flag or axis changed what it derives from (then the file's value is stale).
  const bool rederived =
      std::any_of(doc.overridden.begin(), doc.overridden.end(), [](const auto& o) {
        return o.first.rfind("/cluster", 0) == 0 || o.first == "/parallel/tp" ||
               o.first == "/parallel/pp" || o.first == "/parallel/cp";
      });
  if (given_dp && *given_dp != p.dp && !rederived) {
    throw ConfigError(doc.source, "/parallel/dp",
                      "dp " + std::to_string(*given_dp) + " is not gpus / (tp x pp x cp) = " +
                          (p.dp > 0 ? std::to_string(p.dp) : std::string("not a whole number")) +
                          "; expected it or no dp (dp is derived)");
  }
  if (!has_global_batch) {
    // dp x micro_batch <= 2^24 x 2^32 fits; past kMaxGlobalBatch the plan is out of range. An
    // impossible plan (dp 0) has no default global batch either: 0, shown as none, as its dp
    // (it was micro_batch, as if dp were 1, and diff listed it as an input that changed).
    s.training.global_batch = p.dp * s.training.micro_batch;
    if (s.training.global_batch > parallel::kMaxGlobalBatch) {
      throw training.error(
          "micro_batch",
          "the default global_batch dp x micro_batch = " + std::to_string(s.training.global_batch) +
              ": out of range; expected at most " + std::to_string(parallel::kMaxGlobalBatch) +
              " (or give global_batch)");
    }
  }
  training.finish();
  top.finish();
  return s;
}

}  // namespace

ScenarioDocument read_scenario_file(const std::string& path) {
  ScenarioDocument doc;
  doc.json = read_json_file(path);
  doc.source = path;
  doc.base_dir = std::filesystem::path(path).parent_path().string();
  return doc;
}

const std::vector<std::string>& scenario_paths() {
  static const std::vector<std::string> paths = {"hardware",
                                                 "model",
                                                 "stack",
                                                 "cluster.nodes",
                                                 "cluster.gpus",
                                                 "cluster.nodes_per_domain",
                                                 "training.seq_len",
                                                 "training.global_batch",
                                                 "training.micro_batch",
                                                 "training.precision",
                                                 "training.optimizer",
                                                 "parallel.tp",
                                                 "parallel.pp",
                                                 "parallel.cp",
                                                 "parallel.ep",
                                                 "parallel.sequence_parallel",
                                                 "parallel.pipeline_schedule",
                                                 "parallel.virtual_stages",
                                                 "parallel.sharding",
                                                 "parallel.shard_group",
                                                 "parallel.recompute",
                                                 "parallel.recompute_layers",
                                                 "parallel.account_for_embedding_in_pipeline_split",
                                                 "parallel.account_for_loss_in_pipeline_split",
                                                 "parallel.pipeline_layout"};
  return paths;
}

void set_path(ScenarioDocument& doc, std::string_view dotted, nlohmann::json value,
              const std::string& origin) {
  const std::string path(dotted);
  const auto& known = scenario_paths();
  if (std::find(known.begin(), known.end(), path) == known.end()) {
    throw ConfigError(origin, "",
                      "unknown scenario key '" + path + "'" + did_you_mean(path, known) +
                          "; expected one of the keys of "
                          "a scenario such as parallel.tp or cluster.gpus");
  }
  if (!doc.json.is_object()) doc.json = nlohmann::json::object();
  nlohmann::json* node = &doc.json;
  std::string pointer;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    pointer += "/" + key;
    if (dot == std::string::npos) {
      if (path == "cluster.gpus") node->erase("nodes");
      if (path == "cluster.nodes") node->erase("gpus");
      (*node)[key] = std::move(value);
      break;
    }
    if (!node->contains(key) || !(*node)[key].is_object()) (*node)[key] = nlohmann::json::object();
    node = &(*node)[key];
    start = dot + 1;
  }
  doc.overridden[pointer] = origin;
  if (path == "cluster.gpus") doc.overridden.erase("/cluster/nodes");
  if (path == "cluster.nodes") doc.overridden.erase("/cluster/gpus");
}

parallel::Scenario scenario_from_document(const ScenarioDocument& doc) {
  try {
    return parse(doc);
  } catch (const ConfigError& e) {
    // A required key missing beside a near miss of it: say which key is likely misspelled.
    const std::string missing = "missing required key";
    std::string problem = e.problem();
    // An inline model, profile or stack's loader gives a note of its own
    // (io::with_near_miss_note); this one also knows which keys the scenario has.
    // An inline object written elsewhere (a sweep axis's value) is named there: its pointer in
    // the scenario is the one to look in.
    std::string in_scenario = e.source() == doc.source ? e.pointer() : "";
    for (const auto& [pointer, written] : doc.written_at) {
      if (e.source() == written.first && e.pointer().rfind(written.second + "/", 0) == 0) {
        in_scenario = pointer + e.pointer().substr(written.second.size());
      }
    }
    if (!in_scenario.empty() && problem.rfind(missing, 0) == 0 &&
        problem.find(" (the object has '") == std::string::npos) {
      if (const std::string note = near_miss_note(doc.json, in_scenario); !note.empty()) {
        problem = missing + note + problem.substr(missing.size());
      }
    }
    // Blame the flag or axis that set the offending value, not the file, the near-miss note too
    // (a sweep axis's inline model missing "layers" was named under /base).
    // The key itself or an object above it: "/parallel/recompute" does not own
    // "/parallel/recompute_layers".
    if (e.source() == doc.source) {
      for (const auto& [pointer, origin] : doc.overridden) {
        if (e.pointer() == pointer || e.pointer().rfind(pointer + "/", 0) == 0) {
          throw ConfigError(origin, e.pointer(), problem);
        }
      }
    }
    if (problem != e.problem()) throw ConfigError(e.source(), e.pointer(), problem);
    throw;
  }
}

std::optional<std::vector<std::int64_t>> parse_layer_counts(std::string_view text) {
  std::vector<std::int64_t> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    std::string_view item = text.substr(at, end - at);
    // Blanks around an item are allowed, as in search's lists ("16, 16").
    item.remove_prefix(std::min(item.find_first_not_of(" \t"), item.size()));
    item.remove_suffix(item.size() - (item.find_last_not_of(" \t") + 1));
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    // "016" is refused, as every numeric flag refuses a zero before its first digit.
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() ||
        (item.size() > 1 && item[0] == '0')) {
      return std::nullopt;
    }
    out.push_back(value);
    at = end + 1;
  }
  return out;
}

nlohmann::json scenario_to_json(const parallel::Scenario& s) {
  const parallel::ParallelPlan& p = s.parallel;
  nlohmann::json parallel = {{"tp", p.tp},
                             {"pp", p.pp},
                             {"cp", p.cp},
                             {"dp", p.dp},
                             {"sequence_parallel", p.sequence_parallel},
                             {"pipeline_schedule", parallel::to_string(p.schedule)},
                             {"virtual_stages", p.virtual_stages},
                             {"sharding", parallel::to_string(p.sharding)},
                             {"recompute", parallel::to_string(p.recompute)}};
  // An impossible plan (dp 0) has no default shard group: 0, shown as none, as its dp and the
  // sweep CSV's blank (hybrid_shard_size's floor of 1 wrote a group of 1 no one gave).
  if (p.sharding == Sharding::HybridShard) {
    parallel["shard_group"] =
        p.dp > 0 || p.shard_group > 0 ? parallel::hybrid_shard_size(s) : std::int64_t{0};
  }
  // Only a partial recomputation carries recompute_layers, so other reports keep their keys.
  if (p.recompute_layers > 0) parallel["recompute_layers"] = p.recompute_layers;
  // Only a split that counts the embedding or the loss carries its keys, likewise.
  if (p.account_for_embedding_in_pipeline_split) {
    parallel["account_for_embedding_in_pipeline_split"] = true;
  }
  if (p.account_for_loss_in_pipeline_split) parallel["account_for_loss_in_pipeline_split"] = true;
  if (!p.pipeline_layout.empty()) parallel["pipeline_layout"] = p.pipeline_layout;
  // Only MoE scenarios carry ep, so a dense scenario's report keeps its keys; and a dense one
  // whose ep is not 1, so that its invalid row names the value that made it invalid.
  if (model::is_moe(s.model) || p.ep != 1) parallel["ep"] = p.ep;
  nlohmann::json cluster = {{"gpus", s.gpus}, {"nodes", s.nodes()}};
  // Only a scenario that gives nodes_per_domain carries its key, likewise.
  if (s.nodes_per_domain > 0) cluster["nodes_per_domain"] = s.nodes_per_domain;
  // An inline object is echoed whole, so that the scenario runs again as it is.
  const auto ref = [](const std::string& name, const std::string& inline_text) {
    return inline_text.empty() ? nlohmann::json(name) : nlohmann::json::parse(inline_text);
  };
  return nlohmann::json{{"hardware", ref(s.hardware_name, s.hardware_inline)},
                        {"model", ref(s.model_name, s.model_inline)},
                        {"stack", ref(s.stack_name, s.stack_inline)},
                        {"cluster", std::move(cluster)},
                        {"training",
                         {{"seq_len", s.training.seq_len},
                          {"global_batch", s.training.global_batch},
                          {"micro_batch", s.training.micro_batch},
                          {"precision", parallel::to_string(s.training.precision)},
                          {"optimizer", parallel::to_string(s.training.optimizer)}}},
                        {"parallel", parallel}};
}

std::optional<EchoProblem> echoed_scenario_problem(const nlohmann::json& scenario) {
  using Json = nlohmann::json;
  // The global batch and a hybrid shard group a report writes: counts, 0 only as the default of
  // an impossible plan (dp 0), which has none.
  constexpr const char* kZeroOnlyWhereDpIsZero =
      "a count, an integer >= 1 (0 only where dp is 0, an impossible plan's default)";
  const auto shown = [](const Json& v) { return v.dump().substr(0, 40); };
  if (!scenario.is_object()) return EchoProblem{"", shown(scenario), "an object (the scenario)"};
  for (const char* k : {"hardware", "model", "stack"}) {
    const auto it = scenario.find(k);
    if (it == scenario.end()) return EchoProblem{k, "", "a name or an inline object"};
    if (!((it->is_string() && !it->get_ref<const std::string&>().empty()) || it->is_object())) {
      return EchoProblem{k, shown(*it), "a name or an inline object"};
    }
  }
  enum class Kind { Count, Gpus, Degree, Dp, Flag, True, Name, Layout };
  struct Key {
    const char* name;
    Kind kind;
    bool always;  // scenario_to_json writes it whatever the scenario
    const std::vector<std::string>* names = nullptr;
  };
  // scenario_to_json's keys, object by object.
  static const std::vector<std::pair<std::string, std::vector<Key>>> kObjects = {
      {"cluster",
       {{"gpus", Kind::Gpus, true},
        {"nodes", Kind::Gpus, true},
        {"nodes_per_domain", Kind::Count, false}}},
      {"training",
       {{"seq_len", Kind::Count, true},
        {"global_batch", Kind::Dp, true},  // 0 for an impossible plan's default, as dp
        {"micro_batch", Kind::Count, true},
        {"precision", Kind::Name, true, &kPrecisions},
        {"optimizer", Kind::Name, true, &kOptimizers}}},
      {"parallel",
       {{"tp", Kind::Degree, true},
        {"pp", Kind::Degree, true},
        {"cp", Kind::Degree, true},
        {"dp", Kind::Dp, true},
        {"sequence_parallel", Kind::Flag, true},
        {"pipeline_schedule", Kind::Name, true, &kSchedules},
        {"virtual_stages", Kind::Count, true},
        {"sharding", Kind::Name, true, &kShardings},
        {"recompute", Kind::Name, true, &kRecomputes},
        {"shard_group", Kind::Dp, false},  // 0: an impossible plan's default
        {"recompute_layers", Kind::Count, false},
        {"account_for_embedding_in_pipeline_split", Kind::True, false},
        {"account_for_loss_in_pipeline_split", Kind::True, false},
        {"pipeline_layout", Kind::Layout, false},
        {"ep", Kind::Count, false}}}};
  for (const auto& [key, value] : scenario.items()) {
    const bool known = key == "hardware" || key == "model" || key == "stack" ||
                       std::any_of(kObjects.begin(), kObjects.end(),
                                   [&key](const auto& o) { return o.first == key; });
    if (!known) {
      return EchoProblem{key.substr(0, 40), shown(value),
                         "hardware, model, stack, cluster, training and parallel", true};
    }
  }
  const auto count = [](const Json& v, std::int64_t most) {
    return v.is_number_integer() && v.get<std::int64_t>() >= 1 && v.get<std::int64_t>() <= most;
  };
  for (const auto& [object, keys] : kObjects) {
    const auto it = scenario.find(object);
    if (it == scenario.end()) return EchoProblem{object, "", "an object"};
    if (!it->is_object()) return EchoProblem{object, shown(*it), "an object"};
    for (const auto& [key, value] : it->items()) {
      if (std::none_of(keys.begin(), keys.end(), [&key](const Key& k) { return key == k.name; })) {
        return EchoProblem{object + "." + key.substr(0, 40), shown(value), "a scenario's keys",
                           true};
      }
    }
    for (const Key& k : keys) {
      const std::string path = object + "." + k.name;
      const auto v = it->find(k.name);
      if (v == it->end()) {
        if (k.always) return EchoProblem{path, "", "a value (every report writes it)"};
        continue;
      }
      switch (k.kind) {
        case Kind::Count:
          if (!count(*v, std::numeric_limits<std::int64_t>::max())) {
            return EchoProblem{path, shown(*v), "a count, an integer >= 1"};
          }
          break;
        case Kind::Gpus:
          if (!count(*v, parallel::kMaxGpus)) {
            return EchoProblem{
                path, shown(*v),
                "a count, an integer from 1 to " + std::to_string(parallel::kMaxGpus)};
          }
          break;
        case Kind::Degree:
          if (!count(*v, kMaxDegree)) {
            return EchoProblem{path, shown(*v),
                               "a degree, an integer from 1 to " + std::to_string(kMaxDegree)};
          }
          break;
        case Kind::Dp:
          if (!v->is_number_integer() || v->get<std::int64_t>() < 0) {
            return EchoProblem{path, shown(*v),
                               std::string_view(k.name) == "dp" ? "a count, an integer >= 0"
                                                                : kZeroOnlyWhereDpIsZero};
          }
          break;
        case Kind::Flag:
          if (!v->is_boolean()) return EchoProblem{path, shown(*v), "true or false"};
          break;
        case Kind::True:
          if (*v != true) return EchoProblem{path, shown(*v), "true (false is not written)"};
          break;
        case Kind::Name:
          if (!v->is_string() || std::find(k.names->begin(), k.names->end(),
                                           v->get<std::string>()) == k.names->end()) {
            std::string list;
            for (const std::string& n : *k.names) list += (list.empty() ? "" : ", ") + n;
            return EchoProblem{path, shown(*v), "one of " + list};
          }
          break;
        case Kind::Layout:
          if (!v->is_array() || v->empty() ||
              !std::all_of(v->begin(), v->end(),
                           [&count](const Json& n) { return count(n, model::kMaxLayers); })) {
            return EchoProblem{path, shown(*v), "a list of layer counts, integers >= 1"};
          }
          break;
      }
    }
  }
  // What the reader derives (scenario_from_document): dp, shard_group's presence, sequence
  // parallelism off at tp 1. tp x pp x cp <= 2^60 (each at most kMaxDegree).
  const Json& cluster = scenario["cluster"];
  const Json& par = scenario["parallel"];
  const std::int64_t gpus = cluster["gpus"].get<std::int64_t>();
  const std::int64_t model_parallel =
      par["tp"].get<std::int64_t>() * par["pp"].get<std::int64_t>() * par["cp"].get<std::int64_t>();
  const std::int64_t dp = gpus % model_parallel == 0 ? gpus / model_parallel : 0;
  if (cluster["nodes"].get<std::int64_t>() > gpus) {
    return EchoProblem{"cluster.nodes", shown(cluster["nodes"]),
                       "at most gpus, " + std::to_string(gpus) + " (every node holds a GPU)"};
  }
  if (par["dp"].get<std::int64_t>() != dp) {
    return EchoProblem{"parallel.dp", shown(par["dp"]),
                       std::to_string(dp) + ", gpus / (tp x pp x cp)" +
                           (dp == 0 ? " where that is not a whole number" : "")};
  }
  // A global batch or shard group of 0 is the default of an impossible plan only.
  if (dp != 0) {
    for (const auto& [object, key] :
         {std::pair{"training", "global_batch"}, std::pair{"parallel", "shard_group"}}) {
      const Json& o = scenario[object];
      if (o.contains(key) && o[key] == 0) {
        return EchoProblem{std::string(object) + "." + key, "0", kZeroOnlyWhereDpIsZero};
      }
    }
  }
  const bool hybrid = par["sharding"] == "hybrid_shard";
  if (par.contains("shard_group") != hybrid) {
    return EchoProblem{"parallel.shard_group", hybrid ? "" : shown(par["shard_group"]),
                       hybrid ? "the shard group of sharding hybrid_shard"
                              : "no shard_group (written for sharding hybrid_shard only)"};
  }
  if (par["sequence_parallel"] == true && par["tp"] == 1) {
    return EchoProblem{"parallel.sequence_parallel", "true",
                       "false where tp is 1 (the reader turns it off)"};
  }
  return std::nullopt;
}

}  // namespace trainsim::io
