#include "kodo/ast/arena.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "base/status.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace trove::kodo::ast {
namespace {

thread_local Arena* current_arena = nullptr;

// Chunks stop doubling here: big enough that a 12 MB program needs a dozen, small enough that
// a chunk's unused tail (untouched, so only address space) stays modest.
constexpr std::size_t kMaxChunk = std::size_t{32} << 20;
constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;

// The header before every AllocateNode block says where it came from: the low 32 bits hold the
// arena's id (0: the heap), the high 32 bits the block's size with the header. 8 bytes keep the
// block 8-byte aligned (operator new and the arena both return 8-aligned-or-better memory).
constexpr std::size_t kHeader = 8;

// Arena ids count up from 1 and skip 0 (the heap) when they wrap. Two live arenas could share an
// id only if 2^32 - 1 arenas were created while the older one lived.
std::atomic<std::uint32_t> next_arena_id{1};

std::uint32_t NewArenaId() {
  std::uint32_t id = next_arena_id.fetch_add(1, std::memory_order_relaxed);
  while (id == 0) id = next_arena_id.fetch_add(1, std::memory_order_relaxed);
  return id;
}

#if defined(__linux__)
// Freed chunks are kept for the next arena, up to kPoolBytes in all, instead of being unmapped:
// a fresh mapping costs a fault and a kernel clear of every page it touches, which on the 2-core
// VM was 40 % of checking a large program end to end. A pooled chunk is marked MADV_FREE, so
// under memory pressure the kernel may take its pages back (a later touch then gets zero pages
// again); until it does, reuse costs nothing. A server checking program after program reuses the
// same pages; a one-shot `kodoc check` pays for fresh pages once, as before.
constexpr std::size_t kPoolBytes = std::size_t{1} << 30;

struct ChunkPool {
  std::mutex mu;
  std::vector<std::pair<void*, std::size_t>> chunks;  // base, size
  std::size_t bytes = 0;
};

ChunkPool& Pool() {
  static auto* pool = new ChunkPool;  // never destroyed: arenas may die during static teardown
  return *pool;
}

// Returns the smallest pooled chunk of at least `size` bytes, or {nullptr, 0}.
std::pair<void*, std::size_t> TakePooled(std::size_t size) {
  ChunkPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mu);
  std::size_t best = pool.chunks.size();
  for (std::size_t i = 0; i < pool.chunks.size(); ++i) {
    if (pool.chunks[i].second >= size &&
        (best == pool.chunks.size() || pool.chunks[i].second < pool.chunks[best].second)) {
      best = i;
    }
  }
  if (best == pool.chunks.size()) return {nullptr, 0};
  const auto chunk = pool.chunks[best];
  pool.chunks[best] = pool.chunks.back();
  pool.chunks.pop_back();
  pool.bytes -= chunk.second;
  return chunk;
}

// Pools the chunk when there is room, else unmaps it.
void Release(void* base, std::size_t size) {
  {
    ChunkPool& pool = Pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.bytes + size <= kPoolBytes) {
#if defined(MADV_FREE)
      (void)madvise(base, size, MADV_FREE);
#endif
      pool.chunks.emplace_back(base, size);
      pool.bytes += size;
      return;
    }
  }
  (void)munmap(base, size);
}

// Maps `size` bytes. From 4 MiB on the mapping is 2 MiB-aligned and advised for transparent huge
// pages (as the lexer's token array is, kodo/lex/lexer.cc): one fault per 2 MiB instead of 512.
// Only advice: without THP nothing changes. Anonymous pages are zero until touched, so an unused
// tail costs only address space.
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

Arena::Arena() : id_(NewArenaId()) {}

Arena::~Arena() {
  for (const Chunk& chunk : chunks_) {
#if defined(__linux__)
    Release(chunk.base, chunk.size);
#else
    ::operator delete(chunk.base);
#endif
  }
}

void Arena::NewChunk(std::size_t at_least) {
  std::size_t size = next_chunk_size_;
  while (size < at_least) size *= 2;
  if (next_chunk_size_ < kMaxChunk) next_chunk_size_ *= 2;
#if defined(__linux__)
  auto [base, got] = TakePooled(size);
  if (base == nullptr) {
    base = Map(size);
    got = size;
  }
  size = got;
#else
  void* base = ::operator new(size);
#endif
  chunks_.push_back(Chunk{base, size});
  reserved_ += size;
  next_ = static_cast<char*>(base);
  end_ = next_ + size;
}

ArenaScope::ArenaScope(Arena* arena) : previous_(current_arena) { current_arena = arena; }
ArenaScope::~ArenaScope() { current_arena = previous_; }

Arena* CurrentArena() { return current_arena; }

std::size_t Arena::used_bytes() const {
  if (chunks_.empty()) return 0;
  return reserved_ - static_cast<std::size_t>(end_ - next_);
}

namespace internal {

void* AllocateNode(std::size_t bytes) {
  TROVE_CHECK(bytes <= 0xFFFFFFFFu - 2 * kHeader);
  const std::size_t total = bytes + kHeader;
  char* block;
  std::uint64_t header;
  if (Arena* arena = current_arena) {
    block = static_cast<char*>(arena->Allocate(total));
    header = (std::uint64_t{static_cast<std::uint32_t>(total)} << 32) | arena->id();
  } else {
    block = static_cast<char*>(::operator new(total));
    header = 0;
  }
  std::memcpy(block, &header, sizeof header);
  return block + kHeader;
}

void FreeNode(void* p) noexcept {
  if (p == nullptr) return;
  char* block = static_cast<char*>(p) - kHeader;
  std::uint64_t header;
  std::memcpy(&header, block, sizeof header);
  const auto id = static_cast<std::uint32_t>(header);
  if (id == 0) {
    ::operator delete(block);
  } else if (Arena* arena = current_arena; arena != nullptr && arena->id() == id) {
    arena->Recycle(block, static_cast<std::size_t>(header >> 32));
  }
}

}  // namespace internal
}  // namespace trove::kodo::ast
