#include "trainsim/report/simulate.hpp"

#include <algorithm>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/engine/activity.hpp"
#include "trainsim/model/counts.hpp"
#include "trainsim/model/kernels.hpp"
#include "trainsim/parallel/validate.hpp"

namespace trainsim::report {

Watts average_power(const hardware::PowerSpec& power, Seconds compute_busy,
                    Seconds exposed_communication, Seconds idle) {
  const Seconds total = compute_busy + exposed_communication + idle;
  if (total.value() <= 0.0) return power.idle;
  const Joules energy = power.compute * compute_busy + power.communication * exposed_communication +
                        power.idle * idle;
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
                                .causal = false};
  const auto layer = model::layer_kernels(s.model, shape);
  const Flops per_layer = s.parallel.recompute == parallel::Recompute::Full
                              ? model::full_recompute_flops(layer)
                              : model::selective_recompute_flops(layer);
  const Flops model_flops =
      model::model_flops_per_token(s.model, s.training.seq_len) * static_cast<double>(s.training.seq_len);
  return per_layer.value() * static_cast<double>(s.model.num_layers) / model_flops.value();
}

}  // namespace

Simulation simulate(const parallel::Scenario& s, const workload::BuildOptions& options) {
  parallel::require_valid(s);

  const collective::CollectiveModel collectives(s.hardware);
  Simulation sim;
  sim.iteration = workload::build_iteration(s, collectives, options);
  sim.timeline = engine::simulate(
      sim.iteration.graph,
      engine::EngineOptions{.comm_compute_contention = s.hardware.gpu.comm_compute_contention});

  Report& r = sim.report;
  // The stack's fixed host time per optimizer step runs after the GPU work, with the GPUs idle.
  const Seconds host_overhead = s.stack.iteration_overhead;
  r.iteration_time = sim.timeline.end.since_start() + host_overhead;
  const double t = r.iteration_time.value();
  const double tokens = static_cast<double>(s.training.global_batch * s.training.seq_len);
  const auto gpus = static_cast<double>(s.gpus);
  r.tokens_per_s = tokens / t;
  r.tokens_per_s_per_gpu = r.tokens_per_s / gpus;
  r.model_flops_per_token = model::model_flops_per_token(s.model, s.training.seq_len);
  r.model_flops_per_gpu = FlopsPerSecond(r.model_flops_per_token.value() * r.tokens_per_s_per_gpu);
  const FlopsPerSecond peak = s.hardware.peak(s.training.precision);
  r.mfu = r.model_flops_per_gpu / peak;
  r.hfu = r.mfu * (1.0 + recompute_ratio(s));

  // Per stage: activity over the whole iteration, memory and power.
  double best = -1.0;
  Watts power_sum{};
  for (std::size_t stage = 0; stage < sim.iteration.stage_device.size(); ++stage) {
    engine::DeviceActivity a =
        engine::activity(sim.iteration.graph, sim.timeline, sim.iteration.stage_device[stage],
                         SimTime::zero(), sim.timeline.end);
    a.idle = a.idle + host_overhead;
    const MemoryBreakdown mem = memory_per_gpu(s, static_cast<std::int64_t>(stage));
    const Watts w = average_power(s.hardware.power, a.compute_busy, a.exposed_communication, a.idle);
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
  for (const auto& c : sim.iteration.collectives) {
    r.collectives.push_back(CollectiveSummary{.op = c.op,
                                              .group = c.group,
                                              .ranks = c.shape.ranks,
                                              .nodes = c.shape.nodes,
                                              .bytes = c.bytes,
                                              .count = c.count,
                                              .time = c.time,
                                              .algorithm = c.algorithm,
                                              .protocol = c.protocol});
  }
  return sim;
}

}  // namespace trainsim::report
