#include "librarian/server/librarian_tools.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/hash.h"
#include "base/rfc3339.h"
#include "librarian/crawl/crawler.h"
#include "librarian/crawl/path.h"
#include "librarian/index/bootstrap.h"
#include "librarian/packs/packs.h"
#include "librarian/server/claims_tools.h"
#include "librarian/server/resource_tools.h"
#include "librarian/store/store.h"
#include "mcp/describe.h"
#include "mcp/policy/rate_limit.h"
#include "mcp/registry.h"

namespace trove::librarian::server {

std::string WorkspaceId(const std::string& canonical_root) {
  return "ws_" + base::Sha256Hex(canonical_root).substr(0, 16);
}

namespace {
constexpr std::size_t kMaxIdleStores = 4;
}  // namespace

StorePool::Lease::~Lease() {
  if (pool_ == nullptr || !store_) return;
  std::lock_guard<std::mutex> lock(pool_->mu_);
  if (pool_->idle_.size() < kMaxIdleStores) pool_->idle_.push_back(std::move(store_));
}

Result<StorePool::Lease> StorePool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<store::Store> s = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(s));
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<store::Store> s, store::Store::Open(path_));
  return Lease(this, std::move(s));
}

Workspaces::Entry Workspaces::Register(const std::string& canonical_root) {
  std::lock_guard<std::mutex> lock(mu_);
  for (Entry& e : entries_) {
    if (e.root == canonical_root) {
      e.cache->Clear();
      return e;
    }
  }
  entries_.push_back(
      Entry{canonical_root, WorkspaceId(canonical_root), std::make_shared<query::QueryCache>()});
  return entries_.back();
}

std::vector<Workspaces::Entry> Workspaces::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_;
}

std::optional<Workspaces::Entry> Workspaces::Find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (key.empty() || e.root == key || e.id == key) return e;
  }
  return std::nullopt;
}

