// Store round trip, FTS5/BM25 ranking sanity, incremental replacement and removal.
#include "librarian/store/store.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/hash.h"
#include "base/sqlite.h"
#include "base/testing/temp_dir.h"
#include "librarian/extract/extract.h"

namespace trove::librarian::store {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(TROVE_LIBRARIAN_TESTDATA) + "/extract/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = extract::Extractor::Create({});
    ASSERT_TRUE(made.ok());
    extractor_ = std::move(made).value();
    OpenStore(WithTrigram());
  }

  static StoreOptions WithTrigram() {
    StoreOptions options;
    options.trigram = true;
    return options;
  }

  void OpenStore(const StoreOptions& options) {
    store_.reset();
    auto opened = Store::Open(dir_.Abs("librarian.sqlite"), options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }

  // Extracts `content` as `path` and stores it; returns the facts.
  extract::FileFacts Put(const std::string& path, const std::string& content,
                         const std::string& run = "run_1") {
    auto facts = extractor_->Extract(path, content, extractor_->Route(path, true));
    EXPECT_TRUE(facts.ok()) << facts.status().ToString();
    FileRecord file;
    file.path = path;
    file.sha256 = base::Sha256Hex(content);
    file.language = facts->language;
    file.extractor = facts->extractor;
    file.size = content.size();
    file.mtime_ns = 1000;
    file.parse_error = facts->parse_error;
    file.run_id = run;
    Status s = store_->ReplaceFile(file, *facts, content);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return std::move(facts).value();
  }

  void PutFixture(const std::string& path, const std::string& fixture) {
    Put(path, ReadFixture(fixture));
  }

  std::vector<std::string> TopNames(std::string_view query, std::size_t n = 3) {
    SearchOptions options;
    options.limit = n;
    auto hits = store_->SearchChunks(query, options);
    EXPECT_TRUE(hits.ok()) << hits.status().ToString();
    std::vector<std::string> out;
    if (!hits.ok()) return out;
    for (const ChunkHit& h : *hits) out.push_back(h.path + ":" + h.qualified_name);
    return out;
  }

  std::int64_t Count(std::string_view table) {
    auto n = store_->CountRows(table);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ok() ? *n : -1;
  }

  base::testing::TempDir dir_{"trove_store_test"};
  std::unique_ptr<extract::Extractor> extractor_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, RoundTrip) {
  std::string content = ReadFixture("widget.cc");
  extract::FileFacts facts = Put("src/widget.cc", content);

  auto file = store_->GetFile("src/widget.cc");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(file->has_value());
  EXPECT_EQ((*file)->sha256, base::Sha256Hex(content));
  EXPECT_EQ((*file)->language, "cpp");
  EXPECT_EQ((*file)->extractor, "tree-sitter:cpp@0.23.4");
  EXPECT_EQ((*file)->size, content.size());
  EXPECT_EQ((*file)->status, FileStatus::kIndexed);
  EXPECT_EQ((*file)->run_id, "run_1");

  auto symbols = store_->FileSymbols("src/widget.cc");
  ASSERT_TRUE(symbols.ok());
  ASSERT_EQ(symbols->size(), facts.symbols.size());
  for (std::size_t i = 0; i < facts.symbols.size(); ++i) {
    const extract::Symbol& want = facts.symbols[i];
    const SymbolRow& got = (*symbols)[i];
    EXPECT_EQ(got.qualified_name, want.qualified_name);
    EXPECT_EQ(got.kind, extract::SymbolKindName(want.kind));
    EXPECT_EQ(got.start_line, want.start_line);
    EXPECT_EQ(got.end_line, want.end_line);
    EXPECT_EQ(got.start_byte, want.start_byte);
    EXPECT_EQ(got.end_byte, want.end_byte);
    EXPECT_EQ(got.signature, want.signature);
    EXPECT_EQ(got.doc, want.doc);
    EXPECT_EQ(got.span_sha256,
              base::Sha256Hex(content.substr(want.start_byte, want.end_byte - want.start_byte)));
  }
  auto dtor = store_->GetSymbol("fn:src/widget.cc::ns::Widget::~Widget");
  ASSERT_TRUE(dtor.ok());
  ASSERT_TRUE(dtor->has_value());
  EXPECT_EQ((*dtor)->kind, "method");
  EXPECT_EQ((*dtor)->start_line, 28u);
  EXPECT_EQ((*dtor)->parent_qualified_name, "ns");
  auto cls = store_->GetSymbol("type:src/widget.cc::ns::Widget");
  ASSERT_TRUE(cls.ok() && cls->has_value());
  EXPECT_EQ((*cls)->doc, "Widget holds a list of sizes.");

  auto by_name = store_->FindSymbols("add");
  ASSERT_TRUE(by_name.ok());
  ASSERT_EQ(by_name->size(), 1u);
  EXPECT_EQ((*by_name)[0].target_id, "fn:src/widget.cc::add");
  auto by_qualified = store_->FindSymbols("ns::Widget::size");
  ASSERT_TRUE(by_qualified.ok());
  ASSERT_EQ(by_qualified->size(), 1u);
  EXPECT_EQ((*by_qualified)[0].name, "size");

  auto imports = store_->FileImports("src/widget.cc");
  ASSERT_TRUE(imports.ok());
  ASSERT_EQ(imports->size(), 2u);
  EXPECT_EQ((*imports)[0].module, "widget.h");
  EXPECT_EQ((*imports)[1].line, 2u);

  auto calls = store_->CallsTo("add");
  ASSERT_TRUE(calls.ok());
  ASSERT_EQ(calls->size(), 1u);
  EXPECT_EQ((*calls)[0].caller_target_id, "fn:src/widget.cc::twice");
  EXPECT_EQ((*calls)[0].line, 41u);
  auto file_calls = store_->FileCalls("src/widget.cc");
  ASSERT_TRUE(file_calls.ok());
  EXPECT_EQ(file_calls->size(), facts.calls.size());

  EXPECT_EQ(Count("chunks"), static_cast<std::int64_t>(facts.chunks.size()));
  auto chunks = store_->FileChunks("src/widget.cc");
  ASSERT_TRUE(chunks.ok());
  ASSERT_EQ(chunks->size(), facts.chunks.size());
  for (std::size_t i = 0; i < chunks->size(); ++i) {
    EXPECT_EQ((*chunks)[i].body, facts.chunks[i].text);
    EXPECT_EQ((*chunks)[i].start_line, facts.chunks[i].start_line);
    EXPECT_EQ((*chunks)[i].kind, extract::ChunkKindName(facts.chunks[i].kind));
  }
  auto one = store_->GetChunk(chunks->front().id);
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->target_id, chunks->front().target_id);
  EXPECT_EQ((*one)->target_id, "type:src/widget.cc::ns::Widget");
  Put("src/other.cc", "#include <vector>\nint g() { return 0; }\n");
  auto importers = store_->Importers("vector");
  ASSERT_TRUE(importers.ok());
  ASSERT_EQ(importers->size(), 2u);
  EXPECT_EQ((*importers)[0].path, "src/other.cc");
  EXPECT_EQ((*importers)[1].path, "src/widget.cc");
  EXPECT_TRUE(store_->IntegrityCheck().ok());

  // Survives reopening.
  OpenStore(WithTrigram());
  EXPECT_FALSE(store_->schema_rebuilt());
  auto again = store_->FileSymbols("src/widget.cc");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->size(), facts.symbols.size());
}

