#include "librarian/index/bootstrap.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/sqlite.h"
#include "librarian/embed/embed.h"
#include "librarian/query/assoc.h"
#include "librarian/semvec/semvec.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::index {
namespace {

using testing::TempDir;

// A small workspace in four languages plus a Markdown file and a binary.
void WriteFixture(const TempDir& dir) {
  dir.Write("src/geometry.cc",
            "#include \"geometry.h\"\n"
            "#include <cmath>\n"
            "\n"
            "// Returns the distance between two points.\n"
            "double Distance(double x, double y) {\n"
            "  return std::sqrt(Square(x) + Square(y));\n"
            "}\n"
            "\n"
            "double Square(double v) { return v * v; }\n");
  dir.Write("src/geometry.h", "double Distance(double x, double y);\ndouble Square(double v);\n");
  dir.Write("tools/report.py",
            "import os\n"
            "\n"
            "def write_report(path):\n"
            "    \"\"\"Writes the report.\"\"\"\n"
            "    return os.path.join(path, 'r.txt')\n"
            "\n"
            "class Reporter:\n"
            "    def run(self):\n"
            "        return write_report('.')\n");
  dir.Write("cmd/main.go",
            "package main\n"
            "\n"
            "import \"fmt\"\n"
            "\n"
            "func greet(name string) string {\n"
            "\treturn fmt.Sprintf(\"hi %s\", name)\n"
            "}\n"
            "\n"
            "func main() { fmt.Println(greet(\"x\")) }\n");
  dir.Write("web/app.ts",
            "import { greet } from './greet';\n"
            "export function start(): void {\n"
            "  greet('app');\n"
            "}\n");
  dir.Write("docs/notes.md", "# Notes\n\nSome notes about geometry.\n");
  dir.Write("assets/logo.bin", std::string("\x89PNG\0\0\0data", 11));
}
constexpr std::uint64_t kFixtureFiles = 6;  // everything but the binary

BootstrapOptions Options(const TempDir& dir) {
  BootstrapOptions o;
  o.workspace = dir.path();
  o.workers = 2;
  return o;
}

Result<BootstrapReport> RunBootstrap(const BootstrapOptions& options) {
  base::Cancellation cancel;
  return Bootstrap(options, cancel, base::Progress());
}

std::unique_ptr<store::Store> OpenStore(const TempDir& dir) {
  auto store = store::Store::Open(StorePathFor(dir.path()));
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(*store) : nullptr;
}

// Sets `rel`'s mtime to `seconds` since the epoch, so edits never hide behind the clock's
// granularity.
void SetMtime(const TempDir& dir, std::string_view rel, time_t seconds) {
  timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, dir.Abs(rel).c_str(), times, 0), 0) << rel;
}

TEST(BootstrapTest, FirstRunIndexesTheWorkspace) {
  TempDir dir;
  WriteFixture(dir);
  Result<BootstrapReport> r = RunBootstrap(Options(dir));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->success);
  EXPECT_EQ(r->state, "succeeded");
  EXPECT_EQ(r->workspace, dir.path());
  EXPECT_EQ(r->store_path, dir.Abs(".librarian/librarian.sqlite"));
  EXPECT_TRUE(r->run_id.starts_with("run_")) << r->run_id;
  EXPECT_EQ(r->run_id.size(), std::string("run_20260101T000000Z_abcd").size());
  const BootstrapStats& s = r->stats;
  EXPECT_EQ(s.mode, "full");
  EXPECT_EQ(s.files_discovered, kFixtureFiles);
  EXPECT_EQ(s.files_added, kFixtureFiles);
  EXPECT_EQ(s.files_extracted, kFixtureFiles);
  EXPECT_EQ(s.files_processed, kFixtureFiles);
  EXPECT_EQ(s.files_skipped_binary, 1u);
  EXPECT_EQ(s.files_unchanged, 0u);
  EXPECT_GE(s.functions_indexed, 7u);  // Distance, Square, write_report, run, greet, main, start
  EXPECT_GE(s.types_indexed, 1u);      // Reporter
  EXPECT_GT(s.edges, 0u);
  EXPECT_GT(s.chunks_indexed, 0u);
  EXPECT_EQ(s.languages.at("cpp"), 2u);  // .h routes to cpp beside a .cc
  EXPECT_EQ(s.languages.at("python"), 1u);
  EXPECT_EQ(s.languages.at("go"), 1u);
  EXPECT_EQ(s.languages.at("typescript"), 1u);
  EXPECT_EQ(s.extractors.at("tree_sitter"), 5u);
  EXPECT_GT(s.context_packs_created, 0u);
  EXPECT_EQ(s.context_packs_created, s.context_packs_total);
  EXPECT_GE(s.checkpoints, 2u);

  // The store location and its .gitignore (docs/librarian.md §6.6).
  std::ifstream ignore(dir.Abs(".librarian/.gitignore"));
  std::stringstream text;
  text << ignore.rdbuf();
  EXPECT_EQ(text.str(), "*\n");

  auto store = OpenStore(dir);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->IntegrityCheck().ok());
  auto distance = store->FindSymbols("Distance");
  ASSERT_TRUE(distance.ok());
  ASSERT_FALSE(distance->empty());
  EXPECT_EQ((*distance)[0].path, "src/geometry.cc");
  auto hits = store->SearchChunks("distance between points");
  ASSERT_TRUE(hits.ok());
  ASSERT_FALSE(hits->empty());
  EXPECT_EQ((*hits)[0].path, "src/geometry.cc");
  // Graph data: imports and calls.
  auto imports = store->FileImports("cmd/main.go");
  ASSERT_TRUE(imports.ok());
  ASSERT_EQ(imports->size(), 1u);
  EXPECT_EQ((*imports)[0].module, "fmt");
  auto calls = store->CallsTo("Square");
  ASSERT_TRUE(calls.ok());
  EXPECT_EQ(calls->size(), 2u);
  auto binary = store->GetFile("assets/logo.bin");
  ASSERT_TRUE(binary.ok() && binary->has_value());
  EXPECT_EQ((*binary)->status, store::FileStatus::kSkippedBinary);
  auto run = store->GetRun(r->run_id);
  ASSERT_TRUE(run.ok() && run->has_value());
  EXPECT_EQ((*run)->state, "succeeded");
  EXPECT_EQ((*run)->mode, "full");
  EXPECT_NE((*run)->stats_json.find("\"filesAdded\":6"), std::string::npos) << (*run)->stats_json;
  EXPECT_NE((*run)->tool_versions_json.find("tree-sitter-cpp"), std::string::npos);
}

