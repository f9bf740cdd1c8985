#include "base/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace trove::base {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kOk);
  EXPECT_EQ(status.message(), "");
  EXPECT_EQ(status.ToString(), "ok");
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(StatusTest, FactoriesSetCodeAndMessage) {
  const std::vector<std::pair<Status, StatusCode>> cases = {
      {Status::InvalidArgument("m"), StatusCode::kInvalidArgument},
      {Status::NotFound("m"), StatusCode::kNotFound},
      {Status::AlreadyExists("m"), StatusCode::kAlreadyExists},
      {Status::Malformed("m"), StatusCode::kMalformed},
      {Status::Unsupported("m"), StatusCode::kUnsupported},
      {Status::PermissionDenied("m"), StatusCode::kPermissionDenied},
      {Status::ResourceExhausted("m"), StatusCode::kResourceExhausted},
      {Status::Cancelled("m"), StatusCode::kCancelled},
      {Status::Io("m"), StatusCode::kIo},
      {Status::Internal("m"), StatusCode::kInternal},
      {Status::DeadlineExceeded("m"), StatusCode::kDeadlineExceeded},
      {Status::Unavailable("m"), StatusCode::kUnavailable},
  };
  for (const auto& [status, code] : cases) {
    EXPECT_FALSE(status.ok());
    EXPECT_EQ(status.code(), code);
    EXPECT_EQ(status.message(), "m");
    EXPECT_NE(StatusCodeName(code), "unknown");
  }
}

TEST(StatusTest, OkCodeWithMessageIsOk) {
  Status status(StatusCode::kOk, "ignored");
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.message(), "");
}

TEST(StatusTest, ToStringNamesTheCode) {
  EXPECT_EQ(Status::NotFound("open x: no such file").ToString(), "not found: open x: no such file");
  EXPECT_EQ(Status::Io("disk").ToString(), "io error: disk");
}

TEST(StatusTest, CopyAndMove) {
  Status a = Status::Malformed("bad");
  Status b(a);
  EXPECT_EQ(a, b);
  Status c;
  c = a;
  EXPECT_EQ(c, a);
  const Status& alias = c;
  c = alias;  // self-assignment keeps the value
  EXPECT_EQ(c.message(), "bad");
  Status d(std::move(b));
  EXPECT_EQ(d.code(), StatusCode::kMalformed);
  Status e;
  e = std::move(d);
  EXPECT_EQ(e.message(), "bad");
  // A copy is independent of its source.
  Status f = e.WithContext("outer");
  EXPECT_EQ(e.message(), "bad");
  EXPECT_EQ(f.message(), "outer: bad");
}

TEST(StatusTest, Equality) {
  EXPECT_EQ(Status(), Status::Ok());
  EXPECT_EQ(Status::Io("x"), Status::Io("x"));
  EXPECT_FALSE(Status::Io("x") == Status::Io("y"));
  EXPECT_FALSE(Status::Io("x") == Status::Internal("x"));
  EXPECT_FALSE(Status::Io("x") == Status::Ok());
}

TEST(StatusTest, WithContextReadsOutermostFirst) {
  Status inner = Status::Malformed("0x1f4: function body size: LEB128 runs past end");
  Status outer = inner.WithContext("code section").WithContext("sqlite3.wasm");
  EXPECT_EQ(outer.code(), StatusCode::kMalformed);
  EXPECT_EQ(outer.message(),
            "sqlite3.wasm: code section: 0x1f4: function body size: LEB128 runs past end");
  EXPECT_EQ(inner.message(), "0x1f4: function body size: LEB128 runs past end");
}

TEST(StatusTest, WithContextKeepsOkOk) {
  EXPECT_TRUE(Status::Ok().WithContext("anything").ok());
  Status ok;
  EXPECT_TRUE(ok.WithContext("anything").ok());
  EXPECT_EQ(ok.message(), "");
}

TEST(ResultTest, HoldsValue) {
  Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.has_value());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(r.value(), 42);
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.value_or(7), 42);
}

TEST(ResultTest, HoldsError) {
  Result<int> r = Status::NotFound("key 3");
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.error().message(), "key 3");
  EXPECT_EQ(r.value_or(7), 7);
}

TEST(ResultTest, OkStatusWithoutValueBecomesInternal) {
#ifdef NDEBUG
  Result<int> r = Status::Ok();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
#else
  GTEST_SKIP() << "asserts in debug builds";
#endif
}

TEST(ResultTest, ConvertsFromConstructibleValue) {
  Result<std::string> r = "text";
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "text");
  EXPECT_EQ(r->size(), 4u);
}

TEST(ResultTest, MoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  Result<std::unique_ptr<int>> moved = std::move(r);
  ASSERT_TRUE(moved.ok());
  std::unique_ptr<int> p = std::move(moved).value();
  EXPECT_EQ(*p, 5);
}

