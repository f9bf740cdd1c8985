#include "kodo/parse/parser.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <string>

#include "kodo/ast/describe.h"

namespace trove::kodo::parse {
namespace {

using ast::DescribeExpr;
using ast::DescribeStmt;
using ast::DescribeType;

ParseResult Parse(std::string_view text, const ParseOptions& options = {}) {
  Result<SourceBuffer> source = SourceBuffer::Create(1, "t.ko", std::string(text));
  EXPECT_TRUE(source.ok());
  Result<ParseResult> result = ParseModule(*source, options);
  EXPECT_TRUE(result.ok());
  return std::move(*result);
}

// The byte offset of the `nth` occurrence of `needle` in `text`.
std::uint32_t At(std::string_view text, std::string_view needle, int nth = 0) {
  std::size_t pos = text.find(needle);
  for (int i = 0; i < nth && pos != std::string_view::npos; ++i) pos = text.find(needle, pos + 1);
  EXPECT_NE(pos, std::string_view::npos) << needle;
  return static_cast<std::uint32_t>(pos);
}
std::string Sp(std::uint32_t start, std::uint32_t end) {
  return fmt::format("Span {{ start: {}, end: {} }}", start, end);
}
// The span of the `nth` occurrence of `needle`.
std::string SpOf(std::string_view text, std::string_view needle, int nth = 0) {
  const std::uint32_t a = At(text, needle, nth);
  return Sp(a, a + static_cast<std::uint32_t>(needle.size()));
}

// The span of `len` bytes at the `nth` occurrence of `needle`.
std::string SpN(std::string_view text, std::string_view needle, std::uint32_t len, int nth = 0) {
  const std::uint32_t a = At(text, needle, nth);
  return Sp(a, a + len);
}

std::string Fn(std::string_view body) {
  return "module m {\n  meta { purpose: \"t\" }\n  fn f() {\n    " + std::string(body) +
         "\n  }\n}\n";
}

// Describe of the first statement of `fn f`'s body.
std::string FirstStmt(const std::string& src) {
  ParseResult r = Parse(src);
  EXPECT_TRUE(r.ok()) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  if (!r.ok() || r.module->functions.empty() || r.module->functions[0].body.stmts.empty())
    return "";
  return DescribeStmt(r.module->functions[0].body.stmts[0]);
}
std::string FirstExpr(const std::string& src) {
  ParseResult r = Parse(src);
  EXPECT_TRUE(r.ok()) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  if (!r.ok() || r.module->functions.empty() || r.module->functions[0].body.stmts.empty())
    return "";
  return DescribeExpr(r.module->functions[0].body.stmts[0].value);
}

ParseDiagnostic OneError(std::string_view src) {
  ParseResult r = Parse(src);
  EXPECT_FALSE(r.module.has_value());
  EXPECT_EQ(r.diagnostics.size(), 1u);
  return r.diagnostics.empty() ? ParseDiagnostic{} : r.diagnostics[0];
}

// ---------------------------------------------------------------------------------------------
// Spec examples, quoted.

TEST(ParserSpecTest, RequiresClauseRendersAsSpecExample) {
  // docs/kodo.md §6.4: `requires { b != 0 }` with `b` at offset 52.
  std::string src = "module m {\n fn f(b: Int) requires { ";
  src += std::string(52 - src.size(), ' ');
  src += "b != 0 } {}\n}\n";
  ASSERT_EQ(At(src, "b != 0"), 52u);
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.module->functions[0].requires_.size(), 1u);
  EXPECT_EQ(DescribeExpr(r.module->functions[0].requires_[0]),
            "BinaryOp { left: Ident(\"b\", Span { start: 52, end: 53 }), op: Ne, right: IntLit(0, "
            "Span { start: 57, end: 58 }), span: Span { start: 52, end: 58 } }");
}

TEST(ParserSpecTest, McpParseFailureExample) {
  // docs/kodo.md §3.3: "expected RBrace, found Let at Span { start: 40, end: 43 }".
  std::string src = "module test {\n  meta { purpose: \"x\" }\n";
  src += std::string(40 - src.size(), ' ');
  src += "let x = 1\n}\n";
  const ParseDiagnostic d = OneError(src);
  EXPECT_EQ(d.code, "E0100");
  EXPECT_EQ(d.message, "expected RBrace, found Let at Span { start: 40, end: 43 }");
  ASSERT_TRUE(d.range.has_value());
  EXPECT_EQ(d.range->begin, 40u);
  EXPECT_EQ(d.range->end, 43u);
  EXPECT_EQ(d.suggestion, "check for missing delimiters or keywords");
  ASSERT_TRUE(d.fix_patch.has_value());  // X = RBrace: insert `}` at the found token
  EXPECT_EQ(d.fix_patch->description, "insert closing `}`");
  EXPECT_EQ(d.fix_patch->start_offset, 40u);
  EXPECT_EQ(d.fix_patch->end_offset, 40u);
  EXPECT_EQ(d.fix_patch->replacement, "}");
}

TEST(ParserSpecTest, DescribeToolParamAndReturnTypes) {
  // docs/kodo.md §3.4: "params":[{"name":"a","type":"Named(\"Int\")"}],
  // "return_type":"Named(\"Int\")".
  ParseResult r = Parse(
      "module m { meta { purpose: \"p\" }\n"
      "  @confidence(0.95) @authored_by(agent: \"claude\")\n"
      "  fn add(a: Int, b: Int) -> Int requires { b != 0 } ensures { result > 0 } { return a + b "
      "}\n}");
  ASSERT_TRUE(r.ok());
  const ast::Function& f = r.module->functions[0];
  EXPECT_EQ(f.name, "add");
  EXPECT_FALSE(f.is_async);
  EXPECT_EQ(DescribeType(f.params[0].ty), "Named(\"Int\")");
  EXPECT_EQ(DescribeType(f.return_type), "Named(\"Int\")");
  ASSERT_EQ(f.annotations.size(), 2u);
  EXPECT_EQ(f.annotations[0].name, "confidence");
  EXPECT_EQ(
      ast::DescribeAnnotationArg(f.annotations[0].args[0]).rfind("Positional(FloatLit(0.95, ", 0),
      0u);
  EXPECT_EQ(f.annotations[1].name, "authored_by");
  EXPECT_EQ(ast::DescribeAnnotationArg(f.annotations[1].args[0])
                .rfind("Named(\"agent\", StringLit(\"claude\", ", 0),
            0u);
  EXPECT_EQ(f.requires_.size(), 1u);
  EXPECT_EQ(f.ensures.size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Module structure.

// ast::Module::body_features (sema's W0901 scan skips bodies when it is false): set by each
// construct the scan looks for inside a body, f-string interpolations included, and by nothing
// else.
TEST(ParserModuleTest, BodyFeaturesFlagsWhatTheUncheckedScanLooksFor) {
  const auto flag = [](std::string_view body) {
    const ParseResult r = Parse(fmt::format(
        "module m {{\n  meta {{ purpose: \"p\" }}\n  fn f(x: Int) -> Int {{\n{}\n  }}\n}}\n",
        body));
    EXPECT_TRUE(r.ok()) << body;
    return r.module && r.module->body_features;
  };
  EXPECT_FALSE(flag("    let s = f\"{x}\"\n    return channels(x) + x"));
  EXPECT_TRUE(flag("    let y = g().await\n    return y"));
  EXPECT_TRUE(flag("    let s = f\"{g().await}\"\n    return 1"));
  EXPECT_TRUE(flag("    spawn { println(\"x\") }\n    return 1"));
  EXPECT_TRUE(flag("    parallel { spawn { println(\"x\") } }\n    return 1"));
  EXPECT_TRUE(flag("    let c = channel_new()\n    return 1"));
  // A module built by hand is scanned in full.
  EXPECT_TRUE(ast::Module{}.body_features);
}

TEST(ParserModuleTest, MetaImportsAndSpans) {
  const std::string src =
      "// header\nmodule shapes {\n  import std::option\n  import utils.strings\n"
      "  import a::b { x, y, }\n  from c::d import p, q\n"
      "  meta { purpose: \"geometry\", version: \"1.0\" }\n  fn main() { }\n}\n// trailing\n";
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok());
  const ast::Module& m = *r.module;
  EXPECT_EQ(m.name, "shapes");
  EXPECT_EQ(m.span, (ast::Span{At(src, "module"), At(src, "}\n// trailing") + 1}));
  ASSERT_EQ(m.imports.size(), 4u);
  EXPECT_EQ(m.imports[0].path, (std::vector<std::string>{"std", "option"}));
  EXPECT_EQ(m.imports[1].path, (std::vector<std::string>{"utils", "strings"}));
  EXPECT_EQ(m.imports[2].names, (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(m.imports[3].from_form);
  EXPECT_EQ(m.imports[3].names, (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(m.imports[0].span, (ast::Span{At(src, "import std"), At(src, "option") + 6}));
  ASSERT_TRUE(m.meta.has_value());
  ASSERT_EQ(m.meta->entries.size(), 2u);
  // Entry spans run from the `meta` keyword to the end of the value (docs/kodo.md §4.3).
  EXPECT_EQ(m.meta->entries[1].span, (ast::Span{At(src, "meta"), At(src, "\"1.0\"") + 5}));
  EXPECT_EQ(m.meta->entries[1].value, "1.0");
  // Ids are handed out as nodes complete: meta, then main, then the module.
  EXPECT_EQ(m.meta->id, 0u);
  EXPECT_EQ(m.functions[0].id, 1u);
  EXPECT_EQ(m.id, 2u);
}

TEST(ParserModuleTest, WholeModuleDescribeHandChecked) {
  // Field order of upstream's snapshots (crates/kodo_parser/tests/snapshots): ids as nodes
  // complete, meta entry spans from the `meta` keyword, function span from `fn`.
  ParseResult r = Parse("module m { meta { purpose: \"p\" } fn main() { } }");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(
      ast::DescribeModule(*r.module),
      "Module { id: NodeId(2), span: Span { start: 0, end: 48 }, name: \"m\", imports: [], meta: "
      "Some(Meta { id: NodeId(0), span: Span { start: 11, end: 32 }, entries: [MetaEntry { key: "
      "\"purpose\", value: \"p\", span: Span { start: 11, end: 30 } }] }), type_aliases: [], "
      "type_decls: [], enum_decls: [], trait_decls: [], impl_blocks: [], actor_decls: [], "
      "intent_decls: [], invariants: [], functions: [Function { id: NodeId(1), span: Span { "
      "start: 33, end: 46 }, name: \"main\", visibility: Private, is_async: false, "
      "generic_params: [], annotations: [], params: [], return_type: Unit, requires: [], "
      "ensures: [], body: Block { span: Span { start: 43, end: 46 }, stmts: [] } }], "
      "test_decls: [], describe_decls: [] }");
}

TEST(ParserModuleTest, ContextualKeywordsAreNames) {
  ParseResult r = Parse(
      "module test { meta { describe: \"x\" } fn setup(forall: Int) -> Int { let teardown = 1 } }");
  ASSERT_TRUE(r.ok()) << r.diagnostics[0].message;
  EXPECT_EQ(r.module->name, "test");
  EXPECT_EQ(r.module->functions[0].name, "setup");
  EXPECT_EQ(r.module->functions[0].params[0].name, "forall");
}

TEST(ParserModuleTest, DeclarationsKeepSourceOrder) {
  ParseResult r = Parse(
      "module m { meta { purpose: \"p\" } fn a() {} struct S { x: Int } fn b() {} enum E { A }\n"
      "type T = Int invariant { true } test \"t\" { } }");
  ASSERT_TRUE(r.ok());
  std::vector<ast::ItemKind> kinds;
  for (const auto& item : r.module->order) kinds.push_back(item.kind);
  EXPECT_EQ(kinds, (std::vector<ast::ItemKind>{ast::ItemKind::kFunction, ast::ItemKind::kStruct,
                                               ast::ItemKind::kFunction, ast::ItemKind::kEnum,
                                               ast::ItemKind::kTypeAlias, ast::ItemKind::kInvariant,
                                               ast::ItemKind::kTest}));
  EXPECT_EQ(r.module->order[2].index, 1u);
}

TEST(ParserModuleTest, TrailingTokensAfterModuleAreIgnored) {
  ParseResult r = Parse("module m { } fn stray() { }");
  EXPECT_TRUE(r.ok());
}

// ---------------------------------------------------------------------------------------------
// Declarations.

TEST(ParserDeclTest, FunctionSignatureForms) {
  const std::string src =
      "module m { meta { purpose: \"p\" }\n"
      "  pub async fn go<T, U: Show + Eq>(own a: T, ref b: List<Int>, mut c: Map<String, Int>, d: "
      "Int?) -> (Int, Bool) { }\n"
      "  @security_sensitive pub fn s(f: (Int, Int) -> Int, g: () -> Unit, h: dyn Show, t: (Int,)) "
      "{ }\n"
      "  pub @todo(\"x\") fn later() { }\n}";
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok()) << r.diagnostics[0].message;
  const ast::Function& go = r.module->functions[0];
  EXPECT_TRUE(go.is_async);
  EXPECT_EQ(go.visibility, ast::Visibility::kPublic);
  EXPECT_EQ(go.span.start, At(src, "fn go"));  // `pub async` are outside the span
  ASSERT_EQ(go.generic_params.size(), 2u);
  EXPECT_EQ(go.generic_params[1].bounds, (std::vector<std::string>{"Show", "Eq"}));
  EXPECT_EQ(go.generic_params[1].span,
            (ast::Span{At(src, "U: Show"), At(src, "U: Show + Eq") + 12}));
  EXPECT_EQ(go.params[0].ownership, ast::Ownership::kOwned);
  EXPECT_EQ(go.params[1].ownership, ast::Ownership::kRef);
  EXPECT_EQ(go.params[2].ownership, ast::Ownership::kMut);
  EXPECT_EQ(DescribeType(go.params[1].ty), "Generic(\"List\", [Named(\"Int\")])");
  EXPECT_EQ(DescribeType(go.params[2].ty), "Generic(\"Map\", [Named(\"String\"), Named(\"Int\")])");
  EXPECT_EQ(DescribeType(go.params[3].ty), "Optional(Named(\"Int\"))");
  EXPECT_EQ(DescribeType(go.return_type), "Tuple([Named(\"Int\"), Named(\"Bool\")])");
  const ast::Function& s = r.module->functions[1];
  EXPECT_EQ(s.annotations[0].name, "security_sensitive");
  EXPECT_TRUE(s.annotations[0].args.empty());
  EXPECT_EQ(DescribeType(s.params[0].ty),
            "Function([Named(\"Int\"), Named(\"Int\")], Named(\"Int\"))");
  EXPECT_EQ(DescribeType(s.params[1].ty), "Function([], Named(\"Unit\"))");
  EXPECT_EQ(DescribeType(s.params[2].ty), "DynTrait(\"Show\")");
  EXPECT_EQ(DescribeType(s.params[3].ty), "Tuple([Named(\"Int\")])");
  EXPECT_EQ(DescribeType(s.return_type), "Unit");
  EXPECT_EQ(r.module->functions[2].annotations[0].name, "todo");
  EXPECT_EQ(r.module->functions[2].visibility, ast::Visibility::kPublic);
}

TEST(ParserDeclTest, ParenthesisedSingleTypeIsThatType) {
  ParseResult r = Parse("module m { fn f(a: (Int), b: ()) { } }");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(DescribeType(r.module->functions[0].params[0].ty), "Named(\"Int\")");
  EXPECT_EQ(DescribeType(r.module->functions[0].params[1].ty), "Unit");
}

TEST(ParserDeclTest, StructsEnumsAliases) {
  const std::string src =
      "module m {\n pub struct Pair<A, B> { first: A second: B, }\n"
      " enum Shape { Circle(Int), Rect(Int, Int) Empty, Unit() }\n"
      " type Port = Int requires { self > 0 && self < 65535 }\n type Name = String\n}";
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok()) << r.diagnostics[0].message;
  const ast::TypeDecl& pair = r.module->type_decls[0];
  EXPECT_EQ(pair.visibility, ast::Visibility::kPublic);
  EXPECT_EQ(pair.generic_params.size(), 2u);
  ASSERT_EQ(pair.fields.size(), 2u);
  EXPECT_EQ(pair.fields[1].name, "second");
  EXPECT_EQ(pair.fields[1].span, (ast::Span{At(src, "second"), At(src, "second") + 9}));
  EXPECT_EQ(pair.span.start, At(src, "struct"));
  const ast::EnumDecl& shape = r.module->enum_decls[0];
  ASSERT_EQ(shape.variants.size(), 4u);
  EXPECT_EQ(shape.variants[1].fields.size(), 2u);
  EXPECT_TRUE(shape.variants[2].fields.empty());
  ASSERT_EQ(r.module->type_aliases.size(), 2u);
  EXPECT_TRUE(r.module->type_aliases[0].constraint.has_value());
  EXPECT_FALSE(r.module->type_aliases[1].constraint.has_value());
  EXPECT_EQ(DescribeExpr(*r.module->type_aliases[0].constraint)
                .rfind("BinaryOp { left: BinaryOp { left: Ident(\"self\"", 0),
            0u);
}

TEST(ParserDeclTest, TraitsAndImpls) {
  ParseResult r = Parse(
      "module m {\n trait Show { type Item: Clone + Eq\n fn show(self) -> String\n"
      " fn twice(self, n: Int) -> Int { return n * 2 } }\n"
      " impl Show for Point { type Item = Int\n fn show(self) -> String { return \"p\" } }\n"
      " impl Point { fn new(x: Int) -> Point requires { x > 0 } { return Point { x: x } } }\n}");
  ASSERT_TRUE(r.ok()) << r.diagnostics[0].message;
  const ast::TraitDecl& show = r.module->trait_decls[0];
  EXPECT_EQ(show.associated_types[0].bounds, (std::vector<std::string>{"Clone", "Eq"}));
  ASSERT_EQ(show.methods.size(), 2u);
  EXPECT_TRUE(show.methods[0].has_self);
  EXPECT_FALSE(show.methods[0].body.has_value());
  EXPECT_TRUE(show.methods[1].body.has_value());
  EXPECT_EQ(DescribeType(show.methods[0].params[0].ty), "Named(\"Self\")");
  const ast::ImplBlock& impl = r.module->impl_blocks[0];
  EXPECT_EQ(impl.trait_name, std::optional<std::string>("Show"));
  EXPECT_EQ(impl.type_name, "Point");
  EXPECT_EQ(impl.type_bindings[0].name, "Item");
  // A method's `self` resolves to the implementing type, as upstream.
  EXPECT_EQ(DescribeType(impl.methods[0].params[0].ty), "Named(\"Point\")");
  const ast::ImplBlock& inherent = r.module->impl_blocks[1];
  EXPECT_FALSE(inherent.trait_name.has_value());
  EXPECT_EQ(inherent.methods[0].requires_.size(), 1u);
}

TEST(ParserDeclTest, ActorsIntentsInvariantsTests) {
  const std::string src =
      "module m {\n actor Counter { count: Int, step: Int\n fn increment(self) -> Int { return 1 } "
      "}\n"
      " intent serve_http { port: 8080, ratio: 0.5, debug: true, handler: on_get,\n"
      "   routes: [\"/a\", [1, 2], false] name: \"x\" }\n"
      " invariant { 1 > 0 }\n"
      " @skip(\"why\") test \"adds\" { assert_eq(1, 1) }\n"
      " @timeout(100) describe \"math\" { setup { let x = 1 } teardown { }\n"
      "   @skip test \"x\" { } describe \"inner\" { test \"y\" { } } }\n}";
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok()) << r.diagnostics[0].message;
  const ast::ActorDecl& actor = r.module->actor_decls[0];
  EXPECT_EQ(actor.fields.size(), 2u);
  EXPECT_EQ(actor.handlers.size(), 1u);
  const ast::IntentDecl& intent = r.module->intent_decls[0];
  ASSERT_EQ(intent.config.size(), 6u);
  EXPECT_EQ(intent.config[0].value.kind, ast::IntentValueKind::kIntLit);
  EXPECT_EQ(intent.config[1].value.kind, ast::IntentValueKind::kFloatLit);
  EXPECT_EQ(intent.config[2].value.kind, ast::IntentValueKind::kBoolLit);
  EXPECT_EQ(intent.config[3].value.kind, ast::IntentValueKind::kFnRef);
  EXPECT_EQ(intent.config[4].value.kind, ast::IntentValueKind::kList);
  EXPECT_EQ(intent.config[4].value.list.size(), 3u);
  EXPECT_EQ(intent.config[4].value.list[1].list.size(), 2u);
  EXPECT_EQ(r.module->invariants.size(), 1u);
  const ast::TestDecl& test = r.module->test_decls[0];
  EXPECT_EQ(test.name, "adds");
  EXPECT_EQ(test.annotations[0].name, "skip");
  const ast::DescribeDecl& d = r.module->describe_decls[0];
  EXPECT_EQ(d.name, "math");
  EXPECT_EQ(d.annotations[0].name, "timeout");
  EXPECT_TRUE(d.setup.has_value());
  EXPECT_TRUE(d.teardown.has_value());
  ASSERT_EQ(d.tests.size(), 1u);
  EXPECT_EQ(d.tests[0].annotations[0].name, "skip");
  ASSERT_EQ(d.describes.size(), 1u);
  EXPECT_EQ(d.describes[0].tests[0].name, "y");
}

// ---------------------------------------------------------------------------------------------
// Statements.

TEST(ParserStmtTest, LetForms) {
  std::string src = Fn("let mut x: Int = 42");
  EXPECT_EQ(FirstStmt(src),
            fmt::format("Let {{ span: {}, mutable: true, name: \"x\", ty: Some(Named(\"Int\")), "
                        "value: IntLit(42, {}) }}",
                        Sp(At(src, "let"), At(src, "42") + 2), SpOf(src, "42")));
  src = Fn("let (a, _) = t");
  EXPECT_EQ(
      FirstStmt(src),
      fmt::format("LetPattern {{ span: {}, mutable: false, pattern: Tuple([Variant {{ "
                  "enum_name: None, variant: \"a\", bindings: [], span: {} }}, Wildcard({})], "
                  "{}), ty: None, value: Ident(\"t\", {}) }}",
                  Sp(At(src, "let"), At(src, " t\n") + 2), SpN(src, "a,", 1), SpOf(src, "_"),
                  Sp(At(src, "(a"), At(src, "_)") + 2),
                  Sp(At(src, " t\n") + 1, At(src, " t\n") + 2)));
}

TEST(ParserStmtTest, ReturnAssignBreakContinue) {
  std::string src = Fn("return");
  EXPECT_EQ(FirstStmt(src), fmt::format("Return {{ span: {}, value: None }}", SpOf(src, "return")));
  src = Fn("x = y");
  EXPECT_EQ(FirstStmt(src),
            fmt::format("Assign {{ span: {}, name: \"x\", value: Ident(\"y\", {}) }}",
                        Sp(At(src, "x ="), At(src, "y") + 1), SpOf(src, "y")));
  src = Fn("while true { break continue }");
  EXPECT_EQ(
      FirstStmt(src),
      fmt::format("While {{ span: {0}, condition: BoolLit(true, {1}), body: Block {{ span: {2}, "
                  "stmts: [Break {{ span: {3} }}, Continue {{ span: {4} }}] }} }}",
                  Sp(At(src, "while"), At(src, "continue }") + 10), SpOf(src, "true"),
                  Sp(At(src, "{ break"), At(src, "continue }") + 10), SpOf(src, "break"),
                  SpOf(src, "continue")));
}

TEST(ParserStmtTest, ReturnDoesNotTakeMatch) {
  // docs/kodo.md §4.2: `return match ...` is `return` then a match expression statement [I].
  ParseResult r = Parse(Fn("return match x { _ => 1 }"));
  ASSERT_TRUE(r.ok());
  const auto& stmts = r.module->functions[0].body.stmts;
  ASSERT_EQ(stmts.size(), 2u);
  EXPECT_FALSE(stmts[0].has_value);
  EXPECT_EQ(stmts[1].value.kind, ast::ExprKind::kMatch);
}

TEST(ParserStmtTest, ForRangeAndForIn) {
  std::string src = Fn("for i in 0..=n { }");
  EXPECT_EQ(
      FirstStmt(src),
      fmt::format("For {{ span: {}, name: \"i\", start: IntLit(0, {}), end: Ident(\"n\", {}), "
                  "inclusive: true, body: Block {{ span: {}, stmts: [] }} }}",
                  Sp(At(src, "for"), At(src, "{ }") + 3), SpOf(src, "0"), SpN(src, "n {", 1),
                  Sp(At(src, "{ }"), At(src, "{ }") + 3)));
  src = Fn("for x in xs.iter() { }");
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.module->functions[0].body.stmts[0].kind, ast::StmtKind::kForIn);
  EXPECT_EQ(r.module->functions[0].body.stmts[0].value.kind, ast::ExprKind::kCall);
}

TEST(ParserStmtTest, IfLetSpawnParallelSelectForall) {
  std::string src = Fn("if let Some(v) = opt { } else { }");
  EXPECT_EQ(
      FirstStmt(src),
      fmt::format(
          "IfLet {{ span: {}, pattern: Variant {{ enum_name: None, variant: \"Some\", "
          "bindings: [Binding(\"v\", {})], span: {} }}, value: Ident(\"opt\", {}), body: Block {{ "
          "span: {}, stmts: [] }}, else_body: Some(Block {{ span: {}, stmts: [] }}) }}",
          Sp(At(src, "if"), At(src, "{ }", 1) + 3), SpN(src, "v)", 1), SpOf(src, "Some(v)"),
          SpOf(src, "opt"), SpOf(src, "{ }"), SpOf(src, "{ }", 1)));
  src = Fn("parallel { spawn { } spawn { } }");
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok());
  const ast::Stmt& par = r.module->functions[0].body.stmts[0];
  EXPECT_EQ(par.kind, ast::StmtKind::kParallel);
  EXPECT_EQ(par.body.stmts.size(), 2u);
  EXPECT_EQ(
      DescribeStmt(par).rfind("Parallel { span: " + Sp(At(src, "parallel"), At(src, "} }") + 3) +
                                  ", body: [Spawn { span: ",
                              0),
      0u);
  src = Fn("select { a => |v: Int| { println(v) } b => |s: String| { } }");
  r = Parse(src);
  ASSERT_TRUE(r.ok()) << r.diagnostics[0].message;
  const ast::Stmt& sel = r.module->functions[0].body.stmts[0];
  ASSERT_EQ(sel.extra->select_arms.size(), 2u);
  EXPECT_EQ(sel.extra->select_arms[1].binding, "s");
  EXPECT_EQ(DescribeType(sel.extra->select_arms[1].ty), "Named(\"String\")");
  src = Fn("forall a: Int, b: Bool { assert(a == a) }");
  r = Parse(src);
  ASSERT_TRUE(r.ok());
  const ast::Stmt& fa = r.module->functions[0].body.stmts[0];
  EXPECT_EQ(fa.kind, ast::StmtKind::kForall);
  ASSERT_EQ(fa.extra->forall_bindings.size(), 2u);
  EXPECT_EQ(fa.extra->forall_bindings[1].name, "b");
}

TEST(ParserStmtTest, NewlinesAreNotSignificant) {
  // docs/kodo.md §4.1: `let x = a` newline `-b` is `a - b`.
  ParseResult r = Parse(Fn("let x = a\n    -b"));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.module->functions[0].body.stmts.size(), 1u);
  EXPECT_EQ(r.module->functions[0].body.stmts[0].value.bin_op, ast::BinOp::kSub);
}

