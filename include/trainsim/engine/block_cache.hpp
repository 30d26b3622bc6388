// Reuse of the large arrays a simulation allocates per op (the graph's tables, the timeline, the
// engine's scratch). A sweep builds and drops thousands of graphs of up to millions of ops, and
// glibc gives such blocks back to the kernel as soon as they are freed: blocks above its mmap
// threshold (at most 32 MiB) are unmapped, and a thread's arena deletes any heap that empties.
// The next graph then faults every page in again. In the 10,560-plan fixed-batch sweep of
// bench/simulate_bench.cpp that was 0.77 million minor page faults and 6.6 s of system time
// beside 26 s of user time on 2 cores. BlockCacheAllocator keeps released blocks of at least
// kMinCachedBlock bytes in a per-thread cache and hands them out again.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace trainsim::engine {

namespace block_cache {

// Requests below this go straight to operator new and delete.
inline constexpr std::size_t kMinCachedBlock = std::size_t{1} << 20;
// A thread's live and cached blocks together never exceed the most bytes of blocks it has held
// live at once (so the cache does not raise its peak), and all threads' caches together never
// hold more than this, whatever the thread count; the oldest cached blocks are freed first.
inline constexpr std::size_t kMaxCachedBytes = std::size_t{512} << 20;

// A block of at least `bytes` bytes (>= kMinCachedBlock), aligned for any scalar type: the
// smallest cached one that is large enough, else a new one rounded up to a size class (an
// eighth of a power of two), so that arrays of slightly different lengths share blocks.
// Throws std::bad_alloc.
[[nodiscard]] void* take(std::size_t bytes);

// Releases a block from take() into the calling thread's cache (any thread may release it).
void give(void* block) noexcept;

// Blocks and bytes in the calling thread's cache (for tests).
[[nodiscard]] std::size_t cached_blocks() noexcept;
[[nodiscard]] std::size_t cached_bytes() noexcept;

// Frees every block in the calling thread's cache.
void clear() noexcept;

}  // namespace block_cache

// A std::allocator that routes large requests through block_cache. Stateless: all instances are
// equal, so containers may swap and move storage freely.
template <class T>
class BlockCacheAllocator {
 public:
  using value_type = T;
  static_assert(alignof(T) <= alignof(std::max_align_t),
                "block_cache blocks are aligned for scalar types only");

  BlockCacheAllocator() noexcept = default;
  template <class U>
  BlockCacheAllocator(const BlockCacheAllocator<U>& /*other*/) noexcept {}  // NOLINT: rebinding

  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < block_cache::kMinCachedBlock) return static_cast<T*>(::operator new(bytes));
    return static_cast<T*>(block_cache::take(bytes));
  }

  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < block_cache::kMinCachedBlock) {
      ::operator delete(p);
      return;
    }
    block_cache::give(p);
  }

  template <class U>
  bool operator==(const BlockCacheAllocator<U>& /*other*/) const noexcept {
    return true;
  }
};

// A vector whose storage, once large, is reused across simulations on the same thread.
template <class T>
using CachedVector = std::vector<T, BlockCacheAllocator<T>>;

}  // namespace trainsim::engine
