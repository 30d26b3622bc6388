// `trainsim search`: find the best parallel plan for a model, a cluster and a global batch.
// Enumerates TP, PP, CP, EP (mixture-of-experts models), schedule and virtual stages, sequence
// parallelism, micro-batch, sharding and recomputation (restrictable by flags), prunes what
// cannot run or fit before simulating, ranks by the objective and prints the top plans;
// --explain says why the best plan beats pure data parallelism and, for a mixture-of-experts
// model, what its expert parallelism costs and saves.

#include "trainsim/sweep/search.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/engine/activity.hpp"
#include "trainsim/error.hpp"
#include "trainsim/parallel/validate.hpp"
#include "trainsim/report/memory.hpp"
#include "trainsim/report/simulate.hpp"

#include "sim/cli/batch.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/scenario_flags.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/report_writer.hpp"
#include "sim/io/scenario_loader.hpp"
#include "sim/io/spellcheck.hpp"
#include "sim/io/sweep_writer.hpp"
#include "sim/sweep/sweep_run.hpp"

namespace trainsim::cli {
namespace {

using parallel::PipelineSchedule;
using parallel::Recompute;
using parallel::Sharding;

struct SearchOptions {
  std::string hardware, model, precision, optimizer;
  std::optional<std::string> stack;
  std::optional<std::int64_t> gpus, nodes, nodes_per_domain, global_batch, seq_len;
  std::optional<double> memory_headroom;
  std::string objective = "tokens_per_s";
  int top = 5;
  std::string format = "table";
  bool explain = false;
  bool full_simulation = false;
  bool exhaustive = false;
  std::string jobs = "0";
  std::string shard;
  std::optional<std::int64_t> shard_count;
  std::optional<std::string> tp, pp, cp, ep, micro_batch, virtual_stages, sharding, recompute,
      schedule, sequence_parallel;
};

// Plans `search` may enumerate: each is held in memory with its scenario (a few KiB), and the
// default space has 1,728.
constexpr std::int64_t kMaxSearchPlans = 100'000;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  if (!text.empty() && text.back() == ',') out.emplace_back();
  return out;
}

// A value given twice would give each of its plans twice in the ranking.
void require_distinct(const std::string& flag, const std::vector<std::string>& items) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (std::find(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(i), items[i]) ==
        items.begin() + static_cast<std::ptrdiff_t>(i)) {
      continue;
    }
    std::string all;
    for (const std::string& item : items) all += (all.empty() ? "" : ",") + item;
    throw ConfigError(flag, "",
                      "'" + items[i] + "' given twice; expected distinct values, got '" + all + "'");
  }
}

// Positive integers, each at most `max_value`.
std::vector<std::int64_t> int_list(const std::string& flag, const std::string& text,
                                   std::int64_t max_value) {
  std::vector<std::int64_t> out;
  for (std::string item : split(text)) {
    // Blanks around an item are allowed on both sides, as --pipeline-layout allows them ("2 "
    // was refused where " 2" passed); a sign is not, as no numeric flag takes "+2".
    const std::size_t first = item.find_first_not_of(" \t");
    item = first == std::string::npos
               ? ""
               : item.substr(first, item.find_last_not_of(" \t") + 1 - first);
    if (!item.empty() && (item[0] == '+' || item[0] == '-')) item.clear();
    std::size_t used = 0;
    std::int64_t v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::invalid_argument&) {
      used = 0;
    } catch (const std::out_of_range&) {
      // All digits, beyond int64: reported as out of range below.
      const bool digits = !item.empty() && std::all_of(item.begin(), item.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      });
      used = digits ? item.size() : 0;
      v = std::numeric_limits<std::int64_t>::max();
    }
    // A zero before the first digit is refused, as every numeric flag refuses it ("010" read
    // as 10 here, where a single-value flag says why it takes decimal text only).
    const bool leading_zero = item.size() > 1 && item[0] == '0';
    if (item.empty() || used != item.size() || v < 1 || leading_zero) {
      throw ConfigError(flag, "",
                        "not a list of positive integers; expected e.g. 1,2,4,8 (decimal, no zero "
                        "before the first digit), got '" +
                            text + "'");
    }
    if (v > max_value) {
      throw ConfigError(flag, "", item + ": out of range; expected at most " +
                                      std::to_string(max_value));
    }
    out.push_back(v);
  }
  if (out.empty()) throw ConfigError(flag, "", "empty list; expected e.g. 1,2,4,8, got ''");
  std::vector<std::string> values;
  for (const std::int64_t v : out) values.push_back(std::to_string(v));
  require_distinct(flag, values);
  return out;
}

template <class E>
std::vector<E> enum_list(const std::string& flag, const std::string& text,
                         std::initializer_list<E> choices) {
  std::vector<std::string> names;
  for (const E e : choices) names.emplace_back(parallel::to_string(e));
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
  std::vector<E> out;
  for (const std::string& item : split(text)) {
    const auto it = std::find(names.begin(), names.end(), item);
    if (it == names.end()) {
      // Another tool's name for a sharding mode is said as the mode it is (scenario_loader).
      const auto alias = flag == "--sharding" ? io::sharding_alias(item) : std::nullopt;
      throw ConfigError(
          flag, "",
          "unknown value '" + item + "'" +
              (alias ? "; it is '" + *alias + "' here" : io::did_you_mean(item, names)) +
              "; expected a comma-separated list of " + all);
    }
    out.push_back(*(choices.begin() + (it - names.begin())));
  }
  if (out.empty()) throw ConfigError(flag, "", "empty list; expected one or more of " + all);
  require_distinct(flag, split(text));
  return out;
}

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// enumerate_plans holds every plan in memory: bound the space before it does. An upper estimate
// (duplicates and pp = 1 folding not subtracted), in double so it cannot overflow; `eps` is the
// number of EP degrees (1 before they are known). `flags` names the flags in the message.
void check_space_size(const sweep::SearchSpace& space, double eps, const char* flags) {
  const auto n = [](const auto& list) { return static_cast<double>(list.size()); };
  const double schedules = n(space.schedule) * n(space.virtual_stages) + 1;
  const double plans = n(space.tp) * n(space.pp) * schedules * n(space.cp) * eps *
                       n(space.sequence_parallel) * n(space.micro_batch) * n(space.sharding) *
                       n(space.recompute);
  if (plans > static_cast<double>(kMaxSearchPlans)) {
    throw ConfigError(flags, "",
                      "search space of up to " + std::to_string(static_cast<std::int64_t>(plans)) +
                          " plans: too large; expected at most " +
                          std::to_string(kMaxSearchPlans) + " (fewer values per flag)");
  }
}

sweep::SearchSpace space_of(const SearchOptions& o) {
  sweep::SearchSpace space;
  // Degrees are bounded as in a scenario file (io::kMaxDegree), so tp x pp x cp fits an int64.
  if (o.tp) space.tp = int_list("--tp", *o.tp, io::kMaxDegree);
  if (o.pp) space.pp = int_list("--pp", *o.pp, io::kMaxDegree);
  if (o.cp) space.cp = int_list("--cp", *o.cp, io::kMaxDegree);
  if (o.micro_batch) {
    // micro_batch x seq_len tokens, the bound validate gives a plan: a --micro-batch value past
    // it for the search's one seq_len would make every plan of it invalid, so it is refused.
    const std::int64_t seq_len = std::clamp<std::int64_t>(o.seq_len.value_or(1), 1,
                                                          parallel::kMaxSeqLen);
    space.micro_batch =
        int_list("--micro-batch", *o.micro_batch, parallel::kMaxMicroBatchTokens / seq_len);
  }
  if (o.virtual_stages) {
    space.virtual_stages = int_list("--virtual-stages", *o.virtual_stages, parallel::kMaxGpus);
    // A count of 1 is no interleaving: it was skipped in silence (with --pp 1,2 and only the
    // interleaved schedule, the pp 2 plans were neither searched nor counted).
    for (const std::int64_t v : space.virtual_stages) {
      if (v < 2) {
        throw ConfigError("--virtual-stages", "",
                          "the interleaved schedule needs 2 or more virtual stages per pipeline "
                          "rank; expected counts of 2 or more, got " +
                              std::to_string(v) + " (for no interleaving, --schedule 1f1b)");
      }
    }
  }
  if (o.sharding) {
    space.sharding = enum_list("--sharding", *o.sharding,
                               {Sharding::None, Sharding::Zero1, Sharding::ShardGradOp,
                                Sharding::FullShard, Sharding::HybridShard});
  }
  if (o.recompute) {
    space.recompute = enum_list("--recompute", *o.recompute,
                                {Recompute::None, Recompute::Selective, Recompute::Full});
  }
  if (o.schedule) {
    space.schedule =
        enum_list("--schedule", *o.schedule,
                  {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved});
  }
  if (o.sequence_parallel) {
    space.sequence_parallel.clear();
    for (const std::string& item : split(*o.sequence_parallel)) {
      if (item != "true" && item != "false") {
        throw ConfigError("--sequence-parallel", "",
                          "not a list of booleans; expected true, false or true,false, got '" +
                              *o.sequence_parallel + "'");
      }
      space.sequence_parallel.push_back(item == "true");
    }
    require_distinct("--sequence-parallel", split(*o.sequence_parallel));
  }
  // Virtual stages are the interleaved schedule's: given without it, they changed nothing.
  if (o.virtual_stages && std::find(space.schedule.begin(), space.schedule.end(),
                                    PipelineSchedule::Interleaved) == space.schedule.end()) {
    throw ConfigError("--virtual-stages", "",
                      "only used with the interleaved schedule, which --schedule '" +
                          o.schedule.value_or("") +
                          "' does not name; expected interleaved among the schedules, or no "
                          "--virtual-stages");
  }
  check_space_size(space, 1.0, "command line (--tp, --pp, --cp, --micro-batch, ...)");
  return space;
}

