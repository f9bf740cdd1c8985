// export_index: the JSON export read back and compared with the store, byte-identical twice;
// the SQLite copy opens with the same counts and passes integrity_check; the Markdown has its
// headings; output paths are confined and existing files outside the export dir kept.
#include "librarian/export/export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "base/env.h"
#include "base/sqlite.h"
#include "librarian/index/bootstrap.h"
#include "librarian/store/manifest.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::exports {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write(
        "src/calc.py",
        "import os\n\n\ndef add(a, b):\n    \"\"\"Adds two numbers.\"\"\"\n    return a + b\n"
        "\n\ndef twice(x):\n    return add(x, x)\n");
    dir_.Write("src/shapes.cc",
               "struct Point { int x; int y; };\n\nint Area(int w, int h) { return w * h; }\n");
    dir_.Write("docs/adr/0001-use-sqlite.md", "# Use SQLite\n\nStatus: accepted\n");
    index::BootstrapOptions o;
    o.workspace = dir_.path();
    o.ctags_program = "";
    o.workers = 1;
    base::Cancellation cancel;
    auto r = index::Bootstrap(o, cancel, base::Progress());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    root_ = r->workspace;
    run_id_ = r->run_id;
    auto st = store::Store::Open(index::StorePathFor(root_));
    ASSERT_TRUE(st.ok());
    store_ = std::move(st).value();
  }

  Result<ExportResult> Export(Format format, const std::string& output = "") {
    return ExportIndex(env_, *store_, ExportRequest{root_, "ws_test", format, output});
  }

  testing::TempDir dir_;
  std::string root_;
  std::string run_id_;
  base::PosixEnv env_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(ExportTest, JsonReimportsToTheStoreContents) {
  auto r = Export(Format::kJson);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->success);
  EXPECT_EQ(r->output_path, ".librarian/exports/index-" + run_id_ + ".json");
  const std::string text = Slurp(dir_.Abs(r->output_path));
  EXPECT_EQ(r->bytes, text.size());
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  for (const char* key : {"schemaVersion", "exportedAt", "identity", "runs", "files", "symbols",
                          "edges", "packs", "claims"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  // Files: every stored record, with its hash.
  auto files = store_->ListFiles();
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(j["files"].size(), files->size());
  for (std::size_t i = 0; i < files->size(); ++i) {
    EXPECT_EQ(j["files"][i]["path"], (*files)[i].path);
    EXPECT_EQ(j["files"][i]["sha256"], (*files)[i].sha256);
  }
  // Symbols: the store's target ids, each span as stored.
  std::set<std::string> stored;
  auto syms = store_->ListSymbols(0, 1000);
  ASSERT_TRUE(syms.ok());
  for (const store::SymbolRow& s : *syms) stored.insert(s.target_id);
  std::set<std::string> exported;
  for (const auto& s : j["symbols"]) {
    exported.insert(s["id"].get<std::string>());
    auto row = store_->GetSymbol(s["id"].get<std::string>());
    ASSERT_TRUE(row.ok() && row->has_value());
    EXPECT_EQ(s["spanSha256"], (*row)->span_sha256);
    EXPECT_EQ(s["startLine"], (*row)->start_line);
  }
  EXPECT_EQ(exported, stored);
  EXPECT_EQ(r->counts.symbols, stored.size());
  // Packs: one per content-manifest pack id, sorted, each a claim.
  auto has = store::FindPack(*store_, j["packs"][0]["packId"].get<std::string>());
  ASSERT_TRUE(has.ok());
  EXPECT_TRUE(has->has_value());
  std::string prev;
  for (const auto& p : j["packs"]) {
    const std::string id = p["packId"].get<std::string>();
    EXPECT_LT(prev, id);
    prev = id;
    auto found = store::FindPack(*store_, id);
    ASSERT_TRUE(found.ok());
    ASSERT_TRUE(found->has_value()) << id;
    EXPECT_EQ((*found)->target_id, p["targetId"]);
  }
  EXPECT_EQ(j["packs"].size(), r->counts.packs);
  EXPECT_EQ(j["claims"].size(), r->counts.claims);
  EXPECT_EQ(j["claims"][0]["confidence"]["type"], "deterministic");
  EXPECT_EQ(j["identity"]["confidenceSemantics"], "ranking_signal_uncalibrated");
  // add -> the calls edge from twice.
  bool call_edge = false;
  for (const auto& e : j["edges"]) {
    call_edge = call_edge ||
                (e["kind"] == "calls" && e["from"] == "fn:src/calc.py::twice" && e["to"] == "add");
  }
  EXPECT_TRUE(call_edge);

  // The same index exports the same bytes (overwriting inside .librarian/exports/).
  auto again = Export(Format::kJson);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Slurp(dir_.Abs(again->output_path)), text);
}

