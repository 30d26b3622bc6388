// `trainsim validate [runs.json]`: simulate every published, measured training run (the built-in
// validation/published_runs.json, or a file of the same schema) and compare each prediction with
// the measurement in the source's own metric; print a table, JSON or CSV, optionally a plot of
// predicted against measured drawn by python3 and matplotlib.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "trainsim/error.hpp"
#include "trainsim/sweep/evaluate.hpp"
#include "trainsim/validation/validate_runs.hpp"

#include "sim/cli/batch.hpp"
#include "sim/cli/commands.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/spellcheck.hpp"
#include "sim/io/stack_loader.hpp"
#include "sim/validation/mapping.hpp"
#include "sim/validation/runs_reader.hpp"
#include "sim/validation/validation_writer.hpp"

namespace trainsim::cli {
namespace {

struct ValidateOptions {
  std::string file;  // empty: the built-in runs
  std::string format = "table";
  std::string jobs = "0";
  std::string source;
  std::string plot;
  std::string scenarios;            // folder for each compared row's scenario file
  std::vector<std::string> stacks;  // "ID=FILE"
};

// The plot: one log-log panel per compared metric, predicted against measured, the diagonal and
// +-10 % lines, one colour per source (fixed order: the sources' order in the report). Iteration
// times are plotted as iterations per second so that above the diagonal always means "the
// simulator predicts a faster run". No timestamp or software version in the PNG.
constexpr const char* kPlotScript = R"PY(import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# matplotlib's own defaults, not a matplotlibrc of the working directory, $MATPLOTLIBRC or the
# user's: the same rows give the same image wherever the command runs.
matplotlib.rcdefaults()
matplotlib.use("Agg")
data_path, out_path = sys.argv[1], sys.argv[2]
# The image goes to a temporary name first, so the format comes from the final name.
with open(data_path, encoding="utf-8") as f:
    data = json.load(f)
rows = [r for r in data["rows"] if r["status"] == "compared"]
if not rows:
    sys.exit("no compared rows to plot")
sources = [s["source"] for s in data["sources"] if s["compared"] > 0]
cmap = plt.get_cmap("tab20")
colour = {s: cmap(i % 20) for i, s in enumerate(sources)}
labels = {
    "tokens_per_s_per_gpu": "tokens/s per GPU",
    "iteration_time_s": "iterations/s (1 / iteration time)",
    "flop_per_s_per_gpu": "TFLOP/s per GPU (source's count)",
    "mfu": "MFU",
    "hfu": "HFU",
}
metrics = [m for m in labels if any(r["metric"] == m for r in rows)]


def value(row, key):
    v = row[key]
    if row["metric"] == "iteration_time_s":
        return 1.0 / v
    if row["metric"] == "flop_per_s_per_gpu":
        return v / 1e12
    return v


fig, axes = plt.subplots(1, len(metrics), figsize=(5.2 * len(metrics), 5.2), squeeze=False)
for ax, metric in zip(axes[0], metrics):
    sel = [r for r in rows if r["metric"] == metric]
    xs = [value(r, "measured") for r in sel]
    ys = [value(r, "predicted") for r in sel]
    lo, hi = min(xs + ys) / 1.3, max(xs + ys) * 1.3
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=1)
    for f in (0.9, 1.1):
        ax.plot([lo, hi], [lo * f, hi * f], color="grey", linewidth=0.8, linestyle="--")
    for s in sources:
        pts = [(x, y) for x, y, r in zip(xs, ys, sel) if r["source"] == s]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=18, color=colour[s], label=s)
    # Logarithmic axes where the panel (the points and a 1.3x margin each side) spans more
    # than a decade; over less, matplotlib labels the minor ticks (2x10^2, 3x10^2, ...), which
    # ran into each other: linear axes there.
    if hi / lo > 10.0:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("measured " + labels[metric])
    ax.set_ylabel("predicted " + labels[metric])
    ax.grid(True, which="both", linewidth=0.3)
handles, names = [], []
for ax in axes[0]:
    for h, n in zip(*ax.get_legend_handles_labels()):
        if n not in names:
            handles.append(h)
            names.append(n)
order = sorted(range(len(names)), key=lambda i: sources.index(names[i]))
fig.legend([handles[i] for i in order], [names[i] for i in order], loc="lower center",
           ncol=min(6, len(names)), fontsize=8, frameon=False)
# One panel is too narrow for the title on one line (it was cut at both edges).
one = len(metrics) == 1
fig.suptitle("trainsim validate: predicted against measured" + ("\n" if one else " ") +
             "(dashed: +-10 %)")
