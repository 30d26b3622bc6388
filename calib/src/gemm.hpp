// One cuBLASLt matrix product prepared for repeated calls: the layout, precision, workspace and
// algorithm choice of gemm.cpp's benchmark, shared with the overlap benchmark (overlap.cpp).
#pragma once

#include <memory>
#include <string>

#include <cublasLt.h>

#include "calib/src/bench.hpp"

namespace trainsim::calib {

// The suite's cuBLASLt workspace, 64 MiB as PyTorch gives it on Hopper.
inline constexpr std::size_t kGemmWorkspaceBytes = 64ULL << 20;

// A cuBLASLt handle and its workspace, released together.
class LtSession {
 public:
  LtSession();
  ~LtSession();
  LtSession(const LtSession&) = delete;
  LtSession& operator=(const LtSession&) = delete;

  [[nodiscard]] cublasLtHandle_t handle() const { return handle_; }
  [[nodiscard]] void* workspace() const { return workspace_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
};

class LtGemm {
 public:
  // Allocates A, B and D through `bench` (freed by bench.release_all()) and fills A and B with
  // random data. `sm_count_target` > 0 sets CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: cuBLASLt then
  // picks and sizes its kernel for that many SMs, as Transformer Engine asks when a
  // communication kernel holds the rest (its sm_margin). available() is false when cuBLASLt has
  // no algorithm for the case.
  LtGemm(Bench& bench, cublasLtHandle_t lt, void* workspace, const GemmCase& c,
         int sm_count_target = 0);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  [[nodiscard]] bool available() const { return available_; }
  // Enqueues one call on `stream`.
  void operator()(cudaStream_t stream) const;

 private:
  struct Descriptors;
  std::unique_ptr<Descriptors> d_;
  bool available_ = false;
};

// "gemm 8192x4096x4096 bf16".
[[nodiscard]] std::string describe(const GemmCase& c);

}  // namespace trainsim::calib
