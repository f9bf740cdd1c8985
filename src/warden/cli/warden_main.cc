// warden: the WARDEN command line (docs/warden.md §2). Results go to stdout, diagnostics to
// stderr; every read command takes --json and then prints the objects of the matching MCP
// tool (views/json_views.h). Exit codes (§2.4): 0 success, 1 a check failed, 2 usage error,
// 3 KB missing or unusable, 4 malformed input, 5 feature unavailable, 6 unknown version,
// function, label or stable_id.
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/command_line.h"
#include "base/env.h"
#include "base/terminal.h"
#include "trove_version.h"  // generated: trove::VersionFull()
#include "warden/cli/cli_support.h"
#include "warden/cli/commands.h"
#include "warden/cli/diff_command.h"
#ifndef TROVE_WARDEN_LEAN
#include "warden/cli/demo_command.h"
#endif
#include "warden/cli/kb_command.h"
#include "warden/cli/oracle_command.h"

namespace {

#ifdef TROVE_WARDEN_LEAN
// `warden` is built without the agent backends and the MCP server, whose libraries (libcurl,
// cpp-httplib, libssl) cost every run ~18 ms to load and initialise; the commands that need
// them (agent, mcp, config) run in warden-net, the same command line with everything linked,
// installed beside it. The exec keeps the process, its arguments, environment and standard
// streams (docs/decisions/0043-warden-lean-cli.md). Returns only on failure.
int ExecWardenNet(char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string net = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "warden-net";
  ::execv(net.c_str(), argv);
  trove::base::PrintError(trove::warden::cli::kProgram,
                          fmt::format("cannot run {}: {} (the agent, mcp, config and audit "
                                      "commands run in warden-net, which is installed beside "
                                      "warden)",
                                      net, std::strerror(errno)));
  return trove::warden::cli::kExitUnavailable;
}

// Returns the command word of `argv`: the first word that is neither an option nor the value
// of --db, the one global option that takes a value; empty when there is none.
std::string_view CommandWord(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--db") {
      ++i;
    } else if (!arg.starts_with("-")) {
      return arg;
    }
  }
  return {};
}

// Whether `command` runs in warden-net (its flags, --help included, are warden-net's: the MCP
// policy flags and `audit` live in the MCP core, which this binary does not link).
bool RunsInWardenNet(std::string_view command) {
  return command == "agent" || command == "mcp" || command == "config" || command == "audit" ||
         command == "demo";
}
#endif

