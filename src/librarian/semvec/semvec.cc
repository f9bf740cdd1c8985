#include "librarian/semvec/semvec.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "base/sqlite.h"
#include "librarian/embed/embed.h"
#include "librarian/extract/identifier.h"
#include "librarian/query/vocabulary.h"
#include "librarian/semvec/svd.h"
#include "librarian/store/store.h"

namespace trove::librarian::semvec {
namespace {

bool Content(const std::string& w) {
  if (w.size() < 2 || store::IsStopWord(w)) return false;
  return std::any_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

// The id of a model learned with `options` in run `run_id`; the format tag changes when the
// learning does, so an older store learns again.
std::string ModelId(std::string_view run_id, const Options& options) {
  return fmt::format("{}:lsa2:d{}", run_id, options.dims);
}

void ToBytes(std::span<const float> v, std::vector<std::uint8_t>& bytes) {
  bytes.resize(v.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
}

Status EnsureWordsTable(base::Database& db) {
  return db.Exec(
      "CREATE TABLE IF NOT EXISTS semvec_words(model TEXT NOT NULL, word TEXT NOT NULL, idf REAL "
      "NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY(model, word)) WITHOUT "
      "ROWID");
}

Result<std::string> MetaValue(base::Database& db, std::string_view key) {
  ASSIGN_OR_RETURN(base::Statement st, db.Prepare("SELECT value FROM meta WHERE key = ?1"));
  RETURN_IF_ERROR(st.Bind(1, key));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::string();
  return st.ColumnText(0);
}

Result<bool> WordsTableExists(base::Database& db) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                              "'semvec_words'"));
  return st.Step();
}

// `body` without its triple-quoted strings (Python docstrings): a function's vector is folded
// in from its code, not from its documentation (see LearnAndSave).
std::string WithoutDocstrings(std::string_view body) {
  std::string out;
  std::size_t i = 0;
  while (i < body.size()) {
    std::size_t a = body.find("\"\"\"", i), b = body.find("'''", i);
    const std::size_t open = std::min(a, b);
    if (open == std::string_view::npos) break;
    const std::string_view quote = body.substr(open, 3);
    const std::size_t close = body.find(quote, open + 3);
    out.append(body.substr(i, open - i));
    if (close == std::string_view::npos) return out;
    i = close + 3;
  }
  if (i < body.size()) out.append(body.substr(i));
  return out;
}

}  // namespace

std::optional<Options> OptionsFromEnv() {
  Options o;
  if (const char* on = getenv("LIBRARIAN_SEMVEC"); on != nullptr && std::string_view(on) == "0") {
    return std::nullopt;
  }
  if (const char* d = getenv("LIBRARIAN_SEMVEC_DIMS"); d != nullptr && *d != '\0') {
    const long v = std::strtol(d, nullptr, 10);
    if (v >= 16 && v <= 256) o.dims = static_cast<std::size_t>(v);
  }
  return o;
}

void Tokenizer::AppendIds(std::string_view text, std::vector<std::uint32_t>& out) {
  query::ForEachWordRun<false>(text, [&](std::string_view text_run) {
    const std::string run(text_run);
    auto it = memo_.find(run);
    if (it == memo_.end()) {
      std::vector<std::uint32_t> ids;
      for (const std::string& part : extract::SplitIdentifier(run)) {
        if (!Content(part)) continue;
        std::string word = query::CanonicalWord(part);
        auto [at, added] = id_of_.emplace(word, static_cast<std::uint32_t>(vocabulary_.size()));
        if (added) vocabulary_.push_back(std::move(word));
        ids.push_back(at->second);
      }
      it = memo_.emplace(run, std::move(ids)).first;
    }
    out.insert(out.end(), it->second.begin(), it->second.end());
  });
}

void Tokenizer::Append(std::string_view text, std::vector<std::string>& out) {
  std::vector<std::uint32_t> ids;
  AppendIds(text, ids);
  for (std::uint32_t id : ids) out.push_back(vocabulary_[id]);
}

