// `trainsim diff`: simulate two scenarios exactly as `trainsim run` does and print them side by
// side: the inputs that differ, the headline metrics with their changes, and why the step time
// moved. Comparison logic: io/report_diff.hpp; docs/diff.md.
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "trainsim/error.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/memory.hpp"
#include "trainsim/report/simulate.hpp"

#include "sim/cli/commands.hpp"
#include "sim/cli/scenario_flags.hpp"
#include "sim/io/json_reader.hpp"
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
  d.scenario = load_scenario(f);
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

// Both sides, or the first error loading them. Flags apply to both sides, so an error one
// side alone gives (a headroom an 80 GiB H100 cannot keep beside a B200, --shard-group against
// the side that is not hybrid_shard) names that side's file before the flags; one both give
// alike is the flags' own, named as run names it.
std::pair<io::DiffSide, io::DiffSide> sides(const DiffOptions& o) {
  std::optional<io::DiffSide> a, b;
  std::optional<ConfigError> ea, eb;
  try {
    a = side(o.scenario, o.a);
  } catch (const ConfigError& e) {
    ea = e;
  }
  try {
    b = side(o.scenario, o.b);
  } catch (const ConfigError& e) {
    eb = e;
  }
  if (ea && eb && ea->message() == eb->message()) throw *ea;
  for (const auto& [e, file] : {std::pair{&ea, &o.a}, std::pair{&eb, &o.b}}) {
    if (!*e) continue;
    // An error in the file itself names it already.
    if ((*e)->source().rfind(*file, 0) == 0) throw **e;
    throw ConfigError(*file + ", " + (*e)->source(), (*e)->pointer(), (*e)->problem());
  }
  return {std::move(*a), std::move(*b)};
}

int diff(const DiffOptions& o) {
  const auto [a, b] = sides(o);
  // With neither side simulated there is nothing to compare: fail as `run` does on one.
  if (!a.report && !b.report) {
    // Each side: its file, then the flags that set the problem's key. The same problem from
    // the same flags (a flag applied to both) is said once, naming both files.
    // The files' names escaped as run's are (problem_origin): the error line joins lines with
    // "; ", and a name holding a newline read as two files.
    const auto origin = [](const std::string& files, const io::DiffSide& d) {
      return d.problem_flags.empty() ? files : files + ", " + d.problem_flags;
    };
    const std::string fa = io::escape_control(a.source);
    const std::string fb = io::escape_control(b.source);
    if (a.problems.front() == b.problems.front() && a.problem_flags == b.problem_flags) {
      throw PlanError(origin(a.source == b.source ? fa : fa + ", " + fb, a) + ": " +
                      a.problems.front());
    }
    throw PlanError(origin(fa, a) + ": " + a.problems.front() + "; " + origin(fb, b) + ": " +
                    b.problems.front());
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
