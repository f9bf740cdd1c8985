#include "warden/agents/pipeline.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "warden/agents/offline_backend.h"
#include "warden/agents/testing/fake_store.h"

namespace trove::warden::agents {
namespace {

using testing::FakeAgentStore;

std::string Id(std::uint32_t index) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "w1:%06x%026d", index * 4096 + 0xabc, 0);
  return buf;
}

FunctionFacts F(std::uint32_t index, std::vector<std::uint32_t> callees = {},
                std::vector<std::string> strings = {}) {
  FunctionFacts f;
  f.func_index = index;
  f.stable_id = Id(index);
  f.type_signature = "(i32) -> i32";
  f.defined_callees = std::move(callees);
  f.referenced_strings = std::move(strings);
  f.instruction_mnemonics = {"local.get", "i32.load"};
  if (!f.defined_callees.empty()) f.instruction_mnemonics.push_back("call");
  return f;
}

// A backend whose replies a test scripts per function index; it records what it was shown.
class ScriptedBackend final : public Backend {
 public:
  using Script = std::function<Result<BackendReply>(const FunctionFacts&)>;
  explicit ScriptedBackend(Script script) : script_(std::move(script)) {}

  std::string_view name() const override { return "scripted"; }
  std::optional<std::string> model() const override { return "script-1"; }
  Result<BackendReply> Propose(const FunctionFacts& facts, std::span<const CalleeName> callees,
                               base::Cancellation&) override {
    calls.push_back(facts.func_index);
    seen_callees[facts.func_index].assign(callees.begin(), callees.end());
    return script_(facts);
  }

  std::vector<std::uint32_t> calls;
  std::map<std::uint32_t, std::vector<CalleeName>> seen_callees;

 private:
  Script script_;
};

BackendReply Propose(std::string name, double confidence, std::vector<std::string> cited = {}) {
  BackendReply reply;
  reply.proposal = Proposal{.name = std::move(name),
                            .summary = "scripted",
                            .confidence = confidence,
                            .cited_strings = std::move(cited)};
  return reply;
}

void ExpectInvariant(const RunSummary& s) {
  EXPECT_EQ(s.proposed, s.written + s.rejected_by_verifier + s.rejected_by_economy);
}

PassOptions Options() {
  PassOptions options;
  options.version_id = 1;
  options.pass_id = "pass-1";
  return options;
}

TEST(AgentPassTest, OfflineNamesEveryUnnamedFunctionBottomUp) {
  // 1 -> 2 -> 3; 4 stands alone with a string.
  FakeAgentStore store({F(1, {2}), F(2, {3}), F(3), F(4, {}, {"config file missing"})});
  OfflineBackend backend;
  base::Cancellation cancel;
  std::vector<double> progress;
  Result<RunSummary> s = RunAgentPass(
      store, backend, Options(), cancel,
      base::Progress([&](double done, double, const std::string&) { progress.push_back(done); }));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->backend, "offline");
  EXPECT_EQ(s->considered, 4);
  EXPECT_EQ(s->proposed, 4);
  EXPECT_EQ(s->written, 4);
  EXPECT_EQ(s->skipped_existing, 0);
  ExpectInvariant(*s);
  EXPECT_EQ(progress, (std::vector<double>{1, 2, 3, 4}));
  // Bottom-up: the leaves (3, 4) before 2 before 1.
  ASSERT_EQ(s->details.size(), 4u);
  EXPECT_EQ(s->details[0].func_index, 3u);
  EXPECT_EQ(s->details[1].func_index, 4u);
  EXPECT_EQ(s->details[2].func_index, 2u);
  EXPECT_EQ(s->details[3].func_index, 1u);
  EXPECT_EQ(s->details[1].name, "str_config_file_missing_004abc");
  for (const RunDetail& d : s->details) EXPECT_EQ(d.outcome, DetailOutcome::kWritten);
  // Every attempt went through the gate as agent:offline with evidence details.
  ASSERT_EQ(store.attempts().size(), 4u);
  for (const auto& attempt : store.attempts()) {
    EXPECT_EQ(attempt.write.actor, "agent:offline");
    EXPECT_NE(attempt.write.details_json.find(R"("pass_id":"pass-1")"), std::string::npos);
    EXPECT_NE(attempt.write.details_json.find(R"("channel":"cli")"), std::string::npos);
  }
  EXPECT_EQ(store.GetSymbol(Id(4))->provenance, "agent");
}

