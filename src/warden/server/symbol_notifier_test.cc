// The live symbol resources of `warden mcp` on PostgreSQL (symbol_notifier.h) and the KB pool's
// handling of a server that goes away, in process: two MCP servers on one database (a name
// proposed through one is notified to a client subscribed on the other, and reading the
// resource shows it with its provenance), the feed behind `warden://symbols`, the URI form, and
// a private scratch server stopped and restarted under a running MCP server. Runs on the ctest
// fixture "pg".
#include "warden/server/symbol_notifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "base/env.h"
#include "base/testing/pg_server.h"
#include "mcp/testing/test_client.h"
#include "warden/kb/kb.h"
#include "warden/kb/testing/kb_test_peer.h"
#include "warden/server/warden_tools.h"

namespace trove::warden::server {
namespace {

using base::testing::PgDatabase;
using base::testing::PgScratchServer;
using kb::testing::MakeFunctions;
using kb::testing::MakeVersion;
using mcp::Json;
using mcp::testing::NotificationsNamed;
using mcp::testing::TestClient;
using mcp::testing::TestServer;
using ::testing::HasSubstr;
using ::testing::Not;

// A bound on waits for what must happen; never reached when the code works.
constexpr std::chrono::milliseconds kPatience{60'000};

TEST(SymbolUriTest, EncodesWhatAUriVariableCannotHold) {
  const std::string plain = "w1:0123456789abcdef0123456789abcdef";
  EXPECT_EQ(SymbolUri(plain), "warden://symbols/" + plain);
  EXPECT_EQ(SymbolUri(plain + "/t1:00ff"), "warden://symbols/" + plain + "%2Ft1:00ff");
  EXPECT_EQ(SymbolUri("import:env.a b%"), "warden://symbols/import:env.a%20b%25");
  for (const std::string& id : {plain, plain + "/t2:1234", std::string("import:m.\xc3\xa9/x?#")}) {
    const std::string uri = SymbolUri(id);
    // The variable of the template is everything after the prefix, and holds no '/'.
    const std::string var = uri.substr(kSymbolUriPrefix.size());
    EXPECT_EQ(var.find('/'), std::string::npos) << uri;
    auto decoded = DecodeStableId(var);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, id);
  }
  // Upper and lower case escapes decode; malformed ones are refused.
  EXPECT_EQ(*DecodeStableId("a%2fb%2Fc"), "a/b/c");
  for (const char* bad : {"a%", "a%2", "a%G0", "%zz"}) {
    EXPECT_EQ(DecodeStableId(bad).status().code(), base::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(SymbolFeedTest, KeepsTheRecentChangesNumberedAndMarksResets) {
  SymbolFeed feed(3);
  Json empty = feed.Snapshot();
  EXPECT_EQ(empty["sequence"], 0);
  EXPECT_TRUE(empty["reset_sequence"].is_null());
  EXPECT_EQ(empty["listening"], false);
  EXPECT_TRUE(empty["changes"].empty());

  EXPECT_EQ(feed.Record({.stable_ids = {"w1:a", "w1:b"}}), 1u);
  EXPECT_EQ(feed.Record({.everything = true}), 2u);
  EXPECT_EQ(feed.Record({.stable_ids = {"w1:c", "w1:d/t1:e"}}), 3u);
  feed.SetListening(true);
  Json s = feed.Snapshot();
  EXPECT_EQ(s["sequence"], 3);
  EXPECT_EQ(s["reset_sequence"], 2);
  EXPECT_EQ(s["listening"], true);
  // At most three, oldest first.
  ASSERT_EQ(s["changes"].size(), 3u);
  EXPECT_EQ(s["changes"][0],
            (Json{{"sequence", 1}, {"stable_id", "w1:b"}, {"uri", "warden://symbols/w1:b"}}));
  EXPECT_EQ(s["changes"][2]["uri"], "warden://symbols/w1:d%2Ft1:e");
  EXPECT_EQ(s["changes"][2]["sequence"], 3);
}

// Waits until the watcher of a notifier listens (its on_connection hook said OK `times` times).
class ListenLatch {
 public:
  kb::WatchOptions Options() {
    kb::WatchOptions options;
    options.on_connection = [this](const Status& status) {
      std::lock_guard<std::mutex> lock(mu_);
      (status.ok() ? ok_ : failed_)++;
      cv_.notify_all();
    };
    return options;
  }
  bool WaitListening(int times) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kPatience, [&] { return ok_ >= times; });
  }
  bool WaitFailed() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kPatience, [&] { return failed_ > 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int ok_ = 0;
  int failed_ = 0;
};

// One `warden mcp` in process on the KB at `url`: pool, tools, feed and notifier.
class McpOnKb {
 public:
  explicit McpOnKb(base::Env& env, const std::string& url)
      : pool_(env, url, 4), ts_(2), logger_(base::LogLevel::kOff) {
    WardenToolOptions options;
    options.max_concurrent_passes = 1;
    options.symbol_feed = &feed_;
    Status s = RegisterWardenTools(ts_.server(), pool_, agents::AgentConfig{}, options);
    EXPECT_TRUE(s.ok()) << s.ToString();
    auto started = SymbolNotifier::Start(ts_.server(), feed_, url, logger_, latch_.Options());
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (started.ok()) notifier_ = std::move(started).value();
  }
  ~McpOnKb() { notifier_.reset(); }

  mcp::Server& server() { return ts_.server(); }
  ListenLatch& latch() { return latch_; }
  SymbolFeed& feed() { return feed_; }

 private:
  KbPool pool_;
  TestServer ts_;
  base::Logger logger_;
  SymbolFeed feed_;
  ListenLatch latch_;
  std::unique_ptr<SymbolNotifier> notifier_;
};

// True when `messages` hold notifications/resources/updated for `uri`.
bool HasUpdate(const std::vector<Json>& messages, const std::string& uri) {
  for (const Json& n : NotificationsNamed(messages, "notifications/resources/updated")) {
    if (n["params"]["uri"] == uri) return true;
  }
  return false;
}

// A KB at `url` holding one version of three functions; returns their stable_ids.
std::vector<std::string> MakeKb(base::Env& env, const std::string& url) {
  auto kb = kb::Kb::Open(env, url, kb::KbOptions{.create_if_missing = true, .project = "p"});
  EXPECT_TRUE(kb.ok()) << kb.status().ToString();
  if (!kb.ok()) return {};
  const auto functions = MakeFunctions(0, 3);
  auto r = (*kb)->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 0, 3), functions);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::string> ids;
  for (const auto& f : functions) ids.push_back(f.stable_id);
  return ids;
}

Json ReadJson(TestClient& client, const std::string& uri) {
  Json r = client.Request("resources/read", Json{{"uri", uri}});
  if (!r.contains("result")) {
    ADD_FAILURE() << r.dump();
    return nullptr;
  }
  return Json::parse(r["result"]["contents"][0]["text"].get<std::string>());
}

TEST(SymbolResourcesTest, ANameSetThroughOneServerIsNotifiedAndReadThroughTheOther) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  base::PosixEnv env;
  const std::vector<std::string> ids = MakeKb(env, db.url());
  ASSERT_EQ(ids.size(), 3u);

