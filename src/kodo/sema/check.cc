#include "kodo/sema/check.h"

#include "kodo/diag/from_parse.h"
#include "kodo/sema/checker.h"
#include "kodo/sema/verify_fixes.h"

namespace trove::kodo::sema {

CheckResult Check(const SourceBuffer& source, const ast::Module& module,
                  const CheckOptions& options) {
  return internal::RunChecker(source, module, options);
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
  out.phase = Phase::kTypes;
  out.diagnostics = Check(source, *parsed.module, options).diagnostics;
  out.module = std::move(parsed.module);
  if (options.verify_fixes) {
    VerifyFixes(source, /*from_parse=*/false, out.diagnostics, options, parse_options);
  }
  return out;
}

}  // namespace trove::kodo::sema
