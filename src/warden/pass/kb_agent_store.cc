#include "warden/pass/kb_agent_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "base/env.h"
#include "base/pg.h"
#include "warden/kb/economy.h"
#include "warden/wasm/instruction.h"

namespace trove::warden::pass {

namespace {

// "agent:<backend>" -> "<backend>".
Result<std::string> BackendOfActor(const std::string& actor) {
  constexpr std::string_view kPrefix = "agent:";
  if (actor.rfind(kPrefix, 0) != 0 || actor.size() == kPrefix.size()) {
    return Status::InvalidArgument(fmt::format("agent write with actor '{}'", actor));
  }
  return actor.substr(kPrefix.size());
}

}  // namespace

Result<std::vector<agents::FunctionFacts>> KbAgentStore::Functions(std::int64_t version_id) {
  ASSIGN_OR_RETURN(std::vector<kb::FunctionRecord> records, kb_.FunctionRecords(version_id));
  std::vector<agents::FunctionFacts> out;
  for (kb::FunctionRecord& r : records) {
    if (r.is_import) continue;
    agents::FunctionFacts f;
    f.func_index = r.func_index;
    f.stable_id = std::move(r.stable_id);
    f.type_signature = std::move(r.type_signature);
    f.call_targets = std::move(r.call_targets);
    f.referenced_strings = std::move(r.referenced_strings);
    f.raw_name = std::move(r.raw_name);
    std::optional<std::vector<std::string_view>> mnemonics = wasm::DecodeOpcodeStream(r.opcodes);
    if (!mnemonics) {
      return Status::Malformed(
          fmt::format("stored opcodes of function {} are corrupt", f.func_index));
    }
    f.instruction_mnemonics.assign(mnemonics->begin(), mnemonics->end());
    f.is_exported = !r.export_names.empty();
    f.export_names = std::move(r.export_names);
    for (std::uint32_t callee : r.defined_callees) {
      if (std::find(f.defined_callees.begin(), f.defined_callees.end(), callee) ==
          f.defined_callees.end()) {
        f.defined_callees.push_back(callee);
      }
    }
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.func_index < b.func_index; });
  return out;
}

Result<std::optional<agents::SymbolState>> KbAgentStore::Symbol(const std::string& stable_id) {
  ASSIGN_OR_RETURN(std::optional<kb::SymbolRecord> s, kb_.GetSymbol(stable_id));
  if (!s) return std::optional<agents::SymbolState>();
  return std::optional<agents::SymbolState>(
      agents::SymbolState{s->name, s->provenance, s->confidence, s->locked});
}

Result<agents::WriteOutcome> KbAgentStore::WriteAgentProposal(const agents::AgentWrite& write) {
  ASSIGN_OR_RETURN(std::string backend, BackendOfActor(write.actor));
  kb::Proposal p;
  p.name = write.name;
  if (!write.summary.empty()) p.summary = write.summary;
  p.confidence = write.confidence;
  p.details_json = write.details_json.empty() ? "{}" : write.details_json;
  ASSIGN_OR_RETURN(kb::Decision d, kb_.AgentPropose(backend, write.stable_id, std::move(p)));
  return agents::WriteOutcome{d.accepted, d.reason};
}

Result<agents::WriteOutcome> KbAgentStore::PreviewAgentProposal(const agents::AgentWrite& write) {
  // The gate's pure decision against the stored symbol; nothing is written.
  ASSIGN_OR_RETURN(std::optional<kb::SymbolRecord> s, kb_.GetSymbol(write.stable_id));
  std::optional<kb::ExistingSymbol> existing;
  if (s)
    existing =
        kb::ExistingSymbol{s->name, s->summary, s->provenance, s->actor, s->confidence, s->locked};
  kb::SymbolWrite w;
  w.name = write.name;
  if (!write.summary.empty()) w.summary = write.summary;
  w.provenance = "agent";
  w.actor = write.actor;
  w.confidence = write.confidence;
  w.details_json = write.details_json;
  const kb::Decision d = kb::Decide(existing, w);
  return agents::WriteOutcome{d.accepted, d.reason};
}

std::string ProjectDirOfDb(const std::string& db_path) {
  // A KB at a PostgreSQL URL has no project directory, whatever its query string says.
  if (base::pg::IsPostgresUrl(db_path)) return {};
  constexpr std::string_view kProjectDb = "/.warden/warden.db";
  if (db_path.size() > kProjectDb.size() && db_path.ends_with(kProjectDb)) {
    return db_path.substr(0, db_path.size() - kProjectDb.size());
  }
  return {};
}

Result<agents::AgentConfig> LoadAgentConfig(base::Env& env, const std::string& project_dir) {
  agents::ConfigSources sources;
  sources.getenv = agents::ProcessEnvironment();
  auto load = [&env](const std::string& path, std::map<std::string, std::string>& into) -> Status {
    if (path.empty() || !env.FileExists(path)) return {};
    ASSIGN_OR_RETURN(std::string text, env.ReadFile(path));
    Result<std::map<std::string, std::string>> parsed = agents::ParseConfigJson(text);
    if (!parsed.ok()) return std::move(parsed).status().WithContext(path);
    into = std::move(parsed).value();
    return {};
  };
  if (!project_dir.empty()) {
    RETURN_IF_ERROR(load(project_dir + "/.warden/config.json", sources.project));
  }
  std::string global;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    global = std::string(xdg) + "/warden/config.json";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    global = std::string(home) + "/.config/warden/config.json";
  }
  RETURN_IF_ERROR(load(global, sources.global));
  return agents::ResolveAgentConfig(sources);
}

}  // namespace trove::warden::pass
