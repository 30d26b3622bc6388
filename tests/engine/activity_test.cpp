#include "trainsim/engine/activity.hpp"

#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/engine/graph.hpp"
#include "trainsim/engine/simulator.hpp"
#include "trainsim/error.hpp"
#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/report/simulate.hpp"
#include "trainsim/units.hpp"

using namespace trainsim;
using namespace trainsim::literals;
using namespace trainsim::engine;

namespace {

double ms(Seconds s) { return s / 1_ms; }
SimTime at(Seconds t) { return SimTime::at(t); }

// One device:
//   compute: c1 [0, 4], c2 [8, 10] (c2 waits for m1)
//   tp:      m0 [0, 2], m1 [4, 8]  (m1 waits for c1)
// Window [0, 12] by default: the last 2 ms are idle.
struct Fixture {
  Graph g;
  DeviceId d = g.add_device("stage0");
  StreamId compute = g.add_stream(d, "compute", OpKind::Compute);
  StreamId tp = g.add_stream(d, "tp", OpKind::Communication);
  NameId name = g.intern_name("op");
  OpId c1 = g.add_op(compute, 4_ms, name);
  OpId c2 = g.add_op(compute, 2_ms, name);
  OpId m0 = g.add_op(tp, 2_ms, name);
  OpId m1 = g.add_op(tp, 4_ms, name);
  Fixture() {
    g.add_dependency(c1, m1);
    g.add_dependency(m1, c2);
  }
};

}  // namespace

TEST_CASE("engine: activity splits a window into busy, exposed and idle time", "[engine]") {
  const Fixture f;
  const Timeline t = simulate(f.g, EngineOptions{});
  REQUIRE(ms(t.end.since_start()) == Approx(10.0).epsilon(1e-12));

  SECTION("whole iteration plus a trailing gap") {
    const DeviceActivity a = activity(f.g, t, f.d, SimTime::zero(), at(12_ms));
    // compute runs [0, 4] and [8, 10]: 6 ms. tp runs [0, 2] and [4, 8]: 6 ms.
    // Exposed: tp without compute, [4, 8]: 4 ms. Idle: [10, 12]: 2 ms.
    REQUIRE(ms(a.compute_busy) == Approx(6.0).epsilon(1e-12));
    REQUIRE(ms(a.communication_busy) == Approx(6.0).epsilon(1e-12));
    REQUIRE(ms(a.exposed_communication) == Approx(4.0).epsilon(1e-12));
    REQUIRE(ms(a.idle) == Approx(2.0).epsilon(1e-12));
    // compute + exposed + idle = 6 + 4 + 2 = 12 = the window.
    REQUIRE(ms(a.compute_busy + a.exposed_communication + a.idle) == Approx(12.0).epsilon(1e-12));
    // Hidden communication = busy - exposed = 2 ms, the overlap of m0 with c1.
    REQUIRE(ms(a.communication_busy - a.exposed_communication) == Approx(2.0).epsilon(1e-12));
    // One op at a time per kind, so kernel sums equal busy times: 4 + 2 and 2 + 4.
    REQUIRE(ms(a.compute_kernel_sum) == Approx(6.0).epsilon(1e-12));
    REQUIRE(ms(a.communication_kernel_sum) == Approx(6.0).epsilon(1e-12));
  }
  SECTION("a window cuts ops at its edges") {
    const DeviceActivity a = activity(f.g, t, f.d, at(3_ms), at(9_ms));
    // Inside [3, 9]: compute [3, 4] and [8, 9] = 2 ms; tp [4, 8] = 4 ms, all exposed;
    // nothing idle. 2 + 4 + 0 = 6 = the window.
    REQUIRE(ms(a.compute_busy) == Approx(2.0).epsilon(1e-12));
    REQUIRE(ms(a.communication_busy) == Approx(4.0).epsilon(1e-12));
    REQUIRE(ms(a.exposed_communication) == Approx(4.0).epsilon(1e-12));
    REQUIRE(ms(a.idle) == Approx(0.0).margin(1e-12));
    REQUIRE(ms(a.compute_kernel_sum) == Approx(2.0).epsilon(1e-12));
  }
  SECTION("an empty window") {
    const DeviceActivity a = activity(f.g, t, f.d, at(5_ms), at(5_ms));
    REQUIRE(ms(a.compute_busy + a.communication_busy + a.idle) == Approx(0.0).margin(1e-12));
  }
  SECTION("a subset of streams") {
    const std::vector<StreamId> only_tp{f.tp};
    const DeviceActivity a = activity(f.g, t, only_tp, SimTime::zero(), at(10_ms));
    // Without the compute stream all 6 ms of tp count as exposed, and the other 4 ms as idle.
    REQUIRE(ms(a.compute_busy) == Approx(0.0).margin(1e-12));
    REQUIRE(ms(a.exposed_communication) == Approx(6.0).epsilon(1e-12));
    REQUIRE(ms(a.idle) == Approx(4.0).epsilon(1e-12));
  }
}

