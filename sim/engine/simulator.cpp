#include "trainsim/engine/simulator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/engine/event_queue.hpp"
#include "trainsim/error.hpp"

namespace trainsim::engine {
namespace {

std::size_t idx(std::int32_t i) { return static_cast<std::size_t>(i); }

// The end of an op's run. `version` is the op's reschedule count when the event was pushed; a
// contention change bumps the op's count and pushes a fresh event, so the old one is recognised
// as stale when popped (event_queue.hpp, invariant 4).
struct EndEvent {
  OpId op;
  std::uint32_t version;
};

// Compressed sparse rows: the successors of op i are targets[offsets[i] .. offsets[i + 1]).
struct Adjacency {
  CachedVector<std::int32_t> offsets;
  CachedVector<OpId> targets;
};

// What the event loop keeps of one op, in one 16-byte record: with the graph's own record of the
// op (duration, stream, contention class), an op that ends and each op it starts cost two cache
// lines, where five arrays (the graph's op table, the successor rows, the next op on the stream,
// the pending counts and the versions) cost five.
struct Node {
  // Predecessors (dependencies and the previous op on the stream) not yet ended.
  std::int32_t pending = 0;
  // The next op on the stream, -1 for the last.
  OpId next_on_stream = -1;
  // The op's dependency targets are Successors::targets[first_target .. the next node's).
  std::int32_t first_target = 0;
  // Reschedule count (EndEvent).
  std::uint32_t version = 0;
};
static_assert(sizeof(Node) == 16);

// The successors of every op, by kind: its dependency targets in insertion order (compressed
// rows; a graph has far fewer dependencies than ops) and the next op on its stream (-1 for the
// last). Stream order is an ordinary edge for `pending`, each op's predecessors of both kinds, so
// one counter per op covers both start conditions. An op's successors are its dependency
// targets, then its stream's next op (for_each_successor); that order fixes the order of their
// start events at one instant. Built by counting sort: O(ops + dependencies), no per-op
// allocation. nodes holds one record more than the graph has ops, whose first_target ends the
// last op's row.
struct Successors {
  CachedVector<Node> nodes;
  CachedVector<OpId> targets;

