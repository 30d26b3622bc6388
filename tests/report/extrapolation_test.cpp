// Steady-state extrapolation (report::SimulationMode::Extrapolate, sim/report/simulate.cpp)
// against full simulation: every report number agrees to 1e-9 relative for every pipeline
// schedule, sharding mode and recompute policy, with TP (sequence parallel) and CP, at
// micro-batch counts below, at and above the point where extrapolation starts; how many
// micro-batches the reduced runs take, for steady states of period 1, 2 and pp - 1 and for
// transients that end in time or do not; and a reduced count inside the pipeline fill falls
// back to full simulation.
#include <algorithm>
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "trainsim/engine/activity.hpp"
#include "trainsim/parallel/validate.hpp"
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
  // A negative `contention` keeps the profile's (h100-dgx: 0.1, GEMMs their measured 0.24); else
  // every kernel's.
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
  // The smallest micro-batch count that is extrapolated. simulate.cpp first runs k0 = pp + 1
  // (the fill) + span (a steady range of period 2d: max(2d, pp) + 4d) + drain (pp + 1; 2 pp + 1
  // interleaved) micro-batches, raised to m's residue modulo 2d, with d = pp for the interleaved
  // schedule and 1 otherwise, and only when 2 k0 <= m. (GPipe is simulated whole, below.)
  std::int64_t first_extrapolated;
};

// No PP: k0 = 2 + 6 + 2 = 10 (11 for odd m, 2 x 11 > 21): from m = 20.
// 1F1B on 2 stages: k0 = 3 + 6 + 3 = 12 (13 for odd m): from 24; 23 gives 26 > 23.
// 1F1B on 4 stages: k0 = 5 + 8 + 5 = 18 (19 for odd m): from 36; 35 gives 38 > 35.
// Interleaved, 2 stages x 2 chunks: k0 = 3 + 12 + 5 = 20 for m = 0 modulo 4, 22 for m = 2
// modulo 4 (m is even): from 40; 38 gives 44 > 38.
constexpr Schedule kSchedules[] = {
    {"1f1b", 1, 1, 20},
    {"1f1b", 2, 1, 24},
    {"1f1b", 4, 1, 36},
    {"interleaved", 2, 2, 40},
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
  // eventually periodic) in all of them at 4x the threshold. 1F1B on 2 and 4 stages without
  // sharding or with zero1 alternates between two per-micro-batch increments (the stages
  // differ): its first run holds a range of period 2 too short by one micro-batch (it begins at
  // pp + 2, not pp + 1), and a second run one range later holds it (below, "repeats every 2").
  // With the profile's contention the same plans have a transient longer than the runs m allows
  // at 4x the threshold, and fall back.
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
    // The first run has 3 + (2 + 4) + 3 = 12 micro-batches for 1F1B (d = 1, a range of period
    // 2), 3 + (4 + 8) + 5 = 20 for the interleaved schedule (d = 2, a range of period 4); 1F1B
    // under zero1 alternates (period 2) and needs a second run of 14, as in "repeats every 2".
    REQUIRE(fast.extrapolated);
    REQUIRE(fast.simulated_microbatches <= 20);
  }
  require_agree(fast.report, full.report);
}

TEST_CASE("extrapolation: agrees with full simulation with an uneven pipeline layout",
          "[report][extrapolation]") {
  // Megatron-Core's pipeline_model_parallel_layout: the small model's 8 layers as 1, 3, 3, 1
  // over 4 stages (1F1B) or over 2 stages x 2 chunks (interleaved, stage 0 holding 1 + 3 and
  // stage 1 3 + 1): stages and chunks of unequal work.
  const std::string schedule = GENERATE("1f1b", "interleaved");
  const std::string sharding = GENERATE("zero1", "full_shard");
  const double contention = GENERATE(-1.0, 0.0);
  CAPTURE(schedule, sharding, contention);
  const bool interleaved = schedule == "interleaved";
  parallel::Scenario s = scenario(schedule, interleaved ? 2 : 4, interleaved ? 2 : 1, sharding,
                                  "none", 1, 1, 96, contention);
  s.parallel.pipeline_layout = {1, 3, 3, 1};
  REQUIRE(parallel::validate(s).empty());
  require_agree(report::simulate(s).report, simulate_full(s).report);
}