TEST_CASE("engine: activity counts overlapping ops once in busy time", "[engine]") {
  Graph g;
  const DeviceId d = g.add_device("stage0");
  const StreamId c1 = g.add_stream(d, "compute", OpKind::Compute);
  const StreamId c2 = g.add_stream(d, "compute2", OpKind::Compute);
  const StreamId tp = g.add_stream(d, "tp", OpKind::Communication);
  const StreamId dp = g.add_stream(d, "dp", OpKind::Communication);
  const NameId n = g.intern_name("op");
  g.add_op(c1, 4_ms, n);
  g.add_op(c2, 2_ms, n);
  g.add_op(tp, 6_ms, n);
  g.add_op(dp, 3_ms, n);
  const Timeline t = simulate(g, EngineOptions{});
  const DeviceActivity a = activity(g, t, d, SimTime::zero(), at(6_ms));
  // Compute [0, 4] and [0, 2]: union 4 ms, kernel sum 6 ms. Communication [0, 6] and [0, 3]:
  // union 6 ms, kernel sum 9 ms. Exposed [4, 6] = 2 ms; idle 0; 4 + 2 + 0 = 6 = the window.
  REQUIRE(ms(a.compute_busy) == Approx(4.0).epsilon(1e-12));
  REQUIRE(ms(a.compute_kernel_sum) == Approx(6.0).epsilon(1e-12));
  REQUIRE(ms(a.communication_busy) == Approx(6.0).epsilon(1e-12));
  REQUIRE(ms(a.communication_kernel_sum) == Approx(9.0).epsilon(1e-12));
  REQUIRE(ms(a.exposed_communication) == Approx(2.0).epsilon(1e-12));
  REQUIRE(ms(a.idle) == Approx(0.0).margin(1e-12));
}

TEST_CASE("engine: activity shows the pipeline bubble on each stage", "[engine]") {
  // Two stages, one micro-batch: forward f0 (3 ms) on stage0, send to stage1 (1 ms), f1 (3 ms)
  // and b1 (6 ms) on stage1, send back (1 ms), b0 (6 ms) on stage0.
  //   f0 [0, 3], p01 [3, 4], f1 [4, 7], b1 [7, 13], p10 [13, 14], b0 [14, 20].
  Graph g;
  const NameId n = g.intern_name("op");
  const DeviceId s0 = g.add_device("stage0");
  const DeviceId s1 = g.add_device("stage1");
  const StreamId c0 = g.add_stream(s0, "compute", OpKind::Compute);
  const StreamId pp0 = g.add_stream(s0, "pp", OpKind::Communication);
  const StreamId c1 = g.add_stream(s1, "compute", OpKind::Compute);
  const StreamId pp1 = g.add_stream(s1, "pp", OpKind::Communication);
  const OpId f0 = g.add_op(c0, 3_ms, n);
  const OpId p01 = g.add_op(pp0, 1_ms, n);
  const OpId f1 = g.add_op(c1, 3_ms, n);
  const OpId b1 = g.add_op(c1, 6_ms, n);
  const OpId p10 = g.add_op(pp1, 1_ms, n);
  const OpId b0 = g.add_op(c0, 6_ms, n);
  g.add_dependency(f0, p01);
  g.add_dependency(p01, f1);
  g.add_dependency(b1, p10);
  g.add_dependency(p10, b0);
  const Timeline t = simulate(g, EngineOptions{});
  REQUIRE(ms(t.end.since_start()) == Approx(20.0).epsilon(1e-12));

  const DeviceActivity a0 = activity(g, t, s0, SimTime::zero(), t.end);
  // stage0: compute 3 + 6 = 9 ms; its send [3, 4] is exposed (1 ms); idle [4, 14] = 10 ms.
  // 9 + 1 + 10 = 20.
  REQUIRE(ms(a0.compute_busy) == Approx(9.0).epsilon(1e-12));
  REQUIRE(ms(a0.exposed_communication) == Approx(1.0).epsilon(1e-12));
  REQUIRE(ms(a0.idle) == Approx(10.0).epsilon(1e-12));
  const DeviceActivity a1 = activity(g, t, s1, SimTime::zero(), t.end);
  // stage1: idle [0, 4] and [14, 20] = 10 ms; compute [4, 13] = 9 ms; send [13, 14] exposed.
  REQUIRE(ms(a1.compute_busy) == Approx(9.0).epsilon(1e-12));
  REQUIRE(ms(a1.exposed_communication) == Approx(1.0).epsilon(1e-12));
  REQUIRE(ms(a1.idle) == Approx(10.0).epsilon(1e-12));
}