fig.tight_layout(rect=(0, 0.12, 1, 0.90 if one else 0.95))
fig.savefig(out_path, format="png", dpi=120, metadata={"Software": None})
)PY";

// A path quoted for /bin/sh.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Writes the plot of `data` (the JSON report) to `out_path` with python3 and matplotlib.
// Throws ConfigError when python3 or matplotlib is missing or the script fails.
void draw_plot(const nlohmann::json& data, const std::string& out_path) {
  if (std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) {
    throw ConfigError("--plot " + out_path, "",
                      "drawing the plot needs python3 with matplotlib; expected `python3 -c "
                      "\"import matplotlib\"` to succeed (install python3-matplotlib), got a "
                      "failure");
  }
  std::string dir_template =
      (std::filesystem::temp_directory_path() / "trainsim-validate-XXXXXX").string();
  if (mkdtemp(dir_template.data()) == nullptr) {
    throw ConfigError("--plot " + out_path, "", "cannot create a temporary directory");
  }
  const std::filesystem::path dir(dir_template);
  const std::filesystem::path script = dir / "plot_validation.py";
  const std::filesystem::path json = dir / "validation.json";
  // The side files live in a private temporary folder, removed whatever happens.
  struct RemoveFolder {
    std::filesystem::path path;
    ~RemoveFolder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } const remove_folder{dir};
  const auto write_side_file = [&](const std::filesystem::path& path, const std::string& text) {
    std::ofstream file(path, std::ios::binary);
    file << text;
    file.flush();
    if (!file) {
      throw ConfigError("--plot " + out_path, "",
                        "cannot write the side file " + path.string() +
                            "; expected a writable temporary folder with free space");
    }
  };
  write_side_file(script, kPlotScript);
  write_side_file(json, data.dump() + "\n");
  // python3 draws into a temporary file beside the target, renamed onto it only once drawn:
  // a failed or interrupted plot leaves no partial PNG.
  io::AtomicFile image(out_path);
  // Always PNG (check_plot_path): its metadata are only the ones the script writes, so the same
  // runs draw the same bytes.
  const std::string command = "python3 " + shell_quote(script.string()) + " " +
                              shell_quote(json.string()) + " " +
                              shell_quote(image.temporary_path()) + " >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) {
    throw ConfigError("--plot " + out_path, "",
                      "python3 could not draw the plot; expected a writable PNG path");
  }
  // What python3 left must be a PNG: a python3 that exits 0 without drawing (a wrapper, a
  // stub) left an empty file, renamed into place as the plot.
  {
    std::ifstream drawn(image.temporary_path(), std::ios::binary);
    char magic[8] = {};
    drawn.read(magic, sizeof magic);
    if (drawn.gcount() != sizeof magic ||
        std::string_view(magic, sizeof magic) != "\x89PNG\r\n\x1a\n") {
      throw ConfigError("--plot " + out_path, "",
                        "python3 exited without drawing a PNG; expected python3 with matplotlib "
                        "(python3-matplotlib) to write the plot");
    }
  }
  image.commit();
}

// The file name of a row's scenario: its id, each byte outside [A-Za-z0-9._-] replaced by '_'
// (a multi-byte UTF-8 character by one '_' per byte), and ".json" ("." and ".." alone are not ids a
// file can carry, nor is an empty one).
std::string scenario_file_name(const std::string& id) {
  std::string name = id;
  for (char& c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) == 0 && c != '.' && c != '_' && c != '-') c = '_';
  }
  if (name.empty() || name == "." || name == "..") name = "_" + name;
  return name + ".json";
}

// The folder --scenarios names, without a trailing separator ("rows/" -> "rows").
std::filesystem::path scenarios_folder(const std::string& dir) {
  std::filesystem::path folder = std::filesystem::path(dir).lexically_normal();
  if (!folder.has_filename() && folder.has_parent_path() && folder != folder.root_path()) {
    folder = folder.parent_path();
  }
  return folder;
}

