#include "kodo/parse/parser.h"

#include <fmt/core.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "kodo/ast/describe.h"

namespace trove::kodo::parse {
namespace {

using ast::Block;
using ast::Expr;
using ast::ExprKind;
using ast::Pattern;
using ast::PatternKind;
using ast::Span;
using ast::Stmt;
using ast::StmtKind;
using ast::TypeExpr;
using ast::TypeKind;
using lex::Token;
using lex::TokenKind;
using K = TokenKind;

constexpr std::size_t kMaxRecoveredDiagnostics = 100;

// Thrown after a diagnostic is recorded, to unwind to the nearest synchronisation point (the
// top level in fail-fast mode). It never leaves this file: ParseModule catches it.
struct ParseAbort {};

std::string SpanText(Span span) { return ast::DescribeSpan(span); }

std::string FStringBody(const lex::FStringValue& value) {
  std::string body;
  for (const auto& part : value.parts) {
    if (part.kind == lex::FStringPart::Kind::kText) {
      body += part.text;
    } else {
      body += '{';
      body += part.text;
      body += '}';
    }
  }
  return body;
}

// Wraps a parse call so that vector::emplace_back constructs the node it returns directly in
// the vector's storage: the conversion's result initializes the element (GCC and Clang elide
// the move), where push_back(Parse...()) moved every finished node into place once more
// (docs/decisions/0031-kodo-perf4.md). If the call throws, nothing is added, as with push_back.
template <typename F>
struct InPlace {
  F make;
  operator std::invoke_result_t<F&>() { return make(); }  // NOLINT: implicit by design
};
template <typename F>
InPlace(F) -> InPlace<F>;

// Shared state of one ParseModule call: diagnostics, limits, node ids. Sub-parsers (f-string
// interpolations) share it with the parser of the file.
struct Shared {
  const SourceBuffer* source = nullptr;
  const ParseOptions* options = nullptr;
  std::vector<ParseDiagnostic> diagnostics;
  std::uint32_t next_id = 0;
  // Nesting (Nest and Chain below): `depth` is the level the next node would sit at, `high` the
  // deepest level reached since the innermost open Chain began, `max_depth` the bound.
  std::uint32_t depth = 0;
  std::uint32_t high = 0;
  std::uint32_t max_depth = ast::kMaxNestingDepth;
  // Whether a construct of ast::Module::body_features was parsed (f-string sub-parsers too).
  bool body_features = false;
};

class Parser {
 public:
  // `text` holds the tokens' text: the file, or an f-string interpolation whose tokens were
  // shifted by `shift` to file offsets. `stored` is the same text copied into the module's
  // arena: names in the tree are views into it.
  Parser(Shared& shared, lex::TokenVector tokens, const SourceBuffer& text, std::string_view stored,
         std::uint32_t shift = 0)
      : s_(shared), tokens_(std::move(tokens)), text_(text), stored_(stored), shift_(shift) {
    // The lexer ends every token array with Eof, and Advance never moves past it, so pos_
    // always indexes a token (Peek relies on it).
    TROVE_CHECK(!tokens_.empty() && tokens_.back().kind == K::kEof);
  }

  ast::Module ParseModuleDecl();
  Expr ParseExprTop() { return ParseExpr(); }

