// Plan search: for one model, cluster and global batch, enumerate parallel plans (TP, PP, CP,
// EP for mixture-of-experts models, virtual stages, micro-batch, sharding, recomputation,
// schedule, sequence parallelism), drop those that cannot run (parallel::validate) or cannot
// fit (report::memory_peak) before simulating, simulate the rest and rank them by an objective.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/parallel/scenario.hpp"
#include "trainsim/sweep/evaluate.hpp"
#include "trainsim/sweep/shard.hpp"

namespace trainsim::sweep {

// The values each plan dimension takes. The default space (documented in `trainsim search
// --help` and docs/sweep.md) is modest so that a 70B model on 1,024 GPUs searches in seconds:
// tp, pp in {1, 2, 4, 8}; cp {1}; micro-batch {1, 2, 4, 8}; sharding {zero1, shard_grad_op,
// full_shard}; recompute {none, selective, full}; schedules 1f1b and interleaved with 2 virtual
// stages when pp > 1 (pp = 1 has one schedule: 1f1b, v = 1); sequence parallelism on when tp > 1.
struct SearchSpace {
  std::vector<std::int64_t> tp = {1, 2, 4, 8};
  std::vector<std::int64_t> pp = {1, 2, 4, 8};
  std::vector<std::int64_t> cp = {1};
  std::vector<std::int64_t> micro_batch = {1, 2, 4, 8};
  std::vector<parallel::Sharding> sharding = {parallel::Sharding::Zero1,
                                              parallel::Sharding::ShardGradOp,
                                              parallel::Sharding::FullShard};
  std::vector<parallel::Recompute> recompute = {parallel::Recompute::None,
                                                parallel::Recompute::Selective,
                                                parallel::Recompute::Full};
  // Schedules tried when pp > 1; Interleaved is tried with each of virtual_stages (> 1).
  std::vector<parallel::PipelineSchedule> schedule = {parallel::PipelineSchedule::OneFOneB,
                                                      parallel::PipelineSchedule::Interleaved};
  std::vector<std::int64_t> virtual_stages = {2};
  // Values of sequence_parallel tried when tp > 1 (tp = 1 always runs without).
  std::vector<bool> sequence_parallel = {true};
  // Expert-parallel degrees tried for a mixture-of-experts model. Empty (the default): every
  // divisor of the plan's dp that also divides num_experts (expert_parallel_degrees), skipping
  // the combinations validate refuses (ep > 1 with cp > 1 or hybrid_shard). A dense model runs
  // with ep 1 whatever this holds, so its enumeration is that of a space without ep.
  std::vector<std::int64_t> ep;
};

// The automatic EP degrees of a plan with data-parallel degree `dp` (> 0) for a model with
// `num_experts` routed experts (> 0): the divisors of gcd(dp, num_experts), increasing; EP
// groups are carved out of the data-parallel ranks and each holds num_experts / ep experts
// (parallel::validate's /parallel/ep rules). {1} when dp or num_experts is 0.
[[nodiscard]] std::vector<std::int64_t> expert_parallel_degrees(std::int64_t dp,
                                                                std::int64_t num_experts);

enum class Objective { TokensPerS, TokensPerJoule, UsdPerMillionTokens };

// "tokens_per_s", "tokens_per_joule", "usd_per_million_tokens".
const char* to_string(Objective o);

// Every plan of `space` applied to `base` (hardware, model, gpus, training kept; dp derived as
// the loader does: gpus / (tp pp cp), 0 when it does not divide), in a fixed order: tp, pp,
// schedule/virtual stages, cp, ep, sequence parallel, micro-batch, sharding, recompute, the
// first varying slowest. Combinations that cannot differ are generated once (pp = 1 only with
// 1f1b and v = 1; tp = 1 only without sequence parallelism; ep = 1 only for a dense model).
[[nodiscard]] std::vector<parallel::Scenario> enumerate_plans(const parallel::Scenario& base,
                                                              const SearchSpace& space);

// One plan of the search and its evaluation; index is its place in enumerate_plans.
struct Candidate {
  std::int64_t index = 0;
  parallel::Scenario scenario;
  Evaluation evaluation;
};

struct SearchResult {
  std::vector<Candidate> ranked;  // simulated plans that fit, best first
  std::int64_t enumerated = 0;    // plans in the space (all shards)
  std::int64_t in_shard = 0;      // plans this shard looked at
  std::int64_t invalid = 0;       // pruned by parallel::validate
  std::int64_t out_of_memory = 0; // pruned by report::memory_peak
  std::int64_t simulated = 0;
};

// The objective's value of a report; higher is better (usd is negated).
[[nodiscard]] double score(const report::Report& r, Objective objective);

// Evaluates the plans of `space` this shard selects on `jobs` threads and ranks the ones that
// fit by `objective`, ties broken by the enumeration index.
[[nodiscard]] SearchResult search(const parallel::Scenario& base, const SearchSpace& space,
                                  Objective objective, int jobs, const Shard& shard = {},
                                  const Progress& progress = {},
                                  report::SimulationMode mode = report::SimulationMode::Extrapolate);

}  // namespace trainsim::sweep
