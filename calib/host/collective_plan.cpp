#include "calib/host/collective_plan.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace trainsim::calib {
namespace {

std::optional<int> integer_variable(
    const std::function<std::optional<std::string>(const std::string&)>& get,
    const std::string& name, int min_value) {
  const auto text = get(name);
  if (!text) return std::nullopt;
  int value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || value < min_value) {
    throw std::invalid_argument("environment variable " + name + ": expected an integer >= " +
                                std::to_string(min_value) + ", got \"" + *text + "\"");
  }
  return value;
}

}  // namespace

Launch launch_from_environment(
    const std::function<std::optional<std::string>(const std::string&)>& get,
    const std::string& rendezvous) {
  struct Names {
    const char* rank;
    const char* world;
    const char* local;
  };
  static constexpr Names kLaunchers[] = {
      {"TRAINSIM_CALIB_RANK", "TRAINSIM_CALIB_WORLD", "TRAINSIM_CALIB_LOCAL_RANK"},
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"}};
  Launch launch;
  launch.rendezvous = rendezvous;
  for (const Names& n : kLaunchers) {
    const auto world = integer_variable(get, n.world, 1);
    if (!world) continue;
    const auto rank = integer_variable(get, n.rank, 0);
    if (!rank) {
      throw std::invalid_argument(std::string("environment variable ") + n.rank +
                                  ": missing while " + n.world + " is set");
    }
    if (*rank >= *world) {
      throw std::invalid_argument(std::string("environment variable ") + n.rank +
                                  ": expected a rank below " + n.world + " = " +
                                  std::to_string(*world) + ", got " + std::to_string(*rank));
    }
    launch.world = *world;
    launch.rank = *rank;
    launch.local_device = integer_variable(get, n.local, 0).value_or(0);
    break;
  }
  if (launch.world > 1 && rendezvous.empty()) {
    throw std::invalid_argument(
        "a launch of " + std::to_string(launch.world) +
        " processes needs --rendezvous FILE on a file system every node sees");
  }
  return launch;
}

std::vector<std::int64_t> sweep_sizes(std::int64_t min_bytes, std::int64_t max_bytes, int factor,
                                      std::int64_t granule) {
  if (min_bytes < 1 || max_bytes < min_bytes || factor < 2 || granule < 1) {
    throw std::invalid_argument("sweep sizes need 1 <= min <= max, factor >= 2 and granule >= 1");
  }
  std::vector<std::int64_t> out;
  for (std::int64_t size = min_bytes; size <= max_bytes;) {
    const std::int64_t rounded = std::max(granule, size / granule * granule);
    if (out.empty() || out.back() != rounded) out.push_back(rounded);
    if (size > max_bytes / factor) break;
    size *= factor;
  }
  return out;
}

const std::vector<std::string>& collective_op_names() {
  static const std::vector<std::string> names = {"all_reduce", "all_gather", "reduce_scatter",
                                                 "broadcast",  "reduce",     "all_to_all",
                                                 "send_recv"};
  return names;
}

}  // namespace trainsim::calib
