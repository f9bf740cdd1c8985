// Verified fix patches: a diagnostic's `fix_patch` (fixability "auto") is offered only when
// applying it to the source gives a file that parses and no longer reports that error. Every
// patch, from the parser or the checker, is applied in memory, re-parsed and re-checked here,
// in one place; a patch that fails is withheld: it moves into the diagnostic's repair plan
// (fixability "manual") with the reason in the step's description. `kodoc check`, `kodoc fix`
// and the MCP tools (kodo.check, kodo.fix) all get their diagnostics through CheckSource, which
// calls this, so none of them can hand out an unverified automatic patch.
// See docs/decisions/0050-kodo-verified-fixes.md.
//
// "No longer reports that error": the patched file parses, and (for a type error) the number of
// diagnostics with the same code and message, span suffix aside, is smaller than before the
// patch. New errors elsewhere are allowed: placeholders such as `TODO` are reported until the
// agent replaces them, which is what the suggestion asks for.
//
// Bound. Each verification re-parses and re-checks the whole patched file, so the bytes
// re-checked for one source are capped (CheckOptions::max_verify_bytes, 32 MiB by default);
// patches beyond the budget are withheld with that reason, never offered unverified.
//
// Thread safety: a pure function of its arguments.
#pragma once

#include <vector>

#include "kodo/diag/diagnostic.h"
#include "kodo/parse/parser.h"
#include "kodo/sema/check.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::sema {

// Verifies the fix patch of each of `diagnostics`, which CheckSource produced for `source` with
// `options` and `parse_options` (`from_parse`: they are its parse error). Withholds every patch
// that fails (see above), in place; keeps the others unchanged.
void VerifyFixes(const SourceBuffer& source, bool from_parse,
                 std::vector<diag::Diagnostic>& diagnostics, const CheckOptions& options,
                 const parse::ParseOptions& parse_options);

// Withholds `d`'s fix patch: the patch becomes the first step of its repair plan, described
// with `reason`, a step of the old plan that held only that patch is dropped, and `d` becomes
// `manual`. REQUIRES: d.fix_patch.
void WithholdFix(diag::Diagnostic& d, std::string_view reason);

}  // namespace trove::kodo::sema
