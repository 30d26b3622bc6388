// A scenario: the hardware, the model, the software stack, the cluster size, the training
// configuration and the parallel plan of one simulated run. io/scenario_loader builds one from JSON
// and CLI flags; parallel/validate checks it; everything downstream trusts a validated scenario.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/model/model_spec.hpp"
#include "trainsim/stack/stack_spec.hpp"

namespace trainsim::parallel {

// How data-parallel ranks shard the training state (PyTorch FSDP / DeepSpeed ZeRO names).
enum class Sharding {
  None,         // DDP: everything replicated, gradients AllReduced in buckets
  Zero1,        // optimizer state sharded
  ShardGradOp,  // ZeRO-2 / FSDP SHARD_GRAD_OP: grads + optimizer sharded, params gathered once
  FullShard,  // ZeRO-3 / FSDP FULL_SHARD: params gathered before forward and again before backward
  HybridShard,  // FULL_SHARD inside a group of shard_group ranks, replicated across groups
};

enum class Recompute { None, Selective, Full };
enum class PipelineSchedule { GPipe, OneFOneB, Interleaved };
enum class Optimizer { AdamW, Sgd };

struct ParallelPlan {
  std::int64_t tp = 1;             // tensor parallel degree
  std::int64_t pp = 1;             // pipeline stages
  std::int64_t cp = 1;             // context parallel degree
  std::int64_t dp = 1;             // derived: gpus / (tp * pp * cp)
  // Expert-parallel degree of the MoE layers (default 1): EP groups of `ep` consecutive
  // data-parallel ranks each hold num_experts / ep routed experts, carved out of the DP ranks
  // as Megatron-Core does; the non-expert weights stay replicated over all dp ranks. Divides dp
  // and num_experts. Expert tensor parallelism equals tp (Megatron-Core's default,
  // expert_tensor_parallel_size = tensor_model_parallel_size).
  std::int64_t ep = 1;
  bool sequence_parallel = false;  // Megatron SP: norms/dropout split over TP, RS+AG instead of AR
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  std::int64_t virtual_stages = 1;  // model chunks per pipeline rank (interleaved 1F1B)
  Sharding sharding = Sharding::ShardGradOp;
  std::int64_t shard_group = 0;  // hybrid_shard: ranks per shard group (0 = one node's worth)
  Recompute recompute = Recompute::None;
  // With recompute Full: how many layers of each model chunk (a pipeline stage's layers, or a
  // virtual stage's) are recomputed, the first ones; the others keep their activations
  // (Megatron-LM's --recompute-method block --recompute-num-layers). 0: every layer.
  std::int64_t recompute_layers = 0;
  // Megatron-Core's account_for_embedding_in_pipeline_split and
  // account_for_loss_in_pipeline_split: the embedding (the loss) counts as one layer of the
  // pipeline split, in the first (last) model chunk, which then holds one transformer layer
  // fewer (megatron/core/transformer/transformer_block.py, get_num_layers_to_build). The layers
  // plus the counted ones must divide evenly over pp x virtual_stages chunks, as Megatron-Core
  // requires.
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  // Megatron-Core's pipeline_model_parallel_layout, as the transformer layers of each model
  // chunk in model order (pp x virtual_stages entries of at least 1, summing to the model's
  // layers); the embedding is in the first chunk and the loss in the last, as always. Empty: the
  // splits above. Megatron-Core's layout string ("Et*4|(t*4|)*14tmL") names each chunk's
  // layers the same way; its multi-token prediction entries ("m") are
  // not given here: the model's mtp_layers join the last chunk (chunk_layers of a Scenario).
  std::vector<std::int64_t> pipeline_layout;
};

// The layers of model chunk `chunk` (0-based in model order; `chunks` = pp x virtual_stages of
// them, chunk c on pipeline stage c % pp): as even as possible, the first num_layers % chunks
// chunks taking one more. The one assignment the builder, memory, HFU and validation share
// (through the plan's overload below).
struct ChunkLayers {
  std::int64_t first = 0;  // global index of the chunk's first layer
  std::int64_t count = 0;
};
[[nodiscard]] inline ChunkLayers chunk_layers(std::int64_t num_layers, std::int64_t chunks,
                                              std::int64_t chunk) {
  const std::int64_t base = num_layers / chunks;
  const std::int64_t extra = num_layers % chunks;
  return {chunk * base + std::min(chunk, extra), base + (chunk < extra ? 1 : 0)};
}

// The plan's assignment: the even split above, or with the embedding (loss) counted in the
// split, (num_layers + counted) / chunks slots per chunk, the first (last) chunk's first (last)
// slot taken by the embedding (loss). parallel::validate requires the slots to divide evenly and
// every chunk to keep a layer.
[[nodiscard]] inline ChunkLayers chunk_layers(const ParallelPlan& p, std::int64_t num_layers,
                                              std::int64_t chunk) {
  if (!p.pipeline_layout.empty()) {
    // The layout's chunks (a chunk past a layout of the wrong length, which parallel::validate
    // refuses, holds none).
    const auto size = static_cast<std::int64_t>(p.pipeline_layout.size());
    std::int64_t first = 0;
    for (std::int64_t c = 0; c < std::min(chunk, size); ++c) {
      first += p.pipeline_layout[static_cast<std::size_t>(c)];
    }
    return {std::min(first, num_layers),
            chunk < size ? p.pipeline_layout[static_cast<std::size_t>(chunk)] : 0};
  }
  const std::int64_t chunks = p.pp * p.virtual_stages;
  const std::int64_t embedding = p.account_for_embedding_in_pipeline_split ? 1 : 0;
  const std::int64_t loss = p.account_for_loss_in_pipeline_split ? 1 : 0;
  if (embedding + loss == 0) return chunk_layers(num_layers, chunks, chunk);
  const std::int64_t slots = (num_layers + embedding + loss) / chunks;
  const std::int64_t first = chunk == 0 ? 0 : chunk * slots - embedding;
  const std::int64_t count =
      slots - (chunk == 0 ? embedding : 0) - (chunk == chunks - 1 ? loss : 0);
  return {first, count};
}

// Whether layer `index_in_chunk` (0-based within its model chunk) is recomputed whole: recompute
// Full and among the chunk's first recompute_layers layers (all when 0).
[[nodiscard]] inline bool recomputes_whole_layer(const ParallelPlan& p,
                                                 std::int64_t index_in_chunk) {
  return p.recompute == Recompute::Full &&
         (p.recompute_layers == 0 || index_in_chunk < p.recompute_layers);
}

// Bounds on a scenario, checked where it is read (io::scenario_from_document). Clusters of
// 2^24 GPUs, contexts of 2^24 tokens and 2^30 sequences per step are far beyond any training
// run; within them, with the model's bounds (model_spec.hpp), every product the simulation
// forms fits an int64: tokens per step (global_batch * seq_len <= 2^54), tokens of a
// micro-batch (micro_batch * seq_len, at most kMaxMicroBatchTokens) times any width. The
// micro-batch's tokens are the plan's bound (parallel::validate, before anything forms such a
// product); the loader bounds the micro-batch alone by kMaxMicroBatchTokens.
inline constexpr std::int64_t kMaxGpus = std::int64_t{1} << 24U;  // also nodes * gpus_per_node
inline constexpr std::int64_t kMaxSeqLen = std::int64_t{1} << 24U;
inline constexpr std::int64_t kMaxGlobalBatch = std::int64_t{1} << 30U;
inline constexpr std::int64_t kMaxMicroBatchTokens = std::int64_t{1} << 32U;
// Micro-batches per optimizer step, the size of the simulated schedule: each is a few dozen
// events per layer, so more would only make a run take hours (Megatron-LM runs use at most a
// few thousand).
inline constexpr std::int64_t kMaxMicrobatches = std::int64_t{1} << 16U;
// Micro-batches times layers, the number of layer passes one simulated step schedules (each
// pipeline stage is simulated once, so stages share the model's layers). About 10 us and
// 400 bytes each: the bound keeps a run under half a minute and 1 GiB, 16 times a 128-layer
// model with 1,024 micro-batches.
inline constexpr std::int64_t kMaxLayerPasses = std::int64_t{1} << 21U;

struct TrainingSpec {
  std::int64_t seq_len = 4096;
  std::int64_t global_batch = 0;  // sequences per optimizer step
  std::int64_t micro_batch = 1;   // sequences per micro-batch per data-parallel rank
  hardware::Dtype precision = hardware::Dtype::Bf16;
  Optimizer optimizer = Optimizer::AdamW;
};

struct Scenario {
  std::string hardware_name;  // as given: a built-in id, a path or "inline"
  std::string model_name;
  std::string stack_name;  // as given, or the default stack's id when the scenario names none
  // An object given inline for the hardware, model or stack, as JSON text (empty when the
  // scenario named one): the report's echoed scenario carries it, so that it runs again as it
  // is, and two scenarios whose inline objects differ do not read as the same input.
  std::string hardware_inline;
  std::string model_inline;
  std::string stack_inline;
  // What a named hardware, model or stack was read as: the name resolved beside the scenario's
  // file when a file of that name is there, else the name itself (a built-in id, or a path from
  // the working directory); empty for an inline object. `trainsim diff` tells by it two
  // scenarios that give the same name for different files.
  std::string hardware_path;
  std::string model_path;
  std::string stack_path;
  hardware::HardwareSpec hardware;
  model::ModelSpec model;
  stack::StackSpec stack;
  std::int64_t gpus = 0;
  // Hosts of each NVLink domain the job fills before the next domain (cluster.nodes_per_domain:
  // Slurm's --segment on GB200 NVL72 racks), at most the domain's; 0: every host of a domain.
  // Only the placement of ranks reads it (parallel::place).
  std::int64_t nodes_per_domain = 0;
  TrainingSpec training;
  ParallelPlan parallel;

