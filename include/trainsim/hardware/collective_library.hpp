// Constants of the collective library (NCCL) that its cost model uses, held in the hardware
// profile so a profile can mimic one NCCL version. Filled in by the collective-model work.
#pragma once

#include <string>

namespace trainsim::hardware {

struct CollectiveLibrarySpec {
  std::string version;  // the NCCL version these constants mimic, e.g. "2.20"
};

}  // namespace trainsim::hardware
