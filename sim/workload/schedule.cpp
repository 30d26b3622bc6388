#include "trainsim/workload/schedule.hpp"

#include <algorithm>

namespace trainsim::workload {

// Megatron-LM's interleaved schedule maps the k-th forward (or backward) step of a rank to a
// micro-batch and a model chunk: steps go through chunks in groups of pp micro-batches
// (megatron/core/pipeline_parallel/schedules.py, get_model_chunk_id / microbatch id).
PassStep interleaved_step(std::int64_t k, std::int64_t pp, std::int64_t chunks, bool backward) {
  const std::int64_t group = k / (pp * chunks);
  const std::int64_t in_group = k % (pp * chunks);
  std::int64_t chunk = in_group / pp;
  if (backward) chunk = chunks - 1 - chunk;
  return PassStep{.backward = backward, .microbatch = group * pp + in_group % pp, .chunk = chunk};
}

std::int64_t interleaved_warmup(std::int64_t pp, std::int64_t stage, std::int64_t chunks,
                                std::int64_t total) {
  if (total == pp * chunks) return total;  // as many micro-batches as stages (schedule.hpp)
  return std::min((pp - stage - 1) * 2 + (chunks - 1) * pp, total);
}

std::vector<PassStep> pipeline_order(parallel::PipelineSchedule schedule, std::int64_t pp,
                                     std::int64_t stage, std::int64_t microbatches,
                                     std::int64_t chunks) {
  std::vector<PassStep> out;
  const std::int64_t m = microbatches;
  out.reserve(static_cast<std::size_t>(2 * m * chunks));
  switch (schedule) {
    case parallel::PipelineSchedule::GPipe:
      for (std::int64_t c = 0; c < chunks; ++c) {
        for (std::int64_t j = 0; j < m; ++j) out.push_back({false, j, c});
      }
      for (std::int64_t c = chunks - 1; c >= 0; --c) {
        for (std::int64_t j = 0; j < m; ++j) out.push_back({true, j, c});
      }
      return out;
    case parallel::PipelineSchedule::OneFOneB: {
      const std::int64_t warmup = std::min(pp - stage - 1, m);
      std::int64_t f = 0;
      std::int64_t b = 0;
      for (; f < warmup; ++f) out.push_back({false, f, 0});
      while (f < m) {
        out.push_back({false, f++, 0});
        out.push_back({true, b++, 0});
      }
      while (b < m) out.push_back({true, b++, 0});
      return out;
    }
    case parallel::PipelineSchedule::Interleaved: {
      const std::int64_t total = m * chunks;
      const std::int64_t warmup = interleaved_warmup(pp, stage, chunks, total);
      std::int64_t f = 0;
      std::int64_t b = 0;
      for (; f < warmup; ++f) out.push_back(interleaved_step(f, pp, chunks, false));
      while (f < total) {
        out.push_back(interleaved_step(f++, pp, chunks, false));
        out.push_back(interleaved_step(b++, pp, chunks, true));
      }
      while (b < total) out.push_back(interleaved_step(b++, pp, chunks, true));
      return out;
    }
  }
  return out;
}

}  // namespace trainsim::workload
