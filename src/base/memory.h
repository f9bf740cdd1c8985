// Memory advice for large, short-lived buffers.
//
// On the VMs Trove is measured on, a first touch of an anonymous 4 KiB page costs several
// microseconds, and a large ingest touches ~40,000 of them (docs/decisions/0025-warden-perf3.md).
// Transparent huge pages are usually in `madvise` mode, so a buffer only gets 2 MiB pages if
// it asks for them; AdviseHugePages asks.
// Thread safety: safe from any thread.
#pragma once

#include <cstddef>
#include <vector>

namespace trove::base {

// Advises the kernel to back the whole 2 MiB pages inside [data, data + bytes) with
// transparent huge pages (madvise MADV_HUGEPAGE). The advice changes no contents and only
// the whole huge pages inside the range are advised, so the memory around the range (other
// allocations) is left alone. Call it before the range is first written; pages already
// touched stay small until the kernel collapses them.
// Returns true if a range was advised; false when the range holds no whole 2 MiB page or
// the kernel declined (no THP support), which callers may ignore: it is advice only.
bool AdviseHugePages(void* data, std::size_t bytes);

// Ranges smaller than this hold at most one whole huge page; not worth a system call.
inline constexpr std::size_t kHugePageAdviceMinBytes = std::size_t{4} << 20;

// Reserves room for `n` elements of a vector that has none yet, advising huge pages for a
// large reservation before any element is written (each element then lands on a 2 MiB page
// instead of faulting in 4 KiB at a time).
template <typename T>
void ReserveWithHugePages(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  const std::size_t bytes = v.capacity() * sizeof(T);
  if (v.empty() && bytes >= kHugePageAdviceMinBytes) AdviseHugePages(v.data(), bytes);
}

}  // namespace trove::base