// ---------------------------------------------------------------------------------------------
// Expressions.

TEST(ParserExprTest, PrecedenceAndAssociativity) {
  std::string src = Fn("a + b * c");
  EXPECT_EQ(
      FirstExpr(src),
      fmt::format("BinaryOp {{ left: Ident(\"a\", {}), op: Add, right: BinaryOp {{ left: "
                  "Ident(\"b\", {}), op: Mul, right: Ident(\"c\", {}), span: {} }}, span: {} }}",
                  SpN(src, "a +", 1), SpN(src, "b *", 1), SpN(src, "c\n", 1),
                  Sp(At(src, "b *"), At(src, "c\n") + 1), Sp(At(src, "a +"), At(src, "c\n") + 1)));
  // Left associativity and the whole ladder: ?? < || < && < == < < < + < * < unary.
  ParseResult r = Parse(Fn("a - b - c"));
  ASSERT_TRUE(r.ok());
  const ast::Expr& sub = r.module->functions[0].body.stmts[0].value;
  EXPECT_EQ(sub.left().kind, ast::ExprKind::kBinaryOp);  // (a - b) - c
  r = Parse(Fn("x ?? a || b && c == d < e + f * -g"));
  ASSERT_TRUE(r.ok());
  const ast::Expr& co = r.module->functions[0].body.stmts[0].value;
  ASSERT_EQ(co.kind, ast::ExprKind::kNullCoalesce);
  const ast::Expr& orr = co.right();
  EXPECT_EQ(orr.bin_op, ast::BinOp::kOr);
  EXPECT_EQ(orr.right().bin_op, ast::BinOp::kAnd);
  EXPECT_EQ(orr.right().right().bin_op, ast::BinOp::kEq);
  EXPECT_EQ(orr.right().right().right().bin_op, ast::BinOp::kLt);
  EXPECT_EQ(orr.right().right().right().right().bin_op, ast::BinOp::kAdd);
  EXPECT_EQ(orr.right().right().right().right().right().bin_op, ast::BinOp::kMul);
  EXPECT_EQ(orr.right().right().right().right().right().right().kind, ast::ExprKind::kUnaryOp);
  r = Parse(Fn("1..n + 1"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.module->functions[0].body.stmts[0].value.kind, ast::ExprKind::kRange);
  EXPECT_FALSE(r.module->functions[0].body.stmts[0].value.flag);
}

TEST(ParserExprTest, Literals) {
  std::string src = Fn("f(1_000, 2.5, \"a\\\"b\", true, false, self)");
  const std::string d = FirstExpr(src);
  EXPECT_NE(d.find("IntLit(1000, " + SpOf(src, "1_000") + ")"), std::string::npos) << d;
  EXPECT_NE(d.find("FloatLit(2.5, " + SpOf(src, "2.5") + ")"), std::string::npos) << d;
  EXPECT_NE(d.find("StringLit(\"a\\\"b\", " + SpOf(src, "\"a\\\"b\"") + ")"), std::string::npos)
      << d;
  EXPECT_NE(d.find("BoolLit(true, " + SpOf(src, "true") + ")"), std::string::npos) << d;
  EXPECT_NE(d.find("BoolLit(false, "), std::string::npos) << d;
  EXPECT_NE(d.find("Ident(\"self\", " + SpOf(src, "self") + ")"), std::string::npos) << d;
}

TEST(ParserExprTest, PostfixChain) {
  std::string src = Fn("p.x?.y? .await.0 is Some");
  EXPECT_EQ(
      FirstExpr(src),
      fmt::format(
          "Is {{ operand: TupleIndex {{ tuple: Await {{ operand: Try {{ operand: OptionalChain {{ "
          "object: FieldAccess {{ object: Ident(\"p\", {0}), field: \"x\", span: {1} }}, field: "
          "\"y\", span: {2} }}, span: {3} }}, span: {4} }}, index: 0, span: {5} }}, type_name: "
          "\"Some\", span: {6} }}",
          Sp(At(src, "p."), At(src, "p.") + 1), Sp(At(src, "p."), At(src, "x?") + 1),
          Sp(At(src, "p."), At(src, "y?") + 1), Sp(At(src, "p."), At(src, "y?") + 2),
          Sp(At(src, "p."), At(src, "await") + 5), Sp(At(src, "p."), At(src, ".0") + 2),
          Sp(At(src, "p."), At(src, "Some") + 4)));
}

TEST(ParserExprTest, CallsAndMethodCalls) {
  std::string src = Fn("xs.map(|x: Int| x + 1)");
  const std::string d = FirstExpr(src);
  EXPECT_EQ(d.rfind("Call { callee: FieldAccess { object: Ident(\"xs\", ", 0), 0u) << d;
  EXPECT_NE(d.find(fmt::format(
                "Closure {{ params: [ClosureParam {{ name: \"x\", ty: Some(Named(\"Int\")), "
                "span: {} }}], return_type: None, body: BinaryOp",
                Sp(At(src, "x: Int"), At(src, "x: Int") + 6))),
            std::string::npos)
      << d;
  EXPECT_NE(d.find(fmt::format("span: {} }}", Sp(At(src, "xs"), At(src, "1)") + 2))),
            std::string::npos);
}

TEST(ParserExprTest, Closures) {
  std::string src = Fn("let f = || -> Int { 1 }");
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok());
  const ast::Expr& c = r.module->functions[0].body.stmts[0].value;
  EXPECT_EQ(
      DescribeExpr(c),
      fmt::format("Closure {{ params: [], return_type: Some(Named(\"Int\")), body: Block(Block {{ "
                  "span: {0}, stmts: [Expr(IntLit(1, {1}))] }}), span: {2} }}",
                  SpOf(src, "{ 1 }"), SpN(src, "1 }", 1), Sp(At(src, "||"), At(src, "1 }") + 3)));
  r = Parse(Fn("let g = |a, b: Int| a"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.module->functions[0].body.stmts[0].value.extra->params.size(), 2u);
  EXPECT_FALSE(r.module->functions[0].body.stmts[0].value.extra->params[0].ty.has_value());
}

TEST(ParserExprTest, IfElseIfIsSugar) {
  std::string src = Fn("if a { } else if b { } else { }");
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok());
  const ast::Expr& e = r.module->functions[0].body.stmts[0].value;
  ASSERT_EQ(e.kind, ast::ExprKind::kIf);
  const ast::Block& else_block = *e.extra->else_block;
  ASSERT_EQ(else_block.stmts.size(), 1u);
  EXPECT_EQ(else_block.stmts[0].value.kind, ast::ExprKind::kIf);
  // The synthetic block spans the nested `if`.
  EXPECT_EQ(else_block.span, (ast::Span{At(src, "if b"), At(src, "{ }", 2) + 3}));
  EXPECT_EQ(e.span, (ast::Span{At(src, "if a"), At(src, "{ }", 2) + 3}));
}

