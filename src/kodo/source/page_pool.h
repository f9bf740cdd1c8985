// The state of the page pool of kodo/source/pages.h, for tests and benchmarks.
//
// The pool keeps freed blocks while it holds under its limit: the most bytes the process has had
// allocated from AllocatePages at once, at least 1 GiB and at most 4 GiB. A process that once
// needed that much (the check bench keeps two modules and their token arrays alive, 1.3 GiB for
// 12 MB of source) gets all of it back from the pool instead of faulting part of it in anew every
// time. See docs/decisions/0073-kodo-check-throughput.md.
//
// Thread safety: GetPagePoolStats may be called from any thread.
#pragma once

#include <cstddef>

namespace trove::kodo {

// All zero off Linux, where nothing is pooled.
struct PagePoolStats {
  std::size_t pooled_bytes = 0;     // freed blocks kept for reuse
  std::size_t live_bytes = 0;       // blocks handed out and not yet freed
  std::size_t peak_live_bytes = 0;  // the most live_bytes so far
  std::size_t limit_bytes = 0;      // how many bytes the pool may hold now
};

PagePoolStats GetPagePoolStats();

}  // namespace trove::kodo
