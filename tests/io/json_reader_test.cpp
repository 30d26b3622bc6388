#include "sim/io/json_reader.hpp"

#include <catch2/catch.hpp>

#include "sim/io/builtin_data.hpp"
#include "sim/io/spellcheck.hpp"

using namespace trainsim;
using namespace trainsim::io;

TEST_CASE("json_reader: values are read with their units and ranges", "[io]") {
  const auto json = parse_json(R"({"bw": "450 GB/s", "n": 8, "f": 0.5, "name": "x"})", "t.json");
  ObjectReader r(json, "t.json", "");
  REQUIRE(r.bandwidth("bw").value() == Approx(450e9).epsilon(1e-12));
  REQUIRE(r.integer("n", 1) == 8);
  REQUIRE(r.fraction("f") == Approx(0.5).epsilon(1e-12));
  REQUIRE(r.string("name") == "x");
  REQUIRE(r.integer_or("absent", 1, 7) == 7);
  REQUIRE_NOTHROW(r.finish());
}

TEST_CASE("json_reader: each bad-input kind names file, pointer and expectation", "[io]") {
  const auto json = parse_json(
      R"({"node": {"bw": 450, "gpus": 2.5, "lat": "-1 us", "eff": 1.5, "bandwith": "1 GB/s"}})",
      "hw.json");
  ObjectReader top(json, "hw.json", "");
  auto node = top.object("node");
  SECTION("number without a unit") {
    REQUIRE_THROWS_AS(node.bandwidth("bw"), ConfigError);
    REQUIRE_THROWS_WITH(node.bandwidth("bw"),
                        "hw.json: /node/bw: expected a bandwidth with a unit like \"450 GB/s\", "
                        "got 450");
  }
  SECTION("missing key") {
    REQUIRE_THROWS_WITH(
        node.seconds("latency"),
        "hw.json: /node/latency: missing required key; expected a time with a unit like "
        "\"5 us\"");
  }
  SECTION("wrong type") {
    REQUIRE_THROWS_WITH(node.integer("gpus", 1),
                        "hw.json: /node/gpus: expected an integer, got 2.5");
  }
  SECTION("an integer too large to be a count") {
    const auto j = parse_json(R"({"gpus": 9223372036854775807, "big": 1e30})", "c.json");
    ObjectReader c(j, "c.json", "");
    REQUIRE_THROWS_WITH(c.integer("gpus", 1), Catch::Contains("/gpus: expected an integer <= 2^53"));
    REQUIRE_THROWS_WITH(c.integer("big", 1), Catch::Contains("/big: expected an integer <= 2^53"));
  }
  SECTION("negative value") {
    REQUIRE_THROWS_WITH(node.seconds("lat"), Catch::Contains("/node/lat: expected a time > 0"));
  }
  SECTION("fraction out of range") {
    REQUIRE_THROWS_WITH(node.fraction("eff"), Catch::Contains("expected a fraction in (0, 1]"));
  }
  SECTION("unknown key gets a suggestion") {
    (void)node.has("bandwidth");
    REQUIRE_THROWS_WITH(node.finish(), Catch::Contains("/node/bandwith: unknown key; did you mean "
                                                       "'bandwidth'?"));
  }
  SECTION("an unknown key with no near miss lists the keys asked for, sorted") {
    const auto j = parse_json(R"({"gpus": 8, "zzz": 1})", "n.json");
    ObjectReader n(j, "n.json", "/node");
    (void)n.integer("gpus", 1);
    (void)n.has("nvlink_bandwidth");
    REQUIRE_THROWS_WITH(n.finish(),
                        "n.json: /node/zzz: unknown key; expected one of gpus, "
                        "nvlink_bandwidth");
  }
  SECTION("unknown choice gets a suggestion") {
    const auto j = parse_json(R"({"sharding": "shard_grad"})", "s.json");
    ObjectReader s(j, "s.json", "");
    REQUIRE_THROWS_WITH(s.choice("sharding", {"none", "shard_grad_op", "full_shard"}),
                        Catch::Contains("did you mean 'shard_grad_op'?"));
  }
}

TEST_CASE("json_reader: malformed JSON reports line and column", "[io]") {
  REQUIRE_THROWS_AS(parse_json("{\n  \"a\": 1,\n  oops\n}", "bad.json"), ConfigError);
  REQUIRE_THROWS_WITH(parse_json("{\n  \"a\": 1,\n  oops\n}", "bad.json"),
                      Catch::StartsWith("bad.json: invalid JSON at line 3"));
  REQUIRE_THROWS_WITH(read_json_file("/nonexistent/trainsim.json"),
                      Catch::Contains("cannot open file"));
}