// The calling thread extracts files too (alone with one worker); every thread count stores
// the same rows, whichever thread extracted which file.
TEST(BootstrapTest, EveryThreadCountStoresTheSameRows) {
  TempDir dir;
  WriteFixture(dir);
  auto rows = [&](std::size_t workers) {
    BootstrapOptions o = Options(dir);
    o.workers = workers;
    o.store_path = dir.Abs(fmt::format("store{}.sqlite", workers));
    o.exclude = {"store*"};
    Result<BootstrapReport> r = RunBootstrap(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::string out;
    if (!r.ok()) return out;
    out += fmt::format("extracted {} chunks {} edges {}\n", r->stats.files_extracted,
                       r->stats.chunks_indexed, r->stats.edges);
    auto store = store::Store::Open(o.store_path);
    EXPECT_TRUE(store.ok());
    if (!store.ok()) return out;
    Result<std::vector<store::FileRecord>> files = (*store)->ListFiles();
    EXPECT_TRUE(files.ok());
    if (!files.ok()) return out;
    for (const store::FileRecord& f : *files) {
      out += fmt::format("{} {} {}\n", f.path, f.sha256, store::FileStatusName(f.status));
      Result<std::vector<store::SymbolRow>> symbols = (*store)->FileSymbols(f.path);
      Result<std::vector<store::ChunkRow>> chunks = (*store)->FileChunks(f.path);
      Result<std::vector<store::CallRow>> calls = (*store)->FileCalls(f.path);
      EXPECT_TRUE(symbols.ok() && chunks.ok() && calls.ok()) << f.path;
      if (!symbols.ok() || !chunks.ok() || !calls.ok()) continue;
      for (const store::SymbolRow& s : *symbols) {
        out += fmt::format("  {} {}-{} {}\n", s.target_id, s.start_line, s.end_line, s.doc);
      }
      for (const store::ChunkRow& c : *chunks) {
        out += fmt::format("  chunk {} {}-{} {}\n", c.name, c.start_line, c.end_line, c.body);
      }
      for (const store::CallRow& c : *calls) {
        out += fmt::format("  call {} {} {}\n", c.callee, c.line, c.caller_target_id);
      }
    }
    return out;
  };
  const std::string one = rows(1);
  EXPECT_NE(one.find("tools/report.py"), std::string::npos) << one;
  EXPECT_NE(one.find("Distance"), std::string::npos) << one;
  EXPECT_EQ(rows(2), one);
  EXPECT_EQ(rows(4), one);
}

// The learned engines (association model, workspace vectors) learn on a second connection
// and thread while the stored packs are written (decision 0097): what they store equals what
// learning on the writer's connection after the run gives, and a run that changed nothing
// learns nothing again.
TEST(BootstrapTest, LearnedEnginesLearnBesideThePacksAndMatchALearningAfterTheRun) {
  TempDir dir;
  WriteFixture(dir);
  for (int i = 0; i < 6; ++i) {
    dir.Write(fmt::format("pkg/crc{}.py", i),
              fmt::format("def checksum_{0}(data):\n"
                          "    \"\"\"Compute the checksum of the data with a polynomial.\"\"\"\n"
                          "    crc = polynomial_table(data)\n"
                          "    return crc ^ {0}\n"
                          "\n"
                          "def open_socket_{0}(host):\n"
                          "    \"\"\"Open a socket to the host and connect.\"\"\"\n"
                          "    sock = connect_host(host)\n"
                          "    return sock\n",
                          i));
  }
  Result<BootstrapReport> r = RunBootstrap(Options(dir));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->success);
  std::vector<std::string> phases;
  for (const auto& [name, ms] : r->phase_ms) {
    phases.push_back(name);
    EXPECT_GE(ms, 0) << name;
  }
  EXPECT_EQ(phases, (std::vector<std::string>{"index", "packs", "learn"}));
  for (const std::string& d : r->disclosures) {
    EXPECT_FALSE(d.starts_with("assoc_model_unavailable")) << d;
    EXPECT_FALSE(d.starts_with("workspace_vectors_unavailable")) << d;
  }

  auto store = OpenStore(dir);
  ASSERT_NE(store, nullptr);
  // The association model: as learned again on this connection.
  auto assoc = query::AssocModel::Load(*store);
  ASSERT_TRUE(assoc.ok()) << assoc.status().ToString();
  ASSERT_NE(*assoc, nullptr);
  auto assoc_again = query::AssocModel::LearnFromStore(*store);
  ASSERT_TRUE(assoc_again.ok());
  EXPECT_EQ((*assoc)->Serialize(), assoc_again->Serialize());
  // The workspace vectors: the stored function vectors are those of a learning after the run.
  auto id = semvec::StoredModelId(store->db());
  ASSERT_TRUE(id.ok());
  const std::optional<semvec::Options> so = semvec::OptionsFromEnv();
  ASSERT_TRUE(so.has_value());
  EXPECT_TRUE(id->starts_with(r->run_id)) << *id;
  EXPECT_TRUE(semvec::ModelIdMatches(*id, *so)) << *id;
  auto stored = embed::Load(store->db(), semvec::kModelName);
  ASSERT_TRUE(stored.ok());
  auto again = semvec::LearnFromStore(store->db(), *so);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_GE(again->functions.size(), 12u);
  ASSERT_EQ(stored->size(), again->functions.size());
  auto by_target = [](const embed::Stored& a, const embed::Stored& b) {
    return a.target_id < b.target_id;
  };
  std::sort(stored->begin(), stored->end(), by_target);
  std::sort(again->functions.begin(), again->functions.end(), by_target);
  for (std::size_t i = 0; i < stored->size(); ++i) {
    EXPECT_EQ((*stored)[i].target_id, again->functions[i].target_id);
    EXPECT_EQ((*stored)[i].vector, again->functions[i].vector) << (*stored)[i].target_id;
  }
  store.reset();

  // Nothing changed: nothing is learned again, and the stored model stays.
  Result<BootstrapReport> noop = RunBootstrap(Options(dir));
  ASSERT_TRUE(noop.ok()) << noop.status().ToString();
  EXPECT_EQ(noop->stats.mode, "noop");
  for (const auto& [name, ms] : noop->phase_ms) EXPECT_NE(name, "learn");
  store = OpenStore(dir);
  ASSERT_NE(store, nullptr);
  auto id_after = semvec::StoredModelId(store->db());
  ASSERT_TRUE(id_after.ok());
  EXPECT_EQ(*id_after, *id);
}

