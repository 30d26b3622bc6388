// `trainsim calibrate`: fits a hardware profile's parameters (calibrate/parameters.hpp) to
// measurement documents and nccl-tests logs, prints each measured point against the model
// before and after the fit with the fitted values and their standard errors, and writes the
// fitted profile, which run, sweep and search accept. --leave-one-out refits without each
// measurement set in turn and predicts it.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/calibrate/fit.hpp"
#include "trainsim/calibrate/parameters.hpp"
#include "trainsim/error.hpp"
#include "trainsim/version.hpp"

#include "sim/cli/commands.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/io/calibration_inputs.hpp"
#include "sim/io/hardware_loader.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/unit_parse.hpp"

namespace trainsim::cli {
namespace {

struct CalibrateOptions {
  std::string base;
  std::vector<std::string> inputs;
  std::string output;
  std::string min_bytes = "1MiB";
  bool include_problem_logs = false;
  bool leave_one_out = false;
  bool reset = false;
  std::string format = "table";
  std::vector<std::string> freeze;
};

std::string fmt(const char* format, double v) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), format, v);
  return buf.data();
}

// A value in the parameter's unit with four significant digits (well inside the fits'
// standard errors): "12.34 us", "48.5 MiB", "655.2 W" or a plain "0.9016".
std::string display(const calibrate::Parameter& p, double v) {
  switch (p.unit) {
    case calibrate::ParameterUnit::Seconds:
      return fmt("%.4g us", v * 1e6);
    case calibrate::ParameterUnit::Bytes:
      return fmt("%.4g MiB", v / (1024.0 * 1024.0));
    case calibrate::ParameterUnit::Watts:
      return fmt("%.4g W", v);
    case calibrate::ParameterUnit::Number:
      break;
  }
  return fmt("%.4g", v);
}

// The value as a profile writes it: a string with a unit, or a plain number.
nlohmann::ordered_json profile_value(const calibrate::Parameter& p, double v) {
  const std::string text = display(p, v);
  if (p.unit == calibrate::ParameterUnit::Number) return std::stod(text);
  return text;
}

// Sets `value` at the JSON pointer in `doc`, creating objects on the way.
void set_at(nlohmann::ordered_json& doc, const std::string& pointer, nlohmann::ordered_json value) {
  nlohmann::ordered_json* node = &doc;
  std::size_t start = 1;
  while (start <= pointer.size()) {
    const std::size_t end = std::min(pointer.find('/', start), pointer.size());
    const std::string key = pointer.substr(start, end - start);
    if (end == pointer.size()) {
      (*node)[key] = std::move(value);
      return;
    }
    if (!node->contains(key) || !(*node)[key].is_object())
      (*node)[key] = nlohmann::ordered_json::object();
    node = &(*node)[key];
    start = end + 1;
  }
}

// Whether `text` holds `word` whole: not inside a longer name ("latency" in "latency_scale") or
// number ("1" in "2.21"). A '.' counts as part of a word only between a character of it and a
// digit, so "0.756." at a sentence's end is found.
bool mentions(std::string_view text, std::string_view word) {
  const auto part = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  };
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    const std::size_t end = at + word.size();
    const bool joined_before =
        at > 0 && (part(text[at - 1]) || (text[at - 1] == '.' && at > 1 && digit(text[at - 2])));
    const bool joined_after =
        end < text.size() &&
        (part(text[end]) || (text[end] == '.' && end + 1 < text.size() && digit(text[end + 1])));
    if (!joined_before && !joined_after) return true;
  }
  return false;
}

// A profile's notes explain its values ("max_efficiency 0.756: the sustained bf16 GEMM
// maximum fitted to ..."), and a fit that changes a value would leave them quoting the old one.
// The notes nearest a changed value, beside it or in the nearest object above it that has
// notes, are marked with what changed, "[trainsim calibrate: max_efficiency 0.756 -> 0.8012;
// ...] ", when they name the value's key or quote its old value (whole words). A mark left by an
// earlier fit is replaced, keeping each value as the text below the mark gives it: a refit of a
// refitted profile reads "0.756 -> 0.5876", not a second mark over the first. A refit that writes
// the same values leaves the notes as they are.
constexpr std::string_view kMarkStart = "[trainsim calibrate: ";
constexpr std::string_view kMarkEnd =
    "; /calibration/fitted says to what. Where the text below quotes these values, it gives the "
    "ones before the arrows.] ";
// The end of marks written by the first release of this rule, read as the same mark.
constexpr std::string_view kOldMarkEnd =
    "; /calibration/fitted says to what. Where the text below quotes these values, it gives the "
    "ones before this fit.] ";

