// The host side of the collective sweep: its options, where a process sits in a multi-process
// launch, and the sizes it sweeps (as nccl-tests -b/-e/-f do).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace trainsim::calib {

struct CollectiveOptions {
  std::int64_t min_bytes = 8;
  std::int64_t max_bytes = 1LL << 30;
  int factor = 2;  // size multiplier between points, as nccl-tests -f
  std::vector<std::string> ops = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                  "reduce",     "all_to_all", "send_recv"};
  int warmups = 5;
  int iterations = 20;  // per trial, as nccl-tests -n
  int trials = 5;
  double max_cv = 0.05;
};

// Where this process sits: world size, its rank, its local GPU. Single-process mode has
// world 1 and drives every visible GPU.
struct Launch {
  int world = 1;
  int rank = 0;
  int local_device = 0;
  std::string rendezvous;  // file path; empty in single-process mode
};

// Reads the launch from environment variables (`get` returns a variable's value, or nothing):
// TRAINSIM_CALIB_RANK / _WORLD / _LOCAL_RANK, else Slurm (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID), else Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK); world 1 when none
// is set. A world above 1 needs a rendezvous file. Throws std::invalid_argument naming the
// variable for a malformed or inconsistent value.
[[nodiscard]] Launch launch_from_environment(
    const std::function<std::optional<std::string>(const std::string&)>& get,
    const std::string& rendezvous);

// The sizes of a sweep: min_bytes, min_bytes x factor, ... up to max_bytes, each rounded down
// to a whole number of `granule` bytes (at least one granule), without repeats. Requires
// 1 <= min_bytes <= max_bytes, factor >= 2, granule >= 1 (std::invalid_argument otherwise).
[[nodiscard]] std::vector<std::int64_t> sweep_sizes(std::int64_t min_bytes, std::int64_t max_bytes,
                                                    int factor, std::int64_t granule);

// The schema's op names this sweep knows ("all_reduce", ...).
[[nodiscard]] const std::vector<std::string>& collective_op_names();

}  // namespace trainsim::calib
