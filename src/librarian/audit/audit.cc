#include "librarian/audit/audit.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "base/rfc3339.h"
#include "base/sqlite.h"
#include "librarian/crawl/crawler.h"
#include "librarian/ledger/ledger.h"
#include "librarian/store/store.h"

namespace trove::librarian::audit {
namespace {

using Clock = std::chrono::system_clock;

// Parses "YYYY-MM-DDTHH:MM:SS[.fff]Z"; nullopt otherwise.
std::optional<Clock::time_point> ParseRfc3339(const std::string& s) {
  std::tm tm{};
  int ms = 0;
  if (s.size() < 20) return std::nullopt;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6) {
    return std::nullopt;
  }
  if (s.size() > 20 && s[19] == '.') std::sscanf(s.c_str() + 20, "%3d", &ms);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t t = timegm(&tm);
  if (t == -1) return std::nullopt;
  return Clock::from_time_t(t) + std::chrono::milliseconds(ms);
}

int Rank(const std::string& severity) {
  if (severity == "critical") return 0;
  if (severity == "warning") return 1;
  return 2;
}

// "a.py, b.py (and 3 more)" from up to kMaxExamples paths of `count`.
std::string Examples(const std::vector<std::string>& paths, std::uint64_t count) {
  std::string out;
  for (std::size_t i = 0; i < paths.size() && i < kMaxExamples; ++i) {
    if (i) out += ", ";
    out += paths[i];
  }
  if (count > std::min<std::uint64_t>(paths.size(), kMaxExamples)) {
    out +=
        fmt::format(" (and {} more)", count - std::min<std::uint64_t>(paths.size(), kMaxExamples));
  }
  return out;
}

std::string ExtractorFamily(std::string_view extractor) {
  if (extractor.rfind("tree-sitter", 0) == 0) return "tree_sitter";
  if (extractor.rfind("ctags", 0) == 0) return "ctags";
  if (extractor.empty()) return "none";
  return "text";
}

bool Indexed(const store::FileRecord& f) {
  return f.status == store::FileStatus::kIndexed || f.status == store::FileStatus::kUnchanged;
}

Result<std::int64_t> Scalar(base::Database& db, const char* sql) {
  ASSIGN_OR_RETURN(base::Statement st, db.Prepare(sql));
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt64(0) : 0;
}

// The state every check reads once.
struct Context {
  store::Store* store = nullptr;
  std::string root;
  AuditOptions options;
  base::Cancellation* cancel = nullptr;
  Clock::time_point now;
  std::vector<store::RunRecord> runs;  // insertion order
  std::vector<store::FileRecord> files;
  std::vector<Finding>* out = nullptr;
  // Freshness results, computed once and shared with the confidence audit.
  bool fresh_done = false;
  std::vector<std::string> changed, deleted, added;
  bool sampled = false;
  std::uint64_t checked = 0;

  void Add(std::string category, std::string severity, std::string message,
           std::optional<std::string> recommendation = std::nullopt) {
    out->push_back(Finding{std::move(category), std::move(severity), std::move(message),
                           std::move(recommendation)});
  }
  const store::RunRecord* LastRun() const { return runs.empty() ? nullptr : &runs.back(); }
  const store::RunRecord* LastSuccess() const {
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
      if (it->state == "succeeded") return &*it;
    }
    return nullptr;
  }
};

constexpr const char* kBootstrapFirst = "Run bootstrap on the workspace";