// --scenarios DIR, checked before the rows run: a folder, or a path whose parent folder exists
// (the folder is then created once the rows have run). Throws ConfigError naming the folder.
void check_scenarios_folder(const std::string& dir) {
  // '-' is standard output elsewhere (sweep -o -); here it made a folder named '-'.
  io::require_file_path(dir, "command line (--scenarios)", "the table", "a folder path");
  const std::string flag = "--scenarios " + dir;
  std::error_code ec;
  const std::filesystem::path folder = scenarios_folder(dir);
  if (std::filesystem::exists(folder, ec)) {
    if (!std::filesystem::is_directory(folder, ec)) {
      throw ConfigError(flag, "", "expected a folder (created when missing), got a file");
    }
    return;
  }
  const std::filesystem::path parent = folder.parent_path().empty() ? "." : folder.parent_path();
  if (!std::filesystem::is_directory(parent, ec)) {
    // Missing, or something else than a folder: said as it is ("is not a folder" of a parent
    // that does not exist).
    const bool missing = !std::filesystem::exists(parent, ec);
    throw ConfigError(flag, "",
                      "cannot create the folder: its parent " + parent.string() +
                          (missing ? " does not exist" : " is not a folder") +
                          "; expected a path whose parent folder exists");
  }
}

// The file of each compared row's scenario under --scenarios DIR (file name -> row), checked
// before anything is written: two rows whose ids share a file name, or a name longer than the
// file system allows, is a ConfigError naming the rows.
using ScenarioFiles = std::map<std::string, const validation::RowResult*>;
ScenarioFiles scenario_files(const validation::ValidationReport& report, const std::string& dir) {
  const std::string flag = "--scenarios " + dir;
  constexpr std::size_t kMaxName = 255;  // NAME_MAX of Linux file systems, in bytes
  ScenarioFiles files;
  // The names as a case-insensitive file system (macOS's, Windows') sees them: A.json and a.json
  // are one file there, and the second row written would replace the first.
  std::map<std::string, const validation::RowResult*> folded;
  for (const validation::RowResult& r : report.rows) {
    if (!r.compared) continue;
    const std::string name = scenario_file_name(r.id);
    if (name.size() > kMaxName) {
      throw ConfigError(flag, "",
                        "row '" + r.id.substr(0, 40) + "...' would be written to a file name of " +
                            std::to_string(name.size()) + " bytes; expected ids of at most " +
                            std::to_string(kMaxName - 5) + " bytes");
    }
    if (const auto [it, fresh] = files.emplace(name, &r); !fresh) {
      throw ConfigError(flag, "",
                        "rows '" + it->second->id + "' and '" + r.id +
                            "' would both be written to " + name +
                            "; expected ids that differ in letters, digits, '.', '_' or '-'");
    }
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (const auto [it, fresh] = folded.emplace(lower, &r); !fresh) {
      throw ConfigError(flag, "",
                        "rows '" + it->second->id + "' and '" + r.id + "' would be written to " +
                            scenario_file_name(it->second->id) + " and " + name +
                            ", one file where names ignore case (macOS, Windows); expected ids "
                            "that differ in more than case");
    }
  }
  return files;
}

// Writes `files` to DIR; DIR is created when missing. A target that is a folder is an error
// before anything is written. Every file goes to its temporary first (io::AtomicFile), and only
// when all are written are they renamed into place, so a failed write (disk full, an unwritable
// folder) leaves DIR as it was. Should a rename fail, the files this call added are removed; one
// it replaced keeps its new content, as the old one is gone. DIR goes too when this call
// created it.
void write_scenarios(const ScenarioFiles& files, const std::string& dir) {
  const std::string flag = "--scenarios " + dir;
  std::error_code ec;
  const std::filesystem::path folder = scenarios_folder(dir);
  for (const auto& [name, row] : files) {
    if (std::filesystem::is_directory(folder / name, ec)) {
      throw ConfigError((folder / name).string(), "",
                        "is a folder; expected a file path to write (row '" + row->id + "')");
    }
  }
  bool created = false;
  if (!std::filesystem::is_directory(folder, ec)) {
    created = std::filesystem::create_directory(folder, ec);
    if (!created || ec) {
      throw ConfigError(flag, "",
                        "cannot create the folder (" + ec.message() +
                            "); expected a path whose parent folder exists and is writable");
    }
  }
  std::vector<std::unique_ptr<io::AtomicFile>> pending;
  std::vector<std::filesystem::path> added;
  try {
    for (const auto& [name, row] : files) {
      pending.push_back(std::make_unique<io::AtomicFile>((folder / name).string()));
      pending.back()->write(row->document.dump(2) + "\n");
      pending.back()->close();  // one descriptor at a time, whatever the rows
    }
    for (const auto& file : pending) {
      const bool existed = std::filesystem::exists(file->path(), ec);
      file->commit();
      if (!existed) added.emplace_back(file->path());
    }
  } catch (...) {
    pending.clear();  // removes the temporaries not yet renamed
    for (const auto& path : added) std::filesystem::remove(path, ec);
    if (created) std::filesystem::remove(folder, ec);
    throw;
  }
}

