#include "trainsim/report/simulate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/engine/activity.hpp"
#include "trainsim/model/counts.hpp"
#include "trainsim/model/kernels.hpp"
#include "trainsim/parallel/validate.hpp"

namespace trainsim::report {

Watts average_power(const hardware::PowerSpec& power, Seconds compute_busy,
                    Seconds exposed_communication, Seconds idle, Seconds contention_stretch) {
  const Seconds total = compute_busy + exposed_communication + idle;
  if (total.value() <= 0.0) return power.idle;
  // The time the GEMM contention added is time a persistent GEMM waits for SMs a collective
  // holds (its second round runs on the few SMs its first left): billed at the communication
  // power, the GEMM's own work at the compute power.
  const Seconds stretch = std::clamp(contention_stretch, Seconds(0.0), compute_busy);
  const Joules energy = power.compute * (compute_busy - stretch) +
                        power.communication * (exposed_communication + stretch) + power.idle * idle;
  const Watts w = energy / total;
  return w > power.tdp ? power.tdp : w;
}

namespace {

// Recomputation FLOPs relative to model FLOPs, for HFU: recomputed forward FLOPs of every
// layer, counted in the model-FLOPs convention (no causal discount), over the model FLOPs of
// the same tokens.
double recompute_ratio(const parallel::Scenario& s) {
  if (s.parallel.recompute == parallel::Recompute::None) return 0.0;
  const model::LayerShape shape{.micro_batch = 1,
                                .seq_len = s.training.seq_len,
                                .tp = 1,
                                .cp = 1,
                                .sequence_parallel = false,
                                .element_bytes = 2,
                                .causal = false,
                                .op_level_selective = s.stack.op_level_selective};
  const auto layer = model::layer_kernels(s.model, shape);
  const Flops per_layer = s.parallel.recompute == parallel::Recompute::Full
                              ? model::full_recompute_flops(layer)
                              : model::selective_recompute_flops(layer);
  const Flops model_flops = model::model_flops_per_token(s.model, s.training.seq_len) *
                            static_cast<double>(s.training.seq_len);
  // Layers recomputed: all, or each model chunk's first recompute_layers.
  std::int64_t layers = s.model.num_layers;
  if (s.parallel.recompute == parallel::Recompute::Full && s.parallel.recompute_layers > 0) {
    const std::int64_t chunks = s.parallel.pp * s.parallel.virtual_stages;
    layers = 0;
    for (std::int64_t c = 0; c < chunks; ++c) {
      layers += std::min(s.parallel.recompute_layers,
                         parallel::chunk_layers(s.model.num_layers, chunks, c).count);
    }
  }
  return per_layer.value() * static_cast<double>(layers) / model_flops.value();
}

// One simulated iteration and its primitives.
struct Run {
  workload::Iteration iteration;
  engine::Timeline timeline;
  Primitives primitives;
};

Run run(const parallel::Scenario& s, const collective::CollectiveModel& collectives,
        const workload::BuildOptions& options) {
  Run r;
  r.iteration = workload::build_iteration(s, collectives, options);
  r.timeline = engine::simulate(
      r.iteration.graph,
      engine::EngineOptions{.comm_compute_contention = s.hardware.gpu.comm_compute_contention,
                            .gemm_comm_contention = s.hardware.gpu.gemm_comm_contention});
  r.primitives.makespan = r.timeline.end.since_start();
  for (const engine::DeviceId device : r.iteration.stage_device) {
    r.primitives.stages.push_back(
        engine::activity(r.iteration.graph, r.timeline, device, SimTime::zero(), r.timeline.end));
  }
  r.primitives.collectives = r.iteration.collectives;
  return r;
}

}  // namespace

Report derive(const parallel::Scenario& s, const Primitives& p) {
  Report r;
  // The stack's fixed host time per optimizer step runs after the GPU work, with the GPUs idle.
  const Seconds host_overhead = s.stack.iteration_overhead;
  r.iteration_time = p.makespan + host_overhead;
  const double t = r.iteration_time.value();
  const double tokens = static_cast<double>(s.training.global_batch * s.training.seq_len);
  const auto gpus = static_cast<double>(s.gpus);
  r.tokens_per_s = tokens / t;
  r.tokens_per_s_per_gpu = r.tokens_per_s / gpus;
  r.model_flops_per_token = model::model_flops_per_token(s.model, s.training.seq_len);
  r.model_flops_per_gpu = FlopsPerSecond(r.model_flops_per_token.value() * r.tokens_per_s_per_gpu);
  const FlopsPerSecond peak = s.hardware.peak(s.training.precision);
  r.mfu = r.model_flops_per_gpu / peak;
  // The dense bf16 peak whatever the training dtype (report.hpp); a GPU without bf16 (V100)
  // falls back to its fp16 peak, which every such GPU has and which bf16 shares where both exist.
  const FlopsPerSecond bf16_peak = s.hardware.peak(hardware::Dtype::Bf16).value() > 0.0
                                       ? s.hardware.peak(hardware::Dtype::Bf16)
                                       : s.hardware.peak(hardware::Dtype::Fp16);
  r.mfu_bf16 = r.model_flops_per_gpu / bf16_peak;
  r.hfu = r.mfu * (1.0 + recompute_ratio(s));

  // Per stage: activity over the whole iteration, memory and power.
  double best = -1.0;
  Watts power_sum{};
  for (std::size_t stage = 0; stage < p.stages.size(); ++stage) {
    engine::DeviceActivity a = p.stages[stage];
    a.idle = a.idle + host_overhead;
    const MemoryBreakdown mem = memory_per_gpu(s, static_cast<std::int64_t>(stage));
    const Watts w = average_power(s.hardware.power, a.compute_busy, a.exposed_communication, a.idle,
                                  a.gemm_contention_stretch);
    power_sum += w;
    r.stages.push_back(StageSummary{.stage = static_cast<std::int64_t>(stage),
                                    .compute = a.compute_kernel_sum,
                                    .communication = a.communication_kernel_sum,
                                    .exposed_communication = a.exposed_communication,
                                    .bubble = a.idle,
                                    .memory_total = mem.total,
                                    .watts_per_gpu = w.value()});
    const double load = (a.compute_busy + a.exposed_communication).value();
    if (load > best) {
      best = load;
      r.critical_stage = static_cast<std::int64_t>(stage);
      r.compute = a.compute_kernel_sum;
      r.communication = a.communication_kernel_sum;
      r.exposed_communication = a.exposed_communication;
      r.bubble = a.idle;
    }
  }
  r.memory = memory_peak(s);

  // Every stage has the same number of GPUs (dp x tp x cp), so the GPU average is the stage mean.
  r.power.per_gpu = power_sum / static_cast<double>(r.stages.size());
  r.power.cluster = r.power.per_gpu * gpus;
  r.power.energy_per_iteration = r.power.cluster * r.iteration_time;
  r.power.tokens_per_joule = tokens / r.power.energy_per_iteration.value();
  r.cost.gpu_hours_per_million_tokens = gpus * (1e6 / r.tokens_per_s) / 3600.0;
  r.cost.usd_per_million_tokens = r.cost.gpu_hours_per_million_tokens * s.hardware.usd_per_gpu_hour;

  // Collectives: every distinct call, ordered by stage then first use.
  for (const auto& c : p.collectives) {
    r.collectives.push_back(CollectiveSummary{.stage = c.stage,
                                              .op = c.op,
                                              .group = c.group,
                                              .ranks = c.shape.ranks,
                                              .nodes = c.shape.nodes,
                                              .bytes = c.bytes,
                                              .count = c.count,
                                              .time = c.time,
                                              .algorithm = c.algorithm,
                                              .protocol = c.protocol});
  }
  return r;
}

bool sharding_is_inert(const parallel::Scenario& s) { return s.parallel.dp * s.parallel.cp == 1; }

namespace {

// ---- steady-state extrapolation ----------------------------------------------------------
//
// Method. Once a pipeline schedule (GPipe, 1F1B/PipeDream-Flush, Megatron's interleaved 1F1B;
// Narayanan et al. 2021 §2) is full, adding d micro-batches (d = the schedule's period: pp for
// the interleaved schedule, whose passes advance in groups of pp micro-batches, 1 otherwise)
// inserts one more identical period of work on every stream. Without contention the op graph is
// a max-plus linear system, whose event times grow by a constant per period once the transient
// has passed (Baccelli, Cohen, Olsder & Quadrat, "Synchronization and Linearity", 1992, §3.7,
// cyclicity theorem); every quantity the report derives from (makespan, per-stage busy, exposed
// and idle times and kernel sums, collective counts) is then affine in the micro-batch count m.
// The steady state may repeat only every c periods (the cyclicity): 1F1B pipelines whose stages
// differ alternate between two per-micro-batch increments, and under contention a 1F1B
// pipeline's increments can jump once every pp - 1 micro-batches. simulate() therefore tries d,
// 2d, (pp - 1) d and pp d in turn (the last two only when d or 2d came within kTransientResidue
// of a line); for each it runs m1, m1 + d and m1 + 2d micro-batches (runs shared between
// tries), requires a zero second difference of every such quantity, extrapolates
// each one linearly to the real m and derives the report from the extrapolated quantities
// exactly as from simulated ones. Quantities that do not depend on the timeline (memory, FLOPs per
// token) come from the real scenario. The schedule's own start m1 (two pipeline depths) is tried
// first; its runs stay within m / 2 micro-batches in all. Under contention (below) the transient
// does not end once the pipeline is full but decays over tens of micro-batches, so when that
// start fails (its close runs off a line, or its far run off theirs) a probe follows: one reduced
// run as long as the budget allows, whose per-micro-batch event times show where the steady state
// begins (ProbeTimes::steady_start); the three close runs then start there, in the period whose
// runs cost least, and the probe is their far run when it lies far enough. With the probe all
// runs stay within 3 m / 4, so a failed attempt costs at most three quarters of a full
// simulation on top of it.
//
// Guards, each a necessary condition of the steady state; any failure falls back to full
// simulation:
//  - the runs issue the same collective calls (op, group, bytes, time, stage, algorithm);
//  - no stream gains work per period faster than the makespan grows (else a queue is still
//    building and a steeper regime follows: the makespan is a maximum of affine functions);
//  - a fourth run, at least 2 max(d, pp) micro-batches further (rounded up to whole periods;
//    the probe, when it lies far enough), lies on the same line. With communication slowing compute
//    (EngineOptions::comm_compute_contention) the system is no longer max-plus linear, and
//    trainsim's pipelines show damped period-2 oscillations and per-micro-batch increments that
//    hold for a few micro-batches and then jump once per pp or pp - 1 micro-batches; three
//    consecutive points alone can sit in such a window.
// These conditions do not prove periodicity; full simulation (SimulationMode::Full) remains the
// reference, and tests/report/extrapolation_test.cpp compares the two.

// Second differences above this fraction of the scale (the makespan, at least) are not
// rounding: event times are sums of durations, each addition rounding at 2^-53 relative.
constexpr double kRelativeTolerance = 1e-12;

struct SteadyStatePlan {
  std::int64_t first = 0;   // m1
  std::int64_t period = 1;  // d
  std::int64_t check = 0;   // the fourth run's count, m1 + 2d + 2 max(d, pp)
};

// The reduced counts of period `period` from `first` on, for m micro-batches on pp stages:
// `first` raised to m's residue modulo the period, so that (m - m1) / d is an integer, and the
// far run whole periods past the third, 2 max(d, pp) micro-batches rounded up to a multiple of d.
SteadyStatePlan plan_from(std::int64_t m, std::int64_t pp, std::int64_t period,
                          std::int64_t first) {
  SteadyStatePlan plan;
  plan.period = period;
  plan.first = first + ((m - first) % period + period) % period;
  const std::int64_t far = 2 * std::max(period, pp);
  plan.check = plan.first + 2 * period + (far + period - 1) / period * period;
  return plan;
}

// The reduced counts for `s` with period `period`, or none when full simulation costs no more:
// the four reduced runs cost about 3 m1 + 3 d + check micro-batches against m for the full one
// (simulate() also keeps these tries together within m / 2).
std::optional<SteadyStatePlan> steady_state_plan(const parallel::Scenario& s, std::int64_t period,
                                                 std::int64_t requested_first) {
  const std::int64_t m = s.num_microbatches();
  const std::int64_t pp = s.parallel.pp;
  // Past the fill: 1F1B's warm-up runs pp - stage - 1 forwards, the interleaved schedule's
  // (pp - stage - 1) * 2 + (chunks - 1) * pp steps of m * chunks; two pipeline depths (and at
  // least 4 micro-batches, past FSDP's cross-micro-batch prefetch) start the steady state.
  const std::int64_t first =
      requested_first > 0 ? requested_first : std::max<std::int64_t>(4, 2 * pp);
  const SteadyStatePlan plan = plan_from(m, pp, period, first);
  if (3 * plan.first + 3 * plan.period + plan.check >= m) return std::nullopt;
  return plan;
}

bool same_calls(const std::vector<workload::CollectiveCall>& a,
                const std::vector<workload::CollectiveCall>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& x = a[i];
    const auto& y = b[i];
    if (x.op != y.op || x.group != y.group || x.stage != y.stage || x.bytes != y.bytes ||
        x.time != y.time || x.algorithm != y.algorithm || x.protocol != y.protocol ||
        x.shape.ranks != y.shape.ranks || x.shape.nodes != y.shape.nodes) {
      return false;
    }
  }
  return true;
}

// Summed running time of every stream of the run's graph.
std::vector<double> stream_busy(const Run& r) {
  const engine::Graph& g = r.iteration.graph;
  std::vector<double> busy(static_cast<std::size_t>(g.num_streams()), 0.0);
  for (engine::StreamId st = 0; st < g.num_streams(); ++st) {
    double sum = 0.0;
    for (const engine::OpId op : g.stream_ops(st)) {
      const engine::OpTiming& t = r.timeline.ops[static_cast<std::size_t>(op)];
      sum += (t.end - t.start).value();
    }
    busy[static_cast<std::size_t>(st)] = sum;
  }
  return busy;
}

// Affine extrapolation in periods past the third run. x[0..2] are at m1, m1 + d, m1 + 2d and
// x[3] at `check_steps` periods past x[2]; the result is `steps` periods past x[2], or none when
// the points are not on one line within the tolerance on `scale` (relative to the distance for
// the far point, since rounding in the slope grows with it).
class Extrapolator {
 public:
  Extrapolator(double scale, double check_steps, double steps)
      : scale_(scale), check_steps_(check_steps), steps_(steps) {}

