// Cost of the discrete-event engine on a graph the size of the largest workloads: 16 pipeline
// stages x ~9,100 ops (TP all-reduces after every GEMM, DP reduce-scatters, point-to-point sends
// and receives between stages), simulated with contention on. Counters: ops per graph, and
// time per op ("per_op", seconds; read "25n" as 25 ns).
#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "trainsim/engine/activity.hpp"
#include "trainsim/engine/graph.hpp"
#include "trainsim/engine/simulator.hpp"
#include "trainsim/units.hpp"

namespace {

using namespace trainsim;
using namespace trainsim::literals;
using namespace trainsim::engine;

constexpr int kStages = 16;
constexpr int kMicroBatches = 32;
constexpr int kLayersPerStage = 35;

struct StageStreams {
  StreamId compute, tp, dp, send, recv;
};

// A GPipe-like iteration: every stage runs all forward micro-batches, then all backward ones.
// Per micro-batch and layer: attention GEMM -> TP all-reduce -> MLP GEMM -> TP all-reduce, each
// waiting on the one before. Stages hand activations forward and gradients backward through
// send -> receive dependencies. The last backward micro-batch of each layer launches that
// layer's DP reduce-scatter, which overlaps with the remaining backward compute.
Graph pipeline_graph() {
  Graph g;
  g.reserve(static_cast<std::size_t>(kStages) * 9200, static_cast<std::size_t>(kStages) * 9200);
  const NameId attn = g.intern_name("attn");
  const NameId mlp = g.intern_name("mlp");
  const NameId ar = g.intern_name("tp_all_reduce");
  const NameId rs = g.intern_name("dp_reduce_scatter");
  const NameId send = g.intern_name("pp_send");
  const NameId recv = g.intern_name("pp_recv");
  std::vector<StageStreams> stages;
  for (int s = 0; s < kStages; ++s) {
    const DeviceId d = g.add_device("stage" + std::to_string(s));
    stages.push_back(StageStreams{g.add_stream(d, "compute", OpKind::Compute),
                                  g.add_stream(d, "tp", OpKind::Communication),
                                  g.add_stream(d, "dp", OpKind::Communication),
                                  g.add_stream(d, "pp-send", OpKind::Communication),
                                  g.add_stream(d, "pp-recv", OpKind::Communication)});
  }
  // One layer's chain, forward or backward; returns its last op.
  const auto layer = [&](const StageStreams& st, OpId prev, double scale) {
    const OpId a = g.add_op(st.compute, 120_us * scale, attn);
    if (prev >= 0) g.add_dependency(prev, a);
    const OpId r1 = g.add_op(st.tp, 25_us, ar);
    g.add_dependency(a, r1);
    const OpId m = g.add_op(st.compute, 200_us * scale, mlp);
    g.add_dependency(r1, m);
    const OpId r2 = g.add_op(st.tp, 25_us, ar);
    g.add_dependency(m, r2);
    return r2;
  };
  const auto idx = [](int stage, int mb) {
    return static_cast<std::size_t>(stage) * kMicroBatches + static_cast<std::size_t>(mb);
  };
  std::vector<OpId> sends(static_cast<std::size_t>(kStages * kMicroBatches), -1);
  for (int s = 0; s < kStages; ++s) {  // forward, first stage first
    const StageStreams& st = stages[static_cast<std::size_t>(s)];
    for (int mb = 0; mb < kMicroBatches; ++mb) {
      OpId prev = -1;
      if (s > 0) {
        prev = g.add_op(st.recv, 30_us, recv);
        g.add_dependency(sends[idx(s - 1, mb)], prev);
      }
      for (int l = 0; l < kLayersPerStage; ++l) prev = layer(st, prev, 1.0);
      if (s + 1 < kStages) {
        sends[idx(s, mb)] = g.add_op(st.send, 30_us, send);
        g.add_dependency(prev, sends[idx(s, mb)]);
      }
    }
  }
  for (int s = kStages - 1; s >= 0; --s) {  // backward, last stage first
    const StageStreams& st = stages[static_cast<std::size_t>(s)];
    for (int mb = 0; mb < kMicroBatches; ++mb) {
      OpId prev = -1;
      if (s + 1 < kStages) {
        prev = g.add_op(st.recv, 30_us, recv);
        g.add_dependency(sends[idx(s + 1, mb)], prev);
      }
      for (int l = 0; l < kLayersPerStage; ++l) {
        prev = layer(st, prev, 2.0);
        if (mb + 1 == kMicroBatches) {
          const OpId r = g.add_op(st.dp, 900_us, rs);
          g.add_dependency(prev, r);
        }
      }
      if (s > 0) {
        sends[idx(s, mb)] = g.add_op(st.send, 30_us, send);
        g.add_dependency(prev, sends[idx(s, mb)]);
      }
    }
  }
  return g;
}

void set_per_op(benchmark::State& state, const Graph& g) {
  state.counters["ops"] = static_cast<double>(g.num_ops());
  state.counters["per_op"] = benchmark::Counter(
      static_cast<double>(g.num_ops()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void engine_build_graph(benchmark::State& state) {
  std::int32_t ops = 0;
  for (auto _ : state) {
    const Graph g = pipeline_graph();
    ops = g.num_ops();
    benchmark::DoNotOptimize(ops);
  }
  state.counters["ops"] = static_cast<double>(ops);
}
BENCHMARK(engine_build_graph)->Unit(benchmark::kMillisecond);

void engine_simulate(benchmark::State& state) {
  const Graph g = pipeline_graph();
  const EngineOptions options{.comm_compute_contention =
                                  static_cast<double>(state.range(0)) / 100.0};
  std::int64_t events = 0;
  for (auto _ : state) {
    const Timeline t = simulate(g, options);
    events = t.num_events;
    benchmark::DoNotOptimize(t.end);
  }
  set_per_op(state, g);
  state.counters["events"] = static_cast<double>(events);
}
// Argument: contention in percent (0: no rescaling; 15: every DP op rescales compute).
BENCHMARK(engine_simulate)->Arg(0)->Arg(15)->Unit(benchmark::kMillisecond);

void engine_activity(benchmark::State& state) {
  const Graph g = pipeline_graph();
  const Timeline t = simulate(g, EngineOptions{.comm_compute_contention = 0.15});
  for (auto _ : state) {
    Seconds idle;
    for (DeviceId d = 0; d < g.num_devices(); ++d) {
      idle += activity(g, t, d, SimTime::zero(), t.end).idle;
    }
    benchmark::DoNotOptimize(idle);
  }
  set_per_op(state, g);
}
BENCHMARK(engine_activity)->Unit(benchmark::kMillisecond);

}  // namespace
