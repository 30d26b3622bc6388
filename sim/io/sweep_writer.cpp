#include "sim/io/sweep_writer.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "trainsim/error.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/sweep/evaluate.hpp"
#include "trainsim/sweep/shard.hpp"

#include "sim/io/json_reader.hpp"
#include "sim/io/report_writer.hpp"
#include "sim/io/scenario_loader.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace trainsim::io {

const std::map<std::string, ReportValue>& report_json_keys() {
  using enum ReportValue;
  static const std::map<std::string, ReportValue> keys = {{"iteration_time_s", Metric},
                                                          {"tokens_per_s", Metric},
                                                          {"tokens_per_s_per_gpu", Metric},
                                                          {"model_flops_per_token", Metric},
                                                          {"tflops_per_gpu", Metric},
                                                          {"mfu", Metric},
                                                          {"mfu_bf16", Metric},
                                                          {"hfu", Metric},
                                                          {"compute_s", Metric},
                                                          {"communication_s", Metric},
                                                          {"exposed_communication_s", Metric},
                                                          {"bubble_s", Metric},
                                                          {"host_overhead_s", Metric},
                                                          {"critical_stage", Count},
                                                          {"memory", Object},
                                                          {"power", Object},
                                                          {"cost", Object},
                                                          {"collectives", Rows},
                                                          {"stages", Rows}};
  return keys;
}

