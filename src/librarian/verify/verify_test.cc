// verify_claim's defeaters on a fixture workspace that each test bootstraps and then edits: a
// changed line, an edit elsewhere in the file, a deleted file, a function moved to another
// file, a renamed function, a changed signature, a module claim.
#include "librarian/verify/verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "base/env.h"
#include "librarian/index/bootstrap.h"
#include "librarian/query/query.h"
#include "librarian/store/manifest.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::verify {
namespace {

using ::testing::HasSubstr;

constexpr const char* kA =
    "def alpha(x):\n"
    "    y = x + 1\n"
    "    return y\n"
    "\n"
    "\n"
    "def beta():\n"
    "    return 2\n";

class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("a.py", kA);
    dir_.Write("lib/util.py", "def helper():\n    return 'h'\n");
    Bootstrap();
  }

  void Bootstrap() {
    store_.reset();
    index::BootstrapOptions o;
    o.workspace = dir_.path();
    o.ctags_program = "";
    o.workers = 1;
    base::Cancellation cancel;
    auto r = index::Bootstrap(o, cancel, base::Progress());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    root_ = r->workspace;
    auto st = store::Store::Open(index::StorePathFor(root_));
    ASSERT_TRUE(st.ok());
    store_ = std::move(st).value();
  }

  Verification Verify(const std::string& claim_id) {
    auto v = verifier_.Verify(*store_, root_, claim_id, nullptr);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : Verification{};
  }

  static const DefeaterResult& Check(const Verification& v, const std::string& type) {
    for (const DefeaterResult& d : v.results) {
      if (d.type == type) return d;
    }
    ADD_FAILURE() << "no check " << type;
    static const DefeaterResult none;
    return none;
  }

  static std::string Fn(const std::string& target) {
    return store::PackIdFor("function_context", target);
  }

  testing::TempDir dir_;
  std::string root_;
  base::PosixEnv env_;
  Verifier verifier_{env_, VerifyOptions{.ctags_program = ""}};
  std::unique_ptr<store::Store> store_;
};

TEST_F(VerifyTest, PackIdsAreTheQueryEnginesIds) {
  EXPECT_EQ(store::PackIdFor("function_context", "fn:a.py::alpha"),
            query::PackId(query::PackType::kFunctionContext, "fn:a.py::alpha"));
  EXPECT_EQ(store::PackIdFor("module_context", "mod:a.py"),
            query::PackId(query::PackType::kModuleContext, "mod:a.py"));
}

TEST_F(VerifyTest, UnchangedTreeActivatesNothing) {
  const Verification v = Verify(Fn("fn:a.py::alpha"));
  ASSERT_TRUE(v.found);
  EXPECT_TRUE(v.verified);
  EXPECT_TRUE(ActiveDefeaters(v).empty());
  EXPECT_EQ(v.results.size(), 6u);
  EXPECT_DOUBLE_EQ(v.confidence, 0.9);  // a clean tree-sitter span
  EXPECT_EQ(v.claim_confidence.type, "deterministic");
  EXPECT_EQ(v.claim_confidence.value, 1.0);
  EXPECT_EQ(v.evidence.file, "a.py");
  EXPECT_EQ(v.evidence.start_line, 1u);
  EXPECT_EQ(v.evidence.end_line, 3u);
}

TEST_F(VerifyTest, UnknownClaimIsNotFound) {
  const Verification v = Verify("pk_0123456789abcdef");
  EXPECT_FALSE(v.found);
  EXPECT_FALSE(v.verified);
  auto bad = verifier_.Verify(*store_, root_, "", nullptr);
  EXPECT_EQ(bad.status().code(), base::StatusCode::kInvalidArgument);
  auto long_id = verifier_.Verify(*store_, root_, std::string(300, 'x'), nullptr);
  EXPECT_EQ(long_id.status().code(), base::StatusCode::kInvalidArgument);
}