TEST(ParserExprTest, MatchWithPatterns) {
  std::string src = Fn(
      "match s { Shape::Circle(r) => r, Some(Shape::Rect(w, _)) => w, None => 0, _ => 1, 2 => 3,\n"
      "  \"s\" => 4, (a, b) => 5 }");
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok()) << r.diagnostics[0].message;
  const auto& arms = r.module->functions[0].body.stmts[0].value.extra->arms;
  ASSERT_EQ(arms.size(), 7u);
  EXPECT_EQ(ast::DescribePattern(arms[0].pattern),
            fmt::format("Variant {{ enum_name: Some(\"Shape\"), variant: \"Circle\", bindings: "
                        "[Binding(\"r\", {})], span: {} }}",
                        SpN(src, "r)", 1), SpOf(src, "Shape::Circle(r)")));
  EXPECT_EQ(
      ast::DescribePattern(arms[1].pattern),
      fmt::format("Variant {{ enum_name: None, variant: \"Some\", bindings: [Variant {{ enum_name: "
                  "Some(\"Shape\"), variant: \"Rect\", bindings: [Binding(\"w\", {}), "
                  "Wildcard({})], span: {} }}], "
                  "span: {} }}",
                  SpN(src, "w, _", 1), SpN(src, "_))", 1), SpOf(src, "Shape::Rect(w, _)"),
                  SpOf(src, "Some(Shape::Rect(w, _))")));
  EXPECT_EQ(arms[2].pattern.kind, ast::PatternKind::kVariant);  // a bare name is a variant
  EXPECT_EQ(ast::DescribePattern(arms[3].pattern), "Wildcard(" + SpN(src, "_ =>", 1) + ")");
  EXPECT_EQ(ast::DescribePattern(arms[4].pattern),
            "Literal(IntLit(2, " + Sp(At(src, "2 =>"), At(src, "2 =>") + 1) + "))");
  EXPECT_EQ(arms[5].pattern.kind, ast::PatternKind::kLiteral);
  EXPECT_EQ(arms[6].pattern.kind, ast::PatternKind::kTuple);
  EXPECT_EQ(arms[0].span, (ast::Span{At(src, "Shape::Circle"), At(src, "r,") + 1}));
}

