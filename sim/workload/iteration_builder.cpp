// Builds the op graph of one training iteration. One device per pipeline stage, each with a
// compute stream and one stream per communicator kind. Kernels come from model/kernels
// (Megatron's TP split), durations from compute/kernel_cost, collectives from the NCCL model.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainsim/collective/collective_model.hpp"
#include "trainsim/compute/kernel_cost.hpp"
#include "trainsim/error.hpp"
#include "trainsim/model/counts.hpp"
#include "trainsim/model/kernels.hpp"
#include "trainsim/report/memory.hpp"
#include "trainsim/workload/iteration.hpp"
#include "trainsim/workload/schedule.hpp"

namespace trainsim::workload {
namespace {

using collective::Op;
using engine::OpId;
using engine::StreamId;
using parallel::Sharding;

constexpr OpId kNone = -1;

// PyTorch DDP's default gradient bucket (bucket_cap_mb = 25, torch/nn/parallel/distributed.py).
constexpr double kDdpBucketBytes = 25.0 * 1024.0 * 1024.0;

compute::KernelWork work_of(const model::KernelSpec& k, bool backward, std::int64_t local_seq) {
  compute::KernelWork w;
  w.flops = backward ? k.backward_flops : k.forward_flops;
  w.bytes = backward ? k.backward_bytes : k.forward_bytes;
  switch (k.kind) {
    case model::KernelKind::Gemm:
      w.kind = compute::KernelClass::Gemm;
      // Backward: dgrad [m x k] = [m x n][n x k] and wgrad [k x n] = [k x m][m x n].
      if (backward) {
        w.gemms = {{.m = k.gemm.m, .n = k.gemm.k, .k = k.gemm.n, .batch = k.gemm.batch},
                   {.m = k.gemm.k, .n = k.gemm.n, .k = k.gemm.m, .batch = k.gemm.batch}};
      } else {
        w.gemms = {{.m = k.gemm.m, .n = k.gemm.n, .k = k.gemm.k, .batch = k.gemm.batch}};
      }
      break;
    case model::KernelKind::Attention:
      w.kind = compute::KernelClass::Attention;
      w.attention = {.seq_len = local_seq,
                     .head_dim = k.head_dim,
                     .causal = k.causal_discount,
                     .backward = backward,
                     .window = k.attention_window};
      break;
    case model::KernelKind::MemoryBound:
      w.kind = compute::KernelClass::MemoryBound;
      break;
  }
  return w;
}

// A kernel priced once, used for every layer and micro-batch.
struct TimedKernel {
  std::string name;
  engine::NameId fwd_name = 0;
  engine::NameId bwd_name = 0;
  engine::NameId recompute_name = 0;
  Seconds fwd;
  Seconds bwd;
  Flops fwd_flops;
  Flops bwd_flops;
  double selective = 0.0;  // share of the forward recomputed under selective recomputation
  // Under CP, the share of the layer's K/V ring exchange that runs beside the kernel
  // (KernelSpec::cp_kv_share); 0 without CP.
  double cp_share = 0.0;
  model::KernelKind kind = model::KernelKind::MemoryBound;
  // How each pass slows beside a collective (engine::ContentionClass): Gemm for GEMM math alone
  // (the profile's GEMM contention), Host for a pass whose time is a host floor (kernel_dispatch,
  // expert launches: the host issuing kernels is not slowed by NCCL's SMs), Default otherwise (a
  // GEMM op that also carries FP8 casts, memory-bound, keeps the default contention). The
  // recomputed forward takes the forward's.
  engine::ContentionClass fwd_class = engine::ContentionClass::Default;
  engine::ContentionClass bwd_class = engine::ContentionClass::Default;
};

// Where a TP collective sits relative to the layer's kernels (Megatron-LM, Shoeybi et al. 2019
// §3 and Korthikanti et al. 2022 §4.2.2 for sequence parallelism).
struct TpComm {
  std::optional<Op> before;           // forward: issued before this kernel, which waits for it
  std::optional<Op> after;            // forward: issued after it, the next kernel waits for it
  std::optional<Op> backward_before;  // backward: before this kernel's backward
  std::optional<Op> backward_after;   // backward: after this kernel's backward
  // backward: the forward's AllGather of this kernel's input again, beside its backward (SP)
  bool backward_regather = false;
};

// Where an MoE layer's all-to-all sits (ep > 1): the dispatch before the first expert GEMM and
// the combine after the last; backward mirrors them (the gradient of the combine is an
// all-to-all before the last expert GEMM's backward, that of the dispatch one after the first's).
struct EpComm {
  bool dispatch_before = false;
  bool combine_after = false;
};

// The priced kernels of one kind of layer (dense, or MoE) and the collectives around them.
struct LayerKernels {
  std::vector<TimedKernel> kernels;
  std::vector<TpComm> tp;
  std::vector<EpComm> ep;
  // What selective recomputation runs again before the layer's backward, in forward order:
  // the kernels with a recomputed share, their time and FLOPs scaled by it (the whole kernel
  // under Megatron's policy: a copy).
  std::vector<TimedKernel> recomputed;
};

// Which copy of the training state a transfer belongs to: the dense weights, shared by the
// shard group (dp x cp ranks), or an MoE layer's routed experts, shared by the
// expert-data-parallel group (the dp / ep ranks holding the same experts).
enum class StateGroup { Dense, Expert };

struct StageStreams {
  StreamId compute = -1;
  StreamId tp = -1;
  StreamId cp = -1;
  StreamId dp = -1;
  StreamId pp = -1;
  StreamId ep = -1;
};

class Builder {
 public:
  Builder(const parallel::Scenario& s, const collective::CollectiveModel& cm,
          const BuildOptions& options)
      : s_(s), cm_(cm), m_(s.model), p_(s.parallel), options_(options) {
    it_.placement = parallel::place(s);
    // Each stage's collectives run among its own ranks: priced on that stage's groups. Where
    // every group of each kind inside a stage lies alike (no variants), each stage's groups are
    // the job's, and at() gives the job's placement.
    const parallel::Placement& job = it_.placement;
    const std::array<const parallel::GroupShape*, 7> inner = {
        &job.tp, &job.cp, &job.dp, &job.shard, &job.replicate, &job.ep, &job.expert_shard};
    const bool uniform = std::all_of(inner.begin(), inner.end(), [](const parallel::GroupShape* g) {
      return g->variants.empty();
    });
    if (s.parallel.pp > 1 && !uniform) {
      stage_placement_.reserve(static_cast<std::size_t>(s.parallel.pp));
      for (std::int64_t stage = 0; stage < s.parallel.pp; ++stage) {
        stage_placement_.push_back(parallel::place(s, stage));
      }
    }
    for (std::int64_t stage = 0; stage < s.parallel.pp; ++stage) {
      stage_at_.push_back(stage_placement_.empty()
                              ? &it_.placement
                              : &stage_placement_[static_cast<std::size_t>(stage)]);
    }
    if (s.parallel.pp > 1) {
      for (std::int64_t stage = 0; stage < s.parallel.pp; ++stage) {
        pp_pairs_.push_back(parallel::pipeline_pair(s, stage));
      }
    }
    pp_ = p_.pp;
    chunks_ = p_.virtual_stages;
    virtual_stages_ = pp_ * chunks_;
    microbatches_ = s.num_microbatches();
    elem_ = report::element_bytes(s.training.precision);
    shape_ = model::LayerShape{.micro_batch = s.training.micro_batch,
                               .seq_len = s.training.seq_len,
                               .tp = p_.tp,
                               .cp = p_.cp,
                               .sequence_parallel = p_.sequence_parallel,
                               .element_bytes = elem_,
                               .causal = true,
                               .unfused_attention = s.stack.unfused_attention,
                               .attention_dropout = s.stack.attention_dropout,
                               .unfused_softmax = s.stack.unfused_softmax,
                               .unfused_bias_dropout_add = s.stack.unfused_bias_dropout_add,
                               .ep = p_.ep,
                               .unfused_cross_entropy = s.stack.unfused_cross_entropy,
                               .fp32_logits_cross_entropy = s.stack.fp32_logits_cross_entropy,
                               .eager_fp32_rmsnorm = s.stack.eager_fp32_rmsnorm,
                               .complex_fp32_rope = s.stack.complex_fp32_rope,
                               .gqa_repeat_kv = s.stack.gqa_repeat_kv,
                               .eager_swiglu = s.stack.eager_swiglu,
                               .selective = s.stack.selective};
    local_tokens_ = model::local_tokens(shape_);
    moe_routes_tp_shares_ = model::is_moe(m_) && model::moe_routes_tp_shares(shape_);
    local_seq_ = s.training.seq_len / p_.cp;
    assign_layers();
    const auto slots = static_cast<std::size_t>(virtual_stages_ * microbatches_ * 2);
    pass_recv_.assign(slots, kNone);
    pass_send_.assign(slots, kNone);
  }

  // The busiest stage's layer kernels over the step: forward, backward and recomputation of
  // each of its layers for every micro-batch. Its compute stream runs them one after another
  // (kernel() puts every one there, with the priced duration), so no iteration is shorter;
  // communication, contention, the pipeline bubble, the embedding, the LM head and the
  // optimizer step only add to it.
  Seconds compute_lower_bound() {
    price_kernels();
    double worst = 0.0;
    for (std::int64_t stage = 0; stage < pp_; ++stage) {
      double per_microbatch = 0.0;
      for (std::int64_t chunk = 0; chunk < chunks_; ++chunk) {
        const auto vs = static_cast<std::size_t>(virtual_stage(stage, chunk));
        const std::int64_t first = chunk_first_layer_[vs];
        for (std::int64_t l = first; l < first + chunk_layers_[vs]; ++l) {
          const bool whole = parallel::recomputes_whole_layer(p_, l - first);
          for (const TimedKernel& k : kernels_of(l).kernels) {
            per_microbatch += k.fwd.value() + k.bwd.value();
            if (whole) per_microbatch += k.fwd.value();
          }
          if (p_.recompute == parallel::Recompute::Selective) {
            for (const TimedKernel& k : kernels_of(l).recomputed) per_microbatch += k.fwd.value();
          }
        }
      }
      worst = std::max(worst, per_microbatch * static_cast<double>(microbatches_));
    }
    return Seconds(worst);
  }

  Iteration build() {
    price_kernels();
    const auto kernels = static_cast<std::int64_t>(
        std::max(dense_.kernels.size(), moe_.kernels.size()));
    const auto estimate = static_cast<std::size_t>(
        pp_ * microbatches_ * (2 * (m_.num_layers / pp_ + 1) * (kernels + 4) + 8) + 64);
    it_.graph.reserve(estimate, 2 * estimate);
    it_.ops.reserve(estimate);
    for (std::int64_t stage = 0; stage < pp_; ++stage) add_stage(stage);
    link_pipeline();
    return std::move(it_);
  }

 private:
  // ---- layout ---------------------------------------------------------------------------

  // Layers of each virtual stage (model chunk): as even as possible, the first chunks taking
  // the remainder, or the plan's split counting the embedding and the loss
  // (parallel::chunk_layers; the last stage also runs the LM head and the loss).
  // The last chunk's count includes the multi-token-prediction modules' layers, global indices
  // num_layers and up (parallel::chunk_layers of a scenario).
  void assign_layers() {
    for (std::int64_t v = 0; v < virtual_stages_; ++v) {
      const parallel::ChunkLayers c = parallel::chunk_layers(s_, v);
      chunk_first_layer_.push_back(c.first);
      chunk_layers_.push_back(c.count);
    }
  }

  std::int64_t virtual_stage(std::int64_t stage, std::int64_t chunk) const {
    return chunk * pp_ + stage;
  }

  // ---- pricing --------------------------------------------------------------------------

