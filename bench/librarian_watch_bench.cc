// librarian_watch_bench: the cost of watch mode (docs/librarian.md §7.2, issue 23: a re-index of
// one changed file on a 10,000-file workspace within 50 ms), printed beside two peers measured in
// the same run: a `git status`-style stat walk of the workspace (lstat of every file: what any
// re-index that does not know which file changed pays at least) and an ordinary incremental
// bootstrap (whole-tree crawl) after the same one-file change; and a full bootstrap.
//
//   librarian_watch_bench [DIR] [FILES] [ROUNDS]
//
// Generates FILES (default 10,000) C files of four functions each in 100 directories under DIR
// (default: a fresh temporary directory, removed after), bootstraps it, then ROUNDS times
// (default 20) rewrites one file, lets the watcher read the inotify events and re-index the
// batch (watch/watcher.h: Drain + Reindex, the debounce wait itself left out), and prints the
// median and the worst (nearest-rank p95) of those re-indexes, and the ratios of the medians.
#include <fmt/format.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/cancellation.h"
#include "librarian/index/bootstrap.h"
#include "librarian/watch/watcher.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string Source(int file, int round) {
  std::string text = "#include <stdio.h>\n#include \"common.h\"\n\n";
  for (int i = 0; i < 4; ++i) {
    text += fmt::format(
        "/* Computes the checksum of block {} of file {} (revision {}). */\n"
        "int block_checksum_{}_{}(const unsigned char* data, int size) {{\n"
        "  int sum = {};\n  for (int k = 0; k < size; ++k) sum = sum * 31 + data[k];\n"
        "  return helper_{}(sum);\n}}\n\n",
        i, file, round, file, i, round, (file + i) % 7);
  }
  return text;
}

void Write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// The peer: lstat every entry under `root` (iteratively), as `git status` does for its index.
std::size_t StatWalk(const fs::path& root) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    struct stat st {};
    if (lstat(it->path().c_str(), &st) == 0) ++n;
  }
  return n;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  std::size_t rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trove::librarian;
  std::string dir = argc > 1 ? argv[1] : "";
  const int files = argc > 2 ? std::atoi(argv[2]) : 10000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
  bool temporary = false;
  if (dir.empty()) {
    char tmpl[] = "/tmp/librarian_watch_bench.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return 1;
    dir = tmpl;
    temporary = true;
  }
  if (files < 1 || rounds < 1) {
    fmt::print(stderr, "librarian_watch_bench: error: FILES and ROUNDS must be positive\n");
    return 2;
  }
  fs::create_directories(dir);
  for (int f = 0; f < files; ++f) {
    fs::path d = fs::path(dir) / fmt::format("src/m{:02}", f % 100);
    if (f < 100) fs::create_directories(d);
    Write(d / fmt::format("f{:05}.c", f), Source(f, 0));
  }
  index::BootstrapOptions o;
  o.workspace = fs::canonical(dir).string();
  trove::base::Cancellation cancel;
  auto start = Clock::now();
  auto full = index::Bootstrap(o, cancel, trove::base::Progress());
  const double full_ms = Ms(start);
  if (!full.ok() || !full->success) {
    fmt::print(stderr, "librarian_watch_bench: error: bootstrap failed\n");
    return 1;
  }
  fmt::print("workspace: {} files, {} functions\n", full->stats.files_discovered,
             full->stats.functions_indexed);
  fmt::print("full bootstrap:                          {:9.1f} ms\n", full_ms);

  watch::WatchOptions wo;
  wo.bootstrap = o;
  auto watcher = watch::Watcher::Start(wo);
  if (!watcher.ok()) {
    fmt::print(stderr, "librarian_watch_bench: error: {}\n", watcher.status().ToString());
    return 1;
  }
  std::vector<double> reindex, incremental, walk;
  for (int r = 1; r <= rounds; ++r) {
    const int f = (r * 7919) % files;
    const fs::path p = fs::path(dir) / fmt::format("src/m{:02}/f{:05}.c", f % 100, f);
    Write(p, Source(f, r));
    start = Clock::now();
    if (!(*watcher)->Drain(Clock::now()).ok()) return 1;
    watch::Update u = (*watcher)->Reindex(cancel);
    const double ms = Ms(start);
    if (!u.report.ok() || u.report->stats.files_modified != 1) {
      fmt::print(stderr, "librarian_watch_bench: error: the re-index missed the change\n");
      return 1;
    }
    reindex.push_back(ms);
    start = Clock::now();
    if (StatWalk(dir) < static_cast<std::size_t>(files)) return 1;
    walk.push_back(Ms(start));
    // The same change through an ordinary incremental bootstrap (whole-tree crawl).
    Write(p, Source(f, r + rounds));
    start = Clock::now();
    auto inc = index::Bootstrap(o, cancel, trove::base::Progress());
    incremental.push_back(Ms(start));
    if (!inc.ok() || inc->stats.files_modified != 1) return 1;
    (void)(*watcher)->Drain(Clock::now());  // the events of that write
    (void)(*watcher)->Reindex(cancel);      // a no-op batch: the file is indexed already
  }
  fmt::print("watch re-index of one file, median:      {:9.1f} ms  (target <= 50 ms)\n",
             Percentile(reindex, 0.5));
  fmt::print("watch re-index of one file, p95:         {:9.1f} ms\n", Percentile(reindex, 0.95));
  fmt::print("peer: stat walk of the workspace, median: {:9.1f} ms\n", Percentile(walk, 0.5));
  fmt::print("peer: incremental bootstrap (full crawl), median: {:9.1f} ms\n",
             Percentile(incremental, 0.5));
  fmt::print("ratio: watch re-index / stat walk:        {:9.2f}x\n",
             Percentile(reindex, 0.5) / Percentile(walk, 0.5));
  fmt::print("ratio: incremental bootstrap / watch:     {:9.1f}x\n",
             Percentile(incremental, 0.5) / Percentile(reindex, 0.5));
  watcher->reset();
  if (temporary) fs::remove_all(dir);
  return 0;
}
