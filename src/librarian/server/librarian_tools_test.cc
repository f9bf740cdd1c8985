// The Librarian MCP binding through the core's in-process client (no mocks): tools/list,
// bootstrap with progress, query with the cache, paged resources, and each bad input.
#include "librarian/server/librarian_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <set>
#include <string>

#include "librarian/crawl/path.h"
#include "librarian/testing/temp_dir.h"
#include "mcp/testing/test_client.h"

namespace trove::librarian::server {
namespace {

using mcp::Json;
using mcp::testing::NotificationsNamed;
using mcp::testing::TestClient;
using mcp::testing::TestServer;
using ::testing::HasSubstr;

constexpr const char* kConfig = R"(// Reads the settings file and fills the table of options.
int parse_config(const char* path) {
  return read_options(path);
}

int read_options(const char* path) {
  return 1;
}
)";

constexpr const char* kServer = R"(#include "config.h"
void start_server() {
  parse_config("a.conf");
}
)";

class ToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("ws/src/config.cc", kConfig);
    dir_.Write("ws/src/server.cc", kServer);
    dir_.Write("ws/lib/util.py", "def helper():\n    \"\"\"Help.\"\"\"\n    return 1\n");
    dir_.Write("outside/secret.cc", "int secret() { return 42; }\n");
    dir_.Write("plain.txt", "not a directory\n");
    root_ = dir_.Abs("ws");
    ServiceOptions options;
    options.ctags_program = "";  // the fixture's languages all have grammars
    options.bootstrap_workers = 1;
    ASSERT_TRUE(RegisterLibrarianTools(ts_.server(), workspaces_, options).ok());
    client_.Initialize();
  }

  Json Call(const std::string& tool, const Json& args, const Json& meta = nullptr) {
    Json response = client_.CallTool(tool, args, meta);
    EXPECT_TRUE(response.contains("result")) << response.dump();
    return response.value("result", Json::object());
  }
  static std::string Text(const Json& result) {
    if (!result.contains("content") || result["content"].empty()) return "";
    return result["content"][0].value("text", std::string());
  }
  // Asserts an isError result whose text names `field`.
  void ExpectToolError(const std::string& tool, const Json& args, const std::string& field) {
    Json r = Call(tool, args);
    EXPECT_TRUE(r.value("isError", false)) << tool << " " << args.dump() << " -> " << r.dump();
    EXPECT_THAT(Text(r), HasSubstr(field)) << args.dump();
    EXPECT_FALSE(r.contains("structuredContent"));
  }
  void Bootstrap() {
    Json r = Call("bootstrap", {{"workspace", root_}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    ASSERT_TRUE(r["structuredContent"]["success"].get<bool>()) << r.dump();
  }
  Json ReadResource(const std::string& uri) {
    Json response = client_.Request("resources/read", {{"uri", uri}});
    EXPECT_TRUE(response.contains("result")) << response.dump();
    if (!response.contains("result")) return Json();
    return Json::parse(response["result"]["contents"][0]["text"].get<std::string>());
  }

  librarian::testing::TempDir dir_;
  std::string root_;
  Workspaces workspaces_;
  TestServer ts_;
  TestClient client_{ts_.server()};
};

TEST_F(ToolsTest, ListsBothToolsWithSchemasAndAnnotations) {
  Json list = client_.Request("tools/list")["result"]["tools"];
  std::set<std::string> names;
  for (const Json& t : list) {
    names.insert(t["name"].get<std::string>());
    EXPECT_TRUE(t.contains("outputSchema")) << t["name"];
    EXPECT_EQ(t["inputSchema"]["additionalProperties"], false);
    if (t["name"] == "query") {
      EXPECT_EQ(t["annotations"]["readOnlyHint"], true);
      EXPECT_THAT(t["description"].get<std::string>(), HasSubstr("not probabilities"));
      EXPECT_TRUE(t["inputSchema"]["properties"].contains("intentType"));
      EXPECT_TRUE(t["inputSchema"]["properties"].contains("affectedFiles"));
    } else if (t["name"] == "bootstrap") {
      EXPECT_EQ(t["annotations"]["readOnlyHint"], false);
      EXPECT_TRUE(t["inputSchema"]["properties"].contains("fileTimeoutPolicy"));
    }
  }
  EXPECT_EQ(names, (std::set<std::string>{"bootstrap", "query", "verify_claim", "diff_runs",
                                          "export_index"}));
}

TEST_F(ToolsTest, BootstrapReportsProgressThenQueryAnswersAndCaches) {
  const std::size_t mark = client_.channel().size();
  Json r = Call("bootstrap", {{"workspace", root_}}, {{"progressToken", "boot-1"}});
  ASSERT_FALSE(r.value("isError", false)) << r.dump();
  const Json& out = r["structuredContent"];
  EXPECT_TRUE(out["success"].get<bool>());
  EXPECT_EQ(out["stats"]["filesDiscovered"], 3);
  EXPECT_GE(out["stats"]["functionsIndexed"].get<int>(), 4);
  EXPECT_EQ(out["runId"].get<std::string>().rfind("run_", 0), 0u);
  std::vector<Json> messages = client_.Messages();
  messages.erase(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(mark));
  std::vector<Json> progress = NotificationsNamed(messages, "notifications/progress");
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back()["params"]["progressToken"], "boot-1");
  EXPECT_EQ(progress.back()["params"]["progress"], 3);

  Json q =
      Call("query", {{"workspace", root_}, {"intent", "parse_config"}, {"includeEvidence", true}});
  ASSERT_FALSE(q.value("isError", false)) << q.dump();
  const Json& qo = q["structuredContent"];
  ASSERT_FALSE(qo["packs"].empty());
  const Json& top = qo["packs"][0];
  EXPECT_EQ(top["targetId"], "fn:src/config.cc::parse_config");
  EXPECT_EQ(top.size(), 7u);  // exactly the seven contract fields
  EXPECT_EQ(qo["cacheHit"], false);
  EXPECT_EQ(qo["evidenceByPack"][0]["packId"], top["packId"]);
  EXPECT_EQ(qo["evidenceByPack"][0]["evidence"][0]["startLine"], 2);
  EXPECT_EQ(qo["evidenceByPack"][0]["evidence"][0]["endLine"], 4);
  EXPECT_EQ(qo["ranking"][0]["packId"], top["packId"]);
  EXPECT_EQ(qo["ranking"][0]["signals"]["symbol"], 1.0);
  EXPECT_THAT(qo["disclosures"][0].get<std::string>(), HasSubstr("confidence_uncalibrated:"));
  // The same query again (default workspace this time resolves to the same one) hits.
  Json again =
      Call("query", {{"workspace", root_}, {"intent", "parse_config"}, {"includeEvidence", true}});
  EXPECT_EQ(again["structuredContent"]["cacheHit"], true);
  Json by_default = Call("query", {{"intent", "parse_config"}, {"includeEvidence", true}});
  EXPECT_EQ(by_default["structuredContent"]["cacheHit"], true);
  // A re-bootstrap drops the cached answers.
  Bootstrap();
  Json after = Call("query", {{"intent", "parse_config"}, {"includeEvidence", true}});
  EXPECT_EQ(after["structuredContent"]["cacheHit"], false);
}