// Bootstrap's workers call PrepareRows and hand the result to Apply; the rows must be exactly
// those Apply derives itself.
TEST_F(StoreTest, PreparedRowsStoreTheSameRows) {
  std::string content = ReadFixture("widget.cc");
  auto facts =
      extractor_->Extract("src/widget.cc", content, extractor_->Route("src/widget.cc", true));
  ASSERT_TRUE(facts.ok()) << facts.status().ToString();
  ASSERT_FALSE(facts->symbols.empty());
  ASSERT_FALSE(facts->chunks.empty());
  PreparedRows prepared = PrepareRows("lib/widget.cc", *facts, content);
  ASSERT_EQ(prepared.target_ids.size(), facts->symbols.size());
  ASSERT_EQ(prepared.chunk_subwords.size(), facts->chunks.size());
  EXPECT_EQ(prepared.path_words, "lib widget cc");

  // The same facts stored twice, under two paths: derived by Apply, and prepared.
  FileRecord file;
  file.sha256 = base::Sha256Hex(content);
  file.language = facts->language;
  file.extractor = facts->extractor;
  file.size = content.size();
  file.run_id = "run_1";
  WriteBatch batch;
  file.path = "src/widget.cc";
  batch.replace.push_back(FileReplace{file, &*facts, content});
  file.path = "lib/widget.cc";
  batch.replace.push_back(FileReplace{file, &*facts, content, &prepared});
  ASSERT_TRUE(store_->Apply(batch).ok());

  auto derived = store_->FileSymbols("src/widget.cc");
  auto given = store_->FileSymbols("lib/widget.cc");
  ASSERT_TRUE(derived.ok() && given.ok());
  ASSERT_EQ(derived->size(), given->size());
  for (std::size_t i = 0; i < derived->size(); ++i) {
    const SymbolRow& a = (*derived)[i];
    const SymbolRow& b = (*given)[i];
    EXPECT_EQ(b.target_id, prepared.target_ids[i]);
    std::string renamed = a.target_id;
    renamed.replace(renamed.find("src/"), 4, "lib/");
    EXPECT_EQ(renamed, b.target_id);
    EXPECT_EQ(a.span_sha256, b.span_sha256);
    EXPECT_FALSE(b.span_sha256.empty());
  }
  auto a_chunks = store_->FileChunks("src/widget.cc");
  auto b_chunks = store_->FileChunks("lib/widget.cc");
  ASSERT_TRUE(a_chunks.ok() && b_chunks.ok());
  ASSERT_EQ(a_chunks->size(), b_chunks->size());
  for (std::size_t i = 0; i < a_chunks->size(); ++i) {
    EXPECT_EQ((*a_chunks)[i].body, (*b_chunks)[i].body);
  }
  // The FTS entries came from the prepared text: a sub-word of a compound identifier in the
  // body ("sizes" from `sizes_`) and the path's words find both files alike.
  auto db = base::Database::Open(dir_.Abs("librarian.sqlite"));
  ASSERT_TRUE(db.ok());
  auto subwords = (*db)->Prepare(
      "SELECT group_concat(c.subwords, '|') FROM chunks c JOIN files f ON f.id = c.file_id "
      "WHERE f.path = ?1 ORDER BY c.id");
  ASSERT_TRUE(subwords.ok());
  std::vector<std::string> texts;
  for (const char* path : {"src/widget.cc", "lib/widget.cc"}) {
    subwords->Reset();
    ASSERT_TRUE(subwords->Bind(1, std::string_view(path)).ok());
    auto row = subwords->Step();
    ASSERT_TRUE(row.ok() && *row);
    texts.push_back(subwords->ColumnText(0));
  }
  EXPECT_EQ(texts[0], texts[1]);
  EXPECT_FALSE(texts[0].empty());
  auto paths = store_->SearchPaths("lib widget");
  ASSERT_TRUE(paths.ok());
  ASSERT_FALSE(paths->empty());
  EXPECT_EQ(paths->front().path, "lib/widget.cc");
  EXPECT_TRUE(store_->IntegrityCheck().ok());
}

TEST_F(StoreTest, PreparedRowsMustMatchTheFacts) {
  std::string content = ReadFixture("widget.cc");
  auto facts =
      extractor_->Extract("src/widget.cc", content, extractor_->Route("src/widget.cc", true));
  ASSERT_TRUE(facts.ok());
  PreparedRows prepared = PrepareRows("src/widget.cc", *facts, content);
  prepared.chunk_subwords.pop_back();
  FileRecord file;
  file.path = "src/widget.cc";
  WriteBatch batch;
  batch.replace.push_back(FileReplace{file, &*facts, content, &prepared});
  Status s = store_->Apply(batch);
  EXPECT_EQ(s.code(), base::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("src/widget.cc"));
  EXPECT_EQ(Count("files"), 0);
}

TEST_F(StoreTest, WalAutocheckpointOption) {
  auto autocheckpoint = [&]() -> std::int64_t {
    auto st = store_->db().Prepare("PRAGMA wal_autocheckpoint");
    EXPECT_TRUE(st.ok());
    if (!st.ok()) return -1;
    auto row = st->Step();
    EXPECT_TRUE(row.ok() && *row);
    return st->ColumnInt64(0);
  };
  EXPECT_EQ(autocheckpoint(), 1000);  // SQLite's default
  StoreOptions options;
  options.wal_autocheckpoint_pages = 16384;
  OpenStore(options);
  EXPECT_EQ(autocheckpoint(), 16384);
  Put("src/a.cc", "int a() { return 1; }\n");
  EXPECT_TRUE(store_->IntegrityCheck().ok());

  options.wal_autocheckpoint_pages = -1;
  store_.reset();
  auto bad = Store::Open(dir_.Abs("librarian.sqlite"), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("wal_autocheckpoint_pages"));
}

