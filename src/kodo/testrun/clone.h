// Deep copies of AST statements (the AST's nodes are move-only): `kodoc test` copies a suite's
// setup and teardown into every test of the suite. Copies share the original's arena text (names
// and literals are views), so they live no longer than the module they came from.
//
// Thread safety: pure functions of their arguments.
#pragma once

#include "base/status.h"
#include "kodo/ast/ast.h"

namespace trove::kodo::testrun {

// Returns a deep copy of `stmt`. Fails (kResourceExhausted) only for a tree deeper than
// ast::kMaxTreeDepth, which no parsed module has.
Result<ast::Stmt> CloneStmt(const ast::Stmt& stmt);

}  // namespace trove::kodo::testrun
