// Hostile inputs to the readers: unbounded streams, directories, deep nesting, numbers outside
// double or int64 range, values that overflow after unit scaling, counts above their bounds.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "sim/io/json_reader.hpp"
#include "sim/io/unit_parse.hpp"
#include "sim/sweep/sweep_spec.hpp"

using namespace trainsim;
using namespace trainsim::io;

TEST_CASE("json_reader: an endless stream is refused after max_bytes + 1 bytes", "[io]") {
  // /dev/zero never ends; the reader stops after 1 KiB + 1 bytes instead of filling memory.
  REQUIRE_THROWS_AS(read_text_file("/dev/zero", 1024, "a scenario file"), ConfigError);
  REQUIRE_THROWS_WITH(read_text_file("/dev/zero", std::size_t{1} << 20U, "a scenario file"),
                      "/dev/zero: file too large; expected a scenario file of at most 1 MiB, "
                      "got more");
}

TEST_CASE("json_reader: a directory or a missing file is a ConfigError naming it", "[io]") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  REQUIRE_THROWS_WITH(read_json_file(dir), dir + ": is a directory; expected a JSON document");
  REQUIRE_THROWS_WITH(read_json_file("/nonexistent/x.json"),
                      Catch::StartsWith("/nonexistent/x.json: cannot open file"));
}

TEST_CASE("json_reader: deep nesting is refused before parsing", "[io]") {
  // 100,000 levels would overflow the stack when an error message dumps the value; the limit is
  // kMaxJsonDepth = 64 levels, and the 65th bracket (line 1) is the one refused.
  const std::string deep(100000, '[');
  REQUIRE_THROWS_WITH(parse_json(deep, "deep.json"),
                      "deep.json: JSON nested too deeply at line 1; expected at most 64 levels "
                      "of objects and arrays, got more");
  // Exactly 64 levels parse.
  REQUIRE_NOTHROW(parse_json(std::string(64, '[') + std::string(64, ']'), "ok.json"));
}

TEST_CASE("json_reader: numbers outside double range are a ConfigError", "[io]") {
  // nlohmann throws out_of_range.406 for 1e400; it must not escape as a library exception.
  REQUIRE_THROWS_AS(parse_json(R"({"x": 1e400})", "big.json"), ConfigError);
  REQUIRE_THROWS_WITH(parse_json(R"({"x": 1e400})", "big.json"),
                      Catch::StartsWith("big.json: invalid JSON at line 1, column 7 (number "
                                        "overflow parsing '1e400'); expected a JSON document"));
  // NaN and Infinity, which Python's json module writes, are named as what they are.
  REQUIRE_THROWS_WITH(parse_json(R"({"x": NaN})", "nan.json"),
                      "nan.json: invalid JSON at line 1, column 7 ('NaN' is not a JSON number: "
                      "write a finite number, or null where the key allows it); expected a JSON "
                      "document");
  REQUIRE_THROWS_WITH(parse_json("{\"x\":\n -Infinity}", "inf.json"),
                      Catch::StartsWith("inf.json: invalid JSON at line 2, column 3 ('Infinity' is "
                                        "not a JSON number"));
  // Any other bad word keeps the plain message, and so do a string left open after NaN and text
  // after the document.
  REQUIRE_THROWS_WITH(parse_json(R"({"x": tru})", "t.json"),
                      "t.json: invalid JSON at line 1, column 10; expected a JSON document");
  REQUIRE_THROWS_WITH(parse_json(R"({"x": "NaN)", "t.json"),
                      Catch::StartsWith("t.json: invalid JSON at line 1, column ") &&
                          !Catch::Contains("not a JSON number"));
  REQUIRE_THROWS_WITH(parse_json(R"({"x": 1} nan)", "t.json"),
                      !Catch::Contains("not a JSON number"));
  // The overflowing number where it stands, not inside an earlier string or key that holds the
  // same characters: column 28.
  REQUIRE_THROWS_WITH(parse_json(R"({"x": "1e400", "hardware": 1e400})", "big.json"),
                      Catch::StartsWith("big.json: invalid JSON at line 1, column 28 (number "
                                        "overflow"));
  REQUIRE_THROWS_WITH(parse_json(R"({"1e400": 1, "b": 1e400})", "big.json"),
                      Catch::StartsWith("big.json: invalid JSON at line 1, column 19 (number "
                                        "overflow"));
}

