#include "librarian/server/claims_tools.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/env.h"
#include "base/rfc3339.h"
#include "base/sqlite.h"
#include "librarian/crawl/path.h"
#include "librarian/diff/diff.h"
#include "librarian/export/export.h"
#include "librarian/index/bootstrap.h"
#include "librarian/ledger/ledger.h"
#include "librarian/packs/packs.h"
#include "librarian/server/audit_tools.h"
#include "librarian/store/manifest.h"
#include "librarian/store/store.h"
#include "librarian/verify/verify.h"
#include "mcp/describe.h"
#include "mcp/registry.h"

namespace trove::librarian::server {
namespace {

using mcp::Field;
using mcp::Fields;
using mcp::Tag;

constexpr std::string_view kFormats[] = {"json", "sqlite", "markdown"};
constexpr const char* kUncalibrated =
    "confidence_uncalibrated: confidence is a heuristic ranking signal (the pack's base signal "
    "plus defeater adjustments), not a probability; claimConfidence is the typed value";
constexpr const char* kNoOutcomes =
    "partial_result: test_failure is never active (no outcomes are recorded per pack)";

// --- verify_claim (docs/librarian.md §3.6) ---

struct VerifyClaimArgs {
  std::string claim_id;
  std::optional<bool> force;
};
inline auto DescribeFields(Tag<VerifyClaimArgs>) {
  using A = VerifyClaimArgs;
  return Fields(
      Field("claimId", &A::claim_id, "Context pack / claim identifier (a packId from query)",
            mcp::LengthRange(1, verify::kMaxClaimIdChars)),
      Field("force", &A::force,
            "Re-verify even when a verification younger than 60 s exists for the "
            "unchanged index and file"));
}

struct LocationView {
  std::string file;
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
};
inline auto DescribeFields(Tag<LocationView>) {
  return Fields(Field("file", &LocationView::file, "Workspace-relative path"),
                Field("startLine", &LocationView::start_line, "First line, 1-based"),
                Field("endLine", &LocationView::end_line, "Last line, inclusive"));
}

struct DefeaterView {
  std::string type;
  bool activated = false;
  std::string reason;
  std::string severity;
  std::string defeater_class;
  std::optional<LocationView> new_location;
};
inline auto DescribeFields(Tag<DefeaterView>) {
  using D = DefeaterView;
  return Fields(
      Field("type", &D::type,
            "code_change, file_deleted, symbol_removed, symbol_moved, contradiction or "
            "test_failure"),
      Field("activated", &D::activated, "Whether the defeater holds now"),
      Field("reason", &D::reason, "Why, with a line diff summary for a changed span"),
      Field("severity", &D::severity, "full (-0.5), partial (-0.2) or warning (-0.05)"),
      Field("class", &D::defeater_class, "rebutting, undercutting or undermining (Pollock)"),
      Field("newLocation", &D::new_location, "Where the target was found again, if it was"));
}

struct TypedConfidenceView {
  std::string type;
  double value = 0;
  std::string reason;
};
inline auto DescribeFields(Tag<TypedConfidenceView>) {
  using T = TypedConfidenceView;
  return Fields(Field("type", &T::type, "deterministic (a syntactic fact)"),
                Field("value", &T::value, "1 when the cited span still holds, else 0"),
                Field("reason", &T::reason, "What was checked"));
}

struct CitedView {
  std::string file;
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  std::string content_hash;
  std::string target_id;
  std::string pack_type;
};
inline auto DescribeFields(Tag<CitedView>) {
  using C = CitedView;
  return Fields(Field("file", &C::file, "Workspace-relative path"),
                Field("startLine", &C::start_line, "First line cited"),
                Field("endLine", &C::end_line, "Last line cited"),
                Field("contentHash", &C::content_hash, "SHA-256 of the cited span or file"),
                Field("targetId", &C::target_id, "The claim's target"),
                Field("packType", &C::pack_type, "function_context or module_context"));
}

struct VerifyClaimOut {
  std::string claim_id;
  bool verified = false;
  double confidence = 0;
  std::optional<std::vector<DefeaterView>> active_defeaters;
  std::optional<std::vector<DefeaterView>> defeater_results;
  std::optional<std::string> error;
  std::optional<std::string> error_code;
  std::optional<TypedConfidenceView> claim_confidence;
  std::optional<CitedView> evidence;
  std::string checked_at;
  bool cached = false;
  std::vector<std::string> disclosures;
};
inline auto DescribeFields(Tag<VerifyClaimOut>) {
  using O = VerifyClaimOut;
  return Fields(
      Field("claimId", &O::claim_id, "The claim verified"),
      Field("verified", &O::verified, "No full defeater is active: the knowledge still holds"),
      Field("confidence", &O::confidence,
            "Pack signal plus defeater adjustments, 0-1 (uncalibrated ranking signal)"),
      Field("activeDefeaters", &O::active_defeaters, "The defeaters that hold now"),
      Field("defeaterResults", &O::defeater_results, "Every check run"),
      Field("error", &O::error, "Domain failure, e.g. Claim not found"),
      Field("errorCode", &O::error_code, "Code of the error, e.g. RESOURCE_NOT_FOUND"),
      Field("claimConfidence", &O::claim_confidence, "Typed confidence of the claim"),
      Field("evidence", &O::evidence, "The evidence reference re-read"),
      Field("checkedAt", &O::checked_at, "When the check ran (RFC 3339)"),
      Field("cached", &O::cached, "Served from a verification younger than 60 s"),
      Field("disclosures", &O::disclosures, "code: text; always confidence_uncalibrated"));
}

DefeaterView ToView(const verify::DefeaterResult& d) {
  DefeaterView v{d.type, d.activated, d.reason, d.severity, d.defeater_class, std::nullopt};
  if (d.new_location) {
    v.new_location =
        LocationView{d.new_location->file, d.new_location->start_line, d.new_location->end_line};
  }
  return v;
}

VerifyClaimOut ToView(const verify::Verification& v) {
  VerifyClaimOut out;
  out.claim_id = v.claim_id;
  out.checked_at = v.checked_at;
  out.cached = v.cached;
  out.disclosures = {kUncalibrated};
  if (!v.found) {
    out.error = "Claim not found";
    out.error_code = "RESOURCE_NOT_FOUND";
    return out;
  }
  out.verified = v.verified;
  out.confidence = v.confidence;
  out.active_defeaters.emplace();
  out.defeater_results.emplace();
  for (const verify::DefeaterResult& d : v.results) {
    out.defeater_results->push_back(ToView(d));
    if (d.activated) out.active_defeaters->push_back(ToView(d));
  }
  out.claim_confidence = TypedConfidenceView{v.claim_confidence.type, v.claim_confidence.value,
                                             v.claim_confidence.reason};
  const verify::CitedEvidence& e = v.evidence;
  out.evidence =
      CitedView{e.file, e.start_line, e.end_line, e.content_hash, e.target_id, e.pack_type};
  out.disclosures.push_back(kNoOutcomes);
  return out;
}

// --- diff_runs (docs/librarian.md §3.6) ---

struct DiffRunsArgs {
  std::string workspace;
  std::string run1;
  std::string run2;
};
inline auto DescribeFields(Tag<DiffRunsArgs>) {
  using A = DiffRunsArgs;
  return Fields(Field("workspace", &A::workspace, "Absolute path of the workspace root",
                      mcp::LengthRange(1, crawl::kMaxUserPathChars)),
                Field("run1", &A::run1, "Run ID or \"latest\"; changes are reported from it",
                      mcp::LengthRange(1, 256)),
                Field("run2", &A::run2,
                      "Run ID, \"latest\", or an RFC 3339 UTC timestamp (the latest run finished "
                      "at or before it)",
                      mcp::LengthRange(1, 256)));
}

struct RunView {
  std::string run_id;
  std::string status;
  std::string mode;
  std::string started_at;
  std::string finished_at;
};
inline auto DescribeFields(Tag<RunView>) {
  using R = RunView;
  return Fields(Field("runId", &R::run_id, "The run"),
                Field("status", &R::status, "running, succeeded, failed or cancelled"),
                Field("mode", &R::mode, "full, incremental or noop"),
                Field("startedAt", &R::started_at, "RFC 3339"),
                Field("finishedAt", &R::finished_at, "RFC 3339; empty while running"));
}

struct FileChangesView {
  std::vector<std::string> added, removed, modified;
  std::uint64_t added_count = 0, removed_count = 0, modified_count = 0, unchanged_count = 0;
};
inline auto DescribeFields(Tag<FileChangesView>) {
  using F = FileChangesView;
  return Fields(Field("added", &F::added, "Paths added (at most 100)"),
                Field("removed", &F::removed, "Paths removed (at most 100)"),
                Field("modified", &F::modified, "Paths whose content changed (at most 100)"),
                Field("addedCount", &F::added_count, "All files added"),
                Field("removedCount", &F::removed_count, "All files removed"),
                Field("modifiedCount", &F::modified_count, "All files modified"),
                Field("unchangedCount", &F::unchanged_count, "Files with equal content"));
}

struct SymbolChangesView {
  std::vector<std::string> added, removed, changed;
  std::uint64_t added_count = 0, removed_count = 0, changed_count = 0, unchanged_count = 0;
};
inline auto DescribeFields(Tag<SymbolChangesView>) {
  using S = SymbolChangesView;
  return Fields(Field("added", &S::added, "Target ids added (at most 100)"),
                Field("removed", &S::removed, "Target ids removed (at most 100)"),
                Field("changed", &S::changed, "Target ids whose span changed (at most 100)"),
                Field("addedCount", &S::added_count, "All symbols added"),
                Field("removedCount", &S::removed_count, "All symbols removed"),
                Field("changedCount", &S::changed_count, "All symbols changed"),
                Field("unchangedCount", &S::unchanged_count, "Symbols with an equal span"));
}

struct PackChangesView {
  std::uint64_t added = 0, removed = 0, changed = 0, unchanged = 0;
};
inline auto DescribeFields(Tag<PackChangesView>) {
  using P = PackChangesView;
  return Fields(Field("added", &P::added, "Packs added"),
                Field("removed", &P::removed, "Packs removed"),
                Field("changed", &P::changed, "Packs whose target's span or file changed"),
                Field("unchanged", &P::unchanged, "Packs unchanged"));
}

struct DeltaView {
  double before = 0, after = 0, delta = 0;
};
inline auto DescribeFields(Tag<DeltaView>) {
  return Fields(Field("before", &DeltaView::before, "At run1"),
                Field("after", &DeltaView::after, "At run2"),
                Field("delta", &DeltaView::delta, "after - before"));
}

struct RunStatsView {
  DeltaView functions, modules, context_packs, avg_confidence;
};
inline auto DescribeFields(Tag<RunStatsView>) {
  using S = RunStatsView;
  return Fields(Field("functions", &S::functions, "Functions and methods"),
                Field("modules", &S::modules, "Indexed files (module packs)"),
                Field("contextPacks", &S::context_packs, "Context packs"),
                Field("avgConfidence", &S::avg_confidence,
                      "Mean pack base signal (uncalibrated ranking signal)"));
}

struct DiffRunsOut {
  std::string workspace;
  RunView run1, run2;
  FileChangesView files;
  SymbolChangesView symbols;
  PackChangesView packs;
  RunStatsView stats;
  std::string summary;
  std::optional<std::string> error;
  std::optional<std::string> error_code;
};
inline auto DescribeFields(Tag<DiffRunsOut>) {
  using O = DiffRunsOut;
  return Fields(Field("workspace", &O::workspace, "Canonical workspace root"),
                Field("run1", &O::run1, "The run changes are reported from"),
                Field("run2", &O::run2, "The run changes are reported to"),
                Field("files", &O::files, "File changes"),
                Field("symbols", &O::symbols, "Symbol changes"),
                Field("packs", &O::packs, "Context pack changes"),
                Field("stats", &O::stats, "Index statistics before and after"),
                Field("summary", &O::summary, "One line"),
                Field("error", &O::error, "Domain failure, e.g. an unknown run"),
                Field("errorCode", &O::error_code, "Code of the error, e.g. RESOURCE_NOT_FOUND"));
}

DiffRunsOut ToView(const diff::RunDiff& d) {
  auto run = [](const diff::RunInfo& r) {
    return RunView{r.run_id, r.status, r.mode, r.started_at, r.finished_at};
  };
  auto delta = [](const diff::StatDelta& s) { return DeltaView{s.before, s.after, s.delta}; };
  DiffRunsOut out;
  out.workspace = d.workspace;
  out.run1 = run(d.run1);
  out.run2 = run(d.run2);
  out.files = FileChangesView{d.files.added,          d.files.removed,       d.files.modified,
                              d.files.added_count,    d.files.removed_count, d.files.modified_count,
                              d.files.unchanged_count};
  out.symbols =
      SymbolChangesView{d.symbols.added,          d.symbols.removed,       d.symbols.changed,
                        d.symbols.added_count,    d.symbols.removed_count, d.symbols.changed_count,
                        d.symbols.unchanged_count};
  out.packs = PackChangesView{d.packs.added, d.packs.removed, d.packs.changed, d.packs.unchanged};
  out.stats = RunStatsView{delta(d.stats.functions), delta(d.stats.modules),
                           delta(d.stats.context_packs), delta(d.stats.avg_confidence)};
  out.summary = d.summary;
  out.error = d.error;
  out.error_code = d.error_code;
  return out;
}

// --- export_index (docs/librarian.md §3.6) ---

struct ExportArgs {
  std::string workspace;
  std::string format;
  std::optional<std::string> output_path;
};
inline auto DescribeFields(Tag<ExportArgs>) {
  using A = ExportArgs;
  return Fields(Field("workspace", &A::workspace, "Absolute path of the workspace root",
                      mcp::LengthRange(1, crawl::kMaxUserPathChars)),
                Field("format", &A::format, "json, sqlite or markdown", mcp::OneOf(kFormats)),
                Field("outputPath", &A::output_path,
                      "Workspace-relative output file (default "
                      ".librarian/exports/index-<runId>.<json|sqlite|md>); must stay inside the "
                      "workspace; an existing file is overwritten only in .librarian/exports/",
                      mcp::LengthRange(1, crawl::kMaxUserPathChars)));
}

struct CountsView {
  std::uint64_t files = 0, symbols = 0, packs = 0, claims = 0;
};
inline auto DescribeFields(Tag<CountsView>) {
  using C = CountsView;
  return Fields(Field("files", &C::files, "Files exported"),
                Field("symbols", &C::symbols, "Symbols exported"),
                Field("packs", &C::packs, "Context packs exported"),
                Field("claims", &C::claims, "Claims exported (one per pack in v1)"));
}

struct ExportOut {
  bool success = false;
  std::string workspace;
  std::string format;
  std::string output_path;
  std::uint64_t bytes = 0;
  CountsView counts;
  std::int64_t duration_ms = 0;
  std::optional<std::string> error;
  std::optional<std::string> error_code;
};
inline auto DescribeFields(Tag<ExportOut>) {
  using O = ExportOut;
  return Fields(Field("success", &O::success, "The file was written"),
                Field("workspace", &O::workspace, "Canonical workspace root"),
                Field("format", &O::format, "json, sqlite or markdown"),
                Field("outputPath", &O::output_path, "Workspace-relative path written"),
                Field("bytes", &O::bytes, "Size of the file written"),
                Field("counts", &O::counts, "What was exported"),
                Field("durationMs", &O::duration_ms, "Wall time"),
                Field("error", &O::error, "Domain failure, e.g. workspace not bootstrapped"),
                Field("errorCode", &O::error_code, "Code of the error, e.g. RESOURCE_NOT_FOUND"));
}

ExportOut ToView(const exports::ExportResult& r) {
  ExportOut out;
  out.success = r.success;
  out.workspace = r.workspace;
  out.format = r.format;
  out.output_path = r.output_path;
  out.bytes = r.bytes;
  out.counts = CountsView{r.counts.files, r.counts.symbols, r.counts.packs, r.counts.claims};
  out.duration_ms = r.duration_ms;
  out.error = r.error;
  if (r.error) out.error_code = "RESOURCE_NOT_FOUND";
  return out;
}

bool IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// State the three tools share: the Env, idle verifiers (each owns a tree-sitter parser, so one
// per concurrent call), recent verifications and a connection pool per workspace.
class ClaimsService {
 public:
  ClaimsService(Workspaces& workspaces, const ServiceOptions& options)
      : workspaces_(workspaces), options_(options) {}

