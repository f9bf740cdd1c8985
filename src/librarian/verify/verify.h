// Verify: re-checks a claim against the live workspace (docs/librarian.md §5.2, §3.6; the seed's
// `verify_claim`). In v1 a claim id is a context-pack id; the claim's evidence is its target's
// cited span as the index recorded it (store/manifest.h: file, lines, bytes, SHA-256 of the
// span). Verify re-reads that span from the tree as it is now and runs every defeater check of
// §3.6:
//
//   code_change     the file changed and the target's span hash differs (full, undercutting,
//                   with a line diff summary); the file changed but the span is identical
//                   (warning, undermining)
//   file_deleted    the primary file no longer exists (full, undercutting)
//   symbol_removed  a fresh parse of the file finds no symbol with the target id (full,
//                   undercutting); when the body is found again under another name (a rename)
//                   the reason and `new_location` say where
//   symbol_moved    the same body at another span of the same file (warning) or, by the store's
//                   symbol table, a definition of the same name in another file (partial);
//                   both with `new_location`
//   contradiction   the fresh parse gives the target another signature (full, rebutting)
//   test_failure    never active in v1: no outcomes are recorded per pack (partial)
//
// A file unchanged since indexing (equal SHA-256) activates nothing, so the common case costs
// one read and one hash. `confidence` is the pack's base signal (docs/librarian.md §4.1) plus the
// summed adjustments (full -0.5, partial -0.2, warning -0.05, floored at -0.8), clamped to
// [0, 1]: an uncalibrated ranking signal. `claim_confidence` is the typed value of §5.3: the
// claim is a syntactic fact, so it is `deterministic`, 1 when the cited span still holds the
// cited hash and 0 otherwise.
//
// Thread safety: one thread uses a Verifier at a time (it owns a tree-sitter parser); a
// VerifyCache may be shared.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"
#include "librarian/confidence/confidence.h"

namespace trove::base {
class Env;
}
namespace trove::librarian::extract {
class Extractor;
}
namespace trove::librarian::store {
class Store;
}

namespace trove::librarian::verify {

// Adjustments by severity (docs/librarian.md §5.2) and their floor.
// The confidence module (confidence/confidence.h) holds them and sums them; these name the same
// values for callers of verify.
inline constexpr double kFullAdjustment = confidence::kFullAdjustment;
inline constexpr double kPartialAdjustment = confidence::kPartialAdjustment;
inline constexpr double kWarningAdjustment = confidence::kWarningAdjustment;
inline constexpr double kAdjustmentFloor = confidence::kAdjustmentFloor;
// Longest claim id (docs/librarian.md §3.6: 1-256 characters).
inline constexpr std::size_t kMaxClaimIdChars = 256;
// Files above this are not re-read (the crawler's default cap is 1 MiB; a claim never cites a
// larger file, so a larger one now is reported changed without reading it).
inline constexpr std::uint64_t kMaxVerifyFileBytes = std::uint64_t{16} << 20;

struct Location {
  std::string file;  // workspace-relative
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
};

// One defeater check (the seed's `{type, activated, reason, severity}` plus its Pollock class
// and, for a target found again, where).
struct DefeaterResult {
  std::string type;  // code_change, file_deleted, symbol_removed, symbol_moved, ...
  bool activated = false;
  std::string reason;
  std::string severity;        // full, partial, warning
  std::string defeater_class;  // rebutting, undercutting, undermining
  std::optional<Location> new_location;
};

// docs/librarian.md §5.3; only `deterministic` is produced here.
struct TypedConfidence {
  std::string type = "deterministic";
  double value = 0;
  std::string reason;
};

// The evidence reference the claim cites (docs/librarian.md §5.2).
struct CitedEvidence {
  std::string file;
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  std::string content_hash;  // SHA-256 of the span (of the whole file for a module)
  std::string target_id;
  std::string pack_type;  // function_context, module_context
};

struct Verification {
  std::string claim_id;
  bool found = false;                   // false: no manifest names the id ("Claim not found")
  bool verified = false;                // found and no `full` defeater active
  double confidence = 0;                // uncalibrated ranking signal, see the file comment
  std::vector<DefeaterResult> results;  // every check, in the order of the file comment
  TypedConfidence claim_confidence;
  CitedEvidence evidence;
  std::string checked_at;  // RFC 3339 UTC, milliseconds
  bool cached = false;     // served by a VerifyCache
};

// Active checks only.
std::vector<DefeaterResult> ActiveDefeaters(const Verification& v);

struct VerifyOptions {
  // For re-extracting a changed file routed to ctags; empty disables ctags (text fallback).
  std::string ctags_program = "ctags";
  // Limit for one re-extraction, in milliseconds (0: none).
  std::int64_t timeout_ms = 30'000;
};

class Verifier {
 public:
  // `env` must outlive the Verifier. The extractor is created on the first changed file.
  Verifier(base::Env& env, VerifyOptions options);
  ~Verifier();
  Verifier(const Verifier&) = delete;
  Verifier& operator=(const Verifier&) = delete;

  // Verifies `claim_id` against the workspace at the canonical `root`, whose index is
  // `store`. An unknown id is not an error: the result has found = false. kInvalidArgument
  // for an empty or over-long id ("claimId: ..."); store and extraction errors otherwise.
  Result<Verification> Verify(store::Store& store, std::string_view root, std::string_view claim_id,
                              const base::Cancellation* cancel);

 private:
  Result<extract::Extractor*> GetExtractor();

  base::Env& env_;
  const VerifyOptions options_;
  std::unique_ptr<extract::Extractor> extractor_;
};

// Verifications younger than the TTL (docs/librarian.md §3.6, §7.1: 60 s) for an unchanged index
// and an unchanged primary file. Thread safety: all members may be called concurrently.
class VerifyCache {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  explicit VerifyCache(std::chrono::milliseconds ttl = std::chrono::seconds(60),
                       std::size_t capacity = 1000, Clock now = {});
  // `key` = workspace id + claim id; `generation` = the store's Generation(); `file_state` =
  // the primary file's size and mtime now (any string that changes with the file).
  std::optional<Verification> Get(const std::string& key, const std::string& generation,
                                  const std::string& file_state);
  void Put(const std::string& key, const std::string& generation, const std::string& file_state,
           const Verification& v);

 private:
  struct Entry {
    Verification v;
    std::string generation;
    std::string file_state;
    std::chrono::steady_clock::time_point stored;
  };
  const std::chrono::milliseconds ttl_;
  const std::size_t capacity_;
  const Clock now_;
  std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // GUARDED_BY(mu_)
};

// Returns "<size>:<mtime_ns>" of the file at `abs_path`, or "missing".
std::string FileState(const std::string& abs_path);

// A line diff summary of `before` -> `after` ("2 lines changed, 1 added, 0 removed; first
// difference at line 3 of the span: `-  return 1;` `+  return 2;`"). Bounded: spans above
// kMaxDiffLines lines on either side are summarized by counts of differing lines only.
inline constexpr std::size_t kMaxDiffLines = 2000;
std::string DiffSummary(std::string_view before, std::string_view after);

}  // namespace trove::librarian::verify