void annotate_changed_notes(const nlohmann::ordered_json& base_json,
                            const hardware::HardwareSpec& base,
                            const std::vector<calibrate::FittedValue>& values,
                            nlohmann::ordered_json& profile) {
  using Pointer = nlohmann::ordered_json::json_pointer;
  // notes pointer -> key -> (value the text below the mark gives, value now)
  std::map<std::string, std::map<std::string, std::pair<std::string, std::string>>> changes;
  // An earlier mark: its items "key before -> after", and the text below it.
  const auto split_mark = [](const std::string& notes) {
    std::map<std::string, std::pair<std::string, std::string>> items;
    if (notes.rfind(kMarkStart, 0) != 0) return std::pair{items, notes};
    std::size_t end = notes.find(kMarkEnd);
    std::size_t end_size = kMarkEnd.size();
    if (end == std::string::npos) {
      end = notes.find(kOldMarkEnd);
      end_size = kOldMarkEnd.size();
    }
    if (end == std::string::npos) return std::pair{items, notes};
    const std::string list = notes.substr(kMarkStart.size(), end - kMarkStart.size());
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t next = std::min(list.find(", ", at), list.size());
      const std::string item = list.substr(at, next - at);
      const std::size_t space = item.find(' ');
      const std::size_t arrow = item.find(" -> ");
      if (space != std::string::npos && arrow != std::string::npos && space < arrow) {
        items[item.substr(0, space)] = {item.substr(space + 1, arrow - space - 1),
                                        item.substr(arrow + 4)};
      }
      at = next + 2;
    }
    return std::pair{items, notes.substr(end + end_size)};
  };
  const auto text = [](const nlohmann::ordered_json& j) {
    return j.is_string() ? j.get<std::string>() : j.dump();
  };
  for (const auto& v : values) {
    const calibrate::Parameter& p = *v.parameter;
    const nlohmann::ordered_json now = profile_value(p, v.value);
    const Pointer at(p.pointer);
    const nlohmann::ordered_json before =
        base_json.contains(at) ? base_json.at(at) : profile_value(p, p.get(base));
    if (before == now) continue;
    for (Pointer parent = at.parent_pointer(); !parent.empty(); parent = parent.parent_pointer()) {
      const Pointer notes = parent / "notes";
      if (!profile.contains(notes) || !profile.at(notes).is_string()) continue;
      const std::string key = p.pointer.substr(parent.to_string().size() + 1);
      const auto [earlier, below] = split_mark(profile.at(notes).get<std::string>());
      const auto kept = earlier.find(key);
      // The value the text below the mark gives: an earlier mark's "before", else this base's.
      const std::string original = kept != earlier.end() ? kept->second.first : text(before);
      const std::string name = p.pointer.substr(p.pointer.rfind('/') + 1);
      // A value an earlier mark lists is kept up to date whatever the text says.
      if (kept != earlier.end() || mentions(below, name) || mentions(below, original)) {
        changes[notes.to_string()][key] = {original, text(now)};
      }
      break;
    }
    // The value's own source (`sources` beside it, keyed by its name) cites what gave the value
    // before: marked the same way, whatever its text says.
    const std::string name = p.pointer.substr(p.pointer.rfind('/') + 1);
    const Pointer source = at.parent_pointer() / "sources" / name;
    if (profile.contains(source) && profile.at(source).is_string()) {
      const auto [earlier, below] = split_mark(profile.at(source).get<std::string>());
      const auto kept = earlier.find(name);
      changes[source.to_string()][name] = {
          kept != earlier.end() ? kept->second.first : text(before), text(now)};
    }
  }
  for (const auto& [pointer, items] : changes) {
    nlohmann::ordered_json& notes = profile.at(Pointer(pointer));
    auto [all, below] = split_mark(notes.get<std::string>());
    for (const auto& [key, change] : items) all[key] = change;
    std::string list;
    for (const auto& [key, change] : all) {
      if (change.first == change.second) continue;  // back where the text below has it
      list += (list.empty() ? "" : ", ") + key + " " + change.first + " -> " + change.second;
    }
    notes = list.empty() ? below : std::string(kMarkStart) + list + std::string(kMarkEnd) + below;
  }
}

void print_residuals(std::ostream& out, const std::vector<calibrate::PointResidual>& rows,
                     const char* after_name) {
  out << "# set                                           line  point                     "
         "algorithm          measured    before  "
      << after_name << "   error\n";
  for (const auto& r : rows) {
    // An error that rounds to 0.0% prints "+0.0%", whichever side of zero it came from
    // (-3.3e-16 printed "-0.0%").
    const std::string percent = signed_fixed_text(100.0 * r.error(), 1);
    // A point's description is written whole ("gemm 16384x16384x16384 bf16" was cut at 25
    // characters), pushing the columns after it on that row; a document's point has no line.
    const std::string line_number = r.origin.line > 0 ? std::to_string(r.origin.line) : "-";
    // The set and the description whole, outside the fixed buffer: two sets whose names
    // differ past the column's 44 characters read as one when cut, and a long path (two logs
    // of one file name are labelled by path) ran past the buffer.
    std::array<char, 256> line{};
    std::snprintf(line.data(), line.size(), " %5s  ", line_number.c_str());
    std::array<char, 256> figures{};
    std::snprintf(figures.data(), figures.size(), " %-16.16s %9.4g %9.4g %9.4g %6s%%%s",
                  r.algorithm.c_str(), r.measured, r.before, r.after, percent.c_str(),
                  r.origin.reported_problem ? "  (reported problem)" : "");
    out << "  " << io::column_text(io::escape_control(r.origin.label), 44, false) << line.data()
        << io::column_text(r.what, 25, false) << figures.data() << "  " << r.unit << '\n';
  }
}

