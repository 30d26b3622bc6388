#include "trainsim/sweep/search.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>
#include <utility>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/workload/iteration.hpp"

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
                  if (automatic_ep && ep > 1 &&
                      (sharding == parallel::Sharding::HybridShard || (tp > 1 && !sp))) {
                    continue;  // refused by validate: not modelled, or Megatron-Core refuses it
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

namespace {

// A bound's rounding: compute_lower_bound sums the kernels' durations in another order than the
// engine does, each addition rounding at 2^-53 relative. A plan is bounded out only when its
// bound is below the threshold by more than this fraction.
constexpr double kBoundTolerance = 1e-9;

bool below(double bound, double threshold) {
  return bound * (1.0 + kBoundTolerance) < threshold;
}

// The most tokens/s `s` can reach: the step's tokens over its compute lower bound.
double tokens_per_s_bound(const parallel::Scenario& s) {
  const double lower =
      workload::compute_lower_bound(s, collective::CollectiveModel(s.hardware)).value();
  const double tokens =
      static_cast<double>(s.training.global_batch) * static_cast<double>(s.training.seq_len);
  return lower > 0.0 ? tokens / lower : std::numeric_limits<double>::infinity();
}

// Plans simulated together in a bounded search, a fixed number so that which plans are
// simulated does not depend on the threads.
constexpr std::size_t kBoundedBatch = 32;

// Best first: higher bound, then lower index.
bool bound_order(const Candidate& a, const Candidate& b) {
  if (a.bound != b.bound) return a.bound > b.bound;
  return a.index < b.index;
}

void rank(std::vector<Candidate>& ranked, Objective objective) {
  std::stable_sort(ranked.begin(), ranked.end(),
                   [objective](const Candidate& a, const Candidate& b) {
                     const double sa = score(*a.evaluation.report, objective);
                     const double sb = score(*b.evaluation.report, objective);
                     if (sa != sb) return sa > sb;
                     return a.index < b.index;
                   });
}

// The enumeration index of each plan's first twin: the first plan of `plans` equal to it in
// every field but the sharding mode. enumerate_plans sets the fields compared here and copies
// the rest from one base, so plans equal in them are one plan under another sharding mode; a
// plan whose sharding is inert (report::sharding_is_inert) shares its twins' simulation
// (SimulationMemo) under this key.
std::vector<std::int64_t> sharding_twins(const std::vector<parallel::Scenario>& plans) {
  using Key =
      std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool,
                 parallel::PipelineSchedule, std::int64_t, parallel::Recompute, std::int64_t>;
  std::map<Key, std::int64_t> first;
  std::vector<std::int64_t> twins;
  twins.reserve(plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const parallel::ParallelPlan& p = plans[i].parallel;
    const Key key{p.tp,        p.pp,
                  p.cp,        p.dp,
                  p.ep,        p.sequence_parallel,
                  p.schedule,  p.virtual_stages,
                  p.recompute, plans[i].training.micro_batch};
    twins.push_back(first.emplace(key, static_cast<std::int64_t>(i)).first->second);
  }
  return twins;
}

// Evaluates every candidate; one whose sharding is inert takes its simulation from `memo`
// under its first twin's index (`twins`, by enumeration index). Twins are evaluated together, one
// after the other on one thread, so that the thread which simulates a plan is the one that takes
// it from the memo: handed out one by one, a thread reaching a twin in flight waited for it
// (117 ms of the 0.25 s an exhaustive search of llama3-70b on 16 H100 took on 2 threads).
void simulate_all(std::vector<Candidate>& cs, int jobs, report::SimulationMode mode,
                  const Progress& progress, const std::vector<std::int64_t>& twins,
                  SimulationMemo& memo) {
  // The candidates of each twin key, keys in order of first appearance.
  std::vector<std::vector<std::size_t>> groups;
  std::map<std::int64_t, std::size_t> group_of;
  for (std::size_t k = 0; k < cs.size(); ++k) {
    const std::int64_t key = twins[static_cast<std::size_t>(cs[k].index)];
    const auto [it, added] = group_of.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(k);
  }
  std::mutex progress_mutex;  // progress calls are serialised (Progress)
  std::int64_t done = 0;
  parallel_for(static_cast<std::int64_t>(groups.size()), jobs, [&](std::int64_t g) {
    const std::vector<std::size_t>& group = groups[static_cast<std::size_t>(g)];
    for (const std::size_t k : group) {
      Candidate& c = cs[k];
      c.evaluation = evaluate(c.scenario, mode, memo, twins[static_cast<std::size_t>(c.index)]);
    }
    if (progress) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      done += static_cast<std::int64_t>(group.size());
      progress(done, static_cast<std::int64_t>(cs.size()));
    }
  });
}

}  // namespace

