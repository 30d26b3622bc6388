#include "sim/validation/runs_reader.hpp"

#include <algorithm>
#include <string_view>
#include <utility>

#include "trainsim/error.hpp"

#include "sim/io/builtin_data.hpp"
#include "sim/io/json_reader.hpp"

namespace trainsim::validation {
namespace {

// The runs file is a few hundred KiB; 64 MiB and 64 levels leave room for any honest file and
// refuse binary data or runaway nesting before parsing.
constexpr std::size_t kMaxRunsBytes = std::size_t{64} << 20;
constexpr int kMaxRunsDepth = 64;

std::optional<std::int64_t> opt_integer(io::ObjectReader& r, const std::string& key,
                                        std::int64_t min_value) {
  if (r.raw(key, "an integer >= " + std::to_string(min_value) + " or null").is_null()) {
    return std::nullopt;
  }
  return r.integer(key, min_value);
}

std::optional<double> opt_number(io::ObjectReader& r, const std::string& key,
                                 std::string_view expected = "a positive number or null") {
  if (r.raw(key, expected).is_null()) return std::nullopt;
  const double v = r.number(key);
  if (!(v > 0.0)) {
    throw r.error(key, "expected a positive number or null, got " + io::describe_json(r.raw(key)));
  }
  return v;
}

std::optional<std::string> opt_string(io::ObjectReader& r, const std::string& key) {
  if (r.raw(key, "a string or null").is_null()) return std::nullopt;
  return r.string(key);
}

std::optional<bool> opt_boolean(io::ObjectReader& r, const std::string& key) {
  if (r.raw(key, "true, false or null").is_null()) return std::nullopt;
  return r.boolean(key);
}

// hardware: {"gpu", "memory_gb", ...}. Besides gpu and memory_gb the sources give the peak they
// used under a key starting with "peak_tflops" (a number) and free-text notes (strings).
void read_hardware(io::ObjectReader& row, PublishedRun& run) {
  io::ObjectReader hw = row.object("hardware");
  run.gpu = hw.string("gpu");
  run.memory_gb = opt_number(hw, "memory_gb");
  // As the measured values below: bounds with decades of margin around every GPU made, outside
  // which the figure is a unit mistake (80,000 for 80 GB, 3.12e14 for 312 TFLOP/s), not another
  // GPU to skip.
  if (run.memory_gb && !(*run.memory_gb >= 1.0 && *run.memory_gb <= 1e4)) {
    throw hw.error("memory_gb", "expected a GPU's memory from 1 to 1e4 GB, got " +
                                    io::describe_json(hw.raw("memory_gb")));
  }
  std::string peak_key;  // the key the peak was read from
  for (const auto& [key, value] : row.raw("hardware").items()) {
    if (key == "gpu" || key == "memory_gb") continue;
    if (key.rfind("peak_tflops", 0) == 0) {
      const auto peak = opt_number(hw, key);
      if (!peak) continue;
      if (!(*peak >= 1.0 && *peak <= 1e5)) {
        throw hw.error(
            key, "expected a GPU's peak from 1 to 1e5 TFLOP/s, got " + io::describe_json(value));
      }
      if (!run.peak_tflops) {
        run.peak_tflops = peak;
        peak_key = key;
      } else if (*peak != *run.peak_tflops) {
        // Which one the source's MFU divides by cannot be told (the keys are read in name
        // order, so the first alphabetically used to win without a word).
        throw hw.error(key, "a second peak, " + io::describe_json(value) + ", where " + peak_key +
                                " gives " + io::describe_json(hw.raw(peak_key)) +
                                "; expected one peak, the one the source's MFU divides by");
      }
    } else if (!value.is_string() && !value.is_null()) {
      // Free text ("system", "peak_note") is any other key; a number there is most likely a
      // misspelt memory_gb or peak key, which "expected a string" did not say.
      throw hw.error(key,
                     "not a number key of hardware (memory_gb, peak_tflops_*); expected "
                     "free text (a string) under any other key, got " +
                         io::describe_json(value));
    } else {
      (void)opt_string(hw, key);  // free text: read for its type only
    }
  }
  hw.finish();
}

PublishedRun read_row(const nlohmann::json& json, const std::string& source, std::int64_t index) {
  // A pointer built by appending: `"/" + std::to_string(i)` trips g++ 12's -Wrestrict false
  // positive at -O3.
  std::string pointer = "/";
  pointer += std::to_string(index);
  io::ObjectReader r(json, source, pointer);
  PublishedRun run;
  run.index = index;
  run.id = r.string("id");
  // The id names the row in every output and its scenario file (--scenarios): one line of text.
  const bool control = std::any_of(run.id.begin(), run.id.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == '\x7f';
  });
  // Nor white space at its ends: "dup" and "dup " printed as one id in the table.
  const bool padded = !run.id.empty() && (run.id.front() == ' ' || run.id.back() == ' ');
  if (run.id.empty() || control || padded) {
    throw r.error("id",
                  "expected a non-empty id without control characters or spaces at its ends, "
                  "got " +
                      io::describe_json(r.raw("id")));
  }
  run.source_group = r.string("source_group");
  (void)r.string("source");
  (void)r.string("source_locator");
  (void)opt_integer(r, "year", 1900);
  read_hardware(r, run);
  run.gpus = opt_integer(r, "gpus", 1);
  run.gpus_per_node = opt_integer(r, "gpus_per_node", 1);
  (void)opt_string(r, "intra_node");
  run.inter_node = opt_string(r, "inter_node");
  run.framework = opt_string(r, "framework").value_or("");
  run.model = r.string("model");
  run.layers = opt_integer(r, "n_layers", 1);
  run.hidden = opt_integer(r, "hidden", 1);
  run.heads = opt_integer(r, "n_heads", 1);
  run.kv_heads = opt_integer(r, "n_kv_heads", 1);
  run.ffn_hidden = opt_integer(r, "ffn_hidden", 1);
  run.vocab = opt_integer(r, "vocab", 1);
  run.seq_len = opt_integer(r, "seq_len", 1);
  run.global_batch = opt_integer(r, "global_batch_sequences", 1);
  run.micro_batch = opt_integer(r, "micro_batch", 1);
  run.tp = opt_integer(r, "tp", 1);
  run.pp = opt_integer(r, "pp", 1);
  run.dp = opt_integer(r, "dp", 1);
  run.cp = opt_integer(r, "cp", 1);
  run.virtual_pp = opt_integer(r, "virtual_pp", 1);
  run.sequence_parallel = opt_boolean(r, "sequence_parallel");
  run.sharding = opt_string(r, "zero_stage_or_fsdp");
  run.recompute = opt_string(r, "activation_recompute");
  run.precision = opt_string(r, "precision");
  run.tflops_per_gpu = opt_number(r, "tflops_per_gpu");
  run.mfu = opt_number(r, "mfu", "a fraction in (0, 1] or null");
  run.hfu = opt_number(r, "hfu", "a fraction in (0, 1] or null");
  run.tokens_per_s_per_gpu = opt_number(r, "tokens_per_sec_per_gpu");
  run.iteration_time_s = opt_number(r, "iteration_time_s");
  for (const auto& [key, value] : {std::pair{"mfu", run.mfu}, std::pair{"hfu", run.hfu}}) {
    if (value && *value > 1.0) {
      throw r.error(
          key, "expected a fraction in (0, 1] (0.41 = 41 %), got " + io::describe_json(r.raw(key)));
    }
  }
  // Measured values far outside what any GPU run gives are a unit mistake (or garbage), and a
  // tiny one would make the relative error infinite: bounds with decades of margin on each side.
  struct Bounds {
    const char* key;
    std::optional<double> value;
    double lo;
    double hi;
    const char* range;  // lo to hi, with the unit
  };
  for (const Bounds& b :
       {Bounds{"tflops_per_gpu", run.tflops_per_gpu, 1e-3, 1e5, "0.001 to 1e5 TFLOP/s"},
        Bounds{"mfu", run.mfu, 1e-6, 1.0, "1e-6 to 1"},
        Bounds{"hfu", run.hfu, 1e-6, 1.0, "1e-6 to 1"},
        Bounds{"tokens_per_sec_per_gpu", run.tokens_per_s_per_gpu, 1e-3, 1e9,
               "0.001 to 1e9 tokens/s per GPU"},
        Bounds{"iteration_time_s", run.iteration_time_s, 1e-6, 1e7, "1e-6 to 1e7 s"}}) {
    if (b.value && !(*b.value >= b.lo && *b.value <= b.hi)) {
      throw r.error(b.key, std::string("expected a measured value from ") + b.range + ", got " +
                               io::describe_json(r.raw(b.key)));
    }
  }
  // extra_metrics: free-form measured extras; only grad_accum and ep (the expert-parallel
  // degree of a mixture-of-experts run) are used, each a count when given.
  io::ObjectReader extra = r.object("extra_metrics");
  if (extra.has("grad_accum")) run.grad_accum = opt_integer(extra, "grad_accum", 1);
  if (extra.has("ep")) run.ep = opt_integer(extra, "ep", 1);
  for (const auto& item : r.array("derived_fields")) {
    if (!item.is_string()) {
      throw r.error(
          "derived_fields",
          "expected an array of field names (strings), got an element " + io::describe_json(item));
    }
    run.derived_fields.push_back(item.get<std::string>());
  }
  run.config_complete = r.boolean("config_complete");
  (void)opt_string(r, "verification");
  run.notes = opt_string(r, "notes").value_or("");
  r.finish();
  return run;
}

}  // namespace

