#include "kodo/diag/mcp_json.h"

namespace trove::kodo::diag {
namespace {

nlohmann::json PatchJson(const FixPatch& patch) {
  return nlohmann::json{{"description", patch.description},
                        {"end_offset", patch.end_offset},
                        {"replacement", patch.replacement},
                        {"start_offset", patch.start_offset}};
}

nlohmann::json SpanJson(const Diagnostic& d) {
  if (!d.span || !d.span_in_json) return nullptr;
  return nlohmann::json{{"end", d.span->end}, {"start", d.span->begin}};
}

}  // namespace

nlohmann::json McpCheckError(const Diagnostic& d) {
  nlohmann::json j = nlohmann::json::object();
  j["code"] = d.code();
  j["message"] = d.message;
  if (d.span && d.span_in_json) j["span"] = SpanJson(d);
  if (d.suggestion) j["suggestion"] = *d.suggestion;
  if (d.fix_patch) j["fix_patch"] = PatchJson(*d.fix_patch);
  return j;
}

nlohmann::json McpParseFailure(std::span<const Diagnostic> diagnostics) {
  nlohmann::json errors = nlohmann::json::array();
  for (const Diagnostic& d : diagnostics) {
    errors.push_back({{"code", d.code()}, {"message", d.message}, {"span", SpanJson(d)}});
  }
  return nlohmann::json{{"errors", std::move(errors)}, {"phase", "parse"}, {"status", "failed"}};
}

nlohmann::json McpTypeFailure(std::span<const Diagnostic> diagnostics) {
  nlohmann::json errors = nlohmann::json::array();
  for (const Diagnostic& d : diagnostics) errors.push_back(McpCheckError(d));
  return nlohmann::json{{"errors", std::move(errors)}, {"phase", "types"}, {"status", "failed"}};
}

nlohmann::json McpFixResult(std::span<const Diagnostic> diagnostics) {
  if (diagnostics.empty()) {
    return nlohmann::json{{"message", "no errors to fix"},
                          {"patches", nlohmann::json::array()},
                          {"repair_plans", nlohmann::json::array()},
                          {"status", "ok"}};
  }
  nlohmann::json patches = nlohmann::json::array();
  nlohmann::json plans = nlohmann::json::array();
  for (const Diagnostic& d : diagnostics) {
    if (d.fix_patch) {
      nlohmann::json p = PatchJson(*d.fix_patch);
      p["error_code"] = d.code();
      patches.push_back(std::move(p));
    }
    if (!d.repair_plan.empty()) {
      nlohmann::json steps = nlohmann::json::array();
      int id = 0;
      for (const RepairStep& step : d.repair_plan) {
        nlohmann::json sp = nlohmann::json::array();
        for (const FixPatch& p : step.patches) sp.push_back(PatchJson(p));
        steps.push_back(
            {{"description", step.description}, {"id", id++}, {"patches", std::move(sp)}});
      }
      plans.push_back(
          {{"error_code", d.code()}, {"message", d.message}, {"steps", std::move(steps)}});
    }
  }
  return nlohmann::json{{"error_count", diagnostics.size()},
                        {"patches", std::move(patches)},
                        {"repair_plans", std::move(plans)},
                        {"status", "errors_found"}};
}

}  // namespace trove::kodo::diag
