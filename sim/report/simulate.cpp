#include "trainsim/report/simulate.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/engine/activity.hpp"
#include "trainsim/error.hpp"
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
                                .selective = s.stack.selective};
  const auto recomputed = [&s](const std::vector<model::KernelSpec>& layer) {
    return (s.parallel.recompute == parallel::Recompute::Full
                ? model::full_recompute_flops(layer)
                : model::selective_recompute_flops(layer))
        .value();
  };
  // A mixture-of-experts model's layers past its leading dense ones recompute their routed
  // experts (top-k of them per token, moe_layer_kernels at ep 1), not a dense MLP of ffn_hidden;
  // its multi-token-prediction layers are MoE layers too, as the builder runs them.
  const double dense_layer = recomputed(model::layer_kernels(s.model, shape));
  const bool moe = model::is_moe(s.model);
  const double moe_layer = moe ? recomputed(model::moe_layer_kernels(s.model, shape)) : 0.0;
  // With a window on some layers only, the others recompute full attention.
  const bool mixed = model::mixed_attention_window(s.model);
  const model::ModelSpec full_model =
      mixed ? model::without_attention_window(s.model) : model::ModelSpec{};
  const double dense_full = mixed ? recomputed(model::layer_kernels(full_model, shape)) : 0.0;
  const double moe_full =
      mixed && moe ? recomputed(model::moe_layer_kernels(full_model, shape)) : 0.0;
  // Layers recomputed, dense and MoE, windowed (or every layer without a mix) and in full: all,
  // or each model chunk's first recompute_layers.
  std::int64_t dense_layers = 0;
  std::int64_t moe_layers = 0;
  std::int64_t dense_full_layers = 0;
  std::int64_t moe_full_layers = 0;
  const auto count = [&](std::int64_t first, std::int64_t n) {
    for (std::int64_t l = first; l < first + n; ++l) {
      const bool full = mixed && !model::layer_windowed(s.model, l);
      if (moe && l >= s.model.num_dense_layers) {
        ++(full ? moe_full_layers : moe_layers);
      } else {
        ++(full ? dense_full_layers : dense_layers);
      }
    }
  };
  if (s.parallel.recompute == parallel::Recompute::Full && s.parallel.recompute_layers > 0) {
    const std::int64_t chunks = s.parallel.pp * s.parallel.virtual_stages;
    for (std::int64_t c = 0; c < chunks; ++c) {
      const parallel::ChunkLayers chunk = parallel::chunk_layers(s, c);
      count(chunk.first, std::min(s.parallel.recompute_layers, chunk.count));
    }
  } else {
    count(0, s.model.num_layers + s.model.mtp_layers);
  }
  const Flops model_flops = model::model_flops_per_token(s.model, s.training.seq_len) *
                            static_cast<double>(s.training.seq_len);
  // A dense model's figure as one product (moe_layers is 0), as it always was.
  return (dense_layer * static_cast<double>(dense_layers) +
          moe_layer * static_cast<double>(moe_layers) +
          dense_full * static_cast<double>(dense_full_layers) +
          moe_full * static_cast<double>(moe_full_layers)) /
         model_flops.value();
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
  r.host_overhead = host_overhead;
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

  // Per stage: activity over the whole iteration, memory and power. The critical stage is the
  // busiest (compute plus exposed communication); stages whose loads agree to kTieTolerance, as
  // stages of equal work do up to the rounding of their sums, go to the first of them, so that
  // the choice does not flip between the full simulation and its extrapolation (which agree to
  // about 1e-12, tests/report/extrapolation_test.cpp).
  constexpr double kTieTolerance = 1e-9;
  double busiest = 0.0;
  for (const engine::DeviceActivity& a : p.stages) {
    busiest = std::max(busiest, (a.compute_busy + a.exposed_communication).value());
  }
  bool chosen = false;
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
    if (!chosen && load >= busiest * (1.0 - kTieTolerance)) {
      chosen = true;
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

  // Collectives: every distinct call, ordered by stage then first use; an op that stands for
  // several NCCL calls (CollectiveCall::calls_per_op) is counted as its calls, each of its share
  // of the op's time, so that bytes, count and time are all per NCCL call.
  for (const auto& c : p.collectives) {
    const auto calls = static_cast<double>(c.calls_per_op);
    r.collectives.push_back(CollectiveSummary{.stage = c.stage,
                                              .op = c.op,
                                              .group = c.group,
                                              .ranks = c.shape.ranks,
                                              .nodes = c.shape.nodes,
                                              .domains = c.shape.domains,
                                              .bytes = c.bytes,
                                              .count = c.count * c.calls_per_op,
                                              .time = c.time / calls,
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
// Narayanan et al. 2021 §2) is full, every further micro-batch adds the same ops on every
// stream, and once the transient after the fill has passed the simulated times repeat: the ops
// of micro-batch j start and end exactly one time period P later than those of micro-batch
// j - d (d = the schedule's period: pp for the interleaved schedule, whose passes advance in
// groups of pp micro-batches, 1 otherwise). Without contention the op graph is a max-plus linear
// system, which becomes periodic after a transient (Baccelli, Cohen, Olsder & Quadrat,
// "Synchronization and Linearity", 1992, §3.7, cyclicity theorem); the period may be a multiple
// c d of the schedule's (the cyclicity): 1F1B pipelines whose stages differ alternate between
// two per-micro-batch increments, and under contention some repeat only every pp - 1
// micro-batches. With communication slowing compute (EngineOptions::comm_compute_contention,
// gemm_comm_contention) the system is no longer max-plus, and the transient decays
// geometrically over tens of micro-batches instead of ending with the fill.
//
// simulate() runs one reduced iteration of k micro-batches (k < m, k = m modulo the period) and
// looks inside it for the steady state: a range of micro-batches, ending before the schedule's
// drain, over which every op of every stream repeats the op d micro-batches earlier (the same
// collective call, kernel kind, contention class and duration) shifted by one common P within
// shift_tolerance (about kRelativeTolerance of one period). The range must cover max(d, pp) + 2d
// micro-batches (span_of), a pipeline's depth and two periods, so that whatever an op depends on
// (the previous stage's activations, the next stage's gradients, FSDP's prefetched gathers) and
// whatever runs beside it (the collectives that slow it) repeats too. Inserting n = (m - k) / d
// more periods into that range then gives the whole iteration: everything before the insertion
// point is the reduced run's, each inserted period is a copy of one period of the range, and the
// drain follows shifted by n P, entered from the same state. So each quantity the report derives
// from is the reduced run's plus n times its value over one period:
//  - the makespan grows by n P;
//  - each stage's activity (busy, exposed, idle and kernel sums) by n times the activity over a
//    window [a, a + P) that only ops of the range overlap (engine::activity);
//  - each collective call's count by n times its ops in d consecutive micro-batches of the
//    range.
// Quantities that do not depend on the timeline (memory, FLOPs per token) come from the real
// scenario. GPipe, whose stages are not throttled by one another in the forward phase, has no
// such range and is simulated whole (below).
//
// The run's length. The first is the schedule's own: pp + 1 micro-batches to fill the pipeline
// (the first micro-batch whose ops repeat the previous one's is pp + 1, when there is no
// transient), a range of period 2d and the drain, on m's residue modulo 2d. When its range is
// too short, the run itself says how long the next must be (next_count): where its range begins,
// and no sooner than its transient's second differences (the change of each op's shift from one
// period to the next), decaying geometrically, fall below the tolerance; a run too short to show
// the decay past the fill is followed by one three times as long. Every run, the first included,
// is tried only when it is at most m / 2: one that finds no range is paid on top of the full
// simulation, so a run of c micro-batches risks c to save m - c, and past m / 2 it would risk
// more than it saves. (In bench/simulate_bench.cpp's fixed-batch sweep, 83 of the 104 plans
// that ran one longer than m / 2 were then simulated in full: the pp 8 plans of 128
// micro-batches, runs of 30 and 90, in 36 of 38; in the 10k sweep of bench/sweep_bench.cpp, all
// 52.) At most kMaxRuns runs, while all of them together stay within m, starting at most
// kLatestSteadyStart micro-batches in, so that their cost does not grow with m; otherwise the
// whole iteration is simulated. These checks do not prove periodicity; full simulation
// (SimulationMode::Full) remains the reference, and tests/report/extrapolation_test.cpp compares
// the two.

// An op's shift may differ from the period's by this fraction of the run's makespan, and by no
// more than this fraction of the extrapolated makespan over the periods inserted
// (shift_tolerance). Event times are sums of durations, each addition rounding at 2^-53 relative
// (about 1e-16), so a settled shift is far inside it.
constexpr double kRelativeTolerance = 1e-12;

// The tolerance on an op's shift for a range of period d in a run of `count` micro-batches whose
// makespan is `makespan`, from which n = (m - count) / d periods are inserted. A shift still
// converging, off the steady period by delta, moves every extrapolated time by about n delta: the
// tolerance is kRelativeTolerance of the extrapolated makespan (about makespan m / count) over n,
// so that the error does not grow with m, and at most kRelativeTolerance of the run's makespan.
double shift_tolerance(Seconds makespan, std::int64_t count, std::int64_t m, std::int64_t d) {
  const double n = static_cast<double>(m - count) / static_cast<double>(d);
  const double extrapolated =
      makespan.value() * static_cast<double>(m) / static_cast<double>(count);
  return kRelativeTolerance * std::min(makespan.value(), extrapolated / std::max(1.0, n));
}

// The latest micro-batch a steady range may begin at: runs stop growing here, so that the cost
// of a slow transient does not grow with m. In the 10,560-plan fixed-batch sweep of
// bench/simulate_bench.cpp, at Hopper's measured GEMM contention (0.24), the latest range used
// began at micro-batch 337 (of a run of 356): the pp 8 plans' transients last about 250 to 340
// micro-batches (docs/sweep.md). At 192 they were simulated in full.
constexpr std::int64_t kLatestSteadyStart = 384;

// At most this many reduced runs per simulation: the first and three lengthened by what the
// previous one showed. A run predicted from a geometric decay can fall short where a slower
// mode takes over (the second differences' decay per window of 8 micro-batches goes from 0.49
// to 0.53 between runs of 90 and 267 for llama2-70b on 64 H100, tp 8, pp 8, 2,048
// micro-batches), and the fourth run holds the range. In that sweep 1,026 of the 1,097 plans
// extrapolated took one run, 24 two, 26 three and 21 four.
constexpr int kMaxRuns = 4;

// A blind run (three times the last, its length not predicted from a decay the last run
// showed) is tried only while all runs, it included, stay within m / kBlindShare micro-batches.
// A run of c that finds no range is paid on top of the whole iteration, so it is worth trying
// when it succeeds with a probability above about c / m. In the 10,560-plan fixed-batch sweep of
// bench/simulate_bench.cpp, 10 of the 154 blind runs that took the runs past m / 4 found a
// range, and the 144 others cost 10.4 million ops for the 2.3 million the 10 saved; within m / 4,
// 18 of 71 (6.1 million ops lost, 7.1 saved), within m / 8, 35 of 60 (9.4 lost, 40.5 saved).
constexpr std::int64_t kBlindShare = 4;

// Micro-batches left out at the end of a run: the schedule's cool-down (pp for 1F1B,
// whose last backward passes run without forwards between them; 2 pp for the interleaved
// schedule, whose cool-down spans two groups of pp) and one more, whose backward carries the
// step's gradient reduction.
std::int64_t drain_of(const parallel::Scenario& s) {
  const std::int64_t pp = s.parallel.pp;
  return (s.parallel.schedule == parallel::PipelineSchedule::Interleaved ? 2 * pp : pp) + 1;
}

// The micro-batches a steady range of period d must cover.
std::int64_t span_of(std::int64_t d, std::int64_t pp) { return std::max(d, pp) + 2 * d; }

// The smallest count at least `count` that equals m modulo d, so that (m - count) / d periods
// are inserted.
std::int64_t with_residue(std::int64_t count, std::int64_t m, std::int64_t d) {
  return count + ((m - count) % d + d) % d;
}

// A steady range of period d: micro-batches first - d to last repeat with shift `period`.
struct SteadyRange {
  std::int64_t d = 1;
  std::int64_t first = 0;  // the lowest j whose ops repeat j - d's
  std::int64_t last = 0;   // the highest such j, before the drain
  double period = 0.0;     // P, seconds
};

// A reduced run's ops grouped by stream and micro-batch, each group in stream order.
class RunIndex {
 public:
  RunIndex(const Run& r, std::int64_t count)
      : run_(r), count_(count), streams_(r.iteration.graph.num_streams()) {
    const engine::Graph& g = r.iteration.graph;
    begin_.assign(static_cast<std::size_t>(streams_ * count_ + 1), 0);
    for (engine::StreamId st = 0; st < streams_; ++st) {
      for (const engine::OpId op : g.stream_ops(st)) {
        const std::int64_t j = microbatch(op);
        if (j >= 0 && j < count_) ++begin_[slot(st, j) + 1];
      }
    }
    for (std::size_t i = 1; i < begin_.size(); ++i) begin_[i] += begin_[i - 1];
    ops_.resize(begin_.back());
    std::vector<std::size_t> next(begin_.begin(), begin_.end() - 1);
    for (engine::StreamId st = 0; st < streams_; ++st) {
      for (const engine::OpId op : g.stream_ops(st)) {
        const std::int64_t j = microbatch(op);
        if (j >= 0 && j < count_) ops_[next[slot(st, j)]++] = op;
      }
    }
  }

  [[nodiscard]] std::int64_t microbatch(engine::OpId op) const { return info(op).microbatch; }

  // The steady range of period d ending at `last`, at most `longest` micro-batches long, or none
  // when micro-batch `last` does not repeat last - d's ops at all (a different structure, or no
  // ops).
  [[nodiscard]] std::optional<SteadyRange> range(std::int64_t d, std::int64_t last,
                                                 double tolerance,
                                                 std::int64_t longest = kNoLimit) const {
    if (last - d < 0) return std::nullopt;
    const auto period = shift(last, d);
    if (!period || !(*period > 0.0)) return std::nullopt;
    std::int64_t j = last;
    while (j - d >= 0 && last - j < longest && repeats(j, d, *period, tolerance)) --j;
    if (j == last) return std::nullopt;
    return SteadyRange{.d = d, .first = j + 1, .last = last, .period = *period};
  }

  // The largest change of any op's shift over j - d from one period to the next, at micro-batch
  // j (>= 2d): the second difference that decays through a transient. Infinite where the ops
  // of j, j - d and j - 2d differ.
  [[nodiscard]] double second_difference(std::int64_t j, std::int64_t d) const {
    double worst = 0.0;
    for (engine::StreamId st = 0; st < streams_; ++st) {
      const auto a = ops(st, j);
      const auto b = ops(st, j - d);
      const auto c = ops(st, j - 2 * d);
      if (a.size() != b.size() || b.size() != c.size()) return kInfinity;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!same_op(a[i], b[i]) || !same_op(b[i], c[i])) return kInfinity;
        const auto& ta = timing(a[i]);
        const auto& tb = timing(b[i]);
        const auto& tc = timing(c[i]);
        worst = std::max({worst, std::abs(((ta.start - tb.start) - (tb.start - tc.start)).value()),
                          std::abs(((ta.end - tb.end) - (tb.end - tc.end)).value())});
      }
    }
    return worst;
  }

  [[nodiscard]] std::span<const engine::OpId> ops(engine::StreamId st, std::int64_t j) const {
    const std::size_t at = slot(st, j);
    return {ops_.data() + begin_[at], begin_[at + 1] - begin_[at]};
  }

  [[nodiscard]] const workload::OpInfo& info(engine::OpId op) const {
    return run_.iteration.ops[static_cast<std::size_t>(run_.iteration.graph.op_tag(op))];
  }

 private:
  static constexpr double kInfinity = std::numeric_limits<double>::infinity();
  static constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();

  [[nodiscard]] std::size_t slot(engine::StreamId st, std::int64_t j) const {
    return static_cast<std::size_t>(st * count_ + j);
  }
  [[nodiscard]] const engine::OpTiming& timing(engine::OpId op) const {
    return run_.timeline.ops[static_cast<std::size_t>(op)];
  }
  // The same op of another micro-batch: the same collective call (or none), kernel kind and
  // duration.
  [[nodiscard]] bool same_op(engine::OpId x, engine::OpId y) const {
    const workload::OpInfo& a = info(x);
    const workload::OpInfo& b = info(y);
    const engine::Graph& g = run_.iteration.graph;
    return a.collective == b.collective && a.kernel_kind == b.kernel_kind && a.stage == b.stage &&
           a.backward == b.backward && g.op_duration(x) == g.op_duration(y) &&
           g.op_contention_class(x) == g.op_contention_class(y);
  }
  // The shift of micro-batch j's first op over j - d's, on the first stream with ops in j,
  // when j - d has the same op there.
  [[nodiscard]] std::optional<double> shift(std::int64_t j, std::int64_t d) const {
    for (engine::StreamId st = 0; st < streams_; ++st) {
      const auto a = ops(st, j);
      if (a.empty()) continue;
      const auto b = ops(st, j - d);
      if (b.empty() || !same_op(a[0], b[0])) return std::nullopt;
      return (timing(a[0]).start - timing(b[0]).start).value();
    }
    return std::nullopt;
  }
  // Whether every op of micro-batch j repeats j - d's, shifted by `period` within `tolerance`.
  [[nodiscard]] bool repeats(std::int64_t j, std::int64_t d, double period,
                             double tolerance) const {
    for (engine::StreamId st = 0; st < streams_; ++st) {
      const auto a = ops(st, j);
      const auto b = ops(st, j - d);
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!same_op(a[i], b[i])) return false;
        const auto& ta = timing(a[i]);
        const auto& tb = timing(b[i]);
        if (!(std::abs((ta.start - tb.start).value() - period) <= tolerance) ||
            !(std::abs((ta.end - tb.end).value() - period) <= tolerance)) {
          return false;
        }
      }
    }
    return true;
  }

  const Run& run_;
  std::int64_t count_;
  engine::StreamId streams_;
  std::vector<std::size_t> begin_;
  std::vector<engine::OpId> ops_;
};