Model Model::Learn(const std::vector<std::vector<std::string>>& contexts, const Options& options) {
  std::unordered_map<std::string, std::uint32_t> id_of;
  std::vector<std::string> vocabulary;
  std::vector<std::vector<std::uint32_t>> ids(contexts.size());
  for (std::size_t f = 0; f < contexts.size(); ++f) {
    ids[f].reserve(contexts[f].size());
    for (const std::string& w : contexts[f]) {
      auto [it, added] = id_of.emplace(w, static_cast<std::uint32_t>(vocabulary.size()));
      if (added) vocabulary.push_back(w);
      ids[f].push_back(it->second);
    }
  }
  return Learn(ids, vocabulary, options);
}

Model Model::Learn(const std::vector<std::vector<std::uint32_t>>& contexts,
                   std::span<const std::string> word_of, const Options& options) {
  Model m;
  // Document frequencies and each function's bag of (word, tf).
  std::vector<std::uint32_t> df(word_of.size(), 0);
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> bags;  // (word, tf)
  bags.reserve(contexts.size());
  for (const std::vector<std::uint32_t>& ctx : contexts) {
    std::vector<std::uint32_t> ids = ctx;
    std::sort(ids.begin(), ids.end());
    std::vector<std::pair<std::uint32_t, std::uint32_t>> bag;
    for (std::size_t i = 0; i < ids.size();) {
      std::size_t j = i;
      while (j < ids.size() && ids[j] == ids[i]) ++j;
      bag.emplace_back(ids[i], static_cast<std::uint32_t>(j - i));
      ++df[ids[i]];
      i = j;
    }
    bags.push_back(std::move(bag));
  }
  const std::size_t n = bags.size();
  if (n == 0) return m;
  // Admissible words, the most frequent first (ties by word), at most max_words.
  const double max_df = std::max(2.0, options.max_df_share * static_cast<double>(n));
  std::vector<std::uint32_t> kept;
  for (std::uint32_t w = 0; w < word_of.size(); ++w) {
    if (df[w] >= options.min_df && df[w] <= max_df) kept.push_back(w);
  }
  std::sort(kept.begin(), kept.end(), [&](std::uint32_t a, std::uint32_t b) {
    return df[a] > df[b] || (df[a] == df[b] && word_of[a] < word_of[b]);
  });
  if (kept.size() > options.max_words) kept.resize(options.max_words);
  std::sort(kept.begin(), kept.end(),
            [&](std::uint32_t a, std::uint32_t b) { return word_of[a] < word_of[b]; });
  std::vector<std::int64_t> row_of(word_of.size(), -1);
  for (std::size_t r = 0; r < kept.size(); ++r) row_of[kept[r]] = static_cast<std::int64_t>(r);
  // The word x function matrix, (1 + log tf) x idf, as CSR built from triplets.
  std::vector<std::vector<std::pair<std::uint32_t, double>>> rows(kept.size());
  std::vector<float> idf(kept.size());
  for (std::size_t r = 0; r < kept.size(); ++r) {
    idf[r] = static_cast<float>(std::log(static_cast<double>(n) / df[kept[r]]));
  }
  for (std::size_t f = 0; f < n; ++f) {
    for (const auto& [w, tf] : bags[f]) {
      if (row_of[w] < 0) continue;
      const auto r = static_cast<std::size_t>(row_of[w]);
      rows[r].emplace_back(static_cast<std::uint32_t>(f), (1 + std::log(tf)) * idf[r]);
    }
  }
  SparseMatrix a;
  a.rows = kept.size();
  a.cols = n;
  a.row_start.push_back(0);
  for (const auto& row : rows) {
    for (const auto& [c, v] : row) {
      a.col.push_back(c);
      a.value.push_back(v);
    }
    a.row_start.push_back(a.col.size());
  }
  SvdOptions so;
  so.rank = options.dims;
  Svd svd = TruncatedSvd(a, so);
  const std::size_t k = svd.sigma.size();
  if (k == 0) return m;
  // Fixed signs (the largest component of each singular vector positive), so that the stored
  // vectors do not depend on the sketch's arbitrary signs.
  for (std::size_t c = 0; c < k; ++c) {
    double best = 0;
    for (std::size_t r = 0; r < svd.u.rows; ++r) {
      if (std::abs(svd.u.at(r, c)) > std::abs(best)) best = svd.u.at(r, c);
    }
    if (best < 0) {
      for (std::size_t r = 0; r < svd.u.rows; ++r) svd.u.at(r, c) = -svd.u.at(r, c);
    }
  }
  m.dims_ = k;
  m.sigma_ = svd.sigma;
  m.idf_ = std::move(idf);
  m.vectors_.resize(kept.size() * k);
  for (std::size_t r = 0; r < kept.size(); ++r) {
    m.words_.push_back(word_of[kept[r]]);
    m.index_.emplace(word_of[kept[r]], static_cast<std::uint32_t>(r));
    for (std::size_t c = 0; c < k; ++c) m.vectors_[r * k + c] = static_cast<float>(svd.u.at(r, c));
  }
  return m;
}

