#include "sim/io/kineto_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "trainsim/error.hpp"
#include "trainsim/parallel/scenario.hpp"

#include "sim/io/json_reader.hpp"

namespace trainsim::io {
namespace {

// The same limits as the measurement reader (measurement_reader.cpp): 64 MiB of text and 64
// levels of nesting. A Chrome trace nests 3 or 4 levels (document, events, event, args).
// Traces of long profiling windows can exceed 64 MiB: profile fewer steps (schedule(active=2)).
constexpr std::size_t kMaxBytes = std::size_t{64} << 20U;
constexpr int kMaxDepth = 64;
// Largest ts and dur read, in microseconds (time_field).
constexpr double kMaxTimestampUs = 1e17;
constexpr double kMaxDurationUs = 1e12;
constexpr double kMinStepUs = 1e-3;
const std::string kExpectTrace =
    "expected a PyTorch profiler trace (a JSON file from prof.export_chrome_trace() or "
    "tensorboard_trace_handler)";

bool is_gzip(std::string_view text) {
  // RFC 1952 §2.3.1: every gzip member starts with ID1 = 0x1f, ID2 = 0x8b.
  return text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1fU &&
         static_cast<unsigned char>(text[1]) == 0x8bU;
}

ConfigError gzip_error(const std::string& source) {
  return ConfigError(source, "",
                     "gzip-compressed data; expected an uncompressed JSON trace (this trainsim "
                     "is built without zlib): run `gunzip -k " +
                         source + "` and pass the .json file");
}

nlohmann::json parse_text(const std::string& text, const std::string& source) {
  if (is_gzip(text)) throw gzip_error(source);
  return parse_checked_json(text, source, kMaxBytes, kMaxDepth, "a trace", kExpectTrace,
                            DuplicateKeys::Allow);
}

// The categories of GPU work (kernels and copies), lower-cased: libkineto's and early Kineto's
// spellings (read_event).
bool is_gpu_category(const std::string& cat) {
  return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "memcpy" ||
         cat == "memset";
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Whether `v` is a JSON integer an int64 holds: nlohmann reads 2^63 to 2^64 - 1 as unsigned,
// which get<std::int64_t>() wraps to negative values (18446744073709551615 to -1).
bool is_int64(const nlohmann::json& v) {
  return v.is_number_integer() && (!v.is_number_unsigned() ||
                                   v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX));
}

// An integer from a JSON integer, or from the digits at the end of a string ("stream 7 ").
std::optional<std::int64_t> integer_of(const nlohmann::json& v) {
  if (is_int64(v)) return v.get<std::int64_t>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    std::size_t end = s.size();
    while (end > 0 && std::isspace(static_cast<unsigned char>(s[end - 1])) != 0) --end;
    std::size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(s[begin - 1])) != 0) --begin;
    std::int64_t out = 0;
    const auto [ptr, ec] = std::from_chars(s.data() + begin, s.data() + end, out);
    if (begin < end && ec == std::errc() && ptr == s.data() + end) return out;
  }
  return std::nullopt;
}

// The event's "args", checked where compare reads it: an object, or absent (nullptr).
const nlohmann::json* event_args(const nlohmann::json& event, const std::string& source,
                                 const std::string& pointer) {
  const auto args = event.find("args");
  if (args == event.end()) return nullptr;
  if (!args->is_object()) {
    throw ConfigError(source, pointer + "/args",
                      "expected an object of the event's arguments, got " + describe_json(*args));
  }
  return &*args;
}

// args[key] as libkineto writes its ids (correlation, device, stream): an integer >= 0, or
// nullopt where absent or -1 (HTA's reader writes a missing stream as -1). Anything else is
// refused: a kernel whose id cannot be read would move to the time-based assignment, or to
// another stream, without a word.
std::optional<std::int64_t> arg_id(const nlohmann::json* args, const char* key, const char* what,
                                   const std::string& source, const std::string& pointer) {
  if (args == nullptr) return std::nullopt;
  const auto v = args->find(key);
  if (v == args->end()) return std::nullopt;
  if (!is_int64(*v) || v->get<std::int64_t>() < -1) {
    throw ConfigError(source, pointer + "/args/" + key,
                      std::string("expected ") + what +
                          " (an integer from 0 to 2^63 - 1, or -1 for none, as Kineto writes "
                          "it), got " +
                          describe_json(*v));
  }
  const auto id = v->get<std::int64_t>();
  return id < 0 ? std::nullopt : std::optional<std::int64_t>(id);
}