// The primitives at m micro-batches from a run of `count` whose steady range is `range`, or
// none when a window of one period cannot be placed inside it on every stage or a collective's
// count is not its ops'.
std::optional<Primitives> extrapolate(const Run& r, const RunIndex& index, const SteadyRange& range,
                                      std::int64_t count, std::int64_t m) {
  const engine::Graph& g = r.iteration.graph;
  const std::int64_t n = (m - count) / range.d;
  const auto times = static_cast<double>(n);
  Primitives out;
  out.makespan = r.primitives.makespan + Seconds(times * range.period);

  // Each stage's window starts at the first op of a micro-batch j of the range on its device,
  // the latest j whose window only ops of the range overlap (on stage 0 of 1F1B the forward of
  // j runs beside the backward of j - pp + 1, so j lies at least a pipeline depth into the
  // range). A stream's ops run one after another, so those a window overlaps are found by
  // binary search.
  const auto inside = [&](engine::DeviceId device, SimTime from, SimTime to) {
    for (const engine::StreamId st : g.device_streams(device)) {
      const auto ops = g.stream_ops(st);
      auto it = std::partition_point(ops.begin(), ops.end(), [&](engine::OpId op) {
        return !(from < r.timeline.ops[static_cast<std::size_t>(op)].end);
      });
      for (; it != ops.end(); ++it) {
        const engine::OpTiming& t = r.timeline.ops[static_cast<std::size_t>(*it)];
        if (!(t.start < to)) break;
        if (!(t.start < t.end)) continue;
        const std::int64_t j = index.microbatch(*it);
        if (j < range.first - range.d || j > range.last) return false;
      }
    }
    return true;
  };
  for (std::size_t stage = 0; stage < r.iteration.stage_device.size(); ++stage) {
    const engine::DeviceId device = r.iteration.stage_device[stage];
    std::optional<SimTime> from;
    for (std::int64_t j = range.last; j >= range.first && !from; --j) {
      std::optional<SimTime> start;
      for (const engine::StreamId st : g.device_streams(device)) {
        const auto ops = index.ops(st, j);
        if (ops.empty()) continue;
        const SimTime t = r.timeline.ops[static_cast<std::size_t>(ops[0])].start;
        if (!start || t < *start) start = t;
      }
      if (start && inside(device, *start, *start + Seconds(range.period))) from = start;
    }
    if (!from) return std::nullopt;
    const SimTime to = *from + Seconds(range.period);
    const engine::DeviceActivity w = engine::activity(g, r.timeline, device, *from, to);
    engine::DeviceActivity a = r.primitives.stages[stage];
    const auto grow = [&](Seconds engine::DeviceActivity::*f) { a.*f = a.*f + w.*f * times; };
    grow(&engine::DeviceActivity::compute_busy);
    grow(&engine::DeviceActivity::communication_busy);
    grow(&engine::DeviceActivity::exposed_communication);
    grow(&engine::DeviceActivity::idle);
    grow(&engine::DeviceActivity::compute_kernel_sum);
    grow(&engine::DeviceActivity::gemm_contention_stretch);
    grow(&engine::DeviceActivity::communication_kernel_sum);
    out.stages.push_back(a);
  }

  // Counts: each call's ops in the run must be its count, and d micro-batches of the range add
  // the same ops every period.
  out.collectives = r.primitives.collectives;
  std::vector<std::int64_t> total(out.collectives.size(), 0);
  std::vector<std::int64_t> per_period(out.collectives.size(), 0);
  for (std::size_t op = 0; op < r.iteration.ops.size(); ++op) {
    const workload::OpInfo& info = r.iteration.ops[op];
    if (info.collective < 0) continue;
    const auto c = static_cast<std::size_t>(info.collective);
    ++total[c];
    if (info.microbatch >= range.first && info.microbatch < range.first + range.d) ++per_period[c];
  }
  for (std::size_t c = 0; c < out.collectives.size(); ++c) {
    if (total[c] != out.collectives[c].count) return std::nullopt;
    out.collectives[c].count += n * per_period[c];
  }
  return out;
}

