// Lexical search over the store's FTS5 tables (docs/librarian.md §6.8, §6.8).
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/sqlite.h"
#include "librarian/extract/identifier.h"
#include "librarian/store/statement_cache.h"
#include "librarian/store/store.h"

namespace trove::librarian::store {
namespace {

// A short English stop-word list (docs/librarian.md §6.8); code words such as "get" or "set" stay.
constexpr std::string_view kStopWords[] = {
    "a",   "an",   "and",  "are",   "as",    "at",    "be",   "by",    "can",  "do",    "does",
    "for", "from", "how",  "i",     "if",    "in",    "into", "is",    "it",   "its",   "of",
    "on",  "or",   "so",   "that",  "the",   "their", "then", "there", "this", "to",    "was",
    "we",  "what", "when", "where", "which", "who",   "why",  "will",  "with", "would", "you",
};

// Wraps `term` as an FTS5 string (double quotes, inner quotes doubled).
std::string Quote(std::string_view term) {
  std::string out = "\"";
  for (char c : term) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// FTS5's bm25() (SQLite 3.40 ext/fts5/fts5_aux.c, fts5Bm25Function), with the same
// arithmetic in the same order, so that scores are bit-identical; only a row's token count
// comes from the Store's table (Store::LoadRowTokens) instead of a read of chunk_fts_docsize
// per matching row (about a fifth of SearchChunks' time). Rows not in the table fall back to
// xColumnSize, as bm25() does.
struct Bm25Data {
  int phrases = 0;
  double avgdl = 0;
  double* idf = nullptr;
  double* freq = nullptr;
};

int CountHits(const Fts5ExtensionApi* /*api*/, Fts5Context* /*fts*/, void* user) {
  ++*static_cast<sqlite3_int64*>(user);
  return SQLITE_OK;
}

int Bm25GetData(const Fts5ExtensionApi* api, Fts5Context* fts, Bm25Data** out) {
  int rc = SQLITE_OK;
  auto* p = static_cast<Bm25Data*>(api->xGetAuxdata(fts, 0));
  if (p == nullptr) {
    const int phrases = api->xPhraseCount(fts);
    const sqlite3_int64 bytes =
        static_cast<sqlite3_int64>(sizeof(Bm25Data) + phrases * 2 * sizeof(double));
    void* mem = sqlite3_malloc64(static_cast<sqlite3_uint64>(bytes));
    if (mem == nullptr) return SQLITE_NOMEM;
    std::memset(mem, 0, static_cast<std::size_t>(bytes));
    p = static_cast<Bm25Data*>(mem);
    p->phrases = phrases;
    p->idf = reinterpret_cast<double*>(static_cast<char*>(mem) + sizeof(Bm25Data));
    p->freq = &p->idf[phrases];
    sqlite3_int64 rows = 0;
    sqlite3_int64 tokens = 0;
    rc = api->xRowCount(fts, &rows);
    if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
    if (rc == SQLITE_OK) p->avgdl = static_cast<double>(tokens) / static_cast<double>(rows);
    for (int i = 0; rc == SQLITE_OK && i < phrases; ++i) {
      sqlite3_int64 hits = 0;
      rc = api->xQueryPhrase(fts, i, &hits, CountHits);
      if (rc == SQLITE_OK) {
        double idf =
            std::log((static_cast<double>(rows - hits) + 0.5) / (static_cast<double>(hits) + 0.5));
        if (idf <= 0.0) idf = 1e-6;
        p->idf[i] = idf;
      }
    }
    if (rc != SQLITE_OK) {
      sqlite3_free(p);
    } else {
      rc = api->xSetAuxdata(fts, p, sqlite3_free);
    }
    if (rc != SQLITE_OK) p = nullptr;
  }
  *out = p;
  return rc;
}

void TroveBm25(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int nval,
               sqlite3_value** vals) {
  const double k1 = 1.2;
  const double b = 0.75;
  double score = 0.0;
  Bm25Data* data = nullptr;
  int insts = 0;
  double d = 0.0;
  int rc = Bm25GetData(api, fts, &data);
  if (rc == SQLITE_OK) {
    std::memset(data->freq, 0, sizeof(double) * static_cast<std::size_t>(data->phrases));
    rc = api->xInstCount(fts, &insts);
  }
  for (int i = 0; rc == SQLITE_OK && i < insts; ++i) {
    int ip = 0;
    int ic = 0;
    int io = 0;
    rc = api->xInst(fts, i, &ip, &ic, &io);
    if (rc == SQLITE_OK) {
      const double w = (nval > ic) ? sqlite3_value_double(vals[ic]) : 1.0;
      data->freq[ip] += w;
    }
  }
  if (rc == SQLITE_OK) {
    const auto* tokens = static_cast<const std::vector<std::int32_t>*>(api->xUserData(fts));
    const sqlite3_int64 rowid = api->xRowid(fts);
    int n = -1;
    if (rowid >= 0 && static_cast<std::uint64_t>(rowid) < tokens->size()) {
      n = (*tokens)[static_cast<std::size_t>(rowid)];
    }
    if (n < 0) rc = api->xColumnSize(fts, -1, &n);
    d = static_cast<double>(n);
  }
  if (rc == SQLITE_OK) {
    for (int i = 0; i < data->phrases; ++i) {
      score += data->idf[i] * ((data->freq[i] * (k1 + 1.0)) /
                               (data->freq[i] + k1 * (1 - b + b * d / data->avgdl)));
    }
    sqlite3_result_double(ctx, -1.0 * score);
  } else {
    sqlite3_result_error_code(ctx, rc);
  }
}

// `trove_freqs(chunk_fts, w1, ..., w5)`: the row's occurrences of each query phrase, each
// weighted by its column's weight, as a blob of one double per phrase (SearchFiles).
void TroveFreqs(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int nval,
                sqlite3_value** vals) {
  const int phrases = api->xPhraseCount(fts);
  std::vector<double> freq(static_cast<std::size_t>(std::max(0, phrases)), 0.0);
  int insts = 0;
  int rc = api->xInstCount(fts, &insts);
  for (int i = 0; rc == SQLITE_OK && i < insts; ++i) {
    int ip = 0;
    int ic = 0;
    int io = 0;
    rc = api->xInst(fts, i, &ip, &ic, &io);
    if (rc == SQLITE_OK && ip >= 0 && ip < phrases) {
      freq[static_cast<std::size_t>(ip)] += (nval > ic) ? sqlite3_value_double(vals[ic]) : 1.0;
    }
  }
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  sqlite3_result_blob(ctx, freq.data(), static_cast<int>(freq.size() * sizeof(double)),
                      SQLITE_TRANSIENT);
}

// Decodes one SQLite varint of at most `n` bytes; returns its length, 0 when truncated.
std::size_t GetVarint(const unsigned char* p, std::size_t n, std::uint64_t* v) {
  std::uint64_t x = 0;
  for (std::size_t i = 0; i < 8 && i < n; ++i) {
    x = (x << 7) | (p[i] & 0x7f);
    if ((p[i] & 0x80) == 0) {
      *v = x;
      return i + 1;
    }
  }
  if (n < 9) return 0;
  *v = (x << 8) | p[8];
  return 9;
}

// The connection's FTS5 API (version 2 or later), to register `function` with.
Result<fts5_api*> Fts5Api(sqlite3* db, std::string_view function) {
  fts5_api* api = nullptr;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, nullptr) == SQLITE_OK) {
    sqlite3_bind_pointer(st, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
    sqlite3_step(st);
  }
  sqlite3_finalize(st);
  if (api == nullptr || api->iVersion < 2) {
    return Status::Internal(fmt::format("store: no FTS5 API on this connection for {}", function));
  }
  return api;
}

}  // namespace

Status Store::LoadRowTokens() {
  if (!bm25_registered_) {
    ASSIGN_OR_RETURN(fts5_api * api, Fts5Api(db_->handle(), "trove_bm25"));
    if (api->xCreateFunction(api, "trove_bm25", &row_tokens_, TroveBm25, nullptr) != SQLITE_OK) {
      return Status::Internal("store: registering trove_bm25 failed");
    }
    bm25_registered_ = true;
  }
  if (row_tokens_loaded_) return Status::Ok();
  row_tokens_.clear();
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get("SELECT id, sz FROM chunk_fts_docsize ORDER BY id"));
  base::Statement& st = *scoped;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const std::int64_t id = st.ColumnInt64(0);
    if (id < 0 || id > (std::int64_t{1} << 31)) continue;  // left to xColumnSize
    const std::string sz = st.ColumnBlob(1);
    // Five columns' counts; anything else is left to xColumnSize (which reports it).
    const auto* p = reinterpret_cast<const unsigned char*>(sz.data());
    std::size_t off = 0;
    int total = 0;
    bool ok = true;
    for (int col = 0; col < 5 && ok; ++col) {
      std::uint64_t v = 0;
      const std::size_t len = off < sz.size() ? GetVarint(p + off, sz.size() - off, &v) : 0;
      ok = len != 0 && v <= 0x7fffffff;
      off += len;
      total += static_cast<int>(static_cast<std::uint32_t>(v));
    }
    if (!ok || off != sz.size() || total < 0) continue;
    if (row_tokens_.size() <= static_cast<std::size_t>(id)) {
      row_tokens_.resize(static_cast<std::size_t>(id) + 1, -1);
    }
    row_tokens_[static_cast<std::size_t>(id)] = total;
  }
  row_tokens_loaded_ = true;
  return Status::Ok();
}

