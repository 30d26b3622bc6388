#include "sim/io/search_merge.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/error.hpp"

#include "sim/io/json_reader.hpp"
#include "sim/io/report_writer.hpp"
#include "sim/io/scenario_loader.hpp"

namespace trainsim::io {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kExpected = "expected the JSON output of trainsim search --format json";

struct Shard {
  const SweepOutput* source = nullptr;
  const Json* doc = nullptr;  // owned by merge_search_outputs' `docs`
  std::int64_t index = 0;
  std::int64_t count = 1;
};

// Whether two values hold the same, whatever the order of their objects' keys (a shard written
// again by another JSON tool may reorder them).
bool same_values(const Json& a, const Json& b) {
  return nlohmann::json::parse(a.dump()) == nlohmann::json::parse(b.dump());
}

const Json& require(const Json& object, const std::string& key, const std::string& source,
                    const std::string& at = "") {
  const auto it = object.find(key);
  if (it == object.end()) {
    throw ConfigError(source, at + "/" + key, std::string("missing required key; ") + kExpected);
  }
  return *it;
}

std::int64_t require_count(const Json& doc, const std::string& key, const std::string& source) {
  const Json& v = require(doc, key, source);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0) {
    throw ConfigError(source, "/" + key, "expected a count >= 0, got " + v.dump());
  }
  return v.get<std::int64_t>();
}

// "K/N" with 0 <= K < N.
std::pair<std::int64_t, std::int64_t> parse_shard(const Json& v, const std::string& source) {
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  const std::size_t slash = text.find('/');
  std::int64_t k = -1;
  std::int64_t n = 0;
  bool ok = v.is_string() && slash != std::string::npos;
  if (ok) {
    const char* begin = text.data();
    const char* mid = begin + slash;
    const char* end = begin + text.size();
    const auto rk = std::from_chars(begin, mid, k);
    const auto rn = std::from_chars(mid + 1, end, n);
    ok = rk.ec == std::errc() && rk.ptr == mid && rn.ec == std::errc() && rn.ptr == end && n >= 1 &&
         k >= 0 && k < n;
  }
  if (!ok) throw ConfigError(source, "/shard", "expected 'K/N' with 0 <= K < N, got " + v.dump());
  return {k, n};
}

// The objective's value of one plan, larger is better (as sweep::score).
double score(const Json& plan, const std::string& objective, const std::string& source,
             const std::string& at) {
  const Json* v = nullptr;
  double sign = 1.0;
  if (objective == "tokens_per_s") {
    v = &require(plan, "tokens_per_s", source, at);
  } else if (objective == "tokens_per_joule") {
    v = &require(require(plan, "power", source, at), "tokens_per_joule", source, at + "/power");
  } else {
    v = &require(require(plan, "cost", source, at), "usd_per_million_tokens", source, at + "/cost");
    sign = -1.0;
  }
  if (!v->is_number()) throw ConfigError(source, at, "objective value is not a number");
  return sign * v->get<double>();
}

