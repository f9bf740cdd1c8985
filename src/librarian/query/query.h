// Query: turns a natural-language intent into a ranked, token-budgeted list of context packs
// (docs/librarian.md §3.4; the seed's `query` input and output are the contract). Protocol-free:
// the MCP binding (server/), the CLI (cli/) and the evaluation (eval/) all call Query() directly.
//
// For eval/ (L-eval): open the workspace's store (store::Store::Open on
// <root>/.librarian/librarian.sqlite), fill a QueryRequest (intent; depth; set
// `weights` to try coefficients without touching the defaults) and call
//   Result<QueryResponse> r = query::Query(store, workspace, request, cancel);
// with `cache` left null so every call retrieves. Each returned Pack carries its target
// (target_id, primary_file, start_line/end_line), its RankSignals and score, so ranked ids for
// the harness are `pack.primary_file` (file level) and `pack.primary_file + "::" +
// pack.qualified_name` or the line span (function level).
//
// Function and module packs are built at query time from the store's symbols, chunks, calls and
// imports; pattern and decision packs are read from the store (packs/packs.h); change_impact and
// similar_tasks packs are assembled from the file graph and the episode log (docs/librarian.md
// §4.1, decision 0069). Pack ids are `pk_` + 16 hex digits of SHA-256(packType + "\n" + targetId),
// stable across runs.
//
// Thread safety: Query() uses `store` from the calling thread only (a Store belongs to one
// thread). A QueryCache may be shared by many threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"
#include "librarian/query/files.h"
#include "librarian/rank/rank.h"

namespace trove::librarian::store {
class Store;
}

