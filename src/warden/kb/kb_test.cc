// Kb over real SQLite files in a TempDir: open/schema checks, ingest atomicity, the queries,
// the write paths and the append-only evidence trail.
#include "warden/kb/kb.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/env.h"
#include "base/sqlite.h"
#include "base/testing/temp_dir.h"
#include "warden/kb/schema.h"
#include "warden/kb/testing/kb_test_peer.h"

namespace trove::warden::kb {
namespace {

using base::StatusCode;
using base::testing::TempDir;
using testing::MakeFunctions;
using testing::MakeVersion;

std::int64_t Count(Kb& kb, const std::string& sql) {
  auto stmt = KbTestPeer::SqliteDb(kb).Prepare(sql);
  EXPECT_TRUE(stmt.ok()) << stmt.status().ToString();
  auto row = stmt->Step();
  EXPECT_TRUE(row.ok() && *row);
  return stmt->ColumnInt64(0);
}

std::string Text(Kb& kb, const std::string& sql) {
  auto stmt = KbTestPeer::SqliteDb(kb).Prepare(sql);
  EXPECT_TRUE(stmt.ok()) << stmt.status().ToString();
  auto row = stmt->Step();
  EXPECT_TRUE(row.ok() && *row);
  return stmt->ColumnText(0);
}

class KbTest : public ::testing::Test {
 protected:
  std::unique_ptr<Kb> OpenNew(const std::string& name = "kb.db") {
    auto kb = Kb::Open(env_, dir_.Abs(name), KbOptions{.create_if_missing = true});
    EXPECT_TRUE(kb.ok()) << kb.status().ToString();
    return kb.ok() ? std::move(*kb) : nullptr;
  }
  // Stores v1: 2 imports, 4 defined functions (indices 2..5).
  StoreResult StoreV1(Kb& kb, std::vector<SeedName> seeds = {}) {
    auto r =
        kb.StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 4), MakeFunctions(2, 4), seeds);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : StoreResult{};
  }

  TempDir dir_{"trove_kb_test"};
  base::PosixEnv env_;
};

// ---- Open and schema

TEST_F(KbTest, OpenNeverCreatesUnlessAsked) {
  auto kb = Kb::Open(env_, dir_.Abs("missing.db"));
  ASSERT_FALSE(kb.ok());
  EXPECT_EQ(kb.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(env_.FileExists(dir_.Abs("missing.db")));
}

TEST_F(KbTest, CreatesSchemaMetaAndPragmas) {
  auto kb = OpenNew();
  ASSERT_NE(kb, nullptr);
  EXPECT_EQ(Text(*kb, "SELECT value FROM meta WHERE key = 'schema_version'"), "1");
  EXPECT_EQ(Text(*kb, "SELECT value FROM meta WHERE key = 'producer'"), "trove-warden");
  EXPECT_EQ(*kb->Project(), dir_.path().substr(dir_.path().rfind('/') + 1));
  EXPECT_EQ(Text(*kb, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(Count(*kb, "PRAGMA foreign_keys"), 1);
  EXPECT_EQ(Count(*kb, "PRAGMA busy_timeout"), 5000);
  EXPECT_EQ(Count(*kb, "PRAGMA synchronous"), 1);    // NORMAL
  EXPECT_EQ(Count(*kb, "PRAGMA page_size"), 65536);  // a new KB: 64 KiB pages
  for (const char* table :
       {"meta", "module_versions", "functions", "symbols", "evidence", "diffs"}) {
    EXPECT_EQ(Count(*kb, std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
                                     "AND name = '") +
                             table + "'"),
              1)
        << table;
  }
  // Re-opening re-applies the schema idempotently and keeps meta.
  kb.reset();
  auto again = Kb::Open(env_, dir_.Abs("kb.db"), KbOptions{.project = "ignored"});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*(*again)->Project(), dir_.path().substr(dir_.path().rfind('/') + 1));
}

TEST_F(KbTest, ExistingKbKeepsItsPageSize) {
  // A KB made before new KBs got 64 KiB pages: SQLite's default 4096.
  {
    auto db = base::Database::Open(dir_.Abs("old.db"));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE(internal::PrepareDatabase(**db, /*allow_init=*/true, "old").ok());
  }
  auto kb = Kb::Open(env_, dir_.Abs("old.db"));
  ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  EXPECT_EQ(Count(**kb, "PRAGMA page_size"), 4096);
  EXPECT_EQ(Text(**kb, "PRAGMA integrity_check"), "ok");
}

TEST_F(KbTest, RefusesForeignDatabases) {
  {
    auto db = base::Database::Open(dir_.Abs("other.db"));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE t(x)").ok());
  }
  auto kb = Kb::Open(env_, dir_.Abs("other.db"), KbOptions{.create_if_missing = true});
  ASSERT_FALSE(kb.ok());
  EXPECT_EQ(kb.status().code(), StatusCode::kMalformed);
  EXPECT_NE(kb.status().message().find("not a WARDEN database"), std::string::npos);

  std::ofstream(dir_.Abs("text.db")) << "this is not sqlite at all, just some text padding it\n";
  kb = Kb::Open(env_, dir_.Abs("text.db"));
  ASSERT_FALSE(kb.ok());
  EXPECT_EQ(kb.status().code(), StatusCode::kDataLoss) << kb.status().ToString();

  // An empty file is initialised only when creation was asked for.
  std::ofstream(dir_.Abs("empty.db")).flush();
  kb = Kb::Open(env_, dir_.Abs("empty.db"));
  ASSERT_FALSE(kb.ok());
  EXPECT_NE(kb.status().message().find("not a WARDEN database"), std::string::npos);
  EXPECT_TRUE(Kb::Open(env_, dir_.Abs("empty.db"), KbOptions{.create_if_missing = true}).ok());

  {
    auto db = base::Database::Open(dir_.Abs("producer.db"));
    ASSERT_TRUE((*db)
                    ->Exec("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                           "INSERT INTO meta VALUES ('schema_version', '1'), "
                           "('producer', 'someone-else')")
                    .ok());
  }
  kb = Kb::Open(env_, dir_.Abs("producer.db"));
  ASSERT_FALSE(kb.ok());
  EXPECT_EQ(kb.status().code(), StatusCode::kMalformed);
  EXPECT_NE(kb.status().message().find("someone-else"), std::string::npos);
}

TEST_F(KbTest, RefusesNewerSchema) {
  {
    auto kb = OpenNew();
    ASSERT_TRUE(KbTestPeer::SqliteDb(*kb)
                    .Exec("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
                    .ok());
  }
  auto kb = Kb::Open(env_, dir_.Abs("kb.db"));
  ASSERT_FALSE(kb.ok());
  EXPECT_EQ(kb.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(kb.status().message().find("schema_version 2"), std::string::npos)
      << kb.status().ToString();
}

// ---- Ingest

TEST_F(KbTest, StoreVersionRoundTrips) {
  auto kb = OpenNew();
  const std::vector<FunctionRecord> functions = MakeFunctions(2, 4);
  StoreResult r =
      StoreV1(*kb, {{.func_index = 2, .name = "main", .source = SeedSource::kExport},
                    {.func_index = 3, .name = "helper", .source = SeedSource::kNameSection},
                    {.func_index = 3, .name = "helper2", .source = SeedSource::kGlue}});
  EXPECT_EQ(r.version_id, 1);
  EXPECT_EQ(r.label, "v1");
  EXPECT_FALSE(r.already_ingested);
  EXPECT_EQ(r.seeds_accepted[static_cast<int>(SeedSource::kExport)], 1);
  EXPECT_EQ(r.seeds_accepted[static_cast<int>(SeedSource::kNameSection)], 1);
  EXPECT_EQ(r.seeds_rejected[static_cast<int>(SeedSource::kGlue)], 1);  // equal rank, 1.0 >= 1.0

  auto versions = kb->ListVersions();
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 1u);
  EXPECT_EQ((*versions)[0].functions, 6);
  EXPECT_EQ((*versions)[0].defined, 4);
  EXPECT_EQ((*versions)[0].sha256, std::string(64, 'a'));
  EXPECT_EQ((*versions)[0].ingested_at.size(), 24u);

  auto stored = kb->GetFunction(1, 4);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  const FunctionRecord& got = (*stored)->record;
  const FunctionRecord& want = functions[4];
  EXPECT_EQ(got.stable_id, want.stable_id);
  EXPECT_EQ(got.minhash, want.minhash);
  EXPECT_EQ(got.histogram, want.histogram);
  EXPECT_EQ(got.defined_callees, want.defined_callees);
  EXPECT_EQ(got.call_outs, want.call_outs);
  EXPECT_EQ(got.opcodes, want.opcodes);
  EXPECT_EQ(got.body_offset, want.body_offset);
  EXPECT_EQ(Count(*kb, "SELECT length(minhash) FROM functions WHERE func_index = 4"), 256);
  EXPECT_EQ(Count(*kb, "SELECT length(histogram) FROM functions WHERE func_index = 4"), 84);

  auto all = kb->FunctionRecords(1);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), functions.size());
  for (std::size_t i = 0; i < functions.size(); ++i) {
    EXPECT_EQ((*all)[i].func_index, functions[i].func_index);
    EXPECT_EQ((*all)[i].stable_id, functions[i].stable_id);
    EXPECT_EQ((*all)[i].is_import, functions[i].is_import);
    EXPECT_EQ((*all)[i].import_field, functions[i].import_field);
    EXPECT_EQ((*all)[i].exact_hash, functions[i].is_import ? "" : functions[i].exact_hash);
    EXPECT_EQ((*all)[i].referenced_strings, functions[i].referenced_strings);
  }
  EXPECT_EQ(kb->FunctionRecords(9).status().code(), StatusCode::kNotFound);

  auto facts = kb->GetFunctionFacts(1, 3);
  ASSERT_TRUE(facts.ok() && facts->has_value());
  EXPECT_EQ((*facts)->stable_id, functions[3].stable_id);
  EXPECT_EQ((*facts)->call_targets, (std::vector<std::string>{"env.imp0", "<indirect>"}));
  EXPECT_EQ((*facts)->referenced_strings, (std::vector<std::string>{"hello world"}));
  EXPECT_EQ((*facts)->instruction_mnemonics,
            (std::vector<std::string>{"local.get", "i32.const", "call", "i32.add", "i32x4.add",
                                      "select t"}));
  EXPECT_FALSE((*facts)->is_exported);
  auto import_facts = kb->GetFunctionFacts(1, 0);
  ASSERT_TRUE(import_facts.ok());
  EXPECT_FALSE(import_facts->has_value());
  auto missing = kb->GetFunctionFacts(1, 99);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(kb->GetFunctionFacts(7, 3).status().code(), StatusCode::kNotFound);

  auto callers = kb->Callers(1, 3);
  ASSERT_TRUE(callers.ok());
  EXPECT_EQ(*callers, (std::vector<std::uint32_t>{4}));

  auto symbol = kb->GetSymbol(functions[3].stable_id);
  ASSERT_TRUE(symbol.ok() && symbol->has_value());
  EXPECT_EQ((*symbol)->name, "helper");
  EXPECT_EQ((*symbol)->provenance, "export");
  EXPECT_EQ((*symbol)->actor, "ingest:name-section");
  EXPECT_EQ((*symbol)->type_signature, "() -> ()");
  EXPECT_DOUBLE_EQ((*symbol)->confidence, 1.0);
  EXPECT_FALSE((*symbol)->locked);
  ASSERT_EQ((*symbol)->evidence.size(), 2u);
  EXPECT_TRUE((*symbol)->evidence[0].accepted);
  EXPECT_FALSE((*symbol)->evidence[1].accepted);
  EXPECT_EQ((*symbol)->evidence[1].actor, "ingest:glue");
  EXPECT_NE((*symbol)->evidence[0].details_json.find("\"func_index\":3"), std::string::npos)
      << (*symbol)->evidence[0].details_json;
}

