// A required key missing beside its misspelling names the misspelling
// (io::with_near_miss_note): the missing key is found before finish() would reject the unknown
// one, so without the note the line says "missing" of a key the user believes they wrote.
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/io/builtin_data.hpp"
#include "sim/io/hardware_loader.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/model_loader.hpp"
#include "sim/io/stack_loader.hpp"

using namespace trainsim;
using namespace trainsim::io;

namespace {

using Loader = std::function<void(const nlohmann::json&, const std::string&)>;

// The problem text of what `load` throws, "" when it accepts the document.
std::string problem_of(const Loader& load, const nlohmann::json& doc) {
  try {
    load(doc, "doc.json");
  } catch (const ConfigError& e) {
    return e.pointer() + ": " + e.problem();
  }
  return "";
}

bool documentation_key(const std::string& key) {
  return key == "source" || key == "notes" || key == "sources" || key.starts_with("_");
}

// Every object pointer of `json` ("" for the top), parents before children.
void objects_of(const nlohmann::json& json, const nlohmann::json::json_pointer& at,
                std::vector<nlohmann::json::json_pointer>& out) {
  if (!json.is_object()) return;
  out.push_back(at);
  for (const auto& [key, value] : json.items()) objects_of(value, at / key, out);
}

}  // namespace

TEST_CASE("near miss: a missing key beside its misspelling names the misspelling", "[io]") {
  // A loader that requires "layers" (and reads "kv_heads" first when asked to).
  const auto loader = [](bool reads_kv_heads) {
    return [reads_kv_heads](const nlohmann::json& j) {
      ObjectReader r(j, "m.json", "");
      if (reads_kv_heads) (void)r.integer("kv_heads", 1);
      (void)r.integer(reads_kv_heads ? "kv_head" : "layers", 1);
      r.finish();
    };
  };
  SECTION("the loader's line") {
    const auto json = parse_json(R"({"layer": 32})", "m.json");
    REQUIRE_THROWS_WITH(with_near_miss_note(json, "m.json", "", loader(false)),
                        "m.json: /layers: missing required key (the object has 'layer': a "
                        "misspelling of 'layers'?); expected an integer >= 1");
  }
  SECTION("a key the loader reads is the object's own, never a misspelling") {
    // "kv_heads" is one edit from "kv_head", but the loader reads it: a key of this object.
    const auto json = parse_json(R"({"kv_heads": 8})", "m.json");
    REQUIRE_THROWS_WITH(with_near_miss_note(json, "m.json", "", loader(true)),
                        "m.json: /kv_head: missing required key; expected an integer >= 1");
  }
  SECTION("a model file and a hardware profile, as run reads them") {
    nlohmann::json model = nlohmann::json::parse(std::string(*builtin_file("models", "llama2-7b")));
    model["layer"] = model["layers"];
    model.erase("layers");
    REQUIRE_THROWS_WITH(model_from_json(model, "m.json", ""),
                        "m.json: /layers: missing required key (the object has 'layer': a "
                        "misspelling of 'layers'?); expected an integer in [1, 65536]");
    nlohmann::json hw =
        nlohmann::json::parse(std::string(*builtin_file("hardware_profiles", "h100-dgx")));
    hw["gpu"]["hbm_bandwith"] = hw["gpu"]["hbm_bandwidth"];
    hw["gpu"].erase("hbm_bandwidth");
    REQUIRE_THROWS_WITH(hardware_from_json(hw, "hw.json", ""),
                        "hw.json: /gpu/hbm_bandwidth: missing required key (the object has "
                        "'hbm_bandwith': a misspelling of 'hbm_bandwidth'?); expected a bandwidth "
                        "with a unit like \"450 GB/s\"");
  }
}

TEST_CASE("near miss: no built-in document's own key is taken for a misspelling", "[io]") {
  // Delete each key of every built-in model, hardware profile and stack in turn. What is left
  // are the document's own keys, all valid, so a note suggesting one of them would be false;
  // a required key's loss must give the plain "missing required key". Then misspell each key
  // (its last letter dropped): where that leaves the key missing, the note must name the
  // misspelling.
  const std::vector<std::pair<std::string, Loader>> kinds = {
      {"models",
       [](const nlohmann::json& j, const std::string& s) { (void)model_from_json(j, s, ""); }},
      {"hardware_profiles",
       [](const nlohmann::json& j, const std::string& s) { (void)hardware_from_json(j, s, ""); }},
      {"stacks",
       [](const nlohmann::json& j, const std::string& s) { (void)stack_from_json(j, s, ""); }},
  };
  int deletions = 0;
  int missing = 0;
  int misspelt = 0;
  for (const auto& [folder, load] : kinds) {
    for (const std::string& id : builtin_ids(folder)) {
      if (id.find('/') != std::string::npos) continue;  // hardware_profiles/nccl: NCCL's tables
      const nlohmann::json doc = nlohmann::json::parse(std::string(*builtin_file(folder, id)));
      INFO(folder << "/" << id);
      REQUIRE(problem_of(load, doc).empty());
      std::vector<nlohmann::json::json_pointer> objects;
      objects_of(doc, nlohmann::json::json_pointer(), objects);
      for (const auto& at : objects) {
        for (const auto& [key, value] : doc.at(at).items()) {
          if (documentation_key(key)) continue;
          INFO(folder << "/" << id << " " << (at / key).to_string());
          nlohmann::json cut = doc;
          cut.at(at).erase(key);
          const std::string problem = problem_of(load, cut);
          ++deletions;
          CHECK(problem.find("the object has '") == std::string::npos);
          const std::string missing_line = (at / key).to_string() + ": missing required key";
          if (!problem.starts_with(missing_line)) continue;
          ++missing;
          if (key.size() < 4) continue;
          nlohmann::json typo = cut;
          const std::string wrong = key.substr(0, key.size() - 1);
          if (typo.at(at).contains(wrong)) continue;
          typo.at(at)[wrong] = value;
          const std::string typo_problem = problem_of(load, typo);
          INFO(typo_problem);
          ++misspelt;
          CHECK(typo_problem.starts_with(missing_line + " (the object has '" + wrong +
                                         "': a misspelling of '" + key + "'?)"));
        }
      }
    }
  }
  // The loops reached required keys of every kind (hundreds of deletions; counted, not fixed).
  INFO("deletions " << deletions << ", missing " << missing << ", misspelt " << misspelt);
  REQUIRE(missing > 50);
  REQUIRE(misspelt > 50);
}
