#include "sim/io/nccl_tests_reader.hpp"

#include <cstdint>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

#include "sim/io/calibration_inputs.hpp"

using namespace trainsim;
using namespace trainsim::io;
using collective::Op;

namespace {

std::string fixture(const std::string& name) {
  return std::string(TRAINSIM_SOURCE_DIR) + "/calibration/nccl_tests/" + name;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

// A 4-rank all_reduce log written by hand (2 nodes x 2 GPUs). Lines:
//   1 # nThread ...  2 #  3 # Using devices  4-7 rank lines  8 #  9 column header
//   10-12 rows  13 # Out of bounds values  14 # Avg bus bandwidth
// Rows (src/all_reduce.cu): algbw = size / time, busbw = algbw x 2(n-1)/n = x 1.5 on n = 4.
//   1048576 B / 100.0 us = 10.48576 GB/s -> 10.49; x 1.5 = 15.72864 -> 15.73
//   2097152 B / 150.0 us = 13.98101 GB/s -> 13.98; x 1.5 = 20.97152 -> 20.97
//   4194304 B / 250.0 us = 16.77722 GB/s -> 16.78; x 1.5 = 25.16582 -> 25.17
// Avg bus bandwidth = mean of the six busbw = (15.72864 + 20.97152 + 25.16582) / 3 = 20.622.
// count = size / 4 (float).
std::vector<std::string> all_reduce_lines() {
  return {
      "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 0",
      "#",
      "# Using devices",
      "#  Rank  0 Group  0 Pid   1001 on      nodeA device  0 [0000:18:00] NVIDIA H100 80GB HBM3",
      "#  Rank  1 Group  0 Pid   1002 on      nodeA device  1 [0000:2a:00] NVIDIA H100 80GB HBM3",
      "#  Rank  2 Group  0 Pid   2001 on      nodeB device  0 [0000:18:00] NVIDIA H100 80GB HBM3",
      "#  Rank  3 Group  0 Pid   2002 on      nodeB device  1 [0000:2a:00] NVIDIA H100 80GB HBM3",
      "#",
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong",
      "     1048576        262144     float     sum      -1    100.0   10.49   15.73      0    "
      "100.0   10.49   15.73      0",
      "     2097152        524288     float     sum      -1    150.0   13.98   20.97      0    "
      "150.0   13.98   20.97      0",
      "     4194304       1048576     float     sum      -1    250.0   16.78   25.17      0    "
      "250.0   16.78   25.17      0",
      "# Out of bounds values : 0 OK",
      "# Avg bus bandwidth    : 20.622",
  };
}

// The log of one hand-written row on the four ranks of all_reduce_lines() (no footer).
std::string one_row_log(const std::string& row, const std::string& test_line = "") {
  auto lines = all_reduce_lines();
  lines.resize(9);
  if (!test_line.empty()) lines.insert(lines.begin(), test_line);
  lines.push_back(row);
  return join_lines(lines);
}

// Parses `text` and swallows the one exception the reader may throw: anything else fails.
void parse_or_config_error(const std::string& text) {
  try {
    (void)parse_nccl_tests(text, "fuzz.txt");
  } catch (const ConfigError&) {
  }
}

void require_same_rows(const calibrate::NcclTestsLog& a, const calibrate::NcclTestsLog& b) {
  REQUIRE(a.rows.size() == b.rows.size());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    const auto& x = a.rows[i];
    const auto& y = b.rows[i];
    REQUIRE(x.line == y.line);
    REQUIRE(x.size == y.size);
    REQUIRE(x.count == y.count);
    REQUIRE(x.type == y.type);
    REQUIRE(x.redop == y.redop);
    REQUIRE(x.root == y.root);
    REQUIRE(x.time_out_of_place == y.time_out_of_place);
    REQUIRE(x.algbw_out_of_place == y.algbw_out_of_place);
    REQUIRE(x.busbw_out_of_place == y.busbw_out_of_place);
    REQUIRE(x.time_in_place == y.time_in_place);
    REQUIRE(x.algbw_in_place == y.algbw_in_place);
    REQUIRE(x.busbw_in_place == y.busbw_in_place);
    REQUIRE(x.wrong_out_of_place == y.wrong_out_of_place);
    REQUIRE(x.wrong_in_place == y.wrong_in_place);
  }
}

}  // namespace