TEST_CASE("extrapolation: agrees with full simulation with a multi-token-prediction module",
          "[report][extrapolation]") {
  // The module's layer, projection and second LM-head pass make the last stage the busiest
  // (ModelSpec::mtp_layers), under each schedule and an FSDP sharding that gathers its layer.
  const std::string schedule = GENERATE("1f1b", "interleaved");
  const std::string sharding = GENERATE("zero1", "full_shard");
  CAPTURE(schedule, sharding);
  const bool interleaved = schedule == "interleaved";
  parallel::Scenario s = scenario(schedule, interleaved ? 2 : 4, interleaved ? 2 : 1, sharding,
                                  "none", 2, 1, 96, -1.0);
  s.model.mtp_layers = 1;
  REQUIRE(parallel::validate(s).empty());
  require_agree(report::simulate(s).report, simulate_full(s).report);
}

TEST_CASE("extrapolation: agrees with full simulation with the embedding tied across stages",
          "[report][extrapolation]") {
  // A tied LM head on the last stage: its gradient and the first stage's embedding gradient are
  // all-reduced between the two stages before the step (embedding_grad_sync), a dependency
  // across the pipeline's ends.
  const std::string schedule = GENERATE("1f1b", "interleaved", "gpipe");
  const std::string sharding = GENERATE("none", "zero1", "full_shard");
  CAPTURE(schedule, sharding);
  const bool interleaved = schedule == "interleaved";
  parallel::Scenario s = scenario(schedule, interleaved ? 2 : 4, interleaved ? 2 : 1, sharding,
                                  "none", 2, 1, 96, -1.0);
  s.model.tied_embeddings = true;
  REQUIRE(parallel::validate(s).empty());
  require_agree(report::simulate(s).report, simulate_full(s).report);
}

TEST_CASE("extrapolation: a steady state that repeats every 2 micro-batches",
          "[report][extrapolation]") {
  // 1F1B on 2 stages with DDP, without contention: the two stages differ (embedding, LM head),
  // and the makespan alternates between two per-micro-batch increments, so no range of period
  // d = 1 exists. The first run, k0 = (pp + 1) + (max(2, pp) + 2 x 2) + (pp + 1) = 3 + 6 + 3 =
  // 12 micro-batches (m = 60 is even), holds micro-batches 4 to 8 repeating those 2 earlier: 5,
  // one short of the 6 a range of period 2 needs (for d = 2 the first micro-batch compared is
  // pp + 2 = 4). The next run holds a whole one: 4 + 6 + 3 = 13, raised to m's residue modulo 2,
  // 14. So 12 + 14 = 26 reduced micro-batches, against 60.
  const auto s = scenario("1f1b", 2, 1, "none", "none", 2, 1, 60, 0.0);
  // The alternation, from full simulations: the increments from 20 to 21 and from 21 to 22
  // micro-batches differ far above rounding.
  const auto makespan = [](std::int64_t m) {
    return simulate_full(scenario("1f1b", 2, 1, "none", "none", 2, 1, m, 0.0))
        .report.iteration_time.value();
  };
  const double t20 = makespan(20);
  const double t21 = makespan(21);
  const double t22 = makespan(22);
  REQUIRE(std::abs((t22 - t21) - (t21 - t20)) > 1e-9 * t22);
  const report::Simulation fast = report::simulate(s);
  REQUIRE(fast.extrapolated);
  CHECK(fast.simulated_microbatches == 14);
  CHECK(fast.reduced_microbatches_simulated == 12 + 14);
  require_agree(fast.report, simulate_full(s).report);
}

TEST_CASE("extrapolation: a reduced count inside the pipeline fill never gives a wrong answer",
          "[report][extrapolation]") {
  // 1F1B on 4 stages fills the pipeline over its first 3 micro-batches. Forcing a reduced run of
  // 1 micro-batch (raised to 2, m's residue modulo the first period tried, 2) leaves it no steady
  // range: the whole iteration is simulated, and it agrees with full simulation bit for bit.
  const auto s = scenario("1f1b", 4, 1, "shard_grad_op", "none", 2, 1, 64);
  report::SimulateOptions forced;
  forced.reduced_microbatches = 1;
  const report::Simulation fast = report::simulate(s, forced);
  CHECK_FALSE(fast.extrapolated);
  CHECK(fast.reduced_microbatches_simulated == 2);
  const report::Simulation full = simulate_full(s);
  require_agree(fast.report, full.report);
  CHECK(fast.report.iteration_time.value() == full.report.iteration_time.value());
}