Status Completeness(Context& c) {
  const std::string cat = "completeness";
  const store::RunRecord* last = c.LastRun();
  if (!last) {
    c.Add(cat, "critical", "the workspace has never been bootstrapped", kBootstrapFirst);
    return Status::Ok();
  }
  if (last->state == "failed" || last->state == "cancelled" || last->state == "running") {
    c.Add(cat, "critical",
          fmt::format("the last run {} is {}", last->run_id,
                      last->state == "running" ? "still running or was interrupted" : last->state),
          "Run bootstrap again and check its error");
  }
  std::vector<std::string> timed_out, failed, text;
  std::map<std::string, std::uint64_t> text_languages;
  for (const store::FileRecord& f : c.files) {
    if (f.status == store::FileStatus::kTimedOut) timed_out.push_back(f.path);
    if (f.status == store::FileStatus::kFailed) failed.push_back(f.path);
    if (Indexed(f) && ExtractorFamily(f.extractor) == "text") {
      text.push_back(f.path);
      ++text_languages[f.language.empty() ? "unknown" : f.language];
    }
  }
  if (!timed_out.empty()) {
    c.Add(cat, "warning",
          fmt::format("{} files timed out during extraction: {}", timed_out.size(),
                      Examples(timed_out, timed_out.size())),
          "Raise fileTimeoutMs or use fileTimeoutPolicy \"retry\"");
  }
  if (!failed.empty()) {
    c.Add(
        cat, "warning",
        fmt::format("{} files failed to index: {}", failed.size(), Examples(failed, failed.size())),
        "Check the files' encoding and the server log");
  }
  nlohmann::json stats = nlohmann::json::parse(last->stats_json, nullptr, false);
  if (!stats.is_discarded() && stats.value("truncatedByMaxFiles", false)) {
    c.Add(cat, "warning", "the last run stopped at maxFiles; files beyond it are not indexed",
          "Run bootstrap without maxFiles");
  }
  if (!text.empty()) {
    std::string langs;
    for (const auto& [lang, n] : text_languages) {
      if (!langs.empty()) langs += ", ";
      langs += fmt::format("{} ({})", lang, n);
    }
    c.Add(
        cat, "info",
        fmt::format("{} files are indexed as plain text, without symbols: {}", text.size(), langs));
  }
  // Files where more than 10 % of the functions have parse errors.
  ASSIGN_OR_RETURN(
      base::Statement st,
      c.store->db().Prepare("SELECT f.path FROM symbols s JOIN files f ON f.id = s.file_id WHERE "
                            "s.kind IN ('function', 'method') GROUP BY f.id HAVING "
                            "10 * sum(s.parse_error) > count(*) ORDER BY f.path"));
  std::vector<std::string> broken;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    broken.push_back(st.ColumnText(0));
  }
  if (!broken.empty()) {
    c.Add(cat, "info",
          fmt::format("{} files have parse errors in more than 10% of their functions: {}",
                      broken.size(), Examples(broken, broken.size())));
  }
  return Status::Ok();
}

// Stat-only check of the stored files (the fallback once the budget is spent).
void StatStoredFiles(Context& c) {
  c.changed.clear();
  c.deleted.clear();
  for (const store::FileRecord& f : c.files) {
    struct stat st {};
    const std::string abs = c.root + "/" + f.path;
    if (::lstat(abs.c_str(), &st) != 0) {
      c.deleted.push_back(f.path);
      continue;
    }
    const std::int64_t mtime =
        static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    if (static_cast<std::uint64_t>(st.st_size) != f.size || mtime != f.mtime_ns) {
      c.changed.push_back(f.path);
    }
  }
  c.checked = c.files.size();
}

Status ComputeFreshness(Context& c) {
  if (c.fresh_done) return Status::Ok();
  c.fresh_done = true;
  crawl::CrawlOptions opts;
  if (const store::RunRecord* last = c.LastSuccess() ? c.LastSuccess() : c.LastRun()) {
    nlohmann::json o = nlohmann::json::parse(last->options_json, nullptr, false);
    if (!o.is_discarded()) {
      for (const char* key : {"include", "exclude"}) {
        if (!o.contains(key) || !o[key].is_array()) continue;
        auto& list = std::string_view(key) == "include" ? opts.include : opts.exclude;
        for (const auto& g : o[key]) {
          if (g.is_string()) list.push_back(g.get<std::string>());
        }
      }
    }
  }
  opts.defer_new_files = true;
  crawl::Manifest previous;
  for (const store::FileRecord& f : c.files) {
    previous[f.path] = crawl::ManifestEntry{f.size, f.mtime_ns, f.sha256};
  }
  base::Cancellation budget;
  if (c.cancel) c.cancel->OnCancel([&budget] { budget.Cancel(); });
  const auto start = std::chrono::steady_clock::now();
  base::Progress progress([&](double, double, const std::string&) {
    if (std::chrono::steady_clock::now() - start > c.options.freshness_budget) budget.Cancel();
  });
  Result<crawl::CrawlResult> walk = crawl::Crawl(c.root, opts, &previous, budget, progress);
  if (c.cancel && c.cancel->requested()) return Status::Cancelled("run_audit cancelled");
  if (!walk.ok() || std::chrono::steady_clock::now() - start > c.options.freshness_budget) {
    // Over budget (or the walk failed): stat the stored files only.
    c.sampled = true;
    StatStoredFiles(c);
    return Status::Ok();
  }
  std::set<std::string, std::less<>> present;
  for (const crawl::FileEntry& f : walk->files) {
    present.insert(f.path);
    if (f.change == crawl::FileChange::kAdded) c.added.push_back(f.path);
    if (f.change == crawl::FileChange::kModified) c.changed.push_back(f.path);
  }
  for (const crawl::SkippedEntry& s : walk->skipped) present.insert(s.path);
  for (const store::FileRecord& f : c.files) {
    if (!present.count(f.path)) c.deleted.push_back(f.path);
  }
  c.checked = walk->files.size();
  return Status::Ok();
}