// The EP degrees of the search: --ep's list for a mixture-of-experts model (ep values that do
// not divide a plan's dp or the experts are enumerated and reported invalid, as --tp values
// that do not divide the heads are), else automatic (SearchSpace::ep). A dense model takes
// only ep 1. The space bound of space_of is checked again with the EP values counted: at most
// the divisors of num_experts when automatic.
// How the routed experts' state is held over `ranks` expert-data-parallel ranks: at 1 each EP
// rank holds its experts whole, never gathered (report::expert_sharding_degree), which "sharded
// over 1 ranks" misread.
std::string sharded_over(std::int64_t ranks) {
  return ranks > 1 ? "their state sharded over " + std::to_string(ranks) + " ranks"
                   : "their state held whole";
}

void apply_expert_parallelism(const SearchOptions& o, const parallel::Scenario& base,
                              sweep::SearchSpace& space) {
  const bool moe = model::is_moe(base.model);
  if (o.ep) {
    space.ep = int_list("--ep", *o.ep, io::kMaxDegree);
    if (!moe) {
      for (const std::int64_t ep : space.ep) {
        if (ep != 1) {
          throw ConfigError("--ep", "", "ep " + std::to_string(ep) +
                                            " needs a mixture-of-experts model, and '" +
                                            base.model.id + "' is dense; expected 1");
        }
      }
      space.ep.clear();
    }
  }
  if (!moe) return;
  const double eps =
      space.ep.empty()
          ? static_cast<double>(sweep::expert_parallel_degrees(base.model.num_experts,
                                                               base.model.num_experts)
                                    .size())
          : static_cast<double>(space.ep.size());
  check_space_size(space, eps, "command line (--tp, --pp, --cp, --ep, --micro-batch, ...)");
}

parallel::Scenario base_of(const SearchOptions& o) {
  io::ScenarioDocument doc;
  auto set = [&doc](const char* path, const auto& value, const char* flag) {
    io::set_path(doc, path, value, std::string("command line (") + flag + ")");
  };
  set("hardware", o.hardware, "--hardware");
  set("model", o.model, "--model");
  if (o.stack) set("stack", *o.stack, "--stack");
  if (o.gpus.has_value() == o.nodes.has_value()) {
    // As run and describe word it (scenario_flags.cpp).
    if (o.gpus) {
      throw ConfigError("command line (--gpus, --nodes)", "",
                        "both --gpus and --nodes given; expected one of them");
    }
    throw ConfigError("command line", "/cluster",
                      "missing required key; expected --gpus or --nodes");
  }
  if (o.gpus) set("cluster.gpus", *o.gpus, "--gpus");
  if (o.nodes) set("cluster.nodes", *o.nodes, "--nodes");
  if (o.nodes_per_domain)
    set("cluster.nodes_per_domain", *o.nodes_per_domain, "--nodes-per-domain");
  set("training.seq_len", *o.seq_len, "--seq-len");
  set("training.global_batch", *o.global_batch, "--global-batch");
  if (!o.precision.empty()) set("training.precision", o.precision, "--precision");
  if (!o.optimizer.empty()) set("training.optimizer", o.optimizer, "--optimizer");
  parallel::Scenario s = io::scenario_from_document(doc);
  // Every plan searched copies the base scenario's stack, and with it the headroom.
  apply_memory_headroom(o.memory_headroom, s);
  // A stack whose own headroom is more than the HBM leaves: one line, not every plan of the
  // space invalid for it (and a header giving the fraction beside the bytes it was cut to).
  // The HBM they exceed is the hardware's: both flags set the problem, as run names them.
  const std::string flags =
      o.stack ? "command line (--hardware, --stack)" : "command line (--hardware)";
  if (const std::string problem = parallel::workspace_problem(s); !problem.empty()) {
    throw PlanError(flags + ": /stack: stack '" + s.stack_name + "' " + problem);
  }
  if (const std::string problem = parallel::headroom_problem(s); !problem.empty()) {
    throw PlanError(flags + ": /stack: stack '" + s.stack_name + "' memory.headroom_fraction " +
                    problem);
  }
  // A precision the hardware has no tensor cores for, or an fp8 recipe it cannot run, fails
  // every plan: one line, as run gives it. Counted plan by plan, it lost to whatever problem
  // came first in more plans ('the commonest problem (432 plans) ...: /parallel: tp x pp x cp =
  // 2 x 8 x 1 exceeds the 8 gpus' for fp8 on A100), depending on the cluster's size.
  for (const parallel::Problem& p : parallel::validate(s)) {
    // So does a cluster the hardware cannot hold (12 GPUs of 8-GPU nodes, more hosts per
    // NVLink domain than it has): "1008 of 1008 plans are invalid", where run names the flag.
    if (p.key == "/cluster/gpus" || p.key == "/cluster/nodes_per_domain") {
      const bool gpus = p.key == "/cluster/gpus";
      throw PlanError(std::string("command line (") +
                      (gpus ? (o.gpus ? "--gpus" : "--nodes") : "--nodes-per-domain") +
                      "): " + p.key + ": " + p.message);
    }
    const bool precision = p.key == "/training/precision" ||
                           (p.key == "/stack" && std::find(p.also.begin(), p.also.end(),
                                                           "/training/precision") != p.also.end());
    if (!precision) continue;
    throw PlanError(std::string("command line (--hardware") + (o.stack ? ", --stack" : "") +
                    (o.precision.empty() ? "" : ", --precision") + "): " + p.key + ": " +
                    p.message);
  }
  return s;
}

std::string fixed(double v, int decimals) { return fixed_text(v, decimals); }

std::string gib(Bytes b) { return fixed(b.value() / (1024.0 * 1024.0 * 1024.0), 1) + " GiB"; }

// "1st", "2nd", "3rd", "4th", ..., "11th", "12th", "13th", "21st".
std::string ordinal(std::int64_t n) {
  const std::int64_t tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : n % 10 == 1                ? "st"
                       : n % 10 == 2                ? "nd"
                       : n % 10 == 3                ? "rd"
                                                    : "th";
  return std::to_string(n) + suffix;
}

std::string plan_text(const parallel::Scenario& s) {
  const parallel::ParallelPlan& p = s.parallel;
  std::string out = "tp=" + std::to_string(p.tp) + " pp=" + std::to_string(p.pp) +
                    " cp=" + std::to_string(p.cp) + " dp=" + std::to_string(p.dp);
  // Only a mixture-of-experts plan names ep, so that dense output keeps its bytes.
  if (model::is_moe(s.model)) out += " ep=" + std::to_string(p.ep);
  if (p.pp > 1) {
    out += " " + std::string(parallel::to_string(p.schedule));
    if (p.virtual_stages > 1) out += " v=" + std::to_string(p.virtual_stages);
  }
  if (p.sequence_parallel) out += " sp";
  return out + " mb=" + std::to_string(s.training.micro_batch) + " " +
         parallel::to_string(p.sharding) + " recompute=" + parallel::to_string(p.recompute);
}

std::string objective_text(const report::Report& r, sweep::Objective objective) {
  switch (objective) {
    case sweep::Objective::TokensPerS: return fixed(r.tokens_per_s, 0) + " tokens/s";
    case sweep::Objective::TokensPerJoule:
      return fixed_significant(r.power.tokens_per_joule, 3, 3) + " tokens/J";
    case sweep::Objective::UsdPerMillionTokens:
      return "$" + fixed_significant(r.cost.usd_per_million_tokens, 4, 3) + " per million tokens";
  }
  return "";
}

// "1.23x the tokens/J and 1.03x the tokens/s": how `a` compares with `b`, in the objective's own
// quantity first where it is not throughput (it said the tokens/s alone under every objective).
std::string ratio_text(const report::Report& a, const report::Report& b,
                       sweep::Objective objective) {
  const auto ratio = [](double x, double y) { return fixed(y > 0 ? x / y : 0.0, 2) + "x"; };
  const std::string throughput = ratio(a.tokens_per_s, b.tokens_per_s) + " the tokens/s";
  switch (objective) {
    case sweep::Objective::TokensPerS:
      return throughput;
    case sweep::Objective::TokensPerJoule:
      return ratio(a.power.tokens_per_joule, b.power.tokens_per_joule) + " the tokens/J and " +
             throughput;
    case sweep::Objective::UsdPerMillionTokens:
      return ratio(a.cost.usd_per_million_tokens, b.cost.usd_per_million_tokens) +
             " the cost per million tokens and " + throughput;
  }
  return throughput;
}