TEST_CASE("extrapolation: a forced reduced count is raised to the schedule's residue",
          "[report][extrapolation]") {
  // The interleaved schedule runs micro-batches in groups of pp: a run of 19 on 2 stages would
  // leave a group incomplete. The count is raised to the next that equals m modulo 2 pp = 4,
  // 20, which is the schedule's own first run (kSchedules: 3 + 12 + 5 = 20), extrapolated
  // without contention.
  const auto s = scenario("interleaved", 2, 2, "zero1", "none", 2, 1, 80, 0.0);
  report::SimulateOptions forced;
  forced.reduced_microbatches = 19;
  const report::Simulation fast = report::simulate(s, forced);
  REQUIRE(fast.extrapolated);
  CHECK(fast.simulated_microbatches == 20);
  CHECK(fast.reduced_microbatches_simulated == 20);
  require_agree(fast.report, simulate_full(s).report);
}

TEST_CASE("extrapolation: the cost does not grow with the number of micro-batches",
          "[report][extrapolation]") {
  // 1F1B on 2 stages, whose per-micro-batch increments alternate between two values (the two
  // stages differ: embedding on one, LM head on the other), so the steady state repeats every
  // d = 2 micro-batches: as in the test above, a first run of 12 and a second of 14
  // micro-batches, whatever m (even; 26 <= m, the first within m / 2, from m = 24). The graph
  // simulated is the same size for m = 128 and m = 4096.
  // Without contention, so that the steady state is exactly periodic (max-plus linear).
  const auto t = [](std::int64_t m) {
    return report::simulate(scenario("1f1b", 2, 1, "zero1", "none", 2, 1, m, 0.0));
  };
  const auto m128 = t(128);
  const auto m130 = t(130);
  const auto m4096 = t(4096);
  REQUIRE(m128.extrapolated);
  REQUIRE(m128.simulated_microbatches == 14);
  REQUIRE(m4096.simulated_microbatches == 14);
  REQUIRE(m4096.reduced_microbatches_simulated == 12 + 14);
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
  // 1F1B on 4 stages (two per 8-GPU host: only the sends between stages 1 and 2 cross hosts,
  // parallel::pipeline_pair), zero1, with GEMMs slowed by half beside communication (every other
  // kernel at the profile's 0.1): the ops' shifts from one micro-batch to the next do not settle
  // once the pipeline is full but converge geometrically.
  // The first run, k0 = 5 + (4 + 4) + 5 = 18 micro-batches, holds no range of any period, and
  // ends (micro-batch 12 before its drain) too soon after the fill (8 micro-batches) to show
  // the decay: the next run is three times as long, 54. Its second differences in steps of
  // d = 1 micro-batch (the largest change of an op's shift over the one a micro-batch earlier)
  // are 1.81e-11 s over micro-batches 41 to 44 and 1.80e-12 s over 45 to 48, against a
  // tolerance of 5.5e-16 s (shift_tolerance: 1e-12 of the extrapolated makespan, about the
  // run's 0.027 s x 1,024 / 54, over the 1,024 - 54 = 970 periods inserted):
  // ceil(log(5.5e-16 / 1.80e-12) / log(1.80e-12 / 1.81e-11)) = 4 more windows of 4, and one for
  // the shifts to settle, put the range's start at 48 + 5 x 4 = 68, and the next run at 68 + 6
  // (the range, 4 + 2 x 1) + 5 (the drain) = 79 micro-batches, which holds it (period 2 asks
  // for 68 + 8 + 5 = 81, raised to m's residue modulo 2: 82): 18 + 54 + 79 = 151 reduced
  // micro-batches, against 1,024. (Found with GEMMs at 2x and every pipeline send across hosts,
  // the case ran 18, 54 and 78; with the sends between stages 0 and 1, and 2 and 3, inside
  // their host it settles within the second run at that contention.)
  const auto decaying = [](std::int64_t m) {
    parallel::Scenario s = scenario("1f1b", 4, 1, "zero1", "none", 1, 1, m);
    s.hardware.gpu.gemm_comm_contention = 0.5;
    // And the paper stack's elementwise traffic of then (1.75; refitted since,
    // stacks/pytorch-2.3-fsdp.json): the kernels' durations set the decay figures above.
    s.stack.elementwise_traffic = 1.75;
    return s;
  };
  const auto s = decaying(1024);
  const report::Simulation full = simulate_full(s);
  const report::Simulation fast = report::simulate(s);
  REQUIRE(fast.extrapolated);
  CHECK(fast.simulated_microbatches == 79);
  CHECK(fast.reduced_microbatches_simulated == 18 + 54 + 79);
  require_agree(fast.report, full.report);
  // The runs do not grow with m: at 4,096 micro-batches the same runs are simulated (the
  // tolerance, about 1e-12 of a period, barely moves with m).
  const report::Simulation longer = report::simulate(decaying(4096));
  REQUIRE(longer.extrapolated);
  CHECK(longer.simulated_microbatches == 79);
  CHECK(longer.reduced_microbatches_simulated == 18 + 54 + 79);
  CHECK(longer.iteration.graph.num_ops() == fast.iteration.graph.num_ops());
}

