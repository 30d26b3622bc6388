#include "sim/sweep/sweep_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "trainsim/error.hpp"

#include "sim/io/json_reader.hpp"
#include "sim/io/spellcheck.hpp"
#include "sim/sweep/scenario_resolver.hpp"
#include "sim/sweep/sweep_run.hpp"

namespace trainsim::sweep {
namespace {

using nlohmann::ordered_json;

const std::vector<std::string> kSpecKeys = {"base", "axes", "zip", "description"};

std::string describe(const ordered_json& v) { return io::describe_json(nlohmann::json(v)); }

std::int64_t range_integer(const ordered_json& range, const std::string& key,
                           const std::string& source, const std::string& pointer) {
  const auto it = range.find(key);
  if (it == range.end()) {
    throw ConfigError(source, pointer,
                      "range without \"" + key +
                          "\"; expected {\"from\": a, \"to\": b, \"step\": s} "
                          "or {\"from\": a, \"to\": b, \"times\": t}, got " +
                          describe(range));
  }
  if (!it->is_number_integer()) {
    // A whole number past 64 bits is read as a double: out of range, not "not an integer".
    const bool past_int64 = it->is_number_float() && std::isfinite(it->get<double>()) &&
                            std::fabs(it->get<double>()) >= 0x1p63;
    if (past_int64) {
      throw ConfigError(source, pointer + "/" + key,
                        describe(*it) + ": out of range; expected at most " +
                            std::to_string(std::numeric_limits<std::int64_t>::max()));
    }
    throw ConfigError(source, pointer + "/" + key,
                      "range bound not an integer; expected an integer, got " + describe(*it));
  }
  // Above INT64_MAX nlohmann stores an unsigned, which get<std::int64_t>() would wrap negative.
  if (it->is_number_unsigned() &&
      it->get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw ConfigError(source, pointer + "/" + key,
                      describe(*it) + ": out of range; expected at most " +
                          std::to_string(std::numeric_limits<std::int64_t>::max()));
  }
  return it->get<std::int64_t>();
}

// The most values one range object may expand to.
constexpr std::int64_t kMaxRangeValues = 1'000'000;

// Expands a range object into its values. Ranges are capped at kMaxRangeValues values.
void expand_range(const ordered_json& range, const std::string& source, const std::string& pointer,
                  std::vector<nlohmann::json>& out) {
  for (const auto& [key, value] : range.items()) {
    if (key != "from" && key != "to" && key != "step" && key != "times") {
      throw ConfigError(source, pointer + io::pointer_token(key),
                        "unknown range key '" + key + "'" +
                            io::did_you_mean(key, {"from", "to", "step", "times"}) +
                            "; expected from, to and one of step or times");
    }
  }
  const bool has_step = range.contains("step");
  const bool has_times = range.contains("times");
  if (has_step == has_times) {
    throw ConfigError(source, pointer,
                      "range needs exactly one of step and times; expected {\"from\": a, \"to\": "
                      "b, \"step\": s} or {\"from\": a, \"to\": b, \"times\": t}, got " +
                          describe(range));
  }
  const std::int64_t from = range_integer(range, "from", source, pointer);
  const std::int64_t to = range_integer(range, "to", source, pointer);
  if (to < from) {
    throw ConfigError(source, pointer + "/to",
                      "range ends before it starts; expected to >= from (" + std::to_string(from) +
                          "), got " + std::to_string(to));
  }
  if (has_step) {
    const std::int64_t step = range_integer(range, "step", source, pointer);
    if (step < 1) {
      throw ConfigError(
          source, pointer + "/step",
          "range step not positive; expected an integer >= 1, got " + std::to_string(step));
    }
    // to - from overflows for from = -2^63, to = 2^63 - 1: such a range is too long anyway.
    std::int64_t span = 0;
    if (__builtin_sub_overflow(to, from, &span) || span / step >= kMaxRangeValues) {
      throw ConfigError(source, pointer, "range too long; expected at most 1000000 values");
    }
    for (std::int64_t v = from; v <= to; v += step) {
      out.emplace_back(v);
      if (v > std::numeric_limits<std::int64_t>::max() - step) break;
    }
  } else {
    const std::int64_t times = range_integer(range, "times", source, pointer);
    if (times < 2) {
      throw ConfigError(
          source, pointer + "/times",
          "range factor too small; expected an integer >= 2, got " + std::to_string(times));
    }
    if (from < 1) {
      throw ConfigError(
          source, pointer + "/from",
          "geometric range must start above 0; expected from >= 1, got " + std::to_string(from));
    }
    for (std::int64_t v = from; v <= to; v *= times) {
      out.emplace_back(v);
      if (v > std::numeric_limits<std::int64_t>::max() / times) break;
    }
  }
}

// The product of the axis lengths, exact while it fits an int64 and about ("1.2e+20") beyond,
// where a cast to int64 would be undefined.
std::string scenario_count(double total) {
  if (total < 9.2e18) return std::to_string(static_cast<std::int64_t>(total));
  char text[32];
  (void)std::snprintf(text, sizeof text, "about %.3g", total);
  return text;
}

// Keys whose value names or holds a document (a built-in id, a file path or an inline object),
// so an object on their axis is that document, not a range. A stack is one as a scenario's
// "stack" is (its inline keys on an axis were read as a range, "unknown range key 'extends'").
bool is_reference_key(const std::string& key) {
  return key == "hardware" || key == "model" || key == "stack";
}

// "hardware profiles", "models" or "software stacks": what a reference axis lists.
std::string reference_noun(const std::string& key) {
  if (key == "hardware") return "hardware profiles";
  return key == "model" ? "models" : "software stacks";
}

// A key whose one value is a list: each element of its axis is a whole value (a list of the
// model chunks' layer counts), never a range.
bool is_list_key(const std::string& key) { return key == "parallel.pipeline_layout"; }

// `v` as text in which values the scenario reads alike are alike: a float with an integral
// value is written as the integer (1.0, 1e0 and a range's 1 are one value of an axis; [1, 1.0]
// gave the same rows twice), inside arrays and objects too.
std::string same_value_text(const nlohmann::json& v) {
  const auto canonical = [](const auto& self, const nlohmann::json& x) -> nlohmann::json {
    if (x.is_number_float()) {
      const double d = x.get<double>();
      // Within +-2^53 every integral double is an exact int64.
      if (std::isfinite(d) && d == std::floor(d) && std::abs(d) <= 9007199254740992.0) {
        return static_cast<std::int64_t>(d);
      }
      return x;
    }
    if (x.is_number_unsigned() && x.get<std::uint64_t>() <= 9007199254740992ULL) {
      return static_cast<std::int64_t>(x.get<std::uint64_t>());
    }
    if (x.is_array() || x.is_object()) {
      nlohmann::json out = x;
      for (auto& item : out) item = self(self, item);
      return out;
    }
    return x;
  };
  return canonical(canonical, v).dump();
}

// The number of values a range object would expand to, or none where it is malformed.
std::optional<double> range_values_count(const ordered_json& range) {
  for (const auto& [key, value] : range.items()) {
    if (key != "from" && key != "to" && key != "step" && key != "times") return std::nullopt;
  }
  const auto integer = [&](const char* key) -> std::optional<std::int64_t> {
    const auto it = range.find(key);
    if (it == range.end() || !it->is_number_integer()) return std::nullopt;
    if (it->is_number_unsigned() &&
        it->get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return it->get<std::int64_t>();
  };
  const auto from = integer("from");
  const auto to = integer("to");
  if (!from || !to || *to < *from || range.contains("step") == range.contains("times")) {
    return std::nullopt;
  }
  // In int64, as expand_range counts them.
  if (const auto step = integer("step"); step && *step >= 1) {
    std::int64_t span = 0;
    if (__builtin_sub_overflow(*to, *from, &span)) return std::nullopt;
    return static_cast<double>(span / *step + 1);
  }
  if (const auto times = integer("times"); times && *times >= 2 && *from >= 1) {
    std::int64_t n = 0;
    for (std::int64_t v = *from; v <= *to; v *= *times) {
      ++n;
      if (v > std::numeric_limits<std::int64_t>::max() / *times) break;
    }
    return static_cast<double>(n);
  }
  return std::nullopt;
}

// The number of values a well-formed range object expands to, without expanding it; none for
// anything malformed or longer than expand_range allows (it names the problem).
std::optional<double> range_length(const ordered_json& range) {
  const auto length = range_values_count(range);
  if (!length || *length > static_cast<double>(kMaxRangeValues)) return std::nullopt;
  return length;
}

// The number of values of axis `key` without expanding its ranges (a list counts a range item
// as its values), or none where the axis is malformed.
std::optional<double> axis_length(const std::string& key, const ordered_json& axis) {
  const auto item = [&](const ordered_json& v) -> std::optional<double> {
    if (v.is_object() && !is_reference_key(key) && !is_list_key(key)) return range_length(v);
    return 1.0;
  };
  if (axis.is_array()) {
    double n = 0.0;
    for (const auto& v : axis) {
      const auto k = item(v);
      if (!k) return std::nullopt;
      n += *k;
    }
    return n;
  }
  if (axis.is_object()) return item(axis);
  return std::nullopt;
}

// The refusal of a sweep of `total` scenarios, above kMaxSweepSize.
[[noreturn]] void sweep_too_large(const std::string& source, double total) {
  throw ConfigError(source, "/axes",
                    "sweep too large; expected at most " + std::to_string(kMaxSweepSize) +
                        " scenarios, got " + scenario_count(total));
}

// Refuses a sweep too large from its axes' lengths, before any range is expanded: five ranges
// of 900,000 values (5.9e29 scenarios) took 4 s to expand and check for repeated values before
// they were refused as too many. Only a spec that parse_sweep_spec would read up to its own size
// check is counted (known keys, not both cluster.gpus and cluster.nodes, zip groups of axis keys
// each zipped once with equal lengths, well-formed ranges); anything else keeps its own message.
// A zip group counts once.
void refuse_oversized_axes(const ordered_json& spec, const ordered_json& axes,
                           const std::string& source) {
  const std::vector<std::string>& paths = io::scenario_paths();
  if (axes.contains("cluster.gpus") && axes.contains("cluster.nodes")) return;
  std::map<std::string, double> length;
  for (const auto& [key, axis] : axes.items()) {
    const auto n = axis_length(key, axis);
    if (!n || std::find(paths.begin(), paths.end(), key) == paths.end()) return;
    length[key] = *n;
  }
  std::set<std::string> zipped;
  double total = 1.0;
  if (spec.contains("zip")) {
    const ordered_json& zip = spec["zip"];
    if (!zip.is_array()) return;
    for (const ordered_json& group : zip) {
      if (!group.is_array() || group.size() < 2) return;
      for (const ordered_json& key : group) {
        if (!key.is_string() || length.count(key.get<std::string>()) == 0 ||
            !zipped.insert(key.get<std::string>()).second ||
            length[key.get<std::string>()] != length[group[0].get<std::string>()]) {
          return;
        }
      }
      total *= length[group[0].get<std::string>()];
    }
  }
  for (const auto& [key, n] : length) {
    if (zipped.count(key) == 0) total *= n;
  }
  if (total > static_cast<double>(kMaxSweepSize)) sweep_too_large(source, total);
}

// The values of axis `key`, and in `where` the spec pointer each was written at (a range's
// values share the range's).
std::vector<nlohmann::json> axis_values(const std::string& key, const ordered_json& axis,
                                        const std::string& source, const std::string& pointer,
                                        std::vector<std::string>& where) {
  std::vector<nlohmann::json> values;
  auto add = [&](const ordered_json& v, const std::string& at) {
    const std::size_t before = values.size();
    if (is_list_key(key)) {
      if (!v.is_array()) {
        throw ConfigError(source, at,
                          "axis value not a layout; expected each value a list of layer "
                          "counts per model chunk, the axis a list of them such as "
                          "[[7, 9, 9, 7], [8, 8, 8, 8]], got " +
                              describe(v));
      }
      values.emplace_back(nlohmann::json(v));
    } else if (v.is_object() && !is_reference_key(key)) {
      expand_range(v, source, at, values);
    } else if (v.is_object() && v.contains("from") && v.contains("to") &&
               std::all_of(v.items().begin(), v.items().end(), [](const auto& item) {
                 return item.key() == "from" || item.key() == "to" || item.key() == "step" ||
                        item.key() == "times";
               })) {
      // A range where the axis takes documents: said as such (it was read as an inline object
      // and refused for its missing id, "a misspelling of 'id'?").
      throw ConfigError(source, at,
                        "a range on the " + key + " axis; expected " + reference_noun(key) +
                            " (built-in names, file paths or inline objects), which no range "
                            "counts");
    } else if (v.is_array() || v.is_null()) {
      throw ConfigError(source, at,
                        "axis value not a scalar; expected a number, string, boolean or range "
                        "object, got " +
                            describe(v));
    } else {
      values.emplace_back(nlohmann::json(v));
    }
    where.resize(where.size() + values.size() - before, at);
  };
  if (axis.is_array()) {
    for (std::size_t j = 0; j < axis.size(); ++j) add(axis[j], pointer + "/" + std::to_string(j));
  } else if (axis.is_object() && !is_reference_key(key) && !is_list_key(key)) {
    add(axis, pointer);
  } else if (is_reference_key(key)) {
    throw ConfigError(source, pointer,
                      "axis is not a list; expected a list of " + reference_noun(key) +
                          " (built-in names, file paths or inline objects), got " + describe(axis));
  } else {
    throw ConfigError(source, pointer,
                      "axis is not a list or a range; expected a list of values or {\"from\": a, "
                      "\"to\": b, \"step\"|\"times\": n}, got " +
                          describe(axis));
  }
  if (values.empty()) {
    throw ConfigError(source, pointer, "empty axis; expected at least one value, got []");
  }
  return values;
}

// Resolves a scenario document; an error inside an inline base is located under /base. Each
// distinct reference is loaded once (ScenarioResolver): an axis of 10,000 values took 4.1 s to
// check, every value parsing the built-in profile and model again.
parallel::Scenario resolve(ScenarioResolver& resolver, const io::ScenarioDocument& doc,
                           const std::string& source, bool inline_base) {
  try {
    return resolver.resolve(doc);
  } catch (const ConfigError& e) {
    // An inline object is already named where the spec writes it (/axes/..., /base/...).
    if (inline_base && e.source() == doc.source && e.pointer().rfind("/axes/", 0) != 0 &&
        e.pointer().rfind("/base/", 0) != 0) {
      throw e.located(source, "/base");
    }
    throw;
  }
}

}  // namespace

std::int64_t SweepSpec::size() const {
  std::int64_t n = 1;
  for (const AxisGroup& g : groups) n *= g.size();
  return n;
}

namespace {

// The value index of each key of `spec` in scenario `index`: mixed radix with the last group as
// the lowest digit, so the first group varies slowest.
std::vector<std::size_t> value_indices(const SweepSpec& spec, std::int64_t index) {
  std::vector<std::int64_t> digit(spec.groups.size());
  for (std::size_t g = spec.groups.size(); g-- > 0;) {
    digit[g] = index % spec.groups[g].size();
    index /= spec.groups[g].size();
  }
  std::vector<std::size_t> out(spec.keys.size());
  for (std::size_t k = 0; k < spec.keys.size(); ++k) {
    for (std::size_t g = 0; g < spec.groups.size(); ++g) {
      const auto& gk = spec.groups[g].keys;
      if (std::find(gk.begin(), gk.end(), spec.keys[k]) != gk.end()) {
        out[k] = static_cast<std::size_t>(digit[g]);
      }
    }
  }
  return out;
}

// The axis values at the value indices `at` (value_indices), one per key of `spec`.
std::vector<nlohmann::json> values_at(const SweepSpec& spec, const std::vector<std::size_t>& at) {
  std::vector<nlohmann::json> out;
  out.reserve(spec.keys.size());
  for (std::size_t k = 0; k < spec.keys.size(); ++k) {
    for (const AxisGroup& g : spec.groups) {
      const auto it = std::find(g.keys.begin(), g.keys.end(), spec.keys[k]);
      if (it != g.keys.end())
        out.push_back(g.values[static_cast<std::size_t>(it - g.keys.begin())][at[k]]);
    }
  }
  return out;
}

}  // namespace

std::vector<nlohmann::json> SweepSpec::point(std::int64_t index) const {
  return values_at(*this, value_indices(*this, index));
}

io::ScenarioDocument SweepSpec::document(std::int64_t index) const {
  io::ScenarioDocument doc = base;
  // The value indices once, for the values and for where an inline one is written.
  const std::vector<std::size_t> at = value_indices(*this, index);
  const std::vector<nlohmann::json> values = values_at(*this, at);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (values[k].is_object() && k < where.size() && at[k] < where[k].size()) {
      // An inline hardware, model or stack: its loader names the spec and the value's place in
      // it, in notes and errors alike.
      std::string pointer = "/" + keys[k];
      std::replace(pointer.begin(), pointer.end(), '.', '/');
      doc.written_at[pointer] = {source, where[k][at[k]]};
    }
    io::set_path(doc, keys[k], values[k], base.source + " (axis " + keys[k] + ")");
  }
  return doc;
}

namespace {

// shard_group applies to the hybrid_shard scenarios only, and a sweep may give it beside a
// sharding axis for them; one whose every scenario shards otherwise ignored it in every row
// (run refuses such a scenario: load_scenario).
void check_shard_group(const SweepSpec& spec, const std::string& source, bool inline_base) {
  const auto axis = [&spec](const std::string& key) -> const std::vector<nlohmann::json>* {
    for (const AxisGroup& g : spec.groups) {
      for (std::size_t k = 0; k < g.keys.size(); ++k) {
        if (g.keys[k] == key) return &g.values[k];
      }
    }
    return nullptr;
  };
  const nlohmann::json* par =
      spec.base.json.contains("parallel") && spec.base.json["parallel"].is_object()
          ? &spec.base.json["parallel"]
          : nullptr;
  const bool in_base = par != nullptr && par->contains("shard_group");
  const std::vector<nlohmann::json>* on_axis = axis("parallel.shard_group");
  if (!in_base && on_axis == nullptr) return;
  std::vector<nlohmann::json> shardings;
  if (const auto* values = axis("parallel.sharding")) {
    shardings = *values;
  } else {
    shardings.push_back(par != nullptr && par->contains("sharding") ? par->at("sharding")
                                                                    : nlohmann::json("none"));
  }
  const bool hybrid = std::any_of(shardings.begin(), shardings.end(), [](const auto& v) {
    return v.is_string() && v.template get<std::string>() == "hybrid_shard";
  });
  if (hybrid) return;
  std::string list;
  for (const auto& v : shardings) list += (list.empty() ? "" : ", ") + v.dump();
  throw ConfigError(on_axis != nullptr || inline_base ? source : spec.base.source,
                    on_axis != nullptr ? "/axes" + io::pointer_token("parallel.shard_group")
                    : inline_base      ? "/base/parallel/shard_group"
                                       : "/parallel/shard_group",
                    "shard_group applies only with sharding \"hybrid_shard\", and no scenario of "
                    "the sweep has it (sharding " +
                        list +
                        "); expected \"hybrid_shard\" among the sharding values, or no "
                        "shard_group");
}

}  // namespace

SweepSpec parse_sweep_spec(const std::string& text, const std::string& source,
                           const std::string& base_dir) {
  (void)io::parse_json(text, source);  // the project's message for malformed JSON
  (void)io::check_unique_keys(text, source, io::kMaxOrderedKeys);  // the ordered parse's width
  const ordered_json spec = ordered_json::parse(text);
  if (!spec.is_object()) {
    throw ConfigError(source, "",
                      "sweep spec not an object; expected {\"base\": ..., \"axes\": "
                      "...}, got " +
                          describe(spec));
  }
  for (const auto& [key, value] : spec.items()) {
    if (std::find(kSpecKeys.begin(), kSpecKeys.end(), key) == kSpecKeys.end()) {
      throw ConfigError(source, io::pointer_token(key),
                        "unknown key '" + key + "'" + io::did_you_mean(key, kSpecKeys) +
                            "; expected base, axes, zip or description");
    }
  }
  if (spec.contains("description") && !spec["description"].is_string()) {
    throw ConfigError(source, "/description",
                      "not a string; expected text, got " + describe(spec["description"]));
  }

  SweepSpec out;
  // The base scenario: inline or a file next to the spec.
  if (!spec.contains("base")) {
    throw ConfigError(source, "/base", "missing key; expected a scenario object or file path");
  }
  const ordered_json& base = spec["base"];
  const bool inline_base = base.is_object();
  if (inline_base) {
    out.base.json = nlohmann::json(base);
    out.base.source = source;
    out.base.base_dir = base_dir;
    for (const char* key : {"hardware", "model", "stack"}) {
      if (base.contains(key) && base[key].is_object()) {
        out.base.written_at[std::string("/") + key] = {source, std::string("/base/") + key};
      }
    }
  } else if (base.is_string() && base.get<std::string>().empty()) {
    throw ConfigError(source, "/base", "empty path; expected a scenario object or a file path");
  } else if (base.is_string()) {
    const std::filesystem::path p = std::filesystem::path(base_dir) / base.get<std::string>();
    const std::string path = base_dir.empty() ? base.get<std::string>() : p.string();
    // A base that is not there is the spec's fault: named at its key, as an axis's file is
    // (several specs may share one base folder). What is wrong inside the file names the file.
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (status.type() == std::filesystem::file_type::not_found) {
      throw ConfigError(source, "/base",
                        "no such file '" + path +
                            "' (a relative path is taken from the spec's folder); expected a "
                            "scenario object or a scenario file");
    }
    if (status.type() == std::filesystem::file_type::directory) {
      throw ConfigError(source, "/base",
                        "'" + path +
                            "' is a directory; expected a scenario object or a scenario "
                            "file");
    }
    out.base = io::read_scenario_file(path);
  } else {
    throw ConfigError(
        source, "/base",
        "base not a scenario; expected a scenario object or a file path, got " + describe(base));
  }

  // Axes in written order.
  if (!spec.contains("axes")) {
    throw ConfigError(source, "/axes",
                      "missing key; expected an object of dotted scenario keys "
                      "to value lists, such as {\"parallel.tp\": [1, 2, 4]}");
  }
  const ordered_json& axes = spec["axes"];
  if (!axes.is_object()) {
    throw ConfigError(source, "/axes",
                      "axes not an object; expected {\"parallel.tp\": [1, 2]}, "
                      "got " +
                          describe(axes));
  }
  refuse_oversized_axes(spec, axes, source);

  const std::vector<std::string>& known = io::scenario_paths();
  std::vector<std::vector<nlohmann::json>> lists;
  std::vector<std::vector<std::string>> where;  // where[k][j]: the spec pointer of lists[k][j]
  for (const auto& [key, axis] : axes.items()) {
    const std::string pointer = "/axes" + io::pointer_token(key);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string all;
      for (const std::string& k : known) all += (all.empty() ? "" : ", ") + k;
      throw ConfigError(source, pointer,
                        "unknown scenario key '" + key + "'" + io::did_you_mean(key, known) +
                            "; expected one of " + all);
    }
    if ((key == "cluster.gpus" && axes.contains("cluster.nodes")) ||
        (key == "cluster.nodes" && axes.contains("cluster.gpus"))) {
      throw ConfigError(source, pointer,
                        "both cluster.gpus and cluster.nodes are axes; expected "
                        "one of them");
    }
    out.keys.push_back(key);
    lists.push_back(axis_values(key, axis, source, pointer, where.emplace_back()));
  }

