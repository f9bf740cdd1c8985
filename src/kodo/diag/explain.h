// `kodoc explain CODE` (docs/kodo.md §2.1) and the `kodo.explain` MCP tool (§3.4).
//
// The CLI form has a long text for EVERY code of the kinds table (upstream has texts for 51 of
// them; the other codes get ours, see docs/decisions/0014-kodo-diagnostics-and-checker.md): a
// title, an explanation and a bad and a good example. An unknown code is an error, as upstream's.
// The MCP form never reads those texts: upstream classifies the code by its prefix.
// Thread safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace trove::kodo::diag {

struct Explanation {
  std::string code;
  std::string title;
  std::string explanation;
  std::string bad_example;
  std::string good_example;
};

// Returns the long-form explanation of `code` (spelled as upstream: "E0200"). Fails with
// kNotFound "unknown error code `X`" for a code that is not in the kinds table.
Result<Explanation> Explain(std::string_view code);

// Returns the text `kodoc explain CODE` prints: "Error CODE: TITLE", a blank line, the
// explanation, then the two examples in ```kodo fences. Ends with a newline.
std::string RenderExplainText(const Explanation& explanation);

// Returns `kodoc explain CODE --json`: {"bad_example", "code", "explanation", "good_example",
// "title"}.
nlohmann::json ExplainJson(const Explanation& explanation);

// Returns the `kodoc explain --json` error object for an unknown code: {"error": "unknown
// error code `X`", "hint": "error codes range from E0001 to E0699"}.
nlohmann::json UnknownCodeJson(std::string_view code);

// Returns the `kodo.explain` tool result for any string: {"code", "explanation", "hint",
// "title"}, classified by prefix (E00 lexer, E01 parser, ... E06 codegen, else unknown).
nlohmann::json ExplainMcp(std::string_view code);

}  // namespace trove::kodo::diag
