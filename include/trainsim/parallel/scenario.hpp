// A scenario: the hardware, the model, the software stack, the cluster size, the training configuration and the
// parallel plan of one simulated run. io/scenario_loader builds one from JSON and CLI flags;
// parallel/validate checks it; everything downstream trusts a validated scenario.
#pragma once

#include <cstdint>
#include <string>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/model/model_spec.hpp"
#include "trainsim/stack/stack_spec.hpp"

namespace trainsim::parallel {

// How data-parallel ranks shard the training state (PyTorch FSDP / DeepSpeed ZeRO names).
enum class Sharding {
  None,         // DDP: everything replicated, gradients AllReduced in buckets
  Zero1,        // optimizer state sharded
  ShardGradOp,  // ZeRO-2 / FSDP SHARD_GRAD_OP: grads + optimizer sharded, params gathered once
  FullShard,    // ZeRO-3 / FSDP FULL_SHARD: params gathered before forward and again before backward
  HybridShard,  // FULL_SHARD inside a group of shard_group ranks, replicated across groups
};

enum class Recompute { None, Selective, Full };
enum class PipelineSchedule { GPipe, OneFOneB, Interleaved };
enum class Optimizer { AdamW, Sgd };

struct ParallelPlan {
  std::int64_t tp = 1;               // tensor parallel degree
  std::int64_t pp = 1;               // pipeline stages
  std::int64_t cp = 1;               // context parallel degree
  std::int64_t dp = 1;               // derived: gpus / (tp * pp * cp)
  bool sequence_parallel = false;    // Megatron SP: norms/dropout split over TP, RS+AG instead of AR
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  std::int64_t virtual_stages = 1;   // model chunks per pipeline rank (interleaved 1F1B)
  Sharding sharding = Sharding::ShardGradOp;
  std::int64_t shard_group = 0;      // hybrid_shard: ranks per shard group (0 = one node's worth)
  Recompute recompute = Recompute::None;
};

struct TrainingSpec {
  std::int64_t seq_len = 4096;
  std::int64_t global_batch = 0;     // sequences per optimizer step
  std::int64_t micro_batch = 1;      // sequences per micro-batch per data-parallel rank
  hardware::Dtype precision = hardware::Dtype::Bf16;
  Optimizer optimizer = Optimizer::AdamW;
};

struct Scenario {
  std::string hardware_name;  // as given: a built-in id, a path or "inline"
  std::string model_name;
  std::string stack_name;     // as given, or the default stack's id when the scenario names none
  hardware::HardwareSpec hardware;
  model::ModelSpec model;
  stack::StackSpec stack;
  std::int64_t gpus = 0;
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

// Names as they appear in scenario files, flags and reports ("shard_grad_op", "1f1b", ...).
const char* to_string(Sharding s);
const char* to_string(Recompute r);
const char* to_string(PipelineSchedule s);
const char* to_string(Optimizer o);
const char* to_string(hardware::Dtype d);

}  // namespace trainsim::parallel