TEST_CASE("json_reader: an empty file and a byte that is not UTF-8 say so", "[io]") {
  // The position alone ("line 1, column 1") did not tell these two apart from a syntax error.
  REQUIRE_THROWS_WITH(parse_json("", "e.json"),
                      "e.json: invalid JSON at line 1, column 1 (the file is empty); expected a "
                      "JSON document");
  REQUIRE_THROWS_WITH(parse_json(" \n", "w.json"),
                      Catch::Contains("(the file holds only white space)"));
  // A Latin-1 e-acute (0xE9) in a string, as a file saved in that encoding holds: column 16.
  REQUIRE_THROWS_WITH(parse_json("{\"hardware\": \"h\xe9\"}", "l.json"),
                      Catch::StartsWith("l.json: invalid JSON at line 1, column 16 (a byte that "
                                        "is not UTF-8: JSON text is UTF-8)"));
  // The column is the first byte of the first sequence that is not UTF-8: a cut 3-byte one
  // (0xE2 0x82, then 'x') at 16, not its continuation byte; after a valid e-acute (0xC3 0xA9,
  // columns 15 and 16), 0xE9 at 17.
  REQUIRE_THROWS_WITH(parse_json("{\"hardware\": \"h\xe2\x82x\"}", "l.json"),
                      Catch::StartsWith("l.json: invalid JSON at line 1, column 16 (a byte"));
  REQUIRE_THROWS_WITH(parse_json("{\"hardware\": \"\xc3\xa9\xe9\"}", "l.json"),
                      Catch::StartsWith("l.json: invalid JSON at line 1, column 17 (a byte"));
  // Excerpts for messages are cut before a character, not inside it.
  CHECK(utf8_prefix("ab\xc3\xa9", 3) == "ab");
  CHECK(utf8_prefix("ab\xc3\xa9", 4) == "ab\xc3\xa9");
  CHECK(utf8_prefix("abc", 10) == "abc");
  // Columns count characters, not bytes ("%-4s" padded "\xc3\xa9" to 4 bytes, 3 characters):
  // padded to the width, cut between characters.
  CHECK(column_text("\xc3\xa9", 3) == "\xc3\xa9  ");
  CHECK(column_text("a\xc3\xa9" "b", 2) == "a\xc3\xa9");
  CHECK(column_text("abcdef", 4, false) == "abcdef");
}

TEST_CASE("json_reader: integer bounds say out of range and the limit", "[io]") {
  const auto json = parse_json(
      R"({"layers": 1e12, "u": 18446744073709551615, "neg": -1e30, "ok": 65536, "inf": 1.5})",
      "m.json");
  ObjectReader r(json, "m.json", "");
  // 1e12 is a whole number within 2^53 but above the bound 65536.
  REQUIRE_THROWS_WITH(r.integer("layers", 1, 65536),
                      "m.json: /layers: 1000000000000.0: out of range; expected at most 65536");
  // 2^64 - 1 is stored unsigned by nlohmann; it must not wrap to -1.
  REQUIRE_THROWS_WITH(r.integer("u", 1, 65536),
                      "m.json: /u: 18446744073709551615: out of range; expected at most 65536");
  REQUIRE_THROWS_WITH(r.integer("neg", 1, 65536),
                      Catch::Contains("/neg: expected an integer >= 1"));
  REQUIRE(r.integer("ok", 1, 65536) == 65536);
  REQUIRE_THROWS_WITH(r.integer("inf", 1, 65536), Catch::Contains("expected an integer, got 1.5"));
}

TEST_CASE("json_reader: is_valid_utf8 follows RFC 3629", "[io]") {
  REQUIRE(is_valid_utf8("plain ascii"));
  REQUIRE(is_valid_utf8("\xC2\xB5s"));               // "µs"
  REQUIRE(is_valid_utf8("\xF0\x9F\x98\x80"));        // U+1F600
  REQUIRE_FALSE(is_valid_utf8("\xFF"));              // never a UTF-8 byte
  REQUIRE_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong "/"
  REQUIRE_FALSE(is_valid_utf8("\xED\xA0\x80"));      // surrogate U+D800
  REQUIRE_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  REQUIRE_FALSE(is_valid_utf8("\xE2\x82"));          // truncated
}