  // Zip groups: each key at most once, all in "axes", equal lengths.
  std::vector<int> group_of(out.keys.size(), -1);
  std::vector<std::vector<std::size_t>> zips;
  if (spec.contains("zip")) {
    const ordered_json& zip = spec["zip"];
    if (!zip.is_array()) {
      throw ConfigError(source, "/zip",
                        "zip not a list; expected a list of key lists such as "
                        "[[\"cluster.gpus\", \"training.global_batch\"]], got " +
                            describe(zip));
    }
    for (std::size_t z = 0; z < zip.size(); ++z) {
      const std::string zp = "/zip/" + std::to_string(z);
      if (!zip[z].is_array() || zip[z].size() < 2) {
        throw ConfigError(source, zp,
                          "zip group not a list of keys; expected two or more axis "
                          "keys, got " +
                              describe(zip[z]));
      }
      std::vector<std::size_t> members;
      for (std::size_t m = 0; m < zip[z].size(); ++m) {
        const std::string mp = zp + "/" + std::to_string(m);
        if (!zip[z][m].is_string()) {
          throw ConfigError(
              source, mp, "zip key not a string; expected an axis key, got " + describe(zip[z][m]));
        }
        const std::string key = zip[z][m].get<std::string>();
        const auto it = std::find(out.keys.begin(), out.keys.end(), key);
        if (it == out.keys.end()) {
          throw ConfigError(source, mp,
                            "zip key '" + key + "' is not an axis" +
                                io::did_you_mean(key, out.keys) + "; expected a key of \"axes\"");
        }
        const auto k = static_cast<std::size_t>(it - out.keys.begin());
        if (group_of[k] != -1) {
          throw ConfigError(source, mp,
                            "axis '" + key +
                                "' zipped twice; expected each axis in "
                                "at most one zip group");
        }
        group_of[k] = static_cast<int>(z);
        if (lists[k].size() != lists[members.empty() ? k : members.front()].size()) {
          const std::string first = out.keys[members.front()];
          throw ConfigError(source, mp,
                            "zipped axes of different lengths; expected " +
                                std::to_string(lists[members.front()].size()) + " values as '" +
                                first + "' has, got " + std::to_string(lists[k].size()) + " for '" +
                                key + "'");
        }
        members.push_back(k);
      }
      zips.push_back(members);
    }
  }

