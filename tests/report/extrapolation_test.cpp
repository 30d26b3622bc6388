// Steady-state extrapolation (report::SimulationMode::Extrapolate, sim/report/simulate.cpp)
// against full simulation: every report number agrees to 1e-9 relative for every pipeline
// schedule, sharding mode and recompute policy, with TP (sequence parallel) and CP, at
// micro-batch counts below, at and above the point where extrapolation starts; and a reduced
// count inside the pipeline fill falls back to full simulation.
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "trainsim/engine/activity.hpp"
#include "trainsim/report/simulate.hpp"

#include "sim/io/scenario_loader.hpp"
#include "sim/io/stack_loader.hpp"

#include "tests/small_dense_model.hpp"

using namespace trainsim;

namespace {

// The small dense model (tests/small_dense_model.hpp) on h100-dgx.
parallel::Scenario scenario(const std::string& schedule, std::int64_t pp, std::int64_t chunks,
                            const std::string& sharding, const std::string& recompute,
                            std::int64_t tp, std::int64_t cp, std::int64_t microbatches,
                            double contention = -1.0) {
  constexpr std::int64_t kDp = 4;
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx", "training": {"seq_len": 1024, "micro_batch": 1}})");
  doc.json["model"] = testing::small_dense_model();
  doc.json["cluster"] = {{"gpus", tp * cp * pp * kDp}};
  doc.json["training"]["global_batch"] = microbatches * kDp;
  doc.json["parallel"] = {{"tp", tp},
                          {"pp", pp},
                          {"cp", cp},
                          {"sequence_parallel", tp > 1},
                          {"pipeline_schedule", schedule},
                          {"virtual_stages", chunks},
                          {"sharding", sharding},
                          {"recompute", recompute}};
  if (sharding == "hybrid_shard") doc.json["parallel"]["shard_group"] = 2;
  parallel::Scenario s = io::scenario_from_document(doc);
  // A negative `contention` keeps the profile's (h100-dgx: 0.1, GEMMs 1); else every kernel's.
  if (contention >= 0.0) {
    s.hardware.gpu.comm_compute_contention = contention;
    s.hardware.gpu.gemm_comm_contention = contention;
  }
  return s;
}

// A scenario from a JSON document (built-in profile and model names).
parallel::Scenario from_json(const char* text) {
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(text);
  return io::scenario_from_document(doc);
}

// Every micro-batch simulated: the reference extrapolation is compared with.
report::Simulation simulate_full(const parallel::Scenario& s) {
  report::SimulateOptions full_options;
  full_options.mode = report::SimulationMode::Full;
  return report::simulate(s, full_options);
}

// 1e-9 relative; times also within 1e-12 of the iteration time, for sums that are zero in one
// run and a rounding residue in the other (bubble_s of a pipeline-free plan).
void require_agree(const report::Report& x, const report::Report& full) {
  const double margin = 1e-12 * full.iteration_time.value();
  const auto near = [](double v) { return Approx(v).epsilon(1e-9); };
  const auto near_time = [margin](Seconds v) {
    return Approx(v.value()).epsilon(1e-9).margin(margin);
  };
  CHECK(x.iteration_time.value() == near(full.iteration_time.value()));
  CHECK(x.tokens_per_s == near(full.tokens_per_s));
  CHECK(x.tokens_per_s_per_gpu == near(full.tokens_per_s_per_gpu));
  CHECK(x.model_flops_per_token.value() == full.model_flops_per_token.value());
  CHECK(x.model_flops_per_gpu.value() == near(full.model_flops_per_gpu.value()));
  CHECK(x.mfu == near(full.mfu));
  CHECK(x.hfu == near(full.hfu));
  CHECK(x.critical_stage == full.critical_stage);
  CHECK(x.compute.value() == near_time(full.compute));
  CHECK(x.communication.value() == near_time(full.communication));
  CHECK(x.exposed_communication.value() == near_time(full.exposed_communication));
  CHECK(x.bubble.value() == near_time(full.bubble));
  // Memory does not come from the timeline: both modes compute it from the real scenario.
  CHECK(x.memory.stage == full.memory.stage);
  CHECK(x.memory.total.value() == full.memory.total.value());
  CHECK(x.memory.activations.value() == full.memory.activations.value());
  CHECK(x.memory.fits == full.memory.fits);
  CHECK(x.power.per_gpu.value() == near(full.power.per_gpu.value()));
  CHECK(x.power.cluster.value() == near(full.power.cluster.value()));
  CHECK(x.power.energy_per_iteration.value() == near(full.power.energy_per_iteration.value()));
  CHECK(x.power.tokens_per_joule == near(full.power.tokens_per_joule));
  CHECK(x.cost.gpu_hours_per_million_tokens == near(full.cost.gpu_hours_per_million_tokens));
  CHECK(x.cost.usd_per_million_tokens == near(full.cost.usd_per_million_tokens));
  REQUIRE(x.collectives.size() == full.collectives.size());
  for (std::size_t i = 0; i < x.collectives.size(); ++i) {
    const auto& a = x.collectives[i];
    const auto& b = full.collectives[i];
    CHECK(a.op == b.op);
    CHECK(a.group == b.group);
    CHECK(a.ranks == b.ranks);
    CHECK(a.nodes == b.nodes);
    CHECK(a.bytes.value() == b.bytes.value());
    CHECK(a.count == b.count);  // integers: exact
    CHECK(a.time.value() == b.time.value());
    CHECK(a.algorithm == b.algorithm);
    CHECK(a.protocol == b.protocol);
  }
  REQUIRE(x.stages.size() == full.stages.size());
  for (std::size_t i = 0; i < x.stages.size(); ++i) {
    const auto& a = x.stages[i];
    const auto& b = full.stages[i];
    CHECK(a.stage == b.stage);
    CHECK(a.compute.value() == near_time(b.compute));
    CHECK(a.communication.value() == near_time(b.communication));
    CHECK(a.exposed_communication.value() == near_time(b.exposed_communication));
    CHECK(a.bubble.value() == near_time(b.bubble));
    CHECK(a.memory_total.value() == b.memory_total.value());
    CHECK(a.watts_per_gpu == near(b.watts_per_gpu));
  }
}

