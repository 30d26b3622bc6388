// A software-stack profile (stacks/*.json): what the training framework does, apart from what
// the hardware can do. How far FSDP prefetches, whether tensor-parallel collectives overlap the
// GEMMs beside them, the dtype gradients are reduced in, how many bytes its elementwise kernels
// move compared with fused kernels, and the host costs per kernel and per optimizer step.
// io/stack_loader reads one; every value in a built-in carries its source or its fit.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/model/kernels.hpp"
#include "trainsim/units.hpp"

namespace trainsim::stack {

// How Transformer Engine scales the FP8 casts of its GEMM inputs (docs/stacks.md, "FP8
// recipes"): each FP8 GEMM's input and weight (forward) and output gradient (backward) are cast
// by a memory-bound kernel whose bytes per element depend on the recipe.
enum class Fp8Recipe {
  Delayed,  // per-tensor delayed scaling (DelayedScaling): amax fused into the cast
  Current,  // per-tensor current scaling (Float8CurrentScaling): an amax pass, then the cast
  Mxfp8,    // MXFP8 block scaling (MXFP8BlockScaling, Blackwell): rowwise and columnwise copies
  // FP8 block scaling (Float8BlockScaling, DeepSeek-V3's scheme; Hopper and Blackwell): an FP32
  // scale per 128 values (1x128) or per 128 x 128 block, rowwise and columnwise copies.
  Blockwise,
};

// HBM bytes per element of one FP8 cast of a bf16 tensor under a Transformer Engine recipe
// (docs/stacks.md, "FP8 recipes"):
// - delayed (DelayedScaling): the scale comes from the amax history and the amax of this
//   tensor is recorded by the cast itself (TE docs, "FP8 Delayed Scaling": one tensor read per
//   quantization): read 2, write 1 = 3.
// - current (Float8CurrentScaling): "two tensor reads per quantization: one to compute amax,
//   one to cast" (same page): read 2 + 2, write 1 = 5.
// - mxfp8 (MXFP8BlockScaling, Blackwell): one E8M0 scale byte per 32 consecutive values (TE
//   docs, "MXFP8"); the blocks run along one dimension, so a GEMM operand used in both the
//   forward and a backward GEMM is quantized rowwise and columnwise: read 2, write 1 + 1 FP8
//   copies and 1/32 + 1/32 scale bytes = 4.0625.
// - blockwise (Float8BlockScaling): an FP32 scale per 128 values along one dimension for the
//   GEMM inputs and output gradients, per 128 x 128 block for the weights (TE docs, "FP8
//   Blockwise Scaling", after DeepSeek-V3 arXiv:2412.19437 §3.3), both copies as MXFP8's: read
//   2, write 1 + 1 and 4/128 + 4/128 scale bytes = 4.0625 (a weight's 2D scales are fewer: the
//   1D figure is the bound).
// Per-tensor recipes write one FP8 copy: Blackwell's FP8 GEMMs take any layout (TE's
// is_non_tn_fp8_gemm_supported, sm >= 100); on Hopper TE's cast-transpose also writes the
// transpose, not modelled here (docs/stacks.md).
[[nodiscard]] constexpr double fp8_cast_bytes_per_element(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::Delayed:
      return 2.0 + 1.0;
    case Fp8Recipe::Current:
      return 2.0 + 2.0 + 1.0;
    case Fp8Recipe::Mxfp8:
      return 2.0 + 2.0 * (1.0 + 1.0 / 32.0);
    case Fp8Recipe::Blockwise:
      return 2.0 + 2.0 * (1.0 + 4.0 / 128.0);
  }
  return 2.0 + 1.0;
}

// HBM bytes per element an FP8 GEMM reads of one operand, its FP8 cast under a Transformer
// Engine recipe (the same TE docs as above): the FP8 value, 1 byte, and its share of the scales:
// none for the per-tensor recipes (one scale per tensor), 1/32 for MXFP8 (an E8M0 byte per 32
// values), 4/128 for blockwise (an FP32 scale per 128 values; a weight's 128 x 128 blocks have
// fewer, the 1D figure is the bound). The GEMM writes its result in 16 bits (TE's FP8 GEMMs
// output the activation dtype).
[[nodiscard]] constexpr double fp8_operand_bytes_per_element(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::Delayed:
    case Fp8Recipe::Current:
      return 1.0;
    case Fp8Recipe::Mxfp8:
      return 1.0 + 1.0 / 32.0;
    case Fp8Recipe::Blockwise:
      return 1.0 + 4.0 / 128.0;
  }
  return 1.0;
}

