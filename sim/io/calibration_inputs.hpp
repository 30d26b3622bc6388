// The inputs of `trainsim calibrate` turned into one MeasurementSet: measurement documents
// (JSON, docs/calibration-measurements.md) with the nccl-tests logs they name, and nccl-tests
// logs given directly. A log row becomes one collective point timed by the faster of its
// out-of-place and in-place runs (noise only ever adds time).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "trainsim/calibrate/measurements.hpp"

namespace trainsim::io {

struct CalibrationInputs {
  calibrate::MeasurementSet points;  // each point's origin.label names its measurement set
  std::vector<std::string> skipped;  // one line per log left out (reported problem), for stderr
  // "<document>: <pointer> repeats <pointer> ...": records given twice in a document, for stderr.
  std::vector<std::string> repeated;
  // "<log>: ... read as all_gather ...": logs whose op was inferred where another fits the table
  // as well, for stderr.
  std::vector<std::string> inferred;
  std::vector<std::string> files;    // every input file: documents and the logs they name
  // (path, label) of every file read: its measurement set's label (its file name, or the path
  // as given where another file read has that name), as the points' origins carry it.
  std::vector<std::pair<std::string, std::string>> labels;
  // (file, GPU it was measured on): a document's environment.device and each record's that
  // differs ("doc.json (/gemm/3)"), every device a log's rank lines name.
  std::vector<std::pair<std::string, std::string>> devices;
};

// Reads every input: a path ending in ".json" is a measurement document, anything else an
// nccl-tests log. Logs marked "reported_problem" in a document are left out (and listed in
// `skipped`) unless `include_problem_logs`. Throws ConfigError naming the file (and line) for
// bad input, and for a log whose ranks or nodes neither it nor its document says.
[[nodiscard]] CalibrationInputs read_calibration_inputs(const std::vector<std::string>& paths,
                                                        bool include_problem_logs);

// The points of one parsed log, with what `ref` says over what the log says. Throws
// ConfigError for a row with wrong results (#wrong above 0), and, naming the document's entry,
// for ranks or nodes the log contradicts: fewer ranks than its rank lines or fewer nodes than
// their hosts, other nodes than a complete rank list shows, other ranks than an all_gather,
// reduce_scatter or alltoall count gives, or ranks whose all_reduce factor 2(n-1)/n is not the
// busbw / algbw the log prints.
[[nodiscard]] std::vector<calibrate::CollectivePoint> log_points(
    const calibrate::NcclTestsLog& log, const calibrate::LogReference& ref);

}  // namespace trainsim::io
