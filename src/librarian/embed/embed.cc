#include "librarian/embed/embed.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/http/http_post.h"
#include "base/sqlite.h"

namespace trove::librarian::embed {
namespace {

using Json = nlohmann::json;

// Largest response read (a batch of 64 vectors of 3,072 floats as JSON is about 4 MB).
constexpr std::size_t kMaxResponseBytes = std::size_t{64} << 20;

std::string Env(const char* name) {
  const char* v = getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

std::optional<Config> ConfigFromEnv() {
  std::string url = Env("LIBRARIAN_EMBED_URL");
  if (url.empty()) return std::nullopt;
  while (!url.empty() && url.back() == '/') url.pop_back();
  constexpr std::string_view kPath = "/embeddings";
  if (url.size() < kPath.size() || url.compare(url.size() - kPath.size(), kPath.size(), kPath) != 0)
    url += kPath;
  Config c;
  c.url = std::move(url);
  if (std::string model = Env("LIBRARIAN_EMBED_MODEL"); !model.empty()) c.model = model;
  std::string key_env = Env("LIBRARIAN_EMBED_KEY_ENV");
  c.api_key = Env(key_env.empty() ? "LIBRARIAN_EMBED_API_KEY" : key_env.c_str());
  return c;
}

Client::Client(Config config)
    : config_(std::move(config)), session_(std::make_unique<base::http::Session>()) {}

Client::~Client() = default;

Result<std::string> Client::Post(const std::string& body, base::Cancellation& cancel) {
  base::http::Request request;
  request.url = config_.url;
  request.headers.emplace_back("Content-Type", "application/json");
  if (!config_.api_key.empty()) {
    request.headers.emplace_back("Authorization", "Bearer " + config_.api_key);
  }
  request.body = body;
  base::http::Limits limits;
  limits.timeout_ms = config_.timeout.count();
  limits.connect_timeout_ms = config_.timeout.count();
  limits.max_response_bytes = kMaxResponseBytes;
  const std::string who = fmt::format("embeddings: {}", config_.url);
  ASSIGN_OR_RETURN(base::http::Response response,
                   session_->Post(who, request, limits, cancel, config_.api_key));
  if (response.status == 401 || response.status == 403) {
    return Status::PermissionDenied(fmt::format(
        "{}: authentication failed (HTTP {}); check the API key", who, response.status));
  }
  if (response.status < 200 || response.status >= 300) {
    return Status::InvalidArgument(fmt::format("{}: HTTP {}", who, response.status));
  }
  return std::move(response.body);
}

Result<std::vector<Vector>> Client::Embed(std::span<const std::string> inputs,
                                          base::Cancellation& cancel) {
  std::vector<Vector> out;
  out.reserve(inputs.size());
  const std::size_t batch = std::max<std::size_t>(1, config_.batch);
  for (std::size_t at = 0; at < inputs.size(); at += batch) {
    if (cancel.requested()) return Status::Cancelled("embeddings: cancelled");
    const std::size_t n = std::min(batch, inputs.size() - at);
    Json input = Json::array();
    for (std::size_t i = 0; i < n; ++i) input.push_back(inputs[at + i]);
    Json request{{"model", config_.model}, {"input", std::move(input)}};
    ASSIGN_OR_RETURN(std::string body,
                     Post(request.dump(-1, ' ', false, Json::error_handler_t::replace), cancel));
    Result<std::vector<Vector>> vectors = ParseResponse(body, n);
    if (!vectors.ok()) {
      return Status::Malformed(
          fmt::format("embeddings: {}: {}", config_.url, vectors.status().message()));
    }
    for (Vector& v : *vectors) {
      if (!out.empty() && v.size() != out.front().size()) {
        return Status::Malformed(fmt::format("embeddings: {}: vectors of sizes {} and {}",
                                             config_.url, out.front().size(), v.size()));
      }
      out.push_back(std::move(v));
    }
  }
  return out;
}

Result<std::vector<Vector>> ParseResponse(std::string_view body, std::size_t expected) {
  Json doc = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return Status::Malformed("response is not a JSON object");
  auto data = doc.find("data");
  if (data == doc.end() || !data->is_array())
    return Status::Malformed("response: data: not an array");
  if (data->size() != expected) {
    return Status::Malformed(
        fmt::format("response: data: {} vectors for {} inputs", data->size(), expected));
  }
  std::vector<Vector> out(expected);
  std::vector<bool> seen(expected, false);
  for (std::size_t i = 0; i < data->size(); ++i) {
    const Json& item = (*data)[i];
    if (!item.is_object())
      return Status::Malformed(fmt::format("response: data[{}]: not an object", i));
    std::size_t index = i;
    if (auto it = item.find("index"); it != item.end()) {
      if (!it->is_number_unsigned() || it->get<std::uint64_t>() >= expected) {
        return Status::Malformed(fmt::format("response: data[{}].index: out of range", i));
      }
      index = static_cast<std::size_t>(it->get<std::uint64_t>());
    }
    if (seen[index]) return Status::Malformed(fmt::format("response: data[{}].index: repeated", i));
    seen[index] = true;
    auto emb = item.find("embedding");
    if (emb == item.end() || !emb->is_array() || emb->empty()) {
      return Status::Malformed(fmt::format("response: data[{}].embedding: not a number array", i));
    }
    Vector& v = out[index];
    v.reserve(emb->size());
    for (const Json& x : *emb) {
      if (!x.is_number()) {
        return Status::Malformed(
            fmt::format("response: data[{}].embedding: not a number array", i));
      }
      const double d = x.get<double>();
      if (!std::isfinite(d)) {
        return Status::Malformed(fmt::format("response: data[{}].embedding: not finite", i));
      }
      v.push_back(static_cast<float>(d));
    }
  }
  return out;
}

double Cosine(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size() || a.empty()) return 0;
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na <= 0 || nb <= 0) return 0;
  return dot / std::sqrt(na * nb);
}

Status EnsureTable(base::Database& db) {
  return db.Exec(
      "CREATE TABLE IF NOT EXISTS embeddings(target_id TEXT NOT NULL, model TEXT NOT NULL, "
      "path TEXT NOT NULL, span_sha256 TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, "
      "PRIMARY "
      "KEY(model, target_id)) WITHOUT ROWID");
}

namespace {

Result<bool> TableExists(base::Database& db) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                              "'embeddings'"));
  return st.Step();
}

}  // namespace

