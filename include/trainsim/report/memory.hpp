// Memory per GPU of a training scenario: model state (parameters, gradients, optimizer state)
// under each sharding mode, activations of the in-flight micro-batches under each pipeline
// schedule and recomputation policy, and buffers (gathered parameters, unsharded gradients,
// CUDA/NCCL context). Analytical, from the scenario alone; the report shows the stage that needs
// most (DESIGN.md "Metrics": `memory`).
#pragma once

#include <cstdint>
#include <string>

#include "trainsim/model/kernels.hpp"
#include "trainsim/model/model_spec.hpp"
#include "trainsim/parallel/scenario.hpp"
#include "trainsim/units.hpp"

namespace trainsim::report {

// Peak memory of one GPU of one pipeline stage, by kind; the JSON report's `memory` object
// (parameters_bytes ... fits, then the reserve terms). total = parameters + gradients +
// optimizer + activations + buffers, the bytes the framework allocates as tensors. Usable
// memory: what of the HBM those tensors can have once the reserve is taken,
//   usable = (capacity - cuda_context - nccl_buffers - workspace - headroom) x (1 - fragmentation)
//   headroom = headroom_fraction x capacity,  reserved = capacity - usable
// (fragmentation: the caching allocator's blocks reserved but not allocated, a fraction of its
// pool; the terms and their sources: hardware_spec.hpp GpuSpec, stack_spec.hpp
// MemoryReserveSpec). fits is total <= usable. Every figure is whole bytes (each part rounded to
// the nearest byte), so total is the sum of its parts and reserved the sum of its terms, byte for
// byte; a headroom larger than what the context, NCCL and workspace leave is cut to it (usable 0).
struct MemoryBreakdown {
  std::int64_t stage = 0;  // pipeline stage these figures are for
  Bytes parameters;        // persistent parameters this GPU owns (its shard when sharded)
  Bytes gradients;         // persistent gradients (its shard when sharded)
  Bytes optimizer;         // optimizer state: fp32 master weights and moments
  Bytes activations;       // saved for backward, all in-flight micro-batches
  Bytes buffers;           // gathered parameters, unsharded gradients in flight, FP8 weight copies
  Bytes total;
  Bytes capacity;  // HBM of the GPU (hardware profile)
  // The reserve, term by term (reserved is their sum).
  Bytes cuda_context;              // hardware profile
  Bytes nccl_buffers;              // hardware profile
  Bytes workspace;                 // stack: library workspaces
  Bytes fragmentation;             // stack fraction of the allocator's pool
  Bytes headroom;                  // headroom_fraction x capacity, at most what the rest leaves
  double headroom_fraction = 0.0;  // the stack's, or --memory-headroom's
  Bytes reserved;
  Bytes usable;  // capacity - reserved
  bool fits = false;
};

// The reserve terms and usable memory of `s` (the formula above) filled into `m`, and m.fits
// from m.total; the other fields are left as they are.
void apply_memory_reserve(const parallel::Scenario& s, MemoryBreakdown& m);

// Bytes of one element in the training dtype: 4 for fp32/tf32, 2 for bf16/fp16, and 2 for
// fp8, whose weights and gradients are kept in bf16 around fp8 GEMMs (Transformer Engine user
// guide, "Mixed precision training with FP8"); what the stack keeps in FP8 besides is
// stack::Fp8Spec.
[[nodiscard]] std::int64_t element_bytes(hardware::Dtype precision);

// Transformer layers pipeline stage `stage` holds: its model chunks' under the plan's split
// (parallel::chunk_layers), as the workload builder assigns them. Requires 0 <= stage < pp.
[[nodiscard]] std::int64_t layers_in_stage(const parallel::Scenario& s, std::int64_t stage);

// Whether the transformer layers' weights are held only as FP8 copies: fp8 training with the
// stack's fp8.param_gather (Megatron-Core's --fp8-param-gather) under sharding none or zero1,
// where memory_per_gpu leaves their bf16 copies out of the parameters. FSDP-style sharding keeps
// its bf16 counting.
[[nodiscard]] bool layers_held_in_fp8(const parallel::Scenario& s);

// Ranks that share one copy of the model state (the sharding degree): dp * cp for
// zero1/shard_grad_op/full_shard (CP ranks hold the same parameters and reduce gradients with
// the DP ranks, as Megatron-LM's distributed optimizer and torchtitan's FSDP do); for
// hybrid_shard the data-parallel ranks of its shard group (parallel::hybrid_shard_size:
// shard_group, 0 for one node's) times cp, among which its collectives run; 1 for none.
[[nodiscard]] std::int64_t sharding_degree(const parallel::Scenario& s);

// Ranks that share one copy of the routed experts' state of an MoE layer: the
// expert-data-parallel ranks, sharding_degree / ep for zero1/shard_grad_op/full_shard (each EP
// rank holds num_experts / ep experts, which its dp / ep peers holding the same experts shard,
// as Megatron-Core's distributed optimizer does over the expert-data-parallel group); 1 for
// none; sharding_degree for hybrid_shard (validate refuses it with ep > 1).
[[nodiscard]] std::int64_t expert_sharding_degree(const parallel::Scenario& s);

// How the activation bytes are counted (Korthikanti et al. 2022 §4 assumptions or a modern
// Llama-style training).
struct ActivationOptions {
  // Fused flash attention keeps Q, K, V, O and an fp32 log-sum-exp per head and token instead
  // of the softmax and dropout tensors: the 5as/h term (in units of sbh bytes) becomes 4a/h,
  // 4 bytes per head and token (Dao et al. 2022, FlashAttention §3.1).
  bool flash_attention = true;
  // Dropout after attention and MLP (1-byte masks) and on the attention probabilities. Llama
  // trains without dropout; GPT-3 and Korthikanti et al. 2022 use it.
  bool dropout = false;
  // FP8 training whose GEMMs save their FP8 input casts (stack::Fp8Spec::activations_saved_in_fp8):
  // the QKV and MLP-up inputs and the MLP-down input are 1 byte per element instead of e, and the
  // attention-projection input adds a 1-byte copy beside the e-byte attention output that the
  // attention kernel keeps for its own backward.
  bool fp8_gemm_inputs = false;
  // What selective recomputation recomputes (stack recompute.selective): torchtitan's op-level
  // policy (model::apply_op_level_selective) keeps a layer's input and the outputs of the ops
  // it saves, not the tensors of the ops it recomputes; Megatron-Core's mla_up_proj
  // (model::apply_mla_up_proj_selective) drops latent attention's query, key and value
  // (activation_bytes_per_layer).
  model::SelectiveRecompute selective = model::SelectiveRecompute::AttentionCore;
  // Eager PyTorch ops that save more for backward than the fused kernels the formula assumes,
  // from autograd's saved tensors of torchtitan's code at 1ea476e9f (docs/stacks.md):
  // - eager_fp32_rmsnorm (stack norm.rmsnorm "eager_fp32", RMSNorm models only): pow and the
  //   rsqrt multiply save the fp32 copy x.float() (4 bytes per element) and the weight
  //   multiply its bf16 input (e): 4 h + e h per norm and token, where a fused kernel saves its
  //   input (e h). Applies to the layer's two norms and the final norm.
  // - gqa_repeat_kv (stack attention.gqa "repeat_kv", with flash attention): the attention
  //   kernel saves the repeated K and V, each of the query heads' width.
  // - eager_swiglu (stack mlp.activation "eager", SwiGLU models): silu saves its input, the
  //   multiply both of its inputs (silu's output and w3's), w2 its input: four tensors of the
  //   inner width where the fused kernel's three are counted. Experts too.
  // Complex fp32 RoPE saves nothing more: the frequencies do not require grad, so the multiply
  // saves them alone.
  bool eager_fp32_rmsnorm = false;
  bool gqa_repeat_kv = false;
  bool eager_swiglu = false;
};

// Activation bytes one layer saves for backward, for one micro-batch on one GPU.
// Generalises Korthikanti et al. 2022 §4.1 and Table 2 (per layer, 2-byte activations):
//   no parallelism       s b h (34 + 5 a s / h)
//   tensor parallel      s b h (10 + 24 / t + 5 a s / (h t))
//   TP + sequence par.   s b h / t (34 + 5 a s / h)
//   selective recompute  drops the 5 a s / h term;  full recompute  2 s b h (/ t with SP)
// Their terms: norm inputs 4sbh, QKV and MLP inputs 4sbh, dropout masks 2sbh (replicated over
// TP unless SP); Q, K, V 6sbh, attention output 2sbh, GELU input and output 16sbh (/ t);
// softmax, dropout mask and dropout output 5as^2b (/ t). Generalised here: K and V are
// kv_heads/heads of Q (GQA); the MLP saves 2 tensors of ffn (GELU input and output) or 3
// (SwiGLU's gate, up and product, as a fused kernel does); element size from the shape; no
// dropout masks without dropout; flash attention as above; CP divides the tokens.
// With ffn = 4h, MHA, dropout and no flash attention this is exactly Korthikanti's table.
// Multi-head latent attention: Q and K of nope + rope per head, V and the attention output of
// v_head_dim, plus 2 e (q_lora_rank + kv_lora_rank) per token for the latents' norm and
// up-projection inputs (replicated over TP).
[[nodiscard]] Bytes activation_bytes_per_layer(const model::ModelSpec& m,
                                               const model::LayerShape& shape,
                                               parallel::Recompute recompute,
                                               const ActivationOptions& options = {});

// Activation bytes one MoE layer (model/kernels.hpp moe_layer_kernels) saves for backward, for
// one micro-batch on one GPU: the attention half and norms as activation_bytes_per_layer, and
// instead of the dense MLP's tensors, per token on this rank (every TP rank holds the
// micro-batch's tokens): the fp32 router probabilities (4 num_experts), and per routed copy
// (top-k of them) the permuted input (e h), the expert's intermediate tensors as a dense MLP's
// of expert_ffn_hidden / tp, and the expert output kept for the weighted combine (e h), the
// routed part times model::expert_rank_imbalance (the busiest EP rank keeps that many rows); the
// shared experts as a dense MLP of their total width / tp. Full recompute keeps the layer
// input only, as for a dense layer. Requires is_moe(m).
[[nodiscard]] Bytes activation_bytes_per_moe_layer(const model::ModelSpec& m,
                                                   const model::LayerShape& shape,
                                                   parallel::Recompute recompute,
                                                   const ActivationOptions& options = {});

// Micro-batches whose activations stage `stage` holds at its peak (the first stage of a
// pipeline holds most): 1F1B min(pp - stage, m) (Narayanan et al. 2021 §2.2.1); GPipe all m
// (Huang et al. 2019); interleaved 1F1B with v chunks counts chunk passes, each holding
// layers/(pp v) layers: min(2 (pp - stage - 1) + (v - 1) pp + 1, m v) (Megatron-LM's warm-up
// count plus the one in steady state; for stage 0 this is Korthikanti et al. 2022 §4.2.3's
// factor 1 + (pp - 1) / (pp v) of the layers), and all m v where m = pp, whose forwards all run
// first (workload::interleaved_warmup). Returned as layer-equivalents over the stage's layers: a
// multiple of one micro-batch of all the stage's layers.
[[nodiscard]] double in_flight_microbatches(const parallel::Scenario& s, std::int64_t stage);

// Memory of one GPU of pipeline stage `stage`. Stage 0 also holds the embedding, the last stage
// the final norm and the LM head (and, with tied embeddings and pp > 1, a copy of the embedding
// as Megatron-LM keeps). Model state per parameter (Rajbhandari et al. 2020, ZeRO, §3.1, K = 12
// for mixed-precision Adam): bf16/fp16 training keeps 2-byte weights and gradients and
// 12 bytes of AdamW state (fp32 master, m, v); fp32 training 4 + 4 + 8 (m, v). SGD keeps a
// master copy and momentum (8 B; fp32: momentum, 4 B). Sharding:
//   none           everything replicated (DDP; gradients in place, no bucket copies)
//   zero1          optimizer / D
//   shard_grad_op  parameters, gradients, optimizer / D; the stage's unsharded parameters stay
//                  gathered from forward to backward (FSDP SHARD_GRAD_OP), plus the unsharded
//                  gradients of 2 layers (the one computing, the one being reduce-scattered)
//   full_shard     everything / D; PyTorch FSDP's root unit (embedding, final norm, LM head)
//                  held gathered from forward to the end of backward, plus two layer units
//                  gathered (current and prefetched) and two units' unsharded gradients (one
//                  computing, one being reduce-scattered); per-tensor gathers (DeepSpeed
//                  ZeRO-3) hold the largest weight tensor and its gradient instead
//                  (docs/stacks.md)
//   hybrid_shard   as full_shard with D = the shard group's ranks
// D = sharding_degree(s); with D = 1 nothing is gathered. Activations: activation_bytes_per_layer
// (flash attention, no dropout) times layers times in-flight micro-batches; with full
// recompute, plus the largest recomputed layer's full activations, less its stored input,
// during its recomputed backward (nothing where a kept layer was freed first); the last stage
// adds the final norm's and the LM head's inputs and the fp32 logits of the loss, 4 b s V / t,
// and with dropout the first stage the input embedding's dropout mask of each micro-batch it
// holds, s b h p / t under 1F1B (Korthikanti et al. 2022 §4.3). Tensors under a per-tensor
// gather's persistence threshold (DeepSpeed ZeRO-3) are held whole, parameters and gradients,
// on every rank. fp8 training (stack::Fp8Spec): activations with
// ActivationOptions::fp8_gemm_inputs when the stack saves FP8 inputs, and buffers add
// weight_cache_bytes_per_param per layer parameter held unsharded (all the stage's layers; with
// full_shard/hybrid_shard the 2 gathered units), at most 1 B on Blackwell for the per-tensor
// recipes (no transpose) and 1 + 1/32 B per copy under MXFP8 (its E8M0 scales). The fixed framework
// terms are in the reserve, not in buffers (apply_memory_reserve). Mixture of experts: an MoE
// layer's parameters are moe_layer_parameters_per_rank (model/kernels.hpp): the dense part sharded
// as above over D, the rank's num_experts / ep routed experts over D_e = expert_sharding_degree(s);
// its activations are activation_bytes_per_moe_layer. Which layers of the stage are MoE follows the
// workload builder's layer assignment (parallel::chunk_layers). Requires
// a validated scenario with parallel.dp filled in and 0 <= stage < pp.
[[nodiscard]] MemoryBreakdown memory_per_gpu(const parallel::Scenario& s, std::int64_t stage);

// memory_per_gpu of the stage whose total is largest (the first such stage on ties).
[[nodiscard]] MemoryBreakdown memory_peak(const parallel::Scenario& s);

// The most bytes a GPU's memory figures may count: 2^53 (8 PiB), up to which every whole number
// is exact in a double. The report writes byte counts as integers (DESIGN.md); past 2^63 the
// conversion had no integer to give, and a plan needing 2.9e20 B per GPU printed
// -9223372036854775808. 8 PiB is some 30,000 times the HBM of any GPU profiled.
inline constexpr double kMaxMemoryBytes = 9007199254740992.0;
// The key such a plan is refused at, as a problem of the plan: what it holds per micro-batch.
inline constexpr const char* kMemoryExcessKey = "/training/micro_batch";
// " on stage S", the stage `peak` is of, where the plan has stages (pp > 1); else "".
[[nodiscard]] std::string on_stage(const MemoryBreakdown& peak, std::int64_t pp);
// "the plan needs N per GPU[ on stage S], past ..." where `peak` (memory_peak's) counts more
// than kMaxMemoryBytes, else "".
[[nodiscard]] std::string memory_excess(const MemoryBreakdown& peak, std::int64_t pp);

}  // namespace trainsim::report
