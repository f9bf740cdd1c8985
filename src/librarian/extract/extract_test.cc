// Extraction from the fixtures under testdata/librarian/extract: every symbol's kind,
// qualified name and exact span against the hand-written `<file>.expected` beside it, plus
// docs, imports, calls, byte ranges and chunks.
#include "librarian/extract/extract.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "librarian/extract/grammars.h"

namespace trove::librarian::extract {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::Not;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(TROVE_LIBRARIAN_TESTDATA) + "/extract/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::vector<std::string> Describe(const FileFacts& facts) {
  std::vector<std::string> out;
  for (const Symbol& s : facts.symbols) {
    out.push_back(fmt::format("{} {} {} {}", SymbolKindName(s.kind), s.qualified_name, s.start_line,
                              s.end_line));
  }
  return out;
}

const Symbol* Find(const FileFacts& facts, std::string_view qualified) {
  for (const Symbol& s : facts.symbols) {
    if (s.qualified_name == qualified) return &s;
  }
  return nullptr;
}

std::vector<std::string> Imports(const FileFacts& facts) {
  std::vector<std::string> out;
  for (const Import& i : facts.imports) out.push_back(fmt::format("{}@{}", i.module, i.line));
  return out;
}

// "callee@line<caller>" with the caller's qualified name, "-" outside any callable.
std::vector<std::string> Calls(const FileFacts& facts) {
  std::vector<std::string> out;
  for (const CallRef& c : facts.calls) {
    std::string caller = c.caller < 0 ? "-" : facts.symbols[c.caller].qualified_name;
    out.push_back(fmt::format("{}@{}<{}>", c.callee, c.line, caller));
  }
  return out;
}

class ExtractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = Extractor::Create({});
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    extractor_ = std::move(made).value();
  }

  FileFacts Run(const std::string& name, bool has_cpp = false) {
    content_ = ReadFixture(name);
    Routing routing = extractor_->Route(name, has_cpp);
    auto facts = extractor_->Extract(name, content_, routing);
    EXPECT_TRUE(facts.ok()) << facts.status().ToString();
    if (!facts.ok()) return {};
    return std::move(facts).value();
  }

  // Checks the fixture's symbols against its .expected file and the invariants every symbol
  // keeps: bytes and lines agree, chunks cover the symbols.
  FileFacts RunExpected(const std::string& name, std::string_view language, bool has_cpp = false) {
    FileFacts facts = Run(name, has_cpp);
    EXPECT_EQ(facts.language, language);
    const GrammarInfo* grammar = nullptr;
    int count = 0;
    const GrammarInfo* all = Grammars(&count);
    for (int i = 0; i < count; ++i) {
      if (all[i].name == language) grammar = &all[i];
    }
    EXPECT_NE(grammar, nullptr);
    if (grammar != nullptr) {
      EXPECT_EQ(facts.extractor, fmt::format("tree-sitter:{}@{}", language, grammar->version));
    }
    EXPECT_FALSE(facts.parse_error) << name;
    EXPECT_THAT(Describe(facts), ElementsAreArray(Lines(ReadFixture(name + ".expected")))) << name;
    for (const Symbol& s : facts.symbols) {
      // The byte range starts on start_line and ends on end_line.
      std::size_t lines_before = 1;
      for (std::size_t i = 0; i < s.start_byte; ++i) lines_before += content_[i] == '\n';
      EXPECT_EQ(lines_before, s.start_line) << s.qualified_name;
      std::size_t lines_to_end = lines_before;
      for (std::size_t i = s.start_byte; i + 1 < s.end_byte; ++i)
        lines_to_end += content_[i] == '\n';
      EXPECT_EQ(lines_to_end, s.end_line) << s.qualified_name;
      EXPECT_FALSE(s.signature.empty()) << s.qualified_name;
      EXPECT_FALSE(s.parse_error) << s.qualified_name;
      EXPECT_TRUE(s.end_known);
      if (s.parent >= 0) {
        const Symbol& p = facts.symbols[s.parent];
        EXPECT_LE(p.start_byte, s.start_byte);
        EXPECT_GE(p.end_byte, s.end_byte);
      }
    }
    std::size_t symbol_chunks = 0;
    for (const Chunk& c : facts.chunks) {
      if (c.kind != ChunkKind::kSymbol) continue;
      ++symbol_chunks;
      const Symbol& s = facts.symbols[c.symbol];
      EXPECT_EQ(c.start_line, s.start_line);
      EXPECT_EQ(c.end_line, s.end_line);
      EXPECT_NE(c.text.find(content_.substr(s.start_byte, s.end_byte - s.start_byte)),
                std::string::npos)
          << s.qualified_name;
    }
    std::size_t namespaces = 0;
    for (const Symbol& s : facts.symbols) namespaces += s.kind == SymbolKind::kNamespace;
    EXPECT_EQ(symbol_chunks, facts.symbols.size() - namespaces);
    return facts;
  }

  std::unique_ptr<Extractor> extractor_;
  std::string content_;
};

