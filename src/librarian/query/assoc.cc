#include "librarian/query/assoc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <mutex>
#include <utility>

#include "base/sqlite.h"
#include "librarian/extract/identifier.h"
#include "librarian/query/vocabulary.h"
#include "librarian/store/store.h"

namespace trove::librarian::query {
namespace {

bool Content(const std::string& w) {
  if (w.size() < 2 || store::IsStopWord(w)) return false;
  return std::any_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

// Canonical context words of a function (doc and body), memoizing run -> words.
class ContextReader {
 public:
  std::vector<std::string> Words(const AssocModel::Function& f,
                                 const std::vector<std::string>& name_words) {
    std::vector<std::string> out;
    std::unordered_set<std::string> seen(name_words.begin(), name_words.end());
    auto add_run = [&](std::string_view run) {
      auto it = cache_.find(run);
      if (it == cache_.end()) {
        std::vector<std::string> words;
        for (const std::string& part : extract::SplitIdentifier(run)) {
          if (Content(part)) words.push_back(CanonicalWord(part));
        }
        it = cache_.emplace(std::string(run), std::move(words)).first;
      }
      for (const std::string& w : it->second) {
        if (seen.insert(w).second) out.push_back(w);
      }
    };
    ForEachWordRun<false>(f.doc, add_run);
    ForEachWordRun<false>(f.body, add_run);
    return out;
  }

 private:
  std::map<std::string, std::vector<std::string>, std::less<>> cache_;
};

std::mutex cache_mu;
// store file + "\n" + model id -> model. A few workspaces per process at most.
std::map<std::string, std::shared_ptr<const AssocModel>>& Cache() {
  static auto* cache = new std::map<std::string, std::shared_ptr<const AssocModel>>();
  return *cache;
}

Result<std::string> MetaValue(store::Store& store, std::string_view key) {
  ASSIGN_OR_RETURN(base::Statement st, store.db().Prepare("SELECT value FROM meta WHERE key = ?1"));
  RETURN_IF_ERROR(st.Bind(1, key));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::string();
  return st.ColumnText(0);
}

// The file of the store's main database ("" for an in-memory one).
Result<std::string> DbFile(store::Store& store) {
  ASSIGN_OR_RETURN(base::Statement st,
                   store.db().Prepare("SELECT file FROM pragma_database_list WHERE name = "
                                      "'main'"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::string();
  return st.ColumnText(0);
}

}  // namespace

std::vector<std::string> CanonicalNameWords(std::string_view name) {
  std::vector<std::string> out;
  for (const std::string& part : extract::SplitIdentifier(name)) {
    if (!Content(part)) continue;
    std::string c = CanonicalWord(part);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(std::move(c));
  }
  return out;
}

AssocModel AssocModel::Learn(const std::vector<Function>& functions) {
  AssocModel model;
  // Pass 1: words as ids, context document frequencies.
  std::unordered_map<std::string, std::uint32_t> id_of;
  std::vector<std::string> word_of;
  auto id = [&](const std::string& w) {
    auto [it, added] = id_of.emplace(w, static_cast<std::uint32_t>(word_of.size()));
    if (added) word_of.push_back(w);
    return it->second;
  };
  std::vector<std::vector<std::uint32_t>> names, contexts;
  std::vector<std::uint32_t> context_df, name_df;
  ContextReader reader;
  for (const Function& f : functions) {
    std::vector<std::string> nw = CanonicalNameWords(f.name);
    if (nw.empty()) continue;
    std::vector<std::string> cw = reader.Words(f, nw);
    if (cw.empty()) continue;
    std::vector<std::uint32_t> n, c;
    for (const std::string& w : nw) n.push_back(id(w));
    for (const std::string& w : cw) c.push_back(id(w));
    if (context_df.size() < word_of.size()) {
      context_df.resize(word_of.size());
      name_df.resize(word_of.size());
    }
    for (std::uint32_t x : n) ++name_df[x];
    for (std::uint32_t x : c) ++context_df[x];
    names.push_back(std::move(n));
    contexts.push_back(std::move(c));
  }
  const std::size_t total = names.size();
  model.functions_ = total;
  if (total == 0) return model;
  const std::uint32_t max_df = std::max<std::uint32_t>(3, static_cast<std::uint32_t>(total / 10));
  // Pass 2: pairs of (informative context word, name word) as sorted 64-bit keys.
  std::vector<std::uint64_t> pairs;
  for (std::size_t i = 0; i < total; ++i) {
    std::vector<std::uint32_t>& c = contexts[i];
    c.erase(std::remove_if(
                c.begin(), c.end(),
                [&](std::uint32_t x) { return context_df[x] < 3 || context_df[x] > max_df; }),
            c.end());
    if (c.size() > kMaxContextWords) {
      std::stable_sort(c.begin(), c.end(), [&](std::uint32_t a, std::uint32_t b) {
        return context_df[a] < context_df[b];
      });
      c.resize(kMaxContextWords);
    }
    for (std::uint32_t x : c) {
      for (std::uint32_t s : names[i]) pairs.push_back((std::uint64_t{x} << 32) | s);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  const double n = static_cast<double>(total);
  for (std::size_t i = 0; i < pairs.size();) {
    std::size_t j = i;
    while (j < pairs.size() && pairs[j] == pairs[i]) ++j;
    const std::size_t count = j - i;
    const auto x = static_cast<std::uint32_t>(pairs[i] >> 32);
    const auto s = static_cast<std::uint32_t>(pairs[i] & 0xFFFFFFFFu);
    i = j;
    if (count < kMinPairCount) continue;
    const double pxy = static_cast<double>(count) / n;
    const double px = context_df[x] / n;
    const double py = name_df[s] / n;
    const double pmi = std::log(pxy / (px * py));
    if (pmi <= 0) continue;
    const double npmi = pxy >= 1 ? 1 : pmi / -std::log(pxy);
    model.map_[word_of[x]].push_back({word_of[s], std::min(1.0, npmi)});
  }
  for (auto& [w, list] : model.map_) {
    std::sort(list.begin(), list.end(), [](const Association& a, const Association& b) {
      return a.weight > b.weight || (a.weight == b.weight && a.name_word < b.name_word);
    });
    if (list.size() > kMaxPerWord) list.resize(kMaxPerWord);
  }
  return model;
}

Result<AssocModel> AssocModel::LearnFromStore(store::Store& store) {
  ASSIGN_OR_RETURN(base::Statement st,
                   store.db().Prepare("SELECT s.name, c.doc, c.body FROM chunks c JOIN symbols s "
                                      "ON s.id = c.symbol_id WHERE s.kind IN ('function', "
                                      "'method') ORDER BY c.id"));
  std::vector<Function> functions;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    functions.push_back({st.ColumnText(0), st.ColumnText(1), st.ColumnText(2)});
  }
  return Learn(functions);
}

Status AssocModel::LearnAndSave(store::Store& store, std::string_view model_id) {
  ASSIGN_OR_RETURN(AssocModel model, LearnFromStore(store));
  return Save(store, model, model_id);
}

Status AssocModel::Save(store::Store& store, const AssocModel& model, std::string_view model_id) {
  const std::string text = model.Serialize();
  RETURN_IF_ERROR(store.db().Exec("BEGIN IMMEDIATE"));
  auto put = [&](std::string_view key, std::string_view value) -> Status {
    ASSIGN_OR_RETURN(base::Statement st,
                     store.db().Prepare("INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)"));
    RETURN_IF_ERROR(st.Bind(1, key));
    RETURN_IF_ERROR(st.Bind(2, value));
    return st.Step().status();
  };
  Status s = put(kAssocModelKey, text);
  if (s.ok()) s = put(kAssocModelIdKey, model_id);
  if (!s.ok()) {
    (void)store.db().Exec("ROLLBACK");
    return s;
  }
  return store.db().Exec("COMMIT");
}

Result<std::shared_ptr<const AssocModel>> AssocModel::Load(store::Store& store) {
  ASSIGN_OR_RETURN(std::string model_id, MetaValue(store, kAssocModelIdKey));
  if (model_id.empty()) return std::shared_ptr<const AssocModel>();
  ASSIGN_OR_RETURN(std::string file, DbFile(store));
  if (file.empty()) file = fmt::format("memory:{}", static_cast<const void*>(&store));
  const std::string key = file + "\n" + model_id;
  {
    std::lock_guard lock(cache_mu);
    auto it = Cache().find(key);
    if (it != Cache().end()) return it->second;
  }
  ASSIGN_OR_RETURN(std::string text, MetaValue(store, kAssocModelKey));
  auto model = std::make_shared<const AssocModel>(Parse(text));
  std::lock_guard lock(cache_mu);
  // Older models of the same store are dropped.
  for (auto it = Cache().begin(); it != Cache().end();) {
    it = it->first.rfind(file + "\n", 0) == 0 ? Cache().erase(it) : std::next(it);
  }
  Cache()[key] = model;
  return std::shared_ptr<const AssocModel>(model);
}

std::string AssocModel::Serialize() const {
  std::vector<const std::string*> keys;
  for (const auto& [w, list] : map_) keys.push_back(&w);
  std::sort(keys.begin(), keys.end(), [](const auto* a, const auto* b) { return *a < *b; });
  std::string out = fmt::format("functions\t{}\n", functions_);
  for (const std::string* w : keys) {
    out += *w;
    out += '\t';
    bool first = true;
    for (const Association& a : map_.at(*w)) {
      out += fmt::format("{}{}:{:.4f}", first ? "" : " ", a.name_word, a.weight);
      first = false;
    }
    out += '\n';
  }
  return out;
}

AssocModel AssocModel::Parse(std::string_view text) {
  AssocModel model;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos || tab == 0) continue;
    std::string word(line.substr(0, tab));
    std::string_view rest = line.substr(tab + 1);
    if (word == "functions") {
      model.functions_ =
          static_cast<std::size_t>(std::strtoull(std::string(rest).c_str(), nullptr, 10));
      continue;
    }
    std::vector<Association> list;
    while (!rest.empty() && list.size() < kMaxPerWord) {
      std::size_t sp = rest.find(' ');
      std::string_view item = rest.substr(0, sp);
      rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
      const std::size_t colon = item.rfind(':');
      if (colon == std::string_view::npos || colon == 0) continue;
      const double weight = std::strtod(std::string(item.substr(colon + 1)).c_str(), nullptr);
      if (!(weight > 0 && weight <= 1)) continue;
      list.push_back({std::string(item.substr(0, colon)), weight});
    }
    if (!list.empty()) model.map_[std::move(word)] = std::move(list);
  }
  return model;
}

const std::vector<Association>& AssocModel::Of(const std::string& word) const {
  static const std::vector<Association> kNone;
  auto it = map_.find(word);
  return it == map_.end() ? kNone : it->second;
}

std::unordered_map<std::string, double> AssocModel::Expand(
    const std::unordered_set<std::string>& intent_words) const {
  std::unordered_map<std::string, double> out;
  for (const std::string& w : intent_words) {
    for (const Association& a : Of(w)) {
      double& best = out[a.name_word];
      best = std::max(best, a.weight);
    }
  }
  return out;
}

}  // namespace trove::librarian::query
