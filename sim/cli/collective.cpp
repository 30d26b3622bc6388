// `trainsim collective`: nccl-tests-style tables (or JSON rows) of the collective model for one
// op on a hardware profile over a range of sizes and node counts. Columns and number
// formatting follow nccl-tests (src/util.cu; docs/sources.md §1.3 and A.12), with
// the chosen algorithm and protocol appended to each row.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/error.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/parallel/scenario.hpp"

#include "sim/cli/commands.hpp"
#include "sim/io/hardware_loader.hpp"
#include "sim/io/json_reader.hpp"
#include "sim/io/spellcheck.hpp"
#include "sim/io/unit_parse.hpp"

namespace trainsim::cli {
namespace {

struct CollectiveOptions {
  std::string hardware;
  std::string op;
  std::string nodes;
  std::optional<int> gpus_per_node;  // none: the profile's
  std::string min_bytes = "8";
  std::string max_bytes = "8GiB";
  int step_factor = 2;
  std::string dtype = "float";
  std::string format = "table";
  std::string algo;   // NCCL_ALGO: "" lets the model choose
  std::string proto;  // NCCL_PROTO
};

struct DtypeInfo {
  const char* name;
  std::int64_t size;
};
// nccl-tests' type names (src/common.cu).
const std::vector<DtypeInfo> kDtypes = {{"float", 4}, {"half", 2}, {"bfloat16", 2}};

// A size flag: a bare integer (bytes) or a unit string ("1MiB", "8 GiB").
std::int64_t parse_size(const std::string& flag, const std::string& text) {
  double value = 0.0;
  // A negative size is no unit problem ("-5" has no unit, but would not do with one).
  const bool negative = text.find_first_not_of(" \t") != std::string::npos &&
                        text[text.find_first_not_of(" \t")] == '-';
  try {
    value = negative ? -1.0 : io::parse_byte_count_or_size(text);
  } catch (const ConfigError& e) {
    throw ConfigError(flag + ": " + e.problem());
  }
  if (!(value >= 1.0)) {
    throw ConfigError(flag + ": expected a size of at least 1 byte like 8, 1MiB or 8GiB, got '" +
                      text + "'");
  }
  io::require_int64_bytes(flag, text, value);
  return static_cast<std::int64_t>(value);
}

std::vector<std::int64_t> parse_nodes(const std::string& text) {
  std::vector<std::int64_t> nodes;
  std::string item;
  const auto bad = [&text]() {
    return ConfigError(
        "--nodes: expected a comma-separated list of positive integers like 4,8,16, "
        "got '" +
        text + "'");
  };
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') {
      if (std::isdigit(static_cast<unsigned char>(text[i])) == 0) throw bad();
      item += text[i];
      continue;
    }
    // "04" is refused, as every numeric flag refuses a zero before its first digit.
    if (item.empty()) throw bad();
    if (item.size() > 1 && item[0] == '0') {
      throw ConfigError("--nodes: '" + item +
                        "' has a zero before its first digit; expected a comma-separated list of "
                        "positive integers like 4,8,16, got '" +
                        text + "'");
    }
    // Digits only, so a long item is a large count: out of range, not malformed.
    if (item.size() > 9 || std::stoll(item) > parallel::kMaxGpus) {
      throw ConfigError("--nodes: " + item + " is out of range; expected at most " +
                        std::to_string(parallel::kMaxGpus) +
                        " ranks in all (nodes x GPUs per node)");
    }
    const std::int64_t n = std::stoll(item);
    if (n < 1) throw bad();
    // nccl-tests runs one node count per job; the same table twice is a typo.
    if (std::find(nodes.begin(), nodes.end(), n) != nodes.end()) {
      throw ConfigError("--nodes: " + std::to_string(n) +
                        " given twice; expected each node count once, got '" + text + "'");
    }
    nodes.push_back(n);
    item.clear();
  }
  return nodes;
}

