// The embeddings client (embed.h) against a local stand-in for an OpenAI-compatible
// /v1/embeddings endpoint on 127.0.0.1 (cpp-httplib) answering deterministic vectors (a hashed
// bag of words); the error paths (401, malformed JSON, endpoint down); the vector table.
#include "librarian/embed/embed.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "base/sqlite.h"
#include "librarian/embed/testing/fake_endpoint.h"
#include "librarian/index/bootstrap.h"
#include "librarian/query/query.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::embed {
namespace {

TEST(EmbedClientTest, EmbedsInBatchesInInputOrder) {
  testing::FakeEmbeddings server;
  Config c;
  c.url = server.url();
  c.model = "fake-model";
  c.api_key = "sk-secret-123";
  c.batch = 2;
  Client client(c);
  base::Cancellation cancel;
  std::vector<std::string> inputs = {"parse the config file", "open a socket", "parse config",
                                     "unrelated words here", "open socket"};
  auto v = client.Embed(inputs, cancel);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_EQ(v->size(), 5u);
  EXPECT_EQ(server.requests(), 3);  // 2 + 2 + 1
  EXPECT_EQ(server.last_auth(), "Bearer sk-secret-123");
  EXPECT_EQ(server.last_model(), "fake-model");
  // Texts sharing words are closer than texts that share none.
  EXPECT_GT(Cosine((*v)[0], (*v)[2]), Cosine((*v)[0], (*v)[3]));
  EXPECT_GT(Cosine((*v)[1], (*v)[4]), 0.9);
  EXPECT_EQ(Cosine((*v)[0], (*v)[0]) > 0.999, true);
}

TEST(EmbedClientTest, ErrorsAreStatusesWithoutTheKey) {
  testing::FakeEmbeddings server;
  Config c;
  c.url = server.url();
  c.api_key = "sk-secret-123";
  base::Cancellation cancel;
  std::vector<std::string> one = {"text"};
  {
    server.set_mode(testing::FakeEmbeddings::Mode::kUnauthorized);
    Client client(c);
    auto v = client.Embed(one, cancel);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().code(), base::StatusCode::kPermissionDenied);
    EXPECT_EQ(v.status().message().find("sk-secret"), std::string::npos);
  }
  {
    server.set_mode(testing::FakeEmbeddings::Mode::kMalformed);
    Client client(c);
    auto v = client.Embed(one, cancel);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().code(), base::StatusCode::kMalformed);
  }
  {
    server.set_mode(testing::FakeEmbeddings::Mode::kWrongCount);
    Client client(c);
    auto v = client.Embed(one, cancel);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().code(), base::StatusCode::kMalformed);
  }
  {
    Config down = c;
    down.url = testing::FakeEmbeddings::ClosedPortUrl();
    Client client(down);
    auto v = client.Embed(one, cancel);
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().code(), base::StatusCode::kIo);
    EXPECT_EQ(v.status().message().find("sk-secret"), std::string::npos);
  }
}

TEST(EmbedClientTest, ParseResponseChecksTheShape) {
  EXPECT_TRUE(
      ParseResponse(R"({"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]})", 2)
          .ok());
  auto ordered =
      ParseResponse(R"({"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]})", 2);
  ASSERT_TRUE(ordered.ok());
  EXPECT_EQ((*ordered)[0], (Vector{3, 4}));
  for (const char* bad : {"", "[]", R"({"data":{}})", R"({"data":[{"embedding":"x"}]})",
                          R"({"data":[{"index":5,"embedding":[1]}]})",
                          R"({"data":[{"embedding":[]}]})", R"({"data":[1]})"}) {
    EXPECT_FALSE(ParseResponse(bad, 1).ok()) << bad;
  }
}

TEST(EmbedConfigTest, ReadsTheEnvironment) {
  unsetenv("LIBRARIAN_EMBED_URL");
  EXPECT_FALSE(ConfigFromEnv().has_value());
  setenv("LIBRARIAN_EMBED_URL", "http://127.0.0.1:9/v1/", 1);
  setenv("LIBRARIAN_EMBED_KEY_ENV", "TROVE_TEST_EMBED_KEY", 1);
  setenv("TROVE_TEST_EMBED_KEY", "k-1", 1);
  auto c = ConfigFromEnv();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->url, "http://127.0.0.1:9/v1/embeddings");
  EXPECT_EQ(c->api_key, "k-1");
  EXPECT_EQ(c->model, "text-embedding-3-small");
  unsetenv("LIBRARIAN_EMBED_URL");
  unsetenv("LIBRARIAN_EMBED_KEY_ENV");
  unsetenv("TROVE_TEST_EMBED_KEY");
}

TEST(EmbedStoreTest, SavesAndLoadsVectors) {
  librarian::testing::TempDir dir;
  auto db = base::Database::Open(dir.Abs("e.sqlite"));
  ASSERT_TRUE(db.ok());
  // Save prunes vectors of targets the symbols table no longer holds.
  ASSERT_TRUE((*db)->Exec("CREATE TABLE symbols(target_id TEXT)").ok());
  ASSERT_TRUE((*db)->Exec("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)").ok());
  ASSERT_TRUE((*db)->Exec("INSERT INTO symbols VALUES ('fn:a.c::f')").ok());
  auto empty = Load(**db, "m");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  ASSERT_TRUE(EnsureTable(**db).ok());
  std::vector<Stored> rows = {{"fn:a.c::f", "a.c", "h1", {1.5f, -2.0f}},
                              {"fn:b.c::g", "b.c", "h2", {0.0f, 1.0f}}};
  ASSERT_TRUE(Save(**db, "m", rows).ok());
  auto loaded = Load(**db, "m");
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->size(), 1u);  // fn:b.c::g is not a symbol
  EXPECT_EQ((*loaded)[0].vector, (Vector{1.5f, -2.0f}));
  EXPECT_EQ((*loaded)[0].path, "a.c");
  EXPECT_TRUE(Load(**db, "other")->empty());
  auto cached = LoadCached(**db, "m");
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ((*cached)->size(), 1u);
  EXPECT_TRUE(LoadCached(**db, "other").value()->empty());
}

