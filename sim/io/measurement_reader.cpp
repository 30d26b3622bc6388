#include "sim/io/measurement_reader.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/error.hpp"
#include "trainsim/parallel/scenario.hpp"

#include "sim/io/json_reader.hpp"
#include "sim/io/spellcheck.hpp"

namespace trainsim::io {
namespace {

using calibrate::Environment;
using calibrate::MeasurementDocument;
using calibrate::Origin;

constexpr std::string_view kSchema = "trainsim-measurements";
constexpr std::int64_t kSchemaVersion = 1;
const std::string kReads = "this trainsim reads \"trainsim-measurements\" version 1";

// Limits against hostile input: a measurement document is a few hundred kB at most, so 64 MiB
// is generous; nesting deeper than the schema's 4 levels (record environment) by far is refused
// before nlohmann builds (and later dumps, recursively) the tree.
constexpr std::size_t kMaxBytes = std::size_t{64} << 20U;
constexpr int kMaxDepth = 64;
// SMs a record may name: the hardware loader's bound on a GPU's SM count.
constexpr std::int64_t kMaxSms = 100000;

// Names in the order of the enums they map to.
const std::vector<std::string> kDtypeNames = {"fp32", "tf32", "fp16", "bf16", "fp8"};
const std::vector<std::string> kActivityNames = {"idle", "compute", "communication"};
const std::vector<std::string> kStatusNames = {"healthy", "reported_problem"};
const std::vector<std::string> kMemoryKernels = {"copy", "triad"};
// The algorithms and protocols NCCL_ALGO / NCCL_PROTO can force, as names.cpp spells them.
const std::vector<std::string> kAlgorithmNames = {"tree", "ring", "nvls", "nvls_tree", "pat"};
const std::vector<std::string> kProtocolNames = {"LL", "LL128", "Simple"};
const std::vector<std::string> kArrayKeys = {"gemm",  "attention",   "memory",     "launch",
                                             "power", "collectives", "nccl_tests", "overlap"};
const std::vector<std::string> kOverlapKernels = {"gemm"};
const std::vector<std::string> kHolders = {"wait", "copy"};

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Size, NUL bytes and nesting depth are checked on the raw text before nlohmann parses it.
nlohmann::json parse_text(const std::string& text, const std::string& source) {
  return parse_checked_json(text, source, kMaxBytes, kMaxDepth, "a measurement document",
                            "expected a JSON document");
}

// A string without NUL characters ("\u0000" in JSON would cut a path or a label short).
std::string text_value(ObjectReader& r, const std::string& key) {
  std::string s = r.string(key);
  if (s.find('\0') != std::string::npos) {
    throw r.error(key,
                  "string holds a NUL character; expected text, got " + describe_json(r.raw(key)));
  }
  return s;
}

std::string text_or_empty(ObjectReader& r, const std::string& key) {
  return r.has(key) ? text_value(r, key) : std::string();
}

// A positive dimensional value that stays finite in SI units ("1e300 h" overflows).
double finite_unit(ObjectReader& r, const std::string& key, UnitKind kind) {
  const double si = r.unit(key, kind);
  if (!std::isfinite(si)) {
    throw r.error(key, "value overflows in SI units; expected " + unit_noun(kind) + " like " +
                           unit_example(kind) + ", got " + describe_json(r.raw(key)));
  }
  return si;
}

Seconds time_of(ObjectReader& r) { return Seconds(finite_unit(r, "time", UnitKind::Time)); }
// A whole number of bytes ("1.5 B" is no buffer; "1.5 KiB" is 1,536), up to the rounding of the
// unit's product ("4.1 GB" is 4099999999.9999995 in floating point): rounded to it.
Bytes bytes_of(ObjectReader& r) {
  const double v = finite_unit(r, "bytes", UnitKind::Data);
  const double whole = std::nearbyint(v);
  if (std::fabs(v - whole) > 1e-9 * std::max(1.0, std::fabs(v))) {
    char text[32];
    (void)std::snprintf(text, sizeof text, "%.17g", v);
    throw r.error("bytes", std::string("not a whole number of bytes (") + text +
                               " B); expected a buffer size in whole bytes");
  }
  return Bytes(whole);
}

// Index of `r.choice(key, names)` in `names`.
std::size_t choice_index(ObjectReader& r, const std::string& key,
                         const std::vector<std::string>& names) {
  const std::string v = r.choice(key, names);
  return static_cast<std::size_t>(std::find(names.begin(), names.end(), v) - names.begin());
}

hardware::Dtype dtype_of(ObjectReader& r) {
  return static_cast<hardware::Dtype>(choice_index(r, "dtype", kDtypeNames));
}

// Runs a collective::parse_* on the value of `key`, locating its ConfigError at the key.
template <class Parse>
auto parse_located(ObjectReader& r, const std::string& key, const std::string& name, Parse parse) {
  try {
    return parse(name);
  } catch (const ConfigError& e) {
    throw e.located(r.source(), r.pointer_of(key));
  }
}

collective::Op op_of(ObjectReader& r) {
  return parse_located(r, "op", r.string("op"),
                       [](const std::string& s) { return collective::parse_op(s); });
}

// The spelling in `names` that `key`'s value matches ignoring case ("simple" -> "Simple";
// NCCL_ALGO's "NVLSTree" -> "nvls_tree"), or a ConfigError with "did you mean".
std::string canonical_name(ObjectReader& r, const std::string& key,
                           const std::vector<std::string>& names, const std::string& what) {
  const std::string value = r.string(key);
  std::string lower = lowercase(value);
  if (lower == "nvlstree") lower = "nvls_tree";
  std::vector<std::string> lower_names;
  for (const auto& n : names) {
    if (lowercase(n) == lower) return n;
    lower_names.push_back(lowercase(n));
  }
  std::string suggestion;
  if (const auto close = closest(lower, lower_names)) {
    const auto i = static_cast<std::size_t>(
        std::find(lower_names.begin(), lower_names.end(), *close) - lower_names.begin());
    suggestion = "; did you mean '" + names[i] + "'?";
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw r.error(key, "unknown " + what + " '" + value + "'" + suggestion + "; expected one of " +
                         list + " (any case)");
}

std::optional<hardware::Algorithm> algorithm_of(ObjectReader& r) {
  if (!r.has("algorithm")) return std::nullopt;
  const std::string name = canonical_name(r, "algorithm", kAlgorithmNames, "collective algorithm");
  return parse_located(r, "algorithm", name,
                       [](const std::string& s) { return collective::parse_algorithm(s); });
}

std::optional<hardware::Protocol> protocol_of(ObjectReader& r) {
  if (!r.has("protocol")) return std::nullopt;
  const std::string name = canonical_name(r, "protocol", kProtocolNames, "collective protocol");
  return parse_located(r, "protocol", name,
                       [](const std::string& s) { return collective::parse_protocol(s); });
}

enum class DeviceKey { Required, Optional };

// An NCCL version as NCCL prints it ("2.21.5", "2.26.2+cuda12.8"): digits, a dot, digits, then
// anything. "" (not given) passes; "garbage" or "2" does not, since calibrate compares the
// version's major.minor with the profile's.
std::string nccl_version_of(ObjectReader& r, const std::string& key) {
  const std::string v = text_or_empty(r, key);
  if (v.empty()) return v;
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])) != 0) ++i;
    return i > from;
  };
  const bool ok = digits() && i < v.size() && v[i++] == '.' && digits();
  if (!ok) {
    throw r.error(key, "expected an NCCL version like \"2.21.5\" (as NCCL prints it), got " +
                           describe_json(r.raw(key)));
  }
  return v;
}