TEST_F(VerifyTest, ChangedLineInTheSpanIsAFullCodeChangeWithADiff) {
  std::string edited = kA;
  edited.replace(edited.find("x + 1"), 5, "x * 2");
  dir_.Write("a.py", edited);
  const Verification v = Verify(Fn("fn:a.py::alpha"));
  const DefeaterResult& cc = Check(v, "code_change");
  EXPECT_TRUE(cc.activated);
  EXPECT_EQ(cc.severity, "full");
  EXPECT_EQ(cc.defeater_class, "undercutting");
  EXPECT_THAT(cc.reason, HasSubstr("1 line removed, 1 added"));
  EXPECT_THAT(cc.reason, HasSubstr("`y = x + 1` -> `y = x * 2`"));
  EXPECT_FALSE(v.verified);
  EXPECT_NEAR(v.confidence, 0.4, 1e-9);  // 0.9 - 0.5
  EXPECT_EQ(v.claim_confidence.value, 0.0);
  EXPECT_FALSE(Check(v, "symbol_removed").activated);
  // beta's span is untouched: a warning only, still verified.
  const Verification b = Verify(Fn("fn:a.py::beta"));
  EXPECT_TRUE(b.verified);
  EXPECT_EQ(Check(b, "code_change").severity, "warning");
  EXPECT_TRUE(Check(b, "code_change").activated);
  EXPECT_FALSE(Check(b, "symbol_moved").activated);
  EXPECT_NEAR(b.confidence, 0.85, 1e-9);
}

TEST_F(VerifyTest, LinesInsertedAboveMoveTheSpanInTheSameFile) {
  dir_.Write("a.py", std::string("import os\n\n\n") + kA);
  const Verification v = Verify(Fn("fn:a.py::beta"));
  EXPECT_TRUE(v.verified);
  const DefeaterResult& m = Check(v, "symbol_moved");
  EXPECT_TRUE(m.activated);
  EXPECT_EQ(m.severity, "warning");
  ASSERT_TRUE(m.new_location.has_value());
  EXPECT_EQ(m.new_location->file, "a.py");
  EXPECT_EQ(m.new_location->start_line, 9u);
  EXPECT_EQ(m.new_location->end_line, 10u);
  // The cited lines no longer hold the span, though its bytes moved intact.
  EXPECT_EQ(v.claim_confidence.value, 0.0);
}

TEST_F(VerifyTest, DeletedFileIsAFullDefeater) {
  std::filesystem::remove(dir_.Abs("lib/util.py"));
  const Verification v = Verify(Fn("fn:lib/util.py::helper"));
  const DefeaterResult& d = Check(v, "file_deleted");
  EXPECT_TRUE(d.activated);
  EXPECT_EQ(d.severity, "full");
  EXPECT_THAT(d.reason, HasSubstr("lib/util.py no longer exists"));
  EXPECT_FALSE(v.verified);
  EXPECT_FALSE(Check(v, "symbol_moved").activated);
  // The module claim of the same file too.
  const Verification m = Verify(store::PackIdFor("module_context", "mod:lib/util.py"));
  EXPECT_TRUE(Check(m, "file_deleted").activated);
}

// A function moved to another file and re-indexed: the claim (from the earlier run's manifest)
// is found, its file is gone, and the store's symbol table gives the new location.
TEST_F(VerifyTest, FunctionMovedToAnotherFileIsFoundAgain) {
  std::filesystem::remove(dir_.Abs("lib/util.py"));
  dir_.Write("lib/moved.py", "\n\ndef helper():\n    return 'h'\n");
  Bootstrap();
  const Verification v = Verify(Fn("fn:lib/util.py::helper"));
  ASSERT_TRUE(v.found);
  EXPECT_TRUE(Check(v, "file_deleted").activated);
  const DefeaterResult& m = Check(v, "symbol_moved");
  EXPECT_TRUE(m.activated);
  EXPECT_EQ(m.severity, "partial");
  ASSERT_TRUE(m.new_location.has_value());
  EXPECT_EQ(m.new_location->file, "lib/moved.py");
  EXPECT_EQ(m.new_location->start_line, 3u);
  EXPECT_THAT(m.reason, HasSubstr("the same body of helper"));
  EXPECT_NEAR(v.confidence, 0.2, 1e-9);  // 0.9 - 0.5 - 0.2
}

