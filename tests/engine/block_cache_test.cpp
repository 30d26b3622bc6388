// block_cache (engine/block_cache.hpp): large blocks released on a thread are handed out again
// there, within the thread's own peak; small requests never enter the cache; vectors using it
// behave as vectors.
#include "trainsim/engine/block_cache.hpp"

#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

using namespace trainsim::engine;

TEST_CASE("block_cache: a released block is handed out again for a request of its size class",
          "[engine][block_cache]") {
  block_cache::clear();
  const std::size_t bytes = 3 * block_cache::kMinCachedBlock + 123;
  void* a = block_cache::take(bytes);
  REQUIRE(reinterpret_cast<std::uintptr_t>(a) % alignof(std::max_align_t) == 0);
  // The whole request is writable.
  static_cast<unsigned char*>(a)[0] = 1;
  static_cast<unsigned char*>(a)[bytes - 1] = 2;
  CHECK(block_cache::cached_blocks() == 0);
  block_cache::give(a);
  CHECK(block_cache::cached_blocks() == 1);
  // 3 MiB + 123 rounds up to the size class 3.25 MiB (steps of 2 MiB / 8 = 256 KiB); a request
  // 1 KiB smaller fits the same block, so it comes back.
  CHECK(block_cache::cached_bytes() == 3 * block_cache::kMinCachedBlock + (1U << 18));
  void* b = block_cache::take(bytes - 1024);
  CHECK(b == a);
  CHECK(block_cache::cached_blocks() == 0);
  // A request larger than every cached block gets a new block, and the cached one is freed
  // first: the thread never held more than 3.25 MiB before, and now holds 8 MiB live.
  block_cache::give(b);
  void* c = block_cache::take(8 * block_cache::kMinCachedBlock);
  CHECK(block_cache::cached_blocks() == 0);
  block_cache::give(c);
  CHECK(block_cache::cached_blocks() == 1);
  block_cache::clear();
  CHECK(block_cache::cached_blocks() == 0);
  CHECK(block_cache::cached_bytes() == 0);
}

TEST_CASE("block_cache: live and cached blocks together stay within the thread's peak",
          "[engine][block_cache]") {
  block_cache::clear();
  // Peak here: one 16 MiB block live. Released, it is cached.
  void* big = block_cache::take(16 * block_cache::kMinCachedBlock);
  block_cache::give(big);
  const std::size_t peak = block_cache::cached_bytes();
  CHECK(peak >= 16 * block_cache::kMinCachedBlock);
  // Two 12 MiB blocks: the first reuses the cached 16 MiB block (best fit), the second is new;
  // live bytes reach 16 + 12 MiB, so both fit the cache once released.
  void* x = block_cache::take(12 * block_cache::kMinCachedBlock);
  void* y = block_cache::take(12 * block_cache::kMinCachedBlock);
  CHECK(x == big);
  block_cache::give(x);
  block_cache::give(y);
  CHECK(block_cache::cached_blocks() == 2);
  // The thread's peak is now 16 + 12 = 28 MiB live. Blocks of 20 to 27 MiB (size classes 20 to
  // 28 MiB), each released before the next is taken: no two fit within 28 MiB, so each release
  // frees the older ones, and the cache ends with the last block alone.
  for (std::size_t mib = 20; mib < 28; ++mib) {
    block_cache::give(block_cache::take(mib * block_cache::kMinCachedBlock));
    CHECK(block_cache::cached_bytes() <= 28 * block_cache::kMinCachedBlock);
  }
  CHECK(block_cache::cached_blocks() == 1);
  CHECK(block_cache::cached_bytes() == 28 * block_cache::kMinCachedBlock);
  block_cache::clear();
}

TEST_CASE("block_cache: small requests bypass the cache", "[engine][block_cache]") {
  block_cache::clear();
  {
    CachedVector<std::int32_t> v(1000, 7);
    CHECK(v[999] == 7);
  }
  CHECK(block_cache::cached_blocks() == 0);
}

TEST_CASE("block_cache: vectors keep their values when storage is reused",
          "[engine][block_cache]") {
  block_cache::clear();
  constexpr std::size_t kCount = 1 << 20;  // 4 MiB of int32
  const std::int32_t* first_data = nullptr;
  {
    CachedVector<std::int32_t> v(kCount, 5);
    first_data = v.data();
  }
  CHECK(block_cache::cached_blocks() == 1);
  CachedVector<std::int32_t> w(kCount, 9);
  // The same storage, value-initialised anew.
  CHECK(w.data() == first_data);
  CHECK(w.front() == 9);
  CHECK(w.back() == 9);
  // Growth past the block moves the values into a new block and releases the old one.
  w.push_back(11);
  CHECK(w.size() == kCount + 1);
  CHECK(w[kCount - 1] == 9);
  CHECK(w.back() == 11);
  CHECK(block_cache::cached_blocks() == 1);
  CachedVector<std::int32_t> moved = std::move(w);
  CHECK(moved.back() == 11);
  block_cache::clear();
}

TEST_CASE("block_cache: a block may be released on another thread", "[engine][block_cache]") {
  block_cache::clear();
  void* p = block_cache::take(2 * block_cache::kMinCachedBlock);
  std::size_t cached_there = 0;
  std::thread other([&] {
    // That thread never held a block: its cache admits nothing, so the block is freed.
    block_cache::give(p);
    cached_there = block_cache::cached_blocks();
  });
  other.join();
  CHECK(cached_there == 0);
  CHECK(block_cache::cached_blocks() == 0);
}

TEST_CASE("block_cache: all caches together stay within kMaxCachedBytes", "[engine][block_cache]") {
  block_cache::clear();
  // Six blocks of 100 MiB live at once (only their headers are written, so this costs address
  // space, not memory). Each rounds up to the size class 104 MiB (100 MiB lies between 64 and
  // 128 MiB: steps of 8 MiB). The thread's peak admits all six back, but the process-wide bound
  // of 512 MiB admits four (416 MiB); the fifth would make 520 MiB, so it and the sixth are
  // freed.
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  static_assert(block_cache::kMaxCachedBytes == 512 * kMiB);
  std::vector<void*> blocks;
  for (int i = 0; i < 6; ++i) blocks.push_back(block_cache::take(100 * kMiB));
  for (void* b : blocks) block_cache::give(b);
  CHECK(block_cache::cached_blocks() == 4);
  CHECK(block_cache::cached_bytes() == 4 * 104 * kMiB);
  block_cache::clear();
  CHECK(block_cache::cached_bytes() == 0);
}