  base::Env& env() { return env_; }
  verify::VerifyCache& cache() { return cache_; }

  // A store connection of `root`, or null when it was never bootstrapped.
  Result<std::optional<StorePool::Lease>> Store(const std::string& root) {
    const std::string path = index::StorePathFor(root);
    if (!IsFile(path)) return std::optional<StorePool::Lease>();
    std::shared_ptr<StorePool> pool;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::shared_ptr<StorePool>& p = pools_[root];
      if (!p) p = std::make_shared<StorePool>(path);
      pool = p;
    }
    ASSIGN_OR_RETURN(StorePool::Lease lease, pool->Acquire());
    return std::optional<StorePool::Lease>(std::move(lease));
  }

  std::unique_ptr<verify::Verifier> TakeVerifier() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!verifiers_.empty()) {
        std::unique_ptr<verify::Verifier> v = std::move(verifiers_.back());
        verifiers_.pop_back();
        return v;
      }
    }
    return std::make_unique<verify::Verifier>(
        env_, verify::VerifyOptions{.ctags_program = options_.ctags_program});
  }
  void ReturnVerifier(std::unique_ptr<verify::Verifier> v) {
    std::lock_guard<std::mutex> lock(mu_);
    if (verifiers_.size() < 4) verifiers_.push_back(std::move(v));
  }

  Workspaces& workspaces() { return workspaces_; }

 private:
  Workspaces& workspaces_;
  const ServiceOptions options_;
  base::PosixEnv env_;
  verify::VerifyCache cache_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<StorePool>> pools_;   // GUARDED_BY(mu_)
  std::vector<std::unique_ptr<verify::Verifier>> verifiers_;  // GUARDED_BY(mu_)
};