TEST(ParserExprTest, StructLiteralsAndEnumVariants) {
  std::string src = Fn("let p = Point { x: 1, y: Color::Red }");
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(DescribeExpr(r.module->functions[0].body.stmts[0].value),
            fmt::format(
                "StructLit {{ name: \"Point\", fields: [FieldInit {{ name: \"x\", value: IntLit(1, "
                "{}), span: {} }}, FieldInit {{ name: \"y\", value: EnumVariantExpr {{ enum_name: "
                "\"Color\", variant: \"Red\", args: [], span: {} }}, span: {} }}], span: {} }}",
                Sp(At(src, "1,"), At(src, "1,") + 1), SpOf(src, "x: 1"), SpOf(src, "Color::Red"),
                SpOf(src, "y: Color::Red"), SpOf(src, "Point { x: 1, y: Color::Red }")));
  r = Parse(Fn("let s = Shape::Rect(1, 2)"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.module->functions[0].body.stmts[0].value.operands.size(), 2u);
  // `if flag { x: 1 }`-style lookahead: `match n { A => 1 }` is not a struct literal.
  r = Parse(Fn("match n { A => 1 }"));
  EXPECT_TRUE(r.ok());
}

TEST(ParserExprTest, TuplesUnitAndGrouping) {
  std::string src = Fn("let t = (1, (2), ())");
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(
      DescribeExpr(r.module->functions[0].body.stmts[0].value),
      fmt::format(
          "TupleLit([IntLit(1, {}), IntLit(2, {}), Block(Block {{ span: {}, stmts: [] }})], {})",
          Sp(At(src, "1,"), At(src, "1,") + 1), Sp(At(src, "2)"), At(src, "2)") + 1),
          SpN(src, "())", 2), SpOf(src, "(1, (2), ())")));
  r = Parse(Fn("let one = (1,)"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.module->functions[0].body.stmts[0].value.kind, ast::ExprKind::kTupleLit);
}

TEST(ParserExprTest, FStrings) {
  std::string src = Fn("let s = f\"a {x + 1} b {y}\"");
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok());
  // Sub-expression spans print relative to the interpolated text, as upstream's sub-parser.
  EXPECT_EQ(
      DescribeExpr(r.module->functions[0].body.stmts[0].value),
      fmt::format(
          "StringInterp {{ parts: [Literal(\"a \"), Expr(BinaryOp {{ left: Ident(\"x\", "
          "Span {{ start: 0, end: 1 }}), op: Add, right: IntLit(1, Span {{ start: 4, end: 5 }}), "
          "span: Span {{ start: 0, end: 5 }} }}), Literal(\" b \"), Expr(Ident(\"y\", Span {{ "
          "start: 0, end: 1 }}))], span: {} }}",
          SpOf(src, "f\"a {x + 1} b {y}\"")));
  // The AST itself keeps file offsets.
  const auto& parts = r.module->functions[0].body.stmts[0].value.extra->parts;
  EXPECT_EQ(parts[1].expr->span, (ast::Span{At(src, "x + 1"), At(src, "x + 1") + 5}));
  r = Parse(Fn("let e = f\"\""));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(DescribeExpr(r.module->functions[0].body.stmts[0].value)
                .rfind("StringInterp { parts: [Literal(\"\")]", 0),
            0u);
}

TEST(ParserExprTest, AnnotationArgumentsAreExpressions) {
  std::string src =
      "module m { @property(iterations: 50, int_min: -10) @reviewed_by(\"human:alice\") fn f() { } "
      "}";
  ParseResult r = Parse(src);
  ASSERT_TRUE(r.ok());
  const auto& a = r.module->functions[0].annotations[0];
  ASSERT_EQ(a.args.size(), 2u);
  EXPECT_EQ(
      ast::DescribeAnnotationArg(a.args[1]),
      fmt::format("Named(\"int_min\", UnaryOp {{ op: Neg, operand: IntLit(10, {}), span: {} }})",
                  SpN(src, "10)", 2), SpOf(src, "-10")));
  EXPECT_EQ(a.span, (ast::Span{At(src, "@property"), At(src, "-10)") + 4}));
}

// ---------------------------------------------------------------------------------------------
// Errors (docs/kodo.md §6.1): every code, message and span.

TEST(ParserErrorTest, E0001LexerErrorStopsEverything) {
  const ParseDiagnostic d = OneError("module m { fn f() { let x = 1 # 2 } }");
  EXPECT_EQ(d.code, "E0001");
  EXPECT_EQ(d.message, "lexer error: unexpected character at Span { start: 30, end: 31 }");
  EXPECT_EQ(d.suggestion, "check for invalid characters in the source");
}

TEST(ParserErrorTest, E0100ExpectedTokenKinds) {
  struct Case {
    std::string src;
    std::string message;
  };
  const std::string h = "module m { ";
  const std::vector<Case> cases = {
      {"fn m { }", "expected Module, found Fn at Span { start: 0, end: 2 }"},
      {"module 42 { }", "expected identifier, found IntLit(42) at Span { start: 7, end: 9 }"},
      {h + "fn f() { let = 1 } }", "expected identifier, found Eq at Span { start: 24, end: 25 }"},
      {h + "fn f() { let x 1 } }", "expected Eq, found IntLit(1) at Span { start: 26, end: 27 }"},
      {h + "fn f( { } }", "expected identifier, found LBrace at Span { start: 17, end: 18 }"},
      {h + "fn f(a: Int,) { } }",
       "expected identifier, found RParen at Span { start: 23, end: 24 }"},
      {h + "meta { purpose: 42 } }",
       "expected string literal, found IntLit(42) at Span { start: 27, end: 29 }"},
      {h + "fn f() { for i 0..3 { } } }",
       "expected in, found IntLit(0) at Span { start: 26, end: 27 }"},
      {h + "fn f() { let x = } }",
       "expected expression, found RBrace at Span { start: 28, end: 29 }"},
      {h + "fn f() { test } }", "expected expression, found Test at Span { start: 20, end: 24 }"},
      {h + "test adds { } }",
       "expected string literal for test name, found Ident(\"adds\") at Span { start: 16, end: 20 "
       "}"},
      {h + "describe d { } }",
       "expected string literal for describe name, found Ident(\"d\") at Span { start: 20, end: 21 "
       "}"},
      {h + "describe \"d\" { fn x() { } } }",
       "expected setup, teardown, test, describe, or `}`, found Fn at Span { start: 26, end: 28 }"},
      {h + "intent i { k: (1) } }",
       "expected intent config value (string, int, float, bool, identifier, or list), found LParen "
       "at "
       "Span { start: 25, end: 26 }"},
      {h + "fn f() { match x { A -> 1 } } }",
       "expected FatArrow, found Arrow at Span { start: 32, end: 34 }"},
      {h + "fn f() { g(1 2) } }",
       "expected RParen, found IntLit(2) at Span { start: 24, end: 25 }"},
      {h + "fn f() { p.x = 1 } }", "expected expression, found Eq at Span { start: 24, end: 25 }"},
      {h + "pub enum E { A } }", "expected Fn, found Enum at Span { start: 15, end: 19 }"},
      {h + "fn f() { x.\"s\" } }",
       "expected identifier, found StringLit(\"s\") at Span { start: 22, end: 25 }"},
      {h + "fn f(a: 2.5) { } }",
       "expected identifier, found FloatLit(2.5) at Span { start: 19, end: 22 }"},
      {h + "fn f(a: f\"b{x}\\n\") { } }",
       "expected identifier, found FStringLit(\"b{x}\\n\") at Span { start: 19, end: 28 }"},
      {h + "fn f(a: Int b: Int) { } }",
       "expected Comma, found Ident(\"b\") at Span { start: 23, end: 24 }"},
      {h + "enum E { A(Int Int) } }",
       "expected Comma, found Ident(\"Int\") at Span { start: 26, end: 29 }"},
      {h + "intent i { k: [1 2] } }",
       "expected Comma, found IntLit(2) at Span { start: 28, end: 29 }"},
      {h + "trait T { let } }", "expected RBrace, found Let at Span { start: 21, end: 24 }"},
      {h + "impl T { struct } }", "expected RBrace, found Struct at Span { start: 20, end: 26 }"},
      {h + "fn f() { a[0] } }",
       "expected expression, found LBracket at Span { start: 21, end: 22 }"},
      {h + "fn f() { self.x = 1 } }",
       "expected expression, found Eq at Span { start: 27, end: 28 }"},
  };
  for (const Case& c : cases) {
    const ParseDiagnostic d = OneError(c.src);
    EXPECT_EQ(d.code, "E0100") << c.src;
    EXPECT_EQ(d.message, c.message) << c.src;
    if (!d.range.has_value()) continue;
    EXPECT_EQ(c.message.find(fmt::format("at Span {{ start: {}, end: {} }}", d.range->begin,
                                         d.range->end)) != std::string::npos,
              true)
        << c.src;
  }
}

TEST(ParserErrorTest, E0100PatchOnlyForClosingDelimiters) {
  ParseDiagnostic d = OneError("module m { fn f() { g(1 2) } }");
  ASSERT_TRUE(d.fix_patch.has_value());
  EXPECT_EQ(d.fix_patch->replacement, ")");
  EXPECT_EQ(d.fix_patch->start_offset, 24u);
  d = OneError("module m { fn f() { let x 1 } }");
  EXPECT_FALSE(d.fix_patch.has_value());
}

TEST(ParserErrorTest, CodesNeverEmitted) {
  // docs/kodo.md §6.1: E0002 (unterminated string) is reported as E0001; E0102/E0103 (missing
  // module declaration / meta) are never emitted: a missing `module` is E0100 and a missing meta
  // parses.
  EXPECT_EQ(OneError("module m { fn f() { let s = \"open } }").code, "E0001");
  EXPECT_EQ(OneError("fn main() { }").code, "E0100");
  EXPECT_TRUE(Parse("module m { fn main() { } }").ok());
}

TEST(ParserErrorTest, E0101UnexpectedEndOfInput) {
  struct Case {
    std::string src;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"", "Module"},
      {"module", "identifier"},
      {"module m", "LBrace"},
      {"module m {", "RBrace"},
      {"module m { fn f() {", "expression"},
      {"module m { fn f() { let x =", "expression"},
      {"module m { fn f() { g(1", "RParen"},
      {"module m { meta { purpose:", "string literal"},
      {"module m { fn f() { for i", "in"},
      {"module m { fn f() { let s = f\"a {x\" } }", "closing `}` in f-string interpolation"},
      {"module m { fn f() { let s = f\"a {}\" } }", "expression"},
      {"module m { intent i { k:", "intent config value"},
      {"module m { describe \"d\" { test \"t\" { }", "}"},
      {"module m { test", "string literal for test name"},
      {"module m { fn f(a: Int", "Comma"},
  };
  for (const Case& c : cases) {
    const ParseDiagnostic d = OneError(c.src);
    EXPECT_EQ(d.code, "E0101") << c.src;
    EXPECT_EQ(d.message, "unexpected end of input, expected " + c.expected) << c.src;
    EXPECT_FALSE(d.range.has_value()) << c.src;
    EXPECT_EQ(d.suggestion, "the file ended before the parser found " + c.expected);
  }
  // The delimiter patch is appended at the end of the file, as its description says (upstream
  // places it at offset 0 [I], where it cannot parse; decision 0047).
  const std::string src = "module m { fn f() { }";
  const ParseDiagnostic d = OneError(src);
  ASSERT_TRUE(d.fix_patch.has_value());
  EXPECT_EQ(d.fix_patch->description, "append closing `}` at end of file");
  EXPECT_EQ(d.fix_patch->start_offset, src.size());
  EXPECT_EQ(d.fix_patch->end_offset, src.size());
  EXPECT_EQ(d.fix_patch->replacement, "\n}\n");
}