TEST_CASE("engine: activity counts contention slowdown as kernel time", "[engine]") {
  Graph g;
  const DeviceId d = g.add_device("stage0");
  const StreamId c = g.add_stream(d, "compute", OpKind::Compute);
  const StreamId tp = g.add_stream(d, "tp", OpKind::Communication);
  const NameId n = g.intern_name("op");
  g.add_op(c, 10_ms, n);
  g.add_op(tp, 4_ms, n);
  const Timeline t = simulate(g, EngineOptions{.comm_compute_contention = 0.25});
  const DeviceActivity a = activity(g, t, d, SimTime::zero(), t.end);
  // The compute op ends at 10.8 ms (simulator_test derives it): its kernel time is 10.8 ms,
  // 0.8 ms more than its nominal 10 ms. Communication [0, 4] is fully hidden.
  REQUIRE(ms(a.compute_kernel_sum) == Approx(10.8).epsilon(1e-12));
  REQUIRE(ms(a.compute_busy) == Approx(10.8).epsilon(1e-12));
  REQUIRE(ms(a.exposed_communication) == Approx(0.0).margin(1e-12));
  // A Default-class op: its slowdown is not GEMM contention stretch.
  REQUIRE(ms(a.gemm_contention_stretch) == Approx(0.0).margin(1e-12));
}

TEST_CASE("engine: activity separates the stretch GEMM contention adds", "[engine]") {
  Graph g;
  const DeviceId d = g.add_device("stage0");
  const StreamId c = g.add_stream(d, "compute", OpKind::Compute);
  const StreamId tp = g.add_stream(d, "tp", OpKind::Communication);
  const NameId n = g.intern_name("op");
  g.set_contention_class(g.add_op(c, 10_ms, n), ContentionClass::Gemm);
  g.add_op(tp, 4_ms, n);
  const Timeline t = simulate(g, EngineOptions{.gemm_comm_contention = 1.0});
  // The GEMM runs at half speed over [0, 4] (2 ms of work) and ends at 12 ms (simulator_test):
  // 2 ms of its 12 are stretch.
  const DeviceActivity a = activity(g, t, d, SimTime::zero(), t.end);
  REQUIRE(ms(a.compute_kernel_sum) == Approx(12.0).epsilon(1e-12));
  REQUIRE(ms(a.gemm_contention_stretch) == Approx(2.0).epsilon(1e-12));
  // A window of half the run takes half of it (the proportional split).
  const DeviceActivity half = activity(g, t, d, SimTime::zero(), SimTime::zero() + 6_ms);
  REQUIRE(ms(half.gemm_contention_stretch) == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("report: time contention adds to compute is billed at communication watts",
          "[report][power]") {
  hardware::PowerSpec p;
  p.idle = Watts(100.0);
  p.compute = Watts(700.0);
  p.communication = Watts(400.0);
  p.tdp = Watts(700.0);
  // 10.8 ms busy of which 0.8 ms contention: (10 * 700 + 0.8 * 400) / 10.8 = 677.8 W.
  CHECK(report::average_power(p, 10.8_ms, Seconds(0.0), Seconds(0.0), 0.8_ms).value() ==
        Approx((10.0 * 700.0 + 0.8 * 400.0) / 10.8).epsilon(1e-12));
  // Without it, all busy time at compute watts.
  CHECK(report::average_power(p, 10.8_ms, Seconds(0.0), Seconds(0.0)).value() ==
        Approx(700.0).epsilon(1e-12));
}

TEST_CASE("engine: activity rejects a bad window or a foreign timeline", "[engine]") {
  const Fixture f;
  const Timeline t = simulate(f.g, EngineOptions{});
  REQUIRE_THROWS_AS(activity(f.g, t, f.d, at(5_ms), at(4_ms)), InternalError);
  REQUIRE_THROWS_AS(activity(f.g, Timeline{}, f.d, SimTime::zero(), at(4_ms)), InternalError);
  REQUIRE_THROWS_AS(activity(f.g, t, 3, SimTime::zero(), at(4_ms)), InternalError);
  const std::vector<StreamId> bad{9};
  REQUIRE_THROWS_AS(activity(f.g, t, bad, SimTime::zero(), at(4_ms)), InternalError);
}