// args[key] as a string, "" where absent; anything else is refused.
std::string arg_string(const nlohmann::json* args, const char* key, const std::string& source,
                       const std::string& pointer) {
  if (args == nullptr) return {};
  const auto v = args->find(key);
  if (v == args->end()) return {};
  if (!v->is_string()) {
    throw ConfigError(source, pointer + "/args/" + key,
                      "expected a string, got " + describe_json(*v));
  }
  return v->get<std::string>();
}

// "ProfilerStep#12" -> 12.
std::optional<std::int64_t> step_number(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kPrefix.size());
  std::int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || n < 0) {
    return std::nullopt;  // PyTorch numbers its steps from 0
  }
  return n;
}

enum class Kind { Gpu, Launch, Step };

// Whether two ranges (ts, dur) in microseconds overlap: ranges that only touch, one ending where
// the other starts, do not (two steps, one after the other), unless `touching` (a launch's
// driver call that starts where its runtime call ends, in a trace of whole microseconds); two
// starting at one time do, even of no length.
bool overlap(std::pair<double, double> a, std::pair<double, double> b, bool touching = false) {
  if (touching) return a.first <= b.first + b.second && b.first <= a.first + a.second;
  return a.first == b.first || (a.first < b.first + b.second && b.first < a.first + a.second);
}

// An X event of interest, with ts and dur checked, in microseconds as in the file.
struct RawEvent {
  Kind kind = Kind::Gpu;
  std::string name;
  std::string category;
  double ts_us = 0.0;
  double dur_us = 0.0;
  std::int64_t correlation = -1;
  std::int64_t device = -1;
  std::int64_t stream = -1;
  std::string collective_name;
  std::int64_t step = 0;
};

class TraceParser {
 public:
  explicit TraceParser(std::string source) : source_(std::move(source)) {}

  KinetoTrace parse(const std::string& text) {
    const nlohmann::json doc = parse_text(text, source_);
    const nlohmann::json* events = nullptr;
    std::string prefix;
    if (doc.is_array()) {
      events = &doc;  // the JSON Array Format of the Trace Event Format
    } else if (doc.is_object()) {
      const auto found = doc.find("traceEvents");
      if (found == doc.end()) {
        throw ConfigError(source_, "/",
                          "not a Chrome trace: no \"traceEvents\" key; " + kExpectTrace +
                              ", got an object without it");
      }
      if (!found->is_array()) {
        throw ConfigError(source_, "/traceEvents",
                          "expected an array of trace events, got " + describe_json(*found));
      }
      events = &*found;
      prefix = "/traceEvents";
      read_distributed_info(doc);
    } else {
      throw ConfigError(source_, "/",
                        "not a Chrome trace; " + kExpectTrace +
                            " ({\"traceEvents\": [...]} or an array of events), got " +
                            describe_json(doc));
    }
    std::size_t index = 0;
    // The legacy autograd profiler (use_kineto=False, PyTorch < 1.8) writes complete events
    // with no category (its flow events, with use_cuda, carry "cpu_to_cuda"): such a file is
    // named for what it is.
    legacy_ = std::none_of(events->begin(), events->end(), [](const nlohmann::json& e) {
      if (!e.is_object() || !e.contains("cat")) return false;
      const auto ph = e.find("ph");
      return ph != e.end() && ph->is_string() && ph->get_ref<const std::string&>() == "X";
    });
    for (const auto& e : *events) read_event(e, prefix + "/" + std::to_string(index++));
    const std::string where = prefix.empty() ? "/" : prefix;
    // Copies alone (a memset, a memcpy) are no step to compare: such a trace was taken, and one
    // 10 us memset was set beside the whole simulated step.
    if (!has_kernel_) {
      throw ConfigError(
          source_, where,
          "no GPU kernels (events with cat \"kernel\"); expected a trace recorded "
          "with ProfilerActivity.CUDA, got " +
              std::to_string(events->size()) + " events and " +
              (gpu_.empty() ? std::string("no complete (\"ph\" \"X\") event on the GPU")
                            : std::to_string(gpu_.size()) + " GPU copies or fills, no kernel") +
              (trace_.skipped_gpu_events > 0
                   ? "; " + std::to_string(trace_.skipped_gpu_events) +
                         " GPU events in another phase (\"ph\" other than \"X\") were skipped"
                   : std::string()));
    }
    if (steps_.empty()) {
      throw ConfigError(source_, where,
                        "no ProfilerStep#N ranges; expected a trace recorded with a "
                        "torch.profiler schedule and prof.step() called every iteration, got " +
                            std::to_string(events->size()) + " events and " + unread_steps_text());
    }
    KinetoTrace trace = build();
    // Kernels and steps that never meet: every measured figure would be 0, or a step's copies
    // alone would be set beside the whole simulated step.
    if (std::all_of(trace.step_kernels.begin(), trace.step_kernels.end(),
                    [](std::int64_t n) { return n == 0; })) {
      const auto kernels =
          std::count_if(trace.kernels.begin(), trace.kernels.end(),
                        [](const KinetoKernel& k) { return k.trace_category == "kernel"; });
      throw ConfigError(source_, where,
                        "none of the " + std::to_string(kernels) +
                            " GPU kernels falls in a ProfilerStep#N range (each starts before "
                            "the first step, or was launched outside every step); expected a "
                            "trace whose steps hold its kernels");
    }
    return trace;
  }

