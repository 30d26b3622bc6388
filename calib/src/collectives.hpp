// Collectives through NCCL, swept over sizes as nccl-tests sweeps them: either every GPU of one
// node from one process (one communicator per GPU, ncclCommInitAll), or one GPU per process
// across nodes, the processes meeting through a file on a shared file system (rank 0 writes
// NCCL's unique id, the others read it).
#pragma once

#include <string>

#include "calib/host/collective_plan.hpp"
#include "calib/host/document.hpp"

namespace trainsim::calib {

// NCCL's version as "2.28.3", or "" when NCCL is not built in.
[[nodiscard]] std::string nccl_version();

// Runs the sweep and records into `doc` (only rank 0's document is written). Throws CudaError
// for a failed call, std::runtime_error when NCCL is not built in or the rendezvous times out.
void run_collectives(const Launch& launch, const CollectiveOptions& options, Document& doc,
                     const Environment& base);

}  // namespace trainsim::calib
