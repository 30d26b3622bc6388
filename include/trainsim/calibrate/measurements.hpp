// What `trainsim calibrate` fits to: measured points read from nccl-tests logs and from
// trainsim's own measurement documents (schema in docs/calibration.md). The readers live in io/
// (sim/io/nccl_tests_reader.cpp, sim/io/measurement_reader.cpp); the fit in calibrate/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/units.hpp"

namespace trainsim::calibrate {

// Where a measured point came from, for residual tables and error messages.
struct Origin {
  std::string source;  // file name as given
  int line = 0;        // 1-based line in a text log; 0 for JSON documents
  std::string label;   // short name of the measurement set (the log's file name, or a JSON id)
  std::string pointer;  // the record's JSON pointer in its document ("/gemm/0"); empty in a log
  bool reported_problem = false;  // from a log marked "reported_problem" (fitted only on request)
};

// One row of an nccl-tests table: both the out-of-place and the in-place measurement, as
// printed. Sizes and counts are nccl-tests' (docs/sources.md A.11: the whole buffer for
// all_reduce, the whole gathered output for all_gather).
struct NcclTestsRow {
  Bytes size;
  std::int64_t count = 0;
  std::string type;   // "float", "half", "bfloat16", ...
  std::string redop;  // "sum", "none", ...
  std::int64_t root = -1;
  Seconds time_out_of_place;
  BytesPerSecond algbw_out_of_place;
  BytesPerSecond busbw_out_of_place;
  Seconds time_in_place;
  BytesPerSecond algbw_in_place;
  BytesPerSecond busbw_in_place;
  // #wrong of each half; nullopt where the log prints N/A (validation off).
  std::optional<std::int64_t> wrong_out_of_place;
  std::optional<std::int64_t> wrong_in_place;
  // Half a unit of the last digit printed in the out-of-place algbw and busbw cells, the larger
  // (0.005 GB/s for nccl-tests' "%7.2f").
  BytesPerSecond bandwidth_half_ulp;
  int line = 0;  // 1-based line of the row in the log
};

// One nccl-tests run as read from its stdout.
struct NcclTestsLog {
  std::string source;  // file name as given
  collective::Op op = collective::Op::AllReduce;
  // Other ops the table fits as well as `op`, which was inferred from the table (no test line,
  // no claimed op, no file name of one of them): all_to_all beside all_gather, send_recv beside
  // all_reduce on 2 ranks. Empty where the op is known.
  std::vector<collective::Op> also_fits;
  // Ranks and nodes from the "#  Rank" lines (distinct host names); nullopt when the log has no
  // rank lines (a partial paste), so the caller must say them.
  std::optional<std::int64_t> ranks;
  std::optional<std::int64_t> nodes;
  // all_gather, reduce_scatter and alltoall print each rank's count, so size / element bytes /
  // count is the run's rank count exactly, with or without rank lines: that of the last row
  // (the largest), and its line. nullopt for the other ops.
  std::optional<std::int64_t> ranks_from_count;
  int ranks_from_count_line = 0;
  // The fewest and most rank lines one host has (0 without rank lines): unequal counts are a
  // list cut short, or a run the rank lines cannot describe alone.
  std::int64_t fewest_ranks_per_host = 0;
  std::int64_t most_ranks_per_host = 0;
  std::vector<std::string> devices;         // device names of the rank lines, in rank order
  std::optional<std::string> nccl_version;  // "2.26.2" from "NCCL version 2.26.2+cuda12.8"
  std::optional<std::int64_t> warmup_iters;
  std::optional<std::int64_t> iters;
  std::optional<bool> validation;  // from the "# nThread" header line
  std::vector<NcclTestsRow> rows;  // in the order printed; sizes strictly increasing
  bool has_footer = false;         // the "# Avg bus bandwidth" line was seen
};

// One measured collective call: a group, a size and the time it took.
struct CollectivePoint {
  collective::Op op = collective::Op::AllReduce;
  parallel::GroupShape group;
  Bytes bytes;   // nccl-tests' size convention (see CollectiveModel::cost)
  Seconds time;  // time per call
  // Forced by the environment (NCCL_ALGO, NCCL_PROTO); nullopt: NCCL chose.
  std::optional<hardware::Algorithm> algorithm;
  std::optional<hardware::Protocol> protocol;
  // The NCCL version of the run ("2.26.2"), when known. Recorded only: the fit prices every
  // point with the NCCL constants of the profile it writes (docs/calibration.md).
  std::optional<std::string> nccl_version;
  Origin origin;
  // Where a log's forced algorithm was declared, "doc.json: /nccl_tests/0/algorithm", for the
  // errors the point draws; empty for a record's own key or a log on the command line.
  std::string algorithm_declared_at;
  // The same for a log's forced protocol ("doc.json: /nccl_tests/0/protocol").
  std::string protocol_declared_at;
};

// A GEMM timed on one GPU: C[m,n] = A[m,k] B[k,n] in `dtype`.
struct GemmPoint {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  hardware::Dtype dtype = hardware::Dtype::Bf16;
  Seconds time;
  Origin origin;
};

// Fused attention (forward) timed on one GPU.
struct AttentionPoint {
  std::int64_t batch = 0;
  std::int64_t heads = 0;
  std::int64_t seq_len = 0;
  std::int64_t head_dim = 0;
  bool causal = true;
  hardware::Dtype dtype = hardware::Dtype::Bf16;
  Seconds time;
  Origin origin;
};

// A streaming kernel (copy or triad) moving `bytes` through HBM (reads plus writes).
struct MemoryPoint {
  Bytes bytes;
  Seconds time;
  Origin origin;
};

// The time to launch an empty kernel and record its completion.
struct LaunchPoint {
  Seconds time;
  Origin origin;
};

// A GEMM timed alone and beside SMs held by a stand-in for a communication kernel (the suite's
// overlap benchmark, calib/src/overlap.cpp): what gemm_comm_contention means.
struct OverlapPoint {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  hardware::Dtype dtype = hardware::Dtype::Bf16;
  std::int64_t held_sms = 0;           // SMs the stand-in held (one block each)
  bool copying = false;                // the stand-in copied through HBM (else it only held SMs)
  std::optional<BytesPerSecond> rate;  // its pace, bytes read plus written; nullopt: unpaced
  std::int64_t sm_count_target = 0;    // cuBLASLt's SM count target; 0: none
  Seconds time_alone;
  Seconds time;  // beside the stand-in
  Origin origin;
};

enum class PowerActivity { Idle, Compute, Communication };

// Average board power while one kind of activity ran.
struct PowerPoint {
  PowerActivity activity = PowerActivity::Idle;
  Watts power;
  Origin origin;
};

// Everything one calibration reads, from all its inputs together.
struct MeasurementSet {
  std::vector<CollectivePoint> collectives;
  std::vector<GemmPoint> gemms;
  std::vector<AttentionPoint> attention;
  std::vector<MemoryPoint> memory;
  std::vector<LaunchPoint> launches;
  std::vector<PowerPoint> power;
  std::vector<OverlapPoint> overlap;
};

// Calls f once per kind of point with that kind's vector of each set given, in a fixed order:
// f(a.collectives, b.collectives, ...), then gemms, attention, memory, launches, power, overlap.
template <class F, class... Sets>
void for_each_points(F&& f, Sets&... sets) {
  f(sets.collectives...);
  f(sets.gemms...);
  f(sets.attention...);
  f(sets.memory...);
  f(sets.launches...);
  f(sets.power...);
  f(sets.overlap...);
}

// Whether a log may be fitted (the provenance of calibration/nccl_tests/README.md's "status").
enum class LogStatus { Healthy, ReportedProblem };

// An nccl-tests log named by a measurement document, with what the log itself may not say.
struct LogReference {
  std::string path;  // resolved: relative paths are taken from the document's folder
  std::optional<collective::Op> op;   // claimed op; checked against the log
  std::optional<std::int64_t> ranks;  // when the log lacks (or truncates) rank lines
  std::optional<std::int64_t> nodes;
  // Ranks on the fullest node, for an uneven run whose rank lines do not list every rank.
  std::optional<std::int64_t> ranks_per_node;
  std::optional<hardware::Algorithm> algorithm;  // NCCL_ALGO of the run, if forced
  std::optional<hardware::Protocol> protocol;    // NCCL_PROTO of the run, if forced
  std::optional<std::string> nccl_version;       // when the log does not print it
  LogStatus status = LogStatus::Healthy;
  std::string note;  // free text: where the log was posted, what was said about it
  Origin origin;     // the document and the pointer of this entry (in `label`)
};

// Where a measurement document's points were taken (free text, as the suite records it).
struct Environment {
  std::string device;     // "NVIDIA H200"
  std::string driver;     // "560.35.03"
  std::string cuda;       // "12.6"
  std::string nccl;       // "2.26.2"; empty when no collective was measured
  std::string host;       // host name or cluster label
  std::string timestamp;  // ISO 8601
  std::string clocks;     // "sm 1980 MHz, memory 3201 MHz", as the suite read them
};

// A measurement document (docs/calibration.md): its points and the logs it names.
struct MeasurementDocument {
  std::string source;
  Environment environment;
  MeasurementSet points;  // every point's origin.source is the document
  std::vector<LogReference> logs;
  // One line per record that repeats an earlier record of its array field for field: both are
  // fitted, so a copy pasted twice weighs double (a warning, not an error: two runs can agree).
  std::vector<std::string> repeated;
  // (record pointer, device) of the first record of each device its own environment names
  // other than the document's: the GPU check of calibrate reads these too.
  std::vector<std::pair<std::string, std::string>> record_devices;
};

}  // namespace trainsim::calibrate