// A bootstrap merges the chunk index's segments less often while it writes and leaves FTS5's
// default merge policy behind, whatever became of the run.
TEST(BootstrapTest, LeavesTheDefaultChunkAutomerge) {
  TempDir dir;
  WriteFixture(dir);
  ASSERT_TRUE(RunBootstrap(Options(dir)).ok());
  auto store = OpenStore(dir);
  ASSERT_NE(store, nullptr);
  auto st = store->db().Prepare("SELECT v FROM chunk_fts_config WHERE k = 'automerge'");
  ASSERT_TRUE(st.ok());
  auto row = st->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(st->ColumnInt64(0), store::kDefaultChunkAutomerge);
  EXPECT_TRUE(store->IntegrityCheck().ok());
}

TEST(BootstrapTest, UnchangedRerunReparsesNothing) {
  TempDir dir;
  WriteFixture(dir);
  ASSERT_TRUE(RunBootstrap(Options(dir)).ok());
  Result<BootstrapReport> r = RunBootstrap(Options(dir));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->success);
  EXPECT_EQ(r->stats.mode, "noop");
  EXPECT_EQ(r->stats.files_extracted, 0u);
  EXPECT_EQ(r->stats.files_unchanged, kFixtureFiles);
  EXPECT_EQ(r->stats.files_processed, kFixtureFiles);
  EXPECT_EQ(r->stats.context_packs_created, 0u);
  EXPECT_GT(r->stats.context_packs_total, 0u);
  EXPECT_GE(r->stats.functions_indexed, 7u);  // totals still describe the index
}

TEST(BootstrapTest, EditingOneFileReparsesExactlyThatFile) {
  TempDir dir;
  WriteFixture(dir);
  ASSERT_TRUE(RunBootstrap(Options(dir)).ok());
  dir.Write("tools/report.py", "def publish_summary(path):\n    return path\n");
  SetMtime(dir, "tools/report.py", 1'000'000'000);
  Result<BootstrapReport> r = RunBootstrap(Options(dir));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.mode, "incremental");
  EXPECT_EQ(r->stats.files_extracted, 1u);
  EXPECT_EQ(r->stats.files_modified, 1u);
  EXPECT_EQ(r->stats.files_unchanged, kFixtureFiles - 1);
  auto store = OpenStore(dir);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->FindSymbols("write_report")->empty());
  ASSERT_EQ(store->FindSymbols("publish_summary")->size(), 1u);
  auto file = store->GetFile("tools/report.py");
  ASSERT_TRUE(file.ok() && file->has_value());
  EXPECT_EQ((*file)->run_id, r->run_id);
  // The other files still belong to the first run.
  auto other = store->GetFile("cmd/main.go");
  ASSERT_TRUE(other.ok() && other->has_value());
  EXPECT_NE((*other)->run_id, r->run_id);
}

TEST(BootstrapTest, TouchedButEqualFileIsRehashedNotReparsed) {
  TempDir dir;
  WriteFixture(dir);
  ASSERT_TRUE(RunBootstrap(Options(dir)).ok());
  SetMtime(dir, "cmd/main.go", 1'100'000'000);
  Result<BootstrapReport> r = RunBootstrap(Options(dir));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.mode, "incremental");
  EXPECT_EQ(r->stats.files_extracted, 0u);
  EXPECT_EQ(r->stats.files_touched, 1u);
  EXPECT_EQ(r->stats.files_unchanged, kFixtureFiles);
  auto store = OpenStore(dir);
  auto file = store->GetFile("cmd/main.go");
  ASSERT_TRUE(file.ok() && file->has_value());
  EXPECT_EQ((*file)->mtime_ns, std::int64_t{1'100'000'000} * 1'000'000'000);
  // A third run sees the stored mtime and does nothing.
  Result<BootstrapReport> again = RunBootstrap(Options(dir));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->stats.mode, "noop");
}