struct Schedule {
  const char* name;
  std::int64_t pp;
  std::int64_t chunks;
  // The smallest micro-batch count that is extrapolated. simulate.cpp first tries runs of m1,
  // m1 + d and m1 + 2d micro-batches and a check run of c = m1 + 2d + 2 max(d, pp), with
  // m1 = max(4, 2 pp) (rounded up to m's residue modulo d) and d = pp for the interleaved
  // schedule, 1 otherwise; it tries only while the reduced runs total at most m / 2.
  std::int64_t first_extrapolated;
};

// No PP: m1 = 4, d = 1, c = 6 + 2 = 8: 4 + 5 + 6 + 8 = 23, from m = 46.
// 1F1B and GPipe on 2 stages: m1 = 4, d = 1, c = 6 + 4 = 10: 4 + 5 + 6 + 10 = 25, from 50.
// 1F1B on 4 stages: m1 = 8, d = 1, c = 10 + 8 = 18: 8 + 9 + 10 + 18 = 45, from 90.
// Interleaved, 2 stages x 2 chunks: m1 = 4, d = 2, c = 8 + 4 = 12: 4 + 6 + 8 + 12 = 30, from
// 60 (m must be even).
constexpr Schedule kSchedules[] = {
    {"1f1b", 1, 1, 46},  {"1f1b", 2, 1, 50},        {"1f1b", 4, 1, 90},
    {"gpipe", 2, 1, 50}, {"interleaved", 2, 2, 60},
};

}  // namespace