Environment environment_of(ObjectReader r, DeviceKey device) {
  Environment env;
  if (device == DeviceKey::Required) {
    env.device = text_value(r, "device");
    if (env.device.empty()) {
      throw r.error("device",
                    "empty device name; expected the GPU's name like \"NVIDIA H200\", "
                    "got \"\"");
    }
  } else {
    env.device = text_or_empty(r, "device");
  }
  env.driver = text_or_empty(r, "driver");
  env.cuda = text_or_empty(r, "cuda");
  env.nccl = nccl_version_of(r, "nccl");
  env.host = text_or_empty(r, "host");
  env.timestamp = text_or_empty(r, "timestamp");
  env.clocks = text_or_empty(r, "clocks");
  r.finish();
  return env;
}

// What a record's reader needs besides its object: where it sits and the environments.
struct Record {
  Origin origin;        // source and "<array>[<i>]" (plus " on <device>")
  std::string pointer;  // "/<array>/<i>"
  std::string nccl;     // the record's environment's nccl, "" when it names none
  const Environment* document = nullptr;
};

std::optional<std::string> nonempty(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

calibrate::GemmPoint gemm_of(ObjectReader& r, const Record& rec) {
  calibrate::GemmPoint p;
  p.m = r.integer("m", 1);
  p.n = r.integer("n", 1);
  p.k = r.integer("k", 1);
  p.dtype = dtype_of(r);
  p.time = time_of(r);
  p.origin = rec.origin;
  return p;
}

calibrate::AttentionPoint attention_of(ObjectReader& r, const Record& rec) {
  calibrate::AttentionPoint p;
  p.batch = r.integer("batch", 1);
  p.heads = r.integer("heads", 1);
  p.seq_len = r.integer("seq_len", 1);
  p.head_dim = r.integer("head_dim", 1);
  p.causal = r.boolean_or("causal", true);
  p.dtype = dtype_of(r);
  p.time = time_of(r);
  p.origin = rec.origin;
  return p;
}

calibrate::MemoryPoint memory_of(ObjectReader& r, const Record& rec) {
  calibrate::MemoryPoint p;
  (void)r.choice("kernel", kMemoryKernels);  // checked, not stored: both stream through HBM
  p.bytes = bytes_of(r);
  p.time = time_of(r);
  p.origin = rec.origin;
  return p;
}

calibrate::LaunchPoint launch_of(ObjectReader& r, const Record& rec) {
  return calibrate::LaunchPoint{.time = time_of(r), .origin = rec.origin};
}

calibrate::PowerPoint power_of(ObjectReader& r, const Record& rec) {
  calibrate::PowerPoint p;
  p.activity = static_cast<calibrate::PowerActivity>(choice_index(r, "activity", kActivityNames));
  p.power = Watts(finite_unit(r, "power", UnitKind::Power));
  p.origin = rec.origin;
  return p;
}

calibrate::OverlapPoint overlap_of(ObjectReader& r, const Record& rec) {
  calibrate::OverlapPoint p;
  (void)r.choice("kernel", kOverlapKernels);  // the one kernel gemm_comm_contention covers
  p.m = r.integer("m", 1);
  p.n = r.integer("n", 1);
  p.k = r.integer("k", 1);
  p.dtype = dtype_of(r);
  p.held_sms = r.integer("held_sms", 1, kMaxSms);
  p.copying = r.choice("holder", kHolders) == "copy";
  if (r.has("holder_rate")) {
    if (!p.copying) {
      throw r.error(
          "holder_rate",
          R"(a rate for a holder that does not copy; expected it only with "holder": "copy")");
    }
    p.rate = BytesPerSecond(finite_unit(r, "holder_rate", UnitKind::DataRate));
  }
  p.sm_count_target = r.has("sm_count_target") ? r.integer("sm_count_target", 0, kMaxSms) : 0;
  p.time_alone = Seconds(finite_unit(r, "time_alone", UnitKind::Time));
  p.time = time_of(r);
  p.origin = rec.origin;
  return p;
}

// Requires nodes <= ranks when both are known.
void check_nodes(ObjectReader& r, std::int64_t ranks, std::int64_t nodes) {
  if (nodes > ranks) {
    throw r.error("nodes", "more nodes than ranks; expected nodes <= ranks (" +
                               std::to_string(ranks) + "), got " + std::to_string(nodes));
  }
}

// The record's "ranks_per_node", ceil(ranks / nodes) when it has none. The fullest node holds
// at least ceil(ranks / nodes) ranks (nodes x ranks_per_node >= ranks) and at most
// ranks - (nodes - 1), since each of the other nodes holds one rank or more.
std::int64_t fullest_node(ObjectReader& r, std::int64_t ranks, std::int64_t nodes) {
  const std::int64_t fewest = (ranks + nodes - 1) / nodes;
  const std::int64_t most = ranks - nodes + 1;
  const std::int64_t per_node = r.integer_or("ranks_per_node", 1, fewest);
  if (per_node < fewest || per_node > most) {
    throw r.error("ranks_per_node", "impossible for " + std::to_string(ranks) + " ranks on " +
                                        std::to_string(nodes) + " nodes; expected " +
                                        std::to_string(fewest) + " to " + std::to_string(most) +
                                        ", got " + std::to_string(per_node));
  }
  return per_node;
}

calibrate::CollectivePoint collective_of(ObjectReader& r, const Record& rec) {
  calibrate::CollectivePoint p;
  p.op = op_of(r);
  const std::int64_t ranks = r.integer("ranks", 1, parallel::kMaxGpus);
  const std::int64_t nodes = r.integer("nodes", 1, parallel::kMaxGpus);
  check_nodes(r, ranks, nodes);
  const std::int64_t per_node = fullest_node(r, ranks, nodes);
  p.group = parallel::GroupShape{.ranks = ranks, .nodes = nodes, .ranks_per_node = per_node};
  p.bytes = bytes_of(r);
  p.time = time_of(r);
  p.algorithm = algorithm_of(r);
  p.protocol = protocol_of(r);
  p.nccl_version = nonempty(rec.nccl.empty() ? rec.document->nccl : rec.nccl);
  p.origin = rec.origin;
  return p;
}

calibrate::LogReference log_of(ObjectReader& r, const Record& rec) {
  calibrate::LogReference log;
  const std::string file = text_value(r, "file");
  if (file.empty()) {
    throw r.error("file", "empty path; expected an nccl-tests log file, got \"\"");
  }
  // Relative paths are taken from the document's folder, so a document and its logs move
  // together; the log itself is read by the nccl-tests reader, not here.
  const std::filesystem::path path(file);
  log.path = path.is_absolute()
                 ? path.string()
                 : (std::filesystem::path(rec.origin.source).parent_path() / path).string();
  if (r.has("op")) log.op = op_of(r);
  if (r.has("ranks")) log.ranks = r.integer("ranks", 1, parallel::kMaxGpus);
  if (r.has("nodes")) log.nodes = r.integer("nodes", 1, parallel::kMaxGpus);
  if (log.ranks && log.nodes) check_nodes(r, *log.ranks, *log.nodes);
  if (r.has("ranks_per_node")) {
    if (!log.ranks || !log.nodes) {
      throw r.error("ranks_per_node",
                    "given without both \"ranks\" and \"nodes\"; expected the three together");
    }
    log.ranks_per_node = fullest_node(r, *log.ranks, *log.nodes);
  }
  log.algorithm = algorithm_of(r);
  log.protocol = protocol_of(r);
  // A log may come from another machine than the document's points, so only the entry itself
  // (or its own environment) names its NCCL version.
  log.nccl_version =
      r.has("nccl_version") ? nonempty(nccl_version_of(r, "nccl_version")) : nonempty(rec.nccl);
  log.status = static_cast<calibrate::LogStatus>(
      r.has("status") ? choice_index(r, "status", kStatusNames) : 0);
  log.note = text_or_empty(r, "note");
  log.origin = rec.origin;
  log.origin.label = rec.pointer;
  return log;
}

// Reads each record of the optional array `key` with `read` and appends what it returns.
// The document's environment is each record's default; a record equal field for field to an
// earlier one of the array is noted in doc.repeated, a record of another device in
// doc.record_devices.
template <class T, class Read>
void read_array(ObjectReader& top, const std::string& key, std::vector<T>& out,
                calibrate::MeasurementDocument& doc, Read read) {
  const Environment& document = doc.environment;
  std::vector<std::string>& repeated = doc.repeated;
  if (!top.has(key)) return;
  const nlohmann::json& array = top.array(key);
  out.reserve(array.size());
  std::unordered_map<std::size_t, std::vector<std::size_t>> by_hash;
  for (std::size_t i = 0; i < array.size(); ++i) {
    auto& same_hash = by_hash[std::hash<nlohmann::json>{}(array[i])];
    for (const std::size_t j : same_hash) {
      if (array[j] != array[i]) continue;
      repeated.push_back(top.pointer_of(key) + "/" + std::to_string(i) + " repeats " +
                         top.pointer_of(key) + "/" + std::to_string(j) +
                         " field for field; both are fitted (remove one if it is a copy)");
      break;
    }
    same_hash.push_back(i);
    Record rec;
    rec.pointer = top.pointer_of(key) + "/" + std::to_string(i);
    rec.document = &document;
    ObjectReader r(array[i], top.source(), rec.pointer);
    rec.origin.source = top.source();
    rec.origin.label = key + "[" + std::to_string(i) + "]";
    rec.origin.pointer = rec.pointer;
    if (r.has("environment")) {
      const Environment env = environment_of(r.object("environment"), DeviceKey::Optional);
      if (!env.device.empty()) rec.origin.label += " on " + env.device;
      // The first record of each other device: one warning line per device, not per record.
      const bool listed =
          std::any_of(doc.record_devices.begin(), doc.record_devices.end(),
                      [&env](const auto& named) { return named.second == env.device; });
      if (!env.device.empty() && env.device != document.device && !listed) {
        doc.record_devices.emplace_back(rec.pointer, env.device);
      }
      rec.nccl = env.nccl;
    }
    out.push_back(read(r, rec));
    r.finish();
  }
}

void check_schema(ObjectReader& top) {
  if (!top.has("schema")) {
    throw top.error("schema", R"(missing required key; expected "schema": ")" +
                                  std::string(kSchema) + "\" (" + kReads + ")");
  }
  const std::string schema = top.string("schema");
  if (schema != kSchema) {
    throw top.error("schema", "not a measurement document (" + kReads + "); expected \"" +
                                  std::string(kSchema) + "\", got " +
                                  describe_json(top.raw("schema")));
  }
  const nlohmann::json& version = top.raw("schema_version", std::to_string(kSchemaVersion));
  const bool one = (version.is_number_integer() && version.get<std::int64_t>() == kSchemaVersion) ||
                   (version.is_number_float() && version.get<double>() == 1.0);
  if (!one) {
    throw top.error("schema_version", "unsupported schema version (" + kReads + "); expected " +
                                          std::to_string(kSchemaVersion) + ", got " +
                                          describe_json(version));
  }
}