TEST(BootstrapTest, DeletedFileIsRemovedWithItsRows) {
  TempDir dir;
  WriteFixture(dir);
  ASSERT_TRUE(RunBootstrap(Options(dir)).ok());
  ASSERT_EQ(unlink(dir.Abs("cmd/main.go").c_str()), 0);
  Result<BootstrapReport> r = RunBootstrap(Options(dir));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.files_deleted, 1u);
  EXPECT_EQ(r->stats.files_extracted, 0u);
  EXPECT_EQ(r->stats.languages.count("go"), 0u);
  auto store = OpenStore(dir);
  EXPECT_FALSE(store->GetFile("cmd/main.go")->has_value());
  EXPECT_TRUE(store->FindSymbols("greet")->empty());
  EXPECT_TRUE(store->FileImports("cmd/main.go")->empty());
  EXPECT_TRUE(store->IntegrityCheck().ok());
}

TEST(BootstrapTest, ANewGrammarVersionReextractsItsFiles) {
  TempDir dir;
  WriteFixture(dir);
  ASSERT_TRUE(RunBootstrap(Options(dir)).ok());
  {
    // Pretend the Go file was extracted by an older grammar.
    auto store = OpenStore(dir);
    ASSERT_TRUE(store->db()
                    .Exec("UPDATE files SET extractor = 'tree-sitter:go@0.0.1' "
                          "WHERE path = 'cmd/main.go'")
                    .ok());
  }
  Result<BootstrapReport> r = RunBootstrap(Options(dir));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.files_extracted, 1u);
  EXPECT_EQ(r->stats.files_modified, 1u);
  auto file = OpenStore(dir)->GetFile("cmd/main.go");
  ASSERT_TRUE(file.ok() && file->has_value());
  EXPECT_EQ((*file)->extractor.rfind("tree-sitter:go@0.23", 0), 0u) << (*file)->extractor;
}

TEST(BootstrapTest, ForceReparsesEverything) {
  TempDir dir;
  WriteFixture(dir);
  ASSERT_TRUE(RunBootstrap(Options(dir)).ok());
  BootstrapOptions o = Options(dir);
  o.force = true;
  Result<BootstrapReport> r = RunBootstrap(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.mode, "full");
  EXPECT_EQ(r->stats.files_extracted, kFixtureFiles);
  EXPECT_EQ(r->stats.files_unchanged, kFixtureFiles);  // content did not change
  auto store = OpenStore(dir);
  EXPECT_EQ(store->FindSymbols("Distance")->size(), 1u);  // replaced, not duplicated
}

TEST(BootstrapTest, MaxFilesTruncatesAndDeletesNothingBeyondTheLimit) {
  TempDir dir;
  WriteFixture(dir);
  ASSERT_TRUE(RunBootstrap(Options(dir)).ok());
  BootstrapOptions o = Options(dir);
  o.max_files = 3;  // assets/logo.bin, cmd/main.go, docs/notes.md
  Result<BootstrapReport> r = RunBootstrap(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->stats.truncated_by_max_files);
  EXPECT_EQ(r->stats.files_deleted, 0u);
  auto store = OpenStore(dir);
  EXPECT_TRUE(store->GetFile("web/app.ts")->has_value());
}

// New files are read on the workers, but a binary C++ source must still not make the headers
// C++ (the crawl used to leave binaries out before routing was decided).
TEST(BootstrapTest, BinaryCppSourceDoesNotMakeHeadersCpp) {
  TempDir dir;
  dir.Write("api.h", "int api(void);\nint api(void) { return 1; }\n");
  dir.Write("blob.cc", std::string("\x7f"
                                   "ELF\0\0\0",
                                   7));
  Result<BootstrapReport> r = RunBootstrap(Options(dir));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.files_discovered, 1u);
  EXPECT_EQ(r->stats.files_skipped_binary, 1u);
  auto store = OpenStore(dir);
  auto header = store->GetFile("api.h");
  ASSERT_TRUE(header.ok() && header->has_value());
  EXPECT_EQ((*header)->language, "c");
  auto blob = store->GetFile("blob.cc");
  ASSERT_TRUE(blob.ok() && blob->has_value());
  EXPECT_EQ((*blob)->status, store::FileStatus::kSkippedBinary);

  dir.Write("real.cc", "int real() { return 2; }\n");
  BootstrapOptions o = Options(dir);
  o.force = true;  // an unchanged header keeps its rows on an incremental run
  r = RunBootstrap(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.files_skipped_binary, 1u);
  header = OpenStore(dir)->GetFile("api.h");
  ASSERT_TRUE(header.ok() && header->has_value());
  EXPECT_EQ((*header)->language, "cpp");
}

TEST(BootstrapTest, ProgressIsMonotonicAndEndsAtTotal) {
  TempDir dir;
  WriteFixture(dir);
  for (int i = 0; i < 30; ++i) dir.Write(fmt::format("gen/f{:02}.py", i), "def f():\n    pass\n");
  std::vector<std::pair<double, double>> reports;
  base::Progress progress(
      [&](double done, double total, const std::string&) { reports.emplace_back(done, total); });
  base::Cancellation cancel;
  Result<BootstrapReport> r = Bootstrap(Options(dir), cancel, progress);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(reports.empty());
  // The total is what the crawl listed, fixed before extraction starts: a first run reads new
  // files only on the workers, so it includes assets/logo.bin, found binary there (the stats
  // leave it out).
  EXPECT_EQ(r->stats.files_discovered, kFixtureFiles + 30);
  EXPECT_EQ(r->stats.files_skipped_binary, 1u);
  const double total = static_cast<double>(kFixtureFiles + 30 + 1);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].second, total);
    if (i > 0) {
      EXPECT_GE(reports[i].first, reports[i - 1].first);
    }
  }
  EXPECT_EQ(reports.back().first, total);
}