// The canonical root of a `workspace` argument: inside the server's allowed roots
// (ctx.ResolvePath), absolute, an existing directory.
Result<std::string> WorkspaceRoot(mcp::CallContext& ctx, const std::string& workspace) {
  ASSIGN_OR_RETURN(std::string resolved, ctx.ResolvePath(workspace));
  (void)resolved;
  return crawl::CanonicalWorkspaceRoot(workspace);
}

// Appends the verification (and an active contradiction) to the workspace's evidence ledger,
// in one transaction.
Status RecordVerification(store::Store& st, const verify::Verification& v) {
  mcp::Json defeaters = mcp::Json::array();
  const verify::DefeaterResult* contradiction = nullptr;
  for (const verify::DefeaterResult& d : v.results) {
    if (!d.activated) continue;
    defeaters.push_back({{"type", d.type},
                         {"severity", d.severity},
                         {"class", d.defeater_class},
                         {"reason", d.reason}});
    if (d.type == "contradiction") contradiction = &d;
  }
  const verify::CitedEvidence& e = v.evidence;
  ledger::Entry entry;
  entry.kind = ledger::EntryKind::kVerification;
  entry.recorded_at = v.checked_at;
  entry.claim_id = v.claim_id;
  entry.agent = "mcp";
  entry.activity = "verify_claim";
  entry.payload = {{"verified", v.verified},
                   {"confidence", v.confidence},
                   {"claimConfidence",
                    {{"type", v.claim_confidence.type},
                     {"value", v.claim_confidence.value},
                     {"reason", v.claim_confidence.reason}}},
                   {"activeDefeaters", std::move(defeaters)},
                   {"evidence",
                    {{"file", e.file},
                     {"startLine", e.start_line},
                     {"endLine", e.end_line},
                     {"contentHash", e.content_hash},
                     {"targetId", e.target_id},
                     {"packType", e.pack_type}}}};
  ASSIGN_OR_RETURN(base::Transaction tx, st.db().Begin());
  ASSIGN_OR_RETURN(std::int64_t id, ledger::Append(st.db(), entry));
  if (contradiction) {
    ledger::Entry c;
    c.kind = ledger::EntryKind::kContradiction;
    c.recorded_at = v.checked_at;
    c.claim_id = v.claim_id;
    c.agent = "mcp";
    c.activity = "verify_claim";
    c.relation = "rebuts";
    c.parent_id = id;
    c.payload = {{"reason", contradiction->reason}};
    RETURN_IF_ERROR(ledger::Append(st.db(), c).status());
  }
  return tx.Commit();
}