// A batch's chunk_automerge sets FTS5's merge policy of both chunk indexes (persisted) and
// changes no search result; values FTS5 would not take are refused before anything is written.
TEST_F(StoreTest, ChunkAutomergeSetsTheMergePolicyOnly) {
  auto automerge = [&](std::string_view table) -> std::string {
    auto st =
        store_->db().Prepare(fmt::format("SELECT v FROM {}_config WHERE k = 'automerge'", table));
    EXPECT_TRUE(st.ok());
    if (!st.ok()) return "error";
    auto row = st->Step();
    EXPECT_TRUE(row.ok());
    return row.ok() && *row ? st->ColumnText(0) : "unset";
  };
  EXPECT_EQ(automerge("chunk_fts"), "unset");
  WriteBatch raise;
  raise.chunk_automerge = 16;
  ASSERT_TRUE(store_->Apply(raise).ok());
  EXPECT_EQ(automerge("chunk_fts"), "16");
  EXPECT_EQ(automerge("chunk_tri"), "16");
  // Many one-file batches: one segment each, merged later than with the default.
  for (int i = 0; i < 40; ++i) {
    const std::string word =
        fmt::format("zone{}{}", static_cast<char>('a' + i % 26), static_cast<char>('a' + i / 26));
    Put(fmt::format("src/f{}.py", i), fmt::format("def {}():\n    return area\n", word));
  }
  const std::vector<std::string> raised = TopNames("area", 50);
  EXPECT_EQ(raised.size(), 40u);
  EXPECT_THAT(TopNames("zonehb"), ElementsAre("src/f33.py:zonehb"));
  EXPECT_EQ(store_->SearchSubstring("zoneh")->size(), 2u);  // zoneha, zonehb
  WriteBatch restore;
  restore.chunk_automerge = kDefaultChunkAutomerge;
  ASSERT_TRUE(store_->Apply(restore).ok());
  EXPECT_EQ(automerge("chunk_fts"), "4");
  EXPECT_EQ(TopNames("area", 50), raised);
  EXPECT_THAT(TopNames("zonehb"), ElementsAre("src/f33.py:zonehb"));
  EXPECT_TRUE(store_->IntegrityCheck().ok());

  WriteBatch bad;
  bad.chunk_automerge = 65;
  FileRecord f;
  f.path = "src/never.py";
  f.run_id = "run_2";
  bad.replace.push_back(FileReplace{f});
  Status st = store_->Apply(bad);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), base::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), ::testing::HasSubstr("chunk_automerge"));
  EXPECT_FALSE(store_->GetFile("src/never.py")->has_value());
  EXPECT_EQ(automerge("chunk_fts"), "4");
}

TEST_F(StoreTest, RunsRoundTrip) {
  WriteBatch batch;
  batch.run = RunRecord{
      "run_20260101T000000Z_abcd", "running",      "full", "2026-01-01T00:00:00.000Z", "", "{}",
      "{\"ctags\":\"5.9\"}",       "{\"files\":0}"};
  ASSERT_TRUE(store_->Apply(batch).ok());
  batch.run->state = "succeeded";
  batch.run->stats_json = "{\"files\":3}";
  ASSERT_TRUE(store_->Apply(batch).ok());
  auto runs = store_->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].state, "succeeded");
  EXPECT_EQ((*runs)[0].stats_json, "{\"files\":3}");
  auto run = store_->GetRun("run_20260101T000000Z_abcd");
  ASSERT_TRUE(run.ok() && run->has_value());
  EXPECT_EQ((*run)->tool_versions_json, "{\"ctags\":\"5.9\"}");
}

TEST_F(StoreTest, SearchRanksTheNamedFunctionFirst) {
  PutFixture("src/widget.cc", "widget.cc");
  PutFixture("py/shapes.py", "shapes.py");
  PutFixture("go/server.go", "server.go");
  PutFixture("web/app.js", "app.js");
  PutFixture("rs/lib.rs", "lib.rs");
  PutFixture("java/Shop.java", "Shop.java");

  EXPECT_THAT(TopNames("load_shapes", 1), ElementsAre("py/shapes.py:load_shapes"));
  EXPECT_THAT(TopNames("twice", 1), ElementsAre("src/widget.cc:twice"));
  EXPECT_THAT(TopNames("NewServer", 1), ElementsAre("go/server.go:NewServer"));
  // Sub-words find a camelCase name from plain words.
  EXPECT_THAT(TopNames("new server", 1), ElementsAre("go/server.go:NewServer"));
  EXPECT_THAT(TopNames("greetAll", 1), ElementsAre("web/app.js:Greeter.greetAll"));
  // A doc sentence's words find the documented symbol.
  EXPECT_THAT(TopNames("counter of words", 1), ElementsAre("rs/lib.rs:Counter"));

  // Scores are descending and the target id comes with the hit.
  auto hits = store_->SearchChunks("compute");
  ASSERT_TRUE(hits.ok());
  ASSERT_GE(hits->size(), 2u);  // the definition and its caller
  EXPECT_EQ((*hits)[0].target_id, "fn:rs/lib.rs::compute");
  for (std::size_t i = 1; i < hits->size(); ++i) EXPECT_GE((*hits)[i - 1].score, (*hits)[i].score);
}

TEST_F(StoreTest, ColumnWeightsChangeTheRanking) {
  // "area" is the name of one chunk and a word in the body of another.
  Put("a.py", "def area():\n    return 1\n");
  Put("b.py", "def other():\n    area = 2\n    area = 3\n    return area\n");
  SearchOptions by_name;
  by_name.limit = 1;
  auto hits = store_->SearchChunks("area", by_name);
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].path, "a.py");
  SearchOptions body_only = by_name;
  body_only.columns.name_weight = 0;
  body_only.columns.subwords_weight = 0;
  body_only.columns.doc_weight = 0;
  body_only.columns.path_weight = 0;
  hits = store_->SearchChunks("area", body_only);
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].path, "b.py");
}

// Equal BM25 scores are ordered by path and line, not by chunk id: a parallel bootstrap
// assigns ids in no fixed order, and the baseline's lists changed between runs.
TEST_F(StoreTest, EqualScoresAreOrderedByPathThenLine) {
  const std::string body = "def area():\n    return 1\n";
  // Stored in the opposite of path order, so chunk ids disagree with paths.
  Put("d.py", body);
  Put("c.py", body);
  Put("b.py", body);
  Put("a.py", "def area():\n    return 1\n\n\ndef area():\n    return 1\n");
  SearchOptions all;
  all.limit = 10;
  auto hits = store_->SearchChunks("area", all);
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  std::vector<std::string> got;
  for (const ChunkHit& h : *hits) {
    if (h.kind == "symbol") got.push_back(h.path + ":" + std::to_string(h.start_line));
  }
  ASSERT_EQ(hits->size(), got.size());
  ASSERT_EQ(got.size(), 5u);
  // a.py's two functions tie with each other (and may differ from the others' score).
  EXPECT_THAT(std::vector<std::string>(got.begin() + (got[0] == "a.py:1" ? 0 : 3),
                                       got.begin() + (got[0] == "a.py:1" ? 2 : 5)),
              ElementsAre("a.py:1", "a.py:5"));
  const std::vector<std::string> others(got.begin() + (got[0] == "a.py:1" ? 2 : 0),
                                        got.begin() + (got[0] == "a.py:1" ? 5 : 3));
  EXPECT_THAT(others, ElementsAre("b.py:1", "c.py:1", "d.py:1"));

  // A limit that cuts through tied entries keeps the first in that order, not the first
  // stored (d.py) or the lowest ids.
  for (std::size_t limit : {1u, 2u}) {
    SearchOptions few;
    few.limit = limit;
    auto cut = store_->SearchChunks("area", few);
    ASSERT_TRUE(cut.ok()) << cut.status().ToString();
    ASSERT_EQ(cut->size(), limit);
    for (std::size_t i = 0; i < limit; ++i) {
      EXPECT_EQ((*cut)[i].path + ":" + std::to_string((*cut)[i].start_line), got[i]) << i;
    }
  }
}