TEST_CASE("extrapolation: the tolerance on a shift shrinks with the periods inserted",
          "[report][extrapolation]") {
  // llama2-13b on 64 H100 (tp 8, pp 4, 1F1B, dp 2 without sharding), 2,000 micro-batches, with
  // every kernel slowed by half beside communication (contention 0.5): the shifts converge
  // slowly. The figures below are the second differences next_count() reads (the largest of
  // each of the last two windows of w = 4 micro-batches). The first run, 5 + (4 + 4) + 5 = 18,
  // is too short to show the decay; the second, 54, holds no range, and its second differences
  // for period 3 fall from 7.77e-6 s to 4.42e-6 s against a tolerance of 1.25e-13 s: 1e-12 of
  // the extrapolated makespan (about the run's 2.19 s x 2,000 / 54) over the (2,000 - 54) / 3
  // = 648.7 periods inserted, where 1e-12 of the run's makespan alone would allow 2.2e-12 s.
  // ceil(log(1.25e-13 / 4.42e-6) / log(4.42e-6 / 7.77e-6)) = 31 windows and one more:
  // a range from 48 + 32 x 4 = 176 and a third run of 176 + (4 + 2 x 3) + 5 = 191 (periods 1, 2
  // and 4 ask for longer ones), on m's residue modulo 3. Its shifts still converge, more
  // slowly: for period 4, 3.06e-13 s and then 1.99e-13 s against 1.71e-13 s, one window and
  // one more, a range from 185 + 2 x 4 = 193 and a fourth run of 193 + 12 + 5 = 210, raised to
  // m's residue modulo 4: 212, which holds a range of period 3 (micro-batches 197 to 206): 18 +
  // 54 + 191 + 212 = 475 micro-batches of the 2,000, and the extrapolation agrees with full
  // simulation within require_agree's 1e-9 (3.4e-11). With a tolerance of 1e-12 of the run's
  // makespan alone the runs were 18, 54 and 173, and the report came out 3.6e-9 of itself off
  // full simulation. (The case was first found on the small dense model on 16 B200, tp 2 with
  // sequence parallelism, pp 4; since the LM head and the embedding carry their TP collectives
  // it is extrapolated from its first run of 18.)
  parallel::Scenario s = from_json(R"({
    "hardware": "h100-dgx", "model": "llama2-13b", "cluster": {"gpus": 64},
    "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 4000},
    "parallel": {"tp": 8, "pp": 4, "sharding": "none"}})");
  s.hardware.gpu.comm_compute_contention = 0.5;
  s.hardware.gpu.gemm_comm_contention = 0.5;
  REQUIRE(s.num_microbatches() == 2000);
  const report::Simulation fast = report::simulate(s);
  const report::Simulation full = simulate_full(s);
  CHECK(fast.extrapolated);
  CHECK(fast.simulated_microbatches == 212);
  CHECK(fast.reduced_microbatches_simulated == 18 + 54 + 191 + 212);
  require_agree(fast.report, full.report);
}