  McpOnKb one(env, db.url());
  McpOnKb two(env, db.url());
  ASSERT_TRUE(one.latch().WaitListening(1));
  ASSERT_TRUE(two.latch().WaitListening(1));

  TestClient a(one.server(), "a");
  a.Initialize();
  TestClient b(two.server(), "b");
  Json init = b.Initialize();
  EXPECT_EQ(init["result"]["capabilities"]["resources"]["subscribe"], true) << init.dump();
  Json list = b.Request("resources/list");
  EXPECT_THAT(list.dump(), HasSubstr("\"uri\":\"warden://symbols\""));
  Json templates = b.Request("resources/templates/list");
  EXPECT_THAT(templates.dump(), HasSubstr("warden://symbols/{stable_id}"));

  const std::string uri = SymbolUri(ids[1]);
  EXPECT_EQ(b.Request("resources/subscribe", Json{{"uri", uri}})["result"], Json::object());
  EXPECT_EQ(b.Request("resources/subscribe", Json{{"uri", "warden://symbols"}})["result"],
            Json::object());
  // Unnamed yet: null.
  EXPECT_TRUE(ReadJson(b, uri)["symbol"].is_null());

  Json proposed = a.CallTool(
      "propose_symbol", {{"stable_id", ids[1]}, {"name", "decode_frame"}, {"confidence", 0.7}});
  ASSERT_EQ(proposed["result"]["structuredContent"]["written"], true) << proposed.dump();

