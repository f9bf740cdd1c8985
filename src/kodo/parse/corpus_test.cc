// Round trips over the corpus of valid programs in testdata/kodo/ (one file per feature area of
// docs/kodo.md §4.2/§7.1): each file parses without a diagnostic in both modes; re-laying its
// tokens out (one per line, or all on one line: the grammar is newline-insensitive) parses to the
// same tree up to spans; declaration spans cover exactly the declaration's text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kodo/ast/describe.h"
#include "kodo/lex/lexer.h"
#include "kodo/parse/parser.h"

namespace trove::kodo::parse {
namespace {

struct CorpusFile {
  std::string name;
  std::string text;
};

std::vector<CorpusFile> LoadCorpus() {
  std::vector<CorpusFile> files;
  for (const auto& entry : std::filesystem::directory_iterator(TROVE_KODO_TESTDATA)) {
    if (entry.path().extension() != ".ko") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    files.push_back({entry.path().filename().string(), buffer.str()});
  }
  std::sort(files.begin(), files.end(),
            [](const CorpusFile& a, const CorpusFile& b) { return a.name < b.name; });
  return files;
}

ParseResult ParseText(const std::string& text, bool recover = false) {
  Result<SourceBuffer> source = SourceBuffer::Create(1, "corpus.ko", text);
  EXPECT_TRUE(source.ok());
  ParseOptions options;
  options.recover = recover;
  Result<ParseResult> result = ParseModule(*source, options);
  EXPECT_TRUE(result.ok());
  return std::move(*result);
}

// `describe` with every `Span { start: S, end: E }` replaced by `Span` (a hand loop: std::regex
// is slow in the sanitizer build).
std::string WithoutSpans(const std::string& describe) {
  static constexpr std::string_view kOpen = "Span { start: ";
  std::string out;
  std::size_t at = 0;
  while (true) {
    const std::size_t hit = describe.find(kOpen, at);
    if (hit == std::string::npos) break;
    const std::size_t close = describe.find('}', hit);
    out.append(describe, at, hit - at);
    out += "Span";
    at = close + 1;
  }
  out.append(describe, at, std::string::npos);
  return out;
}

// The file's tokens (comments dropped), joined by `sep`.
std::string Relayout(const std::string& text, const std::string& sep) {
  Result<SourceBuffer> source = SourceBuffer::Create(1, "corpus.ko", text);
  EXPECT_TRUE(source.ok());
  Result<lex::LexResult> lexed = lex::Lex(*source);
  EXPECT_TRUE(lexed.ok());
  std::string out;
  for (const lex::Token& t : lexed->tokens) {
    if (t.kind == lex::TokenKind::kEof) break;
    out += source->Text(t.range);
    out += sep;
  }
  return out;
}

TEST(CorpusTest, CoversEveryFeatureArea) {
  const std::vector<CorpusFile> files = LoadCorpus();
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"t0_basics.ko", "t1_types.ko", "t2_generics_traits.ko",
                                             "t3_contracts_tests.ko", "t4_ownership.ko",
                                             "t5_concurrency.ko"}));
}

TEST(CorpusTest, EveryFileParsesInBothModes) {
  for (const CorpusFile& file : LoadCorpus()) {
    ParseResult strict = ParseText(file.text);
    ASSERT_TRUE(strict.ok()) << file.name << ": " << strict.diagnostics[0].message;
    ParseResult recovering = ParseText(file.text, /*recover=*/true);
    ASSERT_TRUE(recovering.ok()) << file.name;
    EXPECT_EQ(ast::DescribeModule(*strict.module), ast::DescribeModule(*recovering.module))
        << file.name;
  }
}

TEST(CorpusTest, RelayoutRoundTrip) {
  for (const CorpusFile& file : LoadCorpus()) {
    ParseResult original = ParseText(file.text);
    ASSERT_TRUE(original.ok()) << file.name;
    const std::string expected = WithoutSpans(ast::DescribeModule(*original.module));
    for (const std::string sep : {"\n", " ", "\n\t // comment\n"}) {
      const std::string relaid = Relayout(file.text, sep);
      ParseResult again = ParseText(relaid);
      ASSERT_TRUE(again.ok()) << file.name << ": " << again.diagnostics[0].message;
      EXPECT_EQ(WithoutSpans(ast::DescribeModule(*again.module)), expected) << file.name;
    }
    // Re-parsing the same text is deterministic, spans included.
    EXPECT_EQ(ast::DescribeModule(*ParseText(file.text).module),
              ast::DescribeModule(*original.module));
  }
}

