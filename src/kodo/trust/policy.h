// Trust policy checks (docs/kodo.md §7.5): the last phase of the type
// checker (docs/kodo.md §5.3, its last step), over the checked module's free functions (`main`
// included), in upstream's order:
//
//  1. E0350, only when the meta has `trust_policy: "high_security"`: per function, the first of
//     no `@authored_by`, no `@confidence`, or a confidence below 0.85 without a human review;
//  2. per function, the first of E0260 (confidence below 0.8 without a human review) and E0262
//     (`@security_sensitive` without a `requires`/`ensures` clause);
//  3. E0263/E0264, only with an active `[trust]` config (config.h): the first human reviewer
//     of each function that is a known agent (E0263) or, when an allowlist is given, is not on
//     it (E0264); names compare case-insensitively; span = the annotation;
//  4. E0261, only when the meta's `min_confidence` parses as a float T: each function whose
//     computed confidence (confidence.h) is below T, naming the weakest link.
//
// Fixes. Upstream offers patches that add `@reviewed_by(human: "reviewer")` (E0260), raise a
// `@confidence` (E0261) and insert `requires { true }` (E0262); each removes the error by making
// a claim nobody made, which is the forgery these checks exist to catch, so Trove gives their
// suggestion in words and no patch. E0263's patch (`human:` -> `agent:`) withdraws a false claim
// and is kept. See docs/decisions/0060-kodo-trust.md.
//
// Thread safety: pure functions.
#pragma once

#include <vector>

#include "kodo/ast/ast.h"
#include "kodo/diag/diagnostic.h"
#include "kodo/source/source_buffer.h"
#include "kodo/trust/confidence.h"
#include "kodo/trust/config.h"

namespace trove::kodo::trust {

// Returns the policy diagnostics of `module` (parsed from `source`) in upstream's order.
// `config` is the `[trust]` configuration, or null when there is none (MCP, or no kodo.toml).
// The call graph is built only when the meta sets `min_confidence` (E0261 needs it).
std::vector<diag::Diagnostic> CheckPolicies(const SourceBuffer& source, const ast::Module& module,
                                            const TrustConfig* config);

}  // namespace trove::kodo::trust
