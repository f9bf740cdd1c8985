// WARDEN diff benchmark (docs/warden.md §9, issue 19's target: two versions of 22,000 defined
// functions diffed in <= 1 s): the time of `diff` next to the ingest time of the same module,
// in the same run. Not a test: bench/run_warden_diff gives the figures of record.
//
//   warden_diff_bench <workdir> <from.wasm> [<to.wasm>] [--runs N] [--repeat K]
//
// Each run ingests once, then times the diff's phases K times (default 5) on the same KB and
// prints medians of wall and CPU time, and a digest of the full report (equal digests: equal
// results, e.g. before and after a speed-up).
//
// With two modules it ingests both and diffs them (a real pair, e.g. sql.js 1.8.0 -> 1.16.0;
// no ground truth: the pairing rate per pass is printed). With one module it ingests it as v1
// and stores a v2 made from v1's records with known edits (every function moved to a shuffled
// index, so every caller's exact hash changes; every 10th modified: its hashes and ids changed,
// an opcode appended, 3 of 32 MinHash values redrawn; every 50th deleted; 1 % new), so that the
// pairs can be scored against the truth: precision and recall are printed too. Only one published
// version of a 22,000-function module is available offline (@ffmpeg/core 0.12.10), hence the
// synthetic v2.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/env.h"
#include "base/hash.h"
#include "warden/diff/diff.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"

namespace {

using namespace trove;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double CpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Wall and CPU time since the previous lap.
class Timer {
 public:
  void Lap(std::vector<double>& wall, std::vector<double>& cpu) {
    const auto now = Clock::now();
    const double c = CpuNow();
    wall.push_back(std::chrono::duration<double>(now - wall_).count());
    if (&cpu != &wall) cpu.push_back(c - cpu_);
    wall_ = Clock::now();
    cpu_ = CpuNow();
  }