// printf into a std::string.
template <class... Args>
std::string cell(const char* format, Args... args) {
  const int size = std::snprintf(nullptr, 0, format, args...);
  std::string text(static_cast<std::size_t>(std::max(size, 0)) + 1, '\0');
  std::snprintf(text.data(), text.size(), format, args...);
  text.pop_back();
  return text;
}

// The plans' table. Each column is as wide as its header, its usual width or its widest cell,
// whichever is widest: a million-GPU data-parallel degree, a 15-character schedule
// ("interleaved v16") or an iteration of 10,000 s and more pushed the rows out of line when the
// widths were fixed. The ep column is there only for a mixture-of-experts model, so that a dense
// search prints the columns it always did.
void write_table(std::ostream& out, const sweep::SearchResult& result, int top, bool moe) {
  struct Column {
    const char* header;
    int width;  // the usual width
    bool left;  // left-aligned (text); numbers are right-aligned
  };
  std::vector<Column> columns = {
      {"rank", 4, false},      {"tp", 3, false},       {"pp", 3, false},
      {"cp", 3, false},        {"dp", 5, false},       {"ep", 4, false},
      {"schedule", 14, true},  {"sp", 3, false},       {"mb", 3, false},
      {"sharding", 13, true},  {"recompute", 9, true}, {"tokens/s", 12, false},
      {"tok/s/GPU", 9, false}, {"MFU", 6, false},      {"iter_s", 9, false},
      {"compute_s", 9, false}, {"exp_comm", 9, false}, {"bubble_s", 9, false},
      {"mem_GiB", 9, false},   {"W/GPU", 6, false},    {"tok/J", 8, false},
      {"$/Mtok", 8, false}};
  constexpr std::size_t kEp = 5;
  const auto n =
      std::min<std::size_t>(static_cast<std::size_t>(std::max(top, 0)), result.ranked.size());
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < n; ++i) {
    const parallel::Scenario& s = result.ranked[i].scenario;
    const report::Report& r = *result.ranked[i].evaluation.report;
    const parallel::ParallelPlan& p = s.parallel;
    const std::string schedule =
        p.pp == 1 ? "-"
                  : std::string(parallel::to_string(p.schedule)) +
                        (p.virtual_stages > 1 ? " v" + std::to_string(p.virtual_stages) : "");
    // The objectives' columns to three significant digits at least, so that plans ranked by
    // them differ where they do ("0.0002" on every row).
    const std::string tokens_per_joule = fixed_significant(r.power.tokens_per_joule, 3, 3);
    const std::string usd = fixed_significant(r.cost.usd_per_million_tokens, 4, 3);
    rows.push_back({std::to_string(i + 1),
                    std::to_string(p.tp),
                    std::to_string(p.pp),
                    std::to_string(p.cp),
                    std::to_string(p.dp),
                    std::to_string(p.ep),
                    schedule,
                    p.sequence_parallel ? "on" : "-",
                    std::to_string(s.training.micro_batch),
                    parallel::to_string(p.sharding),
                    parallel::to_string(p.recompute),
                    cell("%.0f", r.tokens_per_s),
                    cell("%.1f", r.tokens_per_s_per_gpu),
                    cell("%.1f%%", 100.0 * r.mfu),
                    cell("%.4f", r.iteration_time.value()),
                    cell("%.4f", r.compute.value()),
                    cell("%.4f", r.exposed_communication.value()),
                    cell("%.4f", r.bubble.value()),
                    cell("%.1f", r.memory.total.value() / (1024.0 * 1024.0 * 1024.0)),
                    cell("%.0f", r.power.per_gpu.value()),
                    tokens_per_joule,
                    usd});
  }
  std::vector<std::size_t> shown;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (c == kEp && !moe) continue;
    shown.push_back(c);
    std::size_t width =
        std::max(static_cast<std::size_t>(columns[c].width), std::strlen(columns[c].header));
    for (const auto& row : rows) width = std::max(width, row[c].size());
    columns[c].width = static_cast<int>(width);
  }
  const auto write_line = [&](const auto& text_of) {
    std::string line;
    for (const std::size_t c : shown) {
      if (!line.empty()) line += ' ';
      const std::string text = text_of(c);
      const std::string pad(static_cast<std::size_t>(columns[c].width) - text.size(), ' ');
      line += columns[c].left ? text + pad : pad + text;
    }
    out << line << '\n';
  };
  write_line([&](std::size_t c) { return std::string(columns[c].header); });
  for (const auto& row : rows) write_line([&](std::size_t c) { return row[c]; });
}

// The state-reducing groups: FSDP/ZeRO/DDP's, and for a mixture-of-experts model the
// expert-data-parallel ones that gather and reduce the experts' state.
bool is_data_parallel_group(const std::string& group) {
  return group == "dp" || group == "shard" || group == "replicate" || group == "expert_dp" ||
         group == "expert_shard";
}

// Summed time of one iteration's collective calls (count x time per call) on the report's
// critical stage, the GPU whose times the report gives (its communication_s): the data-parallel
// ones (FSDP/ZeRO/DDP groups) or the model-parallel ones (TP, CP, PP, and the pipeline ends'
// embedding sum, group "embedding"). Every stage's calls summed would count each kind pp times.
// The expert all-to-all (group "ep") is in neither: the expert-parallelism lines of --explain
// give it.
// Seconds per iteration of the report's critical stage in the collectives whose group `take`
// accepts.
template <class Take>
double critical_stage_seconds(const report::Report& r, Take take) {
  double total = 0.0;
  for (const report::CollectiveSummary& c : r.collectives) {
    if (c.stage == r.critical_stage && take(c.group)) {
      total += static_cast<double>(c.count) * c.time.value();
    }
  }
  return total;
}

// The expert all-to-alls (group "ep") of the critical stage, per iteration.
double expert_all_to_all_seconds(const report::Report& r) {
  return critical_stage_seconds(r, [](const std::string& g) { return g == "ep"; });
}

bool is_expert_data_parallel_group(const std::string& group) {
  return group == "expert_dp" || group == "expert_shard";
}

// The data-parallel collectives of the critical stage but the routed experts' (their own
// groups, dp / ep ranks: expert_data_parallel_seconds), or the others but the expert
// all-to-alls.
double collective_seconds(const report::Report& r, bool data_parallel) {
  return critical_stage_seconds(r, [data_parallel](const std::string& g) {
    return g != "ep" && !is_expert_data_parallel_group(g) &&
           is_data_parallel_group(g) == data_parallel;
  });
}

// The routed experts' gradient reductions and gathers on the critical stage.
double expert_data_parallel_seconds(const report::Report& r) {
  return critical_stage_seconds(r, is_expert_data_parallel_group);
}

// The ranks of a plan's expert data-parallel group: its data-parallel and CP ranks over ep
// (1 where each routed expert lies whole on one rank, with no call; the report's calls said 0).
std::int64_t expert_data_parallel_ranks(const parallel::Scenario& s) {
  const parallel::ParallelPlan& p = s.parallel;
  return std::max<std::int64_t>(1, p.dp * p.cp / std::max<std::int64_t>(1, p.ep));
}

// Data-parallel collective calls per iteration on the report's critical stage (the counts of the
// report's collectives table there).
std::int64_t data_parallel_calls(const report::Report& r) {
  std::int64_t calls = 0;
  for (const report::CollectiveSummary& c : r.collectives) {
    if (is_data_parallel_group(c.group) && c.stage == r.critical_stage) calls += c.count;
  }
  return calls;
}

// The causes behind the numbers: gradient accumulation (how many micro-batches, and with them
// how many data-parallel calls: FSDP's full_shard gathers the parameters again for every
// micro-batch, ZeRO-2 reduces once per step) and recomputation (its share of executed FLOPs is
// 1 - MFU / HFU, since HFU counts the recomputed forward and MFU does not).
void write_causes(std::ostream& out, const parallel::Scenario& d, const report::Report& rd,
                  const parallel::Scenario& b, const report::Report& rb) {
  const std::int64_t md = d.num_microbatches();
  const std::int64_t mb = b.num_microbatches();
  out << "  - Gradient accumulation: " << md << " -> " << mb
      << (md == 1 && mb == 1 ? " micro-batch" : " micro-batches")
      << " per step per data-parallel rank; data-parallel collective calls "
      << data_parallel_calls(rd) << " -> " << data_parallel_calls(rb) << " per iteration ("
      << parallel::to_string(d.parallel.sharding) << " -> "
      << parallel::to_string(b.parallel.sharding);
  if (b.parallel.sharding == parallel::Sharding::FullShard ||
      b.parallel.sharding == parallel::Sharding::HybridShard) {
    out << ": the parameters are gathered again for every micro-batch";
  }
  out << ").\n";
  const auto recomputed = [](const report::Report& r) {
    return r.hfu > 0.0 ? 1.0 - r.mfu / r.hfu : 0.0;
  };
  if (d.parallel.recompute != b.parallel.recompute || recomputed(rd) > 0.0 ||
      recomputed(rb) > 0.0) {
    out << "  - Recomputation: " << parallel::to_string(d.parallel.recompute) << " -> "
        << parallel::to_string(b.parallel.recompute) << ", recomputed share of executed FLOPs "
        << fixed(100 * recomputed(rd), 1) << "% -> " << fixed(100 * recomputed(rb), 1) << "%"
        << (b.parallel.recompute == parallel::Recompute::None &&
                    d.parallel.recompute != parallel::Recompute::None
                ? " (the split state leaves room to keep every activation)"
                : "")
        << ".\n";
  }
}

