#include "sim/cli/allocator.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace trainsim::cli {

void keep_freed_memory() {
#ifdef __GLIBC__
  (void)mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);  // glibc's maximum on 64-bit
  (void)mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

}  // namespace trainsim::cli
