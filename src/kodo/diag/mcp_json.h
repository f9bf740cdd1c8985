// The diagnostic objects of kodo-mcp's tools (docs/kodo.md §3.3, §3.4), as nlohmann::json values
// whose keys are sorted, as upstream's ad-hoc `json!` objects are. The server binding embeds
// them in its tool results; nothing here knows about MCP itself.
// Thread safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <span>

#include "kodo/diag/diagnostic.h"

namespace trove::kodo::diag {

// One `kodo.check` error: {"code", "fix_patch"?: {"description", "end_offset", "replacement",
// "start_offset"}, "message", "span"?: {"end", "start"}, "suggestion"?}. Absent parts are
// omitted (no severity, no line/column, no `file` in the patch).
nlohmann::json McpCheckError(const Diagnostic& diagnostic);

// The §3.3 parse-failure object every source tool returns on a parse error:
// {"errors": [{"code", "message", "span": {"end", "start"} | null}], "phase": "parse",
//  "status": "failed"}.
nlohmann::json McpParseFailure(std::span<const Diagnostic> diagnostics);

// The `kodo.check` type-failure object: {"errors": [McpCheckError...], "phase": "types",
// "status": "failed"}.
nlohmann::json McpTypeFailure(std::span<const Diagnostic> diagnostics);

// The `kodo.fix` result for `diagnostics` (§3.4): {"message": "no errors to fix", "patches":
// [], "repair_plans": [], "status": "ok"} when empty, else {"error_count", "patches": [{...,
// "error_code"}], "repair_plans": [{"error_code", "message", "steps": [{"description", "id",
// "patches"}]}], "status": "errors_found"}.
nlohmann::json McpFixResult(std::span<const Diagnostic> diagnostics);

}  // namespace trove::kodo::diag