// What changes from pure data parallelism `d` to the model-parallel plan `b`, line by line.
// `b_wins` says which of the two the objective prefers.
void write_differences(std::ostream& out, const parallel::Scenario& d, const report::Report& rd,
                       const parallel::Scenario& b, const report::Report& rb, bool b_wins) {
  const parallel::ParallelPlan& bp = b.parallel;
  const std::int64_t groups_d = d.parallel.dp * d.parallel.cp;
  const std::int64_t groups_b = bp.dp * bp.cp;
  const double dp_d = collective_seconds(rd, true);
  const double dp_b = collective_seconds(rb, true);
  const double mp_d = collective_seconds(rd, false);
  const double mp_b = collective_seconds(rb, false);
  // The expert all-to-alls, apart: with a mixture of experts they can be most of what a plan
  // adds (qwen3-30b-a3b on 32 H100, ep 2 and pp 2: 0.152 s, against 0.009 s of pipeline
  // sends), and the sentence below named only the latter as the cause.
  const double ep_d = expert_all_to_all_seconds(rd);
  const double ep_b = expert_all_to_all_seconds(rb);
  // The routed experts' own data-parallel groups (dp / ep ranks), apart: they can be most of
  // the data-parallel time and of its saving (qwen3-30b-a3b on 32 H100: 0.358 of 0.397 s on 4
  // ranks), which the line gave to the 32-rank group.
  const double xdp_d = expert_data_parallel_seconds(rd);
  const double xdp_b = expert_data_parallel_seconds(rb);
  out << "  - Collective time per iteration (overlapped or not): data-parallel " << fixed(dp_d, 3)
      << " s on " << groups_d << " ranks -> " << fixed(dp_b, 3) << " s on " << groups_b
      << " ranks (" << (dp_b <= dp_d ? "" : "+") << fixed(dp_b - dp_d, 3) << " s)";
  if (xdp_d > 0.0 || xdp_b > 0.0) {
    // A plan with ep 1 has no group of its own for the experts: their calls are among the
    // data-parallel ones above (it read "0.000 s on 8 ranks", a saving the plan did not make).
    const auto expert_side = [](const parallel::Scenario& s, double seconds) {
      if (s.parallel.ep <= 1) return std::string("with the data-parallel calls (ep 1)");
      return fixed(seconds, 3) + " s on " + std::to_string(expert_data_parallel_ranks(s)) +
             " ranks";
    };
    out << "; the routed experts' data-parallel " << expert_side(d, xdp_d) << " -> "
        << expert_side(b, xdp_b);
  }
  out << "; tensor/context/pipeline " << fixed(mp_d, 3) << " s -> " << fixed(mp_b, 3) << " s";
  if (ep_d > 0.0 || ep_b > 0.0) {
    out << "; expert all-to-all " << fixed(ep_d, 3) << " s -> " << fixed(ep_b, 3) << " s";
  }
  out << ".\n";
  const double exposed = rb.exposed_communication.value() - rd.exposed_communication.value();
  out << "  - Exposed communication: " << fixed(rd.exposed_communication.value(), 3) << " s -> "
      << fixed(rb.exposed_communication.value(), 3) << " s per iteration ("
      << (exposed <= 0 ? "" : "+") << fixed(exposed, 3) << " s). ";
  // Every call of the critical stage, the expert all-to-all included.
  const auto all_calls = [](const report::Report& r) {
    return critical_stage_seconds(r, [](const std::string&) { return true; });
  };
  const double all_d = all_calls(rd);
  const double all_b = all_calls(rb);
  // The model-parallel communication the plan adds, expert all-to-alls included.
  const double added = std::max(0.0, mp_b + ep_b - mp_d - ep_d);
  const bool more_hidden =
      all_b - rb.exposed_communication.value() > all_d - rd.exposed_communication.value();
  // The data-parallel collectives in all, the routed experts' included.
  const double all_dp_d = dp_d + xdp_d;
  const double all_dp_b = dp_b + xdp_b;
  if (std::fabs(exposed) < 0.0005) {
    // No change at the printed precision, either way (a difference of -1e-16 went to the
    // branches below and read "the data-parallel group shrinks from 16 to 16 ranks"). What the
    // plan adds is not newly exposed: it runs beside compute, or beside communication that was
    // exposed already (pytorch-2.3-fsdp's blocking TP calls over exposed data-parallel time).
    out << "The exposed communication does not change at the printed precision: the "
        << fixed(added, 3)
        << " s of model-parallel communication added runs beside compute or beside "
           "communication already exposed.\n";
  } else if (exposed < 0 && all_dp_b > all_dp_d && more_hidden) {
    // The data-parallel calls take longer, so a shorter ring is not the cause: more of the
    // communication runs beside compute.
    out << "The data-parallel collectives take longer in all (" << fixed(all_dp_d, 3) << " -> "
        << fixed(all_dp_b, 3) << " s), but more of the communication runs beside compute: "
        << fixed(all_b - rb.exposed_communication.value(), 3) << " of " << fixed(all_b, 3)
        << " s hidden, against " << fixed(all_d - rd.exposed_communication.value(), 3) << " of "
        << fixed(all_d, 3) << " s.\n";
  } else if (exposed < 0 && all_dp_b > all_dp_d) {
    out << "The data-parallel collectives take longer in all (" << fixed(all_dp_d, 3) << " -> "
        << fixed(all_dp_b, 3) << " s), but the plan's communication in all falls, from "
        << fixed(all_d, 3) << " to " << fixed(all_b, 3) << " s.\n";
  } else if (exposed < 0 && ep_d - ep_b > all_dp_d - all_dp_b) {
    // A mixture of experts whose plan saves most in the expert all-to-all (fewer tokens cross
    // the EP group, or over faster links): the sentence below credited the smaller DP group
    // (qwen3-30b-a3b: all-to-all 2.077 -> 1.790 s, data-parallel 0.05 s less).
    out << "The expert all-to-all falls by " << fixed(ep_d - ep_b, 3)
        << " s, more than the data-parallel collectives (" << (all_dp_b <= all_dp_d ? "-" : "+")
        << fixed(std::fabs(all_dp_d - all_dp_b), 3)
        << " s); the other model-parallel traffic stays "
        << "inside fast links or overlaps with compute.\n";
  } else if (exposed < 0 && d.parallel.ep > 1 && bp.ep > 1 && xdp_d - xdp_b > dp_d - dp_b) {
    // Both plans have the experts' own group (with ep 1 their calls are data-parallel ones,
    // compared above in all). It may keep its ranks and leave nodes instead: qwen3-30b-a3b on
    // 16 H100, 2 ranks on 2 nodes -> 2 ranks on 1, "shrinks from 2 to 2 ranks" before.
    const std::int64_t ranks_d = expert_data_parallel_ranks(d);
    const std::int64_t ranks_b = expert_data_parallel_ranks(b);
    const auto nodes = [](const report::Report& r) {
      std::int64_t n = 0;
      for (const report::CollectiveSummary& c : r.collectives) {
        if (c.stage == r.critical_stage && is_expert_data_parallel_group(c.group)) {
          n = std::max(n, c.nodes);
        }
      }
      return n;
    };
    const std::int64_t nodes_d = nodes(rd);
    const std::int64_t nodes_b = nodes(rb);
    out << "The routed experts' data-parallel group "
        << (ranks_b < ranks_d ? "shrinks from " + std::to_string(ranks_d) + " to " +
                                    std::to_string(ranks_b) + " ranks"
            : nodes_b < nodes_d
                ? "keeps its " + std::to_string(ranks_b) + " ranks on fewer nodes (" +
                      counted(nodes_d, "node") + " -> " + std::to_string(nodes_b) + ")"
                : "goes from " + std::to_string(ranks_d) + " to " + std::to_string(ranks_b) +
                      " ranks")
        << ", and their gradient and parameter collectives save " << fixed(xdp_d - xdp_b, 3)
        << " s, more than the other data-parallel collectives (" << (dp_b <= dp_d ? "-" : "+")
        << fixed(std::fabs(dp_d - dp_b), 3)
        << " s); the tensor/context/pipeline traffic stays inside fast links or overlaps with "
           "compute.\n";
  } else if (exposed < 0 && groups_b < groups_d) {
    out << "The data-parallel group shrinks from " << groups_d << " to " << groups_b
        << " ranks, so the gradient and parameter collectives run on shorter rings and carry "
        << (bp.tp * bp.pp > 1 ? "1/" + std::to_string(bp.tp * bp.pp) + " of the state each"
                              : "less")
        << "; the tensor/context/pipeline traffic stays inside fast links or overlaps with "
           "compute.\n";
  } else if (exposed < 0) {
    // The group keeps its ranks (or grows): the saving is in what overlaps, not in the ring.
    out << "The data-parallel group keeps " << groups_d << (groups_b == groups_d ? "" : " -> ")
        << (groups_b == groups_d ? "" : std::to_string(groups_b)) << " ranks; "
        << fixed(all_b - rb.exposed_communication.value(), 3) << " of the plan's "
        << fixed(all_b, 3) << " s of communication runs hidden, against "
        << fixed(all_d - rd.exposed_communication.value(), 3) << " of " << fixed(all_d, 3)
        << " s.\n";
  } else if (b_wins && rb.iteration_time < rd.iteration_time) {
    out << "More communication is exposed, but the rest of the iteration gains more.\n";
  } else if (b_wins) {
    // Preferred by an objective other than speed (tokens per joule, cost) while slower: what
    // it gains is not time (it said "the rest of the iteration gains more" of a plan 0.2 s
    // slower).
    out << "More communication is exposed and the iteration is slower ("
        << fixed(rd.iteration_time.value(), 3) << " -> " << fixed(rb.iteration_time.value(), 3)
        << " s), but the plan draws less power per GPU (" << fixed(rd.power.per_gpu.value(), 0)
        << " -> " << fixed(rb.power.per_gpu.value(), 0)
        << " W), which the objective weighs more.\n";
  } else {
    const double saved = std::max(0.0, all_dp_d - all_dp_b);
    out << "The " << fixed(saved, 3) << " s of data-parallel collective time saved "
        << (saved < added ? "is less than" : "was mostly hidden behind compute anyway, unlike")
        << " the " << fixed(added, 3) << " s of model-parallel communication added"
        << (ep_b > ep_d ? " (" + fixed(ep_b - ep_d, 3) + " s of it expert all-to-all)" : "")
        << ", which the compute stream waits for.\n";
  }
  const double bubble = rb.bubble.value() - rd.bubble.value();
  out << "  - Pipeline bubble: " << fixed(rd.bubble.value(), 3) << " s -> "
      << fixed(rb.bubble.value(), 3) << " s (" << (bubble < 0 ? "" : "+") << fixed(bubble, 3)
      << " s)";
  if (bp.pp > 1) {
    // Set against the exposed communication the plan saves, when it saves any: the bubble is
    // time the iteration waits, as exposed communication is (it said "not smaller than the
    // communication saved" where exposed communication had grown).
    // A change below half the printed unit (0.0005 s) is no change.
    out << ": the cost of filling and draining " << bp.pp << " stages";
    if (exposed < -0.0005) {
      out << ", " << (bubble < -exposed ? "smaller" : "not smaller") << " than the "
          << fixed(-exposed, 3) << " s of exposed communication saved";
    } else if (exposed > 0.0005) {
      out << ", on top of the exposed communication added";
    } else {
      out << ", with the exposed communication unchanged";
    }
  }
  out << ".\n";
  out << "  - Compute: " << fixed(rd.compute.value(), 3) << " s -> " << fixed(rb.compute.value(), 3)
      << " s per iteration on the busiest GPU (MFU " << fixed(100 * rd.mfu, 1) << "% -> "
      << fixed(100 * rb.mfu, 1) << "%).\n";
  write_causes(out, d, rd, b, rb);
  // The part that moved most, in the total's direction (it said "more in-flight activations or
  // gathered buffers" where activations fell and the weights of 128 experts at ep 1 rose).
  const auto state = [](const report::MemoryBreakdown& m) {
    return (m.parameters + m.gradients + m.optimizer).value();
  };
  const double d_state = state(rb.memory) - state(rd.memory);
  const double d_act = (rb.memory.activations - rd.memory.activations).value();
  const double d_buf = (rb.memory.buffers - rd.memory.buffers).value();
  const bool more = rb.memory.total > rd.memory.total;
  const double sign = more ? 1.0 : -1.0;
  std::string cause;
  if (sign * d_state >= sign * d_act && sign * d_state >= sign * d_buf) {
    cause = std::string(more ? "more" : "less") + " weights, gradients and optimizer state per GPU";
  } else if (sign * d_act >= sign * d_buf) {
    cause = std::string(more ? "more" : "fewer") + " in-flight activations";
  } else {
    cause = std::string(more ? "larger" : "smaller") + " gathered buffers";
  }
  out << "  - Memory: " << gib(rd.memory.total) << " -> " << gib(rb.memory.total) << " per GPU of "
      << gib(rb.memory.usable) << " usable ("
      << (gib(rb.memory.total) == gib(rd.memory.total) ? "the same at the printed precision"
                                                       : "mostly " + cause)
      << ").\n";
}

