#include <catch2/catch.hpp>

#include "sim/io/sweep_writer.hpp"
#include "trainsim/error.hpp"

using namespace trainsim;
using namespace trainsim::io;

TEST_CASE("merge: rows are joined by index, the header once", "[sweep][io]") {
  const std::string merged = merge_outputs(
      {{"b.csv", "index,x\n1,b\n3,d\n"}, {"a.csv", "index,x\n0,a\n2,c\n4,e\n"}}, std::nullopt);
  CHECK(merged == "index,x\n0,a\n1,b\n2,c\n3,d\n4,e\n");
  // JSON lines: no header.
  CHECK(merge_outputs({{"1", "{\"index\":1,\"v\":2}\n"}, {"0", "{\"index\":0,\"v\":1}\n"}},
                      std::nullopt) == "{\"index\":0,\"v\":1}\n{\"index\":1,\"v\":2}\n");
}

TEST_CASE("merge: duplicates, gaps and mismatched headers are errors", "[sweep][io]") {
  using Catch::Contains;
  REQUIRE_THROWS_AS(merge_outputs({{"a.csv", "index,x\n0,a\n"}, {"b.csv", "index,x\n0,a\n"}},
                                  std::nullopt),
                    ConfigError);
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", "index,x\n0,a\n"}, {"b.csv", "index,x\n0,a\n"}},
                                    std::nullopt),
                      "b.csv: line 2: duplicate row 0, also in a.csv; expected each index once");
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", "index,x\n0,a\n2,c\n"}}, std::nullopt),
                      Contains("missing row 1"));
  // Rows 0 and 1 present but 3 expected: the last one is missing.
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", "index,x\n0,a\n1,b\n"}}, 3),
                      Contains("missing row 2"));
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", "index,x\n0,a\n"}, {"b.csv", "index,y\n1,b\n"}},
                                    std::nullopt),
                      Contains("b.csv: line 1: CSV header differs from a.csv's"));
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", "index,x\n0,a\n"}, {"b.json", "{\"index\":1}\n"}},
                                    std::nullopt),
                      Contains("b.json: format differs from the other inputs"));
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", "index,x\nzero,a\n"}}, std::nullopt),
                      Contains("a.csv: line 2: row without an index"));
  // Nothing to merge at all is garbage, not an empty sweep.
  REQUIRE_THROWS_WITH(merge_outputs({{"a.csv", ""}, {"b.csv", ""}}, std::nullopt),
                      Contains("every input is empty"));
}

TEST_CASE("format_number: shortest round trip, locale-independent", "[sweep][io]") {
  CHECK(format_number(0.1) == "0.1");
  CHECK(format_number(0.0) == "0");
  CHECK(format_number(53828756480.0) == "53828756480");
  CHECK(std::stod(format_number(0.7695502713386605)) == 0.7695502713386605);
}
