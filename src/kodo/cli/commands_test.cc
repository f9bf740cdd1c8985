#include "kodo/cli/commands.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace trove::kodo::cli {
namespace {

using nlohmann::json;

const std::string kValid =
    "module test {\n    meta { purpose: \"checks\", version: \"2.0\" }\n"
    "    fn main() -> Int {\n        return 42\n    }\n}\n";
const std::string kTypeError =
    "module test {\n    meta { purpose: \"test\" }\n    fn main() -> Int {\n        return true\n"
    "    }\n}\n";

class CommandsTest : public ::testing::Test {
 protected:
  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(env_.WriteFile(path, text).ok());
  }
  base::MemEnv env_;
};

TEST_F(CommandsTest, CheckTextAndJsonWithExitCodes) {
  Write("ok.ko", kValid);
  CommandOutput ok = RunCheck(env_, {.file = "ok.ko"});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.out, "Check passed for module `test`\n");
  EXPECT_EQ(ok.err, "");

  CommandOutput ok_json = RunCheck(env_, {.file = "ok.ko", .json_errors = true});
  EXPECT_EQ(ok_json.exit_code, 0);
  json j = json::parse(ok_json.out);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["count"], 0);
  EXPECT_EQ(j["meta"], json({{"module", "test"}, {"purpose", "checks"}, {"version", "2.0"}}));

  Write("bad.ko", kTypeError);
  CommandOutput bad = RunCheck(env_, {.file = "bad.ko"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("E0200"), std::string::npos) << bad.err;

  CommandOutput bad_json = RunCheck(env_, {.file = "bad.ko", .json_errors = true});
  EXPECT_EQ(bad_json.exit_code, 1);
  json e = json::parse(bad_json.out);
  EXPECT_EQ(e["status"], "failed");
  EXPECT_EQ(e["count"], 1);
  EXPECT_EQ(e["errors"][0]["code"], "E0200");
  EXPECT_EQ(e["errors"][0]["span"]["file"], "bad.ko");
  EXPECT_EQ(e["errors"][0]["span"]["line"], 4);
}

TEST_F(CommandsTest, CheckSarifAgreesWithJsonErrors) {
  Write("bad.ko", kTypeError);
  CommandOutput sarif = RunCheck(env_, {.file = "bad.ko", .sarif = true});
  EXPECT_EQ(sarif.exit_code, 1);
  EXPECT_EQ(sarif.err, "");
  const json log = json::parse(sarif.out);
  const json errors = json::parse(RunCheck(env_, {.file = "bad.ko", .json_errors = true}).out);
  EXPECT_EQ(log["version"], "2.1.0");
  ASSERT_EQ(log["runs"][0]["results"].size(), errors["errors"].size());
  const json& r = log["runs"][0]["results"][0];
  const json& e = errors["errors"][0];
  EXPECT_EQ(r["ruleId"], e["code"]);
  EXPECT_EQ(r["message"]["text"], e["message"]);
  const json& region = r["locations"][0]["physicalLocation"]["region"];
  EXPECT_EQ(region["startLine"], e["span"]["line"]);
  EXPECT_EQ(region["startColumn"], e["span"]["column"]);
  EXPECT_EQ(region["byteOffset"], e["span"]["start"]);
  EXPECT_EQ(region["byteLength"].get<int>(),
            e["span"]["end"].get<int>() - e["span"]["start"].get<int>());

  Write("ok.ko", kValid);
  CommandOutput ok = RunCheck(env_, {.file = "ok.ko", .sarif = true});
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_TRUE(json::parse(ok.out)["runs"][0]["results"].empty());

  CommandOutput both = RunCheck(env_, {.file = "ok.ko", .json_errors = true, .sarif = true});
  EXPECT_EQ(both.exit_code, kExitUsage);
  EXPECT_EQ(both.err, "error: --sarif and --json-errors exclude each other\n");
}