Status Freshness(Context& c) {
  const std::string cat = "freshness";
  const store::RunRecord* success = c.LastSuccess();
  if (!success) {
    c.Add(cat, "critical", "the workspace has no successful bootstrap", kBootstrapFirst);
    return Status::Ok();
  }
  if (std::optional<Clock::time_point> at = ParseRfc3339(success->finished_at)) {
    const auto age = c.now - *at;
    if (age > c.options.stale_after) {
      c.Add(cat, "warning",
            fmt::format("the last successful bootstrap ({}) is {} days old", success->run_id,
                        std::chrono::duration_cast<std::chrono::hours>(age).count() / 24),
            "Run bootstrap to refresh the index");
    }
  }
  RETURN_IF_ERROR(ComputeFreshness(c));
  const std::string sampled =
      c.sampled ? fmt::format(
                      " (the {} ms budget was reached: stored files were only stat'ed, "
                      "new files not looked for)",
                      c.options.freshness_budget.count())
                : "";
  if (!c.changed.empty()) {
    c.Add(cat, "warning",
          fmt::format("{} files changed since indexing{}: {}", c.changed.size(), sampled,
                      Examples(c.changed, c.changed.size())),
          "Run bootstrap to re-index the changed files");
  }
  if (!c.deleted.empty()) {
    c.Add(cat, "warning",
          fmt::format("{} indexed files were deleted{}: {}", c.deleted.size(), sampled,
                      Examples(c.deleted, c.deleted.size())),
          "Run bootstrap to drop them from the index");
  }
  if (!c.added.empty()) {
    c.Add(cat, "info",
          fmt::format("{} files were added since indexing: {}", c.added.size(),
                      Examples(c.added, c.added.size())),
          "Run bootstrap to index them");
  }
  if (c.sampled) {
    c.Add(cat, "info",
          fmt::format("freshness was sampled: the workspace walk exceeded {} ms",
                      c.options.freshness_budget.count()));
  }
  return Status::Ok();
}

// Pack rows (function and module packs) of the current contents, optionally of `paths` only.
Result<std::int64_t> PackCount(Context& c, const std::vector<std::string>* paths) {
  const char* sql =
      "SELECT count(*) FROM files f JOIN content_symbols s ON s.path = f.path AND s.sha256 = "
      "f.sha256 WHERE s.pack_id != '' AND (?1 IS NULL OR f.path IN (SELECT value FROM "
      "json_each(?1)))";
  ASSIGN_OR_RETURN(base::Statement st, c.store->db().Prepare(sql));
  if (paths) {
    RETURN_IF_ERROR(st.Bind(1, std::string_view(nlohmann::json(*paths).dump())));
  } else {
    RETURN_IF_ERROR(st.Bind(1, nullptr));
  }
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt64(0) : 0;
}

Status ConfidenceAudit(Context& c) {
  const std::string cat = "confidence";
  c.Add(cat, "info",
        "confidence values are uncalibrated ranking signals (base signal by extractor, minus "
        "defeater adjustments), not probabilities; no claim confidence is `measured` yet");
  if (!c.LastRun()) return Status::Ok();
  // Base signals below 0.3: the §4.1 ladder starts at 0.5, so only a defeated pack falls
  // below; stored packs carry no defeaters, so this counts none today and says so when any.
  RETURN_IF_ERROR(ComputeFreshness(c));
  std::vector<std::string> touched = c.changed;
  touched.insert(touched.end(), c.deleted.begin(), c.deleted.end());
  if (!touched.empty()) {
    ASSIGN_OR_RETURN(std::int64_t packs, PackCount(c, &touched));
    c.Add(cat, "warning",
          fmt::format("{} context packs have changed invalidation triggers ({} files{}): {}", packs,
                      touched.size(), c.sampled ? ", sampled" : "",
                      Examples(touched, touched.size())),
          "Run verify_claim on the packs you rely on, or bootstrap");
  }
  return Status::Ok();
}