// SearchChunks scores with trove_bm25 (search.cc), FTS5's bm25() with each row's token count
// read once per index generation: every score must equal bm25()'s bit for bit.
TEST_F(StoreTest, SearchScoresEqualFts5Bm25) {
  PutFixture("src/widget.cc", "widget.cc");
  PutFixture("py/shapes.py", "shapes.py");
  PutFixture("go/server.go", "server.go");
  PutFixture("web/app.js", "app.js");
  Put("a.py", "def area_of(shape):\n    return shape.width * shape.height\n");
  Put("b.py", "def scale(shape, factor):\n    return area_of(shape) * factor\n");
  auto raw = base::Database::Open(dir_.Abs("librarian.sqlite"));
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  for (int round = 0; round < 2; ++round) {
    for (const char* query : {"shape", "area of shape", "server", "twice widget"}) {
      SearchOptions options;
      options.limit = 50;
      options.columns.doc_weight = round == 0 ? 3 : 0;  // weights reach the function
      auto hits = store_->SearchChunks(query, options);
      ASSERT_TRUE(hits.ok()) << hits.status().ToString();
      ASSERT_FALSE(hits->empty()) << query;
      auto st = (*raw)->Prepare(
          "SELECT rowid, bm25(chunk_fts, ?1, ?2, ?3, ?4, ?5) FROM chunk_fts WHERE chunk_fts "
          "MATCH ?6");
      ASSERT_TRUE(st.ok()) << st.status().ToString();
      ASSERT_TRUE(st->Bind(1, options.columns.name_weight).ok());
      ASSERT_TRUE(st->Bind(2, options.columns.subwords_weight).ok());
      ASSERT_TRUE(st->Bind(3, options.columns.doc_weight).ok());
      ASSERT_TRUE(st->Bind(4, options.columns.body_weight).ok());
      ASSERT_TRUE(st->Bind(5, options.columns.path_weight).ok());
      const std::string match = BuildMatchQuery(query);
      ASSERT_TRUE(st->Bind(6, std::string_view(match)).ok());
      std::map<std::int64_t, double> bm25;
      for (;;) {
        auto row = st->Step();
        ASSERT_TRUE(row.ok());
        if (!*row) break;
        bm25[st->ColumnInt64(0)] = -st->ColumnDouble(1);
      }
      EXPECT_EQ(hits->size(), bm25.size()) << query;
      for (const ChunkHit& h : *hits) {
        ASSERT_EQ(bm25.count(h.chunk_id), 1u) << query;
        EXPECT_EQ(h.score, bm25[h.chunk_id]) << query << " " << h.path << ":" << h.start_line;
      }
    }
    // A change to the index is seen: the row table is read again.
    Put("c.py", "def shape_area(shape):\n    return area_of(shape)\n");
  }
}

TEST_F(StoreTest, FtsOperatorsAreNeutralized) {
  PutFixture("py/shapes.py", "shapes.py");
  for (std::string_view q : {"\"unbalanced", "load* NEAR(a b)", "name:area OR", "AND", ":", "*",
                             "^area", "(area", "-area", "shapes.py"}) {
    auto hits = store_->SearchChunks(q);
    EXPECT_TRUE(hits.ok()) << q << ": " << hits.status().ToString();
  }
  EXPECT_EQ(BuildMatchQuery("How does parseHttp work?"),
            "\"parsehttp\" OR \"parse\" OR \"http\" OR \"work\"");
  EXPECT_EQ(BuildMatchQuery("the of"), "");
  EXPECT_EQ(BuildMatchQuery("a\"b NEAR c"), "\"near\"");
  auto none = store_->SearchChunks("the");
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(*none, IsEmpty());
}

// SearchFiles treats each file as one document: a file whose functions together hold all the
// query's words outranks a file with the single best-matching chunk (decision 0094).
TEST_F(StoreTest, SearchFilesRanksTheFileHoldingTheWordsAcrossItsChunks) {
  // strong.py: one chunk repeating two of the words.
  Put("strong.py",
      "def spill():\n"
      "    \"\"\"Retry the download, retry the download again.\"\"\"\n"
      "    return 1\n");
  // spread.py: each function holds one or two of the four words.
  Put("spread.py",
      "def first():\n    \"\"\"Retry later.\"\"\"\n    return 1\n\n\n"
      "def second():\n    \"\"\"Wait for the download.\"\"\"\n    return 2\n\n\n"
      "def third():\n    \"\"\"Back off after a timeout.\"\"\"\n    return 3\n\n\n"
      "def fourth():\n    \"\"\"Pick a mirror.\"\"\"\n    return 4\n");
  for (int i = 0; i < 6; ++i) {
    Put(fmt::format("other{}.py", i), fmt::format("def unrelated{}():\n    return {}\n", i, i));
  }
  const std::string query = "retry download timeout mirror";
  // Chunk BM25 puts strong.py's chunk first.
  SearchOptions one;
  one.limit = 1;
  auto chunks = store_->SearchChunks(query, one);
  ASSERT_TRUE(chunks.ok()) << chunks.status().ToString();
  ASSERT_EQ(chunks->size(), 1u);
  EXPECT_EQ((*chunks)[0].path, "strong.py");

  auto files = store_->SearchFiles(query);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 2u);  // files matching no word are not listed
  EXPECT_EQ((*files)[0].path, "spread.py");
  EXPECT_EQ((*files)[0].terms, 4u);
  EXPECT_EQ((*files)[1].path, "strong.py");
  EXPECT_EQ((*files)[1].terms, 2u);
  EXPECT_GT((*files)[0].score, (*files)[1].score);

  // Bounded by the limit; an empty query and a zero limit give nothing.
  FileSearchOptions top;
  top.limit = 1;
  files = store_->SearchFiles(query, top);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].path, "spread.py");
  EXPECT_THAT(*store_->SearchFiles("the of"), IsEmpty());
  top.limit = 0;
  EXPECT_THAT(*store_->SearchFiles(query, top), IsEmpty());

  // The per-file table follows the store: a changed file is searched as it is now.
  Put("strong.py",
      "def spill():\n    \"\"\"Retry the download after a timeout from a mirror.\"\"\"\n"
      "    return 1\n");
  files = store_->SearchFiles(query);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, "strong.py");  // all four words in a shorter file
  EXPECT_EQ((*files)[0].terms, 4u);
  // A one-word query after another change (the per-term cache is dropped with the store's
  // version), and other column weights (the cache is per weights).
  files = store_->SearchFiles("mirror");
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 2u);
  Put("spread.py", "def fourth():\n    return 4\n");
  files = store_->SearchFiles("mirror");
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].path, "strong.py");
  FileSearchOptions names_only;
  names_only.columns.doc_weight = 0;
  names_only.columns.body_weight = 0;
  files = store_->SearchFiles("mirror", names_only);
  ASSERT_TRUE(files.ok());
  EXPECT_THAT(*files, IsEmpty());  // the word is in a docstring (doc and body) only
  files = store_->SearchFiles("mirror");
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 1u);
}

