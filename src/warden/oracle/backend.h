// OracleBackend: the storage under an OracleStore (store.h). The store keeps everything that
// does not depend on where the signatures live (the signature cache, the preloaded index, the
// order of answers); a backend only reads and writes rows. Two exist: a SQLite file
// (sqlite_backend.h) and a PostgreSQL database (pg_backend.h, when built with libpq).
// Every backend gives the same answers for the same rows: ids ascending, duplicates skipped
// on the same six columns, LSH rows only for signatures of at least kLshMinInstructions.
// Thread safety: one thread uses a backend at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "warden/oracle/store.h"

namespace trove::warden::oracle {

class OracleBackend {
 public:
  virtual ~OracleBackend() = default;

  // What messages name: the file path, or the URL with its password redacted.
  virtual const std::string& target() const = 0;

  // Adds signatures in one transaction, skipping duplicates (OracleStore::Add). Returns how
  // many were added.
  virtual Result<std::int64_t> Add(const std::vector<Signature>& signatures) = 0;

  // Reads the signatures with the given ids, in the order given. A missing id is kNotFound.
  virtual Result<std::vector<std::unique_ptr<Signature>>> Load(
      std::span<const std::int64_t> ids) = 0;

  // The ids of the signatures with a key, ascending.
  virtual Result<std::vector<std::int64_t>> IdsByExact(std::string_view exact_hash) = 0;
  virtual Result<std::vector<std::int64_t>> IdsByNorm(std::string_view norm_hash) = 0;
  virtual Result<std::vector<std::int64_t>> IdsByStructural(std::string_view structural_hash,
                                                            std::string_view type_signature) = 0;
  virtual Result<std::vector<std::int64_t>> IdsByName(std::string_view name_norm) = 0;
  // The ids in one LSH bucket, ascending; at most `limit` ids, or all when `limit` < 0.
  virtual Result<std::vector<std::int64_t>> IdsByBucket(int band, std::int64_t bucket,
                                                        std::int64_t limit) = 0;

  // The key columns of every signature, in id order (OracleStore::Preload).
  struct KeyRow {
    std::int64_t id = 0;
    std::string_view exact_hash;
    std::string_view norm_hash;
    std::string_view structural_hash;
    std::string_view type_signature;
    std::string_view name_norm;
  };
  virtual Status ScanKeys(const std::function<void(const KeyRow&)>& fn) = 0;
  // Every LSH row, ordered by (band, bucket, sig_id).
  virtual Status ScanLsh(const std::function<void(std::int64_t band, std::int64_t bucket,
                                                  std::int64_t sig_id)>& fn) = 0;

  virtual Result<std::int64_t> Count() = 0;
  virtual Result<StoreStats> Stats() = 0;
  virtual Result<std::map<std::string, std::set<std::string>>> NameLibraries() = 0;
};

namespace internal {

// The row encodings every backend shares: minhash and histogram as little-endian arrays,
// call targets and callees as JSON arrays of strings.
std::string PackMinHash(const Signature& s);
std::string PackHistogram(const Signature& s);
std::string CallTargetsJson(const Signature& s);
std::string CalleesJson(const Signature& s);
void UnpackMinHash(std::string_view bytes, Signature& s);
void UnpackHistogram(std::string_view bytes, Signature& s);
void ParseCallTargets(std::string_view json, Signature& s);
void ParseCallees(std::string_view json, Signature& s);

}  // namespace internal

// Opens the SQLite store file at `path` (OracleStore::Open's contract).
Result<std::unique_ptr<OracleBackend>> OpenSqliteBackend(const std::string& path, bool create);

}  // namespace trove::warden::oracle
