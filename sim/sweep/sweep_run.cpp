#include "sim/sweep/sweep_run.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>

#include "trainsim/error.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/json_reader.hpp"

namespace trainsim::sweep {
namespace {

using nlohmann::json;

// Fast-path reads: nullopt when the value is not what the loader would accept without
// question (below `min_value`, above `max_value`, the loader's bound), so the caller falls back
// to the loader, which names the key and the bound.
std::optional<std::int64_t> int_at(
    const json& obj, const char* key, std::int64_t min_value, std::int64_t fallback,
    bool required = false, std::int64_t max_value = std::numeric_limits<std::int64_t>::max()) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) return std::nullopt;
    return fallback;
  }
  if (!it->is_number_integer()) return std::nullopt;
  const auto v = it->get<std::int64_t>();
  if (v < min_value || v > max_value) return std::nullopt;
  return v;
}

template <class E>
std::optional<E> enum_at(const json& obj, const char* key, E fallback,
                         std::initializer_list<E> choices) {
  const auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (!it->is_string()) return std::nullopt;
  const std::string& name = it->get_ref<const std::string&>();
  for (const E e : choices) {
    if (name == parallel::to_string(e)) return e;
  }
  return std::nullopt;
}

bool only_keys(const json& obj, std::initializer_list<const char*> keys) {
  if (!obj.is_object()) return false;
  for (const auto& [key, value] : obj.items()) {
    if (std::none_of(keys.begin(), keys.end(), [&key = key](const char* k) { return key == k; })) {
      return false;
    }
  }
  return true;
}

// The loader's parse of the scalar keys, on cached specs (see sim/io/scenario_loader.cpp:
// defaults, nodes -> gpus, sequence parallelism off at tp 1, dp and the default global batch).
std::optional<parallel::Scenario> fast_parse(const json& j, const hardware::HardwareSpec& hw,
                                             const model::ModelSpec& m) {
  using parallel::PipelineSchedule;
  using parallel::Recompute;
  using parallel::Sharding;
  if (!only_keys(j, {"hardware", "model", "stack", "cluster", "training", "parallel"})) {
    return std::nullopt;
  }
  if (!j.contains("cluster") || !j.contains("training")) return std::nullopt;
  const json& cluster = j["cluster"];
  const json& training = j["training"];
  if (!only_keys(cluster, {"nodes", "gpus", "nodes_per_domain"}) ||
      !only_keys(training, {"seq_len", "global_batch", "micro_batch", "precision", "optimizer"})) {
    return std::nullopt;
  }
  parallel::Scenario s;
  s.hardware = hw;
  s.model = m;
  if (cluster.contains("nodes") == cluster.contains("gpus")) return std::nullopt;
  const auto count =
      int_at(cluster, cluster.contains("gpus") ? "gpus" : "nodes", 1, 1, true, parallel::kMaxGpus);
  if (!count) return std::nullopt;
  // Both factors are at most 2^24 (gpus_per_node is bounded far lower at load): no overflow.
  s.gpus = cluster.contains("gpus") ? *count : *count * hw.node.gpus_per_node;
  if (s.gpus > parallel::kMaxGpus) return std::nullopt;
  const auto nodes_per_domain =
      int_at(cluster, "nodes_per_domain", 1, 0, false, hw.node.hosts_per_domain());
  if (!nodes_per_domain) return std::nullopt;
  s.nodes_per_domain = *nodes_per_domain;

  const auto seq_len = int_at(training, "seq_len", 1, 1, true, parallel::kMaxSeqLen);
  const auto micro_batch =
      int_at(training, "micro_batch", 1, 1, false, parallel::kMaxMicroBatchTokens);
  const auto precision = enum_at(
      training, "precision", hardware::Dtype::Bf16,
      {hardware::Dtype::Bf16, hardware::Dtype::Fp16, hardware::Dtype::Fp32, hardware::Dtype::Fp8});
  const auto optimizer = enum_at(training, "optimizer", parallel::Optimizer::AdamW,
                                 {parallel::Optimizer::AdamW, parallel::Optimizer::Sgd});
  const bool has_global_batch = training.contains("global_batch");
  const auto global_batch =
      int_at(training, "global_batch", 1, 1, false, parallel::kMaxGlobalBatch);
  if (!seq_len || !micro_batch || !precision || !optimizer || !global_batch) return std::nullopt;
  s.training.seq_len = *seq_len;
  s.training.micro_batch = *micro_batch;
  s.training.precision = *precision;
  s.training.optimizer = *optimizer;

  parallel::ParallelPlan& p = s.parallel;
  if (j.contains("parallel")) {
    const json& par = j["parallel"];
    if (!only_keys(par, {"tp", "pp", "cp", "ep", "sequence_parallel", "pipeline_schedule",
                         "virtual_stages", "sharding", "shard_group", "recompute"})) {
      return std::nullopt;
    }
    const auto tp = int_at(par, "tp", 1, 1, false, io::kMaxDegree);
    const auto pp = int_at(par, "pp", 1, 1, false, io::kMaxDegree);
    const auto cp = int_at(par, "cp", 1, 1, false, io::kMaxDegree);
    const auto ep = int_at(par, "ep", 1, 1, false, io::kMaxDegree);
    const auto v = int_at(par, "virtual_stages", 1, 1, false, io::kMaxDegree);
    const auto shard_group = int_at(par, "shard_group", 1, 0, false, parallel::kMaxGpus);
    const auto schedule = enum_at(
        par, "pipeline_schedule", PipelineSchedule::OneFOneB,
        {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved});
    const auto sharding = enum_at(par, "sharding", Sharding::None,
                                  {Sharding::None, Sharding::Zero1, Sharding::ShardGradOp,
                                   Sharding::FullShard, Sharding::HybridShard});
    const auto recompute = enum_at(par, "recompute", Recompute::None,
                                   {Recompute::None, Recompute::Selective, Recompute::Full});
    const auto sp = par.find("sequence_parallel");
    if (sp != par.end() && !sp->is_boolean()) return std::nullopt;
    if (!tp || !pp || !cp || !ep || !v || !shard_group || !schedule || !sharding || !recompute) {
      return std::nullopt;
    }
    p.tp = *tp;
    p.pp = *pp;
    p.cp = *cp;
    p.ep = *ep;
    p.virtual_stages = *v;
    p.shard_group = *shard_group;
    p.schedule = *schedule;
    p.sharding = *sharding;
    p.recompute = *recompute;
    p.sequence_parallel = sp != par.end() && sp->get<bool>();
  } else {
    p.sharding = Sharding::None;
  }
  if (p.tp == 1) p.sequence_parallel = false;
  // Each degree is at most 2^20, so the product could reach 2^60: checked all the same.
  const std::optional<std::int64_t> model_parallel = parallel::model_parallel_size(p);
  if (!model_parallel) return std::nullopt;
  p.dp = s.gpus % *model_parallel == 0 ? s.gpus / *model_parallel : 0;
  // The loader's default (io::scenario_from_document): dp x micro_batch, 0 for an impossible
  // plan (dp 0), and past kMaxGlobalBatch the loader's error, so the fast path leaves it to the
  // loader. Rows of one spec went through either path by which thread came first, so the two
  // must agree byte for byte.
  if (!has_global_batch) {
    const std::int64_t default_batch = p.dp * s.training.micro_batch;
    if (default_batch > parallel::kMaxGlobalBatch) return std::nullopt;
    s.training.global_batch = default_batch;
  } else {
    s.training.global_batch = *global_batch;
  }
  return s;
}

}  // namespace

