// The input of the discrete-event engine: a DAG of ops with known durations, placed on in-order
// streams of devices. The workload builder fills one Graph per training iteration (one device
// per pipeline stage); engine/simulator.hpp turns it into a Timeline. The engine knows nothing
// about transformers: an op is a duration, a name and an opaque caller tag.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/engine/block_cache.hpp"
#include "trainsim/units.hpp"

namespace trainsim::engine {

// Dense indices, assigned 0, 1, 2 ... in creation order by the Graph that owns them.
using DeviceId = std::int32_t;
using StreamId = std::int32_t;
using OpId = std::int32_t;
using NameId = std::int32_t;

// What an op occupies on its device. Communication ops slow concurrent compute ops on the same
// device (EngineOptions::comm_compute_contention); compute ops never slow anything.
enum class OpKind { Compute, Communication };

// How much a compute op slows while communication runs on its device: Default at
// EngineOptions::comm_compute_contention, Gemm at EngineOptions::gemm_comm_contention, Host not
// at all (its time is the host's, issuing kernels one by one: NCCL's SMs do not slow it).
enum class ContentionClass : std::uint8_t { Default, Gemm, Host };

// One dependency edge: `after` may start only once `before` has ended.
struct Dependency {
  OpId before = -1;
  OpId after = -1;
};

// A DAG of ops on in-order streams, like CUDA streams on GPUs.
//
// - A device is one representative GPU (one per pipeline stage). It owns streams.
// - A stream is an in-order queue of one kind: its ops run one after another in the order they
//   were added, each starting no earlier than its predecessor on the stream has ended.
// - An op has a duration at full speed (Seconds, >= 0; zero is allowed), a name from the
//   graph's name table, and `tag`, an index into the caller's own payload table (kernel or
//   collective description); the engine never reads it.
// - Dependencies may cross streams and devices (pipeline send -> receive).
//
// Invariants, checked as the graph is built (violations throw InternalError, since a graph is
// built by code, not read from user input): every id refers to an existing object, durations
// are finite and non-negative, no op depends on itself. A cycle through several ops (counting
// stream order as edges) is only detected by simulate(), which throws InternalError.
//
// Thread safety: a const Graph may be read, and simulated, from several threads at once.
class Graph {
 public:
  Graph() = default;

  // Pre-sizes the op and dependency tables (the builder usually knows the counts).
  void reserve(std::size_t num_ops, std::size_t num_dependencies);

  DeviceId add_device(std::string name);
  // Requires: `device` exists.
  StreamId add_stream(DeviceId device, std::string name, OpKind kind);
  // Appends an op to the end of `stream`. `name_id` comes from intern_name().
  // Requires: `stream` and `name_id` exist; `duration` is finite and >= 0; a `contention_class`
  // other than Default only on a compute stream. Defined below, inline: it runs once per op of
  // every graph built, and a call's entry and exit cost a quarter of its work.
  OpId add_op(StreamId stream, Seconds duration, NameId name_id, std::int32_t tag = -1,
              ContentionClass contention_class = ContentionClass::Default);
  // Sets a compute op's contention class (Default until set).
  // Requires: `op` exists and is on a compute stream.
  void set_contention_class(OpId op, ContentionClass contention_class);
  // `after` starts only when `before` has ended. Duplicate edges are allowed and harmless.
  // Requires: both ops exist and differ. Inline, as add_op.
  void add_dependency(OpId before, OpId after);
  // The id of `name` in the name table, adding it on first use. Ids are dense and follow
  // first-use order, so the same building sequence always yields the same ids.
  NameId intern_name(std::string_view name);

  [[nodiscard]] std::int32_t num_devices() const {
    return static_cast<std::int32_t>(devices_.size());
  }
  [[nodiscard]] std::int32_t num_streams() const {
    return static_cast<std::int32_t>(streams_.size());
  }
  [[nodiscard]] std::int32_t num_ops() const { return static_cast<std::int32_t>(ops_.size()); }
  [[nodiscard]] std::int64_t num_dependencies() const {
    return static_cast<std::int64_t>(dependencies_.size());
  }
  [[nodiscard]] std::int32_t num_names() const { return static_cast<std::int32_t>(names_.size()); }

  [[nodiscard]] const std::string& device_name(DeviceId d) const { return devices_[idx(d)].name; }
  // The device's streams in creation order.
  [[nodiscard]] std::span<const StreamId> device_streams(DeviceId d) const {
    return devices_[idx(d)].streams;
  }