TEST_CASE("extrapolation: agrees with full simulation on every schedule and sharding",
          "[report][extrapolation]") {
  const auto sched = GENERATE(from_range(std::begin(kSchedules), std::end(kSchedules)));
  // With the profile's contention (communication slowing compute, h100-dgx 0.1) and without
  // it, when the op graph is a max-plus linear system and the steady state is exactly periodic.
  const double contention = GENERATE(-1.0, 0.0);
  std::int64_t attempted = 0;
  std::int64_t extrapolated = 0;
  std::int64_t extrapolated_far = 0;
  for (const std::string sharding :
       {"none", "zero1", "shard_grad_op", "full_shard", "hybrid_shard"}) {
    for (const std::string recompute : {"none", "selective", "full"}) {
      // The last step below the threshold (simulated in full), the threshold itself, and a
      // count four times past it (steps of 2 keep the interleaved count even).
      const std::int64_t step = sched.chunks > 1 ? 2 : 1;
      for (const std::int64_t m : {sched.first_extrapolated - step, sched.first_extrapolated,
                                   4 * sched.first_extrapolated}) {
        INFO(sched.name << " pp " << sched.pp << " contention " << contention << " " << sharding
                        << " recompute " << recompute << " m " << m);
        const auto s =
            scenario(sched.name, sched.pp, sched.chunks, sharding, recompute, 2, 1, m, contention);
        REQUIRE(s.num_microbatches() == m);
        const report::Simulation full = simulate_full(s);
        const report::Simulation fast = report::simulate(s);
        REQUIRE(full.simulated_microbatches == m);
        if (m < sched.first_extrapolated) {
          REQUIRE_FALSE(fast.extrapolated);
          REQUIRE(fast.simulated_microbatches == m);
        } else {
          ++attempted;
          // Extrapolated (from runs far below m), or fallen back to full simulation.
          if (fast.extrapolated) ++extrapolated;
          if (fast.extrapolated && m > sched.first_extrapolated) ++extrapolated_far;
          REQUIRE(fast.simulated_microbatches ==
                  (fast.extrapolated ? fast.simulated_microbatches : m));
        }
        require_agree(fast.report, full.report);
      }
    }
  }
  INFO(sched.name << " pp " << sched.pp << " contention " << contention);
  CAPTURE(attempted, extrapolated, extrapolated_far);
  // Every schedule is extrapolated in some cases; without contention (a max-plus linear system,
  // eventually periodic) in all of them at 4x the threshold, where the doubled and pp-fold
  // periods (for pipelines whose makespan alternates between two increments) are affordable:
  // 1F1B on 2 stages adds runs of 8 and 12 for d = 2 (25 + 20 = 45 <= 200 / 2). On 4 stages
  // the other shardings lie on a line at m1 = 8 with d = 1; with none and zero1, d = 1 and 2 at
  // m1 = 8 stay over 1e-9 off a line (8, 9, 10 and 12 simulated, 39 in all), and the probe takes
  // (3 x 360 / 4 - 39 + 3 x 1 + 3 x 2 x 4) / 4 = 64 micro-batches (on m's residue modulo 2),
  // finds period 4 from micro-batch 4, and the runs of 8, 12 and 16 lie on one line with it
  // (39 + 64 + 16 = 119 <= 3 x 360 / 4).
  REQUIRE(extrapolated > 0);
  if (contention == 0.0) REQUIRE(extrapolated_far == attempted / 2);
}

TEST_CASE("extrapolation: agrees with full simulation with context parallelism",
          "[report][extrapolation]") {
  // CP 2 adds the K/V ring exchange beside attention on its own stream; TP 1, so no TP stream.
  const std::string sharding = GENERATE("zero1", "full_shard");
  const std::string schedule = GENERATE("1f1b", "interleaved");
  const double contention = GENERATE(-1.0, 0.0);
  const std::int64_t chunks = schedule == "interleaved" ? 2 : 1;
  const std::int64_t m = 200;
  CAPTURE(sharding, schedule, contention);
  const auto s = scenario(schedule, 2, chunks, sharding, "selective", 1, 2, m, contention);
  const report::Simulation full = simulate_full(s);
  const report::Simulation fast = report::simulate(s);
  if (contention == 0.0) {
    // m1 = 4; the check run has m1 + 2d + 2 max(d, 2) micro-batches: 10 for d = 1, 12 for
    // d = 2 (the interleaved period, or 1F1B's doubled one), 4 + 8 + 8 = 20 for d = 4.
    REQUIRE(fast.extrapolated);
    REQUIRE(fast.simulated_microbatches <= 20);
  }
  require_agree(fast.report, full.report);
}

TEST_CASE("extrapolation: a schedule that is not affine in the tried periods falls back",
          "[report][extrapolation]") {
  // 1F1B on 2 stages with DDP: the two stages differ (embedding, LM head), and the makespan
  // alternates between two per-micro-batch increments (their difference is about 3.5e-5 s, far
  // above rounding), so its second difference in steps of d = 1 is not zero. The doubled
  // period d = 2 would bring the reduced runs to 4 + 5 + 6 + 10 + 8 + 12 = 45 micro-batches,
  // more than half of m = 60: the whole iteration is simulated, and the result is the full
  // simulation itself.
  const auto s = scenario("1f1b", 2, 1, "none", "none", 2, 1, 60, 0.0);
  const report::Simulation fallback = report::simulate(s);
  REQUIRE_FALSE(fallback.extrapolated);
  REQUIRE(fallback.simulated_microbatches == 60);
  REQUIRE(static_cast<std::int64_t>(fallback.timeline.ops.size()) ==
          fallback.iteration.graph.num_ops());
  const report::Simulation full = simulate_full(s);
  // Identical numbers, not merely close ones.
  REQUIRE(fallback.report.iteration_time.value() == full.report.iteration_time.value());
  REQUIRE(fallback.report.bubble.value() == full.report.bubble.value());
}