TEST_F(ExtractTest, Cpp) {
  FileFacts f = RunExpected("widget.cc", "cpp");
  EXPECT_THAT(Imports(f), ElementsAre("widget.h@1", "vector@2"));
  EXPECT_EQ(Find(f, "ns::Widget")->doc, "Widget holds a list of sizes.");
  EXPECT_EQ(Find(f, "add")->doc, "Adds two numbers.");
  EXPECT_EQ(Find(f, "add")->signature, "int add(int a, int b)");
  EXPECT_EQ(Find(f, "ns::Widget::~Widget")->signature, "Widget::~Widget()");
  EXPECT_EQ(Find(f, "ns::Widget::size")->parent, 1);
  EXPECT_EQ(Find(f, "twice")->doc, "");
  EXPECT_THAT(Calls(f), Contains("add@41<twice>"));
  EXPECT_THAT(Calls(f), Contains("push_back@26<ns::Widget::Widget>"));
  EXPECT_THAT(Calls(f), Contains("clear@29<ns::Widget::~Widget>"));
  EXPECT_THAT(Calls(f), Contains("size@11<ns::Widget::size>"));
  EXPECT_THAT(Calls(f), Not(Contains("static_cast@11<ns::Widget::size>")));
  // Remaining top-level code (the includes and the closing brace of the namespace).
  ASSERT_FALSE(f.chunks.empty());
  const Chunk& file = f.chunks.back();
  EXPECT_EQ(file.kind, ChunkKind::kFile);
  EXPECT_EQ(file.name, "widget.cc");
  EXPECT_EQ(file.start_line, 1u);
  EXPECT_NE(file.text.find("#include <vector>"), std::string::npos);
  EXPECT_EQ(file.text.find("items_.clear()"), std::string::npos);
}

TEST_F(ExtractTest, HeaderRoutesByWorkspace) {
  EXPECT_EQ(extractor_->Route("a/b.h", true).language, Language::kCpp);
  EXPECT_EQ(extractor_->Route("a/b.h", false).language, Language::kC);
}

TEST_F(ExtractTest, C) {
  FileFacts f = RunExpected("list.c", "c");
  EXPECT_THAT(Imports(f), ElementsAre("stdio.h@1", "list.h@2"));
  EXPECT_EQ(Find(f, "node")->doc, "A singly linked list node.");
  EXPECT_EQ(Find(f, "list_each")->doc, "Visits every node.");
  EXPECT_EQ(Find(f, "list_each")->signature, "void list_each(list_t *list, visit_fn fn)");
  EXPECT_THAT(Calls(f),
              ElementsAre("printf@17<print_value>", "fn@23<list_each>", "list_each@29<main>"));
}