// The next run's count, and whether it is blind: three times the last run's, not predicted from
// a decay it showed.
struct NextRun {
  std::int64_t count = 0;
  bool blind = false;
};

// The next run from a run of `count` whose range of period d was too short or absent: the
// shortest run that holds a whole range of d (`span_of`) and its drain; three times `count`
// (blind) when the run ends too soon after the pipeline fill to show how its transient decays;
// none when it shows neither a range nor a decay, or a range beginning later than
// kLatestSteadyStart.
std::optional<NextRun> next_count(const RunIndex& index, std::int64_t count, std::int64_t d,
                                  std::int64_t pp, std::int64_t drain, double tolerance) {
  const std::int64_t last = count - drain - 1;
  const std::int64_t w = std::max(d, pp);
  // Where a range begins: at the start of the one this run holds when it is at least a pipeline
  // long (the micro-batches before the drain do not depend on the run's length), ...
  std::optional<std::int64_t> start;
  if (const auto range = index.range(d, last, tolerance);
      range && range->last - range->first + 1 >= w) {
    start = range->first;
  }
  if (last - 2 * w + 1 < 2 * pp + 2 * d) {
    // (The second differences of the fill, the first two pipeline depths, say nothing of the
    // transient's decay.)
    if (!start) return NextRun{.count = 3 * count, .blind = true};
  } else {
    // ... and no sooner than the transient's second differences, the largest of each of the last
    // two windows of w micro-batches, extrapolated geometrically, fall below the tolerance, one
    // window later (the shifts settle a little after their changes do). A range whose shifts
    // still converge moves with the run's length; this holds the next run beyond it.
    double earlier = 0.0;
    double later = 0.0;
    for (std::int64_t j = last - 2 * w + 1; j <= last; ++j) {
      double& worst = j <= last - w ? earlier : later;
      worst = std::max(worst, index.second_difference(j, d));
    }
    if (later > tolerance) {
      if (!(later < earlier)) return std::nullopt;
      const double windows = std::ceil(std::log(tolerance / later) / std::log(later / earlier));
      if (!(windows * static_cast<double>(w) <= kLatestSteadyStart)) return std::nullopt;
      const std::int64_t settled = last + (static_cast<std::int64_t>(windows) + 1) * w;
      start = std::max(start.value_or(0), settled);
    } else if (!start) {
      return std::nullopt;
    }
  }
  if (*start > kLatestSteadyStart) return std::nullopt;
  return NextRun{.count = *start + span_of(d, pp) + drain};
}

