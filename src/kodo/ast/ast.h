// The Kōdo abstract syntax tree: one node family per construct of the grammar that upstream
// `kodoc` 1.14.1 accepts (docs/kodo.md §4.2), produced by kodo/parse and read by every later phase.
//
// Representation. Nodes are plain move-only structs owning their children (Vec of nodes and
// Box, arena.h's std::vector and unique_ptr over the module's arena), with no templates beyond
// std containers, so this header stays cheap to include.
// Expressions use one tagged node type (Expr) whose child expressions sit in one vector,
// `operands`, at positions fixed per kind (documented on ExprKind); the rarer payloads (blocks,
// match arms, struct-literal fields, closure parameters, f-string parts) live behind one
// pointer, `extra`, so a common node (literal, name, binary operator, call) is small.
//
// Spans. Every node carries a byte-offset Span [start, end) into its file, computed as upstream
// computes it (docs/kodo.md §4.1, §6.4), because spans are printed by describe (describe.h) and
// drive fix-patch offsets. Exception: sub-expressions of an f-string keep file offsets here;
// describe prints them relative to their interpolation, as upstream does (decision in
// docs/decisions/0012-kodo-parser.md).
//
// Thread safety: plain values; a const tree may be read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kodo/ast/arena.h"

namespace trove::kodo::ast {

// A half-open byte range [start, end) in the parsed file; upstream's `Span` (u32 offsets).
struct Span {
  std::uint32_t start = 0;
  std::uint32_t end = 0;
  // Returns the smallest span covering both (upstream's Span::merge).
  Span Merge(Span other) const {
    return Span{start < other.start ? start : other.start, end > other.end ? end : other.end};
  }
  friend bool operator==(const Span&, const Span&) = default;
};

struct Expr;
struct Stmt;
struct Pattern;
struct Module;

// ---------------------------------------------------------------------------------------------
// Nesting bounds (docs/conventions.md §8: recursion over user input is bounded).
//
// The parser counts a level for every construct that nests (parentheses, blocks, statements,
// unary operators, types, patterns...) and for every link of a left-associative chain (each
// binary operator, call, field access, `?`, `.await`), and rejects a program deeper than
// ParseOptions::max_depth levels, at most kMaxNestingDepth, with a "nesting too deep"
// diagnostic. A tree it accepts is then at most kMaxTreeDepth nodes deep as TreeDepth counts
// them (about three nodes per level at worst: `else if` is an `if` inside a statement inside a
// block). Every recursive walk over a tree (sema's checker, describe, annotate) stops
// descending past kMaxTreeDepth nodes, so no tree, parsed or built by hand, can overflow its
// stack; for parsed trees that guard is never reached. The bound is small enough for a worker
// thread's stack (parse/deep_test.cc checks the largest accepted trees on a 1 MiB thread).
inline constexpr std::uint32_t kMaxNestingDepth = 256;
inline constexpr std::uint32_t kMaxTreeDepth = 4 * kMaxNestingDepth;

// Returns the depth of the deepest Expr, Stmt, Block, Pattern or TypeExpr node of `module`,
// counting the nodes of those kinds on the path down from a declaration (a function body
// alone is 1). Iterative, so it is safe on a tree of any depth.
std::uint32_t TreeDepth(const Module& module);

// ---------------------------------------------------------------------------------------------
// Types (docs/kodo.md §4.2 `Type`).

enum class TypeKind : std::uint8_t {
  kNamed,     // `Int`                    name
  kGeneric,   // `List<Int>`              name, args
  kFunction,  // `(Int, Int) -> Bool`     args = params then the return type (last)
  kUnit,      // `()`
  kOptional,  // `T?`                     args[0] = T
  kTuple,     // `(Int, String)`          args
  kDynTrait,  // `dyn Show`               name
};

struct TypeExpr {
  TypeKind kind = TypeKind::kUnit;
  std::string_view name;  // arena text, as Expr::text
  Vec<TypeExpr> args;

  // REQUIRES: `n` outlives the node (arena text or a string literal).
  static TypeExpr Named(std::string_view n) { return TypeExpr{TypeKind::kNamed, n, {}}; }
  static TypeExpr Unit() { return TypeExpr{}; }
  friend bool operator==(const TypeExpr&, const TypeExpr&) = default;
};

// ---------------------------------------------------------------------------------------------
// Statements and blocks.

struct Block {
  Span span;
  Vec<Stmt> stmts;
};

// ---------------------------------------------------------------------------------------------
// Expressions (docs/kodo.md §4.2 `Expr`, §6.4 for the field names).

enum class BinOp : std::uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kEq,
  kNe,
  kLt,
  kGt,
  kLe,
  kGe,
  kAnd,
  kOr
};
enum class UnaryOp : std::uint8_t { kNot, kNeg };

