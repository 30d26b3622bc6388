// `trainsim run`: simulate one iteration of a scenario and print the report (table or JSON),
// optionally writing a Perfetto/Chrome trace of the timeline.
#include <iostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"
#include "trainsim/report/simulate.hpp"

#include "sim/cli/commands.hpp"
#include "sim/cli/scenario_flags.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/io/report_writer.hpp"
#include "sim/io/trace_writer.hpp"

namespace trainsim::cli {
namespace {

struct RunOptions {
  ScenarioFlags scenario;
  std::string format = "table";
  std::string trace;
  bool require_fit = false;
  bool full_simulation = false;
};

// What the usable memory is left of: HBM less each reserve term (report/memory.hpp), the
// headroom naming where its fraction came from, so that a plan refused for a reserve the user
// set says which setting to change.
std::string reserve_terms(const report::MemoryBreakdown& m, const parallel::Scenario& s,
                          bool headroom_from_flag) {
  std::ostringstream fraction;
  fraction << m.headroom_fraction;
  return "reserved " + to_string(m.reserved) + ": CUDA context " + to_string(m.cuda_context) +
         ", NCCL buffers " + to_string(m.nccl_buffers) + ", workspace " + to_string(m.workspace) +
         ", headroom " + to_string(m.headroom) + " (" + fraction.str() + " of HBM, " +
         (headroom_from_flag ? std::string("--memory-headroom")
                             : "stack '" + s.stack.id + "' memory.headroom_fraction") +
         "), fragmentation " + to_string(m.fragmentation);
}

int run(const RunOptions& o) {
  io::require_file_path(o.trace, "command line (--trace)", "the report");
  io::require_not_an_input(o.trace, "command line (--trace)",
                           {o.scenario.file, o.scenario.hardware.value_or(""),
                            o.scenario.model.value_or(""), o.scenario.stack.value_or("")});
  const parallel::Scenario s = load_scenario(o.scenario);
  // And the files the scenario file names (its model beside it) and those a stack file extends,
  // which the flags do not show.
  std::vector<std::string> named = {s.hardware_path, s.model_path, s.stack_path};
  named.insert(named.end(), s.stack.extends_files.begin(), s.stack.extends_files.end());
  io::require_not_an_input(o.trace, "command line (--trace)", named);
  require_simulable_plan(o.scenario, s);
  // A trace shows every op of the iteration, so it needs the whole timeline, not the steady
  // state's extrapolation (report/simulate.hpp).
  const bool full = o.full_simulation || !o.trace.empty();
  if (full) require_bounded_full_simulation(s, o.trace.empty() ? "--full-simulation" : "--trace");
  const report::Simulation sim = report::simulate(
      s, report::SimulateOptions{.build = {}, .mode = full ? report::SimulationMode::Full
                                              : report::SimulationMode::Extrapolate});
  const report::Report& r = sim.report;
  if (!r.memory.fits && o.require_fit) {
    // Named as a plan that cannot run is, by the scenario's file and the flags that set any
    // key (the memory reads nearly all of them), or the command line alone.
    throw PlanError(
        problem_origin(o.scenario, parallel::Problem{.key = "", .message = "", .also = {}}) +
        ": the plan needs " + to_string(r.memory.total) + " per GPU" +
        report::on_stage(r.memory, s.parallel.pp) + ", more than the " +
        to_string(r.memory.usable) + " usable of " + to_string(r.memory.capacity) + " of HBM (" +
        reserve_terms(r.memory, s, o.scenario.memory_headroom.has_value()) +
        "); expected a plan that fits");
  }
  if (!o.trace.empty()) {
    io::write_trace_file(o.trace, sim.iteration, sim.timeline, r.host_overhead);
  }
  if (o.format == "json") {
    std::cout << io::report_to_json(s, r).dump(2) << '\n';
  } else {
    io::write_report_table(std::cout, s, r);
  }
  note_straddling(s, std::cerr);
  if ((r.mfu > 1.0 || r.hfu > 1.0) && !s.stack.unfused_attention) {
    // Model FLOPs count causal attention in full (model::model_flops_per_token: PaLM's count),
    // twice what the causal kernels execute, so at long sequences a utilization above 1 is the
    // convention's, not a kernel's: the kernels themselves stay under the GEMM ceiling. (Unfused
    // attention computes the full s x s, so its MFU cannot pass 1 that way: no note.)
    const double per_token = r.model_flops_per_token.value();
    const double attention =
        model::attention_model_flops_per_token(s.model, s.training.seq_len).value();
    std::cerr << "note: "
              << (r.mfu > 1.0 ? "MFU " + fixed_text(r.mfu, 3) : "HFU " + fixed_text(r.hfu, 3))
              << " exceeds 1: model FLOPs count causal attention in full (PaLM's convention, "
                 "docs/models.md), twice what the causal kernels execute, and attention is "
              << fixed_text(100.0 * attention / per_token, 1) << "% of them at sequence "
              << s.training.seq_len << "\n";
  }
  warn_unfit(r.memory, s.parallel.pp, std::cerr);
  return 0;
}

}  // namespace

void register_run(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* c = app.add_subcommand("run", "Simulate one training iteration of a scenario");
  add_scenario_flags(*c, options->scenario);
  c->add_option("--format", options->format, "table | json")
      ->check(CLI::IsMember({"table", "json"}));
  c->add_option("--trace", options->trace, "Write a Perfetto/Chrome trace of the timeline");
  c->add_flag("--require-fit", options->require_fit,
              "Exit with code 3 when the plan does not fit in GPU memory");
  c->add_flag("--full-simulation", options->full_simulation,
              "Simulate every micro-batch instead of extrapolating the steady state (same "
              "figures to 1e-9; slower with many micro-batches)");
  c->callback([options, &exit_code]() { exit_code = run(*options); });
}

}  // namespace trainsim::cli
