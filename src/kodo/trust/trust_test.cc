// Tests of the trust phase: annotation values, kodo.toml [trust], the policies E0260-E0264 and
// E0350 (each with a passing twin), confidence propagation over chains, diamonds, recursion and
// cycles, and the report shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/hash.h"
#include "kodo/parse/parser.h"
#include "kodo/trust/annotations.h"
#include "kodo/trust/confidence.h"
#include "kodo/trust/config.h"
#include "kodo/trust/policy.h"
#include "kodo/trust/report.h"

namespace trove::kodo::trust {
namespace {

struct Parsed {
  SourceBuffer source;
  ast::Module module;
};

Parsed Parse(std::string body, std::string meta = "purpose: \"t\"") {
  std::string text = "module m {\n    meta { " + meta + " }\n" + body + "\n}\n";
  Result<SourceBuffer> source = SourceBuffer::Create(0, "m.ko", std::move(text));
  EXPECT_TRUE(source.ok());
  Result<parse::ParseResult> parsed = parse::ParseModule(*source);
  EXPECT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->ok()) << (parsed->diagnostics.empty() ? "" : parsed->diagnostics[0].message);
  return Parsed{std::move(*source), std::move(*parsed->module)};
}

std::vector<diag::Diagnostic> Policies(const Parsed& p, const TrustConfig* config = nullptr) {
  return CheckPolicies(p.source, p.module, config);
}

std::vector<std::string> Codes(const std::vector<diag::Diagnostic>& diags) {
  std::vector<std::string> out;
  for (const diag::Diagnostic& d : diags) out.emplace_back(d.code());
  return out;
}

// ---- annotations

TEST(AnnotationsTest, ConfidenceValueForms) {
  const Parsed p = Parse(R"(
    @confidence(0.95) fn a() {}
    @confidence(95) fn b() {}
    @confidence("0.9") fn c() {}
    @confidence(value: 0.7) fn d() {}
    @confidence("high") fn e() {}
    @confidence(x) fn f() {}
    fn g() {}
    @confidence(true, 0.3) fn h() {}
  )");
  const auto& fns = p.module.functions;
  EXPECT_EQ(DeclaredConfidence(fns[0]), 0.95);
  EXPECT_EQ(DeclaredConfidence(fns[1]), 0.95);
  EXPECT_EQ(DeclaredConfidence(fns[2]), 0.9);
  EXPECT_EQ(DeclaredConfidence(fns[3]), 0.7);
  EXPECT_FALSE(DeclaredConfidence(fns[4]).has_value());  // a string that does not parse
  EXPECT_FALSE(DeclaredConfidence(fns[5]).has_value());  // not a literal
  EXPECT_FALSE(DeclaredConfidence(fns[6]).has_value());  // no annotation
  EXPECT_EQ(DeclaredConfidence(fns[7]), 0.3);            // bool skipped, first number counts
}

TEST(AnnotationsTest, HumanReviewForms) {
  const Parsed p = Parse(R"(
    @reviewed_by(human: "alice") fn a() {}
    @reviewed_by("human:bob") fn b() {}
    @reviewed_by(agent: "claude") fn c() {}
    @reviewed_by("agent:claude") fn d() {}
    @reviewed_by(human: 42) fn e() {}
  )");
  const auto& fns = p.module.functions;
  EXPECT_TRUE(HasHumanReview(fns[0]));
  EXPECT_TRUE(HasHumanReview(fns[1]));
  EXPECT_FALSE(HasHumanReview(fns[2]));
  EXPECT_FALSE(HasHumanReview(fns[3]));
  EXPECT_TRUE(HasHumanReview(fns[4]));  // any `human:` key counts for E0260/E0350
  ASSERT_EQ(HumanReviewers(fns[1]).size(), 1u);
  EXPECT_EQ(HumanReviewers(fns[1])[0].name, "bob");
  EXPECT_TRUE(HumanReviewers(fns[4]).empty());  // ... but only strings name a reviewer
}

TEST(AnnotationsTest, RustNumberRenderings) {
  EXPECT_EQ(RustDisplay(0.5), "0.5");
  EXPECT_EQ(RustDisplay(0.75), "0.75");
  EXPECT_EQ(RustDisplay(1.0), "1");
  EXPECT_EQ(RustDisplay(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(RustDisplay(1e-7), "0.0000001");
  EXPECT_EQ(RustDisplay(std::nan("")), "NaN");
  EXPECT_EQ(TwoDecimals(0.5), "0.50");
  EXPECT_EQ(TwoDecimals(0.855), "0.85");  // 0.855 is below 0.855 in binary
  EXPECT_EQ(ParseRustFloat("0.8"), 0.8);
  EXPECT_EQ(ParseRustFloat("+1"), 1.0);
  EXPECT_EQ(ParseRustFloat(".5"), 0.5);
  EXPECT_EQ(ParseRustFloat("1e-1"), 0.1);
  EXPECT_TRUE(std::isinf(*ParseRustFloat("Infinity")));
  EXPECT_FALSE(ParseRustFloat(" 0.8").has_value());
  EXPECT_FALSE(ParseRustFloat("0.8x").has_value());
  EXPECT_FALSE(ParseRustFloat("").has_value());
  EXPECT_FALSE(ParseRustFloat("--1").has_value());
}

// ---- kodo.toml

TEST(TrustConfigTest, ParsesTrustTable) {
  Result<TrustConfig> c = ParseTrustConfig(R"(
module = "app"
version = "0.1.0"

[trust]
known_agents = ["claude", "gpt-4"]
human_reviewers = ["alice"]
)",
                                           "dir/kodo.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->known_agents, (std::vector<std::string>{"claude", "gpt-4"}));
  EXPECT_EQ(c->human_reviewers, (std::vector<std::string>{"alice"}));
  EXPECT_TRUE(c->active());
}

TEST(TrustConfigTest, NoTrustTableIsInactive) {
  Result<TrustConfig> c = ParseTrustConfig("module = \"app\"\n[deps]\n", "kodo.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->active());
  Result<TrustConfig> empty = ParseTrustConfig("[trust]\nknown_agents = []\n", "kodo.toml");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->active());
}

TEST(TrustConfigTest, CorruptFileNamesWhere) {
  Result<TrustConfig> c = ParseTrustConfig("[trust]\nknown_agents = [\"claude\"\n", "p/kodo.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), base::StatusCode::kMalformed);
  EXPECT_EQ(c.status().message().rfind("p/kodo.toml:", 0), 0u) << c.status().message();
  EXPECT_NE(c.status().message().find(": error while parsing"), std::string::npos)
      << c.status().message();
}

TEST(TrustConfigTest, WrongTypesAreErrors) {
  Result<TrustConfig> a = ParseTrustConfig("[trust]\nknown_agents = \"claude\"\n", "kodo.toml");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), "kodo.toml: trust.known_agents: must be an array of strings");
  Result<TrustConfig> b = ParseTrustConfig("[trust]\nhuman_reviewers = [\"a\", 3]\n", "kodo.toml");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(), "kodo.toml: trust.human_reviewers[1]: must be a string");
  Result<TrustConfig> c = ParseTrustConfig("trust = 3\n", "kodo.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "kodo.toml: trust: must be a table");
}

TEST(TrustConfigTest, FoundOnlyBesideTheSource) {
  base::MemEnv env;
  ASSERT_TRUE(env.CreateDir("/p").ok());
  ASSERT_TRUE(env.CreateDir("/p/sub").ok());
  // Missing: no configuration, no error.
  Result<std::optional<TrustConfig>> none = LoadTrustConfigBeside(env, "/p/sub/main.ko");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  // A parent directory's kodo.toml is not looked at.
  ASSERT_TRUE(env.WriteFile("/p/kodo.toml", "[trust]\nknown_agents = [\"x\"]\n").ok());
  none = LoadTrustConfigBeside(env, "/p/sub/main.ko");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Result<std::optional<TrustConfig>> found = LoadTrustConfigBeside(env, "/p/main.ko");
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->known_agents, std::vector<std::string>{"x"});
  ASSERT_TRUE(env.WriteFile("/p/sub/kodo.toml", "[trust\n").ok());
  Result<std::optional<TrustConfig>> bad = LoadTrustConfigBeside(env, "/p/sub/main.ko");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("/p/sub/kodo.toml:1:", 0), 0u) << bad.status().message();
  EXPECT_EQ(TrustConfigPathFor("main.ko"), "kodo.toml");
}