TEST_CASE("extrapolation: GPipe is simulated whole", "[report][extrapolation]") {
  // llama3-8b on 6 A100 (megatron-core), GPipe over 3 stages of 25, 5 and 2 layers, full_shard,
  // dp 2. Its last stage's exposed communication grows by the same step per micro-batch, but
  // stays flat for a few micro-batches every sixteen or so (from full simulations: equal at 20,
  // 21 and 22 micro-batches, then +4.2 ms per micro-batch again). GPipe was extrapolated from
  // runs of 6, 7, 8 and 14 micro-batches on a line, which see no such stretch: at 70
  // micro-batches it gave 0.300 s of exposed communication on that stage, against 0.245 s in the
  // whole iteration (and 4e-5 off in iteration time). Nothing is extrapolated now: no reduced
  // runs, and the report is the full simulation's to the last bit.
  const auto gpipe = [](std::int64_t m) {
    const std::string text = R"({
      "hardware": "a100-dgx", "stack": "megatron-core", "model": "llama3-8b",
      "cluster": {"gpus": 6},
      "training": {"seq_len": 1024, "micro_batch": 1, "global_batch": )" +
                             std::to_string(2 * m) + R"(},
      "parallel": {"pp": 3, "pipeline_schedule": "gpipe", "sharding": "full_shard",
                   "pipeline_layout": [25, 5, 2]}})";
    return from_json(text.c_str());
  };
  const auto exposed_last = [&](std::int64_t m) {
    return simulate_full(gpipe(m)).report.stages.back().exposed_communication.value();
  };
  // The pattern no line through a few short runs can follow.
  const double e20 = exposed_last(20);
  const double e22 = exposed_last(22);
  const double e24 = exposed_last(24);
  const double e25 = exposed_last(25);
  CHECK(std::abs(e22 - e20) < 1e-9);
  CHECK(e25 - e24 > 4e-3);
  const parallel::Scenario s = gpipe(70);
  REQUIRE(s.num_microbatches() == 70);
  const report::Simulation fast = report::simulate(s);
  const report::Simulation full = simulate_full(s);
  CHECK_FALSE(fast.extrapolated);
  CHECK(fast.reduced_microbatches_simulated == 0);
  CHECK(fast.simulated_microbatches == 70);
  CHECK(fast.report.stages.back().exposed_communication.value() ==
        full.report.stages.back().exposed_communication.value());
  CHECK(fast.report.iteration_time.value() == full.report.iteration_time.value());
}

TEST_CASE("extrapolation: a steady state that repeats every pp - 1 micro-batches",
          "[report][extrapolation]") {
  // llama2-13b on 128 A100 (a100-dgx), TP 8, PP 8 (1F1B), dp 2 without sharding, sequence 2,048,
  // 512 micro-batches, with GEMMs twice as slow beside communication (gemm_comm_contention 1)
  // and other kernels 10% (comm_compute_contention 0.1). The ops' shifts repeat every
  // 7 = pp - 1 micro-batches: in a run of 90, the second differences next_count() reads (the
  // largest of each of the last two windows of 8 micro-batches) are 4.1e-5 s and 8.2e-5 s
  // for periods 1, 2 and 8, at rounding level for period 7 (8.9e-16 s, then 0), whose range
  // begins at micro-batch 25. The first run, k0 = 9 + (8 + 4) + 9 = 30 micro-batches, ends
  // too soon after the fill to show more: the next run is 3 x 30 = 90, whose period-7 range is
  // not usable ((512 - 90) / 7 is not whole). The shortest run that holds it is 25 + (8 + 2 x
  // 7) + 9 = 56, raised to m's residue modulo 7: 57 (512 - 57 = 455 = 65 x 7), whose range of
  // period 7 runs from micro-batch 26 to 47: 30 + 90 + 57 = 177 reduced micro-batches, against
  // 512. (The case was first found on llama2-70b, TP 4, on 64 H100; since the LM head and the
  // embedding carry their TP collectives that plan is extrapolated from its first run of 30.)
  parallel::Scenario s = from_json(R"({
    "hardware": "a100-dgx", "model": "llama2-13b", "cluster": {"gpus": 128},
    "training": {"seq_len": 2048, "micro_batch": 1, "global_batch": 1024},
    "parallel": {"tp": 8, "pp": 8, "sharding": "none"}})");
  s.hardware.gpu.gemm_comm_contention = 1.0;
  s.hardware.gpu.comm_compute_contention = 0.1;
  REQUIRE(s.num_microbatches() == 512);
  const report::Simulation full = simulate_full(s);
  const report::Simulation fast = report::simulate(s);
  REQUIRE(fast.extrapolated);
  CHECK(fast.simulated_microbatches == 57);
  CHECK(fast.reduced_microbatches_simulated == 30 + 90 + 57);
  require_agree(fast.report, full.report);
}

