// librarian_eval: builds the evaluation set and scores retrieval systems on it (docs/librarian.md
// §9).
//
//   librarian_eval generate --sources testdata/librarian/eval/sources.json
//                           --out testdata/librarian/eval/eval_set.jsonl [--project DIR]
//   librarian_eval [run] --set testdata/librarian/eval/eval_set.jsonl [--split dev|test|all]
//                  [--hard] [--system NAME]... [--repo NAME]... [--max-per-repo N] [--depth N]
//                  [--weights LEX,SYM,PATH,GRAPH,SCOPE[,NAMEW,INTENTW,OWNERW,FILE[,COVER]]]
//                  [--query-depth L1|L2|L3] [--max-results N]
//                  [--file-weights DECAY,TERMS,MODULE,TAIL[,LEXICAL[,RRF]]]... [--semvec-weight
//                  W]...
//                  [--name-confidence LOW,HIGH,DAMPING,SHIFT]
//                  [--project DIR] [--work DIR] [--check] [--floor METRIC=RATIO]...
//                  [--figures FILE.json] [--svg FILE.svg] [--title TEXT]
//   librarian_eval plot --figures FILE.json --svg FILE.svg [--title TEXT]
//
// `--figures` writes the per-repository figures (MRR and nDCG@10 with 95 % intervals, the ratio
// to the baseline: plot.h) as JSON, `--svg` the plot of them; `plot` draws the plot again from
// such a JSON without running anything. Both are written atomically (temporary file, rename).
//
// `--check` (the CI run) exits non-zero unless the correctness properties hold: the set loads,
// queries ran, every metric is in [0, 1], no query failed and the baseline ranked at least one
// target. It asserts no timing. `--floor METRIC=RATIO` (function_mrr, file_ndcg or file_mrr;
// repeatable) is the CI quality floor (ratio.h): the run fails when a system's ratio of means
// to the baseline is below it. Every run prints the ratios with 95 % paired bootstrap intervals.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/hash.h"
#include "base/terminal.h"
#include "librarian/eval/eval_set.h"
#include "librarian/eval/generate.h"
#include "librarian/eval/plot.h"
#include "librarian/eval/ratio.h"
#include "librarian/eval/runner.h"