 private:
  // --- Token access -------------------------------------------------------------------------
  const Token& Peek(std::size_t ahead = 0) const {
    if (ahead == 0) return tokens_[pos_];  // in bounds: see the constructor
    const std::size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  K PeekKind(std::size_t ahead = 0) const { return Peek(ahead).kind; }
  bool Check(K kind) const { return PeekKind() == kind; }
  bool AtEnd() const { return PeekKind() == K::kEof; }
  Span TokSpan(const Token& t) const { return Span{t.range.begin, t.range.end}; }
  Span PeekSpan() const { return TokSpan(Peek()); }
  const Token& Advance() {
    const Token& t = tokens_[pos_];
    if (t.kind != K::kEof) ++pos_;
    prev_ = TokSpan(t);
    return t;
  }
  Span PrevSpan() const { return prev_; }
  // The token's text, a view into the arena's copy of the source: it lives as long as the tree,
  // so names are stored as such views (no copy).
  std::string_view TokenView(const Token& t) const {
    return stored_.substr(t.range.begin - shift_, t.range.size());
  }
  std::string TokenText(const Token& t) const {
    return std::string(text_.text().substr(t.range.begin - shift_, t.range.size()));
  }
  std::string Found(const Token& t) const {
    if (t.kind == K::kIdent) return "Ident(" + ast::RustDebugString(TokenText(t)) + ")";
    return TokenDebug(t, text_);
  }
  bool IsName(K kind) const { return kind == K::kIdent || lex::IsContextualKeyword(kind); }

  // --- Errors -------------------------------------------------------------------------------
  [[noreturn]] void Fail(std::string_view expected) {
    if (AtEnd()) FailEof(expected);
    const Token& t = Peek();
    ParseDiagnostic d;
    d.code = "E0100";
    d.message =
        fmt::format("expected {}, found {} at {}", expected, Found(t), SpanText(TokSpan(t)));
    d.range = t.range;
    d.suggestion = "check for missing delimiters or keywords";
    if (auto closer = Closer(expected)) {
      d.fix_patch = FixPatch{fmt::format("insert closing `{}`", *closer), t.range.begin,
                             t.range.begin, std::string(*closer)};
    }
    Report(std::move(d));
  }
  [[noreturn]] void FailEof(std::string_view expected) {
    ParseDiagnostic d;
    d.code = "E0101";
    d.message = fmt::format("unexpected end of input, expected {}", expected);
    d.suggestion = fmt::format("the file ended before the parser found {}", expected);
    if (auto closer = Closer(expected)) {
      // Upstream places this insertion at offset 0 [I] (docs/kodo.md §6.1), where it cannot parse;
      // it goes at the end of the file, as its description says (decision 0047).
      const auto end = static_cast<std::uint32_t>(s_.source->size());
      d.fix_patch = FixPatch{fmt::format("append closing `{}` at end of file", *closer), end, end,
                             fmt::format("\n{}\n", *closer)};
    }
    Report(std::move(d));
  }
  [[noreturn]] void FailTooDeep() {
    const Token& t = Peek();
    ParseDiagnostic d;
    d.code = "E0100";
    d.message = fmt::format("nesting too deep (more than {} levels) at {}", s_.max_depth,
                            SpanText(TokSpan(t)));
    d.range = t.range;
    d.suggestion = "split the expression or block into smaller functions or let bindings";
    Report(std::move(d));
  }
  [[noreturn]] void Report(ParseDiagnostic d) {
    if (s_.diagnostics.size() < kMaxRecoveredDiagnostics) s_.diagnostics.push_back(std::move(d));
    throw ParseAbort{};
  }
  static std::optional<std::string_view> Closer(std::string_view expected) {
    if (expected == "RBrace") return "}";
    if (expected == "RParen") return ")";
    if (expected == "RBracket") return "]";
    return std::nullopt;
  }
  bool Recovering() const { return s_.options->recover; }

  // Consumes a token of `kind` or fails with "expected <Debug name>".
  const Token& Expect(K kind) {
    if (!Check(kind)) Fail(lex::DebugName(kind));
    return Advance();
  }
  // NAME: an identifier or a contextual keyword.
  std::string ParseName() {
    if (!IsName(PeekKind())) Fail("identifier");
    return TokenText(Advance());
  }
  // The same as a view into the source text.
  std::string_view ParseNameView() {
    if (!IsName(PeekKind())) Fail("identifier");
    return TokenView(Advance());
  }
  // The same, assigned into `out` (no temporary string to move).
  void ParseNameInto(std::string& out) {
    if (!IsName(PeekKind())) Fail("identifier");
    out.assign(TokenView(Advance()));
  }
  // The same for a field of the tree that is a view of arena text (ast.h).
  void ParseNameInto(std::string_view& out) { out = ParseNameView(); }

  // RAII nesting guard: one level for the construct being parsed (a parenthesis, block,
  // statement, `if`, closure, unary operator, type, pattern...).
  class Nest {
   public:
    explicit Nest(Parser& p) : p_(p) {
      if (++p_.s_.depth > p_.s_.max_depth) {
        --p_.s_.depth;
        p_.FailTooDeep();
      }
      if (p_.s_.depth > p_.s_.high) p_.s_.high = p_.s_.depth;
    }
    ~Nest() { --p_.s_.depth; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    Parser& p_;
  };

  // Counts the links of a left-associative chain (binary operators, postfix calls, fields,
  // `?`, `.await`, a range), which the parser reads in a loop but which nest in the tree:
  // `a.f().g()` is a call of a field of a call of a field of `a`, and every later walk
  // (checker, describe, annotate) recurses once per link. Nest alone would not count them,
  // so `1 + 1 + ... + 1` or a long method chain gave a tree deep enough to overflow the stack.
  // A link sits one level above the deeper of its operands: the tree so far (whose depth is
  // what `high` reached while it was parsed) and the operand parsed after the previous link.
  // So the level counted for any node is at least its height in the tree, whatever mix of
  // chains, parentheses and blocks built it, and the bound holds for the tree, not only for
  // the parser's own recursion. Declare a Chain before any Nest of the same function.
  class Chain {
   public:
    explicit Chain(Parser& p)
        : p_(p), base_(p.s_.depth), saved_high_(p.s_.high), level_(p.s_.depth) {
      p_.s_.high = base_;
    }
    ~Chain() {
      p_.s_.high = std::max({saved_high_, level_, p_.s_.high});
      p_.s_.depth = base_;
    }
    Chain(const Chain&) = delete;
    Chain& operator=(const Chain&) = delete;

    // Called at the link's token, before the tree so far becomes the link's operand.
    void Link() {
      level_ = std::max(level_, p_.s_.high) + 1;
      if (level_ > p_.s_.max_depth) p_.FailTooDeep();
      // The next operand is parsed above the link: its own nesting adds to this level.
      p_.s_.depth = level_;
      p_.s_.high = level_;
    }

   private:
    Parser& p_;
    const std::uint32_t base_;
    const std::uint32_t saved_high_;
    std::uint32_t level_;
  };

  // --- Declarations -------------------------------------------------------------------------
  static bool IsItemStart(K k) {
    switch (k) {
      case K::kFn:
      case K::kAt:
      case K::kStruct:
      case K::kEnum:
      case K::kTrait:
      case K::kImpl:
      case K::kActor:
      case K::kAsync:
      case K::kIntent:
      case K::kType:
      case K::kPub:
      case K::kTest:
      case K::kDescribe:
      case K::kInvariant:
        return true;
      default:
        return false;
    }
  }
  void ParseItem(ast::Module& m);
  void SyncToItem();
  ast::ImportDecl ParseImport();
  ast::Meta ParseMeta();
  ast::Vec<ast::Annotation> ParseAnnotations();
  ast::Annotation ParseAnnotation();
  ast::Vec<ast::GenericParam> ParseGenerics();
  ast::Function ParseFunction(bool allow_async, bool method);
  void ParseContracts(ast::Function& f);
  ast::Param ParseParam(bool allow_qualifier, bool allow_self, bool* is_self);
  ast::TypeDecl ParseStruct();
  ast::EnumDecl ParseEnum();
  ast::TypeAlias ParseTypeAlias();
  ast::TraitDecl ParseTrait();
  ast::ImplBlock ParseImpl();
  ast::ActorDecl ParseActor();
  ast::IntentDecl ParseIntent();
  ast::IntentConfigValue ParseIntentValue();
  ast::InvariantDecl ParseInvariant();
  ast::TestDecl ParseTest(ast::Vec<ast::Annotation> annotations);
  ast::DescribeDecl ParseDescribe(ast::Vec<ast::Annotation> annotations);
  ast::Vec<ast::FieldDef> ParseFieldDefs(bool stop_at_fn);

  // --- Types --------------------------------------------------------------------------------
  TypeExpr ParseType();
  TypeExpr ParseNamedType();

  // --- Statements ---------------------------------------------------------------------------
  Block ParseBlock();
  void SyncToStmt();
  Stmt ParseStmt();
  Stmt ParseLet();
  Stmt ParseReturn();
  Stmt ParseFor();
  Stmt ParseIfLet();
  Stmt ParseSelect();
  Stmt ParseForall();
  bool AtExprStart() const;

  // --- Expressions --------------------------------------------------------------------------
  Expr ParseExpr();
  Expr ParseCoalesce();
  Expr ParseBinary(int min_level);
  Expr ParseUnary();
  Expr ParsePostfix();
  Expr ParsePrimary();
  Expr ParseAtom();  // literals, names, enum variants, struct literals
  Expr ParseParenOrTuple();
  Expr ParseIf();
  Expr ParseMatch();
  // Fills `e` (a fresh Expr), so that ParsePrimary returns one named Expr on every path and
  // the compiler constructs it in place (NRVO) instead of moving it.
  void ParseStructLit(Span start, Expr& e);  // REQUIRES: e.text holds the struct's name
  Expr ParseClosure();
  Expr ParseFString();
  bool IsStructLiteralStart() const {
    return Check(K::kLBrace) && PeekKind(1) == K::kIdent && PeekKind(2) == K::kColon;
  }

  // --- Patterns -----------------------------------------------------------------------------
  Pattern ParsePattern();
  Pattern ParseVariantTail(std::string_view first, Span start, bool qualified_only);
  Pattern ParseSubPattern();

  // Operands are taken by rvalue reference, not by value: an Expr is 128 bytes, and each
  // by-value parameter cost one more move per node (docs/decisions/0026-kodo-perf3.md).
  static Expr MakeBinary(ExprKind kind, ast::BinOp op, Expr&& left, Expr&& right) {
    Expr e;
    e.kind = kind;
    e.bin_op = op;
    e.span = ast::ExprSpan(left).Merge(ast::ExprSpan(right));
    e.operands.reserve(2);
    e.operands.push_back(std::move(left));
    e.operands.push_back(std::move(right));
    return e;
  }
  static Expr MakeUnaryLike(ExprKind kind, Expr&& operand, Span span) {
    Expr e;
    e.kind = kind;
    e.span = span;
    e.operands.push_back(std::move(operand));
    return e;
  }
  static Expr BlockExpr(Block block) {
    Expr e;
    e.kind = ExprKind::kBlock;
    e.span = block.span;
    e.extra = ast::MakeBox<ast::ExprExtra>();
    e.extra->block = std::move(block);
    return e;
  }

  Shared& s_;
  lex::TokenVector tokens_;
  const SourceBuffer& text_;
  std::string_view stored_;
  std::uint32_t shift_;
  std::size_t pos_ = 0;
  Span prev_;
};

// =============================================================================================
// Module and declarations

ast::Module Parser::ParseModuleDecl() {
  ast::Module m;
  const Span start = PeekSpan();
  Expect(K::kModule);
  ParseNameInto(m.name);
  Expect(K::kLBrace);
  while (Check(K::kImport) || Check(K::kFrom)) {
    if (!Recovering()) {
      m.imports.push_back(ParseImport());
      continue;
    }
    try {
      m.imports.push_back(ParseImport());
    } catch (const ParseAbort&) {
      SyncToItem();
    }
  }
  if (Check(K::kMeta)) {
    if (!Recovering()) {
      m.meta = ParseMeta();
    } else {
      try {
        m.meta = ParseMeta();
      } catch (const ParseAbort&) {
        SyncToItem();
      }
    }
  }
  while (IsItemStart(PeekKind())) {
    if (!Recovering()) {
      ParseItem(m);
      continue;
    }
    const std::size_t before = pos_;
    try {
      ParseItem(m);
    } catch (const ParseAbort&) {
      if (pos_ == before) Advance();
      SyncToItem();
    }
    if (s_.diagnostics.size() >= kMaxRecoveredDiagnostics) break;
  }
  if (Recovering()) {
    try {
      Expect(K::kRBrace);
    } catch (const ParseAbort&) {
    }
  } else {
    Expect(K::kRBrace);
  }
  m.span = start.Merge(PrevSpan());
  m.id = s_.next_id++;
  return m;
}

void Parser::SyncToItem() {
  while (!AtEnd() && !IsItemStart(PeekKind()) && !Check(K::kModule)) Advance();
}

void Parser::ParseItem(ast::Module& m) {
  auto add = [&](ast::ItemKind kind, std::size_t index) {
    m.order.push_back(ast::ItemRef{kind, static_cast<std::uint32_t>(index)});
  };
  switch (PeekKind()) {
    case K::kType:
      m.type_aliases.emplace_back(InPlace{[&] { return ParseTypeAlias(); }});
      add(ast::ItemKind::kTypeAlias, m.type_aliases.size() - 1);
      return;
    case K::kStruct:
      m.type_decls.emplace_back(InPlace{[&] { return ParseStruct(); }});
      add(ast::ItemKind::kStruct, m.type_decls.size() - 1);
      return;
    case K::kEnum:
      m.enum_decls.emplace_back(InPlace{[&] { return ParseEnum(); }});
      add(ast::ItemKind::kEnum, m.enum_decls.size() - 1);
      return;
    case K::kTrait:
      m.trait_decls.emplace_back(InPlace{[&] { return ParseTrait(); }});
      add(ast::ItemKind::kTrait, m.trait_decls.size() - 1);
      return;
    case K::kImpl:
      m.impl_blocks.emplace_back(InPlace{[&] { return ParseImpl(); }});
      add(ast::ItemKind::kImpl, m.impl_blocks.size() - 1);
      return;
    case K::kActor:
      m.actor_decls.emplace_back(InPlace{[&] { return ParseActor(); }});
      add(ast::ItemKind::kActor, m.actor_decls.size() - 1);
      return;
    case K::kIntent:
      m.intent_decls.emplace_back(InPlace{[&] { return ParseIntent(); }});
      add(ast::ItemKind::kIntent, m.intent_decls.size() - 1);
      return;
    case K::kInvariant:
      m.invariants.emplace_back(InPlace{[&] { return ParseInvariant(); }});
      add(ast::ItemKind::kInvariant, m.invariants.size() - 1);
      return;
    case K::kPub: {
      Advance();
      if (Check(K::kStruct)) {
        ast::TypeDecl decl = ParseStruct();
        decl.visibility = ast::Visibility::kPublic;
        m.type_decls.push_back(std::move(decl));
        add(ast::ItemKind::kStruct, m.type_decls.size() - 1);
        return;
      }
      ast::Vec<ast::Annotation> annotations = ParseAnnotations();
      ast::Function f = ParseFunction(/*allow_async=*/true, /*method=*/false);
      f.visibility = ast::Visibility::kPublic;
      f.annotations = std::move(annotations);
      m.functions.push_back(std::move(f));
      add(ast::ItemKind::kFunction, m.functions.size() - 1);
      return;
    }
    default:
      break;
  }
  // Annotation* ( TestDecl | DescribeDecl | 'pub'? FnDecl )
  ast::Vec<ast::Annotation> annotations = ParseAnnotations();
  if (Check(K::kTest)) {
    m.test_decls.emplace_back(InPlace{[&] { return ParseTest(std::move(annotations)); }});
    add(ast::ItemKind::kTest, m.test_decls.size() - 1);
    return;
  }
  if (Check(K::kDescribe)) {
    m.describe_decls.emplace_back(InPlace{[&] { return ParseDescribe(std::move(annotations)); }});
    add(ast::ItemKind::kDescribe, m.describe_decls.size() - 1);
    return;
  }
  bool is_pub = false;
  if (Check(K::kPub)) {
    Advance();
    is_pub = true;
  }
  ast::Function f = ParseFunction(/*allow_async=*/true, /*method=*/false);
  if (is_pub) f.visibility = ast::Visibility::kPublic;
  f.annotations = std::move(annotations);
  m.functions.push_back(std::move(f));
  add(ast::ItemKind::kFunction, m.functions.size() - 1);
}

ast::ImportDecl Parser::ParseImport() {
  ast::ImportDecl decl;
  const Span start = PeekSpan();
  const bool from = Check(K::kFrom);
  Advance();  // `import` or `from`
  decl.from_form = from;
  decl.path.push_back(ParseName());
  while (Check(K::kColonColon) || Check(K::kDot)) {
    Advance();
    decl.path.push_back(ParseName());
  }
  if (from) {
    Expect(K::kImport);
    decl.names.push_back(ParseName());
    while (Check(K::kComma)) {
      Advance();
      decl.names.push_back(ParseName());
    }
  } else if (Check(K::kLBrace)) {
    Advance();
    decl.names.push_back(ParseName());
    while (Check(K::kComma)) {
      Advance();
      if (Check(K::kRBrace)) break;
      decl.names.push_back(ParseName());
    }
    Expect(K::kRBrace);
  }
  decl.span = start.Merge(PrevSpan());
  return decl;
}

ast::Meta Parser::ParseMeta() {
  ast::Meta meta;
  const Span start = TokSpan(Expect(K::kMeta));
  Expect(K::kLBrace);
  while (!Check(K::kRBrace)) {
    ast::MetaEntry entry;
    ParseNameInto(entry.key);
    Expect(K::kColon);
    if (!Check(K::kStringLit)) Fail("string literal");
    const Token& value = Advance();
    entry.value = value.string_value();
    entry.span = Span{start.start, value.range.end};
    meta.entries.push_back(std::move(entry));
    if (Check(K::kComma)) Advance();
  }
  meta.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  meta.id = s_.next_id++;
  return meta;
}

ast::Vec<ast::Annotation> Parser::ParseAnnotations() {
  ast::Vec<ast::Annotation> out;
  while (Check(K::kAt)) out.emplace_back(InPlace{[&] { return ParseAnnotation(); }});
  return out;
}

ast::Annotation Parser::ParseAnnotation() {
  ast::Annotation a;
  const Span start = TokSpan(Expect(K::kAt));
  ParseNameInto(a.name);
  if (Check(K::kLParen)) {
    Advance();
    if (!Check(K::kRParen)) {
      while (true) {
        ast::AnnotationArg arg;
        if (Check(K::kIdent) && PeekKind(1) == K::kColon) {
          arg.named = true;
          arg.key = TokenText(Advance());
          Advance();  // ':'
        }
        arg.value = ParseExpr();
        a.args.push_back(std::move(arg));
        if (!Check(K::kComma)) break;
        Advance();
      }
    }
    Expect(K::kRParen);
  }
  a.span = start.Merge(PrevSpan());
  return a;
}

ast::Vec<ast::GenericParam> Parser::ParseGenerics() {
  ast::Vec<ast::GenericParam> out;
  if (!Check(K::kLt)) return out;
  Advance();
  while (true) {
    ast::GenericParam g;
    const Span start = PeekSpan();
    ParseNameInto(g.name);
    if (Check(K::kColon)) {
      Advance();
      g.bounds.push_back(ParseName());
      while (Check(K::kPlus)) {
        Advance();
        g.bounds.push_back(ParseName());
      }
    }
    g.span = start.Merge(PrevSpan());
    out.push_back(std::move(g));
    if (!Check(K::kComma)) break;
    Advance();
  }
  Expect(K::kGt);
  return out;
}

ast::Param Parser::ParseParam(bool allow_qualifier, bool allow_self, bool* is_self) {
  ast::Param p;
  const Span start = PeekSpan();
  if (allow_self && Check(K::kSelfValue)) {
    Advance();
    p.name = "self";
    p.ty = TypeExpr::Named("Self");
    p.span = start;
    if (is_self) *is_self = true;
    return p;
  }
  if (allow_qualifier) {
    if (Check(K::kOwn)) {
      Advance();
    } else if (Check(K::kRef)) {
      Advance();
      p.ownership = ast::Ownership::kRef;
    } else if (Check(K::kMut)) {
      Advance();
      p.ownership = ast::Ownership::kMut;
    }
  }
  ParseNameInto(p.name);
  Expect(K::kColon);
  p.ty = ParseType();
  p.span = start.Merge(PrevSpan());
  return p;
}

void Parser::ParseContracts(ast::Function& f) {
  while (Check(K::kRequires) || Check(K::kEnsures)) {
    const bool is_requires = Check(K::kRequires);
    const Span clause_start = TokSpan(Advance());
    if (!Recovering()) {
      Expect(K::kLBrace);
      Expr e = ParseExpr();
      Expect(K::kRBrace);
      (is_requires ? f.requires_ : f.ensures).push_back(std::move(e));
      continue;
    }
    // Recovering: a malformed clause becomes E0104 wrapping the inner error; skip to the
    // clause's closing brace and go on with the next clause or the body.
    const std::size_t before = s_.diagnostics.size();
    try {
      Expect(K::kLBrace);
      Expr e = ParseExpr();
      Expect(K::kRBrace);
      (is_requires ? f.requires_ : f.ensures).push_back(std::move(e));
    } catch (const ParseAbort&) {
      std::string inner;
      if (s_.diagnostics.size() > before) {
        inner = s_.diagnostics.back().message;
        s_.diagnostics.pop_back();
      }
      const Span clause = clause_start;  // upstream: the `requires`/`ensures` keyword
      ParseDiagnostic d;
      d.code = "E0104";
      d.message = fmt::format("malformed {} clause at {}: {}", is_requires ? "requires" : "ensures",
                              SpanText(clause), inner);
      d.range = s_.source->Range(clause.start, clause.end);
      d.suggestion = fmt::format("check the expression inside the `{}` block for syntax errors",
                                 is_requires ? "requires" : "ensures");
      s_.diagnostics.push_back(std::move(d));
      int depth = 1;
      while (!AtEnd() && depth > 0) {
        if (Check(K::kLBrace)) ++depth;
        if (Check(K::kRBrace)) --depth;
        if (depth == 0) break;
        Advance();
      }
      if (Check(K::kRBrace)) Advance();
    }
  }
}

ast::Function Parser::ParseFunction(bool allow_async, bool method) {
  ast::Function f;
  if (allow_async && Check(K::kAsync)) {
    Advance();
    f.is_async = true;
  }
  const Span start = TokSpan(Expect(K::kFn));
  ParseNameInto(f.name);
  f.generic_params = ParseGenerics();
  // Upstream's list loop: a separator is required before every parameter after the first, so
  // `f(a: Int b: Int)` is "expected Comma" and `f(a: Int,)` is "expected identifier".
  Expect(K::kLParen);
  while (!Check(K::kRParen)) {
    if (!f.params.empty()) Expect(K::kComma);
    f.params.emplace_back(InPlace{
        [&] { return ParseParam(/*allow_qualifier=*/!method, /*allow_self=*/method, nullptr); }});
  }
  Expect(K::kRParen);
  if (Check(K::kArrow)) {
    Advance();
    f.return_type = ParseType();
  }
  ParseContracts(f);
  f.body = ParseBlock();
  f.span = start.Merge(f.body.span);
  f.id = s_.next_id++;
  return f;
}

ast::Vec<ast::FieldDef> Parser::ParseFieldDefs(bool stop_at_fn) {
  ast::Vec<ast::FieldDef> fields;
  while (!Check(K::kRBrace) && !(stop_at_fn && Check(K::kFn))) {
    ast::FieldDef field;
    const Span start = PeekSpan();
    ParseNameInto(field.name);
    Expect(K::kColon);
    field.ty = ParseType();
    field.span = start.Merge(PrevSpan());
    fields.push_back(std::move(field));
    if (Check(K::kComma)) Advance();
  }
  return fields;
}

ast::TypeDecl Parser::ParseStruct() {
  ast::TypeDecl decl;
  const Span start = TokSpan(Expect(K::kStruct));
  ParseNameInto(decl.name);
  decl.generic_params = ParseGenerics();
  Expect(K::kLBrace);
  decl.fields = ParseFieldDefs(/*stop_at_fn=*/false);
  decl.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  decl.id = s_.next_id++;
  return decl;
}

ast::EnumDecl Parser::ParseEnum() {
  ast::EnumDecl decl;
  const Span start = TokSpan(Expect(K::kEnum));
  ParseNameInto(decl.name);
  decl.generic_params = ParseGenerics();
  Expect(K::kLBrace);
  while (!Check(K::kRBrace)) {
    ast::EnumVariant v;
    const Span vstart = PeekSpan();
    ParseNameInto(v.name);
    if (Check(K::kLParen)) {
      Advance();
      while (!Check(K::kRParen)) {
        if (!v.fields.empty()) Expect(K::kComma);
        v.fields.emplace_back(InPlace{[&] { return ParseType(); }});
      }
      Expect(K::kRParen);
    }
    v.span = vstart.Merge(PrevSpan());
    decl.variants.push_back(std::move(v));
    if (Check(K::kComma)) Advance();
  }
  decl.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  decl.id = s_.next_id++;
  return decl;
}

ast::TypeAlias Parser::ParseTypeAlias() {
  ast::TypeAlias alias;
  const Span start = TokSpan(Expect(K::kType));
  ParseNameInto(alias.name);
  Expect(K::kEq);
  alias.base_type = ParseType();
  if (Check(K::kRequires)) {
    Advance();
    Expect(K::kLBrace);
    alias.constraint = ParseExpr();
    Expect(K::kRBrace);
  }
  alias.span = start.Merge(PrevSpan());
  alias.id = s_.next_id++;
  return alias;
}

ast::TraitDecl Parser::ParseTrait() {
  ast::TraitDecl decl;
  const Span start = TokSpan(Expect(K::kTrait));
  ParseNameInto(decl.name);
  Expect(K::kLBrace);
  while (Check(K::kFn) || Check(K::kType)) {
    if (Check(K::kType)) {
      ast::AssociatedType at;
      const Span tstart = TokSpan(Advance());
      ParseNameInto(at.name);
      if (Check(K::kColon)) {
        Advance();
        at.bounds.push_back(ParseName());
        while (Check(K::kPlus)) {
          Advance();
          at.bounds.push_back(ParseName());
        }
      }
      at.span = tstart.Merge(PrevSpan());
      decl.associated_types.push_back(std::move(at));
      continue;
    }
    ast::TraitMethod method;
    const Span mstart = TokSpan(Expect(K::kFn));
    ParseNameInto(method.name);
    Expect(K::kLParen);
    while (!Check(K::kRParen)) {
      if (!method.params.empty()) Expect(K::kComma);
      bool is_self = false;
      method.params.emplace_back(InPlace{
          [&] { return ParseParam(/*allow_qualifier=*/false, /*allow_self=*/true, &is_self); }});
      if (is_self) method.has_self = true;
    }
    Expect(K::kRParen);
    if (Check(K::kArrow)) {
      Advance();
      method.return_type = ParseType();
    }
    if (Check(K::kLBrace)) method.body = ParseBlock();
    method.span = mstart.Merge(PrevSpan());
    decl.methods.push_back(std::move(method));
  }
  decl.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  decl.id = s_.next_id++;
  return decl;
}

ast::ImplBlock Parser::ParseImpl() {
  ast::ImplBlock block;
  const Span start = TokSpan(Expect(K::kImpl));
  // The implementing type's name as arena text too: `self` parameters' types point to it.
  std::string_view type_name = ParseNameView();
  if (Check(K::kFor)) {
    Advance();
    block.trait_name = std::string(type_name);
    type_name = ParseNameView();
  }
  block.type_name.assign(type_name);
  Expect(K::kLBrace);
  while (Check(K::kFn) || Check(K::kType)) {
    if (Check(K::kType)) {
      ast::TypeBinding binding;
      const Span tstart = TokSpan(Advance());
      ParseNameInto(binding.name);
      Expect(K::kEq);
      binding.ty = ParseType();
      binding.span = tstart.Merge(PrevSpan());
      block.type_bindings.push_back(std::move(binding));
      continue;
    }
    ast::Function method = ParseFunction(/*allow_async=*/false, /*method=*/true);
    // Upstream resolves a method's `self` to the implementing type.
    for (ast::Param& p : method.params) {
      if (p.name == "self") p.ty = TypeExpr::Named(type_name);
    }
    block.methods.push_back(std::move(method));
  }
  block.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  block.id = s_.next_id++;
  return block;
}

ast::ActorDecl Parser::ParseActor() {
  ast::ActorDecl decl;
  const Span start = TokSpan(Expect(K::kActor));
  const std::string_view actor_name = ParseNameView();  // arena text, for `self`'s type
  decl.name.assign(actor_name);
  Expect(K::kLBrace);
  decl.fields = ParseFieldDefs(/*stop_at_fn=*/true);
  while (Check(K::kFn)) {
    ast::Function handler = ParseFunction(/*allow_async=*/false, /*method=*/true);
    for (ast::Param& p : handler.params) {
      if (p.name == "self") p.ty = TypeExpr::Named(actor_name);
    }
    decl.handlers.push_back(std::move(handler));
  }
  decl.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  decl.id = s_.next_id++;
  return decl;
}

ast::IntentConfigValue Parser::ParseIntentValue() {
  Nest nest(*this);
  ast::IntentConfigValue v;
  const Token& t = Peek();
  v.span = TokSpan(t);
  switch (t.kind) {
    case K::kStringLit:
      v.kind = ast::IntentValueKind::kStringLit;
      v.text = t.string_value();
      Advance();
      return v;
    case K::kIntLit:
      v.kind = ast::IntentValueKind::kIntLit;
      v.int_value = t.int_value();
      Advance();
      return v;
    case K::kFloatLit:
      v.kind = ast::IntentValueKind::kFloatLit;
      v.float_value = t.float_value();
      Advance();
      return v;
    case K::kTrue:
    case K::kFalse:
      v.kind = ast::IntentValueKind::kBoolLit;
      v.bool_value = t.kind == K::kTrue;
      Advance();
      return v;
    case K::kIdent:
      v.kind = ast::IntentValueKind::kFnRef;
      v.text = TokenText(t);
      Advance();
      return v;
    case K::kLBracket: {
      v.kind = ast::IntentValueKind::kList;
      const Span start = TokSpan(Advance());
      while (!Check(K::kRBracket)) {
        if (!v.list.empty()) Expect(K::kComma);
        v.list.push_back(ParseIntentValue());
      }
      v.span = start.Merge(TokSpan(Expect(K::kRBracket)));
      return v;
    }
    case K::kEof:
      FailEof("intent config value");
    default:
      Fail("intent config value (string, int, float, bool, identifier, or list)");
  }
}

ast::IntentDecl Parser::ParseIntent() {
  ast::IntentDecl decl;
  const Span start = TokSpan(Expect(K::kIntent));
  ParseNameInto(decl.name);
  Expect(K::kLBrace);
  while (!Check(K::kRBrace)) {
    ast::IntentConfigEntry entry;
    const Span estart = PeekSpan();
    ParseNameInto(entry.key);
    Expect(K::kColon);
    entry.value = ParseIntentValue();
    entry.span = estart.Merge(PrevSpan());
    decl.config.push_back(std::move(entry));
    if (Check(K::kComma)) Advance();
  }
  decl.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  decl.id = s_.next_id++;
  return decl;
}

ast::InvariantDecl Parser::ParseInvariant() {
  ast::InvariantDecl decl;
  const Span start = TokSpan(Expect(K::kInvariant));
  Expect(K::kLBrace);
  decl.condition = ParseExpr();
  decl.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  return decl;
}

ast::TestDecl Parser::ParseTest(ast::Vec<ast::Annotation> annotations) {
  ast::TestDecl decl;
  decl.annotations = std::move(annotations);
  const Span start = TokSpan(Expect(K::kTest));
  if (!Check(K::kStringLit)) Fail("string literal for test name");
  decl.name = Advance().string_value();
  decl.body = ParseBlock();
  decl.span = start.Merge(decl.body.span);
  decl.id = s_.next_id++;
  return decl;
}

ast::DescribeDecl Parser::ParseDescribe(ast::Vec<ast::Annotation> annotations) {
  Nest nest(*this);
  ast::DescribeDecl decl;
  decl.annotations = std::move(annotations);
  const Span start = TokSpan(Expect(K::kDescribe));
  if (!Check(K::kStringLit)) Fail("string literal for describe name");
  decl.name = Advance().string_value();
  Expect(K::kLBrace);
  while (!Check(K::kRBrace)) {
    if (AtEnd()) FailEof("}");  // upstream's own check, before annotations
    ast::Vec<ast::Annotation> inner = ParseAnnotations();
    switch (PeekKind()) {
      case K::kSetup:
        Advance();
        decl.setup = ParseBlock();
        break;
      case K::kTeardown:
        Advance();
        decl.teardown = ParseBlock();
        break;
      case K::kTest:
        decl.tests.push_back(ParseTest(std::move(inner)));
        break;
      case K::kDescribe:
        decl.describes.push_back(ParseDescribe(std::move(inner)));
        break;
      default:
        Fail("setup, teardown, test, describe, or `}`");
    }
  }
  decl.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  decl.id = s_.next_id++;
  return decl;
}

// =============================================================================================
// Types

TypeExpr Parser::ParseType() {
  Nest nest(*this);
  if (Check(K::kLParen)) {
    Advance();
    ast::Vec<TypeExpr> elems;
    bool trailing_comma = false;
    if (!Check(K::kRParen)) {
      elems.emplace_back(InPlace{[&] { return ParseType(); }});
      while (Check(K::kComma)) {
        Advance();
        if (Check(K::kRParen)) {
          trailing_comma = true;
          break;
        }
        elems.emplace_back(InPlace{[&] { return ParseType(); }});
      }
    }
    Expect(K::kRParen);
    if (Check(K::kArrow)) {
      Advance();
      TypeExpr fn;
      fn.kind = TypeKind::kFunction;
      fn.args = std::move(elems);
      fn.args.emplace_back(InPlace{[&] { return ParseType(); }});
      return fn;
    }
    if (elems.empty()) return TypeExpr::Unit();
    if (elems.size() == 1 && !trailing_comma) return std::move(elems[0]);
    TypeExpr tuple;
    tuple.kind = TypeKind::kTuple;
    tuple.args = std::move(elems);
    return tuple;
  }
  if (Check(K::kIdent) && TokenView(Peek()) == "dyn") {
    Advance();
    TypeExpr t;
    t.kind = TypeKind::kDynTrait;
    ParseNameInto(t.name);
    return t;
  }
  return ParseNamedType();
}

// NAME ('<' Type (',' Type)* '>')? '?'?, into one named result on every path (NRVO).
TypeExpr Parser::ParseNamedType() {
  TypeExpr t;
  t.kind = TypeKind::kNamed;
  ParseNameInto(t.name);
  if (Check(K::kLt)) {
    Advance();
    t.kind = TypeKind::kGeneric;
    t.args.emplace_back(InPlace{[&] { return ParseType(); }});
    while (Check(K::kComma)) {
      Advance();
      t.args.emplace_back(InPlace{[&] { return ParseType(); }});
    }
    Expect(K::kGt);
  }
  if (Check(K::kQuestionMark)) {
    Advance();
    TypeExpr inner = std::move(t);
    t = TypeExpr{};
    t.kind = TypeKind::kOptional;
    t.args.push_back(std::move(inner));
  }
  return t;
}

// =============================================================================================
// Statements

Block Parser::ParseBlock() {
  Nest nest(*this);
  Block block;
  const Span start = TokSpan(Expect(K::kLBrace));
  while (!Check(K::kRBrace)) {
    if (!Recovering()) {
      block.stmts.emplace_back(InPlace{[&] { return ParseStmt(); }});
      continue;
    }
    const std::size_t before = pos_;
    try {
      block.stmts.emplace_back(InPlace{[&] { return ParseStmt(); }});
    } catch (const ParseAbort&) {
      if (AtEnd() || s_.diagnostics.size() >= kMaxRecoveredDiagnostics) throw;
      if (pos_ == before) Advance();
      SyncToStmt();
      // A declaration keyword means the block itself is broken: let the item level resync.
      if (AtEnd() || (IsItemStart(PeekKind()) && !Check(K::kTest) && !Check(K::kDescribe))) throw;
    }
  }
  block.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  return block;
}

void Parser::SyncToStmt() {
  int depth = 0;
  while (!AtEnd()) {
    switch (PeekKind()) {
      case K::kLBrace:
        ++depth;
        break;
      case K::kRBrace:
        if (depth == 0) return;
        --depth;
        break;
      case K::kLet:
      case K::kReturn:
      case K::kWhile:
      case K::kFor:
      case K::kBreak:
      case K::kContinue:
      case K::kSpawn:
      case K::kParallel:
      case K::kSelect:
      case K::kForall:
        if (depth == 0) return;
        break;
      case K::kFn:
      case K::kStruct:
      case K::kEnum:
      case K::kTrait:
      case K::kImpl:
      case K::kActor:
      case K::kIntent:
      case K::kAt:
      case K::kPub:
      case K::kInvariant:
        return;
      default:
        break;
    }
    Advance();
  }
}

bool Parser::AtExprStart() const {
  switch (PeekKind()) {
    case K::kIntLit:
    case K::kFloatLit:
    case K::kStringLit:
    case K::kFStringLit:
    case K::kTrue:
    case K::kFalse:
    case K::kIdent:
    case K::kSelfValue:
    case K::kIf:
    case K::kLBrace:
    case K::kLParen:
    case K::kBang:
    case K::kMinus:
    case K::kPipe:
    case K::kPipePipe:
      return true;
    default:
      return false;
  }
}

Stmt Parser::ParseStmt() {
  Nest nest(*this);
  switch (PeekKind()) {
    case K::kLet:
      return ParseLet();
    case K::kReturn:
      return ParseReturn();
    case K::kWhile: {
      Stmt s;
      s.kind = StmtKind::kWhile;
      const Span start = TokSpan(Advance());
      s.value = ParseExpr();
      s.body = ParseBlock();
      s.span = start.Merge(s.body.span);
      return s;
    }
    case K::kFor:
      return ParseFor();
    case K::kIf:
      if (PeekKind(1) == K::kLet) return ParseIfLet();
      break;
    case K::kBreak:
    case K::kContinue: {
      Stmt s;
      s.kind = Check(K::kBreak) ? StmtKind::kBreak : StmtKind::kContinue;
      s.span = TokSpan(Advance());
      return s;
    }
    case K::kSpawn: {
      s_.body_features = true;
      Stmt s;
      s.kind = StmtKind::kSpawn;
      const Span start = TokSpan(Advance());
      s.body = ParseBlock();
      s.span = start.Merge(s.body.span);
      return s;
    }
    case K::kParallel: {
      s_.body_features = true;
      Stmt s;
      s.kind = StmtKind::kParallel;
      const Span start = TokSpan(Advance());
      Expect(K::kLBrace);
      while (!Check(K::kRBrace)) s.body.stmts.emplace_back(InPlace{[&] { return ParseStmt(); }});
      s.span = start.Merge(TokSpan(Expect(K::kRBrace)));
      s.body.span = s.span;
      return s;
    }
    case K::kSelect:
      s_.body_features = true;
      return ParseSelect();
    case K::kForall:
      s_.body_features = true;
      return ParseForall();
    case K::kIdent:
      if (PeekKind(1) == K::kEq) {
        Stmt s;
        s.kind = StmtKind::kAssign;
        const Span start = PeekSpan();
        s.name = TokenView(Advance());
        Advance();  // '='
        s.value = ParseExpr();
        s.span = start.Merge(ast::ExprSpan(s.value));
        return s;
      }
      break;
    default:
      break;
  }
  Stmt s;
  s.kind = StmtKind::kExpr;
  s.value = ParseExpr();
  s.span = ast::ExprSpan(s.value);
  return s;
}

Stmt Parser::ParseLet() {
  Stmt s;
  const Span start = TokSpan(Expect(K::kLet));
  if (Check(K::kMut)) {
    Advance();
    s.mutable_ = true;
  }
  if (Check(K::kLParen)) {
    s.kind = StmtKind::kLetPattern;
    s.pattern = ast::MakeBox<ast::Pattern>(ParsePattern());
  } else {
    s.kind = StmtKind::kLet;
    ParseNameInto(s.name);
  }
  if (Check(K::kColon)) {
    Advance();
    s.ty = ast::MakeBox<TypeExpr>(ParseType());
  }
  Expect(K::kEq);
  s.value = ParseExpr();
  s.span = start.Merge(ast::ExprSpan(s.value));
  return s;
}

Stmt Parser::ParseReturn() {
  Stmt s;
  s.kind = StmtKind::kReturn;
  const Span start = TokSpan(Expect(K::kReturn));
  s.span = start;
  if (AtExprStart()) {
    s.has_value = true;
    s.value = ParseExpr();
    s.span = start.Merge(ast::ExprSpan(s.value));
  }
  return s;
}

Stmt Parser::ParseFor() {
  Stmt s;
  const Span start = TokSpan(Expect(K::kFor));
  ParseNameInto(s.name);
  if (!(Check(K::kIdent) && TokenView(Peek()) == "in")) Fail("in");
  Advance();
  Expr iter = ParseExpr();
  if (iter.kind == ExprKind::kRange) {
    s.kind = StmtKind::kFor;
    s.inclusive = iter.flag;
    s.value = std::move(iter.operands[0]);
    s.Extra().value2 = std::move(iter.operands[1]);
  } else {
    s.kind = StmtKind::kForIn;
    s.value = std::move(iter);
  }
  s.body = ParseBlock();
  s.span = start.Merge(s.body.span);
  return s;
}

Stmt Parser::ParseIfLet() {
  Stmt s;
  s.kind = StmtKind::kIfLet;
  const Span start = TokSpan(Expect(K::kIf));
  Expect(K::kLet);
  s.pattern = ast::MakeBox<ast::Pattern>(ParsePattern());
  Expect(K::kEq);
  s.value = ParseExpr();
  s.body = ParseBlock();
  Span end = s.body.span;
  if (Check(K::kElse)) {
    Advance();
    s.Extra().else_body = ParseBlock();
    end = s.extra->else_body->span;
  }
  s.span = start.Merge(end);
  return s;
}

Stmt Parser::ParseSelect() {
  Stmt s;
  s.kind = StmtKind::kSelect;
  const Span start = TokSpan(Expect(K::kSelect));
  Expect(K::kLBrace);
  s.Extra();  // even with no arms: every consumer reads extra->select_arms
  while (!Check(K::kRBrace)) {
    ast::SelectArm arm;
    arm.channel = ParseExpr();
    Expect(K::kFatArrow);
    Expect(K::kPipe);
    ParseNameInto(arm.binding);
    Expect(K::kColon);
    arm.ty = ParseType();
    Expect(K::kPipe);
    arm.body = ParseBlock();
    arm.span = ast::ExprSpan(arm.channel).Merge(arm.body.span);
    s.Extra().select_arms.push_back(std::move(arm));
  }
  s.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  return s;
}

Stmt Parser::ParseForall() {
  Stmt s;
  s.kind = StmtKind::kForall;
  const Span start = TokSpan(Expect(K::kForall));
  while (true) {
    ast::ForallBinding b;
    const Span bstart = PeekSpan();
    ParseNameInto(b.name);
    Expect(K::kColon);
    b.ty = ParseType();
    b.span = bstart.Merge(PrevSpan());
    s.Extra().forall_bindings.push_back(std::move(b));
    if (!Check(K::kComma)) break;
    Advance();
  }
  s.body = ParseBlock();
  s.span = start.Merge(s.body.span);
  return s;
}

// =============================================================================================
// Expressions

Expr Parser::ParseExpr() {
  Chain chain(*this);
  Nest nest(*this);
  // One named result on every path, so that it is constructed in place (NRVO).
  Expr left = ParseCoalesce();
  if (Check(K::kDotDot) || Check(K::kDotDotEq)) {
    chain.Link();
    const bool inclusive = Check(K::kDotDotEq);
    Advance();
    Expr right = ParseCoalesce();
    left = MakeBinary(ExprKind::kRange, ast::BinOp::kAdd, std::move(left), std::move(right));
    left.flag = inclusive;
  }
  return left;
}

namespace {
// Binary operators by precedence level, lowest first (docs/kodo.md §4.2, §4.5): 0 `??`, 1 `||`, 2
// `&&`,
// 3 `== !=`, 4 `< > <= >=`, 5 `+ -`, 6 `* / %`. All are left-associative.
constexpr int kNoOperator = -1;
constexpr int kTopLevel = 0;
struct BinaryInfo {
  int level = kNoOperator;
  ast::BinOp op = ast::BinOp::kAdd;
};
BinaryInfo BinaryOf(K kind) {
  switch (kind) {
    case K::kQuestionQuestion:
      return {0, ast::BinOp::kAdd};
    case K::kPipePipe:
      return {1, ast::BinOp::kOr};
    case K::kAmpAmp:
      return {2, ast::BinOp::kAnd};
    case K::kEqEq:
      return {3, ast::BinOp::kEq};
    case K::kBangEq:
      return {3, ast::BinOp::kNe};
    case K::kLt:
      return {4, ast::BinOp::kLt};
    case K::kGt:
      return {4, ast::BinOp::kGt};
    case K::kLtEq:
      return {4, ast::BinOp::kLe};
    case K::kGtEq:
      return {4, ast::BinOp::kGe};
    case K::kPlus:
      return {5, ast::BinOp::kAdd};
    case K::kMinus:
      return {5, ast::BinOp::kSub};
    case K::kStar:
      return {6, ast::BinOp::kMul};
    case K::kSlash:
      return {6, ast::BinOp::kDiv};
    case K::kPercent:
      return {6, ast::BinOp::kMod};
    default:
      return {};
  }
}
}  // namespace

Expr Parser::ParseCoalesce() { return ParseBinary(kTopLevel); }

// Precedence climbing: parses operators of level >= `min_level`; the right operand of a level-L
// operator takes only operators of level > L, which makes every level left-associative.
Expr Parser::ParseBinary(int min_level) {
  Chain chain(*this);
  Expr left = ParseUnary();
  while (true) {
    const BinaryInfo info = BinaryOf(PeekKind());
    if (info.level < min_level) break;  // also stops at kNoOperator
    chain.Link();
    Advance();
    // The right operand is parsed straight into the new node's operands (see InPlace).
    Expr e;
    e.kind = info.level == 0 ? ExprKind::kNullCoalesce : ExprKind::kBinaryOp;
    e.bin_op = info.op;
    e.operands.reserve(2);
    e.operands.push_back(std::move(left));
    e.operands.emplace_back(InPlace{[&] { return ParseBinary(info.level + 1); }});
    e.span = ast::ExprSpan(e.operands[0]).Merge(ast::ExprSpan(e.operands[1]));
    left = std::move(e);
  }
  return left;
}

Expr Parser::ParseUnary() {
  if (Check(K::kBang) || Check(K::kMinus)) {
    Nest nest(*this);
    const ast::UnaryOp op = Check(K::kBang) ? ast::UnaryOp::kNot : ast::UnaryOp::kNeg;
    const Span start = TokSpan(Advance());
    Expr operand = ParseUnary();
    const Span span = start.Merge(ast::ExprSpan(operand));
    Expr e = MakeUnaryLike(ExprKind::kUnaryOp, std::move(operand), span);
    e.unary_op = op;
    return e;
  }
  return ParsePostfix();
}

Expr Parser::ParsePostfix() {
  Chain chain(*this);
  Expr expr = ParsePrimary();
  while (true) {
    const K kind = PeekKind();
    if (kind == K::kLParen || kind == K::kQuestionDot || kind == K::kQuestionMark ||
        kind == K::kDot || kind == K::kIs) {
      chain.Link();
    }
    if (Check(K::kLParen)) {
      Advance();
      Expr call;
      call.kind = ExprKind::kCall;
      call.operands.push_back(std::move(expr));
      if (!Check(K::kRParen)) {
        call.operands.emplace_back(InPlace{[&] { return ParseExpr(); }});
        while (Check(K::kComma)) {
          Advance();
          call.operands.emplace_back(InPlace{[&] { return ParseExpr(); }});
        }
      }
      const Span end = TokSpan(Expect(K::kRParen));
      call.span = ast::ExprSpan(call.operands[0]).Merge(end);
      expr = std::move(call);
    } else if (Check(K::kQuestionDot)) {
      Advance();
      const std::string_view field = ParseNameView();
      const Span span = ast::ExprSpan(expr).Merge(PrevSpan());
      expr = MakeUnaryLike(ExprKind::kOptionalChain, std::move(expr), span);
      expr.text = field;
    } else if (Check(K::kQuestionMark)) {
      const Span span = ast::ExprSpan(expr).Merge(TokSpan(Advance()));
      expr = MakeUnaryLike(ExprKind::kTry, std::move(expr), span);
    } else if (Check(K::kDot)) {
      Advance();
      if (Check(K::kAwait)) {
        const Span span = ast::ExprSpan(expr).Merge(TokSpan(Advance()));
        expr = MakeUnaryLike(ExprKind::kAwait, std::move(expr), span);
        s_.body_features = true;
      } else if (Check(K::kIntLit)) {
        const Token& t = Advance();
        const std::int64_t index = t.int_value();
        const Span span = ast::ExprSpan(expr).Merge(TokSpan(t));
        expr = MakeUnaryLike(ExprKind::kTupleIndex, std::move(expr), span);
        expr.int_value = index;
      } else {
        const std::string_view field = ParseNameView();
        const Span span = ast::ExprSpan(expr).Merge(PrevSpan());
        expr = MakeUnaryLike(ExprKind::kFieldAccess, std::move(expr), span);
        expr.text = field;
      }
    } else if (Check(K::kIs)) {
      Advance();
      const std::string_view type_name = ParseNameView();
      const Span span = ast::ExprSpan(expr).Merge(PrevSpan());
      expr = MakeUnaryLike(ExprKind::kIs, std::move(expr), span);
      expr.text = type_name;
    } else {
      break;
    }
  }
  return expr;
}

// Constructs that have their own parse function are dispatched here, so that ParseAtom returns
// one named Expr on every path and it is constructed in place (NRVO) instead of moved.
Expr Parser::ParsePrimary() {
  switch (PeekKind()) {
    case K::kFStringLit:
      return ParseFString();
    case K::kIf:
      return ParseIf();
    case K::kMatch:
      return ParseMatch();
    case K::kLBrace:
      return BlockExpr(ParseBlock());
    case K::kLParen:
      return ParseParenOrTuple();
    case K::kPipe:
    case K::kPipePipe:
      return ParseClosure();
    default:
      return ParseAtom();
  }
}

Expr Parser::ParseAtom() {
  const Token& t = Peek();
  Expr e;
  e.span = TokSpan(t);
  switch (t.kind) {
    case K::kIntLit:
      e.kind = ExprKind::kIntLit;
      e.int_value = t.int_value();
      Advance();
      return e;
    case K::kFloatLit:
      e.kind = ExprKind::kFloatLit;
      e.float_value = t.float_value();
      Advance();
      return e;
    case K::kStringLit:
      e.kind = ExprKind::kStringLit;
      e.text = ast::CurrentArena()->Store(t.string_value());
      Advance();
      return e;
    case K::kTrue:
    case K::kFalse:
      e.kind = ExprKind::kBoolLit;
      e.flag = t.kind == K::kTrue;
      Advance();
      return e;
    case K::kSelfValue:
      e.kind = ExprKind::kIdent;
      e.text = "self";
      Advance();
      return e;
    case K::kIdent: {
      // The name goes straight into the node: every kind below keeps it in `text`.
      e.text = TokenView(t);
      if (e.text.starts_with("channel_")) s_.body_features = true;
      const Span start = TokSpan(Advance());
      if (Check(K::kColonColon)) {
        Advance();
        e.kind = ExprKind::kEnumVariantExpr;
        e.extra = ast::MakeBox<ast::ExprExtra>();
        e.extra->variant = ParseNameView();
        if (Check(K::kLParen)) {
          Advance();
          while (!Check(K::kRParen)) {
            if (!e.operands.empty()) Expect(K::kComma);
            e.operands.emplace_back(InPlace{[&] { return ParseExpr(); }});
          }
          Expect(K::kRParen);
        }
        e.span = start.Merge(PrevSpan());
        return e;
      }
      if (IsStructLiteralStart()) {
        ParseStructLit(start, e);
        return e;
      }
      e.kind = ExprKind::kIdent;
      return e;
    }
    default:
      Fail("expression");
  }
}

Expr Parser::ParseParenOrTuple() {
  Nest nest(*this);
  const Span start = TokSpan(Expect(K::kLParen));
  if (Check(K::kRParen)) {
    Block unit;
    unit.span = start.Merge(TokSpan(Advance()));
    return BlockExpr(std::move(unit));
  }
  Expr first = ParseExpr();
  if (!Check(K::kComma)) {
    Expect(K::kRParen);
    return first;
  }
  Expr tuple;
  tuple.kind = ExprKind::kTupleLit;
  tuple.operands.push_back(std::move(first));
  while (Check(K::kComma)) {
    Advance();
    if (Check(K::kRParen)) break;
    tuple.operands.emplace_back(InPlace{[&] { return ParseExpr(); }});
  }
  tuple.span = start.Merge(TokSpan(Expect(K::kRParen)));
  return tuple;
}

Expr Parser::ParseIf() {
  Nest nest(*this);
  Expr e;
  e.kind = ExprKind::kIf;
  e.extra = ast::MakeBox<ast::ExprExtra>();
  const Span start = TokSpan(Expect(K::kIf));
  e.operands.emplace_back(InPlace{[&] { return ParseExpr(); }});
  e.extra->block = ParseBlock();
  Span end = e.extra->block->span;
  if (Check(K::kElse)) {
    Advance();
    if (Check(K::kIf)) {
      // `else if` is sugar: a block holding one `if` expression statement, spanning that `if`.
      Expr nested = ParseIf();
      Block b;
      b.span = nested.span;
      Stmt st;
      st.kind = StmtKind::kExpr;
      st.span = nested.span;
      st.value = std::move(nested);
      b.stmts.push_back(std::move(st));
      e.extra->else_block = std::move(b);
    } else {
      e.extra->else_block = ParseBlock();
    }
    end = e.extra->else_block->span;
  }
  e.span = start.Merge(end);
  return e;
}

Expr Parser::ParseMatch() {
  Nest nest(*this);
  Expr e;
  e.kind = ExprKind::kMatch;
  e.extra = ast::MakeBox<ast::ExprExtra>();
  const Span start = TokSpan(Expect(K::kMatch));
  e.operands.emplace_back(InPlace{[&] { return ParseExpr(); }});
  Expect(K::kLBrace);
  while (!Check(K::kRBrace)) {
    e.extra->arms.emplace_back(InPlace{[&] {
      ast::MatchArm arm;
      const Span arm_start = PeekSpan();
      arm.pattern = ParsePattern();
      Expect(K::kFatArrow);
      arm.body = ParseExpr();
      arm.span = arm_start.Merge(ast::ExprSpan(arm.body));
      return arm;
    }});
    if (Check(K::kComma)) Advance();
  }
  e.span = start.Merge(TokSpan(Expect(K::kRBrace)));
  return e;
}

void Parser::ParseStructLit(Span start, Expr& e) {
  Nest nest(*this);
  e.kind = ExprKind::kStructLit;
  e.extra = ast::MakeBox<ast::ExprExtra>();
  Expect(K::kLBrace);
  while (!Check(K::kRBrace)) {
    e.extra->fields.emplace_back(InPlace{[&] {
      ast::FieldInit field;
      const Span fstart = PeekSpan();
      ParseNameInto(field.name);
      Expect(K::kColon);
      field.value = ParseExpr();
      field.span = fstart.Merge(ast::ExprSpan(field.value));
      return field;
    }});
    if (Check(K::kComma)) Advance();
  }
  e.span = start.Merge(TokSpan(Expect(K::kRBrace)));
}

Expr Parser::ParseClosure() {
  Nest nest(*this);
  Expr e;
  e.kind = ExprKind::kClosure;
  e.extra = ast::MakeBox<ast::ExprExtra>();
  const bool empty = Check(K::kPipePipe);
  const Span start = TokSpan(Advance());
  if (!empty) {
    if (!Check(K::kPipe)) {
      while (true) {
        ast::ClosureParam p;
        const Span pstart = PeekSpan();
        ParseNameInto(p.name);
        if (Check(K::kColon)) {
          Advance();
          p.ty = ParseType();
        }
        p.span = pstart.Merge(PrevSpan());
        e.extra->params.push_back(std::move(p));
        if (!Check(K::kComma)) break;
        Advance();
      }
    }
    Expect(K::kPipe);
  }
  if (Check(K::kArrow)) {
    Advance();
    e.extra->return_type = ParseType();
  }
  Expr body = Check(K::kLBrace) ? BlockExpr(ParseBlock()) : ParseExpr();
  e.span = start.Merge(ast::ExprSpan(body));
  e.operands.push_back(std::move(body));
  return e;
}

Expr Parser::ParseFString() {
  const Token& t = Peek();
  const lex::FStringValue& value = t.fstring_value();
  Expr e;
  e.kind = ExprKind::kStringInterp;
  e.span = TokSpan(t);
  e.extra = ast::MakeBox<ast::ExprExtra>();
  for (const lex::FStringPart& part : value.parts) {
    ast::StringPart sp;
    if (part.kind == lex::FStringPart::Kind::kText) {
      sp.literal = part.text;
      e.extra->parts.push_back(std::move(sp));
      continue;
    }
    // A fresh parser over the interpolated text (docs/kodo.md §4.1), its tokens shifted to file
    // offsets; trailing tokens after the expression are ignored, as upstream's sub-parser does.
    sp.is_expr = true;
    sp.base = part.range.begin;
    Result<SourceBuffer> sub_source =
        SourceBuffer::Create(s_.source->id(), s_.source->name(), part.text);
    if (!sub_source.ok()) FailEof("expression");
    Result<lex::LexResult> lexed = lex::Lex(*sub_source);
    if (!lexed.ok()) FailEof("expression");
    if (!lexed->errors.empty()) {
      const lex::LexError& le = lexed->errors[0];
      ParseDiagnostic d;
      d.code = le.code;
      d.message = le.message;
      d.range = SourceRange{s_.source->id(), le.range.begin + sp.base, le.range.end + sp.base};
      d.suggestion = "check for invalid characters in the source";
      Report(std::move(d));
    }
    for (Token& tok : lexed->tokens) {
      tok.range.begin += sp.base;
      tok.range.end += sp.base;
      tok.range.file = s_.source->id();
    }
    Parser sub(s_, std::move(lexed->tokens), *sub_source,
               ast::CurrentArena()->Store(sub_source->text()), sp.base);
    sp.expr = ast::MakeBox<ast::Expr>(sub.ParseExprTop());
    e.extra->parts.push_back(std::move(sp));
  }
  // Upstream scans the body left to right: interpolations before an unclosed `{` are parsed
  // (and report their errors) first.
  if (value.unclosed_brace) FailEof("closing `}` in f-string interpolation");
  if (e.extra->parts.empty()) e.extra->parts.emplace_back();
  Advance();
  return e;
}

// =============================================================================================
// Patterns

Pattern Parser::ParsePattern() {
  Nest nest(*this);
  Pattern p;
  const Span start = PeekSpan();
  if (Check(K::kLParen)) {
    Advance();
    p.kind = PatternKind::kTuple;
    if (!Check(K::kRParen)) {
      p.subs.emplace_back(InPlace{[&] { return ParsePattern(); }});
      while (Check(K::kComma)) {
        Advance();
        if (Check(K::kRParen)) break;
        p.subs.emplace_back(InPlace{[&] { return ParsePattern(); }});
      }
    }
    p.span = start.Merge(TokSpan(Expect(K::kRParen)));
    return p;
  }
  if (Check(K::kIdent) && TokenView(Peek()) == "_") {
    Advance();
    p.kind = PatternKind::kWildcard;
    p.span = start;
    return p;
  }
  switch (PeekKind()) {
    case K::kIntLit:
    case K::kFloatLit:
    case K::kStringLit:
    case K::kTrue:
    case K::kFalse:
      p.kind = PatternKind::kLiteral;
      p.literal = ast::MakeBox<ast::Expr>(ParsePrimary());
      p.span = p.literal->span;
      return p;
    default:
      break;
  }
  const std::string_view first = ParseNameView();
  return ParseVariantTail(first, start, /*qualified_only=*/false);
}

// After the first NAME of a variant pattern: `::V(subs)?` or `(subs)?`.
Pattern Parser::ParseVariantTail(std::string_view first, Span start, bool qualified_only) {
  Pattern p;
  p.kind = PatternKind::kVariant;
  if (Check(K::kColonColon)) {
    Advance();
    p.has_enum_name = true;
    p.enum_name = first;
    ParseNameInto(p.name);
  } else {
    if (qualified_only) Expect(K::kColonColon);
    p.name = first;
  }
  if (Check(K::kLParen)) {
    Advance();
    while (!Check(K::kRParen)) {
      if (!p.subs.empty()) Expect(K::kComma);
      p.subs.emplace_back(InPlace{[&] { return ParseSubPattern(); }});
    }
    Expect(K::kRParen);
  }
  p.span = start.Merge(PrevSpan());
  return p;
}

// Sub = NAME '::' ... (nested qualified variant) | '_' | NAME (a binding).
Pattern Parser::ParseSubPattern() {
  Nest nest(*this);
  Pattern p;
  const Span start = PeekSpan();
  if (Check(K::kIdent) && TokenView(Peek()) == "_") {
    Advance();
    p.kind = PatternKind::kWildcard;
    p.span = start;
    return p;
  }
  const std::string_view name = ParseNameView();
  if (Check(K::kColonColon)) return ParseVariantTail(name, start, true);
  p.kind = PatternKind::kBinding;
  p.name = name;
  p.span = start;
  return p;
}

}  // namespace

std::string TokenDebug(const Token& token, const SourceBuffer& source) {
  switch (token.kind) {
    case K::kIdent:
      return "Ident(" +
             ast::RustDebugString(source.text().substr(token.range.begin, token.range.size())) +
             ")";
    case K::kIntLit:
      return fmt::format("IntLit({})", token.int_value());
    case K::kFloatLit:
      return "FloatLit(" + ast::RustDebugFloat(token.float_value()) + ")";
    case K::kStringLit:
      return "StringLit(" + ast::RustDebugString(token.string_value()) + ")";
    case K::kFStringLit:
      return "FStringLit(" + ast::RustDebugString(FStringBody(token.fstring_value())) + ")";
    default:
      return std::string(lex::DebugName(token.kind));
  }
}

Result<ParseResult> ParseModule(const SourceBuffer& source, const ParseOptions& options) {
  lex::LexOptions lex_options = options.lex;
  lex_options.keep_trivia = false;
  lex_options.recover = false;
  ASSIGN_OR_RETURN(lex::LexResult lexed, lex::Lex(source, lex_options));

  ParseResult result;
  if (!lexed.errors.empty()) {
    // Upstream's lexer fails as a whole: its one E0001 is the file's only diagnostic.
    const lex::LexError& le = lexed.errors[0];
    result.diagnostics.push_back(ParseDiagnostic{
        le.code, le.message, le.range, "check for invalid characters in the source", std::nullopt});
    if (options.recover) result.module.emplace();
    return result;
  }
  // Every node of the tree comes from one arena, which the module then owns (ast/arena.h).
  // Declared before the parser and the tree, so that it outlives both on every path.
  auto arena = std::make_shared<ast::Arena>();
  Shared shared;
  shared.source = &source;
  shared.options = &options;
  shared.max_depth = std::min(options.max_depth, ast::kMaxNestingDepth);
  Parser parser(shared, std::move(lexed.tokens), source, arena->Store(source.text()));
  try {
    ast::ArenaScope scope(arena.get());
    ast::Module module = parser.ParseModuleDecl();
    module.arena = ast::ArenaOwner(std::move(arena));
    module.body_features = shared.body_features;
    if (options.recover || shared.diagnostics.empty()) result.module = std::move(module);
  } catch (const ParseAbort&) {
    if (options.recover) result.module.emplace();
  }
  result.diagnostics = std::move(shared.diagnostics);
  return result;
}

}  // namespace trove::kodo::parse
