#include "trainsim/engine/graph.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "trainsim/error.hpp"

namespace trainsim::engine {
namespace {

[[noreturn]] void fail(const std::string& what) { throw InternalError("engine graph: " + what); }

}  // namespace

void Graph::reserve(std::size_t num_ops, std::size_t num_dependencies) {
  ops_.reserve(num_ops);
  dependencies_.reserve(num_dependencies);
}

DeviceId Graph::add_device(std::string name) {
  const auto id = static_cast<DeviceId>(devices_.size());
  devices_.push_back(Device{std::move(name), {}});
  return id;
}

StreamId Graph::add_stream(DeviceId device, std::string name, OpKind kind) {
  if (!in_range(device, devices_.size())) {
    fail("add_stream: no device " + std::to_string(device));
  }
  const auto id = static_cast<StreamId>(streams_.size());
  streams_.push_back(Stream{device, std::move(name), kind, {}});
  devices_[idx(device)].streams.push_back(id);
  return id;
}

void Graph::add_op_error(StreamId stream, Seconds duration, NameId name_id,
                         ContentionClass contention_class) const {
  if (!in_range(stream, streams_.size())) fail("add_op: no stream " + std::to_string(stream));
  if (!in_range(name_id, names_.size())) fail("add_op: no name " + std::to_string(name_id));
  if (!(duration >= Seconds(0.0)) || !std::isfinite(duration.value())) {
    fail("add_op: op '" + names_[idx(name_id)] + "' has duration " +
         std::to_string(duration.value()) + " s; expected a finite value >= 0");
  }
  // What is left: a contention class (not Default) on a communication stream.
  fail("add_op: op '" + names_[idx(name_id)] + "' has contention class " +
       std::to_string(static_cast<int>(contention_class)) + " but stream '" +
       streams_[idx(stream)].name + "' is not a compute stream");
}

void Graph::set_contention_class(OpId op, ContentionClass contention_class) {
  if (!in_range(op, ops_.size())) {
    fail("set_contention_class: no op " + std::to_string(op));
  }
  if (stream_kind(ops_[idx(op)].stream) != OpKind::Compute) {
    fail("set_contention_class: op '" + op_name(op) + "' is not a compute op");
  }
  ops_[idx(op)].contention_class = contention_class;
}

void Graph::add_dependency_error(OpId before, OpId after) const {
  if (!in_range(before, ops_.size()) || !in_range(after, ops_.size())) {
    fail("add_dependency: no op " + std::to_string(in_range(before, ops_.size()) ? after : before));
  }
  // What is left: an op on itself.
  fail("add_dependency: op " + std::to_string(before) + " '" + op_name(before) +
       "' depends on itself");
}

NameId Graph::intern_name(std::string_view name) {
  if (const auto it = name_index_.find(name); it != name_index_.end()) return it->second;
  const auto id = static_cast<NameId>(names_.size());
  names_.emplace_back(name);
  name_index_.emplace(std::string(name), id);
  return id;
}

}  // namespace trainsim::engine
