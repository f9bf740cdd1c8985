// The builtin methods that upstream writes in Kōdo itself and injects into every build
// (docs/kodo.md §7.6): the closure-taking list methods and map_filter. Written in Kōdo here too, so
// that the interpreter never calls back into Kōdo code from C++ (it keeps one explicit frame
// stack; see interp/interp.h).
//
// Thread safety: immutable data.
#pragma once

#include <string_view>

namespace trove::kodo::mir {

// Returns the source of the injected module (it parses with kodo/parse and lowers with lower.h).
std::string_view PreludeSource();

}  // namespace trove::kodo::mir