TEST(AgentPassTest, OfflinePassIsByteIdenticalAcrossRuns) {
  auto functions = [] {
    return std::vector<FunctionFacts>{F(1, {2}), F(2, {3}), F(3), F(4, {}, {"hello world"}),
                                      F(5, {5, 1})};
  };
  std::string first_json;
  std::vector<std::string> first_writes;
  for (int run = 0; run < 3; ++run) {
    FakeAgentStore store(functions());
    OfflineBackend backend;
    base::Cancellation cancel;
    Result<RunSummary> s = RunAgentPass(store, backend, Options(), cancel);
    ASSERT_TRUE(s.ok());
    std::string json = RunSummaryToJson(*s);
    std::vector<std::string> writes;
    for (const auto& a : store.attempts()) {
      writes.push_back(a.write.stable_id + "|" + a.write.name + "|" + a.write.summary + "|" +
                       std::to_string(a.write.confidence) + "|" + a.write.details_json);
    }
    if (run == 0) {
      first_json = json;
      first_writes = writes;
    } else {
      EXPECT_EQ(json, first_json);
      EXPECT_EQ(writes, first_writes);
    }
  }
}

TEST(AgentPassTest, CallersSeeTheNamesTheirCalleesJustGot) {
  FakeAgentStore store({F(1, {2, 3}), F(2), F(3)});
  store.SetSymbol(Id(3),
                  SymbolState{.name = "known_helper", .provenance = "oracle", .confidence = 0.9});
  ScriptedBackend backend([](const FunctionFacts& f) {
    return Result<BackendReply>(Propose("fn_" + std::to_string(f.func_index), 0.4));
  });
  base::Cancellation cancel;
  ASSERT_TRUE(RunAgentPass(store, backend, Options(), cancel).ok());
  EXPECT_EQ(backend.calls, (std::vector<std::uint32_t>{2, 1}));  // 3 skipped (0.9 >= 0.5)
  const std::vector<CalleeName>& seen = backend.seen_callees[1];
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].name, "fn_2");
  EXPECT_EQ(seen[1].name, "known_helper");
}

TEST(AgentPassTest, SkipsLockedAndConfidentSymbols) {
  FakeAgentStore store({F(1), F(2), F(3), F(4)});
  store.SetSymbol(
      Id(1),
      SymbolState{.name = "human_name", .provenance = "human", .confidence = 1.0, .locked = true});
  store.SetSymbol(Id(2),
                  SymbolState{.name = "oracle_name", .provenance = "oracle", .confidence = 0.5});
  store.SetSymbol(Id(3),
                  SymbolState{.name = "weak_agent", .provenance = "agent", .confidence = 0.3});
  ScriptedBackend backend(
      [](const FunctionFacts&) { return Result<BackendReply>(Propose("better_name", 0.45)); });
  base::Cancellation cancel;
  Result<RunSummary> s = RunAgentPass(store, backend, Options(), cancel);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(backend.calls, (std::vector<std::uint32_t>{3, 4}));
  EXPECT_EQ(s->considered, 4);
  EXPECT_EQ(s->skipped_existing, 2);
  EXPECT_EQ(s->written, 2);
  ExpectInvariant(*s);
  EXPECT_EQ(store.GetSymbol(Id(1))->name, "human_name");
}

