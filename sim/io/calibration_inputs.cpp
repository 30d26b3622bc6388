#include "sim/io/calibration_inputs.hpp"

#include <algorithm>
#include <filesystem>

#include "trainsim/error.hpp"

#include "sim/io/measurement_reader.hpp"
#include "sim/io/nccl_tests_reader.hpp"

namespace trainsim::io {
namespace {

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

void append(calibrate::MeasurementSet& to, calibrate::MeasurementSet from) {
  calibrate::for_each_points(
      [](auto& dst, auto& src) {
        dst.insert(dst.end(), std::make_move_iterator(src.begin()),
                   std::make_move_iterator(src.end()));
      },
      to, from);
}

}  // namespace

std::vector<calibrate::CollectivePoint> log_points(const calibrate::NcclTestsLog& log,
                                                   const calibrate::LogReference& ref) {
  const auto ranks = ref.ranks ? ref.ranks : log.ranks;
  const auto nodes = ref.nodes ? ref.nodes : log.nodes;
  if (!ranks || !nodes) {
    throw ConfigError(log.source, "",
                      "cannot tell the ranks and nodes of the run: the log has no '#  Rank' "
                      "lines; expected the log named in a measurement document with \"ranks\" "
                      "and \"nodes\" (docs/calibration-measurements.md)");
  }
  if (*nodes < 1 || *ranks < *nodes) {
    throw ConfigError(log.source, "",
                      "expected 1 <= nodes <= ranks, got " + std::to_string(*ranks) + " ranks on " +
                          std::to_string(*nodes) + " nodes");
  }
  const std::int64_t per_node = (*ranks + *nodes - 1) / *nodes;
  std::optional<std::string> version = ref.nccl_version ? ref.nccl_version : log.nccl_version;
  std::vector<calibrate::CollectivePoint> out;
  for (const auto& row : log.rows) {
    calibrate::CollectivePoint p;
    p.op = log.op;
    p.group = parallel::GroupShape{.ranks = *ranks, .nodes = *nodes, .ranks_per_node = per_node};
    p.bytes = row.size;
    p.time = row.time_in_place < row.time_out_of_place ? row.time_in_place : row.time_out_of_place;
    p.algorithm = ref.algorithm;
    p.protocol = ref.protocol;
    p.nccl_version = version;
    p.origin =
        calibrate::Origin{.source = log.source,
                          .line = row.line,
                          .label = file_name(log.source),
                          .reported_problem = ref.status == calibrate::LogStatus::ReportedProblem};
    out.push_back(std::move(p));
  }
  return out;
}

CalibrationInputs read_calibration_inputs(const std::vector<std::string>& paths,
                                          bool include_problem_logs) {
  CalibrationInputs in;
  // A measurement set's label: its file name, or the path as given when two files share a
  // name, so that summaries and leave-one-out never merge two sets.
  std::vector<std::pair<std::string, std::string>> seen;  // (path, label)
  auto label_of = [&seen](const std::string& path) {
    for (const auto& [p, l] : seen) {
      if (p == path) return l;
    }
    std::string label = file_name(path);
    for (const auto& [p, l] : seen) {
      if (l == label) label = path;
    }
    seen.emplace_back(path, label);
    return label;
  };
  auto add_log = [&](const calibrate::LogReference& ref) {
    const calibrate::NcclTestsLog log = read_nccl_tests_file(ref.path, ref.op);
    auto points = log_points(log, ref);
    const std::string label = label_of(ref.path);
    for (auto& p : points) p.origin.label = label;
    in.points.collectives.insert(in.points.collectives.end(), points.begin(), points.end());
  };
  for (const auto& path : paths) {
    const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
    if (!json) {
      calibrate::LogReference ref;
      ref.path = path;
      add_log(ref);
      continue;
    }
    calibrate::MeasurementDocument doc = read_measurement_document(path);
    // Points of a document are labelled "<document>:<array>[<i>]".
    const std::string prefix = label_of(path) + ":";
    calibrate::for_each_points(
        [&prefix](auto& points) {
          for (auto& p : points) p.origin.label = prefix + p.origin.label;
        },
        doc.points);
    append(in.points, std::move(doc.points));
    for (const auto& ref : doc.logs) {
      if (ref.status == calibrate::LogStatus::ReportedProblem && !include_problem_logs) {
        in.skipped.push_back(file_name(ref.path) + " (" + path + ref.origin.label +
                             "): marked reported_problem; not fitted (--include-problem-logs "
                             "fits it)");
        continue;
      }
      add_log(ref);
    }
  }
  return in;
}

}  // namespace trainsim::io