// ---- GPipe: simulated whole ----
//
// GPipe runs every forward before any backward, so its stages do not throttle one another in
// the forward phase: a faster stage runs ahead of a slower one, the gap at the turn to the
// backward phase grows with every micro-batch, and no single shift describes a period. It was
// extrapolated from four reduced runs whose makespans and activities lay on a line (k, k + 1,
// k + 2 and k + 2 + 2 pp micro-batches, k = max(4, 2 pp)), but stages of unequal work do not keep
// to a line: llama3-8b on 6 A100 (megatron-core stack, seq 1024), pp 3, GPipe, full_shard, layers
// 25, 5 and 2, adds 4.17 ms of exposed communication per micro-batch on its last stage, except for
// a few micro-batches in every sixteen where it stays flat (around 20 and 36), a pattern its runs
// of 6 to 14 could not see: at 70 micro-batches the line gave 0.300 s where the whole iteration
// has 0.245 s. No check within the m / 2 micro-batches a reduced run may spend catches such a
// beat in general, so GPipe is simulated whole; its activations grow with m, which keeps its
// plans that fit to few micro-batches.

// A copy of `s` with `microbatches` micro-batches per data-parallel rank.
parallel::Scenario with_microbatches(const parallel::Scenario& s, std::int64_t microbatches) {
  parallel::Scenario r = s;
  r.training.global_batch = microbatches * s.parallel.dp * s.training.micro_batch;
  return r;
}

