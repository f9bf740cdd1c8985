// The offline backend (docs/warden.md §7.3): deterministic naming heuristics over the facts,
// no network, byte-identical output for the same facts and callee names.
//
// The name comes from the strongest evidence, first match wins (Decision details in
// docs/decisions/0011-agents-backends-and-pass.md):
//   1. a referenced string:        str_<first words of the string>_<hex6>   confidence 0.35
//   2. a single forwarded import:  wrap_<field>_<hex6>                        confidence 0.35
//   3. shape of a leaf:            get_<hex6> (one load, no store),
//                                  set_<hex6> (one store, no load),
//                                  const_<hex6> (only constants)              confidence 0.2
//   4. otherwise:                  sub_<hex6>                                 confidence 0.2
// <hex6> is the first 6 hex digits of the stable_id base. Both confidences stay under
// SKIP_CONFIDENCE (0.5), so any stronger source replaces them. It never abstains. Export
// names and callee names (the call context) go into the summary, not the name.
// Thread safety: stateless; any thread.
#pragma once

#include "warden/agents/backend.h"

namespace trove::warden::agents {

inline constexpr double kOfflineGroundedConfidence = 0.35;
inline constexpr double kOfflineShapeConfidence = 0.2;

class OfflineBackend final : public Backend {
 public:
  std::string_view name() const override { return "offline"; }
  std::optional<std::string> model() const override { return std::nullopt; }
  Result<BackendReply> Propose(const FunctionFacts& facts, std::span<const CalleeName> callees,
                               base::Cancellation& cancel) override;
};

// The proposal the offline backend makes for `facts` (what Propose wraps).
Proposal OfflineProposal(const FunctionFacts& facts, std::span<const CalleeName> callees);

// Returns a lower-case snake_case slug of the first words (of two characters or more) of
// `text`: at most 4 words and 32 characters; empty when no such word exists. Exposed for tests.
std::string SlugOfString(std::string_view text);

}  // namespace trove::warden::agents
