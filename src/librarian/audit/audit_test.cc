// run_audit on a fixture workspace that each test bootstraps and then edits.
#include "librarian/audit/audit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "librarian/index/bootstrap.h"
#include "librarian/ledger/ledger.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::audit {
namespace {

using ::testing::HasSubstr;

class AuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("a.py", "def alpha(x):\n    \"\"\"Adds one.\"\"\"\n    return x + 1\n");
    dir_.Write("lib/util.py", "def helper():\n    return 'h'\n");
    dir_.Write("notes.txt", "plain words\n");
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

  AuditReport Run(std::string_view type, AuditOptions options = {}) {
    auto r = RunAudit(store_.get(), root_, type, options, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : AuditReport{};
  }

  static const Finding* FindMessage(const AuditReport& r, std::string_view part) {
    for (const Finding& f : r.findings) {
      if (f.message.find(part) != std::string::npos) return &f;
    }
    return nullptr;
  }

  testing::TempDir dir_;
  std::string root_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(AuditTest, UnknownTypeIsInvalid) {
  EXPECT_EQ(RunAudit(nullptr, "/", "speed", {}, nullptr).status().code(),
            base::StatusCode::kInvalidArgument);
}

TEST_F(AuditTest, NeverBootstrappedIsCritical) {
  AuditReport r = Run("full");
  EXPECT_EQ(r.audit_type, "full");
  ASSERT_EQ(r.summary.critical, 1u);
  EXPECT_EQ(r.findings[0].severity, "critical");
  EXPECT_THAT(r.findings[0].message, HasSubstr("never been bootstrapped"));
}

TEST_F(AuditTest, FreshIndexHasNoWarnings) {
  Bootstrap();
  AuditReport r = Run("full");
  EXPECT_EQ(r.summary.critical, 0u);
  EXPECT_EQ(r.summary.warnings, 0u) << ReportJson(r);
  EXPECT_EQ(r.summary.total_findings, r.findings.size());
  // Always: the uncalibrated-confidence disclosure, the documented share, the text files.
  EXPECT_NE(FindMessage(r, "uncalibrated ranking signals"), nullptr);
  const Finding* doc = FindMessage(r, "functions are documented");
  ASSERT_NE(doc, nullptr);
  EXPECT_THAT(doc->message, HasSubstr("1 of 2"));
  EXPECT_EQ(doc->category, "coverage");
}

TEST_F(AuditTest, FreshnessSeesChangedDeletedAndAddedFiles) {
  Bootstrap();
  dir_.Write("a.py", "def alpha(x):\n    return x + 2\n");
  std::filesystem::remove(dir_.Abs("lib/util.py"));
  dir_.Write("new.py", "def gamma():\n    return 3\n");
  AuditReport r = Run("freshness");
  const Finding* changed = FindMessage(r, "changed since indexing");
  ASSERT_NE(changed, nullptr) << ReportJson(r);
  EXPECT_EQ(changed->severity, "warning");
  EXPECT_THAT(changed->message, HasSubstr("a.py"));
  const Finding* deleted = FindMessage(r, "were deleted");
  ASSERT_NE(deleted, nullptr);
  EXPECT_THAT(deleted->message, HasSubstr("lib/util.py"));
  const Finding* added = FindMessage(r, "were added");
  ASSERT_NE(added, nullptr);
  EXPECT_EQ(added->severity, "info");
  EXPECT_THAT(added->message, HasSubstr("new.py"));
  // Warnings sort before info.
  EXPECT_EQ(r.findings.front().severity, "warning");
  // The confidence audit counts the packs whose triggers changed.
  AuditReport c = Run("confidence");
  const Finding* packs = FindMessage(c, "changed invalidation triggers");
  ASSERT_NE(packs, nullptr) << ReportJson(c);
  EXPECT_EQ(packs->severity, "warning");
}

TEST_F(AuditTest, FreshnessBudgetSamples) {
  Bootstrap();
  dir_.Write("a.py", "def alpha(x):\n    return x + 2\n");
  AuditOptions o;
  o.freshness_budget = std::chrono::milliseconds(0);
  AuditReport r = Run("freshness", o);
  EXPECT_NE(FindMessage(r, "freshness was sampled"), nullptr) << ReportJson(r);
  EXPECT_NE(FindMessage(r, "changed since indexing"), nullptr);
}

TEST_F(AuditTest, OldBootstrapIsAWarning) {
  Bootstrap();
  AuditOptions o;
  o.now = std::chrono::system_clock::now() + std::chrono::hours(24 * 30);
  AuditReport r = Run("freshness", o);
  const Finding* old = FindMessage(r, "days old");
  ASSERT_NE(old, nullptr) << ReportJson(r);
  EXPECT_EQ(old->severity, "warning");
}

TEST_F(AuditTest, EmptyWorkspaceCoverageIsCritical) {
  std::filesystem::remove(dir_.Abs("a.py"));
  std::filesystem::remove(dir_.Abs("lib/util.py"));
  Bootstrap();
  AuditReport r = Run("coverage");
  EXPECT_NE(FindMessage(r, "no functions are indexed"), nullptr) << ReportJson(r);
  EXPECT_GE(r.summary.critical, 1u);
}

TEST_F(AuditTest, StoredAuditRoundTripsAndIsLedgered) {
  Bootstrap();
  AuditReport r = Run("full");
  auto id = StoreAudit(*store_, r, "test");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto latest = LatestAudit(*store_);
  ASSERT_TRUE(latest.ok());
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ(ReportJson(**latest), ReportJson(r));
  auto list = ListAudits(*store_, 10);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].summary.total_findings, r.summary.total_findings);
  ledger::Filter f;
  f.kind = ledger::EntryKind::kToolCall;
  auto entries = ledger::Query(store_->db(), f);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].activity, "run_audit");
  EXPECT_EQ((*entries)[0].payload["auditId"], *id);
  EXPECT_EQ(ParseReportJson("[]").status().code(), base::StatusCode::kMalformed);
}

}  // namespace
}  // namespace trove::librarian::audit