// What one FSDP / ZeRO-3 AllGather fetches.
enum class GatherGranularity {
  Unit,       // a whole layer (PyTorch FSDP's flat parameter per wrapped unit): one call
  Parameter,  // one weight tensor: a call per tensor of at least fsdp_persistence_threshold
              // elements, smaller ones replicated (DeepSpeed ZeRO-3 before v0.6)
};

// The gathers of a layer under full activation recomputation.
enum class RecomputeGather {
  Shared,    // the backward's gather also serves the recomputed forward (PyTorch FSDP)
  Separate,  // the recomputed forward gathers, then the backward gathers again (DeepSpeed
             // ZeRO-3 2021: three gathers per weight per step)
};

// What the stack keeps in FP8 when a scenario trains in fp8 (training.precision "fp8"). fp8
// training keeps fp32 master weights and optimizer state and bf16 weights and gradients as bf16
// mixed precision does, and casts GEMM inputs to FP8 per step (Transformer Engine user guide,
// "Using FP8 with Transformer Engine": "Mixed precision training with FP8"). The defaults are
// a stack that keeps nothing else in FP8: bf16 activations, no FP8 weight copies, bf16 TP
// communication. Ignored for other precisions.
struct Fp8Spec {
  // The inputs the FP8 GEMMs save for backward (QKV, attention-projection, MLP up and down
  // inputs) are the FP8 casts, 1 byte per element, instead of the bf16 tensors (Transformer
  // Engine's Linear, LayerNormLinear and LayerNormMLP save their FP8 input casts).
  bool activations_saved_in_fp8 = false;
  // Bytes per GEMM weight of FP8 copies kept from the first micro-batch's cast to the end of the
  // step: 0 (cast per GEMM, nothing kept), 1 (the FP8 weight), 2 (it and its transpose, which
  // Hopper's FP8 GEMMs need for the backward; Transformer Engine's weight caching). In [0, 4].
  // Counted as Hopper keeps them: on Blackwell a per-tensor recipe keeps no transpose, and MXFP8
  // adds a scale byte per 32 values to each copy (report/memory.cpp, fp8_weight_copy_bytes).
  double weight_cache_bytes_per_param = 0.0;
  // The sequence-parallel AllGathers of the activations before the column-parallel GEMMs move
  // FP8 casts (1 byte per element) instead of bf16 ones. Gradient collectives stay as
  // gradient_reduce_dtype says.
  bool tp_communication_fp8 = false;
  // The scaling recipe, which sets the bytes of the cast kernels. Default Delayed, Transformer
  // Engine's default recipe (fp8_autocast without a recipe uses DelayedScaling()).
  Fp8Recipe recipe = Fp8Recipe::Delayed;
  // The transformer layers' weights are held only as their FP8 copies (Megatron-Core's
  // --fp8-param-gather: Transformer Engine's quantized model init keeps no bf16 copy of a TE
  // module's weight; the distributed optimizer keeps the fp32 main weights and gathers the
  // updated ones into the FP8 tensors). Memory only: the layers' bf16 parameters are not
  // counted, their FP8 copies are (weight_cache_bytes_per_param; 1 byte per weight in the
  // parameters when that is 0). With Megatron's DDP or
  // distributed optimizer (sharding none, zero1); FSDP-style sharding keeps its bf16 counting.
  // The gather's bytes are not changed. Optional "fp8": {"param_gather": true}; default false.
  bool param_gather = false;
};

