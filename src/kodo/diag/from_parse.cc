#include "kodo/diag/from_parse.h"

namespace trove::kodo::diag {

Diagnostic FromParse(const parse::ParseDiagnostic& parsed) {
  Diagnostic d;
  d.kind = FindKind(parsed.code).value_or(Kind::kE0100);
  d.message = parsed.message;
  d.span = parsed.range;
  d.span_in_json = d.kind != Kind::kE0001;
  if (!parsed.suggestion.empty()) d.suggestion = parsed.suggestion;
  if (parsed.fix_patch) {
    d.fix_patch = FixPatch{.description = parsed.fix_patch->description,
                           .start_offset = parsed.fix_patch->start_offset,
                           .end_offset = parsed.fix_patch->end_offset,
                           .replacement = parsed.fix_patch->replacement};
  }
  return d;
}

}  // namespace trove::kodo::diag