// Sets the engine's environment for one scope.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::string& url) {
    setenv("LIBRARIAN_EMBED_URL", url.c_str(), 1);
    setenv("LIBRARIAN_EMBED_MODEL", "fake-model", 1);
    setenv("LIBRARIAN_EMBED_API_KEY", "sk-secret-123", 1);
  }
  ~ScopedEnv() {
    unsetenv("LIBRARIAN_EMBED_URL");
    unsetenv("LIBRARIAN_EMBED_MODEL");
    unsetenv("LIBRARIAN_EMBED_API_KEY");
  }
};

bool HasPrefix(const std::vector<std::string>& list, std::string_view prefix) {
  for (const std::string& d : list) {
    if (d.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string Joined(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& d : list) out += d + "\n";
  return out;
}

TEST(EmbedEngineTest, BootstrapStoresVectorsAndQueriesFuseThemOrAnswerLexically) {
  librarian::testing::TempDir dir;
  dir.Write("src/net.c",
            "/* Opens a listening socket on the given port. */\n"
            "int open_listener(int port) {\n  return port + 1;\n}\n"
            "/* Closes the connection. */\n"
            "int close_conn(int fd) {\n  return fd - 1;\n}\n");
  dir.Write("src/cfg.c",
            "/* Reads the settings file into memory. */\n"
            "int load_settings(const char* path) {\n  return path != 0;\n}\n");
  index::BootstrapOptions o;
  o.workspace = dir.path();
  o.workers = 1;
  o.ctags_program = "";
  base::Cancellation cancel;
  testing::FakeEmbeddings server;
  {
    ScopedEnv env(server.url());
    auto r = index::Bootstrap(o, cancel, base::Progress());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(HasPrefix(r->disclosures, "embeddings: 3 functions embedded with model fake-model"))
        << Joined(r->disclosures);
    EXPECT_EQ(server.inputs(), 3);
    // Nothing changed: nothing is embedded again.
    auto again = index::Bootstrap(o, cancel, base::Progress());
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(HasPrefix(again->disclosures, "embeddings: 0 functions"));
    EXPECT_EQ(server.inputs(), 3);
  }
  auto st = store::Store::Open(index::StorePathFor(dir.path()));
  ASSERT_TRUE(st.ok());
  auto stored = Load((*st)->db(), "fake-model");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->size(), 3u);

  query::QueryRequest req;
  req.intent = "listening socket port";
  req.depth = query::Depth::kL1;
  req.min_confidence = 0;
  auto ask = [&]() {
    auto r = query::Query(**st, query::Workspace{dir.path(), "ws_embed"}, req, cancel);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : query::QueryResponse{};
  };
  {
    // Off (no environment): as before, no embedding engine named.
    query::QueryResponse r = ask();
    EXPECT_FALSE(HasPrefix(r.disclosures, "embeddings_unavailable"));
    EXPECT_EQ(Joined(r.disclosures).find("embeddings ("), std::string::npos);
  }
  {
    ScopedEnv env(server.url());
    query::QueryResponse r = ask();
    EXPECT_NE(Joined(r.disclosures).find("embeddings (model fake-model"), std::string::npos)
        << Joined(r.disclosures);
    ASSERT_FALSE(r.packs.empty());
    bool scored = false;
    for (const query::Pack& p : r.packs) {
      if (p.target_id.find("open_listener") != std::string::npos) scored = p.signals.embed > 0.3;
    }
    EXPECT_TRUE(scored);
    EXPECT_EQ(Joined(r.disclosures).find("sk-secret"), std::string::npos);
  }
  for (auto mode :
       {testing::FakeEmbeddings::Mode::kUnauthorized, testing::FakeEmbeddings::Mode::kMalformed}) {
    server.set_mode(mode);
    ScopedEnv env(server.url());
    query::QueryResponse r = ask();
    EXPECT_TRUE(HasPrefix(r.disclosures, "embeddings_unavailable: embeddings: "))
        << Joined(r.disclosures);
    EXPECT_FALSE(r.packs.empty());  // still answered, by the lexical engine
    EXPECT_EQ(Joined(r.disclosures).find("sk-secret"), std::string::npos);
  }
  {
    ScopedEnv env(testing::FakeEmbeddings::ClosedPortUrl());
    query::QueryResponse r = ask();
    EXPECT_TRUE(HasPrefix(r.disclosures, "embeddings_unavailable: embeddings: "));
    EXPECT_FALSE(r.packs.empty());
    // A bootstrap with the endpoint down still succeeds, and says why nothing was embedded.
    dir.Write("src/extra.c", "int extra_fn(int x) {\n  return x;\n}\n");
    st->reset();
    auto b = index::Bootstrap(o, cancel, base::Progress());
    ASSERT_TRUE(b.ok());
    EXPECT_TRUE(b->success);
    EXPECT_TRUE(HasPrefix(b->disclosures, "embeddings_unavailable: embeddings: "));
  }
}

}  // namespace
}  // namespace trove::librarian::embed
