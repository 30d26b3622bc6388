// Helpers of the commands that simulate thousands of scenarios in a row (sweep, search).
#pragma once

#include "trainsim/sweep/evaluate.hpp"

namespace trainsim::cli {

// Each simulation allocates and frees op graphs and timelines of several MiB. glibc returns such
// blocks to the kernel (mmap above 128 KiB, heap trimming), and every scenario then page-faults
// them back in, zeroed: a quarter of a sweep's time went to the kernel. Keeping them in the heap
// makes a 10,000-scenario sweep about 30% faster. No effect outside glibc.
void keep_freed_memory();

// A progress bar with ETA on stderr, redrawn at most every 100 ms, when stderr is a terminal;
// an empty callback (silence) otherwise.
[[nodiscard]] sweep::Progress terminal_progress();

}  // namespace trainsim::cli