// ---- policies: each code, then its passing twin

TEST(PolicyTest, E0260LowConfidenceWithoutHumanReview) {
  const Parsed bad = Parse("    @confidence(0.5)\n    fn risky() {}");
  const std::vector<diag::Diagnostic> d = Policies(bad);
  ASSERT_EQ(Codes(d), std::vector<std::string>{"E0260"});
  const ast::Function& fn = bad.module.functions[0];
  EXPECT_EQ(d[0].message, fmt::format("function `risky` has @confidence(0.5) < 0.8 and is missing "
                                      "`@reviewed_by(human: \"...\")` at Span {{ start: {}, end: "
                                      "{} }}",
                                      fn.span.start, fn.span.end));
  EXPECT_EQ(bad.source.text().substr(fn.span.start, 2), "fn");  // the span starts at `fn`
  EXPECT_FALSE(d[0].fix_patch.has_value());                     // no forged review is offered
  EXPECT_TRUE(d[0].suggestion.has_value());
  // Twins: reviewed by a human; at the threshold.
  EXPECT_TRUE(Policies(Parse("    @confidence(0.5) @reviewed_by(human: \"alice\")\n    fn r() {}"))
                  .empty());
  EXPECT_TRUE(Policies(Parse("    @confidence(80)\n    fn r() {}")).empty());
  // An agent review does not count.
  EXPECT_EQ(Codes(Policies(Parse("    @confidence(0.5) @reviewed_by(agent: \"claude\")\n"
                                 "    fn r() {}"))),
            std::vector<std::string>{"E0260"});
}

