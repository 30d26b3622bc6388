#include "sim/sweep/sweep_spec.hpp"

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

#include "tests/note_capture.hpp"

using namespace trainsim;
using namespace trainsim::sweep;

namespace {

// A complete base scenario; axes change it.
const std::string kBase =
    R"("base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 64},
                "training": {"seq_len": 4096, "micro_batch": 2},
                "parallel": {"sharding": "shard_grad_op"}})";

SweepSpec parse(const std::string& rest) {
  return parse_sweep_spec("{" + kBase + ", " + rest + "}", "spec.json", "");
}

std::vector<std::int64_t> ints(const std::vector<nlohmann::json>& values) {
  std::vector<std::int64_t> out;
  for (const auto& v : values) out.push_back(v.get<std::int64_t>());
  return out;
}

}  // namespace

TEST_CASE("sweep spec: the product runs in written order, the first axis slowest", "[sweep]") {
  // Written order pp then tp (not alphabetical): pp varies slowest.
  const SweepSpec spec = parse(R"("axes": {"parallel.pp": [1, 2], "parallel.tp": [1, 2, 4]})");
  // 2 x 3 = 6 scenarios.
  REQUIRE(spec.size() == 6);
  REQUIRE(spec.keys == std::vector<std::string>{"parallel.pp", "parallel.tp"});
  const std::vector<std::vector<std::int64_t>> expected = {{1, 1}, {1, 2}, {1, 4},
                                                           {2, 1}, {2, 2}, {2, 4}};
  for (std::int64_t i = 0; i < spec.size(); ++i) {
    CHECK(ints(spec.point(i)) == expected[static_cast<std::size_t>(i)]);
  }
  // The document carries the values at their dotted paths, over the base.
  const io::ScenarioDocument doc = spec.document(4);  // pp 2, tp 2
  CHECK(doc.json["parallel"]["pp"] == 2);
  CHECK(doc.json["parallel"]["tp"] == 2);
  CHECK(doc.json["parallel"]["sharding"] == "shard_grad_op");
  CHECK(doc.overridden.at("/parallel/tp") == "spec.json (axis parallel.tp)");
}

TEST_CASE("sweep spec: zipped axes advance together at the place of their first key",
          "[sweep]") {
  const SweepSpec spec = parse(
      R"("axes": {"training.seq_len": [1024, 2048], "parallel.tp": [1, 2],
                  "training.global_batch": [64, 32]},
         "zip": [["training.seq_len", "training.global_batch"]])");
  // (seq_len, global_batch) zipped: 2 pairs x 2 tp = 4; the pair varies slowest since
  // seq_len is written first. Points are given in the written key order.
  REQUIRE(spec.size() == 4);
  REQUIRE(spec.groups.size() == 2);
  CHECK(ints(spec.point(0)) == std::vector<std::int64_t>{1024, 1, 64});
  CHECK(ints(spec.point(1)) == std::vector<std::int64_t>{1024, 2, 64});
  CHECK(ints(spec.point(2)) == std::vector<std::int64_t>{2048, 1, 32});
  CHECK(ints(spec.point(3)) == std::vector<std::int64_t>{2048, 2, 32});
}

TEST_CASE("sweep spec: ranges", "[sweep]") {
  SECTION("geometric: from, to inclusive, times") {
    const SweepSpec spec = parse(R"("axes": {"cluster.gpus": {"from": 8, "to": 2048, "times": 2}})");
    // 8, 16, ..., 2048: 2^3 .. 2^11, 9 values.
    REQUIRE(spec.size() == 9);
    CHECK(spec.point(0)[0] == 8);
    CHECK(spec.point(8)[0] == 2048);
  }
  SECTION("arithmetic: to is kept only when reached") {
    const SweepSpec spec = parse(R"("axes": {"training.micro_batch": {"from": 1, "to": 8, "step": 3}})");
    // 1, 4, 7 (10 > 8).
    REQUIRE(spec.size() == 3);
    CHECK(ints({spec.point(0)[0], spec.point(1)[0], spec.point(2)[0]}) ==
          std::vector<std::int64_t>{1, 4, 7});
  }
  SECTION("a list mixing values and ranges is expanded in place") {
    const SweepSpec spec =
        parse(R"("axes": {"cluster.gpus": [8, {"from": 32, "to": 128, "times": 2}, 512]})");
    // 8, then 32, 64, 128, then 512.
    REQUIRE(spec.size() == 5);
    std::vector<std::int64_t> got;
    for (std::int64_t i = 0; i < spec.size(); ++i) got.push_back(spec.point(i)[0].get<std::int64_t>());
    CHECK(got == std::vector<std::int64_t>{8, 32, 64, 128, 512});
  }
  SECTION("string axes and no axes") {
    CHECK(parse(R"("axes": {"parallel.sharding": ["full_shard", "zero1"]})").size() == 2);
    // No axes: the base alone.
    CHECK(parse(R"("axes": {})").size() == 1);
  }
}

