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
//   --published FROM TO   a published pair without names (docs/warden.md §9.3, second bullet;
//                   default: sql.js 1.8.0 -> 1.16.0 from node_modules/ or
//                   $TROVE_REAL_MODULES_DIR): pairing rate per pass, and the "silver" check:
//                   a pair is silver when its normalised key (norm_hash) is unique on both
//                   sides and equal, and type signature, import set (call-outs) and referenced
//                   strings agree; printed: how the diff treats the silver pairs, and per pass
//                   the share of pairs that agree on signature, imports and strings (the fuzzy
//                   pairs' agreement rate). No hand audit is made here.
//   --explain FROM TO PAIR...   for each FROM_INDEX:TO_INDEX pair of two modules: its class in
//                   the diff, the similarity components (docs/warden.md §5.4), how many of the
//                   fuzzy pass's LSH bands the two share (a candidate shares one), whether the
//                   diff's fuzzy threshold accepts the score, and each side's best-scoring
//                   unpaired partner of equal signature (the fuzzy pass pairs mutual bests only).
//                   Used to explain the release-notes check's misses (decision 0087).
//   --no-robust     with any of the above: the diff without its toolchain-robust candidates
//                   (decision 0088), for a before/after in one session.
// Target (issue 19): >= 90 % of the functions present in both versions paired at >= 99 %
// precision.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "warden/diff/diff.h"
#include "warden/identity/similarity.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"