TEST(PolicyTest, E0262SecuritySensitiveWithoutContract) {
  const std::vector<diag::Diagnostic> d =
      Policies(Parse("    @security_sensitive\n    fn auth(x: Int) -> Int { return x }"));
  ASSERT_EQ(Codes(d), std::vector<std::string>{"E0262"});
  EXPECT_EQ(d[0].message.rfind("function `auth` is marked `@security_sensitive` but has no "
                               "`requires` or `ensures` contracts at Span",
                               0),
            0u);
  EXPECT_TRUE(Policies(Parse("    @security_sensitive\n    fn auth(x: Int) -> Int\n"
                             "        requires { x > 0 }\n    { return x }"))
                  .empty());
}

TEST(PolicyTest, E0260BeforeE0262OnePerFunction) {
  const std::vector<diag::Diagnostic> d =
      Policies(Parse("    @security_sensitive @confidence(0.1)\n    fn f() {}"));
  EXPECT_EQ(Codes(d), std::vector<std::string>{"E0260"});
}

TEST(PolicyTest, E0350HighSecurity) {
  const std::string meta = "purpose: \"t\", trust_policy: \"high_security\"";
  const Parsed p = Parse(R"(
    fn no_author() {}
    @authored_by(agent: "claude")
    fn no_confidence() {}
    @authored_by(agent: "claude") @confidence(0.82)
    fn low() {}
    @authored_by(agent: "claude") @confidence(0.82) @reviewed_by(human: "alice")
    fn reviewed() {}
    @authored_by(agent: "claude") @confidence(0.9)
    fn fine() {}
  )",
                         meta);
  const std::vector<diag::Diagnostic> d = Policies(p);
  ASSERT_EQ(Codes(d), (std::vector<std::string>{"E0350", "E0350", "E0350"}));
  EXPECT_EQ(d[0].message.substr(0, d[0].message.find(" at Span")),
            "function `no_author` is missing `@authored_by` annotation (required by trust_policy)");
  EXPECT_EQ(d[1].message.substr(0, d[1].message.find(" at Span")),
            "function `no_confidence` is missing `@confidence` annotation (required by "
            "trust_policy)");
  EXPECT_EQ(d[2].message.substr(0, d[2].message.find(" at Span")),
            "function `low` has @confidence(0.82) below 0.85 threshold and is missing "
            "`@reviewed_by` with human reviewer");
  // Twin: the same module without the policy passes (0.82 >= 0.8).
  EXPECT_TRUE(Policies(Parse(R"(
    @authored_by(agent: "claude") @confidence(0.82)
    fn low() {}
  )"))
                  .empty());
  // Only the exact value enables it.
  EXPECT_TRUE(
      Policies(Parse("    fn f() {}", "purpose: \"t\", trust_policy: \"High_Security\"")).empty());
}

