// `kodoc check --sarif` (docs/kodo.md §2.1): the diagnostics of one check as a SARIF 2.1.0 log
// (OASIS, https://docs.oasis-open.org/sarif/sarif/v2.1.0/), so that editors and code-scanning
// tools show them. One run; its tool.driver is kodoc with the rules (one per code used, from
// the kinds table); each diagnostic is one result:
//   ruleId/ruleIndex  the code ("E0214") and its entry in driver.rules
//   level             "error", or "warning" for Trove's own W09xx (kinds.def)
//   message.text      the message, as --json-errors prints it
//   locations         the file and a region: 1-based startLine/startColumn and endLine/
//                     endColumn (columns in Unicode code points: run.columnKind), plus
//                     byteOffset/byteLength, Kōdo's own byte offsets
//   fixes             the fix patch (at most one: the checker attaches a fix only when it is
//                     certain), as a replacement of a byte region; repair-plan steps are not
//                     alternatives, so they are not fixes (properties.repairPlan lists them)
//   properties        fixability, suggestion and see_also, which SARIF has no field for
// A diagnostic without a span has no region, only the file. Warnings follow the errors: the
// checked file's, then those of other files (an imported module's, docs/kodo.md §4.3), whose
// locations name their own file; every file is one entry of run.artifacts, the checked file
// first (artifactLocation.index points there).
// Thread safety: a pure function.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "kodo/diag/diagnostic.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::diag {

struct SarifTool {
  std::string name = "kodoc";
  std::string version;    // the kodoc release followed, e.g. "1.14.1"
  std::string full_name;  // e.g. "kodoc 1.14.1 (trove 0.1.0+abc1234)"
};

// Returns the SARIF log, pretty-printed with two-space indentation, without a trailing
// newline. `path` is the file as passed on the command line; it becomes the artifact's URI
// (percent-encoded where a URI reference needs it), as each of `other_warnings`' paths does.
std::string RenderSarif(const SourceBuffer& source, std::string_view path,
                        std::span<const Diagnostic> diagnostics, const SarifTool& tool,
                        std::span<const Diagnostic> warnings = {},
                        std::span<const FileDiagnostic> other_warnings = {});

// Returns `path` as a relative or absolute URI reference: bytes outside RFC 3986's unreserved
// characters, sub-delims, ':', '@' and '/' are percent-encoded.
std::string PathToUriReference(std::string_view path);

}  // namespace trove::kodo::diag
