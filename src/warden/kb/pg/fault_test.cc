// Faults of a PostgreSQL KB (issue 25, docs/decisions/0093-warden-pg-faults-soak.md):
//   * a writer killed (SIGKILL) in the middle of an ingest's COPY leaves no partial version;
//   * two ingests at once, seeding the same stable_ids, both succeed (one lock order, retry);
//   * a COMMIT whose answer is lost (a TCP proxy drops the connection before or after the
//     server saw COMMIT) is settled by the gate's attempt id: nothing lost, nothing twice;
//   * a server restart in the middle of an agent pass is survived through retry, with one
//     evidence row per attempt;
//   * a stopped server gives kUnavailable (and the CLI exit 3), and everything is consistent
//     once it runs again.
// The restart and stop tests run on a private server (PgScratchServer); the others on the
// ctest fixture's server, each in a database of its own.
#include <arpa/inet.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/env.h"
#include "base/pg.h"
#include "base/testing/pg_server.h"
#include "warden/kb/kb.h"
#include "warden/kb/testing/kb_test_peer.h"

namespace trove::warden::kb {
namespace {

using base::StatusCode;
using base::testing::PgDatabase;
using base::testing::PgScratchServer;
using testing::MakeFunctions;
using testing::MakeVersion;

std::string One(base::pg::Connection& conn, const std::string& sql) {
  return base::testing::QueryOne(conn, sql);
}

std::int64_t Count(base::pg::Connection& conn, const std::string& sql) {
  return std::atoll(One(conn, sql).c_str());
}

// Waits until no backend but `conn`'s own is connected to `db` (a killed client's backend
// notices the closed socket and ends its transaction).
void WaitForOtherBackendsToEnd(base::pg::Connection& conn, const std::string& db) {
  for (int i = 0; i < 500; ++i) {
    if (Count(conn, fmt::format("SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' "
                                "AND pid <> pg_backend_pid()",
                                db)) == 0) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "a backend of the killed writer is still connected to " << db;
}

// ---- kill -9 in the middle of an ingest

TEST(KbPgFaultTest, WriterKilledDuringCopyLeavesNoPartialVersion) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  base::PosixEnv env;
  {
    auto kb = Kb::Open(env, db.url(), KbOptions{.create_if_missing = true});
    ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  }
  // Enough rows that several 1 MiB COPY chunks reach the server before the kill.
  constexpr std::uint32_t kFunctions = 12000;
  constexpr std::size_t kKillAfter = 8000;
  const auto functions = MakeFunctions(0, kFunctions);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    base::PosixEnv child_env;
    auto kb = Kb::Open(child_env, db.url(),
                       KbOptions{.store_progress_for_testing = [&](std::size_t done) {
                         if (done != kKillAfter) return;
                         if (write(ready[1], "x", 1) != 1) _exit(4);
                         for (;;) pause();  // killed here, in the middle of the COPY
                       }});
    if (!kb.ok()) _exit(2);
    (void)(*kb)->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 0, kFunctions), functions,
                              {{.func_index = 1, .name = "seeded"}});
    _exit(3);  // the ingest must not finish
  }
  close(ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the writer never reached the middle of the COPY";
  close(ready[0]);
  auto conn = db.Connect();
  ASSERT_NE(conn, nullptr);
  // The writer's backend is inside the COPY, with rows already received.
  EXPECT_EQ(Count(*conn, fmt::format("SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' "
                                     "AND query LIKE 'COPY functions%'",
                                     db.name())),
            1);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  WaitForOtherBackendsToEnd(*conn, db.name());

  // Nothing of the version: no version row, no function row, no seed, no evidence.
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM module_versions"), 0);
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM functions"), 0);
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM symbols"), 0);
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM evidence"), 0);
  // The first version is bulk-loaded without the secondary indexes and the foreign key (built
  // after the COPY, in the same transaction): the kill rolled their drop back too.
  const std::string kIndexes = "SELECT count(*) FROM pg_indexes WHERE tablename = 'functions'";
  const std::string kForeignKeys =
      "SELECT count(*) FROM pg_constraint WHERE conrelid = 'functions'::regclass AND contype = "
      "'f'";
  EXPECT_EQ(Count(*conn, kIndexes), 5);  // the primary key and four secondary indexes
  EXPECT_EQ(Count(*conn, kForeignKeys), 1);

  // A new ingest of the same module succeeds, under the same label.
  auto kb = Kb::Open(env, db.url());
  ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  auto stored = (*kb)->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 0, kFunctions),
                                    functions, {{.func_index = 1, .name = "seeded"}});
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_FALSE(stored->already_ingested);
  EXPECT_EQ(stored->label, "v1");
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM functions"), kFunctions);
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM evidence"), 1);
  // Built again after the bulk load, and used by the seed's type-signature lookup.
  EXPECT_EQ(Count(*conn, kIndexes), 5);
  EXPECT_EQ(Count(*conn, kForeignKeys), 1);
}