bool pure_data_parallel(const parallel::ParallelPlan& p) {
  return p.tp == 1 && p.pp == 1 && p.cp == 1;
}

// Plain words on why the best plan beats pure data parallelism, or, when the best plan is pure
// data parallelism, why the best model-parallel plan of the space does not; with numbers.
void write_explanation(std::ostream& out, sweep::SearchResult& result, sweep::Objective objective,
                       report::SimulationMode mode) {
  // A copy: best_where may simulate bounded-out plans into `ranked` (below the best plan).
  const sweep::Candidate best = result.ranked.front();
  const parallel::Scenario& b = best.scenario;
  const report::Report& rb = *best.evaluation.report;
  const parallel::ParallelPlan& bp = b.parallel;
  out << "\nWhy the best plan (" << plan_text(b) << ", " << objective_text(rb, objective) << "):\n";
  if (pure_data_parallel(bp)) {
    out << "  It is pure data parallelism"
        << (bp.ep > 1 ? " for the dense layers (its routed experts split over ep=" +
                            std::to_string(bp.ep) + ": below)"
                      : "");
    const auto found = sweep::best_where(
        result, [](const parallel::Scenario& c) { return !pure_data_parallel(c.parallel); },
        objective, mode);
    if (!found) {
      out << ": no model-parallel plan of the searched space runs and fits.\n";
      return;
    }
    const sweep::Candidate* mp = &result.ranked[*found];
    const report::Report& rm = *mp->evaluation.report;
    // What the best model-parallel plan loses in the time the GPU waits (exposed communication
    // and bubble) against the rest of its iteration (compute, host overhead): the headline
    // names the larger, where it always blamed communication and the bubble (a plan that saved
    // 0.010 s of them and lost 0.136 s of compute to a smaller micro-batch read as one that did
    // not pay for its communication).
    const double waits = (rm.exposed_communication + rm.bubble).value() -
                         (rb.exposed_communication + rb.bubble).value();
    const double rest = (rm.iteration_time - rb.iteration_time).value() - waits;
    const auto signed_s = [](double v) { return (v < 0 ? "" : "+") + fixed(v, 3) + " s"; };
    if (rm.iteration_time < rb.iteration_time) {
      // Ranked by energy or cost, a faster model-parallel plan can still rank below.
      out << ": with this cluster and batch the best model-parallel plan is faster ("
          << fixed(rb.iteration_time.value(), 3) << " s -> " << fixed(rm.iteration_time.value(), 3)
          << " s per iteration) but ranks below it on " << sweep::to_string(objective) << ".\n";
    } else if (waits >= rest) {
      out << ": with this cluster and batch no model parallelism of the searched space pays for "
             "its own communication or pipeline bubble.\n";
    } else {
      out << ": with this cluster and batch the best model-parallel plan loses more in compute "
             "than in communication or pipeline bubble (exposed communication and bubble "
          << signed_s(waits) << ", the rest of the iteration " << signed_s(rest) << ").\n";
    }
    out << "  The best model-parallel plan (" << plan_text(mp->scenario) << ", "
        << objective_text(rm, objective) << ") reaches " << ratio_text(rm, rb, objective)
        << "; iteration " << fixed(rb.iteration_time.value(), 3) << " s -> "
        << fixed(rm.iteration_time.value(), 3) << " s:\n";
    write_differences(out, b, rb, mp->scenario, rm, false);
    return;
  }
  // The baseline: the best ranked plan with tp = pp = cp = 1 and the same sharding; else the
  // best ranked one with tp = pp = cp = 1 and any sharding; else the best plan made pure data
  // parallel (dp = gpus), whatever that costs.
  std::optional<sweep::Candidate> found;
  for (const bool same_sharding : {true, false}) {
    if (found) break;
    const auto at = sweep::best_where(
        result,
        [&](const parallel::Scenario& c) {
          return pure_data_parallel(c.parallel) &&
                 (!same_sharding || c.parallel.sharding == bp.sharding);
        },
        objective, mode);
    if (at) found = result.ranked[*at];
  }
  const sweep::Candidate* base = found ? &*found : nullptr;
  sweep::Evaluation own;
  parallel::Scenario dp_only = b;
  if (base == nullptr) {
    parallel::ParallelPlan& p = dp_only.parallel;
    p.tp = p.pp = p.cp = 1;
    p.virtual_stages = 1;
    p.schedule = PipelineSchedule::OneFOneB;
    p.sequence_parallel = false;
    p.dp = dp_only.gpus;
    // The best plan's micro-batch where dp x micro-batch still divides the global batch, else
    // the largest below it that does: a micro-batch is a knob of the plan, and the best one's
    // (8 sequences at dp 8) made pure data parallelism at dp 16 'invalid', and --explain then
    // said model parallelism was needed to run at all. Out of memory there (or past the bytes
    // trainsim counts, report::kMemoryExcessKey), the smaller micro-batches that divide it are
    // tried in turn: micro-batch 2 fit where 8 did not, and 'model parallelism is needed' was
    // false. Where a smaller one fails for another reason (more micro-batches than a step may
    // hold), the largest one's memory is what is reported.
    const std::int64_t per_rank =
        dp_only.training.global_batch % p.dp == 0 ? dp_only.training.global_batch / p.dp : 0;
    const auto memory_bound = [](const sweep::Evaluation& e) {
      return e.status == sweep::Status::OutOfMemory ||
             (e.status == sweep::Status::Invalid &&
              e.problem.rfind(report::kMemoryExcessKey, 0) == 0);
    };
    const std::int64_t best_micro_batch = dp_only.training.micro_batch;
    // Pure data parallelism at expert parallelism `ep`, the micro-batches tried in turn as
    // above; leaves dp_only and `own` at the plan that runs or at the one reported, and says
    // whether it runs.
    const auto try_ep = [&](std::int64_t ep) {
      p.ep = ep;
      bool tried = false;
      std::optional<std::pair<std::int64_t, sweep::Evaluation>> first_memory;
      for (std::int64_t mb = std::min(best_micro_batch, per_rank); mb >= 1; --mb) {
        if (per_rank % mb != 0) continue;
        dp_only.training.micro_batch = mb;
        own = sweep::evaluate(dp_only, mode);  // as the plans it is set against
        tried = true;
        if (!memory_bound(own)) break;
        if (!first_memory) first_memory.emplace(mb, own);
      }
      if (!tried) own = sweep::evaluate(dp_only, mode);
      if (!own.report && !memory_bound(own) && first_memory) {
        dp_only.training.micro_batch = first_memory->first;
        own = first_memory->second;
      }
      return own.report.has_value();
    };
    // A mixture of experts that does not fit at the best plan's ep: every other ep pure data
    // parallelism can take (dividing dp and the experts), the largest first, as each spreads the
    // experts further. DeepSeek-V3 on 256 GB200 did not fit at the best plan's ep 8, and
    // "model parallelism is needed" was said where ep 256 fits. None running, the best plan's
    // ep is the one reported.
    if (!try_ep(p.ep) && memory_bound(own) && model::is_moe(dp_only.model)) {
      const parallel::Scenario at_best_ep = dp_only;
      const sweep::Evaluation at_best_ep_eval = own;
      bool runs = false;
      for (std::int64_t ep = p.dp; ep >= 1 && !runs; --ep) {
        if (ep == at_best_ep.parallel.ep || p.dp % ep != 0 || dp_only.model.num_experts % ep != 0) {
          continue;
        }
        runs = try_ep(ep);
      }
      if (!runs) {
        dp_only = at_best_ep;
        own = at_best_ep_eval;
      }
    }
    if (!own.report) {
      out << "  Pure data parallelism (" << plan_text(dp_only)
          << ") cannot run: " << own.status_text() << ".\n";
      if (own.status == sweep::Status::OutOfMemory) {
        out << "  Model parallelism is needed to split the model state and activations at this "
               "sharding ("
            << parallel::to_string(dp_only.parallel.sharding) << ") and recomputation ("
            << parallel::to_string(dp_only.parallel.recompute) << ") at any micro-batch"
            << (model::is_moe(dp_only.model) ? " and expert parallelism" : "")
            << ": the best plan needs " << gib(rb.memory.total) << " of " << gib(rb.memory.usable)
            << " usable per GPU.\n";
      } else {
        // The plan itself (a global batch of fewer sequences than GPUs, say), found before any
        // memory check: memory is not named as the cause, and the best plan's is a figure.
        out << "  Model parallelism is needed for the plan to run at all (the problem above): "
               "the best plan spreads the GPUs over tp x pp x cp = "
            << bp.tp * bp.pp * bp.cp << " and dp " << bp.dp << ", and needs "
            << gib(rb.memory.total) << " of " << gib(rb.memory.usable) << " usable per GPU.\n";
      }
      return;
    }
  }
  const parallel::Scenario& d = base ? base->scenario : dp_only;
  const report::Report& rd = base ? *base->evaluation.report : *own.report;
  out << "  Against pure data parallelism (" << plan_text(d) << ", "
      << objective_text(rd, objective) << "): " << ratio_text(rb, rd, objective) << "; iteration "
      << fixed(rd.iteration_time.value(), 3) << " s -> " << fixed(rb.iteration_time.value(), 3)
      << " s.\n";
  const bool faster = sweep::score(rb, objective) > sweep::score(rd, objective);
  if (!faster) {
    out << "  The best plan of the searched space does not beat pure data parallelism, which "
           "is outside the space or ranked lower by the objective; the differences:\n";
  }
  write_differences(out, d, rd, b, rb, faster);
}

