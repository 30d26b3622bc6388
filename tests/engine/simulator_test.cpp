#include "trainsim/engine/simulator.hpp"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/engine/graph.hpp"
#include "trainsim/error.hpp"
#include "trainsim/units.hpp"

using namespace trainsim;
using namespace trainsim::literals;
using namespace trainsim::engine;

namespace {

// Builds small graphs with one op name; every op is called "op".
struct Builder {
  Graph g;
  NameId name = g.intern_name("op");
  OpId op(StreamId s, Seconds d) { return g.add_op(s, d, name); }
};

// Times in milliseconds, for readable expectations.
double start_ms(const Timeline& t, OpId op) {
  return t.ops[static_cast<std::size_t>(op)].start.since_start() / 1_ms;
}
double end_ms(const Timeline& t, OpId op) {
  return t.ops[static_cast<std::size_t>(op)].end.since_start() / 1_ms;
}

constexpr EngineOptions kNoContention{};

}  // namespace

TEST_CASE("engine: an op waits for its dependencies", "[engine]") {
  Builder b;
  const DeviceId d = b.g.add_device("stage0");
  const StreamId s1 = b.g.add_stream(d, "compute", OpKind::Compute);
  const StreamId s2 = b.g.add_stream(d, "tp", OpKind::Communication);
  const OpId a = b.op(s1, 2_ms);
  const OpId c = b.op(s1, 1_ms);
  const OpId m = b.op(s2, 3_ms);
  const OpId e = b.op(s2, 4_ms);
  b.g.add_dependency(a, m);
  b.g.add_dependency(m, c);
  const Timeline t = simulate(b.g, kNoContention);
  // a [0, 2]; m waits for a: [2, 5]; c follows a on its stream but also waits for m: [5, 6];
  // e follows m on the tp stream: [5, 9]. The makespan is 9 ms.
  REQUIRE(start_ms(t, a) == Approx(0.0).margin(1e-12));
  REQUIRE(start_ms(t, m) == Approx(2.0).epsilon(1e-12));
  REQUIRE(end_ms(t, m) == Approx(5.0).epsilon(1e-12));
  REQUIRE(start_ms(t, c) == Approx(5.0).epsilon(1e-12));
  REQUIRE(end_ms(t, c) == Approx(6.0).epsilon(1e-12));
  REQUIRE(start_ms(t, e) == Approx(5.0).epsilon(1e-12));
  REQUIRE(t.end.since_start() / 1_ms == Approx(9.0).epsilon(1e-12));
}

TEST_CASE("engine: ops on one stream run one after another", "[engine]") {
  Builder b;
  const DeviceId d = b.g.add_device("stage0");
  const StreamId s = b.g.add_stream(d, "compute", OpKind::Compute);
  const OpId x = b.op(s, 1_ms);
  const OpId y = b.op(s, 2_ms);
  const OpId z = b.op(s, 3_ms);
  const Timeline t = simulate(b.g, kNoContention);
  // No dependencies, yet the stream serializes them: [0, 1], [1, 3], [3, 6].
  REQUIRE(end_ms(t, x) == Approx(1.0).epsilon(1e-12));
  REQUIRE(start_ms(t, y) == Approx(1.0).epsilon(1e-12));
  REQUIRE(end_ms(t, y) == Approx(3.0).epsilon(1e-12));
  REQUIRE(start_ms(t, z) == Approx(3.0).epsilon(1e-12));
  REQUIRE(end_ms(t, z) == Approx(6.0).epsilon(1e-12));
  REQUIRE(t.end.since_start() / 1_ms == Approx(6.0).epsilon(1e-12));
}

TEST_CASE("engine: ops on different streams overlap", "[engine]") {
  Builder b;
  const DeviceId d = b.g.add_device("stage0");
  const StreamId compute = b.g.add_stream(d, "compute", OpKind::Compute);
  const StreamId dp = b.g.add_stream(d, "dp", OpKind::Communication);
  const OpId c = b.op(compute, 5_ms);
  const OpId m = b.op(dp, 3_ms);
  const Timeline t = simulate(b.g, kNoContention);
  // Both start at 0; without contention neither slows: makespan max(5, 3) = 5 ms.
  REQUIRE(start_ms(t, c) == Approx(0.0).margin(1e-12));
  REQUIRE(start_ms(t, m) == Approx(0.0).margin(1e-12));
  REQUIRE(end_ms(t, c) == Approx(5.0).epsilon(1e-12));
  REQUIRE(end_ms(t, m) == Approx(3.0).epsilon(1e-12));
  REQUIRE(t.end.since_start() / 1_ms == Approx(5.0).epsilon(1e-12));
}

