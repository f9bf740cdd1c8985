// The `kodoc` commands (docs/kodo.md §2, §6.2): check, explain, describe, annotate and fix, each a
// function from its arguments to what the process prints and its exit status, so that tests
// run them against an in-memory Env. main (kodoc_main.cc) parses flags with CLI11 and writes
// the output.
//
// Exit statuses are upstream's: 0 success, 1 failure (a program with errors, an unreadable
// file, an unknown error code). CLI11 usage errors exit 2 (kExitUsage), as in Trove's other
// CLIs.
//
// Thread safety: each call uses only its arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"

namespace trove::kodo::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct CommandOutput {
  int exit_code = kExitOk;
  std::string out;  // stdout
  std::string err;  // stderr
};

// `kodoc check FILE [--json-errors]`: parse and type-check. Text mode prints each diagnostic
// to stderr (diag::RenderText) or "Check passed for module `M`" to stdout; --json-errors prints
// the §6.2 envelope to stdout; --sarif prints a SARIF 2.1.0 log of the same diagnostics to
// stdout (kodo/diag/sarif.h, docs/kodo.md §2.1). Exit 1 when the program has errors, 2 for --sarif
// with
// --json-errors.
//
// When the program type-checks, its contracts are verified in `contracts` mode (docs/kodo.md
// §7.2, docs/kodo-contracts.md): an unknown mode warns and falls back to runtime; the first
// function with invalid or refuted contracts prints one "contract error: ..." line per failure
// to stderr, nothing to stdout, and exits 1; otherwise text mode adds "  contracts: N
// statically verified, M runtime checks" (when any was counted) and, in prove mode, one line per
// ensures clause.
// The policy phase reads the `kodo.toml` beside FILE for its [trust] table (E0263/E0264); a
// kodo.toml that does not parse is an error naming it, line and column, exit 1.
// --emit-cert, after a clean check, writes FILE.ko.cert.json (kodo/trust/report.h Certificate;
// chained to the certificate already there) through Env::WriteFile (temporary file, then
// rename) and prints "Certificate written to PATH" (to stderr with --json-errors, so that
// stdout stays one JSON document).
struct CheckArgs {
  std::string file;  // as given: it is echoed in span.file
  bool json_errors = false;
  bool sarif = false;
  std::string contracts = "runtime";  // --contracts=MODE
  bool emit_cert = false;
};
CommandOutput RunCheck(base::Env& env, const CheckArgs& args);

// `kodoc explain CODE [--json]`: the long-form explanation of a code of the kinds table.
struct ExplainArgs {
  std::string code;
  bool json = false;
};
CommandOutput RunExplain(const ExplainArgs& args);

// `kodoc describe FILE [--json]`: the module's functions, struct types and meta. Upstream's
// `describe` reads the metadata embedded in a compiled binary; Trove builds no binaries yet,
// so it describes the source: --json prints the kodo.describe object (docs/kodo.md §3.4), the
// text form a summary in Kōdo syntax. Exit 1 on a parse error.
struct DescribeArgs {
  std::string file;
  bool json = false;
};
CommandOutput RunDescribe(base::Env& env, const DescribeArgs& args);

// `kodoc annotate FILE [--json] [--apply]`: the five contract heuristics (§2.1). --apply only
// prints upstream's notice that it is not implemented.
struct AnnotateArgs {
  std::string file;
  bool json = false;
  bool apply = false;
};
CommandOutput RunAnnotate(base::Env& env, const AnnotateArgs& args);

// `kodoc fix FILE [--apply]`: the patch for the first error (the parse error's, or the first
// type error's from the fail-fast checker, as upstream). Without --apply it prints the patches
// as {"applied": false, "patches": [...]} (upstream's --dry-run output); with --apply it
// rewrites the file, prints "Applied fix: ..." and "Applied N fix(es) to `FILE`", then checks
// the new text and reports as `check` does; the exit status is that check's.
// Only verified patches are applied (kodo/sema/verify_fixes.h): when the first error's patch
// was withheld, it says so on stderr and changes nothing. --apply checks the new text before
// writing it, never writes a file that does not parse, and writes through Env::WriteFile
// (temporary file, then rename), so on any failure the original is left as it was.
struct FixArgs {
  std::string file;
  bool apply = false;
};
CommandOutput RunFix(base::Env& env, const FixArgs& args);