// Mean and largest |error| per measurement set, in first-seen order.
struct SetSummary {
  std::string label;
  int points = 0;
  double mean_before = 0.0;
  double mean_after = 0.0;
  double max_after = 0.0;
  bool problem = false;
};

std::vector<SetSummary> summarize(const std::vector<calibrate::PointResidual>& rows) {
  std::vector<SetSummary> out;
  for (const auto& r : rows) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const SetSummary& s) { return s.label == r.origin.label; });
    if (it == out.end()) {
      out.push_back(SetSummary{.label = r.origin.label, .problem = r.origin.reported_problem});
      it = out.end() - 1;
    }
    ++it->points;
    it->mean_before += std::abs(r.error_before());
    it->mean_after += std::abs(r.error());
    it->max_after = std::max(it->max_after, std::abs(r.error()));
  }
  for (auto& s : out) {
    s.mean_before /= s.points;
    s.mean_after /= s.points;
  }
  return out;
}

void print_summary(std::ostream& out, const std::vector<SetSummary>& sets, const char* after) {
  out << "# set                                           points  mean|err| before  mean|err| "
      << after << "  max|err| " << after << "\n";
  for (const auto& s : sets) {
    std::array<char, 256> line{};
    std::snprintf(line.data(), line.size(), " %7d  %15.1f%%  %14.1f%%  %13.1f%%%s", s.points,
                  100.0 * s.mean_before, 100.0 * s.mean_after, 100.0 * s.max_after,
                  s.problem ? "  (reported problem)" : "");
    out << "  " << io::column_text(io::escape_control(s.label), 44, false) << line.data() << '\n';
  }
}

nlohmann::ordered_json points_json(const std::vector<calibrate::PointResidual>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    out.push_back({{"set", r.origin.label},
                   {"source", r.origin.source},
                   {"line", r.origin.line > 0 ? nlohmann::ordered_json(r.origin.line)
                                              : nlohmann::ordered_json(nullptr)},
                   {"point", r.what},
                   {"algorithm", r.algorithm},
                   {"unit", r.si_unit},
                   {"measured", r.measured * r.si_scale},
                   {"before", r.before * r.si_scale},
                   {"after", r.after * r.si_scale},
                   {"error", r.error()},
                   {"reported_problem", r.origin.reported_problem}});
  }
  return out;
}

nlohmann::ordered_json sets_json(const std::vector<SetSummary>& sets) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& s : sets) {
    out.push_back({{"set", s.label},
                   {"points", s.points},
                   {"mean_abs_error_before", s.mean_before},
                   {"mean_abs_error_after", s.mean_after},
                   {"max_abs_error_after", s.max_after},
                   {"reported_problem", s.problem}});
  }
  return out;
}

// The GPU model a device name names ("NVIDIA H100 80GB HBM3" -> "H100", "NVIDIA H100 PCIe" ->
// "H100 PCIe"), "" when none of the known ones. Longer names first, so that GB200 is not read
// as B200 nor GH200 as H200; the H100 and A100 PCIe and NVL cards are parts of their own (other
// peaks, power and links than the SXM modules the profiles model).
std::string gpu_model(const std::string& name) {
  static const std::array<const char*, 15> kModels = {"GB200", "GB300", "GH200", "MI300X", "MI250X",
                                                      "B200",  "B300",  "H100",  "H200",   "H800",
                                                      "A100",  "A800",  "V100",  "L40S",   "H20"};
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string model : kModels) {
    if (upper.find(model) == std::string::npos) continue;
    if (model == "H100" || model == "A100") {
      if (upper.find("PCIE") != std::string::npos) return model + " PCIe";
      if (upper.find(" NVL") != std::string::npos) return model + " NVL";
    }
    return model;
  }
  return "";
}

