// Arena: the memory of one parsed Kōdo module. The parser allocates every AST vector buffer and
// out-of-line payload (ast::Vec, ast::Box) from one bump allocator instead of malloc, and the
// module frees it all at once. Why: a 12 MB program has tens of millions of small nodes; malloc
// and free cost a fifth of front-end instructions, and on the 2-core VM each 4 KiB page the heap
// touched for the first time cost a 13 us fault, more than parsing it. Arena chunks of 4 MiB and
// more are advised for transparent huge pages, so the tree is faulted in 2 MiB at a time. See
// docs/decisions/0022-kodo-arena-and-page-pool.md.
//
// Lifetime rules:
//   - An ArenaScope makes an arena current on its thread; while it is, ArenaAllocator and
//     MakeBox take memory from that arena. Without one they use the heap (operator new), so
//     nodes built by hand (tests, tools) need no arena.
//   - Each allocation records where it came from (an 8-byte header: its arena's id and size),
//     so a node frees correctly wherever it is destroyed: heap memory is deleted, arena memory
//     is recycled by its arena while that arena is current, else left until the arena dies.
//   - An arena must outlive every node allocated from it. ast::Module owns the arena its parse
//     used (ArenaOwner, its first member, so that it is destroyed after the tree), and nodes
//     may only move between modules together with their module.
//
// Thread safety: an Arena is used by one thread at a time; the current arena is per thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>
#include <utility>
#include <vector>

namespace trove::kodo::ast {

class Arena {
 public:
  Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();

  // Returns `bytes` of uninitialized memory, 8-byte aligned, valid until the arena is destroyed:
  // a recycled block of the same rounded size when there is one, else the next bytes of the
  // current chunk.
  void* Allocate(std::size_t bytes) {
    bytes = Round(bytes);
    if (bytes <= kMaxRecycled) {
      if (void* block = free_[bytes / 8]) {
        free_[bytes / 8] = *static_cast<void**>(block);
        return block;
      }
    }
    if (static_cast<std::size_t>(end_ - next_) < bytes) NewChunk(bytes);
    void* out = next_;
    next_ += bytes;
    return out;
  }

  // Takes back a block of `bytes` from Allocate for reuse by a later Allocate of the same size.
  // Vectors that grow while the parser fills them free their old buffers here; without reuse
  // those would be a third of the arena, and every untouched page costs a fault and a clear.
  void Recycle(void* block, std::size_t bytes) {
    bytes = Round(bytes);
    if (bytes > kMaxRecycled) return;  // rare (a module's item vectors): left to the arena
    *static_cast<void**>(block) = free_[bytes / 8];
    free_[bytes / 8] = block;
  }

  // Copies `text` into the arena and returns a view of the copy, valid until the arena is
  // destroyed. The tree's names and literal texts are such views (ast.h).
  std::string_view Store(std::string_view text) {
    if (text.empty()) return {};
    char* p = static_cast<char*>(Allocate(text.size()));
    std::memcpy(p, text.data(), text.size());
    return {p, text.size()};
  }

  // Keeps `other` alive until this arena is destroyed (ArenaOwner's move assignment).
  void Adopt(std::shared_ptr<Arena> other) { adopted_.push_back(std::move(other)); }

  // A number that tells this arena from every other live one (AllocateNode's headers).
  std::uint32_t id() const { return id_; }

  // Returns the bytes of address space reserved by the chunks (not all of it touched).
  std::size_t reserved_bytes() const { return reserved_; }
  // Returns the reserved bytes less the current chunk's unused tail: what the arena handed out
  // (recycled blocks count once), plus the tails it left in earlier chunks.
  std::size_t used_bytes() const;

 private:
  static constexpr std::size_t kMaxRecycled = std::size_t{16} << 10;
  static std::size_t Round(std::size_t bytes) { return (bytes + 7) & ~std::size_t{7}; }

  struct Chunk {
    void* base;
    std::size_t size;
  };
  void NewChunk(std::size_t at_least);

  char* next_ = nullptr;
  char* end_ = nullptr;
  std::uint32_t id_;
  std::size_t next_chunk_size_ = std::size_t{256} << 10;
  std::size_t reserved_ = 0;
  std::vector<Chunk> chunks_;
  std::vector<std::shared_ptr<Arena>> adopted_;
  std::array<void*, kMaxRecycled / 8 + 1> free_{};  // free_[n]: recycled blocks of 8n bytes
};

// Makes `arena` the current arena of this thread for the scope's lifetime (nullptr: the heap),
// restoring the previous one after. Scopes nest.
class ArenaScope {
 public:
  explicit ArenaScope(Arena* arena);
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;
  ~ArenaScope();

 private:
  Arena* previous_;
};

// Returns the current arena of this thread, or nullptr.
Arena* CurrentArena();

namespace internal {
// Allocates `bytes` (8-byte aligned) from the current arena, or from the heap without one.
void* AllocateNode(std::size_t bytes);
// Frees memory from AllocateNode: heap memory is deleted; arena memory is recycled when its arena
// is the current one (the parser freeing a grown vector's old buffer), else left to its arena.
void FreeNode(void* p) noexcept;
}  // namespace internal

// A stateless allocator over AllocateNode/FreeNode. All instances compare equal, because any of
// them can free what any other allocated (the header says how).
template <typename T>
struct ArenaAllocator {
  using value_type = T;
  ArenaAllocator() = default;
  template <typename U>
  ArenaAllocator(const ArenaAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit
  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= 8, "arena memory is 8-byte aligned");
    return static_cast<T*>(internal::AllocateNode(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t) noexcept { internal::FreeNode(p); }
  template <typename U>
  friend bool operator==(const ArenaAllocator&, const ArenaAllocator<U>&) {
    return true;
  }
};

// The vector type of AST nodes.
template <typename T>
using Vec = std::vector<T, ArenaAllocator<T>>;

template <typename T>
struct ArenaDelete {
  void operator()(T* p) const noexcept {
    p->~T();
    internal::FreeNode(p);
  }
};

// An owned, out-of-line AST payload (unique_ptr over AllocateNode).
template <typename T>
using Box = std::unique_ptr<T, ArenaDelete<T>>;

template <typename T, typename... Args>
Box<T> MakeBox(Args&&... args) {
  static_assert(alignof(T) <= 8, "arena memory is 8-byte aligned");
  void* p = internal::AllocateNode(sizeof(T));
  try {
    return Box<T>(new (p) T(std::forward<Args>(args)...));
  } catch (...) {
    internal::FreeNode(p);
    throw;
  }
}

// Owns the arena of one module. Moving keeps the tree and its arena together. Assigning over
// an owner that already has an arena never frees that arena, because the old tree is destroyed
// only after this member is assigned: it is adopted by the incoming arena, or kept when none
// comes in.
class ArenaOwner {
 public:
  ArenaOwner() = default;
  explicit ArenaOwner(std::shared_ptr<Arena> arena) : arena_(std::move(arena)) {}
  ArenaOwner(ArenaOwner&&) noexcept = default;
  ArenaOwner& operator=(ArenaOwner&& other) noexcept {
    if (this == &other || !other.arena_) return *this;
    if (arena_) other.arena_->Adopt(std::move(arena_));
    arena_ = std::move(other.arena_);
    return *this;
  }
  Arena* get() const { return arena_.get(); }

 private:
  std::shared_ptr<Arena> arena_;
};

}  // namespace trove::kodo::ast
