// `trainsim merge a.csv b.csv ...`: join the outputs of a sharded sweep into exactly the file an
// unsharded run writes, checking for duplicate and missing rows and mismatched headers. Sweep
// outputs only (CSV or JSON lines); search outputs are rankings, not rows, and are not merged.
#include <fstream>
#include <iostream>
#include <sstream>

#include "sim/cli/commands.hpp"
#include "sim/io/sweep_writer.hpp"
#include "trainsim/error.hpp"

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
    if (!in) throw ConfigError(path, "", "cannot read the file; expected a sweep output");
    std::ostringstream text;
    text << in.rdbuf();
    outputs.push_back({path, text.str()});
  }
  if (o.expect && *o.expect < 0) {
    throw ConfigError("--expect", "", "negative; expected a number of rows >= 0");
  }
  const std::string merged = io::merge_outputs(outputs, o.expect);
  if (o.output.empty() || o.output == "-") {
    std::cout << merged;
  } else {
    std::ofstream out(o.output, std::ios::binary);
    out << merged;
    if (!out) throw ConfigError(o.output, "", "cannot write the file; expected a writable path");
  }
  return 0;
}

}  // namespace

void register_merge(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* c = app.add_subcommand(
      "merge",
      "Join sharded sweep outputs (CSV or JSON lines) into the file an unsharded run writes");
  c->add_option("inputs", o->inputs, "Shard outputs, in any order")->required();
  c->add_option("-o,--output", o->output, "Write to this file instead of stdout");
  c->add_option("--expect", o->expect,
                "Number of scenarios in the sweep (trainsim sweep --list); without it a loss at "
                "the end of the last rows cannot be seen");
  c->callback([o, &exit_code]() { exit_code = merge(*o); });
}

}  // namespace trainsim::cli