  // Wall time of one kernel under the stack: memory-bound kernels move `traffic` times the
  // fused bytes (the stack's elementwise_traffic for the layers' norms, activations and
  // residuals; 1 for the optimizer, a fused multi-tensor kernel in every stack we model), and
  // no kernel is shorter than the host's dispatch time (the CPU cannot issue kernels faster).
  // `dtype` is the kernel's math dtype: the training precision, except under fp8 for the
  // kernels Transformer Engine keeps in bf16 (KernelSpec::fp8_eligible false).
  Seconds price(compute::KernelWork w, double traffic, hardware::Dtype dtype) const {
    if (w.kind == compute::KernelClass::MemoryBound) w.bytes = w.bytes * traffic;
    // A kernel `attention_speed` times as fast as FlashAttention-2, priced against the profile's
    // curve, whose own kernel may not be FlashAttention-2 (compute::AttentionShape::speed).
    if (w.kind == compute::KernelClass::Attention) {
      w.attention.speed = s_.stack.attention_speed / s_.hardware.gpu.attention.speed_over_flash2;
    }
    const Seconds t = compute::kernel_cost(s_.hardware.gpu, dtype, w).time;
    if (t.value() <= 0.0) return t;  // no work, no kernel
    return max(t, s_.stack.kernel_dispatch);
  }

  TimedKernel timed(const model::KernelSpec& k, bool optimizer_step = false) {
    const double traffic = optimizer_step ? 1.0 : s_.stack.elementwise_traffic;
    TimedKernel t;
    t.name = k.name;
    t.fwd_name = it_.graph.intern_name(k.name);
    t.bwd_name = it_.graph.intern_name(k.name + "_bwd");
    t.recompute_name = it_.graph.intern_name(k.name + "_recompute");
    // Under fp8 only Transformer Engine's linear layers run in FP8; the attention core, the
    // router, the LM head and the memory-bound kernels run as in bf16 (KernelSpec::fp8_eligible),
    // at the fp16 rate on a profile without a bf16 peak (the two are equal on every GPU that has
    // both; a bf16 peak of 0 priced them at an infinite time).
    const bool fp8 = s_.training.precision == hardware::Dtype::Fp8;
    const hardware::Dtype sixteen_bit = s_.hardware.peak(hardware::Dtype::Bf16).value() > 0.0
                                            ? hardware::Dtype::Bf16
                                            : hardware::Dtype::Fp16;
    const hardware::Dtype dtype = fp8 && !k.fp8_eligible ? sixteen_bit : s_.training.precision;
    // Routed-expert kernels take the busiest EP rank's time (KernelSpec::load_imbalance; 1
    // elsewhere, an exact no-op).
    compute::KernelWork fwd_work = work_of(k, false, local_seq_);
    compute::KernelWork bwd_work = work_of(k, true, local_seq_);
    if (fp8 && k.fp8_eligible) {
      // An FP8 GEMM reads its operands' FP8 casts and writes 16-bit results (the training
      // dtype's bytes of KernelSpec::forward_bytes counted them at 2 bytes each, so a
      // memory-bound FP8 GEMM took the bf16 GEMM's time plus its casts).
      const double operand = stack::fp8_operand_bytes_per_element(s_.stack.fp8.recipe);
      const auto e = static_cast<double>(elem_);
      fwd_work.bytes = Bytes(operand * k.elements.forward_read + e * k.elements.forward_written);
      bwd_work.bytes = Bytes(operand * k.elements.backward_read + e * k.elements.backward_written);
    }
    t.fwd = price(fwd_work, traffic, dtype) * k.load_imbalance;
    t.bwd = price(bwd_work, traffic, dtype) * k.load_imbalance;
    // Host time, not GEMM math: price() lifted a pass to the stack's dispatch floor.
    const Seconds dispatch = s_.stack.kernel_dispatch;
    bool fwd_host = dispatch.value() > 0.0 && !(t.fwd > dispatch);
    bool bwd_host = dispatch.value() > 0.0 && !(t.bwd > dispatch);
    if (fp8 && k.fp8_eligible) {
      // The FP8 casts of the GEMM's operands, memory-bound and added to the GEMM's time (TE
      // launches them just before it): forward the input [m x k] and the weight [k x n],
      // backward the output gradient [m x n] (fp8_cast_bytes_per_element). The weight is cast
      // once per micro-batch, or once per step when the stack keeps FP8 weight copies
      // (fp8.weight_cache_bytes_per_param > 0: TE's is_first_microbatch caching), its time then
      // spread over the step's micro-batches. Grouped expert GEMMs: `batch` groups of m rows.
      const double per_element = stack::fp8_cast_bytes_per_element(s_.stack.fp8.recipe);
      const double batch = static_cast<double>(k.gemm.batch);
      const double input = static_cast<double>(k.gemm.m) * static_cast<double>(k.gemm.k) * batch;
      const double weight = static_cast<double>(k.gemm.k) * static_cast<double>(k.gemm.n) * batch;
      const double grad = static_cast<double>(k.gemm.m) * static_cast<double>(k.gemm.n) * batch;
      const std::int64_t step =
          options_.step_microbatches > 0 ? options_.step_microbatches : microbatches_;
      const double weight_share =
          s_.stack.fp8.weight_cache_bytes_per_param > 0.0 ? 1.0 / static_cast<double>(step) : 1.0;
      // A cast is its own fused kernel: traffic 1, the host's dispatch floor applies.
      auto cast = [&](double elements) {
        compute::KernelWork w;
        w.kind = compute::KernelClass::MemoryBound;
        w.bytes = Bytes(elements * per_element);
        return price(w, 1.0, sixteen_bit);
      };
      // The busiest EP rank casts load_imbalance times the mean rows; the weights are fixed.
      t.fwd = t.fwd + cast(input) * k.load_imbalance + cast(weight) * weight_share;
      t.bwd = t.bwd + cast(grad) * k.load_imbalance;
      // The casts are device work beside the GEMM: its op is not host time alone.
      fwd_host = false;
      bwd_host = false;
    }
    if (k.expert_groups > 0 && s_.stack.moe_expert_launch.value() > 0.0) {
      // Grouped expert GEMMs launched expert by expert (StackSpec::moe_expert_launch): the host
      // issues forward one GEMM per local expert, backward a data- and a weight-gradient GEMM,
      // each with its FP8 cast under fp8, and cannot run ahead past the layer's m_splits copy,
      // so the kernel takes at least that many launches of host time.
      const double groups = static_cast<double>(k.expert_groups);
      const double casts = fp8 && k.fp8_eligible ? 1.0 : 0.0;
      const Seconds fwd_floor = s_.stack.moe_expert_launch * (groups * (1.0 + casts));
      const Seconds bwd_floor = s_.stack.moe_expert_launch * (groups * (2.0 + casts));
      fwd_host = fwd_host || !(t.fwd > fwd_floor);
      bwd_host = bwd_host || !(t.bwd > bwd_floor);
      t.fwd = max(t.fwd, fwd_floor);
      t.bwd = max(t.bwd, bwd_floor);
    }
    const engine::ContentionClass device =
        k.kind == model::KernelKind::Gemm && !(fp8 && k.fp8_eligible)
            ? engine::ContentionClass::Gemm
            : engine::ContentionClass::Default;
    t.fwd_class = fwd_host ? engine::ContentionClass::Host : device;
    t.bwd_class = bwd_host ? engine::ContentionClass::Host : device;
    t.fwd_flops = k.forward_flops;
    t.bwd_flops = k.backward_flops;
    t.selective = k.selective_recompute;
    t.cp_share = p_.cp > 1 ? k.cp_kv_share : 0.0;
    t.kind = k.kind;
    return t;
  }

  // The TP collectives around a layer's kernels (Megatron-LM's f and g operators). In an MoE
  // layer the router is the column-parallel entry (with SP its input is gathered once for the
  // router, the experts and the shared experts; backward reduces the block's input gradient
  // after it) and the unpermute (the routed experts' TP-partial sums, as Megatron-Core reduces
  // them after the combine) and the shared experts' down projection are row-parallel exits.
  void assign_tp_comm(LayerKernels& lk) const {
    lk.tp.resize(lk.kernels.size());
    lk.ep.resize(lk.kernels.size());
    if (p_.ep > 1) {
      for (std::size_t i = 0; i < lk.kernels.size(); ++i) {
        const std::string& n = lk.kernels[i].name;
        lk.ep[i].dispatch_before = n == "expert_up_gate" || n == "expert_up";
        lk.ep[i].combine_after = n == "expert_down";
      }
    }
    if (p_.tp > 1) {
      for (std::size_t i = 0; i < lk.kernels.size(); ++i) {
        const std::string& n = lk.kernels[i].name;
        // Latent attention enters at its first down projection (q_proj without q_lora_rank):
        // with SP one gather serves both down projections.
        // An MoE block enters TP at its router, whose input is gathered, and leaves it at the
        // unpermute; where each TP rank routes its own tokens (model::moe_routes_tp_shares) the
        // routed rows are gathered and scattered around the expert GEMMs instead (moe_exchange_in
        // and _out), and only the shared experts' MLP is a TP region of the block's tokens.
        const bool own_tokens = moe_routes_tp_shares_;
        const bool column_parallel =
            n == "qkv_proj" || n == "mla_q_down" || n == "q_proj" || n == "mlp_up_gate" ||
            n == "mlp_up" || (n == "moe_router" && !own_tokens) ||
            (own_tokens && (n == "shared_expert_up_gate" || n == "shared_expert_up"));
        const bool row_parallel = n == "attn_out_proj" || n == "mlp_down" ||
                                  (n == "moe_unpermute" && !own_tokens) ||
                                  n == "shared_expert_down";
        TpComm& c = lk.tp[i];
        if (p_.sequence_parallel) {
          // SP: AllGather the sequence-split norm output before the column-parallel GEMMs,
          // ReduceScatter after the row-parallel ones; backward mirrors them (the gradient of
          // a ReduceScatter is an AllGather and the reverse). A column-parallel GEMM keeps only
          // its rank's sequence shard of its input (the 34 sbh / t of the memory model), so its
          // backward gathers the input again for the weight gradient, issued beside the input
          // gradient's GEMM (Korthikanti et al. 2022 §4.2.2; Megatron-LM's
          // LinearWithGradAccumulationAndAsyncCommunication.backward, megatron/core/
          // tensor_parallel/layers.py, and Transformer Engine's LayerNormLinear and
          // LayerNormMLP do the same): two more AllGathers per dense layer backward. The
          // column-parallel linears of a layer (QKV, MLP up, and where each TP rank routes its
          // own tokens the shared experts' up projection, Megatron-Core's SharedExpertMLP);
          // latent attention's down projections and an MoE block's router entry keep their
          // collectives as the model has them.
          if (column_parallel) {
            c.before = Op::AllGather;
            c.backward_after = Op::ReduceScatter;
            c.backward_regather = n == "qkv_proj" || n == "mlp_up_gate" || n == "mlp_up" ||
                                  n == "shared_expert_up_gate" || n == "shared_expert_up";
          }
          if (row_parallel) {
            c.after = Op::ReduceScatter;
            c.backward_before = Op::AllGather;
          }
        } else {
          // Megatron's g (AllReduce forward, identity backward) after the row-parallel GEMMs
          // and f (identity forward, AllReduce of the input gradient backward) before the
          // column-parallel ones.
          if (row_parallel) c.after = Op::AllReduce;
          if (column_parallel) c.backward_after = Op::AllReduce;
        }
      }
    }
  }

  // The selectively recomputed copies of a layer's kernels (LayerKernels::recomputed).
  static void add_recomputed(LayerKernels& lk) {
    for (const TimedKernel& k : lk.kernels) {
      if (k.selective <= 0.0) continue;
      TimedKernel r = k;
      if (k.selective < 1.0) {
        r.fwd = k.fwd * k.selective;
        r.fwd_flops = k.fwd_flops * k.selective;
      }
      lk.recomputed.push_back(std::move(r));
    }
  }