// The JSON columns are written without nlohmann when every string is plain ASCII; either way
// the text is exactly nlohmann's (compact, UTF-8 kept, invalid UTF-8 replaced).
TEST_F(KbTest, JsonColumnsAreNlohmannsText) {
  auto kb = OpenNew();
  std::vector<FunctionRecord> functions = MakeFunctions(0, 3);
  functions[0].export_names = {"plain", "with space", "x.y"};
  functions[0].call_targets = {};
  functions[0].defined_callees = {0, 7, 4294967295u, 12};
  functions[1].export_names = {"quote\"", "back\\slash", "tab\t", "\001ctl", "del\x7f"};
  functions[1].referenced_strings = {"caf\xc3\xa9", "bad \xff utf-8", ""};
  functions[2].call_outs = {"env.a", "env.b"};
  functions[2].defined_callees = {};
  ASSERT_TRUE(kb->StoreVersion(MakeVersion("j", std::string(64, 'b'), 0, 3), functions, {}).ok());
  auto dump = [](const std::vector<std::string>& v) {
    return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  for (const FunctionRecord& f : functions) {
    const std::string where = fmt::format(" FROM functions WHERE func_index = {}", f.func_index);
    EXPECT_EQ(Text(*kb, "SELECT export_names_json" + where), dump(f.export_names));
    EXPECT_EQ(Text(*kb, "SELECT call_targets_json" + where), dump(f.call_targets));
    EXPECT_EQ(Text(*kb, "SELECT call_outs_json" + where), dump(f.call_outs));
    EXPECT_EQ(Text(*kb, "SELECT referenced_strings_json" + where), dump(f.referenced_strings));
    EXPECT_EQ(Text(*kb, "SELECT callees_json" + where), nlohmann::json(f.defined_callees).dump());
  }
  auto all = kb->FunctionRecords(1);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0].export_names, functions[0].export_names);
  EXPECT_EQ((*all)[0].defined_callees, functions[0].defined_callees);
  EXPECT_EQ((*all)[1].export_names, functions[1].export_names);
  EXPECT_EQ((*all)[1].referenced_strings[0], "caf\xc3\xa9");
}

// The JSON columns are read directly when they hold the compact form the writer produces, and
// through nlohmann's parser otherwise: any text reads exactly as nlohmann reads it (a value of
// the wrong type is skipped, anything but an array reads as empty).
TEST_F(KbTest, JsonColumnsReadAsNlohmannReadsThem) {
  auto kb = OpenNew();
  ASSERT_TRUE(
      kb->StoreVersion(MakeVersion("j", std::string(64, 'b'), 0, 1), MakeFunctions(0, 1), {}).ok());
  const std::vector<std::string> strings = {"[]",
                                            "[\"a\"]",
                                            "[\"\"]",
                                            "[\"a\",\"b c\",\"\"]",
                                            "[ \"a\" ]",
                                            "[\"a\",]",
                                            "[\"\\u0041\"]",
                                            "[\"a\\\"b\"]",
                                            "[\"a\",1,null]",
                                            "{}",
                                            "not json",
                                            "",
                                            "[\"a\"\"b\"]",
                                            "[\"caf\xc3\xa9\"]",
                                            "[\"\xff\"]",
                                            "[\"a\",\"b\""};
  const std::vector<std::string> indices = {"[]",
                                            "[0]",
                                            "[1,2,3]",
                                            "[4294967295]",
                                            "[4294967296]",
                                            "[01]",
                                            "[-1,2]",
                                            "[1.5,2]",
                                            "[1e3]",
                                            "[ 1 , 2 ]",
                                            "[1,]",
                                            "[,1]",
                                            "[1,\"a\"]",
                                            "[18446744073709551615]",
                                            "x",
                                            "",
                                            "[1 2]",
                                            "[1,2"};
  auto want_strings = [](const std::string& text) {
    std::vector<std::string> out;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_array()) return out;
    for (const auto& v : j) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
    return out;
  };
  auto want_indices = [](const std::string& text) {
    std::vector<std::uint32_t> out;
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_array()) return out;
    for (const auto& v : j) {
      if (v.is_number_unsigned()) out.push_back(v.get<std::uint32_t>());
    }
    return out;
  };
  for (std::size_t i = 0; i < std::max(strings.size(), indices.size()); ++i) {
    const std::string& s = strings[i % strings.size()];
    const std::string& n = indices[i % indices.size()];
    auto update = KbTestPeer::SqliteDb(*kb).Prepare(
        "UPDATE functions SET call_outs_json = ?1, referenced_strings_json = ?1, "
        "export_names_json = ?1, callees_json = ?2");
    ASSERT_TRUE(update.ok());
    ASSERT_TRUE(update->Bind(1, std::string_view(s)).ok());
    ASSERT_TRUE(update->Bind(2, std::string_view(n)).ok());
    ASSERT_TRUE(update->Step().ok());
    auto all = kb->FunctionRecords(1);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ((*all)[0].call_outs, want_strings(s)) << s;
    EXPECT_EQ((*all)[0].export_names, want_strings(s)) << s;
    EXPECT_EQ((*all)[0].defined_callees, want_indices(n)) << n;
    auto lean = kb->DefinedFunctionsForDiff(1);
    ASSERT_TRUE(lean.ok());
    EXPECT_EQ(lean->records[0].referenced_strings, want_strings(s)) << s;
    EXPECT_EQ(lean->records[0].defined_callees, want_indices(n)) << n;
  }
}