TEST(BootstrapTest, CancellationStopsEarlyAndLeavesAConsistentStore) {
  TempDir dir;
  constexpr int kFiles = 300;
  for (int i = 0; i < kFiles; ++i) {
    dir.Write(fmt::format("m{:03}.py", i), fmt::format("def f{}(x):\n    return x\n", i));
  }
  base::Cancellation cancel;
  base::Progress progress([&](double done, double, const std::string&) {
    if (done >= 20) cancel.Cancel();
  });
  BootstrapOptions o = Options(dir);
  Result<BootstrapReport> r = Bootstrap(o, cancel, progress);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), base::StatusCode::kCancelled);
  {
    auto store = OpenStore(dir);
    ASSERT_NE(store, nullptr);
    EXPECT_TRUE(store->IntegrityCheck().ok());
    auto files = store->CountRows("files");
    ASSERT_TRUE(files.ok());
    EXPECT_GE(*files, 20);
    EXPECT_LT(*files, kFiles);
    // Each stored file is complete: its one function is there.
    EXPECT_EQ(*store->CountRows("symbols"), *files);
    auto runs = store->ListRuns();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ((*runs)[0].state, "cancelled");
  }
  // The next run completes, extracting only what the cancelled one left.
  Result<BootstrapReport> next = RunBootstrap(o);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->stats.mode, "incremental");
  EXPECT_EQ(next->stats.files_discovered, static_cast<std::uint64_t>(kFiles));
  EXPECT_LT(next->stats.files_extracted, static_cast<std::uint64_t>(kFiles));
  EXPECT_EQ(next->stats.functions_indexed, static_cast<std::uint64_t>(kFiles));
}

TEST(BootstrapTest, CancelledBeforeStartTouchesNothing) {
  TempDir dir;
  WriteFixture(dir);
  base::Cancellation cancel;
  cancel.Cancel();
  Result<BootstrapReport> r = Bootstrap(Options(dir), cancel, base::Progress());
  EXPECT_EQ(r.status().code(), base::StatusCode::kCancelled);
}

// A hook that makes every attempt on `slow` time out, recording the limits it saw.
struct StallHook {
  std::string slow;
  std::mutex mu;
  std::vector<std::int64_t> limits;
  Status operator()(std::string_view path, std::int64_t limit_ms) {
    if (path != slow) return Status::Ok();
    std::lock_guard lock(mu);
    limits.push_back(limit_ms);
    return Status::DeadlineExceeded("stalled by the test");
  }
};

BootstrapOptions TimeoutOptions(const TempDir& dir, StallHook& hook,
                                crawl::FileTimeoutPolicy policy, int retries) {
  BootstrapOptions o = Options(dir);
  o.workers = 1;  // files in sorted order, so "earlier files" is well defined
  o.timeout.timeout_ms = 500;
  o.timeout.retries = retries;
  o.timeout.policy = policy;
  o.attempt_hook_for_testing = [&hook](std::string_view path, std::int64_t limit) {
    return hook(path, limit);
  };
  return o;
}

TEST(BootstrapTest, TimeoutSkipRecordsTimedOutAndSucceeds) {
  TempDir dir;
  WriteFixture(dir);
  StallHook hook{"tools/report.py"};
  Result<BootstrapReport> r =
      RunBootstrap(TimeoutOptions(dir, hook, crawl::FileTimeoutPolicy::kSkip, /*retries=*/2));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->success);
  EXPECT_EQ(r->stats.files_timed_out, 1u);
  EXPECT_EQ(r->stats.timeout_retries, 2u);
  EXPECT_EQ(r->timed_out, std::vector<std::string>{"tools/report.py"});
  EXPECT_EQ(hook.limits, (std::vector<std::int64_t>{500, 500, 500}));
  auto store = OpenStore(dir);
  auto file = store->GetFile("tools/report.py");
  ASSERT_TRUE(file.ok() && file->has_value());
  EXPECT_EQ((*file)->status, store::FileStatus::kTimedOut);
  EXPECT_TRUE(store->FindSymbols("Distance")->size() == 1u);

  // Without the stall, the next run re-extracts it.
  hook.slow = "none";
  Result<BootstrapReport> next =
      RunBootstrap(TimeoutOptions(dir, hook, crawl::FileTimeoutPolicy::kSkip, 0));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->stats.files_extracted, 1u);
  EXPECT_EQ(OpenStore(dir)->FindSymbols("write_report")->size(), 1u);
}

TEST(BootstrapTest, TimeoutOfAnIndexedFileKeepsItsRowsMarkedStale) {
  TempDir dir;
  WriteFixture(dir);
  ASSERT_TRUE(RunBootstrap(Options(dir)).ok());
  dir.Write("tools/report.py", "def renamed():\n    pass\n");
  SetMtime(dir, "tools/report.py", 1'000'000'000);
  StallHook hook{"tools/report.py"};
  Result<BootstrapReport> r =
      RunBootstrap(TimeoutOptions(dir, hook, crawl::FileTimeoutPolicy::kSkip, 0));
  ASSERT_TRUE(r.ok());
  auto store = OpenStore(dir);
  auto file = store->GetFile("tools/report.py");
  ASSERT_TRUE(file.ok() && file->has_value());
  EXPECT_EQ((*file)->status, store::FileStatus::kTimedOut);
  EXPECT_TRUE((*file)->stale);
  EXPECT_EQ(store->FindSymbols("write_report")->size(), 1u);  // the previous entry
  EXPECT_TRUE(store->FindSymbols("renamed")->empty());
}

TEST(BootstrapTest, TimeoutRetryRetriesAtTheEndWithTwiceTheLimit) {
  TempDir dir;
  WriteFixture(dir);
  StallHook hook{"cmd/main.go"};
  Result<BootstrapReport> r =
      RunBootstrap(TimeoutOptions(dir, hook, crawl::FileTimeoutPolicy::kRetry, /*retries=*/1));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->success);
  EXPECT_EQ(hook.limits, (std::vector<std::int64_t>{500, 500, 1000}));
  EXPECT_EQ(r->stats.files_timed_out, 1u);
  EXPECT_EQ(r->stats.timeout_retries, 2u);
  EXPECT_EQ(r->stats.files_extracted, kFixtureFiles - 1);
  EXPECT_EQ(r->stats.files_processed, kFixtureFiles);
}