TEST_CASE("engine: communication slows concurrent compute on its device", "[engine]") {
  const EngineOptions slow{.comm_compute_contention = 0.25};
  Builder b;
  const DeviceId d0 = b.g.add_device("stage0");
  const StreamId compute = b.g.add_stream(d0, "compute", OpKind::Compute);
  const StreamId tp = b.g.add_stream(d0, "tp", OpKind::Communication);
  const StreamId dp = b.g.add_stream(d0, "dp", OpKind::Communication);

  SECTION("communication over the start of a compute op") {
    const OpId c = b.op(compute, 10_ms);
    const OpId m = b.op(tp, 4_ms);
    const Timeline t = simulate(b.g, slow);
    // Compute runs at 1 / 1.25 = 0.8 of full speed while m runs, [0, 4]: 4 * 0.8 = 3.2 ms of
    // work done, 10 - 3.2 = 6.8 ms left at full speed from 4 ms: ends at 10.8 ms.
    REQUIRE(end_ms(t, c) == Approx(10.8).epsilon(1e-12));
    // Communication itself is never slowed.
    REQUIRE(end_ms(t, m) == Approx(4.0).epsilon(1e-12));
  }
  SECTION("communication starting in the middle of a compute op") {
    const OpId a = b.op(compute, 2_ms);
    const OpId c = b.op(compute, 10_ms);
    const OpId m = b.op(tp, 4_ms);
    b.g.add_dependency(a, m);
    const Timeline t = simulate(b.g, slow);
    // a [0, 2] alone. c starts at 2 and m runs [2, 6]: c does 4 * 0.8 = 3.2 ms of work there,
    // then 6.8 ms at full speed: ends at 6 + 6.8 = 12.8 ms.
    REQUIRE(end_ms(t, a) == Approx(2.0).epsilon(1e-12));
    REQUIRE(start_ms(t, m) == Approx(2.0).epsilon(1e-12));
    REQUIRE(end_ms(t, c) == Approx(12.8).epsilon(1e-12));
  }
  SECTION("compute starting while communication runs") {
    const OpId c1 = b.op(compute, 2_ms);
    const OpId c2 = b.op(compute, 3_ms);
    const OpId m = b.op(tp, 4_ms);
    const Timeline t = simulate(b.g, slow);
    // m runs [0, 4]. c1 is slowed throughout: 2 * 1.25 = 2.5 ms, ends at 2.5. c2 starts at 2.5,
    // slowed until 4: 1.5 / 1.25 = 1.2 ms of work, 1.8 ms left at full speed: ends at 5.8 ms.
    REQUIRE(end_ms(t, m) == Approx(4.0).epsilon(1e-12));
    REQUIRE(end_ms(t, c1) == Approx(2.5).epsilon(1e-12));
    REQUIRE(start_ms(t, c2) == Approx(2.5).epsilon(1e-12));
    REQUIRE(end_ms(t, c2) == Approx(5.8).epsilon(1e-12));
  }
  SECTION("overlapping communication ops slow compute once, not twice") {
    const OpId a = b.op(compute, 2_ms);
    const OpId c = b.op(compute, 10_ms);
    const OpId m1 = b.op(tp, 4_ms);
    const OpId m2 = b.op(dp, 4_ms);
    b.g.add_dependency(a, m2);
    const Timeline t = simulate(b.g, slow);
    // m1 runs [0, 4] and slows a: 2 * 1.25 = 2.5 ms, so a ends at 2.5. Then m2 (waiting for a)
    // runs [2.5, 6.5] and c starts at 2.5. Communication runs without a break over [0, 6.5],
    // with two ops at once over [2.5, 4]; the slowdown stays 1.25 there. c is slowed over
    // [2.5, 6.5]: 4 / 1.25 = 3.2 ms of work, 6.8 ms left at full speed: ends at 13.3 ms.
    REQUIRE(end_ms(t, a) == Approx(2.5).epsilon(1e-12));
    REQUIRE(start_ms(t, m2) == Approx(2.5).epsilon(1e-12));
    REQUIRE(end_ms(t, m1) == Approx(4.0).epsilon(1e-12));
    REQUIRE(end_ms(t, c) == Approx(13.3).epsilon(1e-12));
  }
  SECTION("communication on another device does not slow compute here") {
    const DeviceId d1 = b.g.add_device("stage1");
    const StreamId other_tp = b.g.add_stream(d1, "tp", OpKind::Communication);
    const OpId c = b.op(compute, 10_ms);
    const OpId m = b.op(other_tp, 4_ms);
    const Timeline t = simulate(b.g, slow);
    // No communication ever runs on stage0, so c takes exactly its duration.
    REQUIRE(t.ops[static_cast<std::size_t>(c)].end == SimTime::at(10_ms));
    REQUIRE(end_ms(t, m) == Approx(4.0).epsilon(1e-12));
  }
  SECTION("compute before and after communication is not slowed") {
    const OpId c1 = b.op(compute, 3_ms);
    const OpId m = b.op(tp, 4_ms);
    const OpId c2 = b.op(compute, 2_ms);
    b.g.add_dependency(c1, m);
    b.g.add_dependency(m, c2);
    const Timeline t = simulate(b.g, slow);
    // c1 [0, 3], m [3, 7], c2 [7, 9]: nothing overlaps, so contention changes nothing, and a
    // compute op that meets no communication ends at exactly start + duration.
    REQUIRE(t.ops[static_cast<std::size_t>(c1)].end == SimTime::at(3_ms));
    REQUIRE(end_ms(t, c2) == Approx(9.0).epsilon(1e-12));
  }
  SECTION("zero contention leaves overlap free") {
    const OpId c = b.op(compute, 10_ms);
    b.op(tp, 4_ms);
    const Timeline t = simulate(b.g, kNoContention);
    REQUIRE(t.ops[static_cast<std::size_t>(c)].end == SimTime::at(10_ms));
  }
}

