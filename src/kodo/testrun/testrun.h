// `kodoc test FILE` (docs/kodo.md §4.8; upstream's `kodoc test`): runs the `test` and
// `describe` blocks of a Kōdo file in the MIR interpreter, with upstream's output.
//
// As upstream does, describes are flattened into tests named `outer > inner > test` (setup of
// outer suites first, teardown of inner suites first; a suite's annotations apply to its tests),
// `@skip`/`@todo` tests are reported `skipped` and not compiled, `@timeout(ms)` wraps the body
// in kodo_test_set_timeout/clear_timeout, `@property(...)` expands each top-level `forall` of
// the body into a loop of generated values (kodo_prop_*), runnable tests become functions
// `__test_0, __test_1, ...` and a synthetic `main` (replacing the user's) calls
// kodo_test_start / __test_N / kodo_test_end per test and kodo_test_summary at the end. The
// program is then type-checked, lowered, optimised and run with the interpreter's test mode
// (interp/test_hooks.cc): a failed assertion prints its message to stderr and marks the test
// FAILED without stopping it.
//
// Output (stdout): `test NAME ... ok|FAILED|skipped` per test, an empty line, then
// `test result: ok|FAILED. P passed; F failed; S skipped; T todo; N total`. The exit status is
// the test program's: 0 even when tests fail (upstream's runtime returns 0), 134/136 when a test
// aborts the run (a contract violation, a zero divisor); 1 when the file does not parse, check
// or lower. No tests (or none matching --filter): `no tests found`, or with --json
// `{"event":"summary","total":0,"passed":0,"failed":0,"skipped":0,"todo":0}`; exit 0.
//
// Thread safety: pure function of its arguments.
#pragma once

#include <cstdint>
#include <string>

#include "base/env.h"
#include "base/status.h"
#include "kodo/ast/ast.h"
#include "kodo/mir/mir.h"

namespace trove::kodo::testrun {

struct TestOptions {
  std::string filter;                 // keep tests whose full name contains it ("": all)
  bool json = false;                  // upstream only passes it to the runtime (see above)
  std::string contracts = "runtime";  // `recoverable` lowers contract failures as warnings
  int opt_level = 1;                  // mir/opt/opt.h
  std::uint64_t max_steps = 0;        // interpreter step limit; 0: none
  // Loads the file's imports through this Env (docs/kodo.md §4.3, `kodoc test`): the tests are
  // checked against them and the imported modules are lowered with the file
  // (mir::LowerProgram). Null: imports are ignored. Must outlive the call.
  base::Env* import_env = nullptr;
};

struct TestOutcome {
  int exit_code = 0;
  std::string out;
  std::string err;
};

// Parses, rewrites, checks, lowers and runs the tests of `text` (named `path` in messages).
TestOutcome RunTests(std::string text, const std::string& path, const TestOptions& options = {});

// The plan of a test run: each test's full name and whether it runs (else it is skipped).
struct PlannedTest {
  std::string name;
  bool runs = true;
  bool todo = false;
};

// Rewrites `module` for a test run (the steps above, up to and excluding type checking): the
// tests and describes are removed, runnable tests appended as functions `__test_N`, the user's
// `main` removed. Returns the tests in run order (top-level tests first, then describes).
Result<std::vector<PlannedTest>> RewriteForTests(ast::Module& module, const TestOptions& options);

// Appends the synthetic `main` that runs `plan` to `program` (after lowering).
void AddTestMain(mir::Program& program, const std::vector<PlannedTest>& plan);

}  // namespace trove::kodo::testrun