namespace {

// The keys report_to_json writes, read off a report of one stage and one collective (every
// entry of a kind has the same keys), so that the check cannot drift from the writer.
const nlohmann::json& report_template() {
  static const nlohmann::json shape = [] {
    parallel::Scenario s;
    s.hardware.node.gpus_per_node = 1;  // nodes() divides by it
    report::Report r;
    r.stages.emplace_back();
    r.collectives.emplace_back();
    return report_to_json(s, r);
  }();
  return shape;
}

// Why object `value` at `at` lacks a key of `shape` or has one it lacks; nested objects alike.
std::optional<std::string> same_keys(const nlohmann::json& value, const nlohmann::json& shape,
                                     const std::string& at) {
  if (!value.is_object()) return "'" + at + "' is not an object; expected an object";
  for (const auto& [k, v] : value.items()) {
    const auto it = shape.find(k);
    if (it == shape.end()) {
      return "unknown key '" + at + "." + k.substr(0, 40) +
             "'; expected only the keys trainsim writes there";
    }
    if (it->is_object()) {
      if (auto p = same_keys(v, *it, at + "." + k)) return p;
    }
  }
  for (const auto& [k, v] : shape.items()) {
    if (!value.contains(k)) {
      return "'" + at + "." + k + "' missing; expected every key of '" + at + "'";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> report_keys_problem(const nlohmann::json& value,
                                               const std::string& key) {
  const nlohmann::json& shape = report_template().at(key);
  if (!shape.is_array()) return same_keys(value, shape, key);
  if (!value.is_array()) return "'" + key + "' is not an array; expected an array";
  for (const nlohmann::json& entry : value) {
    if (auto p = same_keys(entry, shape.front(), key + "[]")) return p;
  }
  return std::nullopt;
}

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
    "stack", "mfu_bf16",
    // expert-parallel degree (1 for dense models), appended for the same reason
    "ep",
    // layers of each model chunk recomputed under recompute "full" (0: all), likewise
    "recompute_layers",
    // hosts of each NVLink domain the job fills (cluster.nodes_per_domain, else all), likewise
    "nodes_per_domain"};

}  // namespace

// RFC 4180: quote a field holding a comma, a quote or a line break; double inner quotes. Line
// breaks become spaces so that every row stays one line (merge relies on it); other control
// characters (a name read from a file) are escaped as JSON escapes them.
std::string csv_field(std::string_view text) {
  std::string s(text);
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  s = escape_control(s);
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {

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
  // The writer prints no sign and no leading zero ("01" or "-0" is an edit, and would be merged
  // as written).
  if (rest[0] < '0' || rest[0] > '9' || (rest[0] == '0' && ptr != rest.data() + 1)) {
    return std::nullopt;
  }
  const char next = ptr == rest.data() + rest.size() ? '\0' : *ptr;
  if (next != ',' && !(format == SweepFormat::JsonLines && next == '}')) return std::nullopt;
  return v;
}

// Fields of one CSV line, counting quoted fields (RFC 4180) as one; nullopt when a quote is
// left open (a row cut inside a quoted field).
std::optional<std::size_t> csv_field_count(std::string_view line) {
  std::size_t fields = 1;
  bool quoted = false;
  for (const char c : line) {
    if (c == '"') {
      quoted = !quoted;  // a doubled quote toggles twice
    } else if (c == ',' && !quoted) {
      ++fields;
    }
  }
  if (quoted) return std::nullopt;
  return fields;
}

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string shard_text(std::int64_t k, std::int64_t n) {
  return std::to_string(k) + "/" + std::to_string(n);
}

const char* format_name(SweepFormat f) { return f == SweepFormat::Csv ? "CSV" : "JSON lines"; }

// How a complete shard output ends, for messages.
std::string end_record_example(SweepFormat f) {
  return f == SweepFormat::Csv ? "'# trainsim shard K/N of ... rows'"
                               : "'{\"trainsim_shard\":\"K/N\",...}'";
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
  const double eta =
      done > 0 ? elapsed_s * static_cast<double>(total - done) / static_cast<double>(done) : 0.0;
  std::snprintf(tail, sizeof tail, " %5.1f%%  ETA %.0f s ", 100.0 * fraction, eta);
  return bar + tail;
}

std::string csv_header() {
  std::string out;
  for (const char* c : kColumns) out += std::string(out.empty() ? "" : ",") + c;
  return out + "\n";
}

std::string csv_row(std::int64_t index, const parallel::Scenario& s, const sweep::Evaluation& e) {
  const parallel::ParallelPlan& p = s.parallel;
  // The shard group's ranks; on an invalid row the one the scenario gave (the row's axis value:
  // a group that does not divide dp is the reason it is invalid), else blank.
  const std::string shard_group = p.sharding != parallel::Sharding::HybridShard ? ""
                                  : e.status != sweep::Status::Invalid
                                      ? std::to_string(parallel::hybrid_shard_size(s))
                                  : p.shard_group > 0 ? std::to_string(p.shard_group)
                                                      : "";
  std::vector<std::string> f = {std::to_string(index),
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
                                shard_group,
                                parallel::to_string(p.schedule),
                                std::to_string(p.virtual_stages),
                                parallel::to_string(p.recompute),
                                p.sequence_parallel ? "true" : "false"};
  if (e.report) {
    const report::Report& r = *e.report;
    for (const double v :
         {r.iteration_time.value(), r.tokens_per_s, r.tokens_per_s_per_gpu,
          r.model_flops_per_gpu.value() / 1e12, r.mfu, r.hfu, r.compute.value(),
          r.communication.value(), r.exposed_communication.value(), r.bubble.value()}) {
      f.push_back(format_number(v));
    }
    f.push_back(std::to_string(byte_count(r.memory.total)));
    f.emplace_back(r.memory.fits ? "true" : "false");
    for (const double v :
         {r.power.per_gpu.value(), r.power.cluster.value(), r.power.energy_per_iteration.value(),
          r.power.tokens_per_joule, r.cost.usd_per_million_tokens}) {
      f.push_back(format_number(v));
    }
  } else {
    for (int i = 0; i < 10; ++i) f.emplace_back();
    const bool has_memory = e.status == sweep::Status::OutOfMemory;
    f.push_back(has_memory ? std::to_string(byte_count(e.memory.total)) : "");
    f.emplace_back(has_memory ? "false" : "");
    for (int i = 0; i < 5; ++i) f.emplace_back();
  }
  f.push_back(csv_field(e.status_text()));
  f.push_back(csv_field(s.stack_name));
  f.push_back(e.report ? format_number(e.report->mfu_bf16) : "");
  f.push_back(std::to_string(p.ep));
  f.push_back(std::to_string(p.recompute_layers));
  f.push_back(std::to_string(s.nodes_per_domain > 0 ? s.nodes_per_domain
                                                    : s.hardware.node.hosts_per_domain()));
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) out += (i == 0 ? "" : ",") + f[i];
  return out + "\n";
}

std::string json_line(std::int64_t index, const parallel::Scenario& s, const sweep::Evaluation& e) {
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

std::string digest_text(std::uint64_t digest) { return hex16(digest); }

std::string trailer_line(const ShardTrailer& t, SweepFormat format) {
  const std::string shard = shard_text(t.shard_index, t.shard_count);
  if (format == SweepFormat::Csv) {
    return "# trainsim shard " + shard + " of " + std::to_string(t.scenarios) +
           " scenarios, spec " + hex16(t.spec_digest) + ", " + std::to_string(t.rows) + " rows\n";
  }
  return "{\"trainsim_shard\":\"" + shard + "\",\"scenarios\":" + std::to_string(t.scenarios) +
         ",\"spec\":\"" + hex16(t.spec_digest) + "\",\"rows\":" + std::to_string(t.rows) + "}\n";
}

std::optional<ShardTrailer> parse_trailer(std::string_view line, SweepFormat format) {
  // Read the numbers loosely, then require the line to be exactly what trailer_line writes for
  // them: one strict definition of the format, in trailer_line.
  ShardTrailer t;
  long long k = 0;
  long long n = 0;
  long long scenarios = 0;
  unsigned long long digest = 0;
  long long rows = 0;
  const std::string text(line);
  const char* pattern = format == SweepFormat::Csv
                            ? "# trainsim shard %lld/%lld of %lld scenarios, spec %16llx, %lld rows"
                            : "{\"trainsim_shard\":\"%lld/"
                              "%lld\",\"scenarios\":%lld,\"spec\":\"%16llx\",\"rows\":%lld}";
  if (std::sscanf(text.c_str(), pattern, &k, &n, &scenarios, &digest, &rows) != 5) {
    return std::nullopt;
  }
  // No sweep is larger than kMaxSweepSize, and more shards than that would be empty.
  if (n < 1 || k < 0 || k >= n || n > sweep::kMaxSweepSize || scenarios < 0 ||
      scenarios > sweep::kMaxSweepSize || rows < 0) {
    return std::nullopt;
  }
  t = ShardTrailer{.shard_index = k,
                   .shard_count = n,
                   .scenarios = scenarios,
                   .spec_digest = digest,
                   .rows = rows};
  if (trailer_line(t, format) != text + "\n") return std::nullopt;
  return t;
}

namespace {

// Longest line merge reads: far above any row (a JSON line is a few KiB), far below memory; a
// sparse or binary file fails at its first line instead of being read whole.
constexpr std::size_t kMaxLineBytes = std::size_t{4} << 20;
// Read at a time from each shard, or the shard's size where smaller: merge holds every shard
// open at once, and 1 MiB each made 1,000 small shards take 1 GB.
constexpr std::size_t kReadChunkBytes = std::size_t{64} << 10;

// One merge input read line by line from its start, in bounded memory.
class LineSource {
 public:
  LineSource() = default;
  virtual ~LineSource() = default;
  LineSource(const LineSource&) = delete;
  LineSource& operator=(const LineSource&) = delete;
  LineSource(LineSource&&) = delete;
  LineSource& operator=(LineSource&&) = delete;

  [[nodiscard]] virtual const std::string& name() const = 0;
  // Starts again at the first line.
  virtual void rewind() = 0;
  // The next line without its '\n' (nor a '\r' before it), valid until the next call; nullopt
  // at the end. `terminated` says whether a '\n' ended it. Throws ConfigError for a line longer
  // than kMaxLineBytes or a read error.
  virtual std::optional<std::string_view> next(bool& terminated) = 0;
};

std::string_view strip_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

class TextSource final : public LineSource {
 public:
  explicit TextSource(const SweepOutput& output) : output_(output) {}
  [[nodiscard]] const std::string& name() const override { return output_.source; }
  void rewind() override { pos_ = 0; }
  std::optional<std::string_view> next(bool& terminated) override {
    const std::string_view text = output_.text;
    if (pos_ >= text.size()) return std::nullopt;
    const std::size_t nl = text.find('\n', pos_);
    terminated = nl != std::string_view::npos;
    const std::size_t end = terminated ? nl : text.size();
    const std::string_view line = text.substr(pos_, end - pos_);
    pos_ = end + 1;
    return strip_cr(line);
  }

 private:
  const SweepOutput& output_;
  std::size_t pos_ = 0;
};

class FileSource final : public LineSource {
 public:
  explicit FileSource(std::string path) : path_(std::move(path)) { rewind(); }
  [[nodiscard]] const std::string& name() const override { return path_; }
  void rewind() override {
    in_ = open_output_file(path_);
    buffer_.clear();
    pos_ = 0;
    eof_ = false;
    line_ = 0;
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path_, ec);
    chunk_ = ec ? kReadChunkBytes
                : static_cast<std::size_t>(std::min<std::uintmax_t>(kReadChunkBytes, size + 1));
  }
  std::optional<std::string_view> next(bool& terminated) override {
    while (true) {
      const std::size_t nl = buffer_.find('\n', pos_);
      if (nl != std::string::npos) {
        const std::string_view line(buffer_.data() + pos_, nl - pos_);
        pos_ = nl + 1;
        ++line_;
        terminated = true;
        return strip_cr(line);
      }
      if (buffer_.size() - pos_ > kMaxLineBytes) {
        throw ConfigError(path_, "line " + std::to_string(line_ + 1),
                          "line longer than " + std::to_string(kMaxLineBytes >> 20) +
                              " MiB; expected the CSV or JSON-lines output of trainsim sweep");
      }
      if (eof_) {
        if (pos_ >= buffer_.size()) return std::nullopt;
        const std::string_view line(buffer_.data() + pos_, buffer_.size() - pos_);
        pos_ = buffer_.size();
        ++line_;
        terminated = false;
        return strip_cr(line);
      }
      buffer_.erase(0, pos_);
      pos_ = 0;
      const std::size_t old = buffer_.size();
      buffer_.resize(old + chunk_);
      in_.read(buffer_.data() + old, static_cast<std::streamsize>(chunk_));
      buffer_.resize(old + static_cast<std::size_t>(in_.gcount()));
      if (in_.bad()) {
        throw ConfigError(path_, "", "cannot read the file; expected a sweep or search output");
      }
      if (in_.eof()) eof_ = true;
    }
  }

 private:
  std::string path_;
  std::ifstream in_;
  std::string buffer_;
  std::size_t chunk_ = kReadChunkBytes;
  std::size_t pos_ = 0;
  bool eof_ = false;
  std::int64_t line_ = 0;
};

// What pass 1 learns of one shard output, all checked.
struct ShardFile {
  LineSource* source = nullptr;
  ShardTrailer trailer;
};

std::string where_line(std::int64_t line) { return "line " + std::to_string(line); }

// The status a row starts its `status` with (Evaluation::status_text): "ok", or "invalid: ..."
// or "out_of_memory: ..." with the reason.
std::optional<sweep::Status> status_of(std::string_view text) {
  if (text == "ok") return sweep::Status::Ok;
  for (const sweep::Status s : {sweep::Status::Invalid, sweep::Status::OutOfMemory}) {
    const std::string prefix = std::string(sweep::to_string(s)) + ": ";
    if (text.size() > prefix.size() && text.substr(0, prefix.size()) == prefix) return s;
  }
  return std::nullopt;
}

constexpr const char* kStatusExpected = "'ok', 'invalid: <reason>' or 'out_of_memory: <reason>'";

// What each CSV column holds, as csv_row writes it. Metrics are filled for "ok" rows only; the
// memory columns for "ok" and "out_of_memory" rows.
enum class Cell { Index, Text, Word, Count, OptionalCount, Bool, Metric, Memory, Fits, Status };

constexpr Cell kColumnCells[] = {
    Cell::Index, Cell::Text, Cell::Text,
    // gpus, nodes, tp, pp, cp, dp, micro_batch, global_batch, seq_len
    Cell::Count, Cell::Count, Cell::Count, Cell::Count, Cell::Count, Cell::Count, Cell::Count,
    Cell::Count, Cell::Count,
    // precision, optimizer, sharding, shard_group, schedule, virtual_stages, recompute, sp
    Cell::Word, Cell::Word, Cell::Word, Cell::OptionalCount, Cell::Word, Cell::Count, Cell::Word,
    Cell::Bool,
    // iteration_time_s .. bubble_s
    Cell::Metric, Cell::Metric, Cell::Metric, Cell::Metric, Cell::Metric, Cell::Metric,
    Cell::Metric, Cell::Metric, Cell::Metric, Cell::Metric,
    // memory_total_bytes, fits
    Cell::Memory, Cell::Fits,
    // watts_per_gpu .. usd_per_million_tokens
    Cell::Metric, Cell::Metric, Cell::Metric, Cell::Metric, Cell::Metric,
    // status, stack, mfu_bf16, ep, recompute_layers, nodes_per_domain
    Cell::Status, Cell::Text, Cell::Metric, Cell::Count, Cell::Count, Cell::Count};
static_assert(std::size(kColumnCells) == std::size(kColumns));
constexpr std::size_t kStatusColumn = 37;
static_assert(std::string_view(kColumns[kStatusColumn]) == "status");

// The fields of a CSV line with their quotes removed (RFC 4180); the line has balanced quotes.
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

// A count as csv_row writes it (std::to_string): no sign, no leading zero ("-0" or "00005" is
// an edit, which merge would copy as written).
bool is_count(std::string_view v) {
  std::int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  return !v.empty() && ec == std::errc() && ptr == v.data() + v.size() && n >= 0 &&
         v == std::to_string(n);
}

// A metric as format_number writes it: a finite number, never negative (nor -0), in its
// shortest round-trip form (".5", "5." or "1e308" are edits).
bool is_metric(std::string_view v) {
  double x = 0.0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  return !v.empty() && ec == std::errc() && ptr == v.data() + v.size() && std::isfinite(x) &&
         x >= 0.0 && !std::signbit(x) && v == format_number(x);
}

bool is_word(std::string_view v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

// Why a CSV row (with the header's number of fields) is not one csv_row writes, or nullopt.
std::optional<std::string> csv_row_problem(std::string_view row) {
  // Names in cells (hardware, model, stack, a reason) come from checked inputs: bytes that are
  // not UTF-8 were written by something else, and merge copied them into its output.
  if (!is_valid_utf8(row)) return std::string("not valid UTF-8; expected UTF-8 text");
  const std::vector<std::string> f = csv_fields(row);
  const std::optional<sweep::Status> status = status_of(f[kStatusColumn]);
  const auto column = [&](std::size_t i) {
    return std::string("column ") + kColumns[i] + " is '" + f[i].substr(0, 40) + "'; expected ";
  };
  if (!status) return column(kStatusColumn) + kStatusExpected;
  const bool ok = *status == sweep::Status::Ok;
  const bool has_memory = ok || *status == sweep::Status::OutOfMemory;
  const std::string filled = std::string(" (an '") + sweep::to_string(*status) + "' row)";
  for (std::size_t i = 0; i < f.size(); ++i) {
    const std::string& v = f[i];
    switch (kColumnCells[i]) {
      case Cell::Index:
      case Cell::Status:
        break;  // checked by the caller and above
      case Cell::Text:
        if (v.empty()) return column(i) + "a name";
        break;
      case Cell::Word:
        if (!is_word(v)) return column(i) + "a name such as 'bf16' or 'none'";
        break;
      case Cell::Count:
        if (!is_count(v)) return column(i) + "an integer >= 0";
        break;
      case Cell::OptionalCount:
        if (!v.empty() && !is_count(v)) return column(i) + "an integer >= 0 or nothing";
        break;
      case Cell::Bool:
        if (v != "true" && v != "false") return column(i) + "true or false";
        break;
      case Cell::Metric:
        if (ok && !is_metric(v)) {
          return column(i) + "a finite number >= 0 in its shortest form" + filled;
        }
        if (!ok && !v.empty()) return column(i) + "nothing" + filled;
        break;
      case Cell::Memory:
        if (has_memory && !is_count(v)) return column(i) + "a byte count" + filled;
        if (!has_memory && !v.empty()) return column(i) + "nothing" + filled;
        break;
      case Cell::Fits:
        if (ok && v != "true" && v != "false") return column(i) + "true or false" + filled;
        if (*status == sweep::Status::OutOfMemory && v != "false") {
          return column(i) + "false" + filled;
        }
        if (!has_memory && !v.empty()) return column(i) + "nothing" + filled;
        break;
    }
  }
  // The plan's cells as the scenario they echo (io::scenario_to_json's keys; every count cell
  // holds a count, checked above): names, degrees and what the reader derives (dp, shard_group
  // for hybrid_shard only), checked once for both formats.
  const auto cell = [&f](std::string_view name) -> const std::string& {
    return f[static_cast<std::size_t>(std::find(std::begin(kColumns), std::end(kColumns), name) -
                                      std::begin(kColumns))];
  };
  const auto number = [&cell](std::string_view name) {
    return nlohmann::json(std::stoll(cell(name)));
  };
  nlohmann::json parallel = {{"tp", number("tp")},
                             {"pp", number("pp")},
                             {"cp", number("cp")},
                             {"dp", number("dp")},
                             {"ep", number("ep")},
                             {"sequence_parallel", cell("sequence_parallel") == "true"},
                             {"pipeline_schedule", cell("schedule")},
                             {"virtual_stages", number("virtual_stages")},
                             {"sharding", cell("sharding")},
                             {"recompute", cell("recompute")}};
  if (!cell("shard_group").empty()) {
    parallel["shard_group"] = number("shard_group");
  } else if (*status == sweep::Status::Invalid && cell("sharding") == "hybrid_shard") {
    parallel["shard_group"] = 1;  // csv_row leaves an invalid plan's default group blank
  }
  if (cell("recompute_layers") != "0") parallel["recompute_layers"] = number("recompute_layers");
  const nlohmann::json scenario = {{"hardware", cell("hardware")},
                                   {"model", cell("model")},
                                   {"stack", cell("stack")},
                                   {"cluster",
                                    {{"gpus", number("gpus")},
                                     {"nodes", number("nodes")},
                                     {"nodes_per_domain", number("nodes_per_domain")}}},
                                   {"training",
                                    {{"seq_len", number("seq_len")},
                                     {"global_batch", number("global_batch")},
                                     {"micro_batch", number("micro_batch")},
                                     {"precision", cell("precision")},
                                     {"optimizer", cell("optimizer")}}},
                                   {"parallel", std::move(parallel)}};
  if (const auto p = echoed_scenario_problem(scenario)) {
    std::string name = p->path.substr(p->path.rfind('.') + 1);  // the whole path when no dot
    if (name == "pipeline_schedule") name = "schedule";
    const bool has_column =
        std::find(std::begin(kColumns), std::end(kColumns), name) != std::end(kColumns);
    return has_column ? "column " + name + " is '" + cell(name).substr(0, 40) + "'; expected " +
                            p->expected
                      : p->text();
  }
  // Quoted as csv_field quotes: only a cell holding a comma or a quote. A cell quoted otherwise
  // ('"1"' for 1, '"ok"') reads as the same value, and merge copied the quotes into a file an
  // unsharded run does not write.
  std::size_t at = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const std::string written = (i > 0 ? "," : "") + csv_field(f[i]);
    if (row.substr(at, written.size()) != written) {
      return std::string("column ") + kColumns[i] + " is quoted where the sweep writes '" +
             csv_field(f[i]).substr(0, 40) + "'; expected a cell quoted only when it holds a " +
             "comma or a quote";
    }
    at += written.size();
  }
  return std::nullopt;
}

// Deepest nesting of objects and arrays in JSON text (strings skipped).
int json_depth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

bool is_json_metric(const nlohmann::json& v) { return v.is_number() && v.get<double>() >= 0.0; }

// Whether a report key holds a count, written as an integer (byte counts are whole bytes,
// io::byte_count; a collective's stage, ranks, nodes, domains and calls).
bool is_count_key(std::string_view key) {
  static constexpr std::string_view kScenarioCounts[] = {"gpus",
                                                         "nodes_per_domain",
                                                         "tp",
                                                         "pp",
                                                         "cp",
                                                         "dp",
                                                         "ep",
                                                         "shard_group",
                                                         "virtual_stages",
                                                         "recompute_layers",
                                                         "seq_len",
                                                         "global_batch",
                                                         "micro_batch"};
  return key == "bytes" || key.ends_with("_bytes") || key == "stage" || key == "ranks" ||
         key == "nodes" || key == "domains" || key == "count" ||
         std::find(std::begin(kScenarioCounts), std::end(kScenarioCounts), key) !=
             std::end(kScenarioCounts);
}

// Calls f(value, path) for every integer below `key` (at path `at`) where io::report_to_json
// writes a double (a key that is no count): objects and rows key by key. `Json` is const for a
// look, not for a rewrite.
template <class Json, class F>
void for_each_integer_metric(Json& v, std::string_view key, const std::string& at, F& f) {
  if (v.is_object()) {
    for (auto& [k, x] : v.items()) for_each_integer_metric(x, k, at.empty() ? k : at + "." + k, f);
  } else if (v.is_array()) {
    for (auto& x : v) for_each_integer_metric(x, key, at + "[]", f);
  } else if (v.is_number_integer() && !is_count_key(key)) {
    f(v, at);
  }
}

// The same over a row's report keys (not its index, rank or scenario, nor its top-level counts).
template <class Json, class F>
void for_each_report_integer(Json& row, F f) {
  if (!row.is_object()) return;
  const std::map<std::string, ReportValue>& kinds = report_json_keys();
  for (auto& [key, value] : row.items()) {
    const auto kind = kinds.find(key);
    if (kind == kinds.end() || kind->second == ReportValue::Count) continue;
    for_each_integer_metric(value, key, key, f);
  }
}

// Why a JSON value is not an object of metrics (numbers >= 0), flags (true/false), names
// (strings, where `names`) or, when `nested`, such objects: nullopt when it is.
std::optional<std::string> metrics_problem(const nlohmann::json& v, const std::string& key,
                                           bool names, bool nested) {
  if (!v.is_object()) return "'" + key + "' is not an object; expected an object";
  for (const auto& [k, x] : v.items()) {
    if (x.is_object() && nested) {
      if (auto p = metrics_problem(x, key + "." + k, names, false)) return p;
    } else if (k == "fits" && !x.is_boolean()) {
      return "'" + key + "." + k + "' is " + x.dump().substr(0, 40) + "; expected true or false";
    } else if (is_count_key(k) && !(x.is_number_integer() && is_json_metric(x))) {
      return "'" + key + "." + k + "' is " + x.dump().substr(0, 40) +
             "; expected a count, an integer >= 0";
    } else if (!is_json_metric(x) && !x.is_boolean() && !(names && x.is_string())) {
      return "'" + key + "." + k + "' is " + x.dump().substr(0, 40) + "; expected a number >= 0" +
             (names ? ", true, false or a name" : " or true or false");
    }
  }
  return std::nullopt;
}

// Why a JSON line (valid JSON) is not one json_line writes, or nullopt. Checks the keys each
// status has and the type of each value; the scenario's own keys are the scenario reader's.
std::optional<std::string> json_row_problem(const nlohmann::json& j) {
  if (!j.is_object()) return std::string("not an object; expected one JSON object per row");
  const auto status_it = j.find("status");
  const std::optional<sweep::Status> status =
      status_it != j.end() && status_it->is_string()
          ? status_of(status_it->get_ref<const std::string&>())
          : std::nullopt;
  if (!status) return std::string("'status' missing or not a status; expected ") + kStatusExpected;
  const auto scenario = j.find("scenario");
  if (scenario == j.end() || !scenario->is_object()) {
    return std::string("'scenario' missing or not an object; expected the row's scenario");
  }
  // Keys, kinds and values as io::scenario_to_json writes them.
  if (auto p = echoed_scenario_problem(*scenario)) return p->text();
  using Kind = ReportValue;
  const std::map<std::string, ReportValue>& kReport = report_json_keys();
  const bool ok = *status == sweep::Status::Ok;
  const std::string of_row = std::string("an '") + sweep::to_string(*status) + "' row";
  for (const auto& [key, value] : j.items()) {
    if (key == "index" || key == "status" || key == "scenario") continue;
    const auto kind = kReport.find(key);
    const bool allowed =
        kind != kReport.end() && (ok || (key == "memory" && *status == sweep::Status::OutOfMemory));
    if (!allowed)
      return "unknown key '" + key.substr(0, 40) + "'; expected only the keys of " + of_row;
    if (kind->second == Kind::Metric && !is_json_metric(value)) {
      return "'" + key + "' is " + value.dump().substr(0, 40) + "; expected a number >= 0";
    }
    if (kind->second == Kind::Count && !(value.is_number_integer() && is_json_metric(value))) {
      return "'" + key + "' is " + value.dump().substr(0, 40) +
             "; expected a count, an integer >= 0";
    }
    if (kind->second == Kind::Object || kind->second == Kind::Rows) {
      if (auto p = report_keys_problem(value, key)) return p;
    }
    if (auto p = report_values_problem(value, key, kind->second)) return p;
  }
  const auto missing = [&](const std::string& key) -> std::optional<std::string> {
    if (j.contains(key)) return std::nullopt;
    return "'" + key + "' missing; expected every key of " + of_row;
  };
  if (ok) {
    for (const auto& [key, kind] : kReport) {
      if (auto p = missing(key)) return p;
    }
  } else if (*status == sweep::Status::OutOfMemory) {
    return missing("memory");
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> report_values_problem(const nlohmann::json& value,
                                                 const std::string& key, ReportValue kind) {
  if (kind == ReportValue::Object) return metrics_problem(value, key, false, true);
  if (kind == ReportValue::Rows) {
    for (const nlohmann::json& r : value) {
      if (auto p = metrics_problem(r, key + "[]", key == "collectives", false)) return p;
    }
  }
  return std::nullopt;
}

std::optional<std::string> report_numbers_as_doubles(nlohmann::json& row) {
  std::optional<std::string> first;
  for_each_report_integer(row, [&first](nlohmann::json& v, const std::string& at) {
    if (!first) first = at;
    v = v.is_number_unsigned() ? static_cast<double>(v.get<std::uint64_t>())
                               : static_cast<double>(v.get<std::int64_t>());
  });
  return first;
}

namespace {

// Why `row`, a JSON line whose keys and values json_row_problem accepts (parsed as `j`), is
// not written as json_line writes it, or nullopt: json_line writes the index, the scenario and
// the status, then the report's keys, every object's keys in sorted order (nlohmann::json's
// order), without spaces, doubles with their fraction and in their shortest round trip. A row
// written again by another JSON tool (keys sorted or reordered, spaces, 0.0 as 0) holds the same
// values in another form, which merge would copy as written, as it would an edit.
std::optional<std::string> json_form_problem(std::string_view row, const nlohmann::json& j) {
  std::optional<std::string> integer;  // the first, as the message names it
  for_each_report_integer(j, [&integer](const nlohmann::json& v, const std::string& at) {
    if (integer) return;
    const std::string text = v.dump();
    integer = "'" + at + "' is " + text +
              ", an integer where the sweep writes a number with its fraction (" + text +
              ".0: a shard written again by another JSON tool?); expected the row as written";
  });
  if (integer) return integer;
  std::string text = "{\"index\":" + j["index"].dump() + ",\"scenario\":" + j["scenario"].dump() +
                     ",\"status\":" + j["status"].dump();
  for (const auto& [key, value] : j.items()) {
    if (key == "index" || key == "scenario" || key == "status") continue;
    text += ",\"" + key + "\":" + value.dump();  // a report key (checked): nothing to escape
  }
  text += '}';
  if (text == row) return std::nullopt;
  const std::size_t at = static_cast<std::size_t>(
      std::mismatch(text.begin(), text.end(), row.begin(), row.end()).first - text.begin());
  const auto shown = [](std::string_view s) {
    return s.empty() ? std::string("the line's end")
                     : "'" + escape_control(utf8_prefix(s, 20)) + "'";
  };
  return "not written as the sweep writes it from column " + std::to_string(at + 1) + " (" +
         shown(row.substr(at)) + " where the sweep writes " +
         shown(std::string_view(text).substr(at)) +
         ": keys in the writer's order, no spaces, numbers in their shortest round trip; a "
         "shard written again by another JSON tool?); expected the row as written";
}

// Where a shard's rows leave the order of its end record, when a row out of place was met before
// the end record (check_shard learns a shard's stride from its first two rows, which a missing
// or moved row makes wrong): the first row that is not the end record's k + i n, as the error
// to throw; nullopt when the last line is no end record or the rows have no index. Reads the
// source again from its start.
std::optional<ConfigError> misplaced_row(LineSource& src, SweepFormat format) {
  src.rewind();
  bool terminated = false;
  std::optional<std::string> last;
  for (auto line = src.next(terminated); line; line = src.next(terminated)) last.emplace(*line);
  const std::optional<ShardTrailer> trailer =
      last ? parse_trailer(*last, format) : std::optional<ShardTrailer>();
  if (!trailer) return std::nullopt;
  const std::int64_t k = trailer->shard_index;
  const std::int64_t n = trailer->shard_count;
  src.rewind();
  std::int64_t number = 0;
  if (format == SweepFormat::Csv) {
    (void)src.next(terminated);  // the header
    ++number;
  }
  std::int64_t expected = k;
  for (auto line = src.next(terminated); line; line = src.next(terminated)) {
    ++number;
    const std::optional<std::int64_t> index = leading_index(*line, format);
    if (!index) return std::nullopt;  // the end record, or a row check_shard names
    if (*index != expected) {
      return ConfigError(src.name(), where_line(number),
                         "row " + std::to_string(*index) + " out of place in shard " +
                             shard_text(k, n) + "; expected row " + std::to_string(expected) +
                             " (rows i with i % " + std::to_string(n) + " == " + std::to_string(k) +
                             ", in order; a row missing or moved?)");
    }
    if (expected > std::numeric_limits<std::int64_t>::max() - n) return std::nullopt;
    expected += n;
  }
  return std::nullopt;
}

// A JSON row nests three deep (memory.reserved); the bound keeps the passes over a row small.
constexpr int kMaxRowDepth = 8;

// Pass 1 over one input: every line read once, in bounded memory. Checks the format (against
// `format` when set), the CSV header (the one csv_header writes), each row's cells (the values
// csv_row or json_line writes) and place in the shard, the end record and the row count. Sets
// `format` and `header` from the first input.
ShardFile check_shard(LineSource& src, std::optional<SweepFormat>& format, std::string& header) {
  const std::string& name = src.name();
  src.rewind();
  bool terminated = false;
  std::optional<std::string_view> line = src.next(terminated);
  if (!line) {
    throw ConfigError(name, "",
                      "empty file (the shard did not start or was cut short); expected the "
                      "complete output of `trainsim sweep --shard K/N`; rerun that shard");
  }
  // JSON lines start with '{'; a CSV output with its header.
  const SweepFormat this_format =
      line->substr(0, 1) == "{" ? SweepFormat::JsonLines : SweepFormat::Csv;
  if (format && *format != this_format) {
    throw ConfigError(name, "",
                      std::string("format differs from the other inputs; expected ") +
                          format_name(*format) + ", got " + format_name(this_format));
  }
  format = this_format;
  std::int64_t number = 1;  // of `line`
  std::size_t num_fields = 0;
  if (this_format == SweepFormat::Csv) {
    const std::string h(*line);
    if (h.rfind("index,", 0) != 0) {
      throw ConfigError(name, "line 1",
                        "not a sweep CSV header; expected a header starting with 'index,', got '" +
                            h.substr(0, 40) + "'");
    }
    // Exactly the header csv_header writes, so that each cell can be checked against its
    // column; the message names the first column that differs.
    std::string expected = csv_header();
    expected.pop_back();  // its '\n'
    if (h != expected) {
      const std::vector<std::string> columns = csv_fields(h);
      std::size_t i = 0;
      while (i < columns.size() && i < std::size(kColumns) && columns[i] == kColumns[i]) ++i;
      const std::string got =
          i < columns.size() ? "'" + columns[i].substr(0, 40) + "'" : std::string("missing");
      const std::string want =
          i < std::size(kColumns) ? "'" + std::string(kColumns[i]) + "'" : std::string("no column");
      if (i == columns.size() && i == std::size(kColumns)) {
        throw ConfigError(name, "line 1",
                          "CSV header has the right columns, written differently (quotes or "
                          "spaces); expected it exactly as trainsim sweep writes it");
      }
      throw ConfigError(name, "line 1",
                        "CSV header column " + std::to_string(i + 1) + " is " + got +
                            "; expected " + want +
                            ", as this version of trainsim sweep writes the header (merge shards "
                            "with the trainsim that wrote them)");
    }
    header = h;
    num_fields = *csv_field_count(h);
    line = src.next(terminated);
    ++number;
  }
  // Rows are checked one line late: the last line is the end record, not a row. Their indices
  // must go up by one stride from the first; the end record then says which stride and start
  // they must have had (k, k + n, k + 2n, ...).
  std::string pending;
  std::int64_t rows = 0;
  std::int64_t first_index = 0;
  std::int64_t stride = 0;
  std::int64_t previous = 0;
  std::int64_t second_line = 0;
  const auto check_row = [&](std::string_view row, std::int64_t at) {
    const std::string where = where_line(at);
    const std::optional<std::int64_t> index = leading_index(row, this_format);
    if (!index && parse_trailer(row, this_format)) {
      // Lines after it (blank, or a copy): the shard was appended to after it ended.
      throw ConfigError(name, where,
                        "the end record is not the last line (line " + std::to_string(at + 1) +
                            " follows it); expected it last, as trainsim sweep --shard K/N "
                            "writes it");
    }
    // A JSON row with its index elsewhere (its keys sorted, a space after the colon) is one
    // another JSON tool wrote again: say so, with the index it has.
    if (!index && this_format == SweepFormat::JsonLines && json_depth(row) <= kMaxRowDepth) {
      const nlohmann::json parsed = nlohmann::json::parse(row, nullptr, false);
      const auto it = parsed.is_object() ? parsed.find("index") : parsed.end();
      if (parsed.is_object() && it != parsed.end() && it->is_number_unsigned()) {
        throw ConfigError(name, where,
                          "row " + std::to_string(it->get<std::uint64_t>()) +
                              ": not written as the sweep writes it (it starts '" +
                              escape_control(utf8_prefix(row, 20)) +
                              "', where the sweep writes '{\"index\":" + it->dump() +
                              ",': keys in the writer's order, no spaces; a shard written again "
                              "by another JSON tool?); expected the row as written");
      }
    }
    if (!index) {
      throw ConfigError(
          name, where,
          std::string("row without an index; expected a line starting with ") +
              (this_format == SweepFormat::Csv ? "'<index>,'" : "'{\"index\":<index>,'") +
              " (an integer without sign or leading zero), got '" +
              escape_control(utf8_prefix(row, 40)) + "'");
    }
    if (this_format == SweepFormat::Csv) {
      const std::optional<std::size_t> fields = csv_field_count(row);
      if (fields != num_fields) {
        throw ConfigError(
            name, where,
            "truncated or malformed row " + std::to_string(*index) + " (" +
                (fields ? std::to_string(*fields) + " fields" : std::string("an unclosed quote")) +
                "); expected " + std::to_string(num_fields) + " fields, as in the header");
      }
      if (const std::optional<std::string> problem = csv_row_problem(row)) {
        throw ConfigError(name, where,
                          "row " + std::to_string(*index) + ": " + *problem +
                              ", as trainsim sweep writes it (an edited or damaged shard?)");
      }
    } else {
      const auto not_json = [&] {
        return ConfigError(
            name, where,
            "row " + std::to_string(*index) +
                " is not valid JSON (truncated?); expected one JSON object per line");
      };
      if (json_depth(row) > kMaxRowDepth) throw not_json();
      bool well_formed = false;
      try {
        well_formed = check_unique_keys(row, name);
      } catch (const ConfigError& e) {
        // The pass throws only for a repeated key, at its pointer.
        throw ConfigError(name, where,
                          "row " + std::to_string(*index) + ": key " + e.pointer() +
                              " given twice in one object (an edited shard?); expected each key "
                              "at most once, as trainsim sweep writes it");
      }
      if (!well_formed) throw not_json();
      const nlohmann::json parsed = nlohmann::json::parse(row, nullptr, false);
      const std::optional<std::string> problem =
          parsed.is_discarded()
              ? std::optional<std::string>("not valid JSON; expected one JSON object per line")
              : json_row_problem(parsed);
      if (problem) {
        throw ConfigError(name, where,
                          "row " + std::to_string(*index) + ": " + *problem +
                              ", as trainsim sweep writes it (an edited or damaged shard?)");
      }
      if (const std::optional<std::string> form = json_form_problem(row, parsed)) {
        throw ConfigError(name, where, "row " + std::to_string(*index) + ": " + *form);
      }
    }
    if (rows == 0) {
      first_index = *index;
    } else if (rows == 1) {
      stride = *index - previous;
      second_line = at;
    }
    if (rows >= 1 && (*index - previous != stride || stride <= 0)) {
      // The row that should follow; none past the largest index (previous + step would wrap).
      const std::int64_t step = std::max<std::int64_t>(stride, 1);
      const std::string expected =
          previous > std::numeric_limits<std::int64_t>::max() - step
              ? "no row after it"
              : "row " + std::to_string(previous + step);
      // The stride taken from the first two rows may be the wrong one: the end record says.
      if (std::optional<ConfigError> e = misplaced_row(src, this_format)) throw *e;
      throw ConfigError(name, where,
                        "row " + std::to_string(*index) + " out of place after row " +
                            std::to_string(previous) + "; expected " + expected +
                            " (a shard's rows i with i % N == K, in order)");
    }
    previous = *index;
    ++rows;
  };
  std::int64_t first_line = 0;
  std::optional<std::int64_t> pending_line;
  while (line) {
    if (pending_line) {
      if (rows == 0) first_line = *pending_line;
      check_row(pending, *pending_line);
    }
    pending.assign(line->data(), line->size());
    pending_line = number;
    line = src.next(terminated);
    ++number;
  }
  const std::int64_t last = pending_line.value_or(number - 1);
  if (!pending_line) {
    // A CSV file holding only its header.
    throw ConfigError(name, where_line(last),
                      std::string("incomplete: no end record (a shard cut short); expected the "
                                  "complete output of `trainsim sweep --shard K/N`, whose last "
                                  "line is ") +
                          end_record_example(this_format) + "; rerun that shard");
  }
  if (!terminated) {
    throw ConfigError(name, where_line(last),
                      "incomplete: the last line has no line break (the run was cut short); "
                      "expected the complete output of `trainsim sweep --shard K/N`; rerun that "
                      "shard");
  }
  const std::optional<ShardTrailer> trailer = parse_trailer(pending, this_format);
  if (!trailer) {
    const bool looks_like_one = this_format == SweepFormat::Csv
                                    ? pending.substr(0, 1) == "#"
                                    : pending.find("\"trainsim_shard\"") != std::string::npos;
    throw ConfigError(
        name, where_line(last),
        std::string(looks_like_one ? "malformed end record" : "incomplete: no end record") +
            " (a shard cut short, or an unsharded output, which needs no merge); expected the "
            "complete output of `trainsim sweep --shard K/N`, whose last line is " +
            end_record_example(this_format) + "; rerun that shard");
  }
  const std::int64_t k = trailer->shard_index;
  const std::int64_t n = trailer->shard_count;
  const std::string shard = shard_text(k, n);
  if (rows >= 1 && first_index != k) {
    throw ConfigError(name, where_line(first_line),
                      "row " + std::to_string(first_index) + " out of place in shard " + shard +
                          "; expected row " + std::to_string(k) + " (rows i with i % " +
                          std::to_string(n) + " == " + std::to_string(k) + ", in order)");
  }
  if (rows >= 2 && stride != n) {
    throw ConfigError(name, where_line(second_line),
                      "row " + std::to_string(first_index + stride) + " out of place in shard " +
                          shard + "; expected row " + std::to_string(first_index + n) +
                          " (rows i with i % " + std::to_string(n) + " == " + std::to_string(k) +
                          ", in order)");
  }
  const std::int64_t shard_rows = sweep::Shard{.index = k, .count = n}.size_of(trailer->scenarios);
  if (rows == trailer->rows && rows != shard_rows) {
    // The rows agree with the end record, whose own two counts do not: it read "9 rows, but
    // the end record says 9".
    throw ConfigError(name, where_line(last),
                      "the end record's " + std::to_string(trailer->rows) + " rows and " +
                          std::to_string(trailer->scenarios) + " scenarios disagree: shard " +
                          shard + " of " + std::to_string(trailer->scenarios) + " scenarios has " +
                          std::to_string(shard_rows) +
                          " rows; expected the end record `trainsim sweep --shard` wrote (an "
                          "edited end record, or rows of another sweep)");
  }
  if (rows != trailer->rows || rows != shard_rows) {
    throw ConfigError(name, where_line(last),
                      std::to_string(rows) + " rows, but the end record says " +
                          std::to_string(trailer->rows) + "; expected " +
                          std::to_string(shard_rows) + " rows for shard " + shard + " of " +
                          std::to_string(trailer->scenarios) + " scenarios");
  }
  return ShardFile{.source = &src, .trailer = *trailer};
}

// Checks every input (pass 1), then writes the rows in index order (pass 2): row i is the
// (i / n)-th row of shard i % n, so the shards are read in lockstep, one line each at a time.
void merge_sources(const std::vector<LineSource*>& sources, std::optional<std::int64_t> expected,
                   const std::function<void(std::string_view)>& sink) {
  if (sources.empty()) throw ConfigError("merge", "", "no inputs; expected one or more files");
  std::optional<SweepFormat> format;
  std::string header;
  std::map<std::int64_t, ShardFile> shards;  // by K
  const ShardFile* first = nullptr;
  for (LineSource* src : sources) {
    const ShardFile file = check_shard(*src, format, header);
    const ShardTrailer& t = file.trailer;
    const std::string shard = shard_text(t.shard_index, t.shard_count);
    // The end record's line: rows, the header for CSV, and itself.
    const std::string where = where_line(t.rows + (*format == SweepFormat::Csv ? 2 : 1));
    if (first != nullptr) {
      const ShardTrailer& a = first->trailer;
      if (t.spec_digest != a.spec_digest) {
        throw ConfigError(src->name(), where,
                          "a shard of another sweep (spec " + hex16(t.spec_digest) + ", but " +
                              first->source->name() + "'s is " + hex16(a.spec_digest) +
                              "); expected the shards of one sweep spec and the same hardware, "
                              "model and stack files, "
                              "all run with --full-simulation or all without");
      }
      if (t.shard_count != a.shard_count || t.scenarios != a.scenarios) {
        throw ConfigError(src->name(), where,
                          "shard " + shard + " of " + std::to_string(t.scenarios) +
                              " scenarios, but " + first->source->name() + " is a shard " +
                              shard_text(a.shard_index, a.shard_count) + " of " +
                              std::to_string(a.scenarios) + "; expected one split of one sweep");
      }
    }
    const auto [it, inserted] = shards.emplace(t.shard_index, file);
    if (!inserted) {
      throw ConfigError(src->name(), where,
                        "shard " + shard + " given twice, also in " + it->second.source->name() +
                            "; expected each shard once");
    }
    if (first == nullptr) first = &it->second;
  }
  const ShardTrailer& a = first->trailer;
  for (std::int64_t k = 0; k < a.shard_count; ++k) {
    if (shards.count(k) == 0) {
      throw ConfigError("merge", "",
                        "missing shard " + shard_text(k, a.shard_count) + "; expected all " +
                            std::to_string(a.shard_count) + " shards of the sweep (0/" +
                            std::to_string(a.shard_count) + " to " +
                            shard_text(a.shard_count - 1, a.shard_count) + ")");
    }
  }
  if (expected && *expected != a.scenarios) {
    throw ConfigError("--expect", "",
                      "the shards are of a sweep of " + std::to_string(a.scenarios) +
                          " scenarios; expected --expect " + std::to_string(a.scenarios) +
                          " (or no --expect), got " + std::to_string(*expected));
  }
  // Pass 2. The files were checked whole; one that changes in between is caught by its
  // indices.
  std::vector<LineSource*> by_k;
  for (auto& [k, file] : shards) {
    file.source->rewind();
    bool terminated = false;
    if (*format == SweepFormat::Csv) (void)file.source->next(terminated);  // the header
    by_k.push_back(file.source);
  }
  if (*format == SweepFormat::Csv) sink(header + "\n");
  std::string row;
  for (std::int64_t i = 0; i < a.scenarios; ++i) {
    LineSource& src = *by_k[static_cast<std::size_t>(i % a.shard_count)];
    bool terminated = false;
    const std::optional<std::string_view> line = src.next(terminated);
    if (!line || leading_index(*line, *format) != i) {
      throw ConfigError(src.name(), "",
                        "changed while merging (row " + std::to_string(i) +
                            " not where it was); expected shard files left alone until merge "
                            "ends");
    }
    row.assign(line->data(), line->size());
    row += '\n';
    sink(row);
  }
}

}  // namespace

std::ifstream open_output_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw ConfigError(path, "",
                      std::string("cannot read the file (") + std::strerror(errno) +
                          "); expected a sweep or search output");
  }
  // A FIFO would block until someone writes, /dev/zero never ends: only regular files.
  if (!S_ISREG(st.st_mode)) {
    throw ConfigError(path, "",
                      std::string("not a regular file (") +
                          (S_ISDIR(st.st_mode)    ? "a folder"
                           : S_ISFIFO(st.st_mode) ? "a pipe"
                                                  : "a device") +
                          "); expected a sweep or search output file");
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // The reason, as stat's failure gives it: one shard past the open-file limit was reported
    // as unreadable, a healthy file.
    const int error = errno;
    throw ConfigError(
        path, "",
        "cannot read the file" +
            (error != 0 ? " (" + std::string(std::strerror(error)) + ")" : std::string()) +
            (error == EMFILE ? ": merge holds every shard open at once; expected "
                               "a limit on open files (ulimit -n) above the number "
                               "of shards"
                             : "; expected a sweep or search output"));
  }
  return in;
}

std::string read_output_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in = open_output_file(path);
  // In chunks, so that a file of a few KiB takes a few KiB (a buffer of max_bytes + 1 kept its
  // 64 MiB per shard).
  std::string text;
  std::array<char, 65536> chunk{};
  while (in && text.size() <= max_bytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw ConfigError(path, "", "cannot read the file; expected a search output");
  if (text.size() > max_bytes) {
    throw ConfigError(path, "",
                      "larger than " + std::to_string(max_bytes >> 20) +
                          " MiB; expected a search output (a few KiB)");
  }
  return text;
}

std::string merge_outputs(const std::vector<SweepOutput>& outputs,
                          std::optional<std::int64_t> expected) {
  std::vector<std::unique_ptr<TextSource>> owned;
  std::vector<LineSource*> sources;
  for (const SweepOutput& o : outputs) {
    owned.push_back(std::make_unique<TextSource>(o));
    sources.push_back(owned.back().get());
  }
  std::string out;
  merge_sources(sources, expected, [&out](std::string_view text) { out += text; });
  return out;
}

void merge_output_files(const std::vector<std::string>& paths, std::optional<std::int64_t> expected,
                        const std::function<void(std::string_view)>& sink) {
  std::vector<std::unique_ptr<FileSource>> owned;
  std::vector<LineSource*> sources;
  for (const std::string& path : paths) {
    owned.push_back(std::make_unique<FileSource>(path));
    sources.push_back(owned.back().get());
  }
  merge_sources(sources, expected, sink);
}

}  // namespace trainsim::io
