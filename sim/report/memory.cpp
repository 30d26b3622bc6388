#include "trainsim/report/memory.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "trainsim/model/counts.hpp"
#include "trainsim/model/kernels.hpp"
#include "trainsim/parallel/placement.hpp"
#include "trainsim/workload/schedule.hpp"

namespace trainsim::report {
namespace {

using parallel::PipelineSchedule;
using parallel::Recompute;
using parallel::Sharding;

double d(std::int64_t v) { return static_cast<double>(v); }

// Bytes of optimizer state per parameter (ZeRO §3.1: K = 12 for mixed-precision Adam, fp32
// master weights, m and v), with the stack's dtypes for the master weights and Adam's moments.
double optimizer_bytes_per_parameter(parallel::Optimizer optimizer, std::int64_t e,
                                     const stack::StackSpec::OptimizerState& state) {
  const bool mixed = e < 4;
  const double master = mixed ? state.main_params_bytes : 0.0;
  if (optimizer == parallel::Optimizer::AdamW) {
    return master + state.exp_avg_bytes + state.exp_avg_sq_bytes;
  }
  return master + 4.0;  // momentum
}

model::LayerShape layer_shape(const parallel::Scenario& s) {
  return model::LayerShape{.micro_batch = s.training.micro_batch,
                           .seq_len = s.training.seq_len,
                           .tp = s.parallel.tp,
                           .cp = s.parallel.cp,
                           .sequence_parallel = s.parallel.sequence_parallel,
                           .element_bytes = element_bytes(s.training.precision),
                           .ep = s.parallel.ep};
}

// Bytes per layer weight of the FP8 copies Transformer Engine keeps across the step. The stack's
// fp8.weight_cache_bytes_per_param counts them as Hopper keeps them: 1 the FP8 weight, 2 with the
// copy its backward GEMM reads. TE v2.9-v2.12 (pytorch/csrc/quantizer.cpp,
// Float8Quantizer::create_tensor and Float8CurrentScalingQuantizer::create_tensor:
// with_transpose = columnwise_usage && !non_tn) keeps no transpose where FP8 GEMMs take any
// layout (nvte_is_non_tn_fp8_gemm_supported: sm 10.x-11.x and >= 13.0, the Blackwell
// data-center GPUs of the built-in profiles), so a per-tensor recipe holds 1 byte there. MXFP8
// quantizes the backward copy columnwise on every GPU (MXFP8Quantizer::create_tensor: rowwise
// and columnwise data, each with one E8M0 scale byte per 32 values). Block scaling
// (Float8BlockScaling) keeps both too, a weight with one FP32 scale per 128 x 128 block.
double fp8_weight_copy_bytes(const stack::Fp8Spec& fp8, hardware::GpuArch arch) {
  const double copies = fp8.weight_cache_bytes_per_param;
  if (fp8.recipe == stack::Fp8Recipe::Mxfp8) return copies * (1.0 + 1.0 / 32.0);
  if (fp8.recipe == stack::Fp8Recipe::Blockwise) return copies * (1.0 + 4.0 / (128.0 * 128.0));
  if (arch == hardware::GpuArch::Blackwell) return std::min(copies, 1.0);
  return copies;
}

// Activations the last stage keeps for the final norm, the LM head and the loss, per
// micro-batch (Korthikanti et al. 2022 §4.3: 4 s b h / t (1 + v / h) with SP): the inputs of the
// final norm and of the LM head (/ t with SP) and the fp32 softmax of the vocab-parallel loss.
// An eager RMSNorm adds its fp32 copy (eager_norm_extra_bytes). Each multi-token-prediction
// module runs the head again (its final norm, the LM head and the loss) and keeps its enorm and
// hnorm inputs and the projection's 2h-wide input, 4h per residual token (model::mtp_kernels);
// its layer is among the stage's layers.
double head_activation_bytes(const model::ModelSpec& m, const model::LayerShape& shape,
                             double norm_extra_bytes) {
  const double tokens = d(model::local_tokens(shape));
  const double residual = shape.sequence_parallel ? tokens / d(shape.tp) : tokens;
  const double e = d(shape.element_bytes);
  const double head = residual * (2.0 * e + norm_extra_bytes) * d(m.hidden) +
                      4.0 * tokens * d(model::ceil_div(m.vocab, shape.tp));
  const double mtp_inputs = 4.0 * residual * d(m.hidden) * e;
  return head * d(1 + m.mtp_layers) + mtp_inputs * d(m.mtp_layers);
}

// MoE layers among the layers pipeline stage `stage` runs, under the workload builder's
// assignment (parallel::chunk_layers: stage i runs chunks c pp + i); layers past
// num_dense_layers are MoE.
std::int64_t moe_layers_in_stage(const parallel::Scenario& s, std::int64_t stage) {
  const model::ModelSpec& m = s.model;
  const std::int64_t pp = s.parallel.pp;
  std::int64_t count = 0;
  for (std::int64_t c = 0; c < s.parallel.virtual_stages; ++c) {
    const parallel::ChunkLayers chunk = parallel::chunk_layers(s, c * pp + stage);
    const std::int64_t end = chunk.first + chunk.count;
    count += std::max<std::int64_t>(0, end - std::max(chunk.first, m.num_dense_layers));
  }
  return count;
}

// Layers of pipeline stage `stage` that keep all their activations under a partial full
// recomputation (ParallelPlan::recompute_layers: the first recompute_layers layers of each
// model chunk are recomputed, the rest are not), dense and MoE apart, under the same assignment
// as moe_layers_in_stage. None when every layer or no layer is recomputed whole.
struct KeptLayers {
  std::int64_t dense = 0;
  std::int64_t moe = 0;
  // Every chunk of the stage that has layers keeps at least one of them.
  bool every_chunk_keeps = false;
};
KeptLayers kept_layers_in_stage(const parallel::Scenario& s, std::int64_t stage) {
  KeptLayers out;
  const parallel::ParallelPlan& p = s.parallel;
  if (p.recompute != Recompute::Full || p.recompute_layers == 0) return out;
  const model::ModelSpec& m = s.model;
  out.every_chunk_keeps = true;
  for (std::int64_t c = 0; c < p.virtual_stages; ++c) {
    const parallel::ChunkLayers chunk = parallel::chunk_layers(s, c * p.pp + stage);
    const std::int64_t end = chunk.first + chunk.count;
    const std::int64_t kept_first = std::min(end, chunk.first + p.recompute_layers);
    if (chunk.count > 0 && kept_first == end) out.every_chunk_keeps = false;
    const std::int64_t moe =
        std::max<std::int64_t>(0, end - std::max(kept_first, m.num_dense_layers));
    out.moe += model::is_moe(m) ? moe : 0;
    out.dense += (end - kept_first) - (model::is_moe(m) ? moe : 0);
  }
  return out;
}

// Tensors of an MLP's inner width saved for backward: GELU's input and output, or SwiGLU's
// gate, up and product (fused), plus silu's output when it runs as its own op
// (ActivationOptions::eager_swiglu).
double mlp_saved_tensors(const model::ModelSpec& m, const ActivationOptions& options) {
  if (m.activation != model::Activation::SwiGlu) return 2.0;
  return options.eager_swiglu ? 4.0 : 3.0;
}

// Bytes per element of a norm's input that the norm saves beyond the fused kernel's input (e):
// the fp32 copy of an eager RMSNorm (ActivationOptions::eager_fp32_rmsnorm).
double eager_norm_extra_bytes(const model::ModelSpec& m, const ActivationOptions& options) {
  return m.norm == model::Norm::RmsNorm && options.eager_fp32_rmsnorm ? 4.0 : 0.0;
}

}  // namespace

std::int64_t element_bytes(hardware::Dtype precision) {
  switch (precision) {
    case hardware::Dtype::Fp32:
    case hardware::Dtype::Tf32:
      return 4;
    case hardware::Dtype::Fp16:
    case hardware::Dtype::Bf16:
    case hardware::Dtype::Fp8:
      return 2;
  }
  return 2;
}

std::int64_t layers_in_stage(const parallel::Scenario& s, std::int64_t stage) {
  std::int64_t count = 0;
  for (std::int64_t c = 0; c < s.parallel.virtual_stages; ++c) {
    count += parallel::chunk_layers(s, c * s.parallel.pp + stage).count;
  }
  return count;
}

bool layers_held_in_fp8(const parallel::Scenario& s) {
  const Sharding sharding = s.parallel.sharding;
  return s.training.precision == hardware::Dtype::Fp8 && s.stack.fp8.param_gather &&
         (sharding == Sharding::None || sharding == Sharding::Zero1);
}

std::int64_t sharding_degree(const parallel::Scenario& s) {
  const std::int64_t replicas = s.parallel.dp * s.parallel.cp;
  switch (s.parallel.sharding) {
    case Sharding::None:
      return 1;
    case Sharding::Zero1:
    case Sharding::ShardGradOp:
    case Sharding::FullShard:
      return replicas;
    case Sharding::HybridShard:
      // The shard group's data-parallel ranks and their CP peers, as the collectives run among
      // them (parallel::place; parallel::hybrid_shard_size: shard_group, default one node's).
      return parallel::hybrid_shard_size(s) * s.parallel.cp;
  }
  return 1;
}

std::int64_t expert_sharding_degree(const parallel::Scenario& s) {
  switch (s.parallel.sharding) {
    case Sharding::None:
      return 1;
    case Sharding::HybridShard:
      return sharding_degree(s);
    case Sharding::Zero1:
    case Sharding::ShardGradOp:
    case Sharding::FullShard:
      return std::max<std::int64_t>(1, sharding_degree(s) / s.parallel.ep);
  }
  return 1;
}

Bytes activation_bytes_per_moe_layer(const model::ModelSpec& m, const model::LayerShape& shape,
                                     Recompute recompute, const ActivationOptions& options) {
  if (recompute == Recompute::Full) return activation_bytes_per_layer(m, shape, recompute, options);
  // The attention half, the norms' and the MLP block's input: the dense formula without an MLP.
  model::ModelSpec attention_only = m;
  attention_only.ffn_hidden = 0;
  const double base = activation_bytes_per_layer(attention_only, shape, recompute, options).value();
  const double tokens = d(model::local_tokens(shape));
  const double e = d(shape.element_bytes);
  const double g = options.fp8_gemm_inputs ? 1.0 : e;
  const double h = d(m.hidden);
  const double mlp_tensors = mlp_saved_tensors(m, options);
  // Per element of an MLP's inner width: its tensors but the last (e) and the down
  // projection's input (g), as in activation_bytes_per_layer.
  const double per_inner = e * (mlp_tensors - 1.0) + g;
  const double fe_local = d(model::ceil_div(m.expert_ffn_hidden, shape.tp));
  const double fs_local =
      d(model::ceil_div(m.num_shared_experts * m.shared_expert_ffn_hidden, shape.tp));
  // Per routed copy the permuted input, the first expert GEMM's input (its FP8 cast, g, where
  // the stack saves those: Transformer Engine's GroupedLinear), and the expert's output (e).
  const double routed = tokens * d(m.num_experts_per_token) * ((g + e) * h + per_inner * fe_local) *
                        model::expert_rank_imbalance(m, shape.ep);
  // The block's MLP input, which the attention-only formula counts as one saved GEMM input (g):
  // under FP8 the router, a bf16 matmul, keeps it in bf16 (e), and only the shared experts'
  // GEMMs keep an FP8 cast of it. Without FP8 one tensor serves them all (g == e).
  const double residual = shape.sequence_parallel ? tokens / d(shape.tp) : tokens;
  // Op-level selective recomputation keeps no GEMM inputs in the attention half, so there is
  // nothing to swap.
  const bool op_level =
      recompute == Recompute::Selective && options.selective == model::SelectiveRecompute::OpLevel;
  const double block_input = options.fp8_gemm_inputs && !op_level
                                 ? residual * h * (e - g + (m.num_shared_experts > 0 ? g : 0.0))
                                 : 0.0;
  // The fp32 router probabilities of the tokens this rank routes (model::moe_routes_tp_shares).
  const double router = d(model::moe_routed_tokens(shape)) * 4.0 * d(m.num_experts);
  const double shared = tokens * per_inner * fs_local;
  return Bytes(base + routed + router + shared + block_input);
}

Bytes activation_bytes_per_layer(const model::ModelSpec& m, const model::LayerShape& shape,
                                 Recompute recompute, const ActivationOptions& options) {
  const double tokens = d(model::local_tokens(shape));
  const double t = d(shape.tp);
  const double residual = shape.sequence_parallel ? tokens / t : tokens;
  const double e = d(shape.element_bytes);
  const double h = d(m.hidden);
  if (recompute == Recompute::Full) {
    // Only the layer's input is kept (Korthikanti et al. 2022 §4.3: 2sbh, / t with SP).
    return Bytes(residual * e * h);
  }
  const double heads_local = d(model::ceil_div(m.num_heads, shape.tp));
  double q_local = heads_local * d(m.head_dim);
  double kv_local = d(model::ceil_div(m.num_kv_heads, shape.tp) * m.head_dim);
  double latents = 0.0;
  if (model::has_mla(m)) {
    // Latent attention: Q and K of nope + rope per head, V and the output of v_head_dim (the
    // 2q + 2kv below), plus the latents' norm inputs and up-projection inputs, replicated over
    // TP: 2 e (q_lora_rank + kv_lora_rank) per token.
    q_local = heads_local * d(m.qk_nope_head_dim + m.qk_rope_head_dim);
    kv_local = heads_local * d(m.v_head_dim);
    latents = tokens * 2.0 * e * d(m.q_lora_rank + m.kv_lora_rank);
  }
  const double f_local = d(model::ceil_div(m.ffn_hidden, shape.tp));
  const double mlp_tensors = mlp_saved_tensors(m, options);
  const bool selective = recompute == Recompute::Selective;
  if (selective && options.selective == model::SelectiveRecompute::OpLevel) {
    // torchtitan's op-level policy (model::apply_op_level_selective): the block's input (kept
    // by the checkpoint; split over TP with SP), the saved mm outputs, wq's (q) and wv's (kv),
    // the attention kernel's output (q) and fp32 log-sum-exp, and with SwiGLU w1's (f) and
    // w2's (h, each TP rank's partial sum) or with a GELU MLP w1's (f) alone; norms, RoPE, the
    // activation and wk, wo, w3 (GELU: w2) are recomputed. Latent attention keeps its
    // latents as well, and its attention output is V's width (v_head_dim per head, kv_local
    // here), not the query's; its saved projections are counted as the Llama layout's (wq's
    // and wv's outputs), an approximation: every second mm of its own chain (q_a, q_b, kv_a,
    // kv_b, o) would keep other widths. A layer without a dense MLP (the attention half of a
    // mixture-of-experts layer, ffn_hidden 0) has no w1 or w2 output: its experts' tensors are
    // counted by activation_bytes_per_moe_layer.
    const double mm_outputs = f_local == 0.0                              ? 0.0
                              : m.activation == model::Activation::SwiGlu ? f_local + h
                                                                          : f_local;
    const double attention_output = model::has_mla(m) ? kv_local : q_local;
    return Bytes(residual * e * h +
                 tokens * e * (q_local + attention_output + kv_local + mm_outputs) +
                 tokens * heads_local * 4.0 + latents);
  }
  // Bytes of a saved GEMM input: the FP8 cast (1 byte) when the stack saves those, else e.
  const double g = options.fp8_gemm_inputs ? 1.0 : e;
  // Replicated over TP unless SP: two norm inputs (2 e h), the QKV and MLP GEMM inputs (2 g h),
  // and the 1-byte dropout masks after attention and after the MLP (2 h).
  // An eager RMSNorm adds its fp32 copy to each norm's input (eager_norm_extra_bytes).
  const double replicated = residual * (2.0 * (e + eager_norm_extra_bytes(m, options)) * h +
                                        2.0 * g * h + (options.dropout ? 2.0 * h : 0.0));
  // repeat_kv: the attention kernel keeps K and V at the query heads' width (latent attention
  // has no shared heads to repeat, as in model::add_attention_kernels).
  if (options.gqa_repeat_kv && options.flash_attention && !model::has_mla(m)) {
    kv_local = std::max(kv_local, q_local);
  }
  // Split over TP: Q, K, V and the attention output (e, the attention kernel's own), the MLP's
  // intermediate tensors but the last (e) and the last, the down projection's input (g). FP8
  // adds the attention projection's 1-byte input cast beside the e-byte attention output.
  // Megatron-Core's mla_up_proj recomputation frees the attention's query, key and value once
  // the attention kernel has run (discard_output_and_register_recompute); the output (kv_local
  // wide), the log-sum-exp and the up-projections' inputs (the latents) stay.
  const bool up_proj_recomputed =
      selective && model::has_mla(m) && options.selective == model::SelectiveRecompute::MlaUpProj;
  const double attention_tensors = up_proj_recomputed ? kv_local : 2.0 * q_local + 2.0 * kv_local;
  const double split = tokens * (e * attention_tensors + (options.fp8_gemm_inputs ? q_local : 0.0) +
                                 e * (mlp_tensors - 1.0) * f_local + g * f_local);
  // The attention kernel's own tensors stay unless its core is recomputed (Megatron's
  // selective): every policy but AttentionCore keeps them as without recomputation.
  const bool attention_kept =
      recompute == Recompute::None ||
      (selective && options.selective != model::SelectiveRecompute::AttentionCore);
  double scores = 0.0;
  if (attention_kept) {
    if (options.flash_attention) {
      scores = tokens * heads_local * 4.0;  // fp32 log-sum-exp per head and query
    } else {
      // Softmax output (e), and with dropout its 1-byte mask and output (e): 5 a s^2 b / t.
      const double per_score = e + (options.dropout ? 1.0 + e : 0.0);
      scores = tokens * heads_local * d(shape.seq_len) * per_score;
    }
  }
  return Bytes(replicated + split + scores + latents);
}

// Micro-batches whose activations a layer of stage `stage` holds at the stage's peak, averaged
// over the stage's layers.
double in_flight_microbatches(const parallel::Scenario& s, std::int64_t stage) {
  const auto m = d(std::max<std::int64_t>(s.num_microbatches(), 1));
  const std::int64_t pp = s.parallel.pp;
  const auto p = d(pp);
  const auto i = d(stage);
  const std::int64_t v = s.parallel.virtual_stages;
  switch (s.parallel.schedule) {
    case PipelineSchedule::GPipe:
      return m;
    case PipelineSchedule::Interleaved:
      if (v > 1) {
        // The stage's passes in the schedule's order (workload::pipeline_order: Megatron-LM's
        // get_num_warmup_microbatches, 2 (p - i - 1) + (v - 1) p warm-up forwards, every one
        // where m = p, then one forward and one backward): a forward holds its chunk's layers
        // until its backward.
        // The peak of the layers held, over the layers of all chunks: chunks differ when the
        // split counts the embedding or the loss, leaves a remainder or follows a layout, and
        // the steady state then shifts between them (p 2, v 2, chunks of 10 and 2 layers: 4
        // passes of the first held after F, B, F, where the warm-up's end and one forward hold
        // 3 and 2).
        // Steady state holds the same chunks every p v steps (both orders repeat with that
        // period), so one period past the warm-up reaches every peak; the cool-down only frees.
        const std::int64_t passes = std::max<std::int64_t>(s.num_microbatches(), 1) * v;
        const std::int64_t warmup = workload::interleaved_warmup(pp, stage, v, passes);
        std::vector<std::int64_t> layers(static_cast<std::size_t>(v));
        std::int64_t all = 0;
        for (std::int64_t c = 0; c < v; ++c) {
          layers[static_cast<std::size_t>(c)] = parallel::chunk_layers(s, c * pp + stage).count;
          all += layers[static_cast<std::size_t>(c)];
        }
        const auto chunk_of = [&](std::int64_t k, bool backward) {
          return layers[static_cast<std::size_t>(
              workload::interleaved_step(k, pp, v, backward).chunk)];
        };
        std::int64_t held = 0;
        std::int64_t peak = 0;
        for (std::int64_t k = 0; k < warmup; ++k) held += chunk_of(k, false);
        const std::int64_t last = std::min(passes, warmup + pp * v + 1);
        for (std::int64_t f = warmup, b = 0; f < last; ++f, ++b) {
          held += chunk_of(f, false);
          peak = std::max(peak, held);
          held -= chunk_of(b, true);
        }
        peak = std::max(peak, held);
        return all > 0 ? d(peak) / d(all) : d(std::min(warmup + 1, passes)) / d(v);
      }
      return std::min(p - i, m);
    case PipelineSchedule::OneFOneB:
      return std::min(p - i, m);
  }
  return m;
}

MemoryBreakdown memory_per_gpu(const parallel::Scenario& s, std::int64_t stage) {
  const auto& m = s.model;
  const auto& plan = s.parallel;
  const std::int64_t tp = plan.tp;
  const bool first = stage == 0;
  const bool last = stage == plan.pp - 1;
  const std::int64_t e = element_bytes(s.training.precision);

  // Parameters of this stage on one TP rank.
  const std::int64_t layer = model::dense_layer_parameters_per_rank(m, tp);
  const std::int64_t embedding = first ? model::embedding_parameters_per_tp_rank(m, tp) : 0;
  // The final norm and the LM head, and with multi-token prediction its modules' extras and
  // Megatron-Core's embedding copy (model::last_stage_parameters_per_tp_rank).
  const std::int64_t head = last ? model::last_stage_parameters_per_tp_rank(m, tp, plan.pp) : 0;
  const std::int64_t num_layers = layers_in_stage(s, stage);
  double params = d(num_layers * layer + embedding + head);
  // MoE layers: their routed experts (this EP rank's) are sharded over the expert-data-parallel
  // ranks, apart from the rest; the largest layer and all layers' parameters for the buffers.
  double expert_params = 0.0;
  std::int64_t stage_layer_params = num_layers * layer;
  std::int64_t moe_layers = 0;
  // FSDP/ZeRO gathers a routed expert only where the expert-data-parallel ranks shard it: at
  // ep = dp each EP rank holds its experts whole (expert_sharding_degree 1), in the parameters
  // and gradients, and no gather or unsharded gradient buffer is needed for them. The largest
  // layer that sharding gathers, then.
  const bool experts_sharded = expert_sharding_degree(s) > 1;
  std::int64_t largest_gathered_layer = layer;
  std::int64_t moe_gathered = 0;  // what sharding gathers of one MoE layer
  if (model::is_moe(m)) {
    moe_layers = std::min(num_layers, moe_layers_in_stage(s, stage));
    const auto moe = model::moe_layer_parameters_per_rank(m, tp, plan.ep);
    params = d((num_layers - moe_layers) * layer + moe_layers * moe.dense + embedding + head);
    expert_params = d(moe_layers * moe.expert);
    stage_layer_params = (num_layers - moe_layers) * layer + moe_layers * moe.total();
    if (moe_layers > 0) {
      moe_gathered = experts_sharded ? moe.total() : moe.dense;
      largest_gathered_layer =
          moe_layers == num_layers ? moe_gathered : std::max(layer, moe_gathered);
    }
  }

  const double degree = d(sharding_degree(s));
  const bool shard_state = plan.sharding == Sharding::ShardGradOp ||
                           plan.sharding == Sharding::FullShard ||
                           plan.sharding == Sharding::HybridShard;
  const bool shard_optimizer = shard_state || plan.sharding == Sharding::Zero1;

  MemoryBreakdown out;
  out.stage = stage;
  const double expert_degree = d(expert_sharding_degree(s));
  // Zero for a dense model (x + 0.0 == x exactly).
  const double expert_state = expert_params / (shard_state ? expert_degree : 1.0);
  // One weight tensor gathered at a time (DeepSpeed ZeRO-3 before v0.6): the layers' tensors
  // under fsdp.persistence_threshold (biases and norms; GPT-3 175B's 13h = 159,744 elements a
  // layer) are never partitioned (ds_persist, stage3.py), so every rank holds them whole, and
  // their gradients, which the workload reduces with one AllReduce per layer
  // (iteration_builder's layer_replicated_elements_). DeepSpeed partitions their fp32 optimizer
  // state with the rest.
  // Dense layers only: MoE layers stay per unit (iteration_builder). Under SHARD_GRAD_OP the
  // whole parameters are in the buffers already (all gathered): only their gradients add.
  const auto shape = layer_shape(s);
  // A dense layer's weight tensors gathered one at a time: those of the threshold or more.
  const std::vector<double> gathered_tensors =
      s.stack.fsdp_gather_granularity == stack::GatherGranularity::Parameter
          ? model::weight_tensor_elements(model::layer_kernels(m, shape),
                                          s.stack.fsdp_persistence_threshold)
          : std::vector<double>{};
  double replicated = 0.0;
  if (shard_state && degree > 1.0 &&
      s.stack.fsdp_gather_granularity == stack::GatherGranularity::Parameter &&
      num_layers > moe_layers) {
    double gathered = 0.0;
    for (const double elements : gathered_tensors) gathered += elements;
    replicated =
        d(num_layers - moe_layers) * std::max(0.0, d(layer) - gathered) * (1.0 - 1.0 / degree);
  }
  const double replicated_parameters = plan.sharding == Sharding::ShardGradOp ? 0.0 : replicated;
  out.parameters = Bytes(d(e) * (params / (shard_state ? degree : 1.0) + replicated_parameters) +
                         d(e) * expert_state);
  const bool fp8 = s.training.precision == hardware::Dtype::Fp8;
  if (layers_held_in_fp8(s)) {
    // --fp8-param-gather: the layers' weights live in their FP8 copies (counted in the buffers
    // below); the embedding, the LM head and the final norm stay in bf16. A stack that keeps no
    // FP8 copies (fp8.weight_cache_bytes_per_param 0) still holds each weight once, 1 byte.
    const double held_fp8 =
        s.stack.fp8.weight_cache_bytes_per_param > 0.0 ? 0.0 : d(stage_layer_params);
    out.parameters = Bytes(d(e) * d(embedding + head) + held_fp8);
  }
  // Gradients in the training dtype, or in the stack's reduce-dtype buffers, whose 16-bit
  // gradients an optimizer that is not precision-aware copies into fp32 main gradients
  // (StackSpec::grads_in_reduce_dtype).
  const std::int64_t grad_e = s.stack.grads_in_reduce_dtype
                                  ? element_bytes(s.stack.reduce_dtype_for(s.training.precision))
                                  : e;
  out.gradients = Bytes(d(grad_e) * (params / (shard_state ? degree : 1.0) + replicated) +
                        d(grad_e) * expert_state);
  // Megatron-Core's precision-aware optimizer runs only as Adam under the distributed optimizer
  // (OptimizerConfig's checks); elsewhere the flag has no optimizer to change, and the copy stays.
  const bool precision_aware = s.stack.precision_aware_optimizer && shard_optimizer &&
                               s.training.optimizer == parallel::Optimizer::AdamW;
  const double main_grads =
      s.stack.grads_in_reduce_dtype && e < 4 && grad_e < 4 && !precision_aware ? 4.0 : 0.0;
  const double state_bytes =
      optimizer_bytes_per_parameter(s.training.optimizer, e, s.stack.optimizer_state) + main_grads;
  out.optimizer = Bytes(state_bytes * params / (shard_optimizer ? degree : 1.0) +
                        state_bytes * expert_params / (shard_optimizer ? expert_degree : 1.0));

  double buffers = 0.0;
  // FSDP's units (FULL_SHARD and SHARD_GRAD_OP alike): the stage's layers, each a unit, and the
  // root unit (the stage's embedding, final norm and LM head, which no layer's unit holds). A
  // stage holds at most 2 layer units at once (current and prefetched), and no more than it has
  // (a stage of one layer, --pipeline-layout 1,30,1, gathered a second that does not exist and
  // needed more under full_shard than under shard_grad_op). The unsharded gradients: while the
  // layers run backward, the LM head's (its backward runs first, and its gradient waits for the
  // root's reduction after the embedding's, the last: in FSDP1's flat parameter, in FSDP2's
  // unsharded .grad; tied to the embedding on one stage, the whole root's) and 2 layers'
  // (computing, reduce-scattering); at the end of backward the root's whole and the last
  // layer's. The larger of the two. The 2 layers are the stage's two largest: a stage of dense
  // layers and one MoE layer gathers one MoE layer at most (two made full_shard need more than
  // shard_grad_op).
  const double layer_unit = d(largest_gathered_layer);
  // The stage's n largest layer units: the larger kind of layer first, then the other.
  const auto largest_layers = [&](std::int64_t n) {
    const std::int64_t dense_layers = num_layers - moe_layers;
    const bool moe_first = moe_gathered > layer;
    const std::int64_t n1 = std::min<std::int64_t>(n, moe_first ? moe_layers : dense_layers);
    const std::int64_t n2 = std::min<std::int64_t>(n - n1, moe_first ? dense_layers : moe_layers);
    return d(n1) * d(moe_first ? moe_gathered : layer) +
           d(n2) * d(moe_first ? layer : moe_gathered);
  };
  const double two_layers = largest_layers(2);
  // Forward holds the units of the stack's gathers in flight, d = fsdp.forward_prefetch (the
  // gather of layer l issued as layer l - d ends: layers l - d + 1 to l, iteration_builder), one
  // under a blocking fetch. PyTorch's rate limiter keeps d = 2, the 2 units backward holds too;
  // a deeper prefetch gathered every unit ahead and counted 2 (llama2-7b on 8 GPUs at d = 64:
  // its 32 gathers issued at the step's start, each unit of 386 MiB allocated as its gather is
  // issued, where 2.24 GiB in all was counted).
  const double forward_layers = largest_layers(
      s.stack.fsdp_blocking_fetch ? 1 : std::max<std::int64_t>(1, s.stack.fsdp_forward_prefetch));
  const double root = d(embedding + head);
  const double head_gradient = !last ? 0.0 : first && m.tied_embeddings ? root : d(head);
  const double unsharded_gradients =
      d(grad_e) *
      std::max(head_gradient + two_layers, root + std::min(1.0, d(num_layers)) * layer_unit);
  if (shard_state && degree > 1.0) {
    if (plan.sharding == Sharding::ShardGradOp) {
      // SHARD_GRAD_OP keeps every unsharded parameter of the stage from its forward AllGather
      // to the end of backward, and the unsharded gradients FULL_SHARD counts (above), so that
      // sharding more never needs more memory than it. Routed experts only where they are
      // sharded (above): at ep = dp their gathered copy counted them twice, and shard_grad_op
      // needed more than zero1 (qwen3-30b-a3b on 16 H100, ep 16: 68.15 GiB against 67.65).
      buffers += d(e) * (params + (experts_sharded ? expert_params : 0.0)) + unsharded_gradients;
    } else if (s.stack.fsdp_gather_granularity == stack::GatherGranularity::Parameter &&
               moe_layers == 0) {
      // One weight tensor at a time (DeepSpeed ZeRO-3 before v0.6, DS@v0.3.16
      // deepspeed/runtime/zero/stage3.py): release_sub_module partitions each module's weight
      // again once the module has run, unless its next use comes within
      // stage3_max_reuse_distance (1e9 elements) of fetches, farther than any tensor of a
      // layer this large; the stack's fetches block (fsdp.blocking_fetch), so none is
      // prefetched. At the peak: the largest tensor gathered and its whole gradient, which
      // backward writes before the tensor's reduce-scatter. The word embedding, a learned
      // position embedding and the LM head are single tensors too, each its own module's (the
      // positions were counted with the words: 25,165,824 elements more for GPT-3 175B). Left
      // out: the two contiguous-gradient buffers of reduce_bucket_size elements allocated for
      // backward (stage3.py:2931-2943; 40 to 200 MB at the 1e7 and 5e7 of the DeepSpeedExamples
      // recipe's config and script).
      const std::int64_t words =
          first ? model::lm_head_parameters_per_tp_rank(m, tp, model::LmHeadCopy::Separate) : 0;
      double largest = d(std::max({words, embedding - words, head}));
      for (const double elements : gathered_tensors) largest = std::max(largest, elements);
      buffers += (d(e) + d(grad_e)) * largest;
    } else {
      // FULL_SHARD frees each layer's unit after use (2 gathered at most, above) and keeps the
      // root unit from each forward to the end of backward, as the workload gathers it
      // (iteration_builder's root_bytes): FSDP does not free the root's parameters after
      // forward (PyTorch 2.3 torch/distributed/fsdp/_runtime_utils.py, _post_forward_reshard:
      // "Do not free the root's parameters in the post-forward for FULL_SHARD"; FSDP2's
      // fully_shard leaves the root's reshard_after_forward False). Of an MoE layer, its routed
      // experts only where they are sharded (above). llama2-7b in bf16 on one stage (layer
      // 202,383,360 parameters, root 262,148,096 of which the head 131,076,096): 2 B x (root
      // + 2 layers) + 2 B x (head + 2 layers) = 2,405,515,264 B. Forward's units in flight
      // where they are more (forward_layers, above): forward has no unsharded gradients.
      buffers +=
          d(e) * root + std::max(d(e) * two_layers + unsharded_gradients, d(e) * forward_layers);
    }
  }
  if (fp8 && s.stack.fp8.weight_cache_bytes_per_param > 0.0) {
    // FP8 copies of the GEMM weights kept across the step's micro-batches (Transformer Engine
    // user guide, "FP8 weight caching"; the transpose for Hopper's backward GEMMs: TE
    // "Performance considerations", "Handling transposes"; fp8_weight_copy_bytes for the GPU and
    // the recipe). Layers only: the embedding and the LM head run in bf16 (Megatron-LM keeps the
    // output layer out of FP8). With full_shard the copies live only while a unit is gathered:
    // the units held at once (two_layers, forward_layers above); routed experts that are not
    // sharded (ep = dp, above) are never gathered or freed, so their copies stay for the step, as
    // under zero1.
    const bool frees_units = shard_state && degree > 1.0 && plan.sharding != Sharding::ShardGradOp;
    const double held =
        frees_units ? std::max(two_layers, forward_layers) + (experts_sharded ? 0.0 : expert_params)
                    : d(stage_layer_params);
    buffers += fp8_weight_copy_bytes(s.stack.fp8, s.hardware.gpu.arch) * held;
  }
  out.buffers = Bytes(buffers);

  ActivationOptions act;
  act.fp8_gemm_inputs = fp8 && s.stack.fp8.activations_saved_in_fp8;
  act.flash_attention = !s.stack.unfused_attention;
  act.dropout = s.stack.unfused_attention && s.stack.attention_dropout;
  act.selective = s.stack.selective;
  act.eager_fp32_rmsnorm = s.stack.eager_fp32_rmsnorm;
  act.gqa_repeat_kv = s.stack.gqa_repeat_kv;
  act.eager_swiglu = s.stack.eager_swiglu;
  const double per_layer = activation_bytes_per_layer(m, shape, plan.recompute, act).value();
  // An MoE layer's, under the plan's recomputation (its stored input under full); 0 without one.
  const double per_moe_layer =
      moe_layers > 0 ? activation_bytes_per_moe_layer(m, shape, plan.recompute, act).value() : 0.0;
  double activations = per_layer * d(num_layers) * in_flight_microbatches(s, stage);
  if (moe_layers > 0) {
    activations = (per_layer * d(num_layers - moe_layers) + per_moe_layer * d(moe_layers)) *
                  in_flight_microbatches(s, stage);
  }
  // A partial full recomputation: the layers it does not recompute keep all their activations.
  const KeptLayers kept = kept_layers_in_stage(s, stage);
  if (kept.dense > 0) {
    const double none = activation_bytes_per_layer(m, shape, Recompute::None, act).value();
    activations += (none - per_layer) * d(kept.dense) * in_flight_microbatches(s, stage);
  }
  if (kept.moe > 0) {
    const double none = activation_bytes_per_moe_layer(m, shape, Recompute::None, act).value();
    activations += (none - per_moe_layer) * d(kept.moe) * in_flight_microbatches(s, stage);
  }
  if (plan.recompute == Recompute::Full && num_layers > 0) {
    // The layer whose forward is recomputed holds its full activations during its backward: the
    // largest of the layers recomputed (a partial recomputation of DeepSeek-V3's first stage
    // that recomputes only its leading dense layers was charged an MoE layer's working set,
    // 0.88 GiB too much at seq 4096), less the input it was recomputed from, which is already
    // counted among the stored layer inputs (per_layer, per_moe_layer): recomputing every
    // layer of llama2-7b read one layer input (32 MiB) more than recomputing all but one.
    const double dense_full = activation_bytes_per_layer(m, shape, Recompute::None, act).value();
    const double moe_full =
        moe_layers > 0 ? activation_bytes_per_moe_layer(m, shape, Recompute::None, act).value()
                       : 0.0;
    const std::int64_t recomputed_dense = (num_layers - moe_layers) - kept.dense;
    const std::int64_t recomputed_moe = moe_layers - kept.moe;
    double full = 0.0;
    double input = 0.0;
    if (recomputed_dense > 0) {
      full = dense_full;
      input = per_layer;
    }
    if (recomputed_moe > 0 && moe_full > full) {
      full = moe_full;
      input = per_moe_layer;
    }
    if (kept.every_chunk_keeps) {
      // A partial recomputation recomputes the first layers of each chunk (Megatron's
      // --recompute-method block), so they run last in backward: by then the micro-batch's kept
      // layers of that chunk have run theirs, and autograd has freed their saved tensors (it
      // releases a node's saved tensors once its backward has run, unless retain_graph). The
      // working layer adds only what it exceeds one kept layer by; before, recomputing 1 layer
      // of llama2-7b's 32 needed 32 MiB more than recomputing none.
      const double freed = kept.dense > 0 && kept.moe > 0 ? std::min(dense_full, moe_full)
                           : kept.moe > 0                 ? moe_full
                                                          : dense_full;
      full = std::max(0.0, full - freed);
    } else {
      full = std::max(0.0, full - input);
    }
    activations += full;
  }
  if (plan.recompute == Recompute::Selective && num_layers > 0 && !act.flash_attention &&
      act.selective == model::SelectiveRecompute::AttentionCore) {
    // Unfused attention's s x s tensors (the softmax output, with dropout its mask and output;
    // Korthikanti et al. 2022's 5as^2b/t) are dropped, not never made: one layer holds them
    // while its forward and, recomputed, its attention backward run, as full recomputation
    // holds one layer's whole working set above. Without them selective recomputation needed
    // less memory than full (megatron-lm, llama3-8b, cp 4, seq 32768: 40.0 against 47.2 GiB).
    // A flash kernel's recompute holds its output and fp32 log-sum-exp, under a MiB, left out
    // as the other kernels' transients are.
    activations += activation_bytes_per_layer(m, shape, Recompute::None, act).value() - per_layer;
  }
  if (last) {
    const double head_in_flight =
        plan.schedule == PipelineSchedule::GPipe ? in_flight_microbatches(s, stage) : 1.0;
    activations += head_activation_bytes(m, shape, eager_norm_extra_bytes(m, act)) * head_in_flight;
  }
  if (stage == 0 && act.dropout) {
    // The input embedding's dropout mask, 1 byte per element of the embedding output (/ t with
    // SP), kept by every micro-batch the first stage holds (Korthikanti et al. 2022 §4.3:
    // s b h p / t under 1F1B). Under interleaving the stage's average over its chunks' layers
    // stands in for its first chunk's count.
    const double tokens = d(model::local_tokens(shape));
    const double residual = shape.sequence_parallel ? tokens / d(shape.tp) : tokens;
    activations += residual * d(m.hidden) * in_flight_microbatches(s, 0);
  }
  out.activations = Bytes(activations);

  // Whole bytes, part by part: the total is then their sum exactly, as the report prints them.
  for (Bytes* part :
       {&out.parameters, &out.gradients, &out.optimizer, &out.activations, &out.buffers}) {
    *part = Bytes(std::round(part->value()));
  }
  out.total = out.parameters + out.gradients + out.optimizer + out.activations + out.buffers;
  apply_memory_reserve(s, out);
  return out;
}

void apply_memory_reserve(const parallel::Scenario& s, MemoryBreakdown& m) {
  // memory.hpp MemoryBreakdown: usable = (capacity - context - NCCL - workspace - headroom)
  // x (1 - fragmentation).
  m.capacity = s.hardware.gpu.hbm_capacity;
  m.cuda_context = s.hardware.gpu.cuda_context;
  m.nccl_buffers = s.hardware.gpu.nccl_buffers;
  m.workspace = s.stack.memory.workspace;
  m.headroom_fraction = s.stack.memory.headroom_fraction + 0.0;  // -0 (a "-0" flag) is 0
  // A headroom past what the fixed terms leave is cut to it, so that the terms still sum to the
  // reserve (a headroom of 0.999 left usable 0 and the terms 0.8 GB above the HBM). Commands
  // refuse such a headroom first (parallel::headroom_problem: the flag's, a stack's in a plan's
  // problems and in search's base); a library caller may still get here with one.
  const Bytes left =
      std::max(m.capacity - m.cuda_context - m.nccl_buffers - m.workspace, Bytes(0.0));
  m.headroom = std::min(Bytes(std::round((m.capacity * m.headroom_fraction).value())), left);
  const Bytes pool = left - m.headroom;
  m.fragmentation =
      Bytes(std::round((pool * s.stack.memory.allocator_fragmentation_fraction).value()));
  m.usable = pool - m.fragmentation;
  m.reserved = m.capacity - m.usable;
  m.fits = m.total <= m.usable;
}

std::string on_stage(const MemoryBreakdown& peak, std::int64_t pp) {
  return pp > 1 ? " on stage " + std::to_string(peak.stage) : "";
}

std::string memory_excess(const MemoryBreakdown& peak, std::int64_t pp) {
  if (!(peak.total.value() > kMaxMemoryBytes)) return "";
  return "the plan needs " + to_string(peak.total) + " per GPU" + on_stage(peak, pp) +
         ", past the 8 PiB (2^53 bytes) up to which trainsim counts bytes exactly; expected a "
         "plan that needs less (fewer tokens per micro-batch or in flight, more GPUs)";
}

MemoryBreakdown memory_peak(const parallel::Scenario& s) {
  MemoryBreakdown peak = memory_per_gpu(s, 0);
  for (std::int64_t stage = 1; stage < s.parallel.pp; ++stage) {
    auto candidate = memory_per_gpu(s, stage);
    if (candidate.total > peak.total) peak = candidate;
  }
  return peak;
}

}  // namespace trainsim::report