TEST_F(ExtractTest, Python) {
  FileFacts f = RunExpected("shapes.py", "python");
  EXPECT_THAT(Imports(f), ElementsAre("os@1", "collections@2", "json@3", "sys@3"));
  EXPECT_EQ(Find(f, "Shape")->doc, "A shape with an area.");
  EXPECT_EQ(Find(f, "load_shapes")->doc, "");
  EXPECT_EQ(Find(f, "Shape.__init__")->signature, "def __init__(self, name)");
  EXPECT_EQ(Find(f, "Square")->signature, "class Square(Shape)");
  EXPECT_THAT(Calls(f), ElementsAre("NotImplementedError@13<Shape.area>", "open@24<load_shapes>",
                                    "load@25<load_shapes>", "Square@26<load_shapes>",
                                    "getcwd@31<main.helper>", "print@32<main>",
                                    "load_shapes@32<main>", "helper@32<main>"));
}

TEST_F(ExtractTest, JavaScript) {
  FileFacts f = RunExpected("app.js", "javascript");
  EXPECT_THAT(Imports(f), ElementsAre("fs/promises@1", "path@2"));
  EXPECT_EQ(Find(f, "greet")->doc, "Greets a user by name.");
  EXPECT_EQ(Find(f, "shout")->signature, "shout = (text) =>");
  EXPECT_THAT(Calls(f),
              ElementsAre("require@2<->", "toUpperCase@12<shout>", "map@21<Greeter.greetAll>",
                          "greet@21<Greeter.greetAll>", "Greeter@26<main>", "log@27<main>",
                          "greetAll@27<main>", "join@27<main>", "readFile@28<main>"));
}

TEST_F(ExtractTest, TypeScript) {
  FileFacts f = RunExpected("store.ts", "typescript");
  EXPECT_THAT(Imports(f), ElementsAre("./item@1", "fs@2"));
  EXPECT_EQ(Find(f, "MemoryStore")->doc, "An in-memory store.");
  EXPECT_THAT(Calls(f), Contains("max@18<Util.clamp>"));
  EXPECT_THAT(Calls(f), Contains("MemoryStore@35<makeStore>"));
}

TEST_F(ExtractTest, Tsx) {
  FileFacts f = RunExpected("view.tsx", "tsx");
  EXPECT_THAT(Imports(f), ElementsAre("react@1"));
}

TEST_F(ExtractTest, Go) {
  FileFacts f = RunExpected("server.go", "go");
  EXPECT_THAT(Imports(f), ElementsAre("fmt@4", "net/http@5"));
  EXPECT_EQ(Find(f, "Handler")->doc, "Handler serves one route.");
  EXPECT_EQ(Find(f, "NewServer")->doc, "NewServer makes a server.");
  EXPECT_EQ(Find(f, "Server.Start")->signature, "func (s *Server) Start() error");
  EXPECT_THAT(Calls(f), ElementsAre("Println@25<Server.Start>", "ListenAndServe@26<Server.Start>"));
}

TEST_F(ExtractTest, Rust) {
  FileFacts f = RunExpected("lib.rs", "rust");
  EXPECT_THAT(Imports(f),
              ElementsAre("std::collections::HashMap@1", "crate::util::{parse, Config}@2"));
  EXPECT_EQ(Find(f, "Counter")->doc, "A counter of words.");
  EXPECT_THAT(Calls(f), Contains("or_insert@19<Counter::add>"));
  EXPECT_THAT(Calls(f), Contains("compute@32<inner::helper>"));
  EXPECT_THAT(Calls(f), Contains("parse@37<compute>"));
}

TEST_F(ExtractTest, Java) {
  FileFacts f = RunExpected("Shop.java", "java");
  EXPECT_THAT(Imports(f), ElementsAre("java.util.List@3", "java.util.Objects.requireNonNull@4"));
  EXPECT_EQ(Find(f, "Shop")->doc, "A shop that sells items.");
  EXPECT_THAT(Calls(f), ElementsAre("requireNonNull@11<Shop.Shop>", "size@15<Shop.count>",
                                    "count@24<Store.empty>"));
}

TEST_F(ExtractTest, SyntaxErrorsKeepDefinitions) {
  std::string src = "int ok(void) { return 1; }\nint broken( { \nint also(void) { return 2; }\n";
  auto facts = extractor_->Extract("x.c", src, {Language::kC, {}});
  ASSERT_TRUE(facts.ok());
  EXPECT_TRUE(facts->parse_error);
  ASSERT_FALSE(facts->symbols.empty());
  EXPECT_EQ(facts->symbols[0].name, "ok");
  EXPECT_FALSE(facts->symbols[0].parse_error);
}

