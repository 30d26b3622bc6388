#include "sim/io/unit_parse.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

using namespace trainsim;
using namespace trainsim::io;

TEST_CASE("unit_parse: spec-sheet strings become SI values", "[io][units]") {
  // Decimal prefixes are powers of ten: 3.35 TB/s = 3.35e12 B/s.
  REQUIRE(parse_bandwidth("3.35 TB/s").value() == Approx(3.35e12).epsilon(1e-12));
  // Bits are an eighth of a byte: 400 Gb/s = 400e9 / 8 = 50e9 B/s.
  REQUIRE(parse_bandwidth("400 Gb/s").value() == Approx(50e9).epsilon(1e-12));
  // Binary prefixes are powers of 1024: 80 GiB = 80 * 2^30 B.
  REQUIRE(parse_bytes("80 GiB").value() == Approx(85899345920.0).epsilon(1e-12));
  REQUIRE(parse_bytes("80 GB").value() == Approx(80e9).epsilon(1e-12));
  // 1 PiB = 2^50 B, the HBM bound a hardware profile's error names; it was an unknown unit.
  REQUIRE(parse_bytes("1 PiB").value() == 1125899906842624.0);
  REQUIRE(parse_flop_rate("989 TFLOP/s").value() == Approx(989e12).epsilon(1e-12));
  REQUIRE(parse_watts("700 W").value() == Approx(700.0).epsilon(1e-12));
  REQUIRE(parse_seconds("5 us").value() == Approx(5e-6).epsilon(1e-12));
  REQUIRE(parse_seconds("5us").value() == Approx(5e-6).epsilon(1e-12));
  // Both Unicode mus: the micro sign (U+00B5) and the Greek letter (U+03BC), which look alike;
  // the second was an unknown unit.
  REQUIRE(parse_seconds("5 \xC2\xB5s").value() == Approx(5e-6).epsilon(1e-12));
  REQUIRE(parse_seconds("5 \xCE\xBCs").value() == Approx(5e-6).epsilon(1e-12));
  REQUIRE(parse_seconds("1.5e-3 s").value() == Approx(1.5e-3).epsilon(1e-12));
  REQUIRE(parse_joules("1 kWh").value() == Approx(3.6e6).epsilon(1e-12));
  REQUIRE(parse_unit("2.5 USD/h", UnitKind::Price) == Approx(2.5).epsilon(1e-12));
}

TEST_CASE("unit_parse: bad strings are rejected with the expected form", "[io][units]") {
  SECTION("no unit") {
    REQUIRE_THROWS_AS(parse_bandwidth("450"), ConfigError);
    REQUIRE_THROWS_WITH(parse_bandwidth("450"),
                        Catch::Contains("expected a bandwidth like \"450 GB/s\"") &&
                            Catch::Contains("(no unit)"));
  }
  SECTION("no number") {
    REQUIRE_THROWS_WITH(parse_bytes("GiB"), Catch::Contains("expected a size like \"80 GiB\""));
  }
  SECTION("a hexadecimal number, which strtod would read as 80 and 64") {
    REQUIRE_THROWS_WITH(parse_bytes("0x50 GiB"), Catch::Contains("with a decimal number"));
    REQUIRE_THROWS_WITH(parse_bytes("0x1p6 GiB"), Catch::Contains("with a decimal number"));
    REQUIRE(parse_bytes("80e0 GiB").value() == 80.0 * 1024 * 1024 * 1024);
  }
  SECTION("a unit of another kind") {
    REQUIRE_THROWS_WITH(parse_bandwidth("450 GB"), Catch::Contains("which is a size"));
    REQUIRE_THROWS_WITH(parse_flop_rate("989 TFLOP"), Catch::Contains("which is a FLOP count"));
  }
  SECTION("an unknown unit") {
    REQUIRE_THROWS_WITH(parse_watts("700 horsepower"),
                        Catch::Contains("unknown unit \"horsepower\""));
  }
  SECTION("a number with digit separators or a second point: the number is at fault") {
    // It read "(unknown unit ",000 W")".
    for (const char* text : {"1,000 W", "1_000 W", "1.2.5 W"}) {
      REQUIRE_THROWS_WITH(parse_watts(text),
                          "expected a power like \"700 W\" with a plain decimal number (no digit "
                          "separators), got \"" +
                              std::string(text) + "\"");
    }
    // A unit that starts with a letter is still a unit.
    REQUIRE_THROWS_WITH(parse_watts("1 ,W"), Catch::Contains("unknown unit"));
  }
  SECTION("not finite") {
    REQUIRE_THROWS_WITH(parse_seconds("inf s"), Catch::Contains("finite"));
    REQUIRE_THROWS_WITH(parse_seconds("nan s"), Catch::Contains("finite"));
  }
}
