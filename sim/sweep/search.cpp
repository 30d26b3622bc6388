#include "trainsim/sweep/search.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace trainsim::sweep {

const char* to_string(Objective o) {
  switch (o) {
    case Objective::TokensPerS: return "tokens_per_s";
    case Objective::TokensPerJoule: return "tokens_per_joule";
    case Objective::UsdPerMillionTokens: return "usd_per_million_tokens";
  }
  return "tokens_per_s";
}

double score(const report::Report& r, Objective objective) {
  switch (objective) {
    case Objective::TokensPerS: return r.tokens_per_s;
    case Objective::TokensPerJoule: return r.power.tokens_per_joule;
    case Objective::UsdPerMillionTokens: return -r.cost.usd_per_million_tokens;
  }
  return r.tokens_per_s;
}

std::vector<std::int64_t> expert_parallel_degrees(std::int64_t dp, std::int64_t num_experts) {
  if (dp <= 0 || num_experts <= 0) return {1};
  const std::int64_t g = std::gcd(dp, num_experts);
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= g; ++d) {
    if (g % d == 0) out.push_back(d);
  }
  return out;
}

std::vector<parallel::Scenario> enumerate_plans(const parallel::Scenario& base,
                                                const SearchSpace& space) {
  using parallel::PipelineSchedule;
  std::vector<parallel::Scenario> out;
  const bool moe = model::is_moe(base.model);
  for (const std::int64_t tp : space.tp) {
    for (const std::int64_t pp : space.pp) {
      std::vector<std::pair<PipelineSchedule, std::int64_t>> schedules;
      if (pp == 1) {
        schedules.emplace_back(PipelineSchedule::OneFOneB, 1);
      } else {
        for (const PipelineSchedule sch : space.schedule) {
          if (sch != PipelineSchedule::Interleaved) {
            schedules.emplace_back(sch, 1);
            continue;
          }
          for (const std::int64_t v : space.virtual_stages) {
            if (v > 1) schedules.emplace_back(sch, v);
          }
        }
      }
      std::vector<bool> sps;
      if (tp == 1) {
        sps.push_back(false);
      } else {
        for (const bool sp : space.sequence_parallel) {
          if (std::find(sps.begin(), sps.end(), sp) == sps.end()) sps.push_back(sp);
        }
      }
      for (const auto& [schedule, v] : schedules) {
        for (const std::int64_t cp : space.cp) {
          parallel::ParallelPlan degrees = base.parallel;
          degrees.tp = tp;
          degrees.pp = pp;
          degrees.cp = cp;
          // Checked: the product of three degrees could overflow; an overflowing plan cannot
          // divide the GPUs, so it gets dp 0 (invalid), as a remainder does.
          const std::optional<std::int64_t> mp = parallel::model_parallel_size(degrees);
          const std::int64_t dp = mp && base.gpus % *mp == 0 ? base.gpus / *mp : 0;
          // EP is carved out of the data-parallel ranks only (validate refuses it with cp > 1).
          const bool automatic_ep = moe && space.ep.empty();
          const std::vector<std::int64_t> eps =
              !moe ? std::vector<std::int64_t>{1}
              : automatic_ep
                  ? (cp == 1 ? expert_parallel_degrees(dp, base.model.num_experts)
                             : std::vector<std::int64_t>{1})
                  : space.ep;
          for (const std::int64_t ep : eps) {
            for (const bool sp : sps) {
              for (const std::int64_t mb : space.micro_batch) {
                for (const parallel::Sharding sharding : space.sharding) {
                  if (automatic_ep && ep > 1 && sharding == parallel::Sharding::HybridShard) {
                    continue;  // refused by validate: not modelled
                  }
                  for (const parallel::Recompute recompute : space.recompute) {
                    parallel::Scenario s = base;
                    parallel::ParallelPlan& p = s.parallel;
                    p.tp = tp;
                    p.pp = pp;
                    p.cp = cp;
                    p.ep = ep;
                    p.schedule = schedule;
                    p.virtual_stages = v;
                    p.sequence_parallel = sp;
                    p.sharding = sharding;
                    p.recompute = recompute;
                    s.training.micro_batch = mb;
                    p.dp = dp;
                    out.push_back(std::move(s));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

SearchResult search(const parallel::Scenario& base, const SearchSpace& space, Objective objective,
                    int jobs, const Shard& shard, const Progress& progress,
                    report::SimulationMode mode) {
  std::vector<parallel::Scenario> plans = enumerate_plans(base, space);
  SearchResult result;
  result.enumerated = static_cast<std::int64_t>(plans.size());
  std::vector<Candidate> mine;
  for (std::int64_t i = 0; i < result.enumerated; ++i) {
    if (shard.selects(i)) {
      mine.push_back(Candidate{.index = i,
                               .scenario = std::move(plans[static_cast<std::size_t>(i)]),
                               .evaluation = {}});
    }
  }
  result.in_shard = static_cast<std::int64_t>(mine.size());
  parallel_for(
      result.in_shard, jobs,
      [&mine, mode](std::int64_t k) {
        Candidate& c = mine[static_cast<std::size_t>(k)];
        c.evaluation = evaluate(c.scenario, mode);
      },
      progress);
  for (Candidate& c : mine) {
    switch (c.evaluation.status) {
      case Status::Invalid: ++result.invalid; break;
      case Status::OutOfMemory: ++result.out_of_memory; break;
      case Status::Ok:
        ++result.simulated;
        // The simulated memory can differ from memory_peak's only if the models disagree;
        // a plan that does not fit is never ranked.
        if (c.evaluation.report->memory.fits) result.ranked.push_back(std::move(c));
        break;
    }
  }
  std::stable_sort(result.ranked.begin(), result.ranked.end(),
                   [objective](const Candidate& a, const Candidate& b) {
                     const double sa = score(*a.evaluation.report, objective);
                     const double sb = score(*b.evaluation.report, objective);
                     if (sa != sb) return sa > sb;
                     return a.index < b.index;
                   });
  return result;
}

}  // namespace trainsim::sweep