TEST_CASE("nccl_tests_reader: every fixture log parses with the facts its text shows", "[io]") {
  struct Expected {
    const char* file;
    Op op;
    std::optional<std::int64_t> ranks;
    std::optional<std::int64_t> nodes;
    std::optional<std::string> nccl_version;
    std::size_t rows;
    double first_size;
    double first_busbw_gb;  // out-of-place busbw of the first row, as printed
    double last_size;
    double last_busbw_gb;
    bool has_footer;
  };
  // Rows: sizes double from minBytes to maxBytes of the "# nThread" line, so a sweep of
  // 2^a .. 2^b B has b - a + 1 rows. Ranks count the "#  Rank" lines; nodes their host names.
  const auto e = GENERATE(values<Expected>({
      // 1 row (-b 10G -e 10G); 8 ranks on inst-lscuv-ao-ub24; no "NCCL version" line.
      {"a100-1node-all_reduce.txt", Op::AllReduce, 8, 1, std::nullopt, 1, 10737418240.0, 232.20,
       10737418240.0, 232.20, true},
      // 1 row; 16 ranks on inst-li3ob-ao-ub24 and inst-wyzi7-ao-ub24.
      {"a100-roce-2node-all_reduce.txt", Op::AllReduce, 16, 2, std::nullopt, 1, 10737418240.0,
       191.76, 10737418240.0, 191.76, true},
      // 1 KiB .. 8 GiB = 2^10 .. 2^33: 24 rows; no test-name line, so the op is inferred from
      // busbw/algbw = 15/16 = (n-1)/n with redop none; NCCL 2.26.6+cuda12.8.
      {"b200-roce-2node-all_gather.txt", Op::AllGather, 16, 2, std::string("2.26.6"), 24, 1024.0,
       0.00, 8589934592.0, 260.03, true},
      // 1 GiB .. 16 GiB = 2^30 .. 2^34: 5 rows, then the abort (no footer). The poster kept
      // ranks 0-99 of 1024: 100 rank lines on HCA-32 and HCA-1 .. HCA-12, 13 hosts.
      {"h100-128node-all_reduce-ring-ll128.txt", Op::AllReduce, 100, 13, std::nullopt, 5,
       1073741824.0, 110.84, 17179869184.0, 367.29, false},
      // 128 MiB .. 4 GiB = 2^27 .. 2^32: 6 rows; one process, 8 GPUs, on node005.
      {"h100-1node-all_reduce-nvls.txt", Op::AllReduce, 8, 1, std::nullopt, 6, 134217728.0, 382.99,
       4294967296.0, 473.60, true},
      // 8 B .. 16 GiB = 2^3 .. 2^34: 32 rows; lccn09 and lccn19; NCCL 2.26.2+cuda12.8.
      {"h100-ndr-2node-all_reduce-lowbw.txt", Op::AllReduce, 16, 2, std::string("2.26.2"), 32, 8.0,
       0.00, 17179869184.0, 89.24, true},
      // 1 MiB .. 8 GiB = 2^20 .. 2^33: 14 rows.
      {"h100-ndr-2node-all_reduce-ring.txt", Op::AllReduce, 16, 2, std::nullopt, 14, 1048576.0,
       12.53, 8589934592.0, 392.69, true},
      // 8 MiB .. 8 GiB = 2^23 .. 2^33: 11 rows, every line behind the srun " 0: " prefix.
      {"h100-ndr-2node-all_reduce-srun-lowbw.txt", Op::AllReduce, 16, 2, std::nullopt, 11,
       8388608.0, 73.04, 8589934592.0, 155.57, true},
      // 8 B .. 16 GiB: 32 rows; Open MPI help messages among the rank lines; NCCL 2.26.2.
      {"h100-ndr-2node-all_reduce.txt", Op::AllReduce, 16, 2, std::string("2.26.2"), 32, 8.0, 0.00,
       17179869184.0, 469.21, true},
      // 1 MiB .. 8 GiB: 14 rows; 32 ranks on 4 hosts.
      {"h100-ndr-4node-all_reduce.txt", Op::AllReduce, 32, 4, std::nullopt, 14, 1048576.0, 6.41,
       8589934592.0, 324.52, true},
      // 8 B .. 16 GiB: 32 rows; pt01, spt01, spt02, pt02; NCCL 2.26.2.
      {"h100-ndr-4node-vm-all_reduce.txt", Op::AllReduce, 32, 4, std::string("2.26.2"), 32, 8.0,
       0.00, 17179869184.0, 365.84, true},
      // 1 MiB .. 8 GiB: 14 rows; 64 ranks on 8 hosts.
      {"h100-ndr-8node-all_reduce-min_ctas24-qps2.txt", Op::AllReduce, 64, 8, std::nullopt, 14,
       1048576.0, 16.26, 8589934592.0, 391.37, true},
      {"h100-ndr-8node-all_reduce.txt", Op::AllReduce, 64, 8, std::nullopt, 14, 1048576.0, 17.64,
       8589934592.0, 320.70, true},
      // 1 GiB .. 16 GiB: 5 rows.
      {"h100-roce-2node-all_reduce.txt", Op::AllReduce, 16, 2, std::nullopt, 5, 1073741824.0,
       446.28, 17179869184.0, 464.57, true},
      // Header line, 3 rows (1, 3 and 9 GiB: -f 3) and the avg line only: no rank lines, so
      // ranks and nodes are unknown; all_reduce from busbw/algbw = 1.875 > 1 with redop sum.
      {"h200-ib-2node-all_reduce-partial.txt", Op::AllReduce, std::nullopt, std::nullopt,
       std::nullopt, 3, 1073741824.0, 301.85, 9663676416.0, 320.36, true},
  }));
  CAPTURE(e.file);
  const auto log = read_nccl_tests_file(fixture(e.file));
  REQUIRE(log.source == fixture(e.file));
  REQUIRE(log.op == e.op);
  REQUIRE(log.ranks == e.ranks);
  REQUIRE(log.nodes == e.nodes);
  REQUIRE(log.devices.size() == static_cast<std::size_t>(e.ranks.value_or(0)));
  REQUIRE(log.nccl_version == e.nccl_version);
  REQUIRE(log.rows.size() == e.rows);
  REQUIRE(log.rows.front().size.value() == e.first_size);
  REQUIRE(log.rows.front().busbw_out_of_place.value() == Approx(e.first_busbw_gb * 1e9));
  REQUIRE(log.rows.back().size.value() == e.last_size);
  REQUIRE(log.rows.back().busbw_out_of_place.value() == Approx(e.last_busbw_gb * 1e9));
  REQUIRE(log.has_footer == e.has_footer);
}

TEST_CASE("nccl_tests_reader: one row is read cell by cell, in SI units", "[io]") {
  const auto log = read_nccl_tests_file(fixture("h100-ndr-2node-all_reduce.txt"));
  // Line 61 - 3 (footer) = 58: "17179869184  4294967296  float  sum  -1  68652  250.24  469.21
  // 0  68668  250.19  469.10  0".
  const auto& r = log.rows.back();
  REQUIRE(r.line == 58);
  REQUIRE(r.count == 4294967296);  // size / 4 B (float)
  REQUIRE(r.type == "float");
  REQUIRE(r.redop == "sum");
  REQUIRE(r.root == -1);
  REQUIRE(r.time_out_of_place.value() == Approx(68652e-6).epsilon(1e-12));   // us -> s
  REQUIRE(r.algbw_out_of_place.value() == Approx(250.24e9).epsilon(1e-12));  // GB/s = 1e9 B/s
  REQUIRE(r.busbw_in_place.value() == Approx(469.10e9).epsilon(1e-12));
  REQUIRE(r.wrong_out_of_place == std::optional<std::int64_t>(0));
  REQUIRE(r.wrong_in_place == std::optional<std::int64_t>(0));
  // "# nThread ... warmup iters: 5 iters: 20 agg iters: 1 validation: 1".
  REQUIRE(log.warmup_iters == std::optional<std::int64_t>(5));
  REQUIRE(log.iters == std::optional<std::int64_t>(20));
  REQUIRE(log.validation == std::optional<bool>(true));
  // Rank 0 is "NVIDIA H100 80GB HBM3" on bm-h100-01.
  REQUIRE(log.devices.front() == "NVIDIA H100 80GB HBM3");
}