Status Save(base::Database& db, std::string_view model, std::span<const Stored> rows) {
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("INSERT OR REPLACE INTO embeddings(target_id, model, span_sha256, "
                              "dim, vector, path) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  for (const Stored& r : rows) {
    st.Reset();
    RETURN_IF_ERROR(st.Bind(1, std::string_view(r.target_id)));
    RETURN_IF_ERROR(st.Bind(2, model));
    RETURN_IF_ERROR(st.Bind(3, std::string_view(r.span_sha256)));
    RETURN_IF_ERROR(st.Bind(4, static_cast<std::int64_t>(r.vector.size())));
    std::vector<std::uint8_t> bytes(r.vector.size() * sizeof(float));
    if (!bytes.empty()) std::memcpy(bytes.data(), r.vector.data(), bytes.size());
    RETURN_IF_ERROR(st.Bind(5, std::span<const std::uint8_t>(bytes)));
    RETURN_IF_ERROR(st.Bind(6, std::string_view(r.path)));
    RETURN_IF_ERROR(st.Step().status());
  }
  // Vectors of functions the index no longer holds.
  ASSIGN_OR_RETURN(base::Statement prune,
                   db.Prepare("DELETE FROM embeddings WHERE model = ?1 AND target_id NOT IN "
                              "(SELECT target_id FROM symbols)"));
  RETURN_IF_ERROR(prune.Bind(1, model));
  RETURN_IF_ERROR(prune.Step().status());
  ASSIGN_OR_RETURN(base::Statement version,
                   db.Prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)"));
  RETURN_IF_ERROR(version.Bind(1, std::string_view(fmt::format("{}{}", kVersionKeyPrefix, model))));
  RETURN_IF_ERROR(
      version.Bind(2, std::string_view(fmt::format(
                          "{}", std::chrono::system_clock::now().time_since_epoch().count()))));
  RETURN_IF_ERROR(version.Step().status());
  return tx.Commit();
}

