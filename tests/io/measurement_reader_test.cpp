#include "sim/io/measurement_reader.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

#include "sim/io/json_reader.hpp"

using namespace trainsim;
using trainsim::calibrate::LogStatus;
using trainsim::calibrate::MeasurementDocument;
using trainsim::calibrate::OverlapPoint;
using trainsim::calibrate::PowerActivity;
using trainsim::collective::Op;
using trainsim::hardware::Algorithm;
using trainsim::hardware::Dtype;
using trainsim::hardware::Protocol;

namespace {

// The example of docs/calibration-measurements.md: one record in every array.
const std::string kExample = R"({
  "schema": "trainsim-measurements",
  "schema_version": 1,
  "environment": { "device": "NVIDIA H100 80GB HBM3", "driver": "560.35.03", "cuda": "12.6",
                   "nccl": "2.26.2", "host": "node-17", "timestamp": "2026-11-30T12:00:00Z" },
  "gemm":        [ { "m": 4096, "n": 4096, "k": 4096, "dtype": "bf16", "time": "200 us" } ],
  "attention":   [ { "batch": 1, "heads": 32, "seq_len": 4096, "head_dim": 128, "causal": true,
                     "dtype": "bf16", "time": "1.1 ms" } ],
  "memory":      [ { "kernel": "copy", "bytes": "4 GiB", "time": "1.5 ms" } ],
  "launch":      [ { "time": "4.5 us" } ],
  "power":       [ { "activity": "compute", "power": "655 W" } ],
  "collectives": [ { "op": "all_reduce", "ranks": 16, "nodes": 2, "bytes": "1 GiB",
                     "time": "5.24 ms", "algorithm": "ring", "protocol": "Simple" } ],
  "nccl_tests":  [ { "file": "nccl_tests/h100-ndr-2node-all_reduce-ring.txt",
                     "op": "all_reduce", "ranks": 16, "nodes": 2, "algorithm": "ring",
                     "protocol": "Simple", "status": "healthy", "note": "free text" } ],
  "overlap":     [ { "kernel": "gemm", "m": 8192, "n": 4096, "k": 4096, "dtype": "bf16",
                     "held_sms": 24, "holder": "copy", "holder_rate": "900 GB/s",
                     "time_alone": "400 us", "time": "500 us" } ]
})";

const std::array<const char*, 8> kArrays = {"gemm",  "attention",   "memory",     "launch",
                                            "power", "collectives", "nccl_tests", "overlap"};

// The example with its arrays removed, for tests that add just the record they need.
nlohmann::json header_only() {
  auto j = io::parse_json(kExample, "m.json");
  for (const char* key : kArrays) j.erase(key);
  return j;
}

// The header plus one record in `array`.
nlohmann::json with_record(const std::string& array, const std::string& record) {
  auto j = header_only();
  j[array] = nlohmann::json::array({io::parse_json(record, "record")});
  return j;
}

MeasurementDocument parse(const nlohmann::json& j, const std::string& source = "m.json") {
  return io::parse_measurement_document(j.dump(), source);
}

// Parses `text`, swallowing ConfigError only: any other exception escapes to fail the test.
void parse_or_config_error(const std::string& text) {
  try {
    (void)io::parse_measurement_document(text, "f.json");
  } catch (const ConfigError&) {
  }
}

}  // namespace