  // Groups in the order of their first key in "axes".
  std::vector<bool> placed(out.keys.size(), false);
  for (std::size_t k = 0; k < out.keys.size(); ++k) {
    if (placed[k]) continue;
    AxisGroup g;
    const std::vector<std::size_t> members = group_of[k] == -1
                                                 ? std::vector<std::size_t>{k}
                                                 : zips[static_cast<std::size_t>(group_of[k])];
    for (const std::size_t m : members) {
      placed[m] = true;
      g.keys.push_back(out.keys[m]);
      g.values.push_back(lists[m]);
    }
    // A value given twice ([2, 2, 1], or a list item a range repeats), or a zip group's tuple
    // given twice, would give the same rows twice, in silence. Zipped axes may repeat a value
    // alone ([a, a, b] beside [8, 16, 8]).
    std::map<std::string, std::size_t> first;
    for (std::size_t j = 0; j < lists[members.front()].size(); ++j) {
      std::string tuple;
      for (const std::size_t m : members) tuple += same_value_text(lists[m][j]) + "\x1f";
      const auto [it, added] = first.emplace(tuple, j);
      if (added) continue;
      const std::size_t m = members.front();
      const std::string what =
          members.size() > 1
              ? "zipped values of row " + std::to_string(j) + " repeat the ones of row " +
                    std::to_string(it->second) + "; expected each row of a zip group once"
              : "value " + lists[m][j].dump() + " repeats the one at " + where[m][it->second] +
                    "; expected each value of an axis once";
      throw ConfigError(source, where[m][j],
                        what + " (a repeated value gives the same rows twice)");
    }
    out.groups.push_back(std::move(g));
  }
  out.source = source;
  out.where = where;
  // Sorted keys: out.keys stays in written order; groups hold zipped keys in zip order.
  double total = 1;
  for (const AxisGroup& g : out.groups) total *= static_cast<double>(g.size());
  if (total > static_cast<double>(kMaxSweepSize)) sweep_too_large(source, total);

