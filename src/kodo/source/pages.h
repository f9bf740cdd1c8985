// Pages: memory for the front end's large arrays (the lexer's token array, the AST arena's
// chunks), mapped from the kernel and kept in a process-wide pool when freed. Why: on the 2-core
// VM a freshly mapped page costs a fault and a kernel clear when first touched (13 us per 4 KiB
// page; with huge pages the clear alone was 40 % of checking a 12 MB program end to end), while
// glibc unmaps every block above 32 MiB on free. Pooled blocks are reused by the next file
// without either cost. See docs/decisions/0022-kodo-arena-and-page-pool.md.
//
// Blocks are sized in powers of two from 64 KiB. From 4 MiB on they are 2 MiB-aligned and
// advised for transparent huge pages. A freed block is pooled (and marked MADV_FREE, so the
// kernel may reclaim its pages under memory pressure) while the pool holds under its limit, else
// unmapped. The limit is the most bytes the process has had allocated here at once, at least
// 1 GiB and at most 4 GiB (kodo/source/page_pool.h). Off Linux, blocks come from operator new and
// nothing is pooled.
//
// Thread safety: AllocatePages and FreePages may be called from any thread.
#pragma once

#include <cstddef>
#include <new>

namespace trove::kodo {

// Returns the size AllocatePages gives for a request of `bytes`: the next power of two, at least
// 64 KiB.
std::size_t PageBlockSize(std::size_t bytes);

// Returns PageBlockSize(bytes) bytes of memory whose contents are unspecified (zero pages, or a
// pooled block's old contents). Throws std::bad_alloc when the kernel refuses.
void* AllocatePages(std::size_t bytes);

// Returns a block from AllocatePages(bytes) (the same `bytes`, or its PageBlockSize).
void FreePages(void* block, std::size_t bytes) noexcept;

// A stateless allocator for large arrays: requests from 1 MiB go to AllocatePages, smaller ones
// to operator new (the size passed to deallocate tells which).
template <typename T>
struct PageAllocator {
  using value_type = T;
  static constexpr std::size_t kMinPaged = std::size_t{1} << 20;
  PageAllocator() = default;
  template <typename U>
  PageAllocator(const PageAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kMinPaged) return static_cast<T*>(::operator new(bytes));
    return static_cast<T*>(AllocatePages(bytes));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kMinPaged) {
      ::operator delete(p);
    } else {
      FreePages(p, bytes);
    }
  }
  template <typename U>
  friend bool operator==(const PageAllocator&, const PageAllocator<U>&) {
    return true;
  }
};

}  // namespace trove::kodo