// ---- two ingests at once

TEST(KbPgFaultTest, ConcurrentIngestsSeedingTheSameIdsBothSucceed) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  base::PosixEnv env;
  {
    auto kb = Kb::Open(env, db.url(), KbOptions{.create_if_missing = true});
    ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  }
  // Two builds of one module: the same functions (so the same stable_ids), other bytes. Each
  // seeds every function, the second in the reverse of the first's index order; unsorted,
  // their row locks would be taken in opposite orders.
  constexpr std::uint32_t kDefined = 400;
  const auto functions = MakeFunctions(0, kDefined);
  std::vector<SeedName> forward;
  std::vector<SeedName> backward;
  for (std::uint32_t i = 0; i < kDefined; ++i) {
    forward.push_back({.func_index = i, .name = fmt::format("f{}", i)});
    backward.push_back({.func_index = kDefined - 1 - i,
                        .name = fmt::format("g{}", kDefined - 1 - i),
                        .source = SeedSource::kGlue});
  }
  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<Result<StoreResult>> results(2, Status::Internal("unset"));
    std::vector<std::thread> threads;
    for (int w = 0; w < 2; ++w) {
      threads.emplace_back([&, w] {
        base::PosixEnv thread_env;
        auto kb = Kb::Open(thread_env, db.url());
        if (!kb.ok()) {
          results[w] = kb.status();
          return;
        }
        // Automatic labels: both read the version count at once unless ingests serialise.
        results[w] = (*kb)->StoreVersion(
            MakeVersion(
                "", std::string(63, static_cast<char>('a' + round)) + static_cast<char>('0' + w), 0,
                kDefined),
            functions, w == 0 ? forward : backward);
      });
    }
    for (auto& t : threads) t.join();
    for (int w = 0; w < 2; ++w) {
      ASSERT_TRUE(results[w].ok())
          << "round " << round << " ingest " << w << ": " << results[w].status().ToString();
      EXPECT_FALSE(results[w]->already_ingested);
    }
    EXPECT_NE(results[0]->label, results[1]->label);
  }
  auto conn = db.Connect();
  ASSERT_NE(conn, nullptr);
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM module_versions"), 2 * kRounds);
  EXPECT_EQ(Count(*conn, "SELECT count(DISTINCT label) FROM module_versions"), 2 * kRounds);
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM functions"), 2 * kRounds * kDefined);
  // Every seed went through the gate once: one evidence row each.
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM evidence"), 2 * kRounds * kDefined);
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM symbols"), kDefined);
  // The same bytes ingested twice at once: one version, the other call finds it.
  std::vector<Result<StoreResult>> same(2, Status::Internal("unset"));
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      base::PosixEnv thread_env;
      auto kb = Kb::Open(thread_env, db.url());
      if (!kb.ok()) {
        same[w] = kb.status();
        return;
      }
      same[w] = (*kb)->StoreVersion(MakeVersion("", std::string(64, 'z'), 0, kDefined), functions);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(same[0].ok()) << same[0].status().ToString();
  ASSERT_TRUE(same[1].ok()) << same[1].status().ToString();
  EXPECT_NE(same[0]->already_ingested, same[1]->already_ingested);
  EXPECT_EQ(same[0]->version_id, same[1]->version_id);
  EXPECT_EQ(Count(*conn, "SELECT count(*) FROM module_versions"), 2 * kRounds + 1);
}

