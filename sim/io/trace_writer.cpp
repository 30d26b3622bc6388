#include "sim/io/trace_writer.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "trainsim/error.hpp"
#include "trainsim/report/kernel_breakdown.hpp"

#include "sim/io/atomic_file.hpp"

namespace trainsim::io {
namespace {

// Event times are written in microseconds (the Trace Event Format's unit), rounded to whole
// nanoseconds, and a duration as the difference of its rounded end and start. Perfetto's JSON
// importer rounds ts and dur to nanoseconds each (llround(v * 1000), json_trace_tokenizer.cc)
// and moves an event that overlaps the next on its thread to an overflow track: an op's end and
// the next op's start, equal in the timeline, were written as separately rounded ts and dur,
// and 1 ns apart once Perfetto rounded them (22 of 425 events of a small tp 2 iteration).
// Rounding both ends the same way keeps every event inside the next one's start.
double nanoseconds(Seconds t) { return std::round(t.value() * 1e9); }
double micros(double ns) { return ns / 1e3; }

// The trace, event by event, to `sink`: the same bytes as nlohmann's dump of the whole document
// ({"displayTimeUnit":"ms","traceEvents":[...]}, keys in nlohmann's order), without holding the
// document, whose tree takes about 1.7 KB per event (850 MB for half a million).
class EventWriter {
 public:
  explicit EventWriter(const std::function<void(std::string_view)>& sink) : sink_(sink) {
    sink_(R"({"displayTimeUnit":"ms","traceEvents":[)");
  }
  void push_back(const nlohmann::json& event) {
    if (!first_) sink_(",");
    first_ = false;
    sink_(event.dump());
  }
  void finish() { sink_("]}\n"); }