TEST_CASE("measurement_reader: the documented example is read field by field", "[io]") {
  const auto doc = io::parse_measurement_document(kExample, "/data/calib/h200.json");
  REQUIRE(doc.source == "/data/calib/h200.json");
  REQUIRE(doc.environment.device == "NVIDIA H100 80GB HBM3");
  REQUIRE(doc.environment.driver == "560.35.03");
  REQUIRE(doc.environment.cuda == "12.6");
  REQUIRE(doc.environment.nccl == "2.26.2");
  REQUIRE(doc.environment.host == "node-17");
  REQUIRE(doc.environment.timestamp == "2026-11-30T12:00:00Z");

  const auto& set = doc.points;
  REQUIRE(set.gemms.size() == 1);
  const auto& g = set.gemms[0];
  REQUIRE(g.m == 4096);
  REQUIRE(g.n == 4096);
  REQUIRE(g.k == 4096);
  REQUIRE(g.dtype == Dtype::Bf16);
  REQUIRE(g.time.value() == Approx(200e-6).epsilon(1e-12));
  REQUIRE(g.origin.source == "/data/calib/h200.json");
  REQUIRE(g.origin.line == 0);
  REQUIRE(g.origin.label == "gemm[0]");

  REQUIRE(set.attention.size() == 1);
  const auto& a = set.attention[0];
  REQUIRE(a.batch == 1);
  REQUIRE(a.heads == 32);
  REQUIRE(a.seq_len == 4096);
  REQUIRE(a.head_dim == 128);
  REQUIRE(a.causal);
  REQUIRE(a.dtype == Dtype::Bf16);
  REQUIRE(a.time.value() == Approx(1.1e-3).epsilon(1e-12));
  REQUIRE(a.origin.label == "attention[0]");

  REQUIRE(set.memory.size() == 1);
  // 4 GiB = 4 x 2^30 bytes.
  REQUIRE(set.memory[0].bytes.value() == Approx(4.0 * 1073741824.0).epsilon(1e-12));
  REQUIRE(set.memory[0].time.value() == Approx(1.5e-3).epsilon(1e-12));
  REQUIRE(set.memory[0].origin.label == "memory[0]");

  REQUIRE(set.launches.size() == 1);
  REQUIRE(set.launches[0].time.value() == Approx(4.5e-6).epsilon(1e-12));
  REQUIRE(set.launches[0].origin.label == "launch[0]");

  REQUIRE(set.power.size() == 1);
  REQUIRE(set.power[0].activity == PowerActivity::Compute);
  REQUIRE(set.power[0].power.value() == Approx(655.0).epsilon(1e-12));
  REQUIRE(set.power[0].origin.label == "power[0]");

  REQUIRE(set.collectives.size() == 1);
  const auto& c = set.collectives[0];
  REQUIRE(c.op == Op::AllReduce);
  REQUIRE(c.group.ranks == 16);
  REQUIRE(c.group.nodes == 2);
  // ranks_per_node defaults to ceil(16 / 2) = 8.
  REQUIRE(c.group.ranks_per_node == 8);
  REQUIRE(c.bytes.value() == Approx(1073741824.0).epsilon(1e-12));
  REQUIRE(c.time.value() == Approx(5.24e-3).epsilon(1e-12));
  REQUIRE(c.algorithm == Algorithm::Ring);
  REQUIRE(c.protocol == Protocol::Simple);
  REQUIRE(c.nccl_version == "2.26.2");  // from the document's environment
  REQUIRE(c.origin.source == "/data/calib/h200.json");
  REQUIRE(c.origin.label == "collectives[0]");

  REQUIRE(doc.logs.size() == 1);
  const auto& log = doc.logs[0];
  // Relative to the document's folder, /data/calib.
  REQUIRE(std::filesystem::path(log.path) ==
          std::filesystem::path("/data/calib/nccl_tests/h100-ndr-2node-all_reduce-ring.txt"));
  REQUIRE(log.op == Op::AllReduce);
  REQUIRE(log.ranks == 16);
  REQUIRE(log.nodes == 2);
  REQUIRE(log.algorithm == Algorithm::Ring);
  REQUIRE(log.protocol == Protocol::Simple);
  // The log's source does not state its NCCL (calibration/nccl_tests/README.md): none given.
  REQUIRE_FALSE(log.nccl_version.has_value());
  REQUIRE(log.status == LogStatus::Healthy);
  REQUIRE(log.note == "free text");
  REQUIRE(log.origin.source == "/data/calib/h200.json");
  REQUIRE(log.origin.line == 0);
  REQUIRE(log.origin.label == "/nccl_tests/0");
}

TEST_CASE("measurement_reader: an overlap record is read field by field", "[io]") {
  const auto doc = io::parse_measurement_document(kExample, "m.json");
  REQUIRE(doc.points.overlap.size() == 1);
  const OverlapPoint& p = doc.points.overlap[0];
  REQUIRE(p.m == 8192);
  REQUIRE(p.n == 4096);
  REQUIRE(p.k == 4096);
  REQUIRE(p.dtype == Dtype::Bf16);
  REQUIRE(p.held_sms == 24);
  REQUIRE(p.copying);
  REQUIRE(p.rate->value() == Approx(900e9));
  REQUIRE(p.sm_count_target == 0);  // the documented default
  REQUIRE(p.time_alone.value() == Approx(400e-6));
  REQUIRE(p.time.value() == Approx(500e-6));
  REQUIRE(p.origin.label == "overlap[0]");
  const std::string waiting =
      R"({"kernel": "gemm", "m": 1, "n": 2, "k": 3, "dtype": "bf16", "held_sms": 1,
          "holder": "wait", "sm_count_target": 131, "time_alone": "1 us", "time": "2 us"})";
  const auto w = parse(with_record("overlap", waiting)).points.overlap[0];
  REQUIRE_FALSE(w.copying);
  REQUIRE_FALSE(w.rate.has_value());
  REQUIRE(w.sm_count_target == 131);
}

TEST_CASE("measurement_reader: every array is optional", "[io]") {
  const std::string kept = GENERATE(from_range(kArrays.begin(), kArrays.end()));
  auto j = io::parse_json(kExample, "m.json");
  for (const char* key : kArrays) {
    if (key != kept) j.erase(key);
  }
  const auto doc = parse(j);
  const auto& set = doc.points;
  REQUIRE(set.gemms.size() == (kept == "gemm" ? 1U : 0U));
  REQUIRE(set.attention.size() == (kept == "attention" ? 1U : 0U));
  REQUIRE(set.memory.size() == (kept == "memory" ? 1U : 0U));
  REQUIRE(set.launches.size() == (kept == "launch" ? 1U : 0U));
  REQUIRE(set.power.size() == (kept == "power" ? 1U : 0U));
  REQUIRE(set.collectives.size() == (kept == "collectives" ? 1U : 0U));
  REQUIRE(doc.logs.size() == (kept == "nccl_tests" ? 1U : 0U));
  REQUIRE(set.overlap.size() == (kept == "overlap" ? 1U : 0U));
}