  // A layer's kernels priced, with their selectively recomputed copies and TP/EP collectives.
  LayerKernels layer_of(const std::vector<model::KernelSpec>& kernels) {
    LayerKernels lk;
    for (const auto& k : kernels) lk.kernels.push_back(timed(k));
    add_recomputed(lk);
    assign_tp_comm(lk);
    return lk;
  }

  void price_kernels() {
    const auto layer = model::layer_kernels(m_, shape_);
    dense_ = layer_of(layer);
    for (const auto& k : model::embedding_kernels(m_, shape_)) embedding_.push_back(timed(k));
    for (const auto& k : model::head_kernels(m_, shape_)) head_.push_back(timed(k));
    if (m_.mtp_layers > 0) {
      for (const auto& k : model::mtp_kernels(m_, shape_)) mtp_.push_back(timed(k));
    }
    // Layers outside a partial window's layers (model_spec.hpp, window_layers) attend in full:
    // their own kernels, the windowed model's kernels with attention's work undiscounted.
    const bool mixed = model::mixed_attention_window(m_);
    std::optional<model::ModelSpec> full_model;
    if (mixed) {
      full_model = model::without_attention_window(m_);
      full_layer_.assign(static_cast<std::size_t>(m_.num_layers + m_.mtp_layers), 1);
      for (const std::int32_t l : m_.window_layers) full_layer_[static_cast<std::size_t>(l)] = 0;
      dense_full_ = layer_of(model::layer_kernels(*full_model, shape_));
    }
    if (model::is_moe(m_)) {
      moe_ = layer_of(model::moe_layer_kernels(m_, shape_));
      if (mixed) moe_full_ = layer_of(model::moe_layer_kernels(*full_model, shape_));
      // All-to-all dispatch and combine: each rank's whole send buffer, the top-k rows of
      // hidden of the tokens it routes (nccl-tests alltoall_perf's size; (ep - 1) / ep of it
      // leaves the rank, the bus factor of collective_model.hpp), priced balanced. Under the
      // all-to-all dispatcher with sequence parallelism each TP rank routes its tokens / tp
      // and the TP group gathers the routed rows after the all-to-all, local tokens x top-k
      // rows (model::moe_routes_tp_shares); otherwise each rank sends the micro-batch's tokens.
      routed_bytes_ =
          Bytes(static_cast<double>(local_tokens_ * m_.num_experts_per_token * m_.hidden * elem_));
      ep_bytes_ =
          moe_routes_tp_shares_ ? routed_bytes_ / static_cast<double>(p_.tp) : routed_bytes_;
      const auto moe = model::moe_layer_parameters_per_rank(m_, p_.tp, p_.ep);
      // With ep 1 every rank holds every expert: one state copy per shard group, as dense.
      const auto dense_part = static_cast<double>(p_.ep > 1 ? moe.dense : moe.total());
      const auto expert_part = static_cast<double>(p_.ep > 1 ? moe.expert : 0);
      moe_param_bytes_ = Bytes(dense_part * static_cast<double>(elem_));
      moe_grad_bytes_ = Bytes(dense_part * grad_element_bytes());
      expert_param_bytes_ = Bytes(expert_part * static_cast<double>(elem_));
      expert_grad_bytes_ = Bytes(expert_part * grad_element_bytes());
    }
    // One TP activation buffer: local tokens x hidden (whole buffer, nccl-tests accounting).
    tp_bytes_ = Bytes(static_cast<double>(local_tokens_ * m_.hidden * elem_));
    // fp8 with the stack's FP8 TP communication: the sequence-parallel AllGather before a
    // column-parallel GEMM moves the GEMM's FP8 input cast, 1 byte per element (Transformer
    // Engine userbuffers with FP8 buffers for AllGather overlap, NVIDIA/TransformerEngine#750;
    // torchao's Float8ColwiseParallel). Backward and gradient collectives keep elem_.
    const bool fp8_gather =
        s_.training.precision == hardware::Dtype::Fp8 && s_.stack.fp8.tp_communication_fp8;
    tp_input_gather_bytes_ =
        fp8_gather ? Bytes(static_cast<double>(local_tokens_ * m_.hidden)) : tp_bytes_;
    // Pipeline activations between stages: split over TP ranks with SP.
    pp_bytes_ = Bytes(static_cast<double>(local_tokens_ * m_.hidden * elem_) /
                      static_cast<double>(p_.sequence_parallel ? p_.tp : 1));
    // FSDP/ZeRO moves each layer's weights (training dtype) per TP rank, and its gradients in
    // the stack's gradient_reduce_dtype.
    const auto layer_params =
        static_cast<double>(model::dense_layer_parameters_per_rank(m_, p_.tp));
    layer_param_bytes_ = Bytes(layer_params * static_cast<double>(elem_));
    layer_grad_bytes_ = Bytes(layer_params * grad_element_bytes());
    if (per_tensor_gathers()) {
      // DeepSpeed ZeRO-3 (v0.3-v0.5) fetches each partitioned weight tensor with its own
      // AllGather; tensors below the persistence threshold stay whole on every rank
      // (stage3_param_persistence_threshold). The tensors are the layer's projection weights as
      // Megatron-LM holds them (fused QKV, output, MLP up (with gate), down): a GEMM's [k x n].
      layer_tensor_elements_ =
          model::weight_tensor_elements(layer, s_.stack.fsdp_persistence_threshold);
      double gathered = 0.0;
      for (const double elements : layer_tensor_elements_) gathered += elements;
      layer_replicated_elements_ = layer_params - gathered;
    }
  }

  // Dense layers gathered and reduced one weight tensor at a time (the stack's
  // gather_granularity "parameter", under an FSDP sharding).
  bool per_tensor_gathers() const {
    return gathers_params() &&
           s_.stack.fsdp_gather_granularity == stack::GatherGranularity::Parameter;
  }

  // Time an FSDP collective over `shape` of `bytes` (unsharded) spends beside NCCL's: the
  // stack's host cost per rank times its ranks (list-form collectives loop over the ranks on
  // the host), and its staging copies, `passes` over the bytes at the profile's HBM bandwidth.
  Seconds fsdp_extra(const parallel::GroupShape& shape, Bytes bytes, double passes) const {
    Seconds t = s_.stack.fsdp_host_cost_per_rank * static_cast<double>(shape.ranks);
    if (passes > 0.0) {
      // Bandwidth time only: the copies' launches are host work (the cost per rank above).
      const hardware::GpuSpec& gpu = s_.hardware.gpu;
      t = t + (bytes * passes) / (gpu.hbm_bandwidth * gpu.memory_efficiency);
    }
    return t;
  }

  // Bytes per gradient element in DP reductions: the stack's gradient_reduce_dtype, or the
  // training precision when the stack reduces in it.
  double grad_element_bytes() const {
    return static_cast<double>(
        report::element_bytes(s_.stack.reduce_dtype_for(s_.training.precision)));
  }

  // A collective priced by the NCCL model, recorded once per (stage, op, group, bytes, repeat).
  // Stages are built one after another, so only the current stage's calls can match: a short
  // list searched linearly, cheaper than a map keyed by strings for the tens of thousands of
  // communication ops of a large pipeline.
  // `host`: time the call spends beside NCCL's (the stack's host cost and staging copies around
  // list-form collectives, fsdp_extra), added to its time.
  std::int32_t collective(std::int64_t stage, Op op, const char* group,
                          const parallel::GroupShape& shape, Bytes bytes, double repeat = 1.0,
                          Seconds host = Seconds(0.0)) {
    if (stage != stage_calls_stage_) {
      stage_calls_.clear();
      stage_calls_stage_ = stage;
    }
    for (const StageCall& k : stage_calls_) {
      if (k.op == op && k.bytes == bytes.value() && k.repeat == repeat && k.host == host.value() &&
          k.nodes == shape.nodes && k.domains == shape.domains &&
          (k.group == group || std::string_view(k.group) == group)) {
        ++it_.collectives[static_cast<std::size_t>(k.index)].count;
        return k.index;
      }
    }
    // Groups of one kind that lie differently (parallel::GroupShape::variants; `shape` is the
    // stage's, parallel::place(scenario, stage)) are each priced; the stage waits for the
    // slowest, whose shape the call records. Ties keep the shape shown.
    collective::CollectiveCost c = cm_.cost(op, shape, bytes);
    const parallel::GroupShape* priced = &shape;
    for (const parallel::GroupShape& v : shape.variants) {
      collective::CollectiveCost cv = cm_.cost(op, v, bytes);
      if (cv.time > c.time) {
        c = std::move(cv);
        priced = &v;
      }
    }
    // The what-if scale multiplies the whole call, the host and staging time around it too.
    Seconds time = c.time * repeat;
    if (host.value() > 0.0) time = time + host;
    time = time * options_.communication_scale;
    CollectiveCall call{.op = std::string(collective::to_string(op)),
                        .group = group,
                        .shape = *priced,
                        .bytes = bytes,
                        .time = time,
                        .algorithm = std::string(collective::to_string(c.algorithm)),
                        .protocol = std::string(collective::to_string(c.protocol)),
                        .stage = stage,
                        .count = 1,
                        .calls_per_op = static_cast<std::int64_t>(repeat)};
    call.shape.variants.clear();  // the group priced, not the kind's other shapes
    it_.collectives.push_back(std::move(call));
    const auto index = static_cast<std::int32_t>(it_.collectives.size() - 1);
    stage_calls_.push_back(StageCall{op, group, bytes.value(), repeat, host.value(), shape.nodes,
                                     shape.domains, index});
    return index;
  }

  // ---- op emission ----------------------------------------------------------------------

  OpId op(StreamId stream, Seconds duration, engine::NameId name, OpInfo info,
          engine::ContentionClass contention_class = engine::ContentionClass::Default) {
    const OpId id = it_.graph.add_op(stream, duration, name,
                                     static_cast<std::int32_t>(it_.ops.size()), contention_class);
    it_.ops.push_back(info);
    return id;
  }

  void dep(OpId before, OpId after) {
    if (before != kNone && after != kNone) it_.graph.add_dependency(before, after);
  }

  OpId comm(StreamId stream, std::int32_t call, const char* name, OpInfo info) {
    info.collective = call;
    const auto& c = it_.collectives[static_cast<std::size_t>(call)];
    return op(stream, c.time, comm_name(name), info);
  }

  // The name id of a communication op, interned on first use as before (so ids keep their
  // first-use order) and then found by the literal's address among the dozen names in use; a
  // literal at another address only interns again, which returns the same id.
  engine::NameId comm_name(const char* name) {
    for (const auto& [text, id] : comm_names_) {
      if (text == name) return id;
    }
    const engine::NameId id = it_.graph.intern_name(name);
    comm_names_.emplace_back(name, id);
    return id;
  }

  // Emits kernel `k` on the compute stream after `wait` (an op the kernel depends on).
  // `share` of the kernel's time and FLOPs (ring_kernel's blocks; 1 elsewhere, exact).
  OpId kernel(const StageStreams& st, const TimedKernel& k, bool backward, bool recompute,
              OpInfo info, OpId wait, double share = 1.0) {
    info.backward = backward;
    info.recompute = info.recompute || recompute;
    info.flops = (backward ? k.bwd_flops : k.fwd_flops) * share;
    info.kernel_kind = k.kind;
    const engine::NameId name = recompute ? k.recompute_name : (backward ? k.bwd_name : k.fwd_name);
    const OpId id = op(st.compute, (backward ? k.bwd : k.fwd) * share, name, info,
                       backward ? k.bwd_class : k.fwd_class);
    dep(wait, id);
    return id;
  }