TEST(ParserErrorTest, FailFastReportsOnlyTheFirstError) {
  ParseResult r = Parse("module m { fn a() { let = 1 } fn b() { let = 2 } }");
  EXPECT_FALSE(r.module.has_value());
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].range->begin, 24u);
}

TEST(ParserErrorTest, FStringPartsBeforeAnUnclosedBraceReportFirst) {
  // Upstream scans the body left to right: `{a +}` fails before the unclosed `{b` is seen.
  ParseDiagnostic d = OneError("module m { fn f() { let s = f\"{a +} {b\" } }");
  EXPECT_EQ(d.message, "unexpected end of input, expected expression");
  d = OneError("module m { fn f() { let s = f\"{a} {b\" } }");
  EXPECT_EQ(d.message, "unexpected end of input, expected closing `}` in f-string interpolation");
}

TEST(ParserErrorTest, FStringSubExpressionTokensUseTheirOwnText) {
  // The escape before `x` shifts file offsets against the decoded text; the name is still `y`.
  const ParseDiagnostic d = OneError("module m { fn f() { let s = f\"{(\\\"q\\\" y)}\" } }");
  EXPECT_EQ(d.code, "E0100");
  EXPECT_EQ(d.message.rfind("expected RParen, found Ident(\"y\") at ", 0), 0u) << d.message;
}

