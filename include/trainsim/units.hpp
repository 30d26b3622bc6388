// Strong quantity types for every dimensional number in trainsim: a double in the SI base unit
// (seconds, bytes, FLOPs, joules) tagged with its dimension, so seconds never meet bytes by
// accident. Parsing of unit strings ("3.35 TB/s") lives at the edge, in sim/io/unit_parse.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace trainsim {

// Exponents of the four base dimensions trainsim needs: time, data (bytes), work (FLOPs, a
// count of floating-point operations) and energy. Rates are negative time exponents.
template <int T, int B, int F, int E>
struct Dim {
  static constexpr int kTime = T;
  static constexpr int kBytes = B;
  static constexpr int kFlops = F;
  static constexpr int kEnergy = E;
};

template <class D>
class Quantity {
 public:
  constexpr Quantity() = default;
  explicit constexpr Quantity(double si) : v_(si) {}

  // The value in the SI base unit (s, B, FLOP, J and their quotients). Use only at the edges:
  // io/, Eigen fitting code, or inside one formula that rewraps its result.
  [[nodiscard]] constexpr double value() const { return v_; }

  constexpr Quantity operator-() const { return Quantity(-v_); }
  constexpr Quantity& operator+=(Quantity o) {
    v_ += o.v_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    v_ -= o.v_;
    return *this;
  }
  constexpr Quantity& operator*=(double k) {
    v_ *= k;
    return *this;
  }
  constexpr Quantity& operator/=(double k) {
    v_ /= k;
    return *this;
  }
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.v_ + b.v_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.v_ - b.v_); }
  friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.v_ * k); }
  friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.v_ * k); }
  friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.v_ / k); }
  friend constexpr double operator/(Quantity a, Quantity b) { return a.v_ / b.v_; }
  friend constexpr bool operator==(Quantity a, Quantity b) = default;
  friend constexpr auto operator<=>(Quantity a, Quantity b) = default;

 private:
  double v_ = 0.0;
};

using Seconds = Quantity<Dim<1, 0, 0, 0>>;
using Bytes = Quantity<Dim<0, 1, 0, 0>>;
using Flops = Quantity<Dim<0, 0, 1, 0>>;
using Joules = Quantity<Dim<0, 0, 0, 1>>;
using BytesPerSecond = Quantity<Dim<-1, 1, 0, 0>>;
using FlopsPerSecond = Quantity<Dim<-1, 0, 1, 0>>;
using Watts = Quantity<Dim<-1, 0, 0, 1>>;

// Cross-dimension operators, only those physics allows and the models use.
constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.value() / r.value()); }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.value() / r.value()); }
constexpr BytesPerSecond operator/(Bytes b, Seconds t) { return BytesPerSecond(b.value() / t.value()); }
constexpr FlopsPerSecond operator/(Flops f, Seconds t) { return FlopsPerSecond(f.value() / t.value()); }
constexpr Bytes operator*(BytesPerSecond r, Seconds t) { return Bytes(r.value() * t.value()); }
constexpr Bytes operator*(Seconds t, BytesPerSecond r) { return Bytes(r.value() * t.value()); }
constexpr Flops operator*(FlopsPerSecond r, Seconds t) { return Flops(r.value() * t.value()); }
constexpr Joules operator*(Watts w, Seconds t) { return Joules(w.value() * t.value()); }
constexpr Joules operator*(Seconds t, Watts w) { return Joules(w.value() * t.value()); }
constexpr Watts operator/(Joules e, Seconds t) { return Watts(e.value() / t.value()); }
// Arithmetic intensity, FLOPs per byte.
constexpr double operator/(Flops f, Bytes b) { return f.value() / b.value(); }

// A point on the simulated clock. Durations are Seconds; SimTime + SimTime does not compile
// (std::chrono's split). Holds double seconds; the representation is private so it can become
// integer picoseconds later without touching callers.
class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime zero() { return SimTime(); }
  static constexpr SimTime at(Seconds since_start) { return SimTime(since_start.value()); }
  [[nodiscard]] constexpr Seconds since_start() const { return Seconds(t_); }

  friend constexpr SimTime operator+(SimTime a, Seconds d) { return SimTime(a.t_ + d.value()); }
  friend constexpr SimTime operator-(SimTime a, Seconds d) { return SimTime(a.t_ - d.value()); }
  friend constexpr Seconds operator-(SimTime a, SimTime b) { return Seconds(a.t_ - b.t_); }
  constexpr SimTime& operator+=(Seconds d) {
    t_ += d.value();
    return *this;
  }
  friend constexpr bool operator==(SimTime a, SimTime b) = default;
  friend constexpr auto operator<=>(SimTime a, SimTime b) = default;

 private:
  explicit constexpr SimTime(double t) : t_(t) {}
  double t_ = 0.0;
};

constexpr Seconds max(Seconds a, Seconds b) { return a < b ? b : a; }
constexpr Seconds min(Seconds a, Seconds b) { return a < b ? a : b; }

