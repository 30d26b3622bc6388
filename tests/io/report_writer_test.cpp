// The report writer: JSON keys of the contract (DESIGN.md "Command line and report") and the
// table, on the paper's scenario loaded the way `trainsim run` loads it.
#include "sim/io/report_writer.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/report/simulate.hpp"
#include "trainsim/workload/iteration.hpp"

#include "tests/paper_scenario.hpp"

using namespace trainsim;

TEST_CASE("report writer: collectives carry their stage and the table has a block per stage",
          "[io][report]") {
  // PP 2 on 16 GPUs (dp 8), 4 micro-batches: both stages issue collectives.
  const auto s = testing::paper_fsdp(16, {{"parallel.pp", 2}, {"training.global_batch", 64}});
  const report::Report r = report::simulate(s).report;
  const nlohmann::json j = io::report_to_json(s, r);
  bool stage0 = false;
  bool stage1 = false;
  for (const auto& c : j.at("collectives")) {
    REQUIRE(c.at("stage").is_number_integer());
    stage0 = stage0 || c.at("stage") == 0;
    stage1 = stage1 || c.at("stage") == 1;
    // The existing keys stay.
    for (const char* key :
         {"op", "group", "ranks", "nodes", "bytes", "count", "time_s", "algorithm", "protocol"}) {
      REQUIRE(c.contains(key));
    }
  }
  CHECK(stage0);
  CHECK(stage1);
  std::ostringstream table;
  io::write_report_table(table, s, r);
  const std::string text = table.str();
  const auto first = text.find("  stage 0 of 2\n");
  const auto second = text.find("  stage 1 of 2\n");
  REQUIRE(first != std::string::npos);
  REQUIRE(second != std::string::npos);
  CHECK(first < second);
}

TEST_CASE("report writer: the critical stage is named, in JSON and over a table of every stage",
          "[io][report]") {
  // PP 4 on 16 GPUs: the headline compute, communication and bubble are one stage's, the
  // busiest (report.hpp: most compute plus exposed communication, the first of a tie).
  const auto s = testing::paper_fsdp(16, {{"parallel.pp", 4}, {"training.global_batch", 64}});
  const report::Report r = report::simulate(s).report;
  const nlohmann::json j = io::report_to_json(s, r);
  REQUIRE(j.at("critical_stage").is_number_integer());
  const auto critical = j.at("critical_stage").get<std::int64_t>();
  REQUIRE(critical >= 0);
  REQUIRE(critical < 4);
  const nlohmann::json& stage = j.at("stages").at(static_cast<std::size_t>(critical));
  CHECK(stage.at("compute_s") == j.at("compute_s"));
  CHECK(stage.at("bubble_s") == j.at("bubble_s"));
  double busiest = 0.0;
  for (const auto& st : j.at("stages")) {
    busiest = std::max(
        busiest, st.at("compute_s").get<double>() + st.at("exposed_communication_s").get<double>());
  }
  CHECK(stage.at("compute_s").get<double>() + stage.at("exposed_communication_s").get<double>() ==
        Approx(busiest).epsilon(1e-9));
  std::ostringstream table;
  io::write_report_table(table, s, r);
  const std::string text = table.str();
  CHECK(text.find("  above: stage " + std::to_string(critical) +
                  " of 4, the busiest (*); by "
                  "stage:\n") != std::string::npos);
  CHECK(text.find("\n  " + std::to_string(critical) + " *  ") != std::string::npos);
  for (int k = 0; k < 4; ++k) {
    CHECK(text.find("\n  " + std::to_string(k) + (k == critical ? " *" : "  ")) !=
          std::string::npos);
  }
  // Without a pipeline there is one stage, and no table.
  const auto flat = testing::paper_fsdp(16, {});
  std::ostringstream flat_table;
  io::write_report_table(flat_table, flat, report::simulate(flat).report);
  CHECK(flat_table.str().find("the busiest") == std::string::npos);
  CHECK(io::report_to_json(flat, report::simulate(flat).report).at("critical_stage") == 0);
}

TEST_CASE("report writer: the memory is the hungriest stage's, and says which", "[io][report]") {
  // PP 4 on 16 GPUs: `memory` is the stage that needs most (report.hpp), named by memory.stage
  // and, with a pipeline, on the table's memory line; its total is the largest of the stages'.
  const auto s = testing::paper_fsdp(16, {{"parallel.pp", 4}, {"training.global_batch", 64}});
  const report::Report r = report::simulate(s).report;
  const nlohmann::json j = io::report_to_json(s, r);
  REQUIRE(j.at("memory").at("stage").is_number_integer());
  const auto stage = j.at("memory").at("stage").get<std::int64_t>();
  std::int64_t largest = 0;
  for (const auto& st : j.at("stages")) {
    largest = std::max(largest, st.at("memory_total_bytes").get<std::int64_t>());
  }
  CHECK(j.at("stages").at(static_cast<std::size_t>(stage)).at("memory_total_bytes") == largest);
  CHECK(j.at("memory").at("total_bytes") == largest);
  std::ostringstream table;
  io::write_report_table(table, s, r);
  CHECK(table.str().find(" HBM) on stage " + std::to_string(stage) + "\n") != std::string::npos);
  // Without a pipeline: stage 0, and the line names none.
  const auto flat = testing::paper_fsdp(16, {});
  const report::Report rf = report::simulate(flat).report;
  CHECK(io::report_to_json(flat, rf).at("memory").at("stage") == 0);
  std::ostringstream flat_table;
  io::write_report_table(flat_table, flat, rf);
  CHECK(flat_table.str().find(" on stage") == std::string::npos);
}

