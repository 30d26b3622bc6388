// `trainsim compare`: simulate a scenario exactly as `trainsim run` does and put it beside a
// PyTorch profiler trace of one rank: iteration time, compute, communication, exposed
// communication, idle and bubble, busy time per kernel category and per collective op, with
// the difference. Definitions: report/kernel_breakdown.hpp; reader: io/kineto_reader.hpp;
// docs/compare.md.
#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "trainsim/error.hpp"
#include "trainsim/report/kernel_breakdown.hpp"
#include "trainsim/report/simulate.hpp"

#include "sim/cli/commands.hpp"
#include "sim/cli/scenario_flags.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/kineto_reader.hpp"
#include "sim/io/report_writer.hpp"

namespace trainsim::cli {
namespace {

struct CompareOptions {
  ScenarioFlags scenario;
  std::string trace;
  std::string format = "table";
  std::string steps = "skip-first";
  std::optional<std::int64_t> stage;
};

// One line of the comparison. A side is absent when it cannot be measured or is not modelled;
// `note` says which.
struct Row {
  std::string key;    // JSON "metric"
  std::string label;  // table label
  std::optional<Seconds> measured;
  std::optional<Seconds> simulated;
  std::string note;
};

Row row(std::string key, std::string label, std::optional<Seconds> measured,
        std::optional<Seconds> simulated, std::string note = {}) {
  return Row{.key = std::move(key),
             .label = std::move(label),
             .measured = measured,
             .simulated = simulated,
             .note = std::move(note)};
}

std::optional<Seconds> category_busy(const report::StepBreakdown& b, report::KernelCategory c) {
  const auto it = b.categories.find(c);
  return it == b.categories.end() ? Seconds(0.0) : it->second.busy;
}

std::vector<Row> rows_of(const report::StepBreakdown& m, const report::StepBreakdown& s,
                         const report::Report& r, std::int64_t stage) {
  const report::StageSummary& st = r.stages[static_cast<std::size_t>(stage)];
  std::vector<Row> rows;
  rows.push_back(row("iteration_time", "iteration time", m.cpu_duration, r.iteration_time,
                     "measured: mean CPU ProfilerStep range"));
  rows.push_back(
      row("gpu_span", "GPU span (first to last kernel)", m.span, std::nullopt, "measured only"));
  rows.push_back(row("compute", "compute (kernel sum)", m.compute_kernel_sum, st.compute));
  // The union, the side of span = compute busy + exposed communication + idle that the kernel
  // sum is not where compute kernels overlap on several streams.
  rows.push_back(row("compute_busy", "compute (busy: union)", m.compute, s.compute));
  rows.push_back(row("communication", "communication (kernel sum)", m.communication_kernel_sum,
                     st.communication));
  rows.push_back(row("exposed_communication", "exposed communication", m.exposed_communication,
                     st.exposed_communication));
  rows.push_back(row("overlapped_communication", "overlapped communication",
                     m.overlapped_communication, s.overlapped_communication));
  rows.push_back(row("idle", "GPU idle (nothing runs)", m.idle, st.bubble,
                     "measured: launch gaps, host stalls and waits alike"));
  // The stage's idle time less the stack's host time per step (iteration_overhead), which is in
  // every stage's bubble_s: with pp 1 the row showed that host time as a pipeline bubble.
  rows.push_back(row("bubble", "pipeline bubble", std::nullopt,
                     std::max(Seconds(0.0), st.bubble - r.host_overhead),
                     r.host_overhead > Seconds(0.0)
                         ? "not measurable from one rank's trace; simulated: idle less the "
                           "stack's host time per step"
                         : "not measurable from one rank's trace"));
  using report::KernelCategory;
  const std::array<std::pair<KernelCategory, const char*>, 5> categories = {{
      {KernelCategory::Gemm, "GEMM"},
      {KernelCategory::Attention, "attention"},
      {KernelCategory::MemoryBound, "memory-bound / elementwise"},
      {KernelCategory::Memcpy, "memcpy"},
      {KernelCategory::Memset, "memset"},
  }};
  for (const auto& [c, label] : categories) {
    const bool modelled = c != KernelCategory::Memcpy && c != KernelCategory::Memset;
    rows.push_back(row("category." + std::string(report::to_string(c)), std::string("  ") + label,
                       category_busy(m, c),
                       modelled ? category_busy(s, c) : std::optional<Seconds>(),
                       modelled ? "" : "not modelled"));
  }
  rows.push_back(row("category.communication", "  NCCL",
                     category_busy(m, KernelCategory::Communication),
                     category_busy(s, KernelCategory::Communication)));
  std::set<std::string> ops;
  for (const auto& [op, t] : m.collectives) ops.insert(op);
  for (const auto& [op, t] : s.collectives) ops.insert(op);
  for (const auto& op : ops) {
    auto busy = [&op](const report::StepBreakdown& b) {
      const auto it = b.collectives.find(op);
      return it == b.collectives.end() ? Seconds(0.0) : it->second.busy;
    };
    auto count = [&op](const report::StepBreakdown& b) {
      const auto it = b.collectives.find(op);
      return it == b.collectives.end() ? std::int64_t{0} : it->second.num_kernels;
    };
    rows.push_back(row("collective." + op, "  " + op, busy(m), busy(s),
                       std::to_string(count(m)) + " vs " + std::to_string(count(s)) + " kernels"));
  }
  return rows;
}

std::string fixed(double v, int decimals) { return fixed_text(v, decimals); }

// At most kShownSteps numbers, then how many more: a trace of 30,000 steps of which three held
// kernels printed a note of 199 KB.
constexpr std::size_t kShownSteps = 10;

std::string join(const std::vector<std::int64_t>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < kShownSteps; ++i) {
    if (!out.empty()) out += ", ";
    out += std::to_string(v[i]);
  }
  if (v.size() > kShownSteps) {
    out += " and ";
    out += std::to_string(v.size() - kShownSteps);
    out += " more";
  }
  return out.empty() ? "none" : out;
}

std::string rank_text(const io::KinetoTrace& t) {
  const std::string world = t.world_size ? " of " + std::to_string(*t.world_size) : std::string();
  if (!t.rank) {
    return t.world_size ? "rank unknown" + world + " (distributedInfo has no rank)"
                        : "rank unknown (no distributedInfo)";
  }
  return "rank " + std::to_string(*t.rank) + world;
}

void write_table(std::ostream& out, const parallel::Scenario& s, const io::KinetoTrace& t,
                 const io::TraceSummary& sum, std::int64_t stage, const report::Report& r,
                 const std::vector<Row>& rows) {
  const auto& p = s.parallel;
  out << "trace        " << io::escape_control(t.source) << ": " << rank_text(t)
      << "; one rank's GPU, compared with "
      << "simulated stage " << stage << (stage == r.critical_stage ? " (the critical one)" : "")
      << "\n"
      << "steps        averaged " << join(sum.used) << "; skipped " << join(sum.skipped)
      << (sum.skipped.empty() ? "" : " (warm-up)")
      << (sum.empty.empty() ? "" : "; without kernels " + join(sum.empty)) << "\n"
      << "kernels      " << static_cast<std::int64_t>(t.kernels.size()) - t.num_copies_and_fills
      << (t.num_copies_and_fills > 0
              ? " and " + std::to_string(t.num_copies_and_fills) + " copies and fills"
              : std::string())
      << " on " << t.num_streams << " streams; to steps by correlation " << t.num_by_correlation
      << ", by time " << t.num_by_time << ", unassigned " << t.num_unassigned << "\n"
      << "scenario     " << io::shown_name(s.model_name, s.model_inline) << " on " << s.gpus
      << " x " << io::shown_name(s.hardware_name, s.hardware_inline) << ", tp " << p.tp << ", pp "
      << p.pp << ", cp " << p.cp << ", dp " << p.dp << "\n\n";
  std::array<char, 512> line{};
  std::snprintf(line.data(), line.size(), "%-34s %11s %11s %11s %9s  %s\n", "per iteration",
                "measured", "simulated", "difference", "diff %", "");
  out << line.data();
  bool categories_header = false;
  bool collectives_header = false;
  for (const Row& x : rows) {
    if (x.key.starts_with("category.") && !categories_header) {
      out << "busy time by kernel category (union over streams)\n";
      categories_header = true;
    }
    if (x.key.starts_with("collective.") && !collectives_header) {
      out << "busy time by collective op\n";
      collectives_header = true;
    }
    const std::string m = x.measured ? to_string(*x.measured) : "n/a";
    const std::string sim = x.simulated ? to_string(*x.simulated) : "n/a";
    std::string diff = "n/a";
    std::string pct = "n/a";
    if (x.measured && x.simulated) {
      const Seconds d = *x.simulated - *x.measured;
      diff = (d.value() > 0.0 ? "+" : "") + to_string(d);
      if (x.measured->value() > 0.0) {
        const double f = d / *x.measured;
        pct = (f > 0.0 ? "+" : "") + fixed(100.0 * f, 1) + "%";
      }
    }
    std::snprintf(line.data(), line.size(), "%-34s %11s %11s %11s %9s  %s\n", x.label.c_str(),
                  m.c_str(), sim.c_str(), diff.c_str(), pct.c_str(), x.note.c_str());
    out << line.data();
  }
  out << "\ndifference = simulated - measured; % of measured. Busy times are unions of kernel "
         "intervals; exposed communication runs while no other kernel does.\n";
}

nlohmann::json seconds_or_null(const std::optional<Seconds>& v) {
  return v ? nlohmann::json(v->value()) : nlohmann::json(nullptr);
}

nlohmann::json breakdown_json(const report::StepBreakdown& b) {
  auto time = [](const report::CategoryTime& t) {
    return nlohmann::json{{"busy_s", t.busy.value()},
                          {"kernel_sum_s", t.kernel_sum.value()},
                          {"kernels", t.num_kernels}};
  };
  nlohmann::json categories = nlohmann::json::object();
  for (const auto& [c, t] : b.categories) categories[std::string(report::to_string(c))] = time(t);
  nlohmann::json collectives = nlohmann::json::object();
  for (const auto& [op, t] : b.collectives) collectives[op] = time(t);
  return {{"iteration_time_s", b.cpu_duration.value()},
          {"span_s", b.span.value()},
          {"kernels", b.num_kernels},
          {"busy_s", b.busy.value()},
          {"compute_s", b.compute.value()},
          {"compute_kernel_sum_s", b.compute_kernel_sum.value()},
          {"communication_s", b.communication.value()},
          {"communication_kernel_sum_s", b.communication_kernel_sum.value()},
          {"overlapped_communication_s", b.overlapped_communication.value()},
          {"exposed_communication_s", b.exposed_communication.value()},
          {"idle_s", b.idle.value()},
          {"categories", categories},
          {"collectives", collectives}};
}

nlohmann::json compare_json(const parallel::Scenario& s, const io::KinetoTrace& t,
                            const io::TraceSummary& sum, std::int64_t stage,
                            const report::Report& r, const report::StepBreakdown& sim,
                            const std::vector<Row>& rows) {
  nlohmann::json context = io::scenario_context(s);
  nlohmann::json out_rows = nlohmann::json::array();
  for (const Row& x : rows) {
    nlohmann::json j = {{"metric", x.key},
                        {"measured_s", seconds_or_null(x.measured)},
                        {"simulated_s", seconds_or_null(x.simulated)},
                        {"difference_s", nullptr},
                        {"difference_fraction", nullptr}};
    if (x.measured && x.simulated) {
      const Seconds d = *x.simulated - *x.measured;
      j["difference_s"] = d.value();
      if (x.measured->value() > 0.0) j["difference_fraction"] = d / *x.measured;
    }
    if (!x.note.empty()) j["note"] = x.note;
    out_rows.push_back(std::move(j));
  }
  nlohmann::json per_step = nlohmann::json::array();
  for (const auto& b : t.step_breakdowns) {
    nlohmann::json j = breakdown_json(b);
    j["step"] = b.step;
    per_step.push_back(std::move(j));
  }
  return {{"context", context},
          {"scenario", io::report_to_json(s, r)["scenario"]},
          {"trace",
           {{"file", t.source},
            {"rank", t.rank ? nlohmann::json(*t.rank) : nlohmann::json(nullptr)},
            {"world_size", t.world_size ? nlohmann::json(*t.world_size) : nlohmann::json(nullptr)},
            {"note", "one rank's trace"},
            {"devices", t.devices},
            {"streams", t.streams},
            {"kernels", static_cast<std::int64_t>(t.kernels.size()) - t.num_copies_and_fills},
            {"copies_and_fills", t.num_copies_and_fills},
            {"stream_count", t.num_streams},
            {"kernels_by_correlation", t.num_by_correlation},
            {"kernels_by_time", t.num_by_time},
            {"kernels_unassigned", t.num_unassigned},
            {"steps_used", sum.used},
            {"steps_skipped", sum.skipped},
            {"steps_without_kernels", sum.empty}}},
          {"stage", stage},
          {"critical_stage", r.critical_stage},
          {"rows", out_rows},
          {"measured", breakdown_json(sum.mean)},
          {"measured_steps", per_step},
          {"simulated", breakdown_json(sim)}};
}

int compare(const CompareOptions& o) {
  // Checked here rather than by CLI11 so that every bad input is one "error: ..." line.
  if (o.trace.empty()) {
    throw ConfigError(
        "--trace: missing; expected a PyTorch profiler trace of one rank, as in `trainsim "
        "compare scenario.json --trace rank0.pt.trace.json`");
  }
  if (o.format != "table" && o.format != "json") {
    throw ConfigError("--format: unknown format '" + o.format + "'; expected table or json");
  }
  if (o.steps != "skip-first" && o.steps != "all") {
    throw ConfigError("--steps: unknown value '" + o.steps + "'; expected skip-first or all");
  }
  // Bad input (a scenario or a trace that cannot be read) is named before a plan that cannot
  // run (exit 2 before 3, docs/compare.md): a plan error waits until the trace is read.
  std::optional<parallel::Scenario> loaded;
  std::exception_ptr plan_error;
  try {
    loaded = load_scenario(o.scenario);
    require_simulable_plan(o.scenario, *loaded);
    require_bounded_full_simulation(*loaded, "compare");
  } catch (const PlanError&) {
    plan_error = std::current_exception();
  }
  // The stage is the command line's to get right: named before the trace is read and the plan
  // simulated (it came last, below the notes those print).
  if (o.stage && loaded && (*o.stage < 0 || *o.stage >= loaded->parallel.pp)) {
    throw ConfigError("command line (--stage)", "",
                      "no such pipeline stage; expected 0 to " +
                          std::to_string(loaded->parallel.pp - 1) + ", got " +
                          std::to_string(*o.stage));
  }
  const io::KinetoTrace trace = io::read_kineto_trace(o.trace);
  if (plan_error) std::rethrow_exception(plan_error);
  const parallel::Scenario s = std::move(*loaded);
  // A trace of a job of another size is compared all the same (a rank's kernels are what they
  // are), but its communication ran on other groups: say so.
  if (trace.world_size && *trace.world_size != s.gpus) {
    std::cerr << "note: " << io::escape_control(o.trace) << " was recorded in a job of "
              << *trace.world_size << " ranks (distributedInfo.world_size); the scenario has "
              << s.gpus << " GPUs, so its collectives run on other groups\n";
  }
  // Kernels of several GPUs are read as one timeline (docs/compare.md), which sums their work
  // against one simulated GPU: say so where the table would not.
  if (trace.devices.size() > 1) {
    std::string list;
    for (const std::int64_t d : trace.devices)
      list += (list.empty() ? "" : ", ") + std::to_string(d);
    std::cerr << "note: " << io::escape_control(o.trace) << " holds kernels of "
              << trace.devices.size() << " GPUs (devices " << list
              << "), read as one timeline against one simulated GPU; expected one rank's trace "
                 "(docs/compare.md)\n";
  }
  if (trace.duplicate_gpu_events > 0) {
    std::cerr << "note: " << io::escape_control(o.trace) << ": "
              << counted(trace.duplicate_gpu_events, "GPU event")
              << " recorded twice (the same name, category, device, stream, start, "
                 "duration and correlation) were read once: one stream runs one kernel at a "
                 "time (docs/compare.md)\n";
  }
  // A Unix-epoch clock in microseconds (older traces) reads each time to 0.25 us, a share of a
  // short kernel: said where coarser than 10 ns (Kineto writes nanoseconds; a trace relative to
  // baseTimeNanoseconds reads to 1 to 2 ns).
  if (trace.timestamp_resolution_us > 0.01) {
    char resolution[32];
    (void)std::snprintf(resolution, sizeof resolution, "%g", trace.timestamp_resolution_us);
    std::cerr << "note: " << io::escape_control(o.trace)
              << ": its timestamps are large (absolute microseconds?) and read as doubles to "
              << resolution << " us: kernel times and gaps are that coarse (docs/compare.md)\n";
  }
  if (trace.skipped_gpu_events > 0) {
    std::cerr << "note: " << io::escape_control(o.trace) << ": "
              << counted(trace.skipped_gpu_events, "GPU event")
              << " (cat kernel, memcpy or memset) that are not complete (\"ph\": "
                 "\"X\") events were skipped; compare reads complete events only, as Kineto "
                 "writes them (docs/compare.md)\n";
  }
  if (trace.skipped_step_events > 0) {
    std::cerr << "note: " << io::escape_control(o.trace) << ": "
              << counted(trace.skipped_step_events, "event")
              << " named ProfilerStep#N that are not complete (\"ph\": \"X\") events of "
                 "cat user_annotation or cpu_op were not read as steps (docs/compare.md)\n";
  }
  const io::TraceSummary sum = io::summarize(
      trace, o.steps == "all" ? io::StepSelection::All : io::StepSelection::SkipFirst);
  if (!sum.empty.empty()) {
    std::cerr << "note: " << io::escape_control(o.trace) << ": profiler step"
              << (sum.empty.size() > 1 ? "s " : " ") << join(sum.empty)
              << (sum.empty.size() > 1 ? " hold" : " holds")
              << " no GPU kernel (a trace cut short, or kernels launched outside the step?) and "
              << (sum.empty.size() > 1 ? "are" : "is") << " left out of the average\n";
  }
  // The kernel breakdown reads every op of the timeline: simulate the whole iteration.
  const report::Simulation sim = report::simulate(
      s, report::SimulateOptions{.build = {}, .mode = report::SimulationMode::Full});
  const report::Report& r = sim.report;
  // Timings of a plan that cannot run, set beside a real trace: said, as `run` says it.
  warn_unfit(r.memory, s.parallel.pp, std::cerr);
  // A --stage was checked against pp before the trace was read.
  const std::int64_t stage = o.stage.value_or(r.critical_stage);
  const report::StepBreakdown simulated = report::simulated_breakdown(sim, stage);
  const std::vector<Row> rows = rows_of(sum.mean, simulated, r, stage);
  if (o.format == "json") {
    std::cout << compare_json(s, trace, sum, stage, r, simulated, rows).dump(2) << '\n';
  } else {
    write_table(std::cout, s, trace, sum, stage, r, rows);
  }
  return 0;
}

}  // namespace

void register_compare(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* c = app.add_subcommand(
      "compare", "Compare a PyTorch profiler trace of one rank with the simulated scenario");
  add_scenario_flags(*c, options->scenario);
  c->add_option("--trace", options->trace,
                "Chrome-trace JSON of one rank from torch.profiler (export_chrome_trace or "
                "tensorboard_trace_handler), uncompressed (required)");
  c->add_option("--format", options->format, "table | json");
  c->add_option("--steps", options->steps,
                "Profiler steps to average: skip-first (default: drop the warm-up step) | all");
  c->add_option("--stage", options->stage,
                "Pipeline stage the traced rank runs (default: the critical stage)");
  c->callback([options, &exit_code]() { exit_code = compare(*options); });
}

}  // namespace trainsim::cli
