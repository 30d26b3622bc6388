// The kernels of one training iteration, described per tensor-parallel rank and per
// micro-batch: FLOPs, HBM bytes and GEMM shapes of every kernel of a transformer layer, of the
// embedding, of the LM head and loss, and of the optimizer step. The workload builder turns
// these descriptions into timed ops; the compute model turns FLOPs and bytes into durations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/model/model_spec.hpp"
#include "trainsim/units.hpp"

namespace trainsim::model {

enum class KernelKind {
  Gemm,         // a matrix multiply; time from FLOPs and the GEMM efficiency curve
  Attention,    // a fused flash-attention kernel (FlashAttention-2)
  MemoryBound,  // elementwise or reduction kernels: norms, activations, residuals, loss, optimizer
};

// Forward shape of a GEMM on one TP rank: C[m x n] = A[m x k] * B[k x n], m = tokens.
// The backward pass runs two GEMMs of the same size (dgrad m x k = [m x n][n x k], wgrad
// k x n = [k x m][m x n]).
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;  // a strided-batched call (unfused attention's bmm over heads)
};

// What selective recomputation recomputes (stack key recompute.selective, docs/stacks.md).
enum class SelectiveRecompute {
  // Megatron-LM's policy, the attention core (Korthikanti et al. 2022 §5): "attention".
  AttentionCore,
  // torchtitan's op-level activation checkpointing (apply_op_level_selective): "op".
  OpLevel,
  // Megatron-Core's recompute_modules ["mla_up_proj"] (apply_mla_up_proj_selective):
  // "mla_up_proj". Recomputes nothing in a layer without latent attention.
  MlaUpProj,
};

// A GEMM's HBM traffic in elements (KernelSpec::elements).
struct GemmElements {
  double forward_read = 0.0;
  double forward_written = 0.0;
  double backward_read = 0.0;
  double backward_written = 0.0;
};

// One kernel of one micro-batch on one TP rank (one CP rank).
struct KernelSpec {
  std::string name;  // "qkv_proj", "attn_core", ...: unique within its list
  KernelKind kind = KernelKind::MemoryBound;
  Flops forward_flops;   // executed by this rank (causal discount applied when causal_discount)
  Flops backward_flops;  // GEMMs 2x forward (dgrad + wgrad); flash attention 2.5x forward
  Bytes forward_bytes;   // HBM read + written, at the training dtype's element size
  Bytes backward_bytes;
  GemmShape gemm;  // Gemm only; zeros otherwise
  // Gemm only: the elements behind forward_bytes and backward_bytes by role, the operands read
  // and the results written (forward: the input and the weight read, the output written;
  // backward: dgrad reads the output gradient and the weight and writes the input gradient,
  // wgrad reads the input and the output gradient and writes the weight gradient). The bytes
  // above are the training dtype's element size times read + written; an FP8 GEMM reads its
  // operands' FP8 casts and writes 16-bit results (workload builder).
  GemmElements elements;
  // Attention only: the FLOPs above are those a causal flash-attention kernel executes, half of
  // the full QK^T and AV products (it skips the masked blocks; Dao 2023, FlashAttention-2 §3.1).
  // Model FLOPs (DESIGN.md "Metrics", PaLM) do not take this discount.
  // With a sliding window both counts are scaled by attention_window_fraction (counts.hpp).
  bool causal_discount = false;
  std::int64_t head_dim = 0;  // Attention only: per-head dimension (its efficiency depends on it)
  std::int64_t attention_window = 0;  // Attention only: the model's sliding window; 0: none
  // Share of the forward recomputed in the backward pass under selective recomputation, 0 to
  // 1. Megatron's policy (Korthikanti et al. 2022 §5): the attention core, whose activations are
  // large and cheap to recompute, 1, every other kernel 0. The other policies of
  // SelectiveRecompute (LayerShape::selective, apply_selective_policy) set it kernel by kernel.
  double selective_recompute = 0.0;
  // Routed-expert kernels only (expert_up_gate / expert_up, expert_act, expert_down):
  // expert_rank_imbalance of the model at the shape's ep. FLOPs and bytes above are the balanced
  // load (tokens x top-k rows over the rank's experts); the workload builder stretches the kernel's
  // time by this factor, the busiest EP rank's share (moe_layer_kernels). 1 for every other kernel.
  double load_imbalance = 1.0;
  // Gemm only: a GEMM Transformer Engine runs in FP8 when training in fp8: the transformer
  // layers' linear projections (QKV or the latent-attention projections, the attention output
  // projection, MLP up/gate/down, routed and shared expert GEMMs), which are TE modules in
  // Megatron-Core (TELayerNormColumnParallelLinear, TERowParallelLinear, TEGroupedLinear). The
  // attention core (cuDNN/FlashAttention, bf16 unless TE's FP8 attention is asked for), the
  // router (a torch matmul in TopKRouter), the LM head (Megatron's output_layer is
  // tensor_parallel.ColumnParallelLinear, not a TE module) and the embedding stay bf16
  // (docs/stacks.md, "FP8 recipes").
  bool fp8_eligible = false;
  // Routed-expert GEMMs only (grouped_gemm): the rank's local experts, one GEMM each when the
  // stack launches them one by one (StackSpec::moe_expert_launch). 0 for every other kernel.
  std::int64_t expert_groups = 0;
  // The share of the layer's keys and values that context parallelism's ring exchange passes
  // beside this kernel (forward the K/V blocks, backward their gradients too; the workload
  // builder prices it when cp > 1): 1 for the fused attention core (Ring Attention, Liu et al.
  // 2023; Transformer Engine's context-parallel attention), which computes each block as it
  // arrives. Unfused attention splits the ring as Ring Self-Attention does (Li et al. 2021,
  // "Sequence Parallelism: Long Sequence Training from System Perspective", §3.2: Ring-QK
  // passes the keys for the scores, Ring-AV the values for the context): the scores GEMM takes
  // the keys' share, the context GEMM the values'. 0 for every other kernel.
  double cp_kv_share = 0.0;
};

