#include "kodo/driver/front.h"

#include <utility>

#include "kodo/diag/from_parse.h"

namespace trove::kodo::driver {

Result<Compiled> CompileSource(std::string text, std::string name, const FrontOptions& options) {
  ASSIGN_OR_RETURN(SourceBuffer source, SourceBuffer::Create(0, std::move(name), std::move(text),
                                                             options.parse.lex.max_source_bytes));
  Compiled out{.source = std::move(source)};
  if (options.type_check) {
    ASSIGN_OR_RETURN(sema::SourceCheck checked,
                     sema::CheckSource(out.source,
                                       sema::CheckOptions{.fail_fast = options.fail_fast,
                                                          .trust_config = options.trust_config},
                                       options.parse));
    out.module = std::move(checked.module);
    out.diagnostics = std::move(checked.diagnostics);
    out.warnings = std::move(checked.warnings);
    if (checked.phase == sema::Phase::kParse && !out.diagnostics.empty()) {
      out.outcome = Outcome::kParseFailed;
    } else {
      out.type_checked = true;
      out.outcome = out.diagnostics.empty() ? Outcome::kOk : Outcome::kTypeErrors;
    }
    return out;
  }
  ASSIGN_OR_RETURN(parse::ParseResult parsed, parse::ParseModule(out.source, options.parse));
  for (const parse::ParseDiagnostic& d : parsed.diagnostics) {
    out.diagnostics.push_back(diag::FromParse(d));
  }
  if (parsed.ok()) {
    out.module = std::move(parsed.module);
  } else {
    out.outcome = Outcome::kParseFailed;
  }
  return out;
}

}  // namespace trove::kodo::driver
