#include "trainsim/engine/block_cache.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <deque>
#include <new>

// Under AddressSanitizer blocks come from operator new, whose bounds it checks.
#if defined(__SANITIZE_ADDRESS__)
#define TRAINSIM_BLOCKS_FROM_NEW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRAINSIM_BLOCKS_FROM_NEW 1
#endif
#endif
#if !defined(TRAINSIM_BLOCKS_FROM_NEW) && defined(__linux__)
#define TRAINSIM_BLOCKS_MAPPED 1
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace trainsim::engine::block_cache {
namespace {

// Each block starts with a header holding its usable size; the caller's storage follows it,
// aligned as operator new aligns.
constexpr std::size_t kHeader = alignof(std::max_align_t);

struct Block {
  std::size_t bytes = 0;  // usable size
  void* storage = nullptr;
};

std::size_t size_class(std::size_t bytes) {
  // Round up to a multiple of an eighth of the largest power of two not above `bytes`.
  const std::size_t step = std::max<std::size_t>(std::bit_floor(bytes) / 8, 1);
  return (bytes + step - 1) / step * step;
}

void* storage_of(void* block) { return static_cast<char*>(block) - kHeader; }

std::size_t usable(void* block) { return *static_cast<const std::size_t*>(storage_of(block)); }

// Bytes cached by all threads together, held within kMaxCachedBytes.
std::atomic<std::size_t> process_cached{0};

// Set when the calling thread's cache has been destroyed (thread exit): a vector destroyed
// later, such as a static one, frees its block directly. Trivially destructible, so it can
// still be read then.
thread_local bool cache_gone = false;

#ifdef TRAINSIM_BLOCKS_MAPPED
// Transparent huge pages: where the kernel grants them on request ("madvise" or "always" in
// /sys/kernel/mm/transparent_hugepage/enabled), a block faults in 2 MiB at a time instead of
// 4 KiB; where it does not, the advice is ignored.
constexpr std::size_t kHugePage = std::size_t{2} << 20;

void* map_storage(std::size_t total) {
  // Map one huge page more and trim, so that the block starts on a huge-page boundary.
  const std::size_t mapped = total + kHugePage;
  void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto begin = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (begin + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > begin) (void)munmap(raw, aligned - begin);
  const std::uintptr_t end = begin + mapped;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t used_end = aligned + (total + page - 1) / page * page;
  if (end > used_end) (void)munmap(reinterpret_cast<void*>(used_end), end - used_end);
  void* storage = reinterpret_cast<void*>(aligned);
  (void)madvise(storage, total, MADV_HUGEPAGE);
  return storage;
}
#endif

void* new_block(std::size_t bytes) {
  // Room for the size class, the header and the huge-page alignment below.
  if (bytes > (std::size_t{1} << 60)) throw std::bad_alloc();
  const std::size_t size = size_class(bytes);
#ifdef TRAINSIM_BLOCKS_MAPPED
  void* storage = map_storage(size + kHeader);
#else
  void* storage = ::operator new(size + kHeader);
#endif
  *static_cast<std::size_t*>(storage) = size;
  return static_cast<char*>(storage) + kHeader;
}

void free_storage(void* storage) noexcept {
  const std::size_t size = *static_cast<const std::size_t*>(storage);
#ifdef TRAINSIM_BLOCKS_MAPPED
  (void)munmap(storage, size + kHeader);
#else
  (void)size;
  ::operator delete(storage);
#endif
}

// The calling thread's released blocks, oldest first.
class Cache {
 public:
  Cache() = default;
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;
  ~Cache() {
    clear();
    cache_gone = true;
  }

  void* take(std::size_t bytes) {
    auto best = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (it->bytes >= bytes && (best == blocks_.end() || it->bytes < best->bytes)) {
        best = it;
      }
    }
    void* block = nullptr;
    if (best != blocks_.end()) {
      block = static_cast<char*>(best->storage) + kHeader;
      total_ -= best->bytes;
      process_cached -= best->bytes;
      blocks_.erase(best);
    } else {
      // No cached block fits: free the oldest ones until the new block, the live ones and the
      // cache together stay within the thread's peak (or the new live total, if higher).
      const std::size_t size = size_class(bytes);
      while (!blocks_.empty() && live_ + total_ + size > std::max(peak_, live_ + size)) {
        evict_oldest();
      }
      block = new_block(bytes);
    }
    live_ += usable(block);
    peak_ = std::max(peak_, live_);
    return block;
  }

  void give(void* block) noexcept {
    const std::size_t bytes = usable(block);
    // A block taken on another thread was not counted here.
    live_ -= std::min(live_, bytes);
    // The live blocks and the cache together stay within the most the thread held live at
    // once: the cache never raises the thread's peak.
    if (bytes > peak_ - std::min(peak_, live_)) {
      free_storage(storage_of(block));
      return;
    }
    while (!blocks_.empty() && live_ + total_ + bytes > peak_) evict_oldest();
    // Within the process-wide bound too, or the block is freed.
    if (process_cached.fetch_add(bytes) + bytes > kMaxCachedBytes) {
      process_cached -= bytes;
      free_storage(storage_of(block));
      return;
    }
    try {
      blocks_.push_back(Block{bytes, storage_of(block)});
      total_ += bytes;
    } catch (...) {  // no memory for the bookkeeping: free the block instead
      process_cached -= bytes;
      free_storage(storage_of(block));
    }
  }

  [[nodiscard]] std::size_t blocks() const { return blocks_.size(); }
  [[nodiscard]] std::size_t bytes() const { return total_; }

  void clear() noexcept {
    for (const Block& b : blocks_) free_storage(b.storage);
    blocks_.clear();
    process_cached -= total_;
    total_ = 0;
  }

 private:
  void evict_oldest() noexcept {
    free_storage(blocks_.front().storage);
    total_ -= blocks_.front().bytes;
    process_cached -= blocks_.front().bytes;
    blocks_.pop_front();
  }

  std::deque<Block> blocks_;
  std::size_t total_ = 0;  // bytes cached
  std::size_t live_ = 0;   // bytes taken on this thread and not yet given back
  std::size_t peak_ = 0;   // the most live_ has been
};

Cache& cache() {
  thread_local Cache c;
  return c;
}

}  // namespace

void* take(std::size_t bytes) { return cache_gone ? new_block(bytes) : cache().take(bytes); }

void give(void* block) noexcept {
  if (cache_gone) {
    free_storage(storage_of(block));
    return;
  }
  cache().give(block);
}

std::size_t cached_blocks() noexcept { return cache_gone ? 0 : cache().blocks(); }
std::size_t cached_bytes() noexcept { return cache_gone ? 0 : cache().bytes(); }

void clear() noexcept {
  if (!cache_gone) cache().clear();
}

}  // namespace trainsim::engine::block_cache
