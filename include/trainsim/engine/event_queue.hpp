// The future-event list of the discrete-event engine: events ordered by simulated time, ties
// broken by insertion order so that a simulation is reproducible bit for bit. The simulator
// (engine/simulator.hpp) keeps one of these; nothing else in trainsim needs it.
#pragma once

#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "trainsim/units.hpp"

namespace trainsim::engine {

// A min-priority queue of (time, payload) events.
//
// Thread safety
// -------------
// None: an EventQueue is a plain value owned by one simulation. Concurrent const access
// (size(), empty()) is safe; top(), push() and pop() need external synchronization.
// Separate simulations on separate threads each own their queue and share nothing.
//
// Invariants
// ----------
// (1) Every queued event carries the sequence number it was given by push(), and sequence
//     numbers strictly increase over the life of the queue (clear() does not reset them), so no
//     two events, queued or past, share one.
// (2) top() is the event with the smallest (time, seq) pair: the earliest event, and among
//     events at the same time the one pushed first (FIFO). Equal timestamps are therefore
//     ordered by insertion, never by payload or by memory address (house style B.9).
// (3) The queue never reorders or inspects payloads; a payload is copied in on push() and out
//     on pop(). Payload must be trivially copyable, so a push never allocates beyond the
//     vector's amortized growth (reserve() removes even that).
// (4) The queue does not know about cancellation. A caller that reschedules an event pushes a
//     new one and recognises the old one as stale when it is popped (lazy invalidation); the
//     engine does this with a per-op version counter in the payload.
// (5) Time may be pushed in any order, including before the last popped time; the queue does
//     not enforce causality, the simulator does.
//
// Cost: push() and pop() are O(log n) on a binary heap in one contiguous vector. pop() leaves
// the root in place and marks it taken; the next push() puts its event there and sifts it down
// once, so the simulator's usual step (an op ends, the next op on its stream starts) costs one
// sift instead of two. Since no two events share a (time, seq) key, any correct heap pops the
// same sequence: the layout of the heap never shows in the order. The heap compares integers,
// not doubles: each event's time is stored as the unsigned integer whose order is the time's
// (its IEEE 754 bits, the sign bit flipped for times >= 0 and every bit for negative ones;
// -0 is stored as +0, which it equals), and (time, seq) as one 128-bit unsigned key, so a
// comparison is one subtract-with-borrow instead of two floating-point tests with their
// branches. Requires: no time is NaN (an assert checks it in debug builds; the engine pushes
// only sums of finite, checked durations).
template <class Payload>
class EventQueue {
  static_assert(std::is_trivially_copyable_v<Payload>,
                "EventQueue payloads are copied by value and must be trivially copyable");

 public:
  struct Event {
    SimTime time;
    std::uint64_t seq = 0;
    Payload payload;
  };

  EventQueue() = default;

  // Pre-sizes the heap for `capacity` simultaneously queued events.
  void reserve(std::size_t capacity) { heap_.reserve(capacity); }

  // Queues `payload` at `time` and returns its sequence number (invariant 1).
  std::uint64_t push(SimTime time, Payload payload) {
    const std::uint64_t seq = next_seq_++;
    const Node e{time_key(time), seq, payload};
    if (root_taken_) {
      root_taken_ = false;
      sift_down(e);
    } else {
      heap_.push_back(e);
      sift_up(heap_.size() - 1, e);
    }
    return seq;
  }

  // The earliest event (invariant 2). Requires: !empty().
  [[nodiscard]] Event top() {
    settle();
    assert(!heap_.empty());
    return event(heap_.front());
  }

  // Removes and returns the earliest event. Requires: !empty().
  Event pop() {
    settle();
    assert(!heap_.empty());
    root_taken_ = true;
    return event(heap_.front());
  }

  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] std::size_t size() const { return heap_.size() - (root_taken_ ? 1 : 0); }

  // Drops every queued event; sequence numbers keep increasing (invariant 1).
  void clear() {
    heap_.clear();
    root_taken_ = false;
  }

 private:
  // An event as the heap stores it: its time as an order-preserving integer (Cost).
  struct Node {
    std::uint64_t time;
    std::uint64_t seq;
    Payload payload;
  };

  static constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;

  static std::uint64_t time_key(SimTime time) {
    const double t = (time - SimTime::zero()).value() + 0.0;  // -0 + 0 is +0
    assert(!std::isnan(t));
    const auto bits = std::bit_cast<std::uint64_t>(t);
    return (bits & kSignBit) != 0 ? ~bits : bits | kSignBit;
  }

  static SimTime time_of(std::uint64_t key) {
    const std::uint64_t bits = (key & kSignBit) != 0 ? key & ~kSignBit : ~key;
    return SimTime::at(Seconds(std::bit_cast<double>(bits)));
  }

  static Event event(const Node& n) { return Event{time_of(n.time), n.seq, n.payload}; }

  static bool earlier(const Node& a, const Node& b) {
    __extension__ using Key = unsigned __int128;
    return ((Key{a.time} << 64) | a.seq) < ((Key{b.time} << 64) | b.seq);
  }

  // Removes a root taken by pop(): the last event fills its place.
  void settle() {
    if (!root_taken_) return;
    root_taken_ = false;
    const Node last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
  }

  // Places `e` at the root's hole and moves it down past every earlier child.
  void sift_down(const Node& e) {
    const std::size_t n = heap_.size();
    std::size_t hole = 0;
    for (;;) {
      std::size_t best = 2 * hole + 1;
      if (best >= n) break;
      if (best + 1 < n && earlier(heap_[best + 1], heap_[best])) ++best;
      if (!earlier(heap_[best], e)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = e;
  }

  // Moves `e`, whose hole is at `hole`, up past every later parent.
  void sift_up(std::size_t hole, const Node& e) {
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / 2;
      if (!earlier(e, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = e;
  }

  std::vector<Node> heap_;
  std::uint64_t next_seq_ = 0;
  // pop() has returned heap_.front(), which is still stored there (see Cost).
  bool root_taken_ = false;
};

}  // namespace trainsim::engine
