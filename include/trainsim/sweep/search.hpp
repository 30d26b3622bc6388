// Plan search: for one model, cluster and global batch, enumerate parallel plans (TP, PP, CP,
// EP for mixture-of-experts models, virtual stages, micro-batch, sharding, recomputation,
// schedule, sequence parallelism), drop those that cannot run (parallel::validate) or cannot
// fit (report::memory_peak) before simulating, simulate the rest and rank them by an objective.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
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
  // With a bounded search (search's keep_top): the most tokens/s the plan can reach, the tokens
  // of a step over workload::compute_lower_bound; infinity otherwise.
  double bound = std::numeric_limits<double>::infinity();
};

struct SearchResult {
  std::vector<Candidate> ranked;  // simulated plans that fit, best first
  std::int64_t enumerated = 0;    // plans in the space (all shards)
  std::int64_t in_shard = 0;      // plans this shard looked at
  std::int64_t invalid = 0;       // pruned by parallel::validate
  std::int64_t out_of_memory = 0; // pruned by report::memory_peak
  std::int64_t simulated = 0;
  // The invalid plans by the scenario key at fault (the pointer their problem names), commonest
  // first, ties in order of first appearance; each with the first such plan's problem.
  struct InvalidReason {
    std::string key;
    std::int64_t count = 0;
    std::string example;
  };
  std::vector<InvalidReason> invalid_reasons;
  // The out-of-memory plan needing least memory per GPU (the first such in enumeration order):
  // its peak total and its problem ("needs ... per GPU on stage ..., more than the ... usable of
  // ... of HBM"); no total when no plan is out of memory.
  std::optional<Bytes> least_out_of_memory;
  std::string least_out_of_memory_problem;
  std::optional<parallel::Scenario> least_out_of_memory_plan;
  // Bounded search only: plans that run and fit by the memory model but were not simulated,
  // their bound below `threshold`, kept (unsimulated, best bound first) for best_where.
  std::int64_t bounded = 0;
  std::vector<Candidate> bounded_out;
  // Bounded search only: the keep_top-th best tokens/s, once keep_top plans fit; -infinity
  // otherwise. Every plan scoring at least this was simulated: ranks down to it are exact.
  double threshold = -std::numeric_limits<double>::infinity();
};

// The objective's value of a report; higher is better (usd is negated).
[[nodiscard]] double score(const report::Report& r, Objective objective);

// Evaluates the plans of `space` this shard selects on `jobs` threads and ranks the ones that
// fit by `objective`, ties broken by the enumeration index.
//
// keep_top > 0 with the tokens_per_s or usd_per_million_tokens objective (the cost is the
// GPUs' price over tokens/s, the same GPUs for every plan) and no sharding bounds the search:
// only the
// best keep_top plans are wanted, so a plan that cannot reach them is not simulated. Every plan
// is validated and memory-checked and gets a bound, the step's tokens over
// workload::compute_lower_bound (no simulation is faster). Plans are simulated best bound
// first, a fixed batch at a time; the threshold is the keep_top-th best tokens/s so far, and
// once the next plan's bound is below it, that plan and all after it cannot rank in the best
// keep_top: they are counted in `bounded` and kept in `bounded_out`. The best keep_top plans
// are those of the unbounded search, in the same order, and the counts do not depend on the
// threads. A shard cannot see the other shards' plans, so sharded searches (and tokens_per_joule,
// which depends on power too, and keep_top 0) simulate every plan that fits.
[[nodiscard]] SearchResult search(const parallel::Scenario& base, const SearchSpace& space,
                                  Objective objective, int jobs, const Shard& shard = {},
                                  const Progress& progress = {},
                                  report::SimulationMode mode = report::SimulationMode::Extrapolate,
                                  std::int64_t keep_top = 0);

// The best plan of `result` whose scenario passes `keep`, as the unbounded search would rank
// it: the best ranked one, after simulating (best bound first) every bounded-out plan passing
// `keep` whose bound could beat it; those that fit move into `ranked` (below the best
// keep_top: their tokens/s is below the threshold), the others are dropped from bounded_out.
// Returns its position in `ranked`, or nullopt when no plan passing `keep` runs and fits.
[[nodiscard]] std::optional<std::size_t> best_where(
    SearchResult& result, const std::function<bool(const parallel::Scenario&)>& keep,
    Objective objective, report::SimulationMode mode = report::SimulationMode::Extrapolate);

}  // namespace trainsim::sweep