TEST_CASE("extrapolation: a transient that does not end in time is simulated in full",
          "[report][extrapolation]") {
  // llama2-7b on 64 H100, TP 8, PP 4 (1F1B), dp 2 without sharding, 1,024 micro-batches, with
  // GEMMs 10% slower beside communication and other kernels not slowed (contention 0.1 and 0).
  // The first run, k0 = 5 + (4 + 4) + 5 = 18 micro-batches, holds no range and is too short to
  // show the decay; the next, 54, holds none either. Its second differences (the largest of
  // each of the last two windows of 4 micro-batches, next_count()) fall from 3.55e-4 s to
  // 3.34e-4 s for periods 1, 2 and 3, a factor of 0.94 per window: at that rate they reach the
  // tolerance (2.6e-14 s for period 1) after ceil(log(2.6e-14 / 3.34e-4) / log(0.94)) = 381
  // windows, past kLatestSteadyStart (384 micro-batches); for period 4 they do not fall (2.39e-6
  // s, then 2.48e-6 s). So the whole iteration is simulated, and the result is the full
  // simulation's bit for bit. (The case was first found with GEMMs twice as slow and the paper
  // stack's elementwise traffic of 1.75; since the LM head and the embedding carry their TP
  // collectives that plan is extrapolated from a third run of 80 micro-batches.)
  parallel::Scenario s = from_json(R"({
    "hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 64},
    "training": {"seq_len": 4096, "micro_batch": 1, "global_batch": 2048},
    "parallel": {"tp": 8, "pp": 4, "sharding": "none"}})");
  s.hardware.gpu.gemm_comm_contention = 0.1;
  s.hardware.gpu.comm_compute_contention = 0.0;
  REQUIRE(s.num_microbatches() == 1024);
  const report::Simulation full = simulate_full(s);
  const report::Simulation fast = report::simulate(s);
  REQUIRE_FALSE(fast.extrapolated);
  CHECK(fast.simulated_microbatches == 1024);
  // The two runs, on top of the full simulation.
  CHECK(fast.reduced_microbatches_simulated == 18 + 54);
  CHECK(fast.ops_simulated > fast.iteration.graph.num_ops());
  CHECK(full.reduced_microbatches_simulated == 0);
  CHECK(full.ops_simulated == full.iteration.graph.num_ops());
  CHECK(fast.report.iteration_time.value() == full.report.iteration_time.value());
  CHECK(fast.report.exposed_communication.value() == full.report.exposed_communication.value());
  CHECK(fast.report.bubble.value() == full.report.bubble.value());
}

TEST_CASE("extrapolation: a blind run past a quarter of the micro-batches is not tried",
          "[report][extrapolation]") {
  // llama2-7b on 64 H100, TP 8, PP 4 (1F1B), dp 2 without sharding, micro-batch 8: 2,048 / (2 x
  // 8) = 128 micro-batches (a plan of bench/simulate_bench.cpp's fixed-batch sweep). The first
  // run, 5 + (4 + 4) + 5 = 18 micro-batches, holds no range and is too short to show a decay;
  // the blind run after it, 3 x 18 = 54, would take the runs to 72, past 128 / 4 = 32
  // (kBlindShare), so the iteration is simulated in full after the first. It ran both before,
  // and found no range either.
  const parallel::Scenario s = from_json(R"({
    "hardware": "h100-dgx", "model": "llama2-7b", "cluster": {"gpus": 64},
    "training": {"seq_len": 4096, "micro_batch": 8, "global_batch": 2048},
    "parallel": {"tp": 8, "pp": 4, "sharding": "none"}})");
  REQUIRE(s.num_microbatches() == 128);
  const report::Simulation fast = report::simulate(s);
  REQUIRE_FALSE(fast.extrapolated);
  CHECK(fast.reduced_microbatches_simulated == 18);
  const report::Simulation full = simulate_full(s);
  CHECK(fast.report.iteration_time.value() == full.report.iteration_time.value());
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