namespace {

// The query terms of `text` (BuildMatchQuery's words, unquoted), in order, without repeats.
std::vector<std::string> MatchTerms(std::string_view text) {
  std::vector<std::string> terms;
  std::unordered_set<std::string> seen;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) {
      ++i;
    }
    std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n' &&
           text[i] != '\r') {
      ++i;
    }
    if (i == start) break;
    // Each alphanumeric run of the word is an identifier: whole and pieces.
    for (const std::string& w : extract::IndexWords(text.substr(start, i - start))) {
      if (IsStopWord(w) || !seen.insert(w).second) continue;
      terms.push_back(w);
    }
  }
  return terms;
}

std::string JoinTerms(const std::vector<std::string>& terms) {
  std::string out;
  for (const std::string& t : terms) {
    if (!out.empty()) out += " OR ";
    out += Quote(t);
  }
  return out;
}

}  // namespace

bool IsStopWord(std::string_view w) {
  for (std::string_view s : kStopWords) {
    if (s == w) return true;
  }
  return false;
}

std::string BuildMatchQuery(std::string_view text) { return JoinTerms(MatchTerms(text)); }

Result<std::string> Store::RankedMatchQuery(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<std::string> terms, RankedTerms(text));
  return JoinTerms(terms);
}

Status Store::RefreshTermCaches() {
  // Inside a ReadSnapshot the store's version is checked once (RefreshNameCaches).
  std::int64_t data_version = df_data_version_;
  if (snapshot_ == 0 || df_checked_in_ != snapshot_) {
    ASSIGN_OR_RETURN(internal::ScopedStatement version, stmts_->Get("PRAGMA data_version"));
    ASSIGN_OR_RETURN(bool has_version, version->Step());
    data_version = has_version ? version->ColumnInt64(0) : -1;
    df_checked_in_ = snapshot_;
  }
  if (data_version != df_data_version_ || writes_ != df_writes_) {
    doc_freq_.clear();
    row_tokens_loaded_ = false;
    chunk_files_loaded_ = false;
    term_files_.clear();
    term_file_entries_ = 0;
    ASSIGN_OR_RETURN(internal::ScopedStatement count, stmts_->Get("SELECT count(*) FROM chunks"));
    ASSIGN_OR_RETURN(bool row, count->Step());
    df_rows_ = row ? count->ColumnInt64(0) : 0;
    df_data_version_ = data_version;
    df_writes_ = writes_;
  }
  return Status::Ok();
}

