#include "mcp/policy/audit.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/hash.h"
#include "base/testing/temp_dir.h"

namespace trove::mcp::policy {
namespace {

using Json = nlohmann::json;
using base::testing::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

AuditEvent ToolCall(std::string session, std::string tool, AuditStatus status, int duration) {
  return AuditEvent{.type = AuditType::kToolCall,
                    .status = status,
                    .session_id = std::move(session),
                    .principal = "alice",
                    .token_id = "9f86d081884c7d65",
                    .request_id = "7",
                    .operation = std::move(tool),
                    .duration_ms = duration,
                    .error_code = status == AuditStatus::kSuccess ? "" : "INTERNAL_ERROR",
                    .arguments = DigestArguments(R"({"query":"secret words"})")};
}

// Writes `n` tool calls to a fresh log at `path`.
void WriteLog(const std::string& path, base::Env& clock, int n) {
  auto log = std::move(AuditLog::Open(path, clock).value());
  for (int i = 0; i < n; ++i) {
    log->Record(ToolCall("s" + std::to_string(i % 3), "query", AuditStatus::kSuccess, i));
  }
  ASSERT_TRUE(log->Close().ok());
}

TEST(AuditLogTest, RecordsHaveTheFieldsAndTheChain) {
  TempDir dir("trove_audit");
  base::MemEnv clock;  // 2024-01-01T00:00:00Z
  const std::string path = dir.Abs("audit.jsonl");
  auto log = std::move(AuditLog::Open(path, clock).value());
  log->Record(ToolCall("sess-1", "query", AuditStatus::kSuccess, 12));
  clock.AdvanceMicros(1'250'000);
  log->Record(AuditEvent{.type = AuditType::kAuthorization,
                         .status = AuditStatus::kDenied,
                         .principal = "bob",
                         .operation = "bootstrap",
                         .error_code = "PERMISSION_DENIED",
                         .details = {{"consentRequired", "true"}}});
  ASSERT_TRUE(log->Flush().ok());
  const std::string head = log->head();
  ASSERT_TRUE(log->Close().ok());

  const std::vector<std::string> lines = Lines(ReadAll(path));
  ASSERT_EQ(lines.size(), 2u);
  const Json a = Json::parse(lines[0]);
  EXPECT_EQ(a["id"], 1);
  EXPECT_EQ(a["timestamp"], "2024-01-01T00:00:00.000Z");
  EXPECT_EQ(a["type"], "tool_call");
  EXPECT_EQ(a["sessionId"], "sess-1");
  EXPECT_EQ(a["principal"], "alice");
  EXPECT_EQ(a["tokenId"], "9f86d081884c");  // cut to 12 hex digits
  EXPECT_EQ(a["requestId"], "7");
  EXPECT_EQ(a["operation"], "query");
  EXPECT_EQ(a["status"], "success");
  EXPECT_EQ(a["durationMs"], 12);
  EXPECT_EQ(a["arguments"]["size"], 24);
  EXPECT_EQ(a["arguments"]["sha256"], base::Sha256Hex(R"({"query":"secret words"})"));
  EXPECT_EQ(a["prev"], std::string(kAuditGenesis));
  EXPECT_EQ(lines[0].find("secret words"), std::string::npos);  // values only as a digest
  EXPECT_FALSE(a.contains("errorCode"));

  const Json b = Json::parse(lines[1]);
  EXPECT_EQ(b["id"], 2);
  EXPECT_EQ(b["timestamp"], "2024-01-01T00:00:01.250Z");
  EXPECT_EQ(b["type"], "authorization");
  EXPECT_EQ(b["status"], "denied");
  EXPECT_EQ(b["errorCode"], "PERMISSION_DENIED");
  EXPECT_EQ(b["details"]["consentRequired"], "true");
  EXPECT_FALSE(b.contains("sessionId"));
  EXPECT_EQ(b["prev"], base::Sha256Hex(lines[0]));
  EXPECT_EQ(head, base::Sha256Hex(lines[1]));

  Result<AuditVerifyReport> report = VerifyAuditLog(path);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->records, 2u);
  EXPECT_EQ(report->head, head);
}

TEST(AuditLogTest, ReopeningContinuesTheChain) {
  TempDir dir("trove_audit");
  base::MemEnv clock;
  const std::string path = dir.Abs("audit.jsonl");
  WriteLog(path, clock, 3);
  WriteLog(path, clock, 2);
  Result<AuditVerifyReport> report = VerifyAuditLog(path);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok()) << report->first_break->reason;
  EXPECT_EQ(report->records, 5u);
  EXPECT_EQ(Json::parse(Lines(ReadAll(path)).back())["id"], 5);
}