Status Coverage(Context& c) {
  const std::string cat = "coverage";
  base::Database& db = c.store->db();
  ASSIGN_OR_RETURN(std::int64_t functions,
                   Scalar(db, "SELECT count(*) FROM symbols WHERE kind IN ('function', 'method')"));
  if (functions == 0) {
    c.Add(cat, "critical", "no functions are indexed",
          "Check include/exclude and that the workspace holds supported source files");
  }
  ASSIGN_OR_RETURN(std::int64_t packs, PackCount(c, nullptr));
  if (packs == 0) {
    c.Add(cat, "critical", "no context packs exist", kBootstrapFirst);
  }
  std::uint64_t code_files = 0;
  for (const store::FileRecord& f : c.files) {
    const std::string fam = ExtractorFamily(f.extractor);
    if (Indexed(f) && (fam == "tree_sitter" || fam == "ctags")) ++code_files;
  }
  ASSIGN_OR_RETURN(
      std::int64_t with_symbol,
      Scalar(db,
             "SELECT count(DISTINCT s.file_id) FROM symbols s JOIN files f ON f.id = s.file_id "
             "WHERE f.extractor LIKE 'tree-sitter%' OR f.extractor LIKE 'ctags%'"));
  if (code_files > 0 && 2 * static_cast<std::uint64_t>(with_symbol) < code_files) {
    c.Add(cat, "warning",
          fmt::format("only {} of {} code files have a symbol ({:.0f}%)", with_symbol, code_files,
                      100.0 * static_cast<double>(with_symbol) / static_cast<double>(code_files)),
          "Check the extractor routing and ctags availability");
  }
  if (functions > 0) {
    ASSIGN_OR_RETURN(std::int64_t documented,
                     Scalar(db,
                            "SELECT count(*) FROM symbols WHERE kind IN ('function', 'method') "
                            "AND doc != ''"));
    c.Add(cat, "info",
          fmt::format("{} of {} functions are documented ({:.0f}%)", documented, functions,
                      100.0 * static_cast<double>(documented) / static_cast<double>(functions)));
  }
  return Status::Ok();
}

void Summarize(AuditReport& r) {
  std::stable_sort(r.findings.begin(), r.findings.end(), [](const Finding& a, const Finding& b) {
    return Rank(a.severity) < Rank(b.severity);
  });
  if (r.findings.size() > kMaxFindings) r.findings.resize(kMaxFindings);
  r.summary = Summary{};
  r.summary.total_findings = r.findings.size();
  for (const Finding& f : r.findings) {
    if (f.severity == "critical") ++r.summary.critical;
    if (f.severity == "warning") ++r.summary.warnings;
    if (f.severity == "info") ++r.summary.info;
  }
}

nlohmann::json ToJson(const AuditReport& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : r.findings) {
    nlohmann::json j = {{"category", f.category}, {"severity", f.severity}, {"message", f.message}};
    if (f.recommendation) j["recommendation"] = *f.recommendation;
    findings.push_back(std::move(j));
  }
  return {{"audit_type", r.audit_type},
          {"timestamp", r.timestamp},
          {"findings", std::move(findings)},
          {"summary",
           {{"total_findings", r.summary.total_findings},
            {"critical", r.summary.critical},
            {"warnings", r.summary.warnings},
            {"info", r.summary.info}}}};
}

}  // namespace

