// librarian_bootstrap_bench: the two sides of the bootstrap benchmark (issue 6 §Benchmark), each
// a whole command for bench/process_bench (bench/run_librarian_bootstrap drives them):
//
//   librarian_bootstrap_bench bootstrap TREE DB [WORKERS]
//       Librarian's full bootstrap of TREE into the fresh store DB: crawl with SHA-256, tree-sitter
//       (or ctags, or text) extraction on WORKERS threads (default: both cores), symbols,
//       imports, calls, function-level chunks, FTS5 over chunks and paths.
//   librarian_bootstrap_bench baseline TREE DB
//       The peer: `ctags -R --output-format=json -f - TREE`, its tags inserted into a table,
//       plus FTS5 insertion (path, body) of the files the bootstrap would index (regular files,
//       symlinks not followed, at most 1 MiB, no NUL byte in the first 8 KiB), in the same run
//       and the same SQLite settings (WAL, synchronous=NORMAL, one transaction per side).
//
//   librarian_bootstrap_bench learn TREE DB
//       Only the workspace vectors' learning (semvec::LearnFromStore: read, SVD, fold-in) over
//       the store DB a bootstrap of TREE left; the bootstrap runs it beside the stored packs.
//
// Each prints one line: `<side> files=<n> bytes=<n> tags_or_symbols=<n> seconds=<s>` (learn:
// `learn functions=<n> words=<n> seconds=<s>`).
#include <fmt/format.h>
#include <stdio.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/cancellation.h"
#include "base/sqlite.h"
#include "librarian/index/bootstrap.h"
#include "librarian/semvec/semvec.h"