Result<std::vector<std::string>> Store::RankedTerms(std::string_view text) {
  std::vector<std::string> terms = MatchTerms(text);
  if (terms.size() < 2) return terms;
  // FTS5's bm25() gives a term in at least half of all rows the IDF 1e-6 (log((N - n + 0.5) /
  // (n + 0.5)) <= 0 is clamped), so such a term adds at most ~5e-5 to any score, yet every
  // row holding it matches and is scored: "self" and "return" made 16,000 of 17,700 chunks of
  // the Python set match (21 ms against 1.6 ms without them). Those terms are left out; the
  // ranking of the rows that match the others is unchanged up to that 5e-5, and rows that
  // matched only them (ranked last, by rowid) are no longer listed. When every term is of
  // that kind the query keeps them all. Document frequencies are cached per store until the
  // index changes (decision 0023).
  RETURN_IF_ERROR(RefreshTermCaches());
  if (!vocab_) {
    RETURN_IF_ERROR(db_->Exec(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunk_vocab USING fts5vocab(main, chunk_fts, "
        "row)"));
    vocab_ = true;
  }
  std::vector<std::string> kept;
  for (const std::string& t : terms) {
    auto it = doc_freq_.find(t);
    if (it == doc_freq_.end()) {
      ASSIGN_OR_RETURN(internal::ScopedStatement st,
                       stmts_->Get("SELECT doc FROM temp.chunk_vocab WHERE term = ?1"));
      RETURN_IF_ERROR(st->Bind(1, std::string_view(t)));
      ASSIGN_OR_RETURN(bool row, st->Step());
      it = doc_freq_.emplace(t, row ? st->ColumnInt64(0) : 0).first;
    }
    const double n = static_cast<double>(it->second);
    const double rows = static_cast<double>(df_rows_);
    if (std::log((rows - n + 0.5) / (n + 0.5)) > 0) kept.push_back(t);
  }
  return kept.empty() ? terms : kept;
}

namespace {

// Reads a SearchChunks row: c.id, f.path, c.kind, c.name, c.qualified_name, target id,
// c.start_line, c.end_line, rank.
ChunkHit ReadHit(base::Statement& st) {
  ChunkHit h;
  h.chunk_id = st.ColumnInt64(0);
  h.path = st.ColumnText(1);
  h.kind = st.ColumnText(2);
  h.name = st.ColumnText(3);
  h.qualified_name = st.ColumnText(4);
  h.target_id = st.ColumnText(5);
  h.start_line = static_cast<std::uint32_t>(st.ColumnInt64(6));
  h.end_line = static_cast<std::uint32_t>(st.ColumnInt64(7));
  h.score = -st.ColumnDouble(8);
  return h;
}

// SearchChunks' order: best score first; equal scores by path, then lines, kind and names, so
// the order does not depend on chunk ids (which a parallel bootstrap assigns in no fixed
// order); the id decides only between otherwise identical chunks.
bool HitBefore(const ChunkHit& a, const ChunkHit& b) {
  if (a.score != b.score) return a.score > b.score;
  if (int c = a.path.compare(b.path); c != 0) return c < 0;
  if (a.start_line != b.start_line) return a.start_line < b.start_line;
  if (a.end_line != b.end_line) return a.end_line < b.end_line;
  if (int c = a.kind.compare(b.kind); c != 0) return c < 0;
  if (int c = a.qualified_name.compare(b.qualified_name); c != 0) return c < 0;
  if (int c = a.name.compare(b.name); c != 0) return c < 0;
  return a.chunk_id < b.chunk_id;
}

}  // namespace

Result<std::vector<ChunkHit>> Store::SearchChunks(std::string_view query,
                                                  const SearchOptions& options) {
  std::vector<ChunkHit> out;
  if (options.limit == 0) return out;
  // One read transaction for the cache checks and the search (inactive inside a caller's).
  ASSIGN_OR_RETURN(ReadSnapshot snapshot, BeginRead());
  ASSIGN_OR_RETURN(std::string match, RankedMatchQuery(query));
  if (match.empty()) return out;
  RETURN_IF_ERROR(LoadRowTokens());
  // FTS5's entries (id, rank) as `h`, ranked by ?1-?5 for the MATCH ?6, joined to the columns
  // ReadHit reads; `top` chooses the entries before the join, `where` filters after it.
  const auto read_hits = [&](std::string_view top, std::string_view where, auto bound) -> Status {
    const std::string sql = fmt::format(
        "SELECT c.id, f.path, c.kind, c.name, c.qualified_name, coalesce(s.target_id, ''), "
        "c.start_line, c.end_line, h.rank FROM (SELECT rowid AS id, "
        "trove_bm25(chunk_fts, ?1, ?2, ?3, ?4, ?5) AS rank FROM chunk_fts WHERE chunk_fts MATCH "
        "?6{}) h JOIN chunks c ON c.id = h.id JOIN files f ON f.id = c.file_id "
        "LEFT JOIN symbols s ON s.id = c.symbol_id{}",
        top, where);
    ASSIGN_OR_RETURN(internal::ScopedStatement scoped, stmts_->Get(sql));
    base::Statement& st = *scoped;
    const std::array<double, 5> weights = options.columns.InColumnOrder();
    for (int i = 0; i < 5; ++i) RETURN_IF_ERROR(st.Bind(i + 1, weights[i]));
    RETURN_IF_ERROR(st.Bind(6, std::string_view(match)));
    RETURN_IF_ERROR(st.Bind(7, bound));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) return Status::Ok();
      out.push_back(ReadHit(st));
    }
  };
  // The best `limit` + 1 entries are chosen inside FTS5 before any join, so only they are
  // joined to their chunk, file and symbol (joining every match first and then sorting cost
  // twice the time). The extra entry tells whether entries tied with the last one kept were
  // cut off. One more than `limit` (a negative LIMIT is none).
  const std::int64_t fetch =
      options.limit >= static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())
          ? -1
          : static_cast<std::int64_t>(options.limit) + 1;
  RETURN_IF_ERROR(read_hits(" ORDER BY rank LIMIT ?7", "", fetch));
  std::sort(out.begin(), out.end(), HitBefore);
  if (out.size() <= options.limit) return out;
  if (out[options.limit].score != out[options.limit - 1].score) {
    out.resize(options.limit);
    return out;
  }
  // The entry after the last one kept has its score: which of the tied entries FTS5 kept was
  // its choice (by rowid). Read every entry scoring at least as well, then cut in our order.
  // Rare: equal scores need equal term counts and lengths, e.g. copies of a function.
  const double worst = out[options.limit - 1].score;
  out.clear();
  RETURN_IF_ERROR(read_hits("", " WHERE h.rank <= ?7", -worst));
  std::sort(out.begin(), out.end(), HitBefore);
  if (out.size() > options.limit) out.resize(options.limit);
  return out;
}