TEST_CASE("measurement_reader: a record repeated field for field is noted, in any key order",
          "[io]") {
  auto j = io::parse_json(kExample, "m.json");
  CHECK(parse(j).repeated.empty());
  // The example's GEMM again with its keys in reverse order: equal as JSON objects.
  nlohmann::ordered_json reversed;
  const nlohmann::json& gemm = j["gemm"][0];
  for (auto it = gemm.rbegin(); it != gemm.rend(); ++it) reversed[it.key()] = *it;
  j["gemm"].push_back(nlohmann::json::parse(reversed.dump()));
  const auto doc = parse(j);
  CHECK(doc.points.gemms.size() == 2);
  REQUIRE(doc.repeated.size() == 1);
  CHECK(doc.repeated[0] ==
        "/gemm/1 repeats /gemm/0 field for field; both are fitted (remove one if it is a copy)");
}

TEST_CASE("measurement_reader: optional keys take their documented defaults", "[io]") {
  SECTION("attention is causal unless it says otherwise") {
    const std::string base =
        R"("batch": 2, "heads": 8, "seq_len": 512, "head_dim": 64, "dtype": "fp16", "time": "1 ms")";
    REQUIRE(parse(with_record("attention", "{" + base + "}")).points.attention[0].causal);
    REQUIRE_FALSE(parse(with_record("attention", "{" + base + R"(, "causal": false})"))
                      .points.attention[0]
                      .causal);
  }
  SECTION("every dtype name") {
    const auto [name, dtype] = GENERATE(table<std::string, Dtype>({{"fp32", Dtype::Fp32},
                                                                   {"tf32", Dtype::Tf32},
                                                                   {"fp16", Dtype::Fp16},
                                                                   {"bf16", Dtype::Bf16},
                                                                   {"fp8", Dtype::Fp8}}));
    const auto doc = parse(with_record(
        "gemm", R"({"m": 1, "n": 2, "k": 3, "dtype": ")" + name + R"(", "time": "1 us"})"));
    REQUIRE(doc.points.gemms[0].dtype == dtype);
  }
  SECTION("ranks_per_node defaults to ceil(ranks / nodes); algorithm and protocol to none") {
    const auto doc = parse(with_record(
        "collectives",
        R"({"op": "all_gather", "ranks": 10, "nodes": 3, "bytes": "1 MB", "time": "1 ms"})"));
    const auto& c = doc.points.collectives[0];
    REQUIRE(c.op == Op::AllGather);
    // ceil(10 / 3) = 4: three nodes of at most 4 hold 10 ranks (4 + 3 + 3).
    REQUIRE(c.group.ranks_per_node == 4);
    REQUIRE_FALSE(c.algorithm.has_value());
    REQUIRE_FALSE(c.protocol.has_value());
  }
  SECTION("an explicit ranks_per_node, and algorithm and protocol independently") {
    const auto doc = parse(with_record("collectives",
                                       R"({"op": "reduce_scatter", "ranks": 10, "nodes": 3,
                                           "ranks_per_node": 8, "bytes": "1 MB", "time": "1 ms",
                                           "protocol": "LL128"})"));
    const auto& c = doc.points.collectives[0];
    // 8 + 1 + 1 = 10: the fullest node holds 8.
    REQUIRE(c.group.ranks_per_node == 8);
    REQUIRE_FALSE(c.algorithm.has_value());
    REQUIRE(c.protocol == Protocol::Ll128);
  }
  SECTION("algorithm and protocol names ignore case; NCCL_ALGO's NVLSTree is nvls_tree") {
    const auto [algo_name, algo] =
        GENERATE(table<std::string, Algorithm>({{"RING", Algorithm::Ring},
                                                {"Tree", Algorithm::Tree},
                                                {"nvls", Algorithm::Nvls},
                                                {"NVLSTree", Algorithm::NvlsTree},
                                                {"nvls_tree", Algorithm::NvlsTree},
                                                {"PAT", Algorithm::Pat}}));
    const auto [proto_name, proto] = GENERATE(table<std::string, Protocol>(
        {{"ll", Protocol::Ll}, {"ll128", Protocol::Ll128}, {"SIMPLE", Protocol::Simple}}));
    const auto doc = parse(
        with_record("collectives", R"({"op": "all_reduce", "ranks": 8, "nodes": 1, "bytes": "1 MB",
                           "time": "1 ms", "algorithm": ")" +
                                       algo_name + R"(", "protocol": ")" + proto_name + R"("})"));
    REQUIRE(doc.points.collectives[0].algorithm == algo);
    REQUIRE(doc.points.collectives[0].protocol == proto);
  }
  SECTION("a record's own environment names it and overrides the NCCL version") {
    auto j = with_record("collectives", R"({"op": "all_reduce", "ranks": 8, "nodes": 1,
        "bytes": "1 MB", "time": "1 ms", "environment": {"device": "NVIDIA H100", "nccl": "2.21.5"}})");
    j["launch"] = nlohmann::json::array(
        {io::parse_json(R"({"time": "5 us", "environment": {"host": "node-3"}})", "r")});
    const auto doc = parse(j);
    REQUIRE(doc.points.collectives[0].origin.label == "collectives[0] on NVIDIA H100");
    REQUIRE(doc.points.collectives[0].nccl_version == "2.21.5");
    REQUIRE(doc.points.launches[0].origin.label == "launch[0]");
  }
  SECTION("no NCCL version anywhere leaves it unknown") {
    auto j = with_record("collectives",
                         R"({"op": "broadcast", "ranks": 2, "nodes": 2, "bytes": "1 MB",
                             "time": "1 ms"})");
    j["environment"].erase("nccl");
    const auto doc = parse(j);
    REQUIRE(doc.environment.nccl.empty());
    REQUIRE_FALSE(doc.points.collectives[0].nccl_version.has_value());
  }
  SECTION("an nccl_tests entry needs only its file; status defaults to healthy") {
    const auto doc = parse(with_record("nccl_tests", R"({"file": "a.txt"})"));
    const auto& log = doc.logs[0];
    REQUIRE(log.status == LogStatus::Healthy);
    REQUIRE_FALSE(log.op.has_value());
    REQUIRE_FALSE(log.ranks.has_value());
    REQUIRE_FALSE(log.nodes.has_value());
    REQUIRE_FALSE(log.algorithm.has_value());
    REQUIRE_FALSE(log.protocol.has_value());
    // Not the document's NCCL: a log may come from another machine.
    REQUIRE_FALSE(log.nccl_version.has_value());
    REQUIRE(log.note.empty());
  }
  SECTION("a log with a reported problem") {
    const auto doc =
        parse(with_record("nccl_tests", R"({"file": "a.txt", "status": "reported_problem"})"));
    REQUIRE(doc.logs[0].status == LogStatus::ReportedProblem);
  }
  SECTION("every power activity and memory kernel") {
    auto j = header_only();
    j["power"] = io::parse_json(R"([{"activity": "idle", "power": "70 W"},
                                    {"activity": "communication", "power": "0.4 kW"}])",
                                "r");
    j["memory"] = io::parse_json(R"([{"kernel": "triad", "bytes": "1 GB", "time": "1 ms"}])", "r");
    const auto doc = parse(j);
    REQUIRE(doc.points.power[0].activity == PowerActivity::Idle);
    REQUIRE(doc.points.power[1].activity == PowerActivity::Communication);
    REQUIRE(doc.points.power[1].power.value() == Approx(400.0).epsilon(1e-12));
    REQUIRE(doc.points.power[1].origin.label == "power[1]");
    REQUIRE(doc.points.memory[0].bytes.value() == Approx(1e9).epsilon(1e-12));
  }
}

