#include "sim/validation/validation_writer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "sim/io/json_reader.hpp"
#include "sim/io/report_writer.hpp"
#include "sim/io/sweep_writer.hpp"

namespace trainsim::validation {
namespace {

// `v` with `decimals` decimals, or three significant digits where those would show a value
// above zero as 0 (a measured 0.001 TFLOP/s printed "0.0 TFLOP/s" beside an error of
// +14184735.0%).
std::string fixed(double v, int decimals) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*f", decimals, v);
  if (v > 0.0 && std::strtod(buf.data(), nullptr) == 0.0) {
    std::snprintf(buf.data(), buf.size(), "%.3g", v);
  }
  return buf.data();
}

std::string signed_percent(double fraction) {
  // A value that rounds to 0.0% prints "+0.0%", never "-0.0%".
  return signed_fixed_text(100.0 * fraction, 1) + "%";
}

std::string percent(double fraction) { return fixed(100.0 * fraction, 1) + "%"; }

// A metric value with its unit, for the table.
std::string metric_text(Metric m, double v) {
  switch (m) {
    case Metric::TokensPerSecondPerGpu:
      return fixed(v, 0) + " tok/s";
    case Metric::IterationTime:
      return fixed(v, 3) + " s";
    case Metric::FlopRatePerGpu:
      return fixed(v / 1e12, 1) + " TFLOP/s";
    case Metric::Mfu:
    case Metric::Hfu:
      return percent(v);
  }
  return fixed(v, 3);
}

// Column label of a metric in the table.
const char* metric_label(Metric m) {
  switch (m) {
    case Metric::TokensPerSecondPerGpu:
      return "tokens/s/GPU";
    case Metric::IterationTime:
      return "iteration time";
    case Metric::FlopRatePerGpu:
      return "TFLOP/s/GPU";
    case Metric::Mfu:
      return "MFU";
    case Metric::Hfu:
      return "HFU";
  }
  return "";
}

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}
std::string pad_left(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// A CSV field as the sweep writes one (RFC 4180 quoting; control characters from a runs file,
// which can reach a skip reason, escaped).
using io::csv_field;

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

nlohmann::json plan_json(const parallel::Scenario& s) {
  const parallel::ParallelPlan& p = s.parallel;
  nlohmann::json plan = {{"gpus", s.gpus},
          {"tp", p.tp},
          {"pp", p.pp},
          {"cp", p.cp},
          {"dp", p.dp},
          {"micro_batch", s.training.micro_batch},
          {"global_batch", s.training.global_batch},
          {"virtual_stages", p.virtual_stages},
          {"pipeline_schedule", parallel::to_string(p.schedule)},
          {"sequence_parallel", p.sequence_parallel},
          {"sharding", parallel::to_string(p.sharding)},
          {"recompute", parallel::to_string(p.recompute)},
          {"precision", parallel::to_string(s.training.precision)}};
  if (p.recompute_layers > 0) plan["recompute_layers"] = p.recompute_layers;
  // What a mixture-of-experts row or a recipe's split ran, as its scenario file gives it (the
  // plan left out the experts' degree of every Megatron-Bridge MoE row).
  if (p.ep > 1) plan["ep"] = p.ep;
  if (p.account_for_embedding_in_pipeline_split) {
    plan["account_for_embedding_in_pipeline_split"] = true;
  }
  if (p.account_for_loss_in_pipeline_split) plan["account_for_loss_in_pipeline_split"] = true;
  if (!p.pipeline_layout.empty()) plan["pipeline_layout"] = p.pipeline_layout;
  return plan;
}

nlohmann::json summary_json(const Summary& s) {
  nlohmann::json j = {{"source", s.source}, {"compared", s.compared}, {"skipped", s.skipped}};
  if (s.compared > 0) {
    j["mape_fraction"] = s.mape;
    j["bias_fraction"] = s.bias;
  } else {
    j["mape_fraction"] = nullptr;
    j["bias_fraction"] = nullptr;
  }
  return j;
}

}  // namespace

std::string choices_text(const SearchedChoices& c) {
  std::vector<std::string> parts;
  if (c.micro_batch) parts.push_back("micro_batch=" + std::to_string(*c.micro_batch));
  if (c.virtual_stages) parts.push_back("virtual_stages=" + std::to_string(*c.virtual_stages));
  if (c.recompute) parts.push_back(std::string("recompute=") + parallel::to_string(*c.recompute));
  if (parts.empty()) return "-";
  return join(parts, " ") + " (" + std::to_string(c.fitting) + "/" + std::to_string(c.candidates) +
         " fit)";
}

nlohmann::json validation_to_json(const ValidationReport& report, const RunsInfo& info) {
  nlohmann::json context = io::report_context();
  context["runs"] = info.runs;
  context["rows_in_file"] = info.rows_in_file;
  context["source_filter"] = info.source_filter;
  nlohmann::json rows = nlohmann::json::array();
  for (const RowResult& r : report.rows) {
    nlohmann::json j = {{"index", r.index},
                        {"id", r.id},
                        {"source", r.source},
                        {"source_group", r.source_group},
                        {"status", r.compared ? "compared" : "skipped"}};
    if (!r.compared) {
      j["reason"] = r.skip_reason;
      // What the mapping assumed before the row was skipped, as the CSV gives it.
      j["assumptions"] = r.assumptions;
      rows.push_back(std::move(j));
      continue;
    }
    j["metric"] = to_string(r.metric);
    j["flop_convention"] = to_string(r.convention);
    j["predicted"] = r.predicted;
    j["measured"] = r.measured;
    j["error_fraction"] = r.error;
    j["hardware"] = r.hardware;
    j["stack"] = r.stack;
    j["plan"] = plan_json(r.scenario);
    nlohmann::json searched = nlohmann::json::object();
    if (r.choices.micro_batch) searched["micro_batch"] = *r.choices.micro_batch;
    if (r.choices.virtual_stages) searched["virtual_stages"] = *r.choices.virtual_stages;
    if (r.choices.recompute) searched["recompute"] = parallel::to_string(*r.choices.recompute);
    j["searched"] = searched;
    j["candidates"] = r.choices.candidates;
    j["candidates_fitting"] = r.choices.fitting;
    j["fits"] = r.fits;
    j["assumptions"] = r.assumptions;
    rows.push_back(std::move(j));
  }
  nlohmann::json sources = nlohmann::json::array();
  for (const Summary& s : report.sources) sources.push_back(summary_json(s));
  return {{"context", context},
          {"rows", rows},
          {"sources", sources},
          {"overall", summary_json(report.overall)}};
}

