#include "librarian/server/audit_tools.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "librarian/audit/audit.h"
#include "librarian/bundle/bundle.h"
#include "librarian/crawl/path.h"
#include "librarian/index/bootstrap.h"
#include "librarian/query/query.h"
#include "librarian/store/store.h"
#include "mcp/describe.h"
#include "mcp/registry.h"

namespace trove::librarian::server {
namespace {

using mcp::Field;
using mcp::Fields;
using mcp::Tag;

constexpr std::string_view kAuditTypeNames[] = {"completeness", "freshness", "confidence",
                                                "coverage", "full"};
constexpr std::string_view kBundleTypeNames[] = {"task", "review", "debug", "comprehensive"};

// --- run_audit (docs/librarian.md §3.7) ---

struct RunAuditArgs {
  std::string workspace;
  std::string type;
};
inline auto DescribeFields(Tag<RunAuditArgs>) {
  using A = RunAuditArgs;
  return Fields(Field("workspace", &A::workspace, "Absolute path of the workspace root",
                      mcp::LengthRange(1, crawl::kMaxUserPathChars)),
                Field("type", &A::type, "completeness, freshness, confidence, coverage or full",
                      mcp::OneOf(kAuditTypeNames)));
}

struct FindingView {
  std::string category;
  std::string severity;
  std::string message;
  std::optional<std::string> recommendation;
};
inline auto DescribeFields(Tag<FindingView>) {
  using F = FindingView;
  return Fields(Field("category", &F::category,
                      "The audit the finding belongs to: completeness, freshness, confidence or "
                      "coverage"),
                Field("severity", &F::severity, "critical, warning or info"),
                Field("message", &F::message, "What was found, with a count and up to 10 paths"),
                Field("recommendation", &F::recommendation, "What to do about it"));
}

struct SummaryView {
  std::uint64_t total_findings = 0, critical = 0, warnings = 0, info = 0;
};
inline auto DescribeFields(Tag<SummaryView>) {
  using S = SummaryView;
  return Fields(Field("total_findings", &S::total_findings, "Findings returned"),
                Field("critical", &S::critical, "Critical findings"),
                Field("warnings", &S::warnings, "Warnings"),
                Field("info", &S::info, "Informational findings"));
}

// The seed's shape exactly (snake_case is contractual here).
struct RunAuditOut {
  std::string audit_type;
  std::string timestamp;
  std::vector<FindingView> findings;
  SummaryView summary;
};
inline auto DescribeFields(Tag<RunAuditOut>) {
  using O = RunAuditOut;
  return Fields(Field("audit_type", &O::audit_type, "The audit run"),
                Field("timestamp", &O::timestamp, "When it ran (RFC 3339 UTC)"),
                Field("findings", &O::findings, "At most 100, most severe first"),
                Field("summary", &O::summary, "Counts by severity"));
}

RunAuditOut ToView(const audit::AuditReport& r) {
  RunAuditOut out;
  out.audit_type = r.audit_type;
  out.timestamp = r.timestamp;
  for (const audit::Finding& f : r.findings) {
    out.findings.push_back(FindingView{f.category, f.severity, f.message, f.recommendation});
  }
  out.summary =
      SummaryView{r.summary.total_findings, r.summary.critical, r.summary.warnings, r.summary.info};
  return out;
}

// --- get_context_pack_bundle (docs/librarian.md §3.8) ---

struct BundleArgs {
  std::string workspace;
  std::string topic;
  std::string bundle_type;
  std::optional<std::int64_t> max_tokens;
};
inline auto DescribeFields(Tag<BundleArgs>) {
  using A = BundleArgs;
  return Fields(
      Field("workspace", &A::workspace, "Absolute path of the workspace root",
            mcp::LengthRange(1, crawl::kMaxUserPathChars)),
      Field("topic", &A::topic, "What the bundle is for, in natural language",
            mcp::LengthRange(1, query::kMaxIntentChars)),
      Field("bundleType", &A::bundle_type,
            "task (L1), review (L2, refactor), debug (L2, debug) or comprehensive (L3)",
            mcp::OneOf(kBundleTypeNames)),
      Field("maxTokens", &A::max_tokens,
            "Token budget (chars/4 estimate); default 10000 / 30000 / 30000 / 80000 by type",
            mcp::InRange(100, 100000)));
}

struct SnippetView {
  std::string file;
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  std::string content;
};
inline auto DescribeFields(Tag<SnippetView>) {
  using S = SnippetView;
  return Fields(Field("file", &S::file, "Workspace-relative path"),
                Field("startLine", &S::start_line, "First line, 1-based"),
                Field("endLine", &S::end_line, "Last line, inclusive"),
                Field("content", &S::content, "The source text of the span as indexed"));
}

struct BundlePackView {
  std::string pack_id;
  std::string pack_type;
  std::string target_id;
  std::string summary;
  std::vector<std::string> key_facts;
  std::vector<std::string> related_files;
  double confidence = 0;
  std::vector<SnippetView> code_snippets;
};
inline auto DescribeFields(Tag<BundlePackView>) {
  using P = BundlePackView;
  return Fields(Field("packId", &P::pack_id, "Stable pack id (a claim id for verify_claim)"),
                Field("packType", &P::pack_type, "function_context or module_context"),
                Field("targetId", &P::target_id, "fn:<path>::<name> or mod:<path>"),
                Field("summary", &P::summary, "At most 240 characters"),
                Field("keyFacts", &P::key_facts, "Short claims about the target"),
                Field("relatedFiles", &P::related_files, "First = primary file"),
                Field("confidence", &P::confidence,
                      "Pack signal 0-1: an uncalibrated ranking signal, not a probability"),
                Field("codeSnippets", &P::code_snippets, "The code the pack is about"));
}

struct BundleOut {
  std::string bundle_id;
  std::string workspace;
  std::string topic;
  std::string bundle_type;
  std::vector<BundlePackView> packs;
  std::uint64_t estimated_tokens = 0;
  bool truncated = false;
  std::uint64_t omitted_count = 0;
  std::vector<std::string> disclosures;
  std::optional<std::string> error;
  std::optional<std::string> error_code;
};
inline auto DescribeFields(Tag<BundleOut>) {
  using O = BundleOut;
  return Fields(Field("bundleId", &O::bundle_id, "bd_ + 16 hex digits"),
                Field("workspace", &O::workspace, "Canonical workspace root"),
                Field("topic", &O::topic, "The topic asked"),
                Field("bundleType", &O::bundle_type, "The profile used"),
                Field("packs", &O::packs, "Packs in rank order, self-contained"),
                Field("estimatedTokens", &O::estimated_tokens, "Sum of the packs' estimates"),
                Field("truncated", &O::truncated, "A candidate pack was left out"),
                Field("omittedCount", &O::omitted_count, "Candidates left out by the budget"),
                Field("disclosures", &O::disclosures, "code: text; always confidence_uncalibrated"),
                Field("error", &O::error, "Domain failure, e.g. workspace not bootstrapped"),
                Field("errorCode", &O::error_code, "Code of the error, e.g. RESOURCE_NOT_FOUND"));
}

BundleOut ToView(const bundle::Bundle& b) {
  BundleOut out;
  out.bundle_id = b.bundle_id;
  out.workspace = b.workspace;
  out.topic = b.topic;
  out.bundle_type = b.bundle_type;
  for (const bundle::BundlePack& p : b.packs) {
    BundlePackView v{p.pack_id,   p.pack_type,     p.target_id,  p.summary,
                     p.key_facts, p.related_files, p.confidence, {}};
    for (const bundle::Snippet& s : p.code_snippets) {
      v.code_snippets.push_back(SnippetView{s.file, s.start_line, s.end_line, s.content});
    }
    out.packs.push_back(std::move(v));
  }
  out.estimated_tokens = b.estimated_tokens;
  out.truncated = b.truncated;
  out.omitted_count = b.omitted_count;
  out.disclosures = b.disclosures;
  out.error = b.error;
  out.error_code = b.error_code;
  return out;
}

bool IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The canonical root of a `workspace` argument, confined to the server's allowed roots.
Result<std::string> WorkspaceRoot(mcp::CallContext& ctx, const std::string& workspace) {
  if (workspace.empty() || workspace.front() != '/') {
    return Status::InvalidArgument("workspace: must be an absolute path");
  }
  Result<std::string> resolved = ctx.ResolvePath(workspace);
  if (!resolved.ok()) {
    return Status(resolved.status().code(),
                  fmt::format("workspace: {}", resolved.status().message()));
  }
  return crawl::CanonicalWorkspaceRoot(*resolved);
}

// A connection to the store of `root`: leased from the registered workspace's pool, else
// opened; null when the workspace was never bootstrapped.
struct StoreHandle {
  std::optional<StorePool::Lease> lease;
  std::unique_ptr<store::Store> owned;
  store::Store* get() {
    if (lease) return &**lease;
    return owned.get();
  }
};
Result<StoreHandle> OpenFor(Workspaces& workspaces, const std::string& root) {
  StoreHandle h;
  const std::string path = index::StorePathFor(root);
  if (!IsFile(path)) return h;
  if (std::optional<Workspaces::Entry> ws = workspaces.Find(root); ws && ws->stores) {
    ASSIGN_OR_RETURN(StorePool::Lease lease, ws->stores->Acquire());
    h.lease.emplace(std::move(lease));
    return h;
  }
  ASSIGN_OR_RETURN(h.owned, store::Store::Open(path));
  return h;
}

}  // namespace

std::string AuditReportJson(const audit::AuditReport& report) {
  return mcp::ToJson(ToView(report)).dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
}

std::string BundleJson(const bundle::Bundle& bundle) {
  return mcp::ToJson(ToView(bundle)).dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
}

Status RegisterAuditTools(mcp::Server& server, Workspaces& workspaces, const ServiceOptions&) {
  mcp::ToolRegistry& tools = server.tools();
  Status added = tools.Add<RunAuditArgs, RunAuditOut>(
      {.name = "run_audit",
       .title = "Audit the index",
       .description =
           "Run an audit on a workspace's index: completeness (failed runs, timed-out or failed "
           "files, maxFiles truncation, plain-text files, parse errors), freshness (bootstrap "
           "age; files changed, deleted or added since indexing, bounded to 5 s then sampled), "
           "confidence (packs whose triggers changed; confidence values are uncalibrated "
           "ranking signals), coverage (functions, packs, files with symbols, documented "
           "share), or full. Findings are aggregated with counts and example paths, most "
           "severe first. The report is stored for provenance.",
       .annotations = {.title = "Audit the index",
                       .read_only = false,
                       .destructive = false,
                       .idempotent = false,
                       .open_world = false},
       .scopes = {"execute"}},
      [&workspaces](const RunAuditArgs& args, mcp::CallContext& ctx) -> Result<RunAuditOut> {
        ASSIGN_OR_RETURN(std::string root, WorkspaceRoot(ctx, args.workspace));
        ASSIGN_OR_RETURN(StoreHandle h, OpenFor(workspaces, root));
        ASSIGN_OR_RETURN(
            audit::AuditReport report,
            audit::RunAudit(h.get(), root, args.type, audit::AuditOptions{}, &ctx.cancellation()));
        if (h.get()) {
          // Stored for provenance; a busy store (a bootstrap writing) does not fail the audit.
          (void)audit::StoreAudit(*h.get(), report, "mcp");
        }
        return ToView(report);
      });
  if (!added.ok()) return added;

  return tools.Add<BundleArgs, BundleOut>(
      {.name = "get_context_pack_bundle",
       .title = "Bundle context packs for a topic",
       .description =
           "Get a self-contained bundle of context packs for a topic: runs the query pipeline "
           "with the topic as intent under the bundle type's profile (task: L1; review: L2, "
           "refactor; debug: L2, debug; comprehensive: L3) and returns packs with their code "
           "snippets in rank order within maxTokens (chars/4 estimate). truncated and "
           "omittedCount say what the budget left out. confidence is an uncalibrated ranking "
           "signal, not a probability.",
       .annotations = {.title = "Bundle context packs for a topic",
                       .read_only = true,
                       .destructive = false,
                       .idempotent = true,
                       .open_world = false},
       .scopes = {"read"}},
      [&workspaces](const BundleArgs& args, mcp::CallContext& ctx) -> Result<BundleOut> {
        ASSIGN_OR_RETURN(std::string root, WorkspaceRoot(ctx, args.workspace));
        ASSIGN_OR_RETURN(StoreHandle h, OpenFor(workspaces, root));
        std::unique_ptr<store::Store> empty;
        store::Store* st = h.get();
        if (!st) {
          // Not bootstrapped: the query's domain outcome over an empty store.
          ASSIGN_OR_RETURN(empty, store::Store::Open(":memory:"));
          st = empty.get();
        }
        bundle::BundleRequest req{args.topic, args.bundle_type, std::nullopt};
        if (args.max_tokens) req.max_tokens = static_cast<std::size_t>(*args.max_tokens);
        query::Workspace w{root, WorkspaceId(root)};
        ASSIGN_OR_RETURN(bundle::Bundle b, bundle::BuildBundle(*st, w, req, ctx.cancellation()));
        return ToView(b);
      });
}

}  // namespace trove::librarian::server
