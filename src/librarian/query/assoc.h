// AssocModel: a retrieval signal that is not lexical, learned from the workspace itself at
// bootstrap, with no download (issue 23 "retrieval beyond words"; decision 0064).
//
// What it learns: which sub-words functions of this workspace are *named* with, given the
// words their doc comment and code speak of. For every function chunk, its context words (the
// CanonicalWord forms of the words of its doc comment and of the word runs and identifier
// sub-words of its body, stop words and the name's own words left out) are paired with the
// canonical sub-words of its name. A pair (context word w, name word s) is kept when it occurs
// in at least kMinPairCount functions and its pointwise mutual information is positive; its
// weight is the normalized PMI, log(p(w,s) / (p(w) p(s))) / -log p(w,s), in (0, 1]. Per context
// word the kMaxPerWord strongest name words are kept. Context words are those in at least 3
// functions and at most a tenth of them, the kMaxContextWords rarest per function.
//
// How it is used (query.cc): the intent's canonical words look up their associated name words;
// a function candidate's `assoc` signal (rank.h) is the mean, over its name's canonical
// sub-words, of the strongest association any intent word has with it. It ranks the function
// whose name the sentence predicts, the case BM25 fails on when the intent shares no word with
// the name (the hard variant of the evaluation). The query's `retrieval` stage names the engine
// `lexical_bm25+assoc_pmi` when the model exists and contributed.
//
// Storage: the store's `meta` table, key kAssocModelKey (text: one line per context word,
// "word\tname:weight name:weight ..."), and kAssocModelIdKey (the run id that learned it), so
// no schema change. Learned by a whole-workspace bootstrap; a watch-mode re-index of a few files
// keeps the model (a statistic over the whole workspace that a few files barely move).
//
// Thread safety: an AssocModel is immutable once built; Load's process-wide cache is guarded.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"

namespace trove::librarian::store {
class Store;
}

namespace trove::librarian::query {

inline constexpr std::string_view kAssocModelKey = "assoc_model";
inline constexpr std::string_view kAssocModelIdKey = "assoc_model_id";
inline constexpr std::size_t kMinPairCount = 2;
inline constexpr std::size_t kMaxPerWord = 8;
inline constexpr std::size_t kMaxContextWords = 48;

struct Association {
  std::string name_word;  // canonical sub-word of function names
  double weight = 0;      // normalized PMI, (0, 1]
};

class AssocModel {
 public:
  // One function's words for Learn.
  struct Function {
    std::string name;  // the function's own name (split into sub-words)
    std::string doc;
    std::string body;
  };
  // Learns from `functions` (pure; the unit of the tests).
  static AssocModel Learn(const std::vector<Function>& functions);
  // Reads every function chunk of `store` and learns from them.
  static Result<AssocModel> LearnFromStore(store::Store& store);
  // Writes `model` into the meta table of `store` under `model_id` (a run id).
  static Status Save(store::Store& store, const AssocModel& model, std::string_view model_id);
  // LearnFromStore, then Save.
  static Status LearnAndSave(store::Store& store, std::string_view model_id);
  // The model saved in `store`, from a process-wide cache keyed by the store file and the model
  // id; null when the store holds none.
  static Result<std::shared_ptr<const AssocModel>> Load(store::Store& store);

  std::string Serialize() const;
  static AssocModel Parse(std::string_view text);

  // Associations of one canonical context word (empty when unknown).
  const std::vector<Association>& Of(const std::string& word) const;
  // For a set of canonical intent words: name word -> the strongest weight any of them gives.
  std::unordered_map<std::string, double> Expand(
      const std::unordered_set<std::string>& intent_words) const;

  std::size_t words() const { return map_.size(); }
  std::size_t functions() const { return functions_; }

 private:
  std::unordered_map<std::string, std::vector<Association>> map_;
  std::size_t functions_ = 0;
};

// The canonical, non-stop-word sub-words of an identifier (a function's name), deduplicated in
// order.
std::vector<std::string> CanonicalNameWords(std::string_view name);

}  // namespace trove::librarian::query
