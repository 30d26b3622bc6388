// The host side of the measurement suite (calib/host): statistics, what a scenario makes it
// measure, the collective sweep and launch, and the document it writes, read back by the
// measurement reader that `trainsim calibrate` uses. No GPU needed.
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"

#include "sim/io/kineto_reader.hpp"
#include "sim/io/measurement_reader.hpp"
#include "sim/io/scenario_loader.hpp"

#include "calib/host/collective_plan.hpp"
#include "calib/host/document.hpp"
#include "calib/host/plan.hpp"
#include "calib/host/stats.hpp"

using namespace trainsim;
using namespace trainsim::calib;

TEST_CASE("summarize takes the median, spread and coefficient of variation", "[calib]") {
  // Samples 1, 2, 3, 4, 10 (given unsorted): median 3, mean 4, sample variance
  // ((-3)^2 + (-2)^2 + (-1)^2 + 0 + 6^2) / 4 = 50 / 4 = 12.5, cv = sqrt(12.5) / 4 = 0.8839;
  // range (10 - 1) / 3 = 3.
  const Summary s = summarize({10.0, 2.0, 4.0, 1.0, 3.0});
  REQUIRE(s.count == 5);
  REQUIRE(s.median == 3.0);
  REQUIRE(s.min == 1.0);
  REQUIRE(s.max == 10.0);
  REQUIRE(s.mean == 4.0);
  REQUIRE(s.cv == Approx(std::sqrt(12.5) / 4.0));
  REQUIRE(s.range == 3.0);
  // An even count takes the mean of the middle two: (2 + 4) / 2.
  REQUIRE(summarize({4.0, 1.0, 2.0, 8.0}).median == 3.0);
  REQUIRE(summarize({7.0}).cv == 0.0);
  REQUIRE_THROWS_AS(summarize({}), std::invalid_argument);
  REQUIRE_THROWS_AS(summarize({1.0, NAN}), std::invalid_argument);
  REQUIRE_THROWS_AS(summarize({1.0, -1.0}), std::invalid_argument);
}

TEST_CASE("a summary is steady with three samples or more within the cv bound", "[calib]") {
  REQUIRE(steady(summarize({1.0, 1.0, 1.0}), 0.05));
  REQUIRE_FALSE(steady(summarize({1.0, 1.0}), 0.05));  // too few to show a spread
  // 1, 1, 1.3: mean 1.1, sd sqrt((0.01 + 0.01 + 0.04) / 2) = 0.1732, cv 0.157.
  REQUIRE_FALSE(steady(summarize({1.0, 1.0, 1.3}), 0.05));
  REQUIRE(steady(summarize({1.0, 1.0, 1.3}), 0.2));
}

TEST_CASE("calls per trial fill the trial time within bounds", "[calib]") {
  REQUIRE(calls_per_trial(1e-3, 0.02, 2000) == 20);    // 20 ms / 1 ms
  REQUIRE(calls_per_trial(0.5, 0.02, 2000) == 1);      // one call outlasts the trial
  REQUIRE(calls_per_trial(1e-9, 0.02, 2000) == 2000);  // capped
  REQUIRE(calls_per_trial(0.0, 0.02, 2000) == 2000);   // no estimate: the cap
}

