// The Oracle store's contract (store.h, backend.h), run against every backend: what Add keeps
// and skips, each lookup's answer and order, the LSH buckets and their limit, the preloaded
// index answering as the queries do, every field surviving the round trip, and reopening.
// warden_oracle_test runs it on SQLite; warden_oracle_pg_test on a scratch PostgreSQL server.
#include "warden/oracle/store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "warden/oracle/testing/scratch_store.h"

#ifndef TROVE_ORACLE_TEST_BACKENDS
#define TROVE_ORACLE_TEST_BACKENDS Backend::kSqlite
#endif

namespace trove::warden::oracle {
namespace {

using testing::Backend;
using ::testing::ElementsAre;
using testing::ScratchStore;

std::string Hex(std::uint64_t v, std::size_t digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(digits, '0');
  for (std::size_t i = 0; i < digits && v != 0; ++i, v >>= 4) out[digits - 1 - i] = kDigits[v & 15];
  return out;
}

// A signature whose fields all derive from `seed`; `instructions` decides LSH membership.
Signature MakeSig(std::uint64_t seed, const std::string& name, std::uint32_t instructions = 40) {
  std::mt19937_64 rng(seed);
  Signature s;
  s.name = name;
  s.name_norm = name;
  s.library = "musl";
  s.emscripten_version = "3.1.6";
  s.opt_level = "O2";
  s.source_ref = "corpus/" + name + ".wasm";
  s.exact_hash = Hex(rng(), 64);
  s.norm_hash = Hex(rng(), 32);
  s.structural_hash = Hex(rng(), 32);
  for (auto& v : s.minhash) v = rng();
  for (auto& v : s.histogram) v = static_cast<std::uint32_t>(rng());
  s.call_targets = {"env.log", "wasi_snapshot_preview1.fd_write"};
  s.type_signature = "(i32, i32) -> i32";
  s.instruction_count = instructions;
  s.callees = {"memcpy", "", "memcpy", "strlen"};
  return s;
}

std::vector<std::string> Names(const std::vector<const Signature*>& sigs) {
  std::vector<std::string> out;
  for (const Signature* s : sigs) out.push_back(s->name);
  return out;
}

std::vector<std::int64_t> Ids(const std::vector<const Signature*>& sigs) {
  std::vector<std::int64_t> out;
  for (const Signature* s : sigs) out.push_back(s->id);
  return out;
}

class StoreBackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  std::unique_ptr<OracleStore> Open(bool create = true) {
    auto store = OracleStore::Open(scratch_.target(), create);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  ScratchStore scratch_{GetParam()};
};

TEST_P(StoreBackendTest, MissingStoreIsNotFoundUnlessCreated) {
  auto missing = OracleStore::Open(scratch_.target(), false);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), base::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("no Oracle store at"));
  auto store = Open();
  ASSERT_NE(store, nullptr);
  auto count = store->Count();
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 0);
  // Once created it opens without `create`.
  EXPECT_NE(Open(false), nullptr);
}

TEST_P(StoreBackendTest, AddSkipsDuplicatesOnTheSixColumns) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Signature a = MakeSig(1, "alpha");
  Signature b = MakeSig(2, "beta");
  Signature a_again = a;  // same six columns, other source: a duplicate
  a_again.source_ref = "elsewhere";
  Signature a_other_lib = a;  // another library: kept
  a_other_lib.library = "libc++";
  Result<std::int64_t> added = store->Add({a, b, a_again, a_other_lib});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, 3);
  added = store->Add({a, b});
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(*added, 0);
  EXPECT_EQ(*store->Count(), 3);
  Result<StoreStats> stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->signatures, 3);
  EXPECT_EQ(stats->libraries, 2);
  EXPECT_THAT(stats->emscripten_versions, ElementsAre("3.1.6"));
  // An empty batch adds nothing and is no error.
  added = store->Add({});
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(*added, 0);
}

