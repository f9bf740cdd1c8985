// describe: upstream's Rust `Debug` rendering of AST pieces (docs/kodo.md §6.4), the text that
// `kodo.describe`, `kodo.annotate`, binary metadata and `intent-explain` print for types,
// contract expressions and annotation arguments, spans included. Non-pretty `{:?}` form:
// `BinaryOp { left: Ident("b", Span { start: 52, end: 53 }), op: Ne, ... }`.
//
// Forms the spec does not list (statements inside closure/if/match bodies, patterns, match arms,
// declarations) follow upstream's AST declaration order where it is known and are a documented
// best guess otherwise (docs/decisions/0012-kodo-parser.md).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "kodo/ast/ast.h"

namespace trove::kodo::ast {

// `"a\"b\n"`: a Rust `str` Debug literal (quotes, `\"`, `\\`, `\n`, `\r`, `\t`, `\0`,
// `\u{..}` for other control characters).
std::string RustDebugString(std::string_view text);
// Rust `f64` Debug: shortest round-trip digits, `.0` for integral values (`1.0`), exponent form
// (`1e16`, `1e-5`) outside [1e-4, 1e16), `inf`, `-inf`, `NaN`.
std::string RustDebugFloat(double value);
// `Span { start: S, end: E }`.
std::string DescribeSpan(Span span);
// The operator's Rust variant name as upstream's Debug prints it: `Add`, `Ne`, `And`.
std::string_view BinOpName(BinOp op);
// The operator as it is written in Kōdo source (and in C): `+`, `!=`, `&&`.
std::string_view BinOpSymbol(BinOp op);

std::string DescribeType(const TypeExpr& type);
std::string DescribeExpr(const Expr& expr);
std::string DescribeStmt(const Stmt& stmt);
std::string DescribeBlock(const Block& block);
std::string DescribePattern(const Pattern& pattern);
// `Positional(EXPR)` / `Named("key", EXPR)`.
std::string DescribeAnnotationArg(const AnnotationArg& arg);
std::string DescribeAnnotation(const Annotation& annotation);
std::string DescribeFunction(const Function& function);
// The whole module, as upstream's `{:?}` of its `Module` (field order of upstream 1.14.1's
// snapshots: id, span, name, imports, meta, type_aliases, type_decls, ...).
std::string DescribeModule(const Module& module);

}  // namespace trove::kodo::ast