// Micro-batches and ops of the reduced runs simulated so far.
struct Cost {
  std::int64_t microbatches = 0;
  std::int64_t ops = 0;
};

Run reduced_run(const parallel::Scenario& s, const collective::CollectiveModel& collectives,
                const workload::BuildOptions& build, std::int64_t count, Cost& cost) {
  // Costs spread over the step's micro-batches take the real step's share.
  workload::BuildOptions options = build;
  options.step_microbatches = s.num_microbatches();
  Run r = run(with_microbatches(s, count), collectives, options);
  cost.microbatches += count;
  cost.ops += r.iteration.graph.num_ops();
  return r;
}

// The simulation of `s` from primitives extrapolated out of the reduced run `r` of `count`
// micro-batches, whose graph and timeline it keeps.
Simulation extrapolated(const parallel::Scenario& s, Primitives p, Run& r, std::int64_t count,
                        const Cost& cost) {
  Simulation sim;
  sim.report = derive(s, p);
  sim.primitives = std::move(p);
  sim.iteration = std::move(r.iteration);
  sim.timeline = std::move(r.timeline);
  sim.simulated_microbatches = count;
  sim.extrapolated = true;
  sim.reduced_microbatches_simulated = cost.microbatches;
  sim.ops_simulated = cost.ops;
  return sim;
}