  ASSERT_TRUE(b.channel().WaitUntil([&](const std::vector<Json>& m) { return HasUpdate(m, uri); },
                                    kPatience));
  ASSERT_TRUE(b.channel().WaitUntil(
      [&](const std::vector<Json>& m) { return HasUpdate(m, "warden://symbols"); }, kPatience));
  const Json symbol = ReadJson(b, uri)["symbol"];
  EXPECT_EQ(symbol["name"], "decode_frame");
  EXPECT_EQ(symbol["provenance"], "agent");
  EXPECT_EQ(symbol["confidence"], 0.7);
  ASSERT_EQ(symbol["evidence"].size(), 1u);
  EXPECT_EQ(symbol["evidence"][0]["actor"], "agent:mcp");
  EXPECT_EQ(symbol["evidence"][0]["accepted"], true);
  // The same through get_symbol.
  EXPECT_EQ(b.CallTool("get_symbol",
                       {{"stable_id", ids[1]}})["result"]["structuredContent"]["symbol"]["name"],
            "decode_frame");
  // The feed names it.
  const Json feed = ReadJson(b, "warden://symbols");
  EXPECT_EQ(feed["listening"], true);
  ASSERT_FALSE(feed["changes"].empty());
  EXPECT_EQ(feed["changes"].back()["stable_id"], ids[1]);
  EXPECT_EQ(feed["changes"].back()["uri"], uri);
  // No notification for a symbol not subscribed; the server that wrote tells its own
  // subscribers too (it heard its own write through the database).
  EXPECT_FALSE(HasUpdate(b.Messages(), SymbolUri(ids[2])));
  EXPECT_TRUE(
      a.Request("resources/subscribe", Json{{"uri", SymbolUri(ids[2])}}).contains("result"));
  ASSERT_FALSE(
      a.CallTool("propose_symbol", {{"stable_id", ids[2]}, {"name", "emit"}})["result"].value(
          "isError", false));
  ASSERT_TRUE(a.channel().WaitUntil(
      [&](const std::vector<Json>& m) { return HasUpdate(m, SymbolUri(ids[2])); }, kPatience));

