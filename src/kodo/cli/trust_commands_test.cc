// The trust side of kodoc: `check` with kodo.toml (E0263/E0264, a corrupt file), `check
// --emit-cert`, `confidence-report` and `audit`, against an in-memory Env.
#include "kodo/cli/trust_commands.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "kodo/cli/commands.h"

namespace trove::kodo::cli {
namespace {

using nlohmann::json;

// main calls a parser (0.9), which calls a tokenizer (0.6, reviewed by "ada").
const std::string kReviewed =
    "module app {\n"
    "    meta { purpose: \"trust\", version: \"1.2\" }\n"
    "    @authored_by(agent: \"claude\")\n"
    "    fn main() {\n"
    "        parse()\n"
    "    }\n"
    "    @confidence(0.9)\n"
    "    fn parse() {\n"
    "        tokenize()\n"
    "    }\n"
    "    @confidence(0.6) @reviewed_by(human: \"ada\")\n"
    "    fn tokenize() {}\n"
    "}\n";

class TrustCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.CreateDir("/p").ok()); }
  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(env_.WriteFile(path, text).ok());
  }
  base::MemEnv env_;
};

TEST_F(TrustCommandsTest, CheckReadsKodoTomlBesideTheFile) {
  Write("/p/app.ko", kReviewed);
  // No kodo.toml: no reviewer checks.
  EXPECT_EQ(RunCheck(env_, {.file = "/p/app.ko"}).exit_code, 0);
  // `ada` is a known agent: E0263 at the annotation.
  Write("/p/kodo.toml", "[trust]\nknown_agents = [\"Ada\"]\n");
  CommandOutput agent = RunCheck(env_, {.file = "/p/app.ko", .json_errors = true});
  EXPECT_EQ(agent.exit_code, 1);
  json j = json::parse(agent.out);
  ASSERT_EQ(j["count"], 1);
  EXPECT_EQ(j["errors"][0]["code"], "E0263");
  EXPECT_EQ(j["errors"][0]["span"]["line"], 11);
  EXPECT_EQ(j["errors"][0]["fix_patch"]["replacement"], "@reviewed_by(agent: \"ada\")");
  // Not on the allowlist: E0264.
  Write("/p/kodo.toml",
        "module = \"app\"\nversion = \"1\"\n[trust]\nhuman_reviewers = [\"bob\"]\n");
  j = json::parse(RunCheck(env_, {.file = "/p/app.ko", .json_errors = true}).out);
  EXPECT_EQ(j["errors"][0]["code"], "E0264");
  // On it: passes.
  Write("/p/kodo.toml", "[trust]\nhuman_reviewers = [\"bob\", \"ADA\"]\n");
  EXPECT_EQ(RunCheck(env_, {.file = "/p/app.ko"}).exit_code, 0);
  // A corrupt kodo.toml stops the check with where it is wrong.
  Write("/p/kodo.toml", "[trust]\nhuman_reviewers = [\"bob\"\n");
  CommandOutput corrupt = RunCheck(env_, {.file = "/p/app.ko"});
  EXPECT_EQ(corrupt.exit_code, 1);
  EXPECT_EQ(corrupt.out, "");
  EXPECT_EQ(corrupt.err.rfind("error: /p/kodo.toml:", 0), 0u) << corrupt.err;
}

