// Runs a sweep spec: resolves each scenario (hardware profiles and models loaded once per
// distinct reference), evaluates the ones the shard selects on a thread pool and formats one
// output line per scenario, in index order whatever the number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/sweep/evaluate.hpp"
#include "trainsim/sweep/shard.hpp"

#include "sim/io/scenario_loader.hpp"
#include "sim/io/sweep_writer.hpp"
#include "sim/sweep/scenario_resolver.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace trainsim::sweep {

// Whether a run ends its output with a shard end record (io::ShardTrailer).
enum class EndRecord {
  None,   // an unsharded run: exactly the rows (and the CSV header)
  Shard,  // a run given --shard: the rows, then one line naming the sweep, shard and row count
};

struct SweepRunOptions {
  Shard shard;
  int jobs = 1;
  io::SweepFormat format = io::SweepFormat::Csv;
  Progress progress;
  EndRecord end_record = EndRecord::None;
  // Full simulates every micro-batch (--full-simulation); report/simulate.hpp.
  report::SimulationMode mode = report::SimulationMode::Extrapolate;
};

// Where a sweep varies the sharding mode alone: a plain axis of parallel.sharding with two or
// more values. Points that differ only in its coordinate have documents that differ only in the
// sharding, so a plan whose mode is inert (report::sharding_is_inert) is simulated once for all
// of them, under the index of the point with the axis at its first value (SimulationMemo).
struct ShardingAxis {
  std::int64_t size = 0;    // values of the axis; 0 when the sweep has no such axis
  std::int64_t stride = 1;  // points between two values of the axis (later groups vary faster)

  explicit ShardingAxis(const SweepSpec& spec);
  // The point that stands for `index` in every sharding mode. Requires size > 0.
  [[nodiscard]] std::int64_t first_of(std::int64_t index) const;
  // How many consecutive rows a thread of the sweep takes at once (parallel_ordered's grain):
  // every sharding mode of a plan, so that a plan whose mode is inert is simulated by the
  // thread that then takes it from the memo, not waited for by another. In the fixed-batch sweep
  // of bench/simulate_bench.cpp (sharding the fastest axis, 5 modes) one row at a time left
  // threads waiting 0.88 s in all on twins in flight. 1 where that does not apply (no such axis,
  // a shard, or blocks above kMaxGrain rows).
  [[nodiscard]] std::int64_t grain(const Shard& shard) const;
  static constexpr std::int64_t kMaxGrain = 64;
};

// Results computed ahead of the next row to write, per thread: enough that a slow scenario
// rarely stalls the others, few enough that memory stays a few MiB per thread whatever the
// number of rows (a row is under 1 KiB in CSV, a few KiB in JSON lines). At 64, threads of the
// fixed-batch sweep (bench/simulate_bench.cpp) waited 0.78 s in all for room behind a slow plan.
inline constexpr std::int64_t kRowsAheadPerJob = 512;

// Receives the output in pieces, in order (a CSV header, rows, the end record).
using Sink = std::function<void(std::string_view)>;

// Writes the output of the scenarios of `spec` that `options.shard` selects to `sink`: the CSV
// header (for CSV), one line per scenario in index order, each passed on as soon as the rows
// before it are (memory bounded by jobs x kRowsAheadPerJob rows, not by the sweep), then the end
// record when options.end_record asks for it. Throws ConfigError for a scenario the loader
// rejects (the one of smallest index, after the rows before it); the end record is then not
// written, so the output reads as incomplete. Exceptions from `sink` propagate.
void write_sweep(const SweepSpec& spec, const SweepRunOptions& options, const Sink& sink);

// write_sweep's output as one string (tests, small sweeps).
[[nodiscard]] std::string run_sweep(const SweepSpec& spec, const SweepRunOptions& options);

// An identity check for shards, not a security measure: FNV-1a 64-bit over a canonical dump of
// the expanded spec (the base document and every axis group's keys and values, in sweep order;
// object keys sorted) and of SweepSpec::reference_files. Two specs with the same digest expand
// into the same scenarios (barring a collision): a hardware, model or stack file is compared by
// name and content as the spec's reading found it; a built-in id by name (its content is the
// binary's).
[[nodiscard]] std::uint64_t spec_digest(const SweepSpec& spec);
// The digest a shard's end record carries: spec_digest, and for SimulationMode::Full a digest
// of it and the mode, so that shards run with and without --full-simulation never merge.
[[nodiscard]] std::uint64_t run_digest(const SweepSpec& spec, report::SimulationMode mode);

// A line "file <digest>" per reference that is a regular file (not a pipe or /dev/stdin, which
// cannot be read twice) and no built-in id, the fnv1a64 digest of its content, sorted, so that
// the text does not depend on the folder the paths were resolved from; "" when there is none.
// Throws ConfigError where a file cannot be read.
[[nodiscard]] std::string reference_file_digests(const std::vector<std::string>& references);

// FNV-1a, 64-bit (Fowler, Noll and Vo; the reference offset basis and prime) of `text`: a fast,
// well-spread identity digest, not a cryptographic one.
[[nodiscard]] std::uint64_t fnv1a64(std::string_view text);

}  // namespace trainsim::sweep
