#include "sim/io/calibration_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <utility>

#include "trainsim/collective/collective_model.hpp"
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

// Where the document's entry for `ref` is: "<document>: /nccl_tests/<i>/<key>", or the log's own
// name when it was given on the command line.
ConfigError entry_error(const calibrate::NcclTestsLog& log, const calibrate::LogReference& ref,
                        const std::string& key, const std::string& problem) {
  if (ref.origin.source.empty()) return ConfigError(log.source, "", problem);
  return ConfigError(ref.origin.source, ref.origin.label + "/" + key, problem);
}

// all_reduce's busbw / algbw on n ranks, as nccl-tests prints it (src/all_reduce.cu: 2(n-1)/n),
// checked on the row read most precisely (the largest out-of-place algbw). Within the nccl-tests
// reader's tolerance (2% plus the last printed digit) and both cells' print rounding, half a unit
// of the last digit each cell shows: 2(n-1)/n moves by 6.7% from 4 to 5 ranks and by 0.4% from
// 16 to 17, so a close miscount at large n passes.
void check_all_reduce_factor(const calibrate::NcclTestsLog& log, const calibrate::LogReference& ref,
                             std::int64_t ranks) {
  const calibrate::NcclTestsRow* best = nullptr;
  for (const auto& row : log.rows) {
    if (best == nullptr || row.algbw_out_of_place.value() > best->algbw_out_of_place.value()) {
      best = &row;
    }
  }
  if (best == nullptr || best->algbw_out_of_place.value() < 1e9) return;  // too coarse to tell
  const double algbw = best->algbw_out_of_place.value() / 1e9;
  const double busbw = best->busbw_out_of_place.value() / 1e9;
  const double factor = collective::bus_factor(collective::Op::AllReduce, ranks);
  const double half_ulp = best->bandwidth_half_ulp.value() / 1e9;
  const double slack = 0.02 * factor * algbw + 0.01 + half_ulp * (1.0 + factor);
  if (std::abs(busbw - factor * algbw) <= slack) return;
  const double ratio = busbw / algbw;
  // The ranks the printed ratio implies: 2(n-1)/n = r gives n = 2 / (2 - r).
  std::string implied;
  if (ratio > 0.0 && ratio < 2.0 && 2.0 / (2.0 - ratio) < 1e6) {
    implied = " (about " + std::to_string(std::llround(2.0 / (2.0 - ratio))) + " ranks)";
  }
  char numbers[160];
  (void)std::snprintf(numbers, sizeof numbers, "busbw/algbw = %.2f / %.2f = %.4g%s at line %d",
                      busbw, algbw, ratio, implied.c_str(), best->line);
  char wanted[32];
  (void)std::snprintf(wanted, sizeof wanted, "%.4g", factor);
  throw entry_error(log, ref, "ranks",
                    std::to_string(ranks) + " ranks, but " + log.source + " prints " + numbers +
                        "; expected the ranks of the run that wrote the log, for which all_reduce "
                        "prints 2(n-1)/n = " +
                        wanted + " on " + std::to_string(ranks) + " ranks");
}

// The ranks and nodes a document gives for a log must be those of the run that wrote it. The log
// bounds them: it lists some of its ranks (all of them, or the first ones when it was cut short
// at scale), with their hosts; all_gather, reduce_scatter and alltoall print each rank's count,
// which gives the rank count exactly (and the nccl-tests reader refuses their rank lines cut
// short); all_reduce prints busbw / algbw = 2(n-1)/n.
void check_claimed_group(const calibrate::NcclTestsLog& log, const calibrate::LogReference& ref) {
  if (ref.ranks && log.ranks && *ref.ranks < *log.ranks) {
    throw entry_error(log, ref, "ranks",
                      std::to_string(*ref.ranks) + " ranks, but " + log.source + " lists " +
                          std::to_string(*log.ranks) + " '#  Rank' lines; expected at least " +
                          std::to_string(*log.ranks));
  }
  if (ref.ranks && log.ranks_from_count && *ref.ranks != *log.ranks_from_count) {
    throw entry_error(log, ref, "ranks",
                      std::to_string(*ref.ranks) + " ranks, but " + log.source + " prints " +
                          std::string(collective::to_string(log.op)) + " counts of " +
                          std::to_string(*log.ranks_from_count) +
                          " ranks (size / element bytes / count at line " +
                          std::to_string(log.ranks_from_count_line) + "); expected " +
                          std::to_string(*log.ranks_from_count));
  }
  if (ref.nodes && log.nodes && *ref.nodes < *log.nodes) {
    throw entry_error(log, ref, "nodes",
                      std::to_string(*ref.nodes) + " nodes, but the rank lines of " + log.source +
                          " name " + std::to_string(*log.nodes) + " hosts; expected at least " +
                          std::to_string(*log.nodes));
  }
  // The ranks the points will have: the document's, else the rank lines'.
  const std::optional<std::int64_t> ranks = ref.ranks ? ref.ranks : log.ranks;
  if (ref.nodes && log.nodes && ranks && log.ranks && *ranks == *log.ranks &&
      *ref.nodes != *log.nodes) {
    throw entry_error(
        log, ref, "nodes",
        std::to_string(*ref.nodes) + " nodes, but the " + std::to_string(*log.ranks) +
            " rank lines of " + log.source + " name " + std::to_string(*log.nodes) +
            " hosts; expected " + std::to_string(*log.nodes) +
            (ref.ranks ? std::string(" (the lines list every one of the ranks given)")
                       : std::string(", or the run's \"ranks\" if the log lists only some")));
  }
  if (ref.ranks && *ref.ranks >= 2 && log.op == collective::Op::AllReduce) {
    check_all_reduce_factor(log, ref, *ref.ranks);
  }
}

