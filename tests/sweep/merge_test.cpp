#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

#include "sim/io/sweep_writer.hpp"

using namespace trainsim;
using namespace trainsim::io;

namespace {

// `rows` followed by the end record of shard k/n of a sweep of `scenarios` (spec digest 0xaa).
std::string shard(const std::string& rows, std::int64_t k, std::int64_t n, std::int64_t scenarios,
                  std::int64_t num_rows, SweepFormat format = SweepFormat::Csv,
                  std::uint64_t digest = 0xaa) {
  return rows + trailer_line(ShardTrailer{.shard_index = k,
                                          .shard_count = n,
                                          .scenarios = scenarios,
                                          .spec_digest = digest,
                                          .rows = num_rows},
                             format);
}

}  // namespace

TEST_CASE("merge: the end record reads back, and only exactly as written", "[sweep][io]") {
  const ShardTrailer t{.shard_index = 3,
                       .shard_count = 8,
                       .scenarios = 10000,
                       .spec_digest = 0x5f1c0a9e12b4d7e3,
                       .rows = 1250};
  const std::string csv = trailer_line(t, SweepFormat::Csv);
  CHECK(csv == "# trainsim shard 3/8 of 10000 scenarios, spec 5f1c0a9e12b4d7e3, 1250 rows\n");
  const std::string json = trailer_line(t, SweepFormat::JsonLines);
  CHECK(json ==
        "{\"trainsim_shard\":\"3/8\",\"scenarios\":10000,\"spec\":\"5f1c0a9e12b4d7e3\","
        "\"rows\":1250}\n");
  for (const auto& [text, format] :
       {std::pair{csv, SweepFormat::Csv}, std::pair{json, SweepFormat::JsonLines}}) {
    const auto back = parse_trailer(std::string_view(text).substr(0, text.size() - 1), format);
    REQUIRE(back);
    CHECK(back->shard_index == 3);
    CHECK(back->shard_count == 8);
    CHECK(back->scenarios == 10000);
    CHECK(back->spec_digest == 0x5f1c0a9e12b4d7e3);
    CHECK(back->rows == 1250);
  }
  // Cut short (the last bytes a killed run wrote), padded, or out of range: not an end record.
  CHECK_FALSE(parse_trailer("# trainsim shard 3/8 of 10000 scenarios, spec 5f1c0a9e12b4d7e3, 12",
                            SweepFormat::Csv));
  CHECK_FALSE(
      parse_trailer("# trainsim shard  3/8 of 10000 scenarios, spec 5f1c0a9e12b4d7e3, "
                    "1250 rows",
                    SweepFormat::Csv));
  CHECK_FALSE(
      parse_trailer("# trainsim shard 8/8 of 10000 scenarios, spec 5f1c0a9e12b4d7e3, "
                    "1250 rows",
                    SweepFormat::Csv));
}

TEST_CASE("merge: rows are joined by index, the header once, end records dropped", "[sweep][io]") {
  // Five scenarios in two shards: shard 0/2 holds 0, 2, 4 and shard 1/2 holds 1, 3.
  const std::string merged =
      merge_outputs({{"b.csv", shard("index,x\n1,b\n3,d\n", 1, 2, 5, 2)},
                     {"a.csv", shard("index,x\n0,a\n2,c\n4,e\n", 0, 2, 5, 3)}},
                    std::nullopt);
  CHECK(merged == "index,x\n0,a\n1,b\n2,c\n3,d\n4,e\n");
  // JSON lines: no header.
  const SweepFormat j = SweepFormat::JsonLines;
  CHECK(merge_outputs({{"1", shard("{\"index\":1,\"v\":2}\n", 1, 2, 2, 1, j)},
                       {"0", shard("{\"index\":0,\"v\":1}\n", 0, 2, 2, 1, j)}},
                      2) == "{\"index\":0,\"v\":1}\n{\"index\":1,\"v\":2}\n");
  // A shard with no scenario (shard 2/3 of 2) is a header and its end record.
  CHECK(merge_outputs({{"a", shard("index,x\n0,a\n", 0, 3, 2, 1)},
                       {"b", shard("index,x\n1,b\n", 1, 3, 2, 1)},
                       {"c", shard("index,x\n", 2, 3, 2, 0)}},
                      std::nullopt) == "index,x\n0,a\n1,b\n");
}