// What a rank of a layer sees of one micro-batch.
struct LayerShape {
  std::int64_t micro_batch = 1;    // sequences
  std::int64_t seq_len = 0;        // full sequence length (before the CP split)
  std::int64_t tp = 1;             // tensor-parallel degree
  std::int64_t cp = 1;             // context-parallel degree: each rank holds seq_len / cp
  bool sequence_parallel = false;  // Megatron SP: norms, residuals split over TP too
  std::int64_t element_bytes = 2;  // bytes of one activation or weight element (bf16: 2)
  // Causal attention run by a kernel that skips the masked half (FlashAttention-2). false gives
  // the full, model-FLOPs convention count.
  bool causal = true;
  // Attention as Megatron-LM computed it before FlashAttention (megatron/model/transformer.py,
  // ParallelAttention, 2019-2022): a batched GEMM writing the s x s scores (baddbmm), the fused
  // scale-mask-softmax, dropout on the probabilities (attention_dropout) and a batched GEMM
  // with V (bmm), each through HBM; the masked half is computed too. false: one fused
  // flash-attention kernel (attn_core).
  bool unfused_attention = false;
  bool attention_dropout = false;  // unfused only: torch.nn.Dropout on the s x s probabilities
  // Unfused attention only: the scale, the causal mask and the softmax as separate PyTorch ops
  // over the s x s scores, each through HBM (Megatron-LM of 2019, mpu/transformer.py); false:
  // the fused scale-mask-softmax kernel.
  bool unfused_softmax = false;
  // The row-parallel GEMM's bias, the hidden-state dropout and the residual add as three
  // separate ops (Megatron-LM of 2019, mpu/layers.py and mpu/transformer.py); false: one fused
  // residual add (the bias and dropout fused in, as bias_dropout_add from 2020 on).
  bool unfused_bias_dropout_add = false;
  std::int64_t ep = 1;  // expert-parallel degree: MoE layers hold num_experts / ep experts
  // Megatron's vocab-parallel cross entropy as separate ops over fp32 logits (stack
  // loss.cross_entropy "unfused"); false: one fused kernel.
  bool unfused_cross_entropy = false;
  // Eager PyTorch kernels priced op by op (stack keys of the same names, docs/stacks.md):
  // torchtitan's fp32 logits and F.cross_entropy (loss.cross_entropy "fp32_logits"), RMSNorm in
  // fp32 op by op (norm.rmsnorm "eager_fp32"), complex fp32 RoPE (rope.kernel "complex_fp32"),
  // K and V copied to every query head (attention.gqa "repeat_kv"), SwiGLU as silu then
  // multiply (mlp.activation "eager").
  bool fp32_logits_cross_entropy = false;
  bool eager_fp32_rmsnorm = false;
  bool complex_fp32_rope = false;
  bool gqa_repeat_kv = false;
  bool eager_swiglu = false;
  // What selective recomputation recomputes (stack recompute.selective).
  SelectiveRecompute selective = SelectiveRecompute::AttentionCore;
};

