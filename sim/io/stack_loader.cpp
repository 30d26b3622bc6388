#include "sim/io/stack_loader.hpp"

#include <cstdint>
#include <filesystem>

#include "trainsim/error.hpp"
#include "trainsim/model/model_spec.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/spellcheck.hpp"

namespace trainsim::io {
namespace {

// How many "extends" links one chain may follow (a chain longer than this loops).
constexpr int kMaxExtendsDepth = 8;

// Thrown where a chain passes kMaxExtendsDepth, with the file that would extend further, and
// turned into the error of the stack the chain started from (stack_from_json): named where it
// was thrown, the error blamed a file deep in the chain whose own "extends" was fine.
struct ExtendsChainTooLong {
  std::string at;
};

nlohmann::json resolve_extends(const nlohmann::json& json, const std::string& source,
                               const std::string& pointer, int depth,
                               std::vector<std::string>* files = nullptr);
stack::StackSpec read_stack(const nlohmann::json& json, const std::string& source,
                            const std::string& pointer);

// The document of the stack `name` (a built-in id, else a file path), its "extends" resolved.
// `source` and `pointer` locate the "extends" key that named it. Each stack file read is added
// to `files` where given (StackSpec::extends_files).
nlohmann::json base_document(const std::string& name, const std::string& source,
                             const std::string& pointer, int depth,
                             std::vector<std::string>* files) {
  if (const auto builtin = builtin_file("stacks", name)) {
    const std::string file = "stacks/" + name + ".json";
    return resolve_extends(parse_builtin_json(*builtin, file), file, "", depth, files);
  }
  // The stack file at `path`, checked to be a stack, its own "extends" resolved.
  // It is read as a stack of its own first, so that a value wrong in it is named there, not in
  // the file that extends it (whose merged document held it).
  const auto base_file = [&](const std::string& path) {
    const nlohmann::json doc = read_json_file(path);
    require_document_kind(doc, DocumentKind::Stack, source, pointer + "/extends", "'" + name + "'");
    if (files != nullptr) files->push_back(path);
    nlohmann::json resolved = resolve_extends(doc, path, "", depth, files);
    (void)read_stack(resolved, path, "");
    return resolved;
  };
  // A relative path is looked for beside the file that names it first, as a scenario's paths
  // are (scenario_loader's resolve_path), then from the working directory: a stack and the one
  // it extends kept side by side load from anywhere.
  std::error_code ec;
  const std::filesystem::path beside = std::filesystem::path(source).parent_path() / name;
  const bool look_beside = !source.empty() && std::filesystem::path(name).is_relative() &&
                           beside != std::filesystem::path(name);
  if (look_beside && std::filesystem::is_regular_file(beside, ec)) {
    // Two different files would be read depending on the rule: say so rather than pick one (a
    // path that worked from the working directory before the rule would now read another).
    if (std::filesystem::is_regular_file(name, ec) &&
        !std::filesystem::equivalent(beside, name, ec)) {
      throw ConfigError(
          source, pointer + "/extends",
          "'" + name + "' names two files, " + beside.string() + " beside this stack and " + name +
              " in the working directory; expected one (an absolute path tells "
              "them apart" +
              (name.starts_with("./") ? std::string()
                                      : ": './" + name + "' is relative too and names both") +
              ")");
    }
    return base_file(beside.string());
  }
  if (std::filesystem::is_directory(name, ec)) {
    throw ConfigError(source, pointer + "/extends",
                      "'" + name + "' is a directory; expected a software stack JSON file");
  }
  if (names_readable_file(name)) return base_file(name);
  if (names_a_file(name)) {
    throw ConfigError(source, pointer + "/extends",
                      "no such file '" + name + "'" +
                          (look_beside ? " beside this stack (" + beside.string() +
                                             ") or in the working directory"
                                       : std::string()) +
                          "; expected a software stack JSON file");
  }
  const auto ids = builtin_stack_ids();
  throw ConfigError(source, pointer + "/extends",
                    "unknown software stack '" + name + "'" + did_you_mean(name, ids) +
                        "; expected a built-in stack id or a path to a stack JSON file");
}

// `json` with its "extends" chain resolved: the named stack's document with this object's keys
// merged over it (RFC 7386 JSON merge patch: objects merge key by key, other values replace, a
// null removes the key), so a stack file states only what differs from its base.
nlohmann::json resolve_extends(const nlohmann::json& json, const std::string& source,
                               const std::string& pointer, int depth,
                               std::vector<std::string>* files) {
  if (!json.is_object() || !json.contains("extends")) return json;
  const nlohmann::json& base = json.at("extends");
  if (!base.is_string()) {
    throw ConfigError(source, pointer + "/extends",
                      "expected the id of a built-in stack or a path to a stack JSON file, got " +
                          describe_json(base));
  }
  if (depth >= kMaxExtendsDepth) throw ExtendsChainTooLong{source};
  nlohmann::json merged = base_document(base.get<std::string>(), source, pointer, depth + 1, files);
  nlohmann::json patch = json;
  patch.erase("extends");
  merged.merge_patch(patch);
  return merged;
}

}  // namespace

nlohmann::json resolved_stack_json(const nlohmann::json& json, const std::string& source,
                                   std::vector<std::string>* files) {
  return resolve_extends(json, source, "", 0, files);
}

namespace {

stack::StackSpec read_stack(const nlohmann::json& json, const std::string& source,
                            const std::string& pointer) {
  ObjectReader r(json, source, pointer);
  // Resolved away by now; asked for so that an unknown key's line lists it, and a near miss
  // ("extnds") is told of it.
  (void)r.has("extends");
  stack::StackSpec s;
  s.id = r.string("id");
  // As a hardware profile's: an empty id names nothing in reports and messages.
  if (s.id.empty()) throw r.error("id", "expected a non-empty id like \"pytorch-2.3-fsdp\"");
  s.name = r.string("name");

  ObjectReader fsdp = r.object("fsdp");
  // At most 64 AllGathers in flight, a sanity bound (PyTorch FSDP keeps 2), read as such so
  // that every message about the key states it (a missing key said [1, 65536]).
  constexpr std::int64_t kMaxForwardPrefetch = 64;
  s.fsdp_forward_prefetch =
      static_cast<int>(fsdp.integer("forward_prefetch", 1, kMaxForwardPrefetch));
  // Checked, not kept: BACKWARD_PRE and BACKWARD_POST price one schedule (docs/stacks.md).
  (void)fsdp.choice("backward_prefetch", {"backward_pre", "backward_post"});
  s.fsdp_gather_granularity =
      fsdp.choice_or("gather_granularity", {"unit", "parameter"}, "unit") == "parameter"
          ? stack::GatherGranularity::Parameter
          : stack::GatherGranularity::Unit;
  if (fsdp.has("persistence_threshold")) {
    if (s.fsdp_gather_granularity != stack::GatherGranularity::Parameter) {
      throw fsdp.error("persistence_threshold",
                       "only applies with gather_granularity \"parameter\"");
    }
    // Elements of one weight tensor; 2^40 is far above any tensor a GPU holds.
    s.fsdp_persistence_threshold = fsdp.integer("persistence_threshold", 0, std::int64_t{1} << 40);
  }
  s.fsdp_recompute_gather =
      fsdp.choice_or("recompute_gather", {"shared", "separate"}, "shared") == "separate"
          ? stack::RecomputeGather::Separate
          : stack::RecomputeGather::Shared;
  s.fsdp_blocking_fetch = fsdp.boolean_or("blocking_fetch", false);
  s.fsdp_reshard_last_layer = fsdp.boolean_or("reshard_last_layer", true);
  if (fsdp.has("host_cost_per_rank")) {
    s.fsdp_host_cost_per_rank = fsdp.seconds("host_cost_per_rank", /*allow_zero=*/true);
    if (s.fsdp_host_cost_per_rank.value() > 1e-3) {
      throw fsdp.error("host_cost_per_rank", "expected at most 1 ms per rank and call, got " +
                                                 describe_json(fsdp.raw("host_cost_per_rank")));
    }
  }
  if (fsdp.has("staging_passes")) {
    ObjectReader passes = fsdp.object("staging_passes");
    // At most 16 passes of the call's bytes: a copy is 2, a fill 1.
    const auto count = [&passes](const char* key) {
      const double v = passes.number_or(key, 0.0);
      if (!(v >= 0.0 && v <= 16.0)) {
        throw passes.error(key, "expected HBM passes over the call's bytes from 0 to 16, got " +
                                    describe_json(passes.raw(key)));
      }
      return v;
    };
    s.fsdp_staging_passes_gather = count("all_gather");
    s.fsdp_staging_passes_reduce = count("reduce_scatter");
    passes.finish();
  }
  if (fsdp.has("copy_out_passes")) {
    const double v = fsdp.number("copy_out_passes");
    if (!(v >= 0.0 && v <= 16.0)) {
      throw fsdp.error("copy_out_passes",
                       "expected HBM passes over the gathered bytes from 0 to 16, got " +
                           describe_json(fsdp.raw("copy_out_passes")));
    }
    s.fsdp_copy_out_passes = v;
  }
  fsdp.finish();

  ObjectReader tp = r.object("tensor_parallel");
  s.tp_overlap = tp.boolean("overlap");
  tp.finish();

  // A string applies to every training precision; an object gives it per training precision
  // ({"bf16": "fp32", "fp16": "fp16"}), a precision it does not name reducing in itself.
  const std::vector<std::string> reduce_names = {"precision", "fp32", "bf16", "fp16"};
  const std::vector<std::string> precisions = {"fp32", "tf32", "fp16", "bf16", "fp8"};
  auto reduce_dtype = [](const std::string& name) -> std::optional<hardware::Dtype> {
    if (name == "fp32") return hardware::Dtype::Fp32;
    if (name == "bf16") return hardware::Dtype::Bf16;
    if (name == "fp16") return hardware::Dtype::Fp16;
    return std::nullopt;
  };
  if (r.has("gradient_reduce_dtype") && r.raw("gradient_reduce_dtype").is_object()) {
    ObjectReader by = r.object("gradient_reduce_dtype");
    for (std::size_t d = 0; d < precisions.size(); ++d) {
      // No scenario trains in tf32 (scenario_loader's precisions: bf16, fp16, fp32, fp8): an
      // entry for it never applied, and was taken without a word.
      if (precisions[d] == "tf32") continue;
      if (by.has(precisions[d])) {
        s.gradient_reduce_dtype[d] = reduce_dtype(by.choice(precisions[d], reduce_names));
      }
    }
    by.finish();
  } else {
    const auto dtype = reduce_dtype(r.choice("gradient_reduce_dtype", reduce_names));
    s.gradient_reduce_dtype.fill(dtype);
  }

  if (r.has("optimizer")) {
    ObjectReader opt = r.object("optimizer");
    const std::vector<std::string> dtypes = {"fp32", "bf16", "fp16"};
    auto bytes = [&opt, &dtypes](const char* key) {
      return opt.choice_or(key, dtypes, "fp32") == "fp32" ? 4.0 : 2.0;
    };
    s.optimizer_state.main_params_bytes = bytes("main_params_dtype");
    s.optimizer_state.exp_avg_bytes = bytes("exp_avg_dtype");
    s.optimizer_state.exp_avg_sq_bytes = bytes("exp_avg_sq_dtype");
    s.precision_aware_optimizer = opt.boolean_or("precision_aware", false);
    // Megatron-Core keeps the state in fp32 unless its precision-aware optimizer is on
    // (OptimizerConfig.__post_init__: "main_params_dtype can only be fp32 when not using
    // precision-aware optimizer", and the same for exp_avg_dtype and exp_avg_sq_dtype): a
    // 16-bit state without it halved optimizer_bytes for a configuration Megatron refuses.
    if (!s.precision_aware_optimizer) {
      for (const char* key : {"main_params_dtype", "exp_avg_dtype", "exp_avg_sq_dtype"}) {
        if (opt.has(key) && opt.choice(key, dtypes) != "fp32") {
          throw opt.error(key,
                          "a 16-bit optimizer state needs the precision-aware optimizer "
                          "(Megatron-Core keeps it in fp32 otherwise); expected fp32, or "
                          "optimizer.precision_aware true, got " +
                              describe_json(opt.raw(key)));
        }
      }
    }
    opt.finish();
  }

  s.elementwise_traffic = r.number("elementwise_traffic");
  if (!(s.elementwise_traffic >= 1.0 && s.elementwise_traffic <= 100.0)) {
    throw r.error("elementwise_traffic", "expected a factor from 1 (fused kernels) to 100, got " +
                                             describe_json(r.raw("elementwise_traffic")));
  }
  s.attention_speed = r.number("attention_speed");
  if (!(s.attention_speed >= 0.05 && s.attention_speed <= 5.0)) {
    throw r.error("attention_speed",
                  "expected a speed relative to FlashAttention-2 from 0.05 to 5, got " +
                      describe_json(r.raw("attention_speed")));
  }
  if (r.has("attention")) {
    ObjectReader a = r.object("attention");
    s.unfused_attention = a.choice_or("kernel", {"flash", "unfused"}, "flash") == "unfused";
    s.attention_dropout = a.boolean_or("dropout", false);
    s.unfused_softmax = a.choice_or("softmax", {"fused", "unfused"}, "fused") == "unfused";
    if (s.unfused_softmax && !s.unfused_attention) {
      throw a.error("softmax", "expected \"unfused\" only with \"kernel\": \"unfused\" (a "
                               "flash-attention kernel has no separate softmax)");
    }
    // Dropout is priced as unfused attention runs it, on the s x s probabilities; a flash
    // kernel applies it inside (FlashAttention's dropout_p), which is not priced, and true was
    // accepted there with no effect on time or memory.
    if (s.attention_dropout && !s.unfused_attention) {
      throw a.error("dropout",
                    "expected true only with \"kernel\": \"unfused\" (a "
                    "flash-attention kernel applies dropout inside, which is not "
                    "priced; false for a flash kernel)");
    }
    s.gqa_repeat_kv = a.choice_or("gqa", {"native", "repeat_kv"}, "native") == "repeat_kv";
    a.finish();
  }
  if (r.has("residual")) {
    ObjectReader res = r.object("residual");
    s.unfused_bias_dropout_add =
        res.choice_or("bias_dropout_add", {"fused", "unfused"}, "fused") == "unfused";
    res.finish();
  }
  if (r.has("loss")) {
    ObjectReader l = r.object("loss");
    const std::string loss =
        l.choice_or("cross_entropy", {"fused", "unfused", "fp32_logits"}, "fused");
    s.unfused_cross_entropy = loss == "unfused";
    s.fp32_logits_cross_entropy = loss == "fp32_logits";
    l.finish();
  }
  if (r.has("norm")) {
    ObjectReader n = r.object("norm");
    s.eager_fp32_rmsnorm = n.choice_or("rmsnorm", {"fused", "eager_fp32"}, "fused") == "eager_fp32";
    n.finish();
  }
  if (r.has("rope")) {
    ObjectReader ro = r.object("rope");
    s.complex_fp32_rope =
        ro.choice_or("kernel", {"fused", "complex_fp32"}, "fused") == "complex_fp32";
    ro.finish();
  }
  if (r.has("mlp")) {
    ObjectReader ml = r.object("mlp");
    s.eager_swiglu = ml.choice_or("activation", {"fused", "eager"}, "fused") == "eager";
    ml.finish();
  }
  if (r.has("recompute")) {
    ObjectReader rc = r.object("recompute");
    const std::string policy =
        rc.choice_or("selective", {"attention", "op", "mla_up_proj"}, "attention");
    s.selective = policy == "op"            ? model::SelectiveRecompute::OpLevel
                  : policy == "mla_up_proj" ? model::SelectiveRecompute::MlaUpProj
                                            : model::SelectiveRecompute::AttentionCore;
    rc.finish();
  }
  if (r.has("data_parallel")) {
    ObjectReader dpr = r.object("data_parallel");
    s.dp_overlap = dpr.boolean_or("overlap_grad_reduce", true);
    s.dp_overlap_param_gather = dpr.boolean_or("overlap_param_gather", false);
    s.dp_buckets_first_chunk_only =
        dpr.choice_or("buckets", {"every_chunk", "first_chunk"}, "every_chunk") == "first_chunk";
    s.grads_in_reduce_dtype = dpr.choice_or("gradient_buffer", {"training_dtype", "reduce_dtype"},
                                            "training_dtype") == "reduce_dtype";
    dpr.finish();
  }
  if (r.has("moe")) {
    ObjectReader moe = r.object("moe");
    s.moe_a2a_overlap = moe.boolean_or("a2a_overlap", false);
    if (moe.has("expert_gemm_launch")) {
      s.moe_expert_launch = moe.seconds("expert_gemm_launch", true);
      if (s.moe_expert_launch.value() > 1e-3) {
        throw moe.error("expert_gemm_launch", "expected at most 1 ms per expert GEMM launch, got " +
                                                  describe_json(moe.raw("expert_gemm_launch")));
      }
    }
    moe.finish();
  }
  s.kernel_dispatch = r.seconds("kernel_dispatch", true);
  s.iteration_overhead = r.seconds("iteration_overhead", true);
  if (s.kernel_dispatch.value() > 1e-2) {
    throw r.error("kernel_dispatch", "expected at most 10 ms per kernel, got " +
                                         describe_json(r.raw("kernel_dispatch")));
  }
  if (s.iteration_overhead.value() > 3600.0) {
    throw r.error("iteration_overhead", "expected at most 1 hour per optimizer step, got " +
                                            describe_json(r.raw("iteration_overhead")));
  }
  if (r.has("fp8")) {
    ObjectReader f = r.object("fp8");
    s.fp8.activations_saved_in_fp8 = f.boolean_or("activations_saved_in_fp8", false);
    s.fp8.weight_cache_bytes_per_param = f.number_or("weight_cache_bytes_per_param", 0.0);
    if (!(s.fp8.weight_cache_bytes_per_param >= 0.0 && s.fp8.weight_cache_bytes_per_param <= 4.0)) {
      throw f.error("weight_cache_bytes_per_param",
                    "expected bytes per parameter from 0 (no FP8 weight copy) to 4, got " +
                        describe_json(f.raw("weight_cache_bytes_per_param")));
    }
    s.fp8.tp_communication_fp8 = f.choice_or("tp_communication", {"bf16", "fp8"}, "bf16") == "fp8";
    s.fp8.param_gather = f.boolean_or("param_gather", false);
    const std::string recipe =
        f.choice_or("recipe", {"delayed", "current", "mxfp8", "blockwise"}, "delayed");
    s.fp8.recipe = recipe == "current"     ? stack::Fp8Recipe::Current
                   : recipe == "mxfp8"     ? stack::Fp8Recipe::Mxfp8
                   : recipe == "blockwise" ? stack::Fp8Recipe::Blockwise
                                           : stack::Fp8Recipe::Delayed;
    f.finish();
  }
  if (r.has("memory")) {
    ObjectReader m = r.object("memory");
    const stack::MemoryReserveSpec defaults;
    s.memory.allocator_fragmentation_fraction =
        m.number_or("allocator_fragmentation_fraction", defaults.allocator_fragmentation_fraction);
    if (!(s.memory.allocator_fragmentation_fraction >= 0.0 &&
          s.memory.allocator_fragmentation_fraction < 0.5)) {
      throw m.error("allocator_fragmentation_fraction",
                    "expected a fraction from 0 to below 0.5, got " +
                        describe_json(m.raw("allocator_fragmentation_fraction")));
    }
    if (m.has("workspace")) {
      s.memory.workspace = Bytes(m.unit("workspace", UnitKind::Data, /*allow_zero=*/true));
      if (s.memory.workspace.value() > 64.0 * 1024 * 1024 * 1024) {
        throw m.error("workspace", "expected at most 64 GiB of workspace per GPU, got " +
                                       describe_json(m.raw("workspace")));
      }
    }
    s.memory.headroom_fraction = m.number_or("headroom_fraction", defaults.headroom_fraction);
    if (!(s.memory.headroom_fraction >= 0.0 && s.memory.headroom_fraction < 1.0)) {
      throw m.error("headroom_fraction", "expected a fraction of HBM from 0 to below 1, got " +
                                             describe_json(m.raw("headroom_fraction")));
    }
    m.finish();
  }
  r.finish();
  return s;
}

}  // namespace

stack::StackSpec stack_from_json(const nlohmann::json& document, const std::string& source,
                                 const std::string& pointer) {
  require_document_kind(document, DocumentKind::Stack, source, pointer);
  // An extending stack's id may be left out (docs/stacks.md), and null is how a merge patch
  // leaves a key out: it removed the inherited id, and the stack failed on a missing id.
  if (document.is_object() && document.contains("extends")) {
    const auto id = document.find("id");
    if (id != document.end() && id->is_null()) {
      nlohmann::json without = document;
      without.erase("id");
      return stack_from_json(without, source, pointer);
    }
  }
  // A misspelt "extends" ("extend") left a file of a few keys to fail on the first key it
  // lacks ('/name: missing required key'), which the stack it meant to extend would have given.
  if (document.is_object() && !document.contains("extends")) {
    for (const auto& [key, value] : document.items()) {
      if (key.rfind('_', 0) == 0 || !closest(key, {"extends"})) continue;
      throw ConfigError(source, pointer + (nlohmann::json::json_pointer() / key).to_string(),
                        "unknown key" + did_you_mean(key, {"extends"}));
    }
  }
  nlohmann::json json;
  std::vector<std::string> files;
  try {
    json = resolve_extends(document, source, pointer, 0, &files);
  } catch (const ExtendsChainTooLong& e) {
    // A file read twice on the way is a cycle, whatever the length: say so, with the loop (a
    // file extending itself, or a -> b -> a, was reported as a chain of more than 8 links).
    const auto same = [](const std::string& a, const std::string& b) {
      std::error_code ec;
      return a == b || std::filesystem::equivalent(a, b, ec);
    };
    std::vector<std::string> chain = {source};
    chain.insert(chain.end(), files.begin(), files.end());
    for (std::size_t j = 1; j < chain.size(); ++j) {
      for (std::size_t i = 0; i < j; ++i) {
        if (!same(chain[i], chain[j])) continue;
        std::string loop;
        for (std::size_t k = i; k <= j; ++k) loop += (k == i ? "" : " -> ") + chain[k];
        throw ConfigError(source, pointer + "/extends",
                          "its \"extends\" chain is a cycle (" + loop +
                              "); expected a chain that ends at a built-in stack or at a file "
                              "without \"extends\"");
      }
    }
    throw ConfigError(
        source, pointer + "/extends",
        "its \"extends\" chain has more than " + std::to_string(kMaxExtendsDepth) + " links (" +
            e.at + ", its stack " + std::to_string(kMaxExtendsDepth + 1) +
            ", extends another); expected at most " + std::to_string(kMaxExtendsDepth));
  }
  stack::StackSpec s;
  with_near_miss_note(json, source, pointer, [&](const nlohmann::json& resolved) {
    s = read_stack(resolved, source, pointer);
  });
  s.extends_files = std::move(files);
  // A stack file that extends another without an id of its own is called by its path, not by
  // the id it inherited: errors about its own values named the stack it extends.
  if (pointer.empty() && document.is_object() && document.contains("extends") &&
      !document.contains("id")) {
    s.id = source;
  }
  return s;
}

stack::StackSpec load_stack(const std::string& name_or_path) {
  if (const auto builtin = builtin_file("stacks", name_or_path)) {
    const std::string source = "stacks/" + name_or_path + ".json";
    return stack_from_json(parse_builtin_json(*builtin, source), source, "");
  }
  std::error_code ec;
  if (std::filesystem::is_directory(name_or_path, ec)) {
    throw ConfigError(name_or_path, "", "is a directory; expected a software stack JSON file");
  }
  if (names_readable_file(name_or_path)) {
    return stack_from_json(read_json_file(name_or_path), name_or_path, "");
  }
  const auto ids = builtin_stack_ids();
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
  if (names_a_file(name_or_path)) {
    throw ConfigError("no such file '" + name_or_path +
                      "'; expected a software stack JSON file (or a built-in stack: " + list + ")");
  }
  throw ConfigError("unknown software stack '" + name_or_path + "'" +
                    did_you_mean(name_or_path, ids) + "; expected a built-in stack (" + list +
                    ") or a path to a stack JSON file");
}

std::vector<std::string> builtin_stack_ids() { return builtin_ids("stacks"); }

}  // namespace trainsim::io
