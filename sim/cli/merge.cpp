// `trainsim merge a.csv b.csv ...`: join the outputs of a sharded sweep (CSV or JSON lines) or
// of a sharded search (`--format json`) into exactly the file an unsharded run writes, checking
// from the shards' end records that every shard of one sweep is there, complete, once.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <sys/resource.h>

#include "trainsim/error.hpp"

#include "sim/cli/commands.hpp"
#include "sim/io/atomic_file.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/search_merge.hpp"
#include "sim/io/sweep_writer.hpp"

namespace trainsim::cli {
namespace {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::optional<std::int64_t> expect;
};

// Search documents hold a few top plans; anything this large is not one.
constexpr std::size_t kMaxSearchDocumentBytes = std::size_t{64} << 20;

// Raises the soft limit on open files to at least `wanted`, within the hard limit.
void raise_open_file_limit(std::size_t wanted) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const auto want = static_cast<rlim_t>(wanted);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < want) {
    limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? want : std::min(want, limit.rlim_max);
    (void)::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// The start of the file at `path`.
std::string head_of(const std::string& path) {
  std::ifstream in = io::open_output_file(path);
  char head[256] = {};
  in.read(head, sizeof head);
  return {head, static_cast<std::size_t>(in.gcount())};
}

int merge(const MergeOptions& o) {
  if (o.expect && *o.expect < 0) {
    throw ConfigError("--expect", "", "negative; expected a number of rows >= 0");
  }
  io::require_not_an_input(o.output, "command line (-o)", o.inputs);
  std::optional<std::string> a_search;
  std::optional<std::string> a_sweep;
  // Neither kind (a search's table, any text) joins the sweep outputs, whose merge names what its
  // first line lacks; beside a search document it is named here.
  std::optional<std::pair<std::string, std::string>> other;  // path, first line
  for (const std::string& path : o.inputs) {
    // An empty file tells nothing: the merge of the others' kind refuses it ("empty file").
    const std::string head = head_of(path);
    // A byte-order mark (an editor's save) hid the first line's kind: a JSON-lines shard was
    // called CSV, with the mark printed raw, invisible.
    if (head.rfind("\xEF\xBB\xBF", 0) == 0) {
      throw ConfigError(path, "",
                        "starts with a UTF-8 byte-order mark (bytes EF BB BF); expected a sweep "
                        "or search output as trainsim writes it, without one");
    }
    const io::OutputKind kind = io::output_kind(head);
    if (kind == io::OutputKind::Empty) continue;
    if (kind == io::OutputKind::Other && !other) {
      const std::string line = head.substr(0, head.find('\n'));
      other.emplace(path, io::escape_control(io::utf8_prefix(line, 40)));
    }
    (kind == io::OutputKind::Search ? a_search : a_sweep) = path;
    if (a_search && other) {
      throw ConfigError(other->first, "",
                        "not a search document (it starts '" + other->second + "'), but " +
                            *a_search +
                            " is one; expected the JSON documents of one sharded search "
                            "(trainsim search --format json --shard K/N)");
    }
    if (a_search && a_sweep) {
      throw ConfigError(*a_sweep, "",
                        "a sweep output, but " + *a_search +
                            " is a search output; expected the outputs of one sharded run");
    }
  }
  if (a_search && o.expect) {
    throw ConfigError("--expect", "", "applies to sweep outputs; a search output counts its plans");
  }
  if (!a_search) {
    // Streamed: each shard is checked whole first, so nothing reaches the output unless every
    // shard is complete; the merge then holds one line per shard, not the files. Their rows
    // interleave, so every shard is open at once: past the usual soft limit of 1,024 open files
    // a Slurm array of more tasks could not be merged. The soft limit goes up to the hard one
    // (as a process may raise it itself); past that, opening a shard names the limit.
    raise_open_file_limit(o.inputs.size() + 16);
    io::Output out(o.output);
    io::merge_output_files(o.inputs, o.expect, [&out](std::string_view text) { out.write(text); });
    out.commit();
    return 0;
  }
  std::vector<io::SweepOutput> outputs;
  for (const std::string& path : o.inputs) {
    outputs.push_back({path, io::read_output_file(path, kMaxSearchDocumentBytes)});
  }
  const io::MergedSearch m = io::merge_search_outputs(outputs);
  io::Output out(o.output);
  out.write(m.text);
  out.commit();
  if (m.plans == 0) {
    // As the unsharded search: the document is written, and the run fails.
    throw PlanError(
        "no plan of the search space runs and fits in memory; expected a larger "
        "cluster, a smaller global batch or a wider search space");
  }
  return 0;
}

}  // namespace

void register_merge(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* c = app.add_subcommand(
      "merge",
      "Join sharded sweep outputs (CSV or JSON lines) or sharded search outputs (--format json) "
      "into the file an unsharded run writes");
  c->add_option("inputs", o->inputs, "Shard outputs, in any order")->required();
  c->add_option("-o,--output", o->output, "Write to this file instead of stdout");
  c->add_option("--expect", o->expect,
                "Number of scenarios in the sweep (trainsim sweep --list), checked against the "
                "shards' end records");
  c->callback([o, &exit_code]() { exit_code = merge(*o); });
}

}  // namespace trainsim::cli