// The other schedules from one periodic range of a reduced run (above), or none.
std::optional<Simulation> extrapolate_periodic(const parallel::Scenario& s,
                                               const collective::CollectiveModel& collectives,
                                               const SimulateOptions& options, Cost& cost) {
  const std::int64_t m = s.num_microbatches();
  const std::int64_t pp = s.parallel.pp;
  // The schedule's period, then twice, pp - 1 and pp times it (the cyclicity, above).
  const std::int64_t base = s.parallel.schedule == parallel::PipelineSchedule::Interleaved ? pp : 1;
  std::vector<std::int64_t> periods = {base, 2 * base};
  if (pp > 3) periods.push_back((pp - 1) * base);
  if (pp > 2) periods.push_back(pp * base);
  const std::int64_t drain = drain_of(s);

  // The schedule's own run: the fill, a range of period 2d and the drain, on m's residue modulo
  // 2d. A count given in the options, raised to that residue, is the only run tried.
  std::int64_t count =
      with_residue(options.reduced_microbatches > 0 ? options.reduced_microbatches
                                                    : pp + 1 + span_of(2 * base, pp) + drain,
                   m, 2 * base);
  std::vector<std::int64_t> tried;
  bool blind = false;
  for (int attempt = 0; attempt < kMaxRuns; ++attempt) {
    if (2 * count > m || cost.microbatches + count > m) break;
    if (blind && kBlindShare * (cost.microbatches + count) > m) break;
    tried.push_back(count);
    Run r = reduced_run(s, collectives, options.build, count, cost);
    const RunIndex index(r, count);
    const auto tolerance = [&](std::int64_t d) {
      return shift_tolerance(r.primitives.makespan, count, m, d);
    };
    for (const std::int64_t d : periods) {
      if ((m - count) % d != 0) continue;
      // A range of span_of(d, pp) micro-batches is all it takes.
      const auto range = index.range(d, count - drain - 1, tolerance(d), span_of(d, pp));
      if (!range || range->last - range->first + 1 < span_of(d, pp)) continue;
      if (auto p = extrapolate(r, index, *range, count, m)) {
        return extrapolated(s, std::move(*p), r, count, cost);
      }
    }
    if (options.reduced_microbatches > 0) break;
    // The next run: the shortest any period asks for, on m's residue modulo that period.
    std::optional<std::int64_t> next;
    for (const std::int64_t d : periods) {
      const auto c = next_count(index, count, d, pp, drain, tolerance(d));
      if (!c) continue;
      const std::int64_t at = with_residue(c->count, m, d);
      if (std::find(tried.begin(), tried.end(), at) != tried.end()) continue;
      if (!next || at < *next) {
        next = at;
        blind = c->blind;
      }
    }
    if (!next) break;
    count = *next;
  }
  return std::nullopt;
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

std::string full_simulation_excess(const parallel::Scenario& scenario) {
  const std::int64_t ops = full_simulation_ops(scenario);
  if (ops <= kMaxFullSimulationOps) return "";
  return "the whole iteration has " + std::to_string(ops) + " ops (" +
         std::to_string(scenario.num_microbatches()) +
         " micro-batches per step); expected at most " + std::to_string(kMaxFullSimulationOps) +
         " for a whole-iteration simulation";
}

std::string gpipe_excess(const parallel::Scenario& scenario) {
  if (scenario.parallel.schedule != parallel::PipelineSchedule::GPipe) return "";
  const std::string excess = full_simulation_excess(scenario);
  if (excess.empty()) return "";
  return "gpipe is simulated whole, and " + excess +
         " (fewer micro-batches, or 1f1b or interleaved, whose steady state is extrapolated)";
}

Simulation simulate(const parallel::Scenario& s, const workload::BuildOptions& build) {
  return simulate(s, SimulateOptions{.build = build});
}

Simulation simulate(const parallel::Scenario& s, const SimulateOptions& options) {
  parallel::require_valid(s);
  const collective::CollectiveModel collectives(s.hardware);
  const std::int64_t m = s.num_microbatches();

  // What the reduced runs cost: a failed attempt costs them on top of the full simulation.
  Cost cost;
  if (options.mode == SimulationMode::Extrapolate) {
    // GPipe is simulated whole (above), within the bound a whole simulation asked for keeps.
    if (const std::string excess = gpipe_excess(s); !excess.empty()) {
      throw PlanError(std::string(kGpipeExcessKey) + ": " + excess);
    }
    if (s.parallel.schedule != parallel::PipelineSchedule::GPipe) {
      if (auto sim = extrapolate_periodic(s, collectives, options, cost)) return std::move(*sim);
    }
  }

  Run r = run(s, collectives, options.build);
  Simulation sim;
  sim.report = derive(s, r.primitives);
  sim.primitives = std::move(r.primitives);
  sim.iteration = std::move(r.iteration);
  sim.timeline = std::move(r.timeline);
  sim.simulated_microbatches = m;
  sim.reduced_microbatches_simulated = cost.microbatches;
  sim.ops_simulated = cost.ops + sim.iteration.graph.num_ops();
  return sim;
}

}  // namespace trainsim::report
