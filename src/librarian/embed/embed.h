// Embeddings engine (docs/librarian.md §4.4, decision 0070): optional, off by default, enabled
// by the user with an OpenAI-compatible `/v1/embeddings` endpoint. At bootstrap the function
// summaries (qualified name, signature, doc comment, first lines of the body) are embedded and
// stored beside the index; at query time the intent is embedded and its cosine similarity to a
// candidate's vector is one more ranking signal (rank.h RankSignals::embed), fused with the
// lexical ones. Any failure (endpoint down, 401, a malformed answer) leaves the answer lexical
// and is disclosed; nothing here takes a query or a bootstrap down.
//
// Configuration (environment, read when a bootstrap or a query starts):
//   LIBRARIAN_EMBED_URL      the endpoint: a base URL ending in /v1 (`/embeddings` is appended)
//                            or the full .../embeddings URL. Unset or empty: the engine is off.
//   LIBRARIAN_EMBED_MODEL    the `model` field sent (default "text-embedding-3-small").
//   LIBRARIAN_EMBED_KEY_ENV  the name of the variable that holds the API key (default
//                            LIBRARIAN_EMBED_API_KEY); no key: no Authorization header.
// The key travels only in the Authorization header; no message, log line or disclosure built
// here contains it, and text quoted from the endpoint is redacted.
//
// Storage: the table `embeddings` (created IF NOT EXISTS in the store's SQLite file, outside
// the versioned schema: no schema change), one row per (target id, model) holding the span
// hash the vector was computed from and the vector as little-endian float32.
//
// Thread safety: a Client belongs to one thread at a time; the free functions may run on
// several threads with separate Database objects.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"

namespace trove::base {
class Database;
namespace http {
class Session;
}  // namespace http
}  // namespace trove::base

namespace trove::librarian::embed {

struct Config {
  std::string url;  // the full .../embeddings URL
  std::string model = "text-embedding-3-small";
  std::string api_key;  // may be empty; never printed
  std::chrono::milliseconds timeout{15000};
  std::size_t batch = 64;  // inputs per request
};

// The configuration from the environment (see the file comment); nullopt when the engine is off.
std::optional<Config> ConfigFromEnv();

// A vector per input, in input order.
using Vector = std::vector<float>;

// An OpenAI-compatible embeddings client over the shared HTTP POST client (base/http).
class Client {
 public:
  explicit Client(Config config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Config& config() const { return config_; }
  // Embeds `inputs` (split into requests of config.batch). Errors: kPermissionDenied (401,
  // 403), kInvalidArgument (another non-2xx status), kMalformed (an answer that is not the
  // API's shape, or vectors of different sizes), kDeadlineExceeded (timeout), kCancelled, kIo
  // (transport). Messages start with "embeddings: " and never contain the key.
  Result<std::vector<Vector>> Embed(std::span<const std::string> inputs,
                                    base::Cancellation& cancel);

 private:
  Result<std::string> Post(const std::string& body, base::Cancellation& cancel);

  Config config_;
  std::unique_ptr<base::http::Session> session_;  // the shared client (base/http)
};

// Parses an embeddings response body holding `expected` vectors (ordered by `index`).
Result<std::vector<Vector>> ParseResponse(std::string_view body, std::size_t expected);

// Cosine similarity; 0 when either vector is zero or the sizes differ.
double Cosine(std::span<const float> a, std::span<const float> b);

// --- storage (the `embeddings` table) ---

// Creates the table when missing. REQUIRES: no read transaction open on `db`.
Status EnsureTable(base::Database& db);
struct Stored {
  std::string target_id;
  std::string path;  // the target's file
  std::string span_sha256;
  Vector vector;
};
// Upserts `rows` for `model` in one transaction, drops the vectors of targets the symbols
// table no longer holds, and sets a new version in the `meta` table.
Status Save(base::Database& db, std::string_view model, std::span<const Stored> rows);
// Returns target id -> span hash of the vectors stored for `model` (empty when the table is
// missing).
Result<std::vector<std::pair<std::string, std::string>>> StoredHashes(base::Database& db,
                                                                      std::string_view model);
// Returns every vector stored for `model` (empty when the table is missing).
Result<std::vector<Stored>> Load(base::Database& db, std::string_view model);
// As Load, kept per process for each store file, model and version (the `meta` key
// kVersionKeyPrefix + model that Save rewrites), so a query reads the vectors once.
inline constexpr std::string_view kVersionKeyPrefix = "embeddings_version:";
Result<std::shared_ptr<const std::vector<Stored>>> LoadCached(base::Database& db,
                                                              std::string_view model);

// The text embedded for a function: its qualified name, signature, doc comment and the first
// lines of its body, bounded to kMaxSummaryBytes.
inline constexpr std::size_t kMaxSummaryBytes = 2000;
std::string FunctionSummary(std::string_view qualified_name, std::string_view signature,
                            std::string_view doc, std::string_view body);

}  // namespace trove::librarian::embed