  // A kernel beside its share of a layer's CP ring exchange `kv` (none: kernel()). Ring
  // attention works a block at a time: step i attends to block i while block i + 1 arrives, and
  // the last block received is attended to once it is there (Liu et al. 2023, Ring Attention,
  // §3; Transformer Engine's AttnFuncWithCPAndKVP2P runs cp steps of attention for cp - 1 P2P
  // exchanges). So the kernel's first cp - 1 blocks run beside the exchange and its last block,
  // 1/cp of it, waits for the exchange: the pair takes max((cp - 1)/cp x kernel, exchange) +
  // kernel / cp. Run as one op beside the exchange, the last block's attention ended with the
  // exchange where the exchange was the longer (llama2-7b, cp 8, sequence 16,384: 36 us of
  // forward and 104 us of backward a layer off the path).
  OpId ring_kernel(const StageStreams& st, const TimedKernel& k, bool backward, bool recompute,
                   OpInfo info, OpId wait, OpId kv) {
    if (kv == kNone) return kernel(st, k, backward, recompute, info, wait);
    const double last_block = 1.0 / static_cast<double>(p_.cp);
    (void)kernel(st, k, backward, recompute, info, wait, 1.0 - last_block);
    return kernel(st, k, backward, recompute, info, kv, last_block);
  }

  // A TP collective between compute ops: waits for `after_op`, the next compute op waits for it.
  // `input_gather`: the forward AllGather of a column-parallel GEMM's input.
  // `width`: the tensor's width in hidden sizes (2 for the 2h input of a multi-token-prediction
  // module's projection).
  OpId tp_collective(std::int64_t stage, const StageStreams& st, Op o, OpInfo info, OpId after_op,
                     bool input_gather = false, double width = 1.0) {
    const Bytes bytes = input_gather ? tp_input_gather_bytes_ : tp_bytes_;
    const auto call = collective(stage, o, "tp", at(stage).tp, bytes * width);
    const char* name = o == Op::AllReduce   ? "tp_all_reduce"
                       : o == Op::AllGather ? "tp_all_gather"
                                            : "tp_reduce_scatter";
    const OpId id = comm(st.tp, call, name, info);
    dep(after_op, id);
    return id;
  }

  // A TP collective issued before a GEMM: blocking, the GEMM waits for it (`pending`); with the
  // stack's tp_overlap it runs beside the GEMM instead, chunked as Transformer Engine's
  // userbuffers overlap and PyTorch's async TP do, and the kernel after the GEMM waits for it
  // (`beside`): the pair takes about max(GEMM, collective) instead of their sum.
  void tp_before(OpId collective_op, OpId& pending, OpId& beside) const {
    if (s_.stack.tp_overlap) {
      beside = collective_op;
    } else {
      pending = collective_op;
    }
  }

  // What a TP collective after a GEMM waits for: the GEMM, or with tp_overlap the op before it,
  // so that the collective starts beside the GEMM whose output it streams out in chunks.
  OpId tp_after_issue(OpId before_gemm, OpId gemm) const {
    return s_.stack.tp_overlap && before_gemm != kNone ? before_gemm : gemm;
  }

  // Forward (or recomputed forward) of one layer. Returns the last compute op.
  // Whether global layer `layer` has an MoE block (past the leading dense layers).
  bool is_moe_layer(std::int64_t layer) const {
    return model::is_moe(m_) && layer >= m_.num_dense_layers;
  }

  const LayerKernels& kernels_of(std::int64_t layer) const {
    if (!full_layer_.empty() && full_layer_[static_cast<std::size_t>(layer)] != 0) {
      return is_moe_layer(layer) ? moe_full_ : dense_full_;
    }
    return is_moe_layer(layer) ? moe_ : dense_;
  }

  // An MoE all-to-all over the EP group after `after_op`.
  OpId all_to_all(std::int64_t stage, const StageStreams& st, OpInfo info, OpId after_op,
                  const char* name) {
    const auto call = collective(stage, Op::AllToAll, "ep", at(stage).ep, ep_bytes_);
    const OpId id = comm(st.ep, call, name, info);
    dep(after_op, id);
    return id;
  }

  // A collective of the routed rows over the (expert) TP group after `after_op`, where each TP
  // rank routes its own tokens (model::moe_routes_tp_shares).
  OpId routed_tp_collective(std::int64_t stage, const StageStreams& st, Op o, OpInfo info,
                            OpId after_op) {
    const auto call = collective(stage, o, "tp", at(stage).tp, routed_bytes_);
    const OpId id =
        comm(st.tp, call, o == Op::AllGather ? "moe_tp_all_gather" : "moe_tp_reduce_scatter", info);
    dep(after_op, id);
    return id;
  }

  // The rows coming to the experts after `after_op`: the dispatch (forward) or the combine's
  // gradient (backward), an all-to-all, then where each TP rank routes its own tokens the
  // AllGather of the rows over TP (the backward of the ReduceScatter in moe_exchange_out).
  // Returns the op the expert GEMM waits for, or nothing with the stack's a2a overlap (the
  // exchange runs beside compute).
  OpId moe_exchange_in(std::int64_t stage, const StageStreams& st, OpInfo info, OpId after_op,
                       const char* name) {
    OpId id = all_to_all(stage, st, info, after_op, name);
    if (moe_routes_tp_shares_) id = routed_tp_collective(stage, st, Op::AllGather, info, id);
    return s_.stack.moe_a2a_overlap ? kNone : id;
  }

  // The rows leaving the experts after `after_op`: where each TP rank routes its own tokens the
  // ReduceScatter of the rows over TP, then the combine (forward) or the dispatch's gradient
  // (backward), an all-to-all. Returns what compute waits for, as moe_exchange_in.
  OpId moe_exchange_out(std::int64_t stage, const StageStreams& st, OpInfo info, OpId after_op,
                        const char* name) {
    const OpId scattered = moe_routes_tp_shares_
                               ? routed_tp_collective(stage, st, Op::ReduceScatter, info, after_op)
                               : after_op;
    const OpId id = all_to_all(stage, st, info, scattered, name);
    return s_.stack.moe_a2a_overlap ? kNone : id;
  }

  OpId layer_forward(std::int64_t stage, const StageStreams& st, OpInfo info, OpId wait,
                     bool recompute) {
    info.recompute = recompute;  // its collectives too
    const LayerKernels& lk = kernels_of(info.layer);
    const std::vector<TimedKernel>& layer = lk.kernels;
    OpId pending = wait;  // the op the next kernel must wait for
    OpId last = kNone;
    for (std::size_t i = 0; i < layer.size(); ++i) {
      const TimedKernel& k = layer[i];
      OpId beside = kNone;
      if (lk.tp[i].before) {
        tp_before(tp_collective(stage, st, *lk.tp[i].before, info, last,
                                *lk.tp[i].before == Op::AllGather),
                  pending, beside);
      }
      const OpId dispatched =
          lk.ep[i].dispatch_before ? moe_exchange_in(stage, st, info, last, "moe_dispatch") : kNone;
      // Context parallelism: the ring exchange of K/V blocks (cp - 1 steps) runs beside the
      // kernels that take them (the fused attention core; unfused, the scores GEMM the keys
      // and the context GEMM the values: KernelSpec::cp_kv_share), and the kernel's last block
      // runs once the last block has arrived (ring_kernel; Liu et al. 2023, Ring Attention;
      // Megatron-LM context parallelism).
      const OpId kv =
          k.cp_share > 0.0 ? cp_exchange(stage, st, info, last, false, k.cp_share) : kNone;
      const OpId previous = last;
      last = ring_kernel(st, k, false, recompute, info, pending, kv);
      dep(dispatched, last);
      pending = kNone;
      if (lk.tp[i].after) {
        pending =
            tp_collective(stage, st, *lk.tp[i].after, info, tp_after_issue(previous, last));
      }
      if (lk.ep[i].combine_after) {
        const OpId combined = moe_exchange_out(stage, st, info, last, "moe_combine");
        if (combined != kNone) pending = combined;
      }
      if (beside != kNone) pending = beside;  // only column-parallel GEMMs have `before`
    }
    return close_layer(st, pending, last, info);
  }

  // Whether global layer `layer` is a multi-token-prediction module's (past the model's layers,
  // on the last model chunk).
  bool is_mtp_layer(std::int64_t layer) const { return layer >= m_.num_layers; }

  // Forward of a multi-token-prediction module up to its layer (model::mtp_kernels): the lookup of
  // the shifted tokens' embedding, the two norms, the concatenation and the projection. The
  // projection is column-parallel: under sequence parallelism its 2h-wide input is gathered over
  // TP first, and its output is gathered over TP after it (gather_from_tensor_model_parallel_
  // region in _concat_embeddings), which the layer waits for. Returns the last compute op.
  OpId mtp_forward(std::int64_t stage, const StageStreams& st, OpInfo info, OpId wait) {
    OpId last = embedding_forward(stage, st, info, wait);
    wait = kNone;
    for (std::size_t i = 0; i + 1 < mtp_.size(); ++i) {
      last = kernel(st, mtp_[i], false, false, info, wait);
      wait = kNone;
    }
    if (p_.tp > 1 && p_.sequence_parallel) {
      wait = tp_collective(stage, st, Op::AllGather, info, last, false, 2.0);
    }
    last = kernel(st, mtp_.back(), false, false, info, wait);
    const OpId gathered = p_.tp > 1 ? tp_collective(stage, st, Op::AllGather, info, last) : kNone;
    return close_layer(st, gathered, last, info);
  }

  // Backward of mtp_forward, after the module's layer: under sequence parallelism the incoming
  // gradient is gathered over TP (the backward of the scatter to the sequence-parallel region),
  // then the projection's backward, the reduction of its 2h-wide input gradient over TP
  // (ReduceScatter with sequence parallelism, AllReduce without: Megatron's f operator), the
  // norms' backward and the embedding's. Returns the last compute op.
  OpId mtp_backward(std::int64_t stage, const StageStreams& st, OpInfo info, OpId after) {
    info.backward = true;  // its collectives too (layer_backward)
    const OpId gathered = p_.tp > 1 && p_.sequence_parallel
                              ? tp_collective(stage, st, Op::AllGather, info, after)
                              : kNone;
    // The projection's 2h-wide input, kept sequence-split, gathered again beside its backward
    // (layer_backward's backward_regather).
    if (p_.tp > 1 && p_.sequence_parallel) {
      (void)tp_collective(stage, st, Op::AllGather, info, gathered, false, 2.0);
    }
    OpId last = kernel(st, mtp_.back(), true, false, info, gathered);
    OpId wait = p_.tp > 1 ? tp_collective(stage, st,
                                          p_.sequence_parallel ? Op::ReduceScatter : Op::AllReduce,
                                          info, last, false, 2.0)
                          : kNone;
    for (std::size_t r = mtp_.size() - 1; r-- > 0;) {
      last = kernel(st, mtp_[r], true, false, info, wait);
      wait = kNone;
    }
    return embedding_backward(stage, st, info, last);
  }

  // The layer's output is only ready when its trailing collective ends: represented by a
  // zero-length marker on the compute stream that waits for it. Returns the last compute op.
  OpId close_layer(const StageStreams& st, OpId pending, OpId last, const OpInfo& info) {
    if (pending == kNone) return last;
    const OpId marker = op(st.compute, Seconds(0.0), sync_name_, info);
    dep(pending, marker);
    return marker;
  }

  // The word embedding's lookup, after `wait`. Under TP the table is split over the vocabulary
  // (Megatron's VocabParallelEmbedding; torchtitan's RowwiseParallel tok_embeddings): each rank
  // writes the rows it owns and zeros elsewhere, and the partial outputs are summed over TP, an
  // AllReduce (reduce_from_tensor_model_parallel_region), or under sequence parallelism a
  // ReduceScatter straight into the sequence-split region where no learned position embedding
  // is added first (Megatron-Core's reduce_scatter_embeddings in LanguageModelEmbedding,
  // core_r0.8.0; with one, the AllReduce and then a split). The first layer waits for it. Returns
  // the last compute op.
  OpId embedding_forward(std::int64_t stage, const StageStreams& st, OpInfo info, OpId wait) {
    OpId last = kNone;
    for (const TimedKernel& k : embedding_) {
      last = kernel(st, k, false, false, info, wait);
      wait = kNone;
    }
    if (p_.tp == 1) return last;
    const bool scatter =
        p_.sequence_parallel && m_.position_embedding != model::PositionEmbedding::Learned;
    const OpId summed =
        tp_collective(stage, st, scatter ? Op::ReduceScatter : Op::AllReduce, info, last);
    return close_layer(st, summed, last, info);
  }