// The expert all-to-all (dispatch and combine, forward and backward) of one iteration on
// `stage`: calls, bytes per call and summed time (count x time per call), from the report's
// collectives table.
struct AllToAll {
  std::int64_t calls = 0;
  Bytes bytes_per_call;
  double seconds = 0.0;
  std::int64_t ranks = 0;
  std::int64_t nodes = 0;
};

AllToAll all_to_all(const report::Report& r, std::int64_t stage) {
  AllToAll out;
  for (const report::CollectiveSummary& c : r.collectives) {
    if (c.group != "ep" || c.stage != stage) continue;
    out.calls += c.count;
    out.bytes_per_call = c.bytes;
    out.seconds += static_cast<double>(c.count) * c.time.value();
    out.ranks = c.ranks;
    out.nodes = c.nodes;
  }
  return out;
}

// The share of the all-to-all's running time on the critical stage during which no compute
// kernel runs (engine/activity.hpp over the compute streams and the "ep comm" stream), in the
// simulated micro-batches of `scenario`; nothing when the graph has no such stream.
std::optional<double> all_to_all_exposed_share(const parallel::Scenario& scenario) {
  const report::Simulation sim = report::simulate(scenario);
  const auto stage = static_cast<std::size_t>(sim.report.critical_stage);
  if (stage >= sim.iteration.stage_device.size()) return std::nullopt;
  const engine::Graph& graph = sim.iteration.graph;
  std::vector<engine::StreamId> streams;
  bool has_ep = false;
  for (const engine::StreamId st : graph.device_streams(sim.iteration.stage_device[stage])) {
    if (graph.stream_kind(st) == engine::OpKind::Compute) {
      streams.push_back(st);
    } else if (graph.stream_name(st) == "ep comm") {
      streams.push_back(st);
      has_ep = true;
    }
  }
  if (!has_ep) return std::nullopt;
  const engine::DeviceActivity a =
      engine::activity(graph, sim.timeline, streams, SimTime::zero(), sim.timeline.end);
  if (a.communication_busy.value() <= 0.0) return std::nullopt;
  return a.exposed_communication / a.communication_busy;
}

// What expert parallelism costs and saves in the mixture-of-experts plan `e` (ep > 1), against
// the same plan with ep 1: the all-to-all it adds (time and exposed share), the expert state it
// divides, and the expert GEMMs, which see the same rows per GPU either way. The ep 1 plan is
// simulated even when it does not fit (simulate does not need it to), so that its times compare.
void write_expert_parallelism(std::ostream& out, const parallel::Scenario& e,
                              const report::Report& re, sweep::Objective objective) {
  const parallel::ParallelPlan& p = e.parallel;
  const model::ModelSpec& m = e.model;
  parallel::Scenario one = e;
  one.parallel.ep = 1;
  // ep 1 divides every dp and expert count: the plan stays valid (validate's /parallel/ep).
  const std::optional<report::Report> ro =
      parallel::validate(one).empty() ? std::optional<report::Report>(report::simulate(one).report)
                                      : std::nullopt;
  out << "  Expert parallelism (ep=" << p.ep << "): each GPU holds " << m.num_experts << " / "
      << p.ep << " = " << m.num_experts / p.ep << " routed experts of every MoE layer; against "
      << "the same plan with ep=1 (" << objective_text(re, objective) << " vs ";
  if (!ro) {
    out << "invalid):\n";
    return;
  }
  out << objective_text(*ro, objective)
      << (ro->memory.fits ? "" : ", were it to fit: it needs " + gib(ro->memory.total) + " of " +
                                     gib(ro->memory.usable) + " usable")
      << "):\n";
  const AllToAll a2a = all_to_all(re, re.critical_stage);
  out << "  - Costs: all-to-all dispatch and combine, " << a2a.calls << " calls of "
      << to_string(a2a.bytes_per_call) << " per iteration on stage " << re.critical_stage
      << " over " << a2a.ranks << " ranks on " << a2a.nodes << " node(s): "
      << fixed(a2a.seconds, 3) << " s per iteration";
  const std::optional<double> exposed = all_to_all_exposed_share(e);
  if (exposed) {
    const double exposed_s = *exposed * a2a.seconds;
    out << ", " << fixed(100.0 * *exposed, 1) << "% of it exposed (no compute runs beside it: "
        << fixed(exposed_s, 3) << " s, "
        << fixed(re.iteration_time.value() > 0 ? 100.0 * exposed_s / re.iteration_time.value()
                                               : 0.0,
                 1)
        << "% of the " << fixed(re.iteration_time.value(), 3) << " s iteration)";
  }
  out << "; ep=1 has none.\n";
  const report::MemoryBreakdown& mo = ro->memory;
  const report::MemoryBreakdown& me = re.memory;
  out << "  - Saves: parameters " << gib(mo.parameters) << " -> " << gib(me.parameters)
      << ", gradients " << gib(mo.gradients) << " -> " << gib(me.gradients) << ", optimizer "
      << gib(mo.optimizer) << " -> " << gib(me.optimizer) << ", buffers (gathered weights, "
      << "gradients in flight) " << gib(mo.buffers) << " -> " << gib(me.buffers)
      << " per GPU (the routed experts: " << m.num_experts / p.ep << " instead of " << m.num_experts
      << " per GPU, " << sharded_over(report::expert_sharding_degree(e)) << " instead of "
      << sharded_over(report::expert_sharding_degree(one)) << " under "
      << parallel::to_string(p.sharding) << "); total " << gib(mo.total) << " -> " << gib(me.total)
      << " of " << gib(me.usable) << " usable.\n";
  out << "  - Expert GEMMs: the same rows per token (each GPU still runs tokens x top-"
      << m.num_experts_per_token << " expert rows per micro-batch, over " << m.num_experts / p.ep
      << " experts instead of " << m.num_experts << ")";
  // A stack that launches each local expert's GEMM apart floors a grouped GEMM at its launches
  // (iteration_builder's timed(), StackSpec::moe_expert_launch): fewer local experts, fewer.
  if (e.stack.moe_expert_launch.value() > 0.0) {
    const bool casts = e.training.precision == hardware::Dtype::Fp8;
    out << ", but the stack launches them expert by expert (moe.expert_gemm_launch "
        << to_string(e.stack.moe_expert_launch)
        << "): each grouped GEMM takes at least its local experts' launches"
        << (casts ? " and FP8 casts" : "") << ", " << m.num_experts << " -> "
        << m.num_experts / p.ep << " per forward GEMM";
  }
  out << ": compute " << fixed(ro->compute.value(), 3) << " s -> " << fixed(re.compute.value(), 3)
      << " s per iteration on the busiest GPU; "
      << "iteration " << fixed(ro->iteration_time.value(), 3) << " s -> "
      << fixed(re.iteration_time.value(), 3) << " s.\n";
}