TEST_CASE("json_reader: a key given twice in one object is refused with its pointer", "[io]") {
  // nlohmann alone keeps the last value: {"tp": 2, "tp": 4} would read as tp 4 without a word.
  REQUIRE_THROWS_WITH(parse_json(R"({"tp": 2, "tp": 4})", "s.json"),
                      "s.json: /tp: key given twice in one object; expected each key at most once");
  // Nested in objects and arrays: the pointer names the object's place, arrays by index.
  REQUIRE_THROWS_WITH(
      parse_json(R"({"a": [{"x": 1}, {"x": 1, "y": {"z": 0, "z": 0}}], "b": 1})", "n.json"),
      "n.json: /a/1/y/z: key given twice in one object; expected each key at most once");
  // Elements of every kind count towards the index: a number, a nested array, then the object.
  REQUIRE_THROWS_WITH(parse_json(R"([1, [2, {"k": 0}], {"k": 0, "k": 1}])", "r.json"),
                      Catch::StartsWith("r.json: /2/k: key given twice"));
  // Keys are compared after unescaping ("\u0074p" is "tp"), and escaped in the pointer
  // (RFC 6901: "/" -> "~1").
  REQUIRE_THROWS_WITH(parse_json(R"({"tp": 1, "\u0074p": 1})", "u.json"),
                      Catch::StartsWith("u.json: /tp: key given twice"));
  REQUIRE_THROWS_WITH(parse_json(R"({"o": {"a/b": 1, "a/b": 2}})", "e.json"),
                      Catch::StartsWith("e.json: /o/a~1b: key given twice"));
  // The same key in different objects, or as a value, is not a duplicate.
  const auto ok = parse_json(
      R"({"a": {"k": 1}, "b": {"k": 2}, "k": "k", "l": [{"k": 3}, {"k": 4}]})", "ok.json");
  CHECK(ok["l"][1]["k"] == 4);
  // A caller that allows duplicates (the trace reader) gets nlohmann's last value.
  const auto allowed =
      parse_checked_json(R"({"k": 1, "k": 2})", "t.json", kMaxJsonBytes, kMaxJsonDepth, "a trace",
                         "expected a trace", DuplicateKeys::Allow);
  CHECK(allowed["k"] == 2);
  // The pass alone (merge runs it over its shards): the same pointer; silent on a document
  // without repeats and on a syntax error, which the caller's parse reports.
  REQUIRE_THROWS_WITH(
      check_unique_keys(R"([{"a": 1}, {"a": 1, "a": 2}])", "m.json"),
      "m.json: /1/a: key given twice in one object; expected each key at most once");
  CHECK_NOTHROW(check_unique_keys(R"({"a": {"a": 1}, "b": [{"a": 2}]})", "m.json"));
  CHECK_NOTHROW(check_unique_keys(R"({"a": 1, "b")", "m.json"));
  // With a limit of keys per object (the readers that keep key order): 2 keys pass, the third
  // is refused at its pointer; keys of different objects do not add up.
  CHECK_NOTHROW(check_unique_keys(R"({"a": 1, "b": {"c": 1, "d": 2}})", "w.json", 2));
  REQUIRE_THROWS_WITH(check_unique_keys(R"({"o": {"a": 1, "b": 2, "c": 3}})", "w.json", 2),
                      "w.json: /o/c: more than 2 keys in one object; expected at most 2");
}

TEST_CASE("json_reader: no built-in file gives a key twice in one object", "[io]") {
  // The loaders read built-in files with parse_builtin_json, without this pass; it runs here.
  int files = 0;
  for (const BuiltinFile& f : builtin_files()) {
    if (!f.path.ends_with(".json")) continue;
    INFO(f.path);
    REQUIRE_NOTHROW(parse_checked_json(std::string(f.content), std::string(f.path), kMaxJsonBytes,
                                       kMaxJsonDepth, "a JSON document", "expected a JSON document",
                                       DuplicateKeys::Reject));
    ++files;
  }
  // The loop saw each kind the loaders read (35 files in all now).
  REQUIRE(files > 0);
  for (const char* kind : {"hardware_profiles", "hardware_profiles/nccl", "models", "stacks"}) {
    INFO(kind);
    REQUIRE(!builtin_ids(kind).empty());
  }
}

TEST_CASE("spellcheck: closest candidate within a third of the word", "[io]") {
  // "shard_grad" -> "shard_grad_op" is 3 insertions; the limit for 10 letters is max(2, 3) = 3.
  REQUIRE(closest("shard_grad", {"none", "shard_grad_op"}) == std::optional<std::string>("shard_grad_op"));
  REQUIRE_FALSE(closest("xyz", {"shard_grad_op"}).has_value());
  // 'bfloat' is one edit from 'float' but a truncated 'bfloat16': the truncation wins.
  REQUIRE(closest("bfloat", {"float", "half", "bfloat16"}) == std::optional<std::string>("bfloat16"));
  // Too short to count as a truncation: plain edit distance ('fp' -> 'fp8' is one edit).
  REQUIRE(closest("fp", {"fp16", "fp8"}) == std::optional<std::string>("fp8"));
  // Among truncations the shortest completion: 'llama2-7' is one letter short of 'llama2-7b'.
  REQUIRE(closest("llama2-7", {"llama2-70b", "llama2-7b"}) == std::optional<std::string>("llama2-7b"));
  REQUIRE(edit_distance("kitten", "sitting") == 3);
  // The same letters in another case first: 'BF16' is two edits from both 'fp16' and 'bf16',
  // and was answered 'fp16' (the first of the two in the list).
  REQUIRE(closest("BF16", {"fp32", "fp16", "bf16", "fp8"}) == std::optional<std::string>("bf16"));
  REQUIRE(closest("H100-DGX", {"a100-dgx", "h100-dgx"}) == std::optional<std::string>("h100-dgx"));
  // The same name in another case beats a longer name it begins: 'Megatron-LM' is the stack
  // 'megatron-lm', and was answered 'megatron-lm-2019' (a truncation ranked first), another
  // stack; 'Attention' the key 'attention', not 'attention_speed'.
  REQUIRE(closest("Megatron-LM", {"megatron-lm-2019", "megatron-lm", "megatron-core"}) ==
          std::optional<std::string>("megatron-lm"));
  REQUIRE(closest("Attention", {"attention_speed", "attention"}) ==
          std::optional<std::string>("attention"));
  // ... and a truncation in another case: 'H100' for 'h100-dgx' (no suggestion before).
  REQUIRE(closest("H100", {"a100-dgx", "h100-dgx"}) == std::optional<std::string>("h100-dgx"));
}