 private:
  void read_distributed_info(const nlohmann::json& doc) {
    const auto info = doc.find("distributedInfo");
    if (info == doc.end() || info->is_null()) return;
    // An object of the rank and the world, as Kineto writes it; another value (5) was ignored in
    // silence, where a rank written as "3" inside it is refused.
    if (!info->is_object()) {
      throw ConfigError(source_, "/distributedInfo",
                        "expected an object (rank, world_size), got " + describe_json(*info));
    }
    // Each optional, but present it must be an integer: a rank written as "3" or 3.5 would
    // otherwise vanish from the comparison without a word.
    const std::string world_range = "1 to " + std::to_string(parallel::kMaxGpus);
    const auto integer = [&](const char* key,
                             const std::string& expected) -> std::optional<std::int64_t> {
      const auto v = info->find(key);
      if (v == info->end()) return std::nullopt;
      if (!is_int64(*v)) {
        throw ConfigError(source_, std::string("/distributedInfo/") + key,
                          "expected " + expected + ", got " + describe_json(*v));
      }
      return v->get<std::int64_t>();
    };
    trace_.world_size = integer("world_size", "an integer number of ranks, " + world_range);
    trace_.rank = integer("rank", "an integer rank from 0 to world_size - 1");
    // Shown as "rank R of W" and written to the report: a rank outside its world is a damaged
    // or hand-made trace.
    if (trace_.world_size && (*trace_.world_size < 1 || *trace_.world_size > parallel::kMaxGpus)) {
      throw ConfigError(
          source_, "/distributedInfo/world_size",
          "expected " + world_range + " ranks, got " + std::to_string(*trace_.world_size));
    }
    if (trace_.rank &&
        (*trace_.rank < 0 || (trace_.world_size && *trace_.rank >= *trace_.world_size))) {
      throw ConfigError(source_, "/distributedInfo/rank",
                        "expected a rank from 0 to world_size - 1" +
                            (trace_.world_size ? " (" + std::to_string(*trace_.world_size - 1) + ")"
                                               : std::string()) +
                            ", got " + std::to_string(*trace_.rank));
    }
  }

