// Deep nesting through the whole front end (issue 17 item 1, docs/conventions.md §8: no input takes
// a server down). The two programs of the issue (a 5,000-call method chain, `1 + 1 + ... + 1` with
// 100,000 terms) and random deep nests (chains, parentheses, blocks, closures and the other
// nesting constructs, mixed) at 10, 100 and 1,000 times the limit must come back as one
// "nesting too deep" diagnostic with a span, through the parser, `kodoc check` and the MCP tools'
// engine functions. Random nests just inside the limit must parse into a tree no deeper than
// ast::kMaxTreeDepth, which the checker, describe and annotate then walk. Everything runs on a
// thread with a small stack, as a kodo-mcp worker would, so a recursion the bounds miss fails
// here as a crash rather than passing on the main thread's larger stack.
#include <gtest/gtest.h>
#include <pthread.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/env.h"
#include "kodo/annotate/annotate.h"
#include "kodo/ast/ast.h"
#include "kodo/ast/describe.h"
#include "kodo/cli/commands.h"
#include "kodo/driver/tools.h"
#include "kodo/mir/lower.h"
#include "kodo/parse/parser.h"
#include "kodo/sema/check.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo {
namespace {

using ast::kMaxNestingDepth;
using ast::kMaxTreeDepth;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TROVE_DEEP_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TROVE_DEEP_TEST_ASAN 1
#endif

// The stack the walks get here: 1 MiB, an eighth of the usual 8 MiB a kodo-mcp worker gets from
// the default thread attributes (base::ThreadPool's std::threads take glibc's default, the
// stack rlimit). When this was written, the release build passed these tests on 512 KiB and not
// on 256 KiB. Sanitizer builds make every frame many times larger (-O0, redzones around every
// local): the describe printer's frame alone is over 8 KiB there, so a walk to the 1,024-level
// bound overflowed 8 MiB. They get 64 MiB; the release figure above is the one that matters.
#ifdef TROVE_DEEP_TEST_ASAN
constexpr std::size_t kStackBytes = std::size_t{64} << 20;
#else
constexpr std::size_t kStackBytes = std::size_t{1} << 20;
#endif

// Runs `body` on a new thread whose stack is kStackBytes, and waits for it.
void OnSmallStack(const std::function<void()>& body) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, kStackBytes), 0);
  pthread_t thread;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  const std::function<void()>* arg = &body;
  ASSERT_EQ(pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(arg)), 0);
  pthread_attr_destroy(&attr);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
}

std::string Program(const std::string& expr) {
  return "module deep {\n    meta { purpose: \"deep\" }\n    fn main() -> Int {\n        let v = " +
         expr + "\n        return 0\n    }\n}\n";
}

// The issue's first program: a method chain of `calls` calls (100 KB at 5,000).
std::string MethodChain(std::size_t calls) {
  std::string e = "x";
  for (std::size_t i = 0; i < calls; ++i) e += i % 2 == 0 ? ".f()" : ".gg(1)";
  return Program(e);
}

// The issue's second program: `1 + 1 + ... + 1` with `terms` terms (400 KB at 100,000).
std::string OnesSum(std::size_t terms) {
  std::string e = "1";
  for (std::size_t i = 1; i < terms; ++i) e += " + 1";
  return Program(e);
}

// One nesting construct: the text before and after the expression it wraps.
struct Wrapper {
  const char* name;
  const char* before;
  const char* after;
};

// Every way an expression can hold another one, so that the random nests mix them all: left-
// associative chains (suffix only), prefixes, and brackets of every kind.
constexpr Wrapper kWrappers[] = {
    {"paren", "(", ")"},
    {"block", "{ ", " }"},
    {"closure", "|y: Int| ", ""},
    {"closure_block", "|y: Int| { ", " }"},
    {"if", "if c { ", " } else { x }"},
    {"else_if", "if c { x } else if d { ", " } else { x }"},
    {"neg", "- ", ""},
    {"not", "! ", ""},
    {"call_arg", "f(", ")"},
    {"second_arg", "f(x, ", ")"},
    {"method", "", ".m()"},
    {"method_arg", "", ".m(x)"},
    {"field", "", ".f"},
    {"try", "", " ?"},
    {"optional_chain", "", " ?.f"},
    {"await", "", ".await"},
    {"is", "", " is T"},
    {"add", "", " + x"},
    {"mul_right", "x * ", ""},
    {"compare", "", " == x"},
    {"and", "", " && x"},
    {"coalesce", "", " ?? x"},
    {"match", "match x { _ => ", " }"},
    {"struct_field", "P { a: ", " }"},
    {"tuple", "(x, ", ")"},
    {"variant_arg", "E::V(", ")"},
    {"let_block", "{ let z = ", "\n z }"},
    {"while_block", "{ while c { let z = ", " } x }"},
};