Result<std::vector<ChunkHit>> Store::SearchSubstring(std::string_view text, std::size_t limit) {
  if (!trigram_) return Status::Unsupported("substring search needs the trigram index");
  std::vector<ChunkHit> out;
  if (text.size() < 3 || limit == 0) return out;  // trigrams need three characters
  ASSIGN_OR_RETURN(
      internal::ScopedStatement scoped,
      stmts_->Get("SELECT c.id, f.path, c.kind, c.name, c.qualified_name, "
                  "coalesce(s.target_id, ''), c.start_line, c.end_line, bm25(chunk_tri) AS rank "
                  "FROM chunk_tri JOIN chunks c ON c.id = chunk_tri.rowid "
                  "JOIN files f ON f.id = c.file_id LEFT JOIN symbols s ON s.id = c.symbol_id "
                  "WHERE chunk_tri MATCH ?1 ORDER BY rank, f.path, c.start_line, c.end_line, c.id "
                  "LIMIT ?2"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, std::string_view(Quote(text))));
  RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(limit)));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(ReadHit(st));
  }
}

Status Store::LoadChunkFiles() {
  if (!freqs_registered_) {
    ASSIGN_OR_RETURN(fts5_api * api, Fts5Api(db_->handle(), "trove_freqs"));
    if (api->xCreateFunction(api, "trove_freqs", nullptr, TroveFreqs, nullptr) != SQLITE_OK) {
      return Status::Internal("store: registering trove_freqs failed");
    }
    freqs_registered_ = true;
  }
  if (chunk_files_loaded_) return Status::Ok();
  RETURN_IF_ERROR(LoadRowTokens());
  chunk_file_.clear();
  file_tokens_.clear();
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get("SELECT id, file_id FROM chunks ORDER BY id"));
  base::Statement& st = *scoped;
  double total = 0;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const std::int64_t id = st.ColumnInt64(0);
    if (id < 0 || id > (std::int64_t{1} << 31)) continue;  // such rows count for no file
    const auto i = static_cast<std::size_t>(id);
    if (chunk_file_.size() <= i) chunk_file_.resize(i + 1, -1);
    const std::int64_t file = st.ColumnInt64(1);
    chunk_file_[i] = file;
    const double tokens = i < row_tokens_.size() ? std::max(0, row_tokens_[i]) : 0;
    file_tokens_[file] += tokens;
    total += tokens;
  }
  file_avg_tokens_ = file_tokens_.empty() ? 0 : total / static_cast<double>(file_tokens_.size());
  chunk_files_loaded_ = true;
  return Status::Ok();
}