namespace trove::librarian::query {

// Longest intent, in characters (docs/librarian.md §3.4: 1-2,000).
inline constexpr std::size_t kMaxIntentChars = 2000;
// Most affectedFiles entries (docs/librarian.md §3.4 decision).
inline constexpr std::size_t kMaxAffectedFiles = 1000;
// Graph expansion resolves calls by name. A name with more definitions than this (Python's
// `__init__`, `get`) would link every caller to every definition: expansion leaves it out,
// both as a callee and as a parent's name whose callers it reads (decision 0023).
inline constexpr std::size_t kMaxExpansionDefinitions = 100;

enum class Depth : std::uint8_t { kL0, kL1, kL2, kL3 };
// "L0".."L3".
std::string_view DepthName(Depth depth);
std::optional<Depth> ParseDepth(std::string_view name);

struct DepthBudget {
  std::size_t token_budget;  // estimated tokens of packs, synthesis and evidence
  std::size_t max_packs;
};
// docs/librarian.md §4.3: L0 2,000/4, L1 10,000/8, L2 30,000/12, L3 80,000/20.
DepthBudget BudgetFor(Depth depth);

enum class IntentType : std::uint8_t {
  kUnderstand,
  kDebug,
  kRefactor,
  kImpact,
  kSecurity,
  kTest,
  kDocument,
  kNavigate,
  kGeneral,
};
std::string_view IntentTypeName(IntentType type);
std::optional<IntentType> ParseIntentType(std::string_view name);
// docs/librarian.md §4.2: the first row whose words or phrases occur in the lower-cased intent,
// else general.
IntentType InferIntentType(std::string_view intent);

// The six pack types of spec §1.3 (decision 0069): function and module packs are built at query
// time from the store; pattern and decision packs are stored by bootstrap (packs/packs.h) and
// served while their triggers are current; change_impact packs are built at query time from the
// stored file graph and the call sites; similar_tasks packs come from recorded query episodes.
enum class PackType : std::uint8_t {
  kFunctionContext,
  kModuleContext,
  kPatternContext,
  kDecisionContext,
  kChangeImpact,
  kSimilarTasks,
};
inline constexpr PackType kAllPackTypes[] = {PackType::kFunctionContext, PackType::kModuleContext,
                                             PackType::kPatternContext,  PackType::kDecisionContext,
                                             PackType::kChangeImpact,    PackType::kSimilarTasks};
// "function_context", "module_context", "pattern_context", "decision_context",
// "change_impact", "similar_tasks".
std::string_view PackTypeName(PackType type);
std::optional<PackType> ParsePackType(std::string_view name);
// docs/librarian.md §4.3 depth weight times docs/librarian.md §4.2 intent weight for `type`.
double PackTypeWeight(PackType type, Depth depth, IntentType intent);

// "pk_" + the first 16 hex digits of SHA-256(packType + "\n" + targetId) (docs/librarian.md §1.1).
std::string PackId(PackType type, std::string_view target_id);

// ceil(utf8Bytes(text) / 4) (spec conventions).
std::size_t EstimateTokens(std::string_view text);

// The workspace a query runs against.
struct Workspace {
  std::string root;          // canonical absolute root; used to stat and hash trigger files
  std::string workspace_id;  // ws_ + 16 hex digits (docs/librarian.md §6.6); part of the cache key
};

struct QueryRequest {
  // Natural language, 1-kMaxIntentChars characters after trimming. Wire `intent`.
  std::string intent;
  // Unset or general: inferred (docs/librarian.md §4.2). Wire `intentType`.
  std::optional<IntentType> intent_type;
  // Workspace-relative, normalized paths (the caller sanitizes them: crawl/path.h).
  // Wire `affectedFiles`.
  std::vector<std::string> affected_files;
  // Wire `depth`; default L1.
  Depth depth = Depth::kL1;
  // Packs whose signal after defeaters is below this are dropped, and counted in a hint.
  // Wire `minConfidence`; default 0.5. A ranking threshold, not a probability.
  double min_confidence = 0.5;
  // Adds evidence references per pack (file and line ranges, span hash, snippet).
  // Wire `includeEvidence`; default false.
  bool include_evidence = false;
  // Server setting `maxResults` (1-100, default 10): packs = min(depth max, max_results).
  std::size_t max_results = 10;
  // Coefficients of the relevance sum; eval/ may override them (dev split only).
  rank::Weights weights;
  // Length of the ranked file list (QueryResponse::files), 0-kMaxFiles; 0: no list. Wire
  // `maxFiles`; default 10.
  std::size_t max_files = kDefaultMaxFiles;
  // Coefficients of the file aggregation (files.h); eval/ may override them (dev split only).
  FileWeights file_weights;
  // Not on the wire: the pack types the answer may hold; empty = all six. Bundles pass their
  // profile's types, the evaluation function and module packs only.
  std::vector<PackType> pack_types;
  // Not on the wire: consider recorded episodes for similar_tasks packs (default true).
  bool use_episodes = true;
};

// spec §3.2.5 verification plan, in the seed's shape.
struct VerificationMethod {
  std::string type;  // automated_test, manual_test, code_review, user_validation, metric,
                     // deployment, other
  std::string description;
  bool automatable = false;
  std::optional<std::string> command;  // never set: Librarian cannot know how tests are run
};
struct VerificationPlan {
  std::string id;      // vp_ + 16 hex digits over the target and the methods
  std::string target;  // the top pack's target id
  std::vector<VerificationMethod> methods;
  std::vector<std::string> expected_observations;
  std::vector<std::string> risk;
  std::vector<std::string> artifacts;  // files to re-read (the cited spans' files)
  std::string created_at;
  std::string updated_at;
};

// An evidence reference (docs/librarian.md §5.2) with the span's text while the token budget
// allows.
struct Evidence {
  std::string file;
  std::uint32_t start_line = 0;  // 1-based, inclusive
  std::uint32_t end_line = 0;
  std::string content_hash;  // SHA-256 of the span (symbol) or of the file (module)
  std::string extractor;     // "tree-sitter:cpp@0.23.4", "ctags@5.9", "text"
  std::string run_id;
  std::optional<std::string> snippet;
};

struct Pack {
  // The seven wire fields (docs/librarian.md §3.4).
  std::string pack_id;
  PackType pack_type = PackType::kFunctionContext;
  std::string target_id;  // fn:<path>::<qualified> or mod:<path>
  std::string summary;    // <= 240 characters
  std::vector<std::string> key_facts;
  std::vector<std::string> related_files;  // first = primary file
  // The pack's base signal after defeaters, in [0, 1]: a ranking heuristic (wire
  // `confidence`, docs/librarian.md §5.1), never a probability.
  double signal = 0;

  // Why it ranked here (docs/conventions.md §10.3) and the score it was ordered by.
  rank::RankSignals signals;
  double score = 0;