// The chain-like shapes and the bracket shapes the issue names, repeated `n` times.
std::string Nest(const Wrapper& w, std::size_t n) {
  std::string e;
  for (std::size_t i = 0; i < n; ++i) e += w.before;
  e += "x";
  for (std::size_t i = 0; i < n; ++i) e += w.after;
  return e;
}

// A random nest: `n` wrappers drawn from kWrappers, outermost first.
std::vector<std::size_t> RandomWrappers(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kWrappers) - 1);
  std::vector<std::size_t> order(n);
  for (std::size_t& w : order) w = pick(rng);
  return order;
}

// The expression of the first `n` wrappers of `order` around `x`.
std::string Wrap(const std::vector<std::size_t>& order, std::size_t n) {
  std::string e;
  for (std::size_t i = 0; i < n; ++i) e += kWrappers[order[i]].before;
  e += "x";
  for (std::size_t i = n; i > 0; --i) e += kWrappers[order[i - 1]].after;
  return e;
}

Result<parse::ParseResult> Parse(const std::string& text, bool recover = false) {
  Result<SourceBuffer> source = SourceBuffer::Create(1, "deep.ko", text);
  if (!source.ok()) return source.status();
  parse::ParseOptions options;
  options.recover = recover;
  return parse::ParseModule(*source, options);
}

bool SaysTooDeep(const std::string& message) {
  return message.find("nesting too deep (more than 256 levels) at Span { start: ") !=
         std::string::npos;
}

// How far ExpectTooDeep follows a program: through the parser and the check only (for the
// largest programs, to keep the test quick), or also through `kodoc check` and the MCP tools.
enum class Reach { kCheck, kEverywhere };

// Checks that `text` is refused with one "nesting too deep" diagnostic with a span, by the
// parser (fail-fast and recovering), the collecting check and, with kEverywhere, `kodoc check`
// and the MCP tools' engine functions.
void ExpectTooDeep(const std::string& text, const std::string& what,
                   Reach reach = Reach::kEverywhere) {
  SCOPED_TRACE(what);
  for (bool recover : {false, true}) {
    if (recover && reach == Reach::kCheck) continue;
    Result<parse::ParseResult> parsed = Parse(text, recover);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    ASSERT_FALSE(parsed->diagnostics.empty());
    const parse::ParseDiagnostic& d = parsed->diagnostics[0];
    EXPECT_EQ(d.code, "E0100");
    EXPECT_TRUE(SaysTooDeep(d.message)) << d.message;
    ASSERT_TRUE(d.range.has_value());
    EXPECT_LT(d.range->begin, d.range->end);
    EXPECT_LE(d.range->end, text.size());
    if (recover) {
      ASSERT_TRUE(parsed->module.has_value());
      EXPECT_LE(ast::TreeDepth(*parsed->module), kMaxTreeDepth);
      EXPECT_FALSE(ast::DescribeModule(*parsed->module).empty());
    }
  }

  Result<SourceBuffer> source = SourceBuffer::Create(1, "deep.ko", text);
  ASSERT_TRUE(source.ok());
  Result<sema::SourceCheck> checked = sema::CheckSource(*source);
  ASSERT_TRUE(checked.ok());
  EXPECT_EQ(checked->phase, sema::Phase::kParse);
  ASSERT_EQ(checked->diagnostics.size(), 1u);
  EXPECT_TRUE(SaysTooDeep(checked->diagnostics[0].message));
  EXPECT_TRUE(checked->diagnostics[0].span.has_value());
  if (reach == Reach::kCheck) return;

  base::MemEnv env;
  ASSERT_TRUE(env.WriteFile("deep.ko", text).ok());
  const cli::CommandOutput out = cli::RunCheck(env, {.file = "deep.ko"});
  EXPECT_EQ(out.exit_code, cli::kExitFailure);
  EXPECT_NE(out.err.find("nesting too deep"), std::string::npos) << out.err;

  for (auto* tool :
       {&driver::CheckTool, &driver::DescribeTool, &driver::AnnotateTool, &driver::FixTool}) {
    Result<nlohmann::json> answer = (*tool)(text, {});
    ASSERT_TRUE(answer.ok()) << answer.status().message();
    EXPECT_NE(answer->dump().find("nesting too deep"), std::string::npos) << answer->dump();
  }
}