TEST_CASE("extrapolation: a reduced count inside the pipeline fill never gives a wrong answer",
          "[report][extrapolation]") {
  // 1F1B on 4 stages fills the pipeline over its first 3 micro-batches. Forcing m1 = 1 puts the
  // reduced runs inside the fill: the affinity checks either reject them (full simulation) or
  // find a period whose runs are already on the steady line; both agree with full simulation.
  const auto s = scenario("1f1b", 4, 1, "shard_grad_op", "none", 2, 1, 64);
  report::SimulateOptions forced;
  forced.reduced_microbatches = 1;
  require_agree(report::simulate(s, forced).report, simulate_full(s).report);
}

TEST_CASE("extrapolation: the cost does not grow with the number of micro-batches",
          "[report][extrapolation]") {
  // 1F1B on 2 stages, whose per-micro-batch increments alternate between two values (the two
  // stages differ: embedding on one, LM head on the other), so the steady state repeats every
  // d = 2 micro-batches: after the failed d = 1 runs (4, 5, 6), runs of 8 and a check run of
  // 8 + 2 x 2 = 12 micro-batches (4 + 5 + 6 + 10 + 8 + 12 = 45 <= m / 2 from m = 90), whatever
  // m. The graph simulated is the same size for m = 128 and m = 4096.
  // Without contention, so that the steady state is exactly periodic (max-plus linear).
  const auto t = [](std::int64_t m) {
    return report::simulate(scenario("1f1b", 2, 1, "zero1", "none", 2, 1, m, 0.0));
  };
  const auto m128 = t(128);
  const auto m130 = t(130);
  const auto m4096 = t(4096);
  REQUIRE(m128.extrapolated);
  REQUIRE(m128.simulated_microbatches == 12);
  REQUIRE(m4096.simulated_microbatches == 12);
  REQUIRE(m128.iteration.graph.num_ops() == m4096.iteration.graph.num_ops());
  // In the steady state each pair of micro-batches adds the same time:
  // T(4096) = T(128) + (4096 - 128) / 2 (T(130) - T(128)) = T(128) + 1984 (T(130) - T(128)).
  const double slope = (m130.report.iteration_time - m128.report.iteration_time).value();
  REQUIRE(slope > 0.0);
  REQUIRE(m4096.report.iteration_time.value() ==
          Approx(m128.report.iteration_time.value() + 1984.0 * slope).epsilon(1e-9));
}

TEST_CASE("extrapolation: a transient that decays under contention is extrapolated later",
          "[report][extrapolation]") {
  // 1F1B on 4 stages, zero1, with h100-dgx's contention (0.1, GEMMs 1): the makespan's
  // second difference does not vanish once the pipeline is full but decays geometrically: in
  // steps of d = 4 it is about 1.1e-5 of the makespan at the schedule's own start m1 = 8 and
  // 4.1e-7 at 16, and d = 1 and 2 are worse at 8, over 1e-9, so the longer periods are not
  // tried there (8, 9, 10 and 12 micro-batches simulated, 39 in all). A probe follows, of
  // min((3 x 1024 / 4 - 39 + 3 x 1 + 3 x 2 x 4) / 4, 128 + 4 + 2 x 1 + 2 x 4) = min(189, 142) =
  // 142 micro-batches (on m's residue modulo 2). Its per-micro-batch event times are on a line
  // in steps of 1 from micro-batch 58 and in steps of 2 from 53; the close runs of period 2,
  // 58, 60 and 62 (53 + 4, made even), cost least, and the probe is their far run:
  // 39 + 142 + 180 = 361 reduced micro-batches, against 1,024. Before the probe the start was
  // guessed from the decay of the makespan's second difference between starts: 61 with period
  // 3, after starts at 8 and 16 (411 reduced micro-batches); before later starts, this plan was
  // simulated whole.
  const auto s = scenario("1f1b", 4, 1, "zero1", "none", 1, 1, 1024);
  const report::Simulation full = simulate_full(s);
  const report::Simulation fast = report::simulate(s);
  REQUIRE(fast.extrapolated);
  // The far run is the probe.
  CHECK(fast.simulated_microbatches == 142);
  CHECK(fast.reduced_microbatches_simulated == 361);
  require_agree(fast.report, full.report);
  // Its length does not grow with m: at 4,096 micro-batches the budget would allow
  // (3 x 4096 / 4 - 39 + 27) / 4 = 765, the cap keeps 142, and the same runs are simulated.
  const report::Simulation longer =
      report::simulate(scenario("1f1b", 4, 1, "zero1", "none", 1, 1, 4096));
  REQUIRE(longer.extrapolated);
  CHECK(longer.simulated_microbatches == 142);
  CHECK(longer.reduced_microbatches_simulated == 361);
  CHECK(longer.iteration.graph.num_ops() == fast.iteration.graph.num_ops());
}

