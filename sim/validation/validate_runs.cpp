#include "trainsim/validation/validate_runs.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <string>

#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"
#include "trainsim/report/simulate.hpp"
#include "trainsim/sweep/evaluate.hpp"

#include "sim/io/scenario_loader.hpp"
#include "sim/validation/mapping.hpp"

namespace trainsim::validation {
namespace {

// The runs file's key behind a scenario key the mapping wrote, for a skip reason that quotes
// the loader's pointer (validation/README.md's schema; docs/validation.md, "Mapping a row to a
// scenario"): " (the row's global_batch_sequences)". Empty for a key of no one field.
std::string runs_key_of(const std::string& pointer) {
  static const std::array<std::pair<std::string_view, std::string_view>, 14> kKeys = {{
      {"/training/global_batch", "global_batch_sequences"},
      {"/training/micro_batch", "micro_batch"},
      {"/training/seq_len", "seq_len"},
      {"/cluster/gpus", "gpus"},
      {"/parallel/tp", "tp"},
      {"/parallel/pp", "pp"},
      {"/parallel/cp", "cp"},
      {"/parallel/virtual_stages", "virtual_pp"},
      {"/model/layers", "n_layers"},
      {"/model/hidden", "hidden"},
      {"/model/heads", "n_heads"},
      {"/model/kv_heads", "n_kv_heads"},
      {"/model/ffn_hidden", "ffn_hidden"},
      {"/model/vocab", "vocab"},
  }};
  for (const auto& [scenario_key, row_key] : kKeys) {
    if (pointer == scenario_key) return " (the row's " + std::string(row_key) + ")";
  }
  return "";
}

// One candidate plan of one row: its scenario document and, after evaluation, the outcome.
struct Candidate {
  std::size_t row = 0;  // index into the rows being validated
  std::int64_t micro_batch = 1;
  std::int64_t virtual_stages = 1;
  parallel::Recompute recompute = parallel::Recompute::None;
  std::optional<parallel::Scenario> scenario{};  // empty when the loader refused the document
  std::string load_error{};
  sweep::Evaluation evaluation{};
};

// The row's metric predicted from a simulated report.
double predicted_value(const RowResult& row, const Mapping& mapping, const PublishedRun& run,
                       const report::Report& r) {
  const parallel::Scenario& s = row.scenario;
  const double time = r.iteration_time.value();
  switch (mapping.metric) {
    case Metric::TokensPerSecondPerGpu:
      return r.tokens_per_s_per_gpu;
    case Metric::IterationTime:
      return time;
    case Metric::FlopRatePerGpu:
    case Metric::Mfu:
    case Metric::Hfu: {
      const SourceFlops f =
          source_flops(mapping.source->convention, s.model, s.training.global_batch,
                       s.training.seq_len, s.parallel.recompute);
      const double gpus = static_cast<double>(s.gpus);
      if (mapping.metric == Metric::FlopRatePerGpu) {
        const Flops counted =
            tflops_count_hardware_flops(mapping.source->convention) ? f.hardware : f.model;
        return counted.value() / (time * gpus);
      }
      // The source's peak when it states one, else the profile's for the training dtype.
      const double peak =
          run.peak_tflops ? *run.peak_tflops * 1e12 : s.hardware.peak(s.training.precision).value();
      const Flops counted = mapping.metric == Metric::Mfu ? f.model : f.hardware;
      return counted.value() / (time * gpus * peak);
    }
  }
  return 0.0;
}

// A peak the source states that is neither the profile's peak for the training dtype nor its
// 16-bit peak (against which sources quote MFU for FP8 runs: Megatron-Bridge's tables) within
// 5%, which covers how sources round them (1,000 for the H100 SXM's 989): the row ran on a GPU
// the profile does not model (an H100 PCIe, 756, or NVL, 835, whose text does not name the
// card would map to h100-dgx), and its
// MFU would be predicted against a peak the simulation does not run at (a stated 100 on h100-dgx
// gave a predicted MFU of 138%).
std::optional<std::string> peak_mismatch(const PublishedRun& run, const parallel::Scenario& s) {
  if (!run.peak_tflops) return std::nullopt;
  const double stated = *run.peak_tflops * 1e12;
  const double own = s.hardware.peak(s.training.precision).value();
  const double sixteen = s.hardware.peak(hardware::Dtype::Bf16).value() > 0.0
                             ? s.hardware.peak(hardware::Dtype::Bf16).value()
                             : s.hardware.peak(hardware::Dtype::Fp16).value();
  const auto near = [stated](double peak) {
    return peak > 0.0 && std::abs(stated / peak - 1.0) <= 0.05;
  };
  if (near(own) || near(sixteen)) return std::nullopt;
  std::array<char, 256> text{};
  if (own == sixteen) {
    (void)std::snprintf(text.data(), text.size(),
                        "stated peak %.4g TFLOP/s differs from the %s peak of profile '%s' "
                        "(%.4g TFLOP/s) by more than 5%%: a GPU the profile does not model",
                        *run.peak_tflops, parallel::to_string(s.training.precision),
                        s.hardware.id.c_str(), own / 1e12);
  } else {
    (void)std::snprintf(text.data(), text.size(),
                        "stated peak %.4g TFLOP/s differs from both the %s peak (%.4g TFLOP/s) "
                        "and the 16-bit peak (%.4g TFLOP/s) of profile '%s' by more than 5%%: a "
                        "GPU the profile does not model",
                        *run.peak_tflops, parallel::to_string(s.training.precision), own / 1e12,
                        sixteen / 1e12, s.hardware.id.c_str());
  }
  return std::string(text.data());
}

// A measured throughput above the GPU's peak, which no run reaches: a unit mistake (the whole
// cluster's tokens/s in the per-GPU key, an iteration time in milliseconds, FLOP/s for TFLOP/s)
// that was compared as a row 90% off. Tokens/s (or the time's) are priced at the matmul part of
// trainsim's model FLOPs per token, 6N, attention left out: a lower bound of what any run
// executes per token (model::model_flops_per_token less attention_model_flops_per_token; the
// attention term counts the whole s x s product, twice a causal kernel's work, so with it a
// Llama 3 8B row at sequence 262,144 would be skipped at 55% of the peak); TFLOP/s as the source
// counts them, recomputation included. The peak is the profile's for the training dtype, or the
// source's stated one where higher (an FP8 run's TFLOP/s against its 16-bit peak). Skipped with
// the figures, as the rows whose measurements contradict each other are (mapping.cpp).
std::optional<std::string> beyond_peak(const PublishedRun& run, const Mapping& m,
                                       const parallel::Scenario& s) {
  double peak = s.hardware.peak(s.training.precision).value();
  if (run.peak_tflops) peak = std::max(peak, *run.peak_tflops * 1e12);
  const double per_token = (model::model_flops_per_token(s.model, s.training.seq_len) -
                            model::attention_model_flops_per_token(s.model, s.training.seq_len))
                               .value();
  double rate = 0.0;
  std::array<char, 128> what{};
  switch (m.metric) {
    case Metric::TokensPerSecondPerGpu:
      rate = m.measured * per_token;
      (void)std::snprintf(what.data(), what.size(), "tokens_per_sec_per_gpu %.6g", m.measured);
      break;
    case Metric::IterationTime:
      rate = static_cast<double>(s.training.global_batch) *
             static_cast<double>(s.training.seq_len) / (m.measured * static_cast<double>(s.gpus)) *
             per_token;
      (void)std::snprintf(what.data(), what.size(), "iteration_time_s %.6g", m.measured);
      break;
    case Metric::FlopRatePerGpu:
      rate = m.measured;
      (void)std::snprintf(what.data(), what.size(), "tflops_per_gpu %.6g", m.measured / 1e12);
      break;
    case Metric::Mfu:
    case Metric::Hfu:
      return std::nullopt;  // a fraction of the peak, at most 1 (runs_reader.cpp)
  }
  if (!(rate > peak)) return std::nullopt;
  std::array<char, 512> text{};
  if (m.metric == Metric::FlopRatePerGpu) {
    (void)std::snprintf(text.data(), text.size(),
                        "%s is above the GPU's peak of %.4g TFLOP/s: a unit mistake?", what.data(),
                        peak / 1e12);
  } else {
    (void)std::snprintf(text.data(), text.size(),
                        "%s is %.4g TFLOP/s per GPU at 6N = %.4g GFLOP per token, above the "
                        "GPU's peak of %.4g TFLOP/s: a unit mistake (the whole cluster's tokens/s, "
                        "a time in another unit)?",
                        what.data(), rate / 1e12, per_token / 1e9, peak / 1e12);
  }
  return std::string(text.data());
}

void compare(RowResult& row, const Mapping& mapping, const PublishedRun& run,
             const report::Report& r) {
  row.compared = true;
  row.metric = mapping.metric;
  row.measured = mapping.measured;
  row.predicted = predicted_value(row, mapping, run, r);
  // Throughput terms: a shorter predicted iteration is a faster prediction.
  row.error = mapping.metric == Metric::IterationTime ? row.measured / row.predicted - 1.0
                                                      : row.predicted / row.measured - 1.0;
  row.fits = r.memory.fits;
}

}  // namespace

const char* to_string(Metric m) {
  switch (m) {
    case Metric::TokensPerSecondPerGpu:
      return "tokens_per_s_per_gpu";
    case Metric::IterationTime:
      return "iteration_time_s";
    case Metric::FlopRatePerGpu:
      return "flop_per_s_per_gpu";
    case Metric::Mfu:
      return "mfu";
    case Metric::Hfu:
      return "hfu";
  }
  return "tokens_per_s_per_gpu";
}

bool source_matches(const PublishedRun& run, const std::string& filter) {
  const std::string text = lower(filter);
  if (lower(run.source_group).find(text) != std::string::npos) return true;
  const SourceProfile* source = find_source(run);
  return source != nullptr && lower(source->name).find(text) != std::string::npos;
}

ValidationReport validate_runs(const std::vector<PublishedRun>& runs,
                               const ValidationOptions& options) {
  std::vector<const PublishedRun*> kept;
  for (const PublishedRun& run : runs) {
    if (source_matches(run, options.source_filter)) kept.push_back(&run);
  }
  std::vector<RowResult> rows(kept.size());
  std::vector<std::optional<Mapping>> mappings(kept.size());
  std::vector<Candidate> candidates;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const PublishedRun& run = *kept[i];
    RowResult& row = rows[i];
    row.index = run.index;
    row.id = run.id;
    row.source_group = run.source_group;
    const SourceProfile* source = find_source(run);
    row.source = source != nullptr ? std::string(source->name) : "unmapped";
    mappings[i] = map_run(run, row.skip_reason);
    if (!mappings[i]) continue;
    if (const auto other = options.stacks.find(std::string(mappings[i]->source->stack));
        other != options.stacks.end()) {
      nlohmann::json replaced = other->second;
      // The keys the row sets (its FP8 recipe, its gradient-reduce dtype), inlined by map_run
      // into the source's stack, carry over.
      if (!mappings[i]->stack_overrides.empty()) {
        replaced.merge_patch(mappings[i]->stack_overrides);
      }
      mappings[i]->base["stack"] = std::move(replaced);
      // The row ran another stack than its source's: said with the row, in every format (the
      // row's stack column keeps the built-in id, which the refits group rows by).
      const auto file = options.stack_files.find(other->first);
      mappings[i]->assumptions.push_back("stack '" + other->first + "' replaced by " +
                                         (file != options.stack_files.end()
                                              ? file->second
                                              : std::string("the caller's document")) +
                                         " (--stack)");
    }
    const Mapping& m = *mappings[i];
    row.convention = m.source->convention;
    row.metric = m.metric;
    row.measured = m.measured;
    row.hardware = m.hardware;
    row.stack = std::string(m.source->stack);
    row.assumptions = m.assumptions;
    for (const auto recompute : m.recomputes) {
      for (const std::int64_t vs : m.virtual_stages) {
        for (const std::int64_t mb : m.micro_batches) {
          candidates.push_back(
              Candidate{.row = i, .micro_batch = mb, .virtual_stages = vs, .recompute = recompute});
        }
      }
    }
  }

