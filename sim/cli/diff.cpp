// `trainsim diff`: simulate two scenarios exactly as `trainsim run` does and print them side by
// side: the inputs that differ, the headline metrics with their changes, and why the step time
// moved. Comparison logic: io/report_diff.hpp; docs/diff.md.
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "trainsim/error.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/memory.hpp"
#include "trainsim/report/simulate.hpp"

#include "sim/cli/commands.hpp"
#include "sim/cli/scenario_flags.hpp"
#include "sim/io/report_diff.hpp"

namespace trainsim::cli {
namespace {

struct DiffOptions {
  ScenarioFlags scenario;  // flags applied to both files; `file` unused
  std::string a;
  std::string b;
  std::string format = "table";
};

// One side: bad input throws ConfigError naming the file; an impossible plan is a result.
io::DiffSide side(const ScenarioFlags& flags, const std::string& file) {
  ScenarioFlags f = flags;
  f.file = file;
  io::DiffSide d;
  d.source = file;
  try {
    d.scenario = load_scenario(f);
  } catch (const ConfigError& e) {
    // The headroom flag is checked against each side's hardware: name the side it does not fit
    // (a headroom an 80 GiB H100 cannot keep may suit a B200 on the other side).
    if (e.source() != "command line (--memory-headroom)") throw;
    throw ConfigError(file + ", " + e.source(), e.pointer(), e.problem());
  }
  const auto problems = parallel::validate(d.scenario);
  for (const auto& p : problems) d.problems.push_back(p.key + ": " + p.message);
  // The flags (applied to both sides) that set the first problem's key.
  if (!problems.empty()) d.problem_flags = problem_flags(f, problems.front());
  if (d.problems.empty()) {
    if (const std::string excess =
            report::memory_excess(report::memory_peak(d.scenario), d.scenario.parallel.pp);
        !excess.empty()) {
      d.problems.push_back(std::string(report::kMemoryExcessKey) + ": " + excess);
    }
  }
  if (d.problems.empty()) {
    try {
      d.report = report::simulate(d.scenario).report;
    } catch (const PlanError& e) {
      d.problems.emplace_back(e.message());
    }
  }
  return d;
}

int diff(const DiffOptions& o) {
  const io::DiffSide a = side(o.scenario, o.a);
  const io::DiffSide b = side(o.scenario, o.b);
  // With neither side simulated there is nothing to compare: fail as `run` does on one.
  if (!a.report && !b.report) {
    // Each side: its file, then the flags that set the problem's key. The same problem from
    // the same flags (a flag applied to both) is said once, naming both files.
    const auto origin = [](const std::string& files, const io::DiffSide& d) {
      return d.problem_flags.empty() ? files : files + ", " + d.problem_flags;
    };
    if (a.problems.front() == b.problems.front() && a.problem_flags == b.problem_flags) {
      throw PlanError(origin(a.source == b.source ? a.source : a.source + ", " + b.source, a) +
                      ": " + a.problems.front());
    }
    throw PlanError(origin(a.source, a) + ": " + a.problems.front() + "; " + origin(b.source, b) +
                    ": " + b.problems.front());
  }
  const io::ReportDiff d = io::diff_reports(a, b);
  if (o.format == "json") {
    std::cout << io::diff_to_json(a, b, d).dump(2) << '\n';
  } else {
    io::write_diff_table(std::cout, a, b, d);
  }
  return 0;
}

}  // namespace

void register_diff(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DiffOptions>();
  CLI::App* c = app.add_subcommand(
      "diff", "Simulate two scenarios and show what changed, by how much and why");
  add_scenario_flags(*c, options->scenario);
  // The shared flags bring one positional scenario; diff takes two.
  c->remove_option(c->get_option("scenario"));
  c->add_option("scenario_a", options->a, "Scenario A (JSON file)")->required();
  c->add_option("scenario_b", options->b, "Scenario B (JSON file); flags apply to both")
      ->required();
  c->add_option("--format", options->format, "table | json")
      ->check(CLI::IsMember({"table", "json"}));
  c->callback([options, &exit_code]() { exit_code = diff(*options); });
}

}  // namespace trainsim::cli