  // ts or dur of an event of interest: present, a number, finite and >= 0.
  double time_field(const nlohmann::json& e, const std::string& pointer, const char* key) {
    const std::string at = pointer + "/" + key;
    const auto v = e.find(key);
    const std::string what = std::string(key) == "ts" ? "a timestamp" : "a duration";
    if (v == e.end()) {
      throw ConfigError(source_, at,
                        "missing required key; expected " + what +
                            " in microseconds on every complete (\"X\") event");
    }
    if (!v->is_number()) {
      throw ConfigError(
          source_, at,
          "expected " + what + " in microseconds (a number), got " + describe_json(*v));
    }
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < 0.0) {
      throw ConfigError(source_, at,
                        std::string(x < 0.0 ? "negative " : "non-finite ") + key + "; expected " +
                            what + " in microseconds >= 0, got " + describe_json(*v));
    }
    // ts and dur are microseconds, ts relative to baseTimeNanoseconds in newer traces and absolute
    // in older ones (docs/sources.md, File formats §2); a Unix-epoch clock reads about 1.7e15 us
    // in 2024, and 1e17 is the year 5138. No kernel or step runs 1e12 us (11.6 days). Past them,
    // sums print as 300-digit numbers or overflow.
    const bool is_ts = std::string(key) == "ts";
    if (x > (is_ts ? kMaxTimestampUs : kMaxDurationUs)) {
      throw ConfigError(source_, at,
                        std::string(key) + " too large; expected " + what +
                            " in microseconds of at most " + (is_ts ? "1e17" : "1e12") + ", got " +
                            describe_json(*v));
    }
    return x;
  }

  void read_event(const nlohmann::json& e, const std::string& pointer) {
    if (!e.is_object()) {
      throw ConfigError(source_, pointer,
                        "expected a trace event (an object), got " + describe_json(e));
    }
    const auto cat_it = e.find("cat");
    const auto name_it = e.find("name");
    const bool step_name = name_it != e.end() && name_it->is_string() &&
                           name_it->get_ref<const std::string&>().starts_with("ProfilerStep#");
    // Kineto writes a category on every complete event (ChromeTraceLogger: "ph": "X", "cat").
    // One missing from a complete event, or not a string on any event, is a damaged event that
    // may be a kernel: refused, since a kernel dropped in silence changes every figure (a
    // GEMM's cat deleted or made a list took 100 us out of its step's compute).
    const auto ph_it = e.find("ph");
    const bool complete =
        ph_it != e.end() && ph_it->is_string() && ph_it->get_ref<const std::string&>() == "X";
    if (cat_it != e.end() && !cat_it->is_string()) {
      throw ConfigError(source_, pointer + "/cat",
                        "expected the event's category as a string (\"kernel\", \"cpu_op\", "
                        "...), got " +
                            describe_json(*cat_it));
    }
    if (cat_it == e.end()) {
      if (complete) {
        throw ConfigError(
            source_, pointer + "/cat",
            legacy_ ? "missing required key: no complete event of the trace has a category, "
                      "as the legacy autograd profiler writes them; expected a "
                      "torch.profiler (Kineto) trace, which holds the GPU kernels"
                    : "missing required key; expected the complete event's "
                      "category (\"kernel\", \"cpu_op\", ...), which Kineto "
                      "writes on every one");
      }
      if (step_name) count_other_step_category("no cat");
      return;
    }
    const std::string cat = lowercase(cat_it->get<std::string>());
    const auto ph = e.find("ph");
    // Categories as libkineto ActivityType.cpp writes them, matched ignoring case, plus the
    // spellings of early Kineto (PyTorch 1.8/1.9: "Kernel", "Memcpy", "Memset", "Runtime",
    // "Operator"), which kineto's tb_plugin (torch_tb_profiler/profiler/trace.py EventTypeMap)
    // still reads.
    const bool gpu = is_gpu_category(cat);
    const bool launch = cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime";
    const bool step_category = cat == "user_annotation" || cat == "cpu_op" || cat == "operator";
    const bool step = step_category && step_name;
    if (!step_category && step_name) {
      if (cat == "gpu_user_annotation") {
        ++gpu_step_copies_;
      } else {
        count_other_step_category("cat '" + cat_it->get<std::string>() + "'");
      }
    }
    // The Trace Event Format's phase is a string; in an event the reader uses (GPU work, a
    // launch, a profiler step) another value is a damaged event, refused rather than counted
    // among the GPU work in other phases or dropped. Other events stay unchecked.
    if (ph != e.end() && !ph->is_string() && (gpu || launch || step)) {
      throw ConfigError(
          source_, pointer + "/ph",
          "expected the event's phase as a string (\"X\" for a complete event), got " +
              describe_json(*ph));
    }
    // Only complete events: Kineto's flow events (ph s/f, cat ac2g) carry no duration. GPU
    // work in another phase (a begin/end pair, which Kineto does not write) is counted for a
    // note, as are steps.
    if (ph != e.end() && (!ph->is_string() || ph->get_ref<const std::string&>() != "X")) {
      if (gpu) ++trace_.skipped_gpu_events;
      if (step) {
        ++step_events_not_complete_;
        ++trace_.skipped_step_events;
      }
      return;
    }
    Kind kind = Kind::Gpu;
    if (gpu) {
      kind = Kind::Gpu;
    } else if (launch) {
      kind = Kind::Launch;
    } else if (step) {
      kind = Kind::Step;
    } else {
      return;
    }
    // Every Chrome trace event has a phase (formats.md): a GPU event, launch or step without one
    // was read as complete, a guess.
    if (ph == e.end()) {
      throw ConfigError(source_, pointer + "/ph",
                        "missing required key; expected the event's phase (\"X\" for a complete "
                        "event, as Kineto writes kernels, launches and steps)");
    }
    RawEvent r;
    r.kind = kind;
    r.category = cat;
    const auto name = e.find("name");
    if (name == e.end() || !name->is_string()) {
      throw ConfigError(source_, pointer + "/name",
                        name == e.end() ? "missing required key; expected the event's name"
                                        : "expected a string, got " + describe_json(*name));
    }
    r.name = name->get<std::string>();
    r.ts_us = time_field(e, pointer, "ts");
    r.dur_us = time_field(e, pointer, "dur");
    const nlohmann::json* args = event_args(e, source_, pointer);
    r.correlation = arg_id(args, "correlation", "a correlation id", source_, pointer).value_or(-1);
    switch (kind) {
      case Kind::Gpu: {
        r.device = arg_id(args, "device", "a device index", source_, pointer).value_or(-1);
        if (r.device < 0) {
          if (const auto pid = e.find("pid"); pid != e.end())
            r.device = integer_of(*pid).value_or(-1);
        }
        r.stream = arg_id(args, "stream", "a stream id", source_, pointer).value_or(-1);
        if (r.stream < 0) {
          if (const auto tid = e.find("tid"); tid != e.end())
            r.stream = integer_of(*tid).value_or(-1);
        }
        // Kineto writes the device as pid and the stream as tid on every GPU event: one with
        // neither would count as a GPU and a stream of its own, "-1".
        if (r.device < 0 || r.stream < 0) {
          const bool device = r.device < 0;
          throw ConfigError(source_, pointer + (device ? "/pid" : "/tid"),
                            std::string("a GPU event without its ") +
                                (device ? "device" : "stream") + "; expected " +
                                (device ? "args.device or pid" : "args.stream or tid") +
                                ", an integer >= 0, as Kineto writes on every GPU event");
        }
        r.collective_name = arg_string(args, "Collective name", source_, pointer);
        if (cat == "kernel") has_kernel_ = true;
        gpu_.push_back(std::move(r));
        break;
      }
      case Kind::Launch:
        if (r.correlation >= 0) {
          // A launch may be recorded twice, the runtime call and the driver call inside it,
          // over one range. Two launches of one id that do not overlap are two launches: a
          // kernel of that id would go to the step of the first without a word.
          const auto [seen, added] =
              launch_ts_.emplace(r.correlation, std::pair{r.ts_us, r.dur_us});
          if (!added && !overlap(seen->second, {r.ts_us, r.dur_us}, /*touching=*/true)) {
            throw ConfigError(source_, pointer + "/args/correlation",
                              "correlation id " + std::to_string(r.correlation) +
                                  " given to two launches that do not overlap (at " +
                                  describe_json(seen->second.first) + " us and " +
                                  describe_json(r.ts_us) +
                                  " us); expected each launch's id once (a launch recorded "
                                  "twice covers one range)");
          }
        }
        break;
      case Kind::Step: {
        const auto n = step_number(r.name);
        if (!n) {
          throw ConfigError(
              source_, pointer + "/name",
              "bad profiler step name; expected \"ProfilerStep#<N>\", got " + describe_json(*name));
        }
        r.step = *n;
        if (!(r.dur_us >= kMinStepUs)) {
          // A step that lasts no time holds no kernel: every figure compared would be 0. Kineto
          // writes times to the nanosecond (0.001 us); a shorter step is no measurement, and
          // 1e-306 us made every difference of the table +inf%.
          throw ConfigError(source_, pointer + "/dur",
                            "profiler step " + r.name + " lasts " + describe_json(r.dur_us) +
                                " us; expected a step of at least 1 ns (0.001 us), the "
                                "resolution Kineto writes");
        }
        // PyTorch may record a step both as cpu_op and as user_annotation: keep the first. The
        // same number over a range that does not overlap the first is another step, mislabelled
        // or spliced from another trace: its kernels would be dropped without a word.
        // Copies that overlap but differ by more than 1% of the step would make the iteration
        // time depend on which came first in the file.
        const auto [seen, added] = seen_steps_.emplace(*n, std::pair{r.ts_us, r.dur_us});
        if (added) {
          steps_.push_back(std::move(r));
        } else if (!overlap(seen->second, {r.ts_us, r.dur_us})) {
          throw ConfigError(source_, pointer + "/name",
                            r.name +
                                " given twice over ranges that do not overlap; expected "
                                "each step number once (a step recorded twice covers one "
                                "range)");
        } else {
          const auto [ts, dur] = seen->second;
          const double tolerance = 0.01 * std::max(dur, r.dur_us);
          if (std::abs(r.ts_us - ts) > tolerance || std::abs(r.dur_us - dur) > tolerance) {
            const bool start_differs = std::abs(r.ts_us - ts) > tolerance;
            throw ConfigError(
                source_, pointer + (start_differs ? "/ts" : "/dur"),
                r.name + " given twice over different ranges (" + describe_json(dur) + " us from " +
                    describe_json(ts) + " us, " + describe_json(r.dur_us) + " us from " +
                    describe_json(r.ts_us) +
                    " us); expected its copies over one range, within 1% of the step");
          }
        }
        break;
      }
    }
  }

  KinetoTrace build() {
    double origin = std::numeric_limits<double>::infinity();
    for (const auto& g : gpu_) origin = std::min(origin, g.ts_us);
    for (const auto& s : steps_) origin = std::min(origin, s.ts_us);
    for (const auto& [corr, range] : launch_ts_) origin = std::min(origin, range.first);
    auto since = [origin](double ts_us) { return Seconds((ts_us - origin) * 1e-6); };
    // The spacing of doubles at the latest GPU event's start: the resolution every ts was read
    // with (JSON numbers are parsed to doubles before the origin is taken off).
    double latest = 0.0;
    for (const auto& g : gpu_) latest = std::max(latest, g.ts_us);
    trace_.timestamp_resolution_us =
        std::nextafter(latest, std::numeric_limits<double>::infinity()) - latest;

    std::stable_sort(steps_.begin(), steps_.end(),
                     [](const RawEvent& a, const RawEvent& b) { return a.ts_us < b.ts_us; });
    // Steps run one after another: one that starts before the previous ends would count the
    // overlap's kernels in both (a trace edited or spliced).
    for (std::size_t i = 1; i < steps_.size(); ++i) {
      const RawEvent& before = steps_[i - 1];
      if (steps_[i].ts_us < before.ts_us + before.dur_us) {
        throw ConfigError(source_, "/traceEvents",
                          steps_[i].name + " starts at " + describe_json(steps_[i].ts_us) +
                              " us, before " + before.name + " ends at " +
                              describe_json(before.ts_us + before.dur_us) +
                              " us; expected profiler steps one after another");
      }
    }
    for (const auto& s : steps_) {
      trace_.steps.push_back(ProfilerStep{
          .number = s.step, .start = since(s.ts_us), .duration = Seconds(s.dur_us * 1e-6)});
    }
    std::stable_sort(gpu_.begin(), gpu_.end(),
                     [](const RawEvent& a, const RawEvent& b) { return a.ts_us < b.ts_us; });
    // Exact copies are one kernel recorded twice (KinetoTrace::duplicate_gpu_events): the first
    // is kept.
    {
      using Key = std::tuple<double, double, std::int64_t, std::int64_t, std::int64_t,
                             std::string_view, std::string_view>;
      std::set<Key> seen;  // views into gpu_, left as it is until every event is seen
      std::vector<bool> copy(gpu_.size(), false);
      for (std::size_t i = 0; i < gpu_.size(); ++i) {
        const RawEvent& g = gpu_[i];
        copy[i] =
            !seen.emplace(g.ts_us, g.dur_us, g.device, g.stream, g.correlation, g.name, g.category)
                 .second;
      }
      seen.clear();
      std::vector<RawEvent> kept;
      kept.reserve(gpu_.size());
      for (std::size_t i = 0; i < gpu_.size(); ++i) {
        if (copy[i]) {
          ++trace_.duplicate_gpu_events;
        } else {
          kept.push_back(std::move(gpu_[i]));
        }
      }
      gpu_ = std::move(kept);
    }
    std::set<std::int64_t> devices;
    std::set<std::int64_t> streams;
    std::set<std::pair<std::int64_t, std::int64_t>> device_streams;
    for (const auto& g : gpu_) {
      KinetoKernel k;
      k.name = g.name;
      k.trace_category = g.category;
      k.category = report::classify_kernel(g.name, g.category);
      if (k.category == report::KernelCategory::Communication) {
        k.op = report::nccl_op(g.name, g.collective_name);
      }
      k.device = g.device;
      k.stream = g.stream;
      k.correlation = g.correlation;
      k.start = since(g.ts_us);
      k.duration = Seconds(g.dur_us * 1e-6);
      assign_step(k, g);
      devices.insert(k.device);
      streams.insert(k.stream);
      device_streams.emplace(k.device, k.stream);
      if (report::is_copy_or_fill(k.category)) ++trace_.num_copies_and_fills;
      trace_.kernels.push_back(std::move(k));
    }
    trace_.devices.assign(devices.begin(), devices.end());
    trace_.streams.assign(streams.begin(), streams.end());
    trace_.num_streams = static_cast<std::int64_t>(device_streams.size());

    std::vector<std::vector<report::TimedKernel>> per_step(trace_.steps.size());
    trace_.step_kernels.assign(trace_.steps.size(), 0);
    for (const auto& k : trace_.kernels) {
      if (k.step < 0) continue;
      if (!report::is_copy_or_fill(k.category)) {
        ++trace_.step_kernels[static_cast<std::size_t>(k.step)];
      }
      per_step[static_cast<std::size_t>(k.step)].push_back(report::TimedKernel{
          .category = k.category, .op = k.op, .start = k.start, .end = k.start + k.duration});
    }
    for (std::size_t i = 0; i < trace_.steps.size(); ++i) {
      Seconds span{};
      if (!per_step[i].empty()) {
        Seconds first = per_step[i].front().start;
        Seconds last = per_step[i].front().end;
        for (const auto& k : per_step[i]) {
          first = std::min(first, k.start);
          last = std::max(last, k.end);
        }
        span = last - first;
      }
      // Times were read to timestamp_resolution_us (one spacing of doubles, u): a start is
      // within u / 2 of its decimal, an end (ts + dur, rounded again) within u, so an end and a
      // start at one instant differ by at most 1.5 u, and in practice by a whole spacing at
      // most (at Unix-epoch times both fall on multiples of u). 1.5 u is rounding; an overlap of
      // two spacings (0.5 us at 1.7e15 us) is an overlap (at 2 u it was dropped).
      trace_.step_breakdowns.push_back(
          report::breakdown(per_step[i], span, trace_.steps[i].duration, trace_.steps[i].number,
                            Seconds(1.5 * trace_.timestamp_resolution_us * 1e-6)));
    }
    trace_.source = source_;
    return std::move(trace_);
  }

  // HTA (hta/common/trace.py) gives GPU events the iteration of their launching CPU event
  // through the correlation id, since the GPU lags the CPU: a kernel launched late in step N may
  // run after step N+1 has begun on the CPU. Without a launch event, a kernel belongs to the
  // step in which it starts, [start of step i, start of step i+1), the last step open-ended.
  void assign_step(KinetoKernel& k, const RawEvent& g) {
    // Steps are sorted by start and do not overlap (build): the last step starting at or
    // before a time is the only one that may hold it, found by bisection (a linear scan made a
    // trace of 220,000 steps and kernels take two minutes).
    const auto last_starting_by = [this](double ts) -> std::optional<std::size_t> {
      const auto after = std::upper_bound(steps_.begin(), steps_.end(), ts,
                                          [](double t, const RawEvent& s) { return t < s.ts_us; });
      if (after == steps_.begin()) return std::nullopt;
      return static_cast<std::size_t>(after - steps_.begin() - 1);
    };
    const auto launch = g.correlation >= 0 ? launch_ts_.find(g.correlation) : launch_ts_.end();
    if (launch != launch_ts_.end()) {
      const double ts = launch->second.first;
      // Half-open, as the time rule below: a launch at the instant one step ends and the next
      // begins belongs to the next (it went to the earlier one, a kernel without a launch
      // starting then to the later).
      const auto i = last_starting_by(ts);
      if (i && ts < steps_[*i].ts_us + steps_[*i].dur_us) {
        k.step = static_cast<std::int64_t>(*i);
        k.assignment = StepAssignment::Correlation;
        ++trace_.num_by_correlation;
        return;
      }
      ++trace_.num_unassigned;
      return;
    }
    if (const auto i = last_starting_by(g.ts_us)) {
      k.step = static_cast<std::int64_t>(*i);
      k.assignment = StepAssignment::Time;
      ++trace_.num_by_time;
      return;
    }
    ++trace_.num_unassigned;
  }

  // "none named so", or what the events named ProfilerStep#N are that were not read as steps.
  std::string unread_steps_text() const {
    const std::int64_t unread = gpu_step_copies_ + trace_.skipped_step_events;
    if (unread == 0) return "none named so";
    std::string parts;
    const auto add = [&parts](std::int64_t n, const std::string& what) {
      if (n == 0) return;
      parts += (parts.empty() ? "" : ", ") + std::to_string(n) + " " + what;
    };
    add(gpu_step_copies_, std::string(gpu_step_copies_ == 1 ? "GPU copy" : "GPU copies") +
                              " (cat gpu_user_annotation)");
    add(step_events_not_complete_,
        std::string(step_events_not_complete_ == 1 ? "not a complete event"
                                                   : "not complete events") +
            " (\"ph\" other than \"X\")");
    add(step_events_other_category_, "of another category (" + other_step_category_ + ")");
    return std::to_string(unread) + " named so that are not read as steps: " + parts +
           "; compare reads the complete events of cat user_annotation or cpu_op";
  }

  void count_other_step_category(const std::string& category) {
    if (step_events_other_category_++ == 0) other_step_category_ = "the first: " + category;
    ++trace_.skipped_step_events;
  }

  std::string source_;
  KinetoTrace trace_;
  bool legacy_ = false;  // no event has a category (read_events)
  // Events named ProfilerStep#N not read as steps (docs/compare.md, "Steps"): the GPU copies
  // every Kineto trace has, CPU-side ones in another phase, and ones of another category (the
  // first such category, for the message).
  std::int64_t gpu_step_copies_ = 0;
  std::int64_t step_events_not_complete_ = 0;
  std::int64_t step_events_other_category_ = 0;
  std::string other_step_category_;
  std::vector<RawEvent> gpu_;
  bool has_kernel_ = false;  // a complete event of cat "kernel" among gpu_
  std::vector<RawEvent> steps_;
  std::map<std::int64_t, std::pair<double, double>> seen_steps_;  // step -> (ts, dur) in us
  std::map<std::int64_t, std::pair<double, double>> launch_ts_;   // correlation -> (ts, dur) in us
};

}  // namespace