SearchResult search(const parallel::Scenario& base, const SearchSpace& space, Objective objective,
                    int jobs, const Shard& shard, const Progress& progress,
                    report::SimulationMode mode, std::int64_t keep_top) {
  std::vector<parallel::Scenario> plans = enumerate_plans(base, space);
  const std::vector<std::int64_t> twins = sharding_twins(plans);
  SimulationMemo memo;
  SearchResult result;
  result.enumerated = static_cast<std::int64_t>(plans.size());
  std::vector<Candidate> mine;
  // The cost per million tokens is the search's GPUs times their price over tokens/s
  // (report::derive), both the same for every plan of one search: it ranks plans as tokens/s
  // does, and a plan whose tokens/s bound falls short of the keep_top-th best by the bound's
  // tolerance costs more than it, beyond any rounding. Tokens per joule also depends on power.
  const bool bounded =
      keep_top > 0 &&
      (objective == Objective::TokensPerS || objective == Objective::UsdPerMillionTokens) &&
      shard.count == 1;
  if (!bounded) {
    for (std::int64_t i = 0; i < result.enumerated; ++i) {
      if (shard.selects(i)) {
        mine.push_back(Candidate{.index = i,
                                 .scenario = std::move(plans[static_cast<std::size_t>(i)]),
                                 .evaluation = {}});
      }
    }
    simulate_all(mine, jobs, mode, progress, twins, memo);
  } else {
    // Screen every plan: validity, memory, and the bound of those that run and fit.
    std::vector<Candidate> all(plans.size());
    parallel_for(result.enumerated, jobs, [&all, &plans](std::int64_t i) {
      Candidate& c = all[static_cast<std::size_t>(i)];
      c.index = i;
      c.scenario = std::move(plans[static_cast<std::size_t>(i)]);
      c.evaluation = screen(c.scenario);
      if (c.evaluation.status == Status::Ok) c.bound = tokens_per_s_bound(c.scenario);
    });
    std::vector<Candidate> open;
    for (Candidate& c : all) {
      if (c.evaluation.status == Status::Ok) {
        open.push_back(std::move(c));
      } else {
        mine.push_back(std::move(c));
      }
    }
    std::stable_sort(open.begin(), open.end(), bound_order);
    // Best bound first, kBoundedBatch plans at a time: the threshold rises as good plans are
    // found, and once a plan's bound is below it so are those of all the plans after it. A plan
    // that can reach the best keep_top has a bound at least their tokens/s, so it is simulated
    // before the threshold can pass it: the printed plans do not depend on the order.
    std::vector<double> best;  // the best keep_top tokens/s so far, best first
    std::size_t next = 0;
    while (next < open.size() && !below(open[next].bound, result.threshold)) {
      const std::size_t end = std::min(open.size(), next + kBoundedBatch);
      const auto at = [&open](std::size_t k) {
        return std::make_move_iterator(open.begin() + static_cast<std::ptrdiff_t>(k));
      };
      std::vector<Candidate> batch(at(next), at(end));
      next = end;
      simulate_all(batch, jobs, mode, {}, twins, memo);
      for (Candidate& c : batch) {
        if (c.evaluation.report && c.evaluation.report->memory.fits) {
          best.insert(std::upper_bound(best.begin(), best.end(), c.evaluation.report->tokens_per_s,
                                       std::greater<>()),
                      c.evaluation.report->tokens_per_s);
          if (best.size() > static_cast<std::size_t>(keep_top)) best.pop_back();
        }
        mine.push_back(std::move(c));
      }
      if (best.size() == static_cast<std::size_t>(keep_top)) result.threshold = best.back();
      if (progress) {
        progress(static_cast<std::int64_t>(next), static_cast<std::int64_t>(open.size()));
      }
    }
    if (progress) {
      progress(static_cast<std::int64_t>(open.size()), static_cast<std::int64_t>(open.size()));
    }
    for (; next < open.size(); ++next) {
      ++result.bounded;
      result.bounded_out.push_back(std::move(open[next]));
    }
  }
  result.in_shard = static_cast<std::int64_t>(mine.size()) + result.bounded;
  for (Candidate& c : mine) {
    switch (c.evaluation.status) {
      case Status::Invalid: {
        ++result.invalid;
        const std::string& problem = c.evaluation.problem;
        const std::string key = problem.substr(0, problem.find(": "));
        auto it =
            std::find_if(result.invalid_reasons.begin(), result.invalid_reasons.end(),
                         [&key](const SearchResult::InvalidReason& r) { return r.key == key; });
        if (it == result.invalid_reasons.end()) {
          result.invalid_reasons.push_back({.key = key, .count = 0, .example = problem});
          it = result.invalid_reasons.end() - 1;
        }
        ++it->count;
        break;
      }
      case Status::OutOfMemory:
        ++result.out_of_memory;
        if (!result.least_out_of_memory ||
            c.evaluation.memory.total < *result.least_out_of_memory) {
          result.least_out_of_memory = c.evaluation.memory.total;
          result.least_out_of_memory_problem = c.evaluation.problem;
          result.least_out_of_memory_plan = c.scenario;
        }
        break;
      case Status::Ok:
        ++result.simulated;
        // The simulated memory can differ from memory_peak's only if the models disagree;
        // a plan that does not fit is never ranked.
        if (c.evaluation.report->memory.fits) result.ranked.push_back(std::move(c));
        break;
    }
  }
  std::stable_sort(result.invalid_reasons.begin(), result.invalid_reasons.end(),
                   [](const SearchResult::InvalidReason& a, const SearchResult::InvalidReason& b) {
                     return a.count > b.count;
                   });
  rank(result.ranked, objective);
  return result;
}