  // Backward of embedding_forward after `last`: under sequence parallelism the gradient of the
  // scatter (or split) gathers the incoming gradient over TP first; the AllReduce's gradient is
  // the identity. Returns the last compute op.
  OpId embedding_backward(std::int64_t stage, const StageStreams& st, OpInfo info, OpId last) {
    info.backward = true;  // its collective too
    OpId wait = p_.tp > 1 && p_.sequence_parallel
                    ? tp_collective(stage, st, Op::AllGather, info, last)
                    : kNone;
    for (auto k = embedding_.rbegin(); k != embedding_.rend(); ++k) {
      last = kernel(st, *k, true, false, info, wait);
      wait = kNone;
    }
    return last;
  }

  // The final norm, the LM head and the loss, after `wait`. Under TP the head is split over the
  // vocabulary (Megatron's output_layer, a ColumnParallelLinear with parallel_output; torchtitan's
  // ColwiseParallel output with loss_parallel): under sequence parallelism its input is gathered
  // over TP first, and the loss is the vocabulary-parallel cross entropy, whose AllReduces of
  // one fp32 value per token (loss_all_reduces) the loss kernel waits for. Returns the last
  // compute op.
  OpId head_forward(std::int64_t stage, const StageStreams& st, OpInfo info, OpId wait) {
    OpId last = kNone;
    for (const TimedKernel& k : head_) {
      if (p_.tp > 1 && k.name == "lm_head" && p_.sequence_parallel) {
        wait = tp_collective(stage, st, Op::AllGather, info, last);
      }
      if (p_.tp > 1 && k.name == "cross_entropy") {
        OpId after = last;
        for (const double values : loss_all_reduces()) {
          const auto call = collective(stage, Op::AllReduce, "tp", at(stage).tp,
                                       Bytes(static_cast<double>(local_tokens_) * values * 4.0));
          wait = comm(st.tp, call, "tp_loss_all_reduce", info);
          dep(after, wait);
          after = wait;
        }
      }
      last = kernel(st, k, false, false, info, wait);
      wait = kNone;
    }
    return last;
  }

  // Backward of head_forward: the loss's and the head's backward, then the head's input
  // gradient summed over TP (ReduceScatter under sequence parallelism, AllReduce without:
  // Megatron's f operator), which the final norm's backward waits for. The loss's backward is
  // local to each rank. Returns the last compute op.
  OpId head_backward(std::int64_t stage, const StageStreams& st, OpInfo info) {
    info.backward = true;  // its collective too
    OpId last = kNone;
    OpId wait = kNone;
    for (auto k = head_.rbegin(); k != head_.rend(); ++k) {
      if (p_.tp > 1 && p_.sequence_parallel && k->name == "lm_head") {
        // The head's input, kept sequence-split (a column-parallel linear: memory.cpp counts
        // it / t), gathered again beside its backward (layer_backward's backward_regather).
        (void)tp_collective(stage, st, Op::AllGather, info, last);
      }
      last = kernel(st, *k, true, false, info, wait);
      wait = kNone;
      if (p_.tp > 1 && k->name == "lm_head") {
        wait = tp_collective(stage, st, p_.sequence_parallel ? Op::ReduceScatter : Op::AllReduce,
                             info, last);
      }
    }
    return close_layer(st, wait, last, info);
  }

  // The vocabulary-parallel cross entropy's AllReduces over TP, in fp32 values per token:
  // Megatron's vocab_parallel_cross_entropy (megatron/core/tensor_parallel/cross_entropy.py,
  // core_r0.8.0; mpu/cross_entropy.py before) reduces the logits' maximum, the target's logit
  // and the sum of the exponentials, one value each; its fused form (megatron/core/fusions/
  // fused_cross_entropy.py) the maximum, then the other two concatenated; PyTorch's
  // loss_parallel (torch/distributed/tensor/parallel/loss.py) the maximum and the sum in
  // _log_softmax and the target's log-probability in nll_loss.
  // Each micro-batch's head asks for them: a view of constant tables, nothing allocated.
  std::span<const double> loss_all_reduces() const {
    static constexpr std::array<double, 3> kSeparate{1, 1, 1};
    static constexpr std::array<double, 2> kFused{1, 2};
    if (s_.stack.unfused_cross_entropy || s_.stack.fp32_logits_cross_entropy) return kSeparate;
    return kFused;
  }

  OpId cp_exchange(std::int64_t stage, const StageStreams& st, OpInfo info, OpId after_op,
                   bool backward, double share) {
    // The whole exchange sends, each step, this rank's K and V blocks (backward: their gradients
    // too) to the next CP rank: local tokens x (K width + V width) / tp elements per step, x2 in
    // backward; this op carries `share` of it (below). K and
    // V are kv width wide each, but under latent attention V is heads x v_head_dim (DeepSeek-V3:
    // 128 x 128, against K's 128 x 192), as memory.cpp counts it; Transformer Engine's
    // context-parallel attention sends the two as they are.
    const std::int64_t kv_elements =
        model::has_mla(m_) ? m_.num_heads * (m_.head_dim + m_.v_head_dim) : 2 * model::kv_width(m_);
    const double kv =
        static_cast<double>(local_tokens_ * kv_elements * elem_) / static_cast<double>(p_.tp);
    // `share` of it beside this kernel (KernelSpec::cp_kv_share: all of it beside a fused
    // attention core, the keys beside unfused attention's scores and the values beside its
    // context).
    const Bytes bytes(kv * (backward ? 2.0 : 1.0) * share);
    const auto call =
        collective(stage, Op::SendRecv, "cp", at(stage).cp, bytes, static_cast<double>(p_.cp - 1));
    const OpId id = comm(st.cp, call, backward ? "cp_kv_exchange_bwd" : "cp_kv_exchange", info);
    dep(after_op, id);
    return id;
  }

  // Backward of one layer (kernels in reverse order). Returns the last compute op.
  OpId layer_backward(std::int64_t stage, const StageStreams& st, OpInfo info, OpId wait) {
    // The collectives issued here belong to the backward pass too (kernel() sets it for the
    // kernels): a trace names their pass.
    info.backward = true;
    const LayerKernels& lk = kernels_of(info.layer);
    OpId pending = wait;
    OpId last = kNone;
    for (std::size_t r = lk.kernels.size(); r-- > 0;) {
      const TimedKernel& k = lk.kernels[r];
      OpId beside = kNone;
      if (lk.tp[r].backward_before) {
        tp_before(tp_collective(stage, st, *lk.tp[r].backward_before, info, last), pending,
                  beside);
      }
      if (lk.tp[r].backward_regather) {
        // Issued as the backward reaches this GEMM, beside it on the TP stream; the input
        // gradient's ReduceScatter after the GEMM follows it there, so what waits for that
        // ReduceScatter waits for the gather too (the fused backward op holds both GEMMs). The
        // saved input is the forward's gathered one: its FP8 cast where the stack gathers FP8
        // (Transformer Engine gathers ln_out again with the input quantizer).
        (void)tp_collective(stage, st, Op::AllGather, info, last, /*input_gather=*/true);
      }
      // The combine's gradient comes back to the experts before their backward.
      const OpId returned = lk.ep[r].combine_after
                                ? moe_exchange_in(stage, st, info, last, "moe_combine_bwd")
                                : kNone;
      const OpId kv =
          k.cp_share > 0.0 ? cp_exchange(stage, st, info, last, true, k.cp_share) : kNone;
      const OpId previous = last;
      last = ring_kernel(st, k, true, false, info, pending, kv);
      dep(returned, last);
      pending = kNone;
      if (lk.tp[r].backward_after) {
        pending = tp_collective(stage, st, *lk.tp[r].backward_after, info,
                                tp_after_issue(previous, last));
      }
      if (lk.ep[r].dispatch_before) {
        // The dispatch's gradient sends the tokens' gradients back to their ranks.
        const OpId sent = moe_exchange_out(stage, st, info, last, "moe_dispatch_bwd");
        if (sent != kNone) pending = sent;
      }
      if (beside != kNone) pending = beside;  // only row-parallel GEMMs have backward_before
    }
    return close_layer(st, pending, last, info);
  }

  // ---- data-parallel traffic (FSDP / ZeRO / DDP) ------------------------------------------

  bool gathers_params() const {
    return p_.sharding == Sharding::ShardGradOp || p_.sharding == Sharding::FullShard ||
           p_.sharding == Sharding::HybridShard;
  }

  // The group that shares one copy of the model state and reduces gradients: DP x CP ranks
  // (CP ranks hold the same weights, as in Megatron-LM's dp-cp group), or the hybrid shard.
  const parallel::GroupShape& shard_group(std::int64_t stage) const { return at(stage).shard; }

  // The placement of `stage`'s groups (parallel::place(scenario, stage)).
  const parallel::Placement& at(std::int64_t stage) const {
    return *stage_at_[static_cast<std::size_t>(stage)];
  }

  // Whether `chunk` of `stage` splits its gradients (and overlapped weight gathers) into
  // per-layer buckets, or is one bucket (stack dp_buckets_first_chunk_only).
  bool bucketed(std::int64_t stage, std::int64_t chunk) const {
    return !s_.stack.dp_buckets_first_chunk_only || (stage == 0 && chunk == 0);
  }

  bool overlaps_param_gather() const {
    return p_.sharding == Sharding::Zero1 && s_.stack.dp_overlap_param_gather;
  }

  // The group sharing one copy of `g`'s state, and its names in the report (FSDP's, and
  // DDP's / ZeRO-1's).
  const parallel::GroupShape& state_group(std::int64_t stage, StateGroup g) const {
    return g == StateGroup::Expert ? at(stage).expert_shard : at(stage).shard;
  }
  static const char* shard_name(StateGroup g) {
    return g == StateGroup::Expert ? "expert_shard" : "shard";
  }
  static const char* dp_name(StateGroup g) { return g == StateGroup::Expert ? "expert_dp" : "dp"; }

  // An FSDP unit's gather: the op that ends it (kNone when nothing is gathered) and the bytes
  // gathered.
  struct Gather {
    OpId op = kNone;
    double bytes = 0.0;
  };

  // FSDP AllGather of global layer `layer`'s weights (info.layer): one call for a dense layer,
  // and for an MoE layer with ep > 1 a second one of its experts over the expert group, on the
  // same stream (so the second ends last). The layer waits for unit_ready() of the result.
  Gather gather_layer(std::int64_t stage, const StageStreams& st, OpInfo info, OpId issue_after,
                      bool backward) {
    Gather g;
    const auto add = [&](Bytes bytes, StateGroup group) {
      const OpId id = fsdp_gather(stage, st, bytes, info, issue_after, backward, group);
      if (id == kNone) return;
      g.op = id;
      g.bytes += bytes.value();
    };
    if (!is_moe_layer(info.layer) && per_tensor_gathers()) {
      // One call per weight tensor, in order on the DP stream: the last ends last.
      for (const double elements : layer_tensor_elements_) {
        add(Bytes(elements * static_cast<double>(elem_)), StateGroup::Dense);
      }
      return g;
    }
    if (!is_moe_layer(info.layer)) {
      add(layer_param_bytes_, StateGroup::Dense);
      return g;
    }
    add(moe_param_bytes_, StateGroup::Dense);
    if (expert_param_bytes_.value() > 0.0) add(expert_param_bytes_, StateGroup::Expert);
    return g;
  }