MeasurementDocument document_from_json(const nlohmann::json& json, const std::string& source) {
  ObjectReader top(json, source, "");
  check_schema(top);

  MeasurementDocument doc;
  doc.source = source;
  doc.environment = environment_of(top.object("environment"), DeviceKey::Required);
  calibrate::MeasurementSet& set = doc.points;
  read_array(top, "gemm", set.gemms, doc, gemm_of);
  read_array(top, "attention", set.attention, doc, attention_of);
  read_array(top, "memory", set.memory, doc, memory_of);
  read_array(top, "launch", set.launches, doc, launch_of);
  read_array(top, "power", set.power, doc, power_of);
  read_array(top, "collectives", set.collectives, doc, collective_of);
  read_array(top, "nccl_tests", doc.logs, doc, log_of);
  read_array(top, "overlap", set.overlap, doc, overlap_of);
  top.finish();

  if (set.gemms.empty() && set.attention.empty() && set.memory.empty() && set.launches.empty() &&
      set.power.empty() && set.collectives.empty() && doc.logs.empty() && set.overlap.empty()) {
    std::string list;
    for (const auto& k : kArrayKeys) list += (list.empty() ? "" : ", ") + k;
    throw ConfigError(source, "",
                      "no measurements; expected at least one record in " + list + ", got none");
  }
  return doc;
}

}  // namespace

MeasurementDocument parse_measurement_document(const std::string& text, const std::string& source) {
  const nlohmann::json json = parse_text(text, source);
  // A required key missing beside its misspelling ("tme" for "time") names the misspelling.
  MeasurementDocument doc;
  with_near_miss_note(json, source, "",
                      [&](const nlohmann::json& j) { doc = document_from_json(j, source); });
  return doc;
}

std::string read_measurement_text(const std::string& path) {
  // Bounded, chunk by chunk: /dev/zero is refused at its first NUL byte, a huge file or a pipe
  // that never ends after 64 MiB, a named pipe nobody writes to at once.
  return read_text_file(
      path, kMaxBytes, "a measurement document", [&path](std::string_view part, std::size_t at) {
        if (const auto nul = part.find('\0'); nul != std::string_view::npos) {
          throw ConfigError(path, "",
                            "NUL byte at offset " + std::to_string(at + nul) +
                                "; expected a JSON text file, got binary data");
        }
      });
}

MeasurementDocument read_measurement_document(const std::string& path) {
  return parse_measurement_document(read_measurement_text(path), path);
}

}  // namespace trainsim::io
