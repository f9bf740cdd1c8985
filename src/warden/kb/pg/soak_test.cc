// The PostgreSQL soak (issue 25, docs/decisions/0093-warden-pg-faults-soak.md): 8 processes
// (soak_worker.cc, each with its own connection), 2 humans and 6 agents, write names on one KB
// for WARDEN_PG_SOAK_SECONDS (30 by default; ctest sets fewer). Afterwards:
//   * 0 failed calls, and 0 lost writes: every call a worker saw return OK has exactly one
//     evidence row (found by the tag the worker put in it) with the verdict it returned, and
//     no evidence row exists that no call accounts for;
//   * replaying the evidence serially, in id order, through the pure Decide reproduces every
//     verdict and reason, and the final symbols table;
//   * 0 economy violations: no accepted non-human write on a slot a human had named (locked).
// The figures (calls, accepted, per second) are printed for the bench (bench/run_warden_pg_soak).
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/testing/pg_server.h"
#include "base/testing/temp_dir.h"
#include "warden/kb/kb.h"
#include "warden/kb/testing/kb_test_peer.h"

extern char** environ;

namespace trove::warden::kb {
namespace {

using base::testing::PgDatabase;
using base::testing::TempDir;
using testing::MakeFunctions;
using testing::MakeVersion;

double SoakSeconds() {
  const char* text = std::getenv("WARDEN_PG_SOAK_SECONDS");
  const double seconds = text != nullptr ? std::atof(text) : 30.0;
  return seconds > 0 ? seconds : 30.0;
}

struct Returned {
  bool accepted = false;
  int rule = 0;
};

TEST(KbPgSoakTest, EightProcessesHumansAndAgents) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  base::PosixEnv env;
  constexpr std::uint32_t kDefined = 64;
  const auto functions = MakeFunctions(0, kDefined);
  std::vector<SeedName> seeds;
  for (std::uint32_t i = 0; i < kDefined; i += 4) {
    seeds.push_back({.func_index = i, .name = fmt::format("export{}", i)});
  }
  {
    auto kb = Kb::Open(env, db.url(), KbOptions{.create_if_missing = true});
    ASSERT_TRUE(kb.ok()) << kb.status().ToString();
    auto stored =
        (*kb)->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 0, kDefined), functions, seeds);
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  }

  constexpr int kWorkers = 8;
  const double seconds = SoakSeconds();
  TempDir dir("trove_pg_soak");
  std::vector<pid_t> pids;
  const auto started = std::chrono::steady_clock::now();
  for (int w = 0; w < kWorkers; ++w) {
    const std::string worker = std::to_string(w);
    const std::string secs = fmt::format("{}", seconds);
    const std::string out = dir.Abs(fmt::format("w{}.txt", w));
    std::vector<std::string> args = {WARDEN_PG_SOAK_WORKER, db.url(), worker, secs, out};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, WARDEN_PG_SOAK_WORKER, nullptr, nullptr, argv.data(), environ), 0);
    pids.push_back(pid);
  }
  for (int w = 0; w < kWorkers; ++w) {
    int status = 0;
    ASSERT_EQ(waitpid(pids[w], &status, 0), pids[w]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker " << w << " " << status;
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  // What the workers saw.
  std::map<std::string, Returned> returned;
  std::vector<std::string> failures;
  for (int w = 0; w < kWorkers; ++w) {
    std::ifstream in(dir.Abs(fmt::format("w{}.txt", w)));
    ASSERT_TRUE(in) << "worker " << w << " wrote no results";
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("FAIL ", 0) == 0) {
        failures.push_back(line);
        continue;
      }
      std::istringstream fields(line);
      std::string tag;
      int accepted = 0;
      int rule = 0;
      ASSERT_TRUE(static_cast<bool>(fields >> tag >> accepted >> rule)) << line;
      ASSERT_TRUE(returned.emplace(tag, Returned{accepted != 0, rule}).second) << tag;
    }
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed calls, first: " << failures[0];

  auto kb = Kb::Open(env, db.url());
  ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  auto evidence = KbTestPeer::Store(**kb).ScanEvidence(0, SIZE_MAX);
  ASSERT_TRUE(evidence.ok()) << evidence.status().ToString();

  // 0 lost writes: each OK call has its one evidence row, with its verdict; no row is extra.
  std::set<std::string> seen;
  std::size_t seed_rows = 0;
  std::int64_t accepted_total = 0;
  for (const ScannedEvidence& e : *evidence) {
    std::string tag;
    if (e.entry.actor == "agent:mcp") {
      tag = e.entry.summary.value_or("");
    } else {
      const auto details = nlohmann::json::parse(e.entry.details_json, nullptr, false);
      if (details.is_object() && details.contains("soak")) tag = details["soak"];
    }
    if (tag.empty()) {
      EXPECT_EQ(e.entry.actor.rfind("ingest:", 0), 0u) << "evidence id " << e.entry.id;
      ++seed_rows;
      continue;
    }
    auto it = returned.find(tag);
    ASSERT_NE(it, returned.end()) << "evidence id " << e.entry.id << " (" << tag
                                  << ") belongs to no call that returned OK";
    ASSERT_TRUE(seen.insert(tag).second) << tag << " has two evidence rows";
    EXPECT_EQ(it->second.accepted, e.entry.accepted) << tag;
    accepted_total += e.entry.accepted ? 1 : 0;
  }
  EXPECT_EQ(seed_rows, seeds.size());
  EXPECT_EQ(seen.size(), returned.size()) << "calls that returned OK without an evidence row";

  // Serial replay through the pure rule; economy violations counted on the way.
  std::map<std::string, std::optional<ExistingSymbol>> model;
  int violations = 0;
  for (const ScannedEvidence& e : *evidence) {
    std::optional<ExistingSymbol>& slot = model[e.stable_id];
    const SymbolWrite w{.name = e.entry.name,
                        .summary = e.entry.summary,
                        .provenance = e.entry.provenance,
                        .actor = e.entry.actor,
                        .confidence = e.entry.confidence.value_or(std::nan(""))};
    const Decision d = Decide(slot, w);
    ASSERT_EQ(d.accepted, e.entry.accepted) << "evidence id " << e.entry.id << ": " << d.reason;
    ASSERT_EQ(d.reason, e.entry.reason) << "evidence id " << e.entry.id;
    if (!d.accepted) continue;
    if (slot.has_value() && slot->name.has_value() && slot->provenance == "human" &&
        w.provenance != "human") {
      ++violations;
    }
    ExistingSymbol next{.name = w.name,
                        .summary = slot.has_value() ? slot->summary : std::nullopt,
                        .provenance = w.provenance,
                        .actor = w.actor,
                        .confidence = d.clears ? 0.0 : w.confidence,
                        .locked = !d.clears && w.provenance == "human"};
    if (w.summary.has_value() && !w.summary->empty()) next.summary = w.summary;
    if (d.clears) next.summary = std::nullopt;
    slot = next;
  }
  EXPECT_EQ(violations, 0);
  auto symbols = KbTestPeer::Store(**kb).ScanSymbols();
  ASSERT_TRUE(symbols.ok());
  std::size_t present = 0;
  for (const auto& [id, expected] : model) present += expected.has_value() ? 1 : 0;
  EXPECT_EQ(symbols->size(), present);
  int human_named = 0;
  for (const SymbolRecord& s : *symbols) {
    auto it = model.find(s.stable_id);
    ASSERT_NE(it, model.end()) << s.stable_id;
    ASSERT_TRUE(it->second.has_value()) << s.stable_id;
    const ExistingSymbol& e = *it->second;
    EXPECT_EQ(s.name, e.name) << s.stable_id;
    EXPECT_EQ(s.summary, e.summary) << s.stable_id;
    EXPECT_EQ(s.provenance, e.provenance) << s.stable_id;
    EXPECT_EQ(s.actor, e.actor) << s.stable_id;
    EXPECT_EQ(s.confidence, e.confidence) << s.stable_id;
    EXPECT_EQ(s.locked, e.locked) << s.stable_id;
    if (s.name.has_value() && s.provenance == "human") ++human_named;
  }
  // The run was a real contest: humans named symbols, and agents were refused by them.
  EXPECT_GT(human_named, 0);
  std::printf(
      "soak: %d processes x %.1f s (wall %.1f s): %zu calls returned OK (%.0f/s), %lld accepted, "
      "%zu failed, %zu evidence rows, %zu symbols (%d human-named), 0 lost, %d violations\n",
      kWorkers, seconds, elapsed, returned.size(), static_cast<double>(returned.size()) / elapsed,
      static_cast<long long>(accepted_total), failures.size(), evidence->size(), symbols->size(),
      human_named, violations);
}

}  // namespace
}  // namespace trove::warden::kb