TEST(PolicyTest, E0350ComesFirstThenE0260) {
  const Parsed p = Parse("    @confidence(0.5)\n    fn f() {}",
                         "purpose: \"t\", trust_policy: \"high_security\"");
  EXPECT_EQ(Codes(Policies(p)), (std::vector<std::string>{"E0350", "E0260"}));
}

TEST(PolicyTest, E0263AgentClaimsHumanReview) {
  TrustConfig config;
  config.known_agents = {"Claude"};
  const Parsed p = Parse(
      "    @confidence(0.9) @reviewed_by(human: \"claude\")\n    fn f() {}\n"
      "    @confidence(0.9) @reviewed_by(\"human:CLAUDE\")\n    fn g() {}\n"
      "    @confidence(0.9) @reviewed_by(human: \"alice\")\n    fn ok() {}");
  const std::vector<diag::Diagnostic> d = Policies(p, &config);
  ASSERT_EQ(Codes(d), (std::vector<std::string>{"E0263", "E0263"}));
  const ast::Annotation& ann = p.module.functions[0].annotations[1];
  ASSERT_TRUE(d[0].span.has_value());
  EXPECT_EQ(d[0].span->begin, ann.span.start);  // span = the annotation
  EXPECT_EQ(p.source.text().substr(ann.span.start, ann.span.end - ann.span.start),
            "@reviewed_by(human: \"claude\")");
  EXPECT_EQ(d[0].message.substr(0, d[0].message.find(" at Span")),
            "function `f`: reviewer `claude` is a known AI agent and cannot claim human review");
  ASSERT_TRUE(d[0].fix_patch.has_value());
  EXPECT_EQ(d[0].fix_patch->replacement, "@reviewed_by(agent: \"claude\")");
  EXPECT_EQ(d[1].message.substr(0, d[1].message.find(" at Span")),
            "function `g`: reviewer `CLAUDE` is a known AI agent and cannot claim human review");
  // Twin: without a config (MCP, no kodo.toml) nothing is checked.
  EXPECT_TRUE(Policies(p).empty());
}

TEST(PolicyTest, E0264ReviewerNotInAllowlist) {
  TrustConfig config;
  config.human_reviewers = {"Alice"};
  const Parsed p = Parse(
      "    @confidence(0.9) @reviewed_by(human: \"mallory\")\n    fn f() {}\n"
      "    @confidence(0.9) @reviewed_by(human: \"alice\")\n    fn ok() {}");
  const std::vector<diag::Diagnostic> d = Policies(p, &config);
  ASSERT_EQ(Codes(d), std::vector<std::string>{"E0264"});
  EXPECT_EQ(d[0].message.substr(0, d[0].message.find(" at Span")),
            "function `f`: reviewer `mallory` is not in the `human_reviewers` allowlist");
  EXPECT_FALSE(d[0].fix_patch.has_value());
  // Twin: an agent is checked before the allowlist, and one error per function.
  config.known_agents = {"mallory"};
  EXPECT_EQ(Codes(Policies(p, &config)), std::vector<std::string>{"E0263"});
}