  std::optional<double> operator()(const std::array<double, 4>& x) const {
    const double size =
        std::max({scale_, std::abs(x[0]), std::abs(x[1]), std::abs(x[2]), std::abs(x[3])});
    const double slope = x[2] - x[1];
    if (!(std::abs(slope - (x[1] - x[0])) <= kRelativeTolerance * size)) return std::nullopt;
    const double miss = x[3] - (x[2] + check_steps_ * slope);
    if (!(std::abs(miss) <= kRelativeTolerance * size * (1.0 + check_steps_))) {
      return std::nullopt;
    }
    return x[2] + steps_ * slope;
  }

  std::optional<Seconds> operator()(Seconds a, Seconds b, Seconds c, Seconds d) const {
    const auto v = (*this)({a.value(), b.value(), c.value(), d.value()});
    if (!v) return std::nullopt;
    return Seconds(*v);
  }

 private:
  double scale_;
  double check_steps_;
  double steps_;
};

// The primitives at the real micro-batch count from the reduced runs, or none when they are not
// in the steady state.
std::optional<Primitives> extrapolate(const std::array<const Run*, 4>& runs,
                                      std::int64_t check_steps, std::int64_t steps) {
  std::array<const Primitives*, 4> p{};
  for (std::size_t i = 0; i < runs.size(); ++i) p[i] = &runs[i]->primitives;
  for (std::size_t i = 1; i < p.size(); ++i) {
    if (!same_calls(p[0]->collectives, p[i]->collectives)) return std::nullopt;
  }
  const Extrapolator line(p[3]->makespan.value(), static_cast<double>(check_steps),
                          static_cast<double>(steps));
  Primitives out;
  const auto makespan = line(p[0]->makespan, p[1]->makespan, p[2]->makespan, p[3]->makespan);
  if (!makespan) return std::nullopt;
  out.makespan = *makespan;

  // No stream may gain work faster than the makespan grows.
  const std::vector<double> b1 = stream_busy(*runs[1]);
  const std::vector<double> b2 = stream_busy(*runs[2]);
  const double makespan_slope = (p[2]->makespan - p[1]->makespan).value();
  for (std::size_t st = 0; st < b2.size(); ++st) {
    if (b2[st] - b1[st] > makespan_slope + kRelativeTolerance * p[3]->makespan.value()) {
      return std::nullopt;
    }
  }

  for (std::size_t stage = 0; stage < p[3]->stages.size(); ++stage) {
    engine::DeviceActivity a;
    const auto field = [&](Seconds engine::DeviceActivity::*f) -> bool {
      const auto v = line(p[0]->stages[stage].*f, p[1]->stages[stage].*f, p[2]->stages[stage].*f,
                          p[3]->stages[stage].*f);
      if (!v) return false;
      a.*f = *v;
      return true;
    };
    if (!field(&engine::DeviceActivity::compute_busy) ||
        !field(&engine::DeviceActivity::communication_busy) ||
        !field(&engine::DeviceActivity::exposed_communication) ||
        !field(&engine::DeviceActivity::idle) ||
        !field(&engine::DeviceActivity::compute_kernel_sum) ||
        !field(&engine::DeviceActivity::gemm_contention_stretch) ||
        !field(&engine::DeviceActivity::communication_kernel_sum)) {
      return std::nullopt;
    }
    out.stages.push_back(a);
  }

  // Counts are integers: exactly affine.
  out.collectives = p[2]->collectives;
  for (std::size_t i = 0; i < out.collectives.size(); ++i) {
    const std::int64_t c0 = p[0]->collectives[i].count;
    const std::int64_t c1 = p[1]->collectives[i].count;
    const std::int64_t c2 = p[2]->collectives[i].count;
    const std::int64_t c3 = p[3]->collectives[i].count;
    if (c2 - c1 != c1 - c0 || c3 != c2 + check_steps * (c2 - c1)) return std::nullopt;
    out.collectives[i].count = c2 + steps * (c2 - c1);
  }
  return out;
}

// Above this relative second difference of the makespan at the schedule's own start, at periods
// d and 2d both, the reduced runs are taken to be inside the pipeline's transient, and the
// periods (pp - 1) d and pp d are not tried there: their runs (for pp 8, up to 57 micro-batches
// each) are saved for the probe. A rule from the data, not a law: in the 10,560-plan fixed-batch
// sweep of bench/simulate_bench.cpp no plan whose second difference at period d exceeded this
// was extrapolated at the same start with another period, but without contention 1F1B on 4
// stages of the extrapolation tests' model is 4e-3 off a line at d = 1 and on one at pp d from
// m1; the probe then finds that start, at the probe's cost.
constexpr double kTransientResidue = 1e-9;
// A probe's per-micro-batch event times are in the steady state where their second difference
// is below this fraction of the probe's makespan: ten times the rounding of event times (a few
// units in the last place, about 1e-15), a hundredth of what extrapolate() accepts of the
// makespans (kRelativeTolerance). The two measures fall together: for llama2-70b on 128 H100
// (TP 8, PP 8, hybrid_shard) the probe's (in steps of 1) is 1.4e-14 at micro-batch 64, the
// makespan's (in steps of 8 micro-batches) 2.4e-13 at 64 and 1.3e-14 at 72. The probe only
// chooses the start; extrapolate()'s checks decide.
constexpr double kProbeResidue = 1e-14;

// The latest start a probe looks for, in micro-batches: its length is capped to find starts up
// to here, so that its cost does not grow with m. In the 10,560-plan fixed-batch sweep
// (bench/simulate_bench.cpp), probes sized by the budget alone (up to 372 micro-batches) found
// their starts at micro-batches 36 to 83.
constexpr std::int64_t kLatestProbeStart = 128;

// Every stage's per-micro-batch event times in a probe (a reduced run of `count` micro-batches):
// the first start and the last end of the micro-batch's ops on the stage.
class ProbeTimes {
 public:
  ProbeTimes(const Run& probe, std::int64_t count, std::int64_t pp)
      : count_(count),
        pp_(pp),
        tolerance_(kProbeResidue * probe.primitives.makespan.value()),
        first_(static_cast<std::size_t>(pp * count), std::numeric_limits<double>::infinity()),
        end_(static_cast<std::size_t>(pp * count), -std::numeric_limits<double>::infinity()) {
    const auto& ops = probe.iteration.ops;
    for (std::size_t op = 0; op < ops.size(); ++op) {
      const workload::OpInfo& info = ops[op];
      if (info.microbatch < 0 || info.microbatch >= count || info.stage < 0 || info.stage >= pp) {
        continue;
      }
      const std::size_t at = index(info.stage, info.microbatch);
      const engine::OpTiming& t = probe.timeline.ops[op];
      first_[at] = std::min(first_[at], t.start.since_start().value());
      end_[at] = std::max(end_[at], t.end.since_start().value());
    }
  }