// ---- a COMMIT whose answer is lost

// A TCP proxy in front of the server's unix socket (trust authentication, so no password),
// which can lose one COMMIT: kBeforeServer drops the connection instead of passing COMMIT on
// (the transaction never commits); kAfterServer passes COMMIT on, waits for the server's
// answer and drops the connection instead of passing the answer back (it committed, and the
// client cannot know).
class CommitLosingProxy {
 public:
  enum class Mode { kPass, kBeforeServer, kAfterServer };

  explicit CommitLosingProxy(std::string socket_path) : socket_path_(std::move(socket_path)) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listener_, 16) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || pipe(stop_) != 0) {
      ADD_FAILURE() << "proxy: cannot listen: " << std::strerror(errno);
      return;
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~CommitLosingProxy() {
    if (acceptor_.joinable()) {
      (void)!write(stop_[1], "x", 1);
      acceptor_.join();
    }
    std::vector<std::thread> relays;
    {
      std::lock_guard<std::mutex> lock(mu_);
      relays.swap(relays_);
    }
    for (auto& t : relays) t.join();
    if (listener_ >= 0) close(listener_);
  }

  int port() const { return port_; }
  // Loses the next COMMIT as `mode` says; later ones pass.
  void Arm(Mode mode) { mode_.store(mode); }
  int commits_lost() const { return lost_.load(); }

 private:
  void AcceptLoop() {
    for (;;) {
      pollfd fds[2] = {{listener_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents != 0) break;
      const int client = accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      const int server = socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path_.c_str());
      if (server < 0 || connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(client);
        if (server >= 0) close(server);
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      relays_.emplace_back([this, client, server] { Relay(client, server); });
    }
    close(stop_[0]);
    close(stop_[1]);
  }

  static bool WriteAll(int fd, const char* data, std::size_t size) {
    while (size > 0) {
      const ssize_t n = write(fd, data, size);
      if (n <= 0) return false;
      data += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }

  void Relay(int client, int server) {
    // The simple-query message base::pg's Transaction::Commit sends.
    static constexpr char kCommit[] = {'Q', 0, 0, 0, 11, 'C', 'O', 'M', 'M', 'I', 'T', 0};
    char buf[65536];
    for (;;) {
      pollfd fds[3] = {{client, POLLIN, 0}, {server, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (poll(fds, 3, 200) < 0) break;
      if (fds[2].revents != 0) break;
      if (fds[0].revents != 0) {
        const ssize_t n = read(client, buf, sizeof buf);
        if (n <= 0) break;
        const std::string_view chunk(buf, static_cast<std::size_t>(n));
        const Mode mode = mode_.load();
        if (mode != Mode::kPass &&
            chunk.find(std::string_view(kCommit, sizeof kCommit)) != std::string_view::npos) {
          mode_.store(Mode::kPass);
          ++lost_;
          if (mode == Mode::kAfterServer) {
            // The server commits and answers; the answer is dropped with the connection.
            if (WriteAll(server, buf, chunk.size())) (void)!read(server, buf, sizeof buf);
          }
          break;
        }
        if (!WriteAll(server, buf, chunk.size())) break;
      }
      if (fds[1].revents != 0) {
        const ssize_t n = read(server, buf, sizeof buf);
        if (n <= 0) break;
        if (!WriteAll(client, buf, static_cast<std::size_t>(n))) break;
      }
    }
    close(client);
    close(server);
  }

  std::string socket_path_;
  int listener_ = -1;
  int port_ = 0;
  int stop_[2] = {-1, -1};
  std::atomic<Mode> mode_{Mode::kPass};
  std::atomic<int> lost_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> relays_;
};

class KbPgLostCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.ok());
    ASSERT_FALSE(db_.server().host.empty()) << "needs the scratch server's env file";
    proxy_ = std::make_unique<CommitLosingProxy>(
        fmt::format("{}/.s.PGSQL.{}", db_.server().host, db_.server().port));
    ASSERT_GT(proxy_->port(), 0);
    auto kb = Kb::Open(env_, db_.url(), KbOptions{.create_if_missing = true});
    ASSERT_TRUE(kb.ok()) << kb.status().ToString();
    ASSERT_TRUE(
        (*kb)->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 0, 4), functions_).ok());
    auto proxied = Kb::Open(env_, fmt::format("postgresql://trove@127.0.0.1:{}/{}?sslmode=disable&"
                                              "gssencmode=disable",
                                              proxy_->port(), db_.name()));
    ASSERT_TRUE(proxied.ok()) << proxied.status().ToString();
    kb_ = std::move(*proxied);
    conn_ = db_.Connect();
    ASSERT_NE(conn_, nullptr);
  }

  std::int64_t EvidenceFor(const std::string& id) {
    return Count(*conn_, fmt::format("SELECT count(*) FROM evidence WHERE stable_id = '{}'", id));
  }

  PgDatabase db_;
  base::PosixEnv env_;
  const std::vector<FunctionRecord> functions_ = MakeFunctions(0, 4);
  std::unique_ptr<CommitLosingProxy> proxy_;
  std::unique_ptr<Kb> kb_;
  std::unique_ptr<base::pg::Connection> conn_;
};