  // Every candidate of every row through the path of `trainsim run`: the scenario loader, then
  // parallel::validate, the memory check and the simulation (sweep::evaluate).
  // Costliest first (pipeline steps: pp x chunks x micro-batches), so that the long
  // simulations of deep pipelines do not start last and leave the other threads idle. Each
  // candidate's outcome is independent of the order, so the output is not.
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto cost = [&](const Candidate& c) {
    const nlohmann::json& par = mappings[c.row]->base["parallel"];
    const PublishedRun& run = *kept[c.row];
    const std::int64_t microbatches = *run.global_batch / (*run.dp * c.micro_batch);
    return par["pp"].get<std::int64_t>() * c.virtual_stages * microbatches;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return cost(candidates[a]) > cost(candidates[b]);
  });
  sweep::parallel_for(
      static_cast<std::int64_t>(candidates.size()), options.jobs, [&](std::int64_t k) {
        Candidate& c = candidates[order[static_cast<std::size_t>(k)]];
        const PublishedRun& run = *kept[c.row];
        io::ScenarioDocument doc;
        doc.json =
            candidate_document(*mappings[c.row], c.micro_batch, c.virtual_stages, c.recompute);
        doc.source = run.id;
        try {
          c.scenario = io::scenario_from_document(doc);
        } catch (const ConfigError& e) {
          c.load_error = e.message() + runs_key_of(e.pointer());
          return;
        }
        c.evaluation = sweep::evaluate(*c.scenario);
      });

  // Per row: the fastest candidate that fits; when none fits, the one needing the least memory
  // is simulated anyway and flagged, since the source did run it.
  std::vector<std::size_t> first(rows.size(), candidates.size());
  std::vector<std::size_t> best(rows.size(), candidates.size());
  std::vector<std::size_t> smallest(rows.size(), candidates.size());
  std::vector<std::int64_t> count(rows.size(), 0), fitting(rows.size(), 0);
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const Candidate& c = candidates[k];
    const std::size_t i = c.row;
    if (first[i] == candidates.size()) first[i] = k;
    ++count[i];
    if (!c.scenario) continue;
    const sweep::Evaluation& e = c.evaluation;
    if (e.status == sweep::Status::Ok) {
      ++fitting[i];
      if (best[i] == candidates.size() ||
          e.report->tokens_per_s > candidates[best[i]].evaluation.report->tokens_per_s) {
        best[i] = k;
      }
    } else if (e.status == sweep::Status::OutOfMemory) {
      if (smallest[i] == candidates.size() ||
          e.memory.total < candidates[smallest[i]].evaluation.memory.total) {
        smallest[i] = k;
      }
    }
  }
  std::vector<std::size_t> fallback;  // rows whose least-memory candidate must be simulated
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!mappings[i]) continue;
    if (best[i] == candidates.size() && smallest[i] != candidates.size()) fallback.push_back(i);
  }
  std::vector<std::optional<report::Report>> fallback_reports(fallback.size());
  sweep::parallel_for(static_cast<std::int64_t>(fallback.size()), options.jobs,
                      [&](std::int64_t k) {
                        const auto j = static_cast<std::size_t>(k);
                        const Candidate& c = candidates[smallest[fallback[j]]];
                        fallback_reports[j] = report::simulate(*c.scenario).report;
                      });

  std::size_t next_fallback = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!mappings[i]) continue;
    const Mapping& m = *mappings[i];
    RowResult& row = rows[i];
    const bool use_best = best[i] != candidates.size();
    const bool use_smallest = !use_best && smallest[i] != candidates.size();
    if (!use_best && !use_smallest) {
      // Every candidate was refused by the loader or by parallel::validate: say why (the
      // first candidate's problem).
      const Candidate& c = candidates[first[i]];
      row.skip_reason = !c.scenario ? "scenario refused: " + c.load_error
                                    : "invalid plan: " + c.evaluation.problem;
      if (count[i] > 1) row.skip_reason += " (and every other searched candidate)";
      continue;
    }
    const Candidate& c = candidates[use_best ? best[i] : smallest[i]];
    // Taken before any skip below, so that each fallback row takes its own report.
    const report::Report& predicted =
        use_best ? *c.evaluation.report : *fallback_reports[next_fallback++];
    if (auto why = peak_mismatch(*kept[i], *c.scenario)) {
      row.skip_reason = std::move(*why);
      continue;
    }
    if (auto why = beyond_peak(*kept[i], m, *c.scenario)) {
      row.skip_reason = std::move(*why);
      continue;
    }
    row.scenario = *c.scenario;
    row.document = candidate_document(m, c.micro_batch, c.virtual_stages, c.recompute);
    row.choices.candidates = count[i];
    row.choices.fitting = fitting[i];
    if (m.search_micro_batch) row.choices.micro_batch = c.micro_batch;
    if (m.search_virtual_stages) row.choices.virtual_stages = c.virtual_stages;
    if (m.search_recompute) row.choices.recompute = c.recompute;
    compare(row, m, *kept[i], predicted);
    if (!use_best) {
      row.assumptions.push_back(
          count[i] > 1 ? "no searched plan fits in trainsim's memory model; the one needing the "
                         "least memory was simulated"
                       : "the plan does not fit in trainsim's memory model; simulated anyway");
    }
  }
  return summarize(std::move(rows));
}

ValidationReport summarize(std::vector<RowResult> rows) {
  ValidationReport out;
  std::map<std::string, std::size_t> position;
  auto add = [](Summary& s, const RowResult& row) {
    if (!row.compared) {
      ++s.skipped;
      return;
    }
    ++s.compared;
    s.mape += std::abs(row.error);
    s.bias += row.error;
  };
  out.overall.source = "overall";
  for (const RowResult& row : rows) {
    auto [it, inserted] = position.emplace(row.source, out.sources.size());
    if (inserted) out.sources.push_back(Summary{.source = row.source});
    add(out.sources[it->second], row);
    add(out.overall, row);
  }
  auto finish = [](Summary& s) {
    if (s.compared == 0) return;
    s.mape /= static_cast<double>(s.compared);
    s.bias /= static_cast<double>(s.compared);
  };
  for (Summary& s : out.sources) finish(s);
  finish(out.overall);
  out.rows = std::move(rows);
  return out;
}

}  // namespace trainsim::validation
