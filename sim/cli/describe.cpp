// `trainsim describe`: the scenario's model math without simulating: parameter counts, model
// FLOPs per token and the per-GPU memory breakdown, as a table or as JSON.
#include <iostream>

#include <nlohmann/json.hpp>

#include "sim/cli/commands.hpp"
#include "sim/cli/scenario_flags.hpp"
#include "sim/io/report_writer.hpp"
#include "trainsim/model/counts.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/memory.hpp"

namespace trainsim::cli {
namespace {

// "1 node", "4 nodes".
std::string counted(std::int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

struct DescribeOptions {
  ScenarioFlags scenario;
  std::string format = "table";
};

nlohmann::json group_json(const parallel::GroupShape& g) {
  return {{"ranks", g.ranks}, {"nodes", g.nodes}, {"ranks_per_node", g.ranks_per_node}};
}

int describe(const DescribeOptions& o) {
  const parallel::Scenario s = load_scenario(o.scenario);
  parallel::require_valid(s);
  const model::ModelSpec& m = s.model;
  const auto params = model::num_parameters(m);
  const auto matmul = model::matmul_parameters(m);
  const Flops per_token = model::model_flops_per_token(m, s.training.seq_len);
  const report::MemoryBreakdown mem = report::memory_peak(s);
  const parallel::Placement pl = parallel::place(s);
  if (o.format == "json") {
    nlohmann::json out = {{"context", io::report_context()},
                          {"scenario", io::scenario_to_json(s)},
                          {"parameters", params},
                          {"matmul_parameters", matmul},
                          {"model_flops_per_token", per_token.value()},
                          {"memory", io::memory_to_json(mem)},
                          {"memory_stage", mem.stage},
                          {"placement",
                           {{"tp", group_json(pl.tp)},
                            {"cp", group_json(pl.cp)},
                            {"dp", group_json(pl.dp)},
                            {"pp", group_json(pl.pp)}}}};
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  std::cout << "model        " << s.model_name << ": " << m.num_layers << " layers, hidden "
            << m.hidden << ", " << m.num_heads << " heads (" << m.num_kv_heads << " kv), ffn "
            << m.ffn_hidden << ", vocab " << m.vocab << "\n"
            << "parameters   " << params << " (" << matmul << " in matmuls)\n"
            << "model FLOPs  " << static_cast<long long>(per_token.value()) << " per token ("
            << to_string(per_token) << ", 6N + 12 L h s)\n"
            << "cluster      " << s.gpus << " GPUs of " << s.hardware_name << ", dp " << s.parallel.dp
            << ", tp " << s.parallel.tp << ", pp " << s.parallel.pp << ", cp " << s.parallel.cp
            << ", sharding " << parallel::to_string(s.parallel.sharding) << "\n"
            << "placement    dp group: " << counted(pl.dp.ranks, "rank") << " on "
            << counted(pl.dp.nodes, "node") << ", " << pl.dp.ranks_per_node
            << " per node; tp group: " << counted(pl.tp.ranks, "rank") << " on "
            << counted(pl.tp.nodes, "node") << "\n\n"
            << "memory per GPU (stage " << mem.stage << ")\n"
            << "  parameters   " << to_string(mem.parameters) << "\n"
            << "  gradients    " << to_string(mem.gradients) << "\n"
            << "  optimizer    " << to_string(mem.optimizer) << "\n"
            << "  activations  " << to_string(mem.activations) << "\n"
            << "  buffers      " << to_string(mem.buffers) << "\n"
            << "  total        " << to_string(mem.total) << " of " << to_string(mem.capacity)
            << (mem.fits ? " (fits)" : " (DOES NOT FIT)") << "\n";
  return 0;
}

}  // namespace

void register_describe(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DescribeOptions>();
  CLI::App* c = app.add_subcommand(
      "describe", "Parameter count, model FLOPs per token and per-GPU memory of a scenario");
  add_scenario_flags(*c, options->scenario);
  c->add_option("--format", options->format, "table | json")
      ->check(CLI::IsMember({"table", "json"}));
  c->callback([options, &exit_code]() { exit_code = describe(*options); });
}

}  // namespace trainsim::cli