namespace {

using mcp::Field;
using mcp::Fields;
using mcp::NotRequired;
using mcp::Tag;

constexpr std::string_view kProviders[] = {"claude", "codex"};
constexpr std::string_view kPolicies[] = {"skip", "retry", "fail"};
constexpr std::string_view kIntentTypes[] = {"understand", "debug",    "refactor",
                                             "impact",     "security", "test",
                                             "document",   "navigate", "general"};
constexpr std::string_view kDepths[] = {"L0", "L1", "L2", "L3"};

// --- bootstrap (docs/librarian.md §3.3) ---

struct BootstrapArgs {
  std::string workspace;
  std::optional<bool> force;
  std::optional<std::vector<std::string>> include;
  std::optional<std::vector<std::string>> exclude;
  std::optional<std::string> llm_provider;
  std::optional<std::int64_t> max_files;
  std::optional<std::int64_t> file_timeout_ms;
  std::optional<std::int32_t> file_timeout_retries;
  std::optional<std::string> file_timeout_policy;
};
inline auto DescribeFields(Tag<BootstrapArgs>) {
  using A = BootstrapArgs;
  return Fields(
      Field("workspace", &A::workspace, "Absolute path of the workspace root",
            mcp::LengthRange(1, crawl::kMaxUserPathChars)),
      Field("force", &A::force, "Re-index every file even when cached data exists"),
      Field("include", &A::include,
            "Globs a file must match to be indexed (default: every file of a known language)",
            mcp::ItemsRange(0, crawl::kMaxGlobsPerList)),
      Field("exclude", &A::exclude, "Globs of files to leave out; always wins over include",
            mcp::ItemsRange(0, crawl::kMaxGlobsPerList)),
      Field("llmProvider", &A::llm_provider,
            "Preferred LLM provider (CLI-auth only); v1 writes extractive summaries and discloses "
            "provider_unavailable",
            mcp::OneOf(kProviders)),
      Field("maxFiles", &A::max_files, "Index at most this many files, in sorted order (testing)",
            mcp::AtLeast(1)),
      Field("fileTimeoutMs", &A::file_timeout_ms, "Per-file timeout in ms; 0 disables",
            mcp::InRange(0, 3'600'000)),
      Field("fileTimeoutRetries", &A::file_timeout_retries, "Extra attempts after a timeout",
            mcp::InRange(0, 10)),
      Field("fileTimeoutPolicy", &A::file_timeout_policy,
            "What happens after the last timed-out attempt", mcp::OneOf(kPolicies)));
}

struct SkippedView {
  std::uint64_t large = 0;
  std::uint64_t binary = 0;
};
inline auto DescribeFields(Tag<SkippedView>) {
  return Fields(Field("large", &SkippedView::large, "Files above the size cap"),
                Field("binary", &SkippedView::binary, "Files with a NUL byte in the first 8 KiB"));
}

struct StatsView {
  std::string mode;
  std::uint64_t files_discovered = 0;
  std::uint64_t files_processed = 0;
  std::uint64_t files_unchanged = 0;
  std::uint64_t files_added = 0;
  std::uint64_t files_modified = 0;
  std::uint64_t files_deleted = 0;
  SkippedView files_skipped;
  std::uint64_t files_timed_out = 0;
  std::uint64_t files_failed = 0;
  std::uint64_t functions_indexed = 0;
  std::uint64_t types_indexed = 0;
  std::uint64_t modules_indexed = 0;
  std::uint64_t edges = 0;
  std::uint64_t context_packs_created = 0;
  std::uint64_t context_packs_total = 0;
  mcp::Json languages = mcp::Json::object();
  mcp::Json extractors = mcp::Json::object();
  bool truncated_by_max_files = false;
  std::uint64_t checkpoints = 0;
};
inline auto DescribeFields(Tag<StatsView>) {
  using S = StatsView;
  return Fields(
      Field("mode", &S::mode, "full, incremental or noop"),
      Field("filesDiscovered", &S::files_discovered, "Files kept by discovery"),
      Field("filesProcessed", &S::files_processed, "Files read or confirmed unchanged"),
      Field("filesUnchanged", &S::files_unchanged, "Files whose content did not change"),
      Field("filesAdded", &S::files_added, "New files"),
      Field("filesModified", &S::files_modified, "Changed files"),
      Field("filesDeleted", &S::files_deleted, "Files removed from the index"),
      Field("filesSkipped", &S::files_skipped, "Skipped files by reason"),
      Field("filesTimedOut", &S::files_timed_out, "Files recorded timed_out"),
      Field("filesFailed", &S::files_failed, "Files whose extraction failed"),
      Field("functionsIndexed", &S::functions_indexed, "Functions and methods in the index"),
      Field("typesIndexed", &S::types_indexed, "Classes, structs, interfaces, enums, aliases"),
      Field("modulesIndexed", &S::modules_indexed, "Namespaces, modules and packages"),
      Field("edges", &S::edges, "Import and call references"),
      Field("contextPacksCreated", &S::context_packs_created, "Packs of files extracted this run"),
      Field("contextPacksTotal", &S::context_packs_total, "Packs in the index"),
      Field("languages", &S::languages, "Indexed files per language"),
      Field("extractors", &S::extractors, "Indexed files per extractor"),
      Field("truncatedByMaxFiles", &S::truncated_by_max_files, "maxFiles cut the file list"),
      Field("checkpoints", &S::checkpoints, "Transactions committed with the run record"));
}

struct BootstrapOut {
  bool success = false;
  std::string workspace;
  std::int64_t duration_ms = 0;
  StatsView stats;
  std::optional<std::string> error;
  std::string run_id;
  std::vector<std::string> disclosures;
};
inline auto DescribeFields(Tag<BootstrapOut>) {
  using O = BootstrapOut;
  return Fields(Field("success", &O::success, "Whether the run succeeded"),
                Field("workspace", &O::workspace, "Canonical workspace root"),
                Field("durationMs", &O::duration_ms, "Wall time of the run"),
                Field("stats", &O::stats, "Counters of the run"),
                Field("error", &O::error, "Why the run failed"),
                Field("runId", &O::run_id, "The run's id"),
                Field("disclosures", &O::disclosures, "code: text notes about the run"));
}

// --- query (docs/librarian.md §3.4) ---

struct QueryArgs {
  std::optional<std::string> workspace;
  std::string intent;
  std::optional<std::string> intent_type;
  std::optional<std::vector<std::string>> affected_files;
  std::optional<std::string> depth;
  std::optional<double> min_confidence;
  std::optional<bool> include_engines;
  std::optional<bool> include_evidence;
  std::optional<std::int64_t> max_files;
};
inline auto DescribeFields(Tag<QueryArgs>) {
  using A = QueryArgs;
  return Fields(
      Field("workspace", &A::workspace,
            "Absolute path of a bootstrapped workspace; default: the first one bootstrapped",
            mcp::LengthRange(1, crawl::kMaxUserPathChars)),
      Field("intent", &A::intent, "Natural-language question or task, 1-2000 characters",
            mcp::LengthRange(1, query::kMaxIntentChars)),
      Field("intentType", &A::intent_type, "Kind of task; inferred from the intent when absent",
            mcp::OneOf(kIntentTypes)),
      Field("affectedFiles", &A::affected_files,
            "Workspace-relative files to scope the answer around",
            mcp::ItemsRange(0, query::kMaxAffectedFiles)),
      Field("depth", &A::depth, "L0 (2k tokens, 4 packs) to L3 (80k tokens); default L1",
            mcp::OneOf(kDepths)),
      Field("minConfidence", &A::min_confidence,
            "Drop packs whose ranking signal is lower (default 0.5); a heuristic threshold, not "
            "a calibrated probability",
            mcp::InRange(0, 1)),
      Field("includeEngines", &A::include_engines,
            "Engine reports (not produced in this version; disclosed)"),
      Field("includeEvidence", &A::include_evidence,
            "Add evidence references (file, line range, span hash, snippet) per pack"),
      Field("maxFiles", &A::max_files,
            "Length of the ranked file list `files` (default 10; 0: no list)",
            mcp::InRange(0, static_cast<double>(query::kMaxFiles))));
}

struct FileView {
  std::string path;
  double score = 0;
  std::int64_t matches = 0;
  std::optional<std::string> best_target;
  std::vector<std::string> why;
};
inline auto DescribeFields(Tag<FileView>) {
  using F = FileView;
  return Fields(
      Field("path", &F::path, "Workspace-relative file"),
      Field("score", &F::score, "Aggregated ranking signal the list is ordered by; uncalibrated"),
      Field("matches", &F::matches, "How many of the file's functions and module matched"),
      Field("bestTarget", &F::best_target, "Target id of the file's best match"),
      Field("why", &F::why,
            "Signals that matched: lexical, name, coverage, assoc, path, file_prior, graph, "
            "affected, file_text"));
}

struct PackView {
  std::string pack_id;
  std::string pack_type;
  std::string target_id;
  std::string summary;
  std::vector<std::string> key_facts;
  std::vector<std::string> related_files;
  double confidence = 0;
};
inline auto DescribeFields(Tag<PackView>) {
  using P = PackView;
  return Fields(
      Field("packId", &P::pack_id, "Stable pack id"),
      Field("packType", &P::pack_type,
            "function_context, module_context, pattern_context, decision_context, "
            "change_impact or similar_tasks"),
      Field("targetId", &P::target_id,
            "fn:<path>::<qualifiedName>, mod:<path>, pat:<hash>, adr:<path> or task:<id>"),
      Field("summary", &P::summary, "At most 240 characters"),
      Field("keyFacts", &P::key_facts, "Short claims about the target"),
      Field("relatedFiles", &P::related_files, "Files involved; the first is the primary file"),
      Field("confidence", &P::confidence,
            "Heuristic ranking signal in [0, 1], uncalibrated; not a probability"));
}

struct StageView {
  std::string name;
  std::string status;
  std::optional<std::string> reason;
  double ms = 0;
  std::optional<std::string> engine;
};
inline auto DescribeFields(Tag<StageView>) {
  using S = StageView;
  return Fields(Field("name", &S::name, "Pipeline stage"),
                Field("status", &S::status, "ran, skipped or degraded"),
                Field("reason", &S::reason, "Why it was skipped or degraded"),
                Field("ms", &S::ms, "Duration"), Field("engine", &S::engine, "Engine used"));
}

struct FreshnessView {
  std::string run_id;
  std::string indexed_at;
  std::vector<std::string> stale_files;
  std::vector<std::string> stale_pack_ids;
};
inline auto DescribeFields(Tag<FreshnessView>) {
  using F = FreshnessView;
  return Fields(Field("runId", &F::run_id, "Last index run"),
                Field("indexedAt", &F::indexed_at, "When it finished"),
                Field("staleFiles", &F::stale_files, "Files changed since indexing"),
                Field("stalePackIds", &F::stale_pack_ids, "Packs whose trigger files changed"));
}

struct EvidenceView {
  std::string file;
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  std::string content_hash;
  std::string extractor;
  std::string run_id;
  std::optional<std::string> snippet;
};
inline auto DescribeFields(Tag<EvidenceView>) {
  using E = EvidenceView;
  return Fields(Field("file", &E::file, "Workspace-relative path"),
                Field("startLine", &E::start_line, "First line, 1-based"),
                Field("endLine", &E::end_line, "Last line, inclusive"),
                Field("contentHash", &E::content_hash, "SHA-256 of the span or file"),
                Field("extractor", &E::extractor, "Extractor and version"),
                Field("runId", &E::run_id, "Run that indexed it"),
                Field("snippet", &E::snippet, "The span's text while the token budget allows"));
}

struct PackEvidenceView {
  std::string pack_id;
  std::vector<EvidenceView> evidence;
};
inline auto DescribeFields(Tag<PackEvidenceView>) {
  return Fields(Field("packId", &PackEvidenceView::pack_id, "The pack"),
                Field("evidence", &PackEvidenceView::evidence, "Its evidence references"));
}

struct SignalsView {
  double lexical = 0;
  double symbol = 0;
  double identifier = 0;
  double name_words = 0;
  double intent_words = 0;
  double owner_words = 0;
  double file = 0;
  double coverage = 0;
  double path = 0;
  double graph = 0;
  std::optional<std::int32_t> graph_hops;
  double inherited = 0;
  double pack_type_weight = 1;
  double base_signal = 0;
};
inline auto DescribeFields(Tag<SignalsView>) {
  using S = SignalsView;
  return Fields(Field("lexical", &S::lexical, "BM25 over the best candidate's, 0-1"),
                Field("symbol", &S::symbol,
                      "Intent names the symbol: 1, else 0.6 x share of its sub-words found"),
                Field("identifier", &S::identifier,
                      "Intent names the symbol as a compound identifier: 1, else 0"),
                Field("nameWords", &S::name_words,
                      "Share of the name's words found in the intent (stemmed, abbreviations "
                      "expanded)"),
                Field("intentWords", &S::intent_words,
                      "Share of the intent's content words the name carries"),
                Field("ownerWords", &S::owner_words,
                      "Share of the intent's content words only the owner's name carries"),
                Field("file", &S::file, "The primary file's lexical signal (file prior), 0-1"),
                Field("coverage", &S::coverage,
                      "Share of the intent's content words found in the function's own code"),
                Field("path", &S::path, "Share of the path's sub-words in the intent"),
                Field("graph", &S::graph, "Call-graph proximity or in-degree, 0-1"),
                Field("graphHops", &S::graph_hops, "Hops from an affected file"),
                Field("inherited", &S::inherited, "Relevance inherited by graph expansion"),
                Field("packTypeWeight", &S::pack_type_weight, "Depth and intentType weight"),
                Field("baseSignal", &S::base_signal, "Pack signal after defeaters"));
}

struct RankingView {
  std::string pack_id;
  double score = 0;
  SignalsView signals;
};
inline auto DescribeFields(Tag<RankingView>) {
  return Fields(Field("packId", &RankingView::pack_id, "The pack"),
                Field("score", &RankingView::score, "The ranking score packs are ordered by"),
                Field("signals", &RankingView::signals, "The signals behind the score"));
}

struct VerificationMethodView {
  std::string type;
  std::string description;
  bool automatable = false;
  std::optional<std::string> command;
};
inline auto DescribeFields(Tag<VerificationMethodView>) {
  using V = VerificationMethodView;
  return Fields(Field("type", &V::type,
                      "automated_test, manual_test, code_review, user_validation, metric, "
                      "deployment or other"),
                Field("description", &V::description, "What to do"),
                Field("automatable", &V::automatable, "Whether an agent can do it unaided"),
                Field("command", &V::command, "Never set: Librarian cannot know how to run it"));
}

struct VerificationPlanView {
  std::string id;
  std::string target;
  std::vector<VerificationMethodView> methods;
  std::vector<std::string> expected_observations;
  std::vector<std::string> risk;
  std::vector<std::string> artifacts;
  std::string created_at;
  std::string updated_at;
};
inline auto DescribeFields(Tag<VerificationPlanView>) {
  using V = VerificationPlanView;
  return Fields(Field("id", &V::id, "vp_ + 16 hex digits"),
                Field("target", &V::target, "Target id of the top pack"),
                Field("methods", &V::methods, "Steps that verify the answer"),
                Field("expectedObservations", &V::expected_observations, "What should be seen"),
                Field("risk", &V::risk, "What could make the answer wrong"),
                Field("artifacts", &V::artifacts, "Cited files and spans to re-read"),
                Field("createdAt", &V::created_at, "RFC 3339"),
                Field("updatedAt", &V::updated_at, "RFC 3339"));
}

struct QueryOut {
  std::vector<PackView> packs;
  std::vector<FileView> files;
  double total_confidence = 0;
  double latency_ms = 0;
  bool cache_hit = false;
  std::optional<std::string> synthesis;
  std::optional<VerificationPlanView> verification_plan;
  std::vector<std::string> drill_down_hints;
  std::optional<std::string> error;
  std::optional<std::string> error_code;
  std::vector<std::string> disclosures;
  std::string intent_type_used;
  std::vector<StageView> stages;
  bool partial = false;
  FreshnessView freshness;
  std::optional<std::vector<PackEvidenceView>> evidence_by_pack;
  std::vector<RankingView> ranking;
};
inline auto DescribeFields(Tag<QueryOut>) {
  using O = QueryOut;
  return Fields(Field("packs", &O::packs, "Context packs, best first"),
                Field("files", &O::files,
                      "Files the intent is about, best first, ranked over every scored "
                      "candidate (not only the packs)"),
                Field("totalConfidence", &O::total_confidence,
                      "Mean ranking signal of the packs (uncalibrated); 0 when none"),
                Field("latencyMs", &O::latency_ms, "Wall time of this call"),
                Field("cacheHit", &O::cache_hit, "Served from the 60 s query cache"),
                Field("synthesis", &O::synthesis, "Extractive synthesis citing packs as [n]"),
                Field("verificationPlan", &O::verification_plan,
                      "How to verify the answer (debug, refactor, impact, security, test "
                      "intents, or stale packs)"),
                Field("drillDownHints", &O::drill_down_hints, "What to try next"),
                Field("error", &O::error, "Domain failure, e.g. workspace not bootstrapped"),
                Field("errorCode", &O::error_code, "Code of the error, e.g. RESOURCE_NOT_FOUND"),
                Field("disclosures", &O::disclosures, "code: text; always confidence_uncalibrated"),
                Field("intentTypeUsed", &O::intent_type_used, "Given or inferred intent type"),
                Field("stages", &O::stages, "Every pipeline stage"),
                Field("partial", &O::partial, "A stage was cut by the latency budget"),
                Field("freshness", &O::freshness, "Index run and stale files"),
                Field("evidenceByPack", &O::evidence_by_pack, "With includeEvidence"),
                Field("ranking", &O::ranking, "Per pack: its score and ranking signals"));
}

// --- conversions ---

BootstrapOut ToView(const index::BootstrapReport& r) {
  BootstrapOut out;
  out.success = r.success;
  out.workspace = r.workspace;
  out.duration_ms = r.duration_ms;
  out.run_id = r.run_id;
  out.disclosures = r.disclosures;
  if (!r.error.empty()) out.error = r.error;
  const index::BootstrapStats& s = r.stats;
  StatsView& v = out.stats;
  v.mode = s.mode;
  v.files_discovered = s.files_discovered;
  v.files_processed = s.files_processed;
  v.files_unchanged = s.files_unchanged;
  v.files_added = s.files_added;
  v.files_modified = s.files_modified;
  v.files_deleted = s.files_deleted;
  v.files_skipped = {s.files_skipped_large, s.files_skipped_binary};
  v.files_timed_out = s.files_timed_out;
  v.files_failed = s.files_failed;
  v.functions_indexed = s.functions_indexed;
  v.types_indexed = s.types_indexed;
  v.modules_indexed = s.modules_indexed;
  v.edges = s.edges;
  v.context_packs_created = s.context_packs_created;
  v.context_packs_total = s.context_packs_total;
  for (const auto& [k, n] : s.languages) v.languages[k] = n;
  for (const auto& [k, n] : s.extractors) v.extractors[k] = n;
  v.truncated_by_max_files = s.truncated_by_max_files;
  v.checkpoints = s.checkpoints;
  return out;
}

QueryOut ToView(const query::QueryResponse& r, bool include_evidence) {
  QueryOut out;
  for (const query::Pack& p : r.packs) {
    out.packs.push_back(PackView{p.pack_id, std::string(query::PackTypeName(p.pack_type)),
                                 p.target_id, p.summary, p.key_facts, p.related_files, p.signal});
    const rank::RankSignals& g = p.signals;
    SignalsView s{.lexical = g.lexical,
                  .symbol = g.symbol,
                  .identifier = g.identifier,
                  .name_words = g.name_words,
                  .intent_words = g.intent_words,
                  .owner_words = g.owner_words,
                  .file = g.file,
                  .coverage = g.coverage,
                  .path = g.path,
                  .graph = g.graph,
                  .graph_hops = std::nullopt,
                  .inherited = g.inherited,
                  .pack_type_weight = g.pack_type_weight,
                  .base_signal = g.base_signal};
    if (p.signals.graph_hops != rank::kNotConnected) s.graph_hops = p.signals.graph_hops;
    out.ranking.push_back(RankingView{p.pack_id, p.score, s});
  }
  for (const query::RankedFile& f : r.files) {
    FileView v{f.path, f.score, static_cast<std::int64_t>(f.matches), std::nullopt, f.why};
    if (!f.best_target.empty()) v.best_target = f.best_target;
    out.files.push_back(std::move(v));
  }
  out.total_confidence = r.total_confidence;
  out.latency_ms = r.latency_ms;
  out.cache_hit = r.cache_hit;
  out.synthesis = r.synthesis;
  if (r.verification_plan) {
    const query::VerificationPlan& vp = *r.verification_plan;
    VerificationPlanView v{
        vp.id,        vp.target,     {},           vp.expected_observations, vp.risk,
        vp.artifacts, vp.created_at, vp.updated_at};
    for (const query::VerificationMethod& m : vp.methods) {
      v.methods.push_back(VerificationMethodView{m.type, m.description, m.automatable, m.command});
    }
    out.verification_plan = std::move(v);
  }
  out.drill_down_hints = r.drill_down_hints;
  out.error = r.error;
  out.error_code = r.error_code;
  out.disclosures = r.disclosures;
  out.intent_type_used = std::string(query::IntentTypeName(r.intent_type_used));
  for (const query::Stage& s : r.stages) {
    StageView v{s.name, std::string(query::StageStatusName(s.status)), std::nullopt, s.ms,
                std::nullopt};
    if (!s.reason.empty()) v.reason = s.reason;
    if (!s.engine.empty()) v.engine = s.engine;
    out.stages.push_back(std::move(v));
  }
  out.partial = r.partial;
  out.freshness = {r.freshness.run_id, r.freshness.indexed_at, r.freshness.stale_files,
                   r.freshness.stale_pack_ids};
  if (include_evidence) {
    out.evidence_by_pack.emplace();
    for (const query::Pack& p : r.packs) {
      PackEvidenceView pe{p.pack_id, {}};
      for (const query::Evidence& e : p.evidence) {
        pe.evidence.push_back(EvidenceView{e.file, e.start_line, e.end_line, e.content_hash,
                                           e.extractor, e.run_id, e.snippet});
      }
      out.evidence_by_pack->push_back(std::move(pe));
    }
  }
  return out;
}

// spec §3.2.5 episodes: a query that returned packs is appended to the workspace's ledger as an
// `episode` (feeding similar_tasks packs) and its packs' access counters are bumped. Never
// waits for a bootstrap holding the store: the write lock is tried for 50 ms, and a failure
// only adds a disclosure.
void RecordEpisode(store::Store& st, const query::QueryRequest& req, query::QueryResponse& r) {
  if (r.error || r.packs.empty()) return;
  packs::Episode e;
  e.intent = req.intent;
  e.intent_type = std::string(query::IntentTypeName(r.intent_type_used));
  e.depth = std::string(query::DepthName(req.depth));
  for (const query::Pack& p : r.packs) {
    e.pack_ids.push_back(p.pack_id);
    e.target_ids.push_back(p.target_id);
    if (!p.primary_file.empty() &&
        std::find(e.files.begin(), e.files.end(), p.primary_file) == e.files.end()) {
      e.files.push_back(p.primary_file);
    }
  }
  Result<std::int64_t> id = packs::RecordEpisode(st.db(), e, "mcp", 50);
  if (!id.ok()) {
    r.disclosures.push_back(fmt::format("partial_result: the query episode was not recorded: {}",
                                        id.status().message()));
  }
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Opens the workspace's store for reading; nullopt when it was never bootstrapped (the
// store is not created by a read).
Result<std::unique_ptr<store::Store>> OpenStore(const std::string& root) {
  const std::string path = index::StorePathFor(root);
  if (!FileExists(path)) return std::unique_ptr<store::Store>();
  return store::Store::Open(path);
}

// Confines a client-sent workspace path to the server's allowed roots (CallContext::ResolvePath,
// docs/decisions/0048-mcp-policy-layer.md): an absolute path, inside a root after `..` and
// symlinks are resolved. Returns the resolved path, or the refusal naming `workspace`.
Result<std::string> ConfineWorkspace(mcp::CallContext& ctx, const std::string& path) {
  if (path.empty() || path.front() != '/') {
    return Status::InvalidArgument("workspace: must be an absolute path");
  }
  Result<std::string> resolved = ctx.ResolvePath(path);
  if (!resolved.ok()) {
    return Status(resolved.status().code(),
                  fmt::format("workspace: {}", resolved.status().message()));
  }
  return resolved;
}

// Refuses a registered workspace (the default one, one named by a resource URI, one given at
// start-up) that lies outside the allowed roots.
Status RequireAllowedWorkspace(mcp::CallContext& ctx, const Workspaces::Entry& ws,
                               std::string_view where) {
  if (ctx.ResolvePath(ws.root).ok()) return Status::Ok();
  return Status::PermissionDenied(
      fmt::format("{}: the workspace is outside the allowed roots of this server", where));
}

// Resolves the `workspace` argument of a read: an absolute directory inside the allowed roots
// (canonicalized, errors naming `workspace`), else the first registered workspace.
Result<std::optional<Workspaces::Entry>> ResolveWorkspace(Workspaces& workspaces,
                                                          const std::optional<std::string>& arg,
                                                          mcp::CallContext& ctx) {
  if (!arg) {
    std::optional<Workspaces::Entry> first = workspaces.Find("");
    if (first) RETURN_IF_ERROR(RequireAllowedWorkspace(ctx, *first, "workspace"));
    return first;
  }
  ASSIGN_OR_RETURN(std::string confined, ConfineWorkspace(ctx, *arg));
  ASSIGN_OR_RETURN(std::string root, crawl::CanonicalWorkspaceRoot(confined));
  if (std::optional<Workspaces::Entry> e = workspaces.Find(root)) return e;
  // A workspace bootstrapped by another process (or the CLI) is registered on first use.
  if (FileExists(index::StorePathFor(root))) return workspaces.Register(root);
  return std::optional<Workspaces::Entry>(
      Workspaces::Entry{root, WorkspaceId(root), nullptr, nullptr});
}

// The "ctags" circuit breaker around one bootstrap (docs/decisions/0052-breakers-around-
// dependencies.md). While the breaker is open, bootstrap runs without ctags: the files ctags
// would index are indexed as plain text and the report discloses `ctags_skipped`. Otherwise the
// run's ctags subprocesses are counted and the run is reported once, when the guard goes: a
// failure when ctags failed or timed out and never succeeded, a success when at least one
// run succeeded, nothing when ctags did not run.
class CtagsBreakerGuard {
 public:
  CtagsBreakerGuard(mcp::policy::CircuitBreaker& breaker, index::BootstrapOptions& options)
      : breaker_(breaker), counts_(std::make_shared<Counts>()) {
    if (options.ctags_program.empty()) return;  // ctags disabled: no dependency
    const mcp::policy::Admission admission = breaker_.Admit();
    if (!admission.allowed) {
      retry_after_ms_ = admission.retry_after_ms;
      options.ctags_program.clear();
      return;
    }
    admitted_ = true;
    options.on_ctags_run = [counts = counts_](bool ok) {
      (ok ? counts->ok : counts->failed).fetch_add(1, std::memory_order_relaxed);
    };
  }
  ~CtagsBreakerGuard() {
    if (!admitted_) return;
    const std::uint64_t ok = counts_->ok.load();
    const std::uint64_t failed = counts_->failed.load();
    breaker_.Report(ok > 0       ? mcp::policy::CallOutcome::kSuccess
                    : failed > 0 ? mcp::policy::CallOutcome::kFailure
                                 : mcp::policy::CallOutcome::kIgnored);
  }
  CtagsBreakerGuard(const CtagsBreakerGuard&) = delete;
  CtagsBreakerGuard& operator=(const CtagsBreakerGuard&) = delete;

  bool skipped() const { return retry_after_ms_.has_value(); }
  std::string Disclosure() const {
    return fmt::format(
        "ctags_skipped: ctags failed repeatedly and its circuit breaker is open, so files "
        "only ctags can index were indexed as plain text; bootstrap again with force after "
        "{} ms to index them with ctags",
        retry_after_ms_.value_or(0));
  }

 private:
  struct Counts {
    std::atomic<std::uint64_t> ok{0};
    std::atomic<std::uint64_t> failed{0};
  };
  mcp::policy::CircuitBreaker& breaker_;
  std::shared_ptr<Counts> counts_;  // shared with the hook, which worker threads call
  bool admitted_ = false;
  std::optional<std::int64_t> retry_after_ms_;  // set when the open breaker skipped ctags
};

// --- resources (docs/librarian.md §3.5) ---

constexpr std::size_t kDefaultPage = 1000;
constexpr std::size_t kMaxPage = 10000;

struct ResourceQuery {
  std::string kind;
  std::int64_t offset = 0;  // file-tree: files skipped; symbols: last symbol id seen
  std::size_t limit = kDefaultPage;
};

std::string EncodeCursor(std::string_view kind, std::int64_t value) {
  return base::Base64UrlEncode(fmt::format("{}:{}", kind, value));
}

// Parses "<kind>[?cursor=..&limit=..]".
Result<ResourceQuery> ParseResourceQuery(const std::string& uri, std::string_view kind_and_query) {
  ResourceQuery q;
  const std::size_t qm = kind_and_query.find('?');
  q.kind = std::string(kind_and_query.substr(0, qm));
  if (qm == std::string_view::npos) return q;
  std::string_view rest = kind_and_query.substr(qm + 1);
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    const std::string_view key = pair.substr(0, eq);
    const std::string value(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (key == "limit") {
      std::size_t n = 0;
      bool ok = !value.empty() && value.size() <= 6;
      for (char c : value) {
        ok = ok && c >= '0' && c <= '9';
        if (ok) n = n * 10 + static_cast<std::size_t>(c - '0');
      }
      if (!ok || n < 1 || n > kMaxPage) {
        return Status::InvalidArgument(
            fmt::format("{}: limit: must be an integer from 1 to {}", uri, kMaxPage));
      }
      q.limit = n;
    } else if (key == "cursor") {
      Result<std::string> raw = base::Base64UrlDecode(value);
      const std::string prefix = q.kind + ":";
      bool ok = raw.ok() && raw->rfind(prefix, 0) == 0 && raw->size() > prefix.size() &&
                raw->size() < prefix.size() + 19;
      std::int64_t v = 0;
      if (ok) {
        for (char c : raw->substr(prefix.size())) {
          ok = ok && c >= '0' && c <= '9';
          if (ok) v = v * 10 + (c - '0');
        }
      }
      if (!ok) return Status::InvalidArgument(fmt::format("{}: cursor: invalid cursor", uri));
      q.offset = v;
    } else {
      return Status::InvalidArgument(
          fmt::format("{}: unknown query parameter '{}' (cursor, limit)", uri, key));
    }
  }
  return q;
}

Result<mcp::Json> FileTree(store::Store& st, const Workspaces::Entry& ws, const ResourceQuery& q,
                           const std::string& base_uri) {
  ASSIGN_OR_RETURN(std::vector<store::FileRecord> files, st.ListFiles());
  std::set<std::string> all_dirs;
  for (const store::FileRecord& f : files) {
    for (std::size_t s = f.path.find('/'); s != std::string::npos; s = f.path.find('/', s + 1)) {
      all_dirs.insert(f.path.substr(0, s));
    }
  }
  mcp::Json root = {{"name", ""}, {"path", "."}, {"type", "dir"}, {"children", mcp::Json::array()}};
  // Pointers into `children` arrays: a later push_back may move a directory's earlier
  // siblings, but ListFiles is sorted bytewise, so every path under a directory is contiguous
  // and a directory is never revisited once a sibling after it was added.
  std::map<std::string, mcp::Json*> dirs;
  const std::size_t begin = std::min<std::size_t>(static_cast<std::size_t>(q.offset), files.size());
  const std::size_t end = std::min(files.size(), begin + q.limit);
  for (std::size_t i = begin; i < end; ++i) {
    const store::FileRecord& f = files[i];
    ASSIGN_OR_RETURN(std::vector<store::SymbolRow> syms, st.FileSymbols(f.path));
    mcp::Json* parent = &root;
    std::size_t start = 0;
    for (std::size_t s = f.path.find('/'); s != std::string::npos; s = f.path.find('/', s + 1)) {
      const std::string dir_path = f.path.substr(0, s);
      auto it = dirs.find(dir_path);
      if (it == dirs.end()) {
        (*parent)["children"].push_back({{"name", f.path.substr(start, s - start)},
                                         {"path", dir_path},
                                         {"type", "dir"},
                                         {"children", mcp::Json::array()}});
        it = dirs.emplace(dir_path, &(*parent)["children"].back()).first;
      }
      parent = it->second;
      start = s + 1;
    }
    (*parent)["children"].push_back({{"name", f.path.substr(start)},
                                     {"path", f.path},
                                     {"type", "file"},
                                     {"language", f.language},
                                     {"size", f.size},
                                     {"status", store::FileStatusName(f.status)},
                                     {"symbolCount", syms.size()},
                                     {"extractor", f.extractor}});
  }
  mcp::Json out = {{"workspaceId", ws.id},
                   {"generatedAt", base::NowRfc3339()},
                   {"counts", {{"files", files.size()}, {"directories", all_dirs.size()}}},
                   {"root", std::move(root)}};
  if (end < files.size()) {
    out["nextCursor"] = EncodeCursor("file-tree", static_cast<std::int64_t>(end));
    out["nextUri"] = fmt::format("{}?cursor={}&limit={}", base_uri,
                                 out["nextCursor"].get<std::string>(), q.limit);
  }
  return out;
}

Result<mcp::Json> Symbols(store::Store& st, const Workspaces::Entry& ws, const ResourceQuery& q,
                          const std::string& base_uri) {
  ASSIGN_OR_RETURN(std::vector<store::SymbolRow> page, st.ListSymbols(q.offset, q.limit + 1));
  const bool more = page.size() > q.limit;
  if (more) page.resize(q.limit);
  ASSIGN_OR_RETURN(std::int64_t total, st.CountRows("symbols"));
  ASSIGN_OR_RETURN(std::int64_t files, st.CountRows("files"));
  mcp::Json symbols = mcp::Json::array();
  std::map<std::string, std::string> languages;
  std::vector<std::string> module_paths;
  for (const store::SymbolRow& s : page) {
    auto lang = languages.find(s.path);
    if (lang == languages.end()) {
      ASSIGN_OR_RETURN(std::optional<store::FileRecord> f, st.GetFile(s.path));
      lang = languages.emplace(s.path, f ? f->language : "").first;
      module_paths.push_back(s.path);
    }
    mcp::Json j = {{"id", s.target_id},
                   {"name", s.name},
                   {"qualifiedName", s.qualified_name},
                   {"kind", s.kind},
                   {"language", lang->second},
                   {"file", s.path},
                   {"startLine", s.start_line},
                   {"endLine", s.end_line}};
    if (!s.signature.empty()) j["signature"] = s.signature;
    symbols.push_back(std::move(j));
  }
  mcp::Json modules = mcp::Json::array();
  for (const std::string& path : module_paths) {
    ASSIGN_OR_RETURN(std::vector<store::SymbolRow> defs, st.FileSymbols(path));
    ASSIGN_OR_RETURN(std::vector<store::ImportRow> imports, st.FileImports(path));
    mcp::Json includes = mcp::Json::array();
    for (const store::ImportRow& i : imports) includes.push_back(i.module);
    std::set<std::string> importers;
    const std::size_t slash = path.rfind('/');
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    const std::size_t dot = base.rfind('.');
    for (const std::string& spelled :
         {base, dot == std::string::npos || dot == 0 ? base : base.substr(0, dot), path}) {
      ASSIGN_OR_RETURN(std::vector<store::ImportRow> rows, st.Importers(spelled, 100));
      for (const store::ImportRow& r : rows) {
        if (r.path != path) importers.insert(r.path);
      }
    }
    modules.push_back(
        {{"id", "mod:" + path},
         {"path", path},
         {"definitions", defs.size()},
         {"includes", std::move(includes)},
         {"importers", std::vector<std::string>(importers.begin(), importers.end())}});
  }
  mcp::Json out = {{"workspaceId", ws.id},
                   {"counts", {{"symbols", total}, {"modules", files}, {"page", page.size()}}},
                   {"symbols", std::move(symbols)},
                   {"modules", std::move(modules)}};
  if (more) {
    out["nextCursor"] = EncodeCursor("symbols", page.back().id);
    out["nextUri"] = fmt::format("{}?cursor={}&limit={}", base_uri,
                                 out["nextCursor"].get<std::string>(), q.limit);
  }
  return out;
}

Result<std::vector<mcp::ResourceContents>> ReadResource(Workspaces& workspaces,
                                                        mcp::CallContext& ctx,
                                                        const std::string& uri,
                                                        const std::string& workspace_key,
                                                        const std::string& kind_and_query) {
  ASSIGN_OR_RETURN(ResourceQuery q, ParseResourceQuery(uri, kind_and_query));
  if (q.kind != "file-tree" && q.kind != "symbols" && !IsExtraResourceKind(q.kind)) {
    return Status::NotFound(fmt::format("{}: unknown resource kind", uri));
  }
  std::optional<Workspaces::Entry> ws =
      workspaces.Find(workspace_key == "workspace" ? "" : workspace_key);
  if (!ws || workspace_key.rfind('/', 0) == 0) {
    return Status::NotFound(fmt::format("{}: no such bootstrapped workspace", uri));
  }
  RETURN_IF_ERROR(RequireAllowedWorkspace(ctx, *ws, "resource"));
  ASSIGN_OR_RETURN(std::unique_ptr<store::Store> st, OpenStore(ws->root));
  if (!st) return Status::NotFound(fmt::format("{}: workspace is not bootstrapped", uri));
  const std::string base_uri = fmt::format("librarian://{}/{}", workspace_key, q.kind);
  if (IsExtraResourceKind(q.kind)) {  // resource_tools.h (decision 0063)
    return ReadExtraResource(
        *st, ExtraResourceRequest{uri, base_uri, q.kind, ws->id, ws->root, q.offset, q.limit}, ctx);
  }
  mcp::Json body;
  if (q.kind == "file-tree") {
    ASSIGN_OR_RETURN(body, FileTree(*st, *ws, q, base_uri));
  } else {
    ASSIGN_OR_RETURN(body, Symbols(*st, *ws, q, base_uri));
  }
  return std::vector<mcp::ResourceContents>{mcp::ResourceContents{
      uri, "application/json", body.dump(-1, ' ', false, mcp::Json::error_handler_t::replace),
      std::nullopt}};
}

}  // namespace

std::string QueryResponseJson(const query::QueryResponse& response, bool include_evidence) {
  return mcp::ToJson(ToView(response, include_evidence))
      .dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
}

std::string BootstrapReportJson(const index::BootstrapReport& report) {
  return mcp::ToJson(ToView(report)).dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
}

Status RegisterLibrarianTools(mcp::Server& server, Workspaces& workspaces,
                              const ServiceOptions& options) {
  mcp::ToolRegistry& tools = server.tools();
  Status added = tools.Add<BootstrapArgs, BootstrapOut>(
      {.name = "bootstrap",
       .title = "Index a workspace",
       .description =
           "Initialize or refresh the knowledge index of a workspace (an absolute path): walks "
           "it honouring .gitignore and include/exclude globs, extracts symbols with "
           "tree-sitter (ctags, then plain text as fallbacks) and stores them in "
           "<workspace>/.librarian/librarian.sqlite. Incremental by content hash unless force. "
           "Reports progress when given a progress token; can be cancelled. Run it once per "
           "workspace before query.",
       .annotations = {.title = "Index a workspace",
                       .read_only = false,
                       .destructive = false,
                       .idempotent = true,
                       .open_world = true},
       .scopes = {"write"},    // writes the workspace's index
       .needs_consent = true,  // writes .librarian/ into the workspace (docs/librarian.md §8.3)
       .deadline = std::chrono::minutes(30)},
      [&workspaces, options](const BootstrapArgs& args,
                             mcp::CallContext& ctx) -> Result<BootstrapOut> {
        ASSIGN_OR_RETURN(std::string workspace, ConfineWorkspace(ctx, args.workspace));
        index::BootstrapOptions o;
        o.workspace = std::move(workspace);
        o.force = args.force.value_or(false);
        if (args.include) o.include = *args.include;
        if (args.exclude) o.exclude = *args.exclude;
        if (args.max_files) o.max_files = static_cast<std::uint64_t>(*args.max_files);
        if (args.file_timeout_ms) o.timeout.timeout_ms = *args.file_timeout_ms;
        if (args.file_timeout_retries) o.timeout.retries = *args.file_timeout_retries;
        if (args.file_timeout_policy) {
          ASSIGN_OR_RETURN(o.timeout.policy,
                           crawl::ParseFileTimeoutPolicy(*args.file_timeout_policy));
        }
        if (args.llm_provider) o.llm_provider = *args.llm_provider;
        o.ctags_program = options.ctags_program;
        o.workers = options.bootstrap_workers;
        // Validated first so a bad workspace or glob is refused before anything is written.
        RETURN_IF_ERROR(index::ValidateBootstrapOptions(o).status());
        // ctags is a subprocess behind the "ctags" circuit breaker (docs/decisions/0052).
        CtagsBreakerGuard ctags(ctx.breaker("ctags"), o);
        const base::Progress progress = ctx.MakeProgress();
        ASSIGN_OR_RETURN(index::BootstrapReport report,
                         index::Bootstrap(o, ctx.cancellation(), progress));
        if (ctags.skipped()) report.disclosures.push_back(ctags.Disclosure());
        workspaces.Register(report.workspace);  // also drops its cached answers
        return ToView(report);
      });
  if (!added.ok()) return added;

  added = tools.Add<QueryArgs, QueryOut>(
      {.name = "query",
       .title = "Query the knowledge index",
       .description =
           "Turn a natural-language intent into ranked, token-budgeted context packs "
           "(function_context, module_context, pattern_context, decision_context, "
           "change_impact, similar_tasks) with summaries, key facts, related files, an "
           "extractive synthesis, a verification plan and drill-down hints. Retrieval is lexical "
           "(BM25 over "
           "function-level chunks) plus symbol, path and call-graph signals. confidence, "
           "totalConfidence and minConfidence are uncalibrated ranking signals, not "
           "probabilities. Answers are cached for 60 s unless a file changes.",
       .annotations = {.title = "Query the knowledge index",
                       .read_only = true,
                       .destructive = false,
                       .idempotent = true,
                       .open_world = false},
       .scopes = {"read"}},
      [&workspaces, options](const QueryArgs& args, mcp::CallContext& ctx) -> Result<QueryOut> {
        ASSIGN_OR_RETURN(std::optional<Workspaces::Entry> ws,
                         ResolveWorkspace(workspaces, args.workspace, ctx));
        query::QueryRequest req;
        req.intent = args.intent;
        if (args.intent_type) req.intent_type = query::ParseIntentType(*args.intent_type);
        if (args.depth) req.depth = query::ParseDepth(*args.depth).value_or(query::Depth::kL1);
        req.min_confidence = args.min_confidence.value_or(0.5);
        req.include_evidence = args.include_evidence.value_or(false);
        req.max_results = options.max_results;
        if (args.max_files) req.max_files = static_cast<std::size_t>(*args.max_files);
        std::unique_ptr<store::Store> st;
        if (ws) {
          if (args.affected_files) {
            for (std::size_t i = 0; i < args.affected_files->size(); ++i) {
              ASSIGN_OR_RETURN(std::string rel, crawl::ResolveInWorkspace(
                                                    ws->root, (*args.affected_files)[i],
                                                    {.field = fmt::format("affectedFiles[{}]", i),
                                                     .allow_absolute = false}));
              req.affected_files.push_back(std::move(rel));
            }
          }
          if (ws->stores && FileExists(index::StorePathFor(ws->root))) {
            ASSIGN_OR_RETURN(StorePool::Lease lease, ws->stores->Acquire());
            query::Workspace w{ws->root, ws->id};
            ASSIGN_OR_RETURN(query::QueryResponse r,
                             query::Query(*lease, w, req, ctx.cancellation(), ws->cache.get()));
            RecordEpisode(*lease, req, r);
            if (args.include_engines.value_or(false)) {
              r.disclosures.push_back(
                  "partial_result: includeEngines was requested but the relevance, constraints "
                  "and meta engines are not produced in this version");
            }
            return ToView(r, req.include_evidence);
          }
          ASSIGN_OR_RETURN(st, OpenStore(ws->root));
        }
        if (!st) {
          // Not bootstrapped: validate the intent, then the domain outcome of docs/librarian.md
          // §3.1.
          ASSIGN_OR_RETURN(std::unique_ptr<store::Store> empty, store::Store::Open(":memory:"));
          query::Workspace w{ws ? ws->root : "", ws ? ws->id : ""};
          ASSIGN_OR_RETURN(query::QueryResponse r,
                           query::Query(*empty, w, req, ctx.cancellation()));
          return ToView(r, req.include_evidence);
        }
        query::Workspace w{ws->root, ws->id};
        ASSIGN_OR_RETURN(query::QueryResponse r,
                         query::Query(*st, w, req, ctx.cancellation(), ws->cache.get()));
        RecordEpisode(*st, req, r);
        if (args.include_engines.value_or(false)) {
          r.disclosures.push_back(
              "partial_result: includeEngines was requested but the relevance, constraints "
              "and meta engines are not produced in this version");
        }
        return ToView(r, req.include_evidence);
      });
  if (!added.ok()) return added;

  added = RegisterClaimsTools(server, workspaces, options);  // claims_tools.h
  if (!added.ok()) return added;

  mcp::ResourceRegistry& resources = server.resources();
  for (std::string_view kind :
       {"file-tree", "symbols", "knowledge-maps", "method-packs", "provenance", "identity"}) {
    const std::string k(kind);
    added = resources.Add(
        {.uri = "librarian://workspace/" + k,
         .name = k,
         .title = IsExtraResourceKind(k) ? ExtraResourceTitle(k)
                  : k == "file-tree"     ? "Workspace file tree"
                                         : "Workspace symbols",
         .description =
             IsExtraResourceKind(k) ? ExtraResourceDescription(k)
             : k == "file-tree"
                 ? "Directory tree of the default (first bootstrapped) workspace with each "
                   "file's language, size, status, symbol count and extractor. Paged: append "
                   "?cursor=<nextCursor>&limit=<n> (default 1000, max 10000)."
                 : "Indexed symbols (functions, methods, classes, ...) with spans and "
                   "signatures, and modules with includes and importers. Paged: append "
                   "?cursor=<nextCursor>&limit=<n> (default 1000, max 10000).",
         .mime_type = "application/json"},
        [&workspaces, k](const std::string& uri, const mcp::ResourceVars&,
                         mcp::CallContext& ctx) -> Result<std::vector<mcp::ResourceContents>> {
          return ReadResource(workspaces, ctx, uri, "workspace", k);
        });
    if (!added.ok()) return added;
  }
  // spec §4: resources/list also names the six kinds of every indexed workspace (its store
  // exists), addressed by workspace id and read through the template below; the core pages the
  // whole list with nextCursor (decision 0069).
  resources.SetLister([&workspaces]() {
    std::vector<mcp::ResourceSpec> out;
    for (const Workspaces::Entry& ws : workspaces.All()) {
      if (!FileExists(index::StorePathFor(ws.root))) continue;
      const std::string base = ws.root.substr(ws.root.rfind('/') + 1);
      for (std::string_view kind :
           {"file-tree", "symbols", "knowledge-maps", "method-packs", "provenance", "identity"}) {
        out.push_back(
            {.uri = fmt::format("librarian://{}/{}", ws.id, kind),
             .name = fmt::format("{}/{}", ws.id, kind),
             .title = fmt::format("{} of workspace {}", kind, base),
             .description = fmt::format("The {} resource of workspace {} ({}); list-like kinds "
                                        "accept ?cursor=<nextCursor>&limit=<n>",
                                        kind, ws.id, base),
             .mime_type = "application/json"});
      }
    }
    return out;
  });
  return resources.AddTemplate(
      {.uri_template = "librarian://{workspace}/{kind}",
       .name = "workspace-resource",
       .title = "Workspace resource",
       .description = "file-tree, symbols, knowledge-maps, method-packs, provenance or identity "
                      "of a workspace given by id (ws_...) or 'workspace' for the default; "
                      "accepts ?cursor=&limit=",
       .mime_type = "application/json"},
      [&workspaces](const std::string& uri, const mcp::ResourceVars& vars,
                    mcp::CallContext& ctx) -> Result<std::vector<mcp::ResourceContents>> {
        auto w = vars.find("workspace");
        auto k = vars.find("kind");
        if (w == vars.end() || k == vars.end()) {
          return Status::NotFound(fmt::format("{}: unknown resource", uri));
        }
        return ReadResource(workspaces, ctx, uri, w->second, k->second);
      });
}

}  // namespace trove::librarian::server
