// What a device was doing over a window of a simulated Timeline: busy, exposed-communication
// and idle (bubble) time. The report turns these into compute_s, communication_s,
// exposed_communication_s and bubble_s (DESIGN.md, "Metrics").
#pragma once

#include <span>

#include "trainsim/engine/graph.hpp"
#include "trainsim/engine/simulator.hpp"
#include "trainsim/units.hpp"

namespace trainsim::engine {

// Activity over a window [from, to). "Runs" means an op's [start, end) interval covers the
// instant; zero-duration ops never run. With W = to - from, up to floating-point rounding:
//   compute_busy + exposed_communication + idle == W
//   communication_busy - exposed_communication == time compute and communication overlap
//   compute_kernel_sum >= compute_busy, communication_kernel_sum >= communication_busy
//     (equal when no two ops of that kind run at once)
struct DeviceActivity {
  // Time at least one compute op runs (union of compute intervals).
  Seconds compute_busy;
  // Time at least one communication op runs (union of communication intervals).
  Seconds communication_busy;
  // Time communication runs and no compute does.
  Seconds exposed_communication;
  // Time nothing runs: pipeline bubble, waiting on another device.
  Seconds idle;
  // Sum over compute ops of their running time inside the window, contention slowdown included
  // (so it exceeds the sum of nominal durations when communication slowed compute).
  Seconds compute_kernel_sum;
  // The part of compute_kernel_sum that contention added to ContentionClass::Gemm ops: each such
  // op's running time inside the window times the share of its whole running time beyond its
  // duration (a proportional split; exact for the whole-iteration windows the report uses).
  Seconds gemm_contention_stretch;
  // Sum over communication ops of their running time inside the window.
  Seconds communication_kernel_sum;
};

// Activity of every stream of `device`. Over the whole run (from zero to timeline.end) the busy
// and idle times are those simulate() summed as it ran (DeviceBusy), equal bit for bit to the
// edge sweep the overload below makes.
// Requires: `timeline` came from simulate(graph, ...); from <= to.
// Throws: InternalError if the timeline does not match the graph or from > to.
// Cost: O(n) over the whole run, for the n ops of the device's streams; a shorter window costs
// O(k * streams + streams * log n) for the k ops that run in it (the ops outside it are found by
// binary search: a stream's starts and ends are in stream order).
[[nodiscard]] DeviceActivity activity(const Graph& graph, const Timeline& timeline, DeviceId device,
                                      SimTime from, SimTime to);

// The same over a chosen set of streams, each counted by its own kind; the streams may belong to
// different devices. Pass a device's compute streams plus its dp stream to get the dp
// communication that compute does not hide.
// Requires and throws: as above, and every stream must exist.
[[nodiscard]] DeviceActivity activity(const Graph& graph, const Timeline& timeline,
                                      std::span<const StreamId> streams, SimTime from, SimTime to);

}  // namespace trainsim::engine
