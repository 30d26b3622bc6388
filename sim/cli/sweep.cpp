// `trainsim sweep spec.json`: expand a sweep spec, evaluate its scenarios on all cores (or the
// shard of them this machine runs) and write one CSV row or JSON line per scenario, in the
// spec's order. `--list` prints the scenarios' axis values without simulating.

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string_view>

#include "trainsim/error.hpp"
#include "trainsim/sweep/shard.hpp"

#include "sim/cli/batch.hpp"
#include "sim/cli/commands.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/io/sweep_writer.hpp"
#include "sim/sweep/sweep_run.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace trainsim::cli {
namespace {

struct SweepOptions {
  std::string spec;
  std::string jobs = "0";
  std::string shard;
  std::optional<std::int64_t> shard_count;
  std::string format = "csv";
  std::string output;
  bool list = false;
  bool full_simulation = false;
};

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

sweep::Shard shard_of(const std::string& shard, std::optional<std::int64_t> count) {
  return sweep::shard_from_flags(
      shard, sweep::ShardEnvironment{.slurm_array_task_id = env("SLURM_ARRAY_TASK_ID"),
                                     .slurm_array_task_count = env("SLURM_ARRAY_TASK_COUNT"),
                                     .job_completion_index = env("JOB_COMPLETION_INDEX"),
                                     .shard_count = count});
}

// "index,<axis keys>" then one line per scenario of the shard, values as compact JSON (quoted
// where they hold a comma); with
// `json`, one JSON object per scenario ({"index": ..., "<axis key>": value, ...}), as the
// sweep's JSON lines.
void write_list(const sweep::SweepSpec& spec, const sweep::Shard& shard, io::Output& out,
                bool json) {
  if (!json) {
    std::string header = "index";
    for (const std::string& key : spec.keys) header += "," + key;
    out.write(header + "\n");
  }
  const std::int64_t n = shard.size_of(spec.size());
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t index = shard.index + k * shard.count;
    const std::vector<nlohmann::json> values = spec.point(index);
    if (json) {
      nlohmann::ordered_json row;
      row["index"] = index;
      for (std::size_t i = 0; i < spec.keys.size(); ++i) row[spec.keys[i]] = values[i];
      out.write(row.dump() + "\n");
      continue;
    }
    std::string line = std::to_string(index);
    for (const nlohmann::json& v : values) {
      line += ',';
      // An inline profile or a pipeline layout dumps with commas: quoted, as the sweep's CSV.
      line += io::csv_field(v.is_string() ? v.get<std::string>() : v.dump());
    }
    out.write(line + "\n");
  }
}

int run_sweep_command(const SweepOptions& o) {
  const sweep::Shard shard = shard_of(o.shard, o.shard_count);
  const int jobs = sweep::parse_jobs(o.jobs, "--jobs");
  keep_freed_memory();
  const sweep::SweepSpec spec = sweep::read_sweep_spec(o.spec);
  // The spec, its base file and every hardware, model and stack file they name.
  std::vector<std::string> inputs = {o.spec, spec.base.source};
  inputs.insert(inputs.end(), spec.references.begin(), spec.references.end());
  io::require_not_an_input(o.output, "command line (-o)", inputs);
  io::Output out(o.output);
  if (o.list) {
    write_list(spec, shard, out, o.format == "json");
    out.commit();
    return 0;
  }
  sweep::SweepRunOptions run;
  run.shard = shard;
  run.jobs = jobs;
  run.format = o.format == "json" ? io::SweepFormat::JsonLines : io::SweepFormat::Csv;
  run.progress = terminal_progress();
  if (o.full_simulation) run.mode = report::SimulationMode::Full;
  // Any --shard (even 0/1) marks the output for trainsim merge; without it the bytes are the
  // plain rows, as before end records existed.
  run.end_record = o.shard.empty() ? sweep::EndRecord::None : sweep::EndRecord::Shard;
  sweep::write_sweep(spec, run, [&out](std::string_view text) { out.write(text); });
  out.commit();
  return 0;
}

}  // namespace

void register_sweep(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* c = app.add_subcommand(
      "sweep",
      "Evaluate every scenario of a sweep spec; one CSV row (or JSON line) per scenario, in the "
      "spec's order (first axis slowest). See docs/sweep.md for the spec format.");
  c->add_option("spec", o->spec, "Sweep spec JSON: {\"base\": ..., \"axes\": ..., \"zip\": ...}")
      ->required();
  c->add_option("--jobs,-j", o->jobs, "Threads, 1 to 1024 (default 0: all cores)");
  c->add_option("--shard", o->shard,
                "Evaluate only slice K of N (0-based, scenarios with index % N == K), or 'auto' "
                "to read SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT or JOB_COMPLETION_INDEX");
  c->add_option("--shard-count", o->shard_count,
                "Number of shards with --shard auto (needed with JOB_COMPLETION_INDEX)");
  c->add_option("--format", o->format, "csv | json (JSON lines)")
      ->check(CLI::IsMember({"csv", "json"}));
  c->add_option("-o,--output", o->output, "Write to this file instead of stdout");
  c->add_flag("--list", o->list, "List the scenarios (index and axis values) without simulating");
  c->add_flag("--full-simulation", o->full_simulation,
              "Simulate every micro-batch instead of extrapolating the steady state");
  c->callback([o, &exit_code]() { exit_code = run_sweep_command(*o); });
}

}  // namespace trainsim::cli