TEST_CASE("engine: dependencies cross devices", "[engine]") {
  // Two pipeline stages: stage0 computes 4 ms then sends for 1 ms; stage1 receives (1 ms,
  // after the send) and computes 3 ms. A second stage0 op overlaps with stage1's work.
  Builder b;
  const DeviceId s0 = b.g.add_device("stage0");
  const DeviceId s1 = b.g.add_device("stage1");
  const StreamId c0 = b.g.add_stream(s0, "compute", OpKind::Compute);
  const StreamId send0 = b.g.add_stream(s0, "pp-send", OpKind::Communication);
  const StreamId c1 = b.g.add_stream(s1, "compute", OpKind::Compute);
  const StreamId recv1 = b.g.add_stream(s1, "pp-recv", OpKind::Communication);
  const OpId f0 = b.op(c0, 4_ms);
  const OpId f0b = b.op(c0, 6_ms);
  const OpId send = b.op(send0, 1_ms);
  const OpId recv = b.op(recv1, 1_ms);
  const OpId f1 = b.op(c1, 3_ms);
  b.g.add_dependency(f0, send);
  b.g.add_dependency(send, recv);
  b.g.add_dependency(recv, f1);
  const Timeline t = simulate(b.g, kNoContention);
  // f0 [0, 4]; send [4, 5]; recv [5, 6]; f1 [6, 9]; f0b follows f0: [4, 10]. Makespan 10 ms.
  REQUIRE(start_ms(t, send) == Approx(4.0).epsilon(1e-12));
  REQUIRE(start_ms(t, recv) == Approx(5.0).epsilon(1e-12));
  REQUIRE(start_ms(t, f1) == Approx(6.0).epsilon(1e-12));
  REQUIRE(end_ms(t, f1) == Approx(9.0).epsilon(1e-12));
  REQUIRE(end_ms(t, f0b) == Approx(10.0).epsilon(1e-12));
  REQUIRE(t.end.since_start() / 1_ms == Approx(10.0).epsilon(1e-12));
}

