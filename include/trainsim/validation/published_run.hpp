// One published, measured training run (a row of validation/published_runs.json) as typed
// values, and the FLOP-counting conventions its source used. `trainsim validate` maps a run to
// a scenario, simulates it and compares the prediction in the source's own metric.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/model/model_spec.hpp"
#include "trainsim/parallel/scenario.hpp"
#include "trainsim/units.hpp"

namespace trainsim::validation {

// A row as published. Unknown values are nullopt: the source did not state them (the file's
// README: "Unknown values are null; nothing was guessed silently").
struct PublishedRun {
  std::int64_t index = 0;  // position in the file (0-based); rows are reported in this order
  std::string id;
  std::string source_group;
  std::string framework;
  std::string model;                // "GPT 1.7B", free text
  std::string gpu;                  // hardware.gpu, free text ("A100-SXM4", "A100 (40GB)", "H100")
  std::optional<double> memory_gb;  // hardware.memory_gb as printed (GB of HBM)
  std::optional<double> peak_tflops;  // hardware.peak_tflops_* the source used
  std::optional<std::int64_t> gpus, gpus_per_node;
  std::optional<std::string> inter_node;  // the source's inter-node network, free text
  std::optional<std::int64_t> layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len;
  std::optional<std::int64_t> global_batch;  // global_batch_sequences
  std::optional<std::int64_t> micro_batch;
  std::optional<std::int64_t> tp, pp, dp, cp, virtual_pp;
  std::optional<bool> sequence_parallel;
  std::optional<std::string> sharding;   // zero_stage_or_fsdp, free text
  std::optional<std::string> recompute;  // activation_recompute, free text
  std::optional<std::string> precision;  // free text ("bf16", "mixed precision 16-bit")
  // Measured metrics. mfu and hfu are fractions (0.41 = 41 %).
  std::optional<double> tflops_per_gpu, mfu, hfu, tokens_per_s_per_gpu, iteration_time_s;
  std::optional<std::int64_t> grad_accum;  // extra_metrics.grad_accum, when given
  // extra_metrics.ep: the expert-parallel degree of a mixture-of-experts run, as the source
  // prints it (the row schema has no top-level expert keys; validation/README.md).
  std::optional<std::int64_t> ep;
  std::vector<std::string> derived_fields;
  bool config_complete = false;
  std::string notes;
};

// How a source counts the FLOPs behind its TFLOP/s, MFU and HFU (validation/README.md, "FLOP
// conventions of the sources").
enum class FlopConvention {
  // Narayanan et al. 2021 eq. 3, F = 96 B s l h^2 (1 + s/6h + V/16lh): one count for TFLOP/s
  // and "% of peak"; it includes the forward pass that full recomputation repeats.
  Narayanan2021,
  // Korthikanti et al. 2022 §6: model FLOPs 72 B L s h^2 (1 + s/6h + v/12hL); hardware FLOPs
  // add the recomputed work.
  Korthikanti2022,
  // Megatron-Core's num_floating_point_operations (megatron/training/training.py, core_r0.8):
  // 12 B s L h^2 ((1 + g/a + s/h) q/h + f/h * gated + V/2Lh), gated = 3/2 for SwiGLU.
  MegatronCore2024,
  // torchtitan and llm-foundry: (6 N + 12 L h s) per token, N every parameter including the
  // embeddings; llm-foundry's HFU counts 4 instead of 3 passes with activation checkpointing.
  PalmWithEmbeddings,
  // Not stated by the source: TFLOP/s, MFU and HFU cannot be compared.
  Unstated,
};

// FLOPs of one iteration of `batch` sequences under a convention: what the source's model-FLOP
// figures (TFLOP/s for all but Narayanan, MFU) and hardware-FLOP figures (HFU) count.
struct SourceFlops {
  Flops model;
  Flops hardware;
};

// Requires convention != Unstated, batch >= 1, seq_len >= 1.
[[nodiscard]] SourceFlops source_flops(FlopConvention convention, const model::ModelSpec& m,
                                       std::int64_t batch, std::int64_t seq_len,
                                       parallel::Recompute recompute);

// Whether the source's `tflops_per_gpu` counts hardware FLOPs (Narayanan 2021's eq. 3 includes
// the recomputed forward) rather than model FLOPs.
[[nodiscard]] bool tflops_count_hardware_flops(FlopConvention convention);

// "narayanan2021", "korthikanti2022", "megatron-core-2024", "6N+12Lhs (embeddings included)",
// "unstated".
[[nodiscard]] const char* to_string(FlopConvention c);

}  // namespace trainsim::validation
