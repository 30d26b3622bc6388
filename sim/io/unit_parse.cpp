#include "sim/io/unit_parse.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "trainsim/error.hpp"

namespace trainsim::io {
namespace {

struct PrefixEntry {
  std::string_view name;
  double factor;
};

// Decimal prefixes are exact powers of ten, binary ones powers of 1024 (IEC 80000-13). "K" is
// accepted for kilo as spec sheets write "KB"; "Ki" is always binary.
// "Pi" too: the HBM bound's message names 1 PiB.
constexpr std::array<PrefixEntry, 12> kDataPrefixes = {{{"", 1.0},
                                                        {"k", 1e3},
                                                        {"K", 1e3},
                                                        {"M", 1e6},
                                                        {"G", 1e9},
                                                        {"T", 1e12},
                                                        {"P", 1e15},
                                                        {"Ki", 1024.0},
                                                        {"Mi", 1048576.0},
                                                        {"Gi", 1073741824.0},
                                                        {"Ti", 1099511627776.0},
                                                        {"Pi", 1125899906842624.0}}};
constexpr std::array<PrefixEntry, 7> kDecimalPrefixes = {
    {{"", 1.0}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}}};
// Microseconds in both of Unicode's mus, which look alike: the micro sign U+00B5 and the Greek
// small letter mu U+03BC (the one a Greek keyboard, and NFKC normalization, give); the second
// was refused as an unknown unit that read like the first.
constexpr std::array<PrefixEntry, 6> kTimeUnits = {{{"s", 1.0},
                                                    {"ms", 1e-3},
                                                    {"us", 1e-6},
                                                    {"\xC2\xB5s", 1e-6},
                                                    {"\xCE\xBCs", 1e-6},
                                                    {"ns", 1e-9}}};

// Matches `unit` as <prefix><base> for one of the prefixes; returns the factor.
template <std::size_t N>
std::optional<double> match_prefixed(std::string_view unit, std::string_view base,
                                     const std::array<PrefixEntry, N>& prefixes) {
  if (unit.size() < base.size() || unit.substr(unit.size() - base.size()) != base) {
    return std::nullopt;
  }
  const std::string_view prefix = unit.substr(0, unit.size() - base.size());
  for (const auto& p : prefixes) {
    if (p.name == prefix) return p.factor;
  }
  return std::nullopt;
}

// Data unit in bytes: "GB" -> 1e9, "Gb" -> 1e9/8, "GiB" -> 2^30.
std::optional<double> data_factor(std::string_view unit) {
  if (auto f = match_prefixed(unit, "B", kDataPrefixes)) return *f;
  if (auto f = match_prefixed(unit, "b", kDataPrefixes)) return *f / 8.0;
  return std::nullopt;
}

std::optional<double> time_factor(std::string_view unit) {
  for (const auto& u : kTimeUnits) {
    if (u.name == unit) return u.factor;
  }
  if (unit == "min") return 60.0;
  if (unit == "h") return 3600.0;
  return std::nullopt;
}

std::optional<double> unit_factor(std::string_view unit, UnitKind kind) {
  switch (kind) {
    case UnitKind::Time:
      return time_factor(unit);
    case UnitKind::Data:
      return data_factor(unit);
    case UnitKind::DataRate:
      if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") {
        return data_factor(unit.substr(0, unit.size() - 2));
      }
      return std::nullopt;
    case UnitKind::Work:
      return match_prefixed(unit, "FLOP", kDecimalPrefixes);
    case UnitKind::WorkRate:
      return match_prefixed(unit, "FLOP/s", kDecimalPrefixes);
    case UnitKind::Power:
      return match_prefixed(unit, "W", kDecimalPrefixes);
    case UnitKind::Energy:
      if (auto f = match_prefixed(unit, "Wh", kDecimalPrefixes)) return *f * 3600.0;
      return match_prefixed(unit, "J", kDecimalPrefixes);
    case UnitKind::Price:
      if (unit == "USD/h") return 1.0;
      return std::nullopt;
  }
  return std::nullopt;
}

// Which kind a unit belongs to, if any, for a "wrong kind of unit" message.
std::optional<UnitKind> kind_of(std::string_view unit) {
  for (UnitKind k : {UnitKind::Time, UnitKind::Data, UnitKind::DataRate, UnitKind::Work,
                     UnitKind::WorkRate, UnitKind::Power, UnitKind::Energy, UnitKind::Price}) {
    if (unit_factor(unit, k)) return k;
  }
  return std::nullopt;
}

// Appends rather than `"\"" + s`, which trips g++ 12's false -Wrestrict at -O3.
std::string quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  out.append(s);
  out.push_back('"');
  return out;
}

// "1e+30 B/s": a bound in the kind's base unit, for messages.
std::string magnitude_text(double si, UnitKind kind) {
  static constexpr std::array<std::string_view, 8> kBase = {"s",      "B", "B/s", "FLOP",
                                                            "FLOP/s", "W", "J",   "USD/h"};
  char buffer[32];
  (void)std::snprintf(buffer, sizeof buffer, "%g", si);
  std::string out(buffer);
  out.push_back(' ');
  out.append(kBase[static_cast<std::size_t>(kind)]);
  return out;
}

}  // namespace

std::string unit_example(UnitKind kind) {
  switch (kind) {
    case UnitKind::Time:
      return "\"5 us\"";
    case UnitKind::Data:
      return "\"80 GiB\"";
    case UnitKind::DataRate:
      return "\"450 GB/s\"";
    case UnitKind::Work:
      return "\"3.5 TFLOP\"";
    case UnitKind::WorkRate:
      return "\"989 TFLOP/s\"";
    case UnitKind::Power:
      return "\"700 W\"";
    case UnitKind::Energy:
      return "\"4.2 kJ\"";
    case UnitKind::Price:
      return "\"2.50 USD/h\"";
  }
  return "";
}