namespace {

parallel::Scenario llama_small() {
  return io::scenario_from_document(io::read_scenario_file(
      std::string(TRAINSIM_SOURCE_DIR) + "/calib/examples/h200-llama-small.json"));
}

const GemmCase* find_gemm(const Plan& p, std::int64_t m, std::int64_t n, std::int64_t k) {
  for (const auto& g : p.gemms) {
    if (g.m == m && g.n == n && g.k == k) return &g;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a scenario's plan holds each GEMM forward, dgrad and wgrad, once", "[calib]") {
  // llama-small: hidden 2048, 16 heads and 8 KV heads of 128, ffn 5632 (SwiGLU), vocab 32000;
  // micro-batch 4 x seq 2048 = 8192 tokens, tp 1. QKV: n = (16 + 2 x 8) x 128 = 4096.
  const Plan p = scenario_plan(llama_small());
  REQUIRE(find_gemm(p, 8192, 4096, 2048) != nullptr);   // qkv forward [m x n] = [m x k][k x n]
  REQUIRE(find_gemm(p, 8192, 2048, 4096) != nullptr);   // qkv dgrad (m, k, n)
  REQUIRE(find_gemm(p, 2048, 4096, 8192) != nullptr);   // qkv wgrad (k, n, m)
  REQUIRE(find_gemm(p, 8192, 11264, 2048) != nullptr);  // gate/up: 2 x 5632 columns
  REQUIRE(find_gemm(p, 8192, 32000, 2048) != nullptr);  // LM head
  // The output projection's forward (8192, 2048, 2048) and dgrad (8192, 2048, 2048) are one
  // shape: measured once, named by both.
  const GemmCase* out = find_gemm(p, 8192, 2048, 2048);
  REQUIRE(out != nullptr);
  REQUIRE(out->origin == "attn_out_proj forward; attn_out_proj dgrad");
  // 5 GEMM kernels x 3 products - 1 repeat = 14 shapes.
  REQUIRE(p.gemms.size() == 14);
  REQUIRE(p.attention.size() == 1);
  const AttentionCase& a = p.attention[0];
  REQUIRE(a.batch == 4);
  REQUIRE(a.heads == 16);
  REQUIRE(a.seq_len == 2048);
  REQUIRE(a.head_dim == 128);
  REQUIRE(a.causal);
}

TEST_CASE("merging plans keeps one case per shape", "[calib]") {
  Plan a = scenario_plan(llama_small());
  const std::size_t before = a.gemms.size();
  merge_plans(a, scenario_plan(llama_small()));
  REQUIRE(a.gemms.size() == before);
  // The quick grid: 4 square sizes x 4 dtypes + 2 small sides x 2 orientations = 20 GEMMs;
  // 2 head dims x 2 causal x 3 sequence lengths = 12 attention cases. The 2048 x 2048 x 8192
  // of the scenario is not among them, so nothing merges.
  const Plan g = grid_plan(true);
  REQUIRE(g.gemms.size() == 20);
  REQUIRE(g.attention.size() == 12);
  merge_plans(a, g);
  REQUIRE(a.gemms.size() == before + 20);
  REQUIRE(grid_plan(false).gemms.size() == 7 * 4 + 6 * 2);
}

TEST_CASE("collective sweeps double from the smallest size, in whole granules", "[calib]") {
  REQUIRE(sweep_sizes(8, 64, 2, 4) == std::vector<std::int64_t>{8, 16, 32, 64});
  // Granule 12 (3 ranks of float32): 8 -> 12, 16 -> 12 (repeat dropped), 32 -> 24, 64 -> 60.
  REQUIRE(sweep_sizes(8, 64, 2, 12) == std::vector<std::int64_t>{12, 24, 60});
  REQUIRE(sweep_sizes(1, 1LL << 30, 4, 4).back() == (1LL << 30));
  REQUIRE_THROWS_AS(sweep_sizes(0, 8, 2, 4), std::invalid_argument);
  REQUIRE_THROWS_AS(sweep_sizes(16, 8, 2, 4), std::invalid_argument);
  REQUIRE_THROWS_AS(sweep_sizes(8, 16, 1, 4), std::invalid_argument);
}

TEST_CASE("the launch comes from Slurm, Open MPI or trainsim's own variables", "[calib]") {
  const auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
      const auto it = vars.find(name);
      return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  };
  const Launch single = launch_from_environment(env({}), "");
  REQUIRE(single.world == 1);
  REQUIRE(single.rank == 0);
  const Launch slurm = launch_from_environment(
      env({{"SLURM_PROCID", "9"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"}}), "/shared/id");
  REQUIRE(slurm.world == 16);
  REQUIRE(slurm.rank == 9);
  REQUIRE(slurm.local_device == 1);
  const Launch mpi = launch_from_environment(
      env({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}}), "/shared/id");
  REQUIRE(mpi.rank == 3);
  REQUIRE(mpi.local_device == 0);
  // trainsim's own variables win over Slurm's.
  const Launch own = launch_from_environment(env({{"TRAINSIM_CALIB_RANK", "1"},
                                                  {"TRAINSIM_CALIB_WORLD", "2"},
                                                  {"SLURM_PROCID", "5"},
                                                  {"SLURM_NTASKS", "8"}}),
                                             "/shared/id");
  REQUIRE(own.world == 2);
  REQUIRE_THROWS_WITH(
      launch_from_environment(env({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}}), "/f"),
      Catch::Contains("SLURM_PROCID") && Catch::Contains("\"x\""));
  REQUIRE_THROWS_WITH(
      launch_from_environment(env({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "2"}}), "/f"),
      Catch::Contains("below SLURM_NTASKS = 2"));
  REQUIRE_THROWS_WITH(launch_from_environment(env({{"SLURM_NTASKS", "2"}}), "/f"),
                      Catch::Contains("SLURM_PROCID: missing"));
  REQUIRE_THROWS_WITH(
      launch_from_environment(env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}), ""),
      Catch::Contains("--rendezvous"));
}

