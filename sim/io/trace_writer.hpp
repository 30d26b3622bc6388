// Writes a simulated iteration as a Chrome trace-event JSON file that ui.perfetto.dev and
// chrome://tracing open: one process per pipeline stage, one thread per stream, one complete
// ("X") event per op. Format: Trace Event Format (Google, 2016) as Perfetto reads it
// (docs/sources.md §3): ts and dur in microseconds from the start of the iteration. Each op's
// args: microbatch, layer, pass; a collective's op, group, ranks, nodes, bytes, algorithm and
// protocol; a compute op's flops and kind (gemm, attention or memory_bound: the rate it is
// priced at).
#pragma once

#include <ostream>
#include <string>

#include "trainsim/engine/simulator.hpp"
#include "trainsim/workload/iteration.hpp"

namespace trainsim::io {

void write_trace(std::ostream& out, const workload::Iteration& iteration,
                 const engine::Timeline& timeline);

// Writes the trace to `path`, atomically (io::AtomicFile: no partial file on failure). Throws
// ConfigError naming `path` if the file cannot be written.
void write_trace_file(const std::string& path, const workload::Iteration& iteration,
                      const engine::Timeline& timeline);

}  // namespace trainsim::io
