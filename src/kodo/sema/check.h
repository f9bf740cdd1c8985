// The Kōdo type checker's entry points (docs/kodo.md §5): the collecting check that `kodoc check`,
// `kodoc build` and the MCP tools run, plus the "front half" (parse, then check) they share.
//
// Interface notes for callers (kept stable; changes are announced here):
//   - 2026-11-24: first version. Check(), CheckSource(), Summarize().
//   - 2026-11-26: CheckSource verifies fix patches (CheckOptions::verify_fixes, verify_fixes.h);
//     Check() does not.
//   - 2026-11-26: the trust policies (E0260-E0264, E0350; kodo/trust/policy.h) run last, as
//     the last step of §5.3; CheckOptions::trust_config carries the kodo.toml [trust] table.
//   - 2026-11-26: CheckOptions::imports: the declarations of imported modules (§4.3), E0270.
//
// Scope. Tiers T0 and T1 (§7.1) are checked in full, and of T2 the builtin table of §13 with
// element-aware collection builtins and typed builtin methods (docs/decisions/0055-kodo-builtins-
// and-collections.md). Other constructs of later tiers are accepted without false errors: see
// docs/decisions/0014-kodo-diagnostics-and-checker.md for what is skipped.
//
// Thread safety: pure functions of their arguments.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "base/status.h"
#include "kodo/ast/ast.h"
#include "kodo/diag/diagnostic.h"
#include "kodo/parse/parser.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::trust {
struct TrustConfig;  // kodo/trust/config.h
}  // namespace trove::kodo::trust

namespace trove::kodo::sema {

struct CheckOptions {
  // Stop at the first error (upstream's `check_module`, used by confidence reports and
  // `kodoc fix`). Default: collect every error in upstream's order (§5.3).
  bool fail_fast = false;
  // CheckSource only: verify every fix patch before offering it (verify_fixes.h). Off only for
  // the re-checks the verification itself runs.
  bool verify_fixes = true;
  // CheckSource only: the most bytes of patched source re-checked to verify the patches of one
  // file; patches beyond it are withheld (offered as manual repair plans). Default 32 MiB.
  std::size_t max_verify_bytes = std::size_t{32} << 20;
  // The `[trust]` table of the `kodo.toml` beside the source (kodo/trust/config.h), for the
  // reviewer checks E0263/E0264 of the policy phase; null when there is none (always for MCP).
  // Must outlive the call.
  const trust::TrustConfig* trust_config = nullptr;
  // The modules the checked one imports (docs/kodo.md §4.3), each already checked on its own,
  // dependencies first: their declarations are registered before the module's own, in one
  // namespace (the importer's names shadow imported ones), `mod.f(x)` and `mod::f(x)` call
  // function `f` of the imported module named `mod`, and calling a function an imported module
  // declares without `pub` is E0270. Empty for the MCP tools, which ignore imports (§3.3).
  // The modules must outlive the call.
  std::span<const ast::Module* const> imports;
  // Apply the ownership and borrowing rules of §8 (kodo/ownership). Off only to measure their
  // cost (bench/kodo_check_bench). Default on.
  bool ownership = true;
};

struct CheckResult {
  // In upstream's order (§5.3): meta errors first (E0210 alone when it occurs), then at most
  // one error per function body, free functions in source order, then impl methods.
  std::vector<diag::Diagnostic> diagnostics;
  // W0901/W0902 (never errors): the parts of the program this check did not check
  // (unchecked.h), in Feature order, then the constructs it did not understand.
  std::vector<diag::Diagnostic> warnings;
  bool ok() const { return diagnostics.empty(); }
};

// Type-checks `module`, which was parsed from `source` (spans index `source`).
CheckResult Check(const SourceBuffer& source, const ast::Module& module,
                  const CheckOptions& options = {});

// Returns the module's name and its meta `purpose`/`version` (first entry wins; null when
// absent), as `kodoc check --json-errors` echoes them on success.
diag::ModuleSummary Summarize(const ast::Module& module);

enum class Phase { kParse, kTypes };

struct SourceCheck {
  Phase phase = Phase::kTypes;        // where the diagnostics come from
  std::optional<ast::Module> module;  // set unless parsing failed
  std::vector<diag::Diagnostic> diagnostics;
  std::vector<diag::Diagnostic> warnings;  // CheckResult::warnings; empty after a parse error
  bool ok() const { return diagnostics.empty(); }
};

// Parses `source` (fail-fast, as upstream's check/build/MCP) and, when that succeeds, checks
// it. Parse errors come back as diagnostics with phase kParse. Every fix patch is verified
// (verify_fixes.h) unless options.verify_fixes is off. The Status is non-OK only when
// a lexer bound in `parse_options` is crossed.
Result<SourceCheck> CheckSource(const SourceBuffer& source, const CheckOptions& options = {},
                                const parse::ParseOptions& parse_options = {});

// The same for a module the caller parsed already (fail-fast, from `source`): the driver parses
// a file first to load its imports (docs/kodo.md §4.3), then checks it without parsing again.
// REQUIRES: parsed.ok(); parsed.module is moved into the result.
SourceCheck CheckParsed(const SourceBuffer& source, parse::ParseResult parsed,
                        const CheckOptions& options = {},
                        const parse::ParseOptions& parse_options = {});

}  // namespace trove::kodo::sema