// Memory the stack needs beside the model's tensors (report/memory.hpp "usable memory").
struct MemoryReserveSpec {
  // Fraction of the caching allocator's pool lost to fragmentation (blocks reserved but not
  // allocated), in [0, 0.5). Default 0.05, an assumption (docs/stacks.md).
  double allocator_fragmentation_fraction = 0.05;
  // Workspaces the stack's libraries allocate per GPU (cuBLAS/cuBLASLt workspaces per stream).
  // Default 64 MiB: PyTorch's 32 MiB cuBLAS workspace on Hopper for each of two streams.
  Bytes workspace = Bytes(64.0 * 1024 * 1024);
  // Fraction of HBM a user keeps free on purpose, in [0, 1); the default of `--memory-headroom`.
  double headroom_fraction = 0.0;
};

struct StackSpec {
  std::string id;    // "pytorch-2.3-fsdp"
  std::string name;  // "PyTorch 2.3 FSDP (FULL_SHARD / SHARD_GRAD_OP), eager, FlashAttention-2"
  // The stack files its "extends" chain read, in the order read (not the stack's own file, nor
  // built-in stacks): inputs an output path must not replace.
  std::vector<std::string> extends_files;

  // FSDP forward: AllGathers in flight, i.e. the gather of layer l is issued when layer
  // l - forward_prefetch ends. PyTorch FSDP's rate limiter (limit_all_gathers) keeps two.
  int fsdp_forward_prefetch = 2;
  // The stack file's fsdp.backward_prefetch is checked and not kept: both of PyTorch FSDP1's
  // modes give the same GPU schedule (docs/stacks.md, fsdp.backward_prefetch).
  // Optional "fsdp" keys, defaults PyTorch FSDP's. gather_granularity: one AllGather per layer
  // or per weight tensor. persistence_threshold (with "parameter"): weight tensors of fewer
  // elements are replicated, never gathered, their gradients AllReduced (DeepSpeed's
  // stage3_param_persistence_threshold); default 0, every tensor gathered.
  GatherGranularity fsdp_gather_granularity = GatherGranularity::Unit;
  std::int64_t fsdp_persistence_threshold = 0;
  RecomputeGather fsdp_recompute_gather = RecomputeGather::Shared;
  // Each gather waits for every kernel issued before it (a device-wide torch.cuda.synchronize
  // before each fetch), and the compute after it waits for the gather: no prefetch, no overlap
  // of parameter fetches with compute. Default false (prefetch as forward/backward_prefetch).
  bool fsdp_blocking_fetch = false;
  // Host time per rank of the shard group spent before each FSDP AllGather and ReduceScatter
  // call starts: the list-form torch.distributed collectives build and copy one chunk per rank
  // (c10d stages them through a flat buffer). Added to the call's time on the DP stream.
  // Default 0 (the flat-tensor _base collectives of PyTorch FSDP).
  Seconds fsdp_host_cost_per_rank;
  // HBM passes over each FSDP call's full (unsharded) bytes that the framework's staging copies
  // make around the collective: DeepSpeed 2021 zero-fills the gathered tensor and c10d's
  // list-form all_gather copies its flat output into the per-rank views (3 passes); the
  // gradient is divided in place and c10d copies the list into a flat input (4). Priced at the
  // profile's HBM bandwidth and added to the call's time. Optional "fsdp": {"staging_passes":
  // {"all_gather": 3, "reduce_scatter": 4}}; default 0 (the collective works in place).
  double fsdp_staging_passes_gather = 0.0;
  double fsdp_staging_passes_reduce = 0.0;
  // HBM passes over each gathered FSDP unit's bytes made on the compute stream after its
  // AllGather, before the unit's forward or backward runs: PyTorch FSDP2 gathers into one flat
  // buffer and copies it out into each parameter's own tensor (foreach_all_gather_copy_out,
  // torch.split_with_sizes_copy, on the current stream in wait_for_unshard): a read and a
  // write, 2. Optional "fsdp": {"copy_out_passes": 2}; default 0 (FSDP1's flat parameter is the
  // gather's output; the unit's tensors are views of it).
  double fsdp_copy_out_passes = 0.0;
  // Under full_shard and hybrid_shard, whether the model's last layer is resharded after its
  // forward and gathered again before its backward, as every other layer. torchtitan wraps it
  // with reshard_after_forward=False ("do not reshard after forward for the last transformer
  // block since FSDP would prefetch it immediately"; torchtitan/parallelisms/
  // parallelize_llama.py at 1ea476e9f): its weights stay gathered from its forward to its
  // backward, one gather fewer per micro-batch. Optional "fsdp": {"reshard_last_layer": false};
  // default true (PyTorch FSDP1 FULL_SHARD reshards every unit).
  bool fsdp_reshard_last_layer = true;