TEST_F(KbPgLostCommitTest, GateCommitThatDidNotHappenIsRunAgain) {
  const std::string& id = functions_[0].stable_id;
  proxy_->Arm(CommitLosingProxy::Mode::kBeforeServer);
  auto d = kb_->AgentPropose("offline", id, {.name = "first", .confidence = 0.5});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(proxy_->commits_lost(), 1);
  EXPECT_TRUE(d->accepted);
  EXPECT_EQ(d->rule, 2);
  EXPECT_EQ(EvidenceFor(id), 1) << "the rerun wrote the only evidence row";
  auto s = kb_->GetSymbol(id);
  ASSERT_TRUE(s.ok() && s->has_value());
  EXPECT_EQ((*s)->name, "first");
}

TEST_F(KbPgLostCommitTest, GateCommitThatHappenedIsNotRepeated) {
  const std::string& id = functions_[1].stable_id;
  ASSERT_TRUE(kb_->AgentPropose("offline", id, {.name = "old", .confidence = 0.5}).ok());
  proxy_->Arm(CommitLosingProxy::Mode::kAfterServer);
  auto d = kb_->AgentPropose("offline", id, {.name = "new", .confidence = 0.6});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(proxy_->commits_lost(), 1);
  // The committed decision, not a rerun's (which would reject 0.6 against the stored 0.6).
  EXPECT_TRUE(d->accepted) << d->reason;
  EXPECT_EQ(d->rule, 7);
  EXPECT_EQ(EvidenceFor(id), 2) << "the lost commit's evidence row, once";
  auto s = kb_->GetSymbol(id);
  ASSERT_TRUE(s.ok() && s->has_value());
  EXPECT_EQ((*s)->name, "new");
}

TEST_F(KbPgLostCommitTest, IngestCommitLostEitherWayStoresTheVersionOnce) {
  const auto functions = MakeFunctions(0, 6);
  for (const auto mode :
       {CommitLosingProxy::Mode::kBeforeServer, CommitLosingProxy::Mode::kAfterServer}) {
    const bool before = mode == CommitLosingProxy::Mode::kBeforeServer;
    SCOPED_TRACE(before ? "before the server" : "after the server");
    const std::string label = before ? "lost-before" : "lost-after";
    proxy_->Arm(mode);
    auto stored = kb_->StoreVersion(MakeVersion(label, std::string(64, before ? 'b' : 'c'), 0, 6),
                                    functions, {{.func_index = 5, .name = label}});
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    EXPECT_FALSE(stored->already_ingested);
    EXPECT_EQ(stored->label, label);
    EXPECT_EQ(Count(*conn_,
                    fmt::format("SELECT count(*) FROM module_versions WHERE label = '{}'", label)),
              1);
    EXPECT_EQ(Count(*conn_, fmt::format("SELECT count(*) FROM functions WHERE version_id = {}",
                                        stored->version_id)),
              6);
    EXPECT_EQ(Count(*conn_, fmt::format("SELECT count(*) FROM evidence WHERE name = '{}'", label)),
              1);
  }
  EXPECT_EQ(proxy_->commits_lost(), 2);
}