Result<std::vector<std::pair<std::string, std::string>>> StoredHashes(base::Database& db,
                                                                      std::string_view model) {
  std::vector<std::pair<std::string, std::string>> out;
  ASSIGN_OR_RETURN(bool exists, TableExists(db));
  if (!exists) return out;
  ASSIGN_OR_RETURN(base::Statement st, db.Prepare("SELECT target_id, span_sha256 FROM embeddings "
                                                  "WHERE model = ?1"));
  RETURN_IF_ERROR(st.Bind(1, model));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.emplace_back(st.ColumnText(0), st.ColumnText(1));
  }
}

Result<std::vector<Stored>> Load(base::Database& db, std::string_view model) {
  std::vector<Stored> out;
  ASSIGN_OR_RETURN(bool exists, TableExists(db));
  if (!exists) return out;
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT target_id, span_sha256, dim, vector, path FROM embeddings "
                              "WHERE model = ?1"));
  RETURN_IF_ERROR(st.Bind(1, model));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    Stored s;
    s.target_id = st.ColumnText(0);
    s.span_sha256 = st.ColumnText(1);
    s.path = st.ColumnText(4);
    const auto dim = static_cast<std::size_t>(st.ColumnInt64(2));
    const std::string bytes = st.ColumnBlob(3);
    if (bytes.size() != dim * sizeof(float)) {
      return Status::Malformed(fmt::format("embeddings: {}: vector of {} bytes for {} dimensions",
                                           s.target_id, bytes.size(), dim));
    }
    s.vector.resize(dim);
    if (dim > 0) std::memcpy(s.vector.data(), bytes.data(), bytes.size());
    out.push_back(std::move(s));
  }
}

Result<std::shared_ptr<const std::vector<Stored>>> LoadCached(base::Database& db,
                                                              std::string_view model) {
  static std::mutex mu;
  static auto* cache = new std::map<std::string, std::shared_ptr<const std::vector<Stored>>>();
  std::string file, version;
  {
    ASSIGN_OR_RETURN(base::Statement st, db.Prepare("SELECT file FROM pragma_database_list WHERE "
                                                    "name = 'main'"));
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (row) file = st.ColumnText(0);
  }
  {
    ASSIGN_OR_RETURN(base::Statement st, db.Prepare("SELECT value FROM meta WHERE key = ?1"));
    RETURN_IF_ERROR(st.Bind(1, std::string_view(fmt::format("{}{}", kVersionKeyPrefix, model))));
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return std::make_shared<const std::vector<Stored>>();
    version = st.ColumnText(0);
  }
  if (file.empty()) file = fmt::format("memory:{}", static_cast<const void*>(&db));
  const std::string prefix = file + "\n" + std::string(model) + "\n";
  const std::string key = prefix + version;
  {
    std::lock_guard lock(mu);
    if (auto it = cache->find(key); it != cache->end()) return it->second;
  }
  ASSIGN_OR_RETURN(std::vector<Stored> rows, Load(db, model));
  auto shared = std::make_shared<const std::vector<Stored>>(std::move(rows));
  std::lock_guard lock(mu);
  for (auto it = cache->begin(); it != cache->end();) {  // older versions of the same store
    it = it->first.rfind(prefix, 0) == 0 ? cache->erase(it) : std::next(it);
  }
  (*cache)[key] = shared;
  return std::shared_ptr<const std::vector<Stored>>(shared);
}

std::string FunctionSummary(std::string_view qualified_name, std::string_view signature,
                            std::string_view doc, std::string_view body) {
  std::string text;
  text.append(qualified_name);
  if (!signature.empty()) {
    text.append("\n");
    text.append(signature);
  }
  if (!doc.empty()) {
    text.append("\n");
    text.append(doc);
  }
  if (!body.empty()) {
    text.append("\n");
    text.append(body);
  }
  if (text.size() > kMaxSummaryBytes) {
    std::size_t cut = kMaxSummaryBytes;
    // Never split a UTF-8 sequence.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
  }
  return text;
}

}  // namespace trove::librarian::embed