parallel::Scenario ScenarioResolver::resolve(const io::ScenarioDocument& doc) {
  const json& j = doc.json;
  if (!j.is_object() || !j.contains("hardware") || !j.contains("model")) {
    return io::scenario_from_document(doc);
  }
  const std::string key = j["hardware"].dump() + '\n' + j["model"].dump() + '\n' +
                          (j.contains("stack") ? j["stack"].dump() : std::string()) + '\n' +
                          doc.base_dir;
  std::shared_ptr<const parallel::Scenario> first;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = cache_.find(key);
    if (it != cache_.end()) first = it->second;
  }
  if (first) {
    std::optional<parallel::Scenario> s = fast_parse(j, first->hardware, first->model);
    if (!s) return io::scenario_from_document(doc);
    // Every reference field, not only the names: an inline model's echoed scenario is the
    // object, not "inline" (rows after the first wrote "model": "inline").
    s->hardware_name = first->hardware_name;
    s->model_name = first->model_name;
    s->stack_name = first->stack_name;
    s->hardware_inline = first->hardware_inline;
    s->model_inline = first->model_inline;
    s->stack_inline = first->stack_inline;
    s->hardware_path = first->hardware_path;
    s->model_path = first->model_path;
    s->stack_path = first->stack_path;
    s->stack = first->stack;
    return *std::move(s);
  }
  parallel::Scenario s = io::scenario_from_document(doc);
  const std::lock_guard<std::mutex> lock(mutex_);
  cache_.emplace(key, std::make_shared<const parallel::Scenario>(s));
  return s;
}

std::size_t ScenarioResolver::loads() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

ShardingAxis::ShardingAxis(const SweepSpec& spec) {
  for (std::size_t g = 0; g < spec.groups.size(); ++g) {
    const AxisGroup& group = spec.groups[g];
    if (group.keys.size() != 1 || group.keys.front() != "parallel.sharding" || group.size() < 2) {
      continue;
    }
    size = group.size();
    for (std::size_t later = g + 1; later < spec.groups.size(); ++later) {
      stride *= spec.groups[later].size();
    }
  }
}

