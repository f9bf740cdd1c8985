// The kodo-mcp tools through a real MCP session (mcp/testing): tools/list as upstream lists
// them, the result envelope of issue 5 decision 1, and the honest errors of the phases that do
// not exist yet.
#include "kodo/server/kodo_tools.h"

#include <gtest/gtest.h>

#include <string>

#include "kodo/driver/tools.h"
#include "mcp/testing/test_client.h"

namespace trove::kodo::server {
namespace {

using mcp::Json;
using mcp::testing::TestClient;
using mcp::testing::TestServer;

const char kValid[] =
    "module test {\n    meta { purpose: \"test\" }\n    fn main() -> Int {\n        return 42\n"
    "    }\n}\n";
const char kTypeError[] =
    "module test {\n    meta { purpose: \"test\" }\n    fn main() -> Int {\n        return true\n"
    "    }\n}\n";
const char kParseError[] = "this is not valid kodo at all!!!";

class KodoToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterKodoTools(ts_.server()).ok());
    client_.Initialize();
  }

  // Calls `tool` and returns the result object (failing the test on a protocol error).
  Json Call(const std::string& tool, const Json& arguments) {
    Json response = client_.CallTool(tool, arguments);
    EXPECT_TRUE(response.contains("result")) << mcp::Dump(response);
    return response.value("result", Json::object());
  }

  // Returns structuredContent after checking that content[0].text is the same object.
  Json Structured(const Json& result) {
    EXPECT_FALSE(result.value("isError", false)) << mcp::Dump(result);
    if (!result.contains("structuredContent") || !result.contains("content")) {
      ADD_FAILURE() << "no structuredContent: " << mcp::Dump(result);
      return Json::object();
    }
    const Json& structured = result["structuredContent"];
    Json mirror = mcp::ParseJson(result["content"][0]["text"].get<std::string>());
    EXPECT_EQ(mcp::Dump(mirror), mcp::Dump(structured));
    return structured;
  }

  TestServer ts_;
  TestClient client_{ts_.server()};
};

TEST_F(KodoToolsTest, ListsTheSevenToolsInUpstreamOrderWithUpstreamSchemas) {
  Json list = client_.Request("tools/list")["result"]["tools"];
  ASSERT_EQ(list.size(), 7u);
  const char* names[] = {"kodo.check", "kodo.describe", "kodo.explain",          "kodo.build",
                         "kodo.fix",   "kodo.annotate", "kodo.confidence_report"};
  for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(list[i]["name"], names[i]);
  EXPECT_EQ(list[0]["description"],
            "Type-check a Kōdo source file and return structured errors with repair plans");
  EXPECT_EQ(
      mcp::Dump(list[0]["inputSchema"]),
      R"j({"properties":{"filename":{"description":"Optional filename for error reporting",)j"
      R"j("type":"string"},"source":{"description":"Kōdo source code to check","type":"string"}},)j"
      R"j("required":["source"],"type":"object"})j");
  EXPECT_EQ(mcp::Dump(list[2]["inputSchema"]),
            R"j({"properties":{"code":{"description":"Error code (e.g. E0200)","type":"string"}},)j"
            R"j("required":["code"],"type":"object"})j");
  EXPECT_EQ(list[3]["description"],
            "Compile Kōdo source through the full pipeline (parse → type-check → contracts → "
            "desugar → MIR)");
  EXPECT_EQ(list[5]["inputSchema"]["properties"]["source"]["description"],
            "Kōdo source code to analyze for missing contracts");
  EXPECT_EQ(list[6]["inputSchema"]["required"], Json::array({"source"}));
  for (const Json& tool : list) {
    EXPECT_TRUE(tool["annotations"]["readOnlyHint"].get<bool>()) << tool["name"];
  }
}

TEST_F(KodoToolsTest, CheckOkTypeErrorsAndParseErrorAreSuccessfulCalls) {
  Json ok = Structured(Call("kodo.check", {{"source", kValid}, {"filename", "x.ko"}}));
  EXPECT_EQ(mcp::Dump(ok), R"j({"errors":[],"module":"test","status":"ok"})j");

  Json failed = Structured(Call("kodo.check", {{"source", kTypeError}}));
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["phase"], "types");
  ASSERT_EQ(failed["errors"].size(), 1u);
  EXPECT_EQ(failed["errors"][0]["code"], "E0200");

  Json parse = Structured(Call("kodo.check", {{"source", kParseError}}));
  EXPECT_EQ(parse["status"], "failed");
  EXPECT_EQ(parse["phase"], "parse");
  EXPECT_EQ(parse["errors"][0]["code"], "E0100");
  EXPECT_TRUE(parse["errors"][0].contains("span"));
}