TEST_CASE("nccl_tests_reader: validation 0 prints N/A in #wrong, read as unknown", "[io]") {
  // "# nThread ... iters: 200 agg iters: 1 validation: 0": every #wrong is N/A.
  const auto log = read_nccl_tests_file(fixture("h100-ndr-2node-all_reduce-srun-lowbw.txt"));
  REQUIRE(log.validation == std::optional<bool>(false));
  REQUIRE(log.iters == std::optional<std::int64_t>(200));
  for (const auto& r : log.rows) {
    REQUIRE_FALSE(r.wrong_out_of_place.has_value());
    REQUIRE_FALSE(r.wrong_in_place.has_value());
  }
}

TEST_CASE("nccl_tests_reader: launcher prefixes are stripped to the same rows", "[io]") {
  const std::string prefixed = read_text(fixture("h100-ndr-2node-all_reduce-srun-lowbw.txt"));
  // Strip srun's " 0:" and the one space after it: the text nccl-tests itself printed.
  std::vector<std::string> plain_lines;
  for (auto line : split_lines(prefixed)) {
    REQUIRE(line.rfind(" 0:", 0) == 0);
    line.erase(0, 3);
    if (!line.empty() && line.front() == ' ') line.erase(0, 1);
    plain_lines.push_back(line);
  }
  const std::string plain = join_lines(plain_lines);
  const auto reference = parse_nccl_tests(plain, "plain.txt");
  REQUIRE(reference.rows.size() == 11);

  SECTION("srun -l") {
    const auto log = parse_nccl_tests(prefixed, "srun.txt");
    require_same_rows(log, reference);
    REQUIRE(log.ranks == reference.ranks);
  }
  SECTION("Open MPI --tag-output") {
    std::string tagged;
    for (const auto& line : plain_lines) tagged += "[1,0]<stdout>:" + line + "\n";
    const auto log = parse_nccl_tests(tagged, "tagged.txt");
    require_same_rows(log, reference);
    REQUIRE(log.ranks == std::optional<std::int64_t>(16));
  }
  SECTION("[0] tags, also spliced inside a row (nccl#1453)") {
    std::string tagged;
    for (auto line : plain_lines) {
      // "     sum      -1    215.3" -> "     sum      -1[0]    215.3"
      const auto at = line.find("      -1    ");
      if (at != std::string::npos) line.replace(at, 8, "      -1[0]");
      tagged += "[0] " + line + "\n";
    }
    const auto log = parse_nccl_tests(tagged, "tagged.txt");
    require_same_rows(log, reference);
  }
}

TEST_CASE("nccl_tests_reader: the op comes from the table when no test line names it", "[io]") {
  // One 1 MiB float row on 4 ranks, 100.0 us: algbw = 10.48576 -> 10.49 GB/s. busbw = algbw x
  // 2(n-1)/n = 1.5 (all_reduce) -> 15.73; x (n-1)/n = 0.75 -> 7.86; x 1 -> 10.49. count is
  // size/4 = 262144, or size/4/4 = 65536 per rank for all_gather, reduce_scatter and alltoall.
  // redop is none for all_gather, broadcast and alltoall; root is 0 for broadcast and reduce.
  struct Case {
    const char* row;
    Op inferred;
    const char* test_line;
    Op named;
  };
  const auto c = GENERATE(values<Case>({
      {"1048576  262144  float  sum   -1  100.0  10.49  15.73  0  100.0  10.49  15.73  0",
       Op::AllReduce, "# Collective test starting: all_reduce_perf", Op::AllReduce},
      {"1048576   65536  float  none  -1  100.0  10.49   7.86  0  100.0  10.49   7.86  0",
       Op::AllGather, "# Collective test starting: all_gather_perf", Op::AllGather},
      {"1048576   65536  float  sum   -1  100.0  10.49   7.86  0  100.0  10.49   7.86  0",
       Op::ReduceScatter, "# Collective test starting: reduce_scatter_perf", Op::ReduceScatter},
      {"1048576  262144  float  none   0  100.0  10.49  10.49  0  100.0  10.49  10.49  0",
       Op::Broadcast, "# Collective test starting: broadcast_perf", Op::Broadcast},
      {"1048576  262144  float  sum    0  100.0  10.49  10.49  0  100.0  10.49  10.49  0",
       Op::Reduce, "# Collective test starting: reduce_perf", Op::Reduce},
      {"1048576  262144  float  sum   -1  100.0  10.49  10.49  0  100.0  10.49  10.49  0",
       Op::SendRecv, "# Collective test starting: sendrecv_perf", Op::SendRecv},
      // alltoall prints what all_gather prints; only the test line tells them apart.
      {"1048576   65536  float  none  -1  100.0  10.49   7.86  0  100.0  10.49   7.86  0",
       Op::AllGather, "# Collective test starting: alltoall_perf", Op::AllToAll},
  }));
  CAPTURE(c.row);
  REQUIRE(parse_nccl_tests(one_row_log(c.row), "t.txt").op == c.inferred);
  REQUIRE(parse_nccl_tests(one_row_log(c.row, c.test_line), "t.txt").op == c.named);
  REQUIRE(parse_nccl_tests(one_row_log(c.row), "t.txt", c.named).op == c.named);
  // Inferred where another op fits too: that one is kept with the log, for calibrate's note;
  // a test line, a claimed op or a file named for one of them leaves nothing to say.
  const auto inferred = parse_nccl_tests(one_row_log(c.row), "t.txt");
  if (c.named == Op::AllToAll) {
    CHECK(inferred.also_fits == std::vector<Op>{Op::AllToAll});
    CHECK(parse_nccl_tests(one_row_log(c.row), "run/alltoall_perf.log").op == Op::AllToAll);
    CHECK(parse_nccl_tests(one_row_log(c.row), "run/alltoall_perf.log").also_fits.empty());
    // A name that spells both decides nothing: the first, with the other kept for the note.
    const auto both = parse_nccl_tests(one_row_log(c.row), "all_gather_vs_alltoall.txt");
    CHECK(both.op == Op::AllGather);
    CHECK(both.also_fits == std::vector<Op>{Op::AllToAll});
  } else if (c.named != Op::AllGather) {
    CHECK(inferred.also_fits.empty());
  }
  CHECK(parse_nccl_tests(one_row_log(c.row, c.test_line), "t.txt").also_fits.empty());
  CHECK(parse_nccl_tests(one_row_log(c.row), "t.txt", c.named).also_fits.empty());
}

TEST_CASE("nccl_tests_reader: the pre-2.13 per-test table (no redop, no root, error column)",
          "[io]") {
  // nccl-tests <= 2.11 all_gather_perf: "size count type time algbw busbw error" twice, rank
  // lines without "Group". 1 MiB on 4 ranks: count 1048576/4/4 = 65536, algbw 10.49, busbw
  // 10.48576 x 3/4 = 7.86; avg = 7.86432.
  const std::string text =
      "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 1048576 step: 1048576(bytes) warmup iters: "
      "5 iters: 20 validation: 1\n"
      "#\n"
      "# Using devices\n"
      "#   Rank  0 Pid  12345 on      node1 device  0 [0x18] Tesla V100-SXM2-16GB\n"
      "#   Rank  1 Pid  12345 on      node1 device  1 [0x19] Tesla V100-SXM2-16GB\n"
      "#   Rank  2 Pid  12345 on      node1 device  2 [0x1a] Tesla V100-SXM2-16GB\n"
      "#   Rank  3 Pid  12345 on      node1 device  3 [0x1b] Tesla V100-SXM2-16GB\n"
      "#\n"
      "#                                             out-of-place                       in-place\n"
      "#       size         count      type     time   algbw   busbw  error     time   algbw   "
      "busbw  error\n"
      "#        (B)    (elements)                (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
      "(GB/s)\n"
      "     1048576         65536     float    100.0   10.49    7.86  0e+00    100.0   10.49    "
      "7.86  0e+00\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 7.86432\n";
  const auto log = parse_nccl_tests(text, "old.txt");
  REQUIRE(log.op == Op::AllGather);
  REQUIRE(log.ranks == std::optional<std::int64_t>(4));
  REQUIRE(log.nodes == std::optional<std::int64_t>(1));
  REQUIRE(log.devices.front() == "Tesla V100-SXM2-16GB");
  REQUIRE(log.rows.size() == 1);
  REQUIRE(log.rows[0].redop.empty());
  REQUIRE(log.rows[0].root == -1);
  // The error column is a max delta, not a count of wrong elements.
  REQUIRE_FALSE(log.rows[0].wrong_out_of_place.has_value());
}

TEST_CASE("nccl_tests_reader: the NCCL version from the nccl-tests version line", "[io]") {
  // NCCL_VERSION_CODE 22806 = 2*10000 + 28*100 + 6 (>= 2.9) -> 2.28.6.
  const auto log = parse_nccl_tests(
      one_row_log("1048576  262144  float  sum  -1  100.0  10.49  15.73  0  100.0  10.49  15.73  0",
                  "# nccl-tests version 2.19.6 nccl-headers=22806 nccl-library=22806"),
      "v.txt");
  REQUIRE(log.nccl_version == std::optional<std::string>("2.28.6"));
}

TEST_CASE("nccl_tests_reader: the hand-written log parses", "[io]") {
  const auto log = parse_nccl_tests(join_lines(all_reduce_lines()), "ar.txt");
  REQUIRE(log.op == Op::AllReduce);
  REQUIRE(log.ranks == std::optional<std::int64_t>(4));
  REQUIRE(log.nodes == std::optional<std::int64_t>(2));  // nodeA, nodeB
  REQUIRE(log.rows.size() == 3);
  REQUIRE(log.rows[1].line == 11);
  REQUIRE(log.has_footer);
}

TEST_CASE("nccl_tests_reader: bad input names the file, the line and what was expected", "[io]") {
  auto lines = all_reduce_lines();
  const auto parse = [&] { return parse_nccl_tests(join_lines(lines), "log.txt"); };

  SECTION("sizes out of order") {
    std::swap(lines[10], lines[11]);  // 4 MiB at line 11, then 2 MiB at line 12
    REQUIRE_THROWS_AS(parse(), ConfigError);
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("log.txt: line 12: sizes out of order; "
                                                 "expected a size above 4194304 (line 11), got "
                                                 "2097152"));
  }
  SECTION("a negative cell") {
    lines[10] =
        "     2097152        524288     float     sum      -1    150.0   13.98    -3.2  "
        "    0    150.0   13.98   20.97      0";
    REQUIRE_THROWS_AS(parse(), ConfigError);
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("log.txt: line 11: out-of-place busbw: expected "
                                                 "a number >= 0, got -3.2"));
  }
  SECTION("a non-numeric cell") {
    lines[9] =
        "     1048576        262144     float     sum      -1    100.0     abc   15.73    "
        "  0    100.0   10.49   15.73      0";
    REQUIRE_THROWS_AS(parse(), ConfigError);
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: out-of-place algbw: expected a number "
                                                 ">= 0, got abc"));
  }
  SECTION("N/A where a time is required") {
    lines[9] =
        "     1048576        262144     float     sum      -1    100.0   10.49   15.73    "
        "  0      N/A   10.49   15.73      0";
    REQUIRE_THROWS_AS(parse(), ConfigError);
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: in-place time: expected a number of "
                                                 "microseconds >= 0.01, got N/A"));
  }
  SECTION("a number out of double's range") {
    lines[9] =
        "     1048576        262144     float     sum      -1    1e400   10.49   15.73    "
        "  0    100.0   10.49   15.73      0";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: out-of-place time: expected a number "
                                                 "of microseconds >= 0.01, got 1e400"));
  }
  SECTION("a time below what nccl-tests prints (two decimals: 0.01 us)") {
    lines[9] =
        "     1048576        262144     float     sum      -1   1e-300   10.49   15.73    "
        "  0    100.0   10.49   15.73      0";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: out-of-place time: expected a number "
                                                 "of microseconds >= 0.01, got 1e-300"));
  }
  SECTION("an absurd bandwidth is printed in three digits, not sixty") {
    // 1 MiB in 0.01 us is 1048576 / 1e-8 / 1e9 = 104857.6 GB/s: fixed-point. 2^62 B in 0.01 us
    // is 4.61e18 / 1e-8 / 1e9 = 4.61e17 GB/s: past 1e12, so %.3g.
    lines[9] =
        "     4611686018427387904  1152921504606846976  float  sum  -1  0.01  10.49  15.73  0  "
        "100.0  10.49  15.73  0";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: out-of-place algbw: expected size/time "
                                                 "= 4611686018427387904 B / 0.01 us = 4.61e+17 "
                                                 "GB/s, got 10.49"));
  }
  SECTION("a size in scientific notation is named on its own line") {
    // Before, a row not starting with an integer was read as launcher chatter, and the log
    // failed at its footer with "no nccl-tests table rows".
    lines[9] =
        "     1e20        262144     float     sum      -1    100.0   10.49   15.73    "
        "  0    100.0   10.49   15.73      0";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: size (B): expected an integer >= 0, "
                                                 "got 1e20"));
  }
  SECTION("a size out of int64's range") {
    lines[9] =
        "     99999999999999999999        262144     float     sum      -1    100.0   "
        "10.49   15.73      0    100.0   10.49   15.73      0";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: size (B): expected an integer >= 0"));
  }
  SECTION("a row with too few columns") {
    lines[10] = "     2097152        524288     float     sum      -1    150.0   13.98   20.97";
    REQUIRE_THROWS_AS(parse(), ConfigError);
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 11: malformed table row; expected 13 "
                                                 "columns (size count type redop root time algbw "
                                                 "busbw #wrong time algbw busbw #wrong), got 8"));
  }
  SECTION("chatter that starts like a row") {
    lines.insert(lines.begin() + 10, "15 more processes have sent help message");
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 11: malformed table row"));
  }
  SECTION("algbw that is not size / time") {
    // 1048576 B / 100.0 us = 10.49 GB/s, printed 12.00.
    lines[9] =
        "     1048576        262144     float     sum      -1    100.0   12.00   18.00    "
        "  0    100.0   10.49   15.73      0";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: out-of-place algbw: expected size/time "
                                                 "= 1048576 B / 100.0 us = 10.49 GB/s, got "
                                                 "12.00"));
  }
  SECTION("busbw that is not algbw x the bus factor") {
    // 13.98 x 1.5 = 20.97 expected, 19.00 printed in-place.
    lines[10] =
        "     2097152        524288     float     sum      -1    150.0   13.98   20.97    "
        "  0    150.0   13.98   19.00      0";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 11: in-place busbw: expected algbw x "
                                                 "2(n-1)/n of all_reduce on 4 ranks = 13.98 x "
                                                 "1.5 = 20.97 GB/s, got 19.00"));
  }
  SECTION("a count that is not the op's") {
    // all_reduce: count = size / 4 = 262144; 65536 is all_gather's per-rank count.
    lines[9] =
        "     1048576         65536     float     sum      -1    100.0   10.49   15.73    "
        "  0    100.0   10.49   15.73      0";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: count: expected size/4 = 262144 "
                                                 "elements for all_reduce (float is 4 B), got "
                                                 "65536"));
  }
  SECTION("another reduction on one row") {
    // One run reduces with one operation: a max among sums is an edited or spliced table
    // (its figures are the sum row's, which fit max as well). The first row is the odd one
    // here; it is named against the first row of the sums the others give.
    lines[9] =
        "     1048576        262144     float     max      -1    100.0   10.49   15.73    "
        "  0    100.0   10.49   15.73      0";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: redop: expected sum as on line 11") &&
                                     Catch::Contains("(one run reduces with one operation), got "
                                                     "max"));
  }
  SECTION("an unknown data type") {
    lines[9] =
        "     1048576        262144     floaty    sum      -1    100.0   10.49   15.73    "
        "  0    100.0   10.49   15.73      0";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 10: type: expected one of int8"));
  }
  SECTION("an average that is not the mean of the busbw columns") {
    lines[13] = "# Avg bus bandwidth    : 30.5";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 14: Avg bus bandwidth is not the mean of "
                                                 "the busbw columns above; expected 20.62 GB/s, "
                                                 "got 30.5"));
  }
  SECTION("a rank listed twice (1-rank jobs)") {
    lines[4] = lines[3];
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 5: rank 0 is listed twice (also at line "
                                                 "4)"));
  }
  SECTION("a malformed rank line") {
    lines[4] = "#  Rank  1 Group  0 Pid";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 5: malformed rank line"));
  }
  SECTION("unsupported columns (-I per-iteration timing)") {
    lines[8] =
        "#       size         count      type   redop    root     time   algbw   busbw  "
        "#wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    "
        "i_min    i_max    i_p99    i_cv%";
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 9: unsupported table columns"));
  }
  SECTION("two different test names") {
    lines.insert(lines.begin(), "# Collective test starting: all_reduce_perf");
    lines.emplace_back("# Collective test concluded: all_gather_perf");
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 16: the log names two tests"));
  }
  SECTION("a table that does not fit the test line") {
    // busbw/algbw = 16.78 x 1.5 / 16.78 = 1.5 = 2(n-1)/n on 4 ranks, not all_gather's 0.75.
    lines.insert(lines.begin(), "# Collective test starting: all_gather_perf");
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 13: the table does not fit "
                                                 "all_gather_perf (line 1): busbw/algbw is 1.5 = "
                                                 "2(n-1)/n of all_reduce on 4 ranks"));
  }
  SECTION("a test that trainsim does not model") {
    lines.insert(lines.begin(), "# Collective test starting: hypercube_perf");
    REQUIRE_THROWS_WITH(parse(), Catch::Contains("line 1: unsupported nccl-tests binary"));
  }
}