TEST_CASE("engine: zero-duration ops take no time", "[engine]") {
  Builder b;
  const DeviceId d = b.g.add_device("stage0");
  const StreamId compute = b.g.add_stream(d, "compute", OpKind::Compute);
  const StreamId tp = b.g.add_stream(d, "tp", OpKind::Communication);
  const OpId a = b.op(compute, 2_ms);
  const OpId marker = b.op(compute, 0_s);
  const OpId empty_comm = b.op(tp, 0_s);
  const OpId c = b.op(compute, 3_ms);
  b.g.add_dependency(a, empty_comm);
  b.g.add_dependency(empty_comm, c);
  const Timeline t = simulate(b.g, EngineOptions{.comm_compute_contention = 0.5});
  // a [0, 2]; marker and empty_comm both at [2, 2]; c [2, 5]. A zero-duration communication
  // op does not count as running communication, so c is not slowed.
  REQUIRE(start_ms(t, marker) == Approx(2.0).epsilon(1e-12));
  REQUIRE(end_ms(t, marker) == Approx(2.0).epsilon(1e-12));
  REQUIRE(start_ms(t, empty_comm) == Approx(2.0).epsilon(1e-12));
  REQUIRE(end_ms(t, empty_comm) == Approx(2.0).epsilon(1e-12));
  REQUIRE(start_ms(t, c) == Approx(2.0).epsilon(1e-12));
  REQUIRE(end_ms(t, c) == Approx(5.0).epsilon(1e-12));
}

TEST_CASE("engine: an empty graph ends at time zero", "[engine]") {
  const Timeline t = simulate(Graph{}, kNoContention);
  REQUIRE(t.ops.empty());
  REQUIRE(t.end == SimTime::zero());
}

TEST_CASE("engine: simulation is deterministic", "[engine]") {
  // A pseudo-random pipeline-like graph with many equal timestamps (durations are whole
  // microseconds from a small set) and contention, built twice and simulated twice.
  const auto build = [] {
    Builder b;
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<int> pick(1, 4);
    std::vector<StreamId> streams;
    for (int dev = 0; dev < 4; ++dev) {
      const DeviceId d = b.g.add_device("stage" + std::to_string(dev));
      streams.push_back(b.g.add_stream(d, "compute", OpKind::Compute));
      streams.push_back(b.g.add_stream(d, "tp", OpKind::Communication));
      streams.push_back(b.g.add_stream(d, "dp", OpKind::Communication));
    }
    std::uniform_int_distribution<std::size_t> stream_of(0, streams.size() - 1);
    for (int i = 0; i < 2000; ++i) {
      const OpId op = b.op(streams[stream_of(rng)], Seconds(pick(rng) * 1e-6));
      // Edges only from earlier ops keep the graph acyclic.
      if (op > 0) {
        std::uniform_int_distribution<OpId> earlier(0, op - 1);
        b.g.add_dependency(earlier(rng), op);
      }
    }
    return b.g;
  };
  const Graph g1 = build();
  const Graph g2 = build();
  const EngineOptions opts{.comm_compute_contention = 0.3};
  const Timeline t1 = simulate(g1, opts);
  const Timeline t2 = simulate(g1, opts);
  const Timeline t3 = simulate(g2, opts);
  REQUIRE(t1.ops.size() == 2000);
  bool identical = true;
  for (std::size_t i = 0; i < t1.ops.size(); ++i) {
    // Bit-identical, not approximately equal: that is the property under test.
    identical = identical && t1.ops[i].start == t2.ops[i].start && t1.ops[i].end == t2.ops[i].end &&
                t1.ops[i].start == t3.ops[i].start && t1.ops[i].end == t3.ops[i].end;
  }
  REQUIRE(identical);
  REQUIRE(t1.end == t2.end);
  REQUIRE(t1.num_events == t2.num_events);
}

