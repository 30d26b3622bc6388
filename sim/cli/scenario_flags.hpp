// The scenario flags shared by `describe`, `run` and `search`: every scenario key is also a flag,
// and a flag overrides the scenario file.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/memory.hpp"

#include "sim/io/scenario_loader.hpp"

namespace trainsim::cli {

struct ScenarioFlags {
  std::string file;  // optional positional scenario.json
  std::optional<std::string> hardware, model, stack, precision, optimizer, schedule, sharding,
      recompute, pipeline_layout;
  std::optional<std::int64_t> nodes, gpus, nodes_per_domain, seq_len, global_batch, micro_batch, tp,
      pp, cp, ep, virtual_stages, shard_group, recompute_layers;
  // Fraction of HBM kept free; overrides the stack's memory.headroom_fraction.
  std::optional<double> memory_headroom;
  bool sequence_parallel = false;
  // Megatron-Core's pipeline split counting the embedding (the loss) as a layer.
  bool account_for_embedding = false;
  bool account_for_loss = false;
  // The three flags above as registered (add_scenario_flags): given, with `=false` or `=true` or
  // bare, they set their key, so `--sequence-parallel=false` turns off a file's true. Null (a
  // ScenarioFlags built in code): a true value sets the key, as a bare flag does.
  const CLI::Option* sequence_parallel_flag = nullptr;
  const CLI::Option* account_for_embedding_flag = nullptr;
  const CLI::Option* account_for_loss_flag = nullptr;
  // What the scenario is for: describe accepts models the simulator cannot run yet.
  io::ScenarioUse use = io::ScenarioUse::Simulate;
};

// Adds `--memory-headroom F` (fraction of HBM kept free, over the stack's default) to `command`.
void add_memory_headroom_flag(CLI::App& command, std::optional<double>& headroom);

// Sets the scenario's stack memory.headroom_fraction from `headroom` when given.
// Throws ConfigError naming the flag unless 0 <= headroom < 1.
void apply_memory_headroom(const std::optional<double>& headroom, parallel::Scenario& scenario);

// Adds the flags (and the optional positional file) to `command`.
void add_scenario_flags(CLI::App& command, ScenarioFlags& flags);

// The scenario document: the file (if any) with the flags applied over it.
[[nodiscard]] io::ScenarioDocument scenario_document(const ScenarioFlags& flags);

// The resolved scenario of the flags and file, --memory-headroom applied. A missing key names the
// flag that sets it. Throws ConfigError.
[[nodiscard]] parallel::Scenario load_scenario(const ScenarioFlags& flags);

// Throws PlanError for a plan that cannot run (parallel::validate's first problem), naming where
// the scenario came from: its file, and the flags that set a key under the problem's, e.g.
// "plan.json, command line (--tp): /parallel: ...".
void require_valid_plan(const ScenarioFlags& flags, const parallel::Scenario& scenario);
// Throws PlanError, named as above, for a plan whose memory per GPU is past what a byte count
// holds exactly (report::memory_excess). Requires: a valid plan.
void require_countable_memory(const ScenarioFlags& flags, const parallel::Scenario& scenario);
// require_valid_plan, require_countable_memory, and for a plan to simulate: a GPipe plan past the
// bound of a whole-iteration simulation (report::gpipe_excess) is a PlanError named as the plan's
// other problems are, before any flag's own bound (--full-simulation, --trace), whose remedy would
// not apply.
void require_simulable_plan(const ScenarioFlags& flags, const parallel::Scenario& scenario);

// What set a plan problem's key and the keys its check read (Problem::also): the scenario file,
// then the flags that set one of them, a key under one or the object above one ("s.json,
// command line (--micro-batch, --tp)").
[[nodiscard]] std::string problem_origin(const ScenarioFlags& flags,
                                         const parallel::Problem& problem);
// The flags alone ("command line (--tp)"), empty where no flag set them.
[[nodiscard]] std::string problem_flags(const ScenarioFlags& flags,
                                        const parallel::Problem& problem);

// Throws ConfigError naming `flag` when the whole-iteration simulation that `flag` asks for
// (--trace, --full-simulation, compare's kernel breakdown) would hold more than
// report::kMaxFullSimulationOps ops: minutes and gigabytes, where the steady state's
// extrapolation gives the report in milliseconds.
void require_bounded_full_simulation(const parallel::Scenario& scenario, const std::string& flag);

// Writes one "note:" line per TP, CP or EP group kind some of whose groups span more NVLink
// domains than rank 0's (parallel::straddling), with the --nodes-per-domain that avoids it where
// one does; nothing otherwise.
void note_straddling(const parallel::Scenario& scenario, std::ostream& out);

// Writes the "warning:" line of a plan that does not fit in GPU memory (`run`, `compare`), with
// the memory it needs and the usable HBM (and with pp > 1 the stage that needs it); nothing when
// it fits.
void warn_unfit(const report::MemoryBreakdown& memory, std::int64_t pp, std::ostream& out);

}  // namespace trainsim::cli