  // Tensor-parallel collectives run beside the GEMM they feed or drain (Transformer Engine's
  // userbuffers overlap, PyTorch async TP) instead of blocking it (Megatron-LM's default).
  bool tp_overlap = false;

  // Dtype of gradient ReduceScatter / AllReduce for each training precision (indexed by the
  // training dtype); nullopt reduces in the training precision.
  std::array<std::optional<hardware::Dtype>, hardware::kNumDtypes> gradient_reduce_dtype{};
  // The dtype gradients are reduced in under `precision`.
  [[nodiscard]] hardware::Dtype reduce_dtype_for(hardware::Dtype precision) const {
    return gradient_reduce_dtype[static_cast<std::size_t>(precision)].value_or(precision);
  }

  // Where gradients live between backward and the optimizer step. false: in the training dtype,
  // beside the optimizer's fp32 main weights (PyTorch: AMP's fp32 parameters and gradients, and
  // FSDP's fp32 shards, hold the same bytes per parameter as 2 + 2 + a 4-byte main copy).
  // true: in buffers of the reduce dtype (Megatron's DistributedDataParallel: grad_dtype is
  // float32 when grad_reduce_in_fp32, else the parameters'; megatron/core/distributed/
  // distributed_data_parallel.py), unsharded under `none` and `zero1`; an optimizer that is not
  // precision-aware then copies a buffer of fewer than 4 bytes into fp32 main gradients
  // (distrib_optimizer.py, _copy_model_grads_to_main_grads: shard_model_grad.float()).
  // Megatron-LM's README, "Distributed Optimizer": 18 and 6 + 12/d bytes per parameter with bf16
  // parameters and fp32 gradients, 20 and 4 + 16/d with fp16 ones. Optional "data_parallel":
  // {"gradient_buffer": "reduce_dtype"}; default "training_dtype".
  bool grads_in_reduce_dtype = false;

  // Bytes per parameter of the optimizer's state: the fp32 main (master) weights that
  // mixed-precision training keeps beside the working copy, and Adam's first and second moments.
  // Megatron-Core's precision-aware optimizer (OptimizerConfig.use_precision_aware_optimizer
  // with main_params_dtype, exp_avg_dtype, exp_avg_sq_dtype; Transformer Engine's FusedAdam)
  // keeps them in 16 bits. Optional "optimizer": {"main_params_dtype": "fp32",
  // "exp_avg_dtype": "bf16", "exp_avg_sq_dtype": "bf16"}, each "fp32" (the default), "bf16" or
  // "fp16". SGD's momentum stays fp32.
  struct OptimizerState {
    double main_params_bytes = 4.0;
    double exp_avg_bytes = 4.0;
    double exp_avg_sq_bytes = 4.0;
  };
  OptimizerState optimizer_state;
  // Megatron-Core's precision-aware optimizer (use_precision_aware_optimizer): Transformer
  // Engine's FusedAdam reads the reduced gradient shard where it lies (`.decoupled_grad`), so no
  // fp32 copy of 16-bit gradients is kept (grads_in_reduce_dtype). Optional "optimizer":
  // {"precision_aware": true}; default false.
  bool precision_aware_optimizer = false;

  // Speed of the stack's attention kernel relative to FlashAttention-2, the kernel the hardware
  // profile's attention curve describes (FlashAttention-2 in Triton, FlashAttention-1, unfused
  // attention are slower; FlashAttention-3 and cuDNN on Hopper faster).
  double attention_speed = 1.0;