TEST_CASE("engine: every op ends no earlier than it could", "[engine]") {
  // Properties on a random graph: each op starts at or after the end of each dependency and of
  // its predecessor on the stream; it runs for at least its duration; something starts at 0.
  Builder b;
  std::mt19937_64 rng(7);
  const DeviceId d = b.g.add_device("stage0");
  const std::vector<StreamId> streams{b.g.add_stream(d, "compute", OpKind::Compute),
                                      b.g.add_stream(d, "compute2", OpKind::Compute),
                                      b.g.add_stream(d, "tp", OpKind::Communication)};
  std::uniform_int_distribution<std::size_t> stream_of(0, streams.size() - 1);
  std::uniform_real_distribution<double> dur(0.0, 1e-3);
  for (int i = 0; i < 500; ++i) {
    const OpId op = b.op(streams[stream_of(rng)], Seconds(dur(rng)));
    if (op > 2) {
      std::uniform_int_distribution<OpId> earlier(0, op - 1);
      b.g.add_dependency(earlier(rng), op);
    }
  }
  const Timeline t = simulate(b.g, EngineOptions{.comm_compute_contention = 0.5});
  const auto& ops = t.ops;
  const auto at = [&](OpId op) { return ops[static_cast<std::size_t>(op)]; };
  bool ok = true;
  for (const Dependency& dep : b.g.dependencies())
    ok = ok && at(dep.before).end <= at(dep.after).start;
  for (const StreamId s : streams) {
    const auto list = b.g.stream_ops(s);
    for (std::size_t i = 1; i < list.size(); ++i)
      ok = ok && at(list[i - 1]).end <= at(list[i]).start;
  }
  for (OpId op = 0; op < b.g.num_ops(); ++op) {
    // Relative slack for rounding in the rescaled end times.
    ok = ok && (at(op).end - at(op).start) >= b.g.op_duration(op) * (1.0 - 1e-9);
  }
  REQUIRE(ok);
}

TEST_CASE("engine: a cycle is reported, not a hang", "[engine]") {
  Builder b;
  const DeviceId s0 = b.g.add_device("stage0");
  const DeviceId s1 = b.g.add_device("stage1");
  const StreamId c0 = b.g.add_stream(s0, "compute", OpKind::Compute);
  const StreamId c1 = b.g.add_stream(s1, "compute", OpKind::Compute);
  const NameId fwd = b.g.intern_name("fwd");
  const NameId bwd = b.g.intern_name("bwd");

  SECTION("through dependencies across devices") {
    const OpId x = b.g.add_op(c0, 1_ms, fwd);
    const OpId y = b.g.add_op(c1, 1_ms, bwd);
    b.op(c0, 1_ms);  // follows x on its stream: stuck too
    b.g.add_dependency(x, y);
    b.g.add_dependency(y, x);
    // All three ops wait forever; the message names the cycle x -> y -> x.
    REQUIRE_THROWS_AS(simulate(b.g, kNoContention), InternalError);
    REQUIRE_THROWS_WITH(simulate(b.g, kNoContention),
                        Catch::Contains("3 of 3 ops can never start") && Catch::Contains("cycle") &&
                            Catch::Contains("op 0 'fwd' (device 'stage0', stream 'compute') -> "
                                            "op 1 'bwd' (device 'stage1', stream 'compute') -> "
                                            "op 0 'fwd'"));
  }
  SECTION("through stream order") {
    const OpId first = b.g.add_op(c0, 1_ms, fwd);
    const OpId second = b.g.add_op(c0, 1_ms, bwd);
    const OpId free = b.op(c1, 1_ms);
    // `first` waits for `second`, which waits for `first` by stream order.
    b.g.add_dependency(second, first);
    REQUIRE(free == 2);
    REQUIRE_THROWS_WITH(simulate(b.g, kNoContention),
                        Catch::Contains("2 of 3 ops can never start") && Catch::Contains("'fwd'") &&
                            Catch::Contains("'bwd'"));
  }
}

