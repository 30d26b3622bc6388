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
// (top(), size(), empty()) is safe; any push() or pop() needs external synchronization.
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
// Cost: push() and pop() are O(log n) on a binary heap in one contiguous vector.
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
    heap_.push_back(Event{time, seq, payload});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
    return seq;
  }

  // The earliest event (invariant 2). Requires: !empty().
  [[nodiscard]] const Event& top() const {
    assert(!heap_.empty());
    return heap_.front();
  }

  // Removes and returns the earliest event. Requires: !empty().
  Event pop() {
    assert(!heap_.empty());
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Event e = heap_.back();
    heap_.pop_back();
    return e;
  }

  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::size_t size() const { return heap_.size(); }

  // Drops every queued event; sequence numbers keep increasing (invariant 1).
  void clear() { heap_.clear(); }

 private:
  // std::*_heap build a max-heap, so "greater" puts the smallest (time, seq) at the front.
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      return a.seq > b.seq;
    }
  };

  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace trainsim::engine
