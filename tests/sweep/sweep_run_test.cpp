#include "sim/sweep/sweep_run.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include "sim/io/scenario_loader.hpp"
#include "sim/io/sweep_writer.hpp"
#include "sim/sweep/sweep_spec.hpp"

using namespace trainsim;
using namespace trainsim::sweep;

namespace {

// 3 tp x 2 pp x 2 gpus = 12 scenarios, with invalid ones (tp 3) and plans of every kind.
SweepSpec small_spec() {
  return parse_sweep_spec(
      R"({"base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 16},
                  "training": {"seq_len": 2048, "micro_batch": 1, "global_batch": 32},
                  "parallel": {"sharding": "shard_grad_op"}},
         "axes": {"parallel.tp": [1, 2, 3], "parallel.pp": [1, 2], "cluster.gpus": [16, 32]}})",
      "spec.json", "");
}

std::string run(const SweepSpec& spec, int jobs, Shard shard = {},
                io::SweepFormat format = io::SweepFormat::Csv,
                EndRecord end_record = EndRecord::None) {
  return run_sweep(spec, SweepRunOptions{.shard = shard,
                                         .jobs = jobs,
                                         .format = format,
                                         .progress = {},
                                         .end_record = end_record});
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// The cells of a CSV row, a quoted cell (RFC 4180, no inner quotes here) with its quotes.
std::vector<std::string> csv_cells(const std::string& row) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (const char c : row) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// The cell of column `name` (named in `header`) in a CSV row.
std::string cell(const std::string& header, const std::string& row, const std::string& name) {
  const std::vector<std::string> names = split(header, ',');
  const auto at = std::find(names.begin(), names.end(), name);
  REQUIRE(at != names.end());
  const std::vector<std::string> cells = csv_cells(row);
  REQUIRE(cells.size() == names.size());
  return cells[static_cast<std::size_t>(at - names.begin())];
}

}  // namespace

TEST_CASE("sweep run: one row per scenario in spec order, invalid plans as rows", "[sweep]") {
  const SweepSpec spec = small_spec();
  const std::string csv = run(spec, 2);
  // Header plus 12 rows.
  REQUIRE(count_lines(csv) == 13);
  CHECK(csv.rfind(io::csv_header(), 0) == 0);
  // Scenario 4 is tp 2 (the slowest axis at its second value), pp 1, 16 GPUs (index
  // 4 = 1 x 4 + 0 x 2 + 0): the row starts with its index and scenario columns.
  CHECK(csv.find("\n4,h100-dgx,llama2-7b,16,2,2,1,1,8,1,32,2048,") != std::string::npos);
  // tp 3 divides neither 16 nor 32 GPUs: rows 8..11 are invalid, not errors.
  CHECK(csv.find("\n8,h100-dgx,llama2-7b,16,2,3,1,1,0,") != std::string::npos);
  CHECK(csv.find(",invalid: /parallel: gpus 16 do not split") != std::string::npos);
  // status, then the stack, then mfu_bf16 (the appended column)
  CHECK(csv.find(",ok,pytorch-2.3-fsdp,") != std::string::npos);
}

TEST_CASE("sweep run: a micro-batch too many tokens long for its seq_len is an invalid row",
          "[sweep]") {
  // Each value alone is in range; 8192 sequences of 2^20 tokens are 2^33 tokens, above the 2^32
  // of a micro-batch (scenario.hpp). The sweep wrote the rows before it and stopped with exit 2
  // (only in the shard holding that row); it is the plan's problem, as for run (exit 3).
  const SweepSpec spec = parse_sweep_spec(
      R"({"base": {"hardware": "h100-dgx", "model": "llama3.2-1b", "cluster": {"gpus": 8},
                  "training": {"seq_len": 1, "global_batch": 65536, "micro_batch": 1}},
         "axes": {"training.seq_len": [1, 1048576], "training.micro_batch": [1, 8192]}})",
      "spec.json", "");
  const std::string csv = run(spec, 2);
  REQUIRE(count_lines(csv) == 5);
  CHECK(csv.find("\n3,") != std::string::npos);
  CHECK(csv.find(",invalid: /training/micro_batch: micro_batch 8192 sequences of 1048576 "
                 "tokens = 8589934592 tokens; expected micro_batch x seq_len at most 4294967296 "
                 "tokens,") != std::string::npos);
  // Only row 3: row 2 (seq_len 2^20, micro-batch 1) is not refused for its tokens.
  CHECK(csv.find("micro_batch x seq_len") == csv.rfind("micro_batch x seq_len"));
}