TEST_F(CommandsTest, CheckOfAMissingFileFails) {
  CommandOutput r = RunCheck(env_, {.file = "nope.ko"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: could not read file `nope.ko`: ", 0), 0u) << r.err;
}

TEST_F(CommandsTest, ExplainKnownAndUnknownCodes) {
  CommandOutput text = RunExplain({.code = "E0214"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_EQ(text.out.rfind("Error E0214: ", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("```kodo"), std::string::npos);

  CommandOutput as_json = RunExplain({.code = "E0200", .json = true});
  EXPECT_EQ(as_json.exit_code, 0);
  json j = json::parse(as_json.out);
  for (const char* key : {"bad_example", "code", "explanation", "good_example", "title"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }

  CommandOutput unknown = RunExplain({.code = "E9999"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.err,
            "error: unknown error code `E9999`\nhint: error codes range from E0001 to E0699\n");
  CommandOutput unknown_json = RunExplain({.code = "E9999", .json = true});
  EXPECT_EQ(unknown_json.exit_code, 1);
  EXPECT_EQ(json::parse(unknown_json.out)["error"], "unknown error code `E9999`");
}

TEST_F(CommandsTest, DescribeTextAndJson) {
  Write("d.ko",
        "module d {\n    meta { purpose: \"p\" }\n    struct P { x: Int, ys: List<Int> }\n"
        "    fn f(a: Int, b: Bool) -> Int\n        requires { a > 0 }\n    {\n"
        "        return a\n    }\n}\n");
  CommandOutput text = RunDescribe(env_, {.file = "d.ko"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_EQ(text.out,
            "module d\n  purpose: p\n\nstruct P { x: Int, ys: List<Int> }\n\n"
            "fn f(a: Int, b: Bool) -> Int\n  requires { a > 0 }\n");
  CommandOutput as_json = RunDescribe(env_, {.file = "d.ko", .json = true});
  EXPECT_EQ(as_json.exit_code, 0);
  json j = json::parse(as_json.out);
  EXPECT_EQ(j["module"], "d");
  EXPECT_EQ(j["types"][0]["fields"][1]["type"], "Generic(\"List\", [Named(\"Int\")])");

  Write("broken.ko", "module m {");
  CommandOutput broken = RunDescribe(env_, {.file = "broken.ko", .json = true});
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_EQ(json::parse(broken.out)["phase"], "parse");
}

TEST_F(CommandsTest, AnnotateJsonKeepsUpstreamFieldOrder) {
  Write("a.ko",
        "module a {\n    meta { purpose: \"p\" }\n"
        "    fn divide(a: Int, b: Int) -> Int {\n        return a / b\n    }\n}\n");
  CommandOutput r = RunAnnotate(env_, {.file = "a.ko", .json = true, .apply = true});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "{\n  \"suggestions\": [\n    {\n      \"function\": \"divide\",\n"
            "      \"line\": 3,\n      \"kind\": \"Requires\",\n"
            "      \"expression\": \"b != 0\",\n"
            "      \"reason\": \"parameter `b` used as divisor\",\n"
            "      \"verified\": false\n    }\n  ],\n  \"verified_count\": 0,\n"
            "  \"total_count\": 1\n}\n");
  EXPECT_NE(r.err.find("--apply is not yet implemented"), std::string::npos);

  CommandOutput text = RunAnnotate(env_, {.file = "a.ko"});
  EXPECT_EQ(text.out,
            "a.ko:3: fn divide()\n  + requires { b != 0 }    [unverified: parameter `b` used as "
            "divisor]\n\n1 contract(s) suggested, 0 verified.\n");
}

TEST_F(CommandsTest, FixPrintsThenAppliesOneErrorPerRunAndRechecks) {
  const std::string two =
      "module m {\n    meta { purpose: \"p\" }\n    fn a() -> Int {\n        let total = 1\n"
      "        return totl\n    }\n    fn b() -> Int {\n        let zero = 0\n"
      "        return zer\n    }\n}\n";
  Write("f.ko", two);
  CommandOutput dry = RunFix(env_, {.file = "f.ko"});
  EXPECT_EQ(dry.exit_code, 0);
  const std::size_t at = two.find("totl");
  EXPECT_EQ(dry.out,
            "{\n  \"applied\": false,\n  \"patches\": [\n    {\n"
            "      \"description\": \"rename to `total`\",\n"
            "      \"end_offset\": " +
                std::to_string(at + 4) +
                ",\n"
                "      \"file\": \"f.ko\",\n      \"replacement\": \"total\",\n"
                "      \"start_offset\": " +
                std::to_string(at) + "\n    }\n  ]\n}\n");
  EXPECT_EQ(*env_.ReadFile("f.ko"), two);  // untouched

  // The first run fixes the first error; the check after it reports the second.
  CommandOutput first = RunFix(env_, {.file = "f.ko", .apply = true});
  EXPECT_EQ(first.exit_code, 1);
  EXPECT_EQ(first.out, "Applied fix: rename to `total`\nApplied 1 fix(es) to `f.ko`\n");
  EXPECT_NE(first.err.find("undefined type `zer`"), std::string::npos) << first.err;
  CommandOutput second = RunFix(env_, {.file = "f.ko", .apply = true});
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out,
            "Applied fix: rename to `zero`\nApplied 1 fix(es) to `f.ko`\n"
            "Check passed for module `m`\n");
  CommandOutput third = RunFix(env_, {.file = "f.ko", .apply = true});
  EXPECT_EQ(third.exit_code, 0);
  EXPECT_EQ(third.out, "No auto-fixable errors found in `f.ko`\n");
}

TEST_F(CommandsTest, FixOfAParseErrorWithoutPatchFails) {
  Write("p.ko", "module m {\n    fn f( {\n}\n");
  CommandOutput r = RunFix(env_, {.file = "p.ko", .apply = true});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("parse error with no auto-fix available: ", 0), 0u) << r.err;
}

TEST_F(CommandsTest, FixOfATypoAppliesAndChecksClean) {
  // E0201 with a near name renames the use; after it the module checks clean.
  const std::string src =
      "module m {\n    meta { purpose: \"p\" }\n    fn main() -> Int {\n"
      "        let total = 1\n        return totl\n    }\n}\n";
  Write("m.ko", src);
  CommandOutput r = RunFix(env_, {.file = "m.ko", .apply = true});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "Applied fix: rename to `total`\nApplied 1 fix(es) to `m.ko`\n"
            "Check passed for module `m`\n");
  EXPECT_NE(env_.ReadFile("m.ko")->find("return total\n"), std::string::npos);
}

// Issue 17: the missing-field patch goes inside the literal, so the fixed file parses; the
// check after it reports the placeholder, not a parse error.
TEST_F(CommandsTest, FixApplyOfAMissingFieldWritesAFileThatParses) {
  const std::string src =
      "module m {\n    meta { purpose: \"p\" }\n    struct Point { x: Int, y: Int }\n"
      "    fn make() -> Point {\n        return Point { x: 1 }\n    }\n}\n";
  Write("s.ko", src);
  CommandOutput r = RunFix(env_, {.file = "s.ko", .apply = true});
  EXPECT_EQ(r.out, "Applied fix: add missing field `y`\nApplied 1 fix(es) to `s.ko`\n");
  EXPECT_EQ(*env_.ReadFile("s.ko"),
            "module m {\n    meta { purpose: \"p\" }\n    struct Point { x: Int, y: Int }\n"
            "    fn make() -> Point {\n        return Point { x: 1, y: TODO }\n    }\n}\n");
  // The placeholder is what is left to do.
  EXPECT_NE(r.err.find("undefined type `TODO`"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("expected"), std::string::npos) << r.err;
}

// Issue 17: when the first error's patch would leave a file that does not parse, `fix --apply`
// applies nothing, says why, and the file is left byte for byte as it was.
TEST_F(CommandsTest, FixApplyOfAWithheldPatchLeavesTheFileUntouched) {
  const std::string src =
      "module m {\n    meta { purpose: \"p\" }\n"
      "    fn parse(s: String) -> Result<Int, String> {\n        return Ok(1)\n    }\n"
      "    fn not_result() -> Int {\n        let v = parse(\"1\")?\n        return v\n    }\n}\n";
  Write("w.ko", src);
  CommandOutput dry = RunFix(env_, {.file = "w.ko"});
  EXPECT_EQ(dry.out, "No auto-fixable errors found in `w.ko`\n");
  CommandOutput r = RunFix(env_, {.file = "w.ko", .apply = true});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "No auto-fixable errors found in `w.ko`\n");
  EXPECT_EQ(r.err.rfind("note: E0224: return a Result by hand, then review the file: not offered "
                        "as an automatic fix because the patched file does not parse",
                        0),
            0u)
      << r.err;
  EXPECT_EQ(*env_.ReadFile("w.ko"), src);
}

// Every parse-error patch is verified too: appending the one `)` the parser asks for, where
// more is missing, would still not parse, so nothing is written.
TEST_F(CommandsTest, FixApplyOfAParseErrorThatOnePatchCannotMendWritesNothing) {
  const std::string src =
      "module m {\n    meta { purpose: \"p\" }\n    fn main() {\n        let x = (1 + (2\n";
  Write("e.ko", src);
  CommandOutput r = RunFix(env_, {.file = "e.ko", .apply = true});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not offered as an automatic fix because the patched file does not parse"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(*env_.ReadFile("e.ko"), src);
  // With only the module's brace missing the appended `}` mends it.
  const std::string one =
      "module m {\n    meta { purpose: \"p\" }\n    fn main() {\n        let x = 1\n    }\n";
  Write("e.ko", one);
  CommandOutput mended = RunFix(env_, {.file = "e.ko", .apply = true});
  EXPECT_EQ(mended.exit_code, 0) << mended.err;
  EXPECT_EQ(*env_.ReadFile("e.ko"), one + "\n}\n");
}

TEST_F(CommandsTest, MirAndRunCompileThenLowerThenRun) {
  Write("p.ko",
        "module p {\n    meta { purpose: \"p\" }\n    fn main() {\n"
        "        let xs = args()\n        println(f\"{list_length(xs)} {list_get(xs, 1)}\")\n"
        "        exit(7)\n    }\n}\n");
  CommandOutput run = RunRun(env_, {.file = "p.ko", .args = {"hi"}});
  EXPECT_EQ(run.exit_code, 7) << run.err;
  EXPECT_EQ(run.out, "2 hi\n");
  CommandOutput mir = RunMir(env_, {.file = "p.ko"});
  EXPECT_EQ(mir.exit_code, 0);
  EXPECT_NE(mir.out.find("name: \"main\""), std::string::npos);
  EXPECT_NE(mir.out.find("callee: \"exit\""), std::string::npos);

  // A program with type errors does not run; an unreadable file is exit 1.
  Write("bad.ko", kTypeError);
  CommandOutput bad = RunRun(env_, {.file = "bad.ko"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.out, "");
  EXPECT_NE(bad.err.find("E0200"), std::string::npos);
  EXPECT_EQ(RunMir(env_, {.file = "missing.ko"}).exit_code, 1);
}

TEST(VersionTextTest, NamesTheUpstreamRelease) {
  EXPECT_EQ(VersionText("kodoc").rfind("kodoc 1.14.1 (trove ", 0), 0u);
}

// Warnings inside imported modules (docs/kodo.md §4.3) are shown after the checked file's, each
// with the imported file's path, once each (`util` is imported twice but loaded once), in the
// text form and in --json-errors; the summary line names what was not checked.
TEST_F(CommandsTest, CheckShowsWarningsOfImportedModules) {
  ASSERT_TRUE(env_.CreateDir("app").ok());
  Write("app/util.ko",
        "module util {\n    meta { purpose: \"u\" }\n"
        "    pub fn pos(x: Int) -> Int\n        requires { x > 0 }\n    {\n        return x\n    "
        "}\n}\n");
  Write("app/mid.ko",
        "module mid {\n    import util\n    meta { purpose: \"m\" }\n"
        "    pub fn twice(x: Int) -> Int { return pos(x) * 2 }\n}\n");
  Write("app/main.ko",
        "module app {\n    import util\n    import mid\n    meta { purpose: \"a\" }\n"
        "    fn main() -> Int { return twice(pos(1)) }\n}\n");
  CommandOutput text = RunCheck(env_, {.file = "app/main.ko"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out, "Check passed for module `app` (not checked: contracts)\n");
  EXPECT_NE(text.err.find("warning[W0901]: not checked: contracts"), std::string::npos) << text.err;
  EXPECT_NE(text.err.find("  --> app/util.ko:3:9\n"), std::string::npos) << text.err;
  EXPECT_EQ(text.err.find("W0901"), text.err.rfind("W0901")) << "listed once: " << text.err;

  CommandOutput j = RunCheck(env_, {.file = "app/main.ko", .json_errors = true});
  EXPECT_EQ(j.exit_code, 0);
  const json parsed = json::parse(j.out);
  ASSERT_EQ(parsed["warnings"].size(), 1u) << j.out;
  EXPECT_EQ(parsed["warnings"][0]["code"], "W0901");
  EXPECT_EQ(parsed["warnings"][0]["span"]["file"], "app/util.ko");
  EXPECT_EQ(parsed["warnings"][0]["span"]["line"], 3);

  // The checked file's own warning comes first; the import's follows with its path.
  Write("app/own.ko",
        "module mine {\n    import util\n    meta { purpose: \"o\" }\n"
        "    fn f(x: Int) -> Int\n        requires { x > 1 }\n    {\n        return pos(x)\n    "
        "}\n}\n");
  CommandOutput both =
      RunCheck(env_, {.file = "app/own.ko", .json_errors = true, .contracts = "none"});
  const json b = json::parse(both.out);
  ASSERT_EQ(b["warnings"].size(), 2u) << both.out;
  EXPECT_EQ(b["warnings"][0]["span"]["file"], "app/own.ko");
  EXPECT_EQ(b["warnings"][1]["span"]["file"], "app/util.ko");
}

// Import resolution checks real paths (docs/kodo.md §4.3): an import that a symbolic link leads
// outside the checked file's directory is E0903 saying where it leads; a link that stays inside
// is followed. Real links in a temporary directory.
TEST(CheckImportsTest, SymlinkOutsideTheProgramDirectoryIsRefused) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "kodo_link_XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const std::filesystem::path top = tmpl;
  std::filesystem::create_directories(top / "prog" / "lib");
  std::filesystem::create_directories(top / "outside");
  const std::string module_text =
      "module secret {\n    meta { purpose: \"s\" }\n    pub fn s() -> Int { return 1 }\n}\n";
  base::PosixEnv env;
  ASSERT_TRUE(env.WriteFile((top / "outside" / "secret.ko").string(), module_text).ok());
  ASSERT_TRUE(env.WriteFile((top / "prog" / "lib" / "inner.ko").string(), module_text).ok());
  // A file link and a directory link that leave prog/, and a file link that stays inside.
  std::filesystem::create_symlink("../outside/secret.ko", top / "prog" / "secret.ko");
  std::filesystem::create_symlink("../outside", top / "prog" / "ext");
  std::filesystem::create_symlink("lib/inner.ko", top / "prog" / "inside.ko");
  const auto check = [&](const std::string& import) {
    const std::string main = (top / "prog" / "main.ko").string();
    EXPECT_TRUE(env.WriteFile(main, "module app {\n    import " + import +
                                        "\n    meta { purpose: \"a\" }\n"
                                        "    fn main() -> Int { return s() }\n}\n")
                    .ok());
    return RunCheck(env, {.file = main, .json_errors = true});
  };
  for (const std::string import : {"secret", "ext::secret"}) {
    SCOPED_TRACE(import);
    const CommandOutput out = check(import);
    EXPECT_EQ(out.exit_code, 1);
    const json j = json::parse(out.out);
    ASSERT_EQ(j["errors"].size(), 1u) << out.out;
    EXPECT_EQ(j["errors"][0]["code"], "E0903");
    const std::string suggestion = j["errors"][0]["suggestion"].get<std::string>();
    EXPECT_NE(suggestion.find("outside the program's directory"), std::string::npos) << suggestion;
    EXPECT_NE(suggestion.find("outside/secret.ko"), std::string::npos) << suggestion;
  }
  const CommandOutput inside = check("inside");
  EXPECT_EQ(inside.exit_code, 0) << inside.out;
  std::filesystem::remove_all(top);
}

}  // namespace
}  // namespace trove::kodo::cli

namespace trove::kodo::cli {
namespace {

// `kodoc check --contracts=MODE` (docs/kodo.md §7.2; spec §9.3, docs/kodo-contracts.md §1).
const std::string kContracts =
    "module c {\n    meta { purpose: \"contracts\" }\n"
    "    fn pos(x: Int) -> Int\n        requires { x > 0 }\n        ensures { result >= x }\n"
    "    {\n        return x\n    }\n    fn main() -> Int {\n        return pos(1)\n    }\n}\n";
const std::string kInvalidContract =
    "module c {\n    meta { purpose: \"contracts\" }\n"
    "    fn f(xs: List<Int>) -> Int\n        requires { list_length(xs) > 0 }\n"
    "    {\n        return 1\n    }\n}\n";

class ContractCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.WriteFile("c.ko", kContracts).ok());
    ASSERT_TRUE(env_.WriteFile("bad.ko", kInvalidContract).ok());
  }
  base::MemEnv env_;
};

TEST_F(ContractCommandsTest, RuntimeIsTheDefaultAndCountsEveryClause) {
  CommandOutput out = RunCheck(env_, {.file = "c.ko"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out,
            "Check passed for module `c`\n  contracts: 0 statically verified, 2 runtime checks\n");
  EXPECT_EQ(out.err, "");
}

TEST_F(ContractCommandsTest, UnknownModeWarnsAndFallsBackToRuntime) {
  CommandOutput out = RunCheck(env_, {.file = "c.ko", .contracts = "Strict"});
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.err, "warning: unknown contract mode `Strict`, falling back to `runtime`\n");
  EXPECT_NE(out.out.find("2 runtime checks"), std::string::npos);
}

TEST_F(ContractCommandsTest, NonePrintsNoSummary) {
  CommandOutput out = RunCheck(env_, {.file = "bad.ko", .contracts = "none"});
  EXPECT_EQ(out.exit_code, 0);
  // Nothing looked at the contracts, and the output says so (W0901, kodo/sema/unchecked.h).
  EXPECT_EQ(out.out, "Check passed for module `c` (not checked: contracts)\n");
}

TEST_F(ContractCommandsTest, StaticRefutationGoesToStderrOnlyAndFails) {
  for (bool as_json : {false, true}) {
    CommandOutput out =
        RunCheck(env_, {.file = "c.ko", .json_errors = as_json, .contracts = "static"});
    EXPECT_EQ(out.exit_code, 1);
    EXPECT_EQ(out.out, "");  // nothing on stdout, even with --json-errors
    EXPECT_NE(out.err.find("contract error: contract refuted at Span { start: "), std::string::npos)
        << out.err;
    EXPECT_NE(out.err.find("counter-example: x -> 0\n"), std::string::npos) << out.err;
    EXPECT_EQ(out.err.find("E03"), std::string::npos);  // no code in any output
  }
  // In `both` a refutation is a runtime check.
  CommandOutput both = RunCheck(env_, {.file = "c.ko", .contracts = "BOTH"});
  EXPECT_EQ(both.exit_code, 0);
  EXPECT_NE(both.out.find("0 statically verified, 2 runtime checks"), std::string::npos);
}

TEST_F(ContractCommandsTest, InvalidContractFailsInEveryModeButNone) {
  for (const char* mode : {"runtime", "recoverable", "static", "both", "prove"}) {
    CommandOutput out = RunCheck(env_, {.file = "bad.ko", .contracts = mode});
    EXPECT_EQ(out.exit_code, 1) << mode;
    EXPECT_EQ(out.out, "") << mode;
    EXPECT_NE(out.err.find("contract error: invalid contract expression at Span { start: "),
              std::string::npos)
        << mode << out.err;
  }
}

TEST_F(ContractCommandsTest, ProveReportsEachEnsuresClause) {
  CommandOutput out = RunCheck(env_, {.file = "c.ko", .contracts = "prove"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("  proved: ensures clause 1 of `pos` at Span { start: "),
            std::string::npos)
      << out.out;
  EXPECT_NE(out.out.find("  contracts: 1 statically verified, 1 runtime checks\n"),
            std::string::npos)
      << out.out;
}

}  // namespace
}  // namespace trove::kodo::cli
