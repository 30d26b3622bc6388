#include "sim/cli/scenario_flags.hpp"

#include <algorithm>
#include <map>

#include "trainsim/error.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/memory.hpp"
#include "trainsim/report/simulate.hpp"

#include "sim/io/json_reader.hpp"
#include "sim/io/sweep_writer.hpp"

namespace trainsim::cli {

void add_scenario_flags(CLI::App& c, ScenarioFlags& f) {
  c.add_option("scenario", f.file, "Scenario JSON file; flags override its keys");
  c.add_option("--hardware", f.hardware, "Hardware profile: built-in id (h100-dgx) or JSON file");
  c.add_option("--model", f.model, "Model: built-in id (llama2-7b), JSON file or HF config.json");
  c.add_option("--stack", f.stack,
               "Software stack: built-in id (pytorch-2.3-fsdp, megatron-lm, ...) or JSON file");
  c.add_option("--nodes", f.nodes, "Number of nodes");
  c.add_option("--gpus", f.gpus, "Number of GPUs (instead of --nodes)");
  c.add_option("--nodes-per-domain", f.nodes_per_domain,
               "Hosts of each NVLink domain the job fills before the next (Slurm's --segment on "
               "GB200 NVL72; default: every host of a domain)");
  c.add_option("--seq-len", f.seq_len, "Sequence length in tokens");
  c.add_option("--global-batch", f.global_batch,
               "Sequences per optimizer step (default: dp x micro-batch)");
  c.add_option("--micro-batch", f.micro_batch, "Sequences per micro-batch per GPU");
  c.add_option("--precision", f.precision, "bf16 | fp16 | fp32 | fp8");
  c.add_option("--optimizer", f.optimizer,
               "adamw | sgd: optimizer state per parameter (default adamw)");
  c.add_option("--tp", f.tp, "Tensor parallel degree");
  c.add_option("--pp", f.pp, "Pipeline parallel degree");
  c.add_option("--cp", f.cp, "Context parallel degree");
  c.add_option("--ep", f.ep,
               "Expert parallel degree of MoE layers, carved out of the data-parallel ranks");
  f.sequence_parallel_flag = c.add_flag("--sequence-parallel", f.sequence_parallel,
                                        "Megatron sequence parallelism (=false turns it off)");
  c.add_option("--schedule", f.schedule, "Pipeline schedule: gpipe | 1f1b | interleaved");
  c.add_option("--virtual-stages", f.virtual_stages, "Model chunks per pipeline rank");
  f.account_for_embedding_flag = c.add_flag(
      "--account-for-embedding-in-pipeline-split", f.account_for_embedding,
      "Megatron-Core's split: the embedding takes a layer's slot in the first model chunk");
  f.account_for_loss_flag =
      c.add_flag("--account-for-loss-in-pipeline-split", f.account_for_loss,
                 "Megatron-Core's split: the loss takes a layer's slot in the last model chunk");
  c.add_option("--pipeline-layout", f.pipeline_layout,
               "Transformer layers of each model chunk in model order, comma-separated "
               "(Megatron-Core's pipeline_model_parallel_layout), e.g. 7,9,9,7");
  c.add_option("--sharding", f.sharding,
               "none | zero1 | shard_grad_op | full_shard | hybrid_shard");
  c.add_option("--shard-group", f.shard_group, "Ranks per shard group for hybrid_shard");
  c.add_option("--recompute", f.recompute, "Activation recomputation: none | selective | full");
  c.add_option("--recompute-layers", f.recompute_layers,
               "With --recompute full: layers recomputed per model chunk, the first ones "
               "(default all)");
  add_memory_headroom_flag(c, f.memory_headroom);
}

void add_memory_headroom_flag(CLI::App& c, std::optional<double>& headroom) {
  c.add_option("--memory-headroom", headroom,
               "Fraction of HBM kept free beside the CUDA context, NCCL buffers, workspace and "
               "fragmentation, from 0 to what those leave of the HBM (0.9898 of an 80 GiB H100; "
               "default: the stack's memory.headroom_fraction)");
}

void apply_memory_headroom(const std::optional<double>& headroom, parallel::Scenario& s) {
  if (!headroom) return;
  if (!(*headroom >= 0.0 && *headroom < 1.0)) {
    throw ConfigError(
        "command line (--memory-headroom)", "",
        "expected a fraction of HBM from 0 to below 1, got " + io::format_number(*headroom));
  }
  const double before = s.stack.memory.headroom_fraction;
  s.stack.memory.headroom_fraction = *headroom + 0.0;  // "-0" is 0, in search's digest too
  // A workspace that leaves nothing of the HBM fails at any headroom, 0 included: the plan's
  // check names it and the stack as given (exit 3), where the flag was blamed (exit 2) and,
  // once lowered, the workspace came up next.
  if (!parallel::workspace_problem(s).empty()) return;
  if (const std::string problem = parallel::headroom_problem(s); !problem.empty()) {
    throw ConfigError("command line (--memory-headroom)", "", problem);
  }
  // The report's scenario runs again as it is (README): a headroom other than the stack's is
  // echoed as an inline stack extending it. The report named the stack alone, and its scenario,
  // run again, had the stack's own headroom (0.1 -> 0: 72.6 GB usable -> 80.8 GB).
  // The stack as the scenario wrote it (a path resolves beside the file that names it, as the
  // echoed name does). A named stack keeps its name, which the inline object carries as its id
  // (the loader names an inline object by its id), so that the report's context and table
  // still name the stack that ran ("megatron-core (inline)", "mc.json (inline)", not "inline")
  // and the scenario's run reports what this one does.
  if (s.stack.memory.headroom_fraction == before) return;
  const bool named = s.stack_inline.empty();
  nlohmann::json stack =
      named ? nlohmann::json{{"extends", s.stack_name}} : nlohmann::json::parse(s.stack_inline);
  if (named) stack["id"] = s.stack_name;
  stack["memory"]["headroom_fraction"] = s.stack.memory.headroom_fraction;
  s.stack_inline = stack.dump();
  s.stack_path.clear();
}

io::ScenarioDocument scenario_document(const ScenarioFlags& f) {
  // As in a scenario file ("both nodes and gpus given") and in `search`: one of them sets the
  // cluster size, and silently preferring either would simulate a cluster nobody asked for.
  if (f.gpus && f.nodes) {
    throw ConfigError("command line (--gpus, --nodes)", "",
                      "both --gpus and --nodes given; expected one of them");
  }
  io::ScenarioDocument doc;
  if (!f.file.empty()) doc = io::read_scenario_file(f.file);
  doc.use = f.use;
  auto set = [&doc](const char* path, const auto& value, const char* flag) {
    if (value) io::set_path(doc, path, *value, std::string("command line (") + flag + ")");
  };
  set("hardware", f.hardware, "--hardware");
  set("model", f.model, "--model");
  set("stack", f.stack, "--stack");
  set("cluster.nodes", f.nodes, "--nodes");
  set("cluster.gpus", f.gpus, "--gpus");
  set("cluster.nodes_per_domain", f.nodes_per_domain, "--nodes-per-domain");
  set("training.seq_len", f.seq_len, "--seq-len");
  set("training.global_batch", f.global_batch, "--global-batch");
  set("training.micro_batch", f.micro_batch, "--micro-batch");
  set("training.precision", f.precision, "--precision");
  set("training.optimizer", f.optimizer, "--optimizer");
  set("parallel.tp", f.tp, "--tp");
  set("parallel.pp", f.pp, "--pp");
  set("parallel.cp", f.cp, "--cp");
  set("parallel.ep", f.ep, "--ep");
  // A boolean flag sets its key when given, to its value (bare: true; =false: false).
  const auto set_flag = [&doc](const char* path, bool value, const CLI::Option* flag,
                               const std::string& name) {
    const bool given = flag != nullptr ? flag->count() > 0 : value;
    if (given) io::set_path(doc, path, value, "command line (" + name + ")");
  };
  set_flag("parallel.sequence_parallel", f.sequence_parallel, f.sequence_parallel_flag,
           "--sequence-parallel");
  set("parallel.pipeline_schedule", f.schedule, "--schedule");
  set("parallel.virtual_stages", f.virtual_stages, "--virtual-stages");
  set_flag("parallel.account_for_embedding_in_pipeline_split", f.account_for_embedding,
           f.account_for_embedding_flag, "--account-for-embedding-in-pipeline-split");
  if (f.pipeline_layout) {
    // "7,9,9,7" -> [7, 9, 9, 7]; the scenario loader checks each entry's range.
    const std::string origin = "command line (--pipeline-layout)";
    const auto layout = io::parse_layer_counts(*f.pipeline_layout);
    if (!layout) {
      throw ConfigError(
          origin, "",
          "expected comma-separated layer counts like 7,9,9,7, got '" + *f.pipeline_layout + "'");
    }
    io::set_path(doc, "parallel.pipeline_layout", *layout, origin);
  }
  set_flag("parallel.account_for_loss_in_pipeline_split", f.account_for_loss,
           f.account_for_loss_flag, "--account-for-loss-in-pipeline-split");
  set("parallel.sharding", f.sharding, "--sharding");
  set("parallel.shard_group", f.shard_group, "--shard-group");
  set("parallel.recompute", f.recompute, "--recompute");
  set("parallel.recompute_layers", f.recompute_layers, "--recompute-layers");
  return doc;
}

parallel::Scenario load_scenario(const ScenarioFlags& f) {
  const io::ScenarioDocument doc = scenario_document(f);
  try {
    parallel::Scenario s = io::scenario_from_document(doc);
    // A sweep may set shard_group beside a sharding axis (it applies to the hybrid_shard rows);
    // one scenario with shard_group and another sharding would silently ignore it.
    const auto par = doc.json.find("parallel");
    if (s.parallel.sharding != parallel::Sharding::HybridShard && par != doc.json.end() &&
        par->is_object() && par->contains("shard_group")) {
      const auto origin = doc.overridden.find("/parallel/shard_group");
      throw ConfigError(origin == doc.overridden.end() ? doc.source : origin->second,
                        "/parallel/shard_group",
                        std::string("shard_group applies only with sharding \"hybrid_shard\", "
                                    "and the sharding is \"") +
                            parallel::to_string(s.parallel.sharding) +
                            "\"; expected sharding \"hybrid_shard\" (--sharding hybrid_shard) "
                            "or no shard_group");
    }
    apply_memory_headroom(f.memory_headroom, s);
    return s;
  } catch (const ConfigError& e) {
    // The flag that would have set a missing key, for users who write no scenario file.
    static const std::map<std::string, std::string> kFlags = {{"/hardware", "--hardware"},
                                                              {"/model", "--model"},
                                                              {"/cluster", "--gpus or --nodes"},
                                                              {"/training", "--seq-len"},
                                                              {"/training/seq_len", "--seq-len"}};
    const auto flag = kFlags.find(e.pointer());
    const std::string missing = "missing required key";
    if (e.problem().rfind(missing, 0) != 0 || flag == kFlags.end()) throw;
    // Keep what the scenario loader added before its "; expected" (a near miss it found).
    const std::string& problem = e.problem();
    const std::size_t end = std::min(problem.find("; expected"), problem.size());
    const std::string note = problem.substr(missing.size(), end - missing.size());
    throw ConfigError(e.source(), e.pointer(),
                      missing + note + "; expected " + flag->second +
                          (f.file.empty() ? "" : " or the key in the scenario file"));
  }
}

void require_valid_plan(const ScenarioFlags& f, const parallel::Scenario& s) {
  const auto problems = parallel::validate(s);
  if (problems.empty()) return;
  const parallel::Problem& p = problems.front();
  throw PlanError(problem_origin(f, p) + ": " + p.key + ": " + p.message);
}

void require_countable_memory(const ScenarioFlags& f, const parallel::Scenario& s) {
  const std::string excess = report::memory_excess(report::memory_peak(s), s.parallel.pp);
  if (excess.empty()) return;
  // Everything the activations' bytes depend on: the stack too (megatron-lm's unfused attention
  // keeps the s x s scores, where a fused kernel keeps none) and the recomputation; a command
  // line of --stack megatron-lm was not named.
  const parallel::Problem p{
      .key = report::kMemoryExcessKey,
      .message = excess,
      .also = {"/training/seq_len", "/training/global_batch", "/parallel/pipeline_schedule",
               "/parallel/virtual_stages", "/parallel/recompute", "/parallel/sequence_parallel",
               "/parallel/tp", "/parallel/pp", "/parallel/cp", "/parallel/sharding", "/cluster",
               "/model", "/stack"}};
  throw PlanError(problem_origin(f, p) + ": " + p.key + ": " + p.message);
}

void require_simulable_plan(const ScenarioFlags& f, const parallel::Scenario& s) {
  require_valid_plan(f, s);
  require_countable_memory(f, s);
  const std::string excess = report::gpipe_excess(s);
  if (excess.empty()) return;
  const parallel::Problem p{.key = report::kGpipeExcessKey,
                            .message = excess,
                            .also = {"/training/global_batch", "/training/micro_batch"}};
  throw PlanError(problem_origin(f, p) + ": " + p.key + ": " + p.message);
}

namespace {

// The flags that set the problem's key or one its check read, a key under one or the object
// above one, as "--pp, --tp" (set_path's origins read "command line (--tp)"); empty where none
// did. `doc` is the flags' document.
std::string flags_setting(const io::ScenarioDocument& doc, const parallel::Problem& problem) {
  const auto related_to = [](const std::string& pointer, const std::string& key) {
    return pointer.rfind(key + "/", 0) == 0 || pointer == key || key.rfind(pointer + "/", 0) == 0;
  };
  // A problem about an object (/parallel) whose check read only some of its keys lists them in
  // `also`: those name the flags, not every key of the object (--recompute and --sharding were
  // named for tp x pp x cp exceeding the GPUs).
  const bool narrowed =
      std::any_of(problem.also.begin(), problem.also.end(),
                  [&](const std::string& key) { return key.rfind(problem.key + "/", 0) == 0; });
  std::string flags;
  for (const auto& [pointer, origin] : doc.overridden) {
    const bool related =
        (!narrowed && related_to(pointer, problem.key)) ||
        std::any_of(problem.also.begin(), problem.also.end(),
                    [&](const std::string& key) { return related_to(pointer, key); });
    if (!related) continue;
    constexpr std::string_view kPrefix = "command line (";
    const bool flag = origin.rfind(kPrefix, 0) == 0 && origin.back() == ')';
    const std::string name =
        flag ? origin.substr(kPrefix.size(), origin.size() - kPrefix.size() - 1) : origin;
    flags += (flags.empty() ? "" : ", ") + name;
  }
  return flags;
}

}  // namespace

std::string problem_flags(const ScenarioFlags& f, const parallel::Problem& problem) {
  const std::string flags = flags_setting(scenario_document(f), problem);
  return flags.empty() ? flags : "command line (" + flags + ")";
}

std::string problem_origin(const ScenarioFlags& f, const parallel::Problem& problem) {
  // The file, then the flags that set the problem's keys.
  const io::ScenarioDocument doc = scenario_document(f);
  const std::string flags = flags_setting(doc, problem);
  // The file's name escaped as a ConfigError's is (main.cpp): the error line joins lines with
  // "; ", and a name holding a newline named a file that does not exist.
  std::string where = f.file.empty() ? "" : io::escape_control(doc.source);
  if (!flags.empty()) where += (where.empty() ? "" : ", ") + ("command line (" + flags + ")");
  if (where.empty()) where = io::escape_control(doc.source);
  return where;
}

void require_bounded_full_simulation(const parallel::Scenario& scenario, const std::string& flag) {
  const std::string excess = report::full_simulation_excess(scenario);
  if (excess.empty()) return;
  throw ConfigError("command line (" + flag + ")", "",
                    excess + " (fewer micro-batches" +
                        (flag == "compare" ? "; compare needs every op of the iteration)"
                                           : ", or no " + flag +
                                                 ": the report alone extrapolates the steady "
                                                 "state)"));
}

void note_straddling(const parallel::Scenario& scenario, std::ostream& out) {
  const parallel::StraddleAdvice advice = parallel::straddling(scenario);
  const auto domains = [](std::int64_t n) {
    return std::to_string(n) + (n == 1 ? " NVLink domain" : " NVLink domains");
  };
  for (const parallel::Straddle& k : advice.kinds) {
    out << "note: some " << k.kind << " groups span " << domains(k.worst.domains) << " ("
        << k.worst.ranks << " ranks, " << k.worst.min_ranks_per_domain
        << " in one), where rank 0's spans " << k.domains
        << ": the job's hosts in each domain do not fall on the groups' boundaries";
    if (advice.nodes_per_domain > 0) {
      out << "; --nodes-per-domain " << advice.nodes_per_domain << " avoids it";
    }
    out << " (docs/placement.md)\n";
  }
}

void warn_unfit(const report::MemoryBreakdown& memory, std::int64_t pp, std::ostream& out) {
  if (memory.fits) return;
  // With a pipeline, the stage that needs most, as --require-fit's error names it.
  out << "warning: the plan does not fit in memory (" << to_string(memory.total) << " of "
      << to_string(memory.usable) << " usable per GPU"
      << (pp > 1 ? " on stage " + std::to_string(memory.stage) : std::string()) << ")\n";
}

}  // namespace trainsim::cli