// DefinedFunctionsForDiff: the defined functions of FunctionRecords (the columns the diff
// reads) and the symbols of ListFunctions, in one query.
TEST_F(KbTest, DefinedFunctionsForDiffMatchesRecordsAndRows) {
  auto kb = OpenNew();
  const auto functions = MakeFunctions(2, 4);
  StoreV1(*kb, {{.func_index = 2, .name = "main", .source = SeedSource::kExport}});
  ASSERT_TRUE(kb->HumanSetName(HumanChannel::kCli, functions[3].stable_id, "parse").ok());
  ASSERT_TRUE(kb->McpPropose(functions[5].stable_id, "guess", "", 0.3).ok());
  auto lean = kb->DefinedFunctionsForDiff(1);
  ASSERT_TRUE(lean.ok()) << lean.status().ToString();
  auto records = kb->FunctionRecords(1);
  auto rows = kb->ListFunctions({.version_id = 1});
  ASSERT_TRUE(records.ok() && rows.ok());
  ASSERT_EQ(lean->records.size(), 4u);
  ASSERT_EQ(lean->symbols.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const FunctionRecord& got = lean->records[i];
    const FunctionRecord& want = (*records)[i + 2];
    EXPECT_FALSE(got.is_import);
    EXPECT_EQ(got.func_index, want.func_index);
    EXPECT_EQ(got.type_signature, want.type_signature);
    EXPECT_EQ(got.stable_id, want.stable_id);
    EXPECT_EQ(got.id_tier, want.id_tier);
    EXPECT_EQ(got.norm_hash, want.norm_hash);
    EXPECT_EQ(got.exact_hash, want.exact_hash);
    EXPECT_EQ(got.structural_hash, want.structural_hash);
    EXPECT_EQ(got.minhash, want.minhash);
    EXPECT_EQ(got.histogram, want.histogram);
    EXPECT_EQ(got.call_outs, want.call_outs);
    EXPECT_EQ(got.defined_callees, want.defined_callees);
    EXPECT_EQ(got.instruction_count, want.instruction_count);
    EXPECT_EQ(got.body_offset, want.body_offset);
    EXPECT_EQ(got.body_size, want.body_size);
    EXPECT_EQ(got.referenced_strings, want.referenced_strings);
    EXPECT_EQ(got.opcodes, want.opcodes);
    EXPECT_TRUE(got.call_targets.empty());
    const FunctionRow& symbol = lean->symbols[i];
    const FunctionRow& row = rows->functions[i];
    EXPECT_EQ(symbol.index, row.index);
    EXPECT_EQ(symbol.name, row.name);
    EXPECT_EQ(symbol.provenance, row.provenance);
    EXPECT_EQ(symbol.confidence, row.confidence);
    EXPECT_EQ(symbol.locked, row.locked);
  }
  EXPECT_EQ(lean->symbols[1].name, "parse");
  EXPECT_TRUE(lean->symbols[1].locked);
  EXPECT_FALSE(lean->symbols[2].name.has_value());
  EXPECT_EQ(kb->DefinedFunctionsForDiff(9).status().code(), StatusCode::kNotFound);
}

// The packed and JSON columns are encoded on a thread of their own, into a ring of slots
// reused as the inserts move on: with several thousand rows (the ring holds 1,024) each row
// must still get its own columns, every slot having been rewritten a few times.
TEST_F(KbTest, ManyRowsEachGetTheirOwnEncodedColumns) {
  auto kb = OpenNew();
  constexpr std::uint32_t kImported = 3;
  constexpr std::uint32_t kDefined = 5000;
  std::vector<FunctionRecord> functions = MakeFunctions(kImported, kDefined);
  for (FunctionRecord& f : functions) {
    const std::string n = std::to_string(f.func_index);
    f.export_names = {"export" + n};
    f.call_targets = {"env.t" + n};
    f.referenced_strings = {"string " + n, f.func_index % 3 == 0 ? "quote\"" + n : "x"};
    if (!f.is_import) {
      f.call_outs = {"env.out" + n};
      f.defined_callees = {f.func_index, f.func_index + 1};
    }
  }
  auto stored = kb->StoreVersion(MakeVersion("many", std::string(64, 'c'), kImported, kDefined),
                                 functions, {});
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  auto all = kb->FunctionRecords(stored->version_id);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), functions.size());
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const FunctionRecord& got = (*all)[i];
    const FunctionRecord& want = functions[i];
    ASSERT_EQ(got.func_index, want.func_index);
    EXPECT_EQ(got.export_names, want.export_names) << i;
    EXPECT_EQ(got.call_targets, want.call_targets) << i;
    EXPECT_EQ(got.referenced_strings, want.referenced_strings) << i;
    EXPECT_EQ(got.call_outs, want.call_outs) << i;
    EXPECT_EQ(got.defined_callees, want.defined_callees) << i;
    if (!want.is_import) {
      EXPECT_EQ(got.minhash, want.minhash) << i;
      EXPECT_EQ(got.histogram, want.histogram) << i;
    }
  }
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM functions WHERE is_import = 1 AND minhash IS NULL"),
            kImported);
}

// A store that fails part way through, after the encoding ring has wrapped, returns the error
// and writes nothing; the encoding thread, possibly waiting for a free slot, is stopped and
// joined on the way out.
TEST_F(KbTest, FailureAfterManyRowsRollsBack) {
  auto kb = OpenNew();
  ASSERT_TRUE(KbTestPeer::SqliteDb(*kb)
                  .Exec("CREATE TRIGGER fail_at_2500 BEFORE INSERT ON functions "
                        "WHEN NEW.func_index = 2500 BEGIN SELECT RAISE(ABORT, 'boom'); END")
                  .ok());
  auto r = kb->StoreVersion(MakeVersion("v1", std::string(64, 'd'), 0, 3000),
                            MakeFunctions(0, 3000), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("boom"), std::string::npos) << r.status().ToString();
  for (const char* table : {"module_versions", "functions"}) {
    EXPECT_EQ(Count(*kb, std::string("SELECT count(*) FROM ") + table), 0) << table;
  }
}

