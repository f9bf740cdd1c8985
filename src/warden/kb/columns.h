// How a KB stores a FunctionRecord's structured columns, the same for every back end: string
// and index lists as compact JSON arrays, the MinHash and histogram arrays packed little-endian,
// and ColumnEncoder, which builds a version's columns on a thread beside the inserts.
// Internal to kb/.
// Thread safety: the functions are pure; a ColumnEncoder is used by one thread (its own
// thread is internal).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "warden/kb/records.h"

namespace trove::warden::kb::internal {

// The same text as nlohmann::json(values).dump(-1, ' ', false, replace).
std::string ToJson(const std::vector<std::string>& values);
// The same text as nlohmann::json(values).dump().
std::string ToJson(const std::vector<std::uint32_t>& values);
// Parses a JSON array of strings written by ToJson; anything else reads as empty.
std::vector<std::string> StringsFromJson(std::string_view text);
// Parses a JSON array of unsigned integers; values that are not unsigned integers are skipped.
std::vector<std::uint32_t> IndicesFromJson(std::string_view text);

template <typename T, std::size_t N>
std::string PackLe(const std::array<T, N>& values) {
  std::string out;
  out.reserve(N * sizeof(T));
  for (T v : values) {
    for (std::size_t b = 0; b < sizeof(T); ++b) {
      out += static_cast<char>(static_cast<std::uint64_t>(v) >> (8 * b) & 0xff);
    }
  }
  return out;
}

// The columns of a function row that are built from the record rather than bound from it:

template <typename T, std::size_t N>
std::array<T, N> UnpackLe(std::string_view bytes) {
  std::array<T, N> out{};
  if (bytes.size() != N * sizeof(T)) return out;
  for (std::size_t i = 0; i < N; ++i) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < sizeof(T); ++b) {
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i * sizeof(T) + b]))
           << (8 * b);
    }
    out[i] = static_cast<T>(v);
  }
  return out;
}

// The columns of a function row that are built from the record rather than bound from it:
// the packed blobs and the JSON arrays.
struct EncodedColumns {
  std::string minhash;
  std::string histogram;
  std::string call_outs;
  std::string callees;
  std::string export_names;
  std::string call_targets;
  std::string referenced_strings;
};

// Encodes the columns of the rows in row order on a thread of its own while the rows are
// inserted (the inserts are the serial part of an ingest, and building these columns was
// ~15 % of it). The encoded rows live in a ring of kRing slots that the encoder refills as
// the inserts move on, so their strings are reused rather than allocated per row. Ready(i)
// waits for row i and tells the encoder that every row before i is done with.
class ColumnEncoder {
 public:
  explicit ColumnEncoder(std::span<const FunctionRecord> functions)
      : functions_(functions), ring_(kRing), thread_([this](std::stop_token stop) { Run(stop); }) {}
  ColumnEncoder(const ColumnEncoder&) = delete;
  ColumnEncoder& operator=(const ColumnEncoder&) = delete;
  ~ColumnEncoder() {
    thread_.request_stop();
    consumed_.store(kNever, std::memory_order_release);  // unblocks a full ring
    consumed_.notify_one();
  }  // thread_, declared last, joins first

  // Returns row i's columns once they are encoded. REQUIRES: i from 0 up, one at a time; the
  // columns of earlier rows are no longer read.
  const EncodedColumns& Ready(std::size_t i) {
    if (i % kBatch == 0) {
      consumed_.store(i, std::memory_order_release);
      consumed_.notify_one();
    }
    for (std::size_t n = ready_.load(std::memory_order_acquire); n <= i;
         n = ready_.load(std::memory_order_acquire)) {
      ready_.wait(n, std::memory_order_acquire);
    }
    return ring_[i % kRing];
  }

 private:
  static constexpr std::size_t kRing = 1024;
  static constexpr std::size_t kBatch = 32;  // rows per publication, either way
  static_assert(kRing % kBatch == 0 && kRing >= 2 * kBatch);
  static constexpr std::size_t kNever = ~std::size_t{0} / 2;

  void Run(const std::stop_token& stop) {
    const std::size_t n = functions_.size();
    for (std::size_t i = 0; i < n && !stop.stop_requested(); ++i) {
      // Slot i % kRing held row i - kRing, which must be done with.
      for (std::size_t c = consumed_.load(std::memory_order_acquire); i >= c + kRing;
           c = consumed_.load(std::memory_order_acquire)) {
        consumed_.wait(c, std::memory_order_acquire);
      }
      Encode(functions_[i], ring_[i % kRing]);
      if ((i + 1) % kBatch == 0 || i + 1 == n) {
        ready_.store(i + 1, std::memory_order_release);
        ready_.notify_one();
      }
    }
  }

  static void Encode(const FunctionRecord& f, EncodedColumns& c) {
    c.minhash.clear();
    c.histogram.clear();
    if (!f.is_import) {
      c.minhash = PackLe(f.minhash);
      c.histogram = PackLe(f.histogram);
    }
    c.call_outs = ToJson(f.call_outs);
    c.callees = ToJson(f.defined_callees);
    c.export_names = ToJson(f.export_names);
    c.call_targets = ToJson(f.call_targets);
    c.referenced_strings = ToJson(f.referenced_strings);
  }

  const std::span<const FunctionRecord> functions_;
  std::vector<EncodedColumns> ring_;      // kRing slots
  std::atomic<std::size_t> ready_{0};     // rows [0, ready_) are encoded
  std::atomic<std::size_t> consumed_{0};  // rows [0, consumed_) are done with
  std::jthread thread_;  // last: started after, and joined before, everything it uses
};

}  // namespace trove::warden::kb::internal
