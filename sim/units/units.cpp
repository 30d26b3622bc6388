#include "trainsim/units.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace trainsim {
namespace {

struct Prefix {
  double factor;
  const char* name;
};

// Picks the largest prefix not above |v| and prints three significant digits, so a column of
// numbers reads alike whatever their size.
template <std::size_t N>
std::string scaled(double v, const std::array<Prefix, N>& prefixes, const char* unit) {
  const double mag = std::fabs(v);
  std::size_t pick = 0;
  for (std::size_t i = 0; i < N; ++i) {
    if (mag >= prefixes[i].factor || (mag == 0.0 && prefixes[i].factor == 1.0)) pick = i;
  }
  // A value that rounds up to the next prefix's factor prints with that prefix: 999.9996 ns is
  // "1.00 us", not "1000 ns" (and 1023.7 KiB "1.00 MiB").
  if (pick + 1 < N && std::round(mag / prefixes[pick].factor) * prefixes[pick].factor >=
                          prefixes[pick + 1].factor) {
    ++pick;
  }
  const double x = v / prefixes[pick].factor;
  const double ax = std::fabs(x);
  int decimals = ax >= 100.0 ? 0 : (ax >= 10.0 ? 1 : 2);
  // A value that rounds up to the next decade at its decimals takes one fewer, so that it keeps
  // three significant digits: 99.96 us is "100 us", not "100.0 us" (and 9.996 "10.0").
  if (decimals > 0 && std::fabs(std::strtod(fixed_text(x, decimals).c_str(), nullptr)) >=
                          (decimals == 1 ? 100.0 : 10.0)) {
    --decimals;
  }
  std::array<char, 64> buf{};
  if (ax >= 1e6) {
    // Past the largest prefix by six digits or more ("1000000000000000 PW"): the base unit in
    // scientific notation, three significant digits as everywhere else.
    std::snprintf(buf.data(), buf.size(), "%.2e %s", v, unit);
    return buf.data();
  }
  return fixed_text(x, decimals) + " " + prefixes[pick].name + unit;
}

constexpr std::array<Prefix, 4> kTime = {{{1e-9, "n"}, {1e-6, "u"}, {1e-3, "m"}, {1.0, ""}}};
constexpr std::array<Prefix, 6> kDecimal = {
    {{1.0, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}, {1e15, "P"}}};
constexpr std::array<Prefix, 6> kDecimalUpper = {
    {{1.0, ""}, {1e3, "K"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}, {1e15, "P"}}};
// Up to EiB: a plan past the 8 PiB trainsim counts exactly is refused naming its size, which
// read "1.44e+18 B" in the base unit where smaller sizes read in binary prefixes.
constexpr std::array<Prefix, 7> kBinary = {{{1.0, ""},
                                            {1024.0, "Ki"},
                                            {1048576.0, "Mi"},
                                            {1073741824.0, "Gi"},
                                            {1099511627776.0, "Ti"},
                                            {1125899906842624.0, "Pi"},
                                            {1152921504606846976.0, "Ei"}}};

}  // namespace

std::string fixed_text(double v, int decimals) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*f", decimals, v);
  std::string text = buf.data();
  if (text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

std::string signed_fixed_text(double v, int decimals) {
  std::string text = fixed_text(v, decimals);
  return text[0] == '-' ? text : "+" + text;
}

std::string fixed_significant(double v, int decimals, int digits) {
  if (v != 0.0 && std::isfinite(v)) {
    // The first significant digit of |v| is at 10^e; `digits` of them end at 10^(e - digits + 1).
    const int e = static_cast<int>(std::floor(std::log10(std::abs(v))));
    // Past 12 decimals, or at 10^15 and above where a double's digits end and %f prints its
    // binary expansion, the digits as a power of ten: "1.0e-25", not "0.000000000000".
    if (digits - 1 - e > std::max(decimals, 12) || e >= 15) {
      std::array<char, 64> buf{};
      std::snprintf(buf.data(), buf.size(), "%.*e", std::max(digits - 1, 0), v);
      return buf.data();
    }
    decimals = std::max(digits - 1 - e, decimals);
  }
  return fixed_text(v, decimals);
}

std::string counted(std::int64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::string to_string(Seconds t) {
  return scaled(t.value(), kTime, "s");
}
std::string to_string(Bytes b) { return scaled(b.value(), kBinary, "B"); }
std::string to_string(Flops f) { return scaled(f.value(), kDecimalUpper, "FLOP"); }
std::string to_string(BytesPerSecond r) { return scaled(r.value(), kDecimalUpper, "B/s"); }
std::string to_string(FlopsPerSecond r) { return scaled(r.value(), kDecimalUpper, "FLOP/s"); }
std::string to_string(Watts w) { return scaled(w.value(), kDecimal, "W"); }
std::string to_string(Joules e) { return scaled(e.value(), kDecimal, "J"); }

std::string exact_to_string(Watts w) {
  std::array<char, 512> buf{};  // a double past 1e308 W in fixed notation, and its digits
  const auto [end, ec] =
      std::to_chars(buf.data(), buf.data() + buf.size(), w.value(), std::chars_format::fixed);
  if (ec != std::errc()) return to_string(w);
  return std::string(buf.data(), end) + " W";
}

std::pair<std::string, std::string> to_strings_apart(Watts a, Watts b) {
  std::string ta = to_string(a);
  std::string tb = to_string(b);
  if (ta != tb) return {std::move(ta), std::move(tb)};
  // In watts, with one decimal more than the fewest that tell them apart (rounding can part them
  // at the last: 1234.6 and 1234.5 read "1235" and "1234"), trailing zeros dropped ("700.3 W"
  // for a fitted 700.2999999999998 W beside "700 W").
  const auto trimmed = [](std::string text) {
    if (text.find('.') != std::string::npos) {
      text.erase(text.find_last_not_of('0') + 1);
      if (text.back() == '.') text.pop_back();
    }
    return text + " W";
  };
  for (int decimals = 0; decimals <= 15; ++decimals) {
    if (fixed_text(a.value(), decimals) == fixed_text(b.value(), decimals)) continue;
    // Parted at these decimals, perhaps by rounding alone (700.25 and 700.2500001 read 700.2
    // and 700.3, then alike at 700.25): the first more that parts them too.
    for (int more = decimals + 1; more <= 16; ++more) {
      std::string xa = trimmed(fixed_text(a.value(), more));
      std::string xb = trimmed(fixed_text(b.value(), more));
      if (xa != xb) return {std::move(xa), std::move(xb)};
    }
    break;
  }
  return {exact_to_string(a), exact_to_string(b)};
}

}  // namespace trainsim