TEST(PolicyTest, E0261ModuleConfidenceBelowThreshold) {
  const Parsed p = Parse(R"(
    @confidence(0.95)
    fn top() { mid() }
    @confidence(0.9)
    fn mid() { leaf() }
    @confidence(0.85)
    fn leaf() {}
    fn alone() {}
  )",
                         "purpose: \"t\", min_confidence: \"0.88\"");
  const std::vector<diag::Diagnostic> d = Policies(p);
  ASSERT_EQ(Codes(d), (std::vector<std::string>{"E0261", "E0261", "E0261"}));
  EXPECT_EQ(d[0].message,
            "module confidence 0.85 is below threshold 0.88. Weakest link: fn `leaf` at "
            "@confidence(0.85)");  // no span suffix
  ASSERT_TRUE(d[0].span.has_value());
  EXPECT_EQ(d[0].span->begin, p.module.functions[0].span.start);
  // Twin: a threshold everyone meets; one that does not parse is ignored.
  EXPECT_TRUE(Policies(Parse("    @confidence(0.85)\n    fn f() {}",
                             "purpose: \"t\", min_confidence: \"0.85\""))
                  .empty());
  EXPECT_TRUE(Policies(Parse("    @confidence(0.85)\n    fn f() {}",
                             "purpose: \"t\", min_confidence: \"high\""))
                  .empty());
}

// ---- propagation

TEST(ConfidenceTest, Chain) {
  const Parsed p = Parse(R"(
    fn a() { b() }
    @confidence(0.9) fn b() { c() }
    @confidence(0.6) @reviewed_by(human: "x") fn c() { d() }
    @confidence(0.95) fn d() {}
  )");
  const CallGraph g = CallGraph::Build(p.module);
  EXPECT_EQ(g.Computed("a"), 0.6);
  EXPECT_EQ(g.Computed("b"), 0.6);
  EXPECT_EQ(g.Computed("c"), 0.6);
  EXPECT_EQ(g.Computed("d"), 0.95);
  EXPECT_EQ(g.Declared("a"), 1.0);
  EXPECT_EQ(g.Weakest("a").name, "c");
  EXPECT_EQ(g.Overall(p.module), 0.6);
}

TEST(ConfidenceTest, Diamond) {
  const Parsed p = Parse(R"(
    fn top() {
        left()
        right()
    }
    @confidence(0.9) fn left() { bottom() }
    @confidence(0.85) fn right() { bottom() }
    @confidence(0.82) fn bottom() {}
  )");
  const CallGraph g = CallGraph::Build(p.module);
  EXPECT_EQ(g.Computed("top"), 0.82);
  EXPECT_EQ(g.Computed("left"), 0.82);
  EXPECT_EQ(g.Computed("right"), 0.82);
  EXPECT_EQ(g.Weakest("top").name, "bottom");
  EXPECT_EQ(g.Callees("top"), (std::vector<std::string>{"left", "right"}));
}

TEST(ConfidenceTest, RecursionAndCycles) {
  const Parsed p = Parse(R"(
    @confidence(0.9) fn fact(n: Int) -> Int {
        if n <= 1 { return 1 }
        return n * fact(n - 1)
    }
    @confidence(0.95) fn even(n: Int) -> Bool {
        if n == 0 { return true }
        return odd(n - 1)
    }
    @confidence(0.81) fn odd(n: Int) -> Bool {
        if n == 0 { return false }
        return even(n - 1)
    }
    fn user() -> Bool { return even(4) }
  )");
  const CallGraph g = CallGraph::Build(p.module);
  EXPECT_EQ(g.Computed("fact"), 0.9);
  EXPECT_EQ(g.Computed("even"), 0.81);
  EXPECT_EQ(g.Computed("odd"), 0.81);
  EXPECT_EQ(g.Computed("user"), 0.81);
  EXPECT_EQ(g.Weakest("user").name, "odd");
  EXPECT_EQ(g.Callees("fact"), std::vector<std::string>{"fact"});
}