TEST(ResultTest, CopyAndAssign) {
  Result<std::string> a = std::string("a");
  Result<std::string> b = a;
  EXPECT_EQ(*b, "a");
  Result<std::string> c = Status::Io("x");
  c = a;
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, "a");
  c = Result<std::string>(Status::Io("y"));
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "y");
  b = std::move(c);
  EXPECT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), "y");
}

// Counts live objects, to show Result destroys what it holds exactly once.
struct Counted {
  explicit Counted(int* counter) : live(counter) { ++*live; }
  Counted(const Counted& other) : live(other.live) { ++*live; }
  Counted(Counted&& other) noexcept : live(other.live) { ++*live; }
  ~Counted() { --*live; }
  int* live;
};

TEST(ResultTest, DestroysValue) {
  int live = 0;
  {
    Result<Counted> r = Counted(&live);
    Result<Counted> copy = r;
    EXPECT_EQ(live, 2);
    copy = Status::Io("gone");
    EXPECT_EQ(live, 1);
  }
  EXPECT_EQ(live, 0);
}

Status FailIf(bool fail) {
  if (fail) return Status::Io("failed");
  return Status::Ok();
}

Result<int> ParsePositive(int x) {
  if (x <= 0) return Status::InvalidArgument("not positive");
  return x;
}

Status UsesReturnIfError(bool fail, int* reached) {
  RETURN_IF_ERROR(FailIf(fail));
  ++*reached;
  return Status::Ok();
}

Status ReturnIfErrorOnResult(int x, int* reached) {
  RETURN_IF_ERROR(ParsePositive(x));
  ++*reached;
  return Status::Ok();
}

Result<int> Doubled(int x) {
  ASSIGN_OR_RETURN(int v, ParsePositive(x));
  return v * 2;
}

Result<int> SumOfTwo(int a, int b) {
  ASSIGN_OR_RETURN(int x, ParsePositive(a));
  ASSIGN_OR_RETURN(int y, ParsePositive(b));
  return x + y;
}

Status AssignsExisting(int x, int* out) {
  int v = 0;
  ASSIGN_OR_RETURN(v, ParsePositive(x));
  *out = v;
  return Status::Ok();
}

Result<std::unique_ptr<int>> MakeBox(int x) {
  if (x < 0) return Status::InvalidArgument("negative");
  return std::make_unique<int>(x);
}

Result<int> Unbox(int x) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> box, MakeBox(x));
  return *box;
}

TEST(MacrosTest, ReturnIfError) {
  int reached = 0;
  EXPECT_TRUE(UsesReturnIfError(false, &reached).ok());
  EXPECT_EQ(reached, 1);
  Status s = UsesReturnIfError(true, &reached);
  EXPECT_EQ(s, Status::Io("failed"));
  EXPECT_EQ(reached, 1);

  EXPECT_TRUE(ReturnIfErrorOnResult(3, &reached).ok());
  EXPECT_EQ(reached, 2);
  EXPECT_EQ(ReturnIfErrorOnResult(0, &reached).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(reached, 2);
}

TEST(MacrosTest, ReturnIfErrorWithLvalue) {
  auto run = [](const Status& s) -> Status {
    RETURN_IF_ERROR(s);
    return Status::Ok();
  };
  Status failed = Status::Cancelled("stop");
  EXPECT_EQ(run(failed), failed);
  EXPECT_EQ(failed.message(), "stop");  // copied, not moved from
  EXPECT_TRUE(run(Status::Ok()).ok());
}

TEST(MacrosTest, AssignOrReturn) {
  EXPECT_EQ(*Doubled(4), 8);
  EXPECT_EQ(Doubled(-1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*SumOfTwo(1, 2), 3);
  EXPECT_EQ(SumOfTwo(1, 0).status().message(), "not positive");
  int out = 0;
  EXPECT_TRUE(AssignsExisting(5, &out).ok());
  EXPECT_EQ(out, 5);
  EXPECT_FALSE(AssignsExisting(0, &out).ok());
  EXPECT_EQ(out, 5);
}

TEST(MacrosTest, AssignOrReturnMoveOnly) {
  EXPECT_EQ(*Unbox(9), 9);
  EXPECT_EQ(Unbox(-1).status().message(), "negative");
}

TEST(MacrosTest, ContextAddedOnTheWayOut) {
  auto inner = []() -> Result<int> { return Status::Malformed("0x10: bad byte"); };
  auto outer = [&]() -> Status {
    Result<int> r = inner();
    RETURN_IF_ERROR(r.status().WithContext("module.wasm"));
    return Status::Ok();
  };
  EXPECT_EQ(outer().message(), "module.wasm: 0x10: bad byte");
}

TEST(CheckDeathTest, AbortsWithFileAndLine) {
  EXPECT_DEATH(TROVE_CHECK(1 + 1 == 3), "status_test.cc:[0-9]+: CHECK failed: 1 \\+ 1 == 3");
}

}  // namespace
}  // namespace trove::base
