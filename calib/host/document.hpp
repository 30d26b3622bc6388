// The measurement document the suite writes (docs/calibration-measurements.md, schema
// "trainsim-measurements" version 1), which `trainsim calibrate` reads. Each record carries the
// environment it was taken in (device, driver, CUDA, NCCL, clocks, time stamp) and the
// statistics of its trials under "_stats", which the reader keeps as a comment.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calib/host/plan.hpp"
#include "calib/host/stats.hpp"

namespace trainsim::calib {

struct Environment {
  std::string device;     // "NVIDIA H200"
  std::string driver;     // "580.159.03"
  std::string cuda;       // "13.0"
  std::string nccl;       // "2.28.3"; empty when NCCL is not built in
  std::string host;       // host name
  std::string timestamp;  // ISO 8601, UTC
  std::string clocks;     // "sm 1980 MHz, memory 3201 MHz", read when the record was taken
};

// A record that failed its checks (too much spread, a throttled clock): kept under "_rejected"
// with the reason, never among the points that are fitted.
struct Rejection {
  std::string what;    // "gemm 4096x4096x4096 bf16"
  std::string reason;  // "coefficient of variation 0.12 above 0.05"
};

class Document {
 public:
  explicit Document(Environment environment);

  void add_gemm(const GemmCase& c, const Summary& time, const Environment& at);
  void add_attention(const AttentionCase& c, const Summary& time, const Environment& at,
                     const std::string& implementation);
  // kernel: "copy" or "triad"; bytes read plus written.
  void add_memory(const std::string& kernel, std::int64_t bytes, const Summary& time,
                  const Environment& at);
  void add_launch(const Summary& time, const Environment& at);
  // Unfused attention (calib/src/attention.cpp): kept under "_unfused_attention", not fitted.
  void add_unfused_attention(const AttentionCase& c, const Summary& time, const Environment& at);
  // activity: "idle", "compute" or "communication", the profile's power levels, under "power";
  // "memory_bound" goes under "_power_memory_bound" (no profile level, not fitted). `watts` is
  // the interval's average; `samples` the readings' spread.
  void add_power(const std::string& activity, double watts, const Summary& samples,
                 const Environment& at, const std::string& workload);
  // op as the schema names it ("all_reduce"); bytes as nccl-tests counts them.
  void add_collective(const std::string& op, std::int64_t ranks, std::int64_t nodes,
                      std::int64_t ranks_per_node, std::int64_t bytes, const Summary& time,
                      const Environment& at);
  // A kernel timed alone and beside SMs held by a stand-in for a communication kernel
  // (calib/src/overlap.cpp); `record` holds the case, "time_alone" and "time". Under "overlap"
  // when `fitted` (what gemm_comm_contention stands for), else under "_overlap_other" (GEMMs),
  // "_overlap_holder" (kernel "holder": the stand-in's own rate alone and beside a GEMM, whose
  // trials `beside` are) or "_overlap_memory_bound" (the triad), kept as comments.
  void add_overlap(nlohmann::json record, const Summary& beside, const Environment& at,
                   bool fitted);
  void reject(Rejection r);
  // A free-text note kept under "notes" (a sub-benchmark that could not run, and why).
  void note(const std::string& text);

  [[nodiscard]] std::size_t points() const;
  [[nodiscard]] const std::vector<Rejection>& rejections() const { return rejections_; }
  [[nodiscard]] nlohmann::json json() const;

  // Writes the document to `path` through a temporary file renamed into place, so that a
  // reader never sees half a document. Throws std::runtime_error naming the path on failure.
  void write(const std::string& path) const;

 private:
  void add(const std::string& array, nlohmann::json record, const Summary& s,
           const Environment& at);

  Environment environment_;
  nlohmann::json records_ = nlohmann::json::object();
  std::vector<Rejection> rejections_;
  std::vector<std::string> notes_;
};

// "12.3456 us": seconds written in microseconds with six significant digits, a form the
// measurement reader's unit parser reads back.
[[nodiscard]] std::string time_text(double seconds);
// "123.4 W".
[[nodiscard]] std::string power_text(double watts);
// The current time as ISO 8601 UTC ("2026-11-30T12:00:00Z").
[[nodiscard]] std::string utc_timestamp();

}  // namespace trainsim::calib