TEST_CASE("measurement_reader: log paths are taken from the document's folder", "[io]") {
  using std::filesystem::path;
  const auto log_path = [](const std::string& file, const std::string& source) {
    return path(
        parse(with_record("nccl_tests", R"({"file": ")" + file + R"("})"), source).logs[0].path);
  };
  REQUIRE(log_path("logs/a.txt", "runs/h200/m.json") == path("runs/h200/logs/a.txt"));
  REQUIRE(log_path("../b.txt", "runs/h200/m.json") == path("runs/h200/../b.txt"));
  // A document in the working folder leaves the path as written.
  REQUIRE(log_path("logs/a.txt", "m.json") == path("logs/a.txt"));
  REQUIRE(log_path("/abs/a.txt", "runs/h200/m.json") == path("/abs/a.txt"));
}

TEST_CASE("measurement_reader: bad overlap records name the key", "[io]") {
  const std::string base =
      R"("m": 1, "n": 2, "k": 3, "dtype": "bf16", "held_sms": 24, "time_alone": "1 us", "time": "2 us")";
  SECTION("a rate for a holder that only waits") {
    const auto j =
        with_record("overlap", R"({"kernel": "gemm", "holder": "wait", "holder_rate": "9 GB/s", )" +
                                   base + "}");
    REQUIRE_THROWS_WITH(parse(j), Catch::Contains("m.json: /overlap/0/holder_rate: a rate for a "
                                                  "holder that does not copy"));
  }
  SECTION("a kernel the contention does not cover") {
    const auto j = with_record("overlap", R"({"kernel": "triad", "holder": "copy", )" + base + "}");
    REQUIRE_THROWS_WITH(parse(j),
                        Catch::Contains("m.json: /overlap/0/kernel:") && Catch::Contains("gemm"));
  }
  SECTION("no time alone") {
    auto j = with_record("overlap", R"({"kernel": "gemm", "holder": "copy", )" + base + "}");
    j["overlap"][0].erase("time_alone");
    REQUIRE_THROWS_WITH(parse(j), Catch::Contains("m.json: /overlap/0/time_alone: missing"));
  }
  SECTION("no SMs held") {
    auto j = with_record("overlap", R"({"kernel": "gemm", "holder": "copy", )" + base + "}");
    j["overlap"][0]["held_sms"] = 0;
    REQUIRE_THROWS_WITH(parse(j), Catch::Contains("m.json: /overlap/0/held_sms:"));
  }
}