int run_calibrate(const CalibrateOptions& o, std::ostream& out, std::ostream& err) {
  if (o.format != "table" && o.format != "json") {
    throw ConfigError("--format: unknown format '" + o.format + "'; expected table or json");
  }
  if (o.inputs.empty()) {
    throw ConfigError(
        "calibrate: expected at least one input: a measurement document (.json) "
        "or an nccl-tests log");
  }
  // The same file twice would count its points twice in every fit (as merge refuses a repeated
  // shard). Paths are compared as files: ./a.txt and a.txt are one input.
  for (std::size_t i = 0; i < o.inputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (o.inputs[i] == o.inputs[j] || std::filesystem::equivalent(o.inputs[i], o.inputs[j], ec)) {
        throw ConfigError(o.inputs[i], "",
                          "given twice (inputs " + std::to_string(j + 1) + " and " +
                              std::to_string(i + 1) +
                              "); expected each measurement once, or its points count twice");
      }
    }
  }
  // The fitted profile may replace the --base file (a refit in place), never a measurement.
  io::require_file_path(o.output, "command line (-o)", "the fit's tables");
  io::require_not_an_input(o.output, "command line (-o)", o.inputs);
  // The output's temporary is made now, so that a path that cannot be written (a folder, a
  // missing folder) fails before the fit and its tables, not after them.
  std::optional<io::AtomicFile> output_file;
  if (!o.output.empty()) output_file.emplace(o.output);
  calibrate::FitOptions options;
  try {
    // A bare count of bytes ("0", "8"), as `collective --min-bytes` takes, or a size with a unit.
    options.min_collective_bytes = Bytes(io::parse_byte_count_or_size(o.min_bytes));
  } catch (const ConfigError& e) {
    // The unit parser's line asks for a unit; a bare count is good too.
    const bool names_counts = e.problem().find("count of bytes") != std::string::npos;
    throw ConfigError("--min-bytes: " + e.problem() +
                      (names_counts ? "" : " (or a bare count of bytes like 1048576)"));
  }
  if (!(options.min_collective_bytes.value() >= 0.0)) {
    throw ConfigError("--min-bytes: expected a size of 0 or more like 1MiB, got '" + o.min_bytes +
                      "'");
  }
  // As collective's size flags (the error that no point was left gave a larger bound as
  // -9223372036854775808 bytes).
  io::require_int64_bytes("--min-bytes", o.min_bytes, options.min_collective_bytes.value());
  for (const auto& f : o.freeze) {
    if (calibrate::find_parameter(f) == nullptr) {
      throw ConfigError("--freeze: unknown parameter '" + f +
                        "'; expected a parameter pointer of docs/calibration.md like "
                        "/collective/measured/ring/Simple/latency_scale");
    }
  }
  // Each frozen pointer once, in the order given (a repeat was listed twice).
  std::vector<std::string> frozen;
  for (const auto& f : o.freeze) {
    if (std::find(frozen.begin(), frozen.end(), f) == frozen.end()) frozen.push_back(f);
  }
  options.frozen = frozen;

  // An unknown id or a missing file names the flag; a bad profile file names itself.
  const auto from_base = [&o](const auto& load) {
    try {
      return load(o.base);
    } catch (const ConfigError& e) {
      throw e.located("command line (--base)", "");
    }
  };
  const io::HardwareDocument doc =
      from_base([](const std::string& b) { return io::load_hardware_document(b); });
  const hardware::HardwareSpec base =
      from_base([](const std::string& b) { return io::load_hardware(b); });
  const io::CalibrationInputs in = io::read_calibration_inputs(o.inputs, o.include_problem_logs);
  // Nor may it replace a log a document names (the command line's inputs are checked above).
  io::require_not_an_input(o.output, "command line (-o)", in.files);
  // Inputs that hold nothing but logs marked reported_problem leave the fit no point at all: that
  // is the cause to name, not the minimum size the fit's own message points at.
  {
    std::size_t num_points = 0;
    calibrate::for_each_points([&num_points](const auto& points) { num_points += points.size(); },
                               in.points);
    if (num_points == 0 && !in.skipped.empty()) {
      const std::size_t k = in.skipped.size();
      throw ConfigError("calibrate: " +
                        (k == 1 ? std::string("the one log of the inputs is")
                                : "all " + std::to_string(k) + " logs of the inputs are") +
                        " marked reported_problem and skipped, which leaves no point to fit (" +
                        io::escape_control(in.skipped.front().substr(
                            0, in.skipped.front().find(": marked reported_problem"))) +
                        (k > 1 ? ", ..." : "") +
                        "); expected a healthy log or measurement point, or "
                        "--include-problem-logs");
    }
  }
  // Notes and warnings on the inputs wait for the fit: a point it refuses (one faster than the
  // hardware allows) is then the run's one line on stderr, not the last of several.
  std::ostringstream early;
  for (const auto& s : in.skipped) early << "note: skipped " << io::escape_control(s) << '\n';
  for (const auto& r : in.repeated) early << "warning: " << io::escape_control(r) << '\n';
  for (const auto& r : in.inferred) early << "note: " << io::escape_control(r) << '\n';
  // Points of another NCCL release are priced with the profile's NCCL choices: where the
  // algorithm or protocol NCCL picks changed between the two, the fit absorbs the change.
  {
    const auto major_minor = [](const std::string& v) {
      const auto first = v.find('.');
      if (first == std::string::npos) return std::string();
      const auto second = v.find_first_not_of("0123456789", first + 1);
      return v.substr(0, second);
    };
    const std::string profile_nccl = major_minor(base.collective.version);
    std::set<std::pair<std::string, std::string>> told;
    for (const auto& p : in.points.collectives) {
      if (!p.nccl_version || profile_nccl.empty()) continue;
      const std::string mm = major_minor(*p.nccl_version);
      if (mm.empty() || mm == profile_nccl) continue;
      if (!told.insert({p.origin.source, *p.nccl_version}).second) continue;
      early << "warning: " << io::escape_control(p.origin.source) << " ran NCCL "
            << io::escape_control(*p.nccl_version) << "; profile '" << io::escape_control(base.id)
            << "' prices NCCL " << io::escape_control(profile_nccl)
            << "'s algorithm and protocol choices, so where they differ the fit absorbs it\n";
    }
  }
  // A log whose every size is below --min-bytes gives the fit nothing: said, where it was left
  // out in silence beside other inputs (alone, it is the error of no point to fit).
  {
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> kept;  // source -> (kept, all)
    std::vector<std::string> order;
    for (const auto& p : in.points.collectives) {
      auto [it, added] = kept.try_emplace(p.origin.source, 0, 0);
      if (added) order.push_back(p.origin.source);
      ++it->second.second;
      if (p.bytes >= options.min_collective_bytes) ++it->second.first;
    }
    for (const auto& source : order) {
      const auto [fitted, all] = kept[source];
      if (fitted > 0) continue;
      early << "note: " << io::escape_control(source) << ": "
            << (all == 1 ? "its one collective size is"
                         : "all its " + std::to_string(all) + " collective sizes are")
            << " below --min-bytes (" << io::escape_control(o.min_bytes)
            << "), so none is fitted\n";
    }
  }
  // Points of another GPU are fitted as this profile's, and its rates land in the profile: say
  // so (not an error: the Hopper profiles take the GEMM contention measured on one H200).
  // A device of no known model is compared by its name with the profile's GPU, "NVIDIA" and
  // "GeForce" left out ("NVIDIA GeForce RTX 4090" is a profile's "RTX 4090"; other product
  // words, "Tesla T4" against "T4", still differ): an "NVIDIA GeForce RTX 4090" log fitted into
  // h100-dgx said nothing.
  const std::string profile_gpu = gpu_model(base.gpu.name);
  const auto same_name = [](std::string a, std::string b) {
    for (std::string* s : {&a, &b}) {
      for (char& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string words;
      std::istringstream name_words(*s);
      for (std::string w; name_words >> w;) {
        if (w == "nvidia" || w == "geforce") continue;
        words += (words.empty() ? "" : " ") + w;
      }
      *s = words;
    }
    return a == b;
  };
  for (const auto& [file, device] : in.devices) {
    const std::string measured = gpu_model(device);
    const bool known = !measured.empty() && !profile_gpu.empty();
    if (known ? measured == profile_gpu : same_name(device, base.gpu.name)) continue;
    early << "warning: " << io::escape_control(file) << " was measured on "
          << io::escape_control(device)
          << (measured.empty() ? ", a GPU calibrate does not recognise" : "") << ", not the "
          << io::escape_control(profile_gpu.empty() ? base.gpu.name : profile_gpu)
          << " of profile '" << io::escape_control(base.id)
          << "': its points are fitted as this profile's\n";
  }

  // --reset: every collective term back to NCCL's model and every parameter the inputs inform
  // to its neutral value, so "before" is the uncalibrated model and nothing of an earlier fit
  // stays in the profile.
  hardware::HardwareSpec start = base;
  if (o.reset) {
    if (doc.json.contains("collective") && doc.json["collective"].contains("measured")) {
      early << "note: --reset: the base's measured collective terms go back to NCCL's model"
            << (o.freeze.empty() ? "" : " (frozen terms keep the base's values)") << '\n';
    }
    start.collective.measured = {};
    for (const auto& v : calibrate::fit(start, in.points, options).values) {
      v.parameter->set(start, v.parameter->neutral);
    }
  }
  // A frozen parameter keeps the base's value, as --freeze says, --reset or not (with --reset it
  // was held at NCCL's neutral value). The value is pinned: an LL or LL128 term that inherits
  // Simple's would otherwise follow Simple's refit, frozen or not.
  for (const auto& f : frozen) {
    const calibrate::Parameter& p = *calibrate::find_parameter(f);
    p.set(start, p.get(base));
  }
  const calibrate::FitResult result = calibrate::fit(start, in.points, options);
  err << early.str();
  // Measurement sets in first-seen order: a log, or one point of a document.
  std::vector<std::string> labels;
  for (const auto& r : result.residuals) {
    if (std::find(labels.begin(), labels.end(), r.origin.label) == labels.end()) {
      labels.push_back(r.origin.label);
    }
  }

  const bool json = o.format == "json";
  nlohmann::ordered_json report;
  std::ostringstream table;
  std::ostream& text = json ? table : out;  // the table goes nowhere with --format json
  text << "# trainsim calibrate: " << io::escape_control(base.id) << " ("
       << io::escape_control(base.name) << ")\n";
  const auto num_held = static_cast<std::size_t>(std::count_if(
      result.values.begin(), result.values.end(), [](const auto& v) { return v.held; }));
  text << "# " << result.residuals.size() << " points from " << labels.size()
       << " measurement sets; " << result.values.size() - num_held << " parameters "
       << (result.base_kept ? std::string("kept at the base's values (no fit lowers the cost at "
                                          "them by more than 0.1%)")
                            : "fitted in " + std::to_string(result.iterations) + " iterations")
       << (result.converged ? "" : " (not converged)")
       << (num_held > 0
               ? ", " + std::to_string(num_held) + " held at the base's value (not determined)"
               : std::string())
       << "\n#\n";
  print_residuals(text, result.residuals, "after");
  text << "#\n";
  print_summary(text, summarize(result.residuals), "after");
  // Pointers in full (--freeze takes them as printed): the column is as wide as the longest.
  int width = 58;
  for (const auto& v : result.values) {
    width = std::max(width, static_cast<int>(v.parameter->pointer.size()));
  }
  for (const auto& f : frozen) width = std::max(width, static_cast<int>(f.size()));
  {
    // The header's columns over the rows' (same widths as the rows' format below).
    std::array<char, 512> header{};
    std::snprintf(header.data(), header.size(), "# %-*s %10s %12s %10s  %-22s %6s %8s", width,
                  "parameter", "before", "fitted", "sigma", "bounds", "points", "rms err");
    text << "#\n" << header.data() << '\n';
  }
  for (const auto& v : result.values) {
    const auto& p = *v.parameter;
    std::array<char, 512> line{};
    std::snprintf(line.data(), line.size(), "  %-*s %10s %12s %10s  [%s, %s] %6d %7.1f%%%s", width,
                  p.pointer.c_str(), display(p, v.before).c_str(), display(p, v.value).c_str(),
                  v.sigma ? display(p, *v.sigma).c_str() : "n/a", display(p, p.lower).c_str(),
                  display(p, p.upper).c_str(), v.points, 100.0 * v.rms_error,
                  v.at_bound ? "  AT BOUND" : "");
    text << line.data() << '\n';
  }
  for (const auto& f : frozen) {
    const calibrate::Parameter& p = *calibrate::find_parameter(f);
    std::array<char, 512> line{};
    std::snprintf(line.data(), line.size(), "  %-*s %10s %12s", width, p.pointer.c_str(),
                  display(p, p.get(start)).c_str(), "frozen");
    text << line.data() << '\n';
  }
  if (!result.converged) {
    err << "warning: the fit did not converge in " << result.iterations
        << " iterations; its values are where it stopped (the residuals show how well they "
           "fit; --freeze a parameter the points hardly determine)\n";
  }

  // Reported-problem logs fitted on purpose: say how badly they fit.
  for (const auto& s : summarize(result.residuals)) {
    if (!s.problem) continue;
    err << "warning: " << s.label << " is marked reported_problem: mean |error| "
        << fmt("%.1f", 100.0 * s.mean_after) << "%, max " << fmt("%.1f", 100.0 * s.max_after)
        << "% after the fit";
    std::vector<std::string> bound;
    for (const auto& v : result.values) {
      if (v.at_bound &&
          std::find(v.fitted_to.begin(), v.fitted_to.end(), s.label) != v.fitted_to.end()) {
        bound.push_back(v.parameter->pointer);
      }
    }
    for (std::size_t i = 0; i < bound.size(); ++i) {
      err << (i == 0 ? "; at a bound: " : ", ") << bound[i];
    }
    err << "; do not use this profile for predictions\n";
  }
  // Multi-node terms fitted to some node counts price the others by extrapolation: a fit whose
  // profile prices calls above its links, beyond what the base did, says so (a ring factor fitted
  // to one 8-node log priced 2 nodes at 501.7 GB/s of busbw over 400 GB/s of NICs, silently).
  if (!in.points.collectives.empty()) {
    const auto fitted = calibrate::line_rate_excess(result.fitted);
    const auto before = calibrate::line_rate_excess(base);
    const double was = before ? before->excess : 0.0;
    if (fitted && fitted->excess > 0.05 && fitted->excess > was + 0.01) {
      std::set<std::int64_t> node_counts;
      for (const auto& p : in.points.collectives) node_counts.insert(p.group.nodes);
      std::string counts;
      for (const std::int64_t n : node_counts) {
        counts += (counts.empty() ? "" : ", ") + std::to_string(n);
      }
      err << "warning: the fitted profile prices " << fitted->call << " (" << fitted->algorithm
          << ") at " << fmt("%.1f", fitted->busbw_gbs) << " busbw GB/s, "
          << fmt("%.1f", 100.0 * fitted->excess) << "% above what its NVLink and NICs carry ("
          << fmt("%.1f", fitted->limit_gbs) << "; the base: "
          << (was >= 0.0005 ? fmt("%.1f", 100.0 * was) + "% above" : std::string("within"))
          << "); the points are of " << counts
          << (node_counts.size() == 1 && *node_counts.begin() == 1 ? " node" : " nodes")
          << ": measure the node counts you will simulate, or --freeze the multi-node terms\n";
    }
  }
  const bool no_dof = result.residuals.size() <= result.values.size();
  if (no_dof) {
    err << "warning: " << result.residuals.size() << " points for " << result.values.size()
        << " parameters: no degrees of freedom left, so no standard errors\n";
  }
  for (const auto& v : result.values) {
    if (v.held) {
      err << "warning: " << v.parameter->pointer
          << " is not determined by the points (no standard error); it keeps the base's value, "
          << display(*v.parameter, v.value) << "\n";
    } else if (!v.sigma && !no_dof) {
      err << "warning: " << v.parameter->pointer
          << " is not determined by the points (no standard error); it keeps the value the "
             "fit ended at\n";
    }
    if (v.at_bound) {
      err << "warning: " << v.parameter->pointer << " = " << display(*v.parameter, v.value)
          << " is at a bound (within 0.1% of the span) of ["
          << display(*v.parameter, v.parameter->lower) << ", "
          << display(*v.parameter, v.parameter->upper) << "]\n";
    }
    // A latency the points cannot tell from the fill (docs/calibration.md, "The fit"), which
    // then prices the smaller messages they do not hold.
    if (v.smallest_bytes && !v.held) {
      const std::string& pointer = v.parameter->pointer;
      const calibrate::Parameter* saturation =
          calibrate::find_parameter(pointer.substr(0, pointer.rfind('/')) + "/fill_saturation");
      const double fill_end = saturation != nullptr ? saturation->get(result.fitted) : 0.0;
      if (saturation != nullptr && *v.smallest_bytes >= fill_end) {
        err << "warning: " << pointer << " = " << display(*v.parameter, v.value)
            << " is fitted to messages from " << calibrate::size_text(*v.smallest_bytes)
            << ", all at or above the fill's saturation (" << calibrate::size_text(fill_end)
            << "), where NCCL's pipeline fill adds a constant time as a latency does: the points "
               "cannot tell the two apart, and it sets the time of smaller messages by "
               "extrapolation; measure smaller sizes or keep the base's value (--freeze "
            << pointer << ")\n";
      }
    }
  }

  if (o.leave_one_out) {
    text << "#\n# leave one out: each set predicted by a fit to the others, from a prior with\n"
            "# every collective term at NCCL's model and every other fitted parameter at its\n"
            "# neutral value; before = prior\n#\n";
    // Nothing the base learned from earlier fits (which may have seen the held-out set) may
    // reach its prediction: all measured terms go back to NCCL's model.
    hardware::HardwareSpec prior = start;
    prior.collective.measured = {};
    for (const auto& v : result.values) v.parameter->set(prior, v.parameter->neutral);
    std::vector<calibrate::PointResidual> predicted;
    for (const auto& label : labels) {
      calibrate::MeasurementSet rest = in.points;
      calibrate::MeasurementSet held;
      calibrate::for_each_points(
          [&label](auto& all, auto& kept) {
            std::remove_reference_t<decltype(all)> others;
            for (auto& p : all) (p.origin.label == label ? kept : others).push_back(p);
            all = std::move(others);
          },
          rest, held);
      hardware::HardwareSpec without = prior;
      try {
        without = calibrate::fit(prior, rest, options).fitted;
      } catch (const ConfigError&) {
        // The others inform nothing: the prediction is the prior's.
      }
      auto rows = calibrate::compare(prior, without, held, options);
      predicted.insert(predicted.end(), rows.begin(), rows.end());
    }
    print_residuals(text, predicted, "predicted");
    text << "#\n";
    print_summary(text, summarize(predicted), "predicted");
    report["leave_one_out"] = {{"points", points_json(predicted)},
                               {"sets", sets_json(summarize(predicted))}};
  }

  if (json) {
    nlohmann::ordered_json params = nlohmann::ordered_json::array();
    for (const auto& v : result.values) {
      const auto& p = *v.parameter;
      params.push_back({{"pointer", p.pointer},
                        {"before", v.before},
                        {"value", v.value},
                        {"sigma", v.sigma ? nlohmann::ordered_json(*v.sigma) : nullptr},
                        {"held", v.held},
                        {"lower", p.lower},
                        {"upper", p.upper},
                        {"at_bound", v.at_bound},
                        {"points", v.points},
                        {"rms_error", v.rms_error},
                        {"max_error", v.max_error},
                        {"fitted_to", v.fitted_to}});
    }
    nlohmann::ordered_json json_out;
    json_out["context"] = {{"schema_version", 1},
                           {"trainsim_version", kVersion},
                           {"base", base.id},
                           {"inputs", o.inputs},
                           {"iterations", result.iterations},
                           {"converged", result.converged},
                           {"base_kept", result.base_kept}};
    json_out["points"] = points_json(result.residuals);
    json_out["sets"] = sets_json(summarize(result.residuals));
    json_out["parameters"] = params;
    if (report.contains("leave_one_out")) json_out["leave_one_out"] = report["leave_one_out"];
    out << json_out.dump(2) << '\n';
  }

  if (!o.output.empty()) {
    nlohmann::ordered_json profile = doc.json;
    nlohmann::ordered_json fitted = nlohmann::ordered_json::object();
    bool kept_earlier = false;  // a value of an earlier fit stays in the profile
    if (o.reset) {
      // The spec started from NCCL's model: so does the profile's measured block, notes too.
      profile["collective"].erase("measured");
    }
    if (doc.json.contains("calibration") && doc.json["calibration"].contains("fitted")) {
      // Values an earlier fit left and this one did not refit stay, with their record: with
      // --reset too, but for the collective terms --reset drops (a frozen one stays). A
      // gemm_comm_contention kept by --reset used to lose its record.
      for (const auto& [pointer, record] : doc.json["calibration"]["fitted"].items()) {
        // A held value (not determined by the points) keeps the base's value and its record.
        const bool refitted = std::any_of(result.values.begin(), result.values.end(),
                                          [&pointer = pointer](const auto& v) {
                                            return v.parameter->pointer == pointer && !v.held;
                                          });
        const bool pinned = std::find(frozen.begin(), frozen.end(), pointer) != frozen.end();
        const bool dropped = o.reset && !pinned && pointer.rfind("/collective/", 0) == 0;
        if (!refitted && !dropped) {
          fitted[pointer] = record;
          kept_earlier = true;
        }
      }
    }
    bool collective_fitted = false;
    for (const auto& v : result.values) {
      const auto& p = *v.parameter;
      set_at(profile, p.pointer, profile_value(p, v.value));
      collective_fitted = collective_fitted || p.pointer.rfind("/collective/", 0) == 0;
      // Held: the base's value, so the base's record (kept above) or none; the points did not
      // determine it, so it is fitted to none of them.
      if (v.held) continue;
      nlohmann::ordered_json record;
      record["value"] = v.value;
      record["sigma"] = v.sigma ? nlohmann::ordered_json(*v.sigma) : nullptr;
      record["points"] = v.points;
      record["rms_error"] = std::stod(fmt("%.4g", v.rms_error));
      record["max_error"] = std::stod(fmt("%.4g", v.max_error));
      record["at_bound"] = v.at_bound;
      record["fitted_to"] = v.fitted_to;
      fitted[p.pointer] = std::move(record);
    }
    annotate_changed_notes(doc.json, base, result.values, profile);
    // A frozen term keeps the base's value in the file too: written where --reset dropped the
    // measured block, or where the base did not write it (an inherited LL or LL128 term, now
    // pinned); a value the base's file holds stays as written.
    for (const auto& f : frozen) {
      const calibrate::Parameter& p = *calibrate::find_parameter(f);
      const bool written = doc.json.contains(nlohmann::ordered_json::json_pointer(p.pointer));
      if (o.reset || !written) {
        set_at(profile, p.pointer, profile_value(p, p.get(start)));
        collective_fitted = collective_fitted || p.pointer.rfind("/collective/", 0) == 0;
      }
    }
    if (collective_fitted && !profile["collective"]["measured"].contains("notes")) {
      profile["collective"]["measured"]["notes"] =
          "Fitted by trainsim calibrate; /calibration says to what and how well. Terms not "
          "listed there keep NCCL's model (hardware::MeasuredTerms defaults).";
    }
    // The inputs of every value the profile keeps: an earlier fit's, whose values stay unless
    // --reset, then this one's, each file once.
    std::vector<std::string> inputs;
    if (kept_earlier && doc.json["calibration"].contains("inputs")) {
      for (const auto& i : doc.json["calibration"]["inputs"]) {
        if (i.is_string()) inputs.push_back(i.get<std::string>());
      }
    }
    // Each by the label its measurement set has in fitted_to (io::read_calibration_inputs: its
    // file name, or the path as given where another file read, a document's log included, has
    // that name): two logs both called all_reduce.txt were one input here.
    for (const auto& i : o.inputs) {
      std::string name = std::filesystem::path(i).filename().string();
      for (const auto& [path, label] : in.labels) {
        if (path == i) name = label;
      }
      if (std::find(inputs.begin(), inputs.end(), name) == inputs.end()) inputs.push_back(name);
    }
    profile["calibration"] = {{"tool", std::string("trainsim ") + kVersion + " calibrate"},
                              {"inputs", inputs},
                              {"fitted", fitted}};
    // Check that what we write loads, before writing it.
    (void)io::load_hardware_from_string(profile.dump(), o.output);
    output_file->write(profile.dump(2) + "\n");
    output_file->commit();
    err << "wrote " << o.output << '\n';
  }
  return 0;
}

}  // namespace

