// The verifier gate (docs/warden.md §7.4): what a backend's proposal must satisfy before it
// may reach the economy gate. It checks the proposal against the function's facts only; it
// cannot make a wrong name right, but it blocks claims the facts do not back.
//
// VerifyProposal rejects (all failures are reported, in this order):
//   * a name that is not an identifier: [A-Za-z_][A-Za-z0-9_]* with optional "::"-separated
//     segments of the same form, e.g. "std::sort";
//   * a name shorter than 2 or longer than 128 characters;
//   * a confidence outside [0, 1] (NaN included);
//   * a cited string not among facts.referenced_strings (exact match);
//   * a double-quoted literal of 4 or more characters in the summary that is not a substring
//     of some referenced string (quotes pair up left to right; an unpaired last quote is
//     ignored);
//   * a summary over 4,000 characters (UTF-8 code points) or not valid UTF-8;
//   * a type_signature refinement that does not parse, or whose parameter or result count
//     differs from facts.type_signature.
// CheckProposedSymbol is the lighter check of `propose_symbol`: identifier, length, confidence.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "warden/agents/backend.h"
#include "warden/agents/facts.h"

namespace trove::warden::agents {

inline constexpr std::size_t kMinNameChars = 2;
inline constexpr std::size_t kMaxNameChars = 128;
inline constexpr std::size_t kMaxSummaryChars = 4000;
inline constexpr std::size_t kMinQuotedLiteralChars = 4;

struct Verdict {
  bool ok = true;
  std::vector<std::string> messages;  // one per failed check; empty when ok
  // Returns the messages joined with "; ".
  std::string Reason() const;
};

Verdict VerifyProposal(const FunctionFacts& facts, const Proposal& proposal);

// The identifier, length and confidence checks alone (`propose_symbol`, §7.4).
Verdict CheckProposedSymbol(std::string_view name, double confidence);

// Whether `name` matches [A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)* (no length limit).
bool IsIdentifier(std::string_view name);

// The parameter and result counts of a signature "(a, b) -> r", "(a) -> (r, s)", "() -> ()".
// Each entry is a type, optionally with a parameter name ("i32 fd", "const char* s"): letters,
// digits, '_', spaces, '*', '&', ':', '<', '>', '[' and ']', not empty.
struct SignatureArity {
  std::size_t params = 0;
  std::size_t results = 0;
  friend bool operator==(const SignatureArity&, const SignatureArity&) = default;
};
Result<SignatureArity> ParseSignatureArity(std::string_view signature);

}  // namespace trove::warden::agents
