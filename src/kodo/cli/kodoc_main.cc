// kodoc (also built as `kodo`): the Kōdo compiler's command line (docs/kodo.md §2). Results go to
// stdout, diagnostics to stderr; exit 0 on success, 1 on failure, 2 on a usage error.
// `kodoc mcp` serves the MCP tools, as the kodo-mcp binary does.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/command_line.h"
#include "base/env.h"
#include "base/terminal.h"
#include "kodo/cli/commands.h"
#include "kodo/server/mcp_main.h"

namespace {

// The commands write upstream's "error: ..." lines; here, where the program's name is known,
// each gets it in front (base/terminal.h). Diagnostics ("error[E0201]: ...") stay as they are.
void Emit(const std::string& program, const trove::kodo::cli::CommandOutput& out) {
  std::fwrite(out.out.data(), 1, out.out.size(), stdout);
  std::fflush(stdout);
  const std::string err = trove::base::PrefixErrorLines(program, out.err);
  std::fwrite(err.data(), 1, err.size(), stderr);
}

// Words a user may type that name no command of this build (docs/kodo.md §2 lists the commands
// of the upstream kodoc, most of them past tiers T0-T1).
constexpr trove::base::CommandNote kNotes[] = {
    {"lex", "is planned but not implemented yet"},
    {"parse", "is planned but not implemented yet"},
    {"fmt", "is planned but not implemented yet"},
    {"intent-explain", "is planned but not implemented yet"},
    {"lsp", "is planned but not implemented yet"},
    {"repl", "is planned but not implemented yet"},
    {"generate-tests", "is planned but not implemented yet"},
    {"init", "is planned but not implemented yet"},
    {"add", "is planned but not implemented yet"},
    {"remove", "is planned but not implemented yet"},
    {"update", "is planned but not implemented yet"},
};

// When the command word names no command, prints which word is unknown and which commands
// there are and returns exit 2; CLI11 would say only "A subcommand is required". Returns
// nothing for every other parse error.
std::optional<int> ReportUnknownCommand(const std::string& program, CLI::App& app,
                                        const CLI::ParseError& error) {
  if (dynamic_cast<const CLI::RequiredError*>(&error) == nullptr ||
      !app.get_subcommands().empty()) {
    return std::nullopt;
  }
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
  }
  const std::string message = trove::base::UnknownCommandMessage(
      trove::base::FirstCommandWord(app.remaining(true)), commands, kNotes);
  trove::base::PrintError(program, message);
  return trove::kodo::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trove::kodo::cli;
  const std::string program =
      argc > 0 ? std::filesystem::path(argv[0]).filename().string() : std::string("kodoc");
  CLI::App app{"The Kōdo compiler front end (compatible with kodoc 1.14.1, tiers T0-T1)", program};
  app.set_version_flag("--version", VersionText(program));
  app.require_subcommand(1);
  // CLI11's own usage errors start with the program's name too.
  app.failure_message([&program](const CLI::App*, const CLI::Error& e) {
    return trove::base::ErrorLine(program, e.what()) + "Run with --help for more information.\n";
  });

  CheckArgs check_args;
  CLI::App* check = app.add_subcommand("check", "Parse and type-check a source file");
  check->add_option("file", check_args.file, "The .ko source file")->required();
  check->add_flag("--json-errors", check_args.json_errors,
                  "Print the diagnostics as JSON (errors, warnings, status, count)");
  check->add_flag("--sarif", check_args.sarif, "Print the diagnostics as a SARIF 2.1.0 log");
  check->add_option("--contracts", check_args.contracts,
                    "Contract mode: runtime (default), static, both, none, recoverable, prove");
  check->add_flag("--emit-cert", check_args.emit_cert,
                  "After a clean check, write FILE.ko.cert.json (the compilation certificate)");

  ConfidenceReportArgs confidence_args;
  CLI::App* confidence = app.add_subcommand(
      "confidence-report", "Declared and propagated @confidence of every function");
  confidence->add_option("file", confidence_args.file, "The .ko source file")->required();
  confidence->add_flag("--json", confidence_args.json, "Print JSON");
  confidence->add_option("--threshold", confidence_args.threshold,
                         "Flag functions whose computed confidence is below this (default 0.8)");

  AuditArgs audit_args;
  CLI::App* audit =
      app.add_subcommand("audit", "Confidence, contracts and annotations report of a module");
  audit->add_option("file", audit_args.file, "The .ko source file")->required();
  audit->add_flag("--json", audit_args.json, "Print JSON");
  audit->add_option("--contracts", audit_args.contracts,
                    "Contract mode: static, runtime, both, none or recoverable (default runtime)");
  audit->add_option("--policy", audit_args.policy,
                    "Criteria, e.g. \"min_confidence=0.9,contracts=all_verified,reviewed=all\"; "
                    "exit 1 when they fail");

  ExplainArgs explain_args;
  CLI::App* explain = app.add_subcommand("explain", "Explain an error code with examples");
  explain->add_option("code", explain_args.code, "The error code, e.g. E0200")->required();
  explain->add_flag("--json", explain_args.json, "Print JSON");

  DescribeArgs describe_args;
  CLI::App* describe =
      app.add_subcommand("describe", "Describe a module: functions, contracts, types, meta");
  describe->add_option("file", describe_args.file, "The .ko source file")->required();
  describe->add_flag("--json", describe_args.json, "Print the kodo.describe object");