TEST(BootstrapTest, TimeoutRetrySucceedsWhenTheDoubledLimitSuffices) {
  TempDir dir;
  WriteFixture(dir);
  BootstrapOptions o = Options(dir);
  o.timeout.timeout_ms = 500;
  o.timeout.policy = crawl::FileTimeoutPolicy::kRetry;
  o.attempt_hook_for_testing = [](std::string_view path, std::int64_t limit) {
    return path == "cmd/main.go" && limit < 1000 ? Status::DeadlineExceeded("slow") : Status::Ok();
  };
  Result<BootstrapReport> r = RunBootstrap(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.files_timed_out, 0u);
  EXPECT_EQ(r->stats.files_extracted, kFixtureFiles);
  EXPECT_EQ(OpenStore(dir)->FindSymbols("greet")->size(), 1u);
}

TEST(BootstrapTest, TimeoutFailStopsTheRunAndKeepsEarlierFiles) {
  TempDir dir;
  WriteFixture(dir);
  StallHook hook{"src/geometry.cc"};
  Result<BootstrapReport> r =
      RunBootstrap(TimeoutOptions(dir, hook, crawl::FileTimeoutPolicy::kFail, /*retries=*/1));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->success);
  EXPECT_EQ(r->state, "failed");
  EXPECT_EQ(r->error, "src/geometry.cc: timed out after 500 ms (fileTimeoutPolicy fail)");
  EXPECT_EQ(hook.limits.size(), 2u);
  {
    auto store = OpenStore(dir);
    // cmd/main.go and docs/notes.md sort before the stalled file and were committed.
    EXPECT_EQ(store->FindSymbols("greet")->size(), 1u);
    EXPECT_TRUE(store->FindSymbols("write_report")->empty());  // after it: not reached
    auto run = store->GetRun(r->run_id);
    ASSERT_TRUE(run.ok() && run->has_value());
    EXPECT_EQ((*run)->state, "failed");
  }
  // The next run resumes: only what is missing is extracted.
  hook.slow = "none";
  Result<BootstrapReport> next =
      RunBootstrap(TimeoutOptions(dir, hook, crawl::FileTimeoutPolicy::kFail, 0));
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(next->success);
  EXPECT_EQ(next->stats.files_unchanged + next->stats.files_extracted, kFixtureFiles);
  EXPECT_GE(next->stats.files_unchanged, 2u);
  EXPECT_EQ(OpenStore(dir)->FindSymbols("write_report")->size(), 1u);
}

TEST(BootstrapTest, RejectsBadWorkspacesAndOptions) {
  TempDir dir;
  dir.Write("file.txt", "x");
  auto code_and_message = [](BootstrapOptions o) {
    Result<BootstrapReport> r = RunBootstrap(o);
    EXPECT_FALSE(r.ok());
    return std::pair{r.status().code(), std::string(r.status().message())};
  };
  BootstrapOptions o;
  o.workspace = dir.Abs("missing");
  auto [code, message] = code_and_message(o);
  EXPECT_EQ(code, base::StatusCode::kInvalidArgument);
  EXPECT_TRUE(message.starts_with("workspace: ")) << message;

  o.workspace = dir.Abs("file.txt");
  std::tie(code, message) = code_and_message(o);
  EXPECT_EQ(code, base::StatusCode::kInvalidArgument);
  EXPECT_TRUE(message.starts_with("workspace: ")) << message;
  EXPECT_NE(message.find("directory"), std::string::npos) << message;

  o.workspace = "relative/path";
  std::tie(code, message) = code_and_message(o);
  EXPECT_EQ(message, "workspace: must be an absolute path");

  o.workspace = "";
  std::tie(code, message) = code_and_message(o);
  EXPECT_EQ(message, "workspace: must not be empty");

  o = Options(dir);
  o.exclude = {"ok/**", "[a"};
  std::tie(code, message) = code_and_message(o);
  EXPECT_EQ(code, base::StatusCode::kInvalidArgument);
  EXPECT_TRUE(message.starts_with("exclude[1]: ")) << message;

  o = Options(dir);
  o.timeout.retries = 11;
  std::tie(code, message) = code_and_message(o);
  EXPECT_TRUE(message.starts_with("fileTimeoutRetries")) << message;

  o = Options(dir);
  o.max_files = 0;
  std::tie(code, message) = code_and_message(o);
  EXPECT_EQ(message, "maxFiles: must be at least 1");

  o = Options(dir);
  o.llm_provider = "gpt";
  std::tie(code, message) = code_and_message(o);
  EXPECT_EQ(message, "llmProvider: must be one of claude, codex");

  // Nothing was written for rejected options.
  struct stat st {};
  EXPECT_NE(stat(dir.Abs(".librarian").c_str(), &st), 0);
}