TEST_CASE("measurement_reader: bad documents name the file, the pointer and the fix", "[io]") {
  SECTION("wrong schema") {
    auto j = header_only();
    j["launch"] = io::parse_json(R"([{"time": "5 us"}])", "r");
    j["schema"] = "trainsim-hardware";
    REQUIRE_THROWS_AS(parse(j), ConfigError);
    REQUIRE_THROWS_WITH(parse(j),
                        "m.json: /schema: not a measurement document (this trainsim reads "
                        "\"trainsim-measurements\" version 1); expected \"trainsim-measurements\", "
                        "got \"trainsim-hardware\"");
  }
  SECTION("no schema at all, e.g. a hardware profile") {
    REQUIRE_THROWS_WITH(io::parse_measurement_document(R"({"id": "h100-dgx"})", "m.json"),
                        Catch::Contains("m.json: /schema: missing required key; expected "
                                        "\"schema\": \"trainsim-measurements\""));
  }
  SECTION("a required key missing beside its misspelling names the misspelling") {
    const auto j = with_record("gemm", R"({"m": 4096, "n": 4096, "k": 4096, "dtype": "bf16",
                                           "tme": "200 us"})");
    REQUIRE_THROWS_WITH(parse(j),
                        "m.json: /gemm/0/time: missing required key (the object has "
                        "'tme': a misspelling of 'time'?); expected a time with a unit "
                        "like \"5 us\"");
  }
  SECTION("a size that is not a whole number of bytes") {
    // 1.5 B was fitted as a 2-node AllReduce of one and a half bytes; 1.5 KiB is 1,536 B.
    auto j = with_record("collectives", R"({"op": "all_reduce", "ranks": 16, "nodes": 2,
                                            "bytes": "1.5 B", "time": "4.48 ms"})");
    REQUIRE_THROWS_WITH(parse(j),
                        "m.json: /collectives/0/bytes: not a whole number of bytes "
                        "(1.5 B); expected a buffer size in whole bytes");
    j["collectives"][0]["bytes"] = "1.5 KiB";
    REQUIRE(parse(j).points.collectives.front().bytes.value() == 1536.0);
    // 4.1 x 1e9 is 4099999999.9999995 in doubles: a whole 4,100,000,000 bytes, not refused.
    j["collectives"][0]["bytes"] = "4.1 GB";
    REQUIRE(parse(j).points.collectives.front().bytes.value() == 4'100'000'000.0);
  }
  SECTION("wrong version") {
    auto j = header_only();
    j["schema_version"] = 2;
    REQUIRE_THROWS_AS(parse(j), ConfigError);
    REQUIRE_THROWS_WITH(parse(j), Catch::Contains("m.json: /schema_version: unsupported schema "
                                                  "version") &&
                                      Catch::Contains("version 1); expected 1, got 2"));
  }
  SECTION("missing environment or device") {
    auto j = with_record("launch", R"({"time": "5 us"})");
    j.erase("environment");
    REQUIRE_THROWS_WITH(parse(j), "m.json: /environment: missing required key; expected an object");
    j["environment"] = {{"host", "node-1"}};
    REQUIRE_THROWS_WITH(parse(j),
                        "m.json: /environment/device: missing required key; expected a string");
    j["environment"]["device"] = "";
    REQUIRE_THROWS_WITH(parse(j), Catch::Contains("/environment/device: empty device name"));
  }
  SECTION("unknown keys get a suggestion") {
    auto j = with_record("gemm",
                         R"({"m": 1, "n": 1, "k": 1, "dtype": "bf16", "time": "1 us", "tiem": 1})");
    REQUIRE_THROWS_WITH(parse(j), "m.json: /gemm/0/tiem: unknown key; did you mean 'time'?");
    auto top = with_record("launch", R"({"time": "5 us"})");
    top["gemms"] = nlohmann::json::array();
    REQUIRE_THROWS_WITH(parse(top), "m.json: /gemms: unknown key; did you mean 'gemm'?");
    auto env = with_record("launch", R"({"time": "5 us", "environment": {"devise": "x"}})");
    REQUIRE_THROWS_WITH(parse(env),
                        "m.json: /launch/0/environment/devise: unknown key; did you "
                        "mean 'device'?");
  }
  SECTION("a bare number where a time belongs suggests the unit") {
    const auto j = with_record("gemm", R"({"m": 1, "n": 1, "k": 1, "dtype": "bf16", "time": 5})");
    REQUIRE_THROWS_AS(parse(j), ConfigError);
    REQUIRE_THROWS_WITH(parse(j),
                        "m.json: /gemm/0/time: expected a time with a unit like \"5 us\", got 5");
    const auto w = with_record("power", R"({"activity": "idle", "power": "70"})");
    REQUIRE_THROWS_WITH(parse(w), Catch::Contains("/power/0/power: expected a power like "
                                                  "\"700 W\", got \"70\" (no unit)"));
  }
  SECTION("zero and negative sizes and times") {
    REQUIRE_THROWS_WITH(
        parse(with_record("gemm", R"({"m": 0, "n": 1, "k": 1, "dtype": "bf16", "time": "1 us"})")),
        "m.json: /gemm/0/m: expected an integer >= 1, got 0");
    REQUIRE_THROWS_WITH(parse(with_record("attention", R"({"batch": 1, "heads": -4, "seq_len": 1,
                                              "head_dim": 1, "dtype": "bf16", "time": "1 us"})")),
                        Catch::Contains("/attention/0/heads: expected an integer >= 1, got -4"));
    REQUIRE_THROWS_WITH(
        parse(with_record("memory", R"({"kernel": "copy", "bytes": "-1 GiB", "time": "1 ms"})")),
        Catch::Contains("/memory/0/bytes: expected a size > 0, got \"-1 GiB\""));
    REQUIRE_THROWS_WITH(parse(with_record("launch", R"({"time": "0 us"})")),
                        Catch::Contains("/launch/0/time: expected a time > 0"));
    REQUIRE_THROWS_WITH(parse(with_record("power", R"({"activity": "idle", "power": "0 W"})")),
                        Catch::Contains("/power/0/power: expected a power > 0"));
    REQUIRE_THROWS_WITH(
        parse(with_record("collectives", R"({"op": "all_reduce", "ranks": 0, "nodes": 1,
                                             "bytes": "1 MB", "time": "1 ms"})")),
        Catch::Contains("/collectives/0/ranks: expected an integer >= 1, got 0"));
  }
  SECTION("more nodes than ranks, or a ranks_per_node that cannot be") {
    REQUIRE_THROWS_AS(
        parse(with_record("collectives", R"({"op": "all_reduce", "ranks": 16, "nodes": 32,
                                             "bytes": "1 MB", "time": "1 ms"})")),
        ConfigError);
    REQUIRE_THROWS_WITH(
        parse(with_record("collectives", R"({"op": "all_reduce", "ranks": 16, "nodes": 32,
                                             "bytes": "1 MB", "time": "1 ms"})")),
        "m.json: /collectives/0/nodes: more nodes than ranks; expected nodes <= ranks (16), got "
        "32");
    REQUIRE_THROWS_WITH(
        parse(with_record("nccl_tests", R"({"file": "a.txt", "ranks": 2, "nodes": 3})")),
        Catch::Contains("/nccl_tests/0/nodes: more nodes than ranks"));
    // 2 nodes of 4 hold 8 ranks at most, not 16; one node of 15 leaves the other just 1 rank,
    // so 16 is too many for the fullest node.
    REQUIRE_THROWS_WITH(
        parse(with_record("collectives", R"({"op": "all_reduce", "ranks": 16, "nodes": 2,
                                 "ranks_per_node": 4, "bytes": "1 MB", "time": "1 ms"})")),
        "m.json: /collectives/0/ranks_per_node: impossible for 16 ranks on 2 nodes; expected 8 "
        "to 15, got 4");
    REQUIRE_THROWS_WITH(
        parse(with_record("collectives", R"({"op": "all_reduce", "ranks": 16, "nodes": 2,
                                 "ranks_per_node": 16, "bytes": "1 MB", "time": "1 ms"})")),
        Catch::Contains("expected 8 to 15, got 16"));
  }
  SECTION("unknown names get a suggestion") {
    REQUIRE_THROWS_WITH(
        parse(with_record("collectives", R"({"op": "all_reduc", "ranks": 2, "nodes": 1,
                                             "bytes": "1 MB", "time": "1 ms"})")),
        Catch::Contains("m.json: /collectives/0/op: unknown collective op 'all_reduc'; did you "
                        "mean 'all_reduce'?"));
    REQUIRE_THROWS_WITH(parse(with_record("nccl_tests", R"({"file": "a.txt", "op": "allgather"})")),
                        Catch::Contains("/nccl_tests/0/op: unknown collective op 'allgather'"));
    REQUIRE_THROWS_WITH(
        parse(with_record("collectives", R"({"op": "all_reduce", "ranks": 2, "nodes": 1,
                              "bytes": "1 MB", "time": "1 ms", "algorithm": "rnig"})")),
        Catch::Contains("/collectives/0/algorithm: unknown collective algorithm 'rnig'; did you "
                        "mean 'ring'?; expected one of tree, ring, nvls, nvls_tree, pat"));
    REQUIRE_THROWS_WITH(
        parse(with_record("nccl_tests", R"({"file": "a.txt", "protocol": "simpel"})")),
        Catch::Contains("/nccl_tests/0/protocol: unknown collective protocol 'simpel'; did you "
                        "mean 'Simple'?"));
    REQUIRE_THROWS_WITH(
        parse(with_record("gemm", R"({"m": 1, "n": 1, "k": 1, "dtype": "bf61", "time": "1 us"})")),
        Catch::Contains("/gemm/0/dtype: unknown value 'bf61'; did you mean 'bf16'?"));
    REQUIRE_THROWS_WITH(
        parse(with_record("memory", R"({"kernel": "scale", "bytes": "1 GB", "time": "1 ms"})")),
        Catch::Contains("/memory/0/kernel: unknown value 'scale'"));
  }
  SECTION("unknown status") {
    const auto j = with_record("nccl_tests", R"({"file": "a.txt", "status": "broken"})");
    REQUIRE_THROWS_AS(parse(j), ConfigError);
    REQUIRE_THROWS_WITH(parse(j),
                        "m.json: /nccl_tests/0/status: unknown value 'broken'; expected "
                        "one of healthy, reported_problem");
  }
  SECTION("empty log path") {
    REQUIRE_THROWS_WITH(parse(with_record("nccl_tests", R"({"file": ""})")),
                        Catch::Contains("/nccl_tests/0/file: empty path"));
  }
  SECTION("wrong types") {
    auto j = header_only();
    j["gemm"] = nlohmann::json::object();
    REQUIRE_THROWS_WITH(parse(j), Catch::Contains("/gemm: expected an array, got an object"));
    j["gemm"] = nlohmann::json::array({5});
    REQUIRE_THROWS_WITH(parse(j), Catch::Contains("/gemm/0: expected an object, got 5"));
    REQUIRE_THROWS_WITH(parse(with_record("gemm", R"({"m": 4096.5, "n": 1, "k": 1, "dtype": "bf16",
                                      "time": "1 us"})")),
                        Catch::Contains("/gemm/0/m: expected an integer, got 4096.5"));
    REQUIRE_THROWS_WITH(parse(with_record("attention", R"({"batch": 1, "heads": 1, "seq_len": 1,
                              "head_dim": 1, "causal": 1, "dtype": "bf16", "time": "1 us"})")),
                        Catch::Contains("/attention/0/causal: expected true or false, got 1"));
    REQUIRE_THROWS_WITH(io::parse_measurement_document("[1, 2]", "m.json"),
                        Catch::Contains("m.json: /: expected an object"));
  }
  SECTION("an empty document") {
    const auto j = header_only();
    REQUIRE_THROWS_AS(parse(j), ConfigError);
    REQUIRE_THROWS_WITH(parse(j), Catch::StartsWith("m.json: no measurements; expected at least "
                                                    "one record in gemm, attention"));
    auto empty_arrays = header_only();
    empty_arrays["gemm"] = nlohmann::json::array();
    REQUIRE_THROWS_WITH(parse(empty_arrays), Catch::Contains("no measurements"));
  }
}

