// Trust reports in upstream's shapes (docs/kodo.md §7.5, §2.1, §3.4):
//  * the `kodo.confidence_report` MCP object,
//  * `kodoc confidence-report FILE [--json] [--threshold T]`, JSON and text,
//  * `kodoc audit FILE [--json] [--policy P]`, JSON and text, with its policy criteria,
//  * the compilation certificate `FILE.ko.cert.json` of `kodoc check --emit-cert`.
//
// Key order follows upstream: objects it builds ad hoc (`json!`) have sorted keys (nlohmann::json),
// objects serialized from Rust structs keep field order (nlohmann::ordered_json). Numbers are
// JSON doubles (`1.0`, `0.5`), as serde writes f64.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kodo/ast/ast.h"
#include "kodo/trust/confidence.h"

namespace trove::kodo::trust {

// One row per free function, in source order.
struct FunctionConfidence {
  std::string name;
  double declared = 1.0;
  double computed = 1.0;
  std::vector<std::string> callees;  // sorted (upstream: hash-set order [I])
  bool has_authored_by = false;
};
std::vector<FunctionConfidence> ConfidenceRows(const ast::Module& module, const CallGraph& graph);

// kodo.confidence_report for a program without type errors:
// {"functions": [{"callees", "computed_confidence", "declared_confidence", "name"}],
//  "overall_confidence", "status": "ok"}.
nlohmann::json McpConfidenceReport(const ast::Module& module, const CallGraph& graph);

// `kodoc confidence-report --json`: {"below_threshold": [{"computed_confidence", "name"}],
// "functions": [{"callees", "computed_confidence", "declared_confidence", "has_authored_by",
// "name"}], "missing_authored_by", "module", "module_average_confidence", "overall_confidence",
// "threshold"}.
nlohmann::json CliConfidenceReport(const ast::Module& module, const CallGraph& graph,
                                   double threshold);
// The text form: a table of declared and computed values with flags, then the functions missing
// `@authored_by` and those below the threshold.
std::string CliConfidenceText(const ast::Module& module, const CallGraph& graph, double threshold);

// Contract verification counts, from the contracts phase (docs/kodo.md §7.2).
struct ContractCounts {
  std::size_t static_verified = 0;
  std::size_t runtime = 0;
  std::size_t failed = 0;
};

// An annotation as the audit and the certificate show it: `true` without arguments, the value
// of a single positional argument, else an object of the arguments (named by key, positional
// as `_I`); literals become JSON values, any other expression null.
nlohmann::json AnnotationJson(const ast::Annotation& annotation);

// `kodoc audit`'s report (struct order): {"module", "summary": {"total_functions",
// "min_confidence", "contracts_total", "contracts_static_verified", "contracts_runtime",
// "contracts_failed", "deployable"}, "functions": [{"name", "confidence_declared",
// "confidence_effective", "annotations", "requires_count", "ensures_count"}]}.
// deployable: min_confidence > 0.9 and no failed contract.
nlohmann::ordered_json AuditReport(const ast::Module& module, const CallGraph& graph,
                                   const ContractCounts& contracts);

// One criterion of `--policy "min_confidence=0.8,contracts=all_verified,reviewed=all"`.
struct PolicyCriterion {
  enum class Kind { kMinConfidence, kContractsAllVerified, kContractsAllPresent, kReviewedAll };
  Kind kind = Kind::kMinConfidence;
  double threshold = 0;  // kMinConfidence
};
// Parses a policy string; errors carry upstream's texts ("unknown policy key: `k`", ...).
Result<std::vector<PolicyCriterion>> ParseAuditPolicy(std::string_view policy);
// {"passed", "violations": [{"criterion", "function", "expected", "actual"}]} (struct order).
nlohmann::ordered_json CheckAuditPolicy(const nlohmann::ordered_json& report,
                                        const std::vector<PolicyCriterion>& criteria);
// The text form of the audit report, with the policy result when `policy` is set.
std::string AuditText(const nlohmann::ordered_json& report, const nlohmann::ordered_json* policy);

// The compilation certificate (upstream crates/kodoc/src/certificate.rs), struct order:
// {"module", "purpose", "version", "compiled_at", "compiler_version", "contracts":
// {"requires_count", "ensures_count", "mode"}, "functions", "function_details"? (functions
// with annotations), "validators"? (validate_F per function with requires), "type_check":
// "passed", "source_hash": "sha256:HEX", "binary_hash": "" (check builds no binary),
// "certificate_hash": "sha256:HEX" (over the compact JSON with certificate_hash ""),
// "parent_certificate"? and "diff_from_parent"? ({"functions_added", "functions_removed",
// "contracts_changed", "source_hash_changed"}) when `parent` (the previous certificate's text)
// parses as a certificate}. `compiled_at` is ISO 8601 UTC from `now_micros`.
nlohmann::ordered_json Certificate(const ast::Module& module, std::string_view source,
                                   std::string_view contract_mode, std::int64_t now_micros,
                                   const std::optional<std::string>& parent);

}  // namespace trove::kodo::trust