std::int64_t ShardingAxis::first_of(std::int64_t index) const {
  return index - (index / stride) % size * stride;
}

std::int64_t ShardingAxis::grain(const Shard& shard) const {
  // The points of one plan in every sharding mode fill the aligned block of stride x size
  // indices holding them (the axis's digit and every faster one). A shard's rows skip indices,
  // so its takes would split the blocks.
  if (size == 0 || shard.count != 1 || stride * size > kMaxGrain) return 1;
  return stride * size;
}

void write_sweep(const SweepSpec& spec, const SweepRunOptions& options, const Sink& sink) {
  const std::int64_t total = spec.size();
  const std::int64_t n = options.shard.size_of(total);
  if (options.format == io::SweepFormat::Csv) sink(io::csv_header());
  ScenarioResolver resolver;
  const ShardingAxis sharding_axis(spec);
  SimulationMemo memo;
  parallel_ordered(
      n, options.jobs, kRowsAheadPerJob * std::max(1, options.jobs),
      [&](std::int64_t k) {
        const std::int64_t index = options.shard.index + k * options.shard.count;
        const parallel::Scenario s = resolver.resolve(spec.document(index));
        // A plan whose sharding is inert takes its simulation from the memo (evaluate()).
        const Evaluation e = sharding_axis.size > 0
                                 ? evaluate(s, options.mode, memo, sharding_axis.first_of(index))
                                 : evaluate(s, options.mode);
        return options.format == io::SweepFormat::Csv ? io::csv_row(index, s, e)
                                                      : io::json_line(index, s, e);
      },
      [&](std::int64_t /*k*/, std::string& line) { sink(line); }, options.progress,
      sharding_axis.grain(options.shard));
  if (options.end_record == EndRecord::Shard) {
    sink(io::trailer_line(io::ShardTrailer{.shard_index = options.shard.index,
                                           .shard_count = options.shard.count,
                                           .scenarios = total,
                                           .spec_digest = run_digest(spec, options.mode),
                                           .rows = n},
                          options.format));
  }
}

std::string run_sweep(const SweepSpec& spec, const SweepRunOptions& options) {
  std::string out;
  write_sweep(spec, options, [&out](std::string_view text) { out += text; });
  return out;
}

std::uint64_t spec_digest(const SweepSpec& spec) {
  // nlohmann::json (not ordered_json) sorts object keys, so the dump does not depend on the
  // order keys were written in the spec file; arrays keep the sweep order, which does matter.
  json canonical = json::object();
  canonical["base"] = spec.base.json;
  json groups = json::array();
  for (const AxisGroup& g : spec.groups) {
    groups.push_back(json{{"keys", g.keys}, {"values", g.values}});
  }
  canonical["groups"] = std::move(groups);
  // Specs naming only built-ins keep the digest they had before files counted.
  if (!spec.reference_files.empty()) canonical["files"] = spec.reference_files;
  return fnv1a64(canonical.dump());
}

std::uint64_t run_digest(const SweepSpec& spec, report::SimulationMode mode) {
  const std::uint64_t digest = spec_digest(spec);
  if (mode != report::SimulationMode::Full) return digest;
  // --full-simulation changes what a row holds (figures in their last digits, and plans past
  // the whole-iteration bound invalid): its shards never merge with the others. The default
  // run's digest is the spec's alone, as before the mode counted.
  return fnv1a64(std::to_string(digest) + " full simulation");
}

std::string reference_file_digests(const std::vector<std::string>& references) {
  // The loaders read a name as a file wherever it is no built-in id of their folder (a file
  // named "myhw" beside the spec included); a reference that is a built-in id of any folder is
  // the binary's. Each file by its content alone, sorted: the path it resolved to depends on
  // the folder the shard ran from (specs/hw.json, /jobs/specs/hw.json), and shards run from
  // two folders must merge.
  std::vector<std::string> digests;
  for (const std::string& path : references) {
    const bool builtin = !io::names_a_file(path) &&
                         (io::builtin_file("hardware_profiles", path) ||
                          io::builtin_file("models", path) || io::builtin_file("stacks", path));
    std::error_code ec;
    if (builtin || !std::filesystem::is_regular_file(path, ec)) continue;
    const std::string text = io::read_text_file(path, io::kMaxJsonBytes, "an input file");
    digests.push_back(io::digest_text(fnv1a64(text)));
  }
  std::sort(digests.begin(), digests.end());
  std::string out;
  for (const std::string& d : digests) out += "file " + d + "\n";
  return out;
}

std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace trainsim::sweep
