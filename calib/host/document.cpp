#include "calib/host/document.hpp"

#include <array>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>

namespace trainsim::calib {
namespace {

nlohmann::json environment_json(const Environment& e) {
  nlohmann::json j = nlohmann::json::object();
  const auto put = [&j](const char* key, const std::string& value) {
    if (!value.empty()) j[key] = value;
  };
  put("device", e.device);
  put("driver", e.driver);
  put("cuda", e.cuda);
  put("nccl", e.nccl);
  put("host", e.host);
  put("timestamp", e.timestamp);
  put("clocks", e.clocks);
  return j;
}

nlohmann::json attention_record(const AttentionCase& c, const Summary& time,
                                const std::string& notes) {
  return {{"batch", c.batch},
          {"heads", c.heads},
          {"seq_len", c.seq_len},
          {"head_dim", c.head_dim},
          {"causal", c.causal},
          {"dtype", parallel::to_string(c.dtype)},
          {"time", time_text(time.median)},
          {"notes", notes}};
}

std::string format(const char* pattern, double value) {
  std::array<char, 64> buffer{};
  std::snprintf(buffer.data(), buffer.size(), pattern, value);
  return buffer.data();
}

}  // namespace

std::string time_text(double seconds) { return format("%.6g us", seconds * 1e6); }

std::string power_text(double watts) { return format("%.1f W", watts); }

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> buffer{};
  std::strftime(buffer.data(), buffer.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer.data();
}

Document::Document(Environment environment) : environment_(std::move(environment)) {}

void Document::add(const std::string& array, nlohmann::json record, const Summary& s,
                   const Environment& at) {
  record["environment"] = environment_json(at);
  record["_stats"] = {{"trials", s.count}, {"median", s.median}, {"min", s.min},
                      {"max", s.max},      {"cv", s.cv},         {"range", s.range}};
  records_[array].push_back(std::move(record));
}

void Document::add_gemm(const GemmCase& c, const Summary& time, const Environment& at) {
  add("gemm",
      {{"m", c.m},
       {"n", c.n},
       {"k", c.k},
       {"dtype", parallel::to_string(c.dtype)},
       {"time", time_text(time.median)},
       {"notes", c.origin}},
      time, at);
}

void Document::add_attention(const AttentionCase& c, const Summary& time, const Environment& at,
                             const std::string& implementation) {
  add("attention", attention_record(c, time, c.origin + "; " + implementation), time, at);
}

void Document::add_memory(const std::string& kernel, std::int64_t bytes, const Summary& time,
                          const Environment& at) {
  add("memory",
      {{"kernel", kernel},
       {"bytes", std::to_string(bytes) + " B"},
       {"time", time_text(time.median)}},
      time, at);
}

void Document::add_launch(const Summary& time, const Environment& at) {
  add("launch", {{"time", time_text(time.median)}}, time, at);
}

void Document::add_unfused_attention(const AttentionCase& c, const Summary& time,
                                     const Environment& at) {
  add("_unfused_attention",
      attention_record(c, time, c.origin + "; cuBLAS batched GEMMs around a softmax kernel"), time,
      at);
}

void Document::add_power(const std::string& activity, double watts, const Summary& samples,
                         const Environment& at, const std::string& workload) {
  const bool level = activity == "idle" || activity == "compute" || activity == "communication";
  add(level ? "power" : "_power_" + activity,
      {{"activity", activity}, {"power", power_text(watts)}, {"notes", workload}}, samples, at);
}

void Document::add_collective(const std::string& op, std::int64_t ranks, std::int64_t nodes,
                              std::int64_t ranks_per_node, std::int64_t bytes, const Summary& time,
                              const Environment& at) {
  // One rank moves nothing (NCCL copies locally): kept as a comment, not a point to fit.
  add(ranks > 1 ? "collectives" : "_collectives_one_rank",
      {{"op", op},
       {"ranks", ranks},
       {"nodes", nodes},
       {"ranks_per_node", ranks_per_node},
       {"bytes", std::to_string(bytes) + " B"},
       {"time", time_text(time.median)}},
      time, at);
}

void Document::add_overlap(nlohmann::json record, const Summary& beside, const Environment& at,
                           bool fitted) {
  const std::string kernel = record.value("kernel", "");
  const bool gemm = kernel == "gemm";
  add(fitted && gemm       ? "overlap"
      : gemm               ? "_overlap_other"
      : kernel == "holder" ? "_overlap_holder"
                           : "_overlap_memory_bound",
      std::move(record), beside, at);
}

void Document::reject(Rejection r) { rejections_.push_back(std::move(r)); }

void Document::note(const std::string& text) { notes_.push_back(text); }

std::size_t Document::points() const {
  std::size_t n = 0;
  for (const auto& [key, array] : records_.items()) {
    if (key.front() != '_') n += array.size();
  }
  return n;
}

nlohmann::json Document::json() const {
  nlohmann::json doc = {{"schema", "trainsim-measurements"},
                        {"schema_version", 1},
                        {"environment", environment_json(environment_)}};
  doc["source"] = "trainsim-calib";
  // The schema's arrays first, then the comment arrays ("_unfused_attention", ...).
  for (const char* array :
       {"gemm", "attention", "memory", "launch", "power", "collectives", "overlap"}) {
    if (records_.contains(array)) doc[array] = records_.at(array);
  }
  for (const auto& [key, array] : records_.items()) {
    if (key.front() == '_') doc[key] = array;
  }
  if (!notes_.empty()) doc["notes"] = notes_;
  if (!rejections_.empty()) {
    nlohmann::json rejected = nlohmann::json::array();
    for (const auto& r : rejections_) rejected.push_back({{"what", r.what}, {"reason", r.reason}});
    doc["_rejected"] = rejected;
  }
  return doc;
}

void Document::write(const std::string& path) const {
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(temporary + ": cannot open for writing");
    out << json().dump(2) << '\n';
    out.flush();
    if (!out) throw std::runtime_error(temporary + ": write failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error(path + ": cannot move the finished document into place");
  }
}

}  // namespace trainsim::calib