std::string validation_to_csv(const ValidationReport& report) {
  std::ostringstream out;
  out << "kind,index,id,source,status,metric,predicted,measured,error_fraction,micro_batch,"
         "virtual_stages,recompute,searched,fits,compared,skipped,mape_fraction,bias_fraction,"
         "reason,assumptions\n";
  for (const RowResult& r : report.rows) {
    out << "row," << r.index << ',' << csv_field(r.id) << ',' << csv_field(r.source) << ','
        << (r.compared ? "compared" : "skipped") << ',';
    if (r.compared) {
      const parallel::Scenario& s = r.scenario;
      out << to_string(r.metric) << ',' << io::format_number(r.predicted) << ','
          << io::format_number(r.measured) << ',' << io::format_number(r.error) << ','
          << s.training.micro_batch << ',' << s.parallel.virtual_stages << ','
          << parallel::to_string(s.parallel.recompute) << ',' << csv_field(choices_text(r.choices))
          << ',' << (r.fits ? "true" : "false") << ",,,,,," << csv_field(join(r.assumptions, "; "))
          << '\n';
    } else {
      out << ",,,,,,,,,,,,," << csv_field(r.skip_reason) << ','
          << csv_field(join(r.assumptions, "; ")) << '\n';
    }
  }
  auto summary_row = [&out](const char* kind, const Summary& s) {
    out << kind << ",,," << csv_field(s.source) << ",,,,,,,,,,," << s.compared << ',' << s.skipped
        << ',' << (s.compared > 0 ? io::format_number(s.mape) : "") << ','
        << (s.compared > 0 ? io::format_number(s.bias) : "") << ",,\n";
  };
  for (const Summary& s : report.sources) summary_row("source", s);
  summary_row("overall", report.overall);
  return out.str();
}

void write_validation_table(std::ostream& out, const ValidationReport& report,
                            const RunsInfo& info) {
  std::int64_t compared = 0;
  std::size_t id_width = 2, source_width = 6;
  for (const RowResult& r : report.rows) {
    if (r.compared) ++compared;
    id_width = std::max(id_width, r.id.size());
    source_width = std::max(source_width, r.source.size());
  }
  out << "trainsim validate: " << report.rows.size() << " of " << info.rows_in_file
      << " published runs in " << info.runs;
  if (!info.source_filter.empty())
    out << " (source or source_group contains \"" << info.source_filter << "\")";
  for (const auto& [id, file] : info.stack_files) {
    out << "\nstack '" << id << "' replaced by " << file << " (--stack)";
  }
  out << "\nerror = predicted / measured - 1 in throughput terms (+: the simulator is faster)\n\n";

  out << pad("id", id_width) << "  " << pad("source", source_width) << "  " << pad("metric", 14)
      << "  " << pad_left("predicted", 14) << "  " << pad_left("measured", 14) << "  "
      << pad_left("error", 7) << "  searched\n";
  for (const RowResult& r : report.rows) {
    if (!r.compared) continue;
    std::string searched = choices_text(r.choices);
    if (!r.fits) searched += " [does not fit in memory]";
    out << pad(r.id, id_width) << "  " << pad(r.source, source_width) << "  "
        << pad(metric_label(r.metric), 14) << "  "
        << pad_left(metric_text(r.metric, r.predicted), 14) << "  "
        << pad_left(metric_text(r.metric, r.measured), 14) << "  "
        << pad_left(signed_percent(r.error), 7) << "  " << searched << '\n';
  }
  const auto skipped = static_cast<std::int64_t>(report.rows.size()) - compared;
  out << "\nskipped: " << skipped << " rows\n";
  for (const RowResult& r : report.rows) {
    if (!r.compared)
      out << pad(r.id, id_width) << "  " << io::escape_control(r.skip_reason) << '\n';
  }
  out << '\n'
      << pad("source", std::max<std::size_t>(source_width, 7)) << "  " << pad_left("compared", 8)
      << "  " << pad_left("skipped", 7) << "  " << pad_left("MAPE", 7) << "  "
      << pad_left("bias", 7) << '\n';
  auto line = [&](const Summary& s) {
    out << pad(s.source, std::max<std::size_t>(source_width, 7)) << "  "
        << pad_left(std::to_string(s.compared), 8) << "  " << pad_left(std::to_string(s.skipped), 7)
        << "  " << pad_left(s.compared > 0 ? percent(s.mape) : "-", 7) << "  "
        << pad_left(s.compared > 0 ? signed_percent(s.bias) : "-", 7) << '\n';
  };
  for (const Summary& s : report.sources) line(s);
  line(report.overall);
}

}  // namespace trainsim::validation
