// ParallelArray<T>: a fixed-size array whose elements are constructed in place on several
// threads, each exactly once.
//
// A std::vector<T> of n elements must construct (and so first touch) every element on one
// thread before other threads can fill them in: for WARDEN's 22,280 function records of
// ~800 bytes that serial pass took 10-57 ms of each ingest (page faults of fresh memory on
// the VMs Trove is measured on). Build constructs element i as make(i) on the threads of
// ParallelChunks, in storage advised to use huge pages when large (memory.h).
//
// Thread safety: Build's `make` is called concurrently for different i; a built array is
// like a const std::vector for readers.
#pragma once

#include <cstddef>
#include <new>
#include <span>
#include <utility>

#include "base/memory.h"
#include "base/thread_pool.h"

namespace trove::base {

template <typename T>
class ParallelArray {
 public:
  ParallelArray() = default;
  ParallelArray(const ParallelArray&) = delete;
  ParallelArray& operator=(const ParallelArray&) = delete;
  ParallelArray(ParallelArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  ParallelArray& operator=(ParallelArray&& other) noexcept {
    if (this != &other) {
      Reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~ParallelArray() { Reset(); }

  // Returns n elements, element i constructed from make(i) (a T, or what T is constructed
  // from) on up to `threads` threads, `grain` consecutive elements at a time.
  // REQUIRES: make does not throw.
  template <typename Make>
  static ParallelArray Build(std::size_t n, std::size_t threads, std::size_t grain,
                             const Make& make) {
    ParallelArray out;
    if (n == 0) return out;
    const std::size_t bytes = n * sizeof(T);
    T* data = static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
    if (bytes >= kHugePageAdviceMinBytes) AdviseHugePages(data, bytes);
    ParallelChunks(n, threads, grain, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) ::new (static_cast<void*>(data + i)) T(make(i));
    });
    out.data_ = data;
    out.size_ = n;
    return out;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }

 private:
  void Reset() {
    for (std::size_t i = 0; i < size_; ++i) data_[i].~T();
    if (data_ != nullptr) ::operator delete (data_, std::align_val_t{alignof(T)});
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace trove::base