  // The op a unit's compute waits for once gather `g` has ended: the gather itself, or with the
  // stack's copy_out_passes a copy on the compute stream of the gathered bytes out of the flat
  // buffer into the unit's tensors, issued where the unit starts (FSDP2's
  // foreach_all_gather_copy_out in wait_for_unshard, on the current stream). HBM bandwidth
  // time, as the staging passes (fsdp_extra).
  OpId unit_ready(const StageStreams& st, const Gather& g, OpInfo info, bool backward) {
    const double passes = s_.stack.fsdp_copy_out_passes;
    if (g.op == kNone || passes <= 0.0) return g.op;
    const hardware::GpuSpec& gpu = s_.hardware.gpu;
    info.backward = backward;
    const OpId id =
        op(st.compute, Bytes(g.bytes * passes) / (gpu.hbm_bandwidth * gpu.memory_efficiency),
           comm_name("fsdp_copy_out"), info);
    dep(g.op, id);
    return id;
  }

  // Gradient synchronization of global layer `layer` (info.layer): grad_sync of its gradients,
  // an MoE layer's experts apart over the expert group. Returns the last op or kNone.
  OpId sync_layer(std::int64_t stage, const StageStreams& st, OpInfo info, OpId after,
                  bool last_microbatch) {
    if (!is_moe_layer(info.layer) && per_tensor_gathers()) {
      // A ReduceScatter per gathered tensor; the replicated tensors' gradients in one AllReduce
      // over the shard group (one bucket).
      OpId id = kNone;
      for (const double elements : layer_tensor_elements_) {
        id = grad_sync(stage, st, Bytes(elements * grad_element_bytes()), info, after,
                       last_microbatch);
      }
      if (layer_replicated_elements_ > 0.0 && shard_group(stage).ranks > 1) {
        info.backward = true;
        const auto call = collective(stage, Op::AllReduce, "shard", shard_group(stage),
                                     Bytes(layer_replicated_elements_ * grad_element_bytes()));
        id = comm(st.dp, call, "replicated_grad_all_reduce", info);
        dep(after, id);
      }
      return id;
    }
    if (!is_moe_layer(info.layer)) {
      return grad_sync(stage, st, layer_grad_bytes_, info, after, last_microbatch);
    }
    const OpId dense = grad_sync(stage, st, moe_grad_bytes_, info, after, last_microbatch);
    if (expert_grad_bytes_.value() <= 0.0) return dense;
    const OpId experts = grad_sync(stage, st, expert_grad_bytes_, info, after, last_microbatch,
                                   StateGroup::Expert);
    return experts != kNone ? experts : dense;
  }

  // AllGather of one FSDP unit's weights. Waits for `issue_after` (prefetch limit).
  OpId fsdp_gather(std::int64_t stage, const StageStreams& st, Bytes bytes, OpInfo info,
                   OpId issue_after, bool backward, StateGroup group = StateGroup::Dense) {
    if (state_group(stage, group).ranks <= 1) return kNone;
    info.backward = backward;
    const auto call = collective(
        stage, Op::AllGather, shard_name(group), state_group(stage, group), bytes, 1.0,
        fsdp_extra(state_group(stage, group), bytes, s_.stack.fsdp_staging_passes_gather));
    const OpId id = comm(st.dp, call, backward ? "fsdp_all_gather_bwd" : "fsdp_all_gather", info);
    dep(issue_after, id);
    return id;
  }

  // Gradient synchronization of one unit after its backward. Returns the last op or kNone.
  OpId grad_sync(std::int64_t stage, const StageStreams& st, Bytes bytes, OpInfo info, OpId after,
                 bool last_microbatch, StateGroup group = StateGroup::Dense) {
    info.backward = true;
    OpId id = kNone;
    const parallel::GroupShape& shape = state_group(stage, group);
    switch (p_.sharding) {
      case Sharding::ShardGradOp:
      case Sharding::FullShard:
      case Sharding::HybridShard: {
        // FSDP reduce-scatters gradients after every backward of a unit (no no_sync).
        if (shape.ranks > 1) {
          const auto call =
              collective(stage, Op::ReduceScatter, shard_name(group), shape, bytes, 1.0,
                         fsdp_extra(shape, bytes, s_.stack.fsdp_staging_passes_reduce));
          id = comm(st.dp, call, "fsdp_reduce_scatter", info);
          dep(after, id);
        }
        if (p_.sharding == Sharding::HybridShard && at(stage).replicate.ranks > 1) {
          // HYBRID_SHARD then AllReduces the gradient shard across replicas.
          const Bytes shard(bytes.value() / static_cast<double>(shard_group(stage).ranks));
          const auto call =
              collective(stage, Op::AllReduce, "replicate", at(stage).replicate, shard);
          const OpId ar = comm(st.dp, call, "hsdp_all_reduce", info);
          dep(id == kNone ? after : id, ar);
          id = ar;
        }
        return id;
      }
      case Sharding::None:
      case Sharding::Zero1: {
        if (!last_microbatch || shape.ranks <= 1) return kNone;
        if (!s_.stack.dp_overlap || !grad_bucketed_) {
          // Megatron-LM's local DDP reduces its contiguous gradient buffer once, after the
          // last backward of the step (train_step: forward_backward_func, then
          // allreduce_gradients); a chunk that is one bucket (dp_buckets_first_chunk_only)
          // once its last backward has produced every gradient: collected here, issued by
          // deferred_grad_sync().
          (group == StateGroup::Expert ? deferred_expert_grad_bytes_ : deferred_grad_bytes_) +=
              bytes.value();
          return kNone;
        }
        if (p_.sharding == Sharding::Zero1) {
          // Megatron's distributed optimizer reduce-scatters gradient buckets as backward runs.
          const auto call = collective(stage, Op::ReduceScatter, dp_name(group), shape, bytes);
          id = comm(st.dp, call, "zero1_reduce_scatter", info);
        } else {
          // DDP AllReduces 25 MiB buckets as their gradients become ready (Li et al., VLDB 2020).
          const double buckets = std::max(1.0, std::ceil(bytes.value() / kDdpBucketBytes));
          const auto call = collective(stage, Op::AllReduce, dp_name(group), shape,
                                       Bytes(bytes.value() / buckets), buckets);
          id = comm(st.dp, call, "ddp_all_reduce", info);
        }
        dep(after, id);
        return id;
      }
    }
    return id;
  }

  // ---- one stage ------------------------------------------------------------------------

