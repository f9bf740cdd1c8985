// Workspace vectors (issue 23 "retrieval beyond words", decision 0096): dense word vectors
// learned at bootstrap from the workspace's own text, with no download and no endpoint.
//
// What it learns: latent semantic analysis. Every function chunk is one context holding the
// CanonicalWord forms (query/vocabulary.h) of the content sub-words of its doc comment, its
// name and its body (identifiers split as the extractor splits them, stop words dropped). The
// word x function matrix weighs a word by (1 + log tf) x idf; words in fewer than two functions
// or in more than half of them are left out, at most Options::max_words of them. Its leading
// `dims` left singular vectors (svd.h, randomized and iterative) are the word vectors, so words
// that occur in the same functions, or in functions that share other words, get close vectors
// although they never meet in one text.
//
// How it is used: a function's vector is the normalized (1 + log tf) x idf weighted sum of the
// vectors of its *code* words (name and body, Python docstrings left out; the same fold-in as
// the query's), so that a documented function is not nearer to a sentence than an undocumented
// one for its documentation alone (BM25 already reads the docs; on the dev split, vectors
// folded in from all the text lowered the harder set's standard function MRR). Stored in the
// `embeddings` table (embed/embed.h) under the model name kModelName; the word vectors and their
// idf go to the table `semvec_words` (created IF NOT EXISTS, outside the versioned schema, as
// the embeddings table is). At query time (query.cc) the intent's words fold into a vector, the
// cosine to every stored function vector is computed by brute force (30,000 x 64 floats is a
// few milliseconds), the nearest functions join the candidates and the cosine is the rank
// signal RankSignals::semvec (for the function ranking only: the file list aggregates the
// candidates' scores without it). A target whose doc comment is blank and whose name shares no
// word with the intent can still be found when its body's words live near the intent's.
//
// A watch re-index of a few files (BootstrapOptions::only_paths) keeps the model and folds the
// changed files' functions in (FoldIn); the next whole-workspace run learns again.
//
// Configuration (environment, read when a bootstrap starts): LIBRARIAN_SEMVEC=0 turns the
// learning off, =1 on; LIBRARIAN_SEMVEC_DIMS sets the dimension (16-256, default 64).
//
// Thread safety: Model and Index are immutable once built; Load's process-wide cache is guarded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "librarian/embed/embed.h"

namespace trove::base {
class Database;
}

namespace trove::librarian::semvec {

inline constexpr std::string_view kModelName = "workspace-lsa";
// meta key holding the id of the stored model (run id, dimension and format), which the
// process cache keys on and a bootstrap compares with its own options.
inline constexpr std::string_view kModelIdKey = "semvec_model_id";

struct Options {
  std::size_t dims = 64;
  std::size_t max_words = 30000;  // the most frequent admissible words are kept
  std::size_t min_df = 2;
  double max_df_share = 0.5;
};

// Whether a bootstrap learns the vectors (LIBRARIAN_SEMVEC, default on) and with which options
// (LIBRARIAN_SEMVEC_DIMS); nullopt when off.
std::optional<Options> OptionsFromEnv();

// The words of a text as the model sees them: the CanonicalWord forms of the content sub-words
// (not stop words, at least two characters, with a letter) of every word run, in order, with
// repeats. Memoizes runs, so one Tokenizer serves a whole bootstrap.
class Tokenizer {
 public:
  void Append(std::string_view text, std::vector<std::string>& out);
  std::vector<std::string> Words(std::string_view text) {
    std::vector<std::string> out;
    Append(text, out);
    return out;
  }
  // As Append, with each word as its id in vocabulary() (4 bytes a word instead of a string:
  // a bootstrap holds every function's words at once).
  void AppendIds(std::string_view text, std::vector<std::uint32_t>& out);
  // The words met so far; an id indexes it.
  const std::vector<std::string>& vocabulary() const { return vocabulary_; }

 private:
  std::unordered_map<std::string, std::vector<std::uint32_t>> memo_;
  std::unordered_map<std::string, std::uint32_t> id_of_;
  std::vector<std::string> vocabulary_;
};

class Model {
 public:
  // Learns from one bag of words per function (pure; the unit of the tests).
  static Model Learn(const std::vector<std::vector<std::string>>& contexts, const Options& options);
  // The same, with each word as its index in `vocabulary` (Tokenizer::AppendIds).
  static Model Learn(const std::vector<std::vector<std::uint32_t>>& contexts,
                     std::span<const std::string> vocabulary, const Options& options);
  // Builds a model from stored rows (word, idf, vector of `dims` floats).
  static Model FromRows(std::size_t dims, std::vector<std::string> words, std::vector<float> idf,
                        std::vector<float> vectors);