TEST_CASE("measurement_reader: hostile input is refused with one message", "[io]") {
  SECTION("NUL bytes") {
    std::string text = kExample;
    text[10] = '\0';
    REQUIRE_THROWS_WITH(io::parse_measurement_document(text, "m.json"),
                        "m.json: NUL byte at offset 10; expected a JSON text file, got binary "
                        "data");
    // An escaped NUL is valid JSON but not a path.
    REQUIRE_THROWS_WITH(parse(with_record("nccl_tests", R"({"file": "a\u0000.txt"})")),
                        Catch::Contains("/nccl_tests/0/file: string holds a NUL character"));
  }
  SECTION("over 64 MiB") {
    // Whitespace is valid JSON, so only the size can refuse this.
    const std::string text = kExample + std::string((std::size_t{64} << 20U), ' ');
    REQUIRE_THROWS_WITH(io::parse_measurement_document(text, "m.json"),
                        Catch::StartsWith("m.json: file too large; expected a measurement "
                                          "document of at most 64 MiB"));
  }
  SECTION("nesting deeper than 64 levels") {
    // The document object is level 1, so "_comment" (ignored, like every "_" key) holds 63
    // levels in the deepest document allowed.
    const auto nested = [](int levels) {
      auto j = with_record("launch", R"({"time": "5 us"})");
      j["_comment"] = io::parse_json(std::string(static_cast<std::size_t>(levels), '[') +
                                         std::string(static_cast<std::size_t>(levels), ']'),
                                     "c");
      return j.dump();
    };
    REQUIRE_NOTHROW(io::parse_measurement_document(nested(63), "m.json"));
    REQUIRE_THROWS_WITH(io::parse_measurement_document(nested(64), "m.json"),
                        Catch::Contains("m.json: JSON nested too deeply at line 1; expected at "
                                        "most 64 levels"));
    // Brackets inside strings do not count.
    auto j = with_record("launch", R"({"time": "5 us"})");
    j["_comment"] = std::string(1000, '[') + "\\\"" + std::string(1000, '{');
    REQUIRE_NOTHROW(parse(j));
    // Far too deep for a recursive parser, refused before nlohmann sees it.
    REQUIRE_THROWS_WITH(io::parse_measurement_document(std::string(1000000, '['), "m.json"),
                        Catch::Contains("nested too deeply"));
  }
  SECTION("numbers that overflow") {
    REQUIRE_THROWS_WITH(parse(with_record("launch", R"({"time": "1e308 h"})")),
                        Catch::Contains("/launch/0/time: value overflows in SI units; expected a "
                                        "time like \"5 us\", got \"1e308 h\""));
    REQUIRE_THROWS_WITH(parse(with_record("launch", R"({"time": "inf s"})")),
                        Catch::Contains("/launch/0/time: expected a time like \"5 us\" with a "
                                        "finite number"));
    REQUIRE_THROWS_WITH(
        io::parse_measurement_document(R"({"schema": "trainsim-measurements", "x": 1e400})",
                                       "m.json"),
        Catch::StartsWith("m.json: invalid JSON at line 1, column 42 (number overflow parsing "
                          "'1e400')"));
    REQUIRE_THROWS_WITH(parse(with_record("gemm", R"({"m": 1e19, "n": 1, "k": 1, "dtype": "bf16",
                                      "time": "1 us"})")),
                        Catch::Contains("/gemm/0/m: expected an integer <= 2^53"));
    REQUIRE_THROWS_WITH(parse(with_record("gemm", R"({"m": 18446744073709551615, "n": 1, "k": 1,
                                      "dtype": "bf16", "time": "1 us"})")),
                        Catch::Contains("/gemm/0/m: expected an integer <= 2^53"));
  }
  SECTION("malformed JSON") {
    REQUIRE_THROWS_WITH(io::parse_measurement_document("{\"schema\": ", "m.json"),
                        Catch::StartsWith("m.json: invalid JSON at line 1"));
    REQUIRE_THROWS_WITH(io::parse_measurement_document("", "m.json"),
                        Catch::StartsWith("m.json: invalid JSON"));
  }
  SECTION("every prefix and many corruptions of the example give a ConfigError or a document") {
    for (std::size_t n = 0; n < kExample.size(); ++n) {
      REQUIRE_NOTHROW(parse_or_config_error(kExample.substr(0, n)));
    }
    // Fixed seed: the same corruptions on every run.
    std::mt19937_64 rng(20261130);
    const std::string alphabet = "{}[]\":,0123456789.-eE \\/u_abcnrstflx";
    std::uniform_int_distribution<std::size_t> where(0, kExample.size() - 1);
    std::uniform_int_distribution<std::size_t> what(0, alphabet.size() - 1);
    for (int trial = 0; trial < 2000; ++trial) {
      std::string text = kExample;
      for (int edit = 0; edit < 3; ++edit) text[where(rng)] = alphabet[what(rng)];
      REQUIRE_NOTHROW(parse_or_config_error(text));
    }
  }
}

