#include "trainsim/units.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
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
  const int decimals = ax >= 100.0 ? 0 : (ax >= 10.0 ? 1 : 2);
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
constexpr std::array<Prefix, 5> kBinary = {{{1.0, ""},
                                             {1024.0, "Ki"},
                                             {1048576.0, "Mi"},
                                             {1073741824.0, "Gi"},
                                             {1099511627776.0, "Ti"}}};

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

}  // namespace trainsim