// ---- restart and stop of the server (a private one)

class KbPgServerFaultTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new PgScratchServer(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(server_->ok()); }

  // A fresh database on the private server; returns its URL.
  std::string NewDatabase(const std::string& name) {
    auto admin = base::pg::Connection::Open({.url = server_->url()});
    EXPECT_TRUE(admin.ok()) << admin.status().ToString();
    if (!admin.ok()) return "";
    EXPECT_TRUE((*admin)->Exec("CREATE DATABASE " + name + " TEMPLATE template0").ok());
    return server_->info().UrlFor(name);
  }

  static PgScratchServer* server_;
};

PgScratchServer* KbPgServerFaultTest::server_ = nullptr;

TEST_F(KbPgServerFaultTest, RestartDuringAnAgentPassIsSurvived) {
  const std::string url = NewDatabase("restart_pass");
  base::PosixEnv env;
  const auto functions = MakeFunctions(0, 8);
  auto kb = Kb::Open(env, url, KbOptions{.create_if_missing = true});
  ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  ASSERT_TRUE((*kb)->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 0, 8), functions).ok());
  const std::string start_time_sql = "SELECT pg_postmaster_start_time()::text";
  std::string started_before;
  {
    auto conn = base::pg::Connection::Open({.url = url});
    ASSERT_TRUE(conn.ok());
    started_before = One(**conn, start_time_sql);
  }

  // The pass: agent proposals over the functions, until 40 calls after the restart finished.
  std::atomic<int> calls{0};
  std::atomic<bool> restarted{false};
  std::vector<std::string> failures;
  std::thread pass([&] {
    int after = 0;
    for (int i = 0; after < 40 && i < 100000; ++i) {
      const bool was_restarted = restarted.load();
      const std::string& id = functions[i % functions.size()].stable_id;
      auto d = i % 2 == 0
                   ? (*kb)->AgentPropose(
                         "offline", id,
                         {.name = fmt::format("n{}", i % 5), .confidence = (i % 10) / 10.0})
                   : (*kb)->McpPropose(id, fmt::format("m{}", i % 3), std::nullopt, (i % 7) / 7.0);
      calls.fetch_add(1);
      if (!d.ok()) failures.push_back(d.status().ToString());
      if (was_restarted) ++after;
    }
  });
  while (calls.load() < 40) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int calls_at_restart = calls.load();
  ASSERT_TRUE(server_->Restart());
  restarted.store(true);
  pass.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " calls failed, first: " << failures[0];
  EXPECT_GT(calls.load(), calls_at_restart + 40);

  auto conn = base::pg::Connection::Open({.url = url});
  ASSERT_TRUE(conn.ok());
  EXPECT_NE(One(**conn, start_time_sql), started_before) << "the server did not restart";
  // One evidence row per attempt: none lost, none duplicated.
  EXPECT_EQ(Count(**conn, "SELECT count(*) FROM evidence"), calls.load());
  // And the trail replays to the stored symbols.
  auto evidence = KbTestPeer::Store(**kb).ScanEvidence(0, SIZE_MAX);
  ASSERT_TRUE(evidence.ok());
  std::map<std::string, std::optional<ExistingSymbol>> model;
  for (const ScannedEvidence& e : *evidence) {
    std::optional<ExistingSymbol>& slot = model[e.stable_id];
    SymbolWrite w{.name = e.entry.name,
                  .provenance = e.entry.provenance,
                  .actor = e.entry.actor,
                  .confidence = e.entry.confidence.value_or(std::nan(""))};
    const Decision d = Decide(slot, w);
    ASSERT_EQ(d.accepted, e.entry.accepted) << "evidence id " << e.entry.id;
    if (d.accepted) {
      slot = ExistingSymbol{
          .name = w.name, .provenance = w.provenance, .actor = w.actor, .confidence = w.confidence};
    }
  }
  for (const auto& [id, expected] : model) {
    auto s = (*kb)->GetSymbol(id);
    ASSERT_TRUE(s.ok() && s->has_value()) << id;
    EXPECT_EQ((*s)->name, expected->name) << id;
    EXPECT_EQ((*s)->confidence, expected->confidence) << id;
  }
}

