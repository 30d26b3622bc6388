// Unfused attention, for comparison with the fused kernels the simulator models: S = Q K^T and
// O = P V as strided batched cuBLAS GEMMs around a softmax kernel, materializing the
// [seq x seq] scores per head as attention did before FlashAttention (Dao et al. 2022, §2.2).
// It computes the whole score matrix even when causal. Its records go under
// "_unfused_attention", which the calibration does not fit: the simulator prices fused
// attention (calib/torch/attention.py measures that one through PyTorch's cuDNN and
// FlashAttention back ends).
#include <cmath>
#include <string>

#include "calib/src/bench.hpp"
#include "calib/src/check.hpp"
#include "calib/src/kernels.hpp"

namespace trainsim::calib {
namespace {

// The score buffer is [batch x heads x seq x seq] bf16; larger cases are skipped (the
// grid's largest, 16k tokens of 32 heads of 64, needs 16 GiB).
constexpr double kMaxScoreBytes = 24.0 * (1ULL << 30);

std::string describe(const AttentionCase& c) {
  return "unfused attention b" + std::to_string(c.batch) + " h" + std::to_string(c.heads) + " s" +
         std::to_string(c.seq_len) + " d" + std::to_string(c.head_dim) +
         (c.causal ? " causal" : "");
}

void run_one(Bench& bench, cublasHandle_t blas, const AttentionCase& c) {
  const long long bh = c.batch * c.heads;
  const long long s = c.seq_len;
  const long long d = c.head_dim;
  const double score_bytes = 2.0 * static_cast<double>(bh) * static_cast<double>(s * s);
  if (score_bytes > kMaxScoreBytes) {
    bench.doc().note(describe(c) + ": skipped, its score matrix exceeds 24 GiB");
    return;
  }
  const auto elements = static_cast<std::size_t>(bh * s * d);
  void* q = bench.allocate(2 * elements);
  void* k = bench.allocate(2 * elements);
  void* v = bench.allocate(2 * elements);
  void* o = bench.allocate(2 * elements);
  void* scores = bench.allocate(static_cast<std::size_t>(score_bytes));
  fill(q, Element::BF16, elements, 1.0f, 3, bench.stream());
  fill(k, Element::BF16, elements, 1.0f, 4, bench.stream());
  fill(v, Element::BF16, elements, 1.0f, 5, bench.stream());
  const float one = 1.0f;
  const float zero = 0.0f;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  // Row-major Q, K, V [s x d] per head are column-major [d x s]. Row-major S = Q K^T is the
  // column-major product K^T' Q' with K' = K^T: (op T on a d x s matrix) x (d x s).
  // Row-major O = P V is column-major V' P' with V' [d x s] and P' [s x s].
  const auto call = [&] {
    CALIB_CHECK(cublasGemmStridedBatchedEx(
        blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s), static_cast<int>(s),
        static_cast<int>(d), &one, k, CUDA_R_16BF, static_cast<int>(d), s * d, q, CUDA_R_16BF,
        static_cast<int>(d), s * d, &zero, scores, CUDA_R_16BF, static_cast<int>(s), s * s,
        static_cast<int>(bh), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    softmax_bf16(scores, bh * s, s, scale, c.causal, bench.stream());
    CALIB_CHECK(cublasGemmStridedBatchedEx(
        blas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(d), static_cast<int>(s),
        static_cast<int>(s), &one, v, CUDA_R_16BF, static_cast<int>(d), s * d, scores, CUDA_R_16BF,
        static_cast<int>(s), s * s, &zero, o, CUDA_R_16BF, static_cast<int>(d), s * d,
        static_cast<int>(bh), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  const Summary sum = summarize(bench.time_calls(call));
  if (bench.accept(describe(c), sum)) bench.doc().add_unfused_attention(c, sum, bench.now());
}

}  // namespace

void run_attention_unfused(Bench& bench, const std::vector<AttentionCase>& cases) {
  cublasHandle_t blas = nullptr;
  CALIB_CHECK(cublasCreate(&blas));
  CALIB_CHECK(cublasSetStream(blas, bench.stream()));
  for (const AttentionCase& c : cases) {
    try {
      run_one(bench, blas, c);
    } catch (const CudaError& e) {
      bench.doc().note(describe(c) + ": " + e.what());
      std::fprintf(stderr, "trainsim-calib: %s: %s\n", describe(c).c_str(), e.what());
    }
    bench.release_all();
  }
  cublasDestroy(blas);
}

}  // namespace trainsim::calib