  void add_stage(std::int64_t stage) {
    const engine::DeviceId dev = it_.graph.add_device("stage " + std::to_string(stage));
    it_.stage_device.push_back(dev);
    StageStreams st;
    st.compute = it_.graph.add_stream(dev, "compute", engine::OpKind::Compute);
    if (p_.tp > 1) st.tp = it_.graph.add_stream(dev, "tp comm", engine::OpKind::Communication);
    if (p_.cp > 1) st.cp = it_.graph.add_stream(dev, "cp comm", engine::OpKind::Communication);
    st.dp = it_.graph.add_stream(dev, "dp comm", engine::OpKind::Communication);
    if (pp_ > 1) st.pp = it_.graph.add_stream(dev, "pp comm", engine::OpKind::Communication);
    if (p_.ep > 1) st.ep = it_.graph.add_stream(dev, "ep comm", engine::OpKind::Communication);
    sync_name_ = it_.graph.intern_name("wait_comm");
    recv_name_ = it_.graph.intern_name("pp_recv_wait");

    const auto steps = pipeline_order(p_.schedule, pp_, stage, microbatches_, chunks_);
    // With the stack's overlap_param_gather: per chunk, the weight gathers its first forward
    // pass waits for, issued before anything else on the DP stream.
    const std::vector<std::vector<OpId>> param_gathers =
        overlaps_param_gather() ? issue_param_gathers(stage, st) : std::vector<std::vector<OpId>>{};
    OpId last_dp = kNone;
    OpId last_compute = kNone;
    // Micro-batches each chunk has seen backward, to spot the last one (gradient sync).
    std::vector<std::int64_t> backward_done(static_cast<std::size_t>(chunks_), 0);
    for (const PassStep& step : steps) {
      const std::int64_t vs = virtual_stage(stage, step.chunk);
      const bool first = vs == 0;
      const bool last = vs == virtual_stages_ - 1;
      OpInfo info;
      info.stage = static_cast<std::int32_t>(stage);
      info.microbatch = static_cast<std::int32_t>(step.microbatch);
      const std::size_t slot = pipe_slot(vs, step.microbatch, step.backward);
      // A pass that consumes another stage's output starts with a zero-length receive marker
      // on the compute stream; link_pipeline() makes it wait for the matching send.
      if ((!step.backward && !first) || (step.backward && !last)) {
        info.backward = step.backward;
        pass_recv_[slot] = op(st.compute, Seconds(0.0), recv_name_, info);
        info.backward = false;
      }
      const Bytes root = root_bytes(first, last);
      OpId wait = kNone;  // what the next kernel waits for (besides stream order)
      // The overlapped weight gathers this pass waits for: the chunk's first forward only.
      const std::vector<OpId>* gathered =
          !step.backward && step.microbatch == 0 && !param_gathers.empty()
              ? &param_gathers[static_cast<std::size_t>(step.chunk)]
              : nullptr;
      if (gathered != nullptr && !gathered->empty()) wait = gathered->front();
      if (!step.backward) {
        if (gathers_params() && root.value() > 0.0) {
          // Root FSDP unit (embedding / head weights) gathered at the start of the pass.
          const OpId ag = fsdp_gather(stage, st, root, info,
                                      s_.stack.fsdp_blocking_fetch ? last_compute : kNone, false);
          wait = unit_ready(st, Gather{ag, root.value()}, info, false);
        }
        if (first) {
          last_compute = embedding_forward(stage, st, info, wait);
          wait = kNone;
        }
        const std::int64_t l0 = chunk_first_layer_[static_cast<std::size_t>(vs)];
        const std::int64_t nl = chunk_layers_[static_cast<std::size_t>(vs)];
        std::vector<OpId> layer_end;
        for (std::int64_t l = l0; l < l0 + nl; ++l) {
          info.layer = static_cast<std::int32_t>(l);
          if (gathered != nullptr && static_cast<std::size_t>(l - l0) < gathered->size()) {
            wait = (*gathered)[static_cast<std::size_t>(l - l0)];
          }
          if (is_mtp_layer(l)) {
            last_compute = mtp_forward(stage, st, info, wait);
            wait = kNone;
          }
          if (gathers_params()) {
            // FSDP prefetch: with d = the stack's forward_prefetch gathers in flight, the gather
            // of layer l is issued when layer l-d has ended (d = 2: as layer l-1 starts, PyTorch
            // FSDP's rate limiter, limit_all_gathers).
            // A blocking fetch waits for every kernel issued before it.
            const auto depth = static_cast<std::size_t>(s_.stack.fsdp_forward_prefetch);
            const OpId issue = s_.stack.fsdp_blocking_fetch ? last_compute
                               : layer_end.size() >= depth  ? layer_end[layer_end.size() - depth]
                                                            : kNone;
            const Gather ag = gather_layer(stage, st, info, issue, false);
            if (ag.op != kNone) wait = unit_ready(st, ag, info, false);
          }
          last_compute = layer_forward(stage, st, info, wait, false);
          layer_end.push_back(last_compute);
          wait = kNone;
          if (is_mtp_layer(l)) {
            // The module's final norm, the shared LM head and its loss.
            last_compute = head_forward(stage, st, info, kNone);
          }
        }
        info.layer = -1;
        if (last) {
          last_compute = head_forward(stage, st, info, wait);
          wait = kNone;
        }
        if (!last) pass_send_[slot] = send(stage, st, info, last_compute, false);
      } else {
        if (last) last_compute = head_backward(stage, st, info);
        const std::int64_t l0 = chunk_first_layer_[static_cast<std::size_t>(vs)];
        const std::int64_t nl = chunk_layers_[static_cast<std::size_t>(vs)];
        auto& done = backward_done[static_cast<std::size_t>(step.chunk)];
        const bool last_mb = ++done == microbatches_;
        grad_bucketed_ = bucketed(stage, step.chunk);
        OpId prev_layer_end = kNone;
        Gather pending_gather;
        const bool resharded =
            p_.sharding == Sharding::FullShard || p_.sharding == Sharding::HybridShard;
        const bool blocking = s_.stack.fsdp_blocking_fetch;
        // The model's last layer stays gathered from its forward to its backward when the
        // stack does not reshard it (fsdp_reshard_last_layer false).
        const bool kept =
            !s_.stack.fsdp_reshard_last_layer && l0 + nl == m_.num_layers + m_.mtp_layers;
        // Where the recomputed forward gathers a layer's weights apart from its backward
        // (RecomputeGather::Separate, DeepSpeed ZeRO-3), the gather ahead of a recomputed layer
        // feeds the recomputation: the trace's args.pass says "recompute" (the backward's call
        // still, as it is issued in the backward pass).
        const auto gather_info = [&](OpInfo i) {
          i.recompute = s_.stack.fsdp_recompute_gather == stack::RecomputeGather::Separate &&
                        parallel::recomputes_whole_layer(p_, i.layer - l0);
          return i;
        };
        if (resharded && !blocking && !kept) {
          // FULL_SHARD resharded after forward: gather the last layer again before backward.
          info.layer = static_cast<std::int32_t>(l0 + nl - 1);
          pending_gather = gather_layer(stage, st, gather_info(info), kNone, true);
        }
        for (std::int64_t l = l0 + nl - 1; l >= l0; --l) {
          info.layer = static_cast<std::int32_t>(l);
          if (is_mtp_layer(l)) {
            // A multi-token-prediction module's head first, as its forward ended with it.
            last_compute = head_backward(stage, st, info);
          }
          wait = unit_ready(st, pending_gather, info, true);
          pending_gather = Gather{};
          if (resharded && blocking) {
            // A blocking fetch, issued after every kernel and (on the DP stream) every
            // reduction before it: nothing is prefetched.
            wait = unit_ready(st, gather_layer(stage, st, gather_info(info), last_compute, true),
                              info, true);
          }
          const bool regather = resharded && !blocking && l > l0;
          OpInfo next = info;
          next.layer = static_cast<std::int32_t>(l - 1);
          if (regather) {
            // The next layer's gather, issued as this layer's backward starts, after the layer
            // before it, on the DP stream ahead of this layer's reduction. Both of PyTorch
            // FSDP1's BackwardPrefetch modes give this GPU schedule while the host runs ahead.
            // BACKWARD_PRE issues it from this unit's pre-backward hook, BACKWARD_POST from its
            // post-backward hook, before this unit's ReduceScatter; neither makes the unshard
            // stream wait for compute (_prefetch_handle -> _unshard in
            // torch/distributed/fsdp/_runtime_utils.py, "without synchronization"). The rate
            // limiter holds the host until the unit two back (PRE: three) was resharded, and
            // the one NCCL stream of the process group runs the gather after the previous
            // layer's ReduceScatter, which waits for that layer's backward. So the stack key
            // fsdp.backward_prefetch changes nothing here (docs/stacks.md).
            pending_gather = gather_layer(stage, st, gather_info(next), prev_layer_end, true);
          }
          if (parallel::recomputes_whole_layer(p_, l - l0)) {
            const OpId recomputed = layer_forward(stage, st, info, wait, true);
            wait = kNone;
            if (resharded && s_.stack.fsdp_recompute_gather == stack::RecomputeGather::Separate) {
              // The recomputed forward released the weights again: the backward gathers them
              // a third time, once the recomputation has ended.
              wait = unit_ready(st, gather_layer(stage, st, info, recomputed, true), info, true);
            }
          } else if (p_.recompute == parallel::Recompute::Selective) {
            // The recomputed attention core (or unfused attention's scores and context GEMMs)
            // exchanges K/V over the CP ring again, as its forward did (Transformer Engine's
            // context-parallel attention runs its P2P steps inside the function the checkpoint
            // reruns); the backward waits for the last block.
            OpInfo rinfo = info;
            rinfo.recompute = true;
            OpId previous = wait;
            for (const auto& k : kernels_of(l).recomputed) {
              const OpId kv = k.cp_share > 0.0
                                  ? cp_exchange(stage, st, rinfo, previous, false, k.cp_share)
                                  : kNone;
              previous = ring_kernel(st, k, false, true, info, wait, kv);
              wait = kNone;
            }
          }
          last_compute = layer_backward(stage, st, info, wait);
          prev_layer_end = last_compute;
          const OpId g = sync_layer(stage, st, info, last_compute, last_mb);
          if (g != kNone) last_dp = g;
          if (is_mtp_layer(l)) last_compute = mtp_backward(stage, st, info, last_compute);
        }
        info.layer = -1;
        if (first) last_compute = embedding_backward(stage, st, info, last_compute);
        if (root.value() > 0.0) {
          const Bytes root_grads(root.value() / static_cast<double>(elem_) * grad_element_bytes());
          const OpId g = grad_sync(stage, st, root_grads, info, last_compute, last_mb);
          if (g != kNone) last_dp = g;
        }
        if (last_mb && s_.stack.dp_overlap && !grad_bucketed_) {
          // A chunk that is one bucket: its gradients reduced once, now that all exist.
          const OpId g = flush_deferred_grads(stage, st, last_compute);
          if (g != kNone) last_dp = g;
        }
        grad_bucketed_ = true;
        if (!first) pass_send_[slot] = send(stage, st, info, last_compute, true);
      }
    }
    const OpId g = flush_deferred_grads(stage, st, last_compute);
    if (g != kNone) last_dp = g;
    const OpId e = embedding_grad_sync(stage, st, last_compute, last_dp);
    optimizer(stage, st, e != kNone ? e : last_dp);
  }

  // With pipeline parallelism, the first stage holds the word embedding and the last a copy of
  // it when the LM head is tied to it (or the copy a multi-token-prediction module reads), and
  // the two copies' gradients are summed before the step: Megatron's finalize_model_grads
  // all-reduces the weight's whole gradient buffer (main_grad, in the gradient-reduce dtype)
  // over the embedding group once the data-parallel reduction is done
  // (_allreduce_word_embedding_grads in megatron/core/distributed/finalize_model_grads.py;
  // train_step in Megatron-LM 2021's megatron/training.py), and the optimizer step waits for
  // it. Under FSDP-style sharding the same code first gathers the sharded gradient
  // (_unshard_if_dtensor, full_tensor()) and all-reduces it whole; that gather is not priced.
  // Both stages' calls wait for both stages' last backward and reduction. Returns the call on
  // this stage, or kNone when the stage holds no copy.
  OpId embedding_grad_sync(std::int64_t stage, const StageStreams& st, OpId last_compute,
                           OpId last_dp) {
    if (pp_ < 2 || (stage != 0 && stage != pp_ - 1)) return kNone;
    if (!m_.tied_embeddings && m_.mtp_layers == 0) return kNone;
    // The word embedding on one TP rank: the elements of the last stage's copy.
    const auto elements = static_cast<double>(
        model::lm_head_parameters_per_tp_rank(m_, p_.tp, model::LmHeadCopy::Separate));
    const Bytes bytes(elements * grad_element_bytes());
    const auto call = collective(stage, Op::AllReduce, "embedding", it_.placement.embedding, bytes);
    OpInfo info;
    info.stage = static_cast<std::int32_t>(stage);
    // The backward's last gradient reduction, as the data-parallel ones are.
    info.backward = true;
    const OpId id = comm(st.dp, call, "embedding_grad_all_reduce", info);
    dep(last_compute, id);
    dep(last_dp, id);
    if (stage == 0) {
      embedding_first_ = EmbeddingSync{.compute = last_compute, .dp = last_dp, .call = id};
    } else {
      dep(embedding_first_.compute, id);
      dep(embedding_first_.dp, id);
      dep(last_compute, embedding_first_.call);
      dep(last_dp, embedding_first_.call);
    }
    return id;
  }

  // Megatron-Core's --overlap-param-gather (stack dp_overlap_param_gather): the distributed
  // optimizer's AllGather of the weights it updated, overlapping the forward of the iteration
  // that uses them. In the steady state the gathers of iteration i + 1 follow i's step; here
  // they open the iteration, in forward order on the DP stream, each issued as the one before
  // ends (the next is dispatched from the pre-hook that waits for the previous one). A bucketed
  // chunk gathers layer by layer, the embedding with its first layer and the final norm and LM
  // head with its last; any other chunk in one call. Returns, per chunk, the gathers its first
  // forward pass waits for: one per layer, or one for the chunk.
  std::vector<std::vector<OpId>> issue_param_gathers(std::int64_t stage, const StageStreams& st) {
    std::vector<std::vector<OpId>> out(static_cast<std::size_t>(chunks_));
    OpInfo info;
    info.stage = static_cast<std::int32_t>(stage);
    // The gather of the weights the last step updated, issued early: the optimizer's, as the
    // one after the step is (OpInfo::optimizer).
    info.optimizer = true;
    const auto gather = [&](double dense, double experts) {
      return zero1_gather(stage, st, info, dense, experts, kNone);
    };
    for (std::int64_t c = 0; c < chunks_; ++c) {
      const std::int64_t vs = virtual_stage(stage, c);
      const std::int64_t l0 = chunk_first_layer_[static_cast<std::size_t>(vs)];
      const std::int64_t nl = chunk_layers_[static_cast<std::size_t>(vs)];
      const double embedding = root_bytes(vs == 0, false).value();
      const double tail = root_bytes(false, vs == virtual_stages_ - 1).value();
      const auto layer_bytes = [&](std::int64_t l) {
        if (!is_moe_layer(l)) return std::pair{layer_param_bytes_.value(), 0.0};
        return std::pair{moe_param_bytes_.value(), expert_param_bytes_.value()};
      };
      auto& ops = out[static_cast<std::size_t>(c)];
      if (bucketed(stage, c) && nl > 0) {
        for (std::int64_t l = l0; l < l0 + nl; ++l) {
          info.layer = static_cast<std::int32_t>(l);
          auto [dense, experts] = layer_bytes(l);
          if (l == l0) dense += embedding;
          if (l == l0 + nl - 1) dense += tail;
          ops.push_back(gather(dense, experts));
        }
      } else {
        info.layer = -1;
        double dense = embedding + tail;
        double experts = 0.0;
        for (std::int64_t l = l0; l < l0 + nl; ++l) {
          const auto [d, e] = layer_bytes(l);
          dense += d;
          experts += e;
        }
        ops.push_back(gather(dense, experts));
      }
      if (std::all_of(ops.begin(), ops.end(), [](OpId id) { return id == kNone; })) ops.clear();
    }
    return out;
  }

  // The distributed optimizer's AllGather of `dense` weight bytes over the shard group and of
  // `experts` bytes (routed experts, ep > 1) over the expert shard group, on the DP stream after
  // `after`. Returns the later of the two ops, or kNone when neither group gathers anything.
  OpId zero1_gather(std::int64_t stage, const StageStreams& st, const OpInfo& info, double dense,
                    double experts, OpId after) {
    OpId id = kNone;
    if (dense > 0.0 && shard_group(stage).ranks > 1) {
      const auto call = collective(stage, Op::AllGather, "dp", shard_group(stage), Bytes(dense));
      id = comm(st.dp, call, "zero1_all_gather", info);
      dep(after, id);
    }
    if (experts > 0.0 && at(stage).expert_shard.ranks > 1) {
      const auto call =
          collective(stage, Op::AllGather, "expert_dp", at(stage).expert_shard, Bytes(experts));
      id = comm(st.dp, call, "zero1_all_gather", info);
      dep(after, id);
    }
    return id;
  }