void register_calibrate(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "fit a hardware profile to measurement documents and nccl-tests logs, with residuals");
  cmd->add_option("--base", opts->base, "built-in profile id or profile JSON file to start from")
      ->required();
  cmd->add_option("inputs", opts->inputs,
                  "measurement documents (.json, docs/calibration-measurements.md) and "
                  "nccl-tests logs");
  cmd->add_option("-o,--output", opts->output, "write the fitted profile here");
  cmd->add_option("--min-bytes", opts->min_bytes, "collective sizes below this are not fitted")
      ->capture_default_str();
  cmd->add_flag("--include-problem-logs", opts->include_problem_logs,
                "also fit logs a document marks reported_problem");
  cmd->add_flag("--leave-one-out", opts->leave_one_out,
                "predict each measurement set from a fit to the others");
  cmd->add_option("--format", opts->format, "table or json")->capture_default_str();
  cmd->add_flag("--reset", opts->reset,
                "start the parameters the inputs inform from NCCL's model, not the base's values");
  cmd->add_option("--freeze", opts->freeze,
                  "keep this parameter (a pointer like /collective/measured/ring/Simple/"
                  "latency_scale); repeat for several")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->callback([opts, &exit_code] { exit_code = run_calibrate(*opts, std::cout, std::cerr); });
}

}  // namespace trainsim::cli