TEST_F(StoreTest, SubstringAndPathSearch) {
  PutFixture("go/server.go", "server.go");
  PutFixture("java/HttpClient.java", "Shop.java");
  auto hits = store_->SearchSubstring("AndServ");
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_FALSE(hits->empty());
  EXPECT_EQ((*hits)[0].qualified_name, "Server.Start");
  auto paths = store_->SearchPaths("http client");
  ASSERT_TRUE(paths.ok());
  ASSERT_FALSE(paths->empty());
  EXPECT_EQ((*paths)[0].path, "java/HttpClient.java");
  paths = store_->SearchPaths("server");
  ASSERT_TRUE(paths.ok());
  ASSERT_EQ(paths->size(), 1u);
  EXPECT_EQ((*paths)[0].path, "go/server.go");

  EXPECT_TRUE(store_->has_trigram());
  // Without the trigram table (the default), substring search is refused, and the setting
  // sticks.
  base::testing::TempDir other("trove_store_test");
  auto plain = Store::Open(other.Abs("x.sqlite"), StoreOptions{});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE((*plain)->has_trigram());
  EXPECT_EQ((*plain)->SearchSubstring("abc").status().code(), base::StatusCode::kUnsupported);
  plain->reset();
  auto reopened = Store::Open(other.Abs("x.sqlite"), WithTrigram());
  ASSERT_TRUE(reopened.ok());
  EXPECT_FALSE((*reopened)->has_trigram());
}

TEST_F(StoreTest, IncrementalUpdateReplacesOnlyTheChangedFile) {
  PutFixture("src/widget.cc", "widget.cc");
  PutFixture("py/shapes.py", "shapes.py");
  Put("go/util.go", "package util\n\nfunc OldName() int {\n\treturn 1\n}\n");
  auto before_cc = store_->FileSymbols("src/widget.cc");
  auto before_py = store_->FileSymbols("py/shapes.py");
  ASSERT_TRUE(before_cc.ok() && before_py.ok());
  std::int64_t chunks_before = Count("chunks");

  Put("go/util.go", "package util\n\nfunc NewName() int {\n\treturn 2\n}\n\nfunc Extra() {}\n",
      "run_2");

  // The other files' rows are untouched: same row ids, same run.
  auto after_cc = store_->FileSymbols("src/widget.cc");
  auto after_py = store_->FileSymbols("py/shapes.py");
  ASSERT_TRUE(after_cc.ok() && after_py.ok());
  ASSERT_EQ(after_cc->size(), before_cc->size());
  for (std::size_t i = 0; i < after_cc->size(); ++i)
    EXPECT_EQ((*after_cc)[i].id, (*before_cc)[i].id);
  ASSERT_EQ(after_py->size(), before_py->size());
  for (std::size_t i = 0; i < after_py->size(); ++i)
    EXPECT_EQ((*after_py)[i].id, (*before_py)[i].id);
  EXPECT_EQ((*store_->GetFile("src/widget.cc"))->run_id, "run_1");
  EXPECT_EQ((*store_->GetFile("go/util.go"))->run_id, "run_2");

  // The changed file holds exactly its new content.
  auto util = store_->FileSymbols("go/util.go");
  ASSERT_TRUE(util.ok());
  std::vector<std::string> names;
  for (const SymbolRow& s : *util) names.push_back(s.name);
  EXPECT_THAT(names, ElementsAre("NewName", "Extra"));
  EXPECT_THAT(*store_->FindSymbols("OldName"), IsEmpty());
  EXPECT_THAT(TopNames("OldName", 20), Not(Contains("go/util.go:OldName")));
  EXPECT_THAT(*store_->SearchSubstring("OldName"), IsEmpty());
  EXPECT_THAT(TopNames("NewName", 1), ElementsAre("go/util.go:NewName"));
  EXPECT_EQ(Count("chunks"), chunks_before + 1);  // one more function chunk
  EXPECT_EQ(Count("files"), 3);
  EXPECT_TRUE(store_->IntegrityCheck().ok());

  // Deleting a vanished file removes it and everything hanging off it.
  std::vector<std::string> gone = {"py/shapes.py", "not/stored.py"};
  ASSERT_TRUE(store_->DeleteFiles(gone).ok());
  EXPECT_FALSE(store_->GetFile("py/shapes.py")->has_value());
  EXPECT_THAT(*store_->FileSymbols("py/shapes.py"), IsEmpty());
  EXPECT_THAT(*store_->FileImports("py/shapes.py"), IsEmpty());
  EXPECT_THAT(*store_->FileCalls("py/shapes.py"), IsEmpty());
  EXPECT_THAT(TopNames("load_shapes"), IsEmpty());
  EXPECT_THAT(*store_->SearchPaths("shapes"), IsEmpty());
  EXPECT_THAT(*store_->SearchSubstring("load_shapes"), IsEmpty());
  EXPECT_EQ(Count("files"), 2);
  EXPECT_EQ(Count("path_fts"), 2);
  EXPECT_TRUE(store_->IntegrityCheck().ok());
}

TEST_F(StoreTest, TouchAndMark) {
  Put("a.py", "def f():\n    pass\n");
  WriteBatch batch;
  batch.touch.push_back(FileTouch{"a.py", 18, 2000, "run_2"});
  batch.mark.push_back(FileMark{"a.py", FileStatus::kTimedOut, true});
  ASSERT_TRUE(store_->Apply(batch).ok());
  auto f = store_->GetFile("a.py");
  ASSERT_TRUE(f.ok() && f->has_value());
  EXPECT_EQ((*f)->mtime_ns, 2000);
  EXPECT_EQ((*f)->status, FileStatus::kTimedOut);
  EXPECT_TRUE((*f)->stale);
  EXPECT_EQ(store_->FileSymbols("a.py")->size(), 1u);  // the previous entry is kept
  WriteBatch missing;
  missing.touch.push_back(FileTouch{"nope.py", 1, 1, "run_2"});
  EXPECT_EQ(store_->Apply(missing).code(), base::StatusCode::kNotFound);
}