// nccl-tests' getFloatStr: the value with 2, then 1, then 0 decimals, then in exponent form,
// whichever first fits `width`, right-aligned.
std::string float_str(double value, int width) {
  std::array<char, 64> buf{};
  for (int decimals = 2; decimals >= 0; --decimals) {
    std::snprintf(buf.data(), buf.size(), "%*.*f", width, decimals, value);
    if (static_cast<int>(std::string(buf.data()).size()) <= width) return buf.data();
  }
  for (int decimals = 2; decimals >= 0; --decimals) {
    std::snprintf(buf.data(), buf.size(), "%*.*e", width, decimals, value);
    if (static_cast<int>(std::string(buf.data()).size()) <= width) return buf.data();
  }
  return buf.data();
}

struct Row {
  std::int64_t nodes;
  std::int64_t ranks;
  std::int64_t bytes;
  std::int64_t count;
  collective::CollectiveCost cost;
};

// NCCL_ALGO / NCCL_PROTO spellings, case-insensitive as NCCL reads them ("Ring", "NVLSTree").
std::optional<collective::Algorithm> parse_algo_flag(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::string lower;
  for (const char ch : text)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "nvlstree") lower = "nvls_tree";
  const std::vector<std::string> names = {"ring", "tree", "nvls", "nvls_tree", "pat"};
  for (const auto& n : names) {
    if (lower == n) return collective::parse_algorithm(n);
  }
  throw ConfigError("--algo: unknown algorithm '" + text + "'" + io::did_you_mean(lower, names) +
                    "; expected one of ring, tree, nvls, nvls_tree, pat");
}

std::optional<collective::Protocol> parse_proto_flag(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::string lower;
  for (const char ch : text)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "ll") return collective::Protocol::Ll;
  if (lower == "ll128") return collective::Protocol::Ll128;
  if (lower == "simple") return collective::Protocol::Simple;
  throw ConfigError("--proto: unknown protocol '" + text + "'" +
                    io::did_you_mean(lower, {"ll", "ll128", "simple"}) +
                    "; expected one of ll, ll128, simple");
}