TEST_F(ToolsTest, QueryBeforeBootstrapIsADomainOutcome) {
  Json q = Call("query", {{"workspace", root_}, {"intent", "parse_config"}});
  ASSERT_FALSE(q.value("isError", false)) << q.dump();
  const Json& out = q["structuredContent"];
  EXPECT_TRUE(out["packs"].empty());
  EXPECT_EQ(out["errorCode"], "RESOURCE_NOT_FOUND");
  bool bootstrap_required = false;
  for (const Json& d : out["disclosures"]) {
    bootstrap_required |= d.get<std::string>().rfind("bootstrap_required:", 0) == 0;
  }
  EXPECT_TRUE(bootstrap_required);
  // Reading a query never creates the store.
  struct stat st {};
  EXPECT_NE(::stat((root_ + "/.librarian/librarian.sqlite").c_str(), &st), 0);
}

TEST_F(ToolsTest, BadInputIsAnErrorNamingTheField) {
  // Workspaces.
  ExpectToolError("bootstrap", {{"workspace", "relative/path"}}, "workspace");
  ExpectToolError("bootstrap", {{"workspace", dir_.Abs("missing")}}, "workspace");
  ExpectToolError("bootstrap", {{"workspace", dir_.Abs("plain.txt")}}, "workspace");
  ExpectToolError("query", {{"workspace", dir_.Abs("missing")}, {"intent", "x"}}, "workspace");
  ExpectToolError("query", {{"workspace", dir_.Abs("plain.txt")}, {"intent", "x"}}, "workspace");
  // Globs and schema violations.
  ExpectToolError("bootstrap", {{"workspace", root_}, {"exclude", {"ok/**", "[a"}}}, "exclude[1]");
  ExpectToolError("bootstrap", {{"workspace", root_}, {"maxFiles", 0}}, "maxFiles");
  ExpectToolError("bootstrap", {{"workspace", root_}, {"fileTimeoutPolicy", "never"}},
                  "fileTimeoutPolicy");
  ExpectToolError("bootstrap", {{"workspace", root_}, {"bogus", 1}}, "bogus");
  Bootstrap();
  // Intents.
  ExpectToolError("query", {{"intent", ""}}, "intent");
  ExpectToolError("query", {{"intent", "   "}}, "intent");
  ExpectToolError("query", {{"intent", std::string(2001, 'x')}}, "intent");
  ExpectToolError("query", {{"intent", "x"}, {"depth", "L9"}}, "depth");
  ExpectToolError("query", {{"intent", "x"}, {"minConfidence", 2}}, "minConfidence");
  // affectedFiles outside the workspace: traversal, absolute, a symlink out.
  dir_.Symlink(dir_.Abs("outside"), "ws/escape");
  ExpectToolError("query", {{"intent", "secret"}, {"affectedFiles", {"../outside/secret.cc"}}},
                  "affectedFiles[0]");
  ExpectToolError(
      "query",
      {{"intent", "secret"}, {"affectedFiles", {"src/config.cc", dir_.Abs("outside/secret.cc")}}},
      "affectedFiles[1]");
  ExpectToolError("query", {{"intent", "secret"}, {"affectedFiles", {"escape/secret.cc"}}},
                  "affectedFiles[0]");
  // Nothing outside the workspace was indexed: the symlinked directory is not followed.
  Bootstrap();
  Json q = Call("query", {{"intent", "secret"}, {"minConfidence", 0}});
  for (const Json& p : q["structuredContent"]["packs"]) {
    EXPECT_THAT(p["targetId"].get<std::string>(), ::testing::Not(HasSubstr("secret")));
  }
}