namespace {

// The diff's options (--no-robust clears robust_candidates).
trove::warden::diff::DiffOptions g_options;

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
  const diff::DiffReport report = diff::ComputeDiff(from_side, to_side, g_options);
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

// The published pair check (see the file comment).
int Published(const std::string& from_path, const std::string& to_path) {
  base::PosixEnv env;
  for (const std::string& p : {from_path, to_path}) {
    if (!fs::exists(p)) {
      fmt::print(
          "(skipped the published pair: {} is missing; npm pack it and set "
          "TROVE_REAL_MODULES_DIR, or install it under node_modules/)\n",
          p);
      return 0;
    }
  }
  const fs::path work = fs::temp_directory_path() / fmt::format("warden_diff_pub.{}", getpid());
  fs::remove_all(work);
  fs::create_directories(work);
  auto run = [&]() -> Status {
    ASSIGN_OR_RETURN(std::unique_ptr<warden::kb::Kb> kb,
                     warden::kb::Kb::Open(env, (work / "diff.db").string(),
                                          warden::kb::KbOptions{.create_if_missing = true}));
    ASSIGN_OR_RETURN(std::int64_t from, Ingest(env, *kb, from_path, "from"));
    ASSIGN_OR_RETURN(std::int64_t to, Ingest(env, *kb, to_path, "to"));
    ASSIGN_OR_RETURN(diff::VersionSide f, diff::LoadSide(*kb, from));
    ASSIGN_OR_RETURN(diff::VersionSide t, diff::LoadSide(*kb, to));
    const diff::DiffReport report = diff::ComputeDiff(f, t, g_options);
    std::map<std::string, int> from_keys, to_keys;
    for (const auto& r : f.functions) ++from_keys[r.norm_hash];
    for (const auto& r : t.functions) ++to_keys[r.norm_hash];
    std::map<std::uint32_t, const warden::kb::FunctionRecord*> by_from, by_to;
    for (const auto& r : f.functions) by_from[r.func_index] = &r;
    for (const auto& r : t.functions) by_to[r.func_index] = &r;
    auto sorted = [](std::vector<std::string> v) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      return v;
    };
    // Signature, import set and strings agree (the silver rule without its key).
    auto agree = [&](const warden::kb::FunctionRecord& a, const warden::kb::FunctionRecord& b) {
      return a.type_signature == b.type_signature && a.call_outs == b.call_outs &&
             sorted(a.referenced_strings) == sorted(b.referenced_strings);
    };
    // Silver pairs: from index -> to index.
    std::map<std::string, std::uint32_t> to_by_key;
    for (const auto& r : t.functions) {
      if (to_keys[r.norm_hash] == 1) to_by_key[r.norm_hash] = r.func_index;
    }
    std::map<std::uint32_t, std::uint32_t> silver, silver_back;
    for (const auto& r : f.functions) {
      if (from_keys[r.norm_hash] != 1) continue;
      auto it = to_by_key.find(r.norm_hash);
      if (it == to_by_key.end() || !agree(r, *by_to[it->second])) continue;
      silver[r.func_index] = it->second;
      silver_back[it->second] = r.func_index;
    }
    struct Row {
      std::int64_t pairs = 0, consistent = 0, with_strings = 0, with_strings_consistent = 0;
      std::int64_t silver_same = 0, silver_other = 0;
    };
    std::array<Row, diff::kPassCount> rows{};
    std::int64_t silver_paired_same = 0, silver_unpaired = 0, silver_other = 0;
    std::map<std::uint32_t, std::uint32_t> paired;  // from -> to
    for (const diff::Change& c : report.changes) {
      if (c.from_index && c.to_index) paired[*c.from_index] = *c.to_index;
      if (!c.from_index || !c.to_index) continue;
      Row& row = rows[static_cast<std::size_t>(c.pass)];
      const auto& a = *by_from[*c.from_index];
      const auto& b = *by_to[*c.to_index];
      ++row.pairs;
      const bool ok = agree(a, b);
      row.consistent += ok ? 1 : 0;
      if (!a.referenced_strings.empty() || !b.referenced_strings.empty()) {
        ++row.with_strings;
        row.with_strings_consistent += ok ? 1 : 0;
      }
      auto s1 = silver.find(*c.from_index);
      auto s2 = silver_back.find(*c.to_index);
      if (s1 != silver.end() && s1->second == *c.to_index) {
        ++row.silver_same;
      } else if (s1 != silver.end() || s2 != silver_back.end()) {
        ++row.silver_other;
      }
    }
    for (const auto& [a, b] : silver) {
      auto it = paired.find(a);
      if (it == paired.end()) {
        ++silver_unpaired;
      } else if (it->second == b) {
        ++silver_paired_same;
      } else {
        ++silver_other;
      }
    }
    std::int64_t total = 0;
    for (std::size_t p = 1; p < diff::kPassCount; ++p) total += rows[p].pairs;
    fmt::print(
        "== published pair {} -> {}: {} -> {} defined, {} pairs ({:.1f} % of the new "
        "version's functions)\n",
        fs::path(from_path).filename().string(), fs::path(to_path).filename().string(),
        f.functions.size(), t.functions.size(), total,
        100.0 * static_cast<double>(total) / static_cast<double>(t.functions.size()));
    fmt::print("  {:<11} {:>6} {:>9} {:>11} {:>14} {:>13} {:>12}\n", "pass", "pairs", "rate",
               "consistent", "with strings", "silver same", "silver other");
    for (std::size_t p = 1; p < diff::kPassCount; ++p) {
      const Row& r = rows[p];
      auto pct = [](std::int64_t a, std::int64_t b) {
        return b ? Pct(static_cast<double>(a) / static_cast<double>(b)) : std::string("-");
      };
      fmt::print(
          "  {:<11} {:>6} {:>9} {:>11} {:>14} {:>13} {:>12}\n",
          diff::PassName(static_cast<diff::Pass>(p)), r.pairs,
          pct(r.pairs, static_cast<std::int64_t>(t.functions.size())), pct(r.consistent, r.pairs),
          fmt::format("{} ({})", pct(r.with_strings_consistent, r.with_strings), r.with_strings),
          r.silver_same, r.silver_other);
    }
    const Row& fz = rows[static_cast<std::size_t>(diff::Pass::kFuzzy)];
    fmt::print("  silver pairs {}: paired the same way {}, paired otherwise {}, unpaired {}\n",
               silver.size(), silver_paired_same, silver_other, silver_unpaired);
    fmt::print(
        "  fuzzy agreement (signature, imports, strings agree): {} of {} ({}); with "
        "strings on a side: {} of {}\n",
        fz.consistent, fz.pairs,
        fz.pairs ? Pct(static_cast<double>(fz.consistent) / static_cast<double>(fz.pairs))
                 : std::string("-"),
        fz.with_strings_consistent, fz.with_strings);
    return Status::Ok();
  };
  const Status s = run();
  fs::remove_all(work);
  if (!s.ok()) {
    fmt::print(stderr, "warden_diff_eval: published pair: {}\n", s.ToString());
    return 1;
  }
  return 0;
}