// Checks that `module` (parsed from `text`) is within the tree bound and that every walk over
// it completes: the collecting and fail-fast checks, describe, annotate and the tools.
void ExpectWalkable(const std::string& text, const ast::Module& module) {
  EXPECT_LE(ast::TreeDepth(module), kMaxTreeDepth);
  Result<SourceBuffer> source = SourceBuffer::Create(1, "deep.ko", text);
  ASSERT_TRUE(source.ok());
  (void)sema::Check(*source, module);
  sema::CheckOptions fail_fast;
  fail_fast.fail_fast = true;
  (void)sema::Check(*source, module, fail_fast);
  const std::string described = ast::DescribeModule(module);
  // `..` marks a subtree a walk refused to enter; a parsed tree never has one.
  EXPECT_EQ(described.find(".."), std::string::npos);
  (void)annotate::AnnotateForAgent(module, text);
  (void)annotate::SuggestContracts(module, text);
  // The MIR lowering (kodo.build, kodoc mir/run) recurses over the tree too.
  (void)mir::Lower(module);
  for (auto* tool : {&driver::CheckTool, &driver::DescribeTool, &driver::AnnotateTool,
                     &driver::FixTool, &driver::BuildTool}) {
    EXPECT_TRUE((*tool)(text, {}).ok());
  }
}

TEST(DeepNestingTest, TheIssuesTwoProgramsAreRefusedWithASpan) {
  OnSmallStack([] {
    const std::string chain = MethodChain(5000);
    EXPECT_GT(chain.size(), 20000u);
    ExpectTooDeep(chain, "method chain of 5,000 calls");
    const std::string sum = OnesSum(100000);
    EXPECT_GT(sum.size(), 400000u);
    ExpectTooDeep(sum, "1 + 1 + ... + 1, 100,000 terms");
  });
}

TEST(DeepNestingTest, TheDiagnosticPointsAtTheLinkThatCrossesTheLimit) {
  // `x.f().gg(1)...`: the span is a `.` or `(` token of the chain, well inside the source.
  const std::string chain = MethodChain(5000);
  Result<parse::ParseResult> parsed = Parse(chain);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->diagnostics.size(), 1u);
  const SourceRange range = *parsed->diagnostics[0].range;
  const std::string token = chain.substr(range.begin, range.end - range.begin);
  EXPECT_TRUE(token == "." || token == "(") << token;
  EXPECT_GT(range.begin, chain.find("let v"));
  EXPECT_LT(range.begin, chain.size() / 2);
}

TEST(DeepNestingTest, EveryShapeAtTenHundredAndAThousandTimesTheLimit) {
  OnSmallStack([] {
    for (const Wrapper& w : kWrappers) {
      // 1,000 times the limit for the shapes the issue names (chains, parentheses, blocks,
      // closures); the others are covered there by the random nests.
      const std::string name = w.name;
      const bool named = name == "method" || name == "add" || name == "paren" || name == "block" ||
                         name == "closure";
      for (std::size_t factor : {10, 100, 1000}) {
        if (factor == 1000 && !named) continue;
        const std::size_t n = factor * kMaxNestingDepth;
        ExpectTooDeep(Program(Nest(w, n)), std::string(w.name) + " x" + std::to_string(n),
                      factor == 1000 ? Reach::kCheck : Reach::kEverywhere);
      }
    }
  });
}

TEST(DeepNestingTest, RandomNestsAtTenHundredAndAThousandTimesTheLimit) {
  OnSmallStack([] {
    std::mt19937 rng(17);
    for (int round = 0; round < 4; ++round) {
      for (std::size_t factor : {10, 100, 1000}) {
        const std::size_t n = factor * kMaxNestingDepth;
        const std::vector<std::size_t> order = RandomWrappers(rng, n);
        ExpectTooDeep(Program(Wrap(order, n)),
                      "random nest " + std::to_string(round) + " x" + std::to_string(n),
                      factor == 1000 ? Reach::kCheck : Reach::kEverywhere);
      }
    }
  });
}

TEST(DeepNestingTest, EachShapeParsesWhenShallow) {
  // The generator's constructs are all valid syntax: a few levels of each parse.
  for (const Wrapper& w : kWrappers) {
    Result<parse::ParseResult> parsed = Parse(Program(Nest(w, 5)));
    ASSERT_TRUE(parsed.ok());
    EXPECT_TRUE(parsed->ok()) << w.name << ": "
                              << (parsed->diagnostics.empty() ? ""
                                                              : parsed->diagnostics[0].message);
  }
}

