// The Librarian MCP binding through the core's in-process client (no mocks): tools/list,
// bootstrap with progress, query with the cache, paged resources, and each bad input.
#include "librarian/server/librarian_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "librarian/crawl/path.h"
#include "librarian/testing/temp_dir.h"
#include "mcp/policy/confine.h"
#include "mcp/policy/rate_limit.h"
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

// Server options whose client paths are confined to `root` (created if missing), as
// `--allow-root root` would set them, with the consent-gated tools pre-approved as
// `--consent bootstrap --consent export_index` would (consent itself: mcp server_policy_test).
mcp::ServerOptions ConfinedTo(const std::string& root) {
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  mcp::ServerOptions options;
  options.consent = {"bootstrap", "export_index"};
  auto confiner = mcp::policy::PathConfiner::Make({root});
  if (confiner.ok()) {
    options.confiner = std::make_shared<const mcp::policy::PathConfiner>(*std::move(confiner));
  }
  return options;
}

// The full path of `program` in PATH, if there is one.
std::optional<std::string> FindInPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "";
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string candidate = std::string(rest.substr(0, colon)) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return std::nullopt;
}

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
  // The allowed root is the workspace itself: dir_'s outside/ and plain.txt lie beyond it.
  TestServer ts_{0, ConfinedTo(dir_.Abs("ws"))};
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
                                          "export_index", "run_audit", "get_context_pack_bundle"}));
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

TEST_F(ToolsTest, ACorruptStoreIsAnInternalErrorWithoutPaths) {
  // A store file that is not SQLite: the client learns that the server failed and gets a
  // reference; the path and SQLite's words stay in the operator's log.
  dir_.Write("ws/.librarian/librarian.sqlite", std::string(8192, 'x'));
  Json q = Call("query", {{"workspace", root_}, {"intent", "parse_config"}});
  ASSERT_TRUE(q.value("isError", false)) << q.dump();
  const std::string text = Text(q);
  EXPECT_THAT(text, HasSubstr("INTERNAL_ERROR"));
  EXPECT_THAT(text, HasSubstr("(ref "));
  EXPECT_THAT(text, ::testing::Not(HasSubstr(dir_.Abs(""))));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("librarian.sqlite")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("not a database")));
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

// Every workspace path a client sends goes through the server's allowed roots: traversal,
// encoded forms, absolute paths outside, symlinks out, NUL bytes and over-long paths are all
// refused, by both tools, and nothing is written outside the root.
TEST_F(ToolsTest, WorkspacePathsOutsideTheAllowedRootsAreRefused) {
  dir_.Symlink(dir_.Abs("outside"), "ws/escape");
  const std::vector<std::string> corpus = {
      root_ + "/..",
      root_ + "/../outside",
      root_ + "/src/../../outside",
      root_ + "/%2e%2e/outside",  // stays a literal (missing) name, never decoded
      root_ + "/%2e%2e",
      dir_.Abs("outside"),
      "/",
      "/etc",
      root_ + "/escape",  // a symlink out of the root
      root_ + "/escape/../../outside",
      root_ + std::string("\0/x", 3),  // NUL
      root_ + "/" + std::string(5000, 'a'),
      "../outside",
      "relative/path",
      "",
  };
  int refused = 0;
  for (const std::string& path : corpus) {
    for (const char* tool : {"bootstrap", "query"}) {
      Json args = {{"workspace", path}};
      if (std::string(tool) == "query") args["intent"] = "secret";
      Json r = Call(tool, args);
      if (r.value("isError", false) && !r.contains("structuredContent")) {
        ++refused;
        EXPECT_THAT(Text(r), HasSubstr("workspace")) << tool << " " << path.size();
        // The message names the problem, not the (possibly huge) path.
        EXPECT_LT(Text(r).size(), 400u) << tool;
      } else {
        ADD_FAILURE() << tool << " accepted a workspace outside the root: " << path.substr(0, 80)
                      << " -> " << r.dump().substr(0, 300);
      }
    }
  }
  EXPECT_EQ(refused, static_cast<int>(corpus.size() * 2));
  struct stat st {};
  EXPECT_NE(::stat(dir_.Abs("outside/.librarian").c_str(), &st), 0);
  EXPECT_NE(::stat(dir_.Abs(".librarian").c_str(), &st), 0);
  EXPECT_NE(::stat(dir_.Abs("ws/%2e%2e").c_str(), &st), 0);

  // A path that stays inside after `..` is accepted.
  Json ok = Call("bootstrap", {{"workspace", root_ + "/src/.."}});
  EXPECT_FALSE(ok.value("isError", false)) << ok.dump();
  EXPECT_TRUE(ok["structuredContent"]["success"].get<bool>());
}

// A workspace registered outside the allowed roots (e.g. by an operator's --workspace) is
// neither the default of query nor readable as a resource.
TEST_F(ToolsTest, RegisteredWorkspacesOutsideTheRootsAreNotRead) {
  Result<std::string> outside = crawl::CanonicalWorkspaceRoot(dir_.Abs("outside"));
  ASSERT_TRUE(outside.ok());
  const Workspaces::Entry entry = workspaces_.Register(*outside);
  Json q = Call("query", {{"intent", "secret"}});
  EXPECT_TRUE(q.value("isError", false)) << q.dump();
  EXPECT_THAT(Text(q), HasSubstr("outside the allowed roots"));
  for (const std::string& uri :
       {std::string("librarian://workspace/file-tree"), "librarian://" + entry.id + "/symbols"}) {
    Json response = client_.Request("resources/read", {{"uri", uri}});
    ASSERT_TRUE(response.contains("error")) << uri << " " << response.dump();
    EXPECT_THAT(response["error"].value("message", ""), HasSubstr("outside the allowed roots"));
  }
}