Result<VerifyClaimOut> VerifyClaim(ClaimsService& service, const VerifyClaimArgs& args,
                                   mcp::CallContext& ctx) {
  if (args.claim_id.size() > verify::kMaxClaimIdChars) {
    return Status::InvalidArgument("claimId: longer than 256 characters");
  }
  // docs/librarian.md §3.6: every registered workspace in order, first hit wins.
  for (const Workspaces::Entry& ws : service.workspaces().All()) {
    ASSIGN_OR_RETURN(std::optional<StorePool::Lease> lease, service.Store(ws.root));
    if (!lease) continue;
    store::Store& st = **lease;
    ASSIGN_OR_RETURN(std::optional<store::ContentSymbol> target,
                     store::FindPack(st, args.claim_id));
    if (!target) continue;
    // A verification younger than 60 s for the same index and the same primary file is
    // returned as it was (cached: true) unless force (docs/librarian.md §3.6, §7.1).
    const std::string key = ws.id + ":" + args.claim_id;
    ASSIGN_OR_RETURN(std::string generation, st.Generation());
    const std::string file_state = verify::FileState(ws.root + "/" + target->path);
    if (!args.force.value_or(false)) {
      if (std::optional<verify::Verification> hit =
              service.cache().Get(key, generation, file_state)) {
        return ToView(*hit);
      }
    }
    std::unique_ptr<verify::Verifier> verifier = service.TakeVerifier();
    Result<verify::Verification> v =
        verifier->Verify(st, ws.root, args.claim_id, &ctx.cancellation());
    service.ReturnVerifier(std::move(verifier));
    if (!v.ok()) return v.status();
    service.cache().Put(key, generation, file_state, *v);
    VerifyClaimOut out = ToView(*v);
    // docs/librarian.md §5.2: each verification appends a `verification` ledger entry (and a
    // `contradiction` entry rebutting it when one is active). A busy store (a bootstrap
    // writing) does not fail the verification; the disclosure says it was not recorded.
    Status recorded = RecordVerification(st, *v);
    // The pack's outcome counters (successCount / failureCount / lastOutcome, decision 0069).
    if (recorded.ok()) recorded = packs::RecordVerification(st.db(), args.claim_id, v->verified);
    if (!recorded.ok()) {
      out.disclosures.push_back(fmt::format(
          "partial_result: the verification was not recorded in the evidence ledger: {}",
          recorded.message()));
    }
    return out;
  }
  verify::Verification none;  // not found in any workspace
  none.claim_id = args.claim_id;
  none.checked_at = base::NowRfc3339();
  return ToView(none);
}

}  // namespace