TEST_CASE("extrapolation: a steady state that repeats every pp - 1 micro-batches",
          "[report][extrapolation]") {
  // llama2-70b on 64 H100, TP 4, PP 8 (1F1B), dp 2 without sharding, 512 micro-batches. Under
  // h100-dgx's contention the makespan grows by equal steps except for a jump of +-5.5e-5 s
  // every 7 = pp - 1 micro-batches (full simulations of 40 to 140 micro-batches: second
  // differences at rounding level but at 43/44, 50/51, 57/58, ...). Periods 1, 2 and pp = 8
  // each put three close runs on a line that the far run misses; period 7 is tried before pp:
  // m1 = 16 rounded to m's residue modulo 7 is 22 (512 - 22 = 490 = 70 x 7), runs of 22, 29
  // and 36, and a check run 2 pp = 16 micro-batches further rounded up to whole periods:
  // 36 + 21 = 57.
  const parallel::Scenario s = from_json(R"({
    "hardware": "h100-dgx", "model": "llama2-70b", "cluster": {"gpus": 64},
    "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 1024},
    "parallel": {"tp": 4, "pp": 8, "sharding": "none"}})");
  REQUIRE(s.num_microbatches() == 512);
  const report::Simulation full = simulate_full(s);
  const report::Simulation fast = report::simulate(s);
  REQUIRE(fast.extrapolated);
  CHECK(fast.simulated_microbatches == 57);
  require_agree(fast.report, full.report);
}

TEST_CASE("extrapolation: a transient the probe does not see end is simulated in full",
          "[report][extrapolation]") {
  // llama2-7b on 64 H100, TP 8, PP 4 (1F1B), dp 2 without sharding, 1,024 micro-batches. Under
  // h100-dgx's contention the makespan's second difference in steps of 8 micro-batches is still
  // 1e-11 of it at 400 micro-batches (full simulations of 8 to 400). At the schedule's start
  // m1 = 8, d = 1 and 2 are over 1e-9 off a line (8, 9, 10 and 12 simulated, 39 in all); the
  // probe, min((3 x 1024 / 4 - 39 + 3 x 1 + 3 x 2 x 4) / 4, 128 + 4 + 2 x 1 + 2 x 4) = 142
  // micro-batches, holds no 4 (pp) micro-batches in a row whose event times lie on a line
  // within 1e-14 of its makespan, in any period. So the whole iteration is simulated, and the
  // result is the full simulation's bit for bit.
  const parallel::Scenario s = from_json(R"({
    "hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 64},
    "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 2048},
    "parallel": {"tp": 8, "pp": 4, "sharding": "none"}})");
  REQUIRE(s.num_microbatches() == 1024);
  const report::Simulation full = simulate_full(s);
  const report::Simulation fast = report::simulate(s);
  REQUIRE_FALSE(fast.extrapolated);
  CHECK(fast.simulated_microbatches == 1024);
  // The tries at m1 and the probe, on top of the full simulation.
  CHECK(fast.reduced_microbatches_simulated == 39 + 142);
  CHECK(fast.ops_simulated > fast.iteration.graph.num_ops());
  CHECK(full.reduced_microbatches_simulated == 0);
  CHECK(full.ops_simulated == full.iteration.graph.num_ops());
  CHECK(fast.report.iteration_time.value() == full.report.iteration_time.value());
  CHECK(fast.report.exposed_communication.value() == full.report.exposed_communication.value());
  CHECK(fast.report.bubble.value() == full.report.bubble.value());
}

