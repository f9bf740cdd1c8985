// Property test of the economy (docs/warden.md §6.5, invariants 1-7 and 9).
//
// Random write sequences over a few stable_ids are checked after every step against an
// independent model written from the §6.2 rules (it never calls Decide) and against the
// invariants stated directly. Two runs, to keep the runtime reasonable:
//   * PureGate: 100,000 random write sequences (1-16 writes each, from an empty KB) through
//     the pure Decide() plus the documented state update;
//   * RealGate: 100,000 steps through the library's write paths (HumanSetName, HumanClear,
//     SeedExport, OracleWrite, DiffCarry, AgentPropose, McpPropose) and the real SQLite gate,
//     on a temporary file with synchronous=OFF, on tmpfs when /dev/shm exists (durability is
//     not under test here, and 10^5 commits on a disk shared with other jobs wait on writeback).
// The seed is printed on failure; set WARDEN_PROPERTY_SEED to replay one.
// Invariant 8 (MCP argument refusal) belongs to the MCP binding's tests and 10 (concurrency)
// to concurrency_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "base/env.h"
#include "base/sqlite.h"
#include "base/testing/temp_dir.h"
#ifdef TROVE_KB_BACKENDS_PG
#include "base/testing/pg_server.h"
#endif
#include "warden/kb/economy.h"
#include "warden/kb/kb.h"
#include "warden/kb/testing/kb_test_peer.h"

namespace trove::warden::kb {
namespace {

// ---- The model, from the spec text alone.

int ModelRank(const std::string& p) {
  if (p == "human") return 5;
  if (p == "export") return 4;
  if (p == "oracle") return 3;
  if (p == "diff-carry") return 2;
  if (p == "agent") return 1;
  return 0;
}

struct ModelSymbol {
  std::optional<std::string> name;
  std::optional<std::string> summary;
  std::string provenance;
  std::string actor;
  double confidence = 0;
  bool locked = false;
  bool operator==(const ModelSymbol&) const = default;
};

// A generated write; name_valid is known by construction (the generator tags its names).
struct GenWrite {
  std::optional<std::string> name;
  bool name_valid = true;
  std::optional<std::string> summary;
  std::string provenance;
  std::string actor;
  double confidence = 0;
};

bool ModelValid(const GenWrite& w) {
  if (ModelRank(w.provenance) == 0) return false;
  if (!(w.confidence >= 0.0 && w.confidence <= 1.0)) return false;  // NaN fails too
  if (!w.name.has_value()) return w.provenance == "human";
  return w.name_valid;
}

bool ModelAccepts(const std::optional<ModelSymbol>& e, const GenWrite& w) {
  if (!ModelValid(w)) return false;
  if (!e.has_value() || !e->name.has_value()) return true;
  if (w.provenance == "human") return true;
  if (e->locked) return false;
  if (*w.name == *e->name && ModelRank(w.provenance) < ModelRank(e->provenance)) return false;
  if (ModelRank(w.provenance) > ModelRank(e->provenance)) return true;
  return w.confidence > e->confidence;
}

ModelSymbol ModelApply(const std::optional<ModelSymbol>& e, const GenWrite& w) {
  ModelSymbol s;
  s.provenance = w.provenance;
  s.actor = w.actor;
  if (!w.name.has_value()) {  // human clear
    s.confidence = 0.0;
    return s;
  }
  s.name = w.name;
  s.confidence = w.confidence;
  s.locked = w.provenance == "human";
  if (w.summary.has_value() && !w.summary->empty()) {
    s.summary = w.summary;
  } else if (e.has_value()) {
    s.summary = e->summary;
  }
  return s;
}

// ---- The generator.

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  std::size_t Pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  double Confidence() {
    static constexpr double kPool[] = {0.0, 0.2, 0.35, 0.5, 0.6, 0.95, 1.0};
    const std::size_t r = Pick(20);
    if (r < 10) return kPool[Pick(std::size(kPool))];
    if (r < 17) return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
    static const double kBad[] = {std::numeric_limits<double>::quiet_NaN(),
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  -0.1,
                                  1.0000001,
                                  2.0};
    return kBad[Pick(std::size(kBad))];
  }

