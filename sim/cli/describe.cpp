// `trainsim describe`: the scenario's model math without simulating: parameter counts (total
// and active for a mixture-of-experts model), model FLOPs per token and the per-GPU memory
// breakdown, as a table or as JSON.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/model/counts.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/memory.hpp"

#include "sim/cli/commands.hpp"
#include "sim/cli/scenario_flags.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/report_writer.hpp"

namespace trainsim::cli {
namespace {

struct DescribeOptions {
  ScenarioFlags scenario;
  std::string format = "table";
};

nlohmann::json group_json(const parallel::GroupShape& g) {
  return {{"ranks", g.ranks},
          {"nodes", g.nodes},
          {"ranks_per_node", g.ranks_per_node},
          {"domains", g.domains},
          {"ranks_per_domain", g.ranks_per_domain},
          {"min_ranks_per_domain", g.min_ranks_per_domain}};
}

// The worst DP and TP groups (docs/placement.md): their ranks, hosts and, where an NVLink
// domain spans hosts, the domains they reach, with the fewest and most ranks in one where
// those differ.
std::string placement_line(const parallel::Scenario& s, const parallel::Placement& pl) {
  const bool domains = s.hardware.node.hosts_per_domain() > 1;
  const auto where = [&](const parallel::GroupShape& g) {
    std::string out = counted(g.ranks, "rank") + " on " + counted(g.nodes, "node");
    if (!domains) return out;
    out += " in " + counted(g.domains, "NVLink domain");
    if (g.min_ranks_per_domain < g.ranks_per_domain) {
      out += " (" + std::to_string(g.min_ranks_per_domain) + " to " +
             std::to_string(g.ranks_per_domain) + " ranks each)";
    }
    return out;
  };
  // Where a domain is one host, its fewest ranks are the fewest on one host.
  const std::string fewest = !domains && pl.dp.min_ranks_per_domain > 0 &&
                                     pl.dp.min_ranks_per_domain < pl.dp.ranks_per_node
                                 ? std::to_string(pl.dp.min_ranks_per_domain) + " to "
                                 : std::string();
  std::string line = "dp group: " + where(pl.dp) + ", " + fewest +
                     std::to_string(pl.dp.ranks_per_node) + " per node; tp group: " + where(pl.tp);
  // The CP group where there is one: the line left it out, while the notes on groups that
  // straddle NVLink domains named it.
  if (s.parallel.cp > 1) line += "; cp group: " + where(pl.cp);
  if (model::is_moe(s.model)) {
    line += "; ep group: " + where(pl.ep) + "; expert_dp group: " + where(pl.expert_shard);
  }
  return line;
}

// The job's groups in describe's JSON; a mixture-of-experts model adds its expert-parallel group
// and the expert-data-parallel group that shares its experts' state (parallel::Placement).
nlohmann::json placement_json(const parallel::Scenario& s, const parallel::Placement& pl) {
  nlohmann::json out = {{"tp", group_json(pl.tp)},
                        {"cp", group_json(pl.cp)},
                        {"dp", group_json(pl.dp)},
                        {"pp", group_json(pl.pp)}};
  if (model::is_moe(s.model)) {
    out["ep"] = group_json(pl.ep);
    out["expert_dp"] = group_json(pl.expert_shard);
  }
  return out;
}

// With pipeline parallelism, the stages whose groups lie otherwise than the job's worst (the
// placement line): a stage's collectives run among its own ranks, so each stage is priced on its
// own groups (parallel::place(scenario, stage); docs/placement.md). One line per distinct
// placement, naming its stages; empty when every stage's groups match the job's line.
std::string stage_placement_lines(const parallel::Scenario& s, const parallel::Placement& pl) {
  if (s.parallel.pp <= 1) return "";
  const std::string job = placement_line(s, pl);
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> lines;
  bool differs = false;
  for (std::int64_t stage = 0; stage < s.parallel.pp; ++stage) {
    const std::string line = placement_line(s, parallel::place(s, stage));
    differs = differs || line != job;
    const auto it = std::find_if(lines.begin(), lines.end(),
                                 [&line](const auto& entry) { return entry.first == line; });
    if (it != lines.end()) {
      it->second.push_back(stage);
    } else {
      lines.push_back({line, {stage}});
    }
  }
  if (!differs) return "";
  std::string out;
  for (const auto& [line, stages] : lines) {
    std::string names;
    for (std::size_t i = 0; i < stages.size(); ++i) {
      names += (i == 0 ? "" : i + 1 == stages.size() ? " and " : ", ") + std::to_string(stages[i]);
    }
    // Under the placement line's value.
    out += "             " + std::string(stages.size() > 1 ? "stages " : "stage ") + names + ": " +
           line + "\n";
  }
  return out;
}

// Each stage's groups in describe's JSON (pp > 1): the kinds inside a stage, as the text's stage
// lines name them (a mixture-of-experts model's ep and expert_dp groups too).
nlohmann::json stage_placement_json(const parallel::Scenario& s) {
  nlohmann::json stages = nlohmann::json::array();
  for (std::int64_t stage = 0; stage < s.parallel.pp; ++stage) {
    // The job's kinds but the pipeline's, which spans the stages.
    nlohmann::json entry = placement_json(s, parallel::place(s, stage));
    entry.erase("pp");
    entry["stage"] = stage;
    stages.push_back(std::move(entry));
  }
  return stages;
}

// Layer indices as ranges: "0, 2, 4" or "28-47"; a regular stride of three or more layers as
// "0, 2, ..., 34".
std::string layer_list(const std::vector<std::int32_t>& layers) {
  const std::size_t n = layers.size();
  if (n >= 3) {
    const std::int32_t step = layers[1] - layers[0];
    bool regular = true;
    for (std::size_t i = 2; i < n && regular; ++i) regular = layers[i] - layers[i - 1] == step;
    if (regular && step == 1) {
      return std::to_string(layers.front()) + "-" + std::to_string(layers.back());
    }
    if (regular && n > 3) {
      return std::to_string(layers[0]) + ", " + std::to_string(layers[1]) + ", ..., " +
             std::to_string(layers.back());
    }
  }
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += (i == 0 ? "" : ", ") + std::to_string(layers[i]);
  return out;
}

// The optional lines about the model's attention and biases: a sliding window, bias groups,
// latent attention. Empty when the model has none of them.
std::string attention_lines(const model::ModelSpec& m) {
  std::string out;
  if (model::has_mla(m)) {
    out += "attention    multi-head latent: q_lora_rank " + std::to_string(m.q_lora_rank) +
           ", kv_lora_rank " + std::to_string(m.kv_lora_rank) + ", query/key heads of " +
           std::to_string(m.qk_nope_head_dim) + " + " + std::to_string(m.qk_rope_head_dim) +
           " (rotary), value heads of " + std::to_string(m.v_head_dim) + "\n";
  }
  // Multi-token-prediction modules attend in full beside a window on listed layers, and within
  // a window on every layer (ModelSpec::window_layers).
  const std::string mtp =
      m.mtp_layers > 0 ? counted(m.mtp_layers, "multi-token-prediction module") : "";
  if (model::mixed_attention_window(m)) {
    const bool every = static_cast<std::int64_t>(m.window_layers.size()) == m.num_layers;
    out += "attention    sliding window of " + std::to_string(m.attention_window) + " tokens on " +
           (every ? std::string("every layer")
                  : std::to_string(m.window_layers.size()) + " of " + std::to_string(m.num_layers) +
                        " layers (" + layer_list(m.window_layers) + ")") +
           (every         ? ", full attention in the " + mtp
            : mtp.empty() ? std::string(", full attention on the others")
                          : ", full attention on the others and in the " + mtp) +
           "\n";
  } else if (m.attention_window > 0) {
    out += "attention    sliding window of " + std::to_string(m.attention_window) +
           " tokens on every layer" + (mtp.empty() ? "" : " and in the " + mtp) + "\n";
  }
  std::string biases;
  const auto add = [&biases](bool on, const char* group) {
    if (on) biases += (biases.empty() ? "" : ", ") + std::string(group);
  };
  add(m.qkv_bias, "Q, K, V");
  add(m.out_proj_bias, "attention output");
  add(m.mlp_bias, "MLP");
  if (!biases.empty()) out += "biases       " + biases + "\n";
  if (m.mtp_layers > 0) {
    out += "mtp          " + counted(m.mtp_layers, "multi-token-prediction module") +
           " on the last pipeline stage: " +
           std::to_string(model::mtp_parameters(m, model::Experts::All)) +
           " parameters, one more LM-head pass each\n";
  }
  return out;
}

// The experts line of an MoE model.
// The "experts" object of describe's JSON for a mixture-of-experts model.
nlohmann::json experts_json(const model::ModelSpec& m) {
  return {{"routed", m.num_experts},
          {"per_token", m.num_experts_per_token},
          {"expert_ffn_hidden", m.expert_ffn_hidden},
          {"shared", m.num_shared_experts},
          {"shared_expert_ffn_hidden", m.shared_expert_ffn_hidden},
          {"dense_layers", m.num_dense_layers},
          {"load_imbalance", m.expert_load_imbalance}};
}

// The "attention_window" object of describe's JSON, only for a model with a sliding window: its
// tokens and the layers that use it (every layer's index without ModelSpec::window_layers).
void add_window_json(const model::ModelSpec& m, nlohmann::json& out) {
  if (m.attention_window == 0) return;
  nlohmann::json layers = nlohmann::json::array();
  for (std::int64_t l = 0; l < m.num_layers; ++l) {
    if (model::layer_windowed(m, l)) layers.push_back(l);
  }
  out["attention_window"] = {{"tokens", m.attention_window}, {"layers", std::move(layers)}};
  if (m.mtp_layers > 0) out["attention_window"]["mtp_windowed"] = m.window_layers.empty();
}

// The "mtp" object of describe's JSON, only for a model with multi-token-prediction modules.
void add_mtp_json(const model::ModelSpec& m, nlohmann::json& out) {
  if (m.mtp_layers == 0) return;
  out["mtp"] = {{"layers", m.mtp_layers},
                {"parameters", model::mtp_parameters(m, model::Experts::All)}};
}

std::string experts_line(const model::ModelSpec& m) {
  std::string out = "experts      " + std::to_string(m.num_experts) + " routed of width " +
                    std::to_string(m.expert_ffn_hidden) + ", " +
                    std::to_string(m.num_experts_per_token) + " per token";
  if (m.num_shared_experts > 0) {
    out += "; " + std::to_string(m.num_shared_experts) + " shared of width " +
           std::to_string(m.shared_expert_ffn_hidden);
  }
  if (m.num_dense_layers > 0) {
    out += "; first " + counted(m.num_dense_layers, "layer") + " dense";
  }
  char imbalance[32];
  (void)std::snprintf(imbalance, sizeof imbalance, "%g", m.expert_load_imbalance);
  return out + "; load imbalance " + imbalance + "\n";
}

// A model the simulator cannot run yet (model::simulation_gap; none today): its counts, FLOPs
// and placement, and no memory.
int describe_unsimulated(const DescribeOptions& o, const parallel::Scenario& s,
                         const std::string& gap, const parallel::Placement& pl) {
  const model::ModelSpec& m = s.model;
  const auto params = model::num_parameters(m);
  const auto active = model::num_active_parameters(m);
  const auto matmul = model::matmul_parameters(m);
  const Flops per_token = model::model_flops_per_token(m, s.training.seq_len);
  const std::string memory_note = "not computed: " + gap + " is not simulated yet";
  if (o.format == "json") {
    nlohmann::json out = {{"context", io::scenario_context(s)},
                          {"scenario", io::scenario_to_json(s)},
                          {"parameters", params},
                          {"active_parameters", active},
                          {"matmul_parameters", matmul},
                          {"model_flops_per_token", per_token.value()},
                          {"memory_note", memory_note},
                          {"placement", placement_json(s, pl)}};
    if (s.parallel.pp > 1) out["placement"]["stages"] = stage_placement_json(s);
    if (model::is_moe(m)) {
      out["experts"] = experts_json(m);
    }
    add_window_json(m, out);
    add_mtp_json(m, out);
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  std::cout << "model        " << io::shown_name(s.model_name, s.model_inline) << ": "
            << m.num_layers << " layers, hidden " << m.hidden << ", " << m.num_heads << " heads ("
            << m.num_kv_heads << " kv), ffn " << m.ffn_hidden << ", vocab " << m.vocab << "\n"
            << attention_lines(m) << (model::is_moe(m) ? experts_line(m) : "") << "parameters   "
            << params << " total, " << active << " active per token (N = " << matmul
            << ": the active parameters a token is multiplied by, the LM head in, the input "
               "embedding's lookup out)\n"
            << "model FLOPs  " << std::llround(per_token.value()) << " per token ("
            << to_string(per_token) << ", 6N + attention)\n"
            << "cluster      " << s.gpus << (s.gpus == 1 ? " GPU of " : " GPUs of ")
            << io::shown_name(s.hardware_name, s.hardware_inline) << ", dp " << s.parallel.dp
            << ", tp " << s.parallel.tp << ", pp " << s.parallel.pp << ", cp " << s.parallel.cp
            << ", sharding " << parallel::to_string(s.parallel.sharding) << "\n"
            << "placement    " << placement_line(s, pl) << "\n"
            << stage_placement_lines(s, pl) << "\n"
            << "memory per GPU: " << memory_note << "\n";
  return 0;
}

int describe(const DescribeOptions& o) {
  const parallel::Scenario s = load_scenario(o.scenario);
  require_valid_plan(o.scenario, s);
  const model::ModelSpec& m = s.model;
  const auto params = model::num_parameters(m);
  const auto matmul = model::matmul_parameters(m);
  const Flops per_token = model::model_flops_per_token(m, s.training.seq_len);
  const parallel::Placement pl = parallel::place(s);
  note_straddling(s, std::cerr);
  const std::string gap = model::simulation_gap(m);
  if (!gap.empty()) return describe_unsimulated(o, s, gap, pl);
  require_countable_memory(o.scenario, s);
  const report::MemoryBreakdown mem = report::memory_peak(s);
  if (o.format == "json") {
    nlohmann::json out = {{"context", io::scenario_context(s)},
                          {"scenario", io::scenario_to_json(s)},
                          {"parameters", params},
                          {"matmul_parameters", matmul},
                          {"model_flops_per_token", per_token.value()},
                          {"memory", io::memory_to_json(mem)},
                          {"memory_stage", mem.stage},
                          {"placement", placement_json(s, pl)}};
    if (s.parallel.pp > 1) out["placement"]["stages"] = stage_placement_json(s);
    if (model::is_moe(m)) {
      out["active_parameters"] = model::num_active_parameters(m);
      out["experts"] = experts_json(m);
      out["experts"]["ep"] = s.parallel.ep;
    }
    add_window_json(m, out);
    add_mtp_json(m, out);
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  std::cout << "model        " << io::shown_name(s.model_name, s.model_inline) << ": "
            << m.num_layers << " layers, hidden " << m.hidden << ", " << m.num_heads << " heads ("
            << m.num_kv_heads << " kv), ffn " << m.ffn_hidden << ", vocab " << m.vocab << "\n"
            << attention_lines(m) << (model::is_moe(m) ? experts_line(m) : "") << "parameters   "
            << params
            << (model::is_moe(m) ? " total, " + std::to_string(model::num_active_parameters(m)) +
                                       " active per token"
                                 : std::string())
            << " (N = " << matmul
            << ": the parameters a token is multiplied by, the LM head in, the input embedding's "
               "lookup out)\n"
            << "model FLOPs  " << std::llround(per_token.value()) << " per token ("
            << to_string(per_token) << ", 6N + attention)\n"
            << "cluster      " << s.gpus << (s.gpus == 1 ? " GPU of " : " GPUs of ")
            << io::shown_name(s.hardware_name, s.hardware_inline) << ", dp " << s.parallel.dp
            << ", tp " << s.parallel.tp << ", pp " << s.parallel.pp << ", cp " << s.parallel.cp
            << (model::is_moe(m) ? ", ep " + std::to_string(s.parallel.ep) : std::string())
            << ", sharding " << parallel::to_string(s.parallel.sharding) << "\n"
            << "placement    " << placement_line(s, pl) << "\n"
            << stage_placement_lines(s, pl) << "\n"
            << "memory per GPU (stage " << mem.stage << ")\n"
            << "  parameters   " << to_string(mem.parameters) << "\n"
            << "  gradients    " << to_string(mem.gradients) << "\n"
            << "  optimizer    " << to_string(mem.optimizer) << "\n"
            << "  activations  " << to_string(mem.activations) << "\n"
            << "  buffers      " << to_string(mem.buffers)
            << "\n"
            // Against the usable memory, as run's report: HBM less the reserve.
            << "  reserved     " << to_string(mem.reserved) << " (headroom "
            << fixed_text(100.0 * mem.headroom_fraction, 1) << " %)\n"
            << "  total        " << to_string(mem.total) << " of " << to_string(mem.usable)
            << " usable (" << to_string(mem.capacity) << " HBM)"
            << (mem.fits ? " (fits)" : " (DOES NOT FIT)") << "\n";
  return 0;
}

}  // namespace

void register_describe(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DescribeOptions>();
  CLI::App* c = app.add_subcommand(
      "describe", "Parameter count, model FLOPs per token and per-GPU memory of a scenario");
  add_scenario_flags(*c, options->scenario);
  options->scenario.use = io::ScenarioUse::Describe;
  c->add_option("--format", options->format, "table | json")
      ->check(CLI::IsMember({"table", "json"}));
  c->callback([options, &exit_code]() { exit_code = describe(*options); });
}

}  // namespace trainsim::cli
