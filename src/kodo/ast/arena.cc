#include "kodo/ast/arena.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>

#include "base/status.h"
#include "kodo/source/pages.h"

namespace trove::kodo::ast {
namespace {

thread_local Arena* current_arena = nullptr;

// Chunks stop doubling here: big enough that a 12 MB program needs a dozen, small enough that
// a chunk's unused tail (untouched, so only address space) stays modest.
constexpr std::size_t kMaxChunk = std::size_t{32} << 20;

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

}  // namespace

Arena::Arena() : id_(NewArenaId()) {}

Arena::~Arena() {
  for (const Chunk& chunk : chunks_) FreePages(chunk.base, chunk.size);
}

void Arena::NewChunk(std::size_t at_least) {
  std::size_t size = next_chunk_size_;
  while (size < at_least) size *= 2;
  if (next_chunk_size_ < kMaxChunk) next_chunk_size_ *= 2;
  // Chunks come from kodo/source/pages.h: huge-page advised from 4 MiB, and pooled when freed,
  // so that the next module reuses pages that are already faulted in.
  size = PageBlockSize(size);
  void* base = AllocatePages(size);
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
