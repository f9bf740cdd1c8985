// Tests of fix-patch verification (verify_fixes.h): a patch whose result does not parse, or
// keeps its error, is withheld as a manual repair plan with the reason; a good one stays; the
// byte budget withholds rather than offering unverified patches.
#include "kodo/sema/verify_fixes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trove::kodo::sema {
namespace {

// `return totl` with `total` bound: E0201 whose patch renames `totl` to `total`.
const std::string kTypo =
    "module m {\n    meta { purpose: \"p\" }\n    fn main() -> Int {\n        let total = 1\n"
    "        return totl\n    }\n}\n";

SourceBuffer Source(const std::string& text) {
  Result<SourceBuffer> source = SourceBuffer::Create(0, "t.ko", text);
  EXPECT_TRUE(source.ok());
  return std::move(source).value();
}

std::vector<diag::Diagnostic> Unverified(const SourceBuffer& source, bool fail_fast = false) {
  Result<SourceCheck> check =
      CheckSource(source, CheckOptions{.fail_fast = fail_fast, .verify_fixes = false});
  EXPECT_TRUE(check.ok());
  return check->diagnostics;
}

TEST(VerifyFixesTest, KeepsAPatchThatParsesAndRemovesTheError) {
  const SourceBuffer source = Source(kTypo);
  std::vector<diag::Diagnostic> diags = Unverified(source);
  ASSERT_EQ(diags.size(), 1u);
  ASSERT_TRUE(diags[0].fix_patch.has_value());
  const diag::FixPatch before = *diags[0].fix_patch;
  VerifyFixes(source, false, diags, CheckOptions{}, {});
  ASSERT_TRUE(diags[0].fix_patch.has_value());
  EXPECT_EQ(*diags[0].fix_patch, before);
  EXPECT_FALSE(diags[0].fix_withheld);
  EXPECT_EQ(diags[0].fixability(), diag::Fixability::kAuto);
}

TEST(VerifyFixesTest, WithholdsAPatchWhoseResultDoesNotParse) {
  const SourceBuffer source = Source(kTypo);
  std::vector<diag::Diagnostic> diags = Unverified(source);
  ASSERT_EQ(diags.size(), 1u);
  diag::FixPatch bad = *diags[0].fix_patch;
  bad.replacement = "(total";  // an unclosed parenthesis
  diags[0].fix_patch = bad;
  VerifyFixes(source, false, diags, CheckOptions{}, {});
  const diag::Diagnostic& d = diags[0];
  EXPECT_FALSE(d.fix_patch.has_value());
  EXPECT_TRUE(d.fix_withheld);
  EXPECT_EQ(d.fixability(), diag::Fixability::kManual);
  ASSERT_FALSE(d.repair_plan.empty());
  ASSERT_EQ(d.repair_plan[0].patches.size(), 1u);
  EXPECT_EQ(d.repair_plan[0].patches[0], bad);
  EXPECT_NE(d.repair_plan[0].description.find(
                "not offered as an automatic fix because the patched file does not parse (E01"),
            std::string::npos)
      << d.repair_plan[0].description;
  // The old plan's other step (declare the name) is kept after it.
  ASSERT_EQ(d.repair_plan.size(), 2u);
  EXPECT_EQ(d.repair_plan[1].description, "declare `totl` before its use");
}

TEST(VerifyFixesTest, WithholdsAPatchThatLeavesTheError) {
  const SourceBuffer source = Source(kTypo);
  std::vector<diag::Diagnostic> diags = Unverified(source);
  ASSERT_EQ(diags.size(), 1u);
  diags[0].fix_patch->replacement = "totl ";  // parses, changes nothing that matters
  VerifyFixes(source, false, diags, CheckOptions{}, {});
  EXPECT_TRUE(diags[0].fix_withheld);
  EXPECT_NE(diags[0].repair_plan[0].description.find("the patched file still reports this error"),
            std::string::npos)
      << diags[0].repair_plan[0].description;
}

TEST(VerifyFixesTest, WithholdsAPatchOutOfBounds) {
  const SourceBuffer source = Source(kTypo);
  std::vector<diag::Diagnostic> diags = Unverified(source);
  diags[0].fix_patch->start_offset = source.size() + 5;
  diags[0].fix_patch->end_offset = source.size() + 5;
  VerifyFixes(source, false, diags, CheckOptions{}, {});
  EXPECT_TRUE(diags[0].fix_withheld);
  EXPECT_NE(diags[0].repair_plan[0].description.find("the patch does not apply"),
            std::string::npos);
}

// The bound: re-checking costs the patched file's size; past max_verify_bytes a patch is
// withheld, not offered unverified. Just enough budget verifies it.
TEST(VerifyFixesTest, BudgetCrossedWithholdsInsteadOfOfferingUnverified) {
  const SourceBuffer source = Source(kTypo);
  std::vector<diag::Diagnostic> diags = Unverified(source);
  const std::size_t patched_size = source.size() + 1;  // `totl` -> `total`
  std::vector<diag::Diagnostic> tight = diags;
  VerifyFixes(source, false, tight, CheckOptions{.max_verify_bytes = patched_size - 1}, {});
  EXPECT_TRUE(tight[0].fix_withheld);
  EXPECT_NE(tight[0].repair_plan[0].description.find("could not be verified"), std::string::npos);
  VerifyFixes(source, false, diags, CheckOptions{.max_verify_bytes = patched_size}, {});
  EXPECT_FALSE(diags[0].fix_withheld);
  EXPECT_TRUE(diags[0].fix_patch.has_value());
}

// Fail-fast mode (kodoc fix) compares against the collected errors of the unpatched file.
TEST(VerifyFixesTest, FailFastModeVerifiesTheFirstError) {
  const std::string text =
      "module m {\n    meta { purpose: \"p\" }\n    fn a() -> Int {\n        let total = 1\n"
      "        return totl\n    }\n    fn b() -> Int {\n        let zero = 0\n"
      "        return zer\n    }\n}\n";
  const SourceBuffer source = Source(text);
  Result<SourceCheck> check = CheckSource(source, CheckOptions{.fail_fast = true});
  ASSERT_TRUE(check.ok());
  ASSERT_EQ(check->diagnostics.size(), 1u);
  EXPECT_TRUE(check->diagnostics[0].fix_patch.has_value());
  EXPECT_FALSE(check->diagnostics[0].fix_withheld);
}

// A parse error's patch counts only if the patched file parses: the missing `}` at the end is
// appended there (upstream puts it at offset 0).
TEST(VerifyFixesTest, ParseErrorPatchIsKeptWhenTheFileThenParses) {
  const SourceBuffer source = Source(
      "module m {\n    meta { purpose: \"p\" }\n    fn main() {\n        let x = 1\n    }\n");
  Result<SourceCheck> check = CheckSource(source);
  ASSERT_TRUE(check.ok());
  ASSERT_EQ(check->phase, Phase::kParse);
  const diag::Diagnostic& d = check->diagnostics[0];
  EXPECT_EQ(d.code(), "E0101");
  ASSERT_TRUE(d.fix_patch.has_value())
      << (d.repair_plan.empty() ? "" : d.repair_plan[0].description);
  EXPECT_EQ(d.fix_patch->start_offset, source.size());
}

// Two parentheses and two braces missing: appending the one `)` the parser asks for still
// leaves a file that does not parse, so the patch is withheld; a caller never gets an automatic
// patch that leaves a parse error.
TEST(VerifyFixesTest, ParseErrorPatchIsWithheldWhenTheFileStillDoesNotParse) {
  const SourceBuffer source =
      Source("module m {\n    meta { purpose: \"p\" }\n    fn main() {\n        let x = (1 + (2\n");
  Result<SourceCheck> check = CheckSource(source);
  ASSERT_TRUE(check.ok());
  ASSERT_EQ(check->phase, Phase::kParse);
  EXPECT_FALSE(check->diagnostics[0].fix_patch.has_value());
  EXPECT_TRUE(check->diagnostics[0].fix_withheld) << check->diagnostics[0].message;
}

}  // namespace
}  // namespace trove::kodo::sema