TEST(DeepNestingTest, EveryShapeAtTheLimitParsesOrIsRefusedAndIsWalkable) {
  // Each shape, repeated as deep as the parser accepts: the tree stays within kMaxTreeDepth and
  // every walk completes on the small stack. One more level past that is refused.
  OnSmallStack([] {
    for (const Wrapper& w : kWrappers) {
      SCOPED_TRACE(w.name);
      std::size_t lo = 1, hi = 2 * kMaxNestingDepth;  // Nest(w, lo) parses, Nest(w, hi) not
      ASSERT_TRUE(Parse(Program(Nest(w, lo)))->ok());
      ASSERT_FALSE(Parse(Program(Nest(w, hi)))->ok());
      while (hi - lo > 1) {
        const std::size_t mid = (lo + hi) / 2;
        (Parse(Program(Nest(w, mid)))->ok() ? lo : hi) = mid;
      }
      const std::string text = Program(Nest(w, lo));
      Result<parse::ParseResult> parsed = Parse(text);
      ASSERT_TRUE(parsed.ok() && parsed->ok());
      ExpectWalkable(text, *parsed->module);
      ExpectTooDeep(Program(Nest(w, hi)), "one past the deepest accepted");
    }
  });
}

TEST(DeepNestingTest, RandomNestsJustInsideTheLimitAreWalkable) {
  OnSmallStack([] {
    std::mt19937 rng(1017);
    for (int round = 0; round < 12; ++round) {
      SCOPED_TRACE(round);
      const std::vector<std::size_t> order = RandomWrappers(rng, 4 * kMaxNestingDepth);
      std::size_t lo = 0, hi = order.size();
      ASSERT_TRUE(Parse(Program(Wrap(order, lo)))->ok());
      ASSERT_FALSE(Parse(Program(Wrap(order, hi)))->ok());
      while (hi - lo > 1) {
        const std::size_t mid = (lo + hi) / 2;
        (Parse(Program(Wrap(order, mid)))->ok() ? lo : hi) = mid;
      }
      const std::string text = Program(Wrap(order, lo));
      Result<parse::ParseResult> parsed = Parse(text);
      ASSERT_TRUE(parsed.ok() && parsed->ok());
      ExpectWalkable(text, *parsed->module);
    }
  });
}

// A tree built by hand is not bounded by the parser: the walks stop descending past
// kMaxTreeDepth instead of overflowing (describe shows the cut as `..`).
TEST(DeepNestingTest, WalksOfAHandBuiltTreeDeeperThanTheBoundStop) {
  OnSmallStack([] {
    ast::Module module;
    module.name = "deep";
    ast::Function main;
    main.name = "main";
    ast::Expr e;
    e.kind = ast::ExprKind::kIdent;
    e.text = "x";
    for (std::uint32_t i = 0; i < 2 * kMaxTreeDepth; ++i) {
      ast::Expr neg;
      neg.kind = ast::ExprKind::kUnaryOp;
      neg.unary_op = ast::UnaryOp::kNeg;
      neg.operands.push_back(std::move(e));
      e = std::move(neg);
    }
    ast::Stmt stmt;
    stmt.kind = ast::StmtKind::kExpr;
    stmt.value = std::move(e);
    main.body.stmts.push_back(std::move(stmt));
    module.functions.push_back(std::move(main));
    EXPECT_EQ(ast::TreeDepth(module), 2 * kMaxTreeDepth + 3);  // block, statement, x

    Result<SourceBuffer> source = SourceBuffer::Create(1, "deep.ko", "module deep { }");
    ASSERT_TRUE(source.ok());
    (void)sema::Check(*source, module);
    EXPECT_NE(ast::DescribeModule(module).find(".."), std::string::npos);
    (void)annotate::AnnotateForAgent(module, source->text());
    (void)annotate::SuggestContracts(module, source->text());
  });
}

TEST(DeepNestingTest, MaxDepthAboveTheCeilingIsTheCeiling) {
  parse::ParseOptions options;
  options.max_depth = 1u << 30;
  Result<SourceBuffer> source = SourceBuffer::Create(1, "deep.ko", OnesSum(5000));
  ASSERT_TRUE(source.ok());
  Result<parse::ParseResult> parsed = parse::ParseModule(*source, options);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->diagnostics.size(), 1u);
  EXPECT_TRUE(SaysTooDeep(parsed->diagnostics[0].message)) << parsed->diagnostics[0].message;
}

TEST(DeepNestingTest, ALongFlatProgramIsNotDeep) {
  // Many statements and many arguments are siblings, not levels: they parse at any count.
  std::string body;
  for (int i = 0; i < 5000; ++i) body += "        let v" + std::to_string(i) + " = 1 + 2\n";
  std::string args = "f(1";
  for (int i = 0; i < 5000; ++i) args += ", 1";
  args += ")";
  const std::string text =
      "module flat {\n    meta { purpose: \"flat\" }\n    fn main() -> Int {\n" + body +
      "        let w = " + args + "\n        return 0\n    }\n}\n";
  Result<parse::ParseResult> parsed = Parse(text);
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->ok()) << parsed->diagnostics[0].message;
}

}  // namespace
}  // namespace trove::kodo
