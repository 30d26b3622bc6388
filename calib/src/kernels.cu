#include "calib/src/kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cfloat>

namespace trainsim::calib {
namespace {

constexpr int kThreads = 256;

__device__ float hash_uniform(std::size_t i, std::uint32_t seed) {
  // splitmix64 (Steele, Lea and Flood 2014) of the index and seed, to a float in [-1, 1).
  unsigned long long z = static_cast<unsigned long long>(i) + 0x9E3779B97F4A7C15ULL * (seed + 1ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) / static_cast<float>(1ULL << 23) - 1.0f;
}

template <class T>
__device__ T convert(float x);
template <>
__device__ float convert<float>(float x) { return x; }
template <>
__device__ __half convert<__half>(float x) { return __float2half(x); }
template <>
__device__ __nv_bfloat16 convert<__nv_bfloat16>(float x) { return __float2bfloat16(x); }
template <>
__device__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(float x) { return __nv_fp8_e4m3(x); }

template <class T>
__global__ void fill_kernel(T* data, std::size_t count, float scale, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       i < count; i += stride) {
    data[i] = convert<T>(scale * hash_uniform(i, seed));
  }
}

int blocks_for(std::size_t count) {
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ b,
                            std::size_t count4) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       i < count4; i += stride) {
    b[i] = a[i];
  }
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b,
                             const float4* __restrict__ c, float s, std::size_t count4) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       i < count4; i += stride) {
    const float4 x = b[i];
    const float4 y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

__global__ void empty() {}

// One block per row: a max pass, a sum-of-exponentials pass and a normalizing pass.
__global__ void softmax_kernel(__nv_bfloat16* scores, std::int64_t cols, float scale,
                               bool causal) {
  __shared__ float partial[kThreads];
  const std::int64_t row = blockIdx.x;
  __nv_bfloat16* x = scores + row * cols;
  const std::int64_t visible = causal ? (row % cols) + 1 : cols;
  float local_max = -FLT_MAX;
  for (std::int64_t c = threadIdx.x; c < visible; c += blockDim.x) {
    local_max = fmaxf(local_max, scale * __bfloat162float(x[c]));
  }
  partial[threadIdx.x] = local_max;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  const float row_max = partial[0];
  __syncthreads();
  float local_sum = 0.0f;
  for (std::int64_t c = threadIdx.x; c < visible; c += blockDim.x) {
    local_sum += __expf(scale * __bfloat162float(x[c]) - row_max);
  }
  partial[threadIdx.x] = local_sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const float inverse = 1.0f / partial[0];
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float p = c < visible ? __expf(scale * __bfloat162float(x[c]) - row_max) * inverse : 0.0f;
    x[c] = __float2bfloat16(p);
  }
}

__device__ unsigned long long global_ns() {
  unsigned long long t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void __launch_bounds__(kHoldThreads, 1)
    hold_kernel(const int* stop, volatile int* started, const float4* __restrict__ src,
                float4* __restrict__ dst, std::size_t count4_per_block, double bytes_per_ns,
                unsigned long long max_ns, unsigned long long* progress) {
  extern __shared__ float4 reserved[];  // held, as a communication kernel's buffers are
  __shared__ int done;
  const unsigned long long begin = global_ns();
  if (threadIdx.x == 0) {
    // One flag per block: no atomics on host memory, which PCIe need not support.
    started[blockIdx.x] = 1;
    __threadfence_system();
    reserved[0] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  constexpr std::size_t kSlice4 = 16384;  // 256 KiB of float4 per pass
  const float4* from = src == nullptr ? nullptr : src + blockIdx.x * count4_per_block;
  float4* to = dst == nullptr ? nullptr : dst + blockIdx.x * count4_per_block;
  std::size_t offset = 0;
  double moved = 0.0;
  for (;;) {
    if (threadIdx.x == 0) done = (__ldcv(stop) != 0 || global_ns() - begin > max_ns) ? 1 : 0;
    __syncthreads();
    if (done != 0) break;
    if (from == nullptr) {
      __nanosleep(2000);
    } else {
      const std::size_t n =
          count4_per_block - offset < kSlice4 ? count4_per_block - offset : kSlice4;
      for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) to[offset + i] = from[offset + i];
      offset = offset + n == count4_per_block ? 0 : offset + n;
      moved += 32.0 * static_cast<double>(n);  // 16 bytes read and 16 written per float4
      if (bytes_per_ns > 0.0) {
        const auto due = begin + static_cast<unsigned long long>(moved / bytes_per_ns);
        while (global_ns() < due) __nanosleep(500);
      }
    }
    __syncthreads();
  }
  if (progress != nullptr && threadIdx.x == 0) {
    progress[2 * blockIdx.x] = static_cast<unsigned long long>(moved);
    progress[2 * blockIdx.x + 1] = global_ns() - begin;
  }
}

}  // namespace

void fill(void* data, Element element, std::size_t count, float scale, std::uint32_t seed,
          cudaStream_t stream) {
  const int blocks = blocks_for(count);
  switch (element) {
    case Element::F32:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(data), count, scale, seed);
      break;
    case Element::F16:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__half*>(data), count, scale, seed);
      break;
    case Element::BF16:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, scale,
                                                   seed);
      break;
    case Element::F8E4M3:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(data), count, scale,
                                                   seed);
      break;
  }
}

void stream_copy(const float* a, float* b, std::size_t count, cudaStream_t stream) {
  const std::size_t count4 = count / 4;
  copy_kernel<<<blocks_for(count4), kThreads, 0, stream>>>(reinterpret_cast<const float4*>(a),
                                                           reinterpret_cast<float4*>(b), count4);
}

void stream_triad(float* a, const float* b, const float* c, float s, std::size_t count,
                  cudaStream_t stream) {
  const std::size_t count4 = count / 4;
  triad_kernel<<<blocks_for(count4), kThreads, 0, stream>>>(
      reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b),
      reinterpret_cast<const float4*>(c), s, count4);
}

void empty_kernel(cudaStream_t stream) { empty<<<1, 1, 0, stream>>>(); }

void softmax_bf16(void* scores, std::int64_t rows, std::int64_t cols, float scale, bool causal,
                  cudaStream_t stream) {
  softmax_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<__nv_bfloat16*>(scores), cols, scale, causal);
}

void hold_sms(int blocks, const int* stop, volatile int* started, const float* src, float* dst,
              std::size_t count_per_block, double bytes_per_second, double max_seconds,
              unsigned long long* progress, cudaStream_t stream) {
  const double per_block_bytes_per_ns =
      bytes_per_second > 0.0 ? bytes_per_second * 1e-9 / static_cast<double>(blocks) : 0.0;
  hold_kernel<<<blocks, kHoldThreads, kHoldSharedBytes, stream>>>(
      stop, started, reinterpret_cast<const float4*>(src), reinterpret_cast<float4*>(dst),
      count_per_block / 4, per_block_bytes_per_ns,
      static_cast<unsigned long long>(max_seconds * 1e9), progress);
}

}  // namespace trainsim::calib
