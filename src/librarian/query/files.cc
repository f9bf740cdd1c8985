#include "librarian/query/files.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace trove::librarian::query {
namespace {

struct Acc {
  std::vector<double> scores;  // the candidates' weighted scores
  double best = -1;
  std::string best_target;
  std::size_t matches = 0;
  bool lexical = false, name = false, coverage = false, assoc = false, path = false,
       file_prior = false, graph = false, affected = false;
};

bool BetterTarget(double score, const std::string& id, double best, const std::string& best_id) {
  return score > best || (score == best && id < best_id);
}

}  // namespace

std::vector<RankedFile> RankFiles(std::span<const FileEvidence> pool,
                                  std::span<const std::pair<std::string, double>> priors,
                                  const FileWeights& weights, std::size_t max_files,
                                  std::span<const std::pair<std::string, double>> file_text) {
  max_files = std::min(max_files, kMaxFiles);
  std::vector<RankedFile> out;
  if (max_files == 0) return out;
  // std::map: the paths come out sorted, so ties and the output never depend on pool order.
  std::map<std::string, Acc> by_path;
  for (const FileEvidence& e : pool) {
    const bool affected = e.signals.graph_hops == 0;
    if (e.path.empty() || !(e.score > 0 || affected) || !std::isfinite(e.score)) continue;
    Acc& a = by_path[e.path];
    const double s = std::max(0.0, e.score) * (e.module ? weights.module : 1.0);
    a.scores.push_back(s);
    ++a.matches;
    if (BetterTarget(s, e.target_id, a.best, a.best_target)) {
      a.best = s;
      a.best_target = e.target_id;
    }
    const rank::RankSignals& g = e.signals;
    a.lexical |= g.lexical > 0;
    a.name |= g.name_words > 0 || g.intent_words > 0 || g.owner_words > 0 || g.symbol > 0 ||
              g.identifier > 0;
    a.coverage |= g.coverage > 0;
    a.assoc |= g.assoc > 0 || g.embed > 0;
    a.path |= g.path > 0;
    a.file_prior |= g.file > 0;
    a.graph |= g.inherited > 0;
    a.affected |= affected;
  }
  const std::size_t terms = std::max<std::size_t>(1, weights.terms);
  for (auto& [path, a] : by_path) {
    std::sort(a.scores.begin(), a.scores.end(), std::greater<>());
    double score = 0, factor = 1;
    for (std::size_t k = 0; k < a.scores.size() && k < terms; ++k) {
      score += factor * a.scores[k];
      factor *= weights.decay;
    }
    RankedFile f;
    f.path = path;
    f.score = score;
    f.matches = a.matches;
    f.best_target = std::move(a.best_target);
    const std::pair<bool, const char*> named[] = {
        {a.lexical, "lexical"}, {a.name, "name"},        {a.coverage, "coverage"},
        {a.assoc, "assoc"},     {a.path, "path"},        {a.file_prior, "file_prior"},
        {a.graph, "graph"},     {a.affected, "affected"}};
    for (const auto& [on, word] : named) {
      if (on) f.why.emplace_back(word);
    }
    out.push_back(std::move(f));
  }
  // Files the retrieval found whose candidates were all cut before detailed scoring.
  std::map<std::string, double> tail;
  for (const auto& [path, prior] : priors) {
    if (path.empty() || by_path.count(path) != 0 || !(prior > 0) || !std::isfinite(prior)) {
      continue;
    }
    double& t = tail[path];
    t = std::max(t, weights.tail * std::min(1.0, prior));
  }
  for (const auto& [path, score] : tail) {
    if (!(score > 0)) continue;
    RankedFile f;
    f.path = path;
    f.score = score;
    f.why.emplace_back("file_prior");
    out.push_back(std::move(f));
  }
  const auto by_score = [](const RankedFile& a, const RankedFile& b) {
    return a.score > b.score || (a.score == b.score && a.path < b.path);
  };
  std::sort(out.begin(), out.end(), by_score);
  if (weights.lexical > 0 && std::isfinite(weights.lexical) && !file_text.empty()) {
    // The file search's scores, each path once (its best), ranked like the list.
    std::map<std::string, double> text;
    for (const auto& [path, score] : file_text) {
      if (path.empty() || !(score > 0) || !std::isfinite(score)) continue;
      double& t = text[path];
      t = std::max(t, score);
    }
    std::vector<std::pair<std::string, double>> text_order(text.begin(), text.end());
    std::sort(text_order.begin(), text_order.end(), [](const auto& a, const auto& b) {
      return a.second > b.second || (a.second == b.second && a.first < b.first);
    });
    const double best_pool = out.empty() ? 0 : out.front().score;
    const double best_text = text_order.empty() ? 0 : text_order.front().second;
    const bool rrf = weights.rrf > 0 && std::isfinite(weights.rrf);
    std::map<std::string, std::size_t> at;  // path -> index in out
    for (std::size_t i = 0; i < out.size(); ++i) {
      at[out[i].path] = i;
      const double rank = static_cast<double>(i + 1);
      out[i].score =
          rrf ? 1 / (weights.rrf + rank) : (best_pool > 0 ? out[i].score / best_pool : 0);
    }
    for (std::size_t i = 0; i < text_order.size(); ++i) {
      const auto& [path, score] = text_order[i];
      const double add = weights.lexical *
                         (rrf ? 1 / (weights.rrf + static_cast<double>(i + 1)) : score / best_text);
      auto it = at.find(path);
      if (it == at.end()) {
        RankedFile f;
        f.path = path;
        f.score = add;
        f.why.emplace_back("file_text");
        at.emplace(path, out.size());
        out.push_back(std::move(f));
      } else {
        out[it->second].score += add;
        out[it->second].why.emplace_back("file_text");
      }
    }
    std::sort(out.begin(), out.end(), by_score);
  }
  if (out.size() > max_files) out.resize(max_files);
  return out;
}

}  // namespace trove::librarian::query