  // (name, valid by construction)
  std::pair<std::string, bool> Name() {
    static const char* kGood[] = {"memcpy", "malloc", "sqlite3_open", "parse", "caf\xc3\xa9"};
    const std::size_t r = Pick(20);
    if (r < 16) return {kGood[Pick(std::size(kGood))], true};
    switch (Pick(6)) {
      case 0:
        return {"", false};
      case 1:
        return {std::string(512, 'n'), true};
      case 2:
        return {std::string(513, 'n'), false};
      case 3:
        return {"bad\xff", false};
      case 4:
        return {"sur\xed\xa0\x80", false};
      default:
        return {"over\xc0\xaf", false};
    }
  }

  std::optional<std::string> Summary() {
    switch (Pick(4)) {
      case 0:
        return std::nullopt;
      case 1:
        return std::string();
      case 2:
        return "copies bytes";
      default:
        return "summary " + std::to_string(Pick(3));
    }
  }

 private:
  std::mt19937_64 rng_;
};

// The number of RealGate steps: WARDEN_PROPERTY_STEPS, else `fallback`.
int StepsFromEnv(int fallback) {
  const char* text = std::getenv("WARDEN_PROPERTY_STEPS");
  return text != nullptr && std::atoi(text) > 0 ? std::atoi(text) : fallback;
}

std::uint64_t SeedFromEnv(std::uint64_t fallback) {
  const char* text = std::getenv("WARDEN_PROPERTY_SEED");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : fallback;
}

// Checks invariants 1-5 and 9 for one step: `before` and `after` are the stored states.
void CheckInvariants(const std::optional<ModelSymbol>& before, const GenWrite& w, bool accepted,
                     const std::optional<ModelSymbol>& after) {
  const bool valid = ModelValid(w);
  const bool human = w.provenance == "human";
  // 1. A valid write to an absent or unnamed slot is accepted.
  if (valid && (!before.has_value() || !before->name.has_value())) {
    ASSERT_TRUE(accepted) << "invariant 1";
  }
  // 2. A valid human write is accepted and leaves the symbol locked (a clear leaves it
  //    unlocked and unnamed: the documented --clear exception).
  if (valid && human) {
    ASSERT_TRUE(accepted) << "invariant 2";
    ASSERT_TRUE(after.has_value());
    if (w.name.has_value()) {
      ASSERT_TRUE(after->locked) << "invariant 2";
      ASSERT_EQ(after->name, w.name);
    } else {
      ASSERT_FALSE(after->locked);
      ASSERT_FALSE(after->name.has_value());
    }
  }
  // 3. A locked symbol is unchanged by every non-human write.
  if (before.has_value() && before->locked && !human) {
    ASSERT_FALSE(accepted) << "invariant 3";
    ASSERT_EQ(after, before) << "invariant 3";
  }
  // 4. Agent over an (unlocked) Oracle annotation with a new name: accepted iff strictly
  //    more confident.
  if (valid && w.provenance == "agent" && before.has_value() && before->name.has_value() &&
      before->provenance == "oracle" && !before->locked && w.name != before->name) {
    ASSERT_EQ(accepted, w.confidence > before->confidence) << "invariant 4";
  }
  // 5. Accepted non-human over a named symbol: higher rank or strictly higher confidence.
  if (accepted && !human && before.has_value() && before->name.has_value()) {
    ASSERT_TRUE(ModelRank(w.provenance) > ModelRank(before->provenance) ||
                w.confidence > before->confidence)
        << "invariant 5";
  }
  // 6 (state half). The symbol changes iff accepted: a rejection leaves it as it was.
  if (!accepted) {
    ASSERT_EQ(after, before) << "invariant 6";
  }
  // 9. Stored confidences are finite and within [0, 1].
  if (after.has_value()) {
    ASSERT_TRUE(std::isfinite(after->confidence) && after->confidence >= 0.0 &&
                after->confidence <= 1.0)
        << "invariant 9: " << after->confidence;
  }
}

#ifndef TROVE_KB_BACKENDS_PG
constexpr const char* kProvenances[] = {"human", "export", "oracle", "diff-carry", "agent"};

TEST(EconomyPropertyTest, PureGate) {
  const std::uint64_t seed = SeedFromEnv(0x5eed0001);
  SCOPED_TRACE(::testing::Message() << "seed " << seed << " (WARDEN_PROPERTY_SEED=" << seed << ")");
  Generator gen(seed);
  // 10^5 sequences, each from an empty KB: 1-16 writes over 3 stable_ids (~850,000 steps).
  constexpr int kSequences = 100'000;
  std::int64_t steps = 0;
  for (int sequence = 0; sequence < kSequences; ++sequence) {
    SCOPED_TRACE(::testing::Message() << "sequence " << sequence);
    std::map<int, std::optional<ModelSymbol>> stored;  // what the gate + update produced
    const int length = 1 + static_cast<int>(gen.Pick(16));
    for (int step = 0; step < length; ++step, ++steps) {
      const int id = static_cast<int>(gen.Pick(3));
      GenWrite w;
      // Occasionally an unknown provenance: only the pure gate can receive one.
      w.provenance = gen.Chance(0.02) ? "wizard" : kProvenances[gen.Pick(5)];
      w.actor = "actor:" + std::to_string(gen.Pick(3));
      if (w.provenance == "human" && gen.Chance(0.15)) {
        w.name = std::nullopt;
      } else if (w.provenance != "human" && gen.Chance(0.03)) {
        w.name = std::nullopt;
      } else {
        auto [name, valid] = gen.Name();
        w.name = name;
        w.name_valid = valid;
      }
      w.summary = gen.Summary();
      w.confidence = w.provenance == "human" && gen.Chance(0.8) ? 1.0 : gen.Confidence();

      const std::optional<ModelSymbol>& before = stored[id];
      std::optional<ExistingSymbol> e;
      if (before.has_value()) {
        e = ExistingSymbol{.name = before->name,
                           .summary = before->summary,
                           .provenance = before->provenance,
                           .actor = before->actor,
                           .confidence = before->confidence,
                           .locked = before->locked};
      }
      const SymbolWrite write{.name = w.name,
                              .summary = w.summary,
                              .provenance = w.provenance,
                              .actor = w.actor,
                              .confidence = w.confidence};
      const Decision d = Decide(e, write);
      const bool expected = ModelAccepts(before, w);
      ASSERT_EQ(d.accepted, expected) << "step " << step << ": " << d.reason;
      ASSERT_TRUE(d.reason.starts_with(d.accepted ? "accepted: " : "rejected: ")) << d.reason;
      ASSERT_GE(d.rule, 1);
      ASSERT_LE(d.rule, 7);
      // 7. The decision depends only on (E, write): another actor, other details, same result.
      SymbolWrite other = write;
      other.actor = "someone:else";
      other.details_json = R"({"noise":true})";
      const Decision d2 = Decide(e, other);
      ASSERT_EQ(d2.accepted, d.accepted);
      ASSERT_EQ(d2.reason, d.reason);

      std::optional<ModelSymbol> after = before;
      if (d.accepted) after = ModelApply(before, w);
      CheckInvariants(before, w, d.accepted, after);
      if (HasFatalFailure()) return;
      stored[id] = after;
    }
  }
  EXPECT_GE(steps, kSequences);
}
#endif  // TROVE_KB_BACKENDS_PG

// ---- Through the real gate.

// Reads the KB's state after each step through the store's scans (backend-neutral; SQLite
// keeps their statements prepared, as 100,000 steps would otherwise spend most of their time
// preparing SQL): every symbol row, read directly (GetSymbol would also read the growing
// evidence trail), and the evidence rows added since the last step.
class StateReader {
 public:
  explicit StateReader(Kb& kb) : store_(KbTestPeer::Store(kb)) {}