TEST_CASE("report writer: byte counts are JSON integers", "[io][report]") {
  const auto s = testing::paper_fsdp(128);
  const report::Report r = report::simulate(s).report;
  const nlohmann::json j = io::report_to_json(s, r);
  const auto& m = j.at("memory");
  for (const char* key :
       {"parameters_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes",
        "buffers_bytes", "total_bytes", "capacity_bytes", "usable_bytes", "reserved_bytes"}) {
    INFO(key);
    CHECK(m.at(key).is_number_integer());
  }
  for (const auto& [key, value] : m.at("reserved").items()) {
    INFO(key);
    CHECK(value.is_number_integer());
  }
  // 80 GiB = 85,899,345,920 B, written exactly.
  CHECK(m.at("capacity_bytes").get<std::int64_t>() == 85'899'345'920);
  for (const auto& c : j.at("collectives")) CHECK(c.at("bytes").is_number_integer());
  for (const auto& st : j.at("stages")) CHECK(st.at("memory_total_bytes").is_number_integer());
  // The memory section names the reserve and the headroom used (the stack's default, 0).
  CHECK(m.at("headroom_fraction") == 0.0);
  CHECK(m.at("usable_bytes").get<std::int64_t>() + m.at("reserved_bytes").get<std::int64_t>() ==
        m.at("capacity_bytes").get<std::int64_t>());
}

TEST_CASE("report writer: mfu_bf16 is against the bf16 peak", "[io][report]") {
  const auto bf16 = testing::paper_fsdp(8);
  const report::Report rb = report::simulate(bf16).report;
  // A bf16 run: the same figure.
  CHECK(rb.mfu_bf16 == Approx(rb.mfu).epsilon(1e-12));
  CHECK(io::report_to_json(bf16, rb).at("mfu_bf16") == rb.mfu_bf16);
  // An fp8 run: mfu is against the FP8 peak (h100-dgx: 1979 TFLOP/s), mfu_bf16 against the
  // bf16 peak (989 TFLOP/s), so mfu_bf16 = mfu x 1979 / 989, the same model FLOP/s.
  const auto fp8 = testing::paper_fsdp(8, {{"training.precision", "fp8"}});
  const report::Report rf = report::simulate(fp8).report;
  const double ratio =
      fp8.hardware.peak(hardware::Dtype::Fp8) / fp8.hardware.peak(hardware::Dtype::Bf16);
  CHECK(rf.mfu_bf16 == Approx(rf.mfu * ratio).epsilon(1e-12));
  CHECK(rf.mfu_bf16 ==
        Approx(rf.model_flops_per_gpu / fp8.hardware.peak(hardware::Dtype::Bf16)).epsilon(1e-12));
  std::ostringstream table;
  io::write_report_table(table, fp8, rf);
  CHECK(table.str().find("MFU vs bf16 peak") != std::string::npos);
  // A GPU without bf16 (v100-dgx: bf16 peak 0) is measured against its fp16 peak, 125 TFLOP/s,
  // and the table says so, where it said "vs bf16 peak".
  const auto v100 = testing::paper_fsdp(
      8, {{"hardware", "v100-dgx"}, {"model", "llama3.2-1b"}, {"training.precision", "fp32"}});
  REQUIRE(v100.hardware.peak(hardware::Dtype::Bf16).value() == 0.0);
  const report::Report rv = report::simulate(v100).report;
  CHECK(rv.mfu_bf16 ==
        Approx(rv.model_flops_per_gpu / v100.hardware.peak(hardware::Dtype::Fp16)).epsilon(1e-12));
  std::ostringstream v100_table;
  io::write_report_table(v100_table, v100, rv);
  CHECK(v100_table.str().find("MFU vs fp16 peak (no bf16) ") != std::string::npos);
  CHECK(v100_table.str().find("vs bf16 peak") == std::string::npos);
}

TEST_CASE("report writer: a DDP gradient bucket is one call: bytes, count and time are per call",
          "[io][report]") {
  // DDP AllReduces each layer's gradients in 25 MiB buckets. llama2-7b's layer holds
  // 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096 = 202,383,360 parameters, 404,766,720 B of bf16
  // gradients: 16 buckets of 25,297,920 B. The table gave 32 calls of 25,297,920 B at 3.53 ms,
  // the time of all 16 buckets of a layer: 0.8 GB reduced by count x bytes, where 13 GB are.
  const auto s = testing::paper_fsdp(8, {{"parallel.sharding", "none"}});
  const collective::CollectiveModel cm(s.hardware);
  const workload::Iteration it = workload::build_iteration(s, cm);
  const report::Report r = report::simulate(s).report;
  bool found = false;
  for (const auto& c : r.collectives) {
    if (c.group != "dp" || c.bytes.value() != 25'297'920.0) continue;
    found = true;
    CHECK(c.count == 32 * 16);
    // One call's time: the collective model's for that size on the group the call was priced on.
    for (const auto& call : it.collectives) {
      if (call.bytes.value() != 25'297'920.0) continue;
      CHECK(call.calls_per_op == 16);
      const double one = cm.cost(collective::Op::AllReduce, call.shape, call.bytes).time.value();
      CHECK(c.time.value() == Approx(one).epsilon(1e-12));
    }
  }
  CHECK(found);
}