  // The first micro-batch from which every stage's times advance by the same amount every
  // `period` micro-batches, within kProbeResidue of the probe's makespan, for at least pp
  // micro-batches in a row up to the last `drain` micro-batches (left out: the schedule's
  // cool-down, pp micro-batches for 1F1B and GPipe, up to 2 pp - 2 for the interleaved
  // schedule); none when there is no such run. With contention the transient after the pipeline
  // fill decays geometrically (llama2-7b on 64 H100, TP 8, PP 8, dp 1, micro-batch 2, 1,024
  // micro-batches: second differences about 1e-5 of the makespan at micro-batch 16, 1e-9 near
  // 43, under 1e-13 from 75 and zero from 98), and the makespan of a reduced run is affine in its
  // count once the state it drains from is: this finds where the reduced runs can start without
  // guessing it from their makespans.
  [[nodiscard]] std::optional<std::int64_t> steady_start(std::int64_t period,
                                                         std::int64_t drain) const {
    // The last j of the second difference X[j], X[j + p], X[j + 2p] before the drain.
    const std::int64_t last = count_ - drain - 1 - 2 * period;
    if (last < pp_) return std::nullopt;
    std::int64_t start = last + 1;
    while (start > 0 && steady(period, start - 1)) --start;
    if (last + 1 - start < pp_) return std::nullopt;
    return start;
  }