TEST_F(TrustCommandsTest, EmitCertWritesAndChains) {
  Write("/p/app.ko", kReviewed);
  CommandOutput first = RunCheck(env_, {.file = "/p/app.ko", .emit_cert = true});
  EXPECT_EQ(first.exit_code, 0);
  EXPECT_EQ(first.out,
            "Check passed for module `app`\nCertificate written to /p/app.ko.cert.json\n");
  Result<std::string> text = env_.ReadFile("/p/app.ko.cert.json");
  ASSERT_TRUE(text.ok());
  const json cert = json::parse(*text);
  EXPECT_EQ(cert["module"], "app");
  EXPECT_EQ(cert["version"], "1.2");
  EXPECT_EQ(cert["functions"], json::array({"main", "parse", "tokenize"}));
  EXPECT_EQ(cert["type_check"], "passed");
  EXPECT_FALSE(cert.contains("parent_certificate"));

  CommandOutput second =
      RunCheck(env_, {.file = "/p/app.ko", .json_errors = true, .emit_cert = true});
  EXPECT_EQ(json::parse(second.out)["status"], "ok");  // stdout stays one JSON document
  EXPECT_EQ(second.err, "Certificate written to /p/app.ko.cert.json\n");
  const json chained = json::parse(*env_.ReadFile("/p/app.ko.cert.json"));
  EXPECT_EQ(chained["parent_certificate"], cert["certificate_hash"]);
  EXPECT_EQ(chained["diff_from_parent"]["source_hash_changed"], false);

  // Nothing is written for a program with errors.
  Write("/p/bad.ko",
        "module b {\n    meta { purpose: \"b\" }\n    fn f() -> Int { return true }\n}\n");
  EXPECT_EQ(RunCheck(env_, {.file = "/p/bad.ko", .emit_cert = true}).exit_code, 1);
  EXPECT_FALSE(env_.FileExists("/p/bad.ko.cert.json"));
  EXPECT_EQ(internal::CertificatePath("dir/a.b.ko"), "dir/a.b.ko.cert.json");
  EXPECT_EQ(internal::CertificatePath("a"), "a.ko.cert.json");
  EXPECT_EQ(internal::CertificatePath("d.x/.hidden"), "d.x/.hidden.ko.cert.json");
}

