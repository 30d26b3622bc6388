#include "trainsim/engine/event_queue.hpp"

#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "trainsim/units.hpp"

using namespace trainsim;
using namespace trainsim::literals;
using trainsim::engine::EventQueue;

namespace {
SimTime at(Seconds t) { return SimTime::at(t); }
}  // namespace

TEST_CASE("engine: event queue pops the earliest event first", "[engine]") {
  EventQueue<int> q;
  q.push(at(3_ms), 3);
  q.push(at(1_ms), 1);
  q.push(at(2_ms), 2);
  REQUIRE(q.size() == 3);
  REQUIRE(q.top().payload == 1);
  std::vector<int> order;
  while (!q.empty()) order.push_back(q.pop().payload);
  REQUIRE(order == std::vector<int>{1, 2, 3});
}

TEST_CASE("engine: event queue orders equal times by insertion", "[engine]") {
  // Invariant 2: among events at one time, the one pushed first comes out first, whatever the
  // payload values and whatever events at other times are interleaved with them.
  EventQueue<int> q;
  const std::vector<int> pushed{50, 10, 40, 20, 30};
  for (const int p : pushed) {
    q.push(at(5_ms), p);
    q.push(at(9_ms), -p);
  }
  std::vector<int> first_five;
  first_five.reserve(5);
  for (int i = 0; i < 5; ++i) first_five.push_back(q.pop().payload);
  REQUIRE(first_five == pushed);
  REQUIRE(q.pop().payload == -50);
}

TEST_CASE("engine: event queue orders times by value across signs, zeros and magnitudes",
          "[engine]") {
  // The heap compares each time as an integer (event_queue.hpp, Cost): the IEEE 754 bits with
  // the sign bit flipped, every bit for negative times. The order must be the doubles' own:
  // negatives before zero, larger negatives first, subnormals between zero and the normals,
  // -0 equal to +0 (so the two tie and come out in insertion order), and pop() must give back
  // the time it was given (equal as a double: -0 comes back as +0).
  EventQueue<int> q;
  const std::vector<double> times{1.0,   -0.0,   -1e-300, 5e-324, 0.0,    -2.0,
                                  1e300, 2.5e-3, -1.0,    1e-310, 2.5e-3, 0.5};
  for (std::size_t i = 0; i < times.size(); ++i) {
    q.push(at(Seconds(times[i])), static_cast<int>(i));
  }
  // Sorted by value, ties (-0 and 0 at pushes 1 and 4; 2.5e-3 at 7 and 10) by insertion.
  const std::vector<int> expected{5, 8, 2, 1, 4, 3, 9, 7, 10, 11, 0, 6};
  std::vector<int> order;
  while (!q.empty()) {
    const auto e = q.pop();
    const double t = (e.time - SimTime::zero()).value();
    // The time comes back as pushed (-0 as +0, which it equals).
    REQUIRE(t == times[static_cast<std::size_t>(e.payload)]);
    order.push_back(e.payload);
  }
  REQUIRE(order == expected);
}

TEST_CASE("engine: event queue sequence numbers never repeat", "[engine]") {
  // Invariant 1: seqs strictly increase, across clear() too.
  EventQueue<int> q;
  const std::uint64_t a = q.push(at(1_ms), 0);
  const std::uint64_t b = q.push(at(0_ms), 0);
  q.clear();
  REQUIRE(q.empty());
  const std::uint64_t c = q.push(at(0_ms), 0);
  REQUIRE(a < b);
  REQUIRE(b < c);
  REQUIRE(q.pop().seq == c);
}

TEST_CASE("engine: event queue matches a sorted reference under interleaved pushes and pops",
          "[engine]") {
  // pop() leaves its event in the root until the next push() or pop() (event_queue.hpp, Cost),
  // so interleave the two the way the simulator does: pop one, push zero to three. Times come
  // from 8 values, so most events tie with others and the (time, seq) order decides. The
  // reference is a std::set of (time, seq): what pop() must return is its first element.
  EventQueue<int> q;
  std::set<std::pair<double, std::uint64_t>> reference;
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> slot(0, 7);
  std::uniform_int_distribution<int> pushes(0, 3);
  const auto push = [&](int payload) {
    const double t = 1e-3 * slot(rng);
    const std::uint64_t seq = q.push(at(Seconds(t)), payload);
    reference.emplace(t, seq);
  };
  for (int i = 0; i < 16; ++i) push(i);
  int payload = 16;
  std::int64_t popped = 0;
  while (!q.empty()) {
    REQUIRE(q.size() == reference.size());
    const auto e = q.pop();
    REQUIRE(std::pair{(e.time - SimTime::zero()).value(), e.seq} == *reference.begin());
    reference.erase(reference.begin());
    REQUIRE(q.size() == reference.size());
    ++popped;
    if (payload < 4000) {
      for (int k = pushes(rng); k > 0; --k) push(payload++);
    }
  }
  REQUIRE(reference.empty());
  REQUIRE(popped == payload);
}