TEST_CASE("sweep run: parallel.ep is an axis, and ep and recompute_layers end each CSV row",
          "[sweep]") {
  // mixtral-8x7b (8 experts) on 16 GPUs, tp 1: dp 16. ep 1, 2, 4 and 8 divide both; ep 3
  // divides neither. Under shard_grad_op every GPU holds the full bf16 parameters of its
  // experts: at ep 1 all of them (2 bytes x 46.7 B > 80 GB, pruned as out of memory). Each
  // doubling of ep halves the routed experts' weights per GPU, and nothing else grows with it,
  // so memory_total_bytes falls strictly with ep. Scenarios after the first come through the
  // resolver's cached fast path, which must carry ep as the loader does.
  const SweepSpec spec = parse_sweep_spec(
      R"({"base": {"hardware": "h100-dgx", "model": "mixtral-8x7b", "cluster": {"gpus": 16},
                  "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 64},
                  "parallel": {"sharding": "shard_grad_op"}},
         "axes": {"parallel.ep": [1, 2, 4, 8, 3]}})",
      "spec.json", "");
  const std::string csv = run(spec, 2);
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < csv.size()) {
    const std::size_t end = csv.find('\n', start);
    lines.push_back(csv.substr(start, end - start));
    start = end + 1;
  }
  REQUIRE(lines.size() == 6);
  // The header ends with the appended columns; dense or not, every row carries its ep, its
  // recompute_layers (0: recompute "none" here) and its hosts per NVLink domain (1 on
  // h100-dgx).
  const std::string tail = ",status,stack,mfu_bf16,ep,recompute_layers,nodes_per_domain";
  REQUIRE(lines[0].size() >= tail.size());
  CHECK(lines[0].substr(lines[0].size() - tail.size()) == tail);
  const std::vector<std::string> eps = {"1", "2", "4", "8", "3"};
  std::vector<std::int64_t> memory;
  for (std::size_t i = 0; i < eps.size(); ++i) {
    const std::string& row = lines[i + 1];
    INFO(row);
    CHECK(cell(lines[0], row, "recompute_layers") == "0");
    CHECK(cell(lines[0], row, "nodes_per_domain") == "1");
    CHECK(cell(lines[0], row, "ep") == eps[i]);
    const std::string bytes = cell(lines[0], row, "memory_total_bytes");
    if (i < 4) {
      REQUIRE(!bytes.empty());
      memory.push_back(std::stoll(bytes));
    }
  }
  CHECK(lines[5].find(",invalid: /parallel/ep: ep 3 does not divide the 8 experts") !=
        std::string::npos);
  for (std::size_t i = 1; i < memory.size(); ++i) CHECK(memory[i] < memory[i - 1]);
}

TEST_CASE("sweep run: output is byte-identical whatever the jobs and the sharding", "[sweep]") {
  const SweepSpec spec = small_spec();
  for (const io::SweepFormat format : {io::SweepFormat::Csv, io::SweepFormat::JsonLines}) {
    const std::string one = run(spec, 1, {}, format);
    CHECK(run(spec, 2, {}, format) == one);
    CHECK(run(spec, 3, {}, format) == one);
    // Three shards with their end records, given in any order, merge back into the unsharded
    // output, whatever the jobs of each.
    std::vector<io::SweepOutput> parts;
    for (std::int64_t k = 2; k >= 0; --k) {
      parts.push_back({"shard" + std::to_string(k),
                       run(spec, static_cast<int>(k) + 1, Shard{.index = k, .count = 3}, format,
                           EndRecord::Shard)});
    }
    CHECK(io::merge_outputs(parts, spec.size()) == one);
    // An unsharded run has no end record: its last line is row 11.
    CHECK(one.find("trainsim") == std::string::npos);
  }
}

namespace {

// Resolves every scenario of `spec` through one resolver (its cached fast path after the first)
// and through the loader, checks they agree, and returns the resolver's loads.
std::size_t fast_equals_loader(const SweepSpec& spec) {
  ScenarioResolver resolver;
  for (std::int64_t i = 0; i < spec.size(); ++i) {
    const io::ScenarioDocument doc = spec.document(i);
    const parallel::Scenario fast = resolver.resolve(doc);
    const parallel::Scenario slow = io::scenario_from_document(doc);
    INFO("scenario " << i);
    CHECK(io::scenario_to_json(fast) == io::scenario_to_json(slow));
    CHECK(fast.parallel.shard_group == slow.parallel.shard_group);
    // A dense scenario's JSON leaves ep out, so it is compared on its own.
    CHECK(fast.parallel.ep == slow.parallel.ep);
    CHECK(fast.nodes_per_domain == slow.nodes_per_domain);
    CHECK(fast.hardware.id == slow.hardware.id);
    CHECK(fast.model.num_layers == slow.model.num_layers);
  }
  return resolver.loads();
}

}  // namespace

