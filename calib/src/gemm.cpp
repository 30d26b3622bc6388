// GEMM through cuBLASLt, the library cuBLAS, PyTorch and Transformer Engine call for training
// matrix products. Each case runs in the "TN" layout (A transposed, column-major), the layout
// cuBLASLt requires for fp8 on Hopper (cuBLAS documentation, cublasLtMatmul, FP8 restrictions),
// with fp32 accumulation; the algorithm is cuBLASLt's first heuristic choice with a 64 MiB
// workspace, as PyTorch gives it on Hopper.
#include <memory>
#include <string>

#include <cublasLt.h>

#include "calib/src/bench.hpp"
#include "calib/src/check.hpp"
#include "calib/src/kernels.hpp"

namespace trainsim::calib {
namespace {

constexpr std::size_t kWorkspaceBytes = 64ULL << 20;

struct Types {
  cudaDataType_t ab;
  cudaDataType_t cd;
  cublasComputeType_t compute;
  Element element_ab;
  std::size_t bytes_ab;
  std::size_t bytes_cd;
};

Types types_of(hardware::Dtype d) {
  switch (d) {
    case hardware::Dtype::Fp32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, Element::F32, 4, 4};
    case hardware::Dtype::Tf32:
      return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, Element::F32, 4, 4};
    case hardware::Dtype::Fp16:
      return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, Element::F16, 2, 2};
    case hardware::Dtype::Bf16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, Element::BF16, 2, 2};
    case hardware::Dtype::Fp8:
      // e4m3 inputs with bf16 output, Transformer Engine's forward recipe.
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, Element::F8E4M3, 1, 2};
  }
  return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, Element::BF16, 2, 2};
}

template <class T, class D>
std::unique_ptr<T, D> own(T* p, D d) {
  return std::unique_ptr<T, D>(p, d);
}

std::string describe(const GemmCase& c) {
  return "gemm " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) +
         " " + parallel::to_string(c.dtype);
}

void run_one(Bench& bench, cublasLtHandle_t lt, void* workspace, const GemmCase& c) {
  const Types t = types_of(c.dtype);
  const auto m = static_cast<std::uint64_t>(c.m);
  const auto n = static_cast<std::uint64_t>(c.n);
  const auto k = static_cast<std::uint64_t>(c.k);
  void* a = bench.allocate(m * k * t.bytes_ab);
  void* b = bench.allocate(k * n * t.bytes_ab);
  void* d = bench.allocate(m * n * t.bytes_cd);
  fill(a, t.element_ab, m * k, 1.0f, 1, bench.stream());
  fill(b, t.element_ab, k * n, 1.0f, 2, bench.stream());

  cublasLtMatmulDesc_t op_raw = nullptr;
  CALIB_CHECK(cublasLtMatmulDescCreate(&op_raw, t.compute, CUDA_R_32F));
  auto op = own(op_raw, cublasLtMatmulDescDestroy);
  const cublasOperation_t transpose = CUBLAS_OP_T;
  const cublasOperation_t plain = CUBLAS_OP_N;
  CALIB_CHECK(cublasLtMatmulDescSetAttribute(op.get(), CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                             sizeof(transpose)));
  CALIB_CHECK(
      cublasLtMatmulDescSetAttribute(op.get(), CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof(plain)));
  // A is stored k x m (transposed), B k x n, D m x n, all column-major.
  cublasLtMatrixLayout_t a_raw = nullptr;
  cublasLtMatrixLayout_t b_raw = nullptr;
  cublasLtMatrixLayout_t d_raw = nullptr;
  CALIB_CHECK(cublasLtMatrixLayoutCreate(&a_raw, t.ab, k, m, static_cast<std::int64_t>(k)));
  auto a_layout = own(a_raw, cublasLtMatrixLayoutDestroy);
  CALIB_CHECK(cublasLtMatrixLayoutCreate(&b_raw, t.ab, k, n, static_cast<std::int64_t>(k)));
  auto b_layout = own(b_raw, cublasLtMatrixLayoutDestroy);
  CALIB_CHECK(cublasLtMatrixLayoutCreate(&d_raw, t.cd, m, n, static_cast<std::int64_t>(m)));
  auto d_layout = own(d_raw, cublasLtMatrixLayoutDestroy);

  cublasLtMatmulPreference_t pref_raw = nullptr;
  CALIB_CHECK(cublasLtMatmulPreferenceCreate(&pref_raw));
  auto pref = own(pref_raw, cublasLtMatmulPreferenceDestroy);
  const std::size_t workspace_bytes = kWorkspaceBytes;
  CALIB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(),
                                                   CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                   &workspace_bytes, sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(lt, op.get(), a_layout.get(), b_layout.get(), d_layout.get(),
                                     d_layout.get(), pref.get(), 1, &heuristic, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    bench.doc().note(describe(c) + ": cuBLASLt has no algorithm for it on this device");
    return;
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const auto call = [&] {
    CALIB_CHECK(cublasLtMatmul(lt, op.get(), &alpha, a, a_layout.get(), b, b_layout.get(), &beta, d,
                               d_layout.get(), d, d_layout.get(), &heuristic.algo, workspace,
                               kWorkspaceBytes, bench.stream()));
  };
  const Summary s = summarize(bench.time_calls(call));
  if (bench.accept(describe(c), s)) bench.doc().add_gemm(c, s, bench.now());
}

}  // namespace

void run_gemm(Bench& bench, const std::vector<GemmCase>& cases) {
  cublasLtHandle_t lt_raw = nullptr;
  CALIB_CHECK(cublasLtCreate(&lt_raw));
  auto lt = own(lt_raw, cublasLtDestroy);
  void* workspace = nullptr;
  CALIB_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
  auto workspace_owner = own(workspace, cudaFree);
  for (const GemmCase& c : cases) {
    try {
      run_one(bench, lt.get(), workspace, c);
    } catch (const CudaError& e) {
      bench.doc().note(describe(c) + ": " + e.what());
      std::fprintf(stderr, "trainsim-calib: %s: %s\n", describe(c).c_str(), e.what());
    }
    bench.release_all();
  }
}

}  // namespace trainsim::calib