TEST_F(TrustCommandsTest, ConfidenceReport) {
  Write("/p/app.ko", kReviewed);
  CommandOutput r = RunConfidenceReport(env_, {.file = "/p/app.ko", .json = true});
  EXPECT_EQ(r.exit_code, 0);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["overall_confidence"], 0.6);
  EXPECT_EQ(j["missing_authored_by"], json::array({"parse", "tokenize"}));
  EXPECT_EQ(j["below_threshold"].size(), 3u);
  EXPECT_EQ(j["functions"][0]["callees"], json::array({"parse"}));
  CommandOutput text = RunConfidenceReport(env_, {.file = "/p/app.ko", .threshold = 0.5});
  EXPECT_NE(text.out.find("Threshold:          0.50\n"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("Functions below threshold"), std::string::npos);

  Write("/p/bad.ko",
        "module b {\n    meta { purpose: \"b\" }\n    @confidence(0.1)\n    fn f() {}\n}\n");
  CommandOutput bad = RunConfidenceReport(env_, {.file = "/p/bad.ko"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err.rfind("type error: function `f` has @confidence(0.1) < 0.8", 0), 0u) << bad.err;
  Write("/p/parse.ko", "module b {");
  EXPECT_EQ(RunConfidenceReport(env_, {.file = "/p/parse.ko"}).err.rfind("parse error: ", 0), 0u);
  EXPECT_EQ(RunConfidenceReport(env_, {.file = "/p/none.ko"}).exit_code, 1);
}

TEST_F(TrustCommandsTest, AuditWithPolicy) {
  Write("/p/app.ko", kReviewed);
  CommandOutput plain = RunAudit(env_, {.file = "/p/app.ko", .json = true});
  EXPECT_EQ(plain.exit_code, 0);
  const json report = json::parse(plain.out);
  EXPECT_EQ(report["summary"]["deployable"], false);
  EXPECT_EQ(report["summary"]["min_confidence"], 0.6);

  CommandOutput failed = RunAudit(
      env_, {.file = "/p/app.ko", .json = true, .policy = "min_confidence=0.5,reviewed=all"});
  EXPECT_EQ(failed.exit_code, 1);
  const json both = json::parse(failed.out);
  EXPECT_EQ(both["policy"]["passed"], false);
  EXPECT_EQ(both["policy"]["violations"].size(), 2u);  // main and parse lack @reviewed_by
  EXPECT_TRUE(both.contains("report"));

  CommandOutput passed = RunAudit(env_, {.file = "/p/app.ko", .policy = "min_confidence=0.5"});
  EXPECT_EQ(passed.exit_code, 0);
  EXPECT_NE(passed.out.find("Policy: PASSED\n"), std::string::npos);

  CommandOutput bad_policy = RunAudit(env_, {.file = "/p/app.ko", .policy = "trust=verified"});
  EXPECT_EQ(bad_policy.exit_code, 1);
  EXPECT_EQ(bad_policy.err, "policy parse error: unknown policy key: `trust`\n");

  CommandOutput mode = RunAudit(env_, {.file = "/p/app.ko", .contracts = "fast"});
  EXPECT_EQ(mode.err, "warning: unknown contract mode `fast`, falling back to `runtime`\n");
}

// `audit` and the certificate take their contract figures from the contracts phase
// (kodo/contracts) in the mode asked for: Z3 proves `inc`'s ensures and refutes `dec`'s.
TEST_F(TrustCommandsTest, AuditAndCertificateUseTheContractsPhase) {
  Write("/p/c.ko",
        "module c {\n    meta { purpose: \"contracts\" }\n"
        "    fn inc(x: Int) -> Int\n        requires { x > 0 }\n        ensures { x + 1 > x }\n"
        "    {\n        return x + 1\n    }\n"
        "    fn dec(x: Int) -> Int\n        ensures { x - 1 > x }\n    {\n        return x - 1\n   "
        " }\n"
        "    fn main() {\n        println(f\"{inc(1)} {dec(1)}\")\n    }\n}\n");
  const json runtime = json::parse(RunAudit(env_, {.file = "/p/c.ko", .json = true}).out);
  EXPECT_EQ(runtime["summary"]["contracts_total"], 3);
  EXPECT_EQ(runtime["summary"]["contracts_runtime"], 3);
  EXPECT_EQ(runtime["summary"]["contracts_static_verified"], 0);
  EXPECT_EQ(runtime["summary"]["contracts_failed"], 0);

  CommandOutput audited = RunAudit(env_, {.file = "/p/c.ko", .json = true, .contracts = "static"});
  const json proved = json::parse(audited.out);
  // Each clause is verified in isolation (docs/kodo-contracts.md §1): `inc`'s x > 0 has a
  // counter-example and its x + 1 > x is proved (Int is unbounded in the SMT translation);
  // verification stops after the first function with a failure, as upstream's, so `dec` is not
  // reached.
  EXPECT_EQ(proved["summary"]["contracts_static_verified"], 1) << audited.out;
  EXPECT_EQ(proved["summary"]["contracts_runtime"], 0) << audited.out;
  EXPECT_EQ(proved["summary"]["contracts_failed"], 1) << audited.out;
  EXPECT_EQ(proved["summary"]["deployable"], false);

  CommandOutput none = RunAudit(env_, {.file = "/p/c.ko", .json = true, .contracts = "none"});
  EXPECT_EQ(json::parse(none.out)["summary"]["contracts_total"], 3);  // clauses written
  EXPECT_EQ(json::parse(none.out)["summary"]["contracts_runtime"], 0);

  // The certificate records the mode `check` ran in.
  Write("/p/ok.ko",
        "module ok {\n    meta { purpose: \"cert\" }\n"
        "    fn inc(x: Int) -> Int\n        ensures { x + 1 > x }\n    {\n        return x + 1\n   "
        " }\n"
        "    fn main() {\n        println(f\"{inc(1)}\")\n    }\n}\n");
  CommandOutput checked =
      RunCheck(env_, {.file = "/p/ok.ko", .contracts = "static", .emit_cert = true});
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  Result<std::string> cert = env_.ReadFile("/p/ok.ko.cert.json");
  ASSERT_TRUE(cert.ok());
  EXPECT_EQ(json::parse(*cert)["contracts"]["mode"], "static");
}

}  // namespace
}  // namespace trove::kodo::cli
