// librarian: the Librarian command line (docs/librarian.md §3). Results go to stdout, diagnostics
// and progress to stderr. Exit codes: 0 success; 1 the run failed (a bootstrap that did not
// succeed, an I/O or store error); 2 usage error or invalid input (the message names the
// field); 3 the workspace has no index (run `librarian bootstrap` first); 130 cancelled.
// verify-claim exits 1 when the claim is defeated (a full defeater is active) or unknown, and
// diff-runs when a run is unknown or has no manifest; run-audit exits 1 when a finding is
// critical.
#include <fmt/core.h>
#include <fmt/format.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/cancellation.h"
#include "base/env.h"
#include "base/terminal.h"
#include "librarian/audit/audit.h"
#include "librarian/bundle/bundle.h"
#include "librarian/crawl/path.h"
#include "librarian/diff/diff.h"
#include "librarian/export/export.h"
#include "librarian/index/bootstrap.h"
#include "librarian/ledger/ledger.h"
#include "librarian/query/query.h"
#include "librarian/server/audit_tools.h"
#include "librarian/server/claims_tools.h"
#include "librarian/server/librarian_tools.h"
#include "librarian/server/mcp_main.h"
#include "librarian/store/store.h"
#include "librarian/verify/verify.h"
#include "librarian/watch/watcher.h"
#include "trove_version.h"  // generated: trove::VersionFull()

