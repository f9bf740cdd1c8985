// NameTable: the checker's map from names to small values (a declaration's facts, a module-level
// binding's type). Open addressing with linear probing over a power-of-two array kept at most
// half full; each slot holds the name's hash, the name and the value, so a lookup usually costs
// one cache miss (a short name is stored inside the slot's std::string). std::unordered_map cost
// three per hit: the bucket, the node before the bucket's first and that node; in a module of
// tens of thousands of declarations each of them missed the caches
// (docs/decisions/0031-kodo-perf4.md).
//
// Names are only added, never removed. A pointer returned by Find or TryEmplace is valid until
// the next TryEmplace (which may move every slot); keep values small and point from them to
// stable storage.
//
// Thread safety: none; one checker uses a table at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trove::kodo::sema {

template <typename V>
class NameTable {
 public:
  // Makes room for `names` names without growing (an optimisation only).
  void Reserve(std::size_t names) {
    std::size_t capacity = kMinCapacity;
    while (capacity < 2 * names) capacity *= 2;
    if (capacity > slots_.size()) Grow(capacity);
  }

  // Returns the value of `name`, or nullptr when the table has no such name.
  const V* Find(std::string_view name) const {
    if (slots_.empty()) return nullptr;
    const Slot& slot = slots_[Probe(name, Hash(name))];
    return slot.hash == 0 ? nullptr : &slot.value;
  }
  V* Find(std::string_view name) {
    return const_cast<V*>(static_cast<const NameTable*>(this)->Find(name));
  }

  // Returns the value of `name`, value-initialized and added first when the table has no such
  // name, and whether it was added.
  std::pair<V*, bool> TryEmplace(std::string_view name) {
    if (2 * (size_ + 1) > slots_.size()) Grow(slots_.empty() ? kMinCapacity : 2 * slots_.size());
    const std::uint64_t hash = Hash(name);
    Slot& slot = slots_[Probe(name, hash)];
    if (slot.hash != 0) return {&slot.value, false};
    slot.hash = hash;
    slot.key = std::string(name);
    ++size_;
    return {&slot.value, true};
  }

  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kMinCapacity = 16;

  struct Slot {
    std::uint64_t hash = 0;  // 0: empty
    std::string key;
    V value{};
  };

  static std::uint64_t Hash(std::string_view name) {
    return static_cast<std::uint64_t>(std::hash<std::string_view>{}(name)) | 1;  // never 0
  }

  // Returns the index of the slot holding `name`, or of the empty slot where it would go.
  // REQUIRES: slots_ is not empty and has an empty slot.
  std::size_t Probe(std::string_view name, std::uint64_t hash) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>(hash) & mask;
    while (slots_[i].hash != 0 && (slots_[i].hash != hash || slots_[i].key != name)) {
      i = (i + 1) & mask;
    }
    return i;
  }

  void Grow(std::size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.clear();
    slots_.resize(capacity);
    const std::size_t mask = capacity - 1;
    for (Slot& slot : old) {
      if (slot.hash == 0) continue;
      std::size_t i = static_cast<std::size_t>(slot.hash) & mask;
      while (slots_[i].hash != 0) i = (i + 1) & mask;
      slots_[i] = std::move(slot);
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace trove::kodo::sema