namespace trove::librarian::eval {
namespace {

// The comma-separated non-negative numbers given to `flag`; an error names a bad one as `what`
// ("--weights: not a weight: 'x'"). One value when `text` has no comma.
Result<std::vector<double>> NonNegatives(std::string_view flag, std::string_view what,
                                         const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    char* end = nullptr;
    const double d = std::strtod(part.c_str(), &end);
    if (part.empty() || *end != '\0' || !(d >= 0)) {
      return Status::InvalidArgument(fmt::format("{}: not a {}: '{}'", flag, what, part));
    }
    out.push_back(d);
  }
  return out;
}

Result<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("{}: cannot open", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteText(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return Status::Io(fmt::format("{}: write failed", path));
  return Status::Ok();
}

Result<std::size_t> ParseCount(std::string_view flag, const std::string& v) {
  char* end = nullptr;
  unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || v[0] == '-') {
    return Status::InvalidArgument(fmt::format("{}: not a count: '{}'", flag, v));
  }
  return static_cast<std::size_t>(n);
}

Status Generate(const std::vector<std::string>& args) {
  std::string sources, out, project = ".";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) return Status::InvalidArgument(fmt::format("{}: needs a value", a));
    if (a == "--sources") {
      sources = args[++i];
    } else if (a == "--out") {
      out = args[++i];
    } else if (a == "--project") {
      project = args[++i];
    } else {
      return Status::InvalidArgument(fmt::format("unknown option '{}'", a));
    }
  }
  if (sources.empty() || out.empty()) {
    return Status::InvalidArgument("generate needs --sources FILE and --out FILE");
  }
  ASSIGN_OR_RETURN(std::string text, ReadText(sources));
  Result<std::vector<SourceRepo>> repos = ParseSources(text);
  if (!repos.ok()) return std::move(repos).status().WithContext(sources);
  GenerateStats stats;
  ASSIGN_OR_RETURN(
      EvalSet set,
      GenerateEvalSet(*repos, project, std::filesystem::path(sources).filename().string(), &stats));
  std::string body = SerializeEvalSet(set);
  RETURN_IF_ERROR(WriteText(out, body));

  // The manifest: the set's SHA-256 and its sizes (docs/librarian.md §9.3 step 7).
  nlohmann::ordered_json m;
  m["set"] = std::filesystem::path(out).filename().string();
  m["sha256"] = base::Sha256Hex(body);
  m["repos"] = set.repos.size();
  m["files"] = set.files.size();
  m["queries"] = set.targets.size();
  std::map<std::string, std::map<std::string, int>> by_lang;
  std::map<std::string, std::map<std::string, int>> by_repo;
  for (const EvalTarget& t : set.targets) {
    ++by_lang[t.language][t.split];
    ++by_repo[t.repo][t.split];
  }
  m["by_language"] = by_lang;
  m["by_repo"] = by_repo;
  nlohmann::ordered_json g;
  g["files"] = stats.files;
  g["documented_functions"] = stats.documented_functions;
  g["doc_located"] = stats.located;
  g["query_too_short"] = stats.too_short;
  g["query_shared"] = stats.shared;
  g["over_cap"] = stats.sampled_out;
  g["leaked"] = stats.leaked;
  g["targets"] = stats.targets;
  m["generation"] = g;
  std::string manifest_path = (std::filesystem::path(out).parent_path() / "manifest.json").string();
  RETURN_IF_ERROR(WriteText(manifest_path, m.dump(2) + "\n"));
  fmt::print("wrote {} ({} repos, {} files, {} queries) and {}\n", out, set.repos.size(),
             set.files.size(), set.targets.size(), manifest_path);
  fmt::print("generation: {}\n", g.dump());
  return Status::Ok();
}

bool InUnit(double v) { return v >= 0 && v <= 1; }

Status Check(const EvalRun& run) {
  for (const RepoSummary& r : run.repos) {
    if (r.queries > 0 && r.files_indexed != r.files - r.files_missing) {
      return Status::Internal(fmt::format("{}: bootstrap indexed {} of {} files", r.name,
                                          r.files_indexed, r.files - r.files_missing));
    }
  }
  for (const SystemResult& s : run.systems) {
    for (const Report* r : {&s.file_level, &s.function_level}) {
      if (r->errors > 0)
        return Status::Internal(fmt::format("{}: {} queries failed", s.name, r->errors));
      for (const QueryRow& row : r->rows) {
        const QueryMetrics& m = row.metrics;
        for (double v :
             {m.precision_at_k, m.recall_at_k, m.f1_at_k, m.ndcg_at_10, m.reciprocal_rank,
              m.average_precision, m.recall_at_1, m.recall_at_5, m.precision_at_5}) {
          if (!InUnit(v)) {
            return Status::Internal(
                fmt::format("{}: {}: a metric is {} (outside [0, 1])", s.name, row.id, v));
          }
        }
      }
      const MeanMetrics& m = r->mean;
      for (double v : {m.mrr, m.ndcg_at_10, m.map, m.recall_at_k, m.precision_at_k, m.f1_at_k}) {
        if (!InUnit(v)) return Status::Internal(fmt::format("{}: a mean metric is {}", s.name, v));
      }
      if (r->latency.p50_ms > r->latency.p95_ms) {
        return Status::Internal(fmt::format("{}: p50 above p95", s.name));
      }
    }
    if (s.name == kBaseline && s.file_level.mean.mrr <= 0) {
      return Status::Internal("baseline ranked no target file at all");
    }
  }
  return Status::Ok();
}

// Writes `text` to `path` through a temporary file and a rename, so that a reader never sees a
// half-written plot.
Status WriteAtomically(const std::string& path, std::string_view text) {
  base::PosixEnv env;
  Status s = env.WriteFile(path, text);
  if (!s.ok()) return std::move(s).WithContext(path);
  return Status::Ok();
}