namespace {

using namespace trove;
using namespace trove::librarian;

int ExitFor(const Status& s) {
  switch (s.code()) {
    case base::StatusCode::kInvalidArgument:
    case base::StatusCode::kNotFound:  // a missing workspace is bad input too
      return 2;
    case base::StatusCode::kCancelled:
      return 130;
    default:
      return 1;
  }
}

constexpr std::string_view kProgram = "librarian";

int Fail(const Status& s) {
  base::PrintError(kProgram, s.message());
  return ExitFor(s);
}

struct BootstrapFlags {
  std::string workspace;
  bool force = false;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::optional<std::uint64_t> max_files;
  std::string ctags = "ctags";
  bool json = false;
  bool quiet = false;
};

int RunBootstrap(const BootstrapFlags& f) {
  index::BootstrapOptions o;
  o.workspace = f.workspace;
  if (!o.workspace.empty() && o.workspace.front() != '/') {
    // The CLI accepts a relative PATH; the engine takes the absolute one.
    char* cwd = ::getcwd(nullptr, 0);
    if (cwd != nullptr) {
      o.workspace = std::string(cwd) + "/" + o.workspace;
      std::free(cwd);
    }
  }
  o.force = f.force;
  o.include = f.include;
  o.exclude = f.exclude;
  o.max_files = f.max_files;
  o.ctags_program = f.ctags;
  base::Cancellation cancel;
  // Progress only where a person watches (base/terminal.h); a pipe or a log gets the result.
  const bool quiet = f.quiet || !base::TerminalInfo::Detect().stderr_progress;
  base::Progress progress(
      [quiet, last = 0.0](double done, double total, const std::string&) mutable {
        if (quiet || (done - last < 500 && done != total)) return;
        last = done;
        std::fputs(fmt::format("librarian: indexed {} of {} files\n", done, total).c_str(), stderr);
      });
  Result<index::BootstrapReport> r = index::Bootstrap(o, cancel, progress);
  if (!r.ok()) return Fail(r.status());
  if (f.json) {
    std::puts(server::BootstrapReportJson(*r).c_str());
  } else {
    const index::BootstrapStats& s = r->stats;
    std::printf("%s",
                fmt::format("{} {} ({}): {} files discovered, {} added, {} modified, {} "
                            "deleted, {} unchanged; {} functions, {} types; {} ms\n",
                            r->success ? "indexed" : "failed", r->workspace, s.mode,
                            s.files_discovered, s.files_added, s.files_modified, s.files_deleted,
                            s.files_unchanged, s.functions_indexed, s.types_indexed, r->duration_ms)
                    .c_str());
    std::printf("%s", fmt::format("store: {}\nrun: {}\n", r->store_path, r->run_id).c_str());
  }
  if (!r->success) {
    std::fputs(fmt::format("librarian: error: {}\n", r->error).c_str(), stderr);
    return 1;
  }
  return 0;
}

struct QueryFlags {
  std::string workspace;
  std::string intent;
  std::string depth = "L1";
  std::string intent_type;
  std::vector<std::string> affected;
  double min_confidence = 0.5;
  std::size_t max_files = query::kDefaultMaxFiles;
  bool evidence = false;
  bool json = false;
};

int RunQuery(const QueryFlags& f) {
  std::string ws = f.workspace;
  if (!ws.empty() && ws.front() != '/') {
    char* cwd = ::getcwd(nullptr, 0);
    if (cwd != nullptr) {
      ws = std::string(cwd) + "/" + ws;
      std::free(cwd);
    }
  }
  Result<std::string> root = crawl::CanonicalWorkspaceRoot(ws);
  if (!root.ok()) return Fail(root.status());
  query::QueryRequest req;
  req.intent = f.intent;
  std::optional<query::Depth> depth = query::ParseDepth(f.depth);
  if (!depth) return Fail(Status::InvalidArgument("--depth: must be one of L0, L1, L2, L3"));
  req.depth = *depth;
  if (!f.intent_type.empty()) {
    req.intent_type = query::ParseIntentType(f.intent_type);
    if (!req.intent_type) {
      return Fail(Status::InvalidArgument(
          "--type: must be one of understand, debug, refactor, impact, security, test, "
          "document, navigate, general"));
    }
  }
  for (std::size_t i = 0; i < f.affected.size(); ++i) {
    Result<std::string> rel = crawl::ResolveInWorkspace(
        *root, f.affected[i], {.field = fmt::format("--affected[{}]", i)});
    if (!rel.ok()) return Fail(rel.status());
    req.affected_files.push_back(*rel);
  }
  req.min_confidence = f.min_confidence;
  req.include_evidence = f.evidence;
  req.max_files = f.max_files;
  const std::string store_path = index::StorePathFor(*root);
  if (std::FILE* probe = std::fopen(store_path.c_str(), "rb")) {
    std::fclose(probe);
  } else {
    std::fputs(fmt::format("librarian: error: {}: not bootstrapped; run 'librarian bootstrap "
                           "{}' first\n",
                           *root, *root)
                   .c_str(),
               stderr);
    return 3;
  }
  Result<std::unique_ptr<store::Store>> st = store::Store::Open(store_path);
  if (!st.ok()) return Fail(st.status());
  base::Cancellation cancel;
  Result<query::QueryResponse> r =
      query::Query(**st, query::Workspace{*root, server::WorkspaceId(*root)}, req, cancel);
  if (!r.ok()) return Fail(r.status());
  if (f.json) {
    std::puts(server::QueryResponseJson(*r, f.evidence).c_str());
  } else {
    for (std::size_t i = 0; i < r->packs.size(); ++i) {
      const query::Pack& p = r->packs[i];
      std::printf("%s", fmt::format("[{}] {} {} (score {:.3f}, signal {:.2f})\n    {}\n", i + 1,
                                    query::PackTypeName(p.pack_type), p.target_id, p.score,
                                    p.signal, p.summary)
                            .c_str());
      for (const query::Evidence& e : p.evidence) {
        std::printf(
            "%s",
            fmt::format("    evidence: {}:{}-{}\n", e.file, e.start_line, e.end_line).c_str());
      }
    }
    if (!r->files.empty()) {
      std::string line = "files:";
      for (const query::RankedFile& file : r->files) {
        line += fmt::format(" {} ({:.2f})", file.path, file.score);
      }
      std::printf("%s\n", line.c_str());
    }
    if (r->synthesis) std::printf("%s", fmt::format("\n{}\n", *r->synthesis).c_str());
    for (const std::string& h : r->drill_down_hints) {
      std::printf("%s", fmt::format("hint: {}\n", h).c_str());
    }
    std::printf("%s", fmt::format("{} packs in {:.1f} ms ({}; confidence values are "
                                  "uncalibrated ranking signals)\n",
                                  r->packs.size(), r->latency_ms,
                                  query::IntentTypeName(r->intent_type_used))
                          .c_str());
  }
  if (r->error) {
    std::fputs(fmt::format("librarian: error: {}\n", *r->error).c_str(), stderr);
    return 3;
  }
  return 0;
}

// The canonical root of a PATH argument (relative to the working directory) whose index exists;
// exit code 3 (with the message printed) when it was never bootstrapped.
Result<std::string> IndexedRoot(const std::string& path, int* exit_code) {
  std::string ws = path;
  if (!ws.empty() && ws.front() != '/') {
    char* cwd = ::getcwd(nullptr, 0);
    if (cwd != nullptr) {
      ws = std::string(cwd) + "/" + ws;
      std::free(cwd);
    }
  }
  Result<std::string> root = crawl::CanonicalWorkspaceRoot(ws);
  if (!root.ok()) {
    *exit_code = Fail(root.status());
    return root.status();
  }
  if (std::FILE* probe = std::fopen(index::StorePathFor(*root).c_str(), "rb")) {
    std::fclose(probe);
    return root;
  }
  std::fputs(fmt::format("librarian: error: {}: not bootstrapped; run 'librarian bootstrap "
                         "{}' first\n",
                         *root, *root)
                 .c_str(),
             stderr);
  *exit_code = 3;
  return Status::NotFound("not bootstrapped");
}

struct VerifyFlags {
  std::string workspace;
  std::string claim_id;
  std::string ctags = "ctags";
  bool json = false;
};

// Exit 0 when verified, 1 when a full defeater is active or the claim is unknown.
int RunVerify(const VerifyFlags& f) {
  int code = 0;
  Result<std::string> root = IndexedRoot(f.workspace, &code);
  if (!root.ok()) return code;
  Result<std::unique_ptr<store::Store>> st = store::Store::Open(index::StorePathFor(*root));
  if (!st.ok()) return Fail(st.status());
  base::PosixEnv env;
  verify::Verifier verifier(env, {.ctags_program = f.ctags});
  Result<verify::Verification> v = verifier.Verify(**st, *root, f.claim_id, nullptr);
  if (!v.ok()) return Fail(v.status());
  if (f.json) {
    std::puts(server::VerificationJson(*v).c_str());
  } else if (!v->found) {
    std::printf("%s", fmt::format("{}: claim not found\n", f.claim_id).c_str());
  } else {
    std::printf("%s", fmt::format("{} {} ({}:{}-{}): {}, confidence {:.2f} (uncalibrated)\n",
                                  v->claim_id, v->evidence.target_id, v->evidence.file,
                                  v->evidence.start_line, v->evidence.end_line,
                                  v->verified ? "verified" : "defeated", v->confidence)
                          .c_str());
    for (const verify::DefeaterResult& d : v->results) {
      std::printf("%s", fmt::format("  {} {} [{}]: {}\n", d.activated ? "ACTIVE" : "ok    ", d.type,
                                    d.severity, d.reason)
                            .c_str());
    }
  }
  return v->found && v->verified ? 0 : 1;
}

struct DiffFlags {
  std::string workspace;
  std::string run1;
  std::string run2 = "latest";
  bool json = false;
};

int RunDiff(const DiffFlags& f) {
  int code = 0;
  Result<std::string> root = IndexedRoot(f.workspace, &code);
  if (!root.ok()) return code;
  Result<std::unique_ptr<store::Store>> st = store::Store::Open(index::StorePathFor(*root));
  if (!st.ok()) return Fail(st.status());
  Result<diff::RunDiff> d = diff::DiffRuns(**st, *root, f.run1, f.run2);
  if (!d.ok()) return Fail(d.status());
  if (f.json) {
    std::puts(server::RunDiffJson(*d).c_str());
  } else {
    std::printf("%s", fmt::format("{}\n", d->summary).c_str());
    auto list = [](const char* what, const std::vector<std::string>& items) {
      for (const std::string& i : items)
        std::printf("%s", fmt::format("  {} {}\n", what, i).c_str());
    };
    list("file added:   ", d->files.added);
    list("file removed: ", d->files.removed);
    list("file modified:", d->files.modified);
    list("symbol added:  ", d->symbols.added);
    list("symbol removed:", d->symbols.removed);
    list("symbol changed:", d->symbols.changed);
  }
  if (d->error) {
    std::fputs(fmt::format("librarian: error: {}\n", *d->error).c_str(), stderr);
    return 1;
  }
  return 0;
}

struct ExportFlags {
  std::string workspace;
  std::string format = "json";
  std::string output;
  bool json = false;
};

int RunExport(const ExportFlags& f) {
  int code = 0;
  Result<std::string> root = IndexedRoot(f.workspace, &code);
  if (!root.ok()) return code;
  std::optional<exports::Format> format = exports::ParseFormat(f.format);
  if (!format) return Fail(Status::InvalidArgument("--format: must be json, sqlite or markdown"));
  Result<std::unique_ptr<store::Store>> st = store::Store::Open(index::StorePathFor(*root));
  if (!st.ok()) return Fail(st.status());
  base::PosixEnv env;
  Result<exports::ExportResult> r = exports::ExportIndex(
      env, **st, exports::ExportRequest{*root, server::WorkspaceId(*root), *format, f.output});
  if (!r.ok()) return Fail(r.status());
  if (f.json) {
    std::puts(server::ExportResultJson(*r).c_str());
  } else {
    std::printf("%s", fmt::format("exported {} ({} files, {} symbols, {} packs; {} bytes) to {}\n",
                                  r->format, r->counts.files, r->counts.symbols, r->counts.packs,
                                  r->bytes, r->output_path)
                          .c_str());
  }
  return 0;
}

struct AuditFlags {
  std::string workspace;
  std::string type = "full";
  bool json = false;
};

// run_audit from the command line (decision 0063); the report is stored like the tool's.
int RunAuditCmd(const AuditFlags& f) {
  int code = 0;
  Result<std::string> root = IndexedRoot(f.workspace, &code);
  if (!root.ok()) return code;
  Result<std::unique_ptr<store::Store>> st = store::Store::Open(index::StorePathFor(*root));
  if (!st.ok()) return Fail(st.status());
  Result<audit::AuditReport> r = audit::RunAudit(st->get(), *root, f.type, {}, nullptr);
  if (!r.ok()) return Fail(r.status());
  Result<std::int64_t> stored = audit::StoreAudit(**st, *r, "cli");
  if (!stored.ok()) return Fail(stored.status());
  if (f.json) {
    std::puts(server::AuditReportJson(*r).c_str());
  } else {
    std::printf("%s", fmt::format("{} audit: {} findings ({} critical, {} warnings, {} info)\n",
                                  r->audit_type, r->summary.total_findings, r->summary.critical,
                                  r->summary.warnings, r->summary.info)
                          .c_str());
    for (const audit::Finding& x : r->findings) {
      std::printf("%s", fmt::format("  {:8} {}: {}\n", x.severity, x.category, x.message).c_str());
      if (x.recommendation)
        std::printf("%s", fmt::format("           -> {}\n", *x.recommendation).c_str());
    }
  }
  return r->summary.critical > 0 ? 1 : 0;
}

struct BundleFlags {
  std::string workspace;
  std::string topic;
  std::string type = "task";
  std::optional<std::size_t> max_tokens;
  bool json = false;
};

int RunBundleCmd(const BundleFlags& f) {
  int code = 0;
  Result<std::string> root = IndexedRoot(f.workspace, &code);
  if (!root.ok()) return code;
  Result<std::unique_ptr<store::Store>> st = store::Store::Open(index::StorePathFor(*root));
  if (!st.ok()) return Fail(st.status());
  base::Cancellation cancel;
  Result<bundle::Bundle> b =
      bundle::BuildBundle(**st, query::Workspace{*root, server::WorkspaceId(*root)},
                          bundle::BundleRequest{f.topic, f.type, f.max_tokens}, cancel);
  if (!b.ok()) return Fail(b.status());
  if (f.json) {
    std::puts(server::BundleJson(*b).c_str());
  } else {
    std::printf("%s", fmt::format("{} ({} bundle): {} packs, ~{} tokens{}\n", b->bundle_id,
                                  b->bundle_type, b->packs.size(), b->estimated_tokens,
                                  b->truncated ? fmt::format(", {} omitted", b->omitted_count)
                                               : std::string())
                          .c_str());
    for (const bundle::BundlePack& p : b->packs) {
      std::printf("%s", fmt::format("  {} {} {}\n", p.pack_id, p.pack_type, p.target_id).c_str());
    }
  }
  return 0;
}

struct LedgerFlags {
  std::string workspace;
  std::string kind;
  std::string claim;
  std::string since;
  bool prov = false;
};

// Prints ledger entries as JSON lines, a claim's evidence chain, or (--prov) a PROV-JSON
// document of what was selected.
int RunLedgerCmd(const LedgerFlags& f) {
  int code = 0;
  Result<std::string> root = IndexedRoot(f.workspace, &code);
  if (!root.ok()) return code;
  Result<std::unique_ptr<store::Store>> st = store::Store::Open(index::StorePathFor(*root));
  if (!st.ok()) return Fail(st.status());
  ledger::Filter filter;
  if (!f.kind.empty()) {
    filter.kind = ledger::ParseKind(f.kind);
    if (!filter.kind) return Fail(Status::InvalidArgument("--kind: unknown ledger entry kind"));
  }
  filter.since = f.since;
  filter.limit = ledger::kMaxReadEntries;
  Result<std::vector<ledger::Entry>> entries =
      f.claim.empty() ? ledger::Query((*st)->db(), filter)
                      : ledger::EvidenceChain((*st)->db(), f.claim, ledger::kMaxReadEntries);
  if (!entries.ok()) return Fail(entries.status());
  if (f.prov) {
    std::puts(ledger::ToProvJson(*entries, server::WorkspaceId(*root))
                  .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  .c_str());
    return 0;
  }
  for (const ledger::Entry& e : *entries) {
    nlohmann::json j = {{"id", e.id},
                        {"kind", ledger::KindName(e.kind)},
                        {"recordedAt", e.recorded_at},
                        {"claimId", e.claim_id},
                        {"agent", e.agent},
                        {"activity", e.activity},
                        {"relation", e.relation},
                        {"payload", e.payload}};
    if (e.parent_id) j["parentId"] = *e.parent_id;
    std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return 0;
}

struct WatchFlags {
  std::string workspace;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::string ctags = "ctags";
  int quiet_ms = static_cast<int>(watch::kDefaultQuiet.count());
  bool json = false;
};

std::string AbsolutePath(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  std::string out = path;
  if (char* cwd = ::getcwd(nullptr, 0)) {
    out = std::string(cwd) + "/" + path;
    std::free(cwd);
  }
  return out;
}

// One line on `out` per re-index (text, or the bootstrap tool's JSON with --json).
void PrintUpdate(const watch::Update& u, bool json, std::FILE* out) {
  if (!u.report.ok()) {
    std::fputs(
        fmt::format("librarian: watch: re-index failed: {}\n", u.report.status().message()).c_str(),
        stderr);
    return;
  }
  if (json) {
    std::fputs((server::BootstrapReportJson(*u.report) + "\n").c_str(), out);
  } else {
    const index::BootstrapStats& s = u.report->stats;
    std::fputs(fmt::format("index updated ({}): {} changed paths, {} added, {} modified, {} "
                           "deleted; {:.1f} ms; run {}\n",
                           u.rescan ? "whole workspace" : "changed paths", u.paths, s.files_added,
                           s.files_modified, s.files_deleted, u.ms, u.report->run_id)
                   .c_str(),
               out);
  }
  std::fflush(out);
}

watch::WatchOptions WatchOptionsFor(const std::string& workspace, const WatchFlags& f) {
  watch::WatchOptions wo;
  wo.bootstrap.workspace = AbsolutePath(workspace);
  wo.bootstrap.include = f.include;
  wo.bootstrap.exclude = f.exclude;
  wo.bootstrap.ctags_program = f.ctags;
  wo.quiet = std::chrono::milliseconds(f.quiet_ms);
  return wo;
}

// `librarian watch PATH`: an initial incremental bootstrap, then a re-index of every debounced
// batch of changes until SIGINT or SIGTERM (exit 0).
int RunWatch(const WatchFlags& f) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before any thread: sigwait below takes them
  Result<std::unique_ptr<watch::Watcher>> w =
      watch::Watcher::Start(WatchOptionsFor(f.workspace, f));
  if (!w.ok()) return Fail(w.status());
  std::fputs(fmt::format("librarian: watching {} ({} directories); Ctrl-C stops\n", (*w)->root(),
                         (*w)->inotify().watches())
                 .c_str(),
             stderr);
  base::Cancellation cancel;
  Status result = Status::Ok();
  std::thread runner([&] {
    result = (*w)->Run(cancel, [&](const watch::Update& u) { PrintUpdate(u, f.json, stdout); });
    if (!cancel.requested()) kill(getpid(), SIGTERM);  // a fatal error: wake the main thread
  });
  int sig = 0;
  sigwait(&stop, &sig);
  cancel.Cancel();
  runner.join();
  if (!result.ok()) return Fail(result);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // `librarian audit verify|stats FILE`: checks or summarizes an --audit-log file.
  if (argc >= 2 && std::string_view(argv[1]) == "audit") {
    return trove::librarian::server::RunAuditCommand(argc, argv, 2);
  }
  CLI::App app{"Librarian: repository knowledge index with ranked context packs", "librarian"};
  app.set_version_flag("--version", std::string("librarian (trove) ") + trove::VersionFull());
  app.require_subcommand(1);
  // CLI11's own usage errors start with the program's name too.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return base::ErrorLine(kProgram, e.what()) + "Run with --help for more information.\n";
  });

  BootstrapFlags bf;
  CLI::App* bootstrap = app.add_subcommand("bootstrap", "Index (or re-index) a workspace");
  bootstrap->add_option("path", bf.workspace, "Workspace root")->required();
  bootstrap->add_flag("--force", bf.force, "Re-extract every file");
  bootstrap->add_option("--include", bf.include, "Glob a file must match (repeatable)");
  bootstrap->add_option("--exclude", bf.exclude, "Glob of files to leave out (repeatable)");
  bootstrap->add_option("--max-files", bf.max_files, "Index at most N files (sorted)")
      ->check(CLI::PositiveNumber);
  bootstrap->add_option("--ctags", bf.ctags, "universal-ctags program; empty disables it");
  bootstrap->add_flag("--quiet", bf.quiet,
                      "No progress on stderr (there is none unless stderr is a terminal)");
  bootstrap->add_flag("--json", bf.json, "Print the bootstrap tool's JSON");

  QueryFlags qf;
  CLI::App* query_cmd = app.add_subcommand("query", "Ranked context packs for an intent");
  query_cmd->add_option("path", qf.workspace, "Workspace root (bootstrapped)")->required();
  query_cmd->add_option("intent", qf.intent, "Natural-language intent")->required();
  query_cmd->add_option("--depth", qf.depth, "L0, L1 (default), L2 or L3");
  query_cmd->add_option("--type", qf.intent_type, "intentType (default: inferred)");
  query_cmd->add_option("--affected", qf.affected, "Workspace-relative file (repeatable)");
  query_cmd->add_option("--min-confidence", qf.min_confidence, "Ranking threshold (0-1)")
      ->check(CLI::Range(0.0, 1.0));
  query_cmd
      ->add_option("--max-files", qf.max_files,
                   "Length of the ranked file list (default 10; 0: none)")
      ->check(CLI::Range(std::size_t{0}, query::kMaxFiles));
  query_cmd->add_flag("--evidence", qf.evidence, "Include evidence line ranges and snippets");
  query_cmd->add_flag("--json", qf.json, "Print the query tool's JSON");

  VerifyFlags vf;
  CLI::App* verify_cmd = app.add_subcommand(
      "verify-claim", "Re-verify a claim (a pack id) against the live tree; exit 1 if defeated");
  verify_cmd->add_option("path", vf.workspace, "Workspace root (bootstrapped)")->required();
  verify_cmd->add_option("claim", vf.claim_id, "Claim id (a packId from query)")->required();
  verify_cmd->add_option("--ctags", vf.ctags, "universal-ctags program; empty disables it");
  verify_cmd->add_flag("--json", vf.json, "Print the verify_claim tool's JSON");

  DiffFlags df;
  CLI::App* diff_cmd = app.add_subcommand("diff-runs", "Compare two bootstrap runs");
  diff_cmd->add_option("path", df.workspace, "Workspace root (bootstrapped)")->required();
  diff_cmd->add_option("run1", df.run1, "Run id or latest")->required();
  diff_cmd->add_option("run2", df.run2, "Run id, latest (default) or an RFC 3339 UTC time");
  diff_cmd->add_flag("--json", df.json, "Print the diff_runs tool's JSON");

  ExportFlags ef;
  CLI::App* export_cmd =
      app.add_subcommand("export", "Export the index to json, sqlite or markdown");
  export_cmd->add_option("path", ef.workspace, "Workspace root (bootstrapped)")->required();
  export_cmd->add_option("--format", ef.format, "json (default), sqlite or markdown");
  export_cmd->add_option("--output", ef.output,
                         "Workspace-relative output file (default .librarian/exports/...)");
  export_cmd->add_flag("--json", ef.json, "Print the export_index tool's JSON");

  AuditFlags af;
  CLI::App* audit_cmd =
      app.add_subcommand("run-audit", "Audit the index (run_audit); exit 1 on a critical finding");
  audit_cmd->add_option("path", af.workspace, "Workspace root (bootstrapped)")->required();
  audit_cmd->add_option("--type", af.type,
                        "completeness, freshness, confidence, coverage or full (default)");
  audit_cmd->add_flag("--json", af.json, "Print the run_audit tool's JSON");

  BundleFlags bdf;
  CLI::App* bundle_cmd =
      app.add_subcommand("bundle", "A self-contained bundle of context packs for a topic");
  bundle_cmd->add_option("path", bdf.workspace, "Workspace root (bootstrapped)")->required();
  bundle_cmd->add_option("topic", bdf.topic, "What the bundle is for")->required();
  bundle_cmd->add_option("--type", bdf.type, "task (default), review, debug or comprehensive");
  bundle_cmd->add_option("--max-tokens", bdf.max_tokens, "Token budget (100-100000)");
  bundle_cmd->add_flag("--json", bdf.json, "Print the get_context_pack_bundle tool's JSON");

  LedgerFlags lf;
  CLI::App* ledger_cmd = app.add_subcommand(
      "ledger", "Print the evidence ledger (JSON lines), a claim's chain, or PROV-JSON");
  ledger_cmd->add_option("path", lf.workspace, "Workspace root (bootstrapped)")->required();
  ledger_cmd->add_option("--kind", lf.kind, "Only entries of this kind (e.g. verification)");
  ledger_cmd->add_option("--claim", lf.claim, "The evidence chain of this claim (a pack id)");
  ledger_cmd->add_option("--since", lf.since, "Only entries recorded at or after (RFC 3339)");
  ledger_cmd->add_flag("--prov", lf.prov, "Print a W3C PROV-JSON document instead");
  WatchFlags wf;
  CLI::App* watch_cmd = app.add_subcommand(
      "watch", "Keep a workspace's index current: re-index what changes (inotify, debounced)");
  watch_cmd->add_option("path", wf.workspace, "Workspace root")->required();
  watch_cmd->add_option("--include", wf.include, "Glob a file must match (repeatable)");
  watch_cmd->add_option("--exclude", wf.exclude, "Glob of files to leave out (repeatable)");
  watch_cmd->add_option("--ctags", wf.ctags, "universal-ctags program; empty disables it");
  watch_cmd
      ->add_option("--debounce-ms", wf.quiet_ms,
                   "Quiet time before a batch of changes is re-indexed (default 200)")
      ->check(CLI::Range(1, 60000));
  watch_cmd->add_flag("--json", wf.json, "Print each re-index as the bootstrap tool's JSON");

  server::McpRunOptions mo;
  std::optional<int> http_port;
  CLI::App* mcp = app.add_subcommand("mcp", "Serve MCP over stdio (default) or HTTP");
  mcp->add_option("--http", http_port, "Serve Streamable HTTP on this port (0: any free port)")
      ->check(CLI::Range(0, 65535));
  server::AddPolicyFlags(*mcp, mo);  // --host, --auth, --audit-log, --rate-limit, ...
  mcp->add_option("--workspace", mo.workspaces,
                  "Register an already bootstrapped workspace at start-up (repeatable)");
  mcp->add_option("--ctags", mo.ctags_program, "universal-ctags program for bootstrap");
  mcp->add_option("--log-level", mo.log_level, "debug, info, warning (default) or error");
  std::vector<std::string> mcp_watch;
  mcp->add_option("--watch", mcp_watch,
                  "Watch this workspace and re-index what changes while serving (repeatable; "
                  "bootstrapped first when it has no index)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*bootstrap) return RunBootstrap(bf);
  if (*query_cmd) return RunQuery(qf);
  if (*verify_cmd) return RunVerify(vf);
  if (*diff_cmd) return RunDiff(df);
  if (*export_cmd) return RunExport(ef);
  if (*audit_cmd) return RunAuditCmd(af);
  if (*bundle_cmd) return RunBundleCmd(bdf);
  if (*ledger_cmd) return RunLedgerCmd(lf);
  if (*watch_cmd) return RunWatch(wf);
  server::PrepareMcpProcess();
  if (http_port) {
    mo.transport = "http";
    mo.port = *http_port;
  }
  // --watch: a watcher thread per workspace beside the server, in this process (the server's
  // query cache keys on the index generation, so a re-index invalidates it).
  base::Cancellation stop_watching;
  std::vector<std::unique_ptr<watch::Watcher>> watchers;
  for (const std::string& path : mcp_watch) {
    WatchFlags f;
    f.ctags = mo.ctags_program;
    watch::WatchOptions wo = WatchOptionsFor(path, f);
    Result<std::unique_ptr<watch::Watcher>> w = watch::Watcher::Start(wo);
    if (!w.ok()) return Fail(w.status());
    const std::string root = (*w)->root();
    if (std::FILE* probe = std::fopen(index::StorePathFor(root).c_str(), "rb")) {
      std::fclose(probe);
    } else {
      // No index yet: bootstrap now, so the server registers the workspace at start-up.
      Result<index::BootstrapReport> r =
          index::Bootstrap(wo.bootstrap, stop_watching, base::Progress());
      if (!r.ok()) return Fail(r.status());
      (*w)->SkipInitialBootstrap();
    }
    mo.workspaces.push_back(root);
    watchers.push_back(std::move(*w));
  }
  std::vector<std::thread> threads;
  for (std::unique_ptr<watch::Watcher>& w : watchers) {
    threads.emplace_back([&stop_watching, watcher = w.get()] {
      Status s = watcher->Run(stop_watching, [](const watch::Update& u) {
        if (!u.report.ok()) PrintUpdate(u, false, stderr);
      });
      if (!s.ok()) base::PrintError(kProgram, s.message());
    });
  }
  const int code = server::RunLibrarianMcp(mo);
  stop_watching.Cancel();
  for (std::thread& t : threads) t.join();
  return code;
}