Model Model::FromRows(std::size_t dims, std::vector<std::string> words, std::vector<float> idf,
                      std::vector<float> vectors) {
  Model m;
  m.dims_ = dims;
  m.words_ = std::move(words);
  m.idf_ = std::move(idf);
  m.vectors_ = std::move(vectors);
  for (std::size_t r = 0; r < m.words_.size(); ++r) {
    m.index_.emplace(m.words_[r], static_cast<std::uint32_t>(r));
  }
  return m;
}

std::span<const float> Model::WordVector(std::string_view word) const {
  auto it = index_.find(std::string(word));
  if (it == index_.end()) return {};
  return std::span<const float>(vectors_).subspan(std::size_t{it->second} * dims_, dims_);
}

std::optional<std::uint32_t> Model::Row(std::string_view word) const {
  auto it = index_.find(std::string(word));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

std::vector<float> Model::Embed(std::span<const std::string> words) const {
  std::vector<std::uint32_t> rows;
  rows.reserve(words.size());
  for (const std::string& w : words) {
    if (auto it = index_.find(w); it != index_.end()) rows.push_back(it->second);
  }
  return EmbedRows(rows);
}

std::vector<float> Model::EmbedRows(std::span<const std::uint32_t> rows) const {
  std::map<std::uint32_t, std::uint32_t> tf;
  for (std::uint32_t r : rows) {
    if (r < words_.size()) ++tf[r];
  }
  if (tf.empty() || dims_ == 0) return {};
  std::vector<double> sum(dims_, 0.0);
  for (const auto& [r, count] : tf) {
    const double weight = (1 + std::log(static_cast<double>(count))) * idf_[r];
    const float* v = &vectors_[std::size_t{r} * dims_];
    for (std::size_t c = 0; c < dims_; ++c) sum[c] += weight * v[c];
  }
  double norm = 0;
  for (double x : sum) norm += x * x;
  if (!(norm > 0)) return {};
  norm = std::sqrt(norm);
  std::vector<float> out(dims_);
  for (std::size_t c = 0; c < dims_; ++c) out[c] = static_cast<float>(sum[c] / norm);
  return out;
}

double Dot(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return 0;
  float s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

Result<Learned> LearnFromStore(base::Database& db, const Options& options) {
  struct Fn {
    std::string target_id, path, span;
    std::vector<std::uint32_t> words;  // doc, name and body: what the model learns from
    std::vector<std::uint32_t> code;   // name and body without docstrings: the function's vector
  };
  std::vector<Fn> fns;
  Tokenizer tok;  // the words as ids in tok.vocabulary()
  {
    std::unordered_map<std::string, std::size_t> by_target;
    ASSIGN_OR_RETURN(
        base::Statement st,
        db.Prepare("SELECT s.target_id, c.path, s.span_sha256, s.name, c.doc, c.body FROM chunks "
                   "c JOIN symbols s ON s.id = c.symbol_id WHERE s.kind IN ('function', "
                   "'method') ORDER BY s.target_id, c.id"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      std::string target = st.ColumnText(0);
      auto [it, added] = by_target.emplace(target, fns.size());
      if (added) fns.push_back(Fn{std::move(target), st.ColumnText(1), st.ColumnText(2), {}, {}});
      Fn& f = fns[it->second];
      tok.AppendIds(st.ColumnTextView(3), f.words);
      tok.AppendIds(st.ColumnTextView(4), f.words);
      tok.AppendIds(st.ColumnTextView(5), f.words);
      tok.AppendIds(st.ColumnTextView(3), f.code);
      tok.AppendIds(WithoutDocstrings(st.ColumnTextView(5)), f.code);
    }
  }
  std::vector<std::vector<std::uint32_t>> contexts;
  contexts.reserve(fns.size());
  for (Fn& f : fns) contexts.push_back(std::move(f.words));

  Learned learned;
  learned.model = Model::Learn(contexts, tok.vocabulary(), options);
  contexts.clear();
  contexts.shrink_to_fit();
  learned.stats = LearnStats{fns.size(), learned.model.words(), learned.model.dims()};
  if (learned.model.dims() == 0) return learned;
  // Each vocabulary id's row in the model (words the model left out have none).
  constexpr std::uint32_t kNoRow = 0xffffffffu;
  std::vector<std::uint32_t> row_of(tok.vocabulary().size(), kNoRow);
  for (std::size_t id = 0; id < row_of.size(); ++id) {
    if (std::optional<std::uint32_t> r = learned.model.Row(tok.vocabulary()[id])) row_of[id] = *r;
  }
  learned.functions.reserve(fns.size());
  std::vector<std::uint32_t> rows;
  for (Fn& f : fns) {
    rows.clear();
    for (std::uint32_t id : f.code) {
      if (row_of[id] != kNoRow) rows.push_back(row_of[id]);
    }
    std::vector<float> v = learned.model.EmbedRows(rows);
    if (v.empty()) continue;
    learned.functions.push_back(
        embed::Stored{std::move(f.target_id), std::move(f.path), std::move(f.span), std::move(v)});
  }
  return learned;
}

Result<LearnStats> Save(base::Database& db, Learned learned, std::string_view run_id,
                        const Options& options) {
  const Model& model = learned.model;
  // The old model goes first, so a failure part-way leaves no model rather than a mixed one.
  RETURN_IF_ERROR(EnsureWordsTable(db));
  RETURN_IF_ERROR(embed::EnsureTable(db));
  {
    ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
    ASSIGN_OR_RETURN(base::Statement del_id, db.Prepare("DELETE FROM meta WHERE key = ?1"));
    RETURN_IF_ERROR(del_id.Bind(1, kModelIdKey));
    RETURN_IF_ERROR(del_id.Step().status());
    ASSIGN_OR_RETURN(base::Statement del_words,
                     db.Prepare("DELETE FROM semvec_words WHERE model = ?1"));
    RETURN_IF_ERROR(del_words.Bind(1, kModelName));
    RETURN_IF_ERROR(del_words.Step().status());
    ASSIGN_OR_RETURN(base::Statement del_fns,
                     db.Prepare("DELETE FROM embeddings WHERE model = ?1"));
    RETURN_IF_ERROR(del_fns.Bind(1, kModelName));
    RETURN_IF_ERROR(del_fns.Step().status());
    if (model.dims() > 0) {
      ASSIGN_OR_RETURN(base::Statement ins,
                       db.Prepare("INSERT INTO semvec_words(model, word, idf, dim, vector) "
                                  "VALUES (?1, ?2, ?3, ?4, ?5)"));
      std::vector<std::uint8_t> bytes;
      for (std::size_t r = 0; r < model.words(); ++r) {
        ins.Reset();
        RETURN_IF_ERROR(ins.Bind(1, kModelName));
        RETURN_IF_ERROR(ins.Bind(2, std::string_view(model.word_list()[r])));
        RETURN_IF_ERROR(ins.Bind(3, static_cast<double>(model.idf()[r])));
        RETURN_IF_ERROR(ins.Bind(4, static_cast<std::int64_t>(model.dims())));
        ToBytes(std::span<const float>(model.vectors()).subspan(r * model.dims(), model.dims()),
                bytes);
        RETURN_IF_ERROR(ins.Bind(5, std::span<const std::uint8_t>(bytes)));
        RETURN_IF_ERROR(ins.Step().status());
      }
    }
    RETURN_IF_ERROR(tx.Commit());
  }
  if (model.dims() == 0) return learned.stats;
  RETURN_IF_ERROR(embed::Save(db, kModelName, learned.functions));
  ASSIGN_OR_RETURN(base::Statement put,
                   db.Prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)"));
  RETURN_IF_ERROR(put.Bind(1, kModelIdKey));
  RETURN_IF_ERROR(put.Bind(2, std::string_view(ModelId(run_id, options))));
  RETURN_IF_ERROR(put.Step().status());
  return learned.stats;
}

Result<LearnStats> LearnAndSave(base::Database& db, std::string_view run_id,
                                const Options& options) {
  ASSIGN_OR_RETURN(Learned learned, LearnFromStore(db, options));
  return Save(db, std::move(learned), run_id, options);
}

Result<std::size_t> FoldIn(base::Database& db, std::span<const std::string> paths,
                           std::string_view run_id) {
  ASSIGN_OR_RETURN(std::string model_id, MetaValue(db, kModelIdKey));
  ASSIGN_OR_RETURN(std::shared_ptr<const Index> index, Load(db));
  if (index == nullptr || index->model().dims() == 0) return std::size_t{0};
  ASSIGN_OR_RETURN(
      base::Statement st,
      db.Prepare("SELECT s.target_id, c.path, s.span_sha256, s.name, c.body FROM chunks c JOIN "
                 "symbols s ON s.id = c.symbol_id WHERE s.kind IN ('function', 'method') AND "
                 "(c.path = ?1 OR (c.path >= ?1 || '/' AND c.path < ?1 || '0')) ORDER BY c.id"));
  Tokenizer tok;
  std::vector<embed::Stored> rows;
  std::unordered_map<std::string, std::size_t> by_target;
  std::vector<std::vector<std::string>> code;
  for (const std::string& path : paths) {
    st.Reset();
    RETURN_IF_ERROR(st.Bind(1, std::string_view(path)));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      std::string target = st.ColumnText(0);
      auto [it, added] = by_target.emplace(target, rows.size());
      if (added) {
        rows.push_back(embed::Stored{std::move(target), st.ColumnText(1), st.ColumnText(2), {}});
        code.emplace_back();
      }
      tok.Append(st.ColumnTextView(3), code[it->second]);
      tok.Append(WithoutDocstrings(st.ColumnTextView(4)), code[it->second]);
    }
  }
  std::vector<embed::Stored> kept;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].vector = index->model().Embed(code[i]);
    if (!rows[i].vector.empty()) kept.push_back(std::move(rows[i]));
  }
  // Save also drops the vectors of functions the index no longer holds.
  RETURN_IF_ERROR(embed::Save(db, kModelName, kept));
  // A new id (same options tail), so that processes holding the old vectors load them again.
  const std::size_t colon = model_id.find(":lsa");
  const std::string tail = colon == std::string::npos ? std::string() : model_id.substr(colon);
  ASSIGN_OR_RETURN(base::Statement put,
                   db.Prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)"));
  RETURN_IF_ERROR(put.Bind(1, kModelIdKey));
  RETURN_IF_ERROR(put.Bind(2, std::string_view(fmt::format("{}{}", run_id, tail))));
  RETURN_IF_ERROR(put.Step().status());
  return kept.size();
}

