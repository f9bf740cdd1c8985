#include "warden/oracle/store.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>

#include "base/pg.h"
#include "warden/oracle/backend.h"
#include "warden/oracle/pg_backend.h"
#include "warden/oracle/target.h"

namespace trove::warden::oracle {

namespace {

using Json = nlohmann::json;

template <typename T, std::size_t N>
std::string PackLe(const std::array<T, N>& values) {
  std::string out(N * sizeof(T), '\0');
  for (std::size_t i = 0; i < N; ++i) {
    const auto v = static_cast<std::uint64_t>(values[i]);
    for (std::size_t b = 0; b < sizeof(T); ++b) {
      out[i * sizeof(T) + b] = static_cast<char>((v >> (8 * b)) & 0xff);
    }
  }
  return out;
}

template <typename T, std::size_t N>
std::array<T, N> UnpackLe(std::string_view bytes) {
  std::array<T, N> out{};
  if (bytes.size() != N * sizeof(T)) return out;
  for (std::size_t i = 0; i < N; ++i) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < sizeof(T); ++b) {
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i * sizeof(T) + b]))
           << (8 * b);
    }
    out[i] = static_cast<T>(v);
  }
  return out;
}

std::uint64_t Mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

namespace internal {

std::string PackMinHash(const Signature& s) { return PackLe(s.minhash); }
std::string PackHistogram(const Signature& s) { return PackLe(s.histogram); }
std::string CallTargetsJson(const Signature& s) { return Json(s.call_targets).dump(); }
std::string CalleesJson(const Signature& s) {
  return Json(s.callees).dump(-1, ' ', false, Json::error_handler_t::replace);
}
void UnpackMinHash(std::string_view bytes, Signature& s) {
  s.minhash = UnpackLe<std::uint64_t, kb::kMinHashValues>(bytes);
}
void UnpackHistogram(std::string_view bytes, Signature& s) {
  s.histogram = UnpackLe<std::uint32_t, kb::kHistogramClasses>(bytes);
}
void ParseCallTargets(std::string_view json, Signature& s) {
  const Json calls = Json::parse(json, nullptr, false);
  if (!calls.is_array()) return;
  for (const Json& c : calls) {
    if (c.is_string()) s.call_targets.push_back(c.get<std::string>());
  }
}
void ParseCallees(std::string_view json, Signature& s) {
  const Json callees = Json::parse(json, nullptr, false);
  if (!callees.is_array()) return;
  for (const Json& c : callees) s.callees.push_back(c.is_string() ? c.get<std::string>() : "");
}

}  // namespace internal

std::int64_t LshBucket(const std::array<std::uint64_t, kb::kMinHashValues>& minhash, int band) {
  std::uint64_t h = Mix(0x4f5241434c450000ULL + static_cast<std::uint64_t>(band));  // "ORACLE"
  for (int r = 0; r < kLshRows; ++r) {
    h = Mix(h ^ minhash[static_cast<std::size_t>(band * kLshRows + r)]);
  }
  return static_cast<std::int64_t>(h);
}

bool IsStoreUrl(std::string_view target) { return base::pg::IsPostgresUrl(target); }

std::string StoreDisplayName(std::string_view target) {
  return IsStoreUrl(target) ? base::pg::RedactUrl(target) : std::string(target);
}

OracleStore::OracleStore(std::unique_ptr<OracleBackend> backend) : backend_(std::move(backend)) {}

OracleStore::~OracleStore() = default;

const std::string& OracleStore::path() const { return backend_->target(); }

Result<std::unique_ptr<OracleStore>> OracleStore::Open(const std::string& target, bool create) {
  ASSIGN_OR_RETURN(std::unique_ptr<OracleBackend> backend, IsStoreUrl(target)
                                                               ? OpenPgBackend(target, create)
                                                               : OpenSqliteBackend(target, create));
  return std::make_unique<OracleStore>(std::move(backend));
}

Result<std::int64_t> OracleStore::Add(const std::vector<Signature>& signatures) {
  index_.reset();  // the index would miss the new rows
  return backend_->Add(signatures);
}

Status OracleStore::Preload() {
  auto index = std::make_unique<Index>();
  {
    std::string key;
    RETURN_IF_ERROR(backend_->ScanKeys([&](const OracleBackend::KeyRow& r) {
      index->exact[std::string(r.exact_hash)].push_back(r.id);
      index->norm[std::string(r.norm_hash)].push_back(r.id);
      key.assign(r.structural_hash);
      key.push_back('\0');
      key.append(r.type_signature);
      index->structural[key].push_back(r.id);
      index->name[std::string(r.name_norm)].push_back(r.id);
    }));
  }
  RETURN_IF_ERROR(
      backend_->ScanLsh([&](std::int64_t band, std::int64_t bucket, std::int64_t sig_id) {
        if (band < 0 || band >= kLshBands) return;  // the SQL path never asks for it either
        index->lsh[static_cast<std::size_t>(band)][bucket].push_back(sig_id);
      }));
  index_ = std::move(index);
  return Status::Ok();
}