TEST_CASE("sweep run: the resolver's cached fast path equals the loader on every key", "[sweep]") {
  // Every scalar key the fast path reads, including nodes (converted with the cached profile's
  // gpus per node) and defaults (no global batch: dp x micro-batch).
  const SweepSpec spec = parse_sweep_spec(
      R"({"base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"nodes": 2},
                  "training": {"seq_len": 1024}},
         "axes": {"cluster.nodes": [1, 4], "parallel.tp": [1, 2],
                  "parallel.sequence_parallel": [true, false],
                  "parallel.pipeline_schedule": ["1f1b", "interleaved"],
                  "parallel.virtual_stages": [1, 2], "parallel.pp": [2],
                  "parallel.sharding": ["none", "hybrid_shard"], "parallel.shard_group": [8],
                  "parallel.recompute": ["selective"], "training.precision": ["fp16"],
                  "training.optimizer": ["sgd"], "training.micro_batch": [1, 3],
                  "parallel.ep": [1, 2]}})",
      "spec.json", "");
  // One hardware/model pair: loaded once.
  CHECK(fast_equals_loader(spec) == 1);

  // cluster.nodes_per_domain on a profile whose domain spans hosts (18 on gb200-nvl72).
  const SweepSpec racks = parse_sweep_spec(
      R"({"base": {"hardware": "gb200-nvl72", "model": "llama2-7b", "cluster": {"gpus": 256},
                  "training": {"seq_len": 1024}, "parallel": {"tp": 16}},
         "axes": {"cluster.nodes_per_domain": [1, 16, 18]}})",
      "spec.json", "");
  CHECK(fast_equals_loader(racks) == 1);
}

TEST_CASE("sweep run: a shard ends with an end record naming the sweep and its rows", "[sweep]") {
  const SweepSpec spec = small_spec();
  const std::string out =
      run(spec, 2, Shard{.index = 1, .count = 5}, io::SweepFormat::Csv, EndRecord::Shard);
  // Shard 1/5 of 12 scenarios holds indices 1, 6 and 11: (12 - 1 + 4) / 5 = 3 rows.
  const std::size_t last = out.rfind('\n', out.size() - 2);
  CHECK(out.substr(last + 1) == "# trainsim shard 1/5 of 12 scenarios, spec " +
                                    io::digest_text(spec_digest(spec)) + ", 3 rows\n");
  CHECK(out.find("\n11,") != std::string::npos);
}

TEST_CASE("sweep run: the spec digest follows the expanded scenarios, not the spelling",
          "[sweep]") {
  const SweepSpec spec = small_spec();
  CHECK(spec_digest(spec) == spec_digest(small_spec()));
  // The same scenarios written with the base's keys in another order: same digest.
  const SweepSpec reordered = parse_sweep_spec(
      R"({"base": {"model": "llama2-7b", "hardware": "h100-dgx", "cluster": {"gpus": 16},
                  "parallel": {"sharding": "shard_grad_op"},
                  "training": {"global_batch": 32, "micro_batch": 1, "seq_len": 2048}},
         "axes": {"parallel.tp": [1, 2, 3], "parallel.pp": [1, 2], "cluster.gpus": [16, 32]}})",
      "spec.json", "");
  CHECK(spec_digest(reordered) == spec_digest(spec));
  // Axes in another order number the scenarios differently: another digest.
  const SweepSpec swapped = parse_sweep_spec(
      R"({"base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 16},
                  "training": {"seq_len": 2048, "micro_batch": 1, "global_batch": 32},
                  "parallel": {"sharding": "shard_grad_op"}},
         "axes": {"parallel.pp": [1, 2], "parallel.tp": [1, 2, 3], "cluster.gpus": [16, 32]}})",
      "spec.json", "");
  CHECK(spec_digest(swapped) != spec_digest(spec));
  // FNV-1a 64 reference values: the empty string hashes to the offset basis, "a" to
  // (0xcbf29ce484222325 ^ 0x61) * 0x100000001b3 mod 2^64 = 0xaf63dc4c8601ec8c.
  CHECK(fnv1a64("") == 0xcbf29ce484222325ULL);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
}