  // Check every axis value once against the first scenario (types, units, names), so bad input
  // fails before anything is simulated and whatever the shard; every reference is read there.
  // A value's error is located where the spec writes it, not at its key in the scenario.
  ScenarioResolver resolver;
  std::set<std::string> references;
  const auto note_references = [&references](const parallel::Scenario& s) {
    for (const std::string* path : {&s.hardware_path, &s.model_path, &s.stack_path}) {
      if (!path->empty()) references.insert(*path);
    }
    references.insert(s.stack.extends_files.begin(), s.stack.extends_files.end());
  };
  const auto check = [&](std::size_t group, std::int64_t j) {
    std::int64_t stride = 1;
    for (std::size_t h = group + 1; h < out.groups.size(); ++h) stride *= out.groups[h].size();
    try {
      note_references(resolve(resolver, out.document(j * stride), source, inline_base));
    } catch (const ConfigError& e) {
      for (std::size_t k = 0; k < out.keys.size(); ++k) {
        const std::string& key = out.keys[k];
        if (e.source() != out.base.source + " (axis " + key + ")") continue;
        std::string at = key;
        std::replace(at.begin(), at.end(), '.', '/');
        at = "/" + at;
        if (e.pointer().rfind(at, 0) != 0) continue;
        const bool in_group =
            std::find(out.groups[group].keys.begin(), out.groups[group].keys.end(), key) !=
            out.groups[group].keys.end();
        const std::string& written = where[k][static_cast<std::size_t>(in_group ? j : 0)];
        throw ConfigError(source, written + e.pointer().substr(at.size()), e.problem());
      }
      throw;
    }
  };
  for (std::size_t g = 0; g < out.groups.size(); ++g) {
    for (std::int64_t j = g == 0 ? 0 : 1; j < out.groups[g].size(); ++j) check(g, j);
  }
  if (out.groups.empty()) note_references(resolve(resolver, out.document(0), source, inline_base));
  out.references.assign(references.begin(), references.end());
  out.reference_files = reference_file_digests(out.references);
  check_shard_group(out, source, inline_base);
  return out;
}

SweepSpec read_sweep_spec(const std::string& path) {
  // Bounded: /dev/zero or a directory is refused, not read forever.
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw ConfigError(path, "", "cannot read the file; expected a readable sweep spec");
  }
  const std::string text = io::read_text_file(path, io::kMaxJsonBytes, "a sweep spec");
  return parse_sweep_spec(text, path, std::filesystem::path(path).parent_path().string());
}

}  // namespace trainsim::sweep
