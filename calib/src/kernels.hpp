// The suite's own kernels (kernels.cu), callable from host code compiled by the C++ compiler:
// buffer fill, the STREAM copy and triad (McCalpin 1995), an empty kernel for launch overhead,
// a spin kernel that keeps the GPU busy without memory traffic, the row softmax of unfused
// attention, and a kernel that holds SMs as a communication kernel does.
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

// Threads per block of hold_sms, NCCL's largest kernel block (NCCL_MAX_NTHREADS, 640).
inline constexpr int kHoldThreads = 640;
// Dynamic shared memory per block of hold_sms (within the 48 KiB a launch gets unasked).
inline constexpr std::size_t kHoldSharedBytes = 40 * 1024;

// What a communication kernel looks like to the kernels beside it: `blocks` blocks of
// kHoldThreads threads with kHoldSharedBytes of shared memory each, one per SM (NCCL runs one
// block per channel), resident until `*stop` (device memory, read past the L1 cache) becomes
// non-zero or `max_seconds` pass. Block i sets `started[i]` (host-mapped) to 1 once it runs. With
// `src` and `dst` (each `blocks` x `count_per_block` floats) every block copies its share round and
// round in 256 KiB slices, paced to `bytes_per_second` in all (bytes read plus written; 0: as fast
// as it can), as a collective moves data through HBM; with null buffers the blocks only wait.
// When they stop, block i writes to `progress` (device memory, 2 x `blocks` values; may be null)
// the bytes it moved, [2i], and the nanoseconds it ran, [2i + 1]: a paced block that fell behind
// catches up unpaced, so a rate below the pace is what it could not do.
void hold_sms(int blocks, const int* stop, volatile int* started, const float* src, float* dst,
              std::size_t count_per_block, double bytes_per_second, double max_seconds,
              unsigned long long* progress, cudaStream_t stream);

}  // namespace trainsim::calib
