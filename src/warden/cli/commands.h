// The `warden` commands (docs/warden.md §2.2), one function each, returning the exit code.
// Output goes to stdout, diagnostics to stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "warden/server/mcp_main.h"  // McpRunOptions (the policy flags' plain struct)

namespace trove::base {
class Env;
}

namespace trove::warden::cli {

// Exit codes (§2.4).
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitKb = 3;
inline constexpr int kExitMalformed = 4;
inline constexpr int kExitUnavailable = 5;
inline constexpr int kExitUnknown = 6;

struct GlobalOptions {
  std::optional<std::string> db;
  bool json = false;
  std::string cwd;
  bool stdout_is_terminal = false;
  bool stderr_is_terminal = false;  // progress bars are drawn only then
  bool stdout_colour = false;       // a terminal and NO_COLOR unset (base/terminal.h)
};

struct IngestArgs {
  std::string wasm;
  std::optional<std::string> glue;
  std::string label;
  bool no_seed = false;
  std::uint32_t threads = 0;
};

struct FuncsArgs {
  std::optional<std::string> version;
  bool unnamed = false;
  std::optional<double> below;
  std::optional<std::string> provenance;
  bool imports = false;
  std::optional<int> limit;
};

struct ShowArgs {
  std::string func;
  std::optional<std::string> version;
  bool lift = false;
};

struct SetNameArgs {
  std::string func;
  std::optional<std::string> name;
  std::optional<std::string> version;
  std::optional<std::string> summary;
  bool clear = false;
};

struct ExportArgs {
  std::string label;
  std::string format;
  std::optional<std::string> out;
};

struct ReportArgs {
  std::optional<std::string> version;
  std::string html;       // the page's path; written atomically (temporary file, then rename)
  std::string generator;  // "warden (trove) VERSION", shown on the page
};

struct AgentArgs {
  std::optional<std::string> version;
  std::string backend = "auto";
  std::optional<std::string> model;
  bool all = false;
  std::optional<std::int64_t> limit;
  bool dry_run = false;
};

// `mcp`'s flags: --transport, --http, --listen (alias), --log-level and the shared policy
// flags (server::AddPolicyFlags, warden-net only). db_path is filled by RunMcp.
using McpArgs = server::McpRunOptions;

int RunInit(base::Env& env, const GlobalOptions& global, const std::string& project);
// `warden init --db postgresql://…`: creates the KB's schema in that database when it is empty
// and a project here whose config names it (`kb.url` in .warden/config.json), so that later
// commands and `warden mcp` find the team's KB without --db (docs/warden.md §2.1).
int RunInitAtUrl(base::Env& env, const GlobalOptions& global, const std::string& project);
int RunIngest(base::Env& env, const GlobalOptions& global, const IngestArgs& args);
int RunVersions(base::Env& env, const GlobalOptions& global);
int RunCoverage(base::Env& env, const GlobalOptions& global,
                const std::optional<std::string>& version);
int RunFuncs(base::Env& env, const GlobalOptions& global, const FuncsArgs& args);
int RunShow(base::Env& env, const GlobalOptions& global, const ShowArgs& args);
int RunSetName(base::Env& env, const GlobalOptions& global, const SetNameArgs& args);
int RunVerify(base::Env& env, const GlobalOptions& global, const std::string& file);
int RunExport(base::Env& env, const GlobalOptions& global, const ExportArgs& args);
// `report [<version>] --html FILE` (issue 24): the self-contained HTML page of warden/report/.
int RunReport(base::Env& env, const GlobalOptions& global, const ReportArgs& args);
int RunAgent(base::Env& env, const GlobalOptions& global, const AgentArgs& args);
// Blocks the shutdown signals first (before any thread starts), then serves.
int RunMcp(base::Env& env, const GlobalOptions& global, const McpArgs& args);
// `audit verify|stats FILE [--json]` (docs/warden.md §2.2): `args` are the words after `audit`.
int RunAudit(const std::vector<std::string>& args);

struct ConfigArgs {
  std::string key;
  std::optional<std::string> value;  // set: the value; get: empty
  bool project = false;              // .warden/config.json instead of the global file
};
// `config set KEY VALUE [--project]` (§2.1) and `config get KEY [--project]` (secrets print as
// <set>). Unknown key: exit 2; unset on get: exit 6.
int RunConfig(base::Env& env, const GlobalOptions& global, const ConfigArgs& args);

}  // namespace trove::warden::cli