TEST_P(StoreBackendTest, EveryFieldSurvivesTheRoundTrip) {
  Signature s = MakeSig(7, "std::__2::basic_string<char>::append(char const*) ünïcode");
  s.name_norm = "basic_string::append";
  s.flags = "pthread";
  s.opt_level = "";
  s.instruction_count = std::numeric_limits<std::uint32_t>::max();
  s.minhash[0] = std::numeric_limits<std::uint64_t>::max();
  s.minhash[1] = 0;
  s.histogram[0] = std::numeric_limits<std::uint32_t>::max();
  s.call_targets.clear();
  s.callees = {"", "a\"b\\c", "\xe2\x82\xac"};
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Add({s}).ok());
  }
  auto store = Open(false);  // a fresh cache: read back from the backend
  ASSERT_NE(store, nullptr);
  auto got = store->ByExact(s.exact_hash);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  const Signature& r = *got->front();
  EXPECT_GT(r.id, 0);
  EXPECT_EQ(r.name, s.name);
  EXPECT_EQ(r.name_norm, s.name_norm);
  EXPECT_EQ(r.library, s.library);
  EXPECT_EQ(r.emscripten_version, s.emscripten_version);
  EXPECT_EQ(r.opt_level, s.opt_level);
  EXPECT_EQ(r.flags, s.flags);
  EXPECT_EQ(r.source_ref, s.source_ref);
  EXPECT_EQ(r.exact_hash, s.exact_hash);
  EXPECT_EQ(r.norm_hash, s.norm_hash);
  EXPECT_EQ(r.structural_hash, s.structural_hash);
  EXPECT_EQ(r.minhash, s.minhash);
  EXPECT_EQ(r.histogram, s.histogram);
  EXPECT_EQ(r.call_targets, s.call_targets);
  EXPECT_EQ(r.type_signature, s.type_signature);
  EXPECT_EQ(r.instruction_count, s.instruction_count);
  EXPECT_EQ(r.callees, s.callees);
}

TEST_P(StoreBackendTest, LookupsAnswerInIdOrder) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  // Three signatures share each key in turn, added out of name order.
  Signature c = MakeSig(3, "c"), a = MakeSig(1, "a"), b = MakeSig(2, "b"), d = MakeSig(4, "d");
  a.exact_hash = c.exact_hash;
  b.exact_hash = c.exact_hash;
  a.norm_hash = d.norm_hash;
  b.structural_hash = d.structural_hash;
  b.type_signature = d.type_signature;
  a.structural_hash = d.structural_hash;
  a.type_signature = "() -> ()";  // same structure, other type: not a structural peer
  d.name_norm = "c";
  ASSERT_TRUE(store->Add({c, a, b, d}).ok());
  for (bool preload : {false, true}) {
    SCOPED_TRACE(preload ? "preloaded" : "queries");
    if (preload) {
      ASSERT_TRUE(store->Preload().ok());
    }
    EXPECT_EQ(store->preloaded(), preload);
    auto exact = store->ByExact(c.exact_hash);
    ASSERT_TRUE(exact.ok());
    EXPECT_THAT(Names(*exact), ElementsAre("c", "a", "b"));
    const std::vector<std::int64_t> ids = Ids(*exact);
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
    auto norm = store->ByNorm(d.norm_hash);
    ASSERT_TRUE(norm.ok());
    EXPECT_THAT(Names(*norm), ElementsAre("a", "d"));
    auto structural = store->ByStructural(d.structural_hash, d.type_signature);
    ASSERT_TRUE(structural.ok());
    EXPECT_THAT(Names(*structural), ElementsAre("b", "d"));
    auto by_name = store->ByName("c");
    ASSERT_TRUE(by_name.ok());
    EXPECT_THAT(Names(*by_name), ElementsAre("c", "d"));
    auto none = store->ByExact(std::string(64, 'f'));
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->empty());
    // The same lookup twice gives the same cached objects.
    auto again = store->ByExact(c.exact_hash);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *exact);
  }
}