  // The gradients grad_sync() collected, dense and then the routed experts', each reduced in one
  // call after `after` (deferred_grad_sync). Returns the last op, or kNone when none was pending.
  OpId flush_deferred_grads(std::int64_t stage, const StageStreams& st, OpId after) {
    OpId last = kNone;
    for (const StateGroup group : {StateGroup::Dense, StateGroup::Expert}) {
      const double pending =
          group == StateGroup::Dense ? deferred_grad_bytes_ : deferred_expert_grad_bytes_;
      if (pending <= 0.0) continue;
      const OpId g = deferred_grad_sync(stage, st, after, group);
      if (g != kNone) last = g;
    }
    return last;
  }

  // The gradients collected by grad_sync() reduced in one call after `after`: the stage's
  // whole buffer after its last backward kernel (stack dp_overlap false: Megatron-LM before
  // --overlap-grad-reduce), or one chunk's after its last backward pass (a chunk that is one
  // bucket, dp_buckets_first_chunk_only).
  OpId deferred_grad_sync(std::int64_t stage, const StageStreams& st, OpId after,
                          StateGroup group = StateGroup::Dense) {
    double& pending = group == StateGroup::Expert ? deferred_expert_grad_bytes_
                                                  : deferred_grad_bytes_;
    const Bytes bytes(pending);
    pending = 0.0;
    OpInfo info;
    info.stage = static_cast<std::int32_t>(stage);
    info.backward = true;
    const bool zero1 = p_.sharding == Sharding::Zero1;
    const auto call = collective(stage, zero1 ? Op::ReduceScatter : Op::AllReduce, dp_name(group),
                                 state_group(stage, group), bytes);
    const OpId id = comm(st.dp, call, zero1 ? "zero1_reduce_scatter" : "ddp_all_reduce", info);
    dep(after, id);
    return id;
  }

  // Bytes of the stage's non-layer weights (embedding on the first virtual stage, final norm
  // and LM head on the last) per TP rank.
  Bytes root_bytes(bool first, bool last) const {
    std::int64_t params = 0;
    if (first) params += model::embedding_parameters_per_tp_rank(m_, p_.tp);
    if (last) params += model::last_stage_parameters_per_tp_rank(m_, p_.tp, pp_);
    return Bytes(static_cast<double>(params * elem_));
  }

  // Point-to-point send of activations (forward) or their gradients (backward) to the
  // neighbouring stage, on the sender's pp stream.
  OpId send(std::int64_t stage, const StageStreams& st, OpInfo info, OpId after, bool backward) {
    info.backward = backward;
    // The pair of neighbouring stages the send joins, forward to the next stage and backward to
    // the previous, the first and the last being neighbours under interleaving
    // (parallel::pipeline_pair): on different hosts, or NVLink domains (a GB200 NVL72 rack
    // holds 18 hosts), when any of the stages' rank pairs is. Priced on the whole pipeline's
    // span, every send of a pipeline spanning hosts crossed them, where with tp 2 and pp 4 on
    // two 8-GPU hosts only the one between stages 1 and 2 does.
    const parallel::GroupShape& between =
        pp_pairs_[static_cast<std::size_t>(backward ? (stage + pp_ - 1) % pp_ : stage)];
    const bool across_hosts = between.nodes > 1;
    const bool across_domains = between.domains > 1;
    const parallel::GroupShape pair{.ranks = 2,
                                    .nodes = across_hosts ? 2 : 1,
                                    .ranks_per_node = across_hosts ? 1 : 2,
                                    .domains = across_domains ? 2 : 1,
                                    .ranks_per_domain = across_domains ? 1 : 2,
                                    .host_active = between.host_active};
    const auto call = collective(stage, Op::SendRecv, "pp", pair, pp_bytes_);
    const OpId id = comm(st.pp, call, backward ? "pp_send_grad" : "pp_send_activation", info);
    dep(after, id);
    return id;
  }

  void optimizer(std::int64_t stage, const StageStreams& st, OpId last_dp) {
    // Parameters this rank updates: the stage's share per TP rank, divided by the sharding.
    std::int64_t params = 0;
    std::int64_t expert_params = 0;  // MoE layers' routed experts (ep > 1), sharded apart
    for (std::int64_t c = 0; c < chunks_; ++c) {
      const std::int64_t vs = virtual_stage(stage, c);
      const std::int64_t layers = chunk_layers_[static_cast<std::size_t>(vs)];
      const std::int64_t first = chunk_first_layer_[static_cast<std::size_t>(vs)];
      const std::int64_t moe_layers =
          model::is_moe(m_)
              ? std::max<std::int64_t>(0, first + layers - std::max(first, m_.num_dense_layers))
              : 0;
      params += (layers - moe_layers) * model::dense_layer_parameters_per_rank(m_, p_.tp);
      if (moe_layers > 0) {
        const auto moe = model::moe_layer_parameters_per_rank(m_, p_.tp, p_.ep);
        params += moe_layers * (p_.ep > 1 ? moe.dense : moe.total());
        expert_params += p_.ep > 1 ? moe_layers * moe.expert : 0;
      }
      params +=
          static_cast<std::int64_t>(root_bytes(vs == 0, vs == virtual_stages_ - 1).value()) / elem_;
    }
    const std::int64_t local =
        model::ceil_div(params, report::sharding_degree(s_)) +
        (expert_params > 0 ? model::ceil_div(expert_params, report::expert_sharding_degree(s_))
                           : 0);
    const stack::StackSpec::OptimizerState& state = s_.stack.optimizer_state;
    const model::KernelSpec k =
        s_.training.optimizer == parallel::Optimizer::AdamW
            ? model::adamw_step_kernel(local, elem_, state.main_params_bytes,
                                       state.exp_avg_bytes + state.exp_avg_sq_bytes)
            : model::sgd_step_kernel(local, elem_);
    const TimedKernel t = timed(k, true);
    OpInfo info;
    info.stage = static_cast<std::int32_t>(stage);
    info.optimizer = true;
    const OpId opt = kernel(st, t, false, false, info, last_dp);
    // The distributed optimizer gathers the updated weights for the next iteration, here after
    // the step, or with overlap_param_gather as the iteration opens (issue_param_gathers).
    if (p_.sharding == Sharding::Zero1 && !overlaps_param_gather()) {
      zero1_gather(stage, st, info, static_cast<double>(params * elem_),
                   static_cast<double>(expert_params * elem_), opt);
    }
  }

  // ---- pipeline links -------------------------------------------------------------------

  std::size_t pipe_slot(std::int64_t vs, std::int64_t mb, bool backward) const {
    return static_cast<std::size_t>((vs * microbatches_ + mb) * 2 + (backward ? 1 : 0));
  }

  // Forward of virtual stage v waits for v-1's send; backward of v waits for v+1's send.
  void link_pipeline() {
    for (std::int64_t vs = 0; vs < virtual_stages_; ++vs) {
      for (std::int64_t mb = 0; mb < microbatches_; ++mb) {
        if (vs > 0) {
          dep(pass_send_[pipe_slot(vs - 1, mb, false)], pass_recv_[pipe_slot(vs, mb, false)]);
        }
        if (vs + 1 < virtual_stages_) {
          dep(pass_send_[pipe_slot(vs + 1, mb, true)], pass_recv_[pipe_slot(vs, mb, true)]);
        }
      }
    }
  }

  const parallel::Scenario& s_;
  const collective::CollectiveModel& cm_;
  const model::ModelSpec& m_;
  const parallel::ParallelPlan& p_;
  BuildOptions options_;
  Iteration it_;
  std::int64_t pp_ = 1;
  std::int64_t chunks_ = 1;
  std::int64_t virtual_stages_ = 1;
  std::int64_t microbatches_ = 1;
  std::int64_t elem_ = 2;
  std::int64_t local_tokens_ = 0;
  std::int64_t local_seq_ = 0;
  model::LayerShape shape_;
  // By pipeline stage, where the stages' groups may lie differently; empty otherwise (at()).
  std::vector<parallel::Placement> stage_placement_;
  std::vector<const parallel::Placement*> stage_at_;  // by stage: what at() gives
  // By stage: the rank pairs between it and the next, the last's with the first
  // (parallel::pipeline_pair); empty without pipeline parallelism.
  std::vector<parallel::GroupShape> pp_pairs_;
  std::vector<std::int64_t> chunk_first_layer_;
  std::vector<std::int64_t> chunk_layers_;
  LayerKernels dense_;  // a dense layer's (every layer of a dense model)
  LayerKernels moe_;    // an MoE layer's (empty for a dense model)
  // With a window on some layers only (model::mixed_attention_window), the kernels of the
  // layers that attend in full, and by layer (multi-token-prediction modules included) whether
  // it does; empty otherwise.
  LayerKernels dense_full_;
  LayerKernels moe_full_;
  std::vector<std::uint8_t> full_layer_;
  std::vector<TimedKernel> embedding_;
  std::vector<TimedKernel> head_;
  std::vector<TimedKernel> mtp_;  // a multi-token-prediction module's, before its layer
  Bytes tp_bytes_;
  Bytes tp_input_gather_bytes_;  // forward SP AllGather before a column-parallel GEMM
  Bytes pp_bytes_;
  Bytes layer_param_bytes_;
  Bytes layer_grad_bytes_;
  // Gather granularity "parameter": elements per TP rank of each gathered weight tensor of a
  // dense layer, in forward order, and of the tensors kept replicated (biases, norms, tensors
  // below the persistence threshold).
  std::vector<double> layer_tensor_elements_;
  double layer_replicated_elements_ = 0.0;
  // MoE layers: weights and gradients per rank of the part shared by the shard group (all of
  // the layer with ep 1) and of the rank's routed experts (ep > 1; over the expert group), and
  // the all-to-all's bytes per call.
  Bytes moe_param_bytes_;
  Bytes moe_grad_bytes_;
  Bytes expert_param_bytes_;
  Bytes expert_grad_bytes_;
  Bytes ep_bytes_;
  // The routed rows a rank's experts take per micro-batch and layer, local tokens x top-k x
  // hidden: what the TP group gathers after the all-to-all where moe_routes_tp_shares_.
  Bytes routed_bytes_;
  // model::moe_routes_tp_shares of the scenario's layer shape.
  bool moe_routes_tp_shares_ = false;
  engine::NameId sync_name_ = 0;
  engine::NameId recv_name_ = 0;
  // The distinct collective calls of the stage being built (collective()).
  struct StageCall {
    Op op;
    const char* group;
    double bytes;
    double repeat;
    double host;
    // The shape's span: a stage's pipeline sends join the previous stage and the next, which
    // may sit on the same host or not; every other kind has one shape per stage.
    std::int64_t nodes;
    std::int64_t domains;
    std::int32_t index;
  };
  std::vector<StageCall> stage_calls_;
  bool grad_bucketed_ = true;         // the backward pass being built reduces per-layer buckets
  double deferred_grad_bytes_ = 0.0;  // gradients awaiting the step's one reduction
  double deferred_expert_grad_bytes_ = 0.0;  // the same of the routed experts (ep > 1)
  std::int64_t stage_calls_stage_ = -1;
  std::vector<std::pair<const char*, engine::NameId>> comm_names_;
  // The first stage's embedding-gradient AllReduce and what it waits for on that stage, for
  // the last stage's call to join (embedding_grad_sync).
  struct EmbeddingSync {
    OpId compute = kNone;
    OpId dp = kNone;
    OpId call = kNone;
  };
  EmbeddingSync embedding_first_;
  // By pipe_slot(): the receive marker and the send op of every pass.
  std::vector<OpId> pass_recv_;
  std::vector<OpId> pass_send_;
};

}  // namespace

Iteration build_iteration(const parallel::Scenario& scenario,
                          const collective::CollectiveModel& collectives,
                          const BuildOptions& options) {
  return Builder(scenario, collectives, options).build();
}

Seconds compute_lower_bound(const parallel::Scenario& scenario,
                            const collective::CollectiveModel& collectives) {
  return Builder(scenario, collectives, BuildOptions{}).compute_lower_bound();
}

}  // namespace trainsim::workload