// torchtitan's op-level selective activation checkpointing (torchtitan/models/llama/
// parallelize_llama.py, _apply_ac_to_transformer_block, 2024: `_save_list` and
// `_custom_policy`): inside each transformer block the outputs of torch.mm, of the SDPA
// attention kernel and of max are saved, except every second mm in forward order (the policy
// counts mm calls per block and recomputes the even ones); every other op (norms, RoPE,
// activations, residual adds, batched and grouped matmuls) is recomputed in backward. Sets
// each kernel's selective_recompute to the share of its forward FLOPs recomputed: a memory-bound
// kernel 1, the flash-attention kernel 0, a GEMM the share of its mm calls recomputed. trainsim
// fuses some of torchtitan's mm calls: qkv_proj is wq, wk, wv (widths q, kv, kv), mlp_up_gate is
// w1 and w3 (equal widths); torchtitan's Llama forward calls them in that order, then wo, then
// w2 (feed_forward: w2(silu(w1(x)) * w3(x))). So for a SwiGLU layer wk, wo and w3 are
// recomputed; for a GELU MLP (w1, w2) wk, wo and w2.
void apply_op_level_selective(std::vector<KernelSpec>& layer, const ModelSpec& m,
                              const LayerShape& s);

// Megatron-Core's selective recomputation of the latent attention's up-projections
// (recompute_modules ["mla_up_proj"], which Megatron-Bridge 0.2.0 and 0.3.0 set for DeepSeek-V3;
// megatron/core/transformer/multi_latent_attention.py, recompute_up_proj, read at Megatron-LM
// d98e8a64): the query and key-value up-projections (linear_q_up_proj, or linear_q_proj without a
// query LoRA, and linear_kv_up_proj) and RoPE run under tensor_parallel.CheckpointWithoutOutput,
// whose outputs, the attention's query, key and value, are freed once the attention kernel has run
// (discard_output_and_register_recompute) and recomputed before its backward. Sets those kernels'
// selective_recompute to 1 and every other kernel's, the attention core's included, to 0. A layer
// without latent attention recomputes nothing.
void apply_mla_up_proj_selective(std::vector<KernelSpec>& layer, const ModelSpec& m);

// Tokens one rank processes per micro-batch: micro_batch * seq_len / cp.
[[nodiscard]] std::int64_t local_tokens(const LayerShape& shape);

// Whether an MoE layer routes each TP rank's own share of the tokens: Megatron-Core's all-to-all
// token dispatcher under sequence parallelism (ep > 1, tp > 1; Megatron-Core refuses expert and
// tensor parallelism without it). Each TP rank then runs the router, top-k, permute and
// unpermute on its tokens / tp sequence-parallel tokens and sends tokens / tp x top-k rows over
// the EP group; the expert tensor-parallel group (= TP) gathers the rows it received before the
// expert GEMMs and reduce-scatters their output after them (MoEAlltoAllTokenDispatcher:
// "permute -> A2A(EP) -> AG(TP)" and "RS(TP) -> A2A(EP) -> unpermute";
// megatron/core/transformer/moe/token_dispatcher.py, whose notation gives num_local_tokens as
// S/TP*B). Otherwise every TP rank routes the whole micro-batch after the block's input is
// gathered, as the all-gather dispatcher and tp = 1 do.
[[nodiscard]] bool moe_routes_tp_shares(const LayerShape& shape);
// The tokens a rank routes per micro-batch: local_tokens / tp where moe_routes_tp_shares
// (sequence parallelism makes them divide), else local_tokens.
[[nodiscard]] std::int64_t moe_routed_tokens(const LayerShape& shape);

// The rows the busiest EP rank receives over the balanced R = tokens x top-k: the model's
// expert_load_imbalance c (the most-loaded expert over the mean), within what the rank's
// num_experts / ep experts can hold of the ep ranks' tokens, min(c, ep). Its experts are taken
// all as loaded as the most-loaded one (exact with one expert per rank, the worst case with
// more); they cannot receive more than every token's copies, ep x R, so at ep 1, where one rank
// holds every expert, the rank's rows are R whatever the skew.
[[nodiscard]] double expert_rank_imbalance(const ModelSpec& m, std::int64_t ep);