KinetoTrace parse_kineto_trace(const std::string& text, const std::string& source) {
  return TraceParser(source).parse(text);
}

KinetoTrace read_kineto_trace(const std::string& path) {
  // Bounded, chunk by chunk: gzip is refused at its magic bytes, a huge file or a pipe that
  // never ends after 64 MiB, a named pipe nobody writes to at once.
  std::string text;
  try {
    text =
        read_text_file(path, kMaxBytes, "a trace", [&path](std::string_view part, std::size_t at) {
          if (at == 0 && is_gzip(part)) throw gzip_error(path);
        });
  } catch (const ConfigError& e) {
    if (e.problem().rfind("is a directory", 0) == 0) {
      throw ConfigError(path, "", "is a directory; " + kExpectTrace);
    }
    if (e.problem().rfind("cannot open", 0) == 0) {
      throw ConfigError(path, "", "cannot open file; " + kExpectTrace);
    }
    if (e.problem().rfind("file too large", 0) == 0) {
      throw ConfigError(path, "",
                        "file too large; expected a trace of at most 64 MiB, got more (profile "
                        "fewer steps, e.g. schedule(wait=1, warmup=1, active=2))");
    }
    throw;
  }
  return parse_kineto_trace(text, path);
}

TraceSummary summarize(const KinetoTrace& trace, StepSelection selection) {
  TraceSummary s;
  std::vector<report::StepBreakdown> with_kernels;
  for (std::size_t i = 0; i < trace.step_breakdowns.size(); ++i) {
    const report::StepBreakdown& b = trace.step_breakdowns[i];
    // Copies or fills alone are no step to compare (a 10 us memset was set beside the whole
    // simulated step).
    if (trace.step_kernels[i] == 0) {
      s.empty.push_back(b.step);
    } else {
      with_kernels.push_back(b);
    }
  }
  // (A trace without kernels at all was refused as it was read.)
  if (with_kernels.empty())
    throw ConfigError(trace.source, "", "no profiler step holds a GPU kernel");
  std::vector<report::StepBreakdown> used;
  const bool skip_first = selection == StepSelection::SkipFirst && with_kernels.size() >= 2;
  for (std::size_t i = 0; i < with_kernels.size(); ++i) {
    const auto& b = with_kernels[i];
    if (skip_first && i == 0) {
      s.skipped.push_back(b.step);
    } else {
      s.used.push_back(b.step);
      used.push_back(b);
    }
  }
  s.mean = report::mean_breakdown(used);
  return s;
}

}  // namespace trainsim::io