enum class ExprKind : std::uint8_t {
  kIntLit,           // int_value
  kFloatLit,         // float_value
  kStringLit,        // text
  kBoolLit,          // flag
  kIdent,            // text (also `self`)
  kBinaryOp,         // bin_op; operands = {left, right}
  kUnaryOp,          // unary_op; operands = {operand}
  kCall,             // operands = {callee, args...}
  kIf,               // operands = {condition}; extra->block = then, extra->else_block (optional)
  kFieldAccess,      // operands = {object}; text = field
  kStructLit,        // text = name; extra->fields
  kEnumVariantExpr,  // text = enum_name, extra->variant = variant; operands = args
  kMatch,            // operands = {scrutinee}; extra->arms
  kTry,              // operands = {operand}
  kOptionalChain,    // operands = {object}; text = field
  kNullCoalesce,     // operands = {left, right}
  kRange,            // operands = {start, end}; flag = inclusive
  kClosure,          // operands = {body}; extra->params, extra->return_type
  kIs,               // operands = {operand}; text = type_name
  kAwait,            // operands = {operand}
  kStringInterp,     // extra->parts
  kTupleLit,         // operands = elements
  kTupleIndex,       // operands = {tuple}; int_value = index
  kBlock,            // extra->block
};

struct FieldInit;
struct MatchArm;
struct ClosureParam;
struct StringPart;
struct ExprExtra;

struct Expr {
  ExprKind kind = ExprKind::kIntLit;
  BinOp bin_op = BinOp::kAdd;
  UnaryOp unary_op = UnaryOp::kNot;
  bool flag = false;  // BoolLit value; Range inclusive
  Span span;
  std::int64_t int_value = 0;
  double float_value = 0;
  // A name or a string literal's value: a view of text owned by the module's arena (the parser
  // copies the file there once and points names into that copy), or of a string literal in a
  // tree built by hand. Not a std::string: moving and copying a node stays a few words, and the
  // parser copies no name (docs/decisions/0033-kodo-perf5.md).
  std::string_view text;
  Vec<Expr> operands;
  Box<ExprExtra> extra;

  Expr();
  Expr(Expr&&) noexcept;
  Expr& operator=(Expr&&) noexcept;
  ~Expr();

  // Operand accessors by role (REQUIRES: the kind has that operand).
  const Expr& left() const { return operands[0]; }
  const Expr& right() const { return operands[1]; }
  const Expr& operand() const { return operands[0]; }
};

struct FieldInit {
  std::string_view name;  // arena text, as Expr::text
  Expr value;
  Span span;
};

// A parameter of a closure: `x` or `x: Int`.
struct ClosureParam {
  std::string_view name;  // arena text, as Expr::text
  std::optional<TypeExpr> ty;
  Span span;
};

// One part of an f-string: literal text or an interpolated expression.
struct StringPart {
  bool is_expr = false;
  std::string literal;
  Box<Expr> expr;
  // For an expression part: the file offset its text starts at (describe prints the
  // sub-expression's spans relative to it, as upstream's fresh sub-parser does).
  std::uint32_t base = 0;
};

enum class PatternKind : std::uint8_t {
  kVariant,   // `Enum::V(a, b)`, `Some(x)`, `None`: enum_name (optional), name = variant, subs
  kWildcard,  // `_`
  kLiteral,   // literal (an IntLit/FloatLit/StringLit/BoolLit expression)
  kTuple,     // `(p, q)`: subs
  kBinding,   // a plain name inside a variant's parentheses: name
};

struct Pattern {
  PatternKind kind = PatternKind::kWildcard;
  bool has_enum_name = false;
  std::string_view enum_name;  // arena text, as Expr::text
  std::string_view name;
  Vec<Pattern> subs;
  Box<Expr> literal;
  Span span;
};

struct MatchArm {
  Pattern pattern;
  Expr body;
  Span span;
};

struct ExprExtra {
  std::optional<Block> block;
  std::optional<Block> else_block;
  Vec<FieldInit> fields;
  Vec<MatchArm> arms;
  Vec<ClosureParam> params;
  std::optional<TypeExpr> return_type;
  Vec<StringPart> parts;
  // EnumVariantExpr's variant name. Kept here, not in Expr: only this kind needs a second
  // name, and a second std::string in every Expr made every node a quarter larger
  // (docs/decisions/0026-kodo-perf3.md).
  std::string_view variant;  // arena text, as Expr::text
};