TEST(AuditLogTest, ManyThreadsKeepAValidChain) {
  TempDir dir("trove_audit");
  base::MemEnv clock;
  const std::string path = dir.Abs("audit.jsonl");
  auto log = std::move(AuditLog::Open(path, clock, {.max_queue = 8}).value());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < 200; ++i) {
        log->Record(ToolCall("t" + std::to_string(t), "query", AuditStatus::kSuccess, i));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(log->Close().ok());
  Result<AuditVerifyReport> report = VerifyAuditLog(path);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->records, 800u);
}

TEST(AuditLogTest, WriteFailureIsSurfaced) {
  base::MemEnv clock;
  std::vector<Status> seen;
  std::mutex mu;
  auto log = std::move(AuditLog::Open("/dev/full", clock,
                                      {.on_error =
                                           [&](const Status& s) {
                                             std::lock_guard lock(mu);
                                             seen.push_back(s);
                                           }})
                           .value());
  EXPECT_TRUE(log->health().ok());
  log->Record(ToolCall("s", "query", AuditStatus::kSuccess, 1));
  Status flushed = log->Flush();
  EXPECT_FALSE(flushed.ok());
  EXPECT_EQ(flushed.code(), base::StatusCode::kIo);
  EXPECT_NE(flushed.message().find("audit records lost"), std::string::npos);
  EXPECT_FALSE(log->health().ok());
  EXPECT_FALSE(log->Close().ok());
  std::lock_guard lock(mu);
  EXPECT_EQ(seen.size(), 1u);
}

TEST(AuditLogTest, OpenFailsOnAnUnwritablePath) {
  base::MemEnv clock;
  Result<std::unique_ptr<AuditLog>> log = AuditLog::Open("/nonexistent-dir/a.jsonl", clock);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), base::StatusCode::kIo);
}

TEST(AuditLogTest, RecordAfterCloseMakesHealthBad) {
  TempDir dir("trove_audit");
  base::MemEnv clock;
  auto log = std::move(AuditLog::Open(dir.Abs("a.jsonl"), clock).value());
  ASSERT_TRUE(log->Close().ok());
  log->Record(ToolCall("s", "q", AuditStatus::kSuccess, 1));
  EXPECT_FALSE(log->health().ok());
}