TEST_CASE("merge: incomplete, foreign, duplicate and missing shards are errors", "[sweep][io]") {
  using Catch::Contains;
  const std::string a = shard("index,x\n0,a\n2,c\n", 0, 2, 3, 2);
  const std::string b = shard("index,x\n1,b\n", 1, 2, 3, 1);
  REQUIRE(merge_outputs({{"a.csv", a}, {"b.csv", b}}, 3) == "index,x\n0,a\n1,b\n2,c\n");

  // A run killed mid-row: the last line has no newline, and no end record follows.
  REQUIRE_THROWS_AS(merge_outputs({{"a.csv", a}, {"b.csv", "index,x\n1,"}}, std::nullopt),
                    ConfigError);
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}, {"b.csv", "index,x\n1,"}}, std::nullopt),
                      Contains("b.csv: line 2: incomplete: the last line has no line break"));
  // Killed between rows, or an unsharded output: whole lines but no end record.
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}, {"b.csv", "index,x\n1,b\n"}}, std::nullopt),
                      Contains("b.csv: line 2: incomplete: no end record"));
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}, {"b.csv", ""}}, std::nullopt),
                      Contains("b.csv: empty file"));
  // An end record cut short.
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a}, {"b.csv", "index,x\n1,b\n# trainsim shard 1/2 of 3\n"}},
                    std::nullopt),
      Contains("b.csv: line 3: malformed end record"));
  // A row with the wrong field count before a complete end record (possible only if the
  // file was edited or concatenated; the row is checked anyway).
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a}, {"b.csv", shard("index,x\n1,b,c\n", 1, 2, 3, 1)}}, std::nullopt),
      Contains("b.csv: line 2: truncated or malformed row 1 (3 fields); expected 2 fields"));
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a", shard("{\"index\":0,\"v\":1}\n", 0, 2, 2, 1, SweepFormat::JsonLines)},
                     {"b", shard("{\"index\":1,\"v\":\n", 1, 2, 2, 1, SweepFormat::JsonLines)}},
                    std::nullopt),
      Contains("b: line 1: row 1 is not valid JSON"));
  // Rows missing from a shard whose end record survived (the count disagrees).
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", shard("index,x\n0,a\n", 0, 2, 3, 2)}, {"b.csv", b}}, std::nullopt),
      Contains("a.csv: line 3: 1 rows, but the end record says 2; expected 2 "
               "rows for shard 0/2 of 3 scenarios"));
  // A row of another shard.
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a}, {"b.csv", shard("index,x\n2,c\n", 1, 2, 3, 1)}}, std::nullopt),
      Contains("b.csv: line 2: row 2 out of place in shard 1/2; expected row 1"));
  // Shards of another spec, another split or another sweep size.
  REQUIRE_THROWS_WITH(
      merge_outputs(
          {{"a.csv", a}, {"b.csv", shard("index,x\n1,b\n", 1, 2, 3, 1, SweepFormat::Csv, 0xbb)}},
          std::nullopt),
      Contains("b.csv: line 3: a shard of another sweep (spec 00000000000000bb, but a.csv's is "
               "00000000000000aa)"));
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a}, {"b.csv", shard("index,x\n1,b\n", 1, 3, 3, 1)}}, std::nullopt),
      Contains("b.csv: line 3: shard 1/3 of 3 scenarios, but a.csv is a shard 0/2 of 3"));
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}, {"b.csv", a}}, std::nullopt),
                      "b.csv: line 4: shard 0/2 given twice, also in a.csv; expected each shard "
                      "once");
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}}, std::nullopt),
                      "merge: missing shard 1/2; expected all 2 shards of the sweep (0/2 to 1/2)");
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", a}, {"b.csv", b}}, 4),
                      Contains("--expect: the shards are of a sweep of 3 scenarios"));
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", a}, {"b.csv", shard("index,y\n1,b\n", 1, 2, 3, 1)}}, std::nullopt),
      Contains("b.csv: line 1: CSV header differs from a.csv's"));
  REQUIRE_THROWS_WITH(
      merge_outputs(
          {{"a.csv", a}, {"b.json", shard("{\"index\":1}\n", 1, 2, 3, 1, SweepFormat::JsonLines)}},
          std::nullopt),
      Contains("b.json: format differs from the other inputs"));
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", shard("index,x\nzero,a\n", 0, 1, 1, 1)}}, std::nullopt),
      Contains("a.csv: line 2: row without an index"));
}

TEST_CASE("merge: a row repeated at the largest index is an error, not an overflow",
          "[sweep][io]") {
  // Found by fuzz_sweep_merge: two rows of index 2^63 - 1 made the message compute the next
  // expected row as 2^63 - 1 + 1, a signed overflow (UBSan). The rows are out of place, and no
  // row can follow the largest index.
  const std::string rows = "index,x\n9223372036854775807,a\n9223372036854775807,b\n";
  REQUIRE_THROWS_WITH(
      merge_outputs({{"a.csv", shard(rows, 0, 1, 1, 2)}}, std::nullopt),
      Catch::Contains("a.csv: line 3: row 9223372036854775807 out of place after row "
                      "9223372036854775807; expected no row after it"));
}

TEST_CASE("format_number: shortest round trip, locale-independent", "[sweep][io]") {
  CHECK(format_number(0.1) == "0.1");
  CHECK(format_number(0.0) == "0");
  CHECK(format_number(53828756480.0) == "53828756480");
  CHECK(std::stod(format_number(0.7695502713386605)) == 0.7695502713386605);
}