TEST(AgentPassTest, AllVisitsConfidentButNeverLockedAndTheEconomyDecides) {
  FakeAgentStore store({F(1), F(2), F(3)});
  store.SetSymbol(
      Id(1),
      SymbolState{.name = "human_name", .provenance = "human", .confidence = 1.0, .locked = true});
  store.SetSymbol(Id(2),
                  SymbolState{.name = "oracle_name", .provenance = "oracle", .confidence = 0.9});
  store.SetSymbol(Id(3),
                  SymbolState{.name = "weak_oracle", .provenance = "oracle", .confidence = 0.6});
  ScriptedBackend backend(
      [](const FunctionFacts&) { return Result<BackendReply>(Propose("agent_name", 0.7)); });
  base::Cancellation cancel;
  PassOptions options = Options();
  options.only_unconfident = false;
  Result<RunSummary> s = RunAgentPass(store, backend, options, cancel);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(backend.calls, (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(s->skipped_existing, 1);
  EXPECT_EQ(s->proposed, 2);
  EXPECT_EQ(s->rejected_by_economy, 1);  // 0.7 does not beat the oracle's 0.9
  EXPECT_EQ(s->written, 1);              // but beats 0.6
  ExpectInvariant(*s);
  EXPECT_EQ(store.GetSymbol(Id(2))->name, "oracle_name");
  EXPECT_EQ(store.GetSymbol(Id(3))->name, "agent_name");
  ASSERT_EQ(s->details.size(), 2u);
  EXPECT_EQ(s->details[0].outcome, DetailOutcome::kEconomyReject);
  EXPECT_EQ(s->details[0].reason.rfind("rejected:", 0), 0u) << s->details[0].reason;
}

TEST(AgentPassTest, VerifierBlocksInventedCitationsBeforeTheGate) {
  FakeAgentStore store({F(1, {}, {"real string"}), F(2, {}, {"real string"})});
  ScriptedBackend backend([](const FunctionFacts& f) {
    if (f.func_index == 1) {
      return Result<BackendReply>(Propose("cites_fake", 0.4, {"invented string"}));
    }
    return Result<BackendReply>(Propose("cites_real", 0.4, {"real string"}));
  });
  base::Cancellation cancel;
  Result<RunSummary> s = RunAgentPass(store, backend, Options(), cancel);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->proposed, 2);
  EXPECT_EQ(s->rejected_by_verifier, 1);
  EXPECT_EQ(s->written, 1);
  ExpectInvariant(*s);
  ASSERT_EQ(store.attempts().size(), 1u);  // the rejected one never reached the gate
  EXPECT_EQ(store.attempts()[0].write.name, "cites_real");
  EXPECT_EQ(s->details[0].outcome, DetailOutcome::kVerifierReject);
  EXPECT_NE(s->details[0].reason.find("cited string"), std::string::npos);
}

TEST(AgentPassTest, LimitCapsBackendCalls) {
  FakeAgentStore store({F(1), F(2), F(3), F(4), F(5)});
  store.SetSymbol(
      Id(1), SymbolState{.name = "locked", .provenance = "human", .confidence = 1, .locked = true});
  ScriptedBackend backend(
      [](const FunctionFacts&) { return Result<BackendReply>(Propose("some_name", 0.3)); });
  base::Cancellation cancel;
  PassOptions options = Options();
  options.limit = 2;
  Result<RunSummary> s = RunAgentPass(store, backend, options, cancel);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(backend.calls.size(), 2u);
  EXPECT_EQ(s->considered, 3);  // the skipped one costs no call
  EXPECT_EQ(s->skipped_existing, 1);
  EXPECT_EQ(s->written, 2);

  FakeAgentStore empty_store({F(1)});
  options.limit = 0;
  Result<RunSummary> none = RunAgentPass(empty_store, backend, options, cancel);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->considered, 0);
  EXPECT_EQ(backend.calls.size(), 2u);
}

TEST(AgentPassTest, DryRunWritesNothingButReportsDecisions) {
  FakeAgentStore store({F(1), F(2)});
  store.SetSymbol(Id(2),
                  SymbolState{.name = "oracle_name", .provenance = "oracle", .confidence = 0.45});
  ScriptedBackend backend(
      [](const FunctionFacts&) { return Result<BackendReply>(Propose("agent_name", 0.4)); });
  base::Cancellation cancel;
  PassOptions options = Options();
  options.dry_run = true;
  Result<RunSummary> s = RunAgentPass(store, backend, options, cancel);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(store.attempts().empty());
  EXPECT_FALSE(store.GetSymbol(Id(1)).has_value());
  EXPECT_EQ(store.GetSymbol(Id(2))->name, "oracle_name");
  EXPECT_EQ(s->written, 1);
  EXPECT_EQ(s->rejected_by_economy, 1);
  ExpectInvariant(*s);
  for (const RunDetail& d : s->details) {
    EXPECT_EQ(d.reason.rfind("dry run, nothing written: ", 0), 0u) << d.reason;
  }
}