  // Attention computed unfused (Megatron-LM before FlashAttention): its batched GEMMs and the
  // s x s softmax (and dropout) through HBM, model/kernels.hpp LayerShape::unfused_attention.
  // attention_speed does not apply then. Optional "attention": {"kernel": "unfused",
  // "dropout": true}; default {"kernel": "flash", "dropout": false}.
  bool unfused_attention = false;
  bool attention_dropout = false;
  // With the unfused kernel: "softmax": "unfused" runs the scale, the causal mask and the
  // softmax as separate ops over the scores (Megatron-LM of 2019); default "fused"
  // (FusedScaleMaskSoftmax, from September 2020).
  bool unfused_softmax = false;

  // The bias of the row-parallel GEMMs, the hidden-state dropout and the residual add as
  // separate ops (Megatron-LM of 2019). Optional "residual": {"bias_dropout_add": "unfused"};
  // default "fused" (one residual-add kernel: bias_dropout_add_fused_train from September 2020,
  // or no bias and dropout at all).
  bool unfused_bias_dropout_add = false;

  // The LM loss as Megatron's vocab_parallel_cross_entropy computes it (megatron/core/
  // tensor_parallel/cross_entropy.py, core_r0.8.0; mpu/cross_entropy.py before): separate
  // PyTorch ops over the fp32 logits (cast, max, subtract, exp, sum, divide; backward: scale
  // and the cast back), each through HBM. Optional "loss": {"cross_entropy": "unfused"};
  // default "fused" (one kernel reads the logits and writes the fp32 softmax).
  bool unfused_cross_entropy = false;
  // The LM loss as torchtitan's code of 2024 computes it: `self.output(h).float()` in the
  // model, then F.cross_entropy (log_softmax and nll_loss) over the fp32 logits. Optional
  // "loss": {"cross_entropy": "fp32_logits"}.
  bool fp32_logits_cross_entropy = false;

  // RMSNorm run op by op in fp32 as eager PyTorch code writes it (torchtitan's norm_type
  // "rmsnorm", Hugging Face's LlamaRMSNorm): the cast to fp32, pow, mean, multiply by rsqrt, the
  // cast back and the weight multiply, each through HBM. Optional "norm": {"rmsnorm":
  // "eager_fp32"}; default "fused" (one kernel, as Apex, Transformer Engine or torchtitan's
  // Triton fused_rmsnorm run it). LayerNorm is one kernel (nn.LayerNorm) in every stack.
  bool eager_fp32_rmsnorm = false;

  // Rotary embeddings as Meta's Llama reference code and torchtitan compute them: Q and K cast
  // to fp32, viewed as complex numbers, multiplied by the complex frequencies, cast back.
  // Optional "rope": {"kernel": "complex_fp32"}; default "fused" (one kernel reads and writes
  // each element: Transformer Engine, Apex fused RoPE).
  bool complex_fp32_rope = false;

  // Grouped-query attention with K and V expanded to every query head before the attention
  // kernel (torchtitan's and Meta's `repeat_kv`: expand, then reshape, a copy); default
  // "native" (the kernel reads the shared K and V heads). Optional "attention": {"gqa":
  // "repeat_kv"}.
  bool gqa_repeat_kv = false;

  // The SwiGLU activation as two eager ops, `F.silu(w1(x)) * w3(x)` (torchtitan's FeedForward):
  // silu writes its output, the multiply reads it back; backward three kernels. Optional "mlp":
  // {"activation": "eager"}; default "fused" (Megatron-Core's bias_swiglu, one kernel). GELU is
  // one kernel either way.
  bool eager_swiglu = false;

  // What selective recomputation recomputes: Megatron-LM's policy, the attention core
  // (Korthikanti et al. 2022 §5; "attention"), torchtitan's op-level activation checkpointing
  // (every op but the saved mm and attention outputs, every second mm recomputed:
  // model::apply_op_level_selective; "op"), or Megatron-Core's recompute_modules
  // ["mla_up_proj"] (latent attention's up-projections and RoPE, whose query, key and value
  // are freed after the attention kernel: model::apply_mla_up_proj_selective; "mla_up_proj").
  // Optional "recompute": {"selective": ...}; default "attention".
  model::SelectiveRecompute selective = model::SelectiveRecompute::AttentionCore;