std::optional<std::size_t> best_where(SearchResult& result,
                                      const std::function<bool(const parallel::Scenario&)>& keep,
                                      Objective objective, report::SimulationMode mode) {
  auto first_kept = [&]() -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < result.ranked.size(); ++i) {
      if (keep(result.ranked[i].scenario)) return i;
    }
    return std::nullopt;
  };
  std::optional<std::size_t> best = first_kept();
  // bounded_out is best bound first: once a bound cannot beat the best, none after it can.
  for (auto it = result.bounded_out.begin(); it != result.bounded_out.end();) {
    if (!keep(it->scenario)) {
      ++it;
      continue;
    }
    // The bound is in tokens/s, and both bounded objectives rank as tokens/s does (search):
    // compared with the cost's negated score, no bound was ever below it, and --explain
    // simulated every bounded-out plan of its class.
    if (best && below(it->bound, result.ranked[*best].evaluation.report->tokens_per_s)) {
      break;
    }
    Candidate c = std::move(*it);
    it = result.bounded_out.erase(it);
    c.evaluation = evaluate(c.scenario, mode);
    if (c.evaluation.report && c.evaluation.report->memory.fits) {
      result.ranked.push_back(std::move(c));
      rank(result.ranked, objective);
      best = first_kept();
    }
  }
  return best;
}

}  // namespace trainsim::sweep