// The plot is a PNG, and a path with an extension must say so: the format followed the
// extension, so '--plot out.pdf' wrote a PDF stamped with its creation time (two runs differed)
// and '.svg' or '.jpg' failed only after the table was printed, with a message blaming the
// path's writability.
void check_plot_path(const std::string& path) {
  if (path.empty()) return;
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // A path without an extension is drawn as PNG, as it always was.
  if (!extension.empty() && extension != ".png") {
    throw ConfigError("command line (--plot)", "",
                      "'" + path +
                          "' does not end in .png; expected a PNG path (the plot is "
                          "drawn as PNG only)");
  }
}

int run_validate(const ValidateOptions& o) {
  const int jobs = sweep::parse_jobs(o.jobs, "--jobs");
  check_plot_path(o.plot);
  if (!o.scenarios.empty()) check_scenarios_folder(o.scenarios);
  const std::string name = o.file.empty() ? validation::kBuiltinRunsName : o.file;
  const std::string text =
      o.file.empty() ? validation::builtin_runs_text() : validation::read_runs_file(o.file);
  const std::vector<validation::PublishedRun> runs = validation::read_published_runs(text, name);
  if (runs.empty()) throw ConfigError(name, "", "no runs; expected at least one published run");
  if (!o.source.empty() &&
      std::none_of(runs.begin(), runs.end(), [&](const validation::PublishedRun& r) {
        return validation::source_matches(r, o.source);
      })) {
    std::vector<std::string> groups;
    std::vector<std::string> names;
    for (const auto& r : runs) {
      if (std::find(groups.begin(), groups.end(), r.source_group) == groups.end()) {
        groups.push_back(r.source_group);
      }
      const validation::SourceProfile* source = validation::find_source(r);
      if (source != nullptr && std::find(names.begin(), names.end(), source->name) == names.end()) {
        names.emplace_back(source->name);
      }
    }
    std::string list;
    for (const auto& g : groups) list += (list.empty() ? "" : "; ") + g;
    std::string short_names;
    for (const auto& n : names) short_names += (short_names.empty() ? "" : ", ") + n;
    throw ConfigError("command line (--source)", "",
                      "'" + o.source + "' is in no row's source_group or source of " + name +
                          "; expected text from a source (" + short_names +
                          ") or a source_group (" + list + ")");
  }
  keep_freed_memory();
  std::map<std::string, nlohmann::json> stacks;
  std::map<std::string, std::string> stack_files;
  std::vector<std::string> base_files;  // the stack files each --stack file extends
  const auto ids = io::builtin_stack_ids();
  for (const std::string& spec : o.stacks) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      throw ConfigError(
          "command line (--stack)", "",
          "expected ID=FILE, a built-in stack id and a stack JSON file, got '" + spec + "'");
    }
    const std::string id = spec.substr(0, eq);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
      throw ConfigError("command line (--stack)", "",
                        "unknown built-in stack '" + id + "'" + io::did_you_mean(id, ids) +
                            "; expected the id the validation mapping uses for the rows to "
                            "re-run");
    }
    if (stacks.count(id) != 0) {
      // Two files for one id: the last would win without a word.
      throw ConfigError("command line (--stack)", "",
                        "stack '" + id + "' given twice; expected one file per stack id");
    }
    const std::string file = spec.substr(eq + 1);
    // Resolved here, where its relative "extends" is found beside the file: the rows' scenarios
    // get the document inline, and would look for the base from the working directory.
    nlohmann::json j = io::resolved_stack_json(io::read_json_file(file), file, &base_files);
    (void)io::stack_from_json(j, file, "");  // a bad file fails here, naming itself
    stacks[id] = std::move(j);
    stack_files[id] = file;
  }
  // No output may replace an input, the runs file or a stack file (or one it extends): the
  // output-file rule of docs/sweep.md, checked before anything is simulated.
  std::vector<std::string> inputs{o.file};
  for (const auto& [id, file] : stack_files) inputs.push_back(file);
  inputs.insert(inputs.end(), base_files.begin(), base_files.end());
  io::require_not_an_input(o.plot, "command line (--plot)", inputs);
  if (!o.scenarios.empty()) {
    // A row's scenario file, for every row the filter keeps (which of them compare is known
    // only once they have run).
    const std::filesystem::path folder = scenarios_folder(o.scenarios);
    for (const validation::PublishedRun& r : runs) {
      if (!o.source.empty() && !validation::source_matches(r, o.source)) continue;
      io::require_not_an_input((folder / scenario_file_name(r.id)).string(),
                               "command line (--scenarios)", inputs);
    }
  }
  const validation::ValidationReport report =
      validation::validate_runs(runs, {.jobs = jobs,
                                       .source_filter = o.source,
                                       .stacks = std::move(stacks),
                                       .stack_files = stack_files});
  // A replaced stack that no validated row runs changes nothing: most likely a misread id or a
  // --source that leaves its rows out, so stderr says so (a note, not an error: a script that
  // replaces every stack it refits, scripts/refit-stacks, passes stacks without rows).
  // (Compared rows only: a row skipped after its mapping chose a stack ran nothing, and the
  // header said the stack was replaced where no row had run it.)
  std::set<std::string> used;  // the stacks the validated rows run
  for (const auto& row : report.rows) {
    if (!row.stack.empty() && row.compared) used.insert(row.stack);
  }
  std::string list;
  for (const auto& u : used) list += (list.empty() ? "" : ", ") + u;
  for (const std::string& spec : o.stacks) {
    const std::string id = spec.substr(0, spec.find('='));
    if (used.count(id) == 0) {
      std::cerr << "note: --stack " << id << ": no validated row runs stack '" << id << "'"
                << (o.source.empty() ? "" : " (--source " + o.source + ")")
                << ", so the file changes nothing; the rows' stacks: " << list << '\n';
    }
  }
  // The header names the replaced stacks that rows ran (the note above names the others).
  std::map<std::string, std::string> ran_files;
  for (const auto& [id, file] : stack_files) {
    if (used.count(id) != 0) ran_files[id] = file;
  }
  const validation::RunsInfo info{.runs = name,
                                  .rows_in_file = static_cast<std::int64_t>(runs.size()),
                                  .source_filter = o.source,
                                  .stack_files = std::move(ran_files)};
  const bool need_json = o.format == "json" || !o.plot.empty();
  const nlohmann::json json = need_json ? validation::validation_to_json(report, info) : nullptr;
  // The scenario files' names are checked before the plot is drawn: a clash leaves no output.
  const ScenarioFiles files =
      o.scenarios.empty() ? ScenarioFiles{} : scenario_files(report, o.scenarios);
  // With no row compared there is nothing to plot: the output and its skip reasons come first,
  // then the error below (the plot script's own refusal used to hide both).
  if (!o.plot.empty() && report.overall.compared > 0) draw_plot(json, o.plot);
  if (!o.scenarios.empty()) write_scenarios(files, o.scenarios);
  if (o.format == "json") {
    std::cout << json.dump(2) << '\n';
  } else if (o.format == "csv") {
    std::cout << validation::validation_to_csv(report);
  } else {
    validation::write_validation_table(std::cout, report, info);
  }
  if (report.overall.compared == 0) {
    // Every row was skipped (the output gives each reason): nothing was validated.
    std::cout.flush();
    throw ConfigError(name, "",
                      "no row could be compared (" + std::to_string(report.overall.skipped) +
                          " skipped, each with its reason in the output" +
                          (o.plot.empty() ? std::string() : "; no plot drawn") +
                          "); expected at least one row that maps to a scenario");
  }
  return 0;
}

}  // namespace