// Named rate helpers; rates otherwise come from division (900_GB / 1_s).
constexpr FlopsPerSecond tflop_per_s(double t) { return FlopsPerSecond(t * 1e12); }
constexpr BytesPerSecond gb_per_s(double g) { return BytesPerSecond(g * 1e9); }

namespace literals {
// NOLINTBEGIN(google-runtime-int): user-defined literals take unsigned long long.
constexpr Seconds operator""_s(long double v) { return Seconds(static_cast<double>(v)); }
constexpr Seconds operator""_s(unsigned long long v) { return Seconds(static_cast<double>(v)); }
constexpr Seconds operator""_ms(long double v) { return Seconds(static_cast<double>(v) * 1e-3); }
constexpr Seconds operator""_ms(unsigned long long v) { return Seconds(static_cast<double>(v) * 1e-3); }
constexpr Seconds operator""_us(long double v) { return Seconds(static_cast<double>(v) * 1e-6); }
constexpr Seconds operator""_us(unsigned long long v) { return Seconds(static_cast<double>(v) * 1e-6); }
constexpr Seconds operator""_ns(long double v) { return Seconds(static_cast<double>(v) * 1e-9); }
constexpr Seconds operator""_ns(unsigned long long v) { return Seconds(static_cast<double>(v) * 1e-9); }
constexpr Bytes operator""_B(unsigned long long v) { return Bytes(static_cast<double>(v)); }
constexpr Bytes operator""_KB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e3); }
constexpr Bytes operator""_MB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e6); }
constexpr Bytes operator""_GB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e9); }
constexpr Bytes operator""_GB(long double v) { return Bytes(static_cast<double>(v) * 1e9); }
constexpr Bytes operator""_TB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1e12); }
constexpr Bytes operator""_TB(long double v) { return Bytes(static_cast<double>(v) * 1e12); }
constexpr Bytes operator""_KiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1024.0); }
constexpr Bytes operator""_MiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1048576.0); }
constexpr Bytes operator""_GiB(unsigned long long v) { return Bytes(static_cast<double>(v) * 1073741824.0); }
constexpr Flops operator""_GFLOP(unsigned long long v) { return Flops(static_cast<double>(v) * 1e9); }
constexpr Flops operator""_TFLOP(unsigned long long v) { return Flops(static_cast<double>(v) * 1e12); }
constexpr Flops operator""_TFLOP(long double v) { return Flops(static_cast<double>(v) * 1e12); }
constexpr Flops operator""_PFLOP(unsigned long long v) { return Flops(static_cast<double>(v) * 1e15); }
constexpr Watts operator""_W(unsigned long long v) { return Watts(static_cast<double>(v)); }
constexpr Watts operator""_W(long double v) { return Watts(static_cast<double>(v)); }
// NOLINTEND(google-runtime-int)
}  // namespace literals

// Auto-scaled console text: "1.23 ms", "80.0 GiB" (binary prefixes for bytes), "989 TFLOP/s",
// "3.35 TB/s" (decimal for rates, as spec sheets write them), "612 W", "4.1 kJ".
std::string to_string(Seconds t);
std::string to_string(Bytes b);
std::string to_string(Flops f);
std::string to_string(BytesPerSecond r);
std::string to_string(FlopsPerSecond r);
std::string to_string(Watts w);
std::string to_string(Joules e);

// A draw as read, for errors about a bound: the shortest decimal text that reads back as the
// same double, without an exponent ("5001 W", where to_string's three digits give "5.00 kW").
std::string exact_to_string(Watts w);
// Two draws an error sets against each other: to_string's, or in watts with the fewest decimals
// that tell them apart where those read alike ("700.4 W above the TDP 700 W", where to_string
// gave "700 W above the TDP 700 W").
std::pair<std::string, std::string> to_strings_apart(Watts a, Watts b);

// `v` with `decimals` digits after the point ("%.*f"), never "-0.0": a value that rounds to zero
// prints without a sign, whichever side of zero it came from.
std::string fixed_text(double v, int decimals);
// fixed_text with its sign always written: "+1.5", "-0.3", and "+0.0" for a value that rounds to
// zero from either side (a table of signed errors).
std::string signed_fixed_text(double v, int decimals);

// `v` as fixed_text with at least `decimals` digits after the point, and more where a value
// below 1 needs them to show `digits` significant digits ("0.00021" for 2.1e-4 at 3 decimals and
// 2 digits, where fixed_text prints "0.000"); at most 12 after the point. A value whose digits
// lie past those 12, or of 10^15 or more, prints as `digits` significant digits and a power of
// ten ("1.0e-25"). Zero prints with `decimals`.
std::string fixed_significant(double v, int decimals, int digits);

// `n` and the noun, plural but for 1: "1 node", "4 nodes".
std::string counted(std::int64_t n, std::string_view noun);

}  // namespace trainsim