int run_collective(const CollectiveOptions& o, std::ostream& out) {
  const collective::Op op = [&o] {
    try {
      return collective::parse_op(o.op);
    } catch (const ConfigError& e) {
      throw ConfigError("--op: " + e.problem());
    }
  }();
  const std::vector<std::int64_t> node_counts = parse_nodes(o.nodes);
  const std::int64_t min_bytes = parse_size("--min-bytes", o.min_bytes);
  const std::int64_t max_bytes = parse_size("--max-bytes", o.max_bytes);
  if (min_bytes > max_bytes) {
    throw ConfigError("--min-bytes: expected at most --max-bytes (" + o.max_bytes + "), got '" +
                      o.min_bytes + "'");
  }
  if (o.step_factor < 2) {
    throw ConfigError("--step-factor: expected an integer >= 2, got " +
                      std::to_string(o.step_factor));
  }
  const DtypeInfo* dtype = nullptr;
  std::vector<std::string> dtype_names;
  for (const auto& d : kDtypes) {
    dtype_names.emplace_back(d.name);
    if (o.dtype == d.name) dtype = &d;
  }
  if (dtype == nullptr) {
    throw ConfigError("--dtype: unknown type '" + o.dtype + "'" +
                      io::did_you_mean(o.dtype, dtype_names) +
                      "; expected one of float, half, bfloat16");
  }
  if (o.format != "table" && o.format != "json") {
    throw ConfigError("--format: unknown format '" + o.format + "'" +
                      io::did_you_mean(o.format, {"table", "json"}) + "; expected table or json");
  }

  const auto algo = parse_algo_flag(o.algo);
  const auto proto = parse_proto_flag(o.proto);
  const collective::CollectiveModel model(io::load_hardware(o.hardware));
  const auto& hw = model.hardware();
  const std::int64_t gpn = o.gpus_per_node.value_or(static_cast<int>(hw.node.gpus_per_node));
  if (gpn < 1 || gpn > hw.node.gpus_per_node) {
    throw ConfigError("--gpus-per-node: expected 1 to " + std::to_string(hw.node.gpus_per_node) +
                      " (the GPUs of a " + hw.id + " node), got " + std::to_string(gpn));
  }
  for (const std::int64_t nodes : node_counts) {
    if (nodes > parallel::kMaxGpus / gpn) {
      throw ConfigError("--nodes: " + std::to_string(nodes) + " nodes of " + std::to_string(gpn) +
                        " GPUs is out of range; expected at most " +
                        std::to_string(parallel::kMaxGpus) + " ranks in all (at most " +
                        std::to_string(parallel::kMaxGpus / gpn) + " nodes)");
    }
    // One rank: NCCL runs a local copy (nccl-tests prints its time and busbw 0), which the model
    // does not price; it printed 0.00 us and an algbw of 0.00 GB/s, which no copy takes.
    if (nodes * gpn == 1) {
      throw ConfigError(
          "--nodes: 1 node of 1 GPU is a group of one rank, whose collective is a "
          "local copy the model does not price; expected at least 2 ranks "
          "(--nodes 2, or --gpus-per-node 2 or more)");
    }
  }

  // NCCL runs all-to-all and send/receive as point-to-point transfers, which NCCL_ALGO does not
  // select (it names the collective algorithms): "NCCL cannot run all_to_all with
  // NCCL_ALGO=ring" said the opposite of what nccl-tests' alltoall_perf does under it. The model
  // prices those transfers with the Simple protocol alone (collective/cost_model): "NCCL cannot
  // run all_to_all with NCCL_PROTO=ll128" blamed NCCL for the model's scope.
  const bool p2p = op == collective::Op::AllToAll || op == collective::Op::SendRecv;
  if (p2p && algo) {
    throw ConfigError("--algo: NCCL runs " + std::string(collective::to_string(op)) +
                      " as point-to-point sends and receives, which NCCL_ALGO does not select; "
                      "expected no --algo for all_to_all and send_recv");
  }
  if (p2p && proto && *proto != collective::Protocol::Simple) {
    throw ConfigError("--proto: trainsim prices " + std::string(collective::to_string(op)) +
                      "'s point-to-point transfers with NCCL's Simple protocol only; expected "
                      "--proto simple or no --proto");
  }
  // nccl-tests byte accounting (docs/sources.md A.11/A.12): the per-rank count of AllGather,
  // ReduceScatter and AllToAll is size / (n x element) rounded down to a multiple of 16 bytes,
  // and the printed size is count x n x element; other ops count the whole buffer. The rounding
  // is current nccl-tests' (all_gather.cu's `(count/nranks) & -(16/eltSize)`); older releases
  // rounded all_gather and reduce_scatter to whole groups of 4 elements and alltoall not at
  // all, so small rows of their logs differ. nccl-tests prints a size whose count rounds to 0 as
  // a row of 0 bytes, an empty call the model has no cost for: such sizes are left out.
  const bool per_rank = op == collective::Op::AllGather || op == collective::Op::ReduceScatter ||
                        op == collective::Op::AllToAll;
  std::vector<std::vector<Row>> blocks;
  std::vector<parallel::GroupShape> shapes;  // each block's group, for the table's header
  for (const std::int64_t nodes : node_counts) {
    // Consecutive ranks from rank 0, as nccl-tests places them, on the profile's NVLink domains
    // of hosts (docs/placement.md): 19 GB200 trays of 4 span two racks, 72 + 4 ranks, and the
    // least-held rack's NICs carry its traffic, as run prices such a group. (The shape used to
    // leave the domains to the model's even split, so 19 trays priced 12x faster than run.)
    const parallel::GroupShape group =
        parallel::group_shape(nodes * gpn, 1, gpn, hw.node.hosts_per_domain() * gpn);
    std::vector<Row> rows;
    // Bytes per counted element: one element per rank, or one in all.
    const std::int64_t divisor = dtype->size * (per_rank ? group.ranks : 1);
    // Per-rank counts come in whole 16-byte units.
    const std::int64_t align = per_rank ? 16 / dtype->size : 1;
    for (std::int64_t size = min_bytes; size <= max_bytes; size *= o.step_factor) {
      const std::int64_t count = size / divisor / align * align;
      if (count > 0) {
        const std::int64_t bytes = count * divisor;
        const auto cost =
            model.cost_restricted(op, group, Bytes(static_cast<double>(bytes)), algo, proto);
        if (!cost) {
          throw ConfigError(
              std::string(algo ? "--algo" : "--proto") + ": NCCL cannot run " +
              std::string(collective::to_string(op)) + " with" +
              (algo ? " NCCL_ALGO=" + o.algo : "") + (proto ? " NCCL_PROTO=" + o.proto : "") +
              " on " + std::to_string(group.ranks) + " ranks over " + std::to_string(nodes) +
              " nodes of " + hw.id + "; expected an algorithm and protocol eligible there");
        }
        rows.push_back(Row{
            .nodes = nodes, .ranks = group.ranks, .bytes = bytes, .count = count, .cost = *cost});
      }
      if (size > max_bytes / o.step_factor) break;
    }
    if (rows.empty()) {
      // A table with no size at all answers nothing. The first size of the sequence that holds
      // a counted unit is the --max-bytes to ask for: `divisor x align` itself is not on the
      // sequence unless --min-bytes times a power of the factor hits it (from 3 bytes by 2 over
      // 16 ranks, 256 is skipped and 384 is the first). divisor x align is at most 16 x
      // kMaxGpus: no overflow.
      std::int64_t first = min_bytes;
      while (first < divisor * align) first *= o.step_factor;
      throw ConfigError("--max-bytes: no size from " + o.min_bytes + " to " + o.max_bytes +
                        " holds " + (per_rank ? "16 bytes of " : "one ") + o.dtype +
                        (per_rank ? " elements per rank" : " element") + " on " +
                        std::to_string(group.ranks) + " ranks; expected --max-bytes " +
                        "of at least " + std::to_string(first) + " bytes");
    }
    blocks.push_back(std::move(rows));
    shapes.push_back(group);
  }

  if (o.format == "json") {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& block : blocks) {
      for (const auto& r : block) {
        rows.push_back({{"op", collective::to_string(op)},
                        {"nodes", r.nodes},
                        {"ranks", r.ranks},
                        {"bytes", r.bytes},
                        {"time_s", r.cost.time.value()},
                        {"algbw_bytes_per_s", r.cost.algbw.value()},
                        {"busbw_bytes_per_s", r.cost.busbw.value()},
                        {"algorithm", collective::to_string(r.cost.algorithm)},
                        {"protocol", collective::to_string(r.cost.protocol)}});
      }
    }
    out << nlohmann::ordered_json{{"rows", rows}}.dump(2) << '\n';
    return 0;
  }

  const bool no_redop = op == collective::Op::AllGather || op == collective::Op::Broadcast ||
                        op == collective::Op::AllToAll || op == collective::Op::SendRecv;
  const bool rooted = op == collective::Op::Broadcast || op == collective::Op::Reduce;
  out << "# trainsim collective: " << collective::to_string(op) << " on "
      << io::escape_control(hw.id) << " (" << io::escape_control(hw.name) << "), NCCL "
      << io::escape_control(hw.collective.version) << " cost model\n";
  out << "# minBytes " << min_bytes << " maxBytes " << max_bytes << " step: " << o.step_factor
      << "(factor) type: " << dtype->name << "\n";
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const std::vector<Row>& block = blocks[b];
    const std::int64_t nodes = block.empty() ? 0 : block.front().nodes;
    out << "#\n";
    if (!block.empty()) {
      const std::int64_t per_node = block.front().ranks / nodes;
      out << "# nodes " << nodes << ", ranks " << block.front().ranks << " (" << per_node
          << " per node";
      // Where a domain spans hosts (GB200 NVL72) and the group spans several, how the ranks
      // fill the domains priced.
      if (const int hosts = hw.node.hosts_per_domain(); hosts > 1) {
        const parallel::GroupShape& g = shapes[b];
        if (g.domains > 1) {
          const std::int64_t least =
              g.min_ranks_per_domain > 0 ? g.min_ranks_per_domain : g.ranks_per_domain;
          out << "; " << g.domains << " NVLink domains of " << hosts << " nodes, " << least
              << " ranks in the least-held";
        }
      }
      out << ")\n";
    }
    out << "#\n";
    out << "#       size         count      type   redop    root     time   algbw   busbw  "
           "algorithm  protocol\n";
    out << "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n";
    double busbw_sum = 0.0;
    for (const auto& r : block) {
      std::array<char, 256> line{};
      std::snprintf(line.data(), line.size(),
                    "%12lld  %12lld  %8s  %6s  %6i  %7s  %6s  %6s  %9s  %8s",
                    static_cast<long long>(r.bytes), static_cast<long long>(r.count), dtype->name,
                    no_redop ? "none" : "sum", rooted ? 0 : -1,
                    float_str(r.cost.time.value() * 1e6, 7).c_str(),
                    float_str(r.cost.algbw.value() / 1e9, 6).c_str(),
                    float_str(r.cost.busbw.value() / 1e9, 6).c_str(),
                    std::string(collective::to_string(r.cost.algorithm)).c_str(),
                    std::string(collective::to_string(r.cost.protocol)).c_str());
      out << line.data() << '\n';
      busbw_sum += r.cost.busbw.value() / 1e9;
    }
    out << "# Avg bus bandwidth    : "
        << (block.empty() ? 0.0 : busbw_sum / static_cast<double>(block.size())) << "\n";
  }
  return 0;
}

}  // namespace