// nccl-tests checks each result and prints the elements it found wrong (#wrong, with -c 1, the
// default): a row with any is a broken collective whose time says nothing of a working one.
void check_results(const calibrate::NcclTestsLog& log) {
  for (const auto& row : log.rows) {
    for (const auto& [wrong, half] : {std::pair{row.wrong_out_of_place, "out-of-place"},
                                      std::pair{row.wrong_in_place, "in-place"}}) {
      if (wrong && *wrong != 0) {
        throw ConfigError(log.source, "line " + std::to_string(row.line),
                          "#wrong " + std::to_string(*wrong) + " in the " + half +
                              " half: nccl-tests found wrong results, so the run's times are not "
                              "of a correct collective; expected 0 (rerun it; a log with wrong "
                              "results is not fitted)");
      }
    }
  }
}

}  // namespace

std::vector<calibrate::CollectivePoint> log_points(const calibrate::NcclTestsLog& log,
                                                   const calibrate::LogReference& ref) {
  check_results(log);
  check_claimed_group(log, ref);
  // What a document entry lacks, named at the entry: the key it should add.
  const char* missing_key = ref.ranks ? "nodes" : "ranks";
  if (!(ref.ranks && ref.nodes) && log.fewest_ranks_per_host < log.most_ranks_per_host) {
    if (!ref.origin.source.empty()) {
      throw entry_error(log, ref, missing_key,
                        std::string("missing required key: the rank lines of ") + log.source +
                            " list " + std::to_string(*log.ranks) + " ranks on " +
                            std::to_string(*log.nodes) + " hosts, " +
                            std::to_string(log.fewest_ranks_per_host) + " to " +
                            std::to_string(log.most_ranks_per_host) +
                            " per host (a list cut short, or an uneven run); expected the run's "
                            "\"ranks\" and \"nodes\" both");
    }
    // Hosts of unequal rank counts (100 ranks on 13 hosts, the last with 4 of 8): a log whose
    // rank lines were cut short (a paste of the first screen of a 1,024-rank run) or an uneven
    // run; either way the rank lines cannot say the group, and a guess changes the fit.
    throw ConfigError(log.source, "",
                      "the rank lines list " + std::to_string(*log.ranks) + " ranks on " +
                          std::to_string(*log.nodes) + " hosts, " +
                          std::to_string(log.fewest_ranks_per_host) + " to " +
                          std::to_string(log.most_ranks_per_host) +
                          " per host: a list cut short, or an uneven run; expected the log named "
                          "in a measurement document with both the run's \"ranks\" and \"nodes\" "
                          "(docs/calibration-measurements.md)");
  }
  const auto ranks = ref.ranks ? ref.ranks : log.ranks ? log.ranks : log.ranks_from_count;
  const auto nodes = ref.nodes ? ref.nodes : log.nodes;
  if (!ranks || !nodes) {
    if (!ref.origin.source.empty()) {
      throw entry_error(log, ref, !ranks ? "ranks" : "nodes",
                        std::string("missing required key: ") + log.source +
                            " has no '#  Rank' lines to tell the run's " +
                            (!ranks ? "ranks" : "nodes") +
                            "; expected the run's \"ranks\" and "
                            "\"nodes\" both");
    }
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
  // Ranks on the fullest node: the rank lines' where they list every rank on every host (16
  // ranks on 3 hosts, 8, 4 and 4: 8, where an even split would say 6), else the entry's
  // "ranks_per_node", else an even split where the lines (if any) show no fuller host.
  const bool complete = log.ranks && *log.ranks == *ranks && log.nodes && *log.nodes == *nodes;
  const std::int64_t even = (*ranks + *nodes - 1) / *nodes;
  std::int64_t per_node = complete ? log.most_ranks_per_host : even;
  if (ref.ranks_per_node) {
    if (complete && *ref.ranks_per_node != log.most_ranks_per_host) {
      throw entry_error(
          log, ref, "ranks_per_node",
          std::to_string(*ref.ranks_per_node) + ", but the rank lines of " + log.source +
              " list every rank, " + std::to_string(log.most_ranks_per_host) +
              " on the fullest host; expected " + std::to_string(log.most_ranks_per_host));
    }
    if (*ref.ranks_per_node < log.most_ranks_per_host) {
      throw entry_error(log, ref, "ranks_per_node",
                        std::to_string(*ref.ranks_per_node) + ", but the rank lines of " +
                            log.source + " list " + std::to_string(log.most_ranks_per_host) +
                            " ranks on one host; expected at least " +
                            std::to_string(log.most_ranks_per_host));
    }
    per_node = *ref.ranks_per_node;
  } else if (!complete && (*ranks % *nodes != 0 || log.most_ranks_per_host > even)) {
    throw entry_error(
        log, ref, "ranks_per_node",
        "missing required key: " + std::to_string(*ranks) + " ranks on " + std::to_string(*nodes) +
            " nodes" +
            (*ranks % *nodes != 0 ? std::string(" do not split evenly")
                                  : " split evenly, but the rank lines show " +
                                        std::to_string(log.most_ranks_per_host) + " on one host") +
            ", and the rank lines of " + log.source +
            " do not list them all; expected the ranks on the fullest node" +
            (ref.ranks ? std::string() : std::string(", with the run's \"ranks\"")));
  }
  // The entry's version is for logs that do not print one (docs/calibration-measurements.md);
  // one that contradicts the log's hid the log's own version from the version check.
  if (ref.nccl_version && log.nccl_version && *ref.nccl_version != *log.nccl_version &&
      !log.nccl_version->starts_with(*ref.nccl_version + ".")) {
    throw entry_error(log, ref, "nccl_version",
                      "NCCL " + *ref.nccl_version +
                          " (the entry's nccl_version, or its "
                          "environment's nccl), but " +
                          log.source + " prints NCCL version " + *log.nccl_version +
                          "; expected the version the log prints, or none");
  }
  std::optional<std::string> version = log.nccl_version ? log.nccl_version : ref.nccl_version;
  std::vector<calibrate::CollectivePoint> out;
  for (const auto& row : log.rows) {
    calibrate::CollectivePoint p;
    p.op = log.op;
    p.group = parallel::GroupShape{.ranks = *ranks, .nodes = *nodes, .ranks_per_node = per_node};
    p.bytes = row.size;
    p.time = row.time_in_place < row.time_out_of_place ? row.time_in_place : row.time_out_of_place;
    p.algorithm = ref.algorithm;
    p.protocol = ref.protocol;
    if (ref.algorithm && !ref.origin.source.empty()) {
      p.algorithm_declared_at = ref.origin.source + ": " + ref.origin.label + "/algorithm";
    }
    if (ref.protocol && !ref.origin.source.empty()) {
      p.protocol_declared_at = ref.origin.source + ": " + ref.origin.label + "/protocol";
    }
    p.nccl_version = version;
    p.origin =
        calibrate::Origin{.source = log.source,
                          .line = row.line,
                          .label = file_name(log.source),
                          .pointer = "",
                          .reported_problem = ref.status == calibrate::LogStatus::ReportedProblem};
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// Where the shorter of two tables runs inside the longer, every size, count, type, operation,
// root and time (out of place and in place) alike: the offset of its first row in the longer
// one, or nullopt. A copy may be cut at either end (a job killed mid-run keeps the first rows, a
// paste of the large sizes the last, which counted them twice). The shared rows must hold one of
// 1 MiB or more: below that the times are latency, printed to 0.01 us, and two runs on one
// cluster can print the same few; from 1 MiB they are bandwidth, and vary in their fourth digit
// from run to run.
std::optional<std::size_t> table_inside(const std::vector<calibrate::NcclTestsRow>& shorter,
                                        const std::vector<calibrate::NcclTestsRow>& longer) {
  if (shorter.empty() || shorter.size() > longer.size()) return std::nullopt;
  const bool large = std::any_of(shorter.begin(), shorter.end(), [](const auto& row) {
    return row.size >= Bytes(1024.0 * 1024.0);
  });
  if (!large) return std::nullopt;
  const auto same = [](const auto& x, const auto& y) {
    return x.size == y.size && x.count == y.count && x.type == y.type && x.redop == y.redop &&
           x.root == y.root && x.time_out_of_place == y.time_out_of_place &&
           x.time_in_place == y.time_in_place;
  };
  for (std::size_t at = 0; at + shorter.size() <= longer.size(); ++at) {
    if (std::equal(shorter.begin(), shorter.end(), longer.begin() + static_cast<std::ptrdiff_t>(at),
                   same)) {
      return at;
    }
  }
  return std::nullopt;
}

}  // namespace

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
  // Every log read, so that one read twice (listed twice in a document, or in a document and on
  // the command line) is refused as the command line refuses it: its points would count twice.
  std::vector<std::string> logs_read;
  std::vector<std::pair<std::string, std::pair<std::size_t, std::size_t>>>
      log_contents;  // (path, (size, hash))
  std::vector<std::pair<std::string, std::vector<calibrate::NcclTestsRow>>> tables;  // (path, rows)
  auto add_log = [&](const calibrate::LogReference& ref) {
    for (const std::string& earlier : logs_read) {
      std::error_code ec;
      if (earlier == ref.path || std::filesystem::equivalent(earlier, ref.path, ec)) {
        const std::string problem = "the nccl-tests log " + ref.path + " is already an input (" +
                                    earlier +
                                    "); expected each log once, or its points count twice";
        if (ref.origin.source.empty()) throw ConfigError(ref.path, "", problem);
        throw ConfigError(ref.origin.source, ref.origin.label + "/file", problem);
      }
    }
    logs_read.push_back(ref.path);
    std::error_code unknown;  // set when existence cannot be told (a folder without access)
    if (!ref.origin.source.empty() && !std::filesystem::exists(ref.path, unknown) && !unknown) {
      // A document's entry names a log that is not there: the entry is at fault, so it is
      // named (the log's path alone left the user to find which document listed it).
      throw ConfigError(ref.origin.source, ref.origin.label + "/file",
                        "no nccl-tests log at " + ref.path +
                            " (a relative path is taken from the document's folder); expected "
                            "an existing log file");
    }
    // The same bytes under another name are the same run: its points would count twice. The
    // logs are told apart by size and hash (a log is up to 64 MiB; its text is not kept).
    std::string text;
    try {
      text = read_nccl_tests_text(ref.path);
    } catch (const ConfigError& e) {
      // A document's entry that names no readable log is the entry's fault: named at its key,
      // with the path (".", a folder, said "error: .: cannot read: it is a directory" alone).
      if (ref.origin.source.empty()) throw;
      throw ConfigError(ref.origin.source, ref.origin.label + "/file",
                        "the nccl-tests log " + ref.path + ": " + e.problem());
    }
    const auto content = std::pair{text.size(), std::hash<std::string>{}(text)};
    for (const auto& [earlier, earlier_content] : log_contents) {
      if (!text.empty() && earlier_content == content) {
        const std::string problem = "the nccl-tests log " + ref.path + " has the same content as " +
                                    earlier + "; expected each run once, or its points count twice";
        if (ref.origin.source.empty()) throw ConfigError(ref.path, "", problem);
        throw ConfigError(ref.origin.source, ref.origin.label + "/file", problem);
      }
    }
    log_contents.emplace_back(ref.path, content);
    in.files.push_back(ref.path);
    calibrate::NcclTestsLog log;
    try {
      log = parse_nccl_tests(text, ref.path, ref.op);
    } catch (const ClaimedOpError& e) {
      // The op a document's entry claims and the table disagree: the entry is at fault, so it
      // is named, with the log's line (the log alone used to be).
      if (!ref.origin.source.empty()) {
        throw ConfigError(
            ref.origin.source, ref.origin.label + "/op",
            e.problem() + " (" + ref.path + (e.pointer().empty() ? "" : ", " + e.pointer()) + ")");
      }
      throw;
    }
    // The same table in other bytes (line endings, MPI's chatter, the footer cut off) is the
    // same run too: two runs do not print one time for every size, in both columns.
    for (const auto& [earlier, rows] : tables) {
      const bool this_shorter = log.rows.size() <= rows.size();
      const auto at = this_shorter ? table_inside(log.rows, rows) : table_inside(rows, log.rows);
      if (at) {
        const auto& part = this_shorter ? log.rows : rows;
        const bool first = *at == 0;
        const bool last = *at + part.size() == (this_shorter ? rows : log.rows).size();
        const std::string which = first ? "first" : last ? "last" : "middle";
        const std::string how = rows.size() == log.rows.size()
                                    ? " has the same table as " + earlier + " (every size and time)"
                                : this_shorter
                                    ? " holds the " + which + " " + std::to_string(part.size()) +
                                          " rows of " + earlier +
                                          "'s table, every size and time (a copy cut short)"
                                    : "'s table holds " + earlier + "'s " +
                                          std::to_string(part.size()) + " rows as its " + which +
                                          " ones, every size and time (that one a copy cut "
                                          "short)";
        const std::string problem = "the nccl-tests log " + ref.path + how +
                                    "; expected each run once, or its points count twice";
        if (ref.origin.source.empty()) throw ConfigError(ref.path, "", problem);
        throw ConfigError(ref.origin.source, ref.origin.label + "/file", problem);
      }
    }
    tables.emplace_back(ref.path, log.rows);
    if (!log.also_fits.empty()) {
      std::string others;
      for (std::size_t i = 0; i < log.also_fits.size(); ++i) {
        if (i > 0) others += i + 1 == log.also_fits.size() ? " or " : ", ";
        others += collective::to_string(log.also_fits[i]);
      }
      in.inferred.push_back(
          ref.path + ": no '# Collective test starting:' line, and its table fits " + others +
          " as well as " + std::string(collective::to_string(log.op)) + ": read as " +
          std::string(collective::to_string(log.op)) + "; where it measured " + others +
          ", say \"op\" in its entry of a measurements document "
          "(docs/calibration-measurements.md)");
    }
    // Every GPU its rank lines name, each once (a log of a mixed cluster names several).
    std::vector<std::string> named;
    for (const auto& device : log.devices) {
      if (std::find(named.begin(), named.end(), device) != named.end()) continue;
      named.push_back(device);
      in.devices.emplace_back(ref.path, device);
    }
    auto points = log_points(log, ref);
    const std::string label = label_of(ref.path);
    for (auto& p : points) p.origin.label = label;
    in.points.collectives.insert(in.points.collectives.end(), points.begin(), points.end());
  };
  std::vector<std::pair<std::string, std::pair<std::size_t, std::size_t>>>
      document_contents;  // (path, (size, hash))
  for (const auto& path : paths) {
    const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
    if (!json) {
      calibrate::LogReference ref;
      ref.path = path;
      add_log(ref);
      continue;
    }
    // A copy of a document under another name is the same measurements: its points would count
    // twice, and leave-one-out would predict each copy from the other (0.0% error). Told apart
    // by size and hash of the text read, as the logs are.
    const std::string text = read_measurement_text(path);
    calibrate::MeasurementDocument doc = parse_measurement_document(text, path);
    const auto content = std::pair{text.size(), std::hash<std::string>{}(text)};
    for (const auto& [earlier, earlier_content] : document_contents) {
      if (earlier_content == content) {
        throw ConfigError(path, "",
                          "the measurement document has the same content as " + earlier +
                              "; expected each run once, or its points count twice");
      }
    }
    document_contents.emplace_back(path, content);
    in.files.push_back(path);
    in.devices.emplace_back(path, doc.environment.device);
    for (const auto& [pointer, device] : doc.record_devices) {
      in.devices.emplace_back(path + " (" + pointer + ")", device);
    }
    for (const auto& r : doc.repeated) in.repeated.push_back(path + ": " + r);
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
        in.files.push_back(ref.path);  // not read, but an input -o may not replace
        // The document and the entry's pointer apart ("h100-dgx.json: /nccl_tests/7"): joined,
        // they read as a path that does not exist.
        in.skipped.push_back(file_name(ref.path) + " (" + path + ": " + ref.origin.label +
                             "): marked reported_problem; not fitted (--include-problem-logs "
                             "fits it)");
        continue;
      }
      add_log(ref);
    }
  }
  in.labels = seen;
  return in;
}

}  // namespace trainsim::io