// The kernels of one transformer layer in forward order (with multi-head latent attention its
// attention half is mla_q_down, mla_q_norm, mla_q_up, mla_kv_down, mla_kv_norm, mla_kv_up,
// rope, attn_core with query/key heads of nope + rope and value heads of v_head_dim,
// attn_out_proj: kernels.cpp add_mla_attention_kernels, always as fused attention), split as
// Megatron-LM does
// (Shoeybi et al. 2019 §3; Korthikanti et al. 2022 §4.2.2): column-parallel QKV and
// gate/up, row-parallel output and down projections (FLOPs / tp), attention heads / tp; norms,
// residual adds (and RoPE) on every TP rank unless sequence parallelism splits them (/ tp).
// CP divides the queries of each rank; its keys span the whole sequence.
// Names: attn_norm, qkv_proj, rope (RoPE models), attn_core, attn_out_proj, attn_residual_add,
// mlp_norm, mlp_up_gate (SwiGLU) or mlp_up (GELU), mlp_act, mlp_down, mlp_residual_add.
// Requires a valid model and shape (tp, cp, micro_batch, seq_len >= 1).
[[nodiscard]] std::vector<KernelSpec> layer_kernels(const ModelSpec& m, const LayerShape& shape);

// The weight tensors of a dense layer's kernels (`layer`, from layer_kernels) as Megatron-LM
// holds them, in forward order: each weight GEMM's [k x n] elements (fused QKV, output, MLP up
// with its gate, down; the unfused attention's batched GEMMs carry no weight), keeping those of
// `min_elements` or more (DeepSpeed ZeRO-3's stage3_param_persistence_threshold: smaller
// tensors stay whole on every rank).
[[nodiscard]] std::vector<double> weight_tensor_elements(const std::vector<KernelSpec>& layer,
                                                         std::int64_t min_elements);

// The kernels of one MoE layer (a layer past num_dense_layers of an MoE model) in forward
// order: the attention half as in layer_kernels, then mlp_norm, moe_router (a GEMM of tokens x
// hidden x num_experts, replicated on TP ranks), moe_topk (fp32 softmax and top-k), moe_permute
// (a row per chosen expert); the router, top-k, permute and unpermute over tokens / tp where
// moe_routes_tp_shares; the routed experts as grouped GEMMs expert_up_gate (expert_up for
// GELU), expert_act, expert_down, then moe_unpermute (the k outputs weighted and summed), the
// shared experts as a dense MLP of num_shared_experts x shared_expert_ffn_hidden
// (shared_expert_up_gate, shared_expert_act, shared_expert_down) when the model has them, and
// mlp_residual_add. The all-to-all dispatch (before the expert GEMMs) and combine (after them)
// are the workload builder's.
// Expert GEMMs on one EP rank (Megatron-Core GroupedMLP with the all-to-all token dispatcher;
// Lepikhin et al. 2020, GShard §2.2): each of the ep ranks of an EP group sends each expert
// tokens x k / num_experts rows in balance, so a rank's num_experts / ep local experts receive
// R = tokens x k rows in all, R x ep / num_experts each: a grouped GEMM of num_experts / ep
// groups of that many rows, hidden x expert_ffn_hidden / tp (expert TP = tp). The rank's
// expert FLOPs, 2 R (2 or 3) hidden f / tp forward, do not depend on ep.
// Load imbalance: a layer's expert phase ends when its busiest EP rank ends, which receives
// expert_rank_imbalance x R rows, min(c, ep) for the model's expert_load_imbalance c; its
// grouped GEMMs and activation take that many times the balanced time (time linear in rows at
// a fixed tile efficiency): the kernels carry the factor in load_imbalance and their balanced
// FLOPs and bytes.
// Requires is_moe(m), a valid shape with ep dividing num_experts.
[[nodiscard]] std::vector<KernelSpec> moe_layer_kernels(const ModelSpec& m,
                                                        const LayerShape& shape);

// Parameters of one dense layer on one TP rank: layer_parameters_per_tp_rank (counts.hpp), or
// with multi-head latent attention its projections as add_mla_attention_kernels splits them
// (kernels.cpp: the down projections and latent norms replicated, the up projections
// column-parallel, the output row-parallel). Requires tp >= 1.
[[nodiscard]] std::int64_t dense_layer_parameters_per_rank(const ModelSpec& m, std::int64_t tp);