TEST_F(StoreTest, BatchIsAllOrNothing) {
  extract::FileFacts facts;
  facts.language = "text";
  facts.extractor = "text";
  WriteBatch batch;
  FileRecord good;
  good.path = "good.txt";
  batch.replace.push_back(FileReplace{good, &facts, ""});
  FileRecord bad;  // empty path: refused
  batch.replace.push_back(FileReplace{bad, &facts, ""});
  EXPECT_FALSE(store_->Apply(batch).ok());
  EXPECT_FALSE(store_->GetFile("good.txt")->has_value());
  EXPECT_EQ(Count("files"), 0);
}

// One batch that replaces a stored file, adds one, and replaces then removes a third keeps
// every FTS5 index (chunks, trigrams, paths) exactly in step with the rows (the entries are
// written in bulk by Apply, not by triggers).
TEST_F(StoreTest, MixedBatchKeepsTheFullTextIndexesInStep) {
  Put("first.py", "def alpha():\n    return 1\n");
  Put("third.py", "def gamma():\n    return 3\n");
  auto facts_for = [&](const std::string& path, const std::string& content) {
    auto facts = extractor_->Extract(path, content, extractor_->Route(path, true));
    EXPECT_TRUE(facts.ok());
    return std::move(facts).value();
  };
  const std::string a2 = "def omega():\n    return 9\n";
  const std::string b = "def beta():\n    return 2\n";
  const std::string c2 = "def delta():\n    return 4\n";
  extract::FileFacts fa = facts_for("first.py", a2), fb = facts_for("second.py", b),
                     fc = facts_for("third.py", c2);
  auto record = [](const std::string& path) {
    FileRecord f;
    f.path = path;
    f.sha256 = std::string(64, '1');
    f.language = "python";
    f.run_id = "run_2";
    return f;
  };
  WriteBatch batch;
  batch.replace.push_back(FileReplace{record("first.py"), &fa, a2});
  batch.replace.push_back(FileReplace{record("second.py"), &fb, b});
  batch.replace.push_back(FileReplace{record("third.py"), &fc, c2});
  batch.remove.push_back("third.py");
  ASSERT_TRUE(store_->Apply(batch).ok());
  EXPECT_THAT(TopNames("alpha"), IsEmpty());
  EXPECT_THAT(TopNames("omega"), ElementsAre("first.py:omega"));
  EXPECT_THAT(TopNames("beta"), ElementsAre("second.py:beta"));
  EXPECT_THAT(TopNames("gamma"), IsEmpty());
  EXPECT_THAT(TopNames("delta"), IsEmpty());
  EXPECT_THAT(*store_->SearchSubstring("lpha"), IsEmpty());
  EXPECT_EQ(store_->SearchSubstring("mega")->size(), 1u);
  EXPECT_EQ(store_->SearchPaths("second")->size(), 1u);
  EXPECT_THAT(*store_->SearchPaths("third"), IsEmpty());
  EXPECT_EQ(Count("path_fts"), 2);
  EXPECT_TRUE(store_->IntegrityCheck().ok());
}

TEST_F(StoreTest, OverloadsGetSuffixedTargetIds) {
  Put("o.cc", "int f(int x) { return x; }\nint f(double x) { return 1; }\nint f() { return 0; }\n");
  auto symbols = store_->FileSymbols("o.cc");
  ASSERT_TRUE(symbols.ok());
  std::vector<std::string> ids;
  for (const SymbolRow& s : *symbols) ids.push_back(s.target_id);
  EXPECT_THAT(ids, ElementsAre("fn:o.cc::f", "fn:o.cc::f~2", "fn:o.cc::f~3"));
}

TEST_F(StoreTest, IncompatibleSchemaIsRebuilt) {
  Put("a.py", "def f():\n    pass\n");
  {
    auto db = base::Database::Open(dir_.Abs("librarian.sqlite"));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("UPDATE meta SET value = '0' WHERE key = 'schema_version'").ok());
  }
  OpenStore(WithTrigram());
  EXPECT_TRUE(store_->schema_rebuilt());
  EXPECT_EQ(Count("files"), 0);
  EXPECT_EQ(Count("chunks"), 0);
  EXPECT_TRUE(store_->IntegrityCheck().ok());
  OpenStore(WithTrigram());
  EXPECT_FALSE(store_->schema_rebuilt());
}