// Reads the version and function counts from a copy of the database file alone (no -wal).
std::pair<std::int64_t, std::int64_t> CountsInFileCopy(const std::string& from,
                                                       const std::string& to) {
  std::filesystem::copy_file(from, to);
  auto copy = base::Database::Open(to, {.create_if_missing = false});
  EXPECT_TRUE(copy.ok()) << copy.status().ToString();
  if (!copy.ok()) return {-1, -1};
  auto stmt = (*copy)->Prepare(
      "SELECT (SELECT count(*) FROM module_versions), (SELECT count(*) FROM functions)");
  EXPECT_TRUE(stmt.ok());
  if (!stmt.ok() || !stmt->Step().value_or(false)) return {-1, -1};
  return {stmt->ColumnInt64(0), stmt->ColumnInt64(1)};
}

// The root page of the stable_id index: a first version written with the rollback journal
// builds the index again after its rows, on a new page; through the WAL it stays.
constexpr const char* kStableIdIndexRoot =
    "SELECT rootpage FROM sqlite_schema WHERE name = 'functions_stable_id'";

// The first version into an empty KB, with no other connection open, is written with a
// rollback journal (no WAL, no checkpoint, no finisher); the KB is back in WAL mode after it
// and its file alone holds the version.
TEST_F(KbTest, FirstVersionIsWrittenWithARollbackJournal) {
  auto kb = OpenNew();
  const std::int64_t root = Count(*kb, kStableIdIndexRoot);
  StoreV1(*kb);
  EXPECT_NE(Count(*kb, kStableIdIndexRoot), root);  // the rollback path rebuilt the index
  // The finisher followed the database file (its writeback), with nothing to checkpoint.
  EXPECT_TRUE(KbTestPeer::WaitForFinisher(*kb).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_.Abs("kb.db-wal")) &&
               std::filesystem::file_size(dir_.Abs("kb.db-wal")) > 0);
  EXPECT_EQ(Text(*kb, "PRAGMA journal_mode"), "wal");
  EXPECT_FALSE(std::filesystem::exists(dir_.Abs("kb.db-journal")));
  EXPECT_EQ(CountsInFileCopy(dir_.Abs("kb.db"), dir_.Abs("copy.db")),
            (std::pair<std::int64_t, std::int64_t>{1, 6}));
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM functions"), 6);
}

// The stable_id and hash indexes of `functions`, by name, with their stored SQL.
constexpr const char* kFunctionIndexes =
    "SELECT group_concat(name || ': ' || sql, '; ') FROM (SELECT name, sql FROM sqlite_schema "
    "WHERE type = 'index' AND tbl_name = 'functions' AND sql IS NOT NULL ORDER BY name)";

// The first version into an empty KB drops the four stable_id and hash indexes and builds them
// after its rows, in its transaction (kb.cc): afterwards they are there with the schema's own
// SQL and hold every row (integrity_check compares each index with the table); a first store
// that fails after the drop leaves them as they were.
TEST_F(KbTest, FirstVersionBuildsTheFunctionIndexesAfterItsRows) {
  auto kb = OpenNew();
  const std::string schema = Text(*kb, kFunctionIndexes);
  ASSERT_EQ(schema,
            "functions_exact_hash: CREATE INDEX functions_exact_hash ON functions(exact_hash); "
            "functions_norm_hash: CREATE INDEX functions_norm_hash ON functions(norm_hash); "
            "functions_stable_id: CREATE INDEX functions_stable_id ON functions(stable_id); "
            "functions_structural_hash: CREATE INDEX functions_structural_hash ON "
            "functions(structural_hash)");
  ASSERT_TRUE(KbTestPeer::SqliteDb(*kb)
                  .Exec("CREATE TRIGGER fail_at_4 BEFORE INSERT ON functions "
                        "WHEN NEW.func_index = 4 BEGIN SELECT RAISE(ABORT, 'boom'); END")
                  .ok());
  auto failed =
      kb->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 4), MakeFunctions(2, 4), {});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(Text(*kb, kFunctionIndexes), schema);
  ASSERT_TRUE(KbTestPeer::SqliteDb(*kb).Exec("DROP TRIGGER fail_at_4").ok());

  StoreV1(*kb, {{.func_index = 3, .name = "seeded"}});
  EXPECT_EQ(Text(*kb, kFunctionIndexes), schema);
  EXPECT_TRUE(KbTestPeer::SqliteDb(*kb).IntegrityCheck().ok());
  for (const char* index : {"functions_stable_id", "functions_norm_hash", "functions_exact_hash",
                            "functions_structural_hash"}) {
    const std::string column = std::string(index).substr(std::string("functions_").size());
    EXPECT_EQ(
        Count(*kb, fmt::format("SELECT count(*) FROM functions INDEXED BY {} WHERE {} >= ''", index,
                               column)),
        Count(*kb, fmt::format("SELECT count(*) FROM functions WHERE {} IS NOT NULL", column)))
        << index;
  }
  // The seed went through the gate after the indexes were built, and found its function.
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM symbols WHERE name = 'seeded'"), 1);
}

// The journal mode recorded in the database file's header: 2 for WAL, 1 for a rollback
// journal (bytes 18 and 19, the file format's write and read versions).
int HeaderJournalVersion(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[20] = {};
  in.read(header, sizeof(header));
  return in ? header[18] : -1;
}