TEST_F(ToolsTest, ResourcesArePagedWithCursors) {
  Bootstrap();
  Json tree = ReadResource("librarian://workspace/file-tree");
  EXPECT_EQ(tree["counts"]["files"], 3);
  EXPECT_EQ(tree["counts"]["directories"], 2);
  EXPECT_FALSE(tree.contains("nextCursor"));
  EXPECT_EQ(tree["workspaceId"], WorkspaceId(*crawl::CanonicalWorkspaceRoot(root_)));

  std::set<std::string> seen;
  std::string uri = "librarian://workspace/file-tree?limit=1";
  for (int pages = 0; pages < 10; ++pages) {
    Json page = ReadResource(uri);
    std::vector<const Json*> stack = {&page["root"]};
    while (!stack.empty()) {
      const Json* n = stack.back();
      stack.pop_back();
      if ((*n)["type"] == "file") {
        EXPECT_TRUE(seen.insert((*n)["path"]).second);
      }
      if (n->contains("children")) {
        for (const Json& c : (*n)["children"]) stack.push_back(&c);
      }
    }
    if (!page.contains("nextCursor")) break;
    uri = "librarian://workspace/file-tree?cursor=" + page["nextCursor"].get<std::string>() +
          "&limit=1";
  }
  EXPECT_EQ(seen, (std::set<std::string>{"lib/util.py", "src/config.cc", "src/server.cc"}));

  // Symbols by workspace id, two per page.
  std::set<std::string> symbols;
  uri = "librarian://" + tree["workspaceId"].get<std::string>() + "/symbols?limit=2";
  int pages = 0;
  for (; pages < 20; ++pages) {
    Json page = ReadResource(uri);
    EXPECT_LE(page["symbols"].size(), 2u);
    for (const Json& s : page["symbols"]) EXPECT_TRUE(symbols.insert(s["id"]).second);
    if (!page.contains("nextCursor")) break;
    uri = "librarian://" + tree["workspaceId"].get<std::string>() +
          "/symbols?limit=2&cursor=" + page["nextCursor"].get<std::string>();
  }
  EXPECT_GE(pages, 1);
  EXPECT_TRUE(symbols.count("fn:src/config.cc::parse_config"));
  EXPECT_TRUE(symbols.count("fn:lib/util.py::helper"));

  // Bad cursors and limits, unknown kinds and workspaces.
  for (const std::string bad :
       {"librarian://workspace/symbols?cursor=zzz", "librarian://workspace/symbols?limit=0",
        "librarian://workspace/symbols?limit=10001", "librarian://workspace/symbols?foo=1"}) {
    Json response = client_.Request("resources/read", {{"uri", bad}});
    EXPECT_TRUE(response.contains("error")) << bad << " " << response.dump();
  }
  for (const std::string missing :
       {"librarian://workspace/nothing", "librarian://ws_0000000000000000/symbols"}) {
    Json response = client_.Request("resources/read", {{"uri", missing}});
    ASSERT_TRUE(response.contains("error")) << missing;
    EXPECT_EQ(response["error"]["code"], -32002) << missing;
  }
}

}  // namespace
}  // namespace trove::librarian::server
