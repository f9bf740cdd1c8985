// FakeAgentStore: an in-memory AgentStore for tests of agent passes. It applies the economy's
// rules for an agent write (docs/warden.md §6.2) in their simplest form and records every
// attempt, so a test can check what reached the gate.
// Test-only. Thread safety: one thread.
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "warden/agents/store.h"

namespace trove::warden::agents::testing {

class FakeAgentStore final : public AgentStore {
 public:
  struct Attempt {
    AgentWrite write;
    WriteOutcome outcome;
  };

  explicit FakeAgentStore(std::vector<FunctionFacts> functions, std::int64_t version_id = 1)
      : functions_(std::move(functions)), version_id_(version_id) {}

  void SetSymbol(const std::string& stable_id, SymbolState state) { symbols_[stable_id] = state; }
  std::optional<SymbolState> GetSymbol(const std::string& stable_id) const {
    auto it = symbols_.find(stable_id);
    if (it == symbols_.end()) return std::nullopt;
    return it->second;
  }
  const std::vector<Attempt>& attempts() const { return attempts_; }
  int symbol_reads() const { return symbol_reads_; }

  Result<std::vector<FunctionFacts>> Functions(std::int64_t version_id) override {
    if (version_id != version_id_) return Status::NotFound("unknown version");
    return functions_;
  }

  Result<std::optional<SymbolState>> Symbol(const std::string& stable_id) override {
    ++symbol_reads_;
    return GetSymbol(stable_id);
  }

  Result<WriteOutcome> WriteAgentProposal(const AgentWrite& write) override {
    WriteOutcome outcome = Decide(write);
    if (outcome.accepted) {
      symbols_[write.stable_id] =
          SymbolState{.name = write.name, .provenance = "agent", .confidence = write.confidence};
    }
    attempts_.push_back(Attempt{write, outcome});
    return outcome;
  }

  Result<WriteOutcome> PreviewAgentProposal(const AgentWrite& write) override {
    return Decide(write);
  }

  static int Rank(const std::string& provenance) {
    if (provenance == "human") return 5;
    if (provenance == "export") return 4;
    if (provenance == "oracle") return 3;
    if (provenance == "diff-carry") return 2;
    return 1;  // agent
  }

 private:
  // §6.2 for a write of provenance `agent` (rank 1, never human).
  WriteOutcome Decide(const AgentWrite& write) const {
    if (!std::isfinite(write.confidence) || write.confidence < 0 || write.confidence > 1 ||
        write.name.empty()) {
      return {false, "rejected: invalid write"};
    }
    std::optional<SymbolState> existing = GetSymbol(write.stable_id);
    if (!existing || !existing->name) return {true, "accepted: slot was unnamed"};
    if (existing->locked) return {false, "rejected: locked by a human"};
    if (*existing->name == write.name && Rank("agent") < Rank(existing->provenance)) {
      return {false, "rejected: corroborates the existing " + existing->provenance + " name"};
    }
    if (write.confidence > existing->confidence) {
      return {true, "accepted: confidence above the existing annotation"};
    }
    return {false, "rejected: existing " + existing->provenance +
                       " annotation has confidence >= the proposal's"};
  }

  std::vector<FunctionFacts> functions_;
  std::int64_t version_id_;
  std::map<std::string, SymbolState> symbols_;
  std::vector<Attempt> attempts_;
  int symbol_reads_ = 0;
};

}  // namespace trove::warden::agents::testing