// When the command word (or, under `config`, the config command) names no command, prints
// which word is unknown and which commands there are and returns exit 2 (§2.4); CLI11 would
// say only "A subcommand is required". Returns nothing for every other parse error.
std::optional<int> ReportUnknownCommand(CLI::App& app, const CLI::ParseError& error) {
  if (dynamic_cast<const CLI::RequiredError*>(&error) == nullptr) return std::nullopt;
  CLI::App* level = &app;
  std::string parent;
  while (!level->get_subcommands().empty()) {
    level = level->get_subcommands().front();
    parent += (parent.empty() ? "" : " ") + level->get_name();
  }
  if (level->get_require_subcommand_min() == 0) return std::nullopt;
  std::vector<std::string> commands;
  for (const CLI::App* sub : level->get_subcommands([](CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
  }
  // Every command of docs/warden.md §2.2 is built: no "planned" notes.
  const std::string message = trove::base::UnknownCommandMessage(
      trove::base::FirstCommandWord(app.remaining(true)), commands, {}, parent);
  trove::base::PrintError(trove::warden::cli::kProgram, message);
  return trove::warden::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trove::warden::cli;
#ifdef TROVE_WARDEN_LEAN
  if (RunsInWardenNet(CommandWord(argc, argv))) return ExecWardenNet(argv);
#endif
  CLI::App app{"WARDEN: a WebAssembly reverse-engineering knowledge base", "warden"};
  app.set_version_flag("--version", std::string("warden (trove) ") + trove::VersionFull());
  app.require_subcommand(1);
  // CLI11's own usage errors start with the program's name too.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return trove::base::ErrorLine(kProgram, e.what()) + "Run with --help for more information.\n";
  });
  app.fallthrough();  // --db may come after the command: `warden ingest --db kb.db f.wasm`

  GlobalOptions global;
  app.add_option("--db", global.db, "Path of the KB (default: discovered, see 'warden init')");

  // init
  std::string project;
  CLI::App* init = app.add_subcommand("init", "Create .warden/warden.db in this directory");
  init->add_option("--project", project, "Project name (default: the directory name)");
  init->add_flag("--json", global.json, "Print JSON");

  // ingest
  IngestArgs ingest_args;
  CLI::App* ingest = app.add_subcommand("ingest", "Parse, fingerprint and store a .wasm module");
  ingest->add_option("file", ingest_args.wasm, "The .wasm module")->required();
  ingest->add_option("--glue", ingest_args.glue, "The module's Emscripten JS glue");
  ingest->add_option("--label", ingest_args.label, "Version label (default v<N>)");
  ingest->add_flag("--no-seed", ingest_args.no_seed, "Do not seed names from the artefact");
  ingest->add_option("--threads", ingest_args.threads, "Decoding threads (default: all cores)");
  ingest->add_flag("--json", global.json, "Print JSON");

  // versions
  CLI::App* versions = app.add_subcommand("versions", "List ingested versions");
  versions->add_flag("--json", global.json, "Print JSON");

  // coverage
  std::optional<std::string> coverage_version;
  CLI::App* coverage = app.add_subcommand("coverage", "Symbol coverage of a version");
  coverage->add_option("version", coverage_version, "Label or id (default: the latest)");
  coverage->add_flag("--json", global.json, "Print JSON");

  // funcs
  FuncsArgs funcs_args;
  CLI::App* funcs = app.add_subcommand("funcs", "List the functions of a version");
  funcs->add_option("version", funcs_args.version, "Label or id (default: the latest)");
  funcs->add_flag("--unnamed", funcs_args.unnamed, "Only unnamed functions");
  funcs->add_option("--below", funcs_args.below, "Unnamed ones and those under this confidence")
      ->check(CLI::Range(0.0, 1.0));
  funcs->add_option("--provenance", funcs_args.provenance, "Only this provenance");
  funcs->add_flag("--imports", funcs_args.imports, "Include imported functions");
  funcs->add_option("--limit", funcs_args.limit, "At most N rows")->check(CLI::PositiveNumber);
  funcs->add_flag("--json", global.json, "Print JSON");

  // show
  ShowArgs show_args;
  CLI::App* show = app.add_subcommand("show", "What is known about one function");
  show->add_option("func", show_args.func, "Index, func[N], stable_id (prefix) or name")
      ->required();
  show->add_option("--version", show_args.version, "Label or id (default: the latest)");
  show->add_flag("--lift", show_args.lift, "Add the lifted pseudo-C");
  show->add_flag("--json", global.json, "Print JSON");

  // set-name
  SetNameArgs set_args;
  CLI::App* set_name = app.add_subcommand("set-name", "Name a function (human, locked)");
  set_name->add_option("func", set_args.func, "Index, func[N], stable_id (prefix) or name")
      ->required();
  set_name->add_option("name", set_args.name, "The name");
  set_name->add_option("--version", set_args.version, "Label or id (default: the latest)");
  set_name->add_option("--summary", set_args.summary, "What the function does");
  set_name->add_flag("--clear", set_args.clear, "Empty the slot and release the lock");
  set_name->add_flag("--json", global.json, "Print JSON");

  // verify
  std::string verify_file;
  CLI::App* verify =
      app.add_subcommand("verify", "Check that fingerprints are deterministic (no KB needed)");
  verify->add_option("file", verify_file, "The .wasm module")->required();
  verify->add_flag("--json", global.json, "Print JSON");

  // export
  ExportArgs export_args;
  CLI::App* export_cmd = app.add_subcommand("export", "Export a version's annotations");
  export_cmd->add_option("label", export_args.label, "Version label or id")->required();
  export_cmd->add_option("--format", export_args.format, "headers, pseudo, kb-text or ghidra")
      ->required();
  export_cmd->add_option("--out", export_args.out, "Write to FILE instead of stdout");
  export_cmd->add_flag("--json", global.json,
                       "Print one JSON object: the export in content (null with --out)");

  // report
  ReportArgs report_args;
  report_args.generator = std::string("warden (trove) ") + trove::VersionFull();
  CLI::App* report =
      app.add_subcommand("report", "Write a self-contained HTML report of a version");
  report->add_option("version", report_args.version, "Label or id (default: the latest)");
  report->add_option("--html", report_args.html, "Write the page to FILE")->required();
  report->add_flag("--json", global.json, "Print JSON");

  // diff
  DiffArgs diff_args;
  CLI::App* diff_cmd =
      app.add_subcommand("diff", "Pair two versions' functions, store the report, carry names");
  diff_cmd->add_option("from", diff_args.from, "Old version: label or id")->required();
  diff_cmd->add_option("to", diff_args.to, "New version: label or id")->required();
  diff_cmd->add_flag("--carry", diff_args.carry,
                     "Carry old names to changed functions (provenance diff-carry)");
  diff_cmd->add_option("--changelog", diff_args.changelog, "Also write the changelog to FILE");
  diff_cmd->add_flag("--json", global.json, "Print the report as JSON");

  // demo (runs in warden-net: its steps include agent passes)
  std::optional<std::string> demo_dir;
  CLI::App* demo = app.add_subcommand("demo", "Run the whole loop offline on generated modules");
  demo->add_option("--dir", demo_dir, "Work in DIR (default: a new temporary directory)");
  // oracle build / identify
  CLI::App* oracle_cmd =
      app.add_subcommand("oracle", "Build the Emscripten Oracle store; name runtime functions");
  oracle_cmd->require_subcommand(1);
  OracleBuildArgs oracle_build_args;
  CLI::App* oracle_build =
      oracle_cmd->add_subcommand("build", "Add the named functions of corpus modules to the store");
  oracle_build->add_option("modules", oracle_build_args.modules, "Named .wasm corpus modules")
      ->required();
  oracle_build->add_option("--library", oracle_build_args.library,
                           "Library tag (musl, libc++, dlmalloc, ...)");
  oracle_build->add_option("--emscripten-version", oracle_build_args.emscripten_version,
                           "Emscripten version the modules were built with");
  oracle_build->add_option("--opt-level", oracle_build_args.opt_level, "O0, O2, O3, Os or Oz");
  oracle_build->add_option("--flags", oracle_build_args.flags, "Codegen flags tag");
  oracle_build->add_option("--source-ref", oracle_build_args.source_ref,
                           "Where the modules came from (default: the file name)");
  oracle_build->add_option("--store", oracle_build_args.store,
                           "Store path (default: oracle.store, else .warden/oracle.db)");
  oracle_build->add_flag("--json", global.json, "Print JSON");
  OracleIdentifyArgs oracle_identify_args;
  CLI::App* oracle_identify =
      oracle_cmd->add_subcommand("identify", "Match a version against the store; write names");
  oracle_identify->add_option("version", oracle_identify_args.version,
                              "Label or id (default: the latest)");
  oracle_identify->add_option("--store", oracle_identify_args.store,
                              "Store path (default: oracle.store, else .warden/oracle.db)");
  oracle_identify->add_flag("--dry-run", oracle_identify_args.dry_run, "Write nothing");
  oracle_identify->add_flag("--json", global.json, "Print JSON");

  // kb migrate
  KbMigrateArgs kb_migrate_args;
  CLI::App* kb_cmd = app.add_subcommand("kb", "Copy the KB to another back end");
  kb_cmd->require_subcommand(1);
  CLI::App* kb_migrate = kb_cmd->add_subcommand(
      "migrate", "Copy the KB into an empty PostgreSQL database or SQLite file");
  kb_migrate->add_option("--to", kb_migrate_args.to, "postgresql://... URL or SQLite file path")
      ->required();
  kb_migrate->add_flag("--json", global.json, "Print JSON");

  // agent
  AgentArgs agent_args;
  CLI::App* agent = app.add_subcommand("agent", "Run an agent pass: propose, verify, write back");
  agent->add_option("version", agent_args.version, "Label or id (default: the latest)");
  agent->add_option("--version", agent_args.version, "Same as the positional version");
  agent->add_option("--backend", agent_args.backend,
                    "auto, offline, openai (codex, oai) or anthropic");
  agent->add_option("--model", agent_args.model, "Provider model (default: the backend's)");
  agent->add_flag("--all", agent_args.all, "Also revisit functions named with confidence >= 0.5");
  agent->add_option("--limit", agent_args.limit, "At most N backend calls")
      ->check(CLI::PositiveNumber);
  agent->add_flag("--dry-run", agent_args.dry_run, "Write nothing");
  agent->add_flag("--json", global.json, "Print JSON");

  // mcp
  McpArgs mcp_args;
  CLI::App* mcp = app.add_subcommand("mcp", "Serve the KB to MCP clients (stdio by default)");
  mcp->add_option("--http", mcp_args.http_port,
                  "Serve Streamable HTTP on PORT at --host (0: any free port)")
      ->check(CLI::Range(0, 65535));
  mcp->add_option("--transport", mcp_args.transport, "stdio or http (http alone: port 8765)")
      ->check(CLI::IsMember({"stdio", "http"}));
  mcp->add_option("--listen", mcp_args.listen, "HOST:PORT, the same as --host HOST --http PORT");
  mcp->add_option("--log-level", mcp_args.log_level, "debug, info, warning or error")
      ->check(CLI::IsMember({"debug", "info", "warning", "error"}));
#ifndef TROVE_WARDEN_LEAN
  trove::warden::server::AddPolicyFlags(*mcp, mcp_args);  // --host, --auth, --allow-root, ...
#endif

  // config set / get
  ConfigArgs config_args;
  CLI::App* config = app.add_subcommand("config", "Read or write a WARDEN setting");
  config->require_subcommand(1);
  CLI::App* config_set = config->add_subcommand("set", "Write KEY = VALUE (mode 0600)");
  config_set->add_option("key", config_args.key, "agent.backend, openai.api_key, ...")->required();
  std::string config_value;
  config_set->add_option("value", config_value, "The value")->required();
  config_set->add_flag("--project", config_args.project, "Write .warden/config.json instead");
  CLI::App* config_get = config->add_subcommand("get", "Print KEY (API keys print as <set>)");
  config_get->add_option("key", config_args.key, "agent.backend, openai.model, ...")->required();
  config_get->add_flag("--project", config_args.project, "Read .warden/config.json instead");

  // audit verify / stats
  CLI::App* audit = app.add_subcommand("audit", "Check or summarize an mcp --audit-log file");
  audit->require_subcommand(1);
  std::string audit_file;
  bool audit_json = false;
  CLI::App* audit_verify =
      audit->add_subcommand("verify", "Check the hash chain; name the first bad record");
  CLI::App* audit_stats = audit->add_subcommand("stats", "Calls, errors and latency per tool");
  for (CLI::App* sub : {audit_verify, audit_stats}) {
    sub->add_option("file", audit_file, "The audit log (JSON Lines)")->required();
    sub->add_flag("--json", audit_json, "Print JSON");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (std::optional<int> code = ReportUnknownCommand(app, e)) return *code;
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }

  trove::base::PosixEnv env;
  std::error_code ec;
  global.cwd = std::filesystem::current_path(ec).string();
  const trove::base::TerminalInfo terminal = trove::base::TerminalInfo::Detect();
  global.stdout_is_terminal = terminal.stdout_terminal;
  global.stderr_is_terminal = terminal.stderr_progress;
  global.stdout_colour = terminal.stdout_colour;

  if (*init) return RunInit(env, global, project);
  if (*ingest) return RunIngest(env, global, ingest_args);
  if (*versions) return RunVersions(env, global);
  if (*coverage) return RunCoverage(env, global, coverage_version);
  if (*funcs) return RunFuncs(env, global, funcs_args);
  if (*show) return RunShow(env, global, show_args);
  if (*set_name) return RunSetName(env, global, set_args);
  if (*verify) return RunVerify(env, global, verify_file);
  if (*export_cmd) return RunExport(env, global, export_args);
  if (*report) return RunReport(env, global, report_args);
  if (*diff_cmd) return RunDiff(env, global, diff_args);
  if (*oracle_build) return RunOracleBuild(env, global, oracle_build_args);
  if (*oracle_identify) return RunOracleIdentify(env, global, oracle_identify_args);
  if (*kb_migrate) return RunKbMigrate(env, global, kb_migrate_args);
#ifdef TROVE_WARDEN_LEAN
  if (*agent || *mcp || *config || *audit || *demo) return ExecWardenNet(argv);
#else
  if (*demo) return RunDemo(env, global, {.dir = demo_dir});
  if (*agent) return RunAgent(env, global, agent_args);
  if (*mcp) return RunMcp(env, global, mcp_args);
  if (*audit) {
    std::vector<std::string> words = {*audit_verify ? "verify" : "stats", audit_file};
    if (audit_json) words.push_back("--json");
    return RunAudit(words);
  }
  if (*config) {
    if (*config_set) config_args.value = config_value;
    return RunConfig(env, global, config_args);
  }
#endif
  return kExitUsage;
}
