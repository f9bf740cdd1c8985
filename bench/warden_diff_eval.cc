// WARDEN diff evaluation (docs/warden.md §9.3): pairs of modules built from source with names,
// whose names are the ground truth and which the matcher never sees. For each pair the
// stripped twins (wasm-strip: no name section, byte-identical code) are ingested and diffed;
// the named twins are ingested apart for the truth: two functions are the same function when
// their name-section names are equal (names that occur twice on one side are left out).
// Precision and recall are printed per pass, the fuzzy pass apart, for:
//   --corpus DIR    scripts/build_diff_corpus's SQLite builds: 3.48.0 -> 3.49.2 and 3.46.0 ->
//                   3.49.2 at -O2 (released versions), 3.49.2 -O2 -> -O3 and 3.48.0 -O2 ->
//                   3.49.2 -O3 (cross-optimisation)
//   --fixtures DIR  the committed fixtures (testdata/warden/fixtures): cross-optimisation pairs
//                   of the same sources; with --floor the exit status says whether the quality
//                   floor holds (ctest warden_diff_eval_fixtures)
// Target (issue 19): >= 90 % of the functions present in both versions paired at >= 99 %
// precision.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "warden/diff/diff.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"

namespace {

using namespace trove;
namespace fs = std::filesystem;
namespace diff = warden::diff;

struct PairSpec {
  std::string label;
  std::string from_named, from_stripped, to_named, to_stripped;
};

// Per pass: pairs made, pairs whose truth is known (a unique name on both sides), and those
// whose names agree.
struct PassScore {
  std::int64_t pairs = 0;
  std::int64_t judged = 0;
  std::int64_t correct = 0;
};

struct PairResult {
  std::size_t from_defined = 0, to_defined = 0;
  std::int64_t in_both = 0;        // unique names present on both sides
  std::int64_t code_mismatch = 0;  // named/stripped twins whose code hashes differ (should be 0)
  std::array<PassScore, diff::kPassCount> passes{};
  std::vector<std::string> wrong;  // "pass: from name -> to name", in `to` index order
  // Functions in both versions that the diff left unpaired (or paired wrongly), by the smaller
  // side's instruction count: < 5 (no keyed pass but exact and stable_id), 5-9 (no fuzzy),
  // >= 10.
  std::array<std::int64_t, 3> missed{};
  PassScore Total() const {
    PassScore t;
    for (std::size_t p = 1; p < diff::kPassCount; ++p) {
      t.pairs += passes[p].pairs;
      t.judged += passes[p].judged;
      t.correct += passes[p].correct;
    }
    return t;
  }
  double Precision() const {
    const PassScore t = Total();
    return t.judged ? static_cast<double>(t.correct) / static_cast<double>(t.judged) : 1.0;
  }
  double Recall() const {
    return in_both ? static_cast<double>(Total().correct) / static_cast<double>(in_both) : 0.0;
  }
};

std::string Pct(double v) { return fmt::format("{:.2f} %", 100.0 * v); }

Result<std::int64_t> Ingest(base::Env& env, warden::kb::Kb& kb, const std::string& path,
                            const std::string& label) {
  warden::ingest::IngestOptions o;
  o.label = label;
  o.seed = false;  // the diff reads fingerprints only; no names enter the diff KB at all
  ASSIGN_OR_RETURN(warden::ingest::IngestReport r, warden::ingest::IngestFile(env, kb, path, o));
  return r.store.version_id;
}

// func_index -> name-section name of the named twin; names that occur twice are dropped.
Result<std::map<std::uint32_t, std::string>> Truth(warden::kb::Kb& kb, std::int64_t version,
                                                   const diff::VersionSide& stripped,
                                                   std::int64_t& code_mismatch) {
  ASSIGN_OR_RETURN(std::vector<warden::kb::FunctionRecord> records, kb.FunctionRecords(version));
  std::map<std::string, int> uses;
  for (const auto& r : records) {
    if (!r.is_import && r.raw_name) ++uses[*r.raw_name];
  }
  std::map<std::uint32_t, std::string> out;
  std::map<std::uint32_t, const warden::kb::FunctionRecord*> by_index;
  for (const auto& r : stripped.functions) by_index[r.func_index] = &r;
  for (const auto& r : records) {
    if (r.is_import) continue;
    auto it = by_index.find(r.func_index);
    if (it == by_index.end() || it->second->exact_hash != r.exact_hash) ++code_mismatch;
    if (r.raw_name && uses[*r.raw_name] == 1) out[r.func_index] = *r.raw_name;
  }
  return out;
}

Result<PairResult> Evaluate(base::Env& env, const fs::path& work, const PairSpec& spec) {
  fs::remove_all(work);
  fs::create_directories(work);
  const warden::kb::KbOptions create{.create_if_missing = true};
  ASSIGN_OR_RETURN(std::unique_ptr<warden::kb::Kb> diff_kb,
                   warden::kb::Kb::Open(env, (work / "diff.db").string(), create));
  ASSIGN_OR_RETURN(std::unique_ptr<warden::kb::Kb> truth_kb,
                   warden::kb::Kb::Open(env, (work / "truth.db").string(), create));
  ASSIGN_OR_RETURN(std::int64_t from, Ingest(env, *diff_kb, spec.from_stripped, "from"));
  ASSIGN_OR_RETURN(std::int64_t to, Ingest(env, *diff_kb, spec.to_stripped, "to"));
  ASSIGN_OR_RETURN(std::int64_t from_named, Ingest(env, *truth_kb, spec.from_named, "from"));
  ASSIGN_OR_RETURN(std::int64_t to_named, Ingest(env, *truth_kb, spec.to_named, "to"));
  ASSIGN_OR_RETURN(diff::VersionSide from_side, diff::LoadSide(*diff_kb, from));
  ASSIGN_OR_RETURN(diff::VersionSide to_side, diff::LoadSide(*diff_kb, to));
  PairResult result;
  result.from_defined = from_side.functions.size();
  result.to_defined = to_side.functions.size();
  ASSIGN_OR_RETURN(auto from_names, Truth(*truth_kb, from_named, from_side, result.code_mismatch));
  ASSIGN_OR_RETURN(auto to_names, Truth(*truth_kb, to_named, to_side, result.code_mismatch));
  std::map<std::string, int> present;
  for (const auto& [index, name] : from_names) ++present[name];
  for (const auto& [index, name] : to_names) {
    if (present.count(name)) ++result.in_both;
  }
  const diff::DiffReport report = diff::ComputeDiff(from_side, to_side);
  std::map<std::string, std::uint32_t> from_size, to_size;
  for (const auto& r : from_side.functions) {
    if (auto it = from_names.find(r.func_index); it != from_names.end()) {
      from_size[it->second] = r.instruction_count;
    }
  }
  for (const auto& r : to_side.functions) {
    if (auto it = to_names.find(r.func_index); it != to_names.end()) {
      to_size[it->second] = r.instruction_count;
    }
  }
  std::map<std::string, bool> found;  // names in both -> paired correctly
  for (const diff::Change& c : report.changes) {
    if (!c.from_index || !c.to_index) continue;
    PassScore& s = result.passes[static_cast<std::size_t>(c.pass)];
    ++s.pairs;
    auto f = from_names.find(*c.from_index);
    auto t = to_names.find(*c.to_index);
    if (f == from_names.end() || t == to_names.end()) continue;
    ++s.judged;
    if (f->second == t->second) {
      ++s.correct;
      found[f->second] = true;
    } else {
      result.wrong.push_back(fmt::format("{} ({:.3f}): {} [{}] -> {} [{}]", diff::PassName(c.pass),
                                         c.score, f->second, *c.from_index, t->second,
                                         *c.to_index));
    }
  }
  for (const auto& [name, size] : to_size) {
    auto f = from_size.find(name);
    if (f == from_size.end() || found.count(name)) continue;
    const std::uint32_t n = std::min(size, f->second);
    ++result.missed[n < 5 ? 0 : n < 10 ? 1 : 2];
  }
  return result;
}

void Print(const PairSpec& spec, const PairResult& r) {
  fmt::print("== {}: {} -> {} defined; {} functions in both (equal unique names)\n", spec.label,
             r.from_defined, r.to_defined, r.in_both);
  if (r.code_mismatch > 0) {
    fmt::print("  warning: {} named/stripped twins differ in code\n", r.code_mismatch);
  }
  fmt::print("  {:<11} {:>6} {:>7} {:>8} {:>10} {:>8}\n", "pass", "pairs", "judged", "correct",
             "precision", "recall");
  for (std::size_t p = 1; p < diff::kPassCount; ++p) {
    const PassScore& s = r.passes[p];
    fmt::print("  {:<11} {:>6} {:>7} {:>8} {:>10} {:>8}\n",
               diff::PassName(static_cast<diff::Pass>(p)), s.pairs, s.judged, s.correct,
               s.judged ? Pct(static_cast<double>(s.correct) / static_cast<double>(s.judged))
                        : std::string("-"),
               r.in_both ? Pct(static_cast<double>(s.correct) / static_cast<double>(r.in_both))
                         : std::string("-"));
  }
  const PassScore t = r.Total();
  fmt::print("  {:<11} {:>6} {:>7} {:>8} {:>10} {:>8}\n", "all", t.pairs, t.judged, t.correct,
             Pct(r.Precision()), Pct(r.Recall()));
  const double fuzzy_judged = static_cast<double>(r.passes[5].judged);
  fmt::print(
      "  without fuzzy: precision {}, recall {}; fuzzy alone: precision {}\n",
      Pct(t.judged - r.passes[5].judged ? static_cast<double>(t.correct - r.passes[5].correct) /
                                              static_cast<double>(t.judged - r.passes[5].judged)
                                        : 1.0),
      Pct(r.in_both ? static_cast<double>(t.correct - r.passes[5].correct) /
                          static_cast<double>(r.in_both)
                    : 0.0),
      fuzzy_judged ? Pct(static_cast<double>(r.passes[5].correct) / fuzzy_judged)
                   : std::string("-"));
  fmt::print(
      "  in both but not paired correctly: {} under 5 instructions, {} of 5-9, {} of 10 or more\n",
      r.missed[0], r.missed[1], r.missed[2]);
  for (std::size_t i = 0; i < r.wrong.size() && i < 12; ++i) {
    fmt::print("  wrong pair: {}\n", r.wrong[i]);
  }
  if (r.wrong.size() > 12) fmt::print("  ... {} wrong pairs in all\n", r.wrong.size());
  fmt::print("  target (>= 90 % of functions in both paired correctly, >= 99 % precision): {}\n",
             r.Recall() >= 0.90 && r.Precision() >= 0.99 ? "met" : "not met");
}

int Run(const std::vector<PairSpec>& pairs,
        const std::map<std::string, std::pair<double, double>>& floors) {
  base::PosixEnv env;
  const fs::path work = fs::temp_directory_path() / fmt::format("warden_diff_eval.{}", getpid());
  int status = 0;
  for (const PairSpec& spec : pairs) {
    for (const std::string* p :
         {&spec.from_named, &spec.from_stripped, &spec.to_named, &spec.to_stripped}) {
      if (!fs::exists(*p)) {
        fmt::print(stderr, "warden_diff_eval: {} is missing\n", *p);
        fs::remove_all(work);
        return 2;
      }
    }
    Result<PairResult> r = Evaluate(env, work, spec);
    if (!r.ok()) {
      fmt::print(stderr, "warden_diff_eval: {}: {}\n", spec.label, r.status().ToString());
      fs::remove_all(work);
      return 1;
    }
    Print(spec, *r);
    auto floor = floors.find(spec.label);
    if (floor != floors.end()) {
      const auto [min_precision, min_recall] = floor->second;
      const bool ok =
          r->Precision() >= min_precision && r->Recall() >= min_recall && r->code_mismatch == 0;
      fmt::print("  floor (precision >= {}, recall >= {}): {}\n", Pct(min_precision),
                 Pct(min_recall), ok ? "holds" : "BROKEN");
      if (!ok) status = 1;
    }
  }
  fs::remove_all(work);
  return status;
}

PairSpec Twins(const fs::path& dir, const std::string& label, const std::string& from,
               const std::string& to) {
  return {label, (dir / (from + "-named.wasm")).string(), (dir / (from + ".wasm")).string(),
          (dir / (to + "-named.wasm")).string(), (dir / (to + ".wasm")).string()};
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<std::string> corpus, fixtures;
  bool floor = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--corpus" && i + 1 < argc) {
      corpus = argv[++i];
    } else if (a == "--fixtures" && i + 1 < argc) {
      fixtures = argv[++i];
    } else if (a == "--floor") {
      floor = true;
    } else {
      fixtures.reset();
      corpus.reset();
      break;
    }
  }
  if (corpus) {
    const fs::path d = *corpus;
    std::vector<PairSpec> pairs = {
        Twins(d, "sqlite 3.48.0 -> 3.49.2 (-O2)", "sqlite-3.48.0-O2", "sqlite-3.49.2-O2"),
        Twins(d, "sqlite 3.46.0 -> 3.49.2 (-O2)", "sqlite-3.46.0-O2", "sqlite-3.49.2-O2"),
        Twins(d, "sqlite 3.49.2 -O2 -> -O3", "sqlite-3.49.2-O2", "sqlite-3.49.2-O3"),
        Twins(d, "sqlite 3.48.0 -O2 -> 3.49.2 -O3", "sqlite-3.48.0-O2", "sqlite-3.49.2-O3")};
    // A corpus built before 3.46.0 joined it lacks that pair: skipped, said so.
    std::erase_if(pairs, [](const PairSpec& p) {
      if (fs::exists(p.from_stripped)) return false;
      fmt::print("(skipped {}: {} is missing)\n", p.label, p.from_stripped);
      return true;
    });
    return Run(pairs, {});
  }
  if (fixtures) {
    const fs::path d = *fixtures;
    std::map<std::string, std::pair<double, double>> floors;
    // The fixtures' unnamed modules are separate builds whose function order differs from the
    // named ones, so the named modules are diffed themselves: ingested without seeding, their
    // names never reach the KB's symbols, and the passes read fingerprints only.
    auto named = [&d](const std::string& label, const std::string& from, const std::string& to) {
      const std::string f = (d / (from + "-named.wasm")).string();
      const std::string t = (d / (to + "-named.wasm")).string();
      return PairSpec{label, f, f, t, t};
    };
    const std::vector<PairSpec> pairs = {
        named("app -O2 -> -Oz", "app-O2", "app-Oz"),
        named("app -O0 -> -O2", "app-O0", "app-O2"),
        named("threads -O2 -> -Oz", "threads-O2", "threads-Oz"),
    };
    if (floor) {
      // Measured values less a margin (docs/decisions/0072-warden-diff-eval-speed.md).
      floors = {{pairs[0].label, {0.95, 0.50}},
                {pairs[1].label, {0.85, 0.12}},
                {pairs[2].label, {0.99, 0.60}}};
    }
    return Run(pairs, floors);
  }
  std::fputs("usage: warden_diff_eval --corpus DIR | --fixtures DIR [--floor]\n", stderr);
  return 2;
}