// The batch reads the query engine uses give, per key, what the one-key reads give.
TEST_F(StoreTest, BatchReadsMatchOneKeyReads) {
  Put("pkg/a.py",
      "def helper(x):\n    return x\n\n\ndef run(x):\n    helper(x)\n    helper(x)\n"
      "    emit(x)\n    return helper(x)\n\n\nclass Box:\n    def helper(self):\n"
      "        return run(1)\n");
  Put("pkg/b.py",
      "from pkg.a import helper, run\n\n\ndef emit(x):\n    return run(helper(x))\n\n\n"
      "def helper(y):\n    return y\n");

  const std::vector<std::string> targets = {"fn:pkg/a.py::run", "fn:pkg/b.py::emit",
                                            "fn:pkg/missing.py::run", "fn:pkg/a.py::Box.helper"};
  auto batch = store_->GetSymbols(targets);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  std::map<std::string, SymbolRow> by_target;
  for (const SymbolRow& s : *batch) by_target[s.target_id] = s;
  EXPECT_EQ(by_target.size(), 3u);
  for (const std::string& t : targets) {
    auto one = store_->GetSymbol(t);
    ASSERT_TRUE(one.ok());
    ASSERT_EQ(one->has_value(), by_target.count(t) == 1) << t;
    if (!one->has_value()) continue;
    const SymbolRow& got = by_target[t];
    EXPECT_EQ(got.id, (*one)->id);
    EXPECT_EQ(got.path, (*one)->path);
    EXPECT_EQ(got.qualified_name, (*one)->qualified_name);
    EXPECT_EQ(got.start_line, (*one)->start_line);
    EXPECT_EQ(got.parent_qualified_name, (*one)->parent_qualified_name);
  }

  // Names with JSON-special characters are plain keys, never an error.
  const std::vector<std::string> names = {"helper", "run", "emit", "nothing", "a\"b\\c\n"};
  for (std::size_t limit : {1u, 2u, 5u}) {
    auto many = store_->FindSymbolsMany(names, limit);
    ASSERT_TRUE(many.ok()) << many.status().ToString();
    std::map<std::string, std::vector<std::string>> got;
    for (const auto& [name, s] : *many) got[name].push_back(s.target_id);
    for (const std::string& name : names) {
      auto one = store_->FindSymbols(name, limit);
      ASSERT_TRUE(one.ok());
      std::vector<std::string> want;
      for (const SymbolRow& s : *one) want.push_back(s.target_id);
      EXPECT_EQ(got[name], want) << name << " limit " << limit;
    }
    EXPECT_EQ(got["helper"].size(), std::min<std::size_t>(limit, 3));

    auto callers = store_->CallsToMany(names, limit);
    ASSERT_TRUE(callers.ok()) << callers.status().ToString();
    std::map<std::string, std::vector<std::string>> got_calls;
    for (const CallRow& c : *callers) {
      got_calls[c.callee].push_back(fmt::format("{}:{}:{}", c.path, c.line, c.caller_target_id));
    }
    for (const std::string& name : names) {
      auto one = store_->CallsTo(name, limit);
      ASSERT_TRUE(one.ok());
      std::vector<std::string> want;
      for (const CallRow& c : *one) {
        want.push_back(fmt::format("{}:{}:{}", c.path, c.line, c.caller_target_id));
      }
      EXPECT_EQ(got_calls[name], want) << name << " limit " << limit;
    }
  }

  auto counts = store_->CallCounts(names);
  ASSERT_TRUE(counts.ok());
  std::map<std::string, std::int64_t> count_of(counts->begin(), counts->end());
  EXPECT_EQ(count_of,
            (std::map<std::string, std::int64_t>{{"emit", 1}, {"helper", 4}, {"run", 2}}));

  // DefinitionCounts counts by name only (FindSymbols also matches qualified names); names
  // defined nowhere are left out.
  auto defs = store_->DefinitionCounts(names);
  ASSERT_TRUE(defs.ok()) << defs.status().ToString();
  std::map<std::string, std::int64_t> want_defs;
  for (const std::string& name : names) {
    auto rows = store_->FindSymbols(name, 1000);
    ASSERT_TRUE(rows.ok());
    for (const SymbolRow& s : *rows) {
      if (s.name == name) ++want_defs[name];
    }
  }
  EXPECT_EQ(want_defs.at("helper"), 3);
  const std::map<std::string, std::int64_t> got_defs(defs->begin(), defs->end());
  EXPECT_EQ(got_defs, want_defs);
  EXPECT_TRUE(std::is_sorted(defs->begin(), defs->end()));

  auto run = store_->GetSymbol("fn:pkg/a.py::run");
  auto emit = store_->GetSymbol("fn:pkg/b.py::emit");
  ASSERT_TRUE(run.ok() && run->has_value() && emit.ok() && emit->has_value());
  const std::vector<std::int64_t> ids = {(*run)->id, (*emit)->id};
  auto callees = store_->CalleesOf(ids);
  ASSERT_TRUE(callees.ok());
  std::vector<std::string> want_callees;
  for (std::string_view path : {"pkg/a.py", "pkg/b.py"}) {
    auto calls = store_->FileCalls(path);
    ASSERT_TRUE(calls.ok());
    for (const CallRow& c : *calls) {
      if (c.caller_target_id == "fn:pkg/a.py::run" || c.caller_target_id == "fn:pkg/b.py::emit") {
        want_callees.push_back(c.caller_target_id + ">" + c.callee);
      }
    }
  }
  std::vector<std::string> got_callees;
  for (const auto& [caller, callee] : *callees) {
    got_callees.push_back((caller == (*run)->id ? std::string("fn:pkg/a.py::run")
                                                : std::string("fn:pkg/b.py::emit")) +
                          ">" + callee);
  }
  EXPECT_EQ(got_callees, want_callees);
  EXPECT_THAT(got_callees, Contains("fn:pkg/a.py::run>emit"));

  auto chunks = store_->FileChunks("pkg/a.py");
  ASSERT_TRUE(chunks.ok());
  std::uint32_t last = 0;
  for (const ChunkRow& c : *chunks) last = std::max(last, c.end_line);
  auto last_line = store_->FileLastLine("pkg/a.py");
  ASSERT_TRUE(last_line.ok());
  EXPECT_EQ(*last_line, last);
  EXPECT_GT(last, 0u);
  auto none = store_->FileLastLine("pkg/none.py");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0u);

  // SymbolChunkBodies gives each symbol's chunk body, as FileChunks has it; a symbol id with no
  // chunk is absent.
  std::map<std::string, std::string> want_bodies;
  for (std::string_view path : {"pkg/a.py", "pkg/b.py"}) {
    auto file_chunks = store_->FileChunks(path);
    ASSERT_TRUE(file_chunks.ok());
    for (const ChunkRow& c : *file_chunks) {
      if (c.target_id == "fn:pkg/a.py::run" || c.target_id == "fn:pkg/b.py::emit") {
        want_bodies[c.target_id] = c.body;
      }
    }
  }
  ASSERT_EQ(want_bodies.size(), 2u);
  std::vector<std::int64_t> body_ids = ids;
  body_ids.push_back(987654321);
  auto bodies = store_->SymbolChunkBodies(body_ids);
  ASSERT_TRUE(bodies.ok()) << bodies.status().ToString();
  std::map<std::string, std::string> got_bodies;
  for (const auto& [id, body] : *bodies) {
    got_bodies[id == (*run)->id    ? "fn:pkg/a.py::run"
               : id == (*emit)->id ? "fn:pkg/b.py::emit"
                                   : "other"] = body;
  }
  EXPECT_EQ(got_bodies, want_bodies);
  EXPECT_NE(got_bodies.at("fn:pkg/a.py::run").find("emit"), std::string::npos);

  // Empty key lists read nothing.
  EXPECT_THAT(store_->GetSymbols({}).value(), IsEmpty());
  EXPECT_THAT(store_->CalleesOf({}).value(), IsEmpty());
  EXPECT_THAT(store_->SymbolChunkBodies({}).value(), IsEmpty());
}

// Reads reuse prepared statements; a write between two reads is still seen by the second
// (a borrowed statement is reset, so it holds no read snapshot open).
TEST_F(StoreTest, CachedStatementsSeeLaterWrites) {
  Put("m.py", "def first():\n    return 1\n");
  auto before = store_->FindSymbols("second");
  ASSERT_TRUE(before.ok());
  EXPECT_THAT(*before, IsEmpty());
  auto gen1 = store_->Generation();
  ASSERT_TRUE(gen1.ok());

  // A second connection writes; this store's cached statements must see it.
  auto other = Store::Open(dir_.Abs("librarian.sqlite"), WithTrigram());
  ASSERT_TRUE(other.ok());
  store_.swap(*other);
  Put("n.py", "def second():\n    return first()\n");
  store_.swap(*other);

  auto after = store_->FindSymbols("second");
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].path, "n.py");
  auto batch = store_->FindSymbolsMany(std::vector<std::string>{"second"}, 5);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->size(), 1u);
  auto gen2 = store_->Generation();
  ASSERT_TRUE(gen2.ok());
  EXPECT_NE(*gen1, *gen2);
  EXPECT_THAT(TopNames("second"), Contains("n.py:second"));
}