 private:
  [[nodiscard]] std::size_t index(std::int64_t stage, std::int64_t microbatch) const {
    return static_cast<std::size_t>(stage * count_ + microbatch);
  }
  // Whether every stage's second difference at micro-batch j is within the tolerance; false for
  // a stage without ops there (inf - inf).
  [[nodiscard]] bool steady(std::int64_t period, std::int64_t j) const {
    for (std::int64_t stage = 0; stage < pp_; ++stage) {
      const std::size_t at = index(stage, j);
      const auto p = static_cast<std::size_t>(period);
      for (const std::vector<double>* x : {&first_, &end_}) {
        const double second = (*x)[at + 2 * p] - 2.0 * (*x)[at + p] + (*x)[at];
        if (!(std::abs(second) <= tolerance_)) return false;
      }
    }
    return true;
  }

  std::int64_t count_;
  std::int64_t pp_;
  double tolerance_;
  std::vector<double> first_;
  std::vector<double> end_;
};

// A copy of `s` with `microbatches` micro-batches per data-parallel rank.
parallel::Scenario with_microbatches(const parallel::Scenario& s, std::int64_t microbatches) {
  parallel::Scenario r = s;
  r.training.global_batch = microbatches * s.parallel.dp * s.training.micro_batch;
  return r;
}

}  // namespace