Result<AuditReport> RunAudit(store::Store* store, std::string_view root, std::string_view type,
                             const AuditOptions& options, base::Cancellation* cancel) {
  if (std::find(std::begin(kAuditTypes), std::end(kAuditTypes), type) == std::end(kAuditTypes)) {
    return Status::InvalidArgument(
        "type: must be completeness, freshness, confidence, coverage or full");
  }
  AuditReport report;
  report.audit_type = std::string(type);
  const Clock::time_point now = options.now.value_or(Clock::now());
  report.timestamp = base::FormatRfc3339(now);
  if (!store) {
    report.findings.push_back(Finding{"completeness", "critical",
                                      "the workspace has never been bootstrapped",
                                      std::string(kBootstrapFirst)});
    Summarize(report);
    return report;
  }
  Context c;
  c.store = store;
  c.root = std::string(root);
  c.options = options;
  c.cancel = cancel;
  c.now = now;
  c.out = &report.findings;
  ASSIGN_OR_RETURN(c.runs, store->ListRuns());
  ASSIGN_OR_RETURN(c.files, store->ListFiles());
  const bool full = type == "full";
  if (full || type == "completeness") RETURN_IF_ERROR(Completeness(c));
  if (full || type == "freshness") RETURN_IF_ERROR(Freshness(c));
  if (full || type == "confidence") RETURN_IF_ERROR(ConfidenceAudit(c));
  if (full || type == "coverage") RETURN_IF_ERROR(Coverage(c));
  Summarize(report);
  return report;
}

std::string ReportJson(const AuditReport& report) {
  return ToJson(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<AuditReport> ParseReportJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("findings") || !j["findings"].is_array() ||
      !j.contains("summary") || !j["summary"].is_object()) {
    return Status::Malformed("audit report: not a run_audit JSON object");
  }
  AuditReport r;
  r.audit_type = j.value("audit_type", std::string());
  r.timestamp = j.value("timestamp", std::string());
  for (const auto& f : j["findings"]) {
    if (!f.is_object()) return Status::Malformed("audit report: findings: not an object");
    Finding x{f.value("category", std::string()), f.value("severity", std::string()),
              f.value("message", std::string()), std::nullopt};
    if (f.contains("recommendation") && f["recommendation"].is_string()) {
      x.recommendation = f["recommendation"].get<std::string>();
    }
    r.findings.push_back(std::move(x));
  }
  const auto& s = j["summary"];
  r.summary.total_findings = s.value("total_findings", std::uint64_t{0});
  r.summary.critical = s.value("critical", std::uint64_t{0});
  r.summary.warnings = s.value("warnings", std::uint64_t{0});
  r.summary.info = s.value("info", std::uint64_t{0});
  return r;
}

Result<std::int64_t> StoreAudit(store::Store& store, const AuditReport& report,
                                std::string_view agent) {
  base::Database& db = store.db();
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("INSERT INTO audits(audit_type, timestamp, report) VALUES (?1, ?2, "
                              "?3)"));
  RETURN_IF_ERROR(st.Bind(1, std::string_view(report.audit_type)));
  RETURN_IF_ERROR(st.Bind(2, std::string_view(report.timestamp)));
  const std::string json = ReportJson(report);
  RETURN_IF_ERROR(st.Bind(3, std::string_view(json)));
  ASSIGN_OR_RETURN(bool row, st.Step());
  (void)row;
  const std::int64_t id = db.LastInsertRowId();
  ledger::Entry e;
  e.kind = ledger::EntryKind::kToolCall;
  e.agent = std::string(agent);
  e.activity = "run_audit";
  e.payload = {
      {"auditId", id}, {"auditType", report.audit_type}, {"summary", ToJson(report)["summary"]}};
  RETURN_IF_ERROR(ledger::Append(db, e).status());
  RETURN_IF_ERROR(tx.Commit());
  return id;
}

Result<std::optional<AuditReport>> LatestAudit(store::Store& store) {
  ASSIGN_OR_RETURN(base::Statement st,
                   store.db().Prepare("SELECT report FROM audits ORDER BY id DESC LIMIT 1"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<AuditReport>();
  ASSIGN_OR_RETURN(AuditReport r, ParseReportJson(st.ColumnText(0)));
  return std::optional<AuditReport>(std::move(r));
}

Result<std::vector<StoredAudit>> ListAudits(store::Store& store, std::size_t limit) {
  ASSIGN_OR_RETURN(base::Statement st,
                   store.db().Prepare("SELECT id, audit_type, timestamp, report FROM audits ORDER "
                                      "BY id DESC LIMIT ?1"));
  RETURN_IF_ERROR(st.Bind(1, static_cast<std::int64_t>(limit)));
  std::vector<StoredAudit> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    StoredAudit a{st.ColumnInt64(0), st.ColumnText(1), st.ColumnText(2), {}};
    Result<AuditReport> r = ParseReportJson(st.ColumnText(3));
    if (r.ok()) a.summary = r->summary;
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace trove::librarian::audit