 private:
  Clock::time_point wall_ = Clock::now();
  double cpu_ = CpuNow();
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Fail(const Status& s) {
  fmt::print(stderr, "warden_diff_bench: {}\n", s.ToString());
  std::exit(1);
}

std::uint64_t Next(std::uint64_t& x) {
  x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x >> 11;
}

// v2's records from v1's, with the edits of the file comment; truth[v2 index] = v1 index.
std::vector<warden::kb::FunctionRecord> MakeV2(const std::vector<warden::kb::FunctionRecord>& v1,
                                               std::map<std::uint32_t, std::uint32_t>& truth) {
  std::uint64_t seed = 0x5eed;
  std::vector<warden::kb::FunctionRecord> imports, defined;
  for (const auto& r : v1) (r.is_import ? imports : defined).push_back(r);
  std::vector<warden::kb::FunctionRecord> kept;
  std::vector<std::uint32_t> origin;
  std::size_t n = 0;
  for (warden::kb::FunctionRecord r : defined) {
    ++n;
    if (n % 50 == 0) continue;  // deleted
    origin.push_back(r.func_index);
    // A rebuild that moves functions changes the call indices in their callers' bodies: a
    // caller keeps its stable_id (calls are masked) but not its exact hash.
    if (!r.defined_callees.empty()) r.exact_hash = base::Sha256Hex(r.exact_hash + "moved");
    if (n % 10 == 0) {  // modified
      const std::string tag = fmt::format("m{}", n);
      r.exact_hash = base::Sha256Hex(r.exact_hash + tag);
      r.norm_hash = base::Sha256Hex(r.norm_hash + tag).substr(0, 32);
      r.structural_hash = base::Sha256Hex(r.structural_hash + tag).substr(0, 32);
      r.stable_id = "w1:" + r.norm_hash;
      r.id_tier = 0;
      r.opcodes.push_back('\x1a');
      ++r.instruction_count;
      for (int k = 0; k < 3; ++k) r.minhash[Next(seed) % r.minhash.size()] = Next(seed);
    }
    kept.push_back(std::move(r));
  }
  // 1 % new functions: copies of random ones with every fingerprint redrawn.
  const std::size_t added = defined.size() / 100;
  for (std::size_t i = 0; i < added; ++i) {
    warden::kb::FunctionRecord r = defined[Next(seed) % defined.size()];
    const std::string tag = fmt::format("n{}", i);
    r.exact_hash = base::Sha256Hex(tag);
    r.norm_hash = base::Sha256Hex(tag + "b").substr(0, 32);
    r.structural_hash = base::Sha256Hex(tag + "s").substr(0, 32);
    r.stable_id = "w1:" + r.norm_hash;
    r.id_tier = 0;
    r.opcodes = tag;
    for (auto& v : r.minhash) v = Next(seed);
    kept.push_back(std::move(r));
    origin.push_back(0xffffffff);
  }
  // Shuffle the order, then renumber: every index moves, calls follow their callee.
  std::vector<std::size_t> order(kept.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[Next(seed) % i]);
  const auto first = static_cast<std::uint32_t>(imports.size());
  std::unordered_map<std::uint32_t, std::uint32_t> renumber;  // v1 index -> v2 index
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    const std::uint32_t from = origin[order[pos]];
    if (from != 0xffffffff) renumber[from] = first + static_cast<std::uint32_t>(pos);
  }
  std::vector<warden::kb::FunctionRecord> out = imports;
  for (std::size_t pos = 0; pos < order.size(); ++pos) {
    warden::kb::FunctionRecord r = kept[order[pos]];
    r.func_index = first + static_cast<std::uint32_t>(pos);
    std::vector<std::uint32_t> callees;
    for (std::uint32_t c : r.defined_callees) {
      auto it = renumber.find(c);
      if (it != renumber.end()) callees.push_back(it->second);
    }
    r.defined_callees = std::move(callees);
    if (origin[order[pos]] != 0xffffffff) truth[r.func_index] = origin[order[pos]];
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  int runs = 3;
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else {
      args.push_back(a);
    }
  }
  if (args.size() < 2 || args.size() > 3) {
    std::fputs(
        "usage: warden_diff_bench <workdir> <from.wasm> [<to.wasm>] [--runs N] [--repeat K]\n",
        stderr);
    return 2;
  }
  const std::string db = args[0] + "/diff_bench.db";
  base::PosixEnv env;
  for (int run = 1; run <= runs; ++run) {
    for (const char* suffix : {"", "-wal", "-shm"}) unlink((db + suffix).c_str());
    Result<std::unique_ptr<warden::kb::Kb>> kb =
        warden::kb::Kb::Open(env, db, warden::kb::KbOptions{.create_if_missing = true});
    if (!kb.ok()) Fail(kb.status());
    auto t = Clock::now();
    warden::ingest::IngestOptions o1;
    o1.label = "v1";
    Result<warden::ingest::IngestReport> r1 = warden::ingest::IngestFile(env, **kb, args[1], o1);
    if (!r1.ok()) Fail(r1.status());
    const double ingest_s = Since(t);
    std::int64_t v2 = 0;
    std::map<std::uint32_t, std::uint32_t> truth;
    double ingest2_s = 0;
    if (args.size() == 3) {
      t = Clock::now();
      warden::ingest::IngestOptions o2;
      o2.label = "v2";
      Result<warden::ingest::IngestReport> r2 = warden::ingest::IngestFile(env, **kb, args[2], o2);
      if (!r2.ok()) Fail(r2.status());
      ingest2_s = Since(t);
      v2 = r2->store.version_id;
    } else {
      Result<std::vector<warden::kb::FunctionRecord>> records =
          (*kb)->FunctionRecords(r1->store.version_id);
      if (!records.ok()) Fail(records.status());
      std::vector<warden::kb::FunctionRecord> next = MakeV2(*records, truth);
      warden::kb::VersionRecord version;
      version.label = "v2";
      version.wasm_path = args[1];
      version.sha256 = base::Sha256Hex("synthetic v2");
      for (const auto& r : next) ++(r.is_import ? version.imported_count : version.defined_count);
      Result<warden::kb::StoreResult> stored = (*kb)->StoreVersion(version, next);
      if (!stored.ok()) Fail(stored.status());
      v2 = stored->version_id;
    }
    // The diff phases, `repeat` times on the same KB: medians of wall and CPU time (the machine
    // is shared, so CPU time says more than wall time under load).
    std::vector<double> load_w, load_c, pass_w, pass_c, md_w, json_w, diff_w, diff_c;
    std::optional<warden::diff::VersionSide> from, to;
    warden::diff::DiffReport report;
    std::string md, json;
    for (int k = 0; k < repeat; ++k) {
      Timer timer;
      Result<warden::diff::VersionSide> f = warden::diff::LoadSide(**kb, r1->store.version_id);
      Result<warden::diff::VersionSide> g = warden::diff::LoadSide(**kb, v2);
      if (!f.ok() || !g.ok()) Fail(f.ok() ? g.status() : f.status());
      timer.Lap(load_w, load_c);
      report = warden::diff::ComputeDiff(*f, *g);
      timer.Lap(pass_w, pass_c);
      md = warden::diff::RenderChangelog(report);
      timer.Lap(md_w, md_w);
      json = warden::diff::StoredReportJson(report);
      timer.Lap(json_w, json_w);
      Result<warden::diff::DiffRun> whole = warden::diff::RunDiff(**kb, r1->store.version_id, v2);
      if (!whole.ok()) Fail(whole.status());
      timer.Lap(diff_w, diff_c);
      from = std::move(*f);
      to = std::move(*g);
    }
    const double diff_s = Median(diff_w);
    const double load_s = Median(load_w), compute_s = Median(pass_w);
    const double changelog_s = Median(md_w), json_s = Median(json_w);
    // Identical results before and after a change: the digest of the full report.
    const std::uint64_t digest = base::XxHash3_64(warden::diff::ReportJson(report, true));

    fmt::print("run {}: {} defined -> {} defined\n", run, from->functions.size(),
               to->functions.size());
    fmt::print("  ingest v1        {:.3f} s{}\n", ingest_s,
               args.size() == 3 ? fmt::format("   ingest v2 {:.3f} s", ingest2_s) : "");
    fmt::print(
        "  diff (warden diff: load, passes, changelog, store) {:.3f} s  = {:.2f}x ingest; CPU "
        "{:.3f} s (median of {})\n",
        diff_s, diff_s / ingest_s, Median(diff_c), repeat);
    fmt::print("    CPU: load both {:.3f} s, passes {:.3f} s; report digest {:016x}\n",
               Median(load_c), Median(pass_c), digest);
    fmt::print(
        "    load both {:.3f} s, passes {:.3f} s, changelog {:.3f} s ({} bytes), stored report "
        "JSON "
        "{:.3f} s ({} bytes)\n",
        load_s, compute_s, changelog_s, md.size(), json_s, json.size());
    std::string passes;
    for (std::size_t p = 1; p < warden::diff::kPassCount; ++p) {
      passes += fmt::format(" {} {}", warden::diff::PassName(static_cast<warden::diff::Pass>(p)),
                            report.pass_pairs[p]);
    }
    std::int64_t pairs = 0;
    for (std::size_t p = 1; p < warden::diff::kPassCount; ++p) pairs += report.pass_pairs[p];
    fmt::print("  pairs {} ({:.1f} % of v2):{}\n", pairs,
               100.0 * static_cast<double>(pairs) / static_cast<double>(to->functions.size()),
               passes);
    if (!truth.empty()) {
      std::array<std::int64_t, warden::diff::kPassCount> right{}, all{};
      for (const warden::diff::Change& c : report.changes) {
        if (!c.from_index || !c.to_index) continue;
        const auto p = static_cast<std::size_t>(c.pass);
        ++all[p];
        auto it = truth.find(*c.to_index);
        if (it != truth.end() && it->second == *c.from_index) ++right[p];
      }
      std::int64_t r_all = 0, a_all = 0;
      std::string per;
      for (std::size_t p = 1; p < warden::diff::kPassCount; ++p) {
        r_all += right[p];
        a_all += all[p];
        if (all[p] > 0) {
          per += fmt::format(" {} {:.2f} %",
                             warden::diff::PassName(static_cast<warden::diff::Pass>(p)),
                             100.0 * static_cast<double>(right[p]) / static_cast<double>(all[p]));
        }
      }
      fmt::print(
          "  truth: precision {:.2f} %, recall {:.2f} % of {} functions in both;"
          " precision per pass:{}\n",
          a_all ? 100.0 * static_cast<double>(r_all) / static_cast<double>(a_all) : 0.0,
          100.0 * static_cast<double>(r_all) / static_cast<double>(truth.size()), truth.size(),
          per);
    }
  }
  return 0;
}