constexpr std::string_view kDefaultTitle = "Librarian retrieval per repository";

Status Plot(const std::vector<std::string>& args) {
  std::string figures_path, svg_path, title(kDefaultTitle);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) return Status::InvalidArgument(fmt::format("{}: needs a value", a));
    if (a == "--figures") {
      figures_path = args[++i];
    } else if (a == "--svg") {
      svg_path = args[++i];
    } else if (a == "--title") {
      title = args[++i];
    } else {
      return Status::InvalidArgument(fmt::format("unknown option '{}'", a));
    }
  }
  if (figures_path.empty() || svg_path.empty()) {
    return Status::InvalidArgument("plot needs --figures FILE and --svg FILE");
  }
  ASSIGN_OR_RETURN(std::string text, ReadText(figures_path));
  Result<std::vector<RepoFigures>> figures = ParseFiguresJson(text);
  if (!figures.ok()) return std::move(figures).status().WithContext(figures_path);
  RETURN_IF_ERROR(WriteAtomically(svg_path, RenderSvg(*figures, title)));
  fmt::print("wrote {} ({} repositories)\n", svg_path, figures->size());
  return Status::Ok();
}

Status Run(const std::vector<std::string>& args) {
  RunOptions o;
  std::string set_path;
  std::string figures_path, svg_path, title(kDefaultTitle);
  bool check = false;
  std::vector<Floor> floors;
  bool file_weights_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--hard") {
      o.hard = true;
      continue;
    }
    if (a == "--check") {
      check = true;
      continue;
    }
    if (i + 1 >= args.size()) return Status::InvalidArgument(fmt::format("{}: needs a value", a));
    const std::string& v = args[++i];
    if (a == "--set") {
      set_path = v;
    } else if (a == "--split") {
      o.split = v;
    } else if (a == "--system") {
      o.systems.push_back(v);
    } else if (a == "--repo") {
      o.repos.push_back(v);
    } else if (a == "--max-per-repo") {
      ASSIGN_OR_RETURN(o.max_queries_per_repo, ParseCount(a, v));
    } else if (a == "--depth") {
      ASSIGN_OR_RETURN(o.list_depth, ParseCount(a, v));
    } else if (a == "--query-depth") {
      if (v == "L1") {
        o.query_depth = query::Depth::kL1;
      } else if (v == "L2") {
        o.query_depth = query::Depth::kL2;
      } else if (v == "L3") {
        o.query_depth = query::Depth::kL3;
      } else {
        return Status::InvalidArgument("--query-depth: must be L1, L2 or L3");
      }
    } else if (a == "--max-results") {
      ASSIGN_OR_RETURN(o.max_results, ParseCount(a, v));
      if (o.max_results < 1 || o.max_results > 100) {
        return Status::InvalidArgument("--max-results: must be between 1 and 100");
      }
    } else if (a == "--project") {
      o.project_dir = v;
    } else if (a == "--work") {
      o.work_dir = v;
    } else if (a == "--rankings") {
      o.rankings_path = v;
    } else if (a == "--figures") {
      figures_path = v;
    } else if (a == "--svg") {
      svg_path = v;
    } else if (a == "--title") {
      title = v;
    } else if (a == "--floor") {
      ASSIGN_OR_RETURN(Floor f, ParseFloor(v));
      floors.push_back(std::move(f));
    } else if (a == "--file-weights") {
      ASSIGN_OR_RETURN(std::vector<double> w, NonNegatives(a, "weight", v));
      if (w.size() < 4 || w.size() > 6 || w[1] < 1 || w[1] > 100) {
        return Status::InvalidArgument(
            "--file-weights: need 4 to 6 values (decay, terms 1-100, module, tail[, lexical[, "
            "rrf]])");
      }
      const query::FileWeights f{.decay = w[0],
                                 .terms = static_cast<std::size_t>(w[1]),
                                 .module = w[2],
                                 .tail = w[3],
                                 .lexical = w.size() > 4 ? w[4] : 0.0,
                                 .rrf = w.size() > 5 ? w[5] : 0.0};
      // The first sets the librarian's; each further one adds a variant system.
      if (file_weights_given) {
        o.file_weight_variants.push_back(f);
      } else {
        o.file_weights = f;
        file_weights_given = true;
      }
    } else if (a == "--name-confidence") {
      ASSIGN_OR_RETURN(std::vector<double> c, NonNegatives(a, "coefficient", v));
      o.name_confidence.insert(o.name_confidence.end(), c.begin(), c.end());
      if (o.name_confidence.size() != 4) {
        return Status::InvalidArgument(
            "--name-confidence: need 4 values (low, high, damping, lexical shift)");
      }
    } else if (a == "--semvec-weight") {
      ASSIGN_OR_RETURN(std::vector<double> w, NonNegatives(a, "weight", v));
      if (w.size() != 1 || v.find(',') != std::string::npos) {
        return Status::InvalidArgument(fmt::format("--semvec-weight: not a weight: '{}'", v));
      }
      o.semvec_weights.push_back(w[0]);
    } else if (a == "--weights") {
      ASSIGN_OR_RETURN(std::vector<double> w, NonNegatives(a, "weight", v));
      o.librarian_weights.insert(o.librarian_weights.end(), w.begin(), w.end());
    } else {
      return Status::InvalidArgument(fmt::format("unknown option '{}'", a));
    }
  }
  if (set_path.empty()) return Status::InvalidArgument("run needs --set FILE");
  ASSIGN_OR_RETURN(std::string text, ReadText(set_path));
  Result<EvalSet> set = ParseEvalSet(text);
  if (!set.ok()) return std::move(set).status().WithContext(set_path);
  // A progress line on stderr only when it is a terminal (base/terminal.h); erased before the
  // table is printed.
  const bool show_progress = base::TerminalInfo::Detect().stderr_progress;
  const base::Progress progress([](double done, double total, const std::string& what) {
    std::fputs(
        fmt::format("\r\x1b[Klibrarian_eval: repository {}/{} {}", done, total, what).c_str(),
        stderr);
    std::fflush(stderr);
  });
  if (show_progress) o.progress = &progress;
  Result<EvalRun> ran = RunEval(*set, o);
  if (show_progress) std::fputs("\r\x1b[K", stderr);
  if (!ran.ok()) return std::move(ran).status();
  const EvalRun& run = *ran;
  fmt::print("{}", FormatRun(run, o));
  const std::vector<RatioFigures> ratios = Ratios(run);
  fmt::print("{}", FormatRatios(ratios));
  if (!figures_path.empty() || !svg_path.empty()) {
    const std::vector<RepoFigures> figures = PerRepoFigures(run, *set);
    if (!figures_path.empty()) RETURN_IF_ERROR(WriteAtomically(figures_path, FiguresJson(figures)));
    if (!svg_path.empty()) RETURN_IF_ERROR(WriteAtomically(svg_path, RenderSvg(figures, title)));
  }
  if (check) {
    RETURN_IF_ERROR(Check(run));
    fmt::print("check: ok\n");
  }
  if (!floors.empty()) {
    RETURN_IF_ERROR(CheckFloors(ratios, floors));
    fmt::print("quality floor: ok\n");
  }
  return Status::Ok();
}

}  // namespace
}  // namespace trove::librarian::eval

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  trove::Status s;
  if (!args.empty() && args[0] == "generate") {
    s = trove::librarian::eval::Generate({args.begin() + 1, args.end()});
  } else if (!args.empty() && args[0] == "plot") {
    s = trove::librarian::eval::Plot({args.begin() + 1, args.end()});
  } else {
    if (!args.empty() && args[0] == "run") args.erase(args.begin());
    s = trove::librarian::eval::Run(args);
  }
  if (!s.ok()) {
    trove::base::PrintError("librarian_eval", s.ToString());
    return 1;
  }
  return 0;
}
