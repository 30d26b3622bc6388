// Memory of a streamed sweep: 10^7 scenarios written row by row (sweep::write_sweep, as
// `trainsim sweep` does) must run in memory independent of the row count. The scenarios are
// cheap on purpose: tp 3 divides neither llama2-7b's 32 heads nor the GPU counts the axes give
// most of the time, so nearly every plan is rejected by parallel::validate and still gets a
// row; what is measured is the pipeline (resolve, validate, format, reorder, write), not the
// simulator. Counters: rows, rows_per_s, and peak RSS (getrusage ru_maxrss, KiB on Linux) after
// 10^5 rows, after 10^6 rows and at the end; flat figures mean bounded memory. Run it alone
// (--benchmark_filter=sweep_stream) so that earlier benchmarks do not set the peak.
#include <chrono>
#include <cstdint>
#include <string_view>

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "sim/sweep/sweep_run.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace {

using namespace trainsim;

// 100 sequence lengths x 100 micro-batches x 1,000 GPU counts = 10^7 scenarios.
const char* const kSweep10M = R"({
  "base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 8},
           "training": {"seq_len": 1024, "global_batch": 1024, "micro_batch": 1},
           "parallel": {"tp": 3, "sharding": "shard_grad_op"}},
  "axes": {"training.seq_len": {"from": 1, "to": 100, "step": 1},
           "training.micro_batch": {"from": 1, "to": 100, "step": 1},
           "cluster.gpus": {"from": 1, "to": 1000, "step": 1}}})";

double peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss);
}

void sweep_stream_10m(benchmark::State& state) {
  const sweep::SweepSpec spec = sweep::parse_sweep_spec(kSweep10M, "bench", "");
  std::int64_t rows = 0;
  std::uint64_t bytes = 0;
  double rss_1e5 = 0;
  double rss_1e6 = 0;
  double seconds = 0;
  for (auto _ : state) {
    rows = 0;
    bytes = 0;
    const auto start = std::chrono::steady_clock::now();
    sweep::write_sweep(spec,
                       sweep::SweepRunOptions{.shard = {},
                                              .jobs = 2,
                                              .format = io::SweepFormat::Csv,
                                              .progress = {},
                                              .end_record = sweep::EndRecord::None},
                       [&](std::string_view text) {
                         // One call per row after the header: count, and sample the peak RSS.
                         bytes += text.size();
                         ++rows;
                         if (rows == 100'001) rss_1e5 = peak_rss_kib();
                         if (rows == 1'000'001) rss_1e6 = peak_rss_kib();
                       });
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  state.counters["rows"] = static_cast<double>(rows - 1);
  state.counters["rows_per_s"] = static_cast<double>(rows - 1) / seconds;
  state.counters["csv_bytes"] = static_cast<double>(bytes);
  state.counters["peak_rss_kib_1e5_rows"] = rss_1e5;
  state.counters["peak_rss_kib_1e6_rows"] = rss_1e6;
  state.counters["peak_rss_kib_end"] = peak_rss_kib();
}
BENCHMARK(sweep_stream_10m)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace
