// Reads the stdout of NVIDIA nccl-tests (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// broadcast_perf, reduce_perf, alltoall_perf, sendrecv_perf) into calibrate::NcclTestsLog, the
// measured points `trainsim calibrate` fits to. Strict: every table row is checked against
// nccl-tests' own definitions (algbw = size / time, busbw = algbw x bus factor, the count of
// the op), and anything that starts like a row but does not read as one is an error.
#pragma once

#include <optional>
#include <string>

#include "trainsim/calibrate/measurements.hpp"
#include "trainsim/collective/collective_model.hpp"
#include "trainsim/error.hpp"

namespace trainsim::io {

// Parses nccl-tests stdout. `source` names the text in errors. Accepts:
// - the unified table of nccl-tests >= 2.13 (size count type redop root, then time algbw busbw
//   #wrong for out-of-place and in-place), with either width of the #wrong column, and the
//   per-test tables of nccl-tests <= 2.11 (no redop and/or root column, an `error` column
//   instead of #wrong; #wrong is then nullopt), told apart by the column-header line;
// - one launcher prefix on every line (Slurm `srun -l` " 0: ", `[0]`, Open MPI
//   `[1,0]<stdout>:`), detected once from the first comment line and stripped from every line;
// - launcher and NCCL chatter between the lines, blank lines, and failure lines after an
//   aborted table (which then has no footer); such lines are skipped;
// - logs without rank lines (ranks and nodes are then nullopt).
// The op comes from the "# Collective test starting/concluded:" lines, else from the table
// (busbw/algbw, redop, root and count). `claimed_op`, when given, must agree with what the log
// shows. Rows whose size is 0 (tiny per-rank sizes) are checked and then dropped.
// Not supported (clear error): -I per-iteration and -S timestamp columns, and several sweeps
// in one log (-d all, -o all, -r -1, -N > 1), whose sizes restart.
// Throws ConfigError(source, "line N", ...) on bad input, N 1-based; ClaimedOpError where the
// log contradicts `claimed_op`, so that a caller can name whoever made the claim.
class ClaimedOpError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};
calibrate::NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& source,
                                         std::optional<collective::Op> claimed_op = std::nullopt);

// The text of the log at `path`, read as read_nccl_tests_file reads it (errors name `path`).
// Throws ConfigError for a file that cannot be read, is larger than 64 MiB, or contains NUL
// bytes (a binary, /dev/zero).
std::string read_nccl_tests_text(const std::string& path);

// Reads the file at `path` (read_nccl_tests_text) and parses it (errors name `path`).
calibrate::NcclTestsLog read_nccl_tests_file(
    const std::string& path, std::optional<collective::Op> claimed_op = std::nullopt);

}  // namespace trainsim::io