TEST(BootstrapTest, LlmProviderIsDisclosedUnavailable) {
  TempDir dir;
  WriteFixture(dir);
  BootstrapOptions o = Options(dir);
  o.llm_provider = "claude";
  Result<BootstrapReport> r = RunBootstrap(o);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(std::find(r->disclosures.begin(), r->disclosures.end(), "provider_unavailable"),
            r->disclosures.end());
}

TEST(BootstrapTest, ASecondConcurrentBootstrapIsRefused) {
  TempDir dir;
  WriteFixture(dir);
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;
  BootstrapOptions o = Options(dir);
  o.attempt_hook_for_testing = [&](std::string_view, std::int64_t) {
    std::unique_lock lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    return Status::Ok();
  };
  Result<BootstrapReport> first = Status::Internal("not run");
  std::thread t([&] { first = RunBootstrap(o); });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return entered; });
  }
  Result<BootstrapReport> second = RunBootstrap(Options(dir));
  EXPECT_EQ(second.status().code(), base::StatusCode::kResourceExhausted);
  EXPECT_EQ(second.status().message(), "workspace: bootstrap already running");
  {
    std::lock_guard lock(mu);
    release = true;
    cv.notify_all();
  }
  t.join();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->success);
  // Released: a later run is accepted.
  EXPECT_TRUE(RunBootstrap(Options(dir)).ok());
}

TEST(BootstrapTest, StorePathOverrideLeavesTheWorkspaceUntouched) {
  TempDir dir, out;
  WriteFixture(dir);
  BootstrapOptions o = Options(dir);
  o.store_path = out.Abs("index.sqlite");
  Result<BootstrapReport> r = RunBootstrap(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->store_path, o.store_path);
  struct stat st {};
  EXPECT_NE(stat(dir.Abs(".librarian").c_str(), &st), 0);
  EXPECT_EQ(stat(o.store_path.c_str(), &st), 0);
}

// ---------------------------------------------------------------------------------------------
// BootstrapSession (decision 0078): what watch mode keeps between re-indexes.

Result<BootstrapReport> RunWith(const BootstrapOptions& options, BootstrapSession& session) {
  base::Cancellation cancel;
  return Bootstrap(options, cancel, base::Progress(), &session);
}

BootstrapOptions OnlyPaths(const TempDir& dir, std::vector<std::string> paths) {
  BootstrapOptions o = Options(dir);
  o.only_paths = std::move(paths);
  return o;
}

std::string StoredLanguage(const TempDir& dir, std::string_view path) {
  auto store = OpenStore(dir);
  if (store == nullptr) return "<no store>";
  auto f = store->GetFile(path);
  if (!f.ok() || !f->has_value()) return "<missing>";
  return (*f)->language;
}

// A ctags wrapper in `bin` that logs each invocation's first argument, so a test counts the
// probes (`--version`, `--list-maps`) apart from the runs that tag files.
std::string CountingCtags(const TempDir& bin) {
  bin.Write("ctags.sh",
            fmt::format("#!/bin/sh\necho \"$1\" >> {}\nexec ctags \"$@\"\n", bin.Abs("ctags.log")));
  chmod(bin.Abs("ctags.sh").c_str(), 0755);
  return bin.Abs("ctags.sh");
}

std::size_t Probes(const TempDir& bin) {
  std::ifstream in(bin.Abs("ctags.log"));
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line == "--version" ? 1 : 0;
  return n;
}