// For a mixture-of-experts search: the EP lines for the best plan, or, when the best plan has
// ep 1, for the best ranked plan with ep > 1.
void write_expert_explanation(std::ostream& out, sweep::SearchResult& result,
                              sweep::Objective objective, report::SimulationMode mode) {
  if (!model::is_moe(result.ranked.front().scenario.model)) return;
  const bool best_has_ep = result.ranked.front().scenario.parallel.ep > 1;
  const auto found = sweep::best_where(
      result, [](const parallel::Scenario& c) { return c.parallel.ep > 1; }, objective, mode);
  if (!found) {
    out << "  Expert parallelism: no plan with ep > 1 of the searched space runs and fits.\n";
    return;
  }
  const sweep::Candidate* with_ep = &result.ranked[*found];
  if (!best_has_ep) {
    out << "  Expert parallelism: the best plan keeps ep=1; the best plan with ep > 1 ("
        << plan_text(with_ep->scenario) << ") ";
    // Ranks are exact down to the bounded search's threshold (sweep::SearchResult).
    // Exact everywhere when no plan was bounded out (it said "ranks below the plans that
    // bounded the search" of a search that bounded none).
    if (result.bounded == 0 || with_ep->evaluation.report->tokens_per_s >= result.threshold) {
      out << "ranks " << *found + 1;
    } else {
      out << "ranks below the plans that bounded the search";
    }
    out << ":\n";
  }
  write_expert_parallelism(out, with_ep->scenario, *with_ep->evaluation.report, objective);
}

// What identifies a sharded search for trainsim merge: a digest of every plan of the space, in
// enumeration order (sweep::fnv1a64, an identity check rather than security), and the memory
// headroom, which a scenario's JSON does not hold but which decides what fits (shards run with
// different --memory-headroom merged into one document with wrong out_of_memory counts),
// --full-simulation, and the content of the hardware, model and stack files.
// Shards of searches with different spaces or scenarios then never merge, even with equal plan
// counts.
std::string search_digest(const parallel::Scenario& base, const sweep::SearchSpace& space,
                          report::SimulationMode mode) {
  std::string text =
      "memory headroom " + io::format_number(base.stack.memory.headroom_fraction) + "\n";
  // --full-simulation too (sweep::run_digest): its figures differ in their last digits, and
  // plans past the whole-iteration bound are invalid there. Unchanged without it.
  if (mode == report::SimulationMode::Full) text += "full simulation\n";
  // The hardware, model and stack files by content: shards run against an edited copy of one
  // merged into a document whose plans had been priced on two different inputs.
  std::vector<std::string> references = {base.hardware_path, base.model_path, base.stack_path};
  references.insert(references.end(), base.stack.extends_files.begin(),
                    base.stack.extends_files.end());
  text += sweep::reference_file_digests(references);
  for (const parallel::Scenario& s : sweep::enumerate_plans(base, space)) {
    text += io::scenario_to_json(s).dump();
    text += '\n';
  }
  return io::digest_text(sweep::fnv1a64(text));
}