std::string VerificationJson(const verify::Verification& v) {
  return mcp::ToJson(ToView(v)).dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
}

std::string RunDiffJson(const diff::RunDiff& d) {
  return mcp::ToJson(ToView(d)).dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
}

std::string ExportResultJson(const exports::ExportResult& r) {
  return mcp::ToJson(ToView(r)).dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
}

Status RegisterClaimsTools(mcp::Server& server, Workspaces& workspaces,
                           const ServiceOptions& options) {
  auto service = std::make_shared<ClaimsService>(workspaces, options);
  mcp::ToolRegistry& tools = server.tools();
  Status added = tools.Add<VerifyClaimArgs, VerifyClaimOut>(
      {.name = "verify_claim",
       .title = "Re-verify a claim",
       .description =
           "Verify a code-related claim (a context pack id from query) against the workspace as "
           "it is now: re-reads the cited span and reports each defeater (code_change with a "
           "line diff summary, file_deleted, symbol_removed, symbol_moved with the new "
           "location, contradiction, test_failure). verified is false when a full defeater is "
           "active. confidence is an uncalibrated ranking signal, not a probability; "
           "claimConfidence is the typed value. Looks the claim up in every bootstrapped "
           "workspace in order.",
       .annotations = {.title = "Re-verify a claim",
                       .read_only = true,
                       .destructive = false,
                       .idempotent = true,
                       .open_world = false},
       .scopes = {"read"}},
      [service](const VerifyClaimArgs& args, mcp::CallContext& ctx) -> Result<VerifyClaimOut> {
        return VerifyClaim(*service, args, ctx);
      });
  if (!added.ok()) return added;

  added = tools.Add<DiffRunsArgs, DiffRunsOut>(
      {.name = "diff_runs",
       .title = "Compare two bootstrap runs",
       .description =
           "Compare two bootstrap runs of a workspace from their file and symbol manifests: "
           "files added, removed and modified, symbols (target ids) added, removed and changed, "
           "pack counts and index statistics before and after. run1 is a run id or \"latest\"; "
           "run2 a run id, \"latest\" or an RFC 3339 UTC timestamp. The last 20 runs keep "
           "manifests. avgConfidence is an uncalibrated ranking signal.",
       .annotations = {.title = "Compare two bootstrap runs",
                       .read_only = true,
                       .destructive = false,
                       .idempotent = true,
                       .open_world = false},
       .scopes = {"read"}},
      [service](const DiffRunsArgs& args, mcp::CallContext& ctx) -> Result<DiffRunsOut> {
        ASSIGN_OR_RETURN(std::string root, WorkspaceRoot(ctx, args.workspace));
        ASSIGN_OR_RETURN(std::optional<StorePool::Lease> lease, service->Store(root));
        if (!lease) {
          DiffRunsOut out;
          out.workspace = root;
          out.error = "workspace is not bootstrapped; run bootstrap first";
          out.error_code = "RESOURCE_NOT_FOUND";
          out.summary = *out.error;
          return out;
        }
        ASSIGN_OR_RETURN(diff::RunDiff d, diff::DiffRuns(**lease, root, args.run1, args.run2));
        return ToView(d);
      });
  if (!added.ok()) return added;

  added = RegisterAuditTools(server, workspaces, options);  // audit_tools.h (decision 0063)
  if (!added.ok()) return added;

  return tools.Add<ExportArgs, ExportOut>(
      {.name = "export_index",
       .title = "Export the index",
       .description =
           "Export a workspace's index to one file: json (runs, files, symbols, edges, full "
           "packs with code snippets, claims with evidence and typed confidence), sqlite (a "
           "consistent copy of the store) or markdown (a readable overview). JSON and SQLite "
           "exports contain source code. outputPath is workspace-relative and must stay inside "
           "the workspace; the default is .librarian/exports/index-<runId>.<ext>. Writes a "
           "file, so it needs the execute scope and consent.",
       .annotations = {.title = "Export the index",
                       .read_only = false,
                       .destructive = false,
                       .idempotent = true,
                       .open_world = false},
       .scopes = {"execute"},
       .needs_consent = true},
      [service](const ExportArgs& args, mcp::CallContext& ctx) -> Result<ExportOut> {
        ASSIGN_OR_RETURN(std::string root, WorkspaceRoot(ctx, args.workspace));
        std::optional<exports::Format> format = exports::ParseFormat(args.format);
        if (!format) return Status::InvalidArgument("format: must be json, sqlite or markdown");
        ASSIGN_OR_RETURN(std::optional<StorePool::Lease> lease, service->Store(root));
        if (!lease) {
          ExportOut out;
          out.workspace = root;
          out.format = args.format;
          out.error = "workspace is not bootstrapped; run bootstrap first";
          out.error_code = "RESOURCE_NOT_FOUND";
          return out;
        }
        exports::ExportRequest req{root, WorkspaceId(root), *format, args.output_path.value_or("")};
        // The output path: confined to the workspace by the engine's rules, then to the
        // server's allowed roots as every client path is.
        ASSIGN_OR_RETURN(std::string rel, exports::OutputPathFor(**lease, req));
        ASSIGN_OR_RETURN(std::string abs, ctx.ResolvePath(root + "/" + rel));
        (void)abs;
        req.output_path = rel;
        ASSIGN_OR_RETURN(exports::ExportResult r,
                         exports::ExportIndex(service->env(), **lease, req));
        return ToView(r);
      });
}

}  // namespace trove::librarian::server
