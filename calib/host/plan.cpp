#include "calib/host/plan.hpp"

#include <algorithm>
#include <tuple>

#include "trainsim/model/kernels.hpp"

namespace trainsim::calib {
namespace {

using hardware::Dtype;

void add_gemm(Plan& plan, std::int64_t m, std::int64_t n, std::int64_t k, Dtype dtype,
              const std::string& origin) {
  plan.gemms.push_back(GemmCase{.m = m, .n = n, .k = k, .dtype = dtype, .origin = origin});
}

// The three products of one GEMM kernel (model/kernels.hpp, GemmShape): forward C = A B
// [m x n] = [m x k][k x n]; dgrad [m x k] = [m x n][n x k]; wgrad [k x n] = [k x m][m x n].
void add_training_gemms(Plan& plan, const model::KernelSpec& kernel, Dtype dtype) {
  const model::GemmShape& g = kernel.gemm;
  add_gemm(plan, g.m, g.n, g.k, dtype, kernel.name + " forward");
  add_gemm(plan, g.m, g.k, g.n, dtype, kernel.name + " dgrad");
  add_gemm(plan, g.k, g.n, g.m, dtype, kernel.name + " wgrad");
}

bool same_gemm(const GemmCase& a, const GemmCase& b) {
  return std::tie(a.m, a.n, a.k, a.dtype) == std::tie(b.m, b.n, b.k, b.dtype);
}

bool same_attention(const AttentionCase& a, const AttentionCase& b) {
  return std::tie(a.batch, a.heads, a.seq_len, a.head_dim, a.causal, a.dtype) ==
         std::tie(b.batch, b.heads, b.seq_len, b.head_dim, b.causal, b.dtype);
}

template <class Case, class Same>
void merge_cases(std::vector<Case>& into, const std::vector<Case>& more, Same same) {
  for (const Case& c : more) {
    const auto it = std::find_if(into.begin(), into.end(),
                                 [&](const Case& existing) { return same(existing, c); });
    if (it == into.end()) {
      into.push_back(c);
    } else if (it->origin.find(c.origin) == std::string::npos) {
      it->origin += "; " + c.origin;
    }
  }
}

}  // namespace

Plan scenario_plan(const parallel::Scenario& s) {
  const model::LayerShape shape{.micro_batch = s.training.micro_batch,
                                .seq_len = s.training.seq_len,
                                .tp = s.parallel.tp,
                                .cp = s.parallel.cp,
                                .sequence_parallel = s.parallel.sequence_parallel,
                                .element_bytes = 2,
                                .causal = true};
  const Dtype dtype = s.training.precision;
  Plan raw;
  for (const auto& k : model::layer_kernels(s.model, shape)) {
    if (k.kind == model::KernelKind::Gemm) add_training_gemms(raw, k, dtype);
  }
  for (const auto& k : model::head_kernels(s.model, shape)) {
    if (k.kind == model::KernelKind::Gemm) add_training_gemms(raw, k, dtype);
  }
  raw.attention.push_back(AttentionCase{.batch = s.training.micro_batch,
                                        .heads = s.model.num_heads / s.parallel.tp,
                                        .seq_len = s.training.seq_len / s.parallel.cp,
                                        .head_dim = s.model.head_dim,
                                        .causal = true,
                                        .dtype = dtype,
                                        .origin = "attn_core forward"});
  Plan plan;
  merge_plans(plan, raw);
  return plan;
}

Plan grid_plan(bool quick) {
  Plan plan;
  const std::vector<std::int64_t> squares =
      quick ? std::vector<std::int64_t>{256, 1024, 4096, 16384}
            : std::vector<std::int64_t>{256, 512, 1024, 2048, 4096, 8192, 16384};
  for (const Dtype d : {Dtype::Bf16, Dtype::Fp16, Dtype::Tf32, Dtype::Fp8}) {
    for (const std::int64_t n : squares) add_gemm(plan, n, n, n, d, "grid square");
  }
  // One small side against two large ones (8192): the shapes of narrow TP shards, small
  // micro-batches and the LM head's split vocabulary.
  const std::vector<std::int64_t> small =
      quick ? std::vector<std::int64_t>{64, 512}
            : std::vector<std::int64_t>{16, 64, 128, 256, 512, 1024};
  for (const std::int64_t s : small) {
    add_gemm(plan, s, 8192, 8192, Dtype::Bf16, "grid small m");
    add_gemm(plan, 8192, 8192, s, Dtype::Bf16, "grid small k");
  }
  const std::vector<std::int64_t> seqs =
      quick ? std::vector<std::int64_t>{1024, 4096, 16384}
            : std::vector<std::int64_t>{512, 1024, 2048, 4096, 8192, 16384};
  for (const std::int64_t head_dim : {64, 128}) {
    for (const bool causal : {true, false}) {
      for (const std::int64_t seq : seqs) {
        // Tokens per call held near 16k (batch x seq) so that every call fills the GPU.
        const std::int64_t batch = std::max<std::int64_t>(1, 16384 / seq);
        plan.attention.push_back(AttentionCase{.batch = batch,
                                               .heads = 4096 / (head_dim * 2),
                                               .seq_len = seq,
                                               .head_dim = head_dim,
                                               .causal = causal,
                                               .dtype = Dtype::Bf16,
                                               .origin = "grid"});
      }
    }
  }
  return plan;
}

void merge_plans(Plan& into, const Plan& more) {
  merge_cases(into.gemms, more.gemms, same_gemm);
  merge_cases(into.attention, more.attention, same_attention);
}

}  // namespace trainsim::calib