TEST_CASE("sweep spec: bad input names the file, the key and the fix", "[sweep]") {
  using Catch::Contains;
  using Catch::Equals;
  using Catch::StartsWith;
  SECTION("malformed JSON") {
    REQUIRE_THROWS_WITH(parse_sweep_spec("{\"base\": ", "spec.json", ""),
                        Contains("spec.json: invalid JSON at line 1"));
  }
  SECTION("unknown axis key with a suggestion") {
    REQUIRE_THROWS_AS(parse(R"("axes": {"parallel.tpp": [1]})"), ConfigError);
    REQUIRE_THROWS_WITH(parse(R"("axes": {"parallel.tpp": [1]})"),
                        Contains("spec.json: /axes/parallel.tpp: unknown scenario key "
                                 "'parallel.tpp'; did you mean 'parallel.tp'?"));
  }
  SECTION("empty axis") {
    REQUIRE_THROWS_WITH(parse(R"("axes": {"parallel.tp": []})"),
                        "spec.json: /axes/parallel.tp: empty axis; expected at least one value, "
                        "got []");
  }
  SECTION("zip of unequal lengths") {
    REQUIRE_THROWS_WITH(
        parse(R"("axes": {"cluster.gpus": [8, 16], "training.global_batch": [16]},
                 "zip": [["cluster.gpus", "training.global_batch"]])"),
        "spec.json: /zip/0/1: zipped axes of different lengths; expected 2 values as "
        "'cluster.gpus' has, got 1 for 'training.global_batch'");
  }
  SECTION("zip of a key that is not an axis") {
    REQUIRE_THROWS_WITH(parse(R"("axes": {"cluster.gpus": [8]},
                                 "zip": [["cluster.gpus", "parallel.tp"]])"),
                        Contains("/zip/0/1: zip key 'parallel.tp' is not an axis"));
  }
  SECTION("unknown top-level key") {
    REQUIRE_THROWS_WITH(parse(R"("axis": {})"),
                        Contains("spec.json: /axis: unknown key 'axis'; did you mean 'axes'?"));
  }
  SECTION("range with both step and times, or going down") {
    REQUIRE_THROWS_WITH(parse(R"("axes": {"parallel.tp": {"from": 1, "to": 8, "step": 1, "times": 2}})"),
                        Contains("range needs exactly one of step and times"));
    REQUIRE_THROWS_WITH(parse(R"("axes": {"parallel.tp": {"from": 8, "to": 1, "step": 1}})"),
                        Contains("/axes/parallel.tp/to: range ends before it starts"));
  }
  SECTION("a value of the wrong type fails before anything runs, named where the spec writes it") {
    REQUIRE_THROWS_WITH(parse(R"("axes": {"parallel.tp": [1, "two"]})"),
                        Equals("spec.json: /axes/parallel.tp/1: expected an integer, got \"two\""));
    // A range's values are named by the range; a zipped axis by the value's own index.
    REQUIRE_THROWS_WITH(
        parse(R"("axes": {"training.seq_len": [4096, {"from": 0, "to": 8, "step": 8}]})"),
        StartsWith("spec.json: /axes/training.seq_len/1: expected an integer >= 1"));
    REQUIRE_THROWS_WITH(
        parse(R"("axes": {"cluster.gpus": [8, 16], "training.global_batch": [8, -1]},
                                 "zip": [["cluster.gpus", "training.global_batch"]])"),
        StartsWith("spec.json: /axes/training.global_batch/1: "));
  }
  SECTION("an inline profile on the hardware axis is named by its place in the axis") {
    REQUIRE_THROWS_WITH(parse(R"("axes": {"hardware": ["h100-dgx", {"name": "x"}]})"),
                        StartsWith("spec.json: /axes/hardware/1/"));
    REQUIRE_THROWS_WITH(parse(R"("axes": {"model": {"from": 1, "to": 4, "times": 2}})"),
                        StartsWith("spec.json: /axes/model: axis is not a list; expected a list of "
                                   "models (built-in names, file paths or inline objects)"));
  }
  SECTION("missing base") {
    REQUIRE_THROWS_WITH(parse_sweep_spec(R"({"axes": {}})", "spec.json", ""),
                        Contains("spec.json: /base: missing key"));
  }
  SECTION("a base path that is empty") {
    REQUIRE_THROWS_WITH(
        parse_sweep_spec(R"({"base": "", "axes": {"parallel.tp": [1]}})", "spec.json", ""),
        Contains("spec.json: /base: empty path; expected a scenario object or a file path"));
  }
}