  // Data-parallel gradient reduction overlaps backward (PyTorch DDP buckets, Megatron's
  // --overlap-grad-reduce) or runs once after the step's last backward (Megatron-LM's local
  // DDP before 2023). Optional "data_parallel": {"overlap_grad_reduce": false}; default true.
  bool dp_overlap = true;

  // Under `zero1`, the AllGather of the updated weights overlaps the next iteration's forward
  // instead of following the optimizer step (Megatron-Core's --overlap-param-gather: the
  // distributed optimizer issues the first bucket's AllGather in zero_grad and each next one from
  // the forward pre-hook that waits for the one before; core_r0.8.0
  // megatron/core/optimizer/distrib_optimizer.py, _dispatch_gather_model_params and
  // _finish_param_sync_helper). Modelled as the gathers issued back to back on the DP stream at
  // the start of the iteration, in forward order, one per gradient bucket (below), each the first
  // forward pass of its layers waits for. Optional "data_parallel": {"overlap_param_gather":
  // true}; default false (one AllGather of the stage's weights after the step, exposed).
  bool dp_overlap_param_gather = false;

  // Which model chunks split their gradients (and, with dp_overlap_param_gather, their weight
  // gathers) into per-layer buckets under `none` and `zero1`. "every_chunk" (default): every
  // chunk, as PyTorch DDP's buckets. "first_chunk": only the first model chunk of the first
  // pipeline stage; every other chunk is one bucket, reduced once after its last backward of the
  // step and gathered once before its first forward (Megatron-Core's DistributedDataParallel
  // sets bucket_size None on pipeline ranks above 0, and training.py passes disable_bucketing for
  // model chunks after the first; core_r0.8.0). Optional "data_parallel": {"buckets":
  // "first_chunk"}.
  bool dp_buckets_first_chunk_only = false;

  // Mixture-of-experts all-to-all (dispatch and combine) hidden behind compute: Megatron-Core's
  // 1F1B all-to-all overlap and DeepSeek-V3's DualPipe run one micro-batch's all-to-all beside
  // another's compute. Modelled as the all-to-all on its own stream with no compute waiting for
  // it: it costs stream time and contention, never a stall. Optional "moe": {"a2a_overlap":
  // true}; default false (compute waits for each all-to-all).
  bool moe_a2a_overlap = false;

  // Host time to launch one local expert's GEMM or FP8 cast in a grouped expert linear layer.
  // Transformer Engine's GroupedLinear (Megatron-Core's TEGroupedMLP) issues one cuBLAS GEMM per
  // local expert, round-robin on 4 streams (nvte_multi_stream_cublas_gemm,
  // transformer_engine/common/gemm/cublaslt_gemm.cpp; num_streams = 4 in gemm.h), and under FP8
  // quantizes each expert's split apart; the splits' sizes reach the host through a device-to-
  // host copy before the layer (m_splits), so the host cannot run ahead of the GPU there. A
  // grouped GEMM then takes at least (launches x this) of wall time: forward one GEMM per
  // expert (and one input cast under FP8), backward two (data and weight gradients; and one
  // gradient cast under FP8). Optional "moe": {"expert_gemm_launch": "15 us"}; default 0 (one
  // grouped kernel for all experts, as a CUTLASS grouped GEMM or a CUDA graph runs them).
  Seconds moe_expert_launch;

  // HBM bytes of memory-bound kernels relative to the fused kernels the model counts (norm,
  // activation, residual, RoPE, the embedding's gather and the loss; not the optimizer step or
  // FSDP's copies): eager frameworks launch several kernels per op and keep fp32 intermediates
  // under autocast. 1 = fused.
  double elementwise_traffic = 1.0;

  // Host time to dispatch one kernel: a kernel never takes less wall time than this, since
  // the CPU cannot issue faster (eager PyTorch; ~0 under CUDA graphs).
  Seconds kernel_dispatch;

  // Fixed host time per optimizer step (data loading, logging, gradient clipping's host sync).
  Seconds iteration_overhead;

  Fp8Spec fp8;               // optional "fp8" object of a stack file
  MemoryReserveSpec memory;  // optional "memory" object of a stack file
};

}  // namespace trainsim::stack
