// The suite's own kernels (kernels.cu), callable from host code compiled by the C++ compiler:
// buffer fill, the STREAM copy and triad (McCalpin 1995), an empty kernel for launch overhead,
// a spin kernel that keeps the GPU busy without memory traffic, and the row softmax of unfused
// attention.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace trainsim::calib {

enum class Element { F32, F16, BF16, F8E4M3 };

// Fills `count` elements with values uniform in [-scale, scale] from a hash of the index and
// `seed` (random data: zeros run matrix units faster and cooler than training data does).
void fill(void* data, Element element, std::size_t count, float scale, std::uint32_t seed,
          cudaStream_t stream);

// b[i] = a[i] over `count` floats (STREAM copy: 8 bytes moved per element).
void stream_copy(const float* a, float* b, std::size_t count, cudaStream_t stream);
// a[i] = b[i] + s * c[i] (STREAM triad: 12 bytes moved per element).
void stream_triad(float* a, const float* b, const float* c, float s, std::size_t count,
                  cudaStream_t stream);

// One launch of an empty kernel (one block of one thread).
void empty_kernel(cudaStream_t stream);

// Softmax over the last dimension of `rows` rows of `cols` bf16 scores, in place, scaled by
// `scale` first; with `causal`, row r (within each block of `cols` rows) sees columns <= r only
// and the rest become 0. Accumulates in fp32.
void softmax_bf16(void* scores, std::int64_t rows, std::int64_t cols, float scale, bool causal,
                  cudaStream_t stream);

}  // namespace trainsim::calib