Result<std::string> StoredModelId(base::Database& db) { return MetaValue(db, kModelIdKey); }

bool ModelIdMatches(std::string_view model_id, const Options& options) {
  const std::string tail = fmt::format(":lsa2:d{}", options.dims);
  return model_id.size() > tail.size() && model_id.substr(model_id.size() - tail.size()) == tail;
}

Index::Index(Model model, std::vector<Function> functions, std::vector<float> vectors)
    : model_(std::move(model)), functions_(std::move(functions)), vectors_(std::move(vectors)) {
  for (std::size_t i = 0; i < functions_.size(); ++i)
    by_target_.emplace(functions_[i].target_id, i);
}

double Index::Similarity(std::span<const float> query, std::size_t i) const {
  const std::size_t d = model_.dims();
  if (query.size() != d || i >= functions_.size()) return 0;
  return Dot(query, std::span<const float>(vectors_).subspan(i * d, d));
}

double Index::Similarity(std::span<const float> query, const std::string& target_id) const {
  auto it = by_target_.find(target_id);
  return it == by_target_.end() ? 0 : Similarity(query, it->second);
}

std::vector<std::pair<double, std::size_t>> Index::Nearest(std::span<const float> query,
                                                           std::size_t k) const {
  std::vector<std::pair<double, std::size_t>> order;
  if (query.size() != model_.dims()) return order;
  for (std::size_t i = 0; i < functions_.size(); ++i) {
    const double cos = Similarity(query, i);
    if (cos > 0) order.emplace_back(cos, i);
  }
  const std::size_t top = std::min(order.size(), k);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                    [&](const auto& a, const auto& b) {
                      return a.first > b.first ||
                             (a.first == b.first &&
                              functions_[a.second].target_id < functions_[b.second].target_id);
                    });
  order.resize(top);
  return order;
}

