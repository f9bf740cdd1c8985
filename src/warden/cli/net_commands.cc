// The `warden` commands that need the agent backends (libcurl) or the MCP server (cpp-httplib,
// OpenSSL): agent, mcp and config. They are linked into warden-net only; `warden` runs them by
// exec'ing warden-net beside it (warden_main.cc, docs/decisions/0043-warden-lean-cli.md).
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "base/env.h"
#include "base/pg.h"
#include "base/status.h"
#include "warden/agents/backend.h"
#include "warden/agents/config.h"
#include "warden/agents/pipeline.h"
#include "warden/cli/cli_support.h"
#include "warden/cli/commands.h"
#include "warden/kb/kb.h"
#include "warden/pass/kb_agent_store.h"
#include "warden/server/mcp_main.h"

namespace trove::warden::cli {

using base::StatusCode;

int RunAgent(base::Env& env, const GlobalOptions& global, const AgentArgs& args) {
  int exit = kExitOk;
  std::optional<OpenedVersion> opened = OpenVersion(env, global, args.version, &exit);
  if (!opened) return exit;
  kb::Kb* k = opened->kb.get();
  const std::optional<std::int64_t> id = opened->version_id;
  // A KB at a URL has no project directory: the working directory's project config applies.
  const std::string project_dir = base::pg::IsPostgresUrl(k->path())
                                      ? kb::FindProjectDir(env, global.cwd)
                                      : pass::ProjectDirOfDb(k->path());
  Result<agents::AgentConfig> config = pass::LoadAgentConfig(env, project_dir);
  if (!config.ok()) {
    Error(config.status().message());
    return kExitUsage;
  }
  Result<std::unique_ptr<agents::Backend>> backend =
      agents::MakeBackend(args.backend, args.model, *config);
  if (!backend.ok()) {
    Error(backend.status().message());
    return backend.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitUnavailable;
  }
  pass::KbAgentStore store(*k);
  agents::PassOptions options;
  options.version_id = *id;
  options.only_unconfident = !args.all;
  options.limit = args.limit;
  options.dry_run = args.dry_run;
  options.channel = "cli";
  base::Cancellation cancel;
  TerminalProgress progress(global.stderr_is_terminal && !global.json);
  Result<agents::RunSummary> r =
      agents::RunAgentPass(store, **backend, options, cancel, progress.Sink());
  progress.Clear();
  if (!r.ok()) {
    Error(r.status().message());
    const StatusCode c = r.status().code();
    if (c == StatusCode::kPermissionDenied || c == StatusCode::kUnsupported) {
      return kExitUnavailable;
    }
    return ExitFor(r.status());
  }
  if (global.json) {
    std::fputs((agents::RunSummaryToJson(*r) + "\n").c_str(), stdout);
    return kExitOk;
  }
  std::string out = fmt::format(
      "backend {}: considered {}, proposed {}, written {}, rejected by the verifier {}, by the "
      "economy {}, skipped (locked or confident) {}{}\n",
      r->backend, r->considered, r->proposed, r->written, r->rejected_by_verifier,
      r->rejected_by_economy, r->skipped_existing, args.dry_run ? " (dry run)" : "");
  for (const agents::RunDetail& d : r->details) {
    out += fmt::format("  func[{}] {} {} {} {}\n", d.func_index, agents::OutcomeName(d.outcome),
                       d.name.value_or("-"), Conf(d.confidence), d.reason);
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int RunMcp(base::Env& env, const GlobalOptions& global, const McpArgs& args) {
  // No empty database is ever created here (docs/warden.md §2.1): discovery or --db, then open
  // existing.
  Result<std::string> path = kb::FindDatabase(env, global.db, global.cwd);
  if (!path.ok()) {
    Error(path.status().message());
    return kExitKb;
  }
  server::McpRunOptions options = args;
  options.db_path = *path;
  server::PrepareMcpProcess();
  return server::RunWardenMcp(env, options);
}

int RunAudit(const std::vector<std::string>& args) { return server::RunAuditCommand(args); }

namespace {

// docs/warden.md §2.1's keys; anything else is a usage error.
constexpr std::string_view kConfigKeys[] = {
    "agent.backend",   "openai.api_key",     "openai.model", "openai.base_url", "anthropic.api_key",
    "anthropic.model", "anthropic.base_url", "oracle.store", "kb.url"};

bool IsSecretKey(std::string_view key) { return key.ends_with(".api_key"); }

// The config file `config set/get` use: with --project the project's .warden/config.json (of
// the --db file's project, else of the nearest .warden/ here or above: not through
// FindDatabase, which reads kb.url from these very files), else
// $XDG_CONFIG_HOME/warden/config.json ($HOME/.config/...).
Result<std::string> ConfigPath(base::Env& env, const GlobalOptions& global, bool project) {
  if (project) {
    const std::string dir = global.db.has_value() && !base::pg::IsPostgresUrl(*global.db)
                                ? pass::ProjectDirOfDb(*global.db)
                                : kb::FindProjectDir(env, global.cwd);
    if (dir.empty()) {
      return Status::NotFound(
          "config --project: no WARDEN project (.warden/) found here or above (run 'warden "
          "init')");
    }
    return dir + "/.warden/config.json";
  }
  std::string global_file = kb::GlobalConfigPath();
  if (global_file.empty())
    return Status::NotFound("config: neither XDG_CONFIG_HOME nor HOME is set");
  return global_file;
}

// Whether `key` is printed redacted by `config get`: a URL's password never shows.
bool IsUrlKey(std::string_view key) { return key == "kb.url"; }

Result<std::map<std::string, std::string>> ReadConfigFile(base::Env& env, const std::string& path) {
  if (!env.FileExists(path)) return std::map<std::string, std::string>();
  ASSIGN_OR_RETURN(std::string text, env.ReadFile(path));
  Result<std::map<std::string, std::string>> parsed = agents::ParseConfigJson(text);
  if (!parsed.ok()) return std::move(parsed).status().WithContext(path);
  return parsed;
}

}  // namespace

int RunConfig(base::Env& env, const GlobalOptions& global, const ConfigArgs& args) {
  if (std::find(std::begin(kConfigKeys), std::end(kConfigKeys), args.key) ==
      std::end(kConfigKeys)) {
    std::string known;
    for (std::string_view k : kConfigKeys) known += (known.empty() ? "" : ", ") + std::string(k);
    Error(fmt::format("unknown config key '{}' (one of {})", args.key, known));
    return kExitUsage;
  }
  Result<std::string> path = ConfigPath(env, global, args.project);
  if (!path.ok()) {
    Error(path.status().message());
    return kExitKb;
  }
  Result<std::map<std::string, std::string>> values = ReadConfigFile(env, *path);
  if (!values.ok()) {
    Error(values.status().message());
    return kExitMalformed;
  }
  if (!args.value) {  // config get
    auto it = values->find(args.key);
    if (it == values->end()) {
      Error(fmt::format("{} is not set in {}", args.key, *path));
      return kExitUnknown;
    }
    // Secrets are never printed (docs/warden.md §2.1), nor a URL's password.
    const std::string shown = IsSecretKey(args.key) ? std::string("<set>")
                              : IsUrlKey(args.key)  ? base::pg::RedactUrl(it->second)
                                                    : it->second;
    std::fputs(fmt::format("{}\n", shown).c_str(), stdout);
    return kExitOk;
  }
  if (args.key == "agent.backend" && !agents::CanonicalBackendName(*args.value).ok()) {
    Error(
        fmt::format("agent.backend: unknown backend '{}' (auto, offline, openai, codex, oai or "
                    "anthropic)",
                    *args.value));
    return kExitUsage;
  }
  if (args.key == "kb.url" && !base::pg::IsPostgresUrl(*args.value)) {
    Error(
        fmt::format("kb.url: '{}' is not a postgresql:// or postgres:// URL (a SQLite KB is "
                    "found by --db or .warden/warden.db)",
                    base::pg::RedactUrl(*args.value)));
    return kExitUsage;
  }
  (*values)[args.key] = *args.value;
  Json doc = Json::object();
  for (const auto& [k, v] : *values) doc[k] = v;
  const std::size_t slash = path->rfind('/');
  if (slash != std::string::npos && slash > 0) {
    std::error_code ec;
    std::filesystem::create_directories(path->substr(0, slash), ec);
  }
  Status s =
      WritePrivateFile(*path, doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  if (!s.ok()) {
    Error(s.message());
    return kExitKb;
  }
  return kExitOk;
}

}  // namespace trove::warden::cli