TEST_F(KodoToolsTest, MissingOrMistypedArgumentsAreToolErrors) {
  for (const char* tool : {"kodo.check", "kodo.describe", "kodo.build", "kodo.fix", "kodo.annotate",
                           "kodo.confidence_report"}) {
    Json r = Call(tool, Json::object());
    EXPECT_TRUE(r.value("isError", false)) << tool;
    EXPECT_NE(r["content"][0]["text"].get<std::string>().find("source"), std::string::npos) << tool;
  }
  Json r = Call("kodo.explain", {{"code", 200}});
  EXPECT_TRUE(r.value("isError", false));
  EXPECT_NE(r["content"][0]["text"].get<std::string>().find("arguments.code"), std::string::npos);
}

TEST_F(KodoToolsTest, BuildLowersToMirAndConfidenceReportAnswers) {
  Json build = Structured(Call("kodo.build", {{"source", kValid}}));
  EXPECT_EQ(build["phase"], "mir");
  EXPECT_EQ(build["status"], "ok");
  EXPECT_EQ(build["function_count"], 1);
  // A program with errors still gets upstream's failure object from build.
  Json failed = Structured(Call("kodo.build", {{"source", kTypeError}}));
  EXPECT_EQ(failed["phase"], "types");

  Json report = Structured(Call("kodo.confidence_report", {{"source", kValid}}));
  EXPECT_EQ(report["status"], "ok");
  EXPECT_EQ(report["overall_confidence"], 1.0);
  Json parse = Structured(Call("kodo.confidence_report", {{"source", kParseError}}));
  EXPECT_EQ(parse["phase"], "parse");
}

// kodo.build lowers and never runs the program (docs/decisions/0067): a `main` that never ends
// and would print does not delay or change the answer.
TEST_F(KodoToolsTest, BuildDoesNotRunTheProgram) {
  const char* forever =
      "module spin {\n meta { purpose: \"spin\" }\n"
      " fn main() { println(\"ran\")\n while true { } }\n}\n";
  Json build = Structured(Call("kodo.build", {{"source", forever}}));
  EXPECT_EQ(build["status"], "ok");
  EXPECT_EQ(build["function_count"], 1);
  EXPECT_EQ(build.dump().find("ran"), std::string::npos);
}

TEST_F(KodoToolsTest, ExplainDescribeAnnotateAndFix) {
  Json explain = Structured(Call("kodo.explain", {{"code", "E0200"}}));
  EXPECT_EQ(explain["title"], "Type Error");
  EXPECT_EQ(explain["code"], "E0200");

  Json describe = Structured(Call("kodo.describe", {{"source", kValid}}));
  EXPECT_EQ(describe["module"], "test");
  EXPECT_EQ(describe["meta"], Json({{"purpose", "test"}}));
  EXPECT_EQ(describe["functions"][0]["return_type"], "Named(\"Int\")");

  Json annotate = Structured(Call("kodo.annotate", {{"source", kValid}}));
  EXPECT_EQ(annotate["status"], "ok");
  EXPECT_EQ(annotate["summary"]["total_functions"], 0);

  Json fix_ok = Structured(Call("kodo.fix", {{"source", kValid}}));
  EXPECT_EQ(mcp::Dump(fix_ok),
            R"j({"message":"no errors to fix","patches":[],"repair_plans":[],"status":"ok"})j");
  const std::string typo =
      "module m {\n    meta { purpose: \"p\" }\n    fn main() -> Int {\n"
      "        let total = 1\n        return totl\n    }\n}\n";
  Json fix = Structured(Call("kodo.fix", {{"source", typo}}));
  EXPECT_EQ(fix["status"], "errors_found");
  EXPECT_EQ(fix["error_count"], 1);
  ASSERT_EQ(fix["patches"].size(), 1u);
  EXPECT_EQ(fix["patches"][0]["error_code"], "E0201");
  EXPECT_EQ(fix["patches"][0]["replacement"], "total");
}

// Confinement (docs/decisions/0048-mcp-policy-layer.md): no Kōdo tool takes a path. Each takes
// source text (or an error code); kodo.check's `filename` is a label that is never opened. So
// the traversal corpus in `filename` changes nothing and reaches no file, even on a server
// with no allowed roots at all (this fixture's), where every client path would be refused.
TEST_F(KodoToolsTest, NoToolTakesAPathAndFilenameIsNeverOpened) {
  Json list = client_.Request("tools/list")["result"]["tools"];
  for (const Json& tool : list) {
    for (const auto& [name, property] : tool["inputSchema"]["properties"].items()) {
      EXPECT_TRUE(name == "source" || name == "code" || name == "filename")
          << tool["name"] << " takes " << name;
    }
  }
  const std::string expected = mcp::Dump(Structured(Call("kodo.check", {{"source", kValid}})));
  for (const std::string& filename :
       {std::string("../../../../etc/passwd"), std::string("%2e%2e/%2e%2e/etc/shadow"),
        std::string("/etc/passwd"), std::string("a\0b", 3), std::string(5000, 'a')}) {
    Json r = Structured(Call("kodo.check", {{"source", kValid}, {"filename", filename}}));
    EXPECT_EQ(mcp::Dump(r), expected) << filename.substr(0, 40);
  }
}

}  // namespace
}  // namespace trove::kodo::server