TEST(BootstrapSessionTest, WatchRunsReuseTheStoreAndTheCtagsProbeAndIndexAsWithout) {
  if (system("ctags --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no ctags";
  TempDir dir, other, bin;  // `other` gets the same edits, indexed without a session
  for (const TempDir* d : {&dir, &other}) {
    WriteFixture(*d);
    d->Write("scripts/build.pl", "sub build { return 1; }\n");  // a ctags-routed language
  }
  BootstrapOptions whole = Options(dir);
  whole.ctags_program = CountingCtags(bin);
  BootstrapSession session;
  Result<BootstrapReport> r = RunWith(whole, session);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Result<BootstrapReport> q = RunBootstrap(Options(other));
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_TRUE(session.holds_store());
  EXPECT_EQ(Probes(bin), 1u);
  for (int round = 1; round <= 3; ++round) {
    const std::string perl =
        fmt::format("sub build {{ return {}; }}\nsub more{} {{ return 0; }}\n", round, round);
    const std::string py = fmt::format("def changed_{}():\n    return {}\n", round, round);
    for (const TempDir* d : {&dir, &other}) {
      d->Write("scripts/build.pl", perl);
      d->Write("tools/report.py", py);
      SetMtime(*d, "scripts/build.pl", 1'000'000 + round);
      SetMtime(*d, "tools/report.py", 1'000'000 + round);
    }
    BootstrapOptions o = OnlyPaths(dir, {"scripts/build.pl", "tools/report.py"});
    o.ctags_program = whole.ctags_program;
    r = RunWith(o, session);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->success);
    EXPECT_EQ(r->stats.files_modified, 2u) << "round " << round;
    q = RunBootstrap(OnlyPaths(other, {"scripts/build.pl", "tools/report.py"}));
    ASSERT_TRUE(q.ok()) << q.status().ToString();
  }
  // One probe for the whole run, none for the three watch runs, which ran ctags on build.pl.
  EXPECT_EQ(Probes(bin), 1u);
  // The store holds the same files, symbols and totals as the one indexed without a session.
  EXPECT_EQ(r->stats.functions_indexed, q->stats.functions_indexed);
  EXPECT_EQ(r->stats.edges, q->stats.edges);
  EXPECT_EQ(r->stats.chunks_indexed, q->stats.chunks_indexed);
  auto a = OpenStore(dir);
  auto b = OpenStore(other);
  ASSERT_TRUE(a != nullptr && b != nullptr);
  auto fa = a->ListFiles();
  auto fb = b->ListFiles();
  ASSERT_TRUE(fa.ok() && fb.ok());
  ASSERT_EQ(fa->size(), fb->size());
  for (std::size_t i = 0; i < fa->size(); ++i) {
    EXPECT_EQ((*fa)[i].path, (*fb)[i].path);
    EXPECT_EQ((*fa)[i].sha256, (*fb)[i].sha256) << (*fa)[i].path;
    EXPECT_EQ((*fa)[i].language, (*fb)[i].language) << (*fa)[i].path;
    auto sa = a->FileSymbols((*fa)[i].path);
    auto sb = b->FileSymbols((*fb)[i].path);
    ASSERT_TRUE(sa.ok() && sb.ok());
    ASSERT_EQ(sa->size(), sb->size()) << (*fa)[i].path;
    for (std::size_t k = 0; k < sa->size(); ++k) {
      EXPECT_EQ((*sa)[k].target_id, (*sb)[k].target_id);
    }
  }
  auto perl = a->FileSymbols("scripts/build.pl");
  ASSERT_TRUE(perl.ok());
  EXPECT_TRUE(std::any_of(perl->begin(), perl->end(),
                          [](const store::SymbolRow& s) { return s.name == "more3"; }));
}

TEST(BootstrapSessionTest, AnotherWritersRunInvalidatesTheCachedCppAnswer) {
  TempDir dir;
  dir.Write("api.h", "int api(void);\n");
  dir.Write("main.c", "int main(void) { return 0; }\n");
  BootstrapSession session;
  ASSERT_TRUE(RunWith(Options(dir), session).ok());
  dir.Write("api.h", "int api(void);\nint api2(void);\n");
  // The session learns that the store holds no C++ source: the header is C.
  ASSERT_TRUE(RunWith(OnlyPaths(dir, {"api.h"}), session).ok());
  EXPECT_EQ(StoredLanguage(dir, "api.h"), "c");
  // Another writer (here a bootstrap without the session) adds a C++ source.
  dir.Write("real.cc", "int real() { return 2; }\n");
  ASSERT_TRUE(RunBootstrap(OnlyPaths(dir, {"real.cc"})).ok());
  dir.Write("api.h", "int api(void);\nint api3(void);\n");
  // The session's answer is stale (a newer run than its own): the store is asked again.
  Result<BootstrapReport> r = RunWith(OnlyPaths(dir, {"api.h"}), session);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.files_modified, 1u);
  EXPECT_EQ(StoredLanguage(dir, "api.h"), "cpp");
}

TEST(BootstrapSessionTest, TheSessionsOwnAddsAndRemovalsOfCppSourcesAreSeen) {
  TempDir dir;
  dir.Write("api.h", "int api(void);\n");
  dir.Write("main.c", "int main(void) { return 0; }\n");
  BootstrapSession session;
  ASSERT_TRUE(RunWith(Options(dir), session).ok());
  dir.Write("api.h", "int api(void);\nint api1(void);\n");
  ASSERT_TRUE(RunWith(OnlyPaths(dir, {"api.h"}), session).ok());
  EXPECT_EQ(StoredLanguage(dir, "api.h"), "c");
  // The session adds a C++ source: later headers are C++.
  dir.Write("lib/real.cc", "int real() { return 2; }\n");
  ASSERT_TRUE(RunWith(OnlyPaths(dir, {"lib"}), session).ok());
  dir.Write("api.h", "int api(void);\nint api2(void);\n");
  ASSERT_TRUE(RunWith(OnlyPaths(dir, {"api.h"}), session).ok());
  EXPECT_EQ(StoredLanguage(dir, "api.h"), "cpp");
  // It removes the only one (with its directory): headers are C again.
  std::filesystem::remove_all(dir.Abs("lib"));
  Result<BootstrapReport> r = RunWith(OnlyPaths(dir, {"lib"}), session);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.files_deleted, 1u);
  dir.Write("api.h", "int api(void);\nint api3(void);\n");
  ASSERT_TRUE(RunWith(OnlyPaths(dir, {"api.h"}), session).ok());
  EXPECT_EQ(StoredLanguage(dir, "api.h"), "c");
}

TEST(BootstrapSessionTest, AStoreFileReplacedUnderTheSessionIsOpenedAfresh) {
  TempDir dir;
  WriteFixture(dir);
  BootstrapSession session;
  ASSERT_TRUE(RunWith(Options(dir), session).ok());
  ASSERT_TRUE(session.holds_store());
  // The index is deleted (e.g. by hand) while the session holds the old file open.
  std::filesystem::remove_all(dir.Abs(".librarian"));
  Result<BootstrapReport> r = RunWith(Options(dir), session);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.mode, "full");
  EXPECT_EQ(r->stats.files_added, kFixtureFiles);
  auto files = OpenStore(dir)->ListFiles();
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), kFixtureFiles + 1);  // the binary's skip record too
  // A watch run after it writes into the new file, which a fresh connection reads.
  dir.Write("docs/notes.md", "# Notes\n\nChanged.\n");
  SetMtime(dir, "docs/notes.md", 2'000'000);
  r = RunWith(OnlyPaths(dir, {"docs/notes.md"}), session);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.files_modified, 1u);
  auto notes = OpenStore(dir)->GetFile("docs/notes.md");
  ASSERT_TRUE(notes.ok() && notes->has_value());
  EXPECT_EQ((*notes)->size, std::string("# Notes\n\nChanged.\n").size());
}

}  // namespace
}  // namespace trove::librarian::index