TEST_CASE("the suite's document is read back by the calibration's reader", "[calib]") {
  Environment env{.device = "NVIDIA H200",
                  .driver = "580.159.04",
                  .cuda = "13.0",
                  .nccl = "2.28.9",
                  .host = "node-1",
                  .timestamp = "2026-11-30T18:31:51Z",
                  .clocks = "sm 1980 MHz, memory 3201 MHz"};
  Document doc(env);
  const Summary t = summarize({100e-6, 101e-6, 99e-6});  // median 100 us
  doc.add_gemm(
      GemmCase{
          .m = 4096, .n = 4096, .k = 4096, .dtype = hardware::Dtype::Fp8, .origin = "grid square"},
      t, env);
  doc.add_attention(AttentionCase{.batch = 2,
                                  .heads = 16,
                                  .seq_len = 4096,
                                  .head_dim = 128,
                                  .causal = false,
                                  .dtype = hardware::Dtype::Bf16,
                                  .origin = "grid"},
                    t, env, "cudnn");
  doc.add_unfused_attention(AttentionCase{}, t, env);
  doc.add_memory("triad", 3LL << 30, t, env);
  doc.add_launch(summarize({4.5e-6, 4.6e-6, 4.7e-6}), env);
  doc.add_power("compute", 684.1, summarize({680.0, 690.0, 685.0}), env, "GEMM loop");
  doc.add_power("memory_bound", 585.8, summarize({580.0, 590.0, 585.0}), env, "triad loop");
  doc.add_collective("all_gather", 16, 2, 8, 1LL << 30, t, env);
  doc.add_collective("all_reduce", 1, 1, 1, 1LL << 20, t, env);
  const nlohmann::json overlap = {{"kernel", "gemm"},
                                  {"m", 8192},
                                  {"n", 4096},
                                  {"k", 4096},
                                  {"dtype", "bf16"},
                                  {"sm_count_target", 0},
                                  {"time_alone", "400 us"},
                                  {"time", "500 us"},
                                  {"held_sms", 24},
                                  {"holder", "copy"},
                                  {"holder_rate", "900 GB/s"}};
  doc.add_overlap(overlap, t, env, true);
  nlohmann::json waiting = overlap;
  waiting["holder"] = "wait";
  waiting.erase("holder_rate");
  doc.add_overlap(waiting, t, env, false);
  doc.add_overlap({{"kernel", "triad"},
                   {"bytes", "3 GiB"},
                   {"time_alone", "745 us"},
                   {"time", "785 us"},
                   {"held_sms", 24},
                   {"holder", "copy"}},
                  t, env, true);
  doc.add_overlap({{"kernel", "holder"},
                   {"beside", "gemm 8192x4096x4096 bf16"},
                   {"rate_alone", "899.8 GB/s"},
                   {"rate", "874.2 GB/s"},
                   {"held_sms", 24},
                   {"holder", "copy"},
                   {"holder_rate", "900 GB/s"}},
                  t, env, false);
  doc.reject({"gemm 16x16x16 bf16", "coefficient of variation 0.2 above 0.05"});
  doc.note("attention: something could not run");
  // Points in the schema's arrays only: gemm, attention, memory, launch, power (compute),
  // collectives (all_gather on 16 ranks), overlap (the copying holder) = 7; the unfused
  // attention, memory-bound power, the one-rank collective, the waiting holder, the triad
  // beside a holder and the holder's own rate are comments.
  REQUIRE(doc.points() == 7);
  REQUIRE(doc.json().at("_overlap_holder").size() == 1);
  REQUIRE(doc.json().at("_overlap_holder")[0].at("rate") == "874.2 GB/s");
  REQUIRE(doc.json().at("_overlap_memory_bound").size() == 1);

  const auto read = io::parse_measurement_document(doc.json().dump(2), "suite.json");
  REQUIRE(read.environment.device == "NVIDIA H200");
  REQUIRE(read.environment.clocks == "sm 1980 MHz, memory 3201 MHz");
  REQUIRE(read.points.gemms.size() == 1);
  REQUIRE(read.points.gemms[0].dtype == hardware::Dtype::Fp8);
  REQUIRE(read.points.gemms[0].time.value() == Approx(100e-6));
  REQUIRE(read.points.attention.size() == 1);
  REQUIRE_FALSE(read.points.attention[0].causal);
  REQUIRE(read.points.memory[0].bytes.value() == Approx(3.0 * (1LL << 30)));
  REQUIRE(read.points.launches[0].time.value() == Approx(4.6e-6));
  REQUIRE(read.points.power.size() == 1);
  REQUIRE(read.points.power[0].power.value() == Approx(684.1));
  REQUIRE(read.points.collectives.size() == 1);
  REQUIRE(read.points.collectives[0].group.ranks == 16);
  REQUIRE(read.points.collectives[0].group.ranks_per_node == 8);
  REQUIRE(read.points.collectives[0].bytes.value() == Approx(1LL << 30));
  REQUIRE(read.points.overlap.size() == 1);
  REQUIRE(read.points.overlap[0].held_sms == 24);
  REQUIRE(read.points.overlap[0].copying);
  REQUIRE(read.points.overlap[0].rate->value() == Approx(900e9));
  REQUIRE(read.points.overlap[0].time_alone.value() == Approx(400e-6));
  REQUIRE(read.points.overlap[0].time.value() == Approx(500e-6));
  const auto json = doc.json();
  REQUIRE(json["_overlap_other"].size() == 1);
  REQUIRE(json["_overlap_memory_bound"].size() == 1);
  REQUIRE(json["_rejected"][0]["what"] == "gemm 16x16x16 bf16");
  REQUIRE(json["_power_memory_bound"].size() == 1);
  REQUIRE(json["_collectives_one_rank"].size() == 1);
  REQUIRE(json["gemm"][0]["_stats"]["trials"] == 3);
}

