#include "kodo/source/pages.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "kodo/source/page_pool.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace trove::kodo {
namespace {

constexpr std::size_t kMinBlock = std::size_t{64} << 10;

#if defined(__linux__)
constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
constexpr std::size_t kPoolBytes = std::size_t{1} << 30;
constexpr std::size_t kMaxPoolBytes = std::size_t{4} << 30;

struct Pool {
  std::mutex mu;
  std::vector<std::pair<void*, std::size_t>> blocks;  // base, size
  std::size_t bytes = 0;                              // pooled
  std::size_t live = 0;                               // handed out and not yet freed
  std::size_t peak = 0;                               // the most bytes live at once
};

// How many bytes the pool may hold: what the process has had live at once (it will likely need
// that much again: a checker run that keeps two modules and their token arrays alive would
// otherwise unmap part of them and fault them in anew every run), at least 1 GiB, at most 4 GiB.
std::size_t PoolLimit(const Pool& pool) {
  return std::min(std::max(pool.peak, kPoolBytes), kMaxPoolBytes);
}

Pool& ThePool() {
  static auto* pool = new Pool;  // never destroyed: blocks may be freed during static teardown
  return *pool;
}

// Maps `size` bytes; from 4 MiB on 2 MiB-aligned and advised for transparent huge pages (one
// fault per 2 MiB instead of 512). Only advice: without THP nothing changes. Anonymous pages are
// zero until touched, so an unused tail costs only address space.
void* Map(std::size_t size) {
  const bool huge = size >= 2 * kHugePage;
  const std::size_t mapped = huge ? size + kHugePage : size;
  void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  if (!huge) return raw;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t begin = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (begin > start) (void)munmap(raw, begin - start);
  const std::uintptr_t tail = start + mapped - (begin + size);
  if (tail > 0) (void)munmap(reinterpret_cast<void*>(begin + size), tail);
#if defined(MADV_HUGEPAGE)
  (void)madvise(reinterpret_cast<void*>(begin), size, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<void*>(begin);
}
#endif

}  // namespace

PagePoolStats GetPagePoolStats() {
  PagePoolStats stats;
#if defined(__linux__)
  Pool& pool = ThePool();
  std::lock_guard<std::mutex> lock(pool.mu);
  stats.pooled_bytes = pool.bytes;
  stats.live_bytes = pool.live;
  stats.peak_live_bytes = pool.peak;
  stats.limit_bytes = PoolLimit(pool);
#endif
  return stats;
}

std::size_t PageBlockSize(std::size_t bytes) {
  std::size_t size = kMinBlock;
  while (size < bytes) size *= 2;
  return size;
}

void* AllocatePages(std::size_t bytes) {
  const std::size_t size = PageBlockSize(bytes);
#if defined(__linux__)
  {
    Pool& pool = ThePool();
    std::lock_guard<std::mutex> lock(pool.mu);
    // The most recently freed block first: its pages are the likeliest to be resident.
    for (std::size_t i = pool.blocks.size(); i-- > 0;) {
      if (pool.blocks[i].second == size) {
        void* block = pool.blocks[i].first;
        pool.blocks.erase(pool.blocks.begin() + static_cast<std::ptrdiff_t>(i));
        pool.bytes -= size;
        pool.live += size;
        pool.peak = std::max(pool.peak, pool.live);
        return block;
      }
    }
  }
  void* block = Map(size);
  {
    Pool& pool = ThePool();
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.live += size;
    pool.peak = std::max(pool.peak, pool.live);
  }
  return block;
#else
  return ::operator new(size);
#endif
}

void FreePages(void* block, std::size_t bytes) noexcept {
  if (block == nullptr) return;
  const std::size_t size = PageBlockSize(bytes);
#if defined(__linux__)
  {
    Pool& pool = ThePool();
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.live -= std::min(pool.live, size);
    if (pool.bytes + size <= PoolLimit(pool)) {
#if defined(MADV_FREE)
      (void)madvise(block, size, MADV_FREE);
#endif
      pool.blocks.emplace_back(block, size);
      pool.bytes += size;
      return;
    }
  }
  (void)munmap(block, size);
#else
  ::operator delete(block);
#endif
}

}  // namespace trove::kodo