// ---------------------------------------------------------------------------------------------
// Statements (docs/kodo.md §4.2 `Stmt`).

enum class StmtKind : std::uint8_t {
  kLet,         // mutable_, name, ty, value
  kLetPattern,  // mutable_, pattern, ty, value
  kExpr,        // value
  kReturn,      // value (optional: has_value)
  kWhile,       // value = condition, body
  kFor,         // name, value = start, extra->value2 = end, inclusive, body
  kForIn,       // name, value = iterable, body
  kAssign,      // name, value
  kIfLet,       // pattern, value, body, extra->else_body
  kBreak,
  kContinue,
  kSpawn,     // body
  kParallel,  // body.stmts (body.span equals span)
  kSelect,    // extra->select_arms
  kForall,    // extra->forall_bindings, body
};

struct SelectArm {
  Expr channel;
  std::string binding;
  TypeExpr ty;
  Block body;
  Span span;
};

struct ForallBinding {
  std::string name;
  TypeExpr ty;
  Span span;
};

struct StmtExtra;

struct Stmt {
  StmtKind kind = StmtKind::kExpr;
  bool mutable_ = false;
  bool inclusive = false;
  bool has_value = false;  // Return: whether a value is present
  Span span;
  std::string_view name;  // arena text, as Expr::text
  // Let's annotation, out of line: most statements have none, and inline it made every
  // statement 64 bytes larger (docs/decisions/0031-kodo-perf4.md).
  Box<TypeExpr> ty;
  Box<Pattern> pattern;
  Expr value;
  Block body;
  // The payloads of the rarer statements (For's end, IfLet's else, Select, Forall), kept out of
  // line so that the common statements stay small.
  Box<StmtExtra> extra;

  Stmt();
  Stmt(Stmt&&) noexcept;
  Stmt& operator=(Stmt&&) noexcept;
  ~Stmt();
  StmtExtra& Extra();  // creates `extra` on first use
};

struct StmtExtra {
  Expr value2;
  std::optional<Block> else_body;
  Vec<SelectArm> select_arms;
  Vec<ForallBinding> forall_bindings;
};

// ---------------------------------------------------------------------------------------------
// Declarations (docs/kodo.md §4.2 items, §4.3, §4.4).

struct MetaEntry {
  std::string key;
  std::string value;
  Span span;  // from the `meta` keyword to the end of the value, as upstream (docs/kodo.md §4.3)
};

struct Meta {
  std::uint32_t id = 0;
  Span span;
  Vec<MetaEntry> entries;
};

struct ImportDecl {
  std::vector<std::string> path;
  std::vector<std::string> names;  // `import a::b { x, y }` / `from a::b import x, y`
  bool from_form = false;          // written `from P import ...`
  Span span;
};

enum class Ownership : std::uint8_t { kOwned, kRef, kMut };

struct Param {
  std::string_view name;  // arena text, as Expr::text
  TypeExpr ty;
  Span span;
  Ownership ownership = Ownership::kOwned;
};

struct AnnotationArg {
  bool named = false;
  std::string key;
  Expr value;
};

struct Annotation {
  std::string name;
  Vec<AnnotationArg> args;
  Span span;
};

struct GenericParam {
  std::string name;
  std::vector<std::string> bounds;
  Span span;  // the name through the last bound
};

enum class Visibility : std::uint8_t { kPrivate, kPublic };

struct Function {
  std::uint32_t id = 0;
  Span span;  // from `fn` to the closing brace (annotations, `pub`, `async` outside)
  std::string name;
  Visibility visibility = Visibility::kPrivate;
  bool is_async = false;
  Vec<GenericParam> generic_params;
  Vec<Annotation> annotations;
  Vec<Param> params;
  TypeExpr return_type;  // Unit when omitted
  Vec<Expr> requires_;
  Vec<Expr> ensures;
  Block body;
};

struct FieldDef {
  std::string_view name;  // arena text, as Expr::text
  TypeExpr ty;
  Span span;
};

struct TypeDecl {  // struct
  std::uint32_t id = 0;
  Span span;
  std::string name;
  Visibility visibility = Visibility::kPrivate;
  Vec<GenericParam> generic_params;
  Vec<FieldDef> fields;
};