TEST_CASE("nccl_tests_reader: input that is no nccl-tests log gets one clear error", "[io]") {
  SECTION("empty") {
    REQUIRE_THROWS_AS(parse_nccl_tests("", "empty.txt"), ConfigError);
    REQUIRE_THROWS_WITH(parse_nccl_tests("", "empty.txt"),
                        Catch::StartsWith("empty.txt: no nccl-tests table rows"));
  }
  SECTION("random text") {
    REQUIRE_THROWS_WITH(parse_nccl_tests("the quick brown fox\njumps over\n", "fox.txt"),
                        Catch::StartsWith("fox.txt: line 2: no nccl-tests table rows"));
  }
  SECTION("a JSON document") {
    const std::string json = "{\n  \"size\": 1048576,\n  \"busbw\": \"high\"\n}\n";
    REQUIRE_THROWS_WITH(parse_nccl_tests(json, "x.json"),
                        Catch::StartsWith("x.json: line 4: no nccl-tests table rows"));
    // A bare number on a line starts like a table row, so it is a malformed row.
    const std::string array = "[\n  1,\n  2\n]\n";
    REQUIRE_THROWS_WITH(parse_nccl_tests(array, "a.json"),
                        Catch::Contains("a.json: line 3: malformed table row") &&
                            Catch::Contains("is this nccl-tests output?"));
  }
  SECTION("binary data") {
    const std::string binary(
        "\x7f"
        "ELF\x02\x01\x01\x00\x00\x00",
        10);
    REQUIRE_THROWS_WITH(parse_nccl_tests(binary, "a.out"),
                        Catch::StartsWith("a.out: line 1: binary data (a NUL byte)"));
  }
  SECTION("a header and no rows") {
    auto lines = all_reduce_lines();
    lines.resize(9);
    REQUIRE_THROWS_WITH(parse_nccl_tests(join_lines(lines), "norows.txt"),
                        Catch::StartsWith("norows.txt: line 9: no nccl-tests table rows"));
  }
  SECTION("numbers without a header") {
    REQUIRE_THROWS_WITH(parse_nccl_tests("12345\n", "n.txt"),
                        Catch::Contains("n.txt: line 1: malformed table row; expected 13 "
                                        "columns") &&
                            Catch::Contains("is this nccl-tests output?"));
  }
}