  std::map<std::string, ModelSymbol> Symbols() {
    std::map<std::string, ModelSymbol> out;
    Result<std::vector<SymbolRecord>> rows = store_.ScanSymbols();
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok()) return out;
    for (SymbolRecord& r : *rows) {
      ModelSymbol s;
      s.name = std::move(r.name);
      s.summary = std::move(r.summary);
      s.provenance = std::move(r.provenance);
      s.actor = std::move(r.actor);
      s.confidence = r.confidence;
      s.locked = r.locked;
      out.emplace(std::move(r.stable_id), std::move(s));
    }
    return out;
  }

  // One new evidence row: (stable_id, accepted, reason, actor, provenance).
  using Evidence = std::tuple<std::string, bool, std::string, std::string, std::string>;
  // The evidence rows added since the previous call.
  std::vector<Evidence> NewEvidence() {
    std::vector<Evidence> out;
    Result<std::vector<ScannedEvidence>> rows = store_.ScanEvidence(last_id_, SIZE_MAX);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok()) return out;
    for (ScannedEvidence& e : *rows) {
      last_id_ = e.entry.id;
      out.emplace_back(std::move(e.stable_id), e.entry.accepted, std::move(e.entry.reason),
                       std::move(e.entry.actor), std::move(e.entry.provenance));
    }
    return out;
  }

 private:
  KbStore& store_;
  std::int64_t last_id_ = 0;
};