TEST_CASE("engine: contention must be finite and non-negative", "[engine]") {
  Builder b;
  const DeviceId d = b.g.add_device("stage0");
  b.op(b.g.add_stream(d, "compute", OpKind::Compute), 1_ms);
  REQUIRE_THROWS_AS(simulate(b.g, EngineOptions{.comm_compute_contention = -0.1}), InternalError);
  REQUIRE_THROWS_AS(simulate(b.g, EngineOptions{.comm_compute_contention =
                                                    std::numeric_limits<double>::quiet_NaN()}),
                    InternalError);
  REQUIRE_THROWS_AS(simulate(b.g, EngineOptions{.gemm_comm_contention = -1.0}), InternalError);
  REQUIRE_THROWS_AS(
      simulate(b.g, EngineOptions{.gemm_comm_contention = std::numeric_limits<double>::infinity()}),
      InternalError);
}

TEST_CASE("engine: GEMM ops slow by their own contention", "[engine]") {
  const EngineOptions opts{.comm_compute_contention = 0.25, .gemm_comm_contention = 1.0};
  Builder b;
  const DeviceId d0 = b.g.add_device("stage0");
  const StreamId compute = b.g.add_stream(d0, "compute", OpKind::Compute);
  const StreamId tp = b.g.add_stream(d0, "tp", OpKind::Communication);
  SECTION("a GEMM under communication runs at half speed") {
    const OpId g = b.op(compute, 10_ms);
    b.g.set_contention_class(g, ContentionClass::Gemm);
    const OpId m = b.op(tp, 4_ms);
    const Timeline t = simulate(b.g, opts);
    // At 1 / (1 + 1) = 0.5 while m runs, [0, 4]: 2 ms of work, 8 ms left at full speed from
    // 4 ms: ends at 12 ms. The communication is not slowed.
    REQUIRE(end_ms(t, g) == Approx(12.0).epsilon(1e-12));
    REQUIRE(end_ms(t, m) == Approx(4.0).epsilon(1e-12));
  }
  SECTION("a host-bound op is not slowed") {
    // ContentionClass::Host: its time is the host issuing kernels, which NCCL's SMs do not slow.
    // Beside a Default op of the same length on another stream, which is.
    const StreamId other = b.g.add_stream(d0, "compute2", OpKind::Compute);
    const OpId h = b.op(compute, 10_ms);
    b.g.set_contention_class(h, ContentionClass::Host);
    const OpId k = b.op(other, 10_ms);
    b.op(tp, 4_ms);
    const Timeline t = simulate(b.g, opts);
    REQUIRE(end_ms(t, h) == 10.0);
    // k: 4 ms at 1 / 1.25 is 3.2 ms of work, 6.8 ms left at full speed: ends at 10.8 ms.
    REQUIRE(end_ms(t, k) == Approx(10.8).epsilon(1e-12));
  }
  SECTION("a GEMM then another kernel, each at its own rate") {
    const OpId g = b.op(compute, 2_ms);
    b.g.set_contention_class(g, ContentionClass::Gemm);
    const OpId k = b.op(compute, 4_ms);
    const OpId m = b.op(tp, 6_ms);
    const Timeline t = simulate(b.g, opts);
    // g: 2 ms of work at 0.5 takes [0, 4]. k starts at 4 with m running until 6: 2 ms at 0.8
    // is 1.6 ms of work, 2.4 ms left at full speed: ends at 8.4 ms.
    REQUIRE(end_ms(t, g) == Approx(4.0).epsilon(1e-12));
    REQUIRE(end_ms(t, k) == Approx(8.4).epsilon(1e-12));
    REQUIRE(end_ms(t, m) == Approx(6.0).epsilon(1e-12));
  }
  SECTION("unset, GEMMs take the contention of every other kernel") {
    const OpId g = b.op(compute, 10_ms);
    b.g.set_contention_class(g, ContentionClass::Gemm);
    b.op(tp, 4_ms);
    const Timeline t = simulate(b.g, EngineOptions{.comm_compute_contention = 0.25});
    // As "communication over the start of a compute op" above: 10.8 ms.
    REQUIRE(end_ms(t, g) == Approx(10.8).epsilon(1e-12));
  }
  SECTION("only compute ops take a contention class") {
    const OpId m = b.op(tp, 4_ms);
    REQUIRE_THROWS_AS(b.g.set_contention_class(m, ContentionClass::Gemm), InternalError);
    REQUIRE_THROWS_AS(b.g.set_contention_class(m + 1, ContentionClass::Gemm), InternalError);
  }
}