TEST(AuditVerifyTest, FindsEveryKindOfTampering) {
  TempDir dir("trove_audit");
  base::MemEnv clock;
  const std::string good_path = dir.Abs("good.jsonl");
  WriteLog(good_path, clock, 5);
  const std::vector<std::string> good = Lines(ReadAll(good_path));
  ASSERT_EQ(good.size(), 5u);

  struct Case {
    const char* what;
    std::string text;
    std::uint64_t line;
    std::string reason_part;
  };
  std::vector<std::string> edited = good;
  edited[1].replace(edited[1].find("\"alice\""), 7, "\"mallo\"");
  std::vector<std::string> removed = good;
  removed.erase(removed.begin() + 2);
  std::vector<std::string> swapped = good;
  std::swap(swapped[1], swapped[2]);
  std::vector<std::string> first_removed(good.begin() + 1, good.end());
  std::vector<std::string> duplicated = good;
  duplicated.insert(duplicated.begin() + 3, good[2]);
  // Removing a record and re-linking the next one's prev still leaves an id gap.
  std::vector<std::string> relinked = removed;
  {
    Json j = Json::parse(relinked[2]);
    j["prev"] = base::Sha256Hex(relinked[1]);
    relinked[2] = j.dump();
    for (std::size_t i = 3; i < relinked.size(); ++i) {
      Json k = Json::parse(relinked[i]);
      k["prev"] = base::Sha256Hex(relinked[i - 1]);
      relinked[i] = k.dump();
    }
  }
  const std::vector<Case> cases = {
      {"edited", JoinLines(edited), 3, "prev does not match"},
      {"removed", JoinLines(removed), 3, "prev does not match"},
      {"swapped", JoinLines(swapped), 2, "prev does not match"},
      {"first removed", JoinLines(first_removed), 1, "genesis"},
      {"duplicated", JoinLines(duplicated), 4, "prev does not match"},
      {"relinked", JoinLines(relinked), 3, "missing record: expected id 3, found 4"},
      {"cut short", JoinLines(good).substr(0, JoinLines(good).size() - 10), 5, "partial record"},
      {"garbage", JoinLines(good) + "hello\n", 6, "not a JSON object"},
  };
  for (const Case& c : cases) {
    const std::string path = dir.Abs("case.jsonl");
    WriteAll(path, c.text);
    Result<AuditVerifyReport> report = VerifyAuditLog(path);
    ASSERT_TRUE(report.ok()) << c.what;
    ASSERT_FALSE(report->ok()) << c.what;
    EXPECT_EQ(report->first_break->line, c.line) << c.what << ": " << report->first_break->reason;
    EXPECT_NE(report->first_break->reason.find(c.reason_part), std::string::npos)
        << c.what << ": " << report->first_break->reason;
    EXPECT_EQ(report->records, c.line - 1) << c.what;
  }
  EXPECT_FALSE(VerifyAuditLog(dir.Abs("missing.jsonl")).ok());
  WriteAll(dir.Abs("empty.jsonl"), "");
  EXPECT_TRUE(VerifyAuditLog(dir.Abs("empty.jsonl"))->ok());
}

TEST(AuditLogTest, OpenAfterACrashEndsTheCutLine) {
  TempDir dir("trove_audit");
  base::MemEnv clock;
  const std::string path = dir.Abs("audit.jsonl");
  WriteLog(path, clock, 3);
  std::string text = ReadAll(path);
  WriteAll(path, text.substr(0, text.size() - 20));  // the third record cut short
  WriteLog(path, clock, 2);
  const std::vector<std::string> lines = Lines(ReadAll(path));
  ASSERT_EQ(lines.size(), 6u);  // 2 whole, the cut one, the system record, 2 new
  const Json system = Json::parse(lines[3]);
  EXPECT_EQ(system["type"], "system");
  EXPECT_EQ(system["id"], 4);
  EXPECT_EQ(system["prev"], base::Sha256Hex(lines[2]));
  EXPECT_EQ(Json::parse(lines[5])["id"], 6);
  Result<AuditVerifyReport> report = VerifyAuditLog(path);
  ASSERT_TRUE(report.ok());
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->first_break->line, 3u);  // the cut record stays visible
}

TEST(AuditStatsTest, CountsAsLibrarianSpecifies) {
  TempDir dir("trove_audit");
  base::MemEnv clock;
  const std::string path = dir.Abs("audit.jsonl");
  {
    auto log = std::move(AuditLog::Open(path, clock).value());
    log->Record(ToolCall("a", "query", AuditStatus::kSuccess, 10));
    log->Record(ToolCall("a", "query", AuditStatus::kFailure, 20));
    log->Record(ToolCall("b", "bootstrap", AuditStatus::kSuccess, 30));
    log->Record(AuditEvent{.type = AuditType::kResourceRead, .session_id = "c"});
    log->Record(AuditEvent{
        .type = AuditType::kAuthorization, .status = AuditStatus::kDenied, .duration_ms = 1000});
    log->Record(AuditEvent{.type = AuditType::kSession, .session_id = "b"});
    ASSERT_TRUE(log->Close().ok());
  }
  Result<AuditStatsReport> stats = AuditStats(path);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->total_events, 6u);
  EXPECT_EQ(stats->by_type["tool_call"], 3u);
  EXPECT_EQ(stats->by_type["resource_read"], 1u);
  EXPECT_EQ(stats->by_status["success"], 4u);
  EXPECT_EQ(stats->by_status["failure"], 1u);
  EXPECT_EQ(stats->by_status["denied"], 1u);
  EXPECT_EQ(stats->unique_sessions, 3u);
  EXPECT_DOUBLE_EQ(stats->avg_tool_duration_ms, 20.0);  // only tool_call durations
  EXPECT_DOUBLE_EQ(stats->error_rate, 16.7);            // 100 * 1 / 6, one decimal
  const Json j = Json::parse(AuditStatsJson(*stats));
  EXPECT_EQ(j["totalEvents"], 6);
  EXPECT_EQ(j["byType"]["tool_call"], 3);
  EXPECT_EQ(j["uniqueSessions"], 3);
  EXPECT_DOUBLE_EQ(j["errorRate"].get<double>(), 16.7);
}