  // The unit vector of a bag of words (repeats count), or an empty vector when none is known.
  std::vector<float> Embed(std::span<const std::string> words) const;
  // The same for a bag of the model's rows (word_list() indexes; repeats count).
  std::vector<float> EmbedRows(std::span<const std::uint32_t> rows) const;
  // The row of `word`, or nullopt when the model does not know it.
  std::optional<std::uint32_t> Row(std::string_view word) const;
  // The vector of one word (dims floats), or an empty span when unknown.
  std::span<const float> WordVector(std::string_view word) const;

  std::size_t dims() const { return dims_; }
  std::size_t words() const { return words_.size(); }
  const std::vector<std::string>& word_list() const { return words_; }
  const std::vector<float>& idf() const { return idf_; }
  const std::vector<float>& vectors() const { return vectors_; }
  // The singular values the vectors came from (empty for a model read from rows).
  const std::vector<double>& sigma() const { return sigma_; }

 private:
  std::size_t dims_ = 0;
  std::vector<std::string> words_;
  std::unordered_map<std::string, std::uint32_t> index_;
  std::vector<float> idf_;
  std::vector<float> vectors_;  // words_.size() * dims_
  std::vector<double> sigma_;
};

// Cosine of two unit vectors of the same size (their dot product); 0 when the sizes differ.
double Dot(std::span<const float> a, std::span<const float> b);

// --- storage and search ---

struct LearnStats {
  std::size_t functions = 0;
  std::size_t words = 0;
  std::size_t dims = 0;
};
// What LearnFromStore learned: the model and the vectors of the functions it could fold in.
struct Learned {
  Model model;
  std::vector<embed::Stored> functions;
  LearnStats stats;
};
// Reads every function chunk of the store in `db` and learns the model and the function
// vectors; reads only, so a bootstrap runs it on a second connection while it writes other
// things on the first (Save then writes the result).
Result<Learned> LearnFromStore(base::Database& db, const Options& options);
// Writes `learned` as LearnAndSave does. REQUIRES: no transaction open.
Result<LearnStats> Save(base::Database& db, Learned learned, std::string_view run_id,
                        const Options& options);
// Reads every function chunk of the store in `db`, learns the model, and writes the word
// vectors (table semvec_words) and the function vectors (table embeddings, model kModelName) in
// one go, then sets kModelIdKey to `run_id` plus the dimension. REQUIRES: no transaction open.
Result<LearnStats> LearnAndSave(base::Database& db, std::string_view run_id,
                                const Options& options);
// After a re-index of `paths` (files or directories) that kept the model: folds the functions of
// those paths into the stored space with the stored word vectors and stores their vectors
// (the vectors of vanished functions are dropped), under a new model id with `run_id`. Returns
// how many were stored; 0 when no model is stored.
Result<std::size_t> FoldIn(base::Database& db, std::span<const std::string> paths,
                           std::string_view run_id);
// The id a store's model must have to match `options` (compared by a bootstrap to decide
// whether to learn again after a run that changed nothing); empty when none is stored.
Result<std::string> StoredModelId(base::Database& db);
bool ModelIdMatches(std::string_view model_id, const Options& options);

// A loaded model and its function vectors.
class Index {
 public:
  struct Function {
    std::string target_id;
    std::string path;
  };
  Index(Model model, std::vector<Function> functions, std::vector<float> vectors);

  const Model& model() const { return model_; }
  std::size_t functions() const { return functions_.size(); }
  const Function& function(std::size_t i) const { return functions_[i]; }
  // Cosine of `query` (a unit vector from model().Embed) to function i / to the function with
  // `target_id` (0 when unknown).
  double Similarity(std::span<const float> query, std::size_t i) const;
  double Similarity(std::span<const float> query, const std::string& target_id) const;
  // The `k` most similar functions with a positive cosine, best first (ties by target id).
  std::vector<std::pair<double, std::size_t>> Nearest(std::span<const float> query,
                                                      std::size_t k) const;

 private:
  Model model_;
  std::vector<Function> functions_;
  std::unordered_map<std::string, std::size_t> by_target_;
  std::vector<float> vectors_;  // functions_.size() * dims
};

// The index stored in `db`, from a process-wide cache keyed by the store file and the model id;
// null when the store holds none.
Result<std::shared_ptr<const Index>> Load(base::Database& db);

}  // namespace trove::librarian::semvec