// `kodoc mir FILE [--contracts MODE]`: parse, check, lower to MIR (kodo/mir/lower.h) and print
// it (docs/kodo.md §7.6). Exit 1 when the program has errors or does not lower.
struct MirArgs {
  std::string file;
  std::string contracts = "runtime";  // runtime, recoverable, static, both, none
  int opt_level = 1;                  // -O0/--no-opt: print the MIR as lowered (mir/opt/opt.h)
};
CommandOutput RunMir(base::Env& env, const MirArgs& args);

// `kodoc run FILE [-- ARGS]`: parse, check, lower and interpret (kodo/interp/interp.h). The
// exit status is the program's (interp.h lists them); 1 when it does not compile. Upstream has
// no `run` (it builds a native executable); this is Trove's answer until native builds exist.
struct RunArgs {
  std::string file;
  std::vector<std::string> args;  // after `--`
  std::string contracts = "runtime";
  std::uint64_t max_steps = 0;  // 0: no limit
  int opt_level = 1;            // -O0/--no-opt: run the MIR as lowered (mir/opt/opt.h)
};
CommandOutput RunRun(base::Env& env, const RunArgs& args);

// `kodoc test FILE [--filter S] [--json] [--contracts MODE]` (docs/kodo.md §4.8,
// kodo/testrun/testrun.h): runs the file's tests in the interpreter with upstream's output. The
// exit status is the test program's (0 even when tests fail, as upstream); 1 when the file does
// not compile.
struct TestArgs {
  std::string file;
  std::string filter;
  bool json = false;
  std::string contracts = "runtime";
  std::uint64_t max_steps = 0;
  int opt_level = 1;
};
CommandOutput RunTest(base::Env& env, const TestArgs& args);
// `kodoc build FILE [-o OUT] [--contracts MODE]` (docs/kodo.md §2, §7.8): parse, check, lower
// and compile natively (kodo/native/build.h: MIR -> C -> `cc -O2`, linked with the Kōdo
// runtime). OUT defaults to FILE without `.ko`; it is written through a temporary file and a
// rename, only when the build succeeds. Prints upstream's "Successfully compiled `M` -> OUT".
// Exit 1 when the program does not compile, uses a construct native builds lack (named), or
// no C compiler is found.
struct BuildArgs {
  std::string file;
  std::string output;  // -o/--output; empty: FILE without `.ko`
  std::string contracts = "runtime";
};
CommandOutput RunBuild(base::Env& env, const BuildArgs& args);
// `kodoc confidence-report FILE [--json] [--threshold T]` (docs/kodo.md §2.1): the
// fail-fast check (no kodo.toml, as upstream), then declared and computed confidence per free
// function (kodo/trust/report.h). "parse error: M" / "type error: M" on stderr and exit 1 when
// the program does not check.
struct ConfidenceReportArgs {
  std::string file;
  bool json = false;
  double threshold = 0.8;
};
CommandOutput RunConfidenceReport(base::Env& env, const ConfidenceReportArgs& args);

// `kodoc audit FILE [--json] [--contracts MODE] [--policy P]` (docs/kodo.md §2.1): confidence,
// contract counts and annotations per function, and whether the module is deployable; with --policy
// ("min_confidence=0.9,contracts=all_verified|all_present,reviewed=all") the policy result too,
// and exit 1 when it fails. Contract counts: in `none` mode none; otherwise every requires and
// ensures clause of free functions and impl methods counts as a runtime check until the
// contracts phase (kodo/contracts) reports its own counts.
struct AuditArgs {
  std::string file;
  bool json = false;
  std::string contracts = "runtime";
  std::optional<std::string> policy;
};
CommandOutput RunAudit(base::Env& env, const AuditArgs& args);

// Returns "NAME 1.14.1 (trove VERSION)": the kodoc release whose behaviour this follows.
std::string VersionText(const std::string& program);

}  // namespace trove::kodo::cli