std::int64_t full_simulation_ops(const parallel::Scenario& s, const workload::BuildOptions& build) {
  parallel::require_valid(s);
  const collective::CollectiveModel collectives(s.hardware);
  const std::int64_t m = s.num_microbatches();
  const auto ops = [&](std::int64_t count) -> std::int64_t {
    return workload::build_iteration(with_microbatches(s, count), collectives, build)
        .graph.num_ops();
  };
  // The interleaved schedule runs micro-batches in groups of pp.
  const std::int64_t base =
      s.parallel.schedule == parallel::PipelineSchedule::Interleaved ? s.parallel.pp : 1;
  if (m <= 2 * base) return ops(m);
  const std::int64_t first = ops(base);
  const std::int64_t per_group = ops(2 * base) - first;
  // m <= kMaxMicrobatches (2^16) and a group's ops fit an int32: no overflow.
  return first + (m - base) / base * per_group;
}

Simulation simulate(const parallel::Scenario& s, const workload::BuildOptions& build) {
  return simulate(s, SimulateOptions{.build = build});
}

Simulation simulate(const parallel::Scenario& s, const SimulateOptions& options) {
  parallel::require_valid(s);
  const collective::CollectiveModel collectives(s.hardware);
  const std::int64_t m = s.num_microbatches();

  // Reduced micro-batches simulated: a failed attempt costs them on top of the full simulation,
  // so the attempts together stay within m / 2 at the schedule's own start and 3 m / 4 with the
  // probe.
  std::int64_t spent = 0;
  std::int64_t ops = 0;  // of every graph simulated
  if (options.mode == SimulationMode::Extrapolate) {
    // The schedule's period, then twice, pp - 1 and pp times it: a max-plus system's steady
    // state may repeat only every c periods (its cyclicity, Baccelli et al. §3.7); 1F1B
    // pipelines whose stages differ alternate between two per-micro-batch increments, so their
    // makespan is affine in steps of 2 micro-batches only; under contention some repeat every
    // pp - 1 (llama2-70b on 64 H100, TP 4, PP 8, no sharding: a jump of 5.5e-5 s every 7
    // micro-batches). Runs are shared between the candidates.
    const std::int64_t base =
        s.parallel.schedule == parallel::PipelineSchedule::Interleaved ? s.parallel.pp : 1;
    const std::int64_t pp = s.parallel.pp;
    std::map<std::int64_t, Run> runs;
    const auto reduced = [&](std::int64_t count) -> const Run& {
      auto it = runs.find(count);
      if (it == runs.end()) {
        spent += count;
        it =
            runs.emplace(count, run(with_microbatches(s, count), collectives, options.build)).first;
        ops += it->second.iteration.graph.num_ops();
      }
      return it->second;
    };
    const auto needed = [&](std::initializer_list<std::int64_t> counts) {
      std::int64_t sum = 0;
      for (const std::int64_t count : counts) {
        if (runs.count(count) == 0) sum += count;
      }
      return sum;
    };
    // The report from the runs at m1, m1 + d, m1 + 2d and the far run (a whole number of periods
    // further), or none when they are not on one line.
    const auto attempt = [&](const SteadyStatePlan& plan) -> std::optional<Simulation> {
      const std::int64_t first = plan.first;
      const std::int64_t d = plan.period;
      const std::int64_t check = plan.check;
      const std::int64_t third = first + 2 * d;
      auto p = extrapolate({&reduced(first), &reduced(first + d), &reduced(third), &reduced(check)},
                           (check - third) / d, (m - third) / d);
      if (!p) return std::nullopt;
      Run& largest = runs.at(check);
      Simulation sim;
      sim.report = derive(s, *p);
      sim.primitives = std::move(*p);
      sim.iteration = std::move(largest.iteration);
      sim.timeline = std::move(largest.timeline);
      sim.simulated_microbatches = check;
      sim.extrapolated = true;
      sim.reduced_microbatches_simulated = spent;
      sim.ops_simulated = ops;
      return sim;
    };
    std::vector<std::int64_t> periods = {base, 2 * base};
    if (pp > 3) periods.push_back((pp - 1) * base);
    if (pp > 2) periods.push_back(pp * base);

    // First the schedule's own start (steady_state_plan), or the caller's.
    bool tried = false;
    double smallest = std::numeric_limits<double>::infinity();
    for (const std::int64_t period : periods) {
      // The long periods' runs reach furthest; within the transient they are left to the probe.
      if (options.reduced_microbatches == 0 && period > 2 * base &&
          !(smallest <= kTransientResidue)) {
        break;
      }
      const auto plan = steady_state_plan(s, period, options.reduced_microbatches);
      if (!plan) continue;
      const std::int64_t d = plan->period;
      const std::int64_t third = plan->first + 2 * d;
      if (2 * (spent + needed({plan->first, plan->first + d, third, plan->check})) > m) continue;
      tried = true;
      // Cheapest first: the three close runs usually decide, the far one only confirms.
      const Seconds t1 = reduced(plan->first).primitives.makespan;
      const Seconds t2 = reduced(plan->first + d).primitives.makespan;
      const Seconds t3 = reduced(third).primitives.makespan;
      const double second_difference = std::abs(((t3 - t2) - (t2 - t1)).value()) / t3.value();
      smallest = std::min(smallest, second_difference);
      if (!(second_difference <= kRelativeTolerance)) continue;
      if (auto sim = attempt(*plan)) return std::move(*sim);
    }

    // Then where a probe finds the steady state. Its length C splits what is left of 3 m / 4
    // between the probe and the three close runs of period d so that the latest start it can
    // use still fits: the close runs begin pp after the start, the third 2d later, and the probe
    // is their far run if it lies r = 2 max(d, pp) past the third; so the latest start is
    // C - r - 2d - pp, the close runs cost 3 (C - r - 2d) + 3d, and
    // C + 3 (C - r - 2d) + 3d <= left gives C <= (left + 3d + 3r) / 4. At most
    // kLatestProbeStart + pp + 2d + r, so that the probe's cost does not grow with m. It is run
    // only when that latest start is at least twice the schedule's own, which has just failed
    // (its runs off a line, or its far run off theirs).
    if (tried && options.reduced_microbatches == 0) {
      const std::int64_t left = 3 * m / 4 - spent;
      const std::int64_t reach = 2 * std::max(base, pp);
      std::int64_t probe_count =
          std::min((left + 3 * base + 3 * reach) / 4, kLatestProbeStart + pp + 2 * base + reach);
      // The residue of m modulo 2 base, so the probe is a far run for periods d and 2d.
      probe_count -= ((probe_count - m) % (2 * base) + 2 * base) % (2 * base);
      const auto lowest = steady_state_plan(s, base, 0);
      if (lowest && probe_count - reach - 2 * base - pp >= 2 * lowest->first) {
        const Run& probe = reduced(probe_count);
        const ProbeTimes times(probe, probe_count, pp);
        const std::int64_t drain =
            s.parallel.schedule == parallel::PipelineSchedule::Interleaved ? 2 * pp : pp;
        // Of the periods whose steady start fits the budget, the one whose runs cost least.
        struct Choice {
          SteadyStatePlan plan;
          std::int64_t cost = 0;
        };
        std::optional<Choice> best;
        for (const std::int64_t d : periods) {
          const auto start = times.steady_start(d, drain);
          if (!start) continue;
          // Past the drain of the probe's steady micro-batches; the probe is the far run when
          // it lies far enough.
          SteadyStatePlan plan = plan_from(m, pp, d, std::max(lowest->first, *start + pp));
          const std::int64_t third = plan.first + 2 * d;
          if (probe_count >= plan.check && (probe_count - third) % d == 0) {
            plan.check = probe_count;
          }
          const std::int64_t cost = needed({plan.first, plan.first + d, third, plan.check});
          if (4 * (spent + cost) > 3 * m) continue;
          if (!best || cost < best->cost) best = Choice{plan, cost};
        }
        if (best) {
          if (auto sim = attempt(best->plan)) return std::move(*sim);
        }
      }
    }
  }

  Run r = run(s, collectives, options.build);
  Simulation sim;
  sim.report = derive(s, r.primitives);
  sim.primitives = std::move(r.primitives);
  sim.iteration = std::move(r.iteration);
  sim.timeline = std::move(r.timeline);
  sim.simulated_microbatches = m;
  sim.reduced_microbatches_simulated = spent;
  sim.ops_simulated = ops + sim.iteration.graph.num_ops();
  return sim;
}

}  // namespace trainsim::report