// PrepareToStore switches an empty KB to the rollback journal ahead of StoreVersion, which
// then writes the first version that way and goes back to WAL.
TEST_F(KbTest, PrepareToStoreSwitchesAnEmptyKbAheadOfTheStore) {
  auto kb = OpenNew();
  const std::int64_t root = Count(*kb, kStableIdIndexRoot);
  auto prepared = kb->PrepareToStore();
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  EXPECT_TRUE(*prepared);
  EXPECT_EQ(Text(*kb, "PRAGMA journal_mode"), "delete");
  StoreV1(*kb);
  EXPECT_NE(Count(*kb, kStableIdIndexRoot), root);
  EXPECT_EQ(Text(*kb, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(CountsInFileCopy(dir_.Abs("kb.db"), dir_.Abs("copy.db")),
            (std::pair<std::int64_t, std::int64_t>{1, 6}));
  // A KB that holds a version is not switched.
  auto again = kb->PrepareToStore();
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(Text(*kb, "PRAGMA journal_mode"), "wal");
}

// Without a StoreVersion after it (a malformed module), the Kb goes back to WAL when it is
// destroyed: the file's header says WAL again.
TEST_F(KbTest, PrepareToStoreWithoutAStoreGoesBackToWalOnClose) {
  {
    auto kb = OpenNew();
    ASSERT_TRUE(kb->PrepareToStore().value_or(false));
    EXPECT_EQ(HeaderJournalVersion(dir_.Abs("kb.db")), 1);
  }
  EXPECT_EQ(HeaderJournalVersion(dir_.Abs("kb.db")), 2);
}

// ---- RemoveCreated: a failed first ingest leaves nothing behind (docs/warden.md §2.1)

TEST_F(KbTest, RemoveCreatedRemovesANewUnusedKbAndItsFiles) {
  for (const bool prepared : {false, true}) {
    SCOPED_TRACE(prepared);
    const DatabaseFiles before = ExistingDatabaseFiles(dir_.Abs("new.db"));
    EXPECT_FALSE(before.db || before.wal || before.shm || before.journal);
    auto kb = OpenNew("new.db");
    if (prepared) {
      ASSERT_TRUE(kb->PrepareToStore().value_or(false));
    }
    auto removed = Kb::RemoveCreated(std::move(kb), before);
    ASSERT_TRUE(removed.ok()) << removed.status().ToString();
    EXPECT_TRUE(*removed);
    const DatabaseFiles after = ExistingDatabaseFiles(dir_.Abs("new.db"));
    EXPECT_FALSE(after.db || after.wal || after.shm || after.journal);
  }
}

TEST_F(KbTest, RemoveCreatedKeepsAKbThatExisted) {
  OpenNew("old.db").reset();
  const DatabaseFiles before = ExistingDatabaseFiles(dir_.Abs("old.db"));
  ASSERT_TRUE(before.db);
  auto removed = Kb::RemoveCreated(OpenNew("old.db"), before);
  ASSERT_TRUE(removed.ok());
  EXPECT_FALSE(*removed);
  EXPECT_TRUE(env_.FileExists(dir_.Abs("old.db")));
}

// Another connection open on the new file, in this process or another, keeps it: it may be
// about to write there.
TEST_F(KbTest, RemoveCreatedKeepsAKbAnotherConnectionHolds) {
  const DatabaseFiles before = ExistingDatabaseFiles(dir_.Abs("new.db"));
  auto kb = OpenNew("new.db");
  ASSERT_TRUE(kb->PrepareToStore().value_or(false));
  auto other = Kb::Open(env_, dir_.Abs("new.db"));  // sets WAL again, as every open does
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto removed = Kb::RemoveCreated(std::move(kb), before);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_FALSE(*removed);
  EXPECT_TRUE(env_.FileExists(dir_.Abs("new.db")));
  // The other connection goes on and stores a version.
  StoreV1(**other);
  EXPECT_EQ(Count(**other, "SELECT count(*) FROM functions"), 6);
}

// A KB someone stored into meanwhile (here through the same file by another connection that
// closed again) is kept.
TEST_F(KbTest, RemoveCreatedKeepsAKbThatHoldsAVersion) {
  const DatabaseFiles before = ExistingDatabaseFiles(dir_.Abs("new.db"));
  auto kb = OpenNew("new.db");
  {
    auto other = Kb::Open(env_, dir_.Abs("new.db"));
    ASSERT_TRUE(other.ok());
    StoreV1(**other);
  }
  auto removed = Kb::RemoveCreated(std::move(kb), before);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_FALSE(*removed);
  auto reopened = Kb::Open(env_, dir_.Abs("new.db"));
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(Count(**reopened, "SELECT count(*) FROM module_versions"), 1);
  EXPECT_EQ(Text(**reopened, "PRAGMA journal_mode"), "wal");
}

// Another process that opens the KB between PrepareToStore and StoreVersion sets WAL again
// (every open does); the version then goes through the WAL, and the other connection sees it.
TEST_F(KbTest, PrepareToStoreThenAnotherOpenGoesThroughTheWal) {
  auto kb = OpenNew();
  const std::int64_t root = Count(*kb, kStableIdIndexRoot);
  ASSERT_TRUE(kb->PrepareToStore().value_or(false));
  auto other = Kb::Open(env_, dir_.Abs("kb.db"));
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(HeaderJournalVersion(dir_.Abs("kb.db")), 2);
  StoreV1(*kb);
  EXPECT_EQ(Count(*kb, kStableIdIndexRoot), root);
  EXPECT_EQ(Text(*kb, "PRAGMA journal_mode"), "wal");
  EXPECT_TRUE(KbTestPeer::WaitForFinisher(*kb).ok());  // the WAL's checkpoint
  EXPECT_EQ(Count(**other, "SELECT count(*) FROM functions"), 6);
}

// With another connection open on the file the switch fails at once and the first version
// goes through the WAL and the finisher, as every later version does.
TEST_F(KbTest, FirstVersionWithAnotherConnectionOpenGoesThroughTheWal) {
  auto kb = OpenNew();
  auto other = base::Database::Open(dir_.Abs("kb.db"), {.create_if_missing = false});
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  {
    auto stmt = (*other)->Prepare("SELECT count(*) FROM module_versions");
    ASSERT_TRUE(stmt.ok());
    ASSERT_TRUE(stmt->Step().value_or(false));
  }
  StoreV1(*kb);
  EXPECT_TRUE(KbTestPeer::WaitForFinisher(*kb).ok());
  EXPECT_EQ(Text(*kb, "PRAGMA journal_mode"), "wal");
  auto stmt = (*other)->Prepare("SELECT count(*) FROM functions");
  ASSERT_TRUE(stmt.ok());
  ASSERT_TRUE(stmt->Step().value_or(false));
  EXPECT_EQ(stmt->ColumnInt64(0), 6);
}

// The checkpoint of a later version runs beside the caller and is done before the Kb closes:
// with the Kb still open, the database file alone (no -wal) already holds the version.
TEST_F(KbTest, StoredVersionReachesTheDatabaseFileBeforeClose) {
  auto kb = OpenNew();
  StoreV1(*kb);
  ASSERT_TRUE(
      kb->StoreVersion(MakeVersion("v2", std::string(64, 'b'), 1, 5), MakeFunctions(1, 5)).ok());
  ASSERT_TRUE(KbTestPeer::WaitForFinisher(*kb).ok());
  EXPECT_EQ(std::filesystem::file_size(dir_.Abs("kb.db-wal")), 0u);
  EXPECT_EQ(CountsInFileCopy(dir_.Abs("kb.db"), dir_.Abs("copy.db")),
            (std::pair<std::int64_t, std::int64_t>{2, 12}));
  // The Kb goes on working after its checkpoint.
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM functions"), 12);
}

// A store that writes nothing (the same bytes again, or a failure) starts no checkpoint.
TEST_F(KbTest, StoreWithoutCommitLeavesNoCheckpoint) {
  auto kb = OpenNew();
  StoreV1(*kb);
  ASSERT_TRUE(
      kb->StoreVersion(MakeVersion("v2", std::string(64, 'b'), 1, 5), MakeFunctions(1, 5)).ok());
  ASSERT_TRUE(KbTestPeer::WaitForFinisher(*kb).ok());
  auto again = kb->StoreVersion(MakeVersion("v3", std::string(64, 'a'), 2, 4), MakeFunctions(2, 4));
  ASSERT_TRUE(again.ok() && again->already_ingested);
  EXPECT_EQ(KbTestPeer::WaitForFinisher(*kb).code(), StatusCode::kNotFound);
}

TEST_F(KbTest, DuplicateLabelAndSameBytes) {
  auto kb = OpenNew();
  StoreV1(*kb);
  // Same bytes, any label: the existing version, nothing written.
  auto again =
      kb->StoreVersion(MakeVersion("other", std::string(64, 'a'), 2, 4), MakeFunctions(2, 4));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already_ingested);
  EXPECT_EQ(again->version_id, 1);
  EXPECT_EQ(again->label, "v1");
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM module_versions"), 1);
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM functions"), 6);
  // Different bytes, taken label.
  auto dup = kb->StoreVersion(MakeVersion("v1", std::string(64, 'b'), 2, 4), MakeFunctions(2, 4));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM module_versions"), 1);
  // Default label: v<N>.
  auto v2 = kb->StoreVersion(MakeVersion("", std::string(64, 'b'), 2, 4), MakeFunctions(2, 4));
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->label, "v2");
  EXPECT_EQ(v2->version_id, 2);
}

TEST_F(KbTest, InconsistentRecordsAreRefused) {
  auto kb = OpenNew();
  auto r = kb->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 5), MakeFunctions(2, 4));
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  auto functions = MakeFunctions(2, 4);
  functions[3].func_index = 2;
  r = kb->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 4), functions);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  r = kb->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 4), MakeFunctions(2, 4),
                       {{.func_index = 42, .name = "x"}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM module_versions"), 0);
}

TEST_F(KbTest, FailureMidStoreRollsBackEverything) {
  auto kb = OpenNew();
  // A test-only trigger makes the 5th function row fail after the version row, four function
  // rows and nothing else were written.
  ASSERT_TRUE(KbTestPeer::SqliteDb(*kb)
                  .Exec("CREATE TRIGGER fail_at_5 BEFORE INSERT ON functions "
                        "WHEN NEW.func_index = 5 BEGIN SELECT RAISE(ABORT, 'boom'); END")
                  .ok());
  auto r = kb->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 4), MakeFunctions(2, 4),
                            {{.func_index = 2, .name = "main"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("boom"), std::string::npos) << r.status().ToString();
  for (const char* table : {"module_versions", "functions", "symbols", "evidence"}) {
    EXPECT_EQ(Count(*kb, std::string("SELECT count(*) FROM ") + table), 0) << table;
  }
  ASSERT_TRUE(KbTestPeer::SqliteDb(*kb).Exec("DROP TRIGGER fail_at_5").ok());
  StoreResult ok = StoreV1(*kb, {{.func_index = 2, .name = "main"}});
  EXPECT_EQ(ok.label, "v1");
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM evidence"), 1);
}

