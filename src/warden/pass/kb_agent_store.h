// The agent pass over a real KB: agents::AgentStore implemented with warden/kb, so every
// proposal goes through Kb's one write gate as provenance `agent`, actor `agent:<backend>`
// (docs/warden.md §6.3, §7.4). Also the one place that turns configuration files into an
// agents::AgentConfig, for the CLI and the MCP server alike.
// Thread safety: a KbAgentStore is used by one pass on one thread.
#pragma once

#include <string>

#include "base/status.h"
#include "warden/agents/config.h"
#include "warden/agents/store.h"
#include "warden/kb/kb.h"

namespace trove::base {
class Env;
}

namespace trove::warden::pass {

class KbAgentStore final : public agents::AgentStore {
 public:
  explicit KbAgentStore(kb::Kb& kb) : kb_(kb) {}

  Result<std::vector<agents::FunctionFacts>> Functions(std::int64_t version_id) override;
  Result<std::optional<agents::SymbolState>> Symbol(const std::string& stable_id) override;
  Result<agents::WriteOutcome> WriteAgentProposal(const agents::AgentWrite& write) override;
  Result<agents::WriteOutcome> PreviewAgentProposal(const agents::AgentWrite& write) override;

 private:
  kb::Kb& kb_;
};

// Reads the agent configuration (§2.1): environment, then `<project>/.warden/config.json`
// when `project_dir` is not empty, then $XDG_CONFIG_HOME/warden/config.json (default
// $HOME/.config/warden/config.json). A missing file is no error; a malformed one is.
Result<agents::AgentConfig> LoadAgentConfig(base::Env& env, const std::string& project_dir);

// Returns the project directory of a KB at `<dir>/.warden/warden.db` (that `<dir>`), or an
// empty string for a KB elsewhere, a PostgreSQL URL included (it has no directory).
std::string ProjectDirOfDb(const std::string& db_path);

}  // namespace trove::warden::pass