Result<std::vector<FileHit>> Store::SearchFiles(std::string_view query,
                                                const FileSearchOptions& options) {
  std::vector<FileHit> out;
  if (options.limit == 0) return out;
  ASSIGN_OR_RETURN(ReadSnapshot snapshot, BeginRead());
  RETURN_IF_ERROR(RefreshTermCaches());  // RankedTerms skips it for fewer than two terms
  ASSIGN_OR_RETURN(std::vector<std::string> terms, RankedTerms(query));
  if (terms.empty()) return out;
  RETURN_IF_ERROR(LoadChunkFiles());
  const std::array<double, 5> weights = options.columns.InColumnOrder();
  if (weights != term_file_weights_) {
    term_files_.clear();
    term_file_entries_ = 0;
    term_file_weights_ = weights;
  }
  // Per file: the weighted occurrences of each term over all its chunks. A term's files are
  // read once per store version (one FTS5 scan of its rows) and kept: the query's common
  // words, whose rows are many, recur across queries.
  const std::size_t phrases = terms.size();
  std::unordered_map<std::int64_t, std::vector<double>> freqs;
  for (std::size_t p = 0; p < phrases; ++p) {
    auto cached = term_files_.find(terms[p]);
    if (cached == term_files_.end()) {
      std::unordered_map<std::int64_t, double> per_file;
      ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                       stmts_->Get("SELECT rowid, trove_freqs(chunk_fts, ?1, ?2, ?3, ?4, ?5) "
                                   "FROM chunk_fts WHERE chunk_fts MATCH ?6"));
      base::Statement& st = *scoped;
      for (int i = 0; i < 5; ++i) RETURN_IF_ERROR(st.Bind(i + 1, weights[i]));
      RETURN_IF_ERROR(st.Bind(6, std::string_view(Quote(terms[p]))));
      for (;;) {
        ASSIGN_OR_RETURN(bool row, st.Step());
        if (!row) break;
        const std::int64_t id = st.ColumnInt64(0);
        if (id < 0 || static_cast<std::uint64_t>(id) >= chunk_file_.size()) continue;
        const std::int64_t file = chunk_file_[static_cast<std::size_t>(id)];
        const std::string_view blob = st.ColumnBlobView(1);
        if (file < 0 || blob.size() < sizeof(double)) continue;
        double v = 0;
        std::memcpy(&v, blob.data(), sizeof(double));
        if (std::isfinite(v) && v > 0) per_file[file] += v;
      }
      std::vector<std::pair<std::int64_t, double>> list(per_file.begin(), per_file.end());
      std::sort(list.begin(), list.end());
      if (term_file_entries_ + list.size() > kMaxTermFileEntries) {
        term_files_.clear();
        term_file_entries_ = 0;
      }
      term_file_entries_ += list.size();
      cached = term_files_.emplace(terms[p], std::move(list)).first;
    }
    for (const auto& [file, v] : cached->second) {
      std::vector<double>& f = freqs[file];
      if (f.empty()) f.resize(phrases, 0.0);
      f[p] += v;
    }
  }
  if (freqs.empty()) return out;
  // BM25 with files as documents: a phrase's IDF counts the files that hold it.
  std::vector<double> idf(phrases, 0.0);
  const double files = static_cast<double>(file_tokens_.size());
  for (std::size_t p = 0; p < phrases; ++p) {
    double n = 0;
    for (const auto& [file, f] : freqs) n += p < f.size() && f[p] > 0 ? 1 : 0;
    const double v = std::log((files - n + 0.5) / (n + 0.5));
    idf[p] = v > 0 ? v : 1e-6;
  }
  struct Scored {
    std::int64_t file;
    double score;
    std::size_t terms;
  };
  std::vector<Scored> scored;
  scored.reserve(freqs.size());
  const double avg = file_avg_tokens_ > 0 ? file_avg_tokens_ : 1;
  for (const auto& [file, f] : freqs) {
    auto len = file_tokens_.find(file);
    const double d = len == file_tokens_.end() ? avg : len->second;
    const double norm = options.k1 * (1 - options.b + options.b * d / avg);
    double score = 0;
    std::size_t matched = 0;
    for (std::size_t p = 0; p < f.size(); ++p) {
      if (!(f[p] > 0)) continue;
      ++matched;
      score += idf[p] * (f[p] * (options.k1 + 1)) / (f[p] + norm);
    }
    scored.push_back(Scored{file, score, matched});
  }
  // Best first; ties by file id here, by path below (ids are not stable across bootstraps,
  // so the cut keeps every file tied with the last one and the paths decide).
  std::sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    return a.score > b.score || (a.score == b.score && a.file < b.file);
  });
  std::size_t keep = std::min(options.limit, scored.size());
  while (keep < scored.size() && scored[keep].score == scored[keep - 1].score) ++keep;
  ASSIGN_OR_RETURN(internal::ScopedStatement path_st,
                   stmts_->Get("SELECT path FROM files WHERE id = ?1"));
  for (std::size_t i = 0; i < keep; ++i) {
    path_st->Reset();
    RETURN_IF_ERROR(path_st->Bind(1, scored[i].file));
    ASSIGN_OR_RETURN(bool row, path_st->Step());
    if (!row) continue;
    out.push_back(FileHit{path_st->ColumnText(0), scored[i].score, scored[i].terms});
  }
  std::sort(out.begin(), out.end(), [](const FileHit& a, const FileHit& b) {
    return a.score > b.score || (a.score == b.score && a.path < b.path);
  });
  if (out.size() > options.limit) out.resize(options.limit);
  return out;
}

Result<std::vector<PathHit>> Store::SearchPaths(std::string_view query, std::size_t limit) {
  std::vector<PathHit> out;
  std::string match = BuildMatchQuery(query);
  if (match.empty() || limit == 0) return out;
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get("SELECT path, bm25(path_fts, 2.0, 1.0) AS rank FROM path_fts "
                               "WHERE path_fts MATCH ?1 ORDER BY rank, path LIMIT ?2"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, std::string_view(match)));
  RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(limit)));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(PathHit{st.ColumnText(0), -st.ColumnDouble(1)});
  }
}

}  // namespace trove::librarian::store
