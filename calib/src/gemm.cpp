// GEMM through cuBLASLt, the library cuBLAS, PyTorch and Transformer Engine call for training
// matrix products. Each case runs in the "TN" layout (A transposed, column-major), the layout
// cuBLASLt requires for fp8 on Hopper (cuBLAS documentation, cublasLtMatmul, FP8 restrictions),
// with fp32 accumulation; the algorithm is cuBLASLt's first heuristic choice with a 64 MiB
// workspace, as PyTorch gives it on Hopper.
#include "calib/src/gemm.hpp"

#include <memory>
#include <string>

#include "calib/src/check.hpp"
#include "calib/src/kernels.hpp"

namespace trainsim::calib {
namespace {

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

}  // namespace

std::string describe(const GemmCase& c) {
  return "gemm " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) +
         " " + parallel::to_string(c.dtype);
}

LtSession::LtSession() {
  CALIB_CHECK(cublasLtCreate(&handle_));
  const cudaError_t allocated = cudaMalloc(&workspace_, kGemmWorkspaceBytes);
  if (allocated != cudaSuccess) {
    cublasLtDestroy(handle_);
    CALIB_CHECK(allocated);
  }
}

LtSession::~LtSession() {
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

struct LtGemm::Descriptors {
  cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;
  void* a = nullptr;
  void* b = nullptr;
  void* d = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr;
  cublasLtMatrixLayout_t b_layout = nullptr;
  cublasLtMatrixLayout_t d_layout = nullptr;
  cublasLtMatmulAlgo_t algo{};

  ~Descriptors() {
    if (d_layout != nullptr) cublasLtMatrixLayoutDestroy(d_layout);
    if (b_layout != nullptr) cublasLtMatrixLayoutDestroy(b_layout);
    if (a_layout != nullptr) cublasLtMatrixLayoutDestroy(a_layout);
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
};

LtGemm::LtGemm(Bench& bench, cublasLtHandle_t lt, void* workspace, const GemmCase& c,
               int sm_count_target)
    : d_(std::make_unique<Descriptors>()) {
  const Types t = types_of(c.dtype);
  const auto m = static_cast<std::uint64_t>(c.m);
  const auto n = static_cast<std::uint64_t>(c.n);
  const auto k = static_cast<std::uint64_t>(c.k);
  d_->lt = lt;
  d_->workspace = workspace;
  d_->a = bench.allocate(m * k * t.bytes_ab);
  d_->b = bench.allocate(k * n * t.bytes_ab);
  d_->d = bench.allocate(m * n * t.bytes_cd);
  fill(d_->a, t.element_ab, m * k, 1.0f, 1, bench.stream());
  fill(d_->b, t.element_ab, k * n, 1.0f, 2, bench.stream());

  CALIB_CHECK(cublasLtMatmulDescCreate(&d_->op, t.compute, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T;
  const cublasOperation_t plain = CUBLAS_OP_N;
  CALIB_CHECK(cublasLtMatmulDescSetAttribute(d_->op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                             sizeof(transpose)));
  CALIB_CHECK(
      cublasLtMatmulDescSetAttribute(d_->op, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof(plain)));
  if (sm_count_target > 0) {
    const std::int32_t target = sm_count_target;
    CALIB_CHECK(cublasLtMatmulDescSetAttribute(d_->op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET,
                                               &target, sizeof(target)));
  }
  // A is stored k x m (transposed), B k x n, D m x n, all column-major.
  CALIB_CHECK(cublasLtMatrixLayoutCreate(&d_->a_layout, t.ab, k, m, static_cast<std::int64_t>(k)));
  CALIB_CHECK(cublasLtMatrixLayoutCreate(&d_->b_layout, t.ab, k, n, static_cast<std::int64_t>(k)));
  CALIB_CHECK(cublasLtMatrixLayoutCreate(&d_->d_layout, t.cd, m, n, static_cast<std::int64_t>(m)));

  cublasLtMatmulPreference_t pref_raw = nullptr;
  CALIB_CHECK(cublasLtMatmulPreferenceCreate(&pref_raw));
  auto pref = own(pref_raw, cublasLtMatmulPreferenceDestroy);
  const std::size_t workspace_bytes = kGemmWorkspaceBytes;
  CALIB_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(),
                                                   CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                   &workspace_bytes, sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(lt, d_->op, d_->a_layout, d_->b_layout, d_->d_layout,
                                     d_->d_layout, pref.get(), 1, &heuristic, &found);
  available_ = status == CUBLAS_STATUS_SUCCESS && found > 0;
  if (available_) d_->algo = heuristic.algo;
}

LtGemm::~LtGemm() = default;

void LtGemm::operator()(cudaStream_t stream) const {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  CALIB_CHECK(cublasLtMatmul(d_->lt, d_->op, &alpha, d_->a, d_->a_layout, d_->b, d_->b_layout,
                             &beta, d_->d, d_->d_layout, d_->d, d_->d_layout, &d_->algo,
                             d_->workspace, kGemmWorkspaceBytes, stream));
}

namespace {

void run_one(Bench& bench, cublasLtHandle_t lt, void* workspace, const GemmCase& c) {
  const LtGemm gemm(bench, lt, workspace, c);
  if (!gemm.available()) {
    bench.doc().note(describe(c) + ": cuBLASLt has no algorithm for it on this device");
    return;
  }
  const Summary s = summarize(bench.time_calls([&] { gemm(bench.stream()); }));
  if (bench.accept(describe(c), s)) bench.doc().add_gemm(c, s, bench.now());
}

}  // namespace

void run_gemm(Bench& bench, const std::vector<GemmCase>& cases) {
  const LtSession lt;
  for (const GemmCase& c : cases) {
    try {
      run_one(bench, lt.handle(), lt.workspace(), c);
    } catch (const CudaError& e) {
      bench.doc().note(describe(c) + ": " + e.what());
      std::fprintf(stderr, "trainsim-calib: %s: %s\n", describe(c).c_str(), e.what());
    }
    bench.release_all();
  }
}

}  // namespace trainsim::calib