// The shards are those of one search run, each there once: everything but their own counts and
// plans agrees with the first input's.
void check_one_split(const std::vector<Shard>& shards) {
  const Shard& first = shards.front();
  for (const Shard& s : shards) {
    for (const char* key : {"context", "objective", "top", "enumerated", "spec"}) {
      if (!same_values(require(*s.doc, key, s.source->source),
                       require(*first.doc, key, first.source->source))) {
        // The spec digests the plans and the memory headroom (search's search_digest): say so,
        // since the documents show neither.
        throw ConfigError(
            s.source->source, std::string("/") + key,
            "differs from " + first.source->source +
                "'s; expected shards of one search run by one trainsim version" +
                (std::string_view(key) == "spec" ? " (the same scenario and files, search space, "
                                                   "--memory-headroom and --full-simulation or not)"
                                                 : ""));
      }
    }
  }
  // The memory budget follows from the scenario and --memory-headroom, which the spec digests;
  // documents written before searches stated it have none.
  for (const Shard& s : shards) {
    const auto* mine = s.doc->contains("memory_per_gpu") ? &(*s.doc)["memory_per_gpu"] : nullptr;
    const auto* theirs =
        first.doc->contains("memory_per_gpu") ? &(*first.doc)["memory_per_gpu"] : nullptr;
    std::string problem;
    if (mine == nullptr && theirs != nullptr) {
      problem = "absent where " + first.source->source + " has it";
    } else if (mine != nullptr && theirs == nullptr) {
      problem = "present where " + first.source->source + " has none";
    } else if (mine != nullptr && !same_values(*mine, *theirs)) {
      problem = "differs from " + first.source->source + "'s";
    }
    if (!problem.empty()) {
      throw ConfigError(s.source->source, "/memory_per_gpu",
                        problem +
                            "; expected shards of one search run by one trainsim version (the "
                            "same scenario and --memory-headroom)");
    }
  }
  const std::int64_t count = first.count;
  std::map<std::int64_t, const Shard*> seen;
  for (const Shard& s : shards) {
    if (s.count != count) {
      throw ConfigError(s.source->source, "/shard",
                        "shard of " + std::to_string(s.count) + ", but " + first.source->source +
                            " is a shard of " + std::to_string(count) + "; expected one split");
    }
    const auto [it, inserted] = seen.emplace(s.index, &s);
    if (!inserted) {
      throw ConfigError(s.source->source, "/shard",
                        "shard " + std::to_string(s.index) + "/" + std::to_string(count) +
                            " given twice, also in " + it->second->source->source +
                            "; expected each shard once");
    }
  }
  for (std::int64_t k = 0; k < count; ++k) {
    if (seen.count(k) == 0) {
      throw ConfigError("merge", "",
                        "missing shard " + std::to_string(k) + "/" + std::to_string(count) +
                            "; expected every shard from 0 to " + std::to_string(count - 1));
    }
  }
}

// The keys trainsim search --format json writes at the top of a document ("spec" only with
// --shard, "bounded" since the bounded search, "memory_per_gpu" since searches state their
// memory budget, "explanation" only with --explain). No sweep row or end record has them
// (output_kind).
const std::set<std::string, std::less<>>& document_keys() {
  static const std::set<std::string, std::less<>> keys = {
      "context", "objective", "shard",   "spec",           "top",   "enumerated",    "evaluated",
      "invalid", "simulated", "bounded", "memory_per_gpu", "plans", "out_of_memory", "explanation"};
  return keys;
}

// The memory budget as search writes it, shaped as io::memory_reserve_to_json writes one: the
// same keys, byte counts as integers >= 0, the headroom fraction in [0, 1). It is copied into
// the merged document, so an edited one was carried on.
void check_memory_budget(const Json& memory, const std::string& source) {
  static const nlohmann::json shape = memory_reserve_to_json(report::MemoryBreakdown{});
  const std::string kExpectedBudget = "expected the memory budget trainsim search writes";
  const auto check = [&](const auto& self, const Json& v, const nlohmann::json& like,
                         const std::string& at) -> void {
    const auto fail = [&](const std::string& expected) {
      throw ConfigError(
          source, at,
          "expected " + expected + ", as trainsim search writes it, got " + v.dump().substr(0, 40));
    };
    if (like.is_object()) {
      if (!v.is_object()) fail("an object");
      for (const auto& [key, value] : like.items()) {
        if (!v.contains(key)) {
          throw ConfigError(source, at, "missing key '" + key + "'; " + kExpectedBudget);
        }
      }
      for (const auto& [key, value] : v.items()) {
        if (!like.contains(key)) {
          throw ConfigError(source, at + "/" + key, "unknown key; " + kExpectedBudget);
        }
        self(self, value, like[key], at + "/" + key);
      }
    } else if (like.is_number_float()) {
      if (!(v.is_number() && v.get<double>() >= 0.0 && v.get<double>() < 1.0)) {
        fail("a fraction from 0 to below 1");
      }
    } else if (!(v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0))) {
      fail("a byte count, an integer >= 0");
    }
  };
  check(check, memory, shape, "/memory_per_gpu");
}