TEST_F(ExtractTest, DeepNestingIsBounded) {
  // 50,000 nested parentheses: the walk is iterative, so nothing exhausts the stack and the
  // definition around them is still found.
  std::string src =
      "int f(void) { return " + std::string(50000, '(') + "1" + std::string(50000, ')') + "; }\n";
  auto facts = extractor_->Extract("deep.c", src, {Language::kC, {}});
  ASSERT_TRUE(facts.ok()) << facts.status().ToString();
  ASSERT_EQ(facts->symbols.size(), 1u);
  EXPECT_EQ(facts->symbols[0].name, "f");
}

// Bootstrap forks one extractor per worker: the fork shares the ctags probe and extracts
// every route (tree-sitter, ctags, text) exactly as the original does.
TEST_F(ExtractTest, ForkSharesCtagsAndExtractsAlike) {
  extractor_->set_timeout_ms(12'345);
  std::unique_ptr<Extractor> fork = extractor_->Fork();
  ASSERT_NE(fork, nullptr);
  EXPECT_EQ(fork->ctags(), extractor_->ctags());
  EXPECT_EQ(fork->options().timeout_ms, 12'345);
  EXPECT_EQ(fork->options().ctags_program, extractor_->options().ctags_program);
  for (const char* name : {"widget.cc", "greeter.rb", "notes.txt"}) {
    std::string content = ReadFixture(name);
    Routing routing = extractor_->Route(name, true);
    Routing forked_routing = fork->Route(name, true);
    EXPECT_EQ(forked_routing.language, routing.language) << name;
    EXPECT_EQ(forked_routing.ctags_language, routing.ctags_language) << name;
    auto a = extractor_->Extract(name, content, routing);
    auto b = fork->Extract(name, content, forked_routing);
    ASSERT_TRUE(a.ok() && b.ok()) << name;
    EXPECT_EQ(b->extractor, a->extractor) << name;
    EXPECT_THAT(Describe(*b), ElementsAreArray(Describe(*a))) << name;
    ASSERT_EQ(b->chunks.size(), a->chunks.size()) << name;
    for (std::size_t i = 0; i < a->chunks.size(); ++i)
      EXPECT_EQ(b->chunks[i].text, a->chunks[i].text);
  }
  // The fork outlives the original: the shared ctags stays alive.
  extractor_.reset();
  std::string ruby = ReadFixture("greeter.rb");
  auto facts = fork->Extract("greeter.rb", ruby, fork->Route("greeter.rb", true));
  ASSERT_TRUE(facts.ok());
  if (fork->ctags() != nullptr) {
    EXPECT_THAT(facts->extractor, ::testing::StartsWith("ctags@"));
  }
}

TEST_F(ExtractTest, CancelledBeforeStart) {
  base::Cancellation cancel;
  cancel.Cancel();
  auto facts = extractor_->Extract("x.c", "int f(void){return 0;}", {Language::kC, {}}, &cancel);
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.status().code(), base::StatusCode::kCancelled);
}

TEST_F(ExtractTest, ParseTimeLimit) {
  // A 1 µs limit cannot parse ~2 MB of C; the file ends with kDeadlineExceeded, not a
  // fallback. (No duration is asserted: only that the limit is enforced.)
  std::string src;
  for (int i = 0; i < 40000; ++i) src += fmt::format("int f{}(int x) {{ return x + {}; }}\n", i, i);
  extractor_->set_timeout_ms(0);
  ASSERT_TRUE(extractor_->Extract("big.c", src, {Language::kC, {}}).ok());
  // The tree-sitter limit is in microseconds; 1 ms is far below what this parse needs.
  extractor_->set_timeout_ms(1);
  auto facts = extractor_->Extract("big.c", src, {Language::kC, {}});
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.status().code(), base::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(facts.status().message(), ::testing::HasSubstr("big.c"));
}

}  // namespace
}  // namespace trove::librarian::extract