TEST(ParserErrorTest, F_StringSubExpressionLexError) {
  const ParseDiagnostic d = OneError("module m { fn f() { let s = f\"{a # b}\" } }");
  EXPECT_EQ(d.code, "E0001");
  ASSERT_TRUE(d.range.has_value());
  EXPECT_EQ(d.range->begin, 33u);  // the `#`, in file offsets
}

// ---------------------------------------------------------------------------------------------
// Recovery (upstream's `kodoc parse` / LSP variant).

TEST(ParserRecoveryTest, SynchronisesAtDeclarations) {
  ParseOptions options;
  options.recover = true;
  ParseResult r = Parse(
      "module m { meta { purpose: \"p\" }\n fn a() { let = 1 }\n struct S { x: }\n fn ok() { }\n"
      " enum E { A( }\n fn ok2() { }\n}",
      options);
  ASSERT_TRUE(r.module.has_value());
  ASSERT_EQ(r.diagnostics.size(), 3u);
  EXPECT_EQ(r.diagnostics[0].message.rfind("expected identifier, found Eq", 0), 0u);
  EXPECT_EQ(r.diagnostics[1].message.rfind("expected identifier, found RBrace", 0), 0u);
  EXPECT_EQ(r.diagnostics[2].message.rfind("expected identifier, found RBrace", 0), 0u);
  std::vector<std::string> names;
  for (const auto& f : r.module->functions) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "ok", "ok2"}));
}