TEST_CASE("extrapolation: agrees with full simulation under Megatron-Core's data parallelism",
          "[report][extrapolation]") {
  // The megatron-core stack under zero1: the weight gathers open the iteration
  // (overlap_param_gather) and only the first chunk of stage 0 is bucketed (buckets
  // first_chunk), so later stages and chunks reduce their gradients in one call each. Both
  // touch only the first forward and the last backward of a chunk: the steady state between
  // them is the same, and extrapolation must agree with full simulation at every schedule's
  // threshold and four times past it. Without contention every schedule is extrapolated at four
  // times its threshold (as in the test above), so the agreement is not that of two full
  // simulations.
  const auto sched = GENERATE(from_range(std::begin(kSchedules), std::end(kSchedules)));
  const double contention = GENERATE(-1.0, 0.0);
  for (const std::int64_t m : {sched.first_extrapolated, 4 * sched.first_extrapolated}) {
    INFO(sched.name << " pp " << sched.pp << " contention " << contention << " m " << m);
    parallel::Scenario s =
        scenario(sched.name, sched.pp, sched.chunks, "zero1", "none", 2, 1, m, contention);
    s.stack = io::load_stack("megatron-core");
    REQUIRE(s.stack.dp_overlap_param_gather);
    const report::Simulation full = simulate_full(s);
    const report::Simulation fast = report::simulate(s);
    require_agree(fast.report, full.report);
    if (contention == 0.0 && m > sched.first_extrapolated) CHECK(fast.extrapolated);
  }
}

TEST_CASE("full_simulation_ops counts the whole iteration's graph from two small ones",
          "[report][extrapolation]") {
  // The bound on --trace and --full-simulation (report::kMaxFullSimulationOps) rests on this
  // count: it must equal the ops of the graph a full simulation builds, for every schedule and
  // sharding, including micro-batch counts that are not a multiple of the pipeline depth.
  for (const Schedule& sched : kSchedules) {
    for (const std::string sharding : {"none", "zero1", "full_shard", "hybrid_shard"}) {
      for (const std::string recompute : {"none", "full"}) {
        const std::int64_t step = sched.chunks > 1 ? 2 : 1;
        for (const std::int64_t m : {step, 2 * step, 3 * step, 17 * step}) {
          INFO(sched.name << " pp " << sched.pp << " " << sharding << " recompute " << recompute
                          << " m " << m);
          const auto s = scenario(sched.name, sched.pp, sched.chunks, sharding, recompute, 2, 1, m);
          const report::Simulation full = simulate_full(s);
          CHECK(report::full_simulation_ops(s) == full.iteration.graph.num_ops());
        }
      }
    }
  }
}

TEST_CASE("engine: the busy times simulate sums equal activity's edge sweep bit for bit",
          "[report][engine]") {
  // simulate() sums each device's busy and idle time as it runs (engine::DeviceBusy), and
  // activity over a device's whole run returns those sums; over a list of streams it sweeps
  // their start and end edges. The report's figures and the sweep's bytes rest on the two being
  // equal, not merely close: both add the same segments in time order. Checked on every stage of
  // every schedule and sharding, with the profile's contention (rescheduled compute ops) and
  // without it.
  for (const Schedule& sched : kSchedules) {
    for (const std::string sharding : {"none", "zero1", "full_shard", "hybrid_shard"}) {
      for (const double contention : {-1.0, 0.0}) {
        INFO(sched.name << " pp " << sched.pp << " " << sharding << " contention " << contention);
        const auto s =
            scenario(sched.name, sched.pp, sched.chunks, sharding, "none", 2, 1, 8, contention);
        const report::Simulation sim = simulate_full(s);
        const engine::Graph& g = sim.iteration.graph;
        for (const engine::DeviceId d : sim.iteration.stage_device) {
          REQUIRE(sim.timeline.devices.at(static_cast<std::size_t>(d)).exact);
          const engine::DeviceActivity fast =
              engine::activity(g, sim.timeline, d, SimTime::zero(), sim.timeline.end);
          const engine::DeviceActivity swept = engine::activity(
              g, sim.timeline, g.device_streams(d), SimTime::zero(), sim.timeline.end);
          CHECK(fast.compute_busy.value() == swept.compute_busy.value());
          CHECK(fast.communication_busy.value() == swept.communication_busy.value());
          CHECK(fast.exposed_communication.value() == swept.exposed_communication.value());
          CHECK(fast.idle.value() == swept.idle.value());
          CHECK(fast.compute_kernel_sum.value() == swept.compute_kernel_sum.value());
        }
      }
    }
  }
}