std::string unit_noun(UnitKind kind) {
  switch (kind) {
    case UnitKind::Time:
      return "a time";
    case UnitKind::Data:
      return "a size";
    case UnitKind::DataRate:
      return "a bandwidth";
    case UnitKind::Work:
      return "a FLOP count";
    case UnitKind::WorkRate:
      return "a FLOP rate";
    case UnitKind::Power:
      return "a power";
    case UnitKind::Energy:
      return "an energy";
    case UnitKind::Price:
      return "a price per hour";
  }
  return "";
}

double parse_unit(std::string_view text, UnitKind kind) {
  const std::string expected = "expected " + unit_noun(kind) + " like " + unit_example(kind);
  const std::string s(text);
  const char* begin = s.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  if (end == begin) {
    throw ConfigError(expected + ", got " + quoted(text));
  }
  // strtod also reads hexadecimal ("0x50" = 80, "0x1p6" = 64): a number is written in decimal.
  if (std::string_view(begin, static_cast<std::size_t>(end - begin)).find_first_of("xX") !=
      std::string_view::npos) {
    throw ConfigError(expected + " with a decimal number, got " + quoted(text));
  }
  if (!std::isfinite(number)) {
    throw ConfigError(expected + " with a finite number, got " + quoted(text));
  }
  std::string_view unit(end);
  // A digit group separator ("1,000 W", "1_000 W") or a second point ("1.2.3 W") continues the
  // number: refused as a number, not as an unknown unit ",000 W".
  if (unit.size() > 1 && (unit[0] == ',' || unit[0] == '_' || unit[0] == '.') &&
      std::isdigit(static_cast<unsigned char>(unit[1])) != 0) {
    throw ConfigError(expected + " with a plain decimal number (no digit separators), got " +
                      quoted(text));
  }
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())) != 0) {
    unit.remove_prefix(1);
  }
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back())) != 0) {
    unit.remove_suffix(1);
  }
  if (unit.empty()) {
    throw ConfigError(expected + ", got " + quoted(text) + " (no unit)");
  }
  if (auto f = unit_factor(unit, kind)) {
    // Checked after scaling too: "1e300 TB/s" overflows to infinity and "1e-320 GB/s" is a
    // denormal whose reciprocal is infinite. No physical quantity trainsim reads comes near
    // either bound, and within them every product and quotient of two values stays finite.
    const double si = number * *f;
    if (!std::isfinite(si)) {
      throw ConfigError("value overflows in SI units; " + expected + ", got " + quoted(text));
    }
    if (si != 0.0 && (std::fabs(si) > kMaxUnitMagnitude || std::fabs(si) < kMinUnitMagnitude)) {
      throw ConfigError("out of range; " + expected + " with a magnitude between " +
                        magnitude_text(kMinUnitMagnitude, kind) + " and " +
                        magnitude_text(kMaxUnitMagnitude, kind) + ", got " + quoted(text));
    }
    return si;
  }
  if (auto other = kind_of(unit)) {
    throw ConfigError(expected + ", got " + quoted(text) + ", which is " + unit_noun(*other));
  }
  throw ConfigError(expected + ", got " + quoted(text) + " (unknown unit " + quoted(unit) + ")");
}

double parse_byte_count_or_size(std::string_view text) {
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isdigit(c) != 0;
  });
  // Read as a double, a count past 2^53 rounds: 8999999999999999999 was taken (and echoed) as
  // 9000000000000000000. No size comes near 2^53 bytes (8 PiB). Compared as digits, before any
  // rounding, bare or with the unit B.
  const auto past_exact = [](std::string_view count) {
    count.remove_prefix(std::min(count.find_first_not_of('0'), count.size()));
    constexpr std::string_view kMaxExact = "9007199254740992";  // 2^53
    return count.size() > kMaxExact.size() ||
           (count.size() == kMaxExact.size() && count > kMaxExact);
  };
  const auto refuse_past_exact = [&text]() {
    return ConfigError(
        "out of range; expected a count of bytes of at most 9007199254740992 (2^53), got " +
        quoted(text));
  };
  if (digits) {
    if (past_exact(text)) throw refuse_past_exact();
    return std::stod(std::string(text));
  }
  {
    const auto end_digits = text.find_first_not_of("0123456789");
    if (end_digits > 0 && end_digits != std::string_view::npos) {
      std::string_view unit = text.substr(end_digits);
      while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())) != 0) {
        unit.remove_prefix(1);
      }
      if (unit == "B" && past_exact(text.substr(0, end_digits))) throw refuse_past_exact();
    }
  }
  // A number with nothing after it that is no count in digits ("1e30", "1.5", "-5"): what is
  // wrong is the number, not a missing unit.
  const std::string s(text);
  char* end = nullptr;
  (void)std::strtod(s.c_str(), &end);
  std::string_view rest(end);
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front())) != 0) {
    rest.remove_prefix(1);
  }
  if (end != s.c_str() && rest.empty()) {
    throw ConfigError(
        "expected a count of bytes in digits like 1048576, or a size with a unit like " +
        unit_example(UnitKind::Data) + ", got " + quoted(text));
  }
  return parse_unit(text, UnitKind::Data);
}

void require_int64_bytes(const std::string& flag, const std::string& text, double bytes) {
  if (bytes > 9.0e18) {
    throw ConfigError(flag + ": out of range; expected at most 9e18 bytes, got '" + text + "'");
  }
}

}  // namespace trainsim::io