TEST_CASE("time and power texts keep six significant digits", "[calib]") {
  REQUIRE(time_text(1.234567e-3) == "1234.57 us");
  REQUIRE(time_text(4.666944e-6) == "4.66694 us");
  REQUIRE(power_text(684.14) == "684.1 W");
  // A time of hours still reads back (the unit parser takes exponents).
  const std::string long_time = time_text(7200.0);
  REQUIRE(long_time == "7.2e+09 us");
}

TEST_CASE("the committed H200 documents are valid measurement documents", "[calib]") {
  const std::string dir = std::string(TRAINSIM_SOURCE_DIR) + "/calibration/h200-sxm/";
  const auto suite = io::read_measurement_document(dir + "suite.json");
  REQUIRE(suite.environment.device == "NVIDIA H200");
  REQUIRE(suite.points.gemms.size() >= 50);
  REQUIRE(suite.points.launches.size() == 1);
  const auto attention = io::read_measurement_document(dir + "attention.json");
  REQUIRE(attention.points.attention.size() >= 10);
  // The overlap benchmark of the paper's 14 GEMM shapes and of llama-small's: 3 held-SM counts x
  // 2 paces each, less the records the suite rejected (calibration/h200-sxm/README.md).
  for (const char* name : {"overlap.json", "overlap-small.json"}) {
    INFO(name);
    const auto overlap = io::read_measurement_document(dir + name);
    REQUIRE(overlap.points.overlap.size() >= 80);
    REQUIRE(overlap.points.overlap.size() <= 14 * 3 * 2);
    for (const auto& p : overlap.points.overlap) {
      REQUIRE(p.copying);
      REQUIRE(p.held_sms >= 16);
      REQUIRE(p.sm_count_target == 0);
    }
  }
}

TEST_CASE("the recorded H200 training trace reads as the profiler wrote it", "[calib][trace]") {
  // torch.profiler trace of calib/torch/train_trace.py (llama-small, 4 x 2048 tokens, bf16
  // autocast) on one H200, trimmed by calib/torch/trim_trace.py (calibration/h200-sxm/README.md).
  // Expected values were computed independently from the JSON with a few lines of Python:
  // each kernel goes to the ProfilerStep whose range holds its launch (same correlation id);
  // 989 kernels per step; cuBLAS nvjet_* kernels sum to 27.154 ms in step 5 and 27.206 ms in
  // step 6 (one stream, so the union is the sum): mean 27.180 ms; the cuDNN attention kernels
  // (*sdpa*, cudnn::fusion::*) 4.906 and 4.908 ms: mean 4.907 ms.
  const auto trace =
      io::read_kineto_trace(std::string(TRAINSIM_TEST_DATA_DIR) + "/traces/h200-llama-small.json");
  REQUIRE(trace.steps.size() == 3);
  REQUIRE(trace.streams.size() == 1);
  const auto summary = io::summarize(trace, io::StepSelection::SkipFirst);
  REQUIRE(summary.used == std::vector<std::int64_t>{5, 6});
  REQUIRE(summary.skipped == std::vector<std::int64_t>{4});
  const auto& mean = summary.mean;
  REQUIRE(mean.categories.at(report::KernelCategory::Gemm).busy.value() ==
          Approx(27.180e-3).epsilon(1e-4));
  REQUIRE(mean.categories.at(report::KernelCategory::Attention).busy.value() ==
          Approx(4.907e-3).epsilon(1e-3));
  REQUIRE(mean.communication.value() == 0.0);
}