TEST_P(StoreBackendTest, LshBucketsHoldOnlyLargeSignaturesAndStopAfterLimitPlusOne) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<Signature> sigs;
  // Six large signatures in one band-0 bucket (same first four minhash values), one small.
  for (int i = 0; i < 6; ++i) {
    Signature s = MakeSig(100 + static_cast<std::uint64_t>(i), "big" + std::to_string(i));
    for (int r = 0; r < kLshRows; ++r) s.minhash[static_cast<std::size_t>(r)] = 42 + r;
    sigs.push_back(s);
  }
  Signature small = MakeSig(200, "small", kLshMinInstructions - 1);
  for (int r = 0; r < kLshRows; ++r) small.minhash[static_cast<std::size_t>(r)] = 42 + r;
  sigs.push_back(small);
  ASSERT_TRUE(store->Add(sigs).ok());
  const std::int64_t bucket = LshBucket(sigs[0].minhash, 0);
  for (bool preload : {false, true}) {
    SCOPED_TRACE(preload ? "preloaded" : "queries");
    if (preload) {
      ASSERT_TRUE(store->Preload().ok());
    }
    auto all = store->ByBucket(0, bucket, 64);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    EXPECT_THAT(Names(*all), ElementsAre("big0", "big1", "big2", "big3", "big4", "big5"));
    auto limited = store->ByBucket(0, bucket, 3);
    ASSERT_TRUE(limited.ok());
    EXPECT_THAT(Names(*limited), ElementsAre("big0", "big1", "big2", "big3"));
    auto unlimited = store->ByBucket(0, bucket, -2);
    ASSERT_TRUE(unlimited.ok());
    EXPECT_EQ(unlimited->size(), 6u);
    auto zero = store->ByBucket(0, bucket, -1);
    ASSERT_TRUE(zero.ok());
    EXPECT_TRUE(zero->empty());
    // Every band of a large signature is bucketed; other bands of the shared values differ.
    for (int band = 1; band < kLshBands; ++band) {
      auto own = store->ByBucket(band, LshBucket(sigs[2].minhash, band), 64);
      ASSERT_TRUE(own.ok());
      EXPECT_THAT(Names(*own), ElementsAre("big2")) << band;
    }
    auto small_band = store->ByBucket(1, LshBucket(small.minhash, 1), 64);
    ASSERT_TRUE(small_band.ok());
    EXPECT_TRUE(small_band->empty());
    auto out_of_range = store->ByBucket(kLshBands, bucket, 64);
    ASSERT_TRUE(out_of_range.ok());
    EXPECT_TRUE(out_of_range->empty());
  }
}

TEST_P(StoreBackendTest, AddDropsThePreloadedIndex) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Add({MakeSig(1, "first")}).ok());
  ASSERT_TRUE(store->Preload().ok());
  const Signature later = MakeSig(2, "later");
  ASSERT_TRUE(store->Add({later}).ok());
  EXPECT_FALSE(store->preloaded());
  auto found = store->ByExact(later.exact_hash);
  ASSERT_TRUE(found.ok());
  EXPECT_THAT(Names(*found), ElementsAre("later"));
}

TEST_P(StoreBackendTest, NameLibrariesAndStatsAcrossVersions) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Signature a = MakeSig(1, "memcpy");
  Signature b = MakeSig(2, "memcpy");
  b.library = "compiler-rt";
  b.emscripten_version = "3.1.10";
  Signature c = MakeSig(3, "malloc");
  c.library = "dlmalloc";
  c.emscripten_version = "2.0.34";
  ASSERT_TRUE(store->Add({a, b, c}).ok());
  auto names = store->NameLibraries();
  ASSERT_TRUE(names.ok());
  ASSERT_EQ(names->size(), 2u);
  EXPECT_THAT(names->at("memcpy"), ElementsAre("compiler-rt", "musl"));
  EXPECT_THAT(names->at("malloc"), ElementsAre("dlmalloc"));
  auto stats = store->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->libraries, 3);
  // Byte order, as SQLite's BINARY collation sorts.
  EXPECT_THAT(stats->emscripten_versions, ElementsAre("2.0.34", "3.1.10", "3.1.6"));
}

TEST_P(StoreBackendTest, ManySignaturesInOneAddAndPreload) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<Signature> sigs;
  for (int i = 0; i < 3000; ++i) {
    sigs.push_back(MakeSig(static_cast<std::uint64_t>(i) + 1000, "f" + std::to_string(i),
                           i % 3 == 0 ? 5 : 40));
  }
  auto added = store->Add(sigs);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, 3000);
  ASSERT_TRUE(store->Preload().ok());
  for (int i : {0, 1, 1499, 2999}) {
    const Signature& s = sigs[static_cast<std::size_t>(i)];
    auto found = store->ByNorm(s.norm_hash);
    ASSERT_TRUE(found.ok());
    EXPECT_THAT(Names(*found), ElementsAre(s.name));
    auto bucket = store->ByBucket(3, LshBucket(s.minhash, 3), 64);
    ASSERT_TRUE(bucket.ok());
    EXPECT_EQ(bucket->size(), i % 3 == 0 ? 0u : 1u) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreBackendTest, ::testing::Values(TROVE_ORACLE_TEST_BACKENDS),
                         [](const ::testing::TestParamInfo<Backend>& param) {
                           return testing::BackendName(param.param);
                         });

}  // namespace
}  // namespace trove::warden::oracle
