// Writes a simulated iteration as a Chrome trace-event JSON file that ui.perfetto.dev and
// chrome://tracing open: one process per pipeline stage, one thread per stream, one complete
// ("X") event per op. Format: Trace Event Format (Google, 2016) as Perfetto reads it
// (docs/sources.md §3): ts and dur in microseconds from the start of the iteration. Each op's
// args: microbatch, layer, pass (forward, backward, or optimizer for the optimizer step); a
// collective's op, group, ranks, nodes, bytes, algorithm and protocol; a compute op's flops and
// kind (gemm, attention or memory_bound: the rate it is priced at). The stack's host time per
// step (`host_overhead`, the report's stack iteration_overhead), when not 0, is one more event,
// "iteration_overhead" (cat "host", pass "step"), on a "host" thread of each stage's process
// from the end of the GPU work: the trace then spans the report's iteration time.
#pragma once

#include <ostream>
#include <string>

#include "trainsim/engine/simulator.hpp"
#include "trainsim/workload/iteration.hpp"

namespace trainsim::io {

void write_trace(std::ostream& out, const workload::Iteration& iteration,
                 const engine::Timeline& timeline, Seconds host_overhead = Seconds(0.0));

// Writes the trace to `path`, atomically (io::AtomicFile: no partial file on failure). Throws
// ConfigError naming `path` if the file cannot be written.
void write_trace_file(const std::string& path, const workload::Iteration& iteration,
                      const engine::Timeline& timeline, Seconds host_overhead = Seconds(0.0));

}  // namespace trainsim::io