Result<std::shared_ptr<const Index>> Load(base::Database& db) {
  static std::mutex mu;
  static auto* cache = new std::map<std::string, std::shared_ptr<const Index>>();
  ASSIGN_OR_RETURN(std::string model_id, MetaValue(db, kModelIdKey));
  if (model_id.empty()) return std::shared_ptr<const Index>();
  std::string file;
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT file FROM pragma_database_list WHERE name = 'main'"));
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (row) file = st.ColumnText(0);
  }
  if (file.empty()) file = fmt::format("memory:{}", static_cast<const void*>(&db));
  const std::string key = file + "\n" + model_id;
  {
    std::lock_guard lock(mu);
    if (auto it = cache->find(key); it != cache->end()) return it->second;
  }
  ASSIGN_OR_RETURN(bool exists, WordsTableExists(db));
  if (!exists) return std::shared_ptr<const Index>();
  std::vector<std::string> words;
  std::vector<float> idf, wv;
  std::size_t dims = 0;
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT word, idf, dim, vector FROM semvec_words WHERE model = ?1 "
                                "ORDER BY word"));
    RETURN_IF_ERROR(st.Bind(1, kModelName));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      const auto dim = static_cast<std::size_t>(st.ColumnInt64(2));
      std::string_view bytes = st.ColumnBlobView(3);
      if (dims == 0) dims = dim;
      if (dim != dims || dim == 0 || bytes.size() != dim * sizeof(float)) {
        return Status::Malformed(
            fmt::format("semvec_words: vector of {} bytes for {} dimensions", bytes.size(), dim));
      }
      words.push_back(st.ColumnText(0));
      idf.push_back(static_cast<float>(st.ColumnDouble(1)));
      const std::size_t at = wv.size();
      wv.resize(at + dim);
      std::memcpy(wv.data() + at, bytes.data(), bytes.size());
    }
  }
  ASSIGN_OR_RETURN(std::vector<embed::Stored> stored, embed::Load(db, kModelName));
  std::sort(stored.begin(), stored.end(), [](const embed::Stored& a, const embed::Stored& b) {
    return a.target_id < b.target_id;
  });
  std::vector<Index::Function> fns;
  std::vector<float> fv;
  fns.reserve(stored.size());
  fv.reserve(stored.size() * dims);
  for (embed::Stored& s : stored) {
    if (s.vector.size() != dims) continue;
    fns.push_back({std::move(s.target_id), std::move(s.path)});
    fv.insert(fv.end(), s.vector.begin(), s.vector.end());
  }
  auto index = std::make_shared<const Index>(
      Model::FromRows(dims, std::move(words), std::move(idf), std::move(wv)), std::move(fns),
      std::move(fv));
  std::lock_guard lock(mu);
  for (auto it = cache->begin(); it != cache->end();) {
    it = it->first.rfind(file + "\n", 0) == 0 ? cache->erase(it) : std::next(it);
  }
  (*cache)[key] = index;
  return std::shared_ptr<const Index>(index);
}

}  // namespace trove::librarian::semvec