TEST(AgentPassTest, CancellationStopsBetweenFunctions) {
  FakeAgentStore store({F(1), F(2), F(3)});
  base::Cancellation cancel;
  ScriptedBackend backend([&cancel](const FunctionFacts&) {
    cancel.Cancel();  // arrives while the first function is being proposed
    return Result<BackendReply>(Propose("first_name", 0.3));
  });
  Result<RunSummary> s = RunAgentPass(store, backend, Options(), cancel);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), base::StatusCode::kCancelled);
  EXPECT_EQ(backend.calls.size(), 1u);
  EXPECT_EQ(store.attempts().size(), 1u);  // the finished function stays written
}

TEST(AgentPassTest, BackendErrorsAndMalformedAnswersAreDetailsAuthEndsThePass) {
  FakeAgentStore store({F(1), F(2), F(3), F(4)});
  ScriptedBackend backend([](const FunctionFacts& f) -> Result<BackendReply> {
    switch (f.func_index) {
      case 1:
        return Status::DeadlineExceeded("scripted: request timed out after 10 ms");
      case 2: {
        BackendReply reply;
        reply.note = "malformed model output: not valid JSON";
        return reply;
      }
      case 3:
        return BackendReply{};  // a clean abstention leaves no detail
      default:
        return Propose("fine_name", 0.4);
    }
  });
  base::Cancellation cancel;
  Result<RunSummary> s = RunAgentPass(store, backend, Options(), cancel);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->considered, 4);
  EXPECT_EQ(s->proposed, 1);
  EXPECT_EQ(s->written, 1);
  ExpectInvariant(*s);
  ASSERT_EQ(s->details.size(), 3u);
  EXPECT_EQ(s->details[0].outcome, DetailOutcome::kError);
  EXPECT_NE(s->details[0].reason.find("timed out"), std::string::npos);
  EXPECT_EQ(s->details[1].outcome, DetailOutcome::kError);
  EXPECT_EQ(s->details[1].reason, "abstained: malformed model output: not valid JSON");
  EXPECT_FALSE(s->details[1].name.has_value());

  FakeAgentStore store2({F(1), F(2)});
  ScriptedBackend denied([](const FunctionFacts&) -> Result<BackendReply> {
    return Status::PermissionDenied("scripted: authentication failed (HTTP 401)");
  });
  Result<RunSummary> aborted = RunAgentPass(store2, denied, Options(), cancel);
  ASSERT_FALSE(aborted.ok());
  EXPECT_EQ(aborted.status().code(), base::StatusCode::kPermissionDenied);
  EXPECT_EQ(denied.calls.size(), 1u);
}

TEST(AgentPassTest, UnknownVersionIsNotFound) {
  FakeAgentStore store({F(1)});
  OfflineBackend backend;
  base::Cancellation cancel;
  PassOptions options = Options();
  options.version_id = 7;
  EXPECT_EQ(RunAgentPass(store, backend, options, cancel).status().code(),
            base::StatusCode::kNotFound);
}

TEST(RunSummaryToJsonTest, FieldsInSpecOrder) {
  RunSummary s;
  s.backend = "offline";
  s.considered = 3;
  s.proposed = 2;
  s.written = 1;
  s.rejected_by_verifier = 1;
  s.skipped_existing = 1;
  s.details.push_back(RunDetail{.func_index = 4,
                                .stable_id = "w1:ab",
                                .outcome = DetailOutcome::kVerifierReject,
                                .name = "x",
                                .confidence = 0.25,
                                .reason = "rejected by verifier: name is shorter than 2"});
  s.details.push_back(RunDetail{
      .func_index = 5, .stable_id = "w1:cd", .outcome = DetailOutcome::kError, .reason = "boom"});
  EXPECT_EQ(RunSummaryToJson(s),
            R"({"backend":"offline","considered":3,"proposed":2,"written":1,)"
            R"("rejected_by_verifier":1,"rejected_by_economy":0,"skipped_existing":1,)"
            R"("details":[{"func_index":4,"stable_id":"w1:ab","outcome":"verifier_reject",)"
            R"("name":"x","confidence":0.25,"reason":"rejected by verifier: name is shorter )"
            R"(than 2"},{"func_index":5,"stable_id":"w1:cd","outcome":"error","name":null,)"
            R"("confidence":null,"reason":"boom"}]})");
}

}  // namespace
}  // namespace trove::warden::agents
