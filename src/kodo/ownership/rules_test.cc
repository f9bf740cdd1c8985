// One small program per rule of docs/kodo.md §7.3 (and §5.9's captures), checked by the collecting
// checker (kodo/sema), which drives the ownership Tracker. Each test names the rule; the
// must-not-be- errors are here too: sequential calls never conflict, a new `let` revives a moved
// name, moves in a nested block are forgotten after it, Copy values never move.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "kodo/sema/check.h"

namespace trove::kodo::ownership {
namespace {

struct Error {
  std::string code;
  int line = 0;  // 1-based line of the span's start in the function text given; 0: no span
  std::string message;
  std::string spanned;  // the source text the span covers
};

// Checks `functions` inside a module whose first function starts on line 1 of `functions`.
std::vector<Error> Check(const std::string& functions) {
  const std::string head =
      "module t {\nmeta { purpose: \"ownership rules\" }\n"
      "struct Item { name: String, n: Int }\n";
  const std::string text = head + functions + "\n}\n";
  auto source = SourceBuffer::Create(0, "t.ko", text);
  EXPECT_TRUE(source.ok());
  sema::CheckOptions options;
  options.verify_fixes = false;
  auto checked = sema::CheckSource(*source, options);
  EXPECT_TRUE(checked.ok());
  EXPECT_EQ(checked->phase, sema::Phase::kTypes)
      << (checked->diagnostics.empty() ? "" : checked->diagnostics[0].message);
  std::vector<Error> out;
  for (const diag::Diagnostic& d : checked->diagnostics) {
    Error e{std::string(d.code()), 0, d.message, ""};
    if (d.span) {
      e.line = static_cast<int>(source->Locate(d.span->begin).line) - 3;
      e.spanned = text.substr(d.span->begin, d.span->end - d.span->begin);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> Codes(const std::vector<Error>& errors) {
  std::vector<std::string> codes;
  for (const Error& e : errors) codes.push_back(e.code);
  return codes;
}

using Codes_ = std::vector<std::string>;

// ---- moves

TEST(OwnershipRulesTest, LetOfABareIdentifierMovesANonCopyValue) {
  const auto errors = Check(
      "fn f() {\n"
      "  let s = \"a\"\n"
      "  let t = s\n"
      "  println(s)\n"
      "}\n");
  ASSERT_EQ(Codes(errors), Codes_{"E0240"});
  EXPECT_EQ(errors[0].line, 4);
  EXPECT_EQ(errors[0].spanned, "s");
  EXPECT_NE(errors[0].message.find("cannot use `s` after move (moved at line "), std::string::npos);
}

TEST(OwnershipRulesTest, PassingToAnOwnParameterOrABuiltinMoves) {
  const auto errors = Check(
      "fn take(own s: String) {}\n"
      "fn twice_builtin() {\n"
      "  let s = \"a\"\n"
      "  println(s)\n"
      "  println(s)\n"
      "}\n"
      "fn twice_user(s: String) {\n"
      "  take(s)\n"
      "  take(s)\n"
      "}\n");
  ASSERT_EQ(Codes(errors), (Codes_{"E0240", "E0240"}));
  EXPECT_EQ(errors[0].line, 5);
  EXPECT_EQ(errors[1].line, 9);
}

TEST(OwnershipRulesTest, CopyValuesNeverMove) {
  EXPECT_TRUE(Check("fn take_i(own n: Int) {}\n"
                    "fn take_l(own l: List<Int>) {}\n"
                    "fn f(n: Int, b: Bool, x: Float64) {\n"
                    "  let m = n\n"
                    "  take_i(n)\n"
                    "  take_i(n)\n"
                    "  let xs: List<Int> = list_new()\n"
                    "  take_l(xs)\n"
                    "  take_l(xs)\n"
                    "  let c = b\n"
                    "  let d = b\n"
                    "  let g = take_i\n"
                    "  let h = take_i\n"
                    "  print_int(m)\n"
                    "}\n")
                  .empty());
}

TEST(OwnershipRulesTest, ReceiversFieldsLiteralsAndReturnsDoNotMove) {
  EXPECT_TRUE(Check("fn keep(s: String) -> String {\n"
                    "  let a = s.length()\n"
                    "  let b = s.length()\n"
                    "  let it = Item { name: s, n: a }\n"
                    "  let other = Item { name: s, n: b }\n"
                    "  let n1 = it.name\n"
                    "  let n2 = it.name\n"
                    "  return s\n"
                    "}\n")
                  .empty());
}

TEST(OwnershipRulesTest, ANewLetRevivesAMovedName) {
  EXPECT_TRUE(Check("fn f() {\n"
                    "  let s = \"a\"\n"
                    "  println(s)\n"
                    "  let s = \"b\"\n"
                    "  println(s)\n"
                    "}\n")
                  .empty());
}

TEST(OwnershipRulesTest, AssigningToAMovedNameIsAUseAfterMove) {
  // §7.3: an assignment target is a use (upstream's check_assign_stmt); only `let` revives.
  const auto errors = Check(
      "fn f() {\n"
      "  let mut s = \"a\"\n"
      "  println(s)\n"
      "  s = \"b\"\n"
      "}\n");
  ASSERT_EQ(Codes(errors), Codes_{"E0240"});
  EXPECT_EQ(errors[0].line, 4);
  EXPECT_EQ(errors[0].spanned, "s = \"b\"");
}

TEST(OwnershipRulesTest, AMoveInsideANestedBlockIsForgottenAfterIt) {
  EXPECT_TRUE(Check("fn f(c: Bool) {\n"
                    "  let s = \"a\"\n"
                    "  if c { println(s) }\n"
                    "  while c { println(s) }\n"
                    "  { println(s) }\n"
                    "  println(s)\n"
                    "}\n")
                  .empty());
  // ...but a move earlier in the same or an enclosing block is seen inside it.
  const auto errors = Check(
      "fn g(c: Bool) {\n"
      "  let s = \"a\"\n"
      "  println(s)\n"
      "  if c { println(s) }\n"
      "}\n");
  ASSERT_EQ(Codes(errors), Codes_{"E0240"});
  EXPECT_EQ(errors[0].line, 4);
}

TEST(OwnershipRulesTest, MethodAndGenericCallArgumentsDoNotMove) {
  EXPECT_TRUE(Check("fn id<T>(x: T) -> T { return x }\n"
                    "fn f(s: String) {\n"
                    "  let a = id(s)\n"
                    "  let b = id(s)\n"
                    "  let c = s.contains(s)\n"
                    "  let d = s.contains(s)\n"
                    "}\n")
                  .empty());
}

TEST(OwnershipRulesTest, OwnershipErrorsComeInTypingOrder) {
  // The moved `s` is read before the annotation is compared: E0240, not E0200.
  const auto errors = Check(
      "fn f() {\n"
      "  let s = \"a\"\n"
      "  println(s)\n"
      "  let n: Int = s\n"
      "}\n");
  ASSERT_EQ(Codes(errors), Codes_{"E0240"});
}

// ---- borrows within one argument list

TEST(OwnershipRulesTest, ConflictsWithinOneArgumentList) {
  const auto errors = Check(
      "fn ro(ref a: String, own b: String) {}\n"
      "fn rm(ref a: String, mut b: String) {}\n"
      "fn mr(mut a: String, ref b: String) {}\n"
      "fn mm(mut a: String, mut b: String) {}\n"
      "fn e0242(x: String) { ro(x, x) }\n"
      "fn e0245(x: String) { rm(x, x) }\n"
      "fn e0246(x: String) { mr(x, x) }\n"
      "fn e0247(x: String) { mm(x, x) }\n");
  ASSERT_EQ(Codes(errors), (Codes_{"E0242", "E0245", "E0246", "E0247"}));
  for (const Error& e : errors) EXPECT_EQ(e.spanned, "x") << e.message;
  EXPECT_NE(errors[0].message.find("cannot move `x` while it is borrowed"), std::string::npos);
  EXPECT_NE(errors[1].message.find("as mutable while it is immutably borrowed"), std::string::npos);
  EXPECT_NE(errors[2].message.find("as immutable while it is mutably borrowed"), std::string::npos);
  EXPECT_NE(errors[3].message.find("as mutable more than once at a time"), std::string::npos);
}

TEST(OwnershipRulesTest, SequentialCallsNeverConflict) {
  EXPECT_TRUE(Check("fn rd(ref a: String) {}\n"
                    "fn wr(mut a: String) {}\n"
                    "fn rr(ref a: String, ref b: String) {}\n"
                    "fn f(x: String) {\n"
                    "  wr(x)\n"
                    "  wr(x)\n"
                    "  rd(x)\n"
                    "  wr(x)\n"
                    "  rr(x, x)\n"
                    "  println(x)\n"
                    "}\n")
                  .empty());
}

// ---- assignment through ref, escaping borrows

TEST(OwnershipRulesTest, AssigningThroughARefParameter) {
  const auto errors = Check(
      "fn bad(ref n: Int) { n = 1 }\n"
      "fn fine(mut n: Int, own m: Int) {\n"
      "  n = 1\n"
      "  m = 2\n"
      "  let k = 3\n"
      "  k = 4\n"
      "}\n");
  ASSERT_EQ(Codes(errors), Codes_{"E0248"});
  EXPECT_EQ(errors[0].spanned, "n = 1");
  EXPECT_NE(errors[0].message.find("cannot assign to `n` through immutable reference"),
            std::string::npos);
}

TEST(OwnershipRulesTest, ReturningABorrowedParameterEscapes) {
  const auto errors = Check(
      "fn r(ref s: String) -> String { return s }\n"
      "fn m(mut s: String) -> String { return s }\n"
      "fn o(own s: String) -> String { return s }\n"
      "fn len(ref s: String) -> Int { return s.length() }\n");
  ASSERT_EQ(Codes(errors), (Codes_{"E0241", "E0241"}));
  EXPECT_EQ(errors[0].spanned, "return s");
  EXPECT_NE(errors[0].message.find("reference to `s` cannot escape the current scope"),
            std::string::npos);
}

// ---- closures (docs/kodo.md §5.9)

TEST(OwnershipRulesTest, ClosureCapturesMoveNonCopyValues) {
  const auto errors = Check(
      "fn f() {\n"
      "  let s = \"a\"\n"
      "  let g = |x: Int| -> Int { s.length() + x }\n"
      "  println(s)\n"
      "}\n");
  ASSERT_EQ(Codes(errors), Codes_{"E0240"});
  EXPECT_EQ(errors[0].line, 4);
}

TEST(OwnershipRulesTest, CapturingAMovedValue) {
  const auto errors = Check(
      "fn twice() {\n"
      "  let s = \"a\"\n"
      "  let g = || { println(s) }\n"
      "  let h = || { println(s) }\n"
      "}\n"
      "fn after_move() {\n"
      "  let s = \"a\"\n"
      "  println(s)\n"
      "  let h = |x: Int| x + s.length()\n"
      "}\n");
  ASSERT_EQ(Codes(errors), (Codes_{"E0281", "E0281"}));
  EXPECT_EQ(errors[0].line, 4);
  EXPECT_EQ(errors[0].spanned.substr(0, 2), "||");
  EXPECT_NE(errors[0].message.find("closure captures `s` which was already moved"),
            std::string::npos);
  EXPECT_EQ(errors[1].line, 9);
}

TEST(OwnershipRulesTest, CopyCapturesAndParametersAreFine) {
  EXPECT_TRUE(Check("fn f(n: Int) {\n"
                    "  let g = |x: Int| -> Int { x + n }\n"
                    "  let h = |x: Int| -> Int { x + n }\n"
                    "  let s = \"a\"\n"
                    "  let k = |s: String| -> Int { s.length() }\n"
                    "  println(s)\n"
                    "  print_int(n)\n"
                    "}\n")
                  .empty());
}

// ---- spawn (docs/kodo.md §4.7, E0280)

TEST(OwnershipRulesTest, SpawnMayNotCaptureARefParameter) {
  const auto errors = Check(
      "fn bad(ref s: String) {\n"
      "  spawn {\n"
      "    println(s)\n"
      "  }\n"
      "}\n"
      "fn fine(mut m: String, own o: String) {\n"
      "  spawn {\n"
      "    println(m)\n"
      "    println(o)\n"
      "  }\n"
      "}\n");
  ASSERT_EQ(Codes(errors), Codes_{"E0280"});
  EXPECT_EQ(errors[0].line, 2);
  EXPECT_EQ(errors[0].spanned.substr(0, 5), "spawn");
  EXPECT_NE(errors[0].message.find("type `ref borrow` of variable `s` cannot be sent"),
            std::string::npos);
}

TEST(OwnershipRulesTest, OneErrorPerFunction) {
  const auto errors = Check(
      "fn f() {\n"
      "  let s = \"a\"\n"
      "  println(s)\n"
      "  println(s)\n"
      "  println(s)\n"
      "}\n");
  EXPECT_EQ(Codes(errors), Codes_{"E0240"});
}

TEST(OwnershipRulesTest, TheOptionTurnsTheRulesOff) {
  const std::string text =
      "module t {\nmeta { purpose: \"x\" }\nfn f() {\n  let s = \"a\"\n  println(s)\n"
      "  println(s)\n}\n}\n";
  auto source = SourceBuffer::Create(0, "t.ko", text);
  ASSERT_TRUE(source.ok());
  sema::CheckOptions options;
  options.ownership = false;
  auto checked = sema::CheckSource(*source, options);
  ASSERT_TRUE(checked.ok());
  EXPECT_TRUE(checked->diagnostics.empty());
}

}  // namespace
}  // namespace trove::kodo::ownership