  // A malformed escape is an invalid read, not a crash.
  Json bad = b.Request("resources/read", Json{{"uri", "warden://symbols/w1:%zz"}});
  EXPECT_TRUE(bad.contains("error")) << bad.dump();
}

TEST(SymbolResourcesTest, ASqliteKbHasNoSymbolResources) {
  base::testing::TempDir dir("warden_symbols_sqlite");
  base::PosixEnv env;
  const std::vector<std::string> ids = MakeKb(env, dir.Abs("kb.db"));
  ASSERT_FALSE(ids.empty());
  KbPool pool(env, dir.Abs("kb.db"), 2);
  TestServer ts(2);
  ASSERT_TRUE(RegisterWardenTools(ts.server(), pool, agents::AgentConfig{},
                                  WardenToolOptions{.max_concurrent_passes = 1})
                  .ok());
  TestClient c(ts.server());
  Json init = c.Initialize();
  EXPECT_FALSE(init["result"]["capabilities"]["resources"].contains("subscribe")) << init.dump();
  EXPECT_THAT(c.Request("resources/list").dump(), Not(HasSubstr("warden://symbols")));
  EXPECT_TRUE(c.Request("resources/read", Json{{"uri", SymbolUri(ids[0])}}).contains("error"));
  SymbolFeed feed;
  const base::Logger logger(base::LogLevel::kOff);
  auto notifier = SymbolNotifier::Start(ts.server(), feed, dir.Abs("kb.db"), logger);
  EXPECT_EQ(notifier.status().code(), base::StatusCode::kUnsupported);
}

// A private server under a running MCP server: stopped, a tool call is a clear, retryable
// error that names neither the URL nor SQL, and the process stays up; started again, the next
// call works and subscribers are told that anything may have changed.
TEST(SymbolResourcesTest, AServerThatGoesAwayIsAClearErrorAndComesBack) {
  PgScratchServer server;
  ASSERT_TRUE(server.ok());
  base::PosixEnv env;
  const std::vector<std::string> ids = MakeKb(env, server.url());
  ASSERT_EQ(ids.size(), 3u);
  McpOnKb mcp(env, server.url());
  ASSERT_TRUE(mcp.latch().WaitListening(1));
  TestClient c(mcp.server());
  c.Initialize();
  ASSERT_TRUE(
      c.Request("resources/subscribe", Json{{"uri", SymbolUri(ids[0])}}).contains("result"));
  Json ok = c.CallTool("list_versions", Json::object());
  ASSERT_EQ(ok["result"]["structuredContent"]["versions"].size(), 1u) << ok.dump();

  ASSERT_TRUE(server.Stop());
  ASSERT_TRUE(mcp.latch().WaitFailed());
  for (const char* tool : {"list_versions", "propose_symbol"}) {
    Json args = std::string(tool) == "list_versions"
                    ? Json::object()
                    : Json{{"stable_id", ids[0]}, {"name", "while_down"}};
    Json down = c.CallTool(tool, args);
    ASSERT_TRUE(down.contains("result")) << down.dump();
    EXPECT_EQ(down["result"].value("isError", false), true) << down.dump();
    const Json error = down["result"]["_meta"]["trove/error"];
    EXPECT_EQ(error["retryable"], true) << down.dump();
    EXPECT_FALSE(error.value("errorId", "").empty()) << down.dump();
    const std::string text = down.dump();
    EXPECT_THAT(text, HasSubstr("temporarily unavailable"));
    for (const std::string& secret : {std::string("postgresql://"), server.info().host,
                                      std::string("SELECT"), std::string("sqlstate")}) {
      EXPECT_THAT(text, Not(HasSubstr(secret))) << secret;
    }
  }
  EXPECT_EQ(mcp.feed().Snapshot()["listening"], false);

  const std::size_t before = c.channel().size();
  ASSERT_TRUE(server.Restart());
  // The next call works at once: the pool dropped the dead connections.
  Json back = c.CallTool("list_versions", Json::object());
  ASSERT_EQ(back["result"]["structuredContent"]["versions"].size(), 1u) << back.dump();
  Json named = c.CallTool("propose_symbol", {{"stable_id", ids[0]}, {"name", "after_restart"}});
  EXPECT_EQ(named["result"]["structuredContent"]["written"], true) << named.dump();
  // Subscribers hear about the symbol (the reconnect's "anything may have changed", then the
  // write itself).
  ASSERT_TRUE(c.channel().WaitUntil(
      [&](const std::vector<Json>& m) {
        std::vector<Json> after(m.begin() + static_cast<std::ptrdiff_t>(before), m.end());
        return HasUpdate(after, SymbolUri(ids[0]));
      },
      kPatience));
  ASSERT_TRUE(mcp.latch().WaitListening(2));
  const Json feed = ReadJson(c, "warden://symbols");
  EXPECT_EQ(feed["listening"], true);
  EXPECT_FALSE(feed["reset_sequence"].is_null()) << feed.dump();
}

}  // namespace
}  // namespace trove::warden::server