void register_collective(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<CollectiveOptions>();
  CLI::App* cmd = app.add_subcommand(
      "collective", "nccl-tests-style tables of the collective cost model (NCCL's tuning model)");
  cmd->add_option("--hardware", opts->hardware, "built-in profile id or profile JSON file")
      ->required();
  cmd->add_option("--op", opts->op,
                  "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, "
                  "send_recv")
      ->required();
  cmd->add_option("--nodes", opts->nodes, "comma-separated node counts, e.g. 4,8,16")->required();
  cmd->add_option("--gpus-per-node", opts->gpus_per_node,
                  "ranks per node (default: every GPU of the profile's node)");
  cmd->add_option("--min-bytes", opts->min_bytes, "smallest size: bytes or a unit like 1MiB")
      ->capture_default_str();
  cmd->add_option("--max-bytes", opts->max_bytes, "largest size: bytes or a unit like 8GiB")
      ->capture_default_str();
  cmd->add_option("--step-factor", opts->step_factor, "multiply the size by this each row")
      ->capture_default_str();
  cmd->add_option("--dtype", opts->dtype, "float, half or bfloat16 (element size for counts)")
      ->capture_default_str();
  cmd->add_option("--format", opts->format, "table or json")->capture_default_str();
  cmd->add_option("--algo", opts->algo,
                  "force the algorithm as NCCL_ALGO does: ring, tree, nvls, nvls_tree, pat");
  cmd->add_option("--proto", opts->proto,
                  "force the protocol as NCCL_PROTO does: ll, ll128, simple");
  cmd->callback([opts, &exit_code] { exit_code = run_collective(*opts, std::cout); });
}

}  // namespace trainsim::cli