void register_validate(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* c = app.add_subcommand(
      "validate", "Compare simulated and published measured training runs (docs/validation.md)");
  c->add_option("runs", o->file,
                "Published-runs JSON (schema of validation/README.md); default: the built-in "
                "validation/published_runs.json");
  c->add_option("--format", o->format, "table | json | csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  c->add_option("--jobs,-j", o->jobs, "Threads, 1 to 1024 (default 0: all cores)");
  c->add_option(
      "--source", o->source,
      "Only rows whose source (the report's column) or source_group contains this text (any case)");
  // One value per --stack, repeated for more: a vector option took every argument after it,
  // the runs file included ("expected ID=FILE, ... got 'runs.json'").
  c->add_option("--stack", o->stacks,
                "ID=FILE: run the rows mapped to built-in stack ID with the stack in FILE "
                "instead (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_option("--plot", o->plot,
                "Also draw predicted against measured to this PNG (python3 "
                "and matplotlib)");
  c->add_option("--scenarios", o->scenarios,
                "Also write each compared row's scenario, the plan simulated, to "
                "DIR/<id>.json (for trainsim run; DIR is created when missing)")
      ->check(CLI::Validator(
          [](const std::string& v) {
            return v.empty() ? std::string("expected a folder, got an empty path") : std::string();
          },
          "DIR"));
  c->callback([o, &exit_code]() { exit_code = run_validate(*o); });
}

}  // namespace trainsim::cli