TEST(ParserRecoveryTest, SynchronisesAtStatements) {
  ParseOptions options;
  options.recover = true;
  ParseResult r =
      Parse("module m { fn a() { let = 1\n let y = 2\n let z 3\n return y } }", options);
  ASSERT_TRUE(r.module.has_value());
  ASSERT_EQ(r.diagnostics.size(), 2u);
  const auto& stmts = r.module->functions[0].body.stmts;
  ASSERT_EQ(stmts.size(), 2u);
  EXPECT_EQ(stmts[0].name, "y");
  EXPECT_EQ(stmts[1].kind, ast::StmtKind::kReturn);
}

TEST(ParserRecoveryTest, E0104MalformedContract) {
  ParseOptions options;
  options.recover = true;
  const std::string src =
      "module m { fn f(b: Int) -> Int requires { b != } ensures { result > 0 } { return b } }";
  ParseResult r = Parse(src, options);
  ASSERT_TRUE(r.module.has_value());
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].code, "E0104");
  EXPECT_EQ(r.diagnostics[0].message,
            fmt::format("malformed requires clause at {}: expected expression, found RBrace at {}",
                        SpOf(src, "requires"), SpN(src, "} ensures", 1)));
  EXPECT_EQ(r.diagnostics[0].suggestion,
            "check the expression inside the `requires` block for syntax errors");
  ASSERT_EQ(r.module->functions.size(), 1u);
  EXPECT_EQ(r.module->functions[0].ensures.size(), 1u);
  EXPECT_EQ(r.module->functions[0].body.stmts.size(), 1u);
}