TEST_CASE("sweep run: the spec digest follows the content of the files it names", "[sweep]") {
  std::string folder = (std::filesystem::temp_directory_path() / "trainsim-digest-XXXXXX").string();
  REQUIRE(mkdtemp(folder.data()) != nullptr);
  const std::string model = folder + "/tiny.json";
  const auto write_model = [&model](int layers) {
    std::ofstream(model) << R"({"layers": )" << layers << R"(, "hidden": 1024, "heads": 8,
      "kv_heads": 8, "ffn_hidden": 4096, "vocab": 32000, "activation": "swiglu",
      "norm": "rmsnorm", "tied_embeddings": false, "position_embedding": "rope"})";
  };
  const std::string text = R"({"base": {"hardware": "h100-dgx", "model": "tiny.json",
      "cluster": {"gpus": 8}, "training": {"seq_len": 1024, "micro_batch": 1, "global_batch": 8}},
      "axes": {"parallel.tp": [1, 2]}})";
  write_model(8);
  const SweepSpec before = parse_sweep_spec(text, "spec.json", folder);
  REQUIRE(before.reference_files.rfind("file ", 0) == 0);
  // The same spec reached by another path (a shard started from another folder resolves the
  // model's path otherwise): the same digest.
  CHECK(spec_digest(parse_sweep_spec(text, "spec.json", folder + "/.")) == spec_digest(before));
  CHECK(spec_digest(parse_sweep_spec(text, "spec.json", folder)) == spec_digest(before));
  // The same spec text, the model file edited between two shards: 16 layers, not 8.
  write_model(16);
  const SweepSpec after = parse_sweep_spec(text, "spec.json", folder);
  CHECK(spec_digest(after) != spec_digest(before));
  std::filesystem::remove_all(folder);
  // Built-in ids only: no file line, and the digest of the spec alone.
  CHECK(small_spec().reference_files.empty());
}

TEST_CASE("sweep run: a recompute_layers axis is told apart by its CSV column", "[sweep]") {
  // llama2-7b's 32 layers on pp 2: 16 per stage, so 2, 4 and 16 layers recomputed are all
  // valid; the last column carries the value, and recomputing fewer layers is faster (less
  // recomputed forward), so iteration_time_s (column 21, 0-based 20) falls as the axis falls.
  const SweepSpec spec = parse_sweep_spec(
      R"({"base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 16},
                  "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 64},
                  "parallel": {"pp": 2, "recompute": "full"}},
         "axes": {"parallel.recompute_layers": [16, 4, 2]}})",
      "spec.json", "");
  const std::string csv = run(spec, 2);
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < csv.size();) {
    const std::size_t end = csv.find('\n', start);
    lines.push_back(csv.substr(start, end - start));
    start = end + 1;
  }
  REQUIRE(lines.size() == 4);
  const std::vector<std::string> values = {"16", "4", "2"};
  double previous = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string& row = lines[i + 1];
    INFO(row);
    CHECK(cell(lines[0], row, "recompute_layers") == values[i]);
    const double time = std::stod(cell(lines[0], row, "iteration_time_s"));
    if (i > 0) CHECK(time < previous);
    previous = time;
  }
}

TEST_CASE("sweep run: a nodes_per_domain axis is told apart by its CSV column", "[sweep]") {
  // llama2-7b (32 heads, 32 KV heads: tp 16 splits them) on 256 GB200 GPUs, tp 16, pp 4, dp 4.
  // Filling 16 trays of each 18-tray rack (64 GPUs), every TP group of 16 is in one rack; on
  // full racks of 72 the group of ranks 64-79 has 8 GPUs in each of two racks, so its
  // collectives leave NVLink for the 400 Gb/s NICs and the step is slower. The default (18,
  // every tray) prints the rack's 18.
  const SweepSpec spec = parse_sweep_spec(
      R"({"base": {"hardware": "gb200-nvl72", "model": "llama2-7b", "cluster": {"gpus": 256},
                  "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 16},
                  "parallel": {"tp": 16, "pp": 4, "sequence_parallel": true}},
         "axes": {"cluster.nodes_per_domain": [16, 18]}})",
      "spec.json", "");
  const std::vector<std::string> lines = split(run(spec, 2), '\n');
  REQUIRE(lines.size() == 4);  // header, two rows, the empty tail after the last line break
  CHECK(cell(lines[0], lines[1], "nodes_per_domain") == "16");
  CHECK(cell(lines[0], lines[2], "nodes_per_domain") == "18");
  CHECK(cell(lines[0], lines[1], "status") == "ok");
  CHECK(std::stod(cell(lines[0], lines[1], "iteration_time_s")) <
        std::stod(cell(lines[0], lines[2], "iteration_time_s")));

  // Across hardware: 16 trays per domain fit a GB200 rack, not an 8-GPU DGX (one host per
  // domain), whose row says so while the others run.
  const SweepSpec mixed = parse_sweep_spec(
      R"({"base": {"hardware": "gb200-nvl72", "model": "llama2-7b", "cluster": {"gpus": 256},
                  "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 16},
                  "parallel": {"tp": 16, "pp": 4, "sequence_parallel": true}},
         "axes": {"hardware": ["gb200-nvl72", "h100-dgx"], "cluster.nodes_per_domain": [1, 16]}})",
      "spec.json", "");
  const std::vector<std::string> rows = split(run(mixed, 2), '\n');
  REQUIRE(rows.size() == 6);
  CHECK(cell(rows[0], rows[1], "status") == "ok");
  CHECK(cell(rows[0], rows[2], "status") == "ok");
  CHECK(cell(rows[0], rows[3], "status") == "ok");
  CHECK(cell(rows[0], rows[4], "status")
            .rfind("invalid: /cluster/nodes_per_domain: nodes_per_domain 16 exceeds", 0) == 0);
}

