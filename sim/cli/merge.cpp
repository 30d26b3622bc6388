// `trainsim merge a.csv b.csv ...`: join the outputs of a sharded sweep (CSV or JSON lines) or
// of a sharded search (`--format json`) into exactly the file an unsharded run writes, checking
// for duplicate and missing rows or shards and for outputs of different runs.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "trainsim/error.hpp"

#include "sim/cli/commands.hpp"
#include "sim/io/search_merge.hpp"
#include "sim/io/sweep_writer.hpp"

namespace trainsim::cli {
namespace {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::optional<std::int64_t> expect;
};

int merge(const MergeOptions& o) {
  std::vector<io::SweepOutput> outputs;
  for (const std::string& path : o.inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(path, "", "cannot read the file; expected a sweep or search output");
    std::ostringstream text;
    text << in.rdbuf();
    outputs.push_back({path, text.str()});
  }
  if (o.expect && *o.expect < 0) {
    throw ConfigError("--expect", "", "negative; expected a number of rows >= 0");
  }
  const auto is_search = [](const io::SweepOutput& f) { return io::is_search_output(f.text); };
  const auto a_search = std::find_if(outputs.begin(), outputs.end(), is_search);
  const auto a_sweep = std::find_if_not(outputs.begin(), outputs.end(), is_search);
  const bool search = a_search != outputs.end();
  if (search && a_sweep != outputs.end()) {
    throw ConfigError(a_sweep->source, "",
                      "a sweep output, but " + a_search->source +
                          " is a search output; expected the outputs of one sharded run");
  }
  if (search && o.expect) {
    throw ConfigError("--expect", "", "applies to sweep outputs; a search output counts its plans");
  }
  std::string merged;
  bool no_plan = false;
  if (search) {
    io::MergedSearch m = io::merge_search_outputs(outputs);
    merged = std::move(m.text);
    no_plan = m.plans == 0;
  } else {
    merged = io::merge_outputs(outputs, o.expect);
  }
  if (o.output.empty() || o.output == "-") {
    std::cout << merged;
  } else {
    std::ofstream out(o.output, std::ios::binary);
    out << merged;
    if (!out) throw ConfigError(o.output, "", "cannot write the file; expected a writable path");
  }
  if (no_plan) {
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
                "Number of scenarios in the sweep (trainsim sweep --list); without it a loss at "
                "the end of the last rows cannot be seen");
  c->callback([o, &exit_code]() { exit_code = merge(*o); });
}

}  // namespace trainsim::cli