  [[nodiscard]] DeviceId stream_device(StreamId s) const { return streams_[idx(s)].device; }
  [[nodiscard]] const std::string& stream_name(StreamId s) const { return streams_[idx(s)].name; }
  [[nodiscard]] OpKind stream_kind(StreamId s) const { return streams_[idx(s)].kind; }
  // The stream's ops in execution order.
  [[nodiscard]] std::span<const OpId> stream_ops(StreamId s) const { return streams_[idx(s)].ops; }

  [[nodiscard]] StreamId op_stream(OpId op) const { return ops_[idx(op)].stream; }
  [[nodiscard]] DeviceId op_device(OpId op) const { return stream_device(op_stream(op)); }
  [[nodiscard]] OpKind op_kind(OpId op) const { return stream_kind(op_stream(op)); }
  [[nodiscard]] Seconds op_duration(OpId op) const { return ops_[idx(op)].duration; }
  [[nodiscard]] NameId op_name_id(OpId op) const { return ops_[idx(op)].name; }
  [[nodiscard]] const std::string& op_name(OpId op) const { return name(op_name_id(op)); }
  [[nodiscard]] std::int32_t op_tag(OpId op) const { return ops_[idx(op)].tag; }
  [[nodiscard]] ContentionClass op_contention_class(OpId op) const {
    return ops_[idx(op)].contention_class;
  }

  [[nodiscard]] const std::string& name(NameId id) const { return names_[idx(id)]; }
  // Every dependency edge in insertion order (stream order is implicit, not listed here).
  [[nodiscard]] std::span<const Dependency> dependencies() const { return dependencies_; }

 private:
  struct Device {
    std::string name;
    std::vector<StreamId> streams;
  };
  struct Stream {
    DeviceId device = -1;
    std::string name;
    OpKind kind = OpKind::Compute;
    CachedVector<OpId> ops;
  };

  static std::size_t idx(std::int32_t i) { return static_cast<std::size_t>(i); }
  static bool in_range(std::int32_t id, std::size_t size) {
    return id >= 0 && static_cast<std::size_t>(id) < size;
  }
  // Throw the InternalError naming what add_op() or add_dependency() was given wrong.
  [[noreturn, gnu::cold, gnu::noinline]] void add_op_error(StreamId stream, Seconds duration,
                                                           NameId name_id,
                                                           ContentionClass contention_class) const;
  [[noreturn, gnu::cold, gnu::noinline]] void add_dependency_error(OpId before, OpId after) const;

  std::vector<Device> devices_;
  std::vector<Stream> streams_;
  // An op's facts in one record (24 bytes): add_op appends one, and the simulator reads an
  // op's stream, duration and contention class from one cache line. Per-op storage comes from
  // block_cache, reused by the next graph built on the thread.
  struct Op {
    Seconds duration;
    StreamId stream = -1;
    NameId name = 0;
    std::int32_t tag = -1;
    ContentionClass contention_class = ContentionClass::Default;
  };
  CachedVector<Op> ops_;
  CachedVector<Dependency> dependencies_;
  std::vector<std::string> names_;
  std::map<std::string, NameId, std::less<>> name_index_;
};

inline OpId Graph::add_op(StreamId stream, Seconds duration, NameId name_id, std::int32_t tag,
                          ContentionClass contention_class) {
  // !(d >= 0) also rejects NaN. The checks share one branch; the message is built off the hot
  // path.
  if (!in_range(stream, streams_.size()) || !in_range(name_id, names_.size()) ||
      !(duration >= Seconds(0.0)) || !std::isfinite(duration.value()) ||
      (contention_class != ContentionClass::Default &&
       streams_[idx(stream)].kind != OpKind::Compute)) [[unlikely]] {
    add_op_error(stream, duration, name_id, contention_class);
  }
  const auto id = static_cast<OpId>(ops_.size());
  ops_.push_back(Op{.duration = duration,
                    .stream = stream,
                    .name = name_id,
                    .tag = tag,
                    .contention_class = contention_class});
  streams_[idx(stream)].ops.push_back(id);
  return id;
}

inline void Graph::add_dependency(OpId before, OpId after) {
  if (!in_range(before, ops_.size()) || !in_range(after, ops_.size()) || before == after)
      [[unlikely]] {
    add_dependency_error(before, after);
  }
  dependencies_.push_back(Dependency{before, after});
}

}  // namespace trainsim::engine