// The keys of a document (document_keys) and of each plan: "rank", "index" and the report's keys
// less "context" (io::report_to_json). A key outside these, or a plan without one, is a document
// edited or damaged by hand: merge would copy it into its output.
void check_document_keys(const Json& doc, const std::string& source) {
  for (const auto& [key, value] : doc.items()) {
    if (document_keys().count(key) == 0) {
      throw ConfigError(source, "/" + key, std::string("unknown key; ") + kExpected);
    }
  }
  const Json& plans = require(doc, "plans", source);
  if (!plans.is_array()) throw ConfigError(source, "/plans", "expected an array of plans");
  if (doc.contains("memory_per_gpu")) check_memory_budget(doc["memory_per_gpu"], source);
}

void check_plan_keys(const Json& plan, const std::string& source, const std::string& at) {
  const auto& report = report_json_keys();
  const auto own = [](const std::string& key) {
    return key == "rank" || key == "index" || key == "scenario";
  };
  if (!plan.is_object()) throw ConfigError(source, at, "expected an object (a plan)");
  for (const auto& [key, value] : plan.items()) {
    if (!own(key) && report.count(key) == 0) {
      throw ConfigError(source, at + "/" + key,
                        std::string("unknown key; expected only a plan's keys (rank, index, "
                                    "scenario and the report's); ") +
                            kExpected);
    }
  }
  for (const char* key : {"rank", "index", "scenario"}) (void)require(plan, key, source, at);
  for (const auto& [key, kind] : report) (void)require(plan, key, source, at);
  // The scenario's keys and values (the merged document copies it), then the keys inside the
  // report's objects and rows, as the search writes them.
  if (auto p = echoed_scenario_problem(nlohmann::json::parse(plan["scenario"].dump()))) {
    std::string pointer = at + "/scenario" + (p->path.empty() ? "" : "/" + p->path);
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    throw ConfigError(source, pointer, p->text() + "; " + kExpected);
  }
  for (const auto& [key, kind] : report) {
    if (kind == ReportValue::Metric || kind == ReportValue::Count) continue;
    const nlohmann::json value = nlohmann::json::parse(plan[key].dump());
    if (auto p = report_keys_problem(value, key)) {
      throw ConfigError(source, at + "/" + key, *p + "; " + kExpected);
    }
    // The values too, as the sweep's merge checks them: a byte count of 1.5 was copied.
    if (auto p = report_values_problem(value, key, kind)) {
      throw ConfigError(source, at + "/" + key, *p + "; " + kExpected);
    }
  }
  // The report's figures are numbers >= 0 (the search writes no other): an edited one would be
  // ranked as written (tokens_per_s -5 dropped the best plan, 1e308 made a plan the best).
  const auto number = [](const Json& v) {
    return v.is_number() && v.get<double>() >= 0.0 && !std::signbit(v.get<double>());
  };
  for (const auto& [key, kind] : report) {
    if (kind == ReportValue::Metric && !number(plan[key])) {
      throw ConfigError(source, at + "/" + key,
                        "expected a number >= 0, as trainsim search writes it, got " +
                            plan[key].dump().substr(0, 40));
    }
    if (kind == ReportValue::Count && !(plan[key].is_number_integer() && number(plan[key]))) {
      throw ConfigError(source, at + "/" + key,
                        "expected a count, an integer >= 0, as trainsim search writes it, got " +
                            plan[key].dump().substr(0, 40));
    }
  }
  for (const char* group : {"power", "cost"}) {
    const Json& object = plan[group];
    if (!object.is_object()) throw ConfigError(source, at + "/" + group, "expected an object");
    for (const auto& [key, v] : object.items()) {
      if (!number(v)) {
        throw ConfigError(
            source, at + "/" + group + "/" + key,
            "expected a number >= 0, as trainsim search writes it, got " + v.dump().substr(0, 40));
      }
    }
  }
}