TEST_CASE("json_reader: escape_invalid_utf8 keeps UTF-8 and shows other bytes", "[io]") {
  REQUIRE(escape_invalid_utf8("plain \xC2\xB5s") == "plain \xC2\xB5s");
  REQUIRE(escape_invalid_utf8("a\xFF"
                              "b") == "a\\xffb");
  // A truncated sequence: each of its bytes is shown, the ASCII after it kept.
  REQUIRE(escape_invalid_utf8("\xE2\x82z") == "\\xe2\\x82z");
  REQUIRE(escape_invalid_utf8("\xC0\xAF") == "\\xc0\\xaf");  // overlong "/"
  REQUIRE(is_valid_utf8(escape_invalid_utf8("\xF4\x90\x80\x80\xED\xA0\x80")));
}

TEST_CASE("unit_parse: values are checked after scaling", "[io][units]") {
  // 1e300 is finite, but 1e300 TB/s = 1e312 B/s is not.
  REQUIRE_THROWS_WITH(parse_unit("1e300 TB/s", UnitKind::DataRate),
                      "value overflows in SI units; expected a bandwidth like \"450 GB/s\", got "
                      "\"1e300 TB/s\"");
  // 1e-320 GB/s = 1e-311 B/s, a denormal whose reciprocal is infinite: below 1e-30.
  REQUIRE_THROWS_WITH(parse_unit("1e-320 GB/s", UnitKind::DataRate),
                      "out of range; expected a bandwidth like \"450 GB/s\" with a magnitude "
                      "between 1e-30 B/s and 1e+30 B/s, got \"1e-320 GB/s\"");
  // 1e16 PFLOP/s = 1e31 FLOP/s is finite but above 1e30.
  REQUIRE_THROWS_WITH(parse_unit("1e16 PFLOP/s", UnitKind::WorkRate),
                      Catch::StartsWith("out of range; expected a FLOP rate"));
  // The bounds themselves and zero are accepted: 1e18 TB/s = 1e30 B/s.
  REQUIRE(parse_unit("1e18 TB/s", UnitKind::DataRate) == Approx(1e30).epsilon(1e-12));
  REQUIRE(parse_unit("0 s", UnitKind::Time) == 0.0);
}

TEST_CASE("json_reader: a denormal bandwidth names the key", "[io][units]") {
  const auto json = parse_json(R"({"link": {"bw": "1e-320 GB/s"}})", "hw.json");
  ObjectReader top(json, "hw.json", "");
  auto link = top.object("link");
  REQUIRE_THROWS_WITH(link.bandwidth("bw"), Catch::StartsWith("hw.json: /link/bw: out of range"));
}

TEST_CASE("sweep_spec: ranges whose span overflows int64 are refused", "[io][sweep]") {
  // to - from = 2^64 - 1 does not fit an int64: the range is too long, not a crash.
  const std::string spec = R"({"base": {}, "axes": {"parallel.tp":
      {"from": -9223372036854775808, "to": 9223372036854775807, "step": 1}}})";
  REQUIRE_THROWS_WITH(sweep::parse_sweep_spec(spec, "s.json", ""),
                      "s.json: /axes/parallel.tp: range too long; expected at most 1000000 "
                      "values");
  // 2^64 - 1 would wrap to -1 through get<int64_t>().
  const std::string unsigned_bound = R"({"base": {}, "axes": {"parallel.tp":
      {"from": 1, "to": 18446744073709551615, "step": 1}}})";
  REQUIRE_THROWS_WITH(sweep::parse_sweep_spec(unsigned_bound, "s.json", ""),
                      Catch::StartsWith("s.json: /axes/parallel.tp/to: 18446744073709551615: out "
                                        "of range"));
}

TEST_CASE("sweep_spec: /dev/zero as a sweep spec is refused, not read forever", "[io][sweep]") {
  REQUIRE_THROWS_WITH(sweep::read_sweep_spec("/dev/zero"),
                      "/dev/zero: file too large; expected a sweep spec of at most 64 MiB, got "
                      "more");
}