TEST_CASE("sweep spec: a pipeline_layout axis lists layouts, each a list", "[sweep]") {
  const SweepSpec spec = parse(R"("axes": {"parallel.pipeline_layout": [[16, 16], [15, 17]]})");
  REQUIRE(spec.size() == 2);
  CHECK(spec.document(1).json["parallel"]["pipeline_layout"] == nlohmann::json::array({15, 17}));
  // One layout written flat is the usual slip: its first count is not a layout.
  REQUIRE_THROWS_WITH(
      parse(R"("axes": {"parallel.pipeline_layout": [16, 16]})"),
      "spec.json: /axes/parallel.pipeline_layout/0: axis value not a layout; expected each value "
      "a list of layer counts per model chunk, the axis a list of them such as "
      "[[7, 9, 9, 7], [8, 8, 8, 8]], got 16");
  // No range makes layouts.
  REQUIRE_THROWS_WITH(parse(R"("axes": {"parallel.pipeline_layout": {"from": 1, "to": 2,
                                                                       "step": 1}})"),
                      Catch::Contains("/axes/parallel.pipeline_layout: axis is not a list"));
}

TEST_CASE("sweep spec: an inline model is named where the spec writes it", "[sweep]") {
  testing::NoteCapture notes;
  // Two inline configs on the model axis, each with a key to note. Both notes were once
  // "spec.json: /model" (the key in the scenario), so the second was dropped as said already.
  const std::string small = R"({"hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100)";
  const std::string spec = "{" + kBase + R"(, "axes": {"model": [)" + small +
                           R"(, "rope_theta": 1e4}, )" + small + R"(, "use_cache": true}]}})";
  const SweepSpec s = parse_sweep_spec(spec, "inline-axis.json", "");
  REQUIRE(notes.lines ==
          std::vector<std::string>{
              "note: inline-axis.json: /axes/model/0: Hugging Face keys ignored (no effect on "
              "cost): rope_theta; docs/models.md lists the keys read",
              "note: inline-axis.json: /axes/model/1: Hugging Face keys ignored (no effect on "
              "cost): use_cache; docs/models.md lists the keys read"});
  // An error in one is located there too (as before), and one in an inline base's model under
  // /base.
  std::string bad = spec;
  bad.replace(bad.rfind("\"vocab_size\": 100"), 17, "\"vocab_size\": 0");
  REQUIRE_THROWS_WITH(parse_sweep_spec(bad, "bad-axis.json", ""),
                      Catch::StartsWith("bad-axis.json: /axes/model/1/vocab_size: expected an "
                                        "integer >= 1"));
  notes.lines.clear();
  const std::string inline_base =
      R"({"base": {"hardware": "h100-dgx", "model": )" + small + R"(, "rope_theta": 1e4},
          "cluster": {"gpus": 8}, "training": {"seq_len": 1024, "micro_batch": 1}},
          "axes": {"parallel.tp": [1, 2]}})";
  (void)parse_sweep_spec(inline_base, "inline-base.json", "");
  REQUIRE(notes.lines == std::vector<std::string>{
                             "note: inline-base.json: /base/model: Hugging Face keys ignored (no "
                             "effect on cost): rope_theta; docs/models.md lists the keys read"});
  std::string bad_base = inline_base;
  bad_base.replace(bad_base.find("\"vocab_size\": 100"), 17, "\"vocab_size\": 0");
  REQUIRE_THROWS_WITH(parse_sweep_spec(bad_base, "bad-base.json", ""),
                      Catch::StartsWith("bad-base.json: /base/model/vocab_size: expected an "
                                        "integer >= 1"));
}

TEST_CASE("sweep spec: the size is counted before ranges are expanded, zip groups once",
          "[sweep]") {
  // Two zipped ranges of 1,000,000 values beside a list of 1,000: 1e9 scenarios, refused from
  // the axes' lengths (counting the zip twice would say 1e15); unexpanded, this takes no time.
  const std::string million = R"({"from": 1, "to": 1000000, "step": 1})";
  REQUIRE_THROWS_WITH(
      parse(R"("axes": {"parallel.tp": )" + million + R"(, "training.seq_len": )" + million +
            R"(, "training.global_batch": {"from": 1, "to": 1000, "step": 1}},
            "zip": [["parallel.tp", "training.seq_len"]])"),
      "spec.json: /axes: sweep too large; expected at most 100000000 scenarios, got 1000000000");
  // A geometric range counts as expand_range does, in int64: 1, 2, ..., 2^62 is 63 values.
  REQUIRE_THROWS_WITH(
      parse(R"("axes": {"parallel.tp": {"from": 1, "to": 9223372036854775807, "times": 2},
                        "training.seq_len": )" +
            million + R"(, "training.global_batch": {"from": 1, "to": 1000, "step": 1}})"),
      "spec.json: /axes: sweep too large; expected at most 100000000 scenarios, got 63000000000");
  // A spec the parse refuses for another reason keeps that reason, however large.
  REQUIRE_THROWS_WITH(
      parse(R"("axes": {"parallel.tpp": )" + million + R"(, "training.seq_len": )" + million + "}"),
      Catch::Contains("/axes/parallel.tpp: unknown scenario key 'parallel.tpp'"));
  REQUIRE_THROWS_WITH(parse(R"("axes": {"parallel.tp": )" + million + R"(, "training.seq_len": )" +
                            million + R"(}, "zip": [["parallel.tp", "training.seq_lenn"]])"),
                      Catch::Contains("/zip/0/1: zip key 'training.seq_lenn' is not an axis"));
}