// A shard's counts agree with one another and with its plans: every plan it evaluated was
// invalid, out of memory, simulated or bounded out (sweep::search), and it lists its best `top`
// of the simulated ones, all of which fit. Returns nothing; throws naming the key.
void check_counts(const Shard& s, std::size_t top) {
  const std::string& src = s.source->source;
  const Json& doc = *s.doc;
  const std::int64_t evaluated = require_count(doc, "evaluated", src);
  const std::int64_t simulated = require_count(doc, "simulated", src);
  const std::int64_t parts = require_count(doc, "invalid", src) +
                             require_count(doc, "out_of_memory", src) + simulated +
                             (doc.contains("bounded") ? require_count(doc, "bounded", src) : 0);
  if (parts != evaluated) {
    throw ConfigError(src, "/evaluated",
                      std::to_string(evaluated) +
                          ", but invalid, out_of_memory, simulated and "
                          "bounded add up to " +
                          std::to_string(parts) + "; expected the counts of one search shard");
  }
  const std::size_t listed = doc["plans"].size();
  const std::size_t expected = std::min(top, static_cast<std::size_t>(simulated));
  if (listed != expected) {
    throw ConfigError(src, "/plans",
                      std::to_string(listed) + " plans with 'simulated' " +
                          std::to_string(simulated) + " and 'top' " + std::to_string(top) +
                          "; expected " + std::to_string(expected) +
                          " (the shard's best 'top' of its simulated plans)");
  }
}

}  // namespace

OutputKind output_kind(std::string_view head) {
  const auto skip_space = [&head](std::size_t at) {
    while (at < head.size() &&
           (head[at] == ' ' || head[at] == '\t' || head[at] == '\n' || head[at] == '\r')) {
      ++at;
    }
    return at;
  };
  std::size_t at = skip_space(0);
  if (at == head.size()) return OutputKind::Empty;
  if (head[at] != '{') {
    // A CSV header or end record, or neither.
    const std::string_view text = head.substr(at);
    return text.starts_with("index,") || text.starts_with("#") ? OutputKind::Sweep
                                                               : OutputKind::Other;
  }
  // A JSON line holds its first key on the line of its "{" (with a space before it where another
  // JSON tool wrote the row again); a search document is indented ("{\n  ...").
  ++at;
  while (at < head.size() && (head[at] == ' ' || head[at] == '\t')) ++at;
  if (head.substr(at, 1) != "\"") {
    // An indented document: a search's by its first key, or after its "context" object (no
    // object inside) by the next one. A run or describe report, a scenario or a sweep spec is
    // none ("a run report beside sweep shards" called the shards the odd ones out).
    const auto key_at = [&head, &skip_space](std::size_t from) -> std::string_view {
      from = skip_space(from);
      if (head.substr(from, 1) != "\"") return {};
      const std::size_t close = head.find('"', from + 1);
      return close == std::string_view::npos ? std::string_view{}
                                             : head.substr(from + 1, close - from - 1);
    };
    const std::string_view key = key_at(at);
    // No key to read (an array, damaged text): checked as a search document, which names it.
    if (key.empty()) return OutputKind::Search;
    if (key == "context") {
      const std::size_t end = head.find('}', at);
      const std::size_t comma = end == std::string_view::npos ? end : head.find(',', end);
      const std::string_view next =
          comma == std::string_view::npos ? std::string_view{} : key_at(comma + 1);
      // The next key past the head (a context cut at the 256 bytes read): a search document.
      return next.empty() || document_keys().count(next) != 0 ? OutputKind::Search
                                                              : OutputKind::Other;
    }
    return document_keys().count(key) != 0 ? OutputKind::Search : OutputKind::Other;
  }
  // The first key, up to its closing quote (a key of a search document has no escapes).
  const std::string_view first = head.substr(at + 1);
  const std::size_t close = first.find('"');
  const bool search_key =
      close != std::string_view::npos && document_keys().count(first.substr(0, close)) != 0;
  return search_key ? OutputKind::Search : OutputKind::Sweep;
}

