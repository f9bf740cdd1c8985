// The seven tools of kodo-mcp as engine functions (docs/kodo.md §3.4): each takes the tool's
// arguments and returns upstream's result object with its exact keys and values, keys sorted
// as upstream's ad-hoc objects are (nlohmann::json keeps object keys ordered). The MCP binding
// (kodo/server) wraps these objects in tool results; `kodoc` prints some of them too.
//
// A program with errors is an ordinary answer ("status": "failed" or "errors_found"). A
// non-OK Status means the call could not be answered: a crossed bound (kResourceExhausted), or
// a phase that does not exist yet (kUnsupported, with the message the binding shows as is).
//
// Thread safety: pure functions of their arguments.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"
#include "kodo/annotate/annotate.h"
#include "kodo/ast/ast.h"
#include "kodo/driver/front.h"

namespace trove::kodo::driver {

// The text kodo.build answers with (as an error) until MIR lowering exists (issue 5,
// decision 3).
inline constexpr std::string_view kBuildNotImplemented = "lowering to MIR is not implemented yet";

// kodo.check: the parse-failure object (§3.3), the type-failure object, or
// {"errors": [], "module": NAME, "status": "ok"}.
Result<nlohmann::json> CheckTool(std::string source, const FrontOptions& options = {});

// kodo.fix: the parse-failure object, or the patches and repair plans of every type error
// ({"error_count", "patches", "repair_plans", "status": "errors_found"}), or
// {"message": "no errors to fix", ..., "status": "ok"}.
Result<nlohmann::json> FixTool(std::string source, const FrontOptions& options = {});

// kodo.describe: the parse-failure object, or {"functions", "meta", "module", "types"} read
// from the AST (free functions, struct declarations, meta entries).
Result<nlohmann::json> DescribeTool(std::string source, const FrontOptions& options = {});

// kodo.explain: {"code", "explanation", "hint", "title"} for any string (classified by prefix).
nlohmann::json ExplainTool(std::string_view code);

// kodo.annotate: {"errors": [{"message"}], "phase": "parse", "status": "failed"} on a parse
// error; else heuristic suggestions, uncovered functions with their source, and a summary.
Result<nlohmann::json> AnnotateTool(std::string source, const FrontOptions& options = {});

// kodo.build: the parse- or type-failure object for a program with errors; otherwise
// on success upstream's {"function_count","message","module","phase":"mir","status":"ok"}, and
// {"errors":[{"message"}],"phase":"mir","status":"failed"} when lowering fails (kodo/mir/lower.h).
Result<nlohmann::json> BuildTool(std::string source, const FrontOptions& options = {});

// kodo.confidence_report (docs/kodo.md §3.4): the parse-failure object on a parse error; the
// fail-fast checker's first error as {"error": MESSAGE, "status": "failed"} (trust policies
// included, without kodo.toml); else {"functions": [{"callees", "computed_confidence",
// "declared_confidence", "name"}], "overall_confidence", "status": "ok"} (kodo/trust/report.h).
Result<nlohmann::json> ConfidenceReportTool(std::string source, const FrontOptions& options = {});

// The pieces, for callers that already hold a parsed module.
nlohmann::json DescribeModuleJson(const ast::Module& module);
nlohmann::json AnnotateJson(const std::string& module_name,
                            const annotate::AgentAnnotation& annotation);

}  // namespace trove::kodo::driver
