// The Kōdo parser: recursive descent with one function per precedence level, over the tokens of
// kodo/lex, producing the AST of kodo/ast for the grammar upstream `kodoc` 1.14.1 accepts
// (docs/kodo.md §4.2) and the parse diagnostics of §6.1.
//
// Errors. Upstream's CLI and MCP tools call the fail-fast parser: a file yields at most one parse
// error (E0100 unexpected token or E0101 unexpected end of input), or the lexer's one E0001, and
// no AST (docs/kodo.md §4.2, §6.1). That is the default here, with upstream's message templates:
//   E0100 "expected X, found TOKEN at Span { start: S, end: E }"   (span = the found token)
//   E0101 "unexpected end of input, expected X"                    (no span)
// ParseOptions::recover selects the recovering variant (upstream's `kodoc parse` and LSP):
// panic-mode synchronisation at declaration boundaries (and at statement boundaries inside
// blocks), so several errors are reported and a partial module is returned; a malformed
// `requires`/`ensures` body becomes E0104 "malformed requires clause at Span {..}: INNER".
//
// Bounds. Nesting (expressions, blocks, types, patterns, and each link of a left-associative
// chain: `1 + 1 + ... + 1`, `a.f().g()...`) deeper than ParseOptions::max_depth is an E0100
// diagnostic ("nesting too deep (more than N levels) at Span {..}", spanning the token where the
// limit was crossed), never a stack overflow. A tree the parser returns is therefore shallow
// enough for every later recursive walk (ast.h: kMaxNestingDepth, kMaxTreeDepth). The source size
// and token count are bounded by the lexer's options.
//
// Thread safety: ParseModule is a pure function of its arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kodo/ast/ast.h"
#include "kodo/lex/lexer.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::parse {

// A machine-applicable edit offered with a diagnostic (docs/kodo.md §6.1 "patch").
struct FixPatch {
  std::string description;
  std::uint32_t start_offset = 0;
  std::uint32_t end_offset = 0;
  std::string replacement;
};

// One lexical or parse error, carrying what §6.2's JSON needs: code, message, span (absent for
// E0101 and, in JSON, for E0001), suggestion, fix patch. A minimal record until kodo/diag exists.
struct ParseDiagnostic {
  std::string code;     // "E0001", "E0100", "E0101", "E0104"
  std::string message;  // upstream's template, span suffix included
  std::optional<SourceRange> range;
  std::string suggestion;  // empty when none
  std::optional<FixPatch> fix_patch;
};

struct ParseOptions {
  // Collect several errors (synchronising at declaration and statement boundaries) and return
  // a partial module. Default: stop at the first error, as upstream's check/build/MCP do.
  bool recover = false;
  // Maximum nesting of expressions (each chain link counted), blocks, types and patterns.
  // Deeper input is an E0100 diagnostic. Default and ceiling ast::kMaxNestingDepth (256): a
  // larger value is treated as 256, so that later walks over the tree stay within their stack
  // (upstream has no bound; real programs nest a few tens deep).
  std::uint32_t max_depth = ast::kMaxNestingDepth;
  // Options for the lexer (source size and token count bounds). `recover`/`keep_trivia` are
  // ignored: the parser lexes without trivia and stops at a lexical error.
  lex::LexOptions lex;
};

struct ParseResult {
  // The module: always set in recover mode (possibly partial); in fail-fast mode only when there
  // is no diagnostic.
  std::optional<ast::Module> module;
  std::vector<ParseDiagnostic> diagnostics;

  bool ok() const { return diagnostics.empty() && module.has_value(); }
};

// Parses one source file. Parse and lexical errors are in the result; the Status is non-OK only
// when a lexer bound (ParseOptions::lex) is crossed.
Result<ParseResult> ParseModule(const SourceBuffer& source, const ParseOptions& options = {});

// Returns the found-token rendering parse messages use: upstream's Rust Debug of the token
// (`Ident("x")`, `IntLit(42)`, `FloatLit(3.5)`, `StringLit("a")`, `LBrace`, `SelfValue`).
// REQUIRES: `token` was lexed from `source` (an identifier's name is its source text).
std::string TokenDebug(const lex::Token& token, const SourceBuffer& source);

}  // namespace trove::kodo::parse