MergedSearch merge_search_outputs(const std::vector<SweepOutput>& outputs) {
  std::deque<Json> docs;  // never moved once parsed: shards point into it
  std::vector<Shard> shards;
  for (const SweepOutput& o : outputs) {
    Json& doc = docs.emplace_back();
    // Nesting and size bounded as every JSON input's (a search document nests 4 deep), then a
    // key given twice in one object (a hand-edited shard) refused: the parse would keep its last
    // value without a word; and objects of more keys than the ordered parse takes quickly.
    if (output_kind(o.text) == OutputKind::Empty) {
      throw ConfigError(o.source, "",
                        std::string("empty file (the shard did not start or was cut short); ") +
                            kExpected + "; rerun that shard");
    }
    check_json_text(o.text, o.source, o.text.size(), kMaxJsonDepth, "a search output");
    (void)check_unique_keys(o.text, o.source, kMaxOrderedKeys);
    try {
      doc = Json::parse(o.text);
    } catch (const Json::exception& e) {  // parse_error, or out_of_range for 1e400
      // The JSON reader's message (its line and column, an empty file, a byte that is not
      // UTF-8), which the same text makes it throw; nlohmann's own words otherwise.
      (void)parse_checked_json(o.text, o.source, o.text.size(), kMaxJsonDepth, "a search output",
                               kExpected);
      throw ConfigError(o.source, "",
                        std::string("not valid JSON (") + e.what() + "); " + kExpected);
    }
    if (!doc.is_object()) {
      throw ConfigError(o.source, "", std::string("not an object; ") + kExpected);
    }
    const auto [index, count] = parse_shard(require(doc, "shard", o.source), o.source);
    // search writes the spec digest with --shard only: an unsharded document has none.
    if (!doc.contains("spec") && doc.contains("plans")) {
      throw ConfigError(o.source, "/spec",
                        "missing: an unsharded search output, which needs no merge; expected "
                        "the outputs of trainsim search --shard K/N --format json");
    }
    shards.push_back({&o, &doc, index, count});
  }
  if (shards.empty()) throw ConfigError("merge", "", "no inputs; expected one or more files");

  check_one_split(shards);
  const Shard& first = shards.front();

  const std::string objective = require(*first.doc, "objective", first.source->source).is_string()
                                    ? (*first.doc)["objective"].get<std::string>()
                                    : "";
  if (objective != "tokens_per_s" && objective != "tokens_per_joule" &&
      objective != "usd_per_million_tokens") {
    throw ConfigError(first.source->source, "/objective",
                      "unknown objective " + (*first.doc)["objective"].dump() +
                          "; expected tokens_per_s, tokens_per_joule or usd_per_million_tokens");
  }
  const Json& top_value = require(*first.doc, "top", first.source->source);
  if (!top_value.is_number_integer() || top_value.get<std::int64_t>() < 1) {
    throw ConfigError(first.source->source, "/top",
                      "expected a count >= 1, got " + top_value.dump());
  }
  const auto top = static_cast<std::size_t>(top_value.get<std::int64_t>());

  const std::int64_t enumerated = require_count(*first.doc, "enumerated", first.source->source);
  for (const Shard& s : shards) check_document_keys(*s.doc, s.source->source);

  struct Ranked {
    double score;
    std::int64_t index;
    const Json* plan;
  };
  std::vector<Ranked> ranked;
  std::map<std::int64_t, const Shard*> owner;
  // What every plan of one search shares: hardware, model, cluster and training but the
  // micro-batch, which the search varies.
  std::optional<std::pair<Json, std::string>> common;
  std::map<std::string, std::int64_t> sums;  // the shards' counts, added up
  for (const Shard& s : shards) {
    const std::string& src = s.source->source;
    for (const char* key : {"evaluated", "invalid", "out_of_memory", "simulated"}) {
      sums[key] += require_count(*s.doc, key, src);
    }
    // Plans a bounded search did not simulate (sweep::search); outputs before it had none.
    if (s.doc->contains("bounded") || first.doc->contains("bounded")) {
      sums["bounded"] += require_count(*s.doc, "bounded", src);
    }
    check_counts(s, top);
    const Json& plans = (*s.doc)["plans"];
    for (std::size_t i = 0; i < plans.size(); ++i) {
      const std::string at = "/plans/" + std::to_string(i);
      check_plan_keys(plans[i], src, at);
      const Json& index = require(plans[i], "index", src, at);
      if (!index.is_number_integer()) throw ConfigError(src, at + "/index", "expected an integer");
      const std::int64_t k = index.get<std::int64_t>();
      if (k < 0 || k >= enumerated || k % s.count != s.index) {
        throw ConfigError(src, at + "/index",
                          "plan " + index.dump() + " is not one of shard " +
                              std::to_string(s.index) + "/" + std::to_string(s.count) +
                              "'s (index % " + std::to_string(s.count) +
                              " == " + std::to_string(s.index) + ", below " +
                              std::to_string(enumerated) + "); expected the shard's own plans");
      }
      const auto [it, inserted] = owner.emplace(index.get<std::int64_t>(), &s);
      if (!inserted) {
        throw ConfigError(src, at + "/index",
                          "plan " + index.dump() + " also in " + it->second->source->source +
                              "; expected each plan in one shard");
      }
      const Json& scenario = require(plans[i], "scenario", src, at);
      if (!scenario.is_object()) throw ConfigError(src, at + "/scenario", "expected an object");
      // One search has one hardware, model, stack, cluster and batch; and its model is a
      // mixture of experts (every plan writes parallel.ep) or not (none does).
      Json shared = Json::object();
      for (const char* key : {"hardware", "model", "stack", "cluster", "training"}) {
        shared[key] = require(scenario, key, src, at + "/scenario");
      }
      if (shared["training"].is_object()) shared["training"].erase("micro_batch");
      const Json& parallel = require(scenario, "parallel", src, at + "/scenario");
      shared["writes ep"] = parallel.is_object() && parallel.contains("ep");
      if (!common) {
        common.emplace(shared, src);
      } else if (!same_values(shared, common->first)) {
        throw ConfigError(src, at + "/scenario",
                          "hardware, model, stack, cluster or batch (or parallel.ep's "
                          "presence, written for a mixture-of-experts model only) differ from " +
                              common->second + "'s plans; expected shards of one search run");
      }
      ranked.push_back({score(plans[i], objective, src, at), index.get<std::int64_t>(), &plans[i]});
    }
  }
  if (sums["evaluated"] != enumerated) {
    throw ConfigError("merge", "",
                      "the shards evaluated " + std::to_string(sums["evaluated"]) + " plans of " +
                          std::to_string(enumerated) +
                          "; expected the shards of one search to cover its space exactly");
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.index < b.index;
  });

  // Written as the search writes it (sim/cli/search.cpp), whatever order and number forms a
  // shard written again by another JSON tool has: its keys in the writer's order, the context,
  // the scenario and the report's keys sorted (nlohmann::json's order), and the report's numbers
  // that are no counts as doubles (0.0, where jq writes 0). The first shard gives the context,
  // objective, top and space size; the merged search has no "spec" (sharded documents only) and
  // no "explanation" (a shard's lines explain its own best plan, not the merged search's).
  const auto sorted = [](const Json& v) {
    return Json::parse(nlohmann::json::parse(v.dump()).dump());
  };
  Json merged = Json::object();
  merged["context"] = sorted((*first.doc)["context"]);
  merged["objective"] = (*first.doc)["objective"];
  merged["shard"] = "0/1";
  merged["top"] = (*first.doc)["top"];
  merged["enumerated"] = (*first.doc)["enumerated"];
  for (const char* key : {"evaluated", "invalid", "out_of_memory", "simulated", "bounded"}) {
    if (const auto it = sums.find(key); it != sums.end()) merged[key] = it->second;
  }
  if (first.doc->contains("memory_per_gpu")) {
    // As search writes it, whatever tool rewrote the shard (check_memory_budget has checked its
    // shape): its fraction a double (0.0 where jq writes 0).
    Json memory = sorted((*first.doc)["memory_per_gpu"]);
    memory["headroom_fraction"] = memory["headroom_fraction"].get<double>();
    merged["memory_per_gpu"] = std::move(memory);
  }
  Json plans = Json::array();
  for (std::size_t i = 0; i < std::min(top, ranked.size()); ++i) {
    nlohmann::json report = nlohmann::json::parse(ranked[i].plan->dump());
    report.erase("rank");
    report.erase("index");
    (void)report_numbers_as_doubles(report);
    Json plan = Json::object();
    plan["rank"] = i + 1;
    plan["index"] = (*ranked[i].plan)["index"];
    for (const auto& [key, value] : report.items()) plan[key] = Json::parse(value.dump());
    plans.push_back(std::move(plan));
  }
  const std::size_t listed = plans.size();
  merged["plans"] = std::move(plans);
  return {merged.dump(2) + "\n", listed};
}

}  // namespace trainsim::io
