#include <catch2/catch.hpp>

#include "trainsim/units.hpp"

using namespace trainsim;
using namespace trainsim::literals;

TEST_CASE("units: literals hold SI values", "[units]") {
  REQUIRE((1_ms).value() == Approx(1e-3).epsilon(1e-12));
  REQUIRE((5_us).value() == Approx(5e-6).epsilon(1e-12));
  REQUIRE((80_GiB).value() == Approx(80.0 * 1073741824.0).epsilon(1e-12));
  REQUIRE((80_GB).value() == Approx(80e9).epsilon(1e-12));
  REQUIRE((1_KiB).value() == Approx(1024.0).epsilon(1e-12));
  REQUIRE((700_W).value() == Approx(700.0).epsilon(1e-12));
}

TEST_CASE("units: cross-dimension arithmetic follows physics", "[units]") {
  // 900 GB over 450 GB/s takes 2 s.
  const BytesPerSecond link = 450_GB / 1_s;
  REQUIRE((900_GB / link).value() == Approx(2.0).epsilon(1e-12));
  // 989 TFLOP at 989 TFLOP/s takes 1 s.
  REQUIRE((Flops(989e12) / tflop_per_s(989)).value() == Approx(1.0).epsilon(1e-12));
  // 700 W for 2 s is 1400 J; back to watts over 2 s gives 700 W.
  const Joules e = 700_W * 2_s;
  REQUIRE(e.value() == Approx(1400.0).epsilon(1e-12));
  REQUIRE((e / 2_s).value() == Approx(700.0).epsilon(1e-12));
  // Same over same is a plain ratio.
  const double ratio = 3_ms / 1_ms;
  REQUIRE(ratio == Approx(3.0).epsilon(1e-12));
}

TEST_CASE("units: SimTime is a point, Seconds a duration", "[units]") {
  const SimTime t0 = SimTime::zero();
  const SimTime t1 = t0 + 3_ms;
  REQUIRE((t1 - t0).value() == Approx(3e-3).epsilon(1e-12));
  REQUIRE(t1 > t0);
  REQUIRE(t1.since_start() == 3_ms);
}

TEST_CASE("units: to_string scales to a readable prefix", "[units]") {
  REQUIRE(to_string(Seconds(1.234e-3)) == "1.23 ms");
  REQUIRE(to_string(Seconds(56e-6)) == "56.0 us");
  REQUIRE(to_string(80_GiB) == "80.0 GiB");
  REQUIRE(to_string(BytesPerSecond(3.35e12)) == "3.35 TB/s");
  REQUIRE(to_string(tflop_per_s(989)) == "989 TFLOP/s");
  REQUIRE(to_string(Watts(612.5)) == "612 W");
  // Zero reads without a prefix.
  REQUIRE(to_string(Seconds(0.0)) == "0.00 s");
  // A value that rounds up to the next prefix takes it: 1 us less 0.4 ps printed "1000 ns" (a
  // trace's 1 us kernel, its end and start read from microseconds), 1023.6 KiB "1024 KiB".
  REQUIRE(to_string(Seconds(1e-6 - 4e-13)) == "1.00 us");
  REQUIRE(to_string(Seconds(-(1e-6 - 4e-13))) == "-1.00 us");
  REQUIRE(to_string(Bytes(1023.6 * 1024)) == "1.00 MiB");
  REQUIRE(to_string(Seconds(999.4e-9)) == "999 ns");  // rounds down: stays
  // Within a prefix, a value that rounds up to the next decade keeps three significant digits:
  // 99.99999999 us printed "100.0 us" (compare's communication row), 9.996 ms "10.00 ms".
  REQUIRE(to_string(Seconds(9.999999999e-5)) == "100 us");
  REQUIRE(to_string(Seconds(-9.999999999e-5)) == "-100 us");
  REQUIRE(to_string(Seconds(9.996e-3)) == "10.0 ms");
  REQUIRE(to_string(Seconds(99.94e-6)) == "99.9 us");  // rounds down: stays
  REQUIRE(to_string(Seconds(9.994e-3)) == "9.99 ms");
}