TEST_F(KbPgServerFaultTest, StoppedServerIsReportedThenRecovered) {
  const std::string url = NewDatabase("stopped");
  base::PosixEnv env;
  const auto functions = MakeFunctions(0, 4);
  auto kb = Kb::Open(env, url, KbOptions{.create_if_missing = true});
  ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  ASSERT_TRUE((*kb)->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 0, 4), functions).ok());
  ASSERT_TRUE((*kb)->HumanSetName(HumanChannel::kLib, functions[0].stable_id, "kept").ok());

  ASSERT_TRUE(server_->Stop());
  // A new connection fails at once, clearly.
  auto reopened = Kb::Open(env, url);
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(reopened.status().message().find("cannot connect"), std::string::npos)
      << reopened.status().ToString();
  // The CLI: exit 3, the reason on stderr.
  const std::string command =
      fmt::format("'{}' --db '{}' versions 2>&1 >/dev/null", WARDEN_CLI_PATH, url);
  FILE* cli = popen(command.c_str(), "r");
  ASSERT_NE(cli, nullptr);
  std::string cli_stderr;
  char buf[512];
  while (std::fgets(buf, sizeof buf, cli) != nullptr) cli_stderr += buf;
  const int cli_status = pclose(cli);
  EXPECT_TRUE(WIFEXITED(cli_status) && WEXITSTATUS(cli_status) == 3) << cli_status;
  EXPECT_NE(cli_stderr.find("cannot connect"), std::string::npos) << cli_stderr;
  // An open KB: a write waits out one reconnection budget (base/pg.h retry_budget_ms, 15 s),
  // then says the connection is lost (naming the redacted target and the server's reason), and
  // writes nothing.
  auto write =
      (*kb)->AgentPropose("offline", functions[1].stable_id, {.name = "lost?", .confidence = 0.9});
  ASSERT_FALSE(write.ok());
  EXPECT_EQ(write.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(base::pg::IsConnectionLost(write.status())) << write.status().ToString();
  EXPECT_NE(write.status().message().find("connection lost to postgresql://trove@/stopped"),
            std::string::npos)
      << write.status().ToString();

  // A write issued while the server is down succeeds once it is back within the budget.
  std::thread starter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_TRUE(server_->Restart());
  });
  auto later =
      (*kb)->AgentPropose("offline", functions[2].stable_id, {.name = "after", .confidence = 0.9});
  starter.join();
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  EXPECT_TRUE(later->accepted);

  // Consistent: what committed before the stop is there, the failed write left nothing.
  auto named = (*kb)->GetSymbol(functions[0].stable_id);
  ASSERT_TRUE(named.ok() && named->has_value()) << named.status().ToString();
  EXPECT_EQ((*named)->name, "kept");
  EXPECT_TRUE((*named)->locked);
  auto failed = (*kb)->GetSymbol(functions[1].stable_id);
  ASSERT_TRUE(failed.ok());
  EXPECT_FALSE(failed->has_value());
  EXPECT_TRUE((*kb)->Evidence(functions[1].stable_id)->empty());
  auto after = (*kb)->GetSymbol(functions[2].stable_id);
  ASSERT_TRUE(after.ok() && after->has_value());
  EXPECT_EQ((*after)->name, "after");
  EXPECT_EQ((*after)->evidence.size(), 1u);
  auto versions = (*kb)->ListVersions();
  ASSERT_TRUE(versions.ok());
  EXPECT_EQ(versions->size(), 1u);
}

}  // namespace
}  // namespace trove::warden::kb