int run_search(const SearchOptions& o) {
  const sweep::Shard shard = sweep::shard_from_flags(
      o.shard, sweep::ShardEnvironment{.slurm_array_task_id = env("SLURM_ARRAY_TASK_ID"),
                                       .slurm_array_task_count = env("SLURM_ARRAY_TASK_COUNT"),
                                       .job_completion_index = env("JOB_COMPLETION_INDEX"),
                                       .shard_count = o.shard_count});
  if (o.top < 1) throw ConfigError("--top", "", "expected at least 1, got " + std::to_string(o.top));
  const int jobs = sweep::parse_jobs(o.jobs, "--jobs");
  keep_freed_memory();
  sweep::SearchSpace space = space_of(o);
  const parallel::Scenario base = base_of(o);
  apply_expert_parallelism(o, base, space);
  const sweep::Objective objective =
      o.objective == "tokens_per_joule"         ? sweep::Objective::TokensPerJoule
      : o.objective == "usd_per_million_tokens" ? sweep::Objective::UsdPerMillionTokens
                                                : sweep::Objective::TokensPerS;
  // A profile may leave its price at 0 (costs are then not reported as known); ranking by a cost
  // of $0 for every plan put them in enumeration order, the fastest anywhere.
  if (objective == sweep::Objective::UsdPerMillionTokens && !(base.hardware.usd_per_gpu_hour > 0)) {
    throw ConfigError("--objective", "",
                      "hardware '" + io::shown_name(base.hardware_name, base.hardware_inline) +
                          "' has a price_per_gpu_hour of 0, so every plan costs $0 per million "
                          "tokens; expected a profile with a price, or another objective");
  }
  const sweep::Progress progress = terminal_progress();
  const report::SimulationMode mode =
      o.full_simulation ? report::SimulationMode::Full : report::SimulationMode::Extrapolate;
  // Bounded by --top (sweep::search): plans that cannot rank in it are not simulated. A sharded
  // search (any --shard, 0/1 and a one-task `auto` included) simulates every plan that fits, so
  // that its counts are those trainsim merge sums whatever N is.
  sweep::SearchResult result = sweep::search(base, space, objective, jobs, shard, progress, mode,
                                             o.exhaustive || !o.shard.empty() ? 0 : o.top);
  if (o.format == "json") {
    nlohmann::ordered_json doc;
    // What was searched, as run's context names it (it gave the versions alone, and a search in
    // which no plan fits left a document naming no model, hardware or stack).
    doc["context"] = io::scenario_context(base);
    doc["objective"] = sweep::to_string(objective);
    doc["shard"] = std::to_string(shard.index) + "/" + std::to_string(shard.count);
    // Only with --shard, so that an unsharded document keeps its bytes (merge drops the key).
    if (!o.shard.empty()) doc["spec"] = search_digest(base, space, mode);
    doc["top"] = o.top;  // each shard keeps its best `top`: trainsim merge needs to know it
    doc["enumerated"] = result.enumerated;
    doc["evaluated"] = result.in_shard;
    doc["invalid"] = result.invalid;
    doc["out_of_memory"] = result.out_of_memory;
    doc["simulated"] = result.simulated;
    doc["bounded"] = result.bounded;
    // Which memory a plan may use, as the table's header says: also where no plan fits.
    report::MemoryBreakdown reserve;
    report::apply_memory_reserve(base, reserve);
    doc["memory_per_gpu"] = io::memory_reserve_to_json(reserve);
    nlohmann::ordered_json plans = nlohmann::ordered_json::array();
    for (std::size_t i = 0;
         i < std::min<std::size_t>(static_cast<std::size_t>(o.top), result.ranked.size()); ++i) {
      const sweep::Candidate& c = result.ranked[i];
      nlohmann::ordered_json plan;
      plan["rank"] = i + 1;
      plan["index"] = c.index;
      const nlohmann::json report = io::report_to_json(c.scenario, *c.evaluation.report);
      for (const auto& [key, value] : report.items()) {
        if (key != "context") plan[key] = value;
      }
      plans.push_back(plan);
    }
    doc["plans"] = plans;
    if (o.explain && !result.ranked.empty()) {
      // The table's explanation, line by line (it used to be dropped without a word).
      std::ostringstream text;
      write_explanation(text, result, objective, mode);
      write_expert_explanation(text, result, objective, mode);
      nlohmann::ordered_json lines = nlohmann::ordered_json::array();
      std::istringstream in(text.str());
      for (std::string line; std::getline(in, line);) {
        if (!line.empty()) lines.push_back(line);
      }
      doc["explanation"] = lines;
    }
    std::cout << doc.dump(2) << '\n';
  } else {
    std::cout << "Plans for " << io::shown_name(base.model_name, base.model_inline) << " on "
              << base.gpus << " x " << io::shown_name(base.hardware_name, base.hardware_inline)
              << (base.gpus == 1 ? " GPU, global batch " : " GPUs, global batch ")
              << base.training.global_batch << ", seq " << base.training.seq_len << "; objective "
              << sweep::to_string(objective) << "\n";
    // Which memory a plan may use (report/memory.hpp): the same for every plan of the search.
    report::MemoryBreakdown reserve;
    report::apply_memory_reserve(base, reserve);
    // Below a GiB in its own unit: a headroom leaving 3.40 MiB printed "0.0 GiB usable".
    const auto memory = [](Bytes b) {
      return b.value() >= 1024.0 * 1024.0 * 1024.0 ? gib(b) : to_string(b);
    };
    std::cout << "Memory per GPU: " << memory(reserve.usable) << " usable of "
              << gib(reserve.capacity) << " HBM (reserved " << memory(reserve.reserved)
              << ", headroom " << fixed(100.0 * reserve.headroom_fraction, 1) << " %)\n"
              << result.enumerated << " plans enumerated";
    if (shard.count > 1) {
      std::cout << " (shard " << shard.index << "/" << shard.count << ": " << result.in_shard
                << ")";
    }
    std::cout << "; " << result.invalid << " invalid, " << result.out_of_memory
              << " out of memory (pruned before simulating), " << result.simulated
              << " simulated";
    if (result.bounded > 0) {
      std::cout << ", " << result.bounded << " not simulated (their compute alone is slower "
                << "than the " << ordinal(o.top) << " best plan's iteration)";
    }
    std::cout << "\n\n";
    if (result.ranked.empty()) {
      std::cout << "No plan of the search space runs and fits in memory.\n";
      if (!result.invalid_reasons.empty()) {
        std::cout << "Invalid plans by the key at fault (the first plan's problem):\n";
        for (const sweep::SearchResult::InvalidReason& r : result.invalid_reasons) {
          std::cout << "  " << r.count << " x " << r.example << "\n";
        }
      }
    } else {
      write_table(std::cout, result, o.top, model::is_moe(base.model));
      if (o.explain) {
        write_explanation(std::cout, result, objective, mode);
        write_expert_explanation(std::cout, result, objective, mode);
      }
    }
  }
  if (result.ranked.empty() && shard.count == 1) {
    // Plans that run but do not fit: memory is what to fix, whatever the invalid ones lack (a
    // 1-GPU MoE search named 'tp x pp x cp = 1 x 2 x 1 exceeds the 1 gpus', commonest among 972
    // invalid plans, where the 36 plans that run needed 90.9 GiB or more). The plan needing
    // least is named, and the headroom where it takes memory (0.9898 left 3.40 MiB usable).
    if (result.least_out_of_memory) {
      report::MemoryBreakdown reserve;
      report::apply_memory_reserve(base, reserve);
      // Less headroom is worth naming only where it would make room for that plan: what is
      // usable with none is at least what it needs (698 GiB on an 80 GiB GPU is not).
      parallel::Scenario no_headroom = base;
      no_headroom.stack.memory.headroom_fraction = 0.0;
      report::MemoryBreakdown without;
      report::apply_memory_reserve(no_headroom, without);
      const bool headroom_helps =
          reserve.headroom_fraction > 0.0 && *result.least_out_of_memory <= without.usable;
      throw PlanError(
          "no plan of the search space runs and fits in memory; " +
          std::to_string(result.out_of_memory) + " of " + std::to_string(result.in_shard) +
          " plans run but do not fit, the least hungry (" +
          plan_text(*result.least_out_of_memory_plan) + ") " + result.least_out_of_memory_problem +
          "; expected a larger cluster, a smaller global batch or a wider search space" +
          (headroom_helps ? ", or less than the " + fixed(100.0 * reserve.headroom_fraction, 1) +
                                " % of HBM kept free (--memory-headroom)"
                          : std::string()));
    }
    // Every plan invalid: the commonest problem is the one to fix.
    if (!result.invalid_reasons.empty()) {
      const sweep::SearchResult::InvalidReason& r = result.invalid_reasons.front();
      throw PlanError("no plan of the search space runs and fits in memory; " +
                      std::to_string(result.invalid) + " of " + std::to_string(result.in_shard) +
                      " plans are invalid; the commonest "
                      "problem (" +
                      std::to_string(r.count) + " plans), as its first plan has it: " + r.example);
    }
    throw PlanError("no plan of the search space runs and fits in memory; expected a larger "
                    "cluster, a smaller global batch or a wider search space");
  }
  return 0;
}

}  // namespace

void register_search(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SearchOptions>();
  CLI::App* c = app.add_subcommand(
      "search",
      "Find the best parallel plan. Default space: tp, pp in {1,2,4,8}; cp 1; for a "
      "mixture-of-experts model ep in the divisors of dp that divide the experts; micro-batch "
      "{1,2,4,8}; sharding {zero1, shard_grad_op, full_shard}; recompute {none, selective, "
      "full}; with pp > 1 the schedules 1f1b and interleaved (2 virtual stages); sequence "
      "parallelism on when tp > 1. Plans that cannot run or fit are pruned before simulating.");
  c->add_option("--hardware", o->hardware, "Hardware profile: built-in id or JSON file")
      ->required();
  c->add_option("--model", o->model, "Model: built-in id, JSON file or HF config.json")
      ->required();
  c->add_option("--stack", o->stack,
                "Software stack: built-in id (default pytorch-2.3-fsdp) or JSON file");
  c->add_option("--gpus", o->gpus, "Number of GPUs");
  c->add_option("--nodes", o->nodes, "Number of nodes (instead of --gpus)");
  c->add_option("--nodes-per-domain", o->nodes_per_domain,
                "Hosts of each NVLink domain the job fills before the next (Slurm's --segment "
                "on GB200 NVL72; default: every host of a domain)");
  c->add_option("--global-batch", o->global_batch, "Sequences per optimizer step (held fixed)")
      ->required();
  c->add_option("--seq-len", o->seq_len, "Sequence length in tokens")->required();
  c->add_option("--precision", o->precision, "bf16 | fp16 | fp32 | fp8 (default bf16)");
  c->add_option("--optimizer", o->optimizer, "adamw | sgd (default adamw)");
  add_memory_headroom_flag(*c, o->memory_headroom);
  c->add_option("--objective", o->objective,
                "tokens_per_s (default) | tokens_per_joule | usd_per_million_tokens")
      ->check(CLI::IsMember({"tokens_per_s", "tokens_per_joule", "usd_per_million_tokens"}));
  c->add_option("--top", o->top, "Plans to print (default 5)");
  c->add_option("--format", o->format, "table | json")->check(CLI::IsMember({"table", "json"}));
  c->add_flag("--explain", o->explain, "Say why the best plan beats pure data parallelism");
  c->add_flag("--full-simulation", o->full_simulation,
              "Simulate every micro-batch instead of extrapolating the steady state");
  c->add_flag("--exhaustive", o->exhaustive,
              "Simulate every plan that fits, also those whose compute alone is slower than the "
              "--top best plans (same plans printed; sharded searches always are)");
  c->add_option("--jobs,-j", o->jobs, "Threads, 1 to 1024 (default 0: all cores)");
  c->add_option("--shard", o->shard, "Evaluate only plans with index % N == K (K/N), or auto");
  c->add_option("--shard-count", o->shard_count, "Number of shards with --shard auto");
  c->add_option("--tp", o->tp, "TP degrees to try, e.g. 1,2,4,8");
  c->add_option("--pp", o->pp, "PP degrees to try");
  c->add_option("--cp", o->cp, "CP degrees to try (default 1)");
  c->add_option("--ep", o->ep,
                "EP degrees to try for a mixture-of-experts model (default: every divisor of dp "
                "that divides the routed experts; dense models: 1)");
  c->add_option("--micro-batch", o->micro_batch, "Micro-batch sizes to try");
  c->add_option("--virtual-stages", o->virtual_stages,
                "Virtual stages tried with the interleaved schedule (default 2)");
  c->add_option("--sharding", o->sharding, "Sharding modes to try, e.g. shard_grad_op,full_shard");
  c->add_option("--recompute", o->recompute, "Recomputation policies to try");
  c->add_option("--schedule", o->schedule, "Pipeline schedules tried when pp > 1");
  c->add_option("--sequence-parallel", o->sequence_parallel,
                "Sequence parallelism values tried when tp > 1: true, false or true,false");
  c->callback([o, &exit_code]() { exit_code = run_search(*o); });
}

}  // namespace trainsim::cli
