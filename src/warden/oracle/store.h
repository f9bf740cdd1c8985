// The Emscripten Oracle's signature store (docs/warden.md §8.1): one SQLite file, separate
// from the KB (default `.warden/oracle.db`, config key `oracle.store`), or a PostgreSQL
// database named by a `postgresql://` URL, holding one signature per labelled corpus function,
// indexed on the exact, normalised (norm_hash, the stable_id base) and structural hashes and on
// MinHash LSH buckets (8 bands of 4 values).
//
// OracleStore is the backend-neutral facade: the signature cache, the preloaded index and the
// answers' order live here; the rows live in an OracleBackend (backend.h).
// A store file built elsewhere is copied in as a file; nothing in it depends on the machine.
// Thread safety: one thread uses an OracleStore at a time; open one per thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "warden/kb/records.h"

namespace trove::warden::oracle {

class OracleBackend;

// LSH banding of the 32 MinHash values (§8.1): 8 bands of 4.
inline constexpr int kLshBands = 8;
inline constexpr int kLshRows = 4;
static_assert(kLshBands * kLshRows == kb::kMinHashValues);
// Only signatures of at least this many instructions enter the LSH buckets: the fuzzy pass
// never matches smaller ones (§8.3).
inline constexpr std::uint32_t kLshMinInstructions = 20;
// The schema of the store file (meta.oracle_schema_version).
// Schema 2 added callees_json; a schema-1 store is upgraded in place on open.
inline constexpr int kStoreSchemaVersion = 2;

// One labelled corpus function (§8.1 signature fields).
struct Signature {
  std::int64_t id = 0;    // row id; 0 before it is stored
  std::string name;       // as written in the corpus (name section, else first export)
  std::string name_norm;  // NormaliseName(name)
  std::string library;    // musl, libc++, dlmalloc, ... or the --library default
  std::string emscripten_version;
  std::string opt_level;        // O0, O2, O3, Os, Oz, or empty
  std::string flags;            // codegen flags tag, e.g. "pthread", or empty
  std::string source_ref;       // where the corpus module came from
  std::string exact_hash;       // 64 hex digits (SHA-256 of the body)
  std::string norm_hash;        // 32 hex digits (the stable_id base)
  std::string structural_hash;  // 32 hex digits
  std::array<std::uint64_t, kb::kMinHashValues> minhash{};
  std::array<std::uint32_t, kb::kHistogramClasses> histogram{};
  std::vector<std::string> call_targets;  // sorted set of imports called, "module.field"
  std::string type_signature;
  std::uint32_t instruction_count = 0;
  // The names of the direct calls to defined functions, in call order with repeats (the
  // FunctionRecord's defined_callees); "" for an unnamed callee. Call-graph propagation
  // (§8.3) reads them.
  std::vector<std::string> callees;
};

// Returns the bucket of band `band` (0..7) of `minhash`: a 64-bit mix of its 4 values.
std::int64_t LshBucket(const std::array<std::uint64_t, kb::kMinHashValues>& minhash, int band);

struct StoreStats {
  std::int64_t signatures = 0;
  std::int64_t libraries = 0;
  std::vector<std::string> emscripten_versions;  // distinct, sorted
};

// Whether a store target is a PostgreSQL URL ("postgresql://" or "postgres://") rather than a
// file path.
bool IsStoreUrl(std::string_view target);

class OracleStore {
 public:
  // Opens the store at `target`: a file path, or a PostgreSQL URL (IsStoreUrl). `create`
  // makes the file (not its directory), or the tables in the database, when missing; else a
  // missing store is kNotFound. A file or database that holds other tables is kMalformed. A
  // PostgreSQL server that cannot be reached is kUnavailable.
  static Result<std::unique_ptr<OracleStore>> Open(const std::string& target, bool create);
  // A store over an opened backend.
  explicit OracleStore(std::unique_ptr<OracleBackend> backend);
  OracleStore(const OracleStore&) = delete;
  OracleStore& operator=(const OracleStore&) = delete;
  ~OracleStore();

  // The store as messages and reports name it: the file path, or the URL with its password
  // redacted.
  const std::string& path() const;

  // Adds signatures in one transaction. A signature equal to a stored one in (exact_hash,
  // name, library, emscripten_version, opt_level, flags) is a duplicate and is not added.
  // Returns how many were added.
  Result<std::int64_t> Add(const std::vector<Signature>& signatures);

  // Reads the store's four key columns and its LSH table into memory once, so that every
  // later lookup below is a hash-map probe instead of an SQLite query (a 22,000-function
  // target makes about eleven lookups per function). Signatures are still read on first use,
  // a lookup's missing ones in one backend call. Lookups give exactly the answers of the SQL path.
  // Add() drops the index; call Preload again to rebuild it.
  Status Preload();
  bool preloaded() const { return index_ != nullptr; }

  // Lookups; the signatures returned are owned by the store's cache and live as long as it.
  Result<std::vector<const Signature*>> ByExact(std::string_view exact_hash);
  Result<std::vector<const Signature*>> ByNorm(std::string_view norm_hash);
  Result<std::vector<const Signature*>> ByStructural(std::string_view structural_hash,
                                                     std::string_view type_signature);
  Result<std::vector<const Signature*>> ByName(std::string_view name_norm);
  // The signatures in one LSH bucket; when it holds more than `limit`, returns exactly
  // limit + 1 of them so that the caller can tell an overfull bucket.
  Result<std::vector<const Signature*>> ByBucket(int band, std::int64_t bucket, int limit);

  Result<StoreStats> Stats();
  // The number of signatures.
  Result<std::int64_t> Count();
  // Every normalised name in the store with the library tags it occurs under (the evaluation's
  // "nameable" set, §8.4).
  Result<std::map<std::string, std::set<std::string>>> NameLibraries();

 private:
  // The signatures of the first `limit` ids (all of `ids` at most), from the cache, the
  // missing ones read in one backend call.
  Result<std::vector<const Signature*>> LoadAll(const std::vector<std::int64_t>* ids,
                                                std::size_t limit);

  // Preload's maps: key -> signature ids, ascending (the SQL path's ORDER BY id).
  struct Index {
    std::unordered_map<std::string, std::vector<std::int64_t>> exact;
    std::unordered_map<std::string, std::vector<std::int64_t>> norm;
    // structural_hash + '\0' + type_signature
    std::unordered_map<std::string, std::vector<std::int64_t>> structural;
    std::unordered_map<std::string, std::vector<std::int64_t>> name;
    // Per band: bucket -> ids.
    std::array<std::unordered_map<std::int64_t, std::vector<std::int64_t>>, kLshBands> lsh;
  };

  const std::unique_ptr<OracleBackend> backend_;
  std::unordered_map<std::int64_t, std::unique_ptr<Signature>> cache_;
  std::unique_ptr<Index> index_;
};

}  // namespace trove::warden::oracle