TEST_CASE("extrapolation: a cost spread over the step's micro-batches takes the step's share",
          "[report][extrapolation]") {
  // Megatron-Core keeps each weight's FP8 cast across the step's micro-batches
  // (fp8.weight_cache_bytes_per_param 2, Transformer Engine's is_first_microbatch): the cast is
  // paid once per step, its time spread over the step's m micro-batches. A reduced run of k
  // micro-batches must spread it over m too, or each of its micro-batches carries k / m times
  // too much of it and the extrapolated step is too slow. Without contention every schedule is
  // extrapolated at four times its threshold.
  const auto sched = GENERATE(from_range(std::begin(kSchedules), std::end(kSchedules)));
  const std::int64_t m = 4 * sched.first_extrapolated;
  INFO(sched.name << " pp " << sched.pp << " m " << m);
  parallel::Scenario s =
      scenario(sched.name, sched.pp, sched.chunks, "zero1", "none", 2, 1, m, 0.0);
  s.stack = io::load_stack("megatron-core");
  s.training.precision = hardware::Dtype::Fp8;
  REQUIRE(s.stack.fp8.weight_cache_bytes_per_param > 0.0);
  const report::Simulation full = simulate_full(s);
  const report::Simulation fast = report::simulate(s);
  REQUIRE(fast.extrapolated);
  CHECK(fast.simulated_microbatches < m);
  require_agree(fast.report, full.report);
}

TEST_CASE("extrapolation: agrees with full simulation for experts spread over EP ranks",
          "[report][extrapolation]") {
  // qwen3-30b-a3b (128 experts, 8 routed per token) on 64 H100 under Megatron-Core, zero1:
  // each MoE layer's token dispatch and combine are all-to-alls over the EP group, beside the
  // dense parts' data-parallel collectives; with FP8 its weight casts are spread over the step
  // too. Every schedule at four times its threshold, EP 2 and 8, bf16 and FP8, with the
  // profile's contention and without; without it every plan is extrapolated.
  const auto sched = GENERATE(from_range(std::begin(kSchedules), std::end(kSchedules)));
  const std::int64_t ep = GENERATE(2, 8);
  const char* precision = GENERATE("bf16", "fp8");
  const double contention = GENERATE(-1.0, 0.0);
  const std::int64_t m = 4 * sched.first_extrapolated;
  const std::int64_t dp = 64 / sched.pp;
  INFO(sched.name << " pp " << sched.pp << " ep " << ep << " " << precision << " contention "
                  << contention << " m " << m);
  io::ScenarioDocument doc;
  doc.json = nlohmann::json::parse(R"({
    "hardware": "h100-dgx", "model": "qwen3-30b-a3b", "stack": "megatron-core",
    "cluster": {"gpus": 64}, "training": {"seq_len": 4096, "micro_batch": 1}})");
  doc.json["training"]["global_batch"] = m * dp;
  doc.json["training"]["precision"] = precision;
  doc.json["parallel"] = {{"pp", sched.pp},
                          {"ep", ep},
                          {"pipeline_schedule", sched.name},
                          {"virtual_stages", sched.chunks},
                          {"sharding", "zero1"}};
  parallel::Scenario s = io::scenario_from_document(doc);
  if (contention >= 0.0) {
    s.hardware.gpu.comm_compute_contention = contention;
    s.hardware.gpu.gemm_comm_contention = contention;
  }
  const report::Simulation full = simulate_full(s);
  const report::Simulation fast = report::simulate(s);
  require_agree(fast.report, full.report);
  const bool all_to_all =
      std::any_of(full.report.collectives.begin(), full.report.collectives.end(),
                  [](const auto& c) { return c.op == "all_to_all"; });
  CHECK(all_to_all);
  if (contention == 0.0) CHECK(fast.extrapolated);
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