TEST_F(VerifyTest, RenamedFunctionIsRemovedWithItsNewLocation) {
  std::string edited = kA;
  edited.replace(edited.find("def alpha"), 9, "def gamma");
  dir_.Write("a.py", edited);
  const Verification v = Verify(Fn("fn:a.py::alpha"));
  const DefeaterResult& r = Check(v, "symbol_removed");
  EXPECT_TRUE(r.activated);
  EXPECT_EQ(r.severity, "full");
  EXPECT_THAT(r.reason, HasSubstr("renamed: the same body is now `gamma`"));
  ASSERT_TRUE(r.new_location.has_value());
  EXPECT_EQ(r.new_location->start_line, 1u);
  EXPECT_EQ(r.new_location->end_line, 3u);
  EXPECT_FALSE(v.verified);
}

TEST_F(VerifyTest, ChangedSignatureIsAContradiction) {
  std::string edited = kA;
  edited.replace(edited.find("alpha(x)"), 8, "alpha(x, z=0)");
  dir_.Write("a.py", edited);
  const Verification v = Verify(Fn("fn:a.py::alpha"));
  const DefeaterResult& c = Check(v, "contradiction");
  EXPECT_TRUE(c.activated);
  EXPECT_EQ(c.defeater_class, "rebutting");
  EXPECT_THAT(c.reason, HasSubstr("alpha(x, z=0)"));
  EXPECT_NEAR(v.confidence, 0.1, 1e-9);  // 0.9 + max(-0.5 - 0.5, -0.8)
}

TEST_F(VerifyTest, ModuleClaimCountsSymbolChanges) {
  dir_.Write("a.py", std::string(kA) + "\n\ndef delta():\n    return 4\n");
  const Verification v = Verify(store::PackIdFor("module_context", "mod:a.py"));
  ASSERT_TRUE(v.found);
  EXPECT_EQ(v.evidence.pack_type, "module_context");
  const DefeaterResult& cc = Check(v, "code_change");
  EXPECT_TRUE(cc.activated);
  EXPECT_THAT(cc.reason, HasSubstr("0 symbols changed, 1 added, 0 removed, 2 unchanged"));
  EXPECT_NEAR(v.confidence, 0.3, 1e-9);  // module 0.8 - 0.5
}

TEST(DiffSummaryTest, CountsAndFirstDifference) {
  EXPECT_EQ(DiffSummary("a\nb\nc\n", "a\nB\nc\nd\n"),
            "1 line removed, 2 added; first difference at span line 2: `b` -> `B`");
  EXPECT_EQ(DiffSummary("a\nb\n", "a\n"),
            "1 line removed, 0 added; first difference at span "
            "line 2: removed `b`");
  EXPECT_THAT(DiffSummary("a\n", "a\n"), HasSubstr("no line differs"));
}

TEST(VerifyCacheTest, ServesWithinTheTtlForTheSameGenerationAndFile) {
  auto now = std::chrono::steady_clock::time_point();
  VerifyCache cache(std::chrono::seconds(60), 10, [&now] { return now; });
  Verification v;
  v.claim_id = "pk_1";
  cache.Put("ws:pk_1", "g1", "10:1", v);
  auto hit = cache.Get("ws:pk_1", "g1", "10:1");
  ASSERT_TRUE(hit.has_value());
  EXPECT_TRUE(hit->cached);
  EXPECT_FALSE(cache.Get("ws:pk_1", "g2", "10:1").has_value());  // index changed
  cache.Put("ws:pk_1", "g1", "10:1", v);
  EXPECT_FALSE(cache.Get("ws:pk_1", "g1", "11:2").has_value());  // file changed
  cache.Put("ws:pk_1", "g1", "10:1", v);
  now += std::chrono::seconds(61);
  EXPECT_FALSE(cache.Get("ws:pk_1", "g1", "10:1").has_value());  // expired
}

}  // namespace
}  // namespace trove::librarian::verify
