#include "trainsim/engine/activity.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "trainsim/error.hpp"

namespace trainsim::engine {
namespace {

// A change in the number of running ops of each kind at one instant.
struct Edge {
  SimTime time;
  std::int32_t compute_delta;
  std::int32_t comm_delta;
};

// The ops of stream `s` that may run inside [from, to): from the first whose end is after
// `from` to the last whose start is before `to`. A stream runs its ops one after another, so
// their starts and their ends are both in stream order and two binary searches find the range.
// Every op outside it runs outside the window, so leaving it out changes no sum.
std::span<const OpId> overlapping(const Graph& graph, const Timeline& timeline, StreamId s,
                                  SimTime from, SimTime to) {
  const auto ops = graph.stream_ops(s);
  const auto timing = [&timeline](OpId op) -> const OpTiming& {
    return timeline.ops[static_cast<std::size_t>(op)];
  };
  const auto first = std::partition_point(ops.begin(), ops.end(),
                                          [&](OpId op) { return !(from < timing(op).end); });
  const auto last =
      std::partition_point(first, ops.end(), [&](OpId op) { return timing(op).start < to; });
  return {first, last};
}

// Activity of `streams` in [from, to); `busy`, when given, holds the busy and idle times
// simulate() summed for exactly these streams and window, and the edges are not swept.
DeviceActivity activity_of(const Graph& graph, const Timeline& timeline,
                           std::span<const StreamId> streams, SimTime from, SimTime to,
                           const DeviceBusy* busy) {
  if (timeline.ops.size() != static_cast<std::size_t>(graph.num_ops())) {
    throw InternalError("engine activity: the timeline has " + std::to_string(timeline.ops.size()) +
                        " ops but the graph has " + std::to_string(graph.num_ops()) +
                        "; expected the graph it came from");
  }
  if (from > to) {
    throw InternalError("engine activity: window starts at " + to_string(from.since_start()) +
                        " after it ends at " + to_string(to.since_start()));
  }

  DeviceActivity a;
  // Kernel sums, stream after stream and op after op: the order of the additions fixes the
  // rounding.
  std::size_t num_ops = 0;
  for (const StreamId s : streams) {
    if (s < 0 || s >= graph.num_streams()) {
      throw InternalError("engine activity: no stream " + std::to_string(s));
    }
    const bool compute = graph.stream_kind(s) == OpKind::Compute;
    Seconds& kernel_sum = compute ? a.compute_kernel_sum : a.communication_kernel_sum;
    const auto ops = overlapping(graph, timeline, s, from, to);
    for (const OpId op : ops) {
      const OpTiming& t = timeline.ops[static_cast<std::size_t>(op)];
      const SimTime begin = std::max(t.start, from);
      const SimTime end = std::min(t.end, to);
      if (!(begin < end)) continue;  // outside the window, or zero-duration
      kernel_sum += end - begin;
      if (compute && graph.op_contention_class(op) == ContentionClass::Gemm) {
        const Seconds ran = t.end - t.start;
        const Seconds nominal = graph.op_duration(op);
        if (ran > nominal) {
          a.gemm_contention_stretch += (end - begin) * ((ran - nominal).value() / ran.value());
        }
      }
    }
    num_ops += ops.size();
  }
  if (busy != nullptr) {
    a.compute_busy = busy->compute_busy;
    a.communication_busy = busy->communication_busy;
    a.exposed_communication = busy->exposed_communication;
    a.idle = busy->idle;
    return a;
  }

  // Start and end edges of every op, in time order. A stream runs one op at a time, so its
  // edges are already in time order: merging the runs costs O(n * streams), cheaper than
  // sorting for the handful of streams of a device. The streams are merged last to first, so
  // that the first, usually the compute stream with most of the ops, is merged once. Only the
  // times matter: segments between equal times have zero length, so the order of edges within
  // one instant does not change any sum.
  std::vector<Edge> edges;
  edges.reserve(2 * num_ops);
  for (auto it = streams.rbegin(); it != streams.rend(); ++it) {
    const StreamId s = *it;
    const bool compute = graph.stream_kind(s) == OpKind::Compute;
    const auto stream_begin = static_cast<std::ptrdiff_t>(edges.size());
    for (const OpId op : overlapping(graph, timeline, s, from, to)) {
      const OpTiming& t = timeline.ops[static_cast<std::size_t>(op)];
      const SimTime begin = std::max(t.start, from);
      const SimTime end = std::min(t.end, to);
      if (!(begin < end)) continue;
      edges.push_back(Edge{begin, compute ? 1 : 0, compute ? 0 : 1});
      edges.push_back(Edge{end, compute ? -1 : 0, compute ? 0 : -1});
    }
    std::inplace_merge(edges.begin(), edges.begin() + stream_begin, edges.end(),
                       [](const Edge& x, const Edge& y) { return x.time < y.time; });
  }

  std::int32_t computing = 0;
  std::int32_t communicating = 0;
  SimTime prev = from;
  const auto account = [&](SimTime until) {
    const Seconds span = until - prev;
    if (computing > 0) a.compute_busy += span;
    if (communicating > 0) a.communication_busy += span;
    if (communicating > 0 && computing == 0) a.exposed_communication += span;
    if (communicating == 0 && computing == 0) a.idle += span;
    prev = until;
  };
  for (const Edge& e : edges) {
    account(e.time);
    computing += e.compute_delta;
    communicating += e.comm_delta;
  }
  account(to);
  return a;
}

}  // namespace

DeviceActivity activity(const Graph& graph, const Timeline& timeline,
                        std::span<const StreamId> streams, SimTime from, SimTime to) {
  return activity_of(graph, timeline, streams, from, to, nullptr);
}

DeviceActivity activity(const Graph& graph, const Timeline& timeline, DeviceId device, SimTime from,
                        SimTime to) {
  if (device < 0 || device >= graph.num_devices()) {
    throw InternalError("engine activity: no device " + std::to_string(device));
  }
  // The whole run of a device: simulate() summed its busy times as it ran.
  const auto d = static_cast<std::size_t>(device);
  const bool whole = from == SimTime::zero() && to == timeline.end && d < timeline.devices.size() &&
                     timeline.devices[d].exact;
  return activity_of(graph, timeline, graph.device_streams(device), from, to,
                     whole ? &timeline.devices[d] : nullptr);
}

}  // namespace trainsim::engine