namespace {

using trove::Result;
using trove::Status;
namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{1} << 20;
constexpr std::size_t kBinaryProbe = 8192;

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int RunBootstrap(const std::string& tree, const std::string& db, std::size_t workers) {
  const auto start = std::chrono::steady_clock::now();
  trove::librarian::index::BootstrapOptions o;
  o.workspace = tree;
  o.store_path = db;
  o.workers = workers;
  o.force = true;
  trove::base::Cancellation cancel;
  Result<trove::librarian::index::BootstrapReport> r =
      trove::librarian::index::Bootstrap(o, cancel, trove::base::Progress());
  if (!r.ok()) {
    fmt::print(stderr, "bootstrap: {}\n", r.status().ToString());
    return 1;
  }
  const auto& s = r->stats;
  fmt::print(
      "bootstrap files={} bytes={} tags_or_symbols={} seconds={:.3f} chunks={} edges={} "
      "timed_out={} failed={} extractors=",
      s.files_extracted, s.bytes_extracted,
      s.functions_indexed + s.types_indexed + s.modules_indexed, Since(start), s.chunks_indexed,
      s.edges, s.files_timed_out, s.files_failed);
  for (const auto& [name, n] : s.extractors) fmt::print("{}:{},", name, n);
  fmt::print(" phases_ms=");
  for (const auto& [name, ms] : r->phase_ms) fmt::print("{}:{},", name, ms);
  fmt::print("\n");
  return r->success ? 0 : 1;
}

Status Baseline(const std::string& tree, const std::string& db_path, std::uint64_t* files,
                std::uint64_t* bytes, std::uint64_t* tags) {
  ASSIGN_OR_RETURN(std::unique_ptr<trove::base::Database> db, trove::base::Database::Open(db_path));
  RETURN_IF_ERROR(db->Exec(
      "CREATE TABLE tags(name TEXT, path TEXT, line INTEGER, kind TEXT, scope TEXT);"
      "CREATE VIRTUAL TABLE docs USING fts5(path, body, tokenize='unicode61 remove_diacritics "
      "2')"));
  ASSIGN_OR_RETURN(trove::base::Transaction tx, db->Begin());
  {
    // ctags, streamed: each JSON line becomes a row.
    std::string cmd = fmt::format("ctags -R --output-format=json -f - '{}'", tree);
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return Status::Io("baseline: cannot run ctags");
    ASSIGN_OR_RETURN(trove::base::Statement ins,
                     db->Prepare("INSERT INTO tags VALUES (?1, ?2, ?3, ?4, ?5)"));
    char* line = nullptr;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, pipe)) > 0) {
      nlohmann::json j = nlohmann::json::parse(std::string_view(line, static_cast<size_t>(n)),
                                               nullptr, /*allow_exceptions=*/false);
      if (!j.is_object() || j.value("_type", "") != "tag") continue;
      ins.Reset();
      RETURN_IF_ERROR(ins.Bind(1, std::string_view(j.value("name", ""))));
      RETURN_IF_ERROR(ins.Bind(2, std::string_view(j.value("path", ""))));
      RETURN_IF_ERROR(ins.Bind(3, j.value("line", std::int64_t{0})));
      RETURN_IF_ERROR(ins.Bind(4, std::string_view(j.value("kind", ""))));
      RETURN_IF_ERROR(ins.Bind(5, std::string_view(j.value("scope", ""))));
      RETURN_IF_ERROR(ins.Step());
      ++*tags;
    }
    free(line);
    if (pclose(pipe) != 0) return Status::Io("baseline: ctags failed");
  }
  {
    ASSIGN_OR_RETURN(trove::base::Statement ins,
                     db->Prepare("INSERT INTO docs(path, body) VALUES (?1, ?2)"));
    std::vector<fs::path> paths;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(
             tree, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_symlink() || !it->is_regular_file()) continue;
      paths.push_back(it->path());
    }
    std::sort(paths.begin(), paths.end());
    for (const fs::path& p : paths) {
      std::error_code size_ec;
      std::uintmax_t size = fs::file_size(p, size_ec);
      if (size_ec || size > kMaxFileBytes) continue;
      std::ifstream in(p, std::ios::binary);
      std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (body.substr(0, kBinaryProbe).find('\0') != std::string::npos) continue;
      ins.Reset();
      RETURN_IF_ERROR(ins.Bind(1, std::string_view(p.native())));
      RETURN_IF_ERROR(ins.Bind(2, std::string_view(body)));
      RETURN_IF_ERROR(ins.Step());
      ++*files;
      *bytes += body.size();
    }
  }
  return tx.Commit();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    fmt::print(stderr,
               "usage: librarian_bootstrap_bench bootstrap TREE DB [WORKERS]\n"
               "       librarian_bootstrap_bench baseline TREE DB\n"
               "       librarian_bootstrap_bench learn TREE DB\n");
    return 2;
  }
  std::string side = argv[1], tree = argv[2], db = argv[3];
  if (side == "bootstrap") {
    std::size_t workers = argc > 4 ? static_cast<std::size_t>(std::atoi(argv[4])) : 0;
    return RunBootstrap(tree, db, workers);
  }
  if (side == "baseline") {
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t files = 0, bytes = 0, tags = 0;
    Status st = Baseline(tree, db, &files, &bytes, &tags);
    if (!st.ok()) {
      fmt::print(stderr, "baseline: {}\n", st.ToString());
      return 1;
    }
    fmt::print("baseline files={} bytes={} tags_or_symbols={} seconds={:.3f}\n", files, bytes, tags,
               Since(start));
    return 0;
  }
  if (side == "learn") {
    Result<std::unique_ptr<trove::base::Database>> opened = trove::base::Database::Open(db);
    if (!opened.ok()) {
      fmt::print(stderr, "learn: {}\n", opened.status().ToString());
      return 1;
    }
    const auto start = std::chrono::steady_clock::now();
    Result<trove::librarian::semvec::Learned> learned =
        trove::librarian::semvec::LearnFromStore(**opened, trove::librarian::semvec::Options{});
    if (!learned.ok()) {
      fmt::print(stderr, "learn: {}\n", learned.status().ToString());
      return 1;
    }
    fmt::print("learn functions={} words={} seconds={:.3f}\n", learned->stats.functions,
               learned->stats.words, Since(start));
    return 0;
  }
  fmt::print(stderr, "librarian_bootstrap_bench: unknown side {}\n", side);
  return 2;
}