TEST_CASE("calibration inputs: a log's ranks and results are checked before it is fitted",
          "[io][calibrate]") {
  const auto log = parse_nccl_tests(join_lines(all_reduce_lines()), "four.txt");
  calibrate::LogReference ref;
  ref.origin.source = "doc.json";
  ref.origin.label = "/nccl_tests/0";
  SECTION("the log's own ranks and nodes, or the document's where they agree") {
    REQUIRE(log_points(log, ref).front().group.ranks == 4);
    // Every row prints busbw = algbw x 1.5 = 2(n-1)/n on n = 4 (above): 4 ranks on 2 nodes
    // agree; 5 ranks give 1.6 against the largest row's 25.17 / 16.78 = 1.5, 6.7% off, beyond
    // the reader's 2% and the cells' rounding (0.02 x 1.6 x 16.78 + 0.01 + 0.05 x 2.6 =
    // 0.68 GB/s against |25.17 - 1.6 x 16.78| = 1.68).
    ref.ranks = 4;
    ref.nodes = 2;
    REQUIRE(log_points(log, ref).size() == 3);
    ref.ranks = 5;
    REQUIRE_THROWS_WITH(
        log_points(log, ref),
        "doc.json: /nccl_tests/0/ranks: 5 ranks, but four.txt prints busbw/algbw = 25.17 / "
        "16.78 = 1.5 (about 4 ranks) at line 12; expected the ranks of the run that wrote the "
        "log, for which all_reduce prints 2(n-1)/n = 1.6 on 5 ranks");
  }
  SECTION("a log cut short at scale takes the document's ranks and nodes") {
    // The 128-node all_reduce lists ranks 0-99 of 1024 on 13 hosts; its busbw / algbw is
    // 2 x 1023/1024 = 1.998 (calibration/nccl_tests/README.md), which 100 ranks (1.98) also
    // pass within 2%: the document's 1024 ranks on 128 nodes are taken.
    const auto cut = read_nccl_tests_file(fixture("h100-128node-all_reduce-ring-ll128.txt"));
    REQUIRE(cut.ranks == std::optional<std::int64_t>(100));
    ref.ranks = 1024;
    ref.nodes = 128;
    const auto points = log_points(cut, ref);
    REQUIRE(points.front().group.ranks == 1024);
    REQUIRE(points.front().group.nodes == 128);
  }
  SECTION("fewer ranks or nodes than the rank lines show") {
    ref.ranks = 2;
    REQUIRE_THROWS_WITH(log_points(log, ref),
                        "doc.json: /nccl_tests/0/ranks: 2 ranks, but four.txt lists 4 '#  Rank' "
                        "lines; expected at least 4");
    ref.ranks.reset();
    ref.nodes = 1;
    REQUIRE_THROWS_WITH(log_points(log, ref),
                        "doc.json: /nccl_tests/0/nodes: 1 nodes, but the rank lines of four.txt "
                        "name 2 hosts; expected at least 2");
  }
  SECTION("other nodes than a complete rank list shows, with or without the document's ranks") {
    ref.nodes = 4;
    REQUIRE_THROWS_WITH(log_points(log, ref),
                        "doc.json: /nccl_tests/0/nodes: 4 nodes, but the 4 rank lines of "
                        "four.txt name 2 hosts; expected 2, or the run's \"ranks\" if the log "
                        "lists only some");
    ref.ranks = 4;
    REQUIRE_THROWS_WITH(log_points(log, ref),
                        Catch::EndsWith("name 2 hosts; expected 2 (the lines list every one of "
                                        "the ranks given)"));
  }
  SECTION("an uneven run: the fullest node from complete rank lines, else the entry's") {
    // The 2-node all_reduce with ranks 12-15 moved to a third host: 8, 4 and 4 ranks. The
    // document's 16 ranks on 3 nodes agree with the lines; the fullest node holds 8 (an even
    // split would say ceil(16 / 3) = 6, a group of 18).
    std::ifstream in(fixture("h100-ndr-2node-all_reduce.txt"));
    std::stringstream text;
    text << in.rdbuf();
    std::string moved;
    std::string line;
    while (std::getline(text, line)) {
      for (int rank = 12; rank <= 15; ++rank) {
        if (line.rfind("#  Rank " + std::to_string(rank) + " ", 0) == 0) {
          line.replace(line.find("bm-h100-02"), 10, "bm-h100-03");
        }
      }
      moved += line + "\n";
    }
    const auto uneven = parse_nccl_tests(moved, "uneven.txt");
    REQUIRE(uneven.most_ranks_per_host == 8);
    ref.ranks = 16;
    ref.nodes = 3;
    const auto group = log_points(uneven, ref).front().group;
    REQUIRE(group.ranks == 16);
    REQUIRE(group.nodes == 3);
    REQUIRE(group.ranks_per_node == 8);
    // The 128-node log lists 100 ranks: 1,020 ranks on 128 nodes (not a multiple) need the
    // entry's ranks_per_node; an even split is not guessed.
    const auto cut = read_nccl_tests_file(fixture("h100-128node-all_reduce-ring-ll128.txt"));
    ref.ranks = 1020;
    ref.nodes = 128;
    REQUIRE_THROWS_WITH(log_points(cut, ref),
                        Catch::StartsWith("doc.json: /nccl_tests/0/ranks_per_node: missing "
                                          "required key: 1020 ranks on 128 nodes do not split "
                                          "evenly, and the rank lines of ") &&
                            Catch::EndsWith("do not list them all; expected the ranks on the "
                                            "fullest node"));
    ref.ranks_per_node = 8;
    REQUIRE(log_points(cut, ref).front().group.ranks_per_node == 8);
    // The cut-short lines show hosts of 8: fewer on the fullest node contradicts them.
    ref.ranks_per_node = 7;
    REQUIRE_THROWS_WITH(log_points(cut, ref),
                        Catch::StartsWith("doc.json: /nccl_tests/0/ranks_per_node: 7, but the "
                                          "rank lines of ") &&
                            Catch::EndsWith("list 8 ranks on one host; expected at least 8"));
    // Complete lines give the fullest host themselves; an entry that says otherwise is refused.
    ref.ranks = 16;
    ref.nodes = 3;
    ref.ranks_per_node = 6;
    REQUIRE_THROWS_WITH(log_points(uneven, ref),
                        Catch::StartsWith("doc.json: /nccl_tests/0/ranks_per_node: 6, but the "
                                          "rank lines of uneven.txt list every rank, 8 on the "
                                          "fullest host; expected 8"));
  }
  SECTION("all_gather's count gives the ranks exactly") {
    // b200-roce-2node-all_gather.txt: 16 ranks on 2 hosts; each row's count is size / 4 / 16
    // (float). 17 ranks would pass a 2% check of (n-1)/n (0.9375 against 0.9412, 0.4%).
    const auto ag = read_nccl_tests_file(fixture("b200-roce-2node-all_gather.txt"));
    REQUIRE(ag.ranks_from_count == std::optional<std::int64_t>(16));
    ref.ranks = 16;
    REQUIRE_FALSE(log_points(ag, ref).empty());
    ref.ranks = 17;
    REQUIRE_THROWS_WITH(log_points(ag, ref),
                        Catch::StartsWith("doc.json: /nccl_tests/0/ranks: 17 ranks, but ") &&
                            Catch::EndsWith("b200-roce-2node-all_gather.txt prints all_gather "
                                            "counts of 16 ranks (size / element bytes / count "
                                            "at line 48); expected 16"));
  }
  SECTION("without rank lines, all_gather's count gives the ranks, and its rows must agree") {
    // A hand-written all_gather on n = 4 without rank lines (float, count = size / 4 / 4):
    //   1048576 B / 100.0 us = 10.48576 GB/s -> 10.49; x 3/4 = 7.86432 -> 7.86
    //   2097152 B / 150.0 us = 13.98101 GB/s -> 13.98; x 3/4 = 10.48576 -> 10.49
    const std::vector<std::string> head = {
        "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 "
        "iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
        "time   algbw   busbw #wrong"};
    const std::string row1 =
        "     1048576         65536     float    none      -1    100.0   10.49    7.86      0    "
        "100.0   10.49    7.86      0";
    const std::string row2 =
        "     2097152        131072     float    none      -1    150.0   13.98   10.49      0    "
        "150.0   13.98   10.49      0";
    auto lines = head;
    lines.push_back(row1);
    lines.push_back(row2);
    const auto ag = parse_nccl_tests(join_lines(lines), "ag.txt");
    REQUIRE(ag.op == Op::AllGather);
    REQUIRE_FALSE(ag.ranks.has_value());
    REQUIRE(ag.ranks_from_count == std::optional<std::int64_t>(4));
    // The document gives only ranks: nothing tells the nodes, and the line names the entry's
    // key to add, not the log (which was named in a document).
    ref.ranks = 4;
    REQUIRE_THROWS_WITH(log_points(ag, ref),
                        "doc.json: /nccl_tests/0/nodes: missing required key: ag.txt has no "
                        "'#  Rank' lines to tell the run's nodes; expected the run's \"ranks\" "
                        "and \"nodes\" both");
    ref.ranks.reset();
    // The document gives only nodes: the points take the count's 4 ranks.
    ref.nodes = 2;
    REQUIRE(log_points(ag, ref).front().group.ranks == 4);
    ref.ranks = 5;
    REQUIRE_THROWS_WITH(log_points(ag, ref),
                        "doc.json: /nccl_tests/0/ranks: 5 ranks, but ag.txt prints all_gather "
                        "counts of 4 ranks (size / element bytes / count at line 5); expected 4");
    // A second row of 8 ranks (count 65536 for 2 MiB; busbw x 7/8: 13.98101 x 0.875 = 12.23),
    // each row consistent on its own: refused, as the rows of no single run.
    lines = head;
    lines.push_back(row1);
    lines.push_back(
        "     2097152         65536     float    none      -1    150.0   13.98   12.23      0    "
        "150.0   13.98   12.23      0");
    REQUIRE_THROWS_WITH(parse_nccl_tests(join_lines(lines), "mixed.txt"),
                        "mixed.txt: line 5: count: size / element bytes / count gives 8 ranks, "
                        "line 4 gives 4; expected the rows of one run, on one number of ranks");
  }
  SECTION("a row with wrong results") {
    auto lines = all_reduce_lines();
    // Line 11, the 2 MiB row: its in-place #wrong (the last cell) 0 -> 7.
    lines[10].back() = '7';
    const auto wrong = parse_nccl_tests(join_lines(lines), "wrong.txt");
    REQUIRE(wrong.rows[1].wrong_in_place == std::optional<std::int64_t>(7));
    REQUIRE_THROWS_WITH(log_points(wrong, ref),
                        Catch::StartsWith("wrong.txt: line 11: #wrong 7 in the in-place half: "
                                          "nccl-tests found wrong results") &&
                            Catch::Contains("expected 0"));
  }
}