// The --explain check (see the file comment).
template <std::size_t N>
void FromHex(std::string_view hex, std::array<std::uint8_t, N>& out) {
  auto nibble = [](char c) {
    return static_cast<std::uint8_t>(c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0');
  };
  out.fill(0);
  for (std::size_t i = 0; i < N && 2 * i + 1 < hex.size(); ++i) {
    out[i] = static_cast<std::uint8_t>(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
  }
}

int Explain(const std::string& from_path, const std::string& to_path,
            const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs) {
  base::PosixEnv env;
  const fs::path work = fs::temp_directory_path() / fmt::format("warden_diff_explain.{}", getpid());
  fs::remove_all(work);
  fs::create_directories(work);
  auto run = [&]() -> Status {
    ASSIGN_OR_RETURN(std::unique_ptr<warden::kb::Kb> kb,
                     warden::kb::Kb::Open(env, (work / "diff.db").string(),
                                          warden::kb::KbOptions{.create_if_missing = true}));
    ASSIGN_OR_RETURN(std::int64_t from, Ingest(env, *kb, from_path, "from"));
    ASSIGN_OR_RETURN(std::int64_t to, Ingest(env, *kb, to_path, "to"));
    ASSIGN_OR_RETURN(diff::VersionSide f, diff::LoadSide(*kb, from));
    ASSIGN_OR_RETURN(diff::VersionSide t, diff::LoadSide(*kb, to));
    const diff::DiffReport report = diff::ComputeDiff(f, t, g_options);
    // The hashes a CompareView points at, parsed from the records' hex columns.
    struct Hashes {
      base::Sha256Digest exact{};
      warden::identity::Hash128 base{}, structural{};
    };
    auto hashes = [](const warden::kb::FunctionRecord& r) {
      Hashes h;
      FromHex(r.exact_hash, h.exact);
      FromHex(r.norm_hash, h.base);
      FromHex(r.structural_hash, h.structural);
      return h;
    };
    auto view = [](const warden::kb::FunctionRecord& r, const Hashes& h) {
      return warden::identity::CompareView{.exact = &h.exact,
                                           .base = &h.base,
                                           .structural = &h.structural,
                                           .type_signature = r.type_signature,
                                           .instruction_count = r.instruction_count,
                                           .minhash = &r.minhash,
                                           .histogram = &r.histogram,
                                           .call_outs = &r.call_outs};
    };
    std::map<std::uint32_t, const warden::kb::FunctionRecord*> by_from, by_to;
    for (const auto& r : f.functions) by_from[r.func_index] = &r;
    for (const auto& r : t.functions) by_to[r.func_index] = &r;
    std::map<std::uint32_t, const diff::Change*> from_change, to_change;
    for (const diff::Change& c : report.changes) {
      if (c.from_index) from_change[*c.from_index] = &c;
      if (c.to_index) to_change[*c.to_index] = &c;
    }
    auto unpaired = [](const std::map<std::uint32_t, const diff::Change*>& m, std::uint32_t i) {
      auto it = m.find(i);
      return it != m.end() && (!it->second->from_index || !it->second->to_index);
    };
    // The best score of `r` against the unpaired functions of the other side, equal signature.
    auto best = [&](const warden::kb::FunctionRecord& r, bool r_is_from) {
      const Hashes hr = hashes(r);
      double top = 0;
      std::uint32_t arg = 0;
      const auto& others = r_is_from ? by_to : by_from;
      for (const auto& [i, o] : others) {
        if (o->type_signature != r.type_signature) continue;
        if (!unpaired(r_is_from ? to_change : from_change, i)) continue;
        const Hashes ho = hashes(*o);
        const double s = warden::identity::Compare(view(r, hr), view(*o, ho)).overall;
        if (s > top) {
          top = s;
          arg = i;
        }
      }
      return std::make_pair(top, arg);
    };
    for (const auto& [fi, ti] : pairs) {
      auto a = by_from.find(fi);
      auto b = by_to.find(ti);
      if (a == by_from.end() || b == by_to.end()) {
        fmt::print("{}:{}: not a defined function on both sides\n", fi, ti);
        continue;
      }
      const Hashes ha = hashes(*a->second), hb = hashes(*b->second);
      const warden::identity::Similarity s =
          warden::identity::Compare(view(*a->second, ha), view(*b->second, hb));
      int bands = 0;
      for (std::size_t band = 0; band < 8; ++band) {
        bool equal = true;
        for (std::size_t i = 0; i < 4; ++i) {
          equal = equal && a->second->minhash[band * 4 + i] == b->second->minhash[band * 4 + i];
        }
        bands += equal ? 1 : 0;
      }
      const std::uint32_t n = std::min(a->second->instruction_count, b->second->instruction_count);
      auto cls = [](const std::map<std::uint32_t, const diff::Change*>& m, std::uint32_t i) {
        auto it = m.find(i);
        return it == m.end() ? std::string("unchanged/moved")
                             : std::string(diff::ChangeClassName(it->second->change));
      };
      const auto [best_from, best_from_at] = best(*a->second, true);
      const auto [best_to, best_to_at] = best(*b->second, false);
      fmt::print(
          "{}:{}: {} / {}; {} -> {} instructions, signature {}, score {:.3f} (J {:.3f}, C "
          "{:.3f}, K {:.3f}, S {:.0f}), LSH bands shared {}/8, fuzzy threshold {}; best "
          "unpaired partner of {}: {} ({:.3f}), of {}: {} ({:.3f})\n",
          fi, ti, cls(from_change, fi), cls(to_change, ti), a->second->instruction_count,
          b->second->instruction_count, s.signature_gate ? "equal" : "differs", s.overall,
          s.minhash, s.histogram_cosine, s.call_out_jaccard, s.structural, bands,
          warden::identity::AcceptFuzzy(s.overall, n, warden::identity::MatchPurpose::kDiff)
              ? "met"
              : "not met",
          fi, best_from_at, best_from, ti, best_to_at, best_to);
    }
    return Status::Ok();
  };
  const Status s = run();
  fs::remove_all(work);
  if (!s.ok()) {
    fmt::print(stderr, "warden_diff_eval: explain: {}\n", s.ToString());
    return 1;
  }
  return 0;
}

std::string ModulesDir() {
  const char* dir = std::getenv("TROVE_REAL_MODULES_DIR");
  return dir != nullptr && *dir != '\0' ? std::string(dir) : std::string("node_modules");
}

PairSpec Twins(const fs::path& dir, const std::string& label, const std::string& from,
               const std::string& to) {
  return {label, (dir / (from + "-named.wasm")).string(), (dir / (from + ".wasm")).string(),
          (dir / (to + "-named.wasm")).string(), (dir / (to + ".wasm")).string()};
}

}  // namespace

int main(int argc, char** argv) {
  // --no-robust (anywhere): the diff without its toolchain-robust candidates (decision 0088),
  // to measure them against the same loaded modules in one session.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--no-robust") {
      g_options.robust_candidates = false;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  std::optional<std::string> corpus, fixtures;
  bool floor = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--published") {
      // Two paths, or the default pair sql.js 1.8.0 -> 1.16.0.
      if (i + 2 < argc) return Published(argv[i + 1], argv[i + 2]);
      const std::string dir = ModulesDir();
      return Published(dir + "/sql.js-1.8.0/dist/sql-wasm.wasm",
                       dir + "/sql.js/dist/sql-wasm.wasm");
    }
    if (a == "--explain" && i + 3 < argc) {
      std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
      for (int k = i + 3; k < argc; ++k) {
        unsigned long f = 0, t = 0;
        char colon = 0;
        if (std::sscanf(argv[k], "%lu%c%lu", &f, &colon, &t) != 3 || colon != ':') {
          fmt::print(stderr, "warden_diff_eval: --explain: {} is not FROM_INDEX:TO_INDEX\n",
                     argv[k]);
          return 2;
        }
        pairs.emplace_back(static_cast<std::uint32_t>(f), static_cast<std::uint32_t>(t));
      }
      return Explain(argv[i + 1], argv[i + 2], pairs);
    }
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
    // A module the corpus lacks (e.g. a partial build) skips its pairs, said so.
    std::erase_if(pairs, [](const PairSpec& p) {
      for (const std::string* path : {&p.from_stripped, &p.to_stripped}) {
        if (fs::exists(*path)) continue;
        fmt::print("(skipped {}: {} is missing)\n", p.label, *path);
        return true;
      }
      return false;
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
      // Measured values less a margin (docs/decisions/0072-warden-diff-eval-speed.md; threads
      // raised with the call-graph neighbourhood pass,
      // docs/decisions/0080-warden-diff-oracle-speed.md).
      floors = {{pairs[0].label, {0.95, 0.50}},
                {pairs[1].label, {0.85, 0.12}},
                {pairs[2].label, {0.99, 0.66}}};
    }
    return Run(pairs, floors);
  }
  std::fputs(
      "usage: warden_diff_eval --corpus DIR | --fixtures DIR [--floor] | --published [FROM TO] |\n"
      "       --explain FROM TO FROM_INDEX:TO_INDEX...  [--no-robust]\n",
      stderr);
  return 2;
}