// Parameters of one MoE layer on one rank under tensor and expert parallelism: `dense`, the
// part every data-parallel rank holds (attention and norms split as layer_parameters_per_tp_rank,
// the router hidden x num_experts (and its bias, Qwen2-MoE's shared-expert gate) replicated,
// shared experts split over TP as a dense MLP); `expert`, the num_experts / ep routed experts
// this EP rank holds, each an MLP split over TP (expert TP = tp).
struct LayerRankParameters {
  std::int64_t dense = 0;
  std::int64_t expert = 0;
  [[nodiscard]] std::int64_t total() const { return dense + expert; }
};
// Requires is_moe(m), tp >= 1 and ep dividing num_experts.
[[nodiscard]] LayerRankParameters moe_layer_parameters_per_rank(const ModelSpec& m,
                                                                std::int64_t tp, std::int64_t ep);

// The first stage's kernels: the token-embedding lookup (vocab-parallel, then summed over TP),
// plus the learned-position add for models that have one. Name: "embedding".
[[nodiscard]] std::vector<KernelSpec> embedding_kernels(const ModelSpec& m,
                                                        const LayerShape& shape);

// A multi-token-prediction module's kernels before its layer (ModelSpec::mtp_layers;
// megatron/core/transformer/multi_token_prediction.py, _concat_embeddings): the norms of the
// shifted tokens' embedding and of the previous depth's hidden state (mtp_enorm, mtp_hnorm),
// their concatenation (mtp_concat: torch.cat writes 2h per token; its backward is views) and
// the 2h x h projection (mtp_eh_proj, column-parallel: h / tp output columns, a Transformer
// Engine linear). The module's embedding lookup is embedding_kernels; after its layer it runs
// head_kernels (its final norm, the shared LM head and its loss).
[[nodiscard]] std::vector<KernelSpec> mtp_kernels(const ModelSpec& m, const LayerShape& shape);

// The last stage's kernels: final_norm, lm_head (vocab-parallel GEMM, vocab / tp columns) and
// cross_entropy (Megatron's vocab-parallel loss, computed in fp32).
[[nodiscard]] std::vector<KernelSpec> head_kernels(const ModelSpec& m, const LayerShape& shape);

// Mixed-precision AdamW step over `num_params` parameters held by this rank (after any
// sharding), memory-bound. Bytes per parameter: reads gradient (element_bytes), fp32 master
// weight, m and v (12); writes master, m, v (12) and the element_bytes working copy of the
// weight: 24 + 2 * element_bytes = 28 B with bf16. With fp32 training (element_bytes 4) the
// master is the weight: reads g, p, m, v (16), writes p, m, v (12): also 28 B.
// State layout from Rajbhandari et al. 2020 (ZeRO) §3.1; update from Loshchilov & Hutter 2019
// Algorithm 2. Name: "optimizer_step"; the backward fields are zero. `master_bytes` and
// `moment_bytes` (m and v together) are the state's widths when a precision-aware optimizer
// keeps them in 16 bits (stack::StackSpec::OptimizerState): each is read and written once, so
// the bytes are 2 e + 2 (master + moments) mixed, 12 + 2 moments in fp32.
[[nodiscard]] KernelSpec adamw_step_kernel(std::int64_t num_params, std::int64_t element_bytes,
                                           double master_bytes = 4.0, double moment_bytes = 8.0);
// SGD with momentum: reads g, master, momentum; writes master, momentum, working copy
// (fp32: reads g, p, momentum; writes p, momentum).
[[nodiscard]] KernelSpec sgd_step_kernel(std::int64_t num_params, std::int64_t element_bytes);

// Extra forward FLOPs that activation recomputation adds to one layer's backward, for HFU:
// selective recomputes the kernels marked selective_recompute (the attention core;
// Korthikanti et al. 2022 §5), full recomputes the whole forward of the layer (Chen et al. 2016;
// Korthikanti et al. 2022 §4.3). `layer` is layer_kernels()'s result.
[[nodiscard]] Flops selective_recompute_flops(const std::vector<KernelSpec>& layer);
[[nodiscard]] Flops full_recompute_flops(const std::vector<KernelSpec>& layer);

// Sums over a list of kernels.
[[nodiscard]] Flops total_forward_flops(const std::vector<KernelSpec>& kernels);
[[nodiscard]] Flops total_backward_flops(const std::vector<KernelSpec>& kernels);

}  // namespace trainsim::model
