#include "sim/io/sweep_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/io/report_writer.hpp"
#include "sim/io/scenario_loader.hpp"
#include "trainsim/error.hpp"
#include "trainsim/parallel/placement.hpp"

namespace trainsim::io {
namespace {

constexpr const char* kColumns[] = {
    "index", "hardware", "model", "gpus", "nodes", "tp", "pp", "cp", "dp", "micro_batch",
    "global_batch", "seq_len", "precision", "optimizer", "sharding", "shard_group", "schedule",
    "virtual_stages", "recompute", "sequence_parallel",
    // metrics
    "iteration_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu", "hfu",
    "compute_s", "communication_s", "exposed_communication_s", "bubble_s", "memory_total_bytes",
    "fits", "watts_per_gpu", "cluster_watts", "energy_per_iteration_j", "tokens_per_joule",
    "usd_per_million_tokens", "status",
    // appended after the first release's columns, so that positions stay as they were
    "stack"};

// RFC 4180: quote a field holding a comma, a quote or a line break; double inner quotes. Line
// breaks become spaces so that every row stays one line (merge relies on it).
std::string csv_field(std::string_view text) {
  std::string s(text);
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// The index a merged line starts with: `N,` for CSV, `{"index":N,` for JSON lines.
std::optional<std::int64_t> leading_index(std::string_view line, SweepFormat format) {
  std::string_view rest = line;
  if (format == SweepFormat::JsonLines) {
    constexpr std::string_view kPrefix = "{\"index\":";
    if (rest.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
    rest.remove_prefix(kPrefix.size());
  }
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  if (ec != std::errc() || ptr == rest.data() || v < 0) return std::nullopt;
  const char next = ptr == rest.data() + rest.size() ? '\0' : *ptr;
  if (next != ',' && !(format == SweepFormat::JsonLines && next == '}')) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

}  // namespace

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

std::string progress_text(std::int64_t done, std::int64_t total, double elapsed_s) {
  constexpr int kWidth = 30;
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar = "\r[" + std::string(static_cast<std::size_t>(filled), '#') +
                    std::string(static_cast<std::size_t>(kWidth - filled), '.') + "] " +
                    std::to_string(done) + "/" + std::to_string(total);
  char tail[64];
  const double eta = done > 0 ? elapsed_s * static_cast<double>(total - done) / static_cast<double>(done) : 0.0;
  std::snprintf(tail, sizeof tail, " %5.1f%%  ETA %.0f s ", 100.0 * fraction, eta);
  return bar + tail;
}

std::string csv_header() {
  std::string out;
  for (const char* c : kColumns) out += std::string(out.empty() ? "" : ",") + c;
  return out + "\n";
}

std::string csv_row(std::int64_t index, const parallel::Scenario& s,
                    const sweep::Evaluation& e) {
  const parallel::ParallelPlan& p = s.parallel;
  std::vector<std::string> f = {
      std::to_string(index),
      csv_field(s.hardware_name),
      csv_field(s.model_name),
      std::to_string(s.gpus),
      std::to_string(s.nodes()),
      std::to_string(p.tp),
      std::to_string(p.pp),
      std::to_string(p.cp),
      std::to_string(p.dp),
      std::to_string(s.training.micro_batch),
      std::to_string(s.training.global_batch),
      std::to_string(s.training.seq_len),
      parallel::to_string(s.training.precision),
      parallel::to_string(s.training.optimizer),
      parallel::to_string(p.sharding),
      p.sharding == parallel::Sharding::HybridShard && e.status != sweep::Status::Invalid
          ? std::to_string(parallel::hybrid_shard_size(s))
          : "",
      parallel::to_string(p.schedule),
      std::to_string(p.virtual_stages),
      parallel::to_string(p.recompute),
      p.sequence_parallel ? "true" : "false"};
  if (e.report) {
    const report::Report& r = *e.report;
    for (const double v :
         {r.iteration_time.value(), r.tokens_per_s, r.tokens_per_s_per_gpu,
          r.model_flops_per_gpu.value() / 1e12, r.mfu, r.hfu, r.compute.value(),
          r.communication.value(), r.exposed_communication.value(), r.bubble.value(),
          r.memory.total.value()}) {
      f.push_back(format_number(v));
    }
    f.emplace_back(r.memory.fits ? "true" : "false");
    for (const double v : {r.power.per_gpu.value(), r.power.cluster.value(),
                           r.power.energy_per_iteration.value(), r.power.tokens_per_joule,
                           r.cost.usd_per_million_tokens}) {
      f.push_back(format_number(v));
    }
  } else {
    for (int i = 0; i < 10; ++i) f.emplace_back();
    const bool has_memory = e.status == sweep::Status::OutOfMemory;
    f.push_back(has_memory ? format_number(e.memory.total.value()) : "");
    f.emplace_back(has_memory ? "false" : "");
    for (int i = 0; i < 5; ++i) f.emplace_back();
  }
  f.push_back(csv_field(e.status_text()));
  f.push_back(csv_field(s.stack_name));
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) out += (i == 0 ? "" : ",") + f[i];
  return out + "\n";
}

std::string json_line(std::int64_t index, const parallel::Scenario& s,
                      const sweep::Evaluation& e) {
  nlohmann::ordered_json line;
  line["index"] = index;
  line["scenario"] = scenario_to_json(s);
  line["status"] = e.status_text();
  if (e.report) {
    const nlohmann::json r = report_to_json(s, *e.report);
    for (const auto& [key, value] : r.items()) {
      if (key != "context" && key != "scenario") line[key] = value;
    }
  } else if (e.status == sweep::Status::OutOfMemory) {
    line["memory"] = memory_to_json(e.memory);
  }
  return line.dump() + "\n";
}

std::string merge_outputs(const std::vector<SweepOutput>& outputs,
                          std::optional<std::int64_t> expected) {
  if (outputs.empty()) throw ConfigError("merge", "", "no inputs; expected one or more files");
  // The format of the first non-empty file decides; JSON lines start with '{'.
  std::optional<SweepFormat> format;
  std::string header;
  std::string header_source;
  std::map<std::int64_t, std::pair<std::string_view, const SweepOutput*>> rows;
  for (const SweepOutput& o : outputs) {
    const std::vector<std::string_view> lines = split_lines(o.text);
    if (lines.empty()) continue;
    const SweepFormat this_format =
        lines.front().substr(0, 1) == "{" ? SweepFormat::JsonLines : SweepFormat::Csv;
    if (format && *format != this_format) {
      throw ConfigError(o.source, "", std::string("format differs from the other inputs; expected ") +
                                          (*format == SweepFormat::Csv ? "CSV" : "JSON lines") +
                                          ", got " +
                                          (this_format == SweepFormat::Csv ? "CSV" : "JSON lines"));
    }
    format = this_format;
    std::size_t first_row = 0;
    if (this_format == SweepFormat::Csv) {
      const std::string h(lines.front());
      if (h.rfind("index,", 0) != 0) {
        throw ConfigError(o.source, "line 1",
                          "not a sweep CSV header; expected a header starting with 'index,', "
                          "got '" + h.substr(0, 40) + "'");
      }
      if (header_source.empty()) {
        header = h;
        header_source = o.source;
      } else if (h != header) {
        throw ConfigError(o.source, "line 1",
                          "CSV header differs from " + header_source +
                              "'s; expected the same columns from the same trainsim version, got "
                              "a different header");
      }
      first_row = 1;
    }
    for (std::size_t i = first_row; i < lines.size(); ++i) {
      if (lines[i].empty()) continue;
      const std::string where = "line " + std::to_string(i + 1);
      const std::optional<std::int64_t> index = leading_index(lines[i], this_format);
      if (!index) {
        throw ConfigError(o.source, where,
                          std::string("row without an index; expected a line starting with ") +
                              (this_format == SweepFormat::Csv ? "'<index>,'"
                                                               : "'{\"index\":<index>,'") +
                              ", got '" + std::string(lines[i].substr(0, 40)) + "'");
      }
      const auto [it, inserted] = rows.emplace(*index, std::make_pair(lines[i], &o));
      if (!inserted) {
        throw ConfigError(o.source, where,
                          "duplicate row " + std::to_string(*index) + ", also in " +
                              it->second.second->source + "; expected each index once");
      }
    }
  }
  if (!format) {
    throw ConfigError("merge", "",
                      "every input is empty; expected the CSV or JSON-lines output of trainsim "
                      "sweep");
  }
  const std::int64_t count = expected.value_or(rows.empty() ? 0 : rows.rbegin()->first + 1);
  std::int64_t next = 0;
  for (const auto& [index, row] : rows) {
    if (index != next || index >= count) {
      const std::int64_t missing = index != next ? next : index;
      throw ConfigError(
          "merge", "",
          index != next ? "missing row " + std::to_string(missing) +
                              "; expected every index from 0 to " + std::to_string(count - 1) +
                              " (is a shard missing?)"
                        : "row " + std::to_string(index) + " beyond the expected " +
                              std::to_string(count) + " rows; expected indices below " +
                              std::to_string(count));
    }
    ++next;
  }
  if (next < count) {
    throw ConfigError("merge", "", "missing row " + std::to_string(next) +
                                       "; expected every index from 0 to " +
                                       std::to_string(count - 1) + " (is a shard missing?)");
  }
  std::string out;
  if (format == SweepFormat::Csv) out += header + "\n";
  for (const auto& [index, row] : rows) {
    out += row.first;
    out += '\n';
  }
  return out;
}

}  // namespace trainsim::io
