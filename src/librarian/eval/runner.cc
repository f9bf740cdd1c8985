#include "librarian/eval/runner.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_set>

#include "base/hash.h"
#include "librarian/crawl/path.h"
#include "librarian/index/bootstrap.h"
#include "librarian/query/query.h"
#include "librarian/store/store.h"

namespace trove::librarian::eval {
namespace {

namespace fs = std::filesystem;

// One ranked entry from a system: a function (has a span) or a file only.
struct Entry {
  std::string path;
  bool function = false;
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  std::string qualified;
};

struct Lists {
  std::vector<std::string> files;
  std::vector<std::string> functions;
};

Lists ToLists(const std::vector<Entry>& entries, std::size_t depth) {
  Lists out;
  std::unordered_set<std::string> seen;
  for (const Entry& e : entries) {
    if (out.files.size() < depth && seen.insert(e.path).second) out.files.push_back(e.path);
    if (e.function && out.functions.size() < depth) {
      out.functions.push_back(FunctionId(e.path, e.start_line, e.end_line, e.qualified));
    }
  }
  return out;
}

Result<std::string> ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("{}: cannot open", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Io(fmt::format("{}: read failed", path.string()));
  return ss.str();
}

Status WriteAll(const fs::path& path, std::string_view data) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Status::Io(fmt::format("{}: {}", path.parent_path().string(), ec.message()));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return Status::Io(fmt::format("{}: write failed", path.string()));
  return Status::Ok();
}

// A temporary directory removed with everything in it when the object dies.
class ScratchDir {
 public:
  static Result<std::unique_ptr<ScratchDir>> Make() {
    std::error_code ec;
    std::string base = fs::temp_directory_path(ec).string();
    if (ec || base.empty()) base = "/tmp";
    std::string pattern = base + "/librarian_eval_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return Status::Io(fmt::format("{}: mkdtemp failed", pattern));
    }
    return std::unique_ptr<ScratchDir>(new ScratchDir(pattern));
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Indexes the blanked copy at `dir` with the bootstrap pipeline, into the store at
// `store_path` (outside the copy, so the copy holds only the pinned files). ctags is off, so
// the index depends only on the linked tree-sitter grammars.
Result<std::uint64_t> IndexCopy(const std::string& dir, const std::string& store_path,
                                std::size_t workers) {
  index::BootstrapOptions b;
  b.workspace = dir;
  b.store_path = store_path;
  b.force = true;
  b.ctags_program = "";
  b.workers = workers;
  base::Cancellation cancel;
  base::Progress progress;
  ASSIGN_OR_RETURN(index::BootstrapReport report, index::Bootstrap(b, cancel, progress));
  if (!report.success)
    return Status::Internal(fmt::format("{}: bootstrap failed: {}", dir, report.error));
  if (!report.failed.empty() || !report.timed_out.empty()) {
    return Status::Internal(fmt::format("{}: {} files failed and {} timed out in bootstrap", dir,
                                        report.failed.size(), report.timed_out.size()));
  }
  return report.stats.files_extracted;
}

Result<std::vector<Entry>> Baseline(store::Store& st, const std::string& query) {
  store::SearchOptions o;  // docs/librarian.md §6.8 starting weights
  o.limit = 100;
  ASSIGN_OR_RETURN(std::vector<store::ChunkHit> hits, st.SearchChunks(query, o));
  std::vector<Entry> out;
  out.reserve(hits.size());
  for (store::ChunkHit& h : hits) {
    Entry e;
    e.path = std::move(h.path);
    // Functions and methods only at function level: class and file chunks span their members.
    e.function = h.target_id.rfind("fn:", 0) == 0;
    e.start_line = h.start_line;
    e.end_line = h.end_line;
    e.qualified = std::move(h.qualified_name);
    out.push_back(std::move(e));
  }
  return out;
}

rank::Weights WithSemvec(rank::Weights w, double semvec) {
  w.semvec = semvec;
  return w;
}

Result<std::vector<Entry>> Librarian(store::Store& st, const query::Workspace& ws,
                                     const std::string& intent, const rank::Weights& weights,
                                     std::optional<double>& top_signal, std::string* digest,
                                     std::vector<std::string>& files,
                                     const query::FileWeights& file_weights,
                                     const RunOptions& options) {
  query::QueryRequest req;
  req.intent = intent;
  req.depth = options.query_depth;  // default L3: the largest pack budget, 20 packs
  req.max_results = options.max_results;
  req.min_confidence = 0;  // rank everything; the threshold is not under test here
  req.weights = weights;
  // File level: the engine's own ranked file list (QueryResponse::files, decision 0089), as
  // long as the lists are cut.
  req.max_files = std::min(options.list_depth, query::kMaxFiles);
  req.file_weights = file_weights;
  // The evaluation set ranks functions and files: the other pack types (decision 0069) are
  // left out so they take no ranked places.
  req.pack_types = {query::PackType::kFunctionContext, query::PackType::kModuleContext};
  base::Cancellation cancel;
  ASSIGN_OR_RETURN(query::QueryResponse r, query::Query(st, ws, req, cancel, nullptr));
  if (r.error) return Status::Internal(fmt::format("query: {}", *r.error));
  std::vector<Entry> out;
  out.reserve(r.packs.size());
  for (query::Pack& p : r.packs) {
    Entry e;
    e.path = std::move(p.primary_file);
    e.function = p.pack_type == query::PackType::kFunctionContext;
    e.start_line = p.start_line;
    e.end_line = p.end_line;
    e.qualified = std::move(p.qualified_name);
    out.push_back(std::move(e));
  }
  files.clear();
  for (const query::RankedFile& f : r.files) files.push_back(f.path);
  if (!r.packs.empty()) top_signal = r.packs.front().signal;
  if (digest != nullptr) {
    // Everything the answer says besides the ranked targets (RunOptions::rankings_path).
    std::string text = r.synthesis.value_or("");
    for (const query::Pack& p : r.packs) {
      text += fmt::format("\n{}|{:.17g}|{:.17g}|{}|{}|{}", p.pack_id, p.score, p.signal, p.summary,
                          fmt::join(p.key_facts, "|"), fmt::join(p.related_files, "|"));
    }
    text += fmt::format("\n{}", fmt::join(r.drill_down_hints, "|"));
    *digest = base::Sha256Hex(text);
  }
  return out;
}

double Ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

std::vector<std::string> AvailableSystems() {
  return {std::string(kBaseline), std::string(kLibrarian)};
}

std::string FunctionId(std::string_view path, std::uint32_t start_line, std::uint32_t end_line,
                       std::string_view qualified) {
  return fmt::format("{}#L{}-L{}::{}", path, start_line, end_line, qualified);
}

namespace {

struct ParsedId {
  std::string_view path;
  std::uint32_t start = 0;
  std::uint32_t end = 0;
  std::string_view qualified;
};

bool ParseId(std::string_view id, ParsedId& out) {
  // The first "#L<a>-L<b>::" gives the span; the qualified name after it may hold "::".
  std::size_t hash = id.find("#L");
  while (hash != std::string_view::npos) {
    std::size_t dash = id.find("-L", hash);
    std::size_t sep = id.find("::", hash);
    if (dash != std::string_view::npos && sep != std::string_view::npos && dash < sep) {
      std::string_view a = id.substr(hash + 2, dash - hash - 2);
      std::string_view b = id.substr(dash + 2, sep - dash - 2);
      auto ra = std::from_chars(a.data(), a.data() + a.size(), out.start);
      auto rb = std::from_chars(b.data(), b.data() + b.size(), out.end);
      if (ra.ec == std::errc() && rb.ec == std::errc() && ra.ptr == a.data() + a.size() &&
          rb.ptr == b.data() + b.size() && out.start >= 1 && out.end >= out.start) {
        out.path = id.substr(0, hash);
        out.qualified = id.substr(sep + 2);
        return true;
      }
    }
    hash = id.find("#L", hash + 2);
  }
  return false;
}

}  // namespace

bool FunctionMatch(std::string_view doc, std::string_view relevant) {
  ParsedId d, r;
  if (!ParseId(doc, d) || !ParseId(relevant, r) || d.path != r.path) return false;
  if (!d.qualified.empty() && d.qualified == r.qualified) return true;
  std::uint32_t lo = std::max(d.start, r.start), hi = std::min(d.end, r.end);
  if (hi < lo) return false;
  std::uint32_t overlap = hi - lo + 1;
  std::uint32_t shorter = std::min(d.end - d.start + 1, r.end - r.start + 1);
  return 2 * overlap >= shorter;
}

Result<EvalRun> RunEval(const EvalSet& set, const RunOptions& options) {
  if (options.split != "dev" && options.split != "test" && options.split != "all") {
    return Status::InvalidArgument(
        fmt::format("split: must be dev, test or all, not '{}'", options.split));
  }
  if (options.list_depth == 0) return Status::InvalidArgument("list_depth: must be at least 1");
  std::vector<std::string> available = AvailableSystems();
  std::vector<std::string> systems = options.systems.empty() ? available : options.systems;
  for (const std::string& s : systems) {
    if (std::find(available.begin(), available.end(), s) == available.end()) {
      return Status::InvalidArgument(fmt::format(
          "systems: '{}' is not in this build (available: {})", s, fmt::join(available, ", ")));
    }
  }
  if (!options.librarian_weights.empty() && options.librarian_weights.size() != 5 &&
      options.librarian_weights.size() != 9 && options.librarian_weights.size() != 10 &&
      options.librarian_weights.size() != 11) {
    return Status::InvalidArgument(
        "weights: need 5 values (lexical, symbol, path, graph, scope), 9 (then name words, "
        "intent words, owner words, file), 10 (then body coverage) or 11 (then learned "
        "association)");
  }
  // Librarian variants with other file coefficients (RunOptions::file_weight_variants).
  std::vector<query::FileWeights> file_weights_of(systems.size(), options.file_weights);
  if (std::find(systems.begin(), systems.end(), kLibrarian) != systems.end()) {
    for (const query::FileWeights& f : options.file_weight_variants) {
      systems.push_back(f.lexical > 0 ? fmt::format("{}[{},{},{},{},{},{}]", kLibrarian, f.decay,
                                                    f.terms, f.module, f.tail, f.lexical, f.rrf)
                                      : fmt::format("{}[{},{},{},{}]", kLibrarian, f.decay, f.terms,
                                                    f.module, f.tail));
      file_weights_of.push_back(f);
    }
  }
  // Librarian variants with other workspace-vector weights (RunOptions::semvec_weights).
  std::vector<std::optional<double>> semvec_of(systems.size());
  if (!options.semvec_weights.empty()) {
    for (std::size_t s = 0; s < systems.size(); ++s) {
      if (systems[s] != kBaseline) semvec_of[s] = options.semvec_weights.front();
    }
    if (std::find(systems.begin(), systems.end(), kLibrarian) != systems.end()) {
      for (std::size_t i = 1; i < options.semvec_weights.size(); ++i) {
        systems.push_back(fmt::format("{}[semvec={}]", kLibrarian, options.semvec_weights[i]));
        file_weights_of.push_back(options.file_weights);
        semvec_of.push_back(options.semvec_weights[i]);
      }
    }
  }
  std::set<std::string> known_repos;
  for (const EvalRepo& r : set.repos) known_repos.insert(r.name);
  for (const std::string& r : options.repos) {
    if (!known_repos.count(r)) {
      return Status::InvalidArgument(fmt::format("repos: '{}' is not in the set", r));
    }
  }

  rank::Weights weights;
  if (!options.librarian_weights.empty()) {
    const std::vector<double>& w = options.librarian_weights;
    weights.lexical = w[0];
    weights.symbol = w[1];
    weights.path = w[2];
    weights.graph = w[3];
    weights.scope = w[4];
    if (w.size() >= 9) {
      weights.name_words = w[5];
      weights.intent_words = w[6];
      weights.owner_words = w[7];
      weights.file = w[8];
    }
    if (w.size() >= 10) weights.coverage = w[9];
    if (w.size() == 11) weights.assoc = w[10];
  }
  if (!options.name_confidence.empty()) {
    if (options.name_confidence.size() != 4) {
      return Status::InvalidArgument(
          "name_confidence: need 4 values (low, high, damping, lexical shift)");
    }
    weights.name_confidence_low = options.name_confidence[0];
    weights.name_confidence_high = options.name_confidence[1];
    weights.name_damping = options.name_confidence[2];
    weights.lexical_shift = options.name_confidence[3];
  }
  std::unique_ptr<ScratchDir> scratch;
  std::string work = options.work_dir;
  if (work.empty()) {
    ASSIGN_OR_RETURN(scratch, ScratchDir::Make());
    work = scratch->path();
  }

  EvalRun run;
  std::vector<EvalQuery> queries;
  // Per system: runs at file and function level (same calls, same latency).
  std::vector<std::vector<RunResult>> file_runs(systems.size()), fn_runs(systems.size());
  std::string rankings;  // RunOptions::rankings_path

  const auto selected = [&options](const EvalRepo& repo) {
    return options.repos.empty() ||
           std::find(options.repos.begin(), options.repos.end(), repo.name) != options.repos.end();
  };
  const double repo_total =
      static_cast<double>(std::count_if(set.repos.begin(), set.repos.end(), selected));
  double repo_done = 0;
  for (const EvalRepo& repo : set.repos) {
    if (!selected(repo)) continue;
    if (options.progress) options.progress->Report(repo_done++, repo_total, repo.name);
    RepoSummary summary;
    summary.name = repo.name;
    fs::path root = fs::path(repo.root).is_absolute() ? fs::path(repo.root)
                                                      : fs::path(options.project_dir) / repo.root;
    std::string copy = (fs::path(work) / "ws" / repo.name).string();
    std::vector<std::string> present;
    std::set<std::string> present_set;
    for (const EvalFile& f : set.files) {
      if (f.repo != repo.name) continue;
      ++summary.files;
      Result<std::string> content = ReadAll(root / f.path);
      if (!content.ok() || base::Sha256Hex(*content) != f.sha256) {
        ++summary.files_missing;
        continue;
      }
      RETURN_IF_ERROR(WriteAll(fs::path(copy) / f.path, BlankRanges(*content, f.blank)));
      present.push_back(f.path);
      present_set.insert(f.path);
    }
    std::vector<const EvalTarget*> targets;
    for (const EvalTarget& t : set.targets) {
      if (t.repo != repo.name || (options.split != "all" && t.split != options.split)) continue;
      if (!present_set.count(t.path)) {
        ++summary.queries_skipped;
        continue;
      }
      if (options.max_queries_per_repo && targets.size() >= options.max_queries_per_repo) break;
      targets.push_back(&t);
    }
    summary.queries = targets.size();
    if (targets.empty()) {
      run.repos.push_back(summary);
      continue;
    }
    std::string store_path = (fs::path(work) / (repo.name + ".sqlite")).string();
    auto t0 = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(summary.files_indexed, IndexCopy(copy, store_path, options.workers));
    summary.index_ms = Ms(t0, std::chrono::steady_clock::now());
    ASSIGN_OR_RETURN(std::unique_ptr<store::Store> st, store::Store::Open(store_path));
    ASSIGN_OR_RETURN(std::string canonical, crawl::CanonicalWorkspaceRoot(copy));
    query::Workspace ws{canonical, "ws_" + base::Sha256Hex(canonical).substr(0, 16)};

    for (const EvalTarget* t : targets) {
      EvalQuery q;
      q.id = t->qid;
      q.intent = options.hard ? t->query_hard : t->query;
      q.relevant = {FunctionId(t->path, t->start_line, t->end_line, t->qualified)};
      for (std::size_t s = 0; s < systems.size(); ++s) {
        std::optional<double> top_signal;
        std::string digest;
        std::vector<std::string> engine_files;
        double cpu_a = ThreadCpuMs();
        auto a = std::chrono::steady_clock::now();
        Result<std::vector<Entry>> got =
            systems[s] == kBaseline
                ? Baseline(*st, q.intent)
                : Librarian(*st, ws, q.intent,
                            semvec_of[s] ? WithSemvec(weights, *semvec_of[s]) : weights, top_signal,
                            options.rankings_path.empty() ? nullptr : &digest, engine_files,
                            file_weights_of[s], options);
        auto b = std::chrono::steady_clock::now();
        RunResult fr, fn;
        fr.retrieved.top_signal = fn.retrieved.top_signal = top_signal;
        fr.latency_ms = fn.latency_ms = Ms(a, b);
        fr.cpu_ms = fn.cpu_ms = ThreadCpuMs() - cpu_a;
        if (got.ok()) {
          Lists lists = ToLists(*got, options.list_depth);
          // The librarian's file level is its own file list, not the files its packs name.
          if (systems[s] != kBaseline) lists.files = std::move(engine_files);
          if (!options.rankings_path.empty()) {
            rankings +=
                fmt::format("{}\t{}\tfile\t{}\n", t->qid, systems[s], fmt::join(lists.files, "\t"));
            rankings += fmt::format("{}\t{}\tfunction\t{}\n", t->qid, systems[s],
                                    fmt::join(lists.functions, "\t"));
            if (!digest.empty()) {
              rankings += fmt::format("{}\t{}\tpacks\t{}\n", t->qid, systems[s], digest);
            }
          }
          fr.retrieved.docs = std::move(lists.files);
          fn.retrieved.docs = std::move(lists.functions);
        } else {
          fr.error = fn.error = got.status().ToString();
        }
        file_runs[s].push_back(std::move(fr));
        fn_runs[s].push_back(std::move(fn));
      }
      run.query_ids.push_back(q.id);
      run.languages.push_back(t->language);
      queries.push_back(std::move(q));
    }
    run.repos.push_back(summary);
  }
  if (!options.rankings_path.empty()) {
    RETURN_IF_ERROR(WriteAll(options.rankings_path, rankings));
  }
  if (queries.empty()) {
    return Status::NotFound(fmt::format(
        "no query to run: split '{}' is empty or every target file is missing", options.split));
  }
  run.queries = queries.size();
  // File level: the relevant item is the target's path.
  std::vector<EvalQuery> file_queries = queries;
  for (EvalQuery& q : file_queries)
    q.relevant = {q.relevant[0].substr(0, q.relevant[0].find("#L"))};
  EvalConfig fn_config = options.config;
  fn_config.match = FunctionMatch;
  for (std::size_t s = 0; s < systems.size(); ++s) {
    SystemResult r;
    r.name = systems[s];
    ASSIGN_OR_RETURN(r.file_level, ScoreRuns(options.config, file_queries, file_runs[s]));
    ASSIGN_OR_RETURN(r.function_level, ScoreRuns(fn_config, queries, fn_runs[s]));
    run.systems.push_back(std::move(r));
  }
  if (options.progress) options.progress->Report(repo_total, repo_total, "scored");
  return run;
}

std::string FormatRun(const EvalRun& run, const RunOptions& options) {
  std::string out;
  out += fmt::format("split {}, {} variant, {} queries, lists cut at {} entries, k = {}\n",
                     options.split, options.hard ? "hard" : "standard", run.queries,
                     options.list_depth, options.config.cutoff_k);
  out += "repositories:\n";
  for (const RepoSummary& r : run.repos) {
    out += fmt::format(
        "  {:<16} files {:>5} (missing {:>3}, indexed {:>5})  queries {:>4} (skipped {:>3})  "
        "index {:>8.1f} ms\n",
        r.name, r.files, r.files_missing, r.files_indexed, r.queries, r.queries_skipped,
        r.index_ms);
  }
  out += fmt::format(
      "{:<10} {:<8} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8} {:>9} {:>8} "
      "{:>8}\n",
      "system", "level", "MRR", "nDCG@10", "MAP", "R@1", "R@5", "R@10", "P@5", "P@10", "p50 ms",
      "p95 ms", "q/s", "cpu p50", "cpu p95");
  for (const SystemResult& s : run.systems) {
    for (const auto& [level, rep] : {std::pair<const char*, const Report*>{"file", &s.file_level},
                                     {"function", &s.function_level}}) {
      const MeanMetrics& m = rep->mean;
      out += fmt::format(
          "{:<10} {:<8} {:>7.4f} {:>7.4f} {:>7.4f} {:>7.4f} {:>7.4f} {:>7.4f} {:>7.4f} {:>7.4f} "
          "{:>8.3f} {:>8.3f} {:>9.1f} {:>8.3f} {:>8.3f}\n",
          s.name, level, m.mrr, m.ndcg_at_10, m.map, m.recall_at_1, m.recall_at_5, m.recall_at_k,
          m.precision_at_5, m.precision_at_k, rep->latency.p50_ms, rep->latency.p95_ms,
          rep->throughput_qps, rep->latency.cpu_p50_ms, rep->latency.cpu_p95_ms);
    }
  }
  return out;
}

}  // namespace trove::librarian::eval