std::optional<ModelSymbol> Find(const std::map<std::string, ModelSymbol>& symbols,
                                const std::string& id) {
  auto it = symbols.find(id);
  if (it == symbols.end()) return std::nullopt;
  return it->second;
}

// A scratch directory on tmpfs (/dev/shm) when there is one, else a TempDir.
class ScratchDir {
 public:
  ScratchDir() {
    char pattern[] = "/dev/shm/trove_kb_property_XXXXXX";
    if (::mkdtemp(pattern) != nullptr) {
      path_ = pattern;
    } else {
      fallback_.emplace("trove_kb_property");
      path_ = fallback_->path();
    }
  }
  ~ScratchDir() {
    if (!fallback_) {
      std::error_code ec;
      std::filesystem::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::optional<base::testing::TempDir> fallback_;
  std::string path_;
};

TEST(EconomyPropertyTest, RealGate) {
  const std::uint64_t seed = SeedFromEnv(0x5eed0002);
  SCOPED_TRACE(::testing::Message() << "seed " << seed << " (WARDEN_PROPERTY_SEED=" << seed << ")");
#ifdef TROVE_KB_BACKENDS_PG
  // PostgreSQL: each step commits through the server (fsync off in the scratch cluster).
  base::testing::PgDatabase pg;
  ASSERT_TRUE(pg.ok());
  const std::string target = pg.url();
  const int steps = StepsFromEnv(20'000);
#else
  ScratchDir dir;
  const std::string target = dir.path() + "/kb.db";
  const int steps = StepsFromEnv(100'000);
#endif
  base::PosixEnv env;
  auto opened = Kb::Open(env, target, KbOptions{.create_if_missing = true});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Kb& kb = **opened;
  if (KbTestPeer::Store(kb).Kind() == StoreKind::kSqlite) {
    ASSERT_TRUE(KbTestPeer::SqliteDb(kb).Exec("PRAGMA synchronous=OFF").ok());
  }
  const auto functions = testing::MakeFunctions(0, 3);
  ASSERT_TRUE(
      kb.StoreVersion(testing::MakeVersion("v1", std::string(64, 'a'), 0, 3), functions).ok());
  std::vector<std::string> ids;
  for (const FunctionRecord& f : functions) ids.push_back(f.stable_id);

  Generator gen(seed);
  std::map<std::string, std::optional<ModelSymbol>> model;
  StateReader reader(kb);
  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    const bool unknown = gen.Chance(0.02);
    const std::string id =
        unknown ? "w1:ffffffffffffffffffffffffffffffff" : ids[gen.Pick(ids.size())];
    auto [name, valid] = gen.Name();
    GenWrite w{.name = name, .name_valid = valid, .summary = gen.Summary()};
    const std::string summary_text = w.summary.value_or("");
    Result<Decision> d = Status::Internal("unset");
    switch (gen.Pick(9)) {
      case 0:
      case 1: {
        const bool cli = gen.Chance(0.5);
        w.provenance = "human";
        w.actor = cli ? "human:cli" : "human:lib";
        w.confidence = 1.0;
        d = kb.HumanSetName(cli ? HumanChannel::kCli : HumanChannel::kLib, id, name, w.summary);
        break;
      }
      case 2: {
        const bool cli = gen.Chance(0.5);
        w = GenWrite{.name = std::nullopt,
                     .provenance = "human",
                     .actor = cli ? "human:cli" : "human:lib",
                     .confidence = 1.0};
        d = kb.HumanClear(cli ? HumanChannel::kCli : HumanChannel::kLib, id);
        break;
      }
      case 3: {
        static constexpr SeedSource kSources[] = {SeedSource::kNameSection, SeedSource::kGlue,
                                                  SeedSource::kExport};
        static constexpr const char* kActors[] = {"ingest:name-section", "ingest:glue",
                                                  "ingest:export"};
        const std::size_t s = gen.Pick(3);
        w.provenance = "export";
        w.actor = kActors[s];
        w.confidence = 1.0;
        w.summary = std::nullopt;
        d = kb.SeedExport(kSources[s], id, name);
        break;
      }
      case 4:
        w.provenance = "oracle";
        w.actor = "oracle:fuzzy";
        w.confidence = gen.Confidence();
        d = kb.OracleWrite("fuzzy", id,
                           {.name = name, .summary = w.summary, .confidence = w.confidence});
        break;
      case 5:
        w.provenance = "diff-carry";
        w.actor = "diff:v1->v2";
        w.confidence = gen.Confidence();
        d = kb.DiffCarry("v1", "v2", id,
                         {.name = name, .summary = w.summary, .confidence = w.confidence});
        break;
      case 6:
      case 7: {
        w.provenance = "agent";
        const bool offline = gen.Chance(0.5);
        w.actor = offline ? "agent:offline" : "agent:openai";
        w.confidence = gen.Confidence();
        d = kb.AgentPropose(offline ? "offline" : "openai", id,
                            {.name = name,
                             .summary = w.summary,
                             .confidence = w.confidence,
                             .details_json = R"({"model":"m"})"});
        break;
      }
      default:
        w.provenance = "agent";
        w.actor = "agent:mcp";
        w.confidence = gen.Confidence();
        d = kb.McpPropose(id, name, w.summary, w.confidence);
        break;
    }
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    const std::vector<StateReader::Evidence> added = reader.NewEvidence();
    if (unknown) {
      ASSERT_FALSE(d->accepted);
      ASSERT_TRUE(added.empty()) << "an unknown stable_id must leave no evidence";
      continue;
    }
    const std::optional<ModelSymbol> before = model[id];
    ASSERT_EQ(d->accepted, ModelAccepts(before, w)) << d->reason;
    // 6. Exactly one evidence row per attempt, with the matching verdict.
    ASSERT_EQ(added.size(), 1u);
    const auto& [ev_id, ev_accepted, ev_reason, ev_actor, ev_provenance] = added.front();
    ASSERT_EQ(ev_id, id);
    ASSERT_EQ(ev_accepted, d->accepted);
    ASSERT_EQ(ev_reason, d->reason);
    ASSERT_EQ(ev_actor, w.actor);
    ASSERT_EQ(ev_provenance, w.provenance);

    const std::map<std::string, ModelSymbol> symbols = reader.Symbols();
    const std::optional<ModelSymbol> after = Find(symbols, id);
    CheckInvariants(before, w, d->accepted, after);
    if (HasFatalFailure()) return;
    const std::optional<ModelSymbol> expected = d->accepted ? ModelApply(before, w) : before;
    ASSERT_EQ(after, expected);
    model[id] = after;
    // Other symbols are untouched, and no other row exists.
    for (const std::string& other : ids) {
      if (other != id) {
        ASSERT_EQ(Find(symbols, other), model[other]);
      }
    }
    std::size_t present = 0;
    for (const std::string& any : ids) present += model[any].has_value() ? 1 : 0;
    ASSERT_EQ(symbols.size(), present);
  }
}

}  // namespace
}  // namespace trove::warden::kb