TEST(ConfidenceTest, WhatCountsAsAnEdge) {
  const Parsed p = Parse(R"(
    fn f(xs: List<Int>) -> Int {
        let c = |x: Int| -> Int { helper(x) }
        let o = Some(1)
        println("hi")
        missing(1)
        let n = xs.len()
        spawn { worker() }
        return 0
    }
    fn g<T>(x: T) -> T {
        helper(1)
        return x
    }
    @confidence(0.5) @reviewed_by(human: "x") fn helper(x: Int) -> Int { return x }
    fn worker() {}
  )");
  const CallGraph g = CallGraph::Build(p.module);
  EXPECT_EQ(g.Callees("f"), (std::vector<std::string>{"helper", "missing", "println", "worker"}));
  EXPECT_TRUE(g.Callees("g").empty());  // generic bodies are never checked
  EXPECT_EQ(g.Computed("f"), 0.5);
  EXPECT_EQ(g.Computed("missing"), 1.0);  // unknown callees count 1.0
}

TEST(ConfidenceTest, LongChainIsIterative) {
  // A chain far longer than any recursion could walk on a small stack.
  std::string body;
  constexpr int kLength = 20000;
  for (int i = 0; i < kLength; ++i) body += fmt::format("    fn f{}() {{ f{}() }}\n", i, i + 1);
  body +=
      fmt::format("    @confidence(0.3) @reviewed_by(human: \"x\") fn f{}() {{ f0() }}\n", kLength);
  const Parsed p = Parse(body);
  const CallGraph g = CallGraph::Build(p.module);
  EXPECT_EQ(g.Computed("f0"), 0.3);
  EXPECT_EQ(g.Weakest("f0").name, fmt::format("f{}", kLength));
}

// ---- reports

TEST(ReportTest, McpShape) {
  const Parsed p = Parse(R"(
    fn main() { helper() }
    @confidence(0.5) @reviewed_by(human: "x") fn helper() {}
  )");
  const CallGraph g = CallGraph::Build(p.module);
  EXPECT_EQ(McpConfidenceReport(p.module, g).dump(),
            R"({"functions":[{"callees":["helper"],"computed_confidence":0.5,)"
            R"("declared_confidence":1.0,"name":"main"},{"callees":[],"computed_confidence":0.5,)"
            R"("declared_confidence":0.5,"name":"helper"}],"overall_confidence":0.5,)"
            R"("status":"ok"})");
}

TEST(ReportTest, CliShapeAndText) {
  const Parsed p = Parse(R"(
    @authored_by(agent: "claude") fn main() { helper() }
    @confidence(0.5) @reviewed_by(human: "x") fn helper() {}
  )");
  const CallGraph g = CallGraph::Build(p.module);
  const nlohmann::json j = CliConfidenceReport(p.module, g, 0.8);
  EXPECT_EQ(j["missing_authored_by"], nlohmann::json::array({"helper"}));
  EXPECT_EQ(j["below_threshold"].size(), 2u);
  EXPECT_EQ(j["module_average_confidence"], 0.5);
  EXPECT_EQ(j["threshold"], 0.8);
  EXPECT_EQ(j["functions"][0]["has_authored_by"], true);
  const std::string text = CliConfidenceText(p.module, g, 0.8);
  EXPECT_NE(text.find("Confidence Report for module `m`\n"), std::string::npos);
  EXPECT_NE(text.find("helper                               0.50       0.50  no @authored_by, "
                      "below threshold\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Functions below threshold (0.80):\n  - main (0.50)\n  - helper (0.50)\n"),
            std::string::npos);
}