TEST_CASE("units: two draws an error compares are written with the digits that tell them apart",
          "[units]") {
  // Three digits where they differ, the exact value where they read alike.
  REQUIRE(to_strings_apart(Watts(800.0), Watts(700.0)) ==
          std::pair<std::string, std::string>{"800 W", "700 W"});
  REQUIRE(to_strings_apart(Watts(700.4), Watts(700.0)) ==
          std::pair<std::string, std::string>{"700.4 W", "700 W"});
  REQUIRE(to_strings_apart(Watts(1234.6), Watts(1234.5)) ==
          std::pair<std::string, std::string>{"1234.6 W", "1234.5 W"});
  REQUIRE(exact_to_string(Watts(5001.0)) == "5001 W");
  // Parted by rounding at one decimal, alike at two: more until they differ.
  REQUIRE(to_strings_apart(Watts(700.25), Watts(700.2500001)) ==
          std::pair<std::string, std::string>{"700.25 W", "700.2500001 W"});
  REQUIRE(to_string(Watts(999.6e15)) == "1000 PW");   // no larger prefix
  // Past the largest prefix the number grows digits ("999999 PW" is still read as one); from
  // six more digits on, the base unit in scientific notation, three significant digits.
  REQUIRE(to_string(Watts(999999e15)) == "999999 PW");
  REQUIRE(to_string(Watts(1e30)) == "1.00e+30 W");
  // Bytes up to EiB (a plan's memory past the 8 PiB counted exactly is named in them), then
  // the base unit past 999999 EiB.
  REQUIRE(to_string(Bytes(1.44e18)) == "1.25 EiB");
  REQUIRE(to_string(Bytes(2.5e21)) == "2168 EiB");
  REQUIRE(to_string(Bytes(2.5e24)) == "2.50e+24 B");
  REQUIRE(to_string(Seconds(3600.0)) == "3600 s");
  REQUIRE(to_string(Seconds(-1e7)) == "-1.00e+07 s");
  // A value that rounds to zero prints without a sign (a tiny negative delta, -0 itself).
  REQUIRE(fixed_text(-0.0004, 1) == "0.0");
  REQUIRE(fixed_text(-0.0, 2) == "0.00");
  REQUIRE(fixed_text(-0.05, 1) == "-0.1");  // rounds away from zero: kept
  REQUIRE(fixed_text(-3.0, 0) == "-3");
  // Signed: the sign always written, "+0.0" for a value that rounds to zero from either side.
  REQUIRE(signed_fixed_text(1.25, 1) == "+1.2");
  REQUIRE(signed_fixed_text(-0.3, 1) == "-0.3");
  REQUIRE(signed_fixed_text(-3.3e-14, 1) == "+0.0");
  REQUIRE(signed_fixed_text(0.0, 1) == "+0.0");
  REQUIRE(to_string(Bytes(-0.0)) == "0.00 B");
}

TEST_CASE("fixed_significant keeps the digits a small value needs", "[units]") {
  // A cost of $0.00021 per million tokens printed "$0.000" at three decimals; two significant
  // digits need five (the first is at 10^-4).
  REQUIRE(fixed_significant(0.00021, 3, 2) == "0.00021");
  REQUIRE(fixed_significant(0.000213, 4, 3) == "0.000213");
  // At or past the decimals asked for, fixed_text's digits: 0.19 tokens/J stays "0.19".
  REQUIRE(fixed_significant(0.19, 2, 2) == "0.19");
  REQUIRE(fixed_significant(12.345, 3, 2) == "12.345");
  REQUIRE(fixed_significant(1234.5, 2, 3) == "1234.50");
  // Zero keeps the decimals; never "-0".
  REQUIRE(fixed_significant(0.0, 3, 2) == "0.000");
  REQUIRE(fixed_significant(-0.0, 2, 2) == "0.00");
  // At most 12 after the point: a value whose digits lie past them (a price of 1e-25 USD per
  // GPU-hour printed a cost of $0.000000000000), or a value from 10^15 on (1e25 printed
  // 10000000000000000905969664.00, the double's binary expansion), is written with its
  // `digits` significant digits and a power of ten.
  REQUIRE(fixed_significant(1e-20, 3, 2) == "1.0e-20");
  REQUIRE(fixed_significant(2.5e-11, 3, 2) == "0.000000000025");  // 12 decimals suffice
  REQUIRE(fixed_significant(1e25, 3, 2) == "1.0e+25");
  REQUIRE(fixed_significant(123456789012345.0, 2, 3) == "123456789012345.00");
}
