#include "kodo/sema/check.h"

#include "kodo/diag/from_parse.h"
#include "kodo/sema/checker.h"
#include "kodo/sema/unchecked.h"
#include "kodo/sema/verify_fixes.h"

namespace trove::kodo::sema {

CheckResult Check(const SourceBuffer& source, const ast::Module& module,
                  const CheckOptions& options) {
  CheckResult result = internal::RunChecker(source, module, options);
  if (module.meta) {  // without one (E0210) nothing else is checked, or reported
    std::vector<diag::Diagnostic> unchecked = UncheckedFeatures(source, module);
    result.warnings.insert(result.warnings.begin(), std::make_move_iterator(unchecked.begin()),
                           std::make_move_iterator(unchecked.end()));
  }
  return result;
}

diag::ModuleSummary Summarize(const ast::Module& module) {
  diag::ModuleSummary summary;
  summary.module = module.name;
  if (module.meta) {
    for (const ast::MetaEntry& entry : module.meta->entries) {
      if (entry.key == "purpose" && !summary.purpose) summary.purpose = entry.value;
      if (entry.key == "version" && !summary.version) summary.version = entry.value;
    }
  }
  return summary;
}

Result<SourceCheck> CheckSource(const SourceBuffer& source, const CheckOptions& options,
                                const parse::ParseOptions& parse_options) {
  parse::ParseOptions fail_fast = parse_options;
  fail_fast.recover = false;
  ASSIGN_OR_RETURN(parse::ParseResult parsed, parse::ParseModule(source, fail_fast));
  SourceCheck out;
  if (!parsed.ok()) {
    out.phase = Phase::kParse;
    for (const parse::ParseDiagnostic& d : parsed.diagnostics) {
      out.diagnostics.push_back(diag::FromParse(d));
    }
    if (options.verify_fixes) {
      VerifyFixes(source, /*from_parse=*/true, out.diagnostics, options, parse_options);
    }
    return out;
  }
  return CheckParsed(source, std::move(parsed), options, parse_options);
}

SourceCheck CheckParsed(const SourceBuffer& source, parse::ParseResult parsed,
                        const CheckOptions& options, const parse::ParseOptions& parse_options) {
  SourceCheck out;
  out.phase = Phase::kTypes;
  CheckResult checked = Check(source, *parsed.module, options);
  out.diagnostics = std::move(checked.diagnostics);
  out.warnings = std::move(checked.warnings);
  out.module = std::move(parsed.module);
  if (options.verify_fixes) {
    VerifyFixes(source, /*from_parse=*/false, out.diagnostics, options, parse_options);
  }
  return out;
}

}  // namespace trove::kodo::sema
