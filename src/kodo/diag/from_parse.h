// The adapter from the parser's ParseDiagnostic (kodo/parse/parser.h) to diag::Diagnostic, so
// that lexical, parse and type errors reach every output through one model.
// Thread safety: pure function.
#pragma once

#include "kodo/diag/diagnostic.h"
#include "kodo/parse/parser.h"

namespace trove::kodo::diag {

// Returns `parsed` as a Diagnostic: same code, message, span, suggestion and patch. E0001 keeps
// its span for text output but shows null in JSON, as upstream (docs/kodo.md §4.1). An unknown code
// (a parser bug) becomes E0100 so that nothing is lost.
Diagnostic FromParse(const parse::ParseDiagnostic& parsed);

}  // namespace trove::kodo::diag
