#include "sim/io/search_merge.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "trainsim/error.hpp"

#include "sim/io/json_reader.hpp"

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
      if (require(*s.doc, key, s.source->source) !=
          require(*first.doc, key, first.source->source)) {
        throw ConfigError(s.source->source, std::string("/") + key,
                          "differs from " + first.source->source +
                              "'s; expected shards of one search run by one trainsim version");
      }
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

}  // namespace

bool is_search_output(std::string_view text) {
  return text.substr(0, 2) == "{\n" || text.substr(0, 3) == "{\r\n";
}

MergedSearch merge_search_outputs(const std::vector<SweepOutput>& outputs) {
  std::deque<Json> docs;  // never moved once parsed: shards point into it
  std::vector<Shard> shards;
  for (const SweepOutput& o : outputs) {
    Json& doc = docs.emplace_back();
    // Nesting and size bounded as every JSON input's (a search document nests 4 deep), then a
    // key given twice in one object (a hand-edited shard) refused: the parse would keep its last
    // value without a word; and objects of more keys than the ordered parse takes quickly.
    check_json_text(o.text, o.source, o.text.size(), kMaxJsonDepth, "a search output");
    (void)check_unique_keys(o.text, o.source, kMaxOrderedKeys);
    try {
      doc = Json::parse(o.text);
    } catch (const Json::exception& e) {  // parse_error, or out_of_range for 1e400
      throw ConfigError(o.source, "",
                        std::string("not valid JSON (") + e.what() + "); " + kExpected);
    }
    if (!doc.is_object()) {
      throw ConfigError(o.source, "", std::string("not an object; ") + kExpected);
    }
    const auto [index, count] = parse_shard(require(doc, "shard", o.source), o.source);
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
    const Json& plans = require(*s.doc, "plans", src);
    if (!plans.is_array()) throw ConfigError(src, "/plans", "expected an array of plans");
    for (std::size_t i = 0; i < plans.size(); ++i) {
      const std::string at = "/plans/" + std::to_string(i);
      const Json& index = require(plans[i], "index", src, at);
      if (!index.is_number_integer()) throw ConfigError(src, at + "/index", "expected an integer");
      const auto [it, inserted] = owner.emplace(index.get<std::int64_t>(), &s);
      if (!inserted) {
        throw ConfigError(src, at + "/index",
                          "plan " + index.dump() + " also in " + it->second->source->source +
                              "; expected each plan in one shard");
      }
      const Json& scenario = require(plans[i], "scenario", src, at);
      if (!scenario.is_object()) throw ConfigError(src, at + "/scenario", "expected an object");
      Json shared = Json::object();
      for (const char* key : {"hardware", "model", "cluster", "training"}) {
        shared[key] = require(scenario, key, src, at + "/scenario");
      }
      if (shared["training"].is_object()) shared["training"].erase("micro_batch");
      if (!common) {
        common.emplace(shared, src);
      } else if (shared != common->first) {
        throw ConfigError(src, at + "/scenario",
                          "hardware, model, cluster or batch differ from " + common->second +
                              "'s plans; expected shards of one search run");
      }
      ranked.push_back({score(plans[i], objective, src, at), index.get<std::int64_t>(), &plans[i]});
    }
  }
  const std::int64_t enumerated = require_count(*first.doc, "enumerated", first.source->source);
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

  // The first document gives the key order; its shard, counts and plans are replaced.
  Json merged = *first.doc;
  merged["shard"] = "0/1";
  merged.erase("spec");  // sharded documents only: the unsharded search has no such key
  for (const auto& [key, value] : sums) merged[key] = value;
  Json plans = Json::array();
  for (std::size_t i = 0; i < std::min(top, ranked.size()); ++i) {
    Json plan = *ranked[i].plan;
    plan["rank"] = i + 1;
    plans.push_back(std::move(plan));
  }
  const std::size_t listed = plans.size();
  merged["plans"] = std::move(plans);
  return {merged.dump(2) + "\n", listed};
}

}  // namespace trainsim::io