 private:
  const std::function<void(std::string_view)>& sink_;
  bool first_ = true;
};

void emit_trace(const workload::Iteration& it, const engine::Timeline& timeline,
                Seconds host_overhead, const std::function<void(std::string_view)>& sink) {
  const engine::Graph& g = it.graph;
  EventWriter events(sink);
  // The stack's host time per step: a thread of its own on each stage's process, after the
  // streams, with a tid no stream and no other stage's host thread has (tids are unique across
  // processes, as the streams' are: Perfetto's JSON importer takes them as system-wide).
  const bool host = host_overhead.value() > 0.0;
  // Stage i's host thread is tid num_streams + i; nullopt for a device that runs no stage.
  const auto host_tid = [&it, &g](engine::DeviceId d) -> std::optional<std::int32_t> {
    const auto at = std::find(it.stage_device.begin(), it.stage_device.end(), d);
    if (at == it.stage_device.end()) return std::nullopt;
    return g.num_streams() + static_cast<std::int32_t>(at - it.stage_device.begin());
  };
  // A stream is named only where an event runs on it: with dp 1 (and cp 1) the data-parallel
  // stream carries no call, and an empty "dp comm" thread read as if it had one.
  std::vector<bool> used(static_cast<std::size_t>(g.num_streams()), false);
  for (engine::OpId op = 0; op < g.num_ops(); ++op) {
    const auto& t = timeline.ops[static_cast<std::size_t>(op)];
    if ((t.end - t.start).value() > 0.0) used[static_cast<std::size_t>(g.op_stream(op))] = true;
  }
  for (engine::DeviceId d = 0; d < g.num_devices(); ++d) {
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", d},
                      {"tid", 0},
                      {"args", {{"name", g.device_name(d)}}}});
    events.push_back({{"ph", "M"},
                      {"name", "process_sort_index"},
                      {"pid", d},
                      {"tid", 0},
                      {"args", {{"sort_index", d}}}});
    int order = 0;
    for (engine::StreamId s : g.device_streams(d)) {
      if (!used[static_cast<std::size_t>(s)]) continue;
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", d},
                        {"tid", s},
                        {"args", {{"name", g.stream_name(s)}}}});
      events.push_back({{"ph", "M"},
                        {"name", "thread_sort_index"},
                        {"pid", d},
                        {"tid", s},
                        {"args", {{"sort_index", order++}}}});
    }
    if (const auto tid = host_tid(d); host && tid) {
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", d},
                        {"tid", *tid},
                        {"args", {{"name", "host"}}}});
      events.push_back({{"ph", "M"},
                        {"name", "thread_sort_index"},
                        {"pid", d},
                        {"tid", *tid},
                        {"args", {{"sort_index", order}}}});
    }
  }
  for (engine::OpId op = 0; op < g.num_ops(); ++op) {
    const auto& t = timeline.ops[static_cast<std::size_t>(op)];
    const Seconds dur = t.end - t.start;
    if (dur.value() <= 0.0) continue;
    const workload::OpInfo& info = it.ops[static_cast<std::size_t>(g.op_tag(op))];
    nlohmann::json args = nlohmann::json::object();
    if (info.microbatch >= 0) args["microbatch"] = info.microbatch;
    if (info.layer >= 0) args["layer"] = info.layer;
    // A recompute op may be issued in the backward pass (the gather ahead of a recomputed
    // layer, workload/iteration_builder.cpp): recompute first.
    args["pass"] = info.recompute   ? "recompute"
                   : info.backward  ? "backward"
                   : info.optimizer ? "optimizer"
                                    : "forward";
    if (info.collective >= 0) {
      const auto& c = it.collectives[static_cast<std::size_t>(info.collective)];
      args["op"] = c.op;
      args["group"] = c.group;
      args["ranks"] = c.shape.ranks;
      args["nodes"] = c.shape.nodes;
      // Per NCCL call, a whole count as the report writes byte counts (a float, 262152192.0,
      // read as if a fraction of a byte were possible).
      args["bytes"] = std::llround(c.bytes.value());
      // An op that stands for several calls (DDP's buckets of a layer, a ring exchange's steps).
      if (c.calls_per_op > 1) args["calls"] = c.calls_per_op;
      args["algorithm"] = c.algorithm;
      args["protocol"] = c.protocol;
    } else {
      args["flops"] = info.flops.value();
      // The rate it is priced at, as `trainsim compare` names the category.
      args["kind"] = report::to_string(report::category_of(info.kernel_kind));
    }
    events.push_back(
        {{"ph", "X"},
         {"name", g.op_name(op)},
         {"cat", info.collective >= 0 ? "communication" : "compute"},
         {"pid", g.op_device(op)},
         {"tid", g.op_stream(op)},
         {"ts", micros(nanoseconds(t.start.since_start()))},
         {"dur", micros(nanoseconds(t.end.since_start()) - nanoseconds(t.start.since_start()))},
         {"args", std::move(args)}});
  }
  // After the GPU work, as the report adds it to the iteration (report::derive): the GPUs idle.
  if (host) {
    for (const engine::DeviceId d : it.stage_device) {
      events.push_back({{"ph", "X"},
                        {"name", "iteration_overhead"},
                        {"cat", "host"},
                        {"pid", d},
                        {"tid", *host_tid(d)},
                        {"ts", micros(nanoseconds(timeline.end.since_start()))},
                        {"dur", micros(nanoseconds(timeline.end.since_start() + host_overhead) -
                                       nanoseconds(timeline.end.since_start()))},
                        {"args", {{"pass", "step"}}}});
    }
  }
  events.finish();
}

}  // namespace

void write_trace(std::ostream& out, const workload::Iteration& it, const engine::Timeline& timeline,
                 Seconds host_overhead) {
  emit_trace(it, timeline, host_overhead, [&out](std::string_view text) {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  });
}

void write_trace_file(const std::string& path, const workload::Iteration& iteration,
                      const engine::Timeline& timeline, Seconds host_overhead) {
  // Streamed into the temporary, which appears at `path` whole or not at all (AtomicFile).
  AtomicFile file(path);
  emit_trace(iteration, timeline, host_overhead,
             [&file](std::string_view text) { file.write(text); });
  file.commit();
}

}  // namespace trainsim::io
