// AgentStore: what an agent pass needs from the knowledge base, and nothing more. The lead's
// adapter implements it over warden/kb (Kb::UpsertSymbol is the one write gate, docs/warden.md
// §6.2); tests use an in-memory fake. agents/ never includes kb/ headers.
// Thread safety: one pass uses a store from one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "warden/agents/facts.h"

namespace trove::warden::agents {

// The current annotation of one function, as far as scheduling and prompts need it.
struct SymbolState {
  std::optional<std::string> name;  // nullopt: unnamed slot
  std::string provenance;           // "human", "export", "oracle", "diff-carry", "agent"
  double confidence = 0;
  bool locked = false;
};

// One agent write, built by the pass; the store adds provenance `agent` itself.
struct AgentWrite {
  std::string stable_id;
  std::string name;
  std::string summary;
  double confidence = 0;
  std::string actor;         // "agent:<backend>"
  std::string details_json;  // evidence details (docs/warden.md §6.4): version, function, backend,
                             // model, ...
};

// The gate's decision (docs/warden.md §6.2); `reason` begins with "accepted:" or "rejected:".
struct WriteOutcome {
  bool accepted = false;
  std::string reason;
};

class AgentStore {
 public:
  virtual ~AgentStore() = default;

  // Returns the facts of every defined function of `version_id`, in index order. An unknown
  // version is kNotFound.
  virtual Result<std::vector<FunctionFacts>> Functions(std::int64_t version_id) = 0;

  // Returns the symbol of `stable_id`, or nullopt when there is none.
  virtual Result<std::optional<SymbolState>> Symbol(const std::string& stable_id) = 0;

  // Submits `write` to the economy gate as provenance `agent` (UpsertSymbol: decision, write
  // and evidence row in one transaction) and returns the decision.
  virtual Result<WriteOutcome> WriteAgentProposal(const AgentWrite& write) = 0;

  // Returns the decision the gate would take for `write` now, writing nothing, not even
  // evidence (dry runs).
  virtual Result<WriteOutcome> PreviewAgentProposal(const AgentWrite& write) = 0;
};

}  // namespace trove::warden::agents
