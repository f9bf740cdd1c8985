#include "mcp/policy/audit_cli.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/testing/temp_dir.h"
#include "mcp/policy/audit.h"

namespace trove::mcp::policy {
namespace {

using base::testing::TempDir;

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun Audit(std::vector<std::string> args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunAuditCommand(args, out, err);
  return CliRun{code, out.str(), err.str()};
}

class AuditCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Abs("audit.jsonl");
    auto log = std::move(AuditLog::Open(path_, clock_).value());
    for (int i = 0; i < 4; ++i) {
      log->Record(AuditEvent{.type = AuditType::kToolCall,
                             .status = i == 0 ? AuditStatus::kFailure : AuditStatus::kSuccess,
                             .session_id = "s",
                             .operation = "query",
                             .duration_ms = 10});
    }
    ASSERT_TRUE(log->Close().ok());
  }

  TempDir dir_{"trove_audit_cli"};
  base::MemEnv clock_;
  std::string path_;
};

TEST_F(AuditCliTest, VerifyOk) {
  CliRun r = Audit({"verify", path_});
  EXPECT_EQ(r.code, kAuditExitOk) << r.err;
  EXPECT_NE(r.out.find("ok, 4 records"), std::string::npos) << r.out;
  r = Audit({"verify", path_, "--json"});
  EXPECT_EQ(r.code, kAuditExitOk);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["records"], 4);
}

TEST_F(AuditCliTest, VerifyBroken) {
  std::ifstream in(path_);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  s.replace(s.find("query"), 5, "QUERY");  // edit the first record
  std::ofstream(path_, std::ios::trunc) << s;
  CliRun r = Audit({"verify", path_});
  EXPECT_EQ(r.code, kAuditExitBroken);
  EXPECT_NE(r.out.find(":2: prev does not match"), std::string::npos) << r.out;
  r = Audit({"--json", "verify", path_});
  EXPECT_EQ(r.code, kAuditExitBroken);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["line"], 2);
}

TEST_F(AuditCliTest, Stats) {
  CliRun r = Audit({"stats", path_, "--json"});
  EXPECT_EQ(r.code, kAuditExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["totalEvents"], 4);
  EXPECT_DOUBLE_EQ(j["errorRate"].get<double>(), 25.0);
  r = Audit({"stats", path_});
  EXPECT_EQ(r.code, kAuditExitOk);
  EXPECT_NE(r.out.find("total events       4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error rate         25.0 %"), std::string::npos) << r.out;
}

TEST_F(AuditCliTest, Usage) {
  EXPECT_EQ(Audit({}).code, kAuditExitUsage);
  EXPECT_EQ(Audit({"verify"}).code, kAuditExitUsage);
  EXPECT_EQ(Audit({"check", path_}).code, kAuditExitUsage);
  EXPECT_EQ(Audit({"verify", path_, "extra"}).code, kAuditExitUsage);
  EXPECT_EQ(Audit({"verify", path_, "--yaml"}).code, kAuditExitUsage);
  const CliRun missing = Audit({"verify", dir_.Abs("missing.jsonl")});
  EXPECT_EQ(missing.code, kAuditExitUsage);
  EXPECT_NE(missing.err.find("missing.jsonl"), std::string::npos);
  EXPECT_EQ(Audit({"--help"}).code, kAuditExitOk);
  const char* argv[] = {"warden", "audit", "verify", path_.c_str()};
  std::ostringstream out, err;
  EXPECT_EQ(RunAuditCommand(4, argv, 2, out, err), kAuditExitOk);
}

}  // namespace
}  // namespace trove::mcp::policy
