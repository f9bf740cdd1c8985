// Internal: the collecting checker behind sema::Check (check.h). Not part of the public
// interface; include check.h instead.
#pragma once

#include "kodo/sema/check.h"

namespace trove::kodo::sema::internal {

// Runs the phases of docs/kodo.md §5.3 over `module` and returns the diagnostics in upstream's
// order.
CheckResult RunChecker(const SourceBuffer& source, const ast::Module& module,
                       const CheckOptions& options);

}  // namespace trove::kodo::sema::internal