// ---- Queries

TEST_F(KbTest, ResolveVersion) {
  auto kb = OpenNew();
  EXPECT_EQ(kb->ResolveVersion(std::nullopt).status().code(), StatusCode::kNotFound);
  StoreV1(*kb);
  ASSERT_TRUE(
      kb->StoreVersion(MakeVersion("v2", std::string(64, 'b'), 2, 4), MakeFunctions(2, 4)).ok());
  EXPECT_EQ(*kb->ResolveVersion(std::nullopt), 2);
  EXPECT_EQ(*kb->ResolveVersion("v1"), 1);
  EXPECT_EQ(*kb->ResolveVersion("1"), 1);
  EXPECT_EQ(*kb->ResolveVersion("2"), 2);
  EXPECT_EQ(kb->ResolveVersion("3").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(kb->ResolveVersion("v9").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(kb->GetVersion(9).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(kb->GetVersion(2)->label, "v2");
}

TEST_F(KbTest, CoverageAndListFunctions) {
  auto kb = OpenNew();
  const auto functions = MakeFunctions(2, 4);
  StoreV1(*kb, {{.func_index = 2, .name = "main", .source = SeedSource::kExport}});
  ASSERT_TRUE(kb->HumanSetName(HumanChannel::kCli, functions[3].stable_id, "parse").ok());
  ASSERT_TRUE(
      kb->OracleWrite("exact", functions[4].stable_id, {.name = "memcpy", .confidence = 0.9}).ok());
  ASSERT_TRUE(kb->McpPropose(functions[5].stable_id, "guess", "", 0.3).ok());

  auto c = kb->GetCoverage(1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->defined, 4);
  EXPECT_EQ(c->named, 4);
  EXPECT_DOUBLE_EQ(c->coverage_pct, 100.0);
  EXPECT_EQ(c->human_named, 1);
  EXPECT_EQ(c->export_named, 1);
  EXPECT_EQ(c->oracle_named, 1);
  EXPECT_EQ(c->agent_named, 1);
  EXPECT_EQ(c->locked, 1);
  EXPECT_NEAR(*c->mean_confidence, (1.0 + 1.0 + 0.9 + 0.3) / 4, 1e-12);
  ASSERT_TRUE(kb->HumanClear(HumanChannel::kCli, functions[3].stable_id).ok());
  c = kb->GetCoverage(1);
  EXPECT_EQ(c->named, 3);
  EXPECT_DOUBLE_EQ(c->coverage_pct, 75.0);
  EXPECT_EQ(c->locked, 0);
  EXPECT_EQ(kb->GetCoverage(5).status().code(), StatusCode::kNotFound);

  auto all = kb->ListFunctions({.version_id = 1});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->functions.size(), 4u);
  EXPECT_FALSE(all->next_cursor.has_value());
  EXPECT_EQ(all->functions[0].index, 2u);
  EXPECT_EQ(all->functions[0].name, "main");
  EXPECT_EQ(all->functions[0].provenance, "export");
  EXPECT_FALSE(all->functions[1].name.has_value());  // cleared
  EXPECT_FALSE(all->functions[1].provenance.has_value());
  EXPECT_FALSE(all->functions[1].confidence.has_value());
  EXPECT_EQ(all->functions[3].confidence, 0.3);

  auto with_imports = kb->ListFunctions({.version_id = 1, .include_imports = true});
  ASSERT_EQ(with_imports->functions.size(), 6u);
  EXPECT_TRUE(with_imports->functions[0].is_import);
  EXPECT_EQ(with_imports->functions[0].type, "(i32) -> ()");

  auto below = kb->ListFunctions({.version_id = 1, .below = 0.95});
  ASSERT_EQ(below->functions.size(), 3u);  // unnamed, 0.9, 0.3
  auto unnamed = kb->ListFunctions({.version_id = 1, .unnamed_only = true});
  ASSERT_EQ(unnamed->functions.size(), 1u);
  auto oracle = kb->ListFunctions({.version_id = 1, .provenance = "oracle"});
  ASSERT_EQ(oracle->functions.size(), 1u);
  EXPECT_EQ(kb->ListFunctions({.version_id = 1, .provenance = "wizard"}).status().code(),
            StatusCode::kInvalidArgument);

  // Paging: every row exactly once, in order, while writes happen between pages.
  FunctionQuery q{.version_id = 1, .include_imports = true, .limit = 4};
  std::vector<std::uint32_t> seen;
  for (int page = 0; page < 10; ++page) {
    auto p = kb->ListFunctions(q);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    for (const FunctionRow& row : p->functions) seen.push_back(row.index);
    ASSERT_TRUE(kb->McpPropose(functions[2].stable_id, "n" + std::to_string(page), "", 0.1).ok());
    if (!p->next_cursor.has_value()) break;
    q.cursor = p->next_cursor;
  }
  EXPECT_EQ(seen, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5}));
  // Exactly one page: no next cursor.
  auto exact = kb->ListFunctions({.version_id = 1, .limit = 4});
  EXPECT_FALSE(exact->next_cursor.has_value());
  // A cursor from another query is refused; limits are bounded.
  auto first = kb->ListFunctions({.version_id = 1, .limit = 1});
  ASSERT_TRUE(first->next_cursor.has_value());
  EXPECT_EQ(
      kb->ListFunctions(
            {.version_id = 1, .include_imports = true, .limit = 1, .cursor = first->next_cursor})
          .status()
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(kb->ListFunctions({.version_id = 1, .limit = 1, .cursor = "garbage!"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(kb->ListFunctions({.version_id = 1, .limit = 0}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(kb->ListFunctions({.version_id = 1, .limit = 1001}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(kb->ListFunctions({.version_id = 1, .limit = 1000}).ok());
  EXPECT_EQ(kb->ListFunctions({.version_id = 3}).status().code(), StatusCode::kNotFound);
}

TEST_F(KbTest, ResolveFunction) {
  auto kb = OpenNew();
  // Two defined functions whose ids share 8 hex digits after w1:.
  const std::vector<std::string> ids = {"w1:abcdef0100000000000000000000aaaa",
                                        "w1:abcdef0100000000000000000000bbbb",
                                        "w1:1234567800000000000000000000cccc"};
  auto functions = MakeFunctions(1, 4, ids);
  functions[3].raw_name = "raw_only";
  ASSERT_TRUE(kb->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 1, 4), functions).ok());
  ASSERT_TRUE(kb->HumanSetName(HumanChannel::kLib, ids[2], "named_fn").ok());

  EXPECT_EQ(*kb->ResolveFunction(1, "2"), 2u);
  EXPECT_EQ(*kb->ResolveFunction(1, "func[3]"), 3u);
  EXPECT_EQ(*kb->ResolveFunction(1, "0"), 0u);
  EXPECT_EQ(*kb->ResolveFunction(1, ids[1]), 2u);
  EXPECT_EQ(*kb->ResolveFunction(1, "w1:12345678"), 3u);
  EXPECT_EQ(*kb->ResolveFunction(1, "w1:ABCDEF0100000000000000000000AAAA"), 1u);
  EXPECT_EQ(*kb->ResolveFunction(1, "import:env.imp0"), 0u);
  EXPECT_EQ(*kb->ResolveFunction(1, "named_fn"), 3u);
  EXPECT_EQ(*kb->ResolveFunction(1, "raw_only"), 3u);

  auto ambiguous = kb->ResolveFunction(1, "w1:abcdef01");
  EXPECT_EQ(ambiguous.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ambiguous.status().message().find("ambiguous"), std::string::npos);
  EXPECT_EQ(kb->ResolveFunction(1, "w1:1234567").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(kb->ResolveFunction(1, "w1:zz345678").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(kb->ResolveFunction(1, "func[x]").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(kb->ResolveFunction(1, "99").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(kb->ResolveFunction(1, "func[99]").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(kb->ResolveFunction(1, "w1:99999999").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(kb->ResolveFunction(1, "nosuchname").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(kb->ResolveFunction(4, "1").status().code(), StatusCode::kNotFound);

  // A name given to two functions is ambiguous.
  ASSERT_TRUE(kb->HumanSetName(HumanChannel::kLib, ids[0], "twin").ok());
  ASSERT_TRUE(kb->HumanSetName(HumanChannel::kLib, ids[1], "twin").ok());
  EXPECT_EQ(kb->ResolveFunction(1, "twin").status().code(), StatusCode::kInvalidArgument);
}

// ---- Write paths

TEST_F(KbTest, WritePathsFixProvenanceAndActor) {
  auto kb = OpenNew();
  const auto functions = MakeFunctions(0, 7);
  ASSERT_TRUE(kb->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 0, 7), functions).ok());
  struct Case {
    Result<Decision> decision;
    std::string provenance;
    std::string actor;
  };
  std::vector<Case> cases;
  cases.push_back(
      {kb->HumanSetName(HumanChannel::kCli, functions[0].stable_id, "a"), "human", "human:cli"});
  cases.push_back(
      {kb->HumanSetName(HumanChannel::kLib, functions[1].stable_id, "b"), "human", "human:lib"});
  cases.push_back(
      {kb->SeedExport(SeedSource::kGlue, functions[2].stable_id, "c"), "export", "ingest:glue"});
  cases.push_back(
      {kb->OracleWrite("fuzzy", functions[3].stable_id, {.name = "d", .confidence = 0.9}), "oracle",
       "oracle:fuzzy"});
  cases.push_back(
      {kb->DiffCarry("v1", "v2", functions[4].stable_id, {.name = "e", .confidence = 0.8}),
       "diff-carry", "diff:v1->v2"});
  cases.push_back(
      {kb->AgentPropose("offline", functions[5].stable_id, {.name = "f", .confidence = 0.35}),
       "agent", "agent:offline"});
  cases.push_back(
      {kb->McpPropose(functions[6].stable_id, "g", "does g", 0.5), "agent", "agent:mcp"});
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ASSERT_TRUE(cases[i].decision.ok()) << cases[i].decision.status().ToString();
    EXPECT_TRUE(cases[i].decision->accepted) << cases[i].decision->reason;
    EXPECT_EQ(cases[i].decision->reason, "accepted: slot was unnamed");
    auto s = kb->GetSymbol(functions[i].stable_id);
    ASSERT_TRUE(s.ok() && s->has_value());
    EXPECT_EQ((*s)->provenance, cases[i].provenance);
    EXPECT_EQ((*s)->actor, cases[i].actor);
    EXPECT_EQ((*s)->locked, cases[i].provenance == "human");
    ASSERT_EQ((*s)->evidence.size(), 1u);
    EXPECT_EQ((*s)->evidence[0].actor, cases[i].actor);
    EXPECT_EQ((*s)->evidence[0].provenance, cases[i].provenance);
  }
  auto mcp = kb->GetSymbol(functions[6].stable_id);
  EXPECT_EQ((*mcp)->summary, "does g");
  EXPECT_EQ((*mcp)->evidence[0].details_json, R"({"channel":"mcp"})");
  // The MCP actor cannot be forged through the agent path; bad path parts are refused.
  EXPECT_EQ(kb->AgentPropose("mcp", functions[5].stable_id, {.name = "x", .confidence = 0.9})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(kb->AgentPropose("Open AI", functions[5].stable_id, {.name = "x", .confidence = 0.9})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      kb->OracleWrite("", functions[5].stable_id, {.name = "x", .confidence = 0.9}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(kb->AgentPropose("offline", functions[5].stable_id,
                             {.name = "x", .confidence = 0.9, .details_json = "[1]"})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM evidence"), 7);
}

TEST_F(KbTest, UnknownStableIdIsRejectedWithoutEvidence) {
  auto kb = OpenNew();
  StoreV1(*kb);
  auto d = kb->McpPropose("w1:00000000000000000000000000000000", "x", "", 0.9);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->accepted);
  EXPECT_EQ(d->reason, "rejected: unknown stable_id w1:00000000000000000000000000000000");
  d = kb->HumanSetName(HumanChannel::kCli, "w1:nope", "x");
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->accepted);
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM evidence"), 0);
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM symbols"), 0);
}

TEST_F(KbTest, HumanLockAndClear) {
  auto kb = OpenNew();
  const auto functions = MakeFunctions(2, 4);
  StoreV1(*kb);
  const std::string& id = functions[2].stable_id;
  ASSERT_TRUE(
      kb->OracleWrite("exact", id, {.name = "memcpy", .summary = "copies", .confidence = 0.95})
          .ok());
  auto d = kb->McpPropose(id, "copy", "", 0.6);
  EXPECT_EQ(d->reason, "rejected: existing oracle annotation has confidence 0.950 >= 0.600");
  d = kb->HumanSetName(HumanChannel::kCli, id, "my_memcpy");
  EXPECT_TRUE(d->accepted);
  auto s = kb->GetSymbol(id);
  EXPECT_TRUE((*s)->locked);
  EXPECT_EQ((*s)->summary, "copies");  // kept: the human gave no summary
  d = kb->McpPropose(id, "copy", "", 1.0);
  EXPECT_FALSE(d->accepted);
  EXPECT_EQ(d->reason, "rejected: locked by a human (human:cli)");
  d = kb->SeedExport(SeedSource::kExport, id, "exported", "{}");
  EXPECT_FALSE(d->accepted);
  // Clear: recorded, unlocked, unnamed; then anything valid is accepted again.
  d = kb->HumanClear(HumanChannel::kCli, id);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->accepted);
  EXPECT_TRUE(d->clears);
  s = kb->GetSymbol(id);
  ASSERT_TRUE(s->has_value());
  EXPECT_FALSE((*s)->name.has_value());
  EXPECT_FALSE((*s)->summary.has_value());
  EXPECT_FALSE((*s)->locked);
  EXPECT_EQ((*s)->provenance, "human");
  EXPECT_EQ((*s)->confidence, 0.0);
  d = kb->McpPropose(id, "copy", "", 0.1);
  EXPECT_TRUE(d->accepted);
  EXPECT_EQ(d->reason, "accepted: slot was unnamed");
  s = kb->GetSymbol(id);
  ASSERT_EQ((*s)->evidence.size(), 7u);
  // Oldest first, with increasing ids.
  for (std::size_t i = 1; i < (*s)->evidence.size(); ++i) {
    EXPECT_LT((*s)->evidence[i - 1].id, (*s)->evidence[i].id);
  }
  EXPECT_EQ((*s)->evidence[5].reason.rfind("accepted: human clear", 0), 0u);
}

TEST_F(KbTest, InvalidWriteIsRecordedAndUnknownProvenanceNeedsThePeer) {
  auto kb = OpenNew();
  const auto functions = MakeFunctions(2, 4);
  StoreV1(*kb);
  auto d = kb->McpPropose(functions[2].stable_id, "bad\xff", "", 0.5);
  EXPECT_FALSE(d->accepted);
  d = kb->McpPropose(functions[2].stable_id, "x", "", std::nan(""));
  EXPECT_FALSE(d->accepted);
  d = KbTestPeer::Upsert(
      *kb, functions[2].stable_id,
      SymbolWrite{.name = "x", .provenance = "wizard", .actor = "t", .confidence = 0.5});
  EXPECT_FALSE(d->accepted);
  EXPECT_EQ(d->rule, 1);
  auto trail = kb->Evidence(functions[2].stable_id);
  ASSERT_EQ(trail->size(), 3u);
  EXPECT_EQ((*trail)[0].name, "bad\\xff");           // kept printable
  EXPECT_FALSE((*trail)[1].confidence.has_value());  // NaN
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM symbols"), 0);
}

TEST_F(KbTest, EvidenceIsAppendOnly) {
  auto kb = OpenNew();
  const auto functions = MakeFunctions(2, 4);
  StoreV1(*kb, {{.func_index = 2, .name = "main"}});
  base::Database& db = KbTestPeer::SqliteDb(*kb);
  Status update = db.Exec("UPDATE evidence SET accepted = 0");
  EXPECT_FALSE(update.ok());
  EXPECT_NE(update.message().find("evidence is append-only"), std::string::npos)
      << update.ToString();
  Status del = db.Exec("DELETE FROM evidence");
  EXPECT_FALSE(del.ok());
  EXPECT_NE(del.message().find("evidence is append-only"), std::string::npos);
  EXPECT_FALSE(db.Exec("INSERT OR REPLACE INTO evidence(id, stable_id, at, actor, provenance, "
                       "accepted, reason, details_json) SELECT id, 'x', at, actor, provenance, "
                       "accepted, reason, details_json FROM evidence")
                   .ok());
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM evidence"), 1);
  EXPECT_EQ(Text(*kb, "SELECT name FROM evidence"), "main");
  // Deleting a version cascades its functions, but symbols and evidence survive.
  ASSERT_TRUE(db.Exec("DELETE FROM module_versions WHERE id = 1").ok());
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM functions"), 0);
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM symbols"), 1);
  EXPECT_EQ(Count(*kb, "SELECT count(*) FROM evidence"), 1);
}

TEST_F(KbTest, SymbolsTableRefusesOutOfRangeConfidence) {
  auto kb = OpenNew();
  StoreV1(*kb);
  // Defence in depth behind the gate: the CHECK constraints.
  base::Database& db = KbTestPeer::SqliteDb(*kb);
  const std::string t = std::string("sym") + "bols";
  EXPECT_FALSE(db.Exec("INSERT INTO " + t +
                       " VALUES ('x', 'n', NULL, NULL, 'agent', 'a', 1.5, 0, "
                       "'t', 't')")
                   .ok());
  EXPECT_FALSE(db.Exec("INSERT INTO " + t +
                       " VALUES ('x', 'n', NULL, NULL, 'wizard', 'a', 0.5, 0, "
                       "'t', 't')")
                   .ok());
}

// ---- Discovery and init

TEST_F(KbTest, FindDatabase) {
  const std::string project = dir_.Abs("proj");
  const std::string deep = project + "/a/b/c";
  ASSERT_TRUE(env_.CreateDir(deep).ok());
  auto none = FindDatabase(env_, std::nullopt, deep);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(none.status().message(), "no WARDEN database found (run 'warden init' or pass --db)");
  EXPECT_EQ(*FindDatabase(env_, std::string("/x/y.db"), deep), "/x/y.db");

  // ./warden.db is found when no .warden is above.
  ASSERT_TRUE(env_.WriteFile(deep + "/warden.db", "").ok());
  EXPECT_EQ(*FindDatabase(env_, std::nullopt, deep + "/"), deep + "/warden.db");

  auto init = Init(env_, project, "");
  ASSERT_TRUE(init.ok()) << init.status().ToString();
  EXPECT_TRUE(init->created);
  EXPECT_EQ(init->project, "proj");
  EXPECT_EQ(init->db_path, project + "/.warden/warden.db");
  // The nearest .warden wins over ./warden.db.
  EXPECT_EQ(*FindDatabase(env_, std::nullopt, deep), project + "/.warden/warden.db");
  EXPECT_EQ(*FindDatabase(env_, std::nullopt, project), project + "/.warden/warden.db");
  ASSERT_TRUE(Init(env_, deep, "inner").ok());
  EXPECT_EQ(*FindDatabase(env_, std::nullopt, deep), deep + "/.warden/warden.db");

  // Idempotent: the second init is a no-op that keeps the project name.
  auto again = Init(env_, project, "other");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->project, "proj");
}

// Sets an environment variable for one scope and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_.has_value()) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// docs/warden.md §2.1: --db, then kb.url in the project config, then in the global config,
// then the files.
TEST_F(KbTest, FindDatabaseTakesKbUrlFromTheConfig) {
  const std::string project = dir_.Abs("proj");
  const std::string deep = project + "/a/b";
  const std::string xdg = dir_.Abs("xdg");
  ASSERT_TRUE(env_.CreateDir(deep).ok());
  ASSERT_TRUE(env_.CreateDir(xdg + "/warden").ok());
  ASSERT_TRUE(Init(env_, project, "").ok());
  ScopedEnv scoped("XDG_CONFIG_HOME", xdg);
  EXPECT_EQ(GlobalConfigPath(), xdg + "/warden/config.json");
  EXPECT_EQ(FindProjectDir(env_, deep), project);
  EXPECT_EQ(FindProjectDir(env_, dir_.Abs("")), "");
  EXPECT_EQ(*FindDatabase(env_, std::nullopt, deep), project + "/.warden/warden.db");

  // The global config's kb.url does not win over a project's own file (local before global),
  // but it names the KB wherever no project file is found.
  const std::string global_url = "postgresql://team@db.example/warden";
  ASSERT_TRUE(
      env_.WriteFile(xdg + "/warden/config.json", R"({"kb.url": ")" + global_url + R"("})").ok());
  EXPECT_EQ(*FindDatabase(env_, std::nullopt, deep), project + "/.warden/warden.db");
  EXPECT_EQ(*FindDatabase(env_, std::nullopt, dir_.Abs("")), global_url);
  // The project's wins over the global one (nested form), and --db over both.
  const std::string project_url = "postgres://me:pw@localhost/mine?sslmode=require";
  ASSERT_TRUE(env_.WriteFile(project + "/.warden/config.json",
                             R"({"kb": {"url": ")" + project_url + R"("}, "oracle.store": "o.db"})")
                  .ok());
  EXPECT_EQ(*FindDatabase(env_, std::nullopt, deep), project_url);
  EXPECT_EQ(*FindDatabase(env_, std::string("/x/kb.db"), deep), "/x/kb.db");
  // A project without a KB file (its .warden/ holds the config only) is a project too.
  const std::string other = dir_.Abs("other");
  ASSERT_TRUE(env_.CreateDir(other + "/.warden").ok());
  ASSERT_TRUE(
      env_.WriteFile(other + "/.warden/config.json", R"({"agent.backend": "offline"})").ok());
  EXPECT_EQ(FindProjectDir(env_, other), other);
  EXPECT_EQ(*FindDatabase(env_, std::nullopt, other), global_url);

  // A config that is not an object, or a kb.url that is no PostgreSQL URL: an error naming it.
  ASSERT_TRUE(env_.WriteFile(other + "/.warden/config.json", R"({"kb.url": "/tmp/kb.db"})").ok());
  auto bad = FindDatabase(env_, std::nullopt, other);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kMalformed);
  EXPECT_NE(bad.status().message().find(other + "/.warden/config.json: kb.url is not"),
            std::string::npos)
      << bad.status().ToString();
  ASSERT_TRUE(env_.WriteFile(other + "/.warden/config.json", "[1]").ok());
  EXPECT_EQ(FindDatabase(env_, std::nullopt, other).status().code(), StatusCode::kMalformed);
  // Without kb.url anywhere: the files, as before.
  ASSERT_TRUE(env_.WriteFile(xdg + "/warden/config.json", "{}").ok());
  ASSERT_TRUE(env_.WriteFile(project + "/.warden/config.json", "{}").ok());
  EXPECT_EQ(*FindDatabase(env_, std::nullopt, deep), project + "/.warden/warden.db");
}

TEST(FormatTimestampTest, Utc) {
  EXPECT_EQ(FormatTimestamp(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatTimestamp(1'704'067'200'123'456), "2024-01-01T00:00:00.123Z");
}

}  // namespace
}  // namespace trove::warden::kb
