#include "warden/agents/offline_backend.h"

#include <gtest/gtest.h>

#include "warden/agents/verifier.h"

namespace trove::warden::agents {
namespace {

FunctionFacts Facts(std::uint32_t index, std::vector<std::string> mnemonics) {
  FunctionFacts f;
  f.func_index = index;
  f.stable_id = "w1:3f9c2a7788990011aabbccddeeff0011";
  f.type_signature = "(i32) -> i32";
  f.instruction_mnemonics = std::move(mnemonics);
  return f;
}

TEST(StableIdHex6Test, TakesTheBaseDigits) {
  EXPECT_EQ(StableIdHex6("w1:3f9c2a7788990011aabbccddeeff0011"), "3f9c2a");
  EXPECT_EQ(StableIdHex6("w1:abcdef0011223344aabbccddeeff0011/t1:0011223344556677"), "abcdef");
  // No hex base: still 6 deterministic hex digits.
  std::string fallback = StableIdHex6("weird");
  EXPECT_EQ(fallback.size(), 6u);
  EXPECT_EQ(fallback, StableIdHex6("weird"));
  EXPECT_NE(fallback, StableIdHex6("other"));
}

TEST(SlugOfStringTest, FirstWordsLowerCased) {
  EXPECT_EQ(SlugOfString("Malloc failed: %s"), "malloc_failed");
  EXPECT_EQ(SlugOfString("error: %s at line %d in file"), "error_at_line_in");
  EXPECT_EQ(SlugOfString("%d\n"), "");
  EXPECT_EQ(SlugOfString("!!"), "");
  EXPECT_LE(SlugOfString("supercalifragilisticexpialidocious_and_more words").size(), 32u);
}

TEST(OfflineBackendTest, ReferencedStringWins) {
  FunctionFacts f = Facts(7, {"i32.const", "call"});
  f.referenced_strings = {"%d", "Malloc failed: %s", "other string"};
  f.call_targets = {"env.abort"};
  Proposal p = OfflineProposal(f, {});
  EXPECT_EQ(p.name, "str_malloc_failed_3f9c2a");
  EXPECT_DOUBLE_EQ(p.confidence, kOfflineGroundedConfidence);
  EXPECT_EQ(p.cited_strings, std::vector<std::string>{"Malloc failed: %s"});
  EXPECT_FALSE(p.type_signature.has_value());
}

TEST(OfflineBackendTest, SingleForwardedImport) {
  FunctionFacts f = Facts(7, {"local.get", "call", "drop"});
  f.call_targets = {"wasi_snapshot_preview1.fd_write"};
  f.referenced_strings = {"%%"};  // no slug: not evidence
  Proposal p = OfflineProposal(f, {});
  EXPECT_EQ(p.name, "wrap_fd_write_3f9c2a");
  EXPECT_DOUBLE_EQ(p.confidence, kOfflineGroundedConfidence);
  EXPECT_TRUE(p.cited_strings.empty());
}

TEST(OfflineBackendTest, TwoImportsOrAnIndirectCallAreNotAForward) {
  FunctionFacts f = Facts(7, {"call", "call"});
  f.call_targets = {"env.a", "env.b"};
  EXPECT_EQ(OfflineProposal(f, {}).name, "sub_3f9c2a");
  EXPECT_DOUBLE_EQ(OfflineProposal(f, {}).confidence, kOfflineShapeConfidence);
  f.call_targets = {"env.a", "<indirect>"};
  EXPECT_EQ(OfflineProposal(f, {}).name, "sub_3f9c2a");
}

TEST(OfflineBackendTest, ShapesOfLeaves) {
  EXPECT_EQ(OfflineProposal(Facts(1, {"local.get", "i32.load"}), {}).name, "get_3f9c2a");
  EXPECT_EQ(OfflineProposal(Facts(1, {"local.get", "local.get", "i64.store"}), {}).name,
            "set_3f9c2a");
  EXPECT_EQ(OfflineProposal(Facts(1, {"i32.const"}), {}).name, "const_3f9c2a");
  EXPECT_EQ(OfflineProposal(Facts(1, {"f64.const", "return"}), {}).name, "const_3f9c2a");
  // A load and a store, two loads, no constant: nothing recognisable.
  EXPECT_EQ(OfflineProposal(Facts(1, {"i32.load", "i32.store"}), {}).name, "sub_3f9c2a");
  EXPECT_EQ(OfflineProposal(Facts(1, {"i32.load", "i32.load8_u"}), {}).name, "sub_3f9c2a");
  EXPECT_EQ(OfflineProposal(Facts(1, {"nop"}), {}).name, "sub_3f9c2a");
  EXPECT_DOUBLE_EQ(OfflineProposal(Facts(1, {"i32.load"}), {}).confidence, kOfflineShapeConfidence);
}

TEST(OfflineBackendTest, CallsMakeAFunctionNoLeaf) {
  FunctionFacts f = Facts(1, {"i32.load", "call"});
  f.defined_callees = {3};
  EXPECT_EQ(OfflineProposal(f, {}).name, "sub_3f9c2a");
  FunctionFacts g = Facts(1, {"i32.load", "call_indirect"});
  EXPECT_EQ(OfflineProposal(g, {}).name, "sub_3f9c2a");
}

TEST(OfflineBackendTest, SummaryCarriesCallContextWithoutQuotes) {
  FunctionFacts f = Facts(1, {"call", "call"});
  f.defined_callees = {3, 4};
  f.export_names = {"my\"export"};
  std::vector<CalleeName> callees = {{3, "helper_one"}, {4, "helper_two"}};
  Proposal p = OfflineProposal(f, callees);
  EXPECT_NE(p.summary.find("calls helper_one, helper_two"), std::string::npos) << p.summary;
  EXPECT_NE(p.summary.find("exported as my'export"), std::string::npos) << p.summary;
  EXPECT_EQ(p.summary.find('"'), std::string::npos);
}

TEST(OfflineBackendTest, DeterministicAndAlwaysVerified) {
  std::vector<FunctionFacts> all = {Facts(1, {"i32.const"}), Facts(2, {"i32.load"}),
                                    Facts(3, {"call"}), Facts(4, {"local.get", "i32.store"}),
                                    Facts(5, {"block", "br_if", "end"})};
  all[2].call_targets = {"env.emscripten_memcpy_big"};
  all[4].referenced_strings = {"unexpected \"quoted\" token", "x"};
  std::vector<CalleeName> callees = {{9, "named_callee"}};
  for (const FunctionFacts& f : all) {
    OfflineBackend first;
    OfflineBackend second;
    base::Cancellation cancel;
    Result<BackendReply> a = first.Propose(f, callees, cancel);
    Result<BackendReply> b = second.Propose(f, callees, cancel);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_TRUE(a->proposal && b->proposal);  // never abstains
    EXPECT_EQ(a->proposal->name, b->proposal->name);
    EXPECT_EQ(a->proposal->summary, b->proposal->summary);
    EXPECT_EQ(a->proposal->confidence, b->proposal->confidence);
    EXPECT_EQ(a->proposal->cited_strings, b->proposal->cited_strings);
    EXPECT_LT(a->proposal->confidence, 0.5);
    Verdict verdict = VerifyProposal(f, *a->proposal);
    EXPECT_TRUE(verdict.ok) << a->proposal->name << ": " << verdict.Reason();
  }
}

TEST(OfflineBackendTest, HonoursCancellation) {
  OfflineBackend backend;
  base::Cancellation cancel;
  cancel.Cancel();
  Result<BackendReply> reply = backend.Propose(Facts(1, {}), {}, cancel);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), base::StatusCode::kCancelled);
}

}  // namespace
}  // namespace trove::warden::agents