TEST(AuditStatsTest, ErrorRateExampleFromTheSpec) {
  TempDir dir("trove_audit");
  std::string text;
  for (int i = 0; i < 1234; ++i) {
    text += Json{{"type", "tool_call"}, {"status", i < 100 ? "failure" : "success"}}.dump() + "\n";
  }
  text += "not json\n";
  WriteAll(dir.Abs("a.jsonl"), text);
  Result<AuditStatsReport> stats = AuditStats(dir.Abs("a.jsonl"));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->total_events, 1234u);
  EXPECT_DOUBLE_EQ(stats->error_rate, 8.1);
  EXPECT_EQ(stats->unreadable_lines, 1u);
}

TEST(AuditQueryTest, FiltersNewestFirstWithALimit) {
  TempDir dir("trove_audit");
  base::MemEnv clock;  // 2024-01-01T00:00:00Z
  const std::string path = dir.Abs("audit.jsonl");
  {
    auto log = std::move(AuditLog::Open(path, clock).value());
    for (int i = 0; i < 10; ++i) {
      log->Record(ToolCall(i % 2 == 0 ? "even" : "odd", i < 5 ? "query" : "bootstrap",
                           i == 7 ? AuditStatus::kFailure : AuditStatus::kSuccess, i));
      clock.AdvanceMicros(1'000'000);
    }
    log->Record(AuditEvent{.type = AuditType::kSession, .session_id = "even"});
    ASSERT_TRUE(log->Close().ok());
  }
  const auto ids = [&](const AuditQuery& q) {
    std::vector<int> out;
    Result<std::vector<std::string>> lines = QueryAuditLog(path, q);
    EXPECT_TRUE(lines.ok());
    for (const std::string& line : *lines) {
      out.push_back(Json::parse(line)["id"].get<int>());
    }
    return out;
  };
  EXPECT_EQ(ids({.limit = 3}), (std::vector<int>{11, 10, 9}));
  EXPECT_EQ(ids({.type = AuditType::kToolCall, .session_id = "even"}),
            (std::vector<int>{9, 7, 5, 3, 1}));
  EXPECT_EQ(ids({.operation = "bootstrap", .status = AuditStatus::kFailure}),
            (std::vector<int>{8}));
  const std::int64_t start = base::MemEnv::kDefaultStartMicros;
  EXPECT_EQ(ids({.type = AuditType::kToolCall,
                 .since_micros = start + 2'000'000,
                 .until_micros = start + 5'000'000}),
            (std::vector<int>{5, 4, 3}));
  EXPECT_EQ(ids({.principal = "nobody"}), std::vector<int>{});
  EXPECT_EQ(ids({.limit = 0}), std::vector<int>{});
  EXPECT_EQ(QueryAuditLog(path, {.limit = 5000})->size(), 11u);
  EXPECT_FALSE(QueryAuditLog(dir.Abs("missing"), {}).ok());
}

TEST(AuditTest, FormatRfc3339Millis) {
  EXPECT_EQ(FormatRfc3339Millis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339Millis(1'772'439'342'250'999), "2026-03-02T08:15:42.250Z");
}

}  // namespace
}  // namespace trove::mcp::policy