  template <class F>
  void for_each_successor(OpId op, F&& f) const {
    const Node& node = nodes[idx(op)];
    const auto end = nodes[idx(op) + 1].first_target;
    for (auto k = node.first_target; k < end; ++k) f(targets[idx(k)]);
    if (node.next_on_stream >= 0) f(node.next_on_stream);
  }
};

Successors successors(const Graph& graph) {
  const auto n = idx(graph.num_ops());
  Successors succ;
  succ.nodes.assign(n + 1, Node{});
  Node* nodes = succ.nodes.data();
  // Row lengths go in the next node's first_target, so that the running sum below leaves each
  // row's start in its own node.
  for (const Dependency& d : graph.dependencies()) {
    ++nodes[idx(d.before) + 1].first_target;
    ++nodes[idx(d.after)].pending;
  }
  for (StreamId s = 0; s < graph.num_streams(); ++s) {
    const auto ops = graph.stream_ops(s);
    for (std::size_t i = 0; i + 1 < ops.size(); ++i) {
      nodes[idx(ops[i])].next_on_stream = ops[i + 1];
      ++nodes[idx(ops[i + 1])].pending;
    }
  }
  for (std::size_t i = 0; i < n; ++i) nodes[i + 1].first_target += nodes[i].first_target;
  succ.targets.resize(idx(nodes[n].first_target));
  // Fill row i from its start upwards, using first_target as the cursor; afterwards node i holds
  // the end of row i, i.e. the start of row i + 1, so one shift restores the starts.
  for (const Dependency& d : graph.dependencies()) {
    succ.targets[idx(nodes[idx(d.before)].first_target++)] = d.after;
  }
  for (std::size_t i = n; i > 0; --i) nodes[i].first_target = nodes[i - 1].first_target;
  nodes[0].first_target = 0;
  return succ;
}

std::string describe(const Graph& graph, OpId op) {
  const StreamId s = graph.op_stream(op);
  return "op " + std::to_string(op) + " '" + graph.op_name(op) + "' (device '" +
         graph.device_name(graph.stream_device(s)) + "', stream '" + graph.stream_name(s) + "')";
}

// Called only when some ops never started. Every such op waits on a predecessor that never
// started either, so walking "waits on" links from one of them must revisit an op: that loop is a
// cycle. Returns the error naming it.
InternalError cycle_error(const Graph& graph, const Successors& succ, std::int64_t num_stuck) {
  const auto pending = [&succ](OpId op) { return succ.nodes[idx(op)].pending; };
  const std::int32_t n = graph.num_ops();
  // Predecessor lists on the error path only: invert the successors.
  Adjacency pred;
  pred.offsets.assign(idx(n) + 1, 0);
  for (OpId op = 0; op < n; ++op) {
    succ.for_each_successor(op, [&pred](OpId t) { ++pred.offsets[idx(t) + 1]; });
  }
  for (std::size_t i = 0; i < idx(n); ++i) pred.offsets[i + 1] += pred.offsets[i];
  pred.targets.resize(idx(pred.offsets[idx(n)]));
  std::vector<std::int32_t> fill(pred.offsets.begin(), pred.offsets.end() - 1);
  for (OpId op = 0; op < n; ++op) {
    succ.for_each_successor(op, [&](OpId t) { pred.targets[idx(fill[idx(t)]++)] = op; });
  }

  OpId cur = 0;
  while (pending(cur) == 0) ++cur;  // the first op that never started
  std::vector<std::int32_t> step(idx(n), -1);
  std::vector<OpId> path;
  while (step[idx(cur)] < 0) {
    step[idx(cur)] = static_cast<std::int32_t>(path.size());
    path.push_back(cur);
    OpId next = -1;
    for (auto k = pred.offsets[idx(cur)]; k < pred.offsets[idx(cur) + 1]; ++k) {
      if (pending(pred.targets[idx(k)]) > 0) {
        next = pred.targets[idx(k)];
        break;
      }
    }
    if (next < 0) break;  // cannot happen: a stuck op always has a stuck predecessor
    cur = next;
  }
  // path[step[cur]] .. path.back() waits on cur in turn; print it in execution order.
  std::vector<OpId> cycle(path.begin() + step[idx(cur)], path.end());
  std::reverse(cycle.begin(), cycle.end());
  // Start at the smallest id, so the same cycle always reads the same.
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  constexpr std::size_t kMaxShown = 8;
  std::string text;
  for (std::size_t i = 0; i < cycle.size() && i < kMaxShown; ++i) {
    text += describe(graph, cycle[i]) + " -> ";
  }
  text += cycle.size() > kMaxShown ? "... -> " + describe(graph, cycle.front())
                                   : describe(graph, cycle.front());
  return InternalError{"engine: " + std::to_string(num_stuck) + " of " + std::to_string(n) +
                       " ops can never start: the op graph has a cycle through dependencies and "
                       "stream order: " +
                       text};
}

}  // namespace

Timeline simulate(const Graph& graph, const EngineOptions& options) {
  const double contention = options.comm_compute_contention;
  const double gemm_contention = options.gemm_comm_contention.value_or(contention);
  for (const auto& [key, value] : {std::pair{"comm_compute_contention", contention},
                                   std::pair{"gemm_comm_contention", gemm_contention}}) {
    if (!(value >= 0.0) || !std::isfinite(value)) {
      throw InternalError(std::string("engine: ") + key + " is " + std::to_string(value) +
                          "; expected a finite value >= 0");
    }
  }
  const bool contended_model = contention > 0.0 || gemm_contention > 0.0;
  // Wall time per unit of full-speed work while communication runs on the device, by
  // ContentionClass.
  const std::array<double, 3> slow_stretch{1.0 + contention, 1.0 + gemm_contention, 1.0};
  const auto stretch_of = [&](OpId op) {
    return slow_stretch[static_cast<std::size_t>(graph.op_contention_class(op))];
  };

  const std::int32_t n = graph.num_ops();
  const std::int32_t num_streams = graph.num_streams();
  const std::int32_t num_devices = graph.num_devices();

  // Per-stream facts, flattened so the event loop reads two small arrays.
  std::vector<std::uint8_t> stream_is_compute(idx(num_streams));
  std::vector<DeviceId> stream_device(idx(num_streams));
  for (StreamId s = 0; s < num_streams; ++s) {
    stream_is_compute[idx(s)] = graph.stream_kind(s) == OpKind::Compute ? 1 : 0;
    stream_device[idx(s)] = graph.stream_device(s);
  }
  // The compute streams of each device (CSR), for rescaling when communication starts or ends.
  std::vector<std::int32_t> compute_offsets(idx(num_devices) + 1, 0);
  std::vector<StreamId> compute_streams;
  for (DeviceId d = 0; d < num_devices; ++d) {
    for (const StreamId s : graph.device_streams(d)) {
      if (stream_is_compute[idx(s)] != 0) compute_streams.push_back(s);
    }
    compute_offsets[idx(d) + 1] = static_cast<std::int32_t>(compute_streams.size());
  }

  Successors succ = successors(graph);
  Node* const nodes = succ.nodes.data();

  Timeline timeline;
  timeline.ops.assign(idx(n), OpTiming{});
  std::vector<OpId> running(idx(num_streams), -1);  // the running op of each compute stream
  std::vector<std::int32_t> comm_running(idx(num_devices), 0);

  // Busy time per device (DeviceBusy): the running ops of each kind, and where the sums stop.
  struct BusyState {
    SimTime until;
    std::int32_t computing = 0;
    std::int32_t communicating = 0;
  };
  timeline.devices.assign(idx(num_devices), DeviceBusy{});
  std::vector<BusyState> busy(idx(num_devices));
  // The segment [until, now) of `device`, by what ran in it (engine::activity's account). An
  // empty segment adds zero everywhere, so it is skipped.
  const auto account = [&](DeviceId device, SimTime now) {
    BusyState& state = busy[idx(device)];
    if (now == state.until) return;
    const Seconds span = now - state.until;
    DeviceBusy& b = timeline.devices[idx(device)];
    if (state.computing > 0) {
      b.compute_busy += span;
    } else if (state.communicating > 0) {
      b.exposed_communication += span;
    } else {
      b.idle += span;
    }
    if (state.communicating > 0) b.communication_busy += span;
    state.until = now;
  };

  EventQueue<EndEvent> queue;
  queue.reserve(idx(std::max<std::int32_t>(num_streams, 16)));

  // A contention change on `device` at `now`: communication starts (`contended`) or the last of
  // it ends. A running compute op of stretch S (wall time per unit of full-speed work while
  // contended) scheduled to end at E still has (E - now) of wall time at the old rate, which
  // now takes (E - now) * S or (E - now) / S: the scheduled end in the timeline is the whole
  // state, no per-op work counter is needed. Ops due at `now` are left alone, so they end on
  // time.
  const auto rescale = [&](DeviceId device, SimTime now, bool contended) {
    for (auto k = compute_offsets[idx(device)]; k < compute_offsets[idx(device) + 1]; ++k) {
      const OpId op = running[idx(compute_streams[idx(k)])];
      if (op < 0) continue;
      OpTiming& t = timeline.ops[idx(op)];
      if (t.end <= now) continue;
      Node& node = nodes[idx(op)];
      const double stretch = stretch_of(op);
      if (stretch == 1.0) continue;  // an uncontended class: its end does not move
      t.end = now + (t.end - now) * (contended ? stretch : 1.0 / stretch);
      // Only compute ops under contention are ever rescheduled.
      queue.push(t.end, EndEvent{op, ++node.version});
    }
  };

  const auto start = [&](OpId op, SimTime now) {
    const Node& node = nodes[idx(op)];
    const StreamId s = graph.op_stream(op);
    const DeviceId device = stream_device[idx(s)];
    const Seconds duration = graph.op_duration(op);
    OpTiming& t = timeline.ops[idx(op)];
    t.start = now;
    // activity counts only ops that take time; so do the running sums.
    if (duration > Seconds(0.0)) {
      account(device, now);
      ++(stream_is_compute[idx(s)] != 0 ? busy[idx(device)].computing
                                        : busy[idx(device)].communicating);
    }
    if (stream_is_compute[idx(s)] != 0) {
      running[idx(s)] = op;
      // Uncontended compute ends at exactly start + duration (no stretch arithmetic).
      t.end = contended_model && comm_running[idx(device)] > 0 ? now + duration * stretch_of(op)
                                                               : now + duration;
    } else {
      t.end = now + duration;
      // Zero-duration communication occupies no time and slows nothing.
      if (contended_model && duration > Seconds(0.0) && comm_running[idx(device)]++ == 0) {
        rescale(device, now, true);
      }
    }
    queue.push(t.end, EndEvent{op, node.version});
  };

  for (OpId op = 0; op < n; ++op) {
    if (nodes[idx(op)].pending == 0) start(op, SimTime::zero());
  }

  std::int32_t num_finished = 0;
  while (!queue.empty()) {
    const auto event = queue.pop();
    ++timeline.num_events;
    const OpId op = event.payload.op;
    const Node& node = nodes[idx(op)];
    if (event.payload.version != node.version) continue;  // rescheduled: stale
    const SimTime now = event.time;
    ++num_finished;
    timeline.end = std::max(timeline.end, now);
    const StreamId s = graph.op_stream(op);
    const DeviceId device = stream_device[idx(s)];
    const bool compute = stream_is_compute[idx(s)] != 0;
    const bool takes_time = graph.op_duration(op) > Seconds(0.0);
    if (takes_time) {
      account(device, now);
      --(compute ? busy[idx(device)].computing : busy[idx(device)].communicating);
      if (!(timeline.ops[idx(op)].start < now)) timeline.devices[idx(device)].exact = false;
    }
    if (compute) {
      running[idx(s)] = -1;
    } else if (contended_model && takes_time) {
      if (--comm_running[idx(device)] == 0) rescale(device, now, false);
    }
    succ.for_each_successor(op, [&](OpId next) {
      if (--nodes[idx(next)].pending == 0) start(next, now);
    });
  }

  if (num_finished != n) throw cycle_error(graph, succ, n - num_finished);
  for (DeviceId d = 0; d < num_devices; ++d) account(d, timeline.end);
  return timeline;
}

}  // namespace trainsim::engine