// Without any allowed root (the HTTP default when --allow-root is not given) every workspace
// path is refused.
TEST(ToolsNoRootsTest, EveryWorkspaceIsRefusedWithoutAllowedRoots) {
  librarian::testing::TempDir dir;
  dir.Write("ws/a.cc", "int a() { return 1; }\n");
  Workspaces workspaces;
  TestServer ts(0, mcp::ServerOptions{.consent = {"bootstrap"}});  // no confiner
  ServiceOptions options;
  options.ctags_program = "";
  ASSERT_TRUE(RegisterLibrarianTools(ts.server(), workspaces, options).ok());
  TestClient client(ts.server());
  client.Initialize();
  Json r = client.CallTool("bootstrap", {{"workspace", dir.Abs("ws")}});
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_TRUE(r["result"].value("isError", false));
  EXPECT_THAT(r["result"]["content"][0].value("text", ""), HasSubstr("--allow-root"));
  struct stat st {};
  EXPECT_NE(::stat(dir.Abs("ws/.librarian").c_str(), &st), 0);
}

// The "ctags" circuit breaker around bootstrap's ctags subprocess
// (docs/decisions/0052-breakers-around-dependencies.md): a ctags that fails on every file opens
// it after five bootstraps; the next bootstrap skips ctags without starting it and discloses
// that; once the open time has passed and ctags works again, half-open successes close it.
TEST(CtagsBreakerTest, OpensOnFailingCtagsSkipsItThenClosesWhenItRecovers) {
  std::optional<std::string> real = FindInPath("ctags");
  if (!real) GTEST_SKIP() << "ctags is not installed";
  librarian::testing::TempDir dir;
  dir.Write("ws/app.rb", "class Greeter\n  def greet\n    1\n  end\nend\n");
  const std::string healthy = dir.Abs("healthy");
  const std::string log = dir.Abs("ctags.log");
  // Probes (--version, --list-maps) always reach the real ctags; a tagging run fails until
  // `healthy` exists. Each tagging run is logged.
  dir.Write("fake-ctags",
            "#!/bin/sh\n"
            "case \"$1\" in --version|--list-maps) exec " +
                *real +
                " \"$@\";; esac\n"
                "echo run >> '" +
                log +
                "'\n"
                "if [ -e '" +
                healthy + "' ]; then exec " + *real +
                " \"$@\"; fi\n"
                "echo 'ctags: simulated failure' >&2\n"
                "exit 1\n");
  ASSERT_EQ(::chmod(dir.Abs("fake-ctags").c_str(), 0755), 0);
  const auto runs = [&] {
    std::ifstream in(log);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  };

  base::MemEnv clock;
  auto breakers = std::make_shared<mcp::policy::CircuitBreakers>(
      mcp::policy::CircuitBreakerOptions{.failure_threshold = 5,
                                         .failure_window_ms = 60'000,
                                         .open_ms = 30'000,
                                         .half_open_successes = 3},
      clock);
  mcp::ServerOptions server_options = ConfinedTo(dir.Abs("ws"));
  server_options.breakers = breakers;
  Workspaces workspaces;
  TestServer ts(0, server_options);
  ServiceOptions options;
  options.ctags_program = dir.Abs("fake-ctags");
  options.bootstrap_workers = 1;
  ASSERT_TRUE(RegisterLibrarianTools(ts.server(), workspaces, options).ok());
  TestClient client(ts.server());
  client.Initialize();
  const auto bootstrap = [&] {
    Json r = client.CallTool("bootstrap", {{"workspace", dir.Abs("ws")}, {"force", true}});
    EXPECT_TRUE(r.contains("result")) << r.dump();
    Json out = r["result"].value("structuredContent", Json::object());
    EXPECT_TRUE(out.value("success", false)) << r.dump();
    return out;
  };
  const auto skipped = [](const Json& out) {
    for (const Json& d : out.value("disclosures", Json::array())) {
      if (d.get<std::string>().rfind("ctags_skipped:", 0) == 0) return true;
    }
    return false;
  };
  mcp::policy::CircuitBreaker& breaker = breakers->For("ctags");

  for (int i = 1; i <= 5; ++i) {
    EXPECT_FALSE(skipped(bootstrap())) << i;
    EXPECT_EQ(runs(), i);
  }
  EXPECT_EQ(breaker.state(), mcp::policy::CircuitState::kOpen);
  // Open: ctags is not started, the file is still indexed (as text), and the report says so.
  Json open = bootstrap();
  EXPECT_TRUE(skipped(open)) << open.dump();
  EXPECT_EQ(runs(), 5);
  EXPECT_EQ(open["stats"]["filesDiscovered"], 1);

  // ctags recovers; after the open time, three successful half-open probes close the breaker.
  dir.Write("healthy", "");
  clock.AdvanceMicros(30'000'000);
  for (int i = 0; i < 3; ++i) {
    Json out = bootstrap();
    EXPECT_FALSE(skipped(out)) << i;
  }
  EXPECT_EQ(runs(), 8);
  EXPECT_EQ(breaker.state(), mcp::policy::CircuitState::kClosed);
}

}  // namespace
}  // namespace trove::librarian::server