  // The target, for eval/ and evidence.
  std::string primary_file;
  std::string name;            // symbol name, or the file's base name
  std::string qualified_name;  // symbol qualified name, or the path
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  bool stale = false;              // a trigger file changed since indexing (code_change defeater)
  std::vector<Evidence> evidence;  // filled when include_evidence
};

enum class StageStatus : std::uint8_t { kRan, kSkipped, kDegraded };
std::string_view StageStatusName(StageStatus status);

struct Stage {
  std::string name;  // adequacy_scan, direct_packs, retrieval, graph_expansion, scoring,
                     // fallback, reranking, defeater_check, method_guidance, synthesis
  StageStatus status = StageStatus::kRan;
  std::string reason;  // for skipped and degraded
  double ms = 0;
  std::string engine;  // "lexical_bm25" for retrieval
};

struct Freshness {
  std::string run_id;      // the last run recorded in the store, "" when none
  std::string indexed_at;  // its finish time (RFC 3339), "" when none
  std::vector<std::string> stale_files;
  std::vector<std::string> stale_pack_ids;
};

struct QueryResponse {
  std::vector<Pack> packs;  // best first
  // The files the intent is about, best first, at most QueryRequest::max_files, each once:
  // aggregated over the whole scored candidate pool, not only the returned packs (files.h).
  std::vector<RankedFile> files;
  double total_confidence = 0;  // mean signal of the packs; 0 when none
  double latency_ms = 0;
  bool cache_hit = false;
  std::optional<std::string> synthesis;               // extractive, "[n]" citing pack ranks
  std::optional<VerificationPlan> verification_plan;  // spec §3.2.5
  std::vector<std::string> drill_down_hints;
  std::optional<std::string> error;       // a domain failure (e.g. not bootstrapped)
  std::optional<std::string> error_code;  // "RESOURCE_NOT_FOUND" with `error`
  std::vector<std::string> disclosures;   // "<code>: <text>"; always confidence_uncalibrated
  IntentType intent_type_used = IntentType::kGeneral;
  std::vector<Stage> stages;
  bool partial = false;
  Freshness freshness;
  std::size_t estimated_tokens = 0;  // of packs, synthesis and evidence
};

// QueryCache: answers to identical queries for 60 s (docs/librarian.md §7.1). The key covers the
// workspace id, the store's index generation (every index write changes it), the normalized
// intent, resolved intent type, depth, sorted affectedFiles, minConfidence, includeEvidence and
// maxResults. A hit re-stats the entry's trigger files (the returned packs' related files) and
// is dropped when any size or mtime differs. At most `capacity` entries, least recently used
// evicted. Responses with `error` or `partial` are not stored.
// Thread safety: all members may be called concurrently.
class QueryCache {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // `now` defaults to steady_clock::now; tests pass a fake clock.
  explicit QueryCache(std::chrono::milliseconds ttl = std::chrono::seconds(60),
                      std::size_t capacity = 1000, Clock now = {});

  struct Trigger {
    std::string abs_path;
    std::int64_t size = -1;  // -1: did not exist
    std::int64_t mtime_ns = 0;
  };

  // Returns the stored response for `key` when fresh and its triggers unchanged.
  std::optional<QueryResponse> Get(const std::string& key);
  void Put(const std::string& key, const QueryResponse& response, std::vector<Trigger> triggers);
  // Drops every entry (e.g. after a bootstrap).
  void Clear();
  std::size_t size() const;

  // Returns the trigger state of `abs_path` now.
  static Trigger Stat(const std::string& abs_path);

 private:
  struct Entry {
    QueryResponse response;
    std::vector<Trigger> triggers;
    std::chrono::steady_clock::time_point stored;
    std::list<std::string>::iterator lru;
  };
  const std::chrono::milliseconds ttl_;
  const std::size_t capacity_;
  const Clock now_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // GUARDED_BY(mu_)
  std::list<std::string> lru_;                      // GUARDED_BY(mu_), most recent first
};

// Runs the pipeline of docs/librarian.md §4.4 against `store`. Returns kInvalidArgument for an
// empty or too long intent ("intent: ..."), too many affectedFiles, or a min_confidence outside [0,
// 1]; kCancelled when `cancel` is set (polled between stages); store errors otherwise. A workspace
// without an index is not an error: the response has no packs, `error` set, `error_code`
// RESOURCE_NOT_FOUND and a bootstrap_required disclosure. With `cache`, identical queries
// within the TTL are answered from it (`cache_hit`, fresh `latency_ms`).
Result<QueryResponse> Query(store::Store& store, const Workspace& workspace,
                            const QueryRequest& request, base::Cancellation& cancel,
                            QueryCache* cache = nullptr);

}  // namespace trove::librarian::query