std::vector<PublishedRun> read_published_runs(const std::string& text, const std::string& source) {
  const nlohmann::json json =
      io::parse_checked_json(text, source, kMaxRunsBytes, kMaxRunsDepth, "a published-runs file",
                             "expected a JSON array of published runs (validation/README.md)");
  if (!json.is_array()) {
    throw ConfigError(source, "",
                      "expected a JSON array of published runs (validation/README.md), got " +
                          io::describe_json(json));
  }
  std::vector<PublishedRun> runs;
  runs.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    runs.push_back(read_row(json[i], source, static_cast<std::int64_t>(i)));
  }
  // Ids name rows in the report and in --source filters' output: they must be unique.
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (runs[i].id == runs[j].id) {
        throw ConfigError(source, "/" + std::to_string(i) + "/id",
                          "duplicate id '" + runs[i].id + "' (also row " + std::to_string(j) +
                              "); expected unique ids");
      }
    }
  }
  return runs;
}

std::string read_runs_file(const std::string& path) {
  // Bounded: /dev/zero or a FIFO that never ends is refused after kMaxRunsBytes + 1 bytes.
  return io::read_text_file(path, kMaxRunsBytes, "a published-runs JSON file");
}

std::string builtin_runs_text() {
  const auto text = io::builtin_file("validation", "published_runs");
  if (!text) throw InternalError("validation/published_runs.json is not built in");
  return std::string(*text);
}

}  // namespace trainsim::validation