struct EnumVariant {
  std::string_view name;  // arena text, as Expr::text
  Vec<TypeExpr> fields;
  Span span;
};

struct EnumDecl {
  std::uint32_t id = 0;
  Span span;
  std::string name;
  Vec<GenericParam> generic_params;
  Vec<EnumVariant> variants;
};

struct TypeAlias {
  std::uint32_t id = 0;
  Span span;
  std::string name;
  TypeExpr base_type;
  std::optional<Expr> constraint;  // refinement `requires { ... }`
};

struct AssociatedType {
  std::string name;
  std::vector<std::string> bounds;
  Span span;
};

struct TraitMethod {
  std::string name;
  Vec<Param> params;
  TypeExpr return_type;
  bool has_self = false;
  std::optional<Block> body;  // default method
  Span span;
};

struct TraitDecl {
  std::uint32_t id = 0;
  Span span;
  std::string name;
  Vec<AssociatedType> associated_types;
  Vec<TraitMethod> methods;
};

struct TypeBinding {
  std::string name;
  TypeExpr ty;
  Span span;
};

struct ImplBlock {
  std::uint32_t id = 0;
  Span span;
  std::optional<std::string> trait_name;  // absent for an inherent impl
  std::string type_name;
  Vec<TypeBinding> type_bindings;
  Vec<Function> methods;
};

struct ActorDecl {
  std::uint32_t id = 0;
  Span span;
  std::string name;
  Vec<FieldDef> fields;
  Vec<Function> handlers;
};

enum class IntentValueKind : std::uint8_t {
  kStringLit,
  kIntLit,
  kBoolLit,
  kFloatLit,
  kFnRef,
  kList
};

struct IntentConfigValue {
  IntentValueKind kind = IntentValueKind::kStringLit;
  std::string text;  // StringLit, FnRef
  std::int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  Vec<IntentConfigValue> list;
  Span span;
};

struct IntentConfigEntry {
  std::string key;
  IntentConfigValue value;
  Span span;
};

struct IntentDecl {
  std::uint32_t id = 0;
  Span span;
  std::string name;
  Vec<IntentConfigEntry> config;
};

struct InvariantDecl {
  Expr condition;
  Span span;
};

struct TestDecl {
  std::uint32_t id = 0;
  Span span;
  std::string name;
  Vec<Annotation> annotations;
  Block body;
};

struct DescribeDecl {
  std::uint32_t id = 0;
  Span span;
  std::string name;
  Vec<Annotation> annotations;
  std::optional<Block> setup;
  std::optional<Block> teardown;
  Vec<TestDecl> tests;
  Vec<DescribeDecl> describes;
};

// One kind of top-level declaration, in source order (Module::order).
enum class ItemKind : std::uint8_t {
  kTypeAlias,
  kStruct,
  kEnum,
  kTrait,
  kImpl,
  kActor,
  kIntent,
  kInvariant,
  kFunction,
  kTest,
  kDescribe,
};

struct ItemRef {
  ItemKind kind;
  std::uint32_t index;  // into the vector of that kind
};

struct Module {
  // The arena the parser allocated this tree from (arena.h). First, so that it is destroyed
  // after every node; null for a module built by hand.
  ArenaOwner arena;
  std::uint32_t id = 0;
  Span span;
  std::string name;
  Vec<ImportDecl> imports;
  std::optional<Meta> meta;
  Vec<TypeAlias> type_aliases;
  Vec<TypeDecl> type_decls;
  Vec<EnumDecl> enum_decls;
  Vec<TraitDecl> trait_decls;
  Vec<ImplBlock> impl_blocks;
  Vec<ActorDecl> actor_decls;
  Vec<IntentDecl> intent_decls;
  Vec<InvariantDecl> invariants;
  Vec<Function> functions;
  Vec<TestDecl> test_decls;
  Vec<DescribeDecl> describe_decls;
  // Every declaration in source order (the vectors above group them by kind, as upstream).
  Vec<ItemRef> order;
  // False only when the parser built this tree and met none of the constructs inside function
  // bodies that sema's W0901 scan looks for (`.await`, `spawn`, `parallel`, `select`, `forall`,
  // a name starting with `channel_`): the scan then skips the bodies instead of walking the
  // whole tree a second time (sema/unchecked.h). True for a tree built or changed by hand.
  bool body_features = true;
};

// Returns upstream's span of an expression (the `span` field, or the block's span).
Span ExprSpan(const Expr& expr);

}  // namespace trove::kodo::ast
