#include "kodo/driver/tools.h"

#include <utility>

#include "kodo/ast/describe.h"
#include "kodo/diag/explain.h"
#include "kodo/diag/mcp_json.h"
#include "kodo/mir/lower.h"
#include "kodo/trust/confidence.h"
#include "kodo/trust/report.h"

namespace trove::kodo::driver {
namespace {

using nlohmann::json;

FrontOptions ParseOnly(FrontOptions options) {
  options.type_check = false;
  return options;
}

// The MCP front half as upstream's tools run it: collecting, whatever the caller set.
FrontOptions Collecting(FrontOptions options) {
  options.type_check = true;
  options.fail_fast = false;
  return options;
}

json ParamsJson(const ast::Vec<ast::Param>& params) {
  json out = json::array();
  for (const ast::Param& p : params) {
    out.push_back({{"name", p.name}, {"type", ast::DescribeType(p.ty)}});
  }
  return out;
}

json FunctionJson(const ast::Function& f) {
  json annotations = json::array();
  for (const ast::Annotation& a : f.annotations) {
    json args = json::array();
    for (const ast::AnnotationArg& arg : a.args) args.push_back(ast::DescribeAnnotationArg(arg));
    annotations.push_back({{"args", std::move(args)}, {"name", a.name}});
  }
  json contracts = json::array();
  for (const ast::Expr& e : f.requires_) {
    contracts.push_back({{"expr", ast::DescribeExpr(e)}, {"kind", "requires"}});
  }
  for (const ast::Expr& e : f.ensures) {
    contracts.push_back({{"expr", ast::DescribeExpr(e)}, {"kind", "ensures"}});
  }
  return json{{"annotations", std::move(annotations)},
              {"contracts", std::move(contracts)},
              {"is_async", f.is_async},
              {"name", f.name},
              {"params", ParamsJson(f.params)},
              {"return_type", ast::DescribeType(f.return_type)}};
}

}  // namespace

json DescribeModuleJson(const ast::Module& module) {
  json functions = json::array();
  for (const ast::Function& f : module.functions) functions.push_back(FunctionJson(f));
  json types = json::array();
  for (const ast::TypeDecl& t : module.type_decls) {
    json fields = json::array();
    for (const ast::FieldDef& field : t.fields) {
      fields.push_back({{"name", field.name}, {"type", ast::DescribeType(field.ty)}});
    }
    types.push_back({{"fields", std::move(fields)}, {"name", t.name}});
  }
  json meta = nullptr;
  if (module.meta) {
    meta = json::object();
    // A duplicate key keeps its last value, as upstream's map insertion does.
    for (const ast::MetaEntry& e : module.meta->entries) meta[e.key] = e.value;
  }
  return json{{"functions", std::move(functions)},
              {"meta", std::move(meta)},
              {"module", module.name},
              {"types", std::move(types)}};
}

json AnnotateJson(const std::string& module_name, const annotate::AgentAnnotation& a) {
  json suggestions = json::array();
  for (const annotate::AgentSuggestion& s : a.suggestions) {
    suggestions.push_back({{"expression", s.expression},
                           {"function", s.function},
                           {"kind", "requires"},
                           {"line", s.line},
                           {"reason", s.reason}});
  }
  json uncovered = json::array();
  for (const annotate::UncoveredFunction& u : a.uncovered) {
    json params = json::array();
    for (const annotate::AgentParam& p : u.params) {
      params.push_back({{"name", p.name}, {"type", p.type}});
    }
    uncovered.push_back({{"line", u.line},
                         {"name", u.name},
                         {"params", std::move(params)},
                         {"return_type", u.return_type},
                         {"source", u.source}});
  }
  const std::size_t suggested = a.suggestions.size();
  return json{
      {"heuristic_suggestions", std::move(suggestions)},
      {"hint",
       "For each uncovered function, analyze the source and suggest requires/ensures contracts. "
       "Verify each by adding the contract to the source and calling kodo.check."},
      {"module", module_name},
      {"status", "ok"},
      {"summary",
       {{"already_annotated", a.already_annotated},
        {"heuristic_covered", suggested},
        {"needs_agent_review", a.uncovered.size()},
        {"total_functions", a.total_functions}}},
      {"uncovered_functions", std::move(uncovered)}};
}

Result<json> CheckTool(std::string source, const FrontOptions& options) {
  ASSIGN_OR_RETURN(Compiled c, CompileSource(std::move(source), "<source>", Collecting(options)));
  switch (c.outcome) {
    case Outcome::kParseFailed:
      return diag::McpParseFailure(c.diagnostics);
    case Outcome::kTypeErrors:
      return diag::McpTypeFailure(c.diagnostics);
    case Outcome::kOk:
      break;
  }
  // Contracts would run here in runtime mode, where they cannot fail (docs/kodo.md §7.2), so the
  // answer for a well-typed program is "ok" with or without them.
  json out{{"errors", json::array()}, {"module", c.module->name}, {"status", "ok"}};
  // What the check did not check (W0901/W0902, issue 20): never a plain "ok" then.
  if (!c.warnings.empty()) {
    json notes = json::array();
    for (const diag::Diagnostic& w : c.warnings) {
      notes.push_back(std::string(w.code()) + ": " + w.message);
    }
    out["notes"] = std::move(notes);
  }
  return out;
}

Result<json> FixTool(std::string source, const FrontOptions& options) {
  ASSIGN_OR_RETURN(Compiled c, CompileSource(std::move(source), "<source>", Collecting(options)));
  if (c.outcome == Outcome::kParseFailed) return diag::McpParseFailure(c.diagnostics);
  return diag::McpFixResult(c.diagnostics);
}

Result<json> DescribeTool(std::string source, const FrontOptions& options) {
  // Upstream also type-checks here and ignores the result; the output comes from the AST
  // alone, so parsing is enough (docs/kodo.md §8).
  ASSIGN_OR_RETURN(Compiled c, CompileSource(std::move(source), "<source>", ParseOnly(options)));
  if (c.outcome == Outcome::kParseFailed) return diag::McpParseFailure(c.diagnostics);
  return DescribeModuleJson(*c.module);
}

json ExplainTool(std::string_view code) { return diag::ExplainMcp(code); }

Result<json> AnnotateTool(std::string source, const FrontOptions& options) {
  ASSIGN_OR_RETURN(Compiled c, CompileSource(std::move(source), "<source>", ParseOnly(options)));
  if (c.outcome == Outcome::kParseFailed) {
    json errors = json::array();
    for (const diag::Diagnostic& d : c.diagnostics) errors.push_back({{"message", d.message}});
    return json{{"errors", std::move(errors)}, {"phase", "parse"}, {"status", "failed"}};
  }
  annotate::AgentAnnotation a = annotate::AnnotateForAgent(*c.module, c.source.text());
  return AnnotateJson(c.module->name, a);
}

Result<json> BuildTool(std::string source, const FrontOptions& options) {
  ASSIGN_OR_RETURN(Compiled c, CompileSource(std::move(source), "<source>", Collecting(options)));
  if (c.outcome == Outcome::kParseFailed) return diag::McpParseFailure(c.diagnostics);
  if (c.outcome == Outcome::kTypeErrors) return diag::McpTypeFailure(c.diagnostics);
  // Lowered the CLI way (impl methods lifted, method calls rewritten), unlike upstream's
  // kodo.build, so method-call syntax works here (docs/kodo.md, decision 0062).
  mir::LowerOptions lower;
  lower.inject_builtins = true;
  Result<mir::Program> program = mir::Lower(*c.module, lower);
  if (!program.ok()) {
    json errors = json::array({json{{"message", program.status().message()}}});
    return json{{"errors", std::move(errors)}, {"phase", "mir"}, {"status", "failed"}};
  }
  return json{{"function_count", program->UserFunctionCount()},
              {"message", "compilation successful (through MIR)"},
              {"module", c.module->name},
              {"phase", "mir"},
              {"status", "ok"}};
}

Result<json> ConfidenceReportTool(std::string source, const FrontOptions& options) {
  // Upstream runs the fail-fast checker here, without kodo.toml (docs/kodo.md §3.4).
  FrontOptions fail_fast = Collecting(options);
  fail_fast.fail_fast = true;
  fail_fast.trust_config = nullptr;
  ASSIGN_OR_RETURN(Compiled c, CompileSource(std::move(source), "<source>", fail_fast));
  if (c.outcome == Outcome::kParseFailed) return diag::McpParseFailure(c.diagnostics);
  if (c.outcome == Outcome::kTypeErrors) {
    return json{{"error", c.diagnostics.front().message}, {"status", "failed"}};
  }
  return trust::McpConfidenceReport(*c.module, trust::CallGraph::Build(*c.module));
}

}  // namespace trove::kodo::driver