TEST(ReportTest, AuditAndPolicy) {
  const Parsed p = Parse(R"(
    @confidence(0.95) @reviewed_by(human: "alice") fn a(x: Int) -> Int requires { x > 0 } { return x }
    @confidence(0.85) fn b() {}
  )");
  const CallGraph g = CallGraph::Build(p.module);
  const nlohmann::ordered_json report = AuditReport(p.module, g, ContractCounts{0, 1, 0});
  EXPECT_EQ(report["summary"].dump(),
            R"({"total_functions":2,"min_confidence":0.85,"contracts_total":1,)"
            R"("contracts_static_verified":0,"contracts_runtime":1,"contracts_failed":0,)"
            R"("deployable":false})");
  EXPECT_EQ(report["functions"][0]["annotations"].dump(),
            R"({"confidence":0.95,"reviewed_by":{"human":"alice"}})");
  Result<std::vector<PolicyCriterion>> criteria =
      ParseAuditPolicy("min_confidence=0.9, reviewed=all,contracts=all_present");
  ASSERT_TRUE(criteria.ok());
  const nlohmann::ordered_json result = CheckAuditPolicy(report, *criteria);
  EXPECT_EQ(result["passed"], false);
  EXPECT_EQ(result["violations"].dump(),
            R"([{"criterion":"min_confidence","function":"b","expected":">= 0.9",)"
            R"("actual":"0.8500"},{"criterion":"reviewed=all","function":"b",)"
            R"("expected":"@reviewed_by annotation","actual":"no @reviewed_by annotation"},)"
            R"({"criterion":"contracts=all_present","function":"b",)"
            R"("expected":"at least 1 contract clause","actual":"0 contract clauses"}])");
  EXPECT_EQ(ParseAuditPolicy("").status().message(), "empty policy string");
  EXPECT_EQ(ParseAuditPolicy("trust=verified").status().message(), "unknown policy key: `trust`");
  EXPECT_EQ(ParseAuditPolicy("min_confidence").status().message(),
            "invalid policy fragment: `min_confidence` (expected key=value)");
  EXPECT_EQ(ParseAuditPolicy("min_confidence=x").status().message(),
            "invalid min_confidence value: `x` (expected a float)");
  const std::string text = AuditText(report, &result);
  EXPECT_NE(text.find("Deployable:      no\n"), std::string::npos);
  EXPECT_NE(text.find("Policy: FAILED\n"), std::string::npos);
  EXPECT_NE(text.find("  [min_confidence] function `b`: expected: >= 0.9, actual: 0.8500\n"),
            std::string::npos);
}

TEST(ReportTest, CertificateAndChaining) {
  const std::string text = "src";
  const Parsed p = Parse(R"(
    @confidence(0.95) fn a(x: Int) -> Int requires { x > 0 } { return x }
    fn b() {}
  )",
                         "purpose: \"t\", version: \"1.0\"");
  // 2026-11-26T19:00:00Z
  const std::int64_t now = std::int64_t{1795719600} * 1000000;
  const nlohmann::ordered_json first = Certificate(p.module, text, "runtime", now, std::nullopt);
  EXPECT_EQ(first["compiled_at"], "2026-11-26T19:00:00Z");
  EXPECT_EQ(first["validators"], nlohmann::ordered_json::array({"validate_a"}));
  EXPECT_EQ(first["contracts"].dump(),
            R"({"requires_count":1,"ensures_count":0,"mode":"runtime"})");
  EXPECT_EQ(first["function_details"].size(), 1u);
  EXPECT_FALSE(first.contains("parent_certificate"));
  // The hash covers the certificate with an empty certificate_hash.
  nlohmann::ordered_json blank = first;
  blank["certificate_hash"] = "";
  EXPECT_EQ(first["certificate_hash"], "sha256:" + base::Sha256Hex(blank.dump()));
  std::vector<std::string> keys;
  for (auto it = first.begin(); it != first.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"module", "purpose", "version", "compiled_at",
                                            "compiler_version", "contracts", "functions",
                                            "function_details", "validators", "type_check",
                                            "source_hash", "binary_hash", "certificate_hash"}));

  const Parsed p2 = Parse("    fn b() {}\n    fn c() {}");
  const nlohmann::ordered_json second =
      Certificate(p2.module, "src2", "static", now, first.dump(2));
  EXPECT_EQ(second["parent_certificate"], first["certificate_hash"]);
  EXPECT_EQ(second["diff_from_parent"].dump(),
            R"({"functions_added":["c"],"functions_removed":["a"],"contracts_changed":true,)"
            R"("source_hash_changed":true})");
  // A parent that is not a certificate is ignored.
  EXPECT_FALSE(Certificate(p2.module, "src2", "runtime", now, std::string("{not json"))
                   .contains("parent_certificate"));
}

}  // namespace
}  // namespace trove::kodo::trust