// FindSymbolsMany and CallsToMany keep each name's answer across calls; a write through this
// connection or another one drops them, and a later call sees the new rows.
TEST_F(StoreTest, NameCachesSeeLaterWrites) {
  Put("m.py", "def first():\n    return helper()\n");
  const std::vector<std::string> names = {"helper", "first"};
  auto defs = store_->FindSymbolsMany(names, 5);
  auto calls = store_->CallsToMany(names, 5);
  ASSERT_TRUE(defs.ok() && calls.ok());
  EXPECT_EQ(defs->size(), 1u);   // first
  EXPECT_EQ(calls->size(), 1u);  // helper, from first
  // Asked again (cached): the same answer.
  auto again = store_->FindSymbolsMany(names, 5);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].second.target_id, (*defs)[0].second.target_id);

  Put("h.py", "def helper():\n    return first()\n");  // this connection
  defs = store_->FindSymbolsMany(names, 5);
  calls = store_->CallsToMany(names, 5);
  ASSERT_TRUE(defs.ok() && calls.ok());
  EXPECT_EQ(defs->size(), 2u);
  EXPECT_EQ(calls->size(), 2u);

  auto other = Store::Open(dir_.Abs("librarian.sqlite"), WithTrigram());
  ASSERT_TRUE(other.ok());
  store_.swap(*other);
  Put("k.py", "def helper():\n    return 2\n");  // another connection
  store_.swap(*other);
  defs = store_->FindSymbolsMany(names, 5);
  ASSERT_TRUE(defs.ok());
  EXPECT_EQ(defs->size(), 3u);
  auto limited = store_->FindSymbolsMany(names, 1);  // a different limit, not the cached one
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 2u);
}

// CallCounts, GetSymbols and GetFile keep their answers like the name caches, and a write
// through this connection or another one is seen by the next call.
TEST_F(StoreTest, CountSymbolAndFileCachesSeeLaterWrites) {
  Put("m.py", "def first():\n    return helper()\n");
  const std::vector<std::string> names = {"helper", "first"};
  auto counts = store_->CallCounts(names);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);  // only called names are listed
  EXPECT_EQ((*counts)[0], (std::pair<std::string, std::int64_t>{"helper", 1}));
  auto defs = store_->DefinitionCounts(names);
  ASSERT_TRUE(defs.ok());
  EXPECT_THAT(*defs, ElementsAre(std::pair<std::string, std::int64_t>{"first", 1}));
  auto file = store_->GetFile("h.py");
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE(file->has_value());
  auto first = store_->FindSymbols("first");
  ASSERT_TRUE(first.ok() && first->size() == 1u);
  const std::string first_id = (*first)[0].target_id;
  const std::vector<std::string> ids = {first_id, "fn:h.py:helper"};
  auto syms = store_->GetSymbols(ids);
  ASSERT_TRUE(syms.ok());
  ASSERT_EQ(syms->size(), 1u);
  EXPECT_EQ((*syms)[0].name, "first");

  Put("h.py", "def helper():\n    return first()\n");  // this connection
  counts = store_->CallCounts(names);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 2u);
  EXPECT_EQ((*counts)[0], (std::pair<std::string, std::int64_t>{"first", 1}));
  defs = store_->DefinitionCounts(names);
  ASSERT_TRUE(defs.ok());
  EXPECT_THAT(*defs, ElementsAre(std::pair<std::string, std::int64_t>{"first", 1},
                                 std::pair<std::string, std::int64_t>{"helper", 1}));
  file = store_->GetFile("h.py");
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE(file->has_value());
  auto helper = store_->FindSymbols("helper");
  ASSERT_TRUE(helper.ok() && helper->size() == 1u);
  syms = store_->GetSymbols(std::vector<std::string>{first_id, (*helper)[0].target_id});
  ASSERT_TRUE(syms.ok());
  EXPECT_EQ(syms->size(), 2u);

  auto other = Store::Open(dir_.Abs("librarian.sqlite"), WithTrigram());
  ASSERT_TRUE(other.ok());
  store_.swap(*other);
  Put("k.py", "def third():\n    return helper() + helper()\n");  // another connection
  ASSERT_TRUE(store_->DeleteFiles(std::vector<std::string>{"m.py"}).ok());
  store_.swap(*other);
  counts = store_->CallCounts(names);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 2u);
  EXPECT_EQ((*counts)[1], (std::pair<std::string, std::int64_t>{"helper", 2}));
  defs = store_->DefinitionCounts(names);  // m.py (first) is gone
  ASSERT_TRUE(defs.ok());
  EXPECT_THAT(*defs, ElementsAre(std::pair<std::string, std::int64_t>{"helper", 1}));
  file = store_->GetFile("m.py");
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE(file->has_value());
  syms = store_->GetSymbols(std::vector<std::string>{first_id});
  ASSERT_TRUE(syms.ok());
  EXPECT_THAT(*syms, IsEmpty());
}

TEST_F(StoreTest, ReadSnapshotHoldsOneStateAndCachesSeeWritesAfterIt) {
  Put("m.py", "def first():\n    return helper()\n");
  const std::vector<std::string> names = {"helper"};
  auto other = Store::Open(dir_.Abs("librarian.sqlite"), WithTrigram());
  ASSERT_TRUE(other.ok());
  {
    Result<Store::ReadSnapshot> snapshot = store_->BeginRead();
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    EXPECT_TRUE(snapshot->active());
    // A second one nests inside the first and changes nothing.
    Result<Store::ReadSnapshot> nested = store_->BeginRead();
    ASSERT_TRUE(nested.ok());
    EXPECT_FALSE(nested->active());
    auto counts = store_->CallCounts(names);
    ASSERT_TRUE(counts.ok());
    ASSERT_EQ(counts->size(), 1u);
    EXPECT_EQ((*counts)[0].second, 1);
    // Another connection writes while the snapshot lives: this one keeps its state, cached
    // and uncached reads alike.
    store_.swap(*other);
    Put("k.py", "def third():\n    return helper() + helper()\n");
    store_.swap(*other);
    counts = store_->CallCounts(names);
    ASSERT_TRUE(counts.ok());
    EXPECT_EQ((*counts)[0].second, 1);
    auto file = store_->GetFile("k.py");
    ASSERT_TRUE(file.ok());
    EXPECT_FALSE(file->has_value());
    auto calls = store_->CallsTo("helper");
    ASSERT_TRUE(calls.ok());
    EXPECT_EQ(calls->size(), 1u);
    auto hits = store_->SearchChunks("third");
    ASSERT_TRUE(hits.ok());
    EXPECT_THAT(*hits, IsEmpty());
  }
  // After it, the caches see the other connection's write.
  auto counts = store_->CallCounts(names);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].second, 3);
  auto file = store_->GetFile("k.py");
  ASSERT_TRUE(file.ok());
  EXPECT_TRUE(file->has_value());
  auto hits = store_->SearchChunks("third");
  ASSERT_TRUE(hits.ok());
  EXPECT_FALSE(hits->empty());
  // Writes through this connection work again once the snapshot has ended.
  Put("n.py", "def fourth():\n    return 4\n");
  auto fourth = store_->FindSymbols("fourth");
  ASSERT_TRUE(fourth.ok());
  EXPECT_EQ(fourth->size(), 1u);
}

}  // namespace
}  // namespace trove::librarian::store