TEST_CASE("measurement_reader: files are read, or refused with their name", "[io]") {
  namespace fs = std::filesystem;
  SECTION("a document on disk anchors its logs at its folder") {
    const fs::path folder = fs::temp_directory_path() / "trainsim_measurement_reader_test";
    fs::create_directories(folder);
    const fs::path file = folder / "h200.json";
    {
      std::ofstream out(file, std::ios::binary);
      out << kExample;
    }
    const auto doc = io::read_measurement_document(file.string());
    fs::remove_all(folder);
    REQUIRE(doc.source == file.string());
    REQUIRE(doc.points.gemms[0].origin.source == file.string());
    REQUIRE(fs::path(doc.logs[0].path) ==
            folder / "nccl_tests" / "h100-ndr-2node-all_reduce-ring.txt");
  }
  SECTION("a missing file") {
    REQUIRE_THROWS_AS(io::read_measurement_document("/nonexistent/m.json"), ConfigError);
    REQUIRE_THROWS_WITH(io::read_measurement_document("/nonexistent/m.json"),
                        "/nonexistent/m.json: cannot open file; expected a readable measurement "
                        "document");
  }
  SECTION("a folder") {
    REQUIRE_THROWS_WITH(io::read_measurement_document(TRAINSIM_TEST_DATA_DIR),
                        Catch::Contains(": is a directory; expected a measurement document"));
  }
  SECTION("an endless device") {
    if (fs::exists("/dev/zero")) {
      REQUIRE_THROWS_WITH(io::read_measurement_document("/dev/zero"),
                          "/dev/zero: NUL byte at offset 0; expected a JSON text file, got "
                          "binary data");
    }
  }
}