  AnnotateArgs annotate_args;
  CLI::App* annotate = app.add_subcommand("annotate", "Suggest missing contracts with heuristics");
  annotate->add_option("file", annotate_args.file, "The .ko source file")->required();
  annotate->add_flag("--json", annotate_args.json, "Print JSON");
  annotate->add_flag("--apply", annotate_args.apply, "Not implemented (prints a notice)");

  FixArgs fix_args;
  bool dry_run = false;
  CLI::App* fix = app.add_subcommand(
      "fix",
      "Print the auto-fix patch of the first error; --apply rewrites the file and checks it");
  fix->add_option("file", fix_args.file, "The .ko source file")->required();
  fix->add_flag("--apply", fix_args.apply, "Apply the patch to the file, then check it again");
  fix->add_flag("--dry-run", dry_run, "Print the patches without applying them (the default)");

  MirArgs mir_args;
  CLI::App* mir = app.add_subcommand("mir", "Print the MIR of a source file");
  mir->add_option("file", mir_args.file, "The .ko source file")->required();
  mir->add_option("--contracts", mir_args.contracts, "Contract mode (runtime, recoverable, ...)");
  bool mir_no_opt = false;
  mir->add_option("-O,--opt-level", mir_args.opt_level, "MIR optimisation level (0 or 1; 1)")
      ->check(CLI::Range(0, 1));
  mir->add_flag("--no-opt", mir_no_opt, "Print the MIR as lowered (= -O0)");

  RunArgs run_args;
  CLI::App* run = app.add_subcommand("run", "Run a program in the MIR interpreter");
  run->add_option("file", run_args.file, "The .ko source file")->required();
  run->add_option("args", run_args.args, "Arguments for the program (after --)");
  run->add_option("--contracts", run_args.contracts, "Contract mode (runtime, recoverable, ...)");
  run->add_option("--max-steps", run_args.max_steps, "Stop after this many MIR steps (0: none)");
  bool run_no_opt = false;
  run->add_option("-O,--opt-level", run_args.opt_level, "MIR optimisation level (0 or 1; 1)")
      ->check(CLI::Range(0, 1));
  run->add_flag("--no-opt", run_no_opt, "Run the MIR as lowered (= -O0)");

  TestArgs test_args;
  bool test_no_opt = false;
  CLI::App* test = app.add_subcommand("test", "Run the test and describe blocks of a source file");
  test->add_option("file", test_args.file, "The .ko source file")->required();
  test->add_option("--filter", test_args.filter, "Run only tests whose name contains this");
  test->add_flag("--json", test_args.json, "Passed to the test runtime, as upstream's flag");
  test->add_option("--contracts", test_args.contracts, "Contract mode (runtime, recoverable, ...)");
  test->add_option("--max-steps", test_args.max_steps, "Stop after this many MIR steps (0: none)");
  test->add_option("-O,--opt-level", test_args.opt_level, "MIR optimisation level (0 or 1; 1)")
      ->check(CLI::Range(0, 1));
  test->add_flag("--no-opt", test_no_opt, "Run the MIR as lowered (= -O0)");

  BuildArgs build_args;
  CLI::App* build = app.add_subcommand("build", "Compile a program to a native executable (via C)");
  build->add_option("file", build_args.file, "The .ko source file")->required();
  build->add_option("-o,--output", build_args.output,
                    "The executable to write (default: FILE without .ko)");
  build->add_option("--contracts", build_args.contracts,
                    "Contract mode (runtime, recoverable, ...)");

  trove::kodo::server::McpRunOptions mcp_options;
  std::optional<int> http_port;
  CLI::App* mcp = app.add_subcommand("mcp", "Serve the Kōdo MCP tools (stdio by default)");
  mcp->add_option("--http", http_port, "Serve Streamable HTTP on 127.0.0.1:PORT")
      ->check(CLI::Range(0, 65535));
  mcp->add_option("--log-level", mcp_options.log_level, "debug, info, warning or error")
      ->check(CLI::IsMember({"debug", "info", "warning", "error"}));
  trove::kodo::server::AddPolicyFlags(*mcp, mcp_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (std::optional<int> code = ReportUnknownCommand(program, app, e)) return *code;
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  if (*fix && dry_run && fix_args.apply) {
    trove::base::PrintError(program, "--dry-run and --apply exclude each other");
    return kExitUsage;
  }

  if (mir_no_opt) mir_args.opt_level = 0;
  if (run_no_opt) run_args.opt_level = 0;
  if (test_no_opt) test_args.opt_level = 0;

  trove::base::PosixEnv env;
  CommandOutput out;
  if (*check) out = RunCheck(env, check_args);
  if (*explain) out = RunExplain(explain_args);
  if (*describe) out = RunDescribe(env, describe_args);
  if (*annotate) out = RunAnnotate(env, annotate_args);
  if (*fix) out = RunFix(env, fix_args);
  if (*mir) out = RunMir(env, mir_args);
  if (*run) out = RunRun(env, run_args);
  if (*test) out = RunTest(env, test_args);
  if (*build) out = RunBuild(env, build_args);
  if (*confidence) out = RunConfidenceReport(env, confidence_args);
  if (*audit) out = RunAudit(env, audit_args);
  if (*mcp) {
    // Only the server blocks SIGTERM/SIGINT (for its orderly shutdown); no thread exists yet.
    // The other commands keep the default dispositions, so Ctrl-C stops them.
    trove::kodo::server::PrepareMcpProcess();
    mcp_options.http_port = http_port;
    return trove::kodo::server::RunKodoMcp(mcp_options);
  }
  Emit(program, out);
  return out.exit_code;
}