TEST(ParserRecoveryTest, FirstRecoveredErrorIsTheFailFastError) {
  ParseOptions options;
  options.recover = true;
  for (const char* src :
       {"module m { fn f() { let = 1 } fn g() { let = 2 } }", "module m { let x = 1 }",
        "module m { fn f(a: Int b: Int) { } struct S { } }", "fn m { }",
        "module m { fn f() { g(1 2) } }", "module m { fn f() {", "module m { ~ }",
        "module m { fn f() { let s = f\"{a\" } fn g() { } }"}) {
    const ParseDiagnostic strict = OneError(src);
    ParseResult recovered = Parse(src, options);
    ASSERT_FALSE(recovered.diagnostics.empty()) << src;
    EXPECT_EQ(recovered.diagnostics[0].code, strict.code) << src;
    EXPECT_EQ(recovered.diagnostics[0].message, strict.message) << src;
  }
}

TEST(ParserRecoveryTest, FailFastModeHasNoE0104) {
  const ParseDiagnostic d = OneError("module m { fn f(b: Int) requires { b != } { } }");
  EXPECT_EQ(d.code, "E0100");
}

TEST(ParserRecoveryTest, LexErrorGivesEmptyModule) {
  ParseOptions options;
  options.recover = true;
  ParseResult r = Parse("module m { ~ }", options);
  ASSERT_TRUE(r.module.has_value());
  EXPECT_EQ(r.module->name, "");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].code, "E0001");
}

TEST(ParserRecoveryTest, DiagnosticCountIsBounded) {
  ParseOptions options;
  options.recover = true;
  std::string src = "module m {\n";
  for (int i = 0; i < 300; ++i) src += "fn f() { let = 1 }\n";
  src += "}";
  ParseResult r = Parse(src, options);
  EXPECT_LE(r.diagnostics.size(), 100u);
  EXPECT_GE(r.diagnostics.size(), 50u);
}

// ---------------------------------------------------------------------------------------------
// Depth limit.

TEST(ParserDepthTest, DeepNestingIsAnErrorNotACrash) {
  for (const auto& [open, close] : std::vector<std::pair<std::string, std::string>>{
           {"(", ")"}, {"{", "}"}, {"-", ""}, {"!", ""}, {"if x {", "}"}, {"[", "]"}}) {
    std::string src = "module m { fn f() { let x = ";
    if (open == "[") {
      src = "module m { intent i { k: ";
    }
    for (int i = 0; i < 5000; ++i) src += open;
    src += "1";
    for (int i = 0; i < 5000; ++i) src += close;
    src += open == "[" ? " } }" : " } }";
    ParseOptions options;
    options.lex.max_tokens = std::size_t{1} << 24;
    ParseResult r = Parse(src, options);
    ASSERT_EQ(r.diagnostics.size(), 1u) << open;
    EXPECT_EQ(r.diagnostics[0].code, "E0100");
    EXPECT_NE(r.diagnostics[0].message.find("nesting too deep (more than 256 levels)"),
              std::string::npos)
        << r.diagnostics[0].message;
  }
}

TEST(ParserDepthTest, NestingWithinTheLimitParses) {
  std::string src = "module m { fn f() { let x = ";
  for (int i = 0; i < 60; ++i) src += "(";
  src += "1";
  for (int i = 0; i < 60; ++i) src += ")";
  src += " } }";
  EXPECT_TRUE(Parse(src).ok());
  ParseOptions tight;
  tight.max_depth = 20;
  EXPECT_FALSE(Parse(src, tight).ok());
}

TEST(ParserDepthTest, DeepTypesAndPatterns) {
  std::string type;
  for (int i = 0; i < 5000; ++i) type += "List<";
  type += "Int";
  for (int i = 0; i < 5000; ++i) type += ">";
  ParseResult r = Parse("module m { fn f(a: " + type + ") { } }");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_NE(r.diagnostics[0].message.find("nesting too deep"), std::string::npos);
  std::string pat;
  for (int i = 0; i < 5000; ++i) pat += "(";
  pat += "a";
  for (int i = 0; i < 5000; ++i) pat += ")";
  r = Parse("module m { fn f() { let " + pat + " = 1 } }");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_NE(r.diagnostics[0].message.find("nesting too deep"), std::string::npos);
}

TEST(ParserLimitTest, LexerBoundIsAStatus) {
  Result<SourceBuffer> source = SourceBuffer::Create(1, "t.ko", "module m { }");
  ASSERT_TRUE(source.ok());
  ParseOptions options;
  options.lex.max_source_bytes = 4;
  EXPECT_FALSE(ParseModule(*source, options).ok());
}

}  // namespace
}  // namespace trove::kodo::parse