TEST_CASE("sweep run: a pipeline_layout axis takes one list per value, and its rows merge",
          "[sweep]") {
  // llama2-7b's 32 layers on pp 4. An even split (8 per stage) against one whose middle stages
  // hold 10: every 1F1B micro-batch waits on the busiest stage, so the uneven layout is slower;
  // three chunks for four stages is an invalid row, not an error.
  const SweepSpec spec = parse_sweep_spec(
      R"({"base": {"hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 8},
                  "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 64},
                  "parallel": {"tp": 2, "pp": 4, "sharding": "zero1"}},
         "axes": {"parallel.pipeline_layout": [[8, 8, 8, 8], [6, 10, 10, 6], [8, 8, 8]]}})",
      "spec.json", "");
  REQUIRE(spec.size() == 3);
  CHECK(spec.point(1).front() == nlohmann::json::array({6, 10, 10, 6}));
  const std::string csv = run(spec, 2);
  const std::vector<std::string> lines = split(csv.substr(0, csv.size() - 1), '\n');
  REQUIRE(lines.size() == 4);
  CHECK(cell(lines[0], lines[1], "status") == "ok");
  CHECK(cell(lines[0], lines[2], "status") == "ok");
  CHECK(std::stod(cell(lines[0], lines[2], "iteration_time_s")) >
        std::stod(cell(lines[0], lines[1], "iteration_time_s")));
  CHECK(cell(lines[0], lines[3], "status").find("pipeline_layout has 3 model chunks") !=
        std::string::npos);
  // The JSON lines carry the layout in each row's scenario, and merge reads it back.
  const std::string one = run(spec, 1, {}, io::SweepFormat::JsonLines);
  CHECK(one.find("\"pipeline_layout\":[6,10,10,6]") != std::string::npos);
  std::vector<io::SweepOutput> parts;
  for (std::int64_t k = 0; k < 2; ++k) {
    parts.push_back(
        {"shard" + std::to_string(k), run(spec, 1, Shard{.index = k, .count = 2},
                                          io::SweepFormat::JsonLines, EndRecord::Shard)});
  }
  CHECK(io::merge_outputs(parts, spec.size()) == one);
}

TEST_CASE("sweep: an inline model is echoed whole in every row's scenario", "[sweep]") {
  // The resolver's cache served rows after the first with the names alone: their JSON lines'
  // scenario said "model": "inline", which does not run again (docs/sweep.md: the JSON lines
  // carry the scenario as `trainsim run` echoes it).
  const SweepSpec spec = parse_sweep_spec(
      R"({"base": {"hardware": "h100-dgx",
                  "model": {"layers": 2, "hidden": 4096, "heads": 32, "kv_heads": 32,
                            "head_dim": 128, "ffn_hidden": 11008, "vocab": 32000,
                            "activation": "swiglu", "norm": "rmsnorm",
                            "tied_embeddings": false, "position_embedding": "rope"},
                  "cluster": {"gpus": 8},
                  "training": {"seq_len": 2048, "micro_batch": 1, "global_batch": 8}},
         "axes": {"parallel.tp": [1, 2, 4]}})",
      "spec.json", "");
  const std::string out = run(spec, 1, {}, io::SweepFormat::JsonLines);
  int rows = 0;
  for (const auto& line : split(out, '\n')) {
    if (line.empty()) continue;
    ++rows;
    const auto j = nlohmann::json::parse(line);
    REQUIRE(j["scenario"]["model"].is_object());
    REQUIRE(j["scenario"]["model"]["layers"] == 2);
  }
  REQUIRE(rows == 3);
}
