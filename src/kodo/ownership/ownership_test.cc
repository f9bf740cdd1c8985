// The state machine of docs/kodo.md §7.3 driven directly, as the checker drives it (ownership.h).
#include "kodo/ownership/ownership.h"

#include <gtest/gtest.h>

namespace trove::kodo::ownership {
namespace {

using ast::Ownership;
using ast::Span;

constexpr Span At(std::uint32_t start) { return Span{start, start + 1}; }

TEST(TrackerTest, ParamsStartByQualifier) {
  Tracker t(0);
  t.BeginFunction();
  t.DeclareParam("a", Ownership::kOwned);
  t.DeclareParam("b", Ownership::kRef);
  t.DeclareParam("c", Ownership::kMut);
  EXPECT_EQ(t.StateOf("a"), State::kOwned);
  EXPECT_EQ(t.StateOf("b"), State::kBorrowed);
  EXPECT_EQ(t.StateOf("c"), State::kMutBorrowed);
  EXPECT_EQ(t.StateOf("d"), std::nullopt);
}

TEST(TrackerTest, OwnArgumentMovesNonCopyOnly) {
  Tracker t(0);
  t.BeginFunction();
  t.DeclareParam("s", Ownership::kOwned);
  t.DeclareParam("n", Ownership::kOwned);
  EXPECT_FALSE(t.Argument("n", Ownership::kOwned, /*copy=*/true, At(10)));
  EXPECT_EQ(t.StateOf("n"), State::kOwned);
  EXPECT_FALSE(t.Argument("s", Ownership::kOwned, /*copy=*/false, At(20)));
  EXPECT_EQ(t.StateOf("s"), State::kMoved);
  auto d = t.Use("s", At(30));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code(), "E0240");
  EXPECT_EQ(d->message,
            "cannot use `s` after move (moved at line 20) at Span { start: 30, end: 31 }");
  EXPECT_FALSE(t.Use("n", At(40)));
}

TEST(TrackerTest, BlockRestoresTheStateItSaved) {
  Tracker t(0);
  t.BeginFunction();
  t.DeclareParam("s", Ownership::kOwned);
  const std::size_t outer = t.EnterBlock();
  const std::size_t inner = t.EnterBlock();
  EXPECT_FALSE(t.Argument("s", Ownership::kOwned, false, At(5)));
  EXPECT_FALSE(t.Let("fresh", std::nullopt, false, At(7)));
  EXPECT_EQ(t.StateOf("s"), State::kMoved);
  t.ExitBlock(inner);
  EXPECT_EQ(t.StateOf("s"), State::kOwned);
  EXPECT_EQ(t.StateOf("fresh"), std::nullopt);
  EXPECT_FALSE(t.Argument("s", Ownership::kOwned, false, At(9)));
  EXPECT_EQ(t.StateOf("s"), State::kMoved);
  t.ExitBlock(outer);
}

TEST(TrackerTest, LetRevivesAndMoves) {
  Tracker t(0);
  t.BeginFunction();
  t.EnterBlock();
  EXPECT_FALSE(t.Let("a", std::nullopt, false, At(1)));
  EXPECT_FALSE(t.Let("b", std::string_view("a"), false, At(2)));
  EXPECT_EQ(t.StateOf("a"), State::kMoved);
  EXPECT_FALSE(t.Let("a", std::nullopt, false, At(3)));  // a new binding is Owned again
  EXPECT_EQ(t.StateOf("a"), State::kOwned);
  EXPECT_FALSE(t.Let("c", std::string_view("a"), /*copy=*/true, At(4)));
  EXPECT_EQ(t.StateOf("a"), State::kOwned);
}

TEST(TrackerTest, BorrowConflictsLiveInOneArgumentList) {
  Tracker t(0);
  t.BeginFunction();
  t.DeclareParam("x", Ownership::kOwned);
  auto call = t.BeginCall();
  EXPECT_FALSE(t.Argument("x", Ownership::kRef, false, At(1)));
  EXPECT_FALSE(t.Argument("x", Ownership::kRef, false, At(2)));  // two shared borrows are fine
  auto d = t.Argument("x", Ownership::kMut, false, At(3));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code(), "E0245");
  t.EndCall(call);
  // Sequential calls never conflict.
  call = t.BeginCall();
  EXPECT_FALSE(t.Argument("x", Ownership::kMut, false, At(4)));
  d = t.Argument("x", Ownership::kMut, false, At(5));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code(), "E0247");
  d = t.Argument("x", Ownership::kRef, false, At(6));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code(), "E0246");
  d = t.Argument("x", Ownership::kOwned, false, At(7));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code(), "E0242");
  t.EndCall(call);
  EXPECT_FALSE(t.Argument("x", Ownership::kOwned, false, At(8)));
}

TEST(TrackerTest, NestedCallKeepsTheOuterBorrow) {
  Tracker t(0);
  t.BeginFunction();
  t.DeclareParam("x", Ownership::kOwned);
  const auto outer = t.BeginCall();
  EXPECT_FALSE(t.Argument("x", Ownership::kRef, false, At(1)));
  const auto inner = t.BeginCall();
  EXPECT_FALSE(t.Argument("x", Ownership::kRef, false, At(2)));
  t.EndCall(inner);
  auto d = t.Argument("x", Ownership::kMut, false, At(3));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code(), "E0245");
  t.EndCall(outer);
}

TEST(TrackerTest, AssignReturnAndCaptures) {
  Tracker t(0);
  t.BeginFunction();
  t.DeclareParam("r", Ownership::kRef);
  t.DeclareParam("m", Ownership::kMut);
  t.DeclareParam("o", Ownership::kOwned);
  EXPECT_EQ(t.Assign("r", At(1))->code(), "E0248");
  EXPECT_FALSE(t.Assign("m", At(1)));
  EXPECT_FALSE(t.Assign("o", At(1)));
  EXPECT_EQ(t.Return("r", At(2))->code(), "E0241");
  EXPECT_EQ(t.Return("m", At(2))->code(), "E0241");
  EXPECT_FALSE(t.Return("o", At(2)));
  EXPECT_FALSE(t.Capture("o", Span{160, 170}));
  t.MoveCaptures({"o"}, Span{160, 170});
  auto d = t.Capture("o", Span{200, 210});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code(), "E0281");
  // Upstream's "line" of a capture's move: the closure's offset / 80.
  EXPECT_NE(d->message.find("(at line 2)"), std::string::npos) << d->message;
  EXPECT_EQ(t.Assign("o", At(3))->code(), "E0240");
}

TEST(FreeVariablesTest, FirstUseOrderWithoutParamsAndLocals) {
  ast::Expr body;
  body.kind = ast::ExprKind::kBinaryOp;
  ast::Expr a;
  a.kind = ast::ExprKind::kIdent;
  a.text = "x";
  ast::Expr b;
  b.kind = ast::ExprKind::kIdent;
  b.text = "captured";
  body.operands.push_back(std::move(a));
  body.operands.push_back(std::move(b));
  const auto free = FreeVariables(body, {"x"});
  ASSERT_EQ(free.size(), 1u);
  EXPECT_EQ(free[0].first, "captured");
}

}  // namespace
}  // namespace trove::kodo::ownership