Result<std::vector<const Signature*>> OracleStore::LoadAll(const std::vector<std::int64_t>* ids,
                                                           std::size_t limit) {
  std::vector<const Signature*> out;
  if (ids == nullptr) return out;
  const std::size_t n = std::min(ids->size(), limit);
  std::vector<std::int64_t> missing;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t id = (*ids)[i];
    if (!cache_.contains(id)) missing.push_back(id);  // ids of one answer are distinct
  }
  if (!missing.empty()) {
    ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Signature>> loaded, backend_->Load(missing));
    for (std::size_t i = 0; i < loaded.size() && i < missing.size(); ++i) {
      cache_.emplace(missing[i], std::move(loaded[i]));
    }
  }
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto it = cache_.find((*ids)[i]);
    if (it == cache_.end() || it->second == nullptr) {
      return Status::NotFound(fmt::format("{}: no signature {}", path(), (*ids)[i]));
    }
    out.push_back(it->second.get());
  }
  return out;
}

namespace {

const std::vector<std::int64_t>* Find(
    const std::unordered_map<std::string, std::vector<std::int64_t>>& map, std::string_view key) {
  auto it = map.find(std::string(key));
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace

Result<std::vector<const Signature*>> OracleStore::ByExact(std::string_view exact_hash) {
  if (index_) return LoadAll(Find(index_->exact, exact_hash), SIZE_MAX);
  ASSIGN_OR_RETURN(std::vector<std::int64_t> ids, backend_->IdsByExact(exact_hash));
  return LoadAll(&ids, ids.size());
}

Result<std::vector<const Signature*>> OracleStore::ByNorm(std::string_view norm_hash) {
  if (index_) return LoadAll(Find(index_->norm, norm_hash), SIZE_MAX);
  ASSIGN_OR_RETURN(std::vector<std::int64_t> ids, backend_->IdsByNorm(norm_hash));
  return LoadAll(&ids, ids.size());
}

Result<std::vector<const Signature*>> OracleStore::ByStructural(std::string_view structural_hash,
                                                                std::string_view type_signature) {
  if (index_) {
    std::string key(structural_hash);
    key.push_back('\0');
    key.append(type_signature);
    return LoadAll(Find(index_->structural, key), SIZE_MAX);
  }
  ASSIGN_OR_RETURN(std::vector<std::int64_t> ids,
                   backend_->IdsByStructural(structural_hash, type_signature));
  return LoadAll(&ids, ids.size());
}

Result<std::vector<const Signature*>> OracleStore::ByName(std::string_view name_norm) {
  if (index_) return LoadAll(Find(index_->name, name_norm), SIZE_MAX);
  ASSIGN_OR_RETURN(std::vector<std::int64_t> ids, backend_->IdsByName(name_norm));
  return LoadAll(&ids, ids.size());
}

Result<std::vector<const Signature*>> OracleStore::ByBucket(int band, std::int64_t bucket,
                                                            int limit) {
  // limit + 1 rows; a negative value means no limit (SQLite's LIMIT, which the preloaded path
  // mirrors).
  const std::int64_t want_rows = static_cast<std::int64_t>(limit) + 1;
  const std::size_t want = want_rows < 0 ? SIZE_MAX : static_cast<std::size_t>(want_rows);
  if (index_) {
    if (band < 0 || band >= kLshBands) return std::vector<const Signature*>();
    const auto& map = index_->lsh[static_cast<std::size_t>(band)];
    auto it = map.find(bucket);
    return LoadAll(it == map.end() ? nullptr : &it->second, want);
  }
  ASSIGN_OR_RETURN(std::vector<std::int64_t> ids,
                   backend_->IdsByBucket(band, bucket, want_rows < 0 ? -1 : want_rows));
  return LoadAll(&ids, ids.size());
}

Result<std::int64_t> OracleStore::Count() { return backend_->Count(); }

Result<StoreStats> OracleStore::Stats() { return backend_->Stats(); }

Result<std::map<std::string, std::set<std::string>>> OracleStore::NameLibraries() {
  return backend_->NameLibraries();
}

}  // namespace trove::warden::oracle