TEST_CASE("nccl_tests_reader: a claimed op must agree with the log", "[io]") {
  SECTION("an all_gather log claimed as all_reduce") {
    // No test line: the evidence is the row with the largest algbw, line 47 (4 GiB):
    // 261.57 / 279.00 = 0.9375 = (n-1)/n on 16 ranks; all_reduce would print 2(n-1)/n = 1.875.
    const auto path = fixture("b200-roce-2node-all_gather.txt");
    REQUIRE_THROWS_AS(read_nccl_tests_file(path, Op::AllReduce), ConfigError);
    REQUIRE_THROWS_WITH(read_nccl_tests_file(path, Op::AllReduce),
                        path +
                            ": line 47: the claimed op all_reduce does not fit the table: "
                            "busbw/algbw is 0.938 = (n-1)/n of all_gather on 16 ranks; "
                            "expected the ratio of all_reduce, 2(n-1)/n = 1.88 on 16 ranks, "
                            "got 0.938");
    REQUIRE(read_nccl_tests_file(path, Op::AllGather).op == Op::AllGather);
  }
  SECTION("a log whose test line names another op") {
    const auto path = fixture("a100-1node-all_reduce.txt");
    REQUIRE_THROWS_WITH(read_nccl_tests_file(path, Op::AllGather),
                        path +
                            ": line 1: the log is all_reduce_perf; expected all_gather (the "
                            "claimed op), got all_reduce");
  }
  SECTION("a partial log without ranks: the ratio must still be possible for the op") {
    // H200, line 4 (largest algbw): busbw/algbw = 320.36 / 170.86 = 1.87498 (printed 1.87)
    // > 1, which (n-1)/n never reaches.
    const auto path = fixture("h200-ib-2node-all_reduce-partial.txt");
    REQUIRE_THROWS_WITH(read_nccl_tests_file(path, Op::ReduceScatter),
                        Catch::Contains("line 4: the claimed op reduce_scatter does not fit the "
                                        "table: busbw/algbw is 1.87; expected the ratio of "
                                        "reduce_scatter"));
    REQUIRE(read_nccl_tests_file(path, Op::AllReduce).op == Op::AllReduce);
  }
}

TEST_CASE("nccl_tests_reader: files that cannot be read", "[io]") {
  SECTION("a missing file") {
    REQUIRE_THROWS_WITH(
        read_nccl_tests_file("/nonexistent/x.txt"),
        "/nonexistent/x.txt: cannot open the file; expected a readable nccl-tests log");
  }
  SECTION("a directory") {
    const std::string dir = std::string(TRAINSIM_SOURCE_DIR) + "/calibration/nccl_tests";
    REQUIRE_THROWS_WITH(read_nccl_tests_file(dir), Catch::Contains("it is a directory"));
  }
  SECTION("an endless binary stream") {
    REQUIRE_THROWS_WITH(read_nccl_tests_file("/dev/zero"),
                        "/dev/zero: binary data (a NUL byte); expected the text output of an "
                        "nccl-tests binary");
  }
}

TEST_CASE("nccl_tests_reader: damaged logs give a ConfigError, never a crash", "[io]") {
  // Only ConfigError may escape parse_nccl_tests; anything else fails this test.
  const std::string text = read_text(fixture("h100-ndr-2node-all_reduce-srun-lowbw.txt"));
  SECTION("every truncation") {
    for (std::size_t n = 0; n <= text.size(); ++n) parse_or_config_error(text.substr(0, n));
  }
  SECTION("random byte edits (fixed seed)") {
    std::mt19937_64 rng(20240611);
    const std::string alphabet = "0123456789-+.eE #:N/A[]<>,\n\t\r\x01\xff";
    std::uniform_int_distribution<std::size_t> pos(0, text.size() - 1);
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    for (int trial = 0; trial < 2000; ++trial) {
      std::string damaged = text;
      for (int edit = 0; edit < 3; ++edit) damaged[pos(rng)] = alphabet[pick(rng)];
      parse_or_config_error(damaged);
    }
  }
  SECTION("huge and long cells") {
    parse_or_config_error(std::string(1 << 20, '9') + "\n");
    parse_or_config_error("1" + std::string(1 << 16, ' ') + "x\n");
    std::string many = "1";
    for (int i = 0; i < 100000; ++i) many += " 1e308";
    parse_or_config_error(many + "\n");
    parse_or_config_error(std::string(1 << 16, '\n'));
    parse_or_config_error(std::string(1 << 16, '#'));
  }
}

TEST_CASE("nccl_tests_reader: the header's units are those the rows are read in", "[io]") {
  // nccl-tests prints "(us)" for the time columns and "(GB/s)" for the bandwidths
  // (src/common.cu's header); a log whose header says other units would be read 1000x off.
  const std::string text = read_text(fixture("h100-ndr-2node-all_reduce.txt"));
  REQUIRE(text.find("(us)") != std::string::npos);
  REQUIRE_NOTHROW(parse_nccl_tests(text, "us.txt"));
  std::string ms = text;
  ms.replace(ms.find("(us)"), 4, "(ms)");
  REQUIRE_THROWS_WITH(parse_nccl_tests(ms, "ms.txt"),
                      Catch::Contains("ms.txt: line ") &&
                          Catch::Contains(": unsupported unit '(ms)' in the column header; "
                                          "expected times in (us) and bandwidths in (GB/s)"));
  std::string mbps = text;
  mbps.replace(mbps.find("(GB/s)"), 6, "(MB/s)");
  REQUIRE_THROWS_WITH(parse_nccl_tests(mbps, "mb.txt"),
                      Catch::Contains("unsupported unit '(MB/s)'"));
}
