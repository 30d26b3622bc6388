#include "trainsim/engine/graph.hpp"

#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/error.hpp"
#include "trainsim/units.hpp"

using namespace trainsim;
using namespace trainsim::literals;
using namespace trainsim::engine;

TEST_CASE("engine: graph assigns dense ids in creation order", "[engine]") {
  Graph g;
  g.reserve(4, 1);
  const DeviceId d0 = g.add_device("stage0");
  const DeviceId d1 = g.add_device("stage1");
  const StreamId c0 = g.add_stream(d0, "compute", OpKind::Compute);
  const StreamId c1 = g.add_stream(d1, "compute", OpKind::Compute);
  const StreamId tp0 = g.add_stream(d0, "tp", OpKind::Communication);
  const NameId fwd = g.intern_name("fwd");
  const NameId ar = g.intern_name("all_reduce");
  const OpId a = g.add_op(c0, 1_ms, fwd, 7);
  const OpId b = g.add_op(tp0, 2_ms, ar);
  // A GEMM gets its contention class as it is added, or later from set_contention_class.
  const OpId c = g.add_op(c0, 3_ms, fwd, -1, ContentionClass::Gemm);
  const OpId d = g.add_op(c1, 4_ms, fwd);
  g.set_contention_class(d, ContentionClass::Gemm);
  g.add_dependency(a, b);

  REQUIRE(std::vector<DeviceId>{d0, d1} == std::vector<DeviceId>{0, 1});
  REQUIRE(std::vector<StreamId>{c0, c1, tp0} == std::vector<StreamId>{0, 1, 2});
  REQUIRE(std::vector<OpId>{a, b, c, d} == std::vector<OpId>{0, 1, 2, 3});
  REQUIRE(g.num_devices() == 2);
  REQUIRE(g.num_streams() == 3);
  REQUIRE(g.num_ops() == 4);
  REQUIRE(g.num_dependencies() == 1);
  REQUIRE(g.device_name(d1) == "stage1");
  const auto streams0 = g.device_streams(d0);
  REQUIRE(std::vector<StreamId>(streams0.begin(), streams0.end()) ==
          std::vector<StreamId>{c0, tp0});
  const auto ops0 = g.stream_ops(c0);
  REQUIRE(std::vector<OpId>(ops0.begin(), ops0.end()) == std::vector<OpId>{a, c});
  REQUIRE(g.stream_device(tp0) == d0);
  REQUIRE(g.stream_name(tp0) == "tp");
  REQUIRE(g.stream_kind(tp0) == OpKind::Communication);
  REQUIRE(g.op_kind(b) == OpKind::Communication);
  REQUIRE(g.op_device(d) == d1);
  REQUIRE(g.op_duration(c) == 3_ms);
  REQUIRE(g.op_name(b) == "all_reduce");
  REQUIRE(g.op_tag(a) == 7);
  REQUIRE(g.op_tag(b) == -1);
  REQUIRE(g.op_contention_class(a) == ContentionClass::Default);
  REQUIRE(g.op_contention_class(c) == ContentionClass::Gemm);
  REQUIRE(g.op_contention_class(d) == ContentionClass::Gemm);
  REQUIRE(g.dependencies()[0].before == a);
  REQUIRE(g.dependencies()[0].after == b);
}

TEST_CASE("engine: graph interns each name once", "[engine]") {
  Graph g;
  const NameId x = g.intern_name("layer0.qkv");
  const NameId y = g.intern_name("layer0.mlp");
  REQUIRE(g.intern_name("layer0.qkv") == x);
  REQUIRE(x == 0);
  REQUIRE(y == 1);
  REQUIRE(g.num_names() == 2);
  REQUIRE(g.name(y) == "layer0.mlp");
}

TEST_CASE("engine: graph rejects malformed construction", "[engine]") {
  Graph g;
  const DeviceId d = g.add_device("stage0");
  const StreamId s = g.add_stream(d, "compute", OpKind::Compute);
  const NameId n = g.intern_name("op");
  const OpId a = g.add_op(s, 1_ms, n);

  SECTION("unknown device") {
    REQUIRE_THROWS_AS(g.add_stream(5, "x", OpKind::Compute), InternalError);
  }
  SECTION("unknown stream") { REQUIRE_THROWS_AS(g.add_op(-1, 1_ms, n), InternalError); }
  SECTION("unknown name") { REQUIRE_THROWS_AS(g.add_op(s, 1_ms, 9), InternalError); }
  SECTION("negative duration") {
    REQUIRE_THROWS_AS(g.add_op(s, -1_ms, n), InternalError);
    REQUIRE_THROWS_WITH(g.add_op(s, -1_ms, n),
                        Catch::Contains("'op'") && Catch::Contains("expected a finite value >= 0"));
  }
  SECTION("NaN and infinite durations") {
    REQUIRE_THROWS_AS(g.add_op(s, Seconds(std::numeric_limits<double>::quiet_NaN()), n),
                      InternalError);
    REQUIRE_THROWS_AS(g.add_op(s, Seconds(std::numeric_limits<double>::infinity()), n),
                      InternalError);
  }
  SECTION("a contention class on a communication stream") {
    const StreamId comm = g.add_stream(d, "tp", OpKind::Communication);
    REQUIRE_THROWS_WITH(g.add_op(comm, 1_ms, n, -1, ContentionClass::Gemm),
                        Catch::Contains("'op'") && Catch::Contains("not a compute stream"));
  }
  SECTION("unknown op in a dependency") {
    REQUIRE_THROWS_AS(g.add_dependency(a, 3), InternalError);
    REQUIRE_THROWS_WITH(g.add_dependency(a, 3), Catch::Contains("no op 3"));
  }
  SECTION("self dependency") {
    REQUIRE_THROWS_WITH(g.add_dependency(a, a), Catch::Contains("depends on itself"));
  }
  // A rejected call leaves the graph as it was.
  REQUIRE(g.num_ops() == 1);
  REQUIRE(g.num_dependencies() == 0);
}