TEST_F(ExportTest, SqliteCopyOpensWithTheSameCounts) {
  auto r = Export(Format::kSqlite, "out/copy.sqlite");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->output_path, "out/copy.sqlite");
  // No temporary file is left beside it.
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_.Abs("out"))) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
  auto copy = store::Store::Open(dir_.Abs("out/copy.sqlite"));
  ASSERT_TRUE(copy.ok());
  EXPECT_FALSE((*copy)->schema_rebuilt());
  for (const char* table :
       {"files", "symbols", "chunks", "calls", "imports", "runs", "run_files", "content_symbols"}) {
    auto count = [table](store::Store& st) -> std::int64_t {
      auto q = st.db().Prepare(std::string("SELECT count(*) FROM ") + table);
      EXPECT_TRUE(q.ok()) << table;
      if (!q.ok() || !*q->Step()) return -1;
      return q->ColumnInt64(0);
    };
    EXPECT_EQ(count(*store_), count(**copy)) << table;
    EXPECT_GT(count(**copy), 0) << table;
  }
  EXPECT_TRUE((*copy)->IntegrityCheck().ok());
  auto hits = (*copy)->SearchChunks("numbers");
  ASSERT_TRUE(hits.ok());
  EXPECT_FALSE(hits->empty());
}

TEST_F(ExportTest, MarkdownHasItsHeadings) {
  auto r = Export(Format::kMarkdown, "INDEX.md");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string md = Slurp(dir_.Abs("INDEX.md"));
  EXPECT_FALSE(md.empty());
  EXPECT_THAT(md, StartsWith("# Librarian index: "));
  for (const char* heading :
       {"\n## Identity\n", "\n## Last run\n", "\n## Modules\n", "\n### src/\n",
        "\n#### `src/calc.py`\n", "\n## Decisions\n", "\n## Latest audit\n"}) {
    EXPECT_THAT(md, HasSubstr(heading));
  }
  EXPECT_THAT(md, HasSubstr("- function `add` (lines 4-6): Adds two numbers"));
  EXPECT_THAT(md, HasSubstr("`docs/adr/0001-use-sqlite.md`"));
  EXPECT_THAT(md, HasSubstr(run_id_));
}

TEST_F(ExportTest, OutputPathsAreConfined) {
  for (const char* bad : {"../escape.json", "/tmp/x.json", "a/../../x.json", "a\\b.json"}) {
    auto r = Export(Format::kJson, bad);
    EXPECT_EQ(r.status().code(), base::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(r.status().message(), StartsWith("outputPath")) << bad;
  }
  std::filesystem::create_symlink("/tmp", dir_.Abs("link"));
  auto through = Export(Format::kJson, "link/x.json");
  EXPECT_FALSE(through.ok());
  // An existing file outside .librarian/exports/ is never overwritten.
  auto kept = Export(Format::kJson, "src/calc.py");
  EXPECT_EQ(kept.status().code(), base::StatusCode::kAlreadyExists);
  EXPECT_THAT(Slurp(dir_.Abs("src/calc.py")), HasSubstr("def add"));
}

TEST(ExportFormatTest, NamesRoundTrip) {
  for (Format f : {Format::kJson, Format::kSqlite, Format::kMarkdown}) {
    EXPECT_EQ(ParseFormat(FormatName(f)), f);
  }
  EXPECT_FALSE(ParseFormat("scip").has_value());
}

}  // namespace
}  // namespace trove::librarian::exports
