// Lexical search over the store's FTS5 tables (spec §6.5, §6.6).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/sqlite.h"
#include "librarian/extract/identifier.h"
#include "librarian/store/statement_cache.h"
#include "librarian/store/store.h"

namespace trove::librarian::store {
namespace {

// A short English stop-word list (spec §6.6); code words such as "get" or "set" stay.
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

}  // namespace

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
  std::vector<std::string> terms = MatchTerms(text);
  if (terms.size() < 2) return JoinTerms(terms);
  // FTS5's bm25() gives a term in at least half of all rows the IDF 1e-6 (log((N - n + 0.5) /
  // (n + 0.5)) <= 0 is clamped), so such a term adds at most ~5e-5 to any score, yet every
  // row holding it matches and is scored: "self" and "return" made 16,000 of 17,700 chunks of
  // the Python set match (21 ms against 1.6 ms without them). Those terms are left out; the
  // ranking of the rows that match the others is unchanged up to that 5e-5, and rows that
  // matched only them (ranked last, by rowid) are no longer listed. When every term is of
  // that kind the query keeps them all. Document frequencies are cached per store until the
  // index changes (decision 0023).
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
    ASSIGN_OR_RETURN(internal::ScopedStatement count, stmts_->Get("SELECT count(*) FROM chunks"));
    ASSIGN_OR_RETURN(bool row, count->Step());
    df_rows_ = row ? count->ColumnInt64(0) : 0;
    df_data_version_ = data_version;
    df_writes_ = writes_;
  }
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
  return JoinTerms(kept.empty() ? terms : kept);
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
  ASSIGN_OR_RETURN(std::string match, RankedMatchQuery(query));
  if (match.empty()) return out;
  const auto bind_weights = [&](base::Statement& st) -> Status {
    RETURN_IF_ERROR(st.Bind(1, options.name_weight));
    RETURN_IF_ERROR(st.Bind(2, options.subwords_weight));
    RETURN_IF_ERROR(st.Bind(3, options.doc_weight));
    RETURN_IF_ERROR(st.Bind(4, options.body_weight));
    RETURN_IF_ERROR(st.Bind(5, options.path_weight));
    return st.Bind(6, std::string_view(match));
  };
  {
    ASSIGN_OR_RETURN(
        internal::ScopedStatement scoped,
        // The best `limit` + 1 entries are chosen inside FTS5 before any join, so only they
        // are joined to their chunk, file and symbol (joining every match first and then
        // sorting cost twice the time). The extra entry tells whether entries tied with the
        // last one kept were cut off.
        stmts_->Get("SELECT c.id, f.path, c.kind, c.name, c.qualified_name, "
                    "coalesce(s.target_id, ''), c.start_line, c.end_line, h.rank "
                    "FROM (SELECT rowid AS id, bm25(chunk_fts, ?1, ?2, ?3, ?4, ?5) AS rank "
                    "FROM chunk_fts WHERE chunk_fts MATCH ?6 ORDER BY rank LIMIT ?7) h "
                    "JOIN chunks c ON c.id = h.id "
                    "JOIN files f ON f.id = c.file_id LEFT JOIN symbols s ON s.id = c.symbol_id"));
    base::Statement& st = *scoped;
    RETURN_IF_ERROR(bind_weights(st));
    // One more than `limit` (a negative LIMIT is none).
    const std::int64_t fetch =
        options.limit >= static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())
            ? -1
            : static_cast<std::int64_t>(options.limit) + 1;
    RETURN_IF_ERROR(st.Bind(7, fetch));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      out.push_back(ReadHit(st));
    }
  }
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
  {
    ASSIGN_OR_RETURN(
        internal::ScopedStatement scoped,
        stmts_->Get("SELECT c.id, f.path, c.kind, c.name, c.qualified_name, "
                    "coalesce(s.target_id, ''), c.start_line, c.end_line, h.rank "
                    "FROM (SELECT rowid AS id, bm25(chunk_fts, ?1, ?2, ?3, ?4, ?5) AS rank "
                    "FROM chunk_fts WHERE chunk_fts MATCH ?6) h "
                    "JOIN chunks c ON c.id = h.id "
                    "JOIN files f ON f.id = c.file_id LEFT JOIN symbols s ON s.id = c.symbol_id "
                    "WHERE h.rank <= ?7"));
    base::Statement& st = *scoped;
    RETURN_IF_ERROR(bind_weights(st));
    RETURN_IF_ERROR(st.Bind(7, -worst));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      out.push_back(ReadHit(st));
    }
  }
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
                  "WHERE chunk_tri MATCH ?1 ORDER BY rank, c.id LIMIT ?2"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, std::string_view(Quote(text))));
  RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(limit)));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
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
    out.push_back(std::move(h));
  }
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