TEST(CorpusTest, DeclarationSpansCoverTheirText) {
  for (const CorpusFile& file : LoadCorpus()) {
    ParseResult r = ParseText(file.text);
    ASSERT_TRUE(r.ok()) << file.name;
    const ast::Module& m = *r.module;
    auto text = [&](ast::Span s) { return file.text.substr(s.start, s.end - s.start); };
    EXPECT_EQ(text(m.span).substr(0, 6), "module") << file.name;
    EXPECT_EQ(text(m.span).back(), '}') << file.name;
    for (const ast::Function& f : m.functions) {
      const std::string t = text(f.span);
      EXPECT_EQ(t.substr(0, 3), "fn ") << file.name << " " << f.name;
      EXPECT_EQ(t.back(), '}') << file.name << " " << f.name;
      EXPECT_EQ(text(f.body.span).front(), '{');
      for (const ast::Annotation& a : f.annotations) {
        EXPECT_EQ(text(a.span), "@" + a.name + text(a.span).substr(a.name.size() + 1));
        EXPECT_EQ(text(a.span).front(), '@');
      }
    }
    for (const ast::TypeDecl& s : m.type_decls) EXPECT_EQ(text(s.span).substr(0, 7), "struct ");
    for (const ast::EnumDecl& e : m.enum_decls) EXPECT_EQ(text(e.span).substr(0, 5), "enum ");
    for (const ast::TestDecl& t : m.test_decls) EXPECT_EQ(text(t.span).substr(0, 5), "test ");
    for (const ast::DescribeDecl& d : m.describe_decls)
      EXPECT_EQ(text(d.span).substr(0, 9), "describe ");
  }
}

TEST(CorpusTest, FeatureCoverage) {
  // The corpus exercises every declaration kind and every statement and expression form.
  std::string all;
  for (const CorpusFile& file : LoadCorpus()) {
    ParseResult r = ParseText(file.text);
    ASSERT_TRUE(r.ok());
    all += ast::DescribeModule(*r.module);
  }
  for (const char* form : {"ImportDecl",
                           "Meta {",
                           "TypeAlias {",
                           "TypeDecl {",
                           "EnumDecl {",
                           "TraitDecl {",
                           "ImplBlock {",
                           "ActorDecl {",
                           "IntentDecl {",
                           "InvariantDecl {",
                           "TestDecl {",
                           "DescribeDecl {",
                           "Let {",
                           "LetPattern {",
                           "Expr(",
                           "Return {",
                           "While {",
                           "For {",
                           "ForIn {",
                           "Assign {",
                           "IfLet {",
                           "Break {",
                           "Continue {",
                           "Spawn {",
                           "Parallel {",
                           "Select {",
                           "Forall {",
                           "IntLit(",
                           "FloatLit(",
                           "StringLit(",
                           "BoolLit(",
                           "Ident(",
                           "BinaryOp {",
                           "UnaryOp {",
                           "Call {",
                           "If {",
                           "FieldAccess {",
                           "StructLit {",
                           "EnumVariantExpr {",
                           "Match {",
                           "Try {",
                           "OptionalChain {",
                           "NullCoalesce {",
                           "Range {",
                           "Closure {",
                           "Is {",
                           "Await {",
                           "StringInterp {",
                           "TupleLit(",
                           "TupleIndex {",
                           "Block(Block",
                           "Wildcard(",
                           "Literal(",
                           "Tuple([",
                           "Variant {",
                           "Generic(",
                           "Function(",
                           "Optional(",
                           "DynTrait(",
                           "Unit",
                           "Positional(",
                           "Named(\"",
                           "ownership: Ref",
                           "ownership: Mut",
                           "is_async: true",
                           "visibility: Public",
                           "FnRef(",
                           "List(",
                           "op: Mod",
                           "op: Or",
                           "op: Not",
                           "op: Neg"}) {
    EXPECT_NE(all.find(form), std::string::npos) << form;
  }
}

}  // namespace
}  // namespace trove::kodo::parse
