// The future-event list of the discrete-event engine: events ordered by simulated time, ties
// broken by insertion order so that a simulation is reproducible bit for bit. The simulator
// (engine/simulator.hpp) keeps one of these; nothing else in trainsim needs it.
#pragma once

#include <algorithm>
#include <cassert>
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
// same sequence: the layout of the heap never shows in the order.
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
    const Event e{time, seq, payload};
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
  [[nodiscard]] const Event& top() {
    settle();
    assert(!heap_.empty());
    return heap_.front();
  }

  // Removes and returns the earliest event. Requires: !empty().
  Event pop() {
    settle();
    assert(!heap_.empty());
    root_taken_ = true;
    return heap_.front();
  }

  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] std::size_t size() const { return heap_.size() - (root_taken_ ? 1 : 0); }

  // Drops every queued event; sequence numbers keep increasing (invariant 1).
  void clear() {
    heap_.clear();
    root_taken_ = false;
  }

 private:
  static constexpr std::size_t kArity = 2;

  static bool earlier(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }

  // Removes a root taken by pop(): the last event fills its place.
  void settle() {
    if (!root_taken_) return;
    root_taken_ = false;
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
  }

  // Places `e` at the root's hole and moves it down past every earlier child.
  void sift_down(const Event& e) {
    const std::size_t n = heap_.size();
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = kArity * hole + 1;
      if (first >= n) break;
      const std::size_t end = std::min(first + kArity, n);
      std::size_t best = first;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (earlier(heap_[c], heap_[best])) best = c;
      }
      if (!earlier(heap_[best], e)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = e;
  }

  // Moves `e`, whose hole is at `hole`, up past every later parent.
  void sift_up(std::size_t hole, const Event& e) {
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / kArity;
      if (!earlier(e, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = e;
  }

  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
  // pop() has returned heap_.front(), which is still stored there (see Cost).
  bool root_taken_ = false;
};

}  // namespace trainsim::engine
