// The shared front half of Kōdo's tools (docs/kodo.md §3.3, upstream's `compile_source`): one
// source text becomes a SourceBuffer, is parsed fail-fast and, unless parsing failed, is
// type-checked by the collecting checker (or the fail-fast one when asked). `kodoc` and
// `kodo-mcp` both start here, so the CLI and the MCP tools cannot disagree about a program.
//
// Imports (docs/kodo.md §4.3) are loaded from disk only when the caller passes an Env
// (FrontOptions::import_env: `kodoc check`, `run`, `mir`, `build`, `test`), relative to the
// directory of the
// file `name`, as upstream's CLI loads them; the MCP tools pass none, so imports are parsed and
// ignored there as upstream's MCP front half ignores them (§3.3; imported names are E0201).
// Without an Env no `kodo.toml` trust configuration is read and the file name is used only in
// messages. Contracts, desugaring and MIR lowering are later phases (docs/kodo.md §1.1).
//
// Thread safety: pure functions of their arguments.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "kodo/ast/ast.h"
#include "kodo/diag/diagnostic.h"
#include "kodo/parse/parser.h"
#include "kodo/sema/check.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::driver {

struct FrontOptions {
  // Run the type checker after a successful parse. Off: parse only (kodo.annotate, describe).
  bool type_check = true;
  // Stop at the first type error (upstream's `check_module`: `kodoc fix`, confidence
  // reports). Default: collect every error in upstream's order.
  bool fail_fast = false;
  // Bounds on what a caller can make the front end do. A source longer than
  // parse.lex.max_source_bytes (16 MiB by default) fails with kResourceExhausted, as does
  // nesting deeper than parse.max_depth (an E0100 diagnostic) or too many tokens.
  parse::ParseOptions parse;
  // The kodo.toml [trust] table for the policy phase (sema::CheckOptions::trust_config); null
  // for the MCP tools, which never read kodo.toml (§3.3). Must outlive the call.
  const trust::TrustConfig* trust_config = nullptr;
  // Loads the imports of the source from the file system through this Env (§4.3); null: imports
  // are ignored (the MCP tools). With type_check off the imports are still loaded and checked,
  // the source itself is only parsed (`kodoc test` checks it after rewriting its tests); a
  // failed import is then a kTypeErrors outcome. Must outlive the call.
  base::Env* import_env = nullptr;
};

// A module loaded for an `import` (§4.3): its file, relative to the importing source's
// directory, and its parsed tree, which the checked module's declarations refer to.
struct ImportedModule {
  std::string path;
  SourceBuffer source;
  ast::Module module;
  // What it imports, transitively: indexes into Compiled::imports (all smaller than its own),
  // ascending. Its names resolve in these modules and its own (MIR lowering, mir::LowerProgram).
  std::vector<std::size_t> deps;
  // The warnings of its own check (W0901, W0902), spans in `source`; `kodoc check` shows them
  // with the file's path (source.name()).
  std::vector<diag::Diagnostic> warnings;
};

// Bounds on import loading: modules loaded per check, and the longest chain of imports.
inline constexpr std::size_t kMaxImportedModules = 256;
inline constexpr std::size_t kMaxImportDepth = 32;

enum class Outcome {
  kParseFailed,  // diagnostics hold the one lexical or parse error; no module
  kTypeErrors,   // diagnostics hold the type errors, in upstream's order; module is set
  kOk,           // no diagnostics; module is set (type-checked unless type_check was off)
};

struct Compiled {
  SourceBuffer source;
  std::optional<ast::Module> module;
  std::vector<diag::Diagnostic> diagnostics;
  // Warnings of the check (sema::CheckResult::warnings): what it did not check. Never errors.
  std::vector<diag::Diagnostic> warnings;
  // The modules loaded for the source's imports, dependencies first (empty without an Env).
  // Stable addresses: `module` was checked against their declarations.
  std::vector<std::unique_ptr<ImportedModule>> imports;
  Outcome outcome = Outcome::kOk;
  bool type_checked = false;  // whether the checker ran

  bool ok() const { return outcome == Outcome::kOk; }
};

// The warnings of the modules `c` imported (§4.3), dependencies first, each with its file's
// path as it was opened (source.name()), once each: a warning already listed for the same file
// and place is left out. Pointers into `c`, valid while it lives. `kodoc check` lists them in
// its text, JSON and SARIF output; `run`, `mir`, `build` and `test` print them on stderr.
std::vector<diag::FileDiagnostic> ImportedWarnings(const Compiled& c);

// The text form (diag::RenderText) of ImportedWarnings(c), one after another; "" when none.
std::string RenderImportedWarnings(const Compiled& c);

// Runs the front half over `text`, named `name` in messages. The Status is non-OK only for a
// crossed bound (kResourceExhausted); a program's errors are in the result.
Result<Compiled> CompileSource(std::string text, std::string name = "<source>",
                               const FrontOptions& options = {});

}  // namespace trove::kodo::driver