  // Micro-batches each data-parallel rank runs per optimizer step (gradient accumulation
  // steps): global_batch / (dp * micro_batch).
  [[nodiscard]] std::int64_t num_microbatches() const {
    return training.global_batch / (parallel.dp * training.micro_batch);
  }
  [[nodiscard]] std::int64_t nodes() const {
    return (gpus + hardware.node.gpus_per_node - 1) / hardware.node.gpus_per_node;
  }
};

// The layers model chunk `chunk` runs: the plan's split of the model's layers, and in the last
// chunk after them the layers of the multi-token-prediction modules (ModelSpec::mtp_layers),
// whose global indices follow the model's (Megatron-Core builds the modules on the last
// pipeline stage: get_mtp_num_layers_to_build in megatron/core/transformer/
// multi_token_prediction.py). The builder, memory and HFU count through it.
[[nodiscard]] inline ChunkLayers chunk_layers(const Scenario& s, std::int64_t chunk) {
  ChunkLayers c = chunk_layers(s.parallel, s.model.num_layers, chunk);
  if (chunk == s.parallel.pp * s.parallel.virtual_stages - 1) c.count += s.model.mtp_layers;
  return c;
}

// tp * pp * cp, or nothing when the product overflows int64 (each degree may be up to 2^24).
[[nodiscard]] inline std::optional<std::int64_t> model_parallel_size(const ParallelPlan& p) {
  std::int64_t tp_pp = 0;
  std::int64_t all = 0;
  if (__builtin_mul_overflow(p.tp, p.pp, &tp_pp) || __builtin_mul_overflow(tp_pp, p.cp, &all)) {
    return std::nullopt;
  }
  return all;
}

// Names as they appear in scenario files, flags and reports ("shard_grad_op", "1f1b", ...).
const char* to_string(Sharding s);
const char* to_string(Recompute r);
const char* to_string(PipelineSchedule s);
const char* to_string(Optimizer o);
const char* to_string(hardware::Dtype d);

}  // namespace trainsim::parallel
