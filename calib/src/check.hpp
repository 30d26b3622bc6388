// Error checks for the CUDA, cuBLAS, cuDNN and NCCL calls of the suite: a failed call throws
// CudaError naming the call, its file and line, and the library's own message, so that one
// failed benchmark is reported and the others still run.
#pragma once

#include <stdexcept>
#include <string>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace trainsim::calib {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const char* call, const char* file, int line,
                              const std::string& message) {
  throw CudaError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                  message);
}

inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) fail(call, file, line, cudaGetErrorString(e));
}

inline void check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) fail(call, file, line, cublasGetStatusString(s));
}

}  // namespace trainsim::calib

#define CALIB_CHECK(call) ::trainsim::calib::check((call), #call, __FILE__, __LINE__)
