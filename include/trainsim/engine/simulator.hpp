// The discrete-event simulator: runs a Graph (engine/graph.hpp) of ops on in-order streams and
// returns when every op started and ended. Its Timeline feeds engine/activity.hpp and the
// report (metrics, power) and trace writers downstream.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "trainsim/engine/graph.hpp"
#include "trainsim/units.hpp"

namespace trainsim::engine {

struct EngineOptions {
  // While at least one communication op with a non-zero duration runs on a device, every compute
  // op on that device but those of ContentionClass::Host progresses at
  // 1 / (1 + comm_compute_contention) of full speed: NCCL
  // kernels take SMs and HBM bandwidth from concurrent compute. The slowdown does not grow with
  // the number of concurrent communication ops, and communication ops are never slowed.
  // Default 0: overlap is free. Requires: finite and >= 0.
  double comm_compute_contention = 0.0;
  // The same for compute ops of ContentionClass::Gemm; unset, comm_compute_contention.
  // Requires: finite and >= 0 when set.
  std::optional<double> gemm_comm_contention = std::nullopt;
};

// When one op ran: [start, end). end - start equals the op's duration unless communication on
// its device slowed it (compute ops only).
struct OpTiming {
  SimTime start;
  SimTime end;
};

// Busy and idle time of one device over [0, Timeline::end), summed by simulate() as it runs:
// the figures engine::activity reports for that window, from the same segments between op
// boundaries added in the same (time) order, so they are equal bit for bit. `exact` is false
// when an op of non-zero duration ended where it started (a duration below the clock's
// resolution): activity skips such an op and the running sums did not, so activity then sums
// the device's edges itself.
struct DeviceBusy {
  Seconds compute_busy;
  Seconds communication_busy;
  Seconds exposed_communication;
  Seconds idle;
  bool exact = true;
};

// The result of simulate(): the timing of every op, indexed by OpId, and the makespan.
struct Timeline {
  CachedVector<OpTiming> ops;  // by OpId
  // Indexed by DeviceId.
  std::vector<DeviceBusy> devices;
  // The latest end of any op; SimTime::zero() for an empty graph.
  SimTime end;
  // Events popped from the queue, stale ones included (a cost figure for benchmarks).
  std::int64_t num_events = 0;
};

// Simulates `graph` from time zero. An op starts at the first instant at which (a) the previous
// op on its stream has ended and (b) every op it depends on has ended; it then runs for its
// duration, stretched by contention (EngineOptions) while communication runs beside it on its
// device. Ties are broken by (time, insertion order), so equal inputs give identical outputs.
// Cost: O((ops + dependencies) log ops) time, O(ops + dependencies) memory.
// Throws: InternalError if some ops can never start (a cycle through dependencies and stream
// order); the message names the ops of one such cycle. InternalError for a negative or
// non-finite contention.
[[nodiscard]] Timeline simulate(const Graph& graph, const EngineOptions& options);

}  // namespace trainsim::engine
