// Parsing of spec-sheet unit strings ("3.35 TB/s", "400 Gb/s", "80 GiB", "989 TFLOP/s", "700 W",
// "5 us") into SI values. One prefix table for the whole project, as in SimGrid's
// xbt_parse_units.cpp: decimal (k, M, G, T, P) and binary (Ki, Mi, Gi, Ti) prefixes, bits (b)
// and bytes (B) kept apart.
#pragma once

#include <string>
#include <string_view>

#include "trainsim/units.hpp"

namespace trainsim::io {

enum class UnitKind {
  Time,      // s, ms, us (or µs, either mu), ns, min, h
  Data,      // B, kB, MB, GB, TB, PB, KiB, MiB, GiB, TiB; bits: b, kb, Mb, Gb, Tb
  DataRate,  // a data unit per second: "450 GB/s", "400 Gb/s" (= 50e9 B/s)
  Work,      // FLOP, GFLOP, TFLOP, PFLOP (a count)
  WorkRate,  // FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s
  Power,     // W, kW, MW
  Energy,    // J, kJ, MJ, Wh, kWh
  Price,     // USD/h: US dollars per hour (returned in USD/h, not SI)
};

// An example of a well-formed string of this kind, for error messages: "\"450 GB/s\"".
std::string unit_example(UnitKind kind);
// A name for the kind, for error messages: "a bandwidth".
std::string unit_noun(UnitKind kind);

// Bounds on the magnitude of a parsed value in SI units (USD/h for Price): zero, or between
// 1e-30 and 1e30. Spec sheets and measurements span about 1e-12 (a picosecond) to 1e21 (a
// zettabyte); within the bounds no product or quotient of two values overflows a double.
inline constexpr double kMinUnitMagnitude = 1e-30;
inline constexpr double kMaxUnitMagnitude = 1e30;

// Parses `text` as a number followed by a unit of `kind`; returns the SI value (USD/h for
// Price). Throws ConfigError (problem text only; the caller adds file and pointer) for a missing
// number or unit, an unknown unit, a unit of another kind, a non-finite number, or a value
// whose magnitude after scaling is not 0 and lies outside [kMinUnitMagnitude,
// kMaxUnitMagnitude] ("1e300 TB/s", "1e-320 GB/s").
double parse_unit(std::string_view text, UnitKind kind);

inline Seconds parse_seconds(std::string_view t) { return Seconds(parse_unit(t, UnitKind::Time)); }
inline Bytes parse_bytes(std::string_view t) { return Bytes(parse_unit(t, UnitKind::Data)); }
// A size as the command line's size flags take it: a bare count of bytes ("8", "1048576") or a
// size with a unit ("1MiB"). Throws ConfigError with parse_unit's problem for anything else.
double parse_byte_count_or_size(std::string_view text);

// Refuses a size flag's value past 9e18 bytes, where a byte count leaves int64 (and no message
// is that large): "<flag>: out of range; expected at most 9e18 bytes, got '<text>'".
void require_int64_bytes(const std::string& flag, const std::string& text, double bytes);
inline BytesPerSecond parse_bandwidth(std::string_view t) {
  return BytesPerSecond(parse_unit(t, UnitKind::DataRate));
}
inline Flops parse_flops(std::string_view t) { return Flops(parse_unit(t, UnitKind::Work)); }
inline FlopsPerSecond parse_flop_rate(std::string_view t) {
  return FlopsPerSecond(parse_unit(t, UnitKind::WorkRate));
}
inline Watts parse_watts(std::string_view t) { return Watts(parse_unit(t, UnitKind::Power)); }
inline Joules parse_joules(std::string_view t) { return Joules(parse_unit(t, UnitKind::Energy)); }

}  // namespace trainsim::io
