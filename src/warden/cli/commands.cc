#include "warden/cli/commands.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <thread>

#include "base/env.h"
#include "base/hash.h"
#include "base/status.h"
#include "warden/agents/backend.h"
#include "warden/agents/pipeline.h"
#include "warden/cli/glue_input.h"
#include "warden/export/export.h"
#include "warden/export/lifter.h"
#include "warden/identity/identity.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"
#include "warden/pass/kb_agent_store.h"
#include "warden/server/mcp_main.h"
#include "warden/views/json_views.h"
#include "warden/wasm/reader.h"

namespace trove::warden::cli {

namespace {

using base::StatusCode;
using views::Json;

// Names and summaries need not be valid UTF-8: invalid bytes become U+FFFD.
void PrintJson(const Json& j) {
  std::fputs((j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n").c_str(), stdout);
}

void Error(std::string_view message) {
  std::fputs(fmt::format("error: {}\n", message).c_str(), stderr);
}

// "2008" -> "2,008".
std::string Grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

// Maps a query error to its exit code (§2.3).
int ExitFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound:
      return kExitUnknown;
    case StatusCode::kInvalidArgument:
    case StatusCode::kAlreadyExists:
      return kExitUsage;
    case StatusCode::kMalformed:
    case StatusCode::kUnsupported:
      return kExitMalformed;
    default:
      return kExitKb;
  }
}

// Opens the KB found per §2.1; never creates one. Prints the error and sets *exit on failure.
// Finds the KB (§2.1) and opens it; an open error names the path. Prints nothing, so that
// `ingest` can run it on a thread of its own.
Result<std::unique_ptr<kb::Kb>> FindAndOpenKb(base::Env& env, const GlobalOptions& global,
                                              const kb::KbOptions& options = {}) {
  ASSIGN_OR_RETURN(std::string path, kb::FindDatabase(env, global.db, global.cwd));
  Result<std::unique_ptr<kb::Kb>> opened = kb::Kb::Open(env, path, options);
  if (!opened.ok()) return opened.status().WithContext(path);
  return opened;
}

std::unique_ptr<kb::Kb> OpenKb(base::Env& env, const GlobalOptions& global, int* exit) {
  Result<std::unique_ptr<kb::Kb>> opened = FindAndOpenKb(env, global);
  if (!opened.ok()) {
    Error(opened.status().message());
    *exit = kExitKb;
    return nullptr;
  }
  return std::move(opened).value();
}

Result<std::int64_t> ResolveVersion(kb::Kb& k, const std::optional<std::string>& spec) {
  return k.ResolveVersion(spec ? std::optional<std::string_view>(*spec) : std::nullopt);
}

struct OpenedVersion {
  std::unique_ptr<kb::Kb> kb;
  std::int64_t version_id = 0;
};

// Opens the KB and resolves a `<version>` argument (§2.1); prints the error and sets *exit on
// failure.
std::optional<OpenedVersion> OpenVersion(base::Env& env, const GlobalOptions& global,
                                         const std::optional<std::string>& version, int* exit) {
  std::unique_ptr<kb::Kb> k = OpenKb(env, global, exit);
  if (!k) return std::nullopt;
  Result<std::int64_t> id = ResolveVersion(*k, version);
  if (!id.ok()) {
    Error(id.status().message());
    *exit = ExitFor(id.status());
    return std::nullopt;
  }
  return OpenedVersion{std::move(k), *id};
}

// `path` made absolute against `cwd` (the process's directory when empty), with symlinks and
// dot segments resolved as far as the file system allows.
std::string AbsolutePath(const std::string& cwd, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  if (p.is_relative()) p = (cwd.empty() ? fs::current_path(ec) : fs::path(cwd)) / p;
  fs::path canonical = fs::weakly_canonical(p, ec);
  return (ec ? p.lexically_normal() : canonical).string();
}

std::string OrDash(const std::optional<std::string>& s) { return s && !s->empty() ? *s : "-"; }

std::string Conf(const std::optional<double>& c) {
  return c ? views::Confidence3(*c) : std::string("-");
}

// A progress bar on stderr when it is a terminal (§2.1: decoration only on a terminal), e.g.
// "\r\x1b[K[##########..............]  45% export 887/1,968". It redraws only when the
// percentage or the message changes, so per-function reports cost little, and clears its line
// when destroyed.
// Without a terminal it draws nothing: piped output stays clean.
class TerminalProgress {
 public:
  static constexpr int kWidth = 24;
  explicit TerminalProgress(bool enabled) : enabled_(enabled) {}
  ~TerminalProgress() { Clear(); }
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  base::Progress Sink() {
    if (!enabled_) return base::Progress();
    return base::Progress([this](double done, double total, const std::string& message) {
      Draw(done, total, message);
    });
  }

  // Erases the bar, before results go to a terminal that may be the same one.
  void Clear() {
    if (!shown_) return;
    shown_ = false;
    last_.clear();
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
  }

  // total <= 0: unknown, shown as a count without a bar fill.
  void Draw(double done, double total, const std::string& message) {
    if (!enabled_) return;
    const double fraction = total > 0 ? std::clamp(done / total, 0.0, 1.0) : 0.0;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string line = "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "]";
    if (total > 0) line += fmt::format(" {:3d}%", static_cast<int>(fraction * 100));
    if (!message.empty()) line += " " + message;
    // Phase counters ("read" 0/3) stay as they are; item counts are grouped.
    if (total > 3) {
      line += fmt::format(" {}/{}", Grouped(static_cast<std::uint64_t>(done)),
                          Grouped(static_cast<std::uint64_t>(total)));
    }
    // Redraw when the percentage or the message changes, not on every item.
    std::string key =
        fmt::format("{}|{}|{}", static_cast<int>(fraction * 100), message, total > 0 ? 0.0 : done);
    if (key == last_) return;
    last_ = std::move(key);
    shown_ = true;
    std::fputs(("\r\x1b[K" + line).c_str(), stderr);
    std::fflush(stderr);
  }

 private:
  const bool enabled_;
  bool shown_ = false;
  std::string last_;
};

// Lifts every function of a version (§10.2 pseudo, `show --lift`). The lifter needs the module
// itself: the recorded path, with its SHA-256 checked; calls use the current names.
Result<std::map<std::uint32_t, std::string>> LiftVersion(base::Env& env, kb::Kb& k,
                                                         const kb::VersionInfo& version) {
  std::map<std::uint32_t, std::string> names;
  kb::FunctionQuery all;
  all.version_id = version.id;
  all.include_imports = true;
  ASSIGN_OR_RETURN(kb::FunctionPage every, k.ListFunctions(all));
  for (const kb::FunctionRow& row : every.functions) {
    if (row.name) names[row.index] = exporter::CIdentifier(row.name, row.index);
  }
  Result<std::string> bytes = env.ReadFile(version.wasm_path);
  if (!bytes.ok()) {
    return Status::NotFound(fmt::format("module not readable at {}", version.wasm_path));
  }
  if (base::ToHex(base::Sha256(*bytes)) != version.sha256) {
    return Status::InvalidArgument(
        fmt::format("module at {} has changed (SHA-256 differs)", version.wasm_path));
  }
  return exporter::LiftModule(
      std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes->data()),
                                    bytes->size()),
      [&names](std::uint32_t f) {
        auto it = names.find(f);
        return it == names.end() ? std::string() : it->second;
      });
}

}  // namespace

int RunInit(base::Env& env, const GlobalOptions& global, const std::string& project) {
  Result<kb::InitResult> r = kb::Init(env, global.cwd, project);
  if (!r.ok()) {
    Error(r.status().message());
    return kExitKb;
  }
  if (global.json) {
    PrintJson(Json{{"db_path", r->db_path}, {"project", r->project}, {"created", r->created}});
  } else if (r->created) {
    std::fputs(fmt::format("initialized WARDEN project '{}' in .warden/\n", r->project).c_str(),
               stdout);
  } else {
    std::fputs("already initialized\n", stdout);
  }
  return kExitOk;
}

int RunIngest(base::Env& env, const GlobalOptions& global, const IngestArgs& args) {
  // Paths are recorded absolute and canonical, so that `show --lift` and `export pseudo` find
  // the module from any directory.
  const std::string wasm_path = AbsolutePath(global.cwd, args.wasm);
  const std::optional<std::string> glue_path =
      args.glue ? std::optional<std::string>(AbsolutePath(global.cwd, *args.glue)) : std::nullopt;
  // The inputs first: a failed ingest creates no database.
  if (!env.FileExists(wasm_path)) {
    Error(fmt::format("cannot read {}: no such file", args.wasm));
    return kExitUsage;
  }
  if (glue_path && !env.FileExists(*glue_path)) {
    Error(fmt::format("cannot read glue {}: no such file", *args.glue));
    return kExitUsage;
  }
  // Only `ingest --db PATH` may create a database (§2.1). The KB is opened (created, for a new
  // one: two fsyncs) on a thread of its own while the module is read and fingerprinted; its
  // errors still come first, as when it was opened before the read.
  Result<std::unique_ptr<kb::Kb>> opened = Status::Internal("ingest: the kb was not opened");
  std::jthread opener([&env, &global, &opened] {
    kb::KbOptions kb_options;
    kb_options.create_if_missing = global.db.has_value();
    opened = FindAndOpenKb(env, global, kb_options);
  });
  // Joins the opener; when the open failed, prints its error as OpenKb does and returns true.
  auto open_failed = [&]() {
    if (opener.joinable()) opener.join();
    if (opened.ok()) return false;
    Error(opened.status().message());
    return true;
  };

  ingest::IngestOptions options;
  options.label = args.label;
  options.seed = !args.no_seed;
  options.threads = args.threads;
  std::optional<GlueInput> glue;
  if (args.glue) {
    Result<GlueInput> parsed = ReadGlue(env, *glue_path);
    if (!parsed.ok()) {
      if (open_failed()) return kExitKb;
      Error(parsed.status().message());
      return parsed.status().code() == StatusCode::kMalformed ? kExitMalformed : kExitUsage;
    }
    glue = std::move(parsed).value();
    options.glue_path = *glue_path;
    options.glue_json = glue->json;
    options.glue = &glue->bindings;
    options.emscripten_version = glue->emscripten_version;
    options.emscripten_version_source = glue->emscripten_version_source;
  }
  TerminalProgress progress(global.stderr_is_terminal && !global.json);
  const base::Progress sink = progress.Sink();
  options.progress = &sink;
  Result<ingest::PreparedVersion> prepared = ingest::ReadAndPrepare(env, wasm_path, options);
  opener.join();
  if (!opened.ok()) progress.Clear();
  if (open_failed()) return kExitKb;
  std::unique_ptr<kb::Kb> k = std::move(opened).value();
  Result<ingest::IngestReport> r =
      prepared.ok() ? ingest::StorePrepared(*k, std::move(prepared).value(), options)
                    : Result<ingest::IngestReport>(prepared.status());
  progress.Clear();
  if (!r.ok()) {
    const Status& s = r.status();
    if (s.code() == StatusCode::kMalformed || s.code() == StatusCode::kUnsupported ||
        s.code() == StatusCode::kResourceExhausted) {
      Error(fmt::format("malformed wasm: {}", s.message()));
      return kExitMalformed;
    }
    Error(s.message());
    return ExitFor(s);
  }
  const ingest::IngestReport& rep = *r;
  const auto& acc = rep.store.seeds_accepted;
  if (global.json) {
    PrintJson(Json{{"version_id", rep.store.version_id},
                   {"label", rep.store.label},
                   {"already_ingested", rep.store.already_ingested},
                   {"functions", rep.imported + rep.defined},
                   {"imported", rep.imported},
                   {"defined", rep.defined},
                   {"size", rep.size},
                   {"sha256", rep.sha256},
                   {"emscripten_version",
                    rep.emscripten_version ? Json(*rep.emscripten_version) : Json(nullptr)},
                   {"shared_memory", rep.module.shared_memory},
                   {"memory_count", rep.module.memory_count},
                   {"seeded", {{"name_section", acc[0]}, {"glue", acc[1]}, {"export", acc[2]}}},
                   {"warnings", rep.module.warnings}});
    return kExitOk;
  }
  for (const std::string& w : rep.module.warnings) {
    std::fputs(fmt::format("warning: {}\n", w).c_str(), stderr);
  }
  if (rep.store.already_ingested) {
    std::fputs(fmt::format("already ingested as {} (id {}); nothing written\n", rep.store.label,
                           rep.store.version_id)
                   .c_str(),
               stdout);
    return kExitOk;
  }
  std::fputs(fmt::format("ingested {} (id {}): {} functions ({} imported, {} defined), {} bytes\n",
                         rep.store.label, rep.store.version_id, Grouped(rep.imported + rep.defined),
                         Grouped(rep.imported), Grouped(rep.defined), Grouped(rep.size))
                 .c_str(),
             stdout);
  std::fputs(
      fmt::format("sha256 {}, Emscripten {}, shared memory {}, {} memor{}\n", rep.sha256,
                  rep.emscripten_version ? fmt::format("{} ({})", *rep.emscripten_version,
                                                       rep.emscripten_version_source.value_or("?"))
                                         : std::string("unknown"),
                  rep.module.shared_memory ? "yes" : "no", rep.module.memory_count,
                  rep.module.memory_count == 1 ? "y" : "ies")
          .c_str(),
      stdout);
  std::fputs(fmt::format("seeded names: {} from the name section, {} from the glue, {} from "
                         "exports and imports\n",
                         acc[0], acc[1], acc[2])
                 .c_str(),
             stdout);
  return kExitOk;
}

int RunVersions(base::Env& env, const GlobalOptions& global) {
  int exit = kExitOk;
  std::unique_ptr<kb::Kb> k = OpenKb(env, global, &exit);
  if (!k) return exit;
  Result<std::vector<kb::VersionInfo>> list = k->ListVersions();
  if (!list.ok()) {
    Error(list.status().message());
    return ExitFor(list.status());
  }
  if (global.json) {
    PrintJson(views::VersionsJson(*list));
    return kExitOk;
  }
  std::string out =
      fmt::format("{:>4}  {:<12} {:>10} {:>8}  {:<10} {:<6}  {:<12}  {}\n", "id", "label",
                  "functions", "defined", "emscripten", "shared", "sha256", "ingested_at");
  for (const kb::VersionInfo& v : *list) {
    out += fmt::format("{:>4}  {:<12} {:>10} {:>8}  {:<10} {:<6}  {:<12}  {}\n", v.id, v.label,
                       Grouped(static_cast<std::uint64_t>(v.functions)),
                       Grouped(static_cast<std::uint64_t>(v.defined)), OrDash(v.emscripten_version),
                       v.shared_memory ? "yes" : "no", v.sha256.substr(0, 12), v.ingested_at);
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int RunCoverage(base::Env& env, const GlobalOptions& global,
                const std::optional<std::string>& version) {
  int exit = kExitOk;
  std::optional<OpenedVersion> opened = OpenVersion(env, global, version, &exit);
  if (!opened) return exit;
  kb::Kb* k = opened->kb.get();
  const std::optional<std::int64_t> id = opened->version_id;
  Result<kb::Coverage> c = k->GetCoverage(*id);
  if (!c.ok()) {
    Error(c.status().message());
    return ExitFor(c.status());
  }
  if (global.json) {
    PrintJson(views::CoverageJson(*c));
    return kExitOk;
  }
  std::string out;
  out += fmt::format("defined      {}\n", Grouped(static_cast<std::uint64_t>(c->defined)));
  out += fmt::format("named        {} ({:.1f} %)\n", Grouped(static_cast<std::uint64_t>(c->named)),
                     c->coverage_pct);
  out += fmt::format(
      "  human      {}\n  export     {}\n  oracle     {}\n  diff-carry {}\n"
      "  agent      {}\n",
      c->human_named, c->export_named, c->oracle_named, c->diff_carry_named, c->agent_named);
  out += fmt::format("locked       {}\n", c->locked);
  out += fmt::format("mean confidence {}\n", Conf(c->mean_confidence));
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int RunFuncs(base::Env& env, const GlobalOptions& global, const FuncsArgs& args) {
  int exit = kExitOk;
  std::optional<OpenedVersion> opened = OpenVersion(env, global, args.version, &exit);
  if (!opened) return exit;
  kb::Kb* k = opened->kb.get();
  const std::optional<std::int64_t> id = opened->version_id;
  kb::FunctionQuery q;
  q.version_id = *id;
  q.include_imports = args.imports;
  q.unnamed_only = args.unnamed;
  q.below = args.below;
  q.provenance = args.provenance;
  Result<kb::FunctionPage> page = k->ListFunctions(q);
  if (!page.ok()) {
    Error(page.status().message());
    return ExitFor(page.status());
  }
  std::vector<kb::FunctionRow>& rows = page->functions;
  if (args.limit && rows.size() > static_cast<std::size_t>(*args.limit)) {
    rows.resize(static_cast<std::size_t>(*args.limit));
  }
  if (global.json) {
    PrintJson(views::FunctionRowsJson(rows));
    return kExitOk;
  }
  std::string out;
  for (const kb::FunctionRow& r : rows) {
    out +=
        fmt::format("{:>6}  {:<15} {:<28} {:<32} {:<10} {}\n", r.index, r.stable_id.substr(0, 15),
                    OrDash(r.type), OrDash(r.name), OrDash(r.provenance), Conf(r.confidence));
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int RunShow(base::Env& env, const GlobalOptions& global, const ShowArgs& args) {
  int exit = kExitOk;
  std::optional<OpenedVersion> opened = OpenVersion(env, global, args.version, &exit);
  if (!opened) return exit;
  kb::Kb* k = opened->kb.get();
  const std::optional<std::int64_t> id = opened->version_id;
  Result<std::uint32_t> index = k->ResolveFunction(*id, args.func);
  if (!index.ok()) {
    Error(index.status().message());
    return ExitFor(index.status());
  }
  Result<std::optional<kb::StoredFunction>> fn = k->GetFunction(*id, *index);
  Result<std::optional<kb::FunctionFacts>> facts = k->GetFunctionFacts(*id, *index);
  Result<std::vector<std::uint32_t>> callers = k->Callers(*id, *index);
  if (!fn.ok() || !facts.ok() || !callers.ok() || !fn->has_value()) {
    const Status s = !fn.ok()        ? fn.status()
                     : !facts.ok()   ? facts.status()
                     : !callers.ok() ? callers.status()
                                     : Status::NotFound("no such function");
    Error(s.message());
    return ExitFor(s);
  }
  const kb::FunctionRecord& r = (*fn)->record;
  Result<std::optional<kb::SymbolRecord>> symbol = k->GetSymbol(r.stable_id);
  if (!symbol.ok()) {
    Error(symbol.status().message());
    return ExitFor(symbol.status());
  }
  std::optional<std::string> lifted;
  if (args.lift && !r.is_import) {
    Result<kb::VersionInfo> version = k->GetVersion(*id);
    Result<std::map<std::uint32_t, std::string>> all =
        version.ok() ? LiftVersion(env, *k, *version)
                     : Result<std::map<std::uint32_t, std::string>>(version.status());
    if (!all.ok()) {
      lifted = fmt::format("  /* not lifted: {} */\n", all.status().message());
    } else if (auto it = all->find(r.func_index); it != all->end()) {
      lifted = it->second;
    }
  }
  if (global.json) {
    Json out{{"function", views::FactsJson(*facts)}, {"symbol", views::SymbolJson(*symbol)}};
    if (lifted) out["lifted"] = *lifted;
    out["index"] = r.func_index;
    out["is_import"] = r.is_import;
    out["callers"] = *callers;
    out["callees"] = r.defined_callees;
    PrintJson(out);
    return kExitOk;
  }
  std::string out;
  out += fmt::format("func[{}] {}\n", r.func_index, r.stable_id);
  out += fmt::format("  type          {}\n", r.type_signature);
  if (r.is_import) {
    out += fmt::format("  import        {}.{}\n", r.import_module, r.import_field);
  } else {
    out += fmt::format("  body          offset {:#x} ({}), {} bytes, {} instructions\n",
                       r.body_offset, r.body_offset, r.body_size, r.instruction_count);
    out += fmt::format(
        "  fingerprints  structural {}\n                norm {} (tier {})\n"
        "                exact {}\n",
        r.structural_hash, r.norm_hash, r.id_tier, r.exact_hash);
    std::string minhash;
    for (std::size_t i = 0; i < 4; ++i) minhash += fmt::format("{:016x} ", r.minhash[i]);
    out += fmt::format("                minhash {}… (32 values)\n", minhash);
  }
  auto list = [](const auto& v) {
    std::string s;
    for (const auto& x : v) s += fmt::format("{}{}", s.empty() ? "" : ", ", x);
    return s.empty() ? std::string("-") : s;
  };
  out += fmt::format("  call targets  {}\n", list(r.call_targets));
  out += fmt::format("  callees       {}\n", list(r.defined_callees));
  out += fmt::format("  callers       {}\n", list(*callers));
  out += fmt::format("  strings       {}\n", list(r.referenced_strings));
  out += fmt::format("  raw name      {}\n", OrDash(r.raw_name));
  out += fmt::format("  exports       {}\n", list(r.export_names));
  if (*symbol) {
    const kb::SymbolRecord& s = **symbol;
    out += fmt::format("  symbol        {} [{}, {}{}]\n", OrDash(s.name), s.provenance,
                       views::Confidence3(s.confidence), s.locked ? ", locked" : "");
    if (s.summary) out += fmt::format("  summary       {}\n", *s.summary);
    out += "  evidence\n";
    for (const kb::EvidenceEntry& e : s.evidence) {
      out += fmt::format("    {} {} {} {} {} {}\n", e.at, e.actor, OrDash(e.name),
                         Conf(e.confidence), e.accepted ? "accepted" : "rejected", e.reason);
    }
  } else {
    out += "  symbol        -\n";
  }
  if (lifted) out += "  pseudo-C\n" + *lifted;
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int RunSetName(base::Env& env, const GlobalOptions& global, const SetNameArgs& args) {
  if (args.clear == args.name.has_value()) {
    Error("give a name, or --clear");
    return kExitUsage;
  }
  int exit = kExitOk;
  std::optional<OpenedVersion> opened = OpenVersion(env, global, args.version, &exit);
  if (!opened) return exit;
  kb::Kb* k = opened->kb.get();
  const std::optional<std::int64_t> id = opened->version_id;
  Result<std::uint32_t> index = k->ResolveFunction(*id, args.func);
  if (!index.ok()) {
    Error(index.status().message());
    return ExitFor(index.status());
  }
  Result<std::optional<kb::StoredFunction>> fn = k->GetFunction(*id, *index);
  if (!fn.ok() || !fn->has_value()) {
    const Status s = fn.ok() ? Status::NotFound("no such function") : fn.status();
    Error(s.message());
    return ExitFor(s);
  }
  const std::string stable_id = (*fn)->record.stable_id;
  const std::string details = Json{{"version_id", *id}, {"func_index", *index}}.dump();
  Result<kb::Decision> d = args.clear ? k->HumanClear(kb::HumanChannel::kCli, stable_id, details)
                                      : k->HumanSetName(kb::HumanChannel::kCli, stable_id,
                                                        *args.name, args.summary, details);
  if (!d.ok()) {
    Error(d.status().message());
    return ExitFor(d.status());
  }
  if (global.json) {
    PrintJson(Json{{"written", d->accepted}, {"reason", d->reason}});
  } else if (!d->accepted) {
    Error(d->reason);
    return kExitCheckFailed;
  } else if (args.clear) {
    std::fputs(fmt::format("func[{}] {} -> cleared [human]\n", *index, stable_id).c_str(), stdout);
  } else {
    std::fputs(
        fmt::format("func[{}] {} -> {} [human, locked]\n", *index, stable_id, *args.name).c_str(),
        stdout);
  }
  return d->accepted ? kExitOk : kExitCheckFailed;
}

namespace {

bool OnPath(base::Env& env, std::string_view tool) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view rest(path);
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (!dir.empty() && env.FileExists(fmt::format("{}/{}", dir, tool))) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

std::string PyBool(bool b) { return b ? "True" : "False"; }

}  // namespace

int RunVerify(base::Env& env, const GlobalOptions& global, const std::string& file) {
  Result<std::string> data = env.ReadFile(file);
  if (!data.ok()) {
    Error(fmt::format("cannot read {}: {}", file, data.status().message()));
    return kExitUsage;
  }
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(data->data()),
                                            data->size());
  // §4.5: fingerprint twice, on one thread and on several, and compare every output.
  wasm::ReadOptions one;
  wasm::ReadOptions many;
  many.decode_threads = 4;
  std::optional<TerminalProgress> progress;
  progress.emplace(global.stderr_is_terminal && !global.json);
  progress->Draw(0, 3, "fingerprint (1 thread)");
  Result<identity::ModuleIdentity> a = identity::ComputeModuleIdentity(bytes, one);
  if (!a.ok()) {
    Error(fmt::format("malformed wasm: {}", a.status().message()));
    return kExitMalformed;
  }
  progress->Draw(1, 3, "fingerprint (4 threads)");
  Result<identity::ModuleIdentity> b = identity::ComputeModuleIdentity(bytes, many);
  if (!b.ok()) {
    Error(fmt::format("second pass failed: {}", b.status().message()));
    return kExitCheckFailed;
  }
  std::vector<std::uint32_t> unstable;
  for (std::size_t i = 0; i < a->functions.size(); ++i) {
    progress->Draw(static_cast<double>(i + 1), static_cast<double>(a->functions.size()), "compare");
    const identity::FunctionIdentity& x = a->functions[i];
    const identity::FunctionIdentity* y = i < b->functions.size() ? &b->functions[i] : nullptr;
    if (y == nullptr || x.stable_id != y->stable_id || x.structural != y->structural ||
        x.semantic != y->semantic || x.minhash != y->minhash || x.exact != y->exact) {
      unstable.push_back(x.func_index);
    }
  }
  progress.reset();  // clears the bar before the result
  const std::size_t total = a->functions.size();
  const bool wasm2c = OnPath(env, "wasm2c");
  const bool w2c2 = OnPath(env, "w2c2");
  const bool cc = OnPath(env, "cc");
  const bool validate = OnPath(env, "wasm-validate");
  const bool can_differential = (wasm2c || w2c2) && cc;
  if (global.json) {
    PrintJson(Json{{"functions", total},
                   {"deterministic", total - unstable.size()},
                   {"unstable", unstable},
                   {"differential_ready", can_differential},
                   {"tooling",
                    {{"wasm2c", wasm2c},
                     {"w2c2", w2c2},
                     {"cc", cc},
                     {"wabt_validate", validate},
                     {"can_differential", can_differential}}}});
  } else {
    std::string out = fmt::format("{}/{} functions fingerprint deterministically\n",
                                  total - unstable.size(), total);
    for (std::uint32_t f : unstable) {
      out += global.stdout_is_terminal ? fmt::format("\x1b[31munstable: func[{}]\x1b[0m\n", f)
                                       : fmt::format("unstable: func[{}]\n", f);
    }
    out += fmt::format(
        "differential equivalence ready: {} tooling={{'wasm2c': {}, 'w2c2': {}, 'cc': {}, "
        "'wabt_validate': {}, 'can_differential': {}}}\n",
        PyBool(can_differential), PyBool(wasm2c), PyBool(w2c2), PyBool(cc), PyBool(validate),
        PyBool(can_differential));
    std::fputs(out.c_str(), stdout);
  }
  return unstable.empty() ? kExitOk : kExitCheckFailed;
}

int RunExport(base::Env& env, const GlobalOptions& global, const ExportArgs& args) {
  Result<exporter::Format> format = exporter::ParseFormat(args.format);
  if (!format.ok()) {
    Error(format.status().message());
    return kExitUsage;
  }
  int exit = kExitOk;
  std::optional<OpenedVersion> opened = OpenVersion(env, global, args.label, &exit);
  if (!opened) return exit;
  kb::Kb* k = opened->kb.get();
  const std::optional<std::int64_t> id = opened->version_id;
  Result<kb::VersionInfo> version = k->GetVersion(*id);
  kb::FunctionQuery q;
  q.version_id = *id;
  Result<kb::FunctionPage> page = k->ListFunctions(q);
  if (!version.ok() || !page.ok()) {
    const Status s = version.ok() ? page.status() : version.status();
    Error(s.message());
    return ExitFor(s);
  }
  exporter::ExportInput input;
  input.label = version->label;
  input.emscripten_version = version->emscripten_version;
  TerminalProgress progress(global.stderr_is_terminal);
  const std::size_t rows = page->functions.size();
  for (std::size_t i = 0; i < rows; ++i) {
    const kb::FunctionRow& row = page->functions[i];
    progress.Draw(static_cast<double>(i + 1), static_cast<double>(rows), "export");
    if (row.is_import) continue;
    exporter::ExportFunction f;
    f.index = row.index;
    f.stable_id = row.stable_id;
    f.type_signature = row.type.value_or("");
    f.name = row.name;
    f.provenance = row.provenance;
    f.confidence = row.confidence;
    f.locked = row.locked;
    if (*format == exporter::Format::kGhidra || *format == exporter::Format::kPseudo) {
      Result<std::optional<kb::StoredFunction>> fn = k->GetFunction(*id, row.index);
      if (fn.ok() && fn->has_value()) {
        f.body_offset = (*fn)->record.body_offset;
        f.instruction_count = (*fn)->record.instruction_count;
      }
      if (*format == exporter::Format::kPseudo) {
        Result<std::optional<kb::SymbolRecord>> sym = k->GetSymbol(row.stable_id);
        if (sym.ok() && sym->has_value()) f.summary = (*sym)->summary;
      }
    }
    input.functions.push_back(std::move(f));
  }
  std::string text;
  switch (*format) {
    case exporter::Format::kHeaders:
      text = exporter::ExportHeaders(input);
      break;
    case exporter::Format::kKbText:
      text = exporter::ExportKbText(input);
      break;
    case exporter::Format::kGhidra:
      text = exporter::ExportGhidra(input);
      break;
    case exporter::Format::kPseudo: {
      progress.Draw(0, 0, "lift");
      Result<std::map<std::uint32_t, std::string>> lifted = LiftVersion(env, *k, *version);
      // The note names no path: exports carry no absolute paths (§10.2), and the path is
      // this machine's, not the KB's.
      std::string why;
      if (!lifted.ok()) {
        why = lifted.status().code() == StatusCode::kNotFound
                  ? "the module file recorded at ingest is not readable"
                  : "the module file recorded at ingest has changed (SHA-256 differs)";
      }
      text = exporter::ExportPseudo(input, lifted.ok() ? &*lifted : nullptr, why);
      break;
    }
  }
  progress.Clear();
  if (args.out) {
    Status s = env.WriteFile(*args.out, text);
    if (!s.ok()) {
      Error(s.message());
      return kExitUsage;
    }
  }
  if (global.json) {
    // docs/decisions/0019-warden-cli-mcp-gaps.md: the export wrapped in one object, its
    // text in `content` (null when it went to --out).
    PrintJson(Json{{"version_id", version->id},
                   {"label", version->label},
                   {"format", args.format},
                   {"out", args.out ? Json(*args.out) : Json(nullptr)},
                   {"bytes", text.size()},
                   {"sha256", base::Sha256Hex(text)},
                   {"content", args.out ? Json(nullptr) : Json(text)}});
    return kExitOk;
  }
  if (!args.out) std::fputs(text.c_str(), stdout);
  return kExitOk;
}

int RunAgent(base::Env& env, const GlobalOptions& global, const AgentArgs& args) {
  int exit = kExitOk;
  std::optional<OpenedVersion> opened = OpenVersion(env, global, args.version, &exit);
  if (!opened) return exit;
  kb::Kb* k = opened->kb.get();
  const std::optional<std::int64_t> id = opened->version_id;
  Result<agents::AgentConfig> config = pass::LoadAgentConfig(env, pass::ProjectDirOfDb(k->path()));
  if (!config.ok()) {
    Error(config.status().message());
    return kExitUsage;
  }
  Result<std::unique_ptr<agents::Backend>> backend =
      agents::MakeBackend(args.backend, args.model, *config);
  if (!backend.ok()) {
    Error(backend.status().message());
    return backend.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitUnavailable;
  }
  pass::KbAgentStore store(*k);
  agents::PassOptions options;
  options.version_id = *id;
  options.only_unconfident = !args.all;
  options.limit = args.limit;
  options.dry_run = args.dry_run;
  options.channel = "cli";
  base::Cancellation cancel;
  TerminalProgress progress(global.stderr_is_terminal && !global.json);
  Result<agents::RunSummary> r =
      agents::RunAgentPass(store, **backend, options, cancel, progress.Sink());
  progress.Clear();
  if (!r.ok()) {
    Error(r.status().message());
    const StatusCode c = r.status().code();
    if (c == StatusCode::kPermissionDenied || c == StatusCode::kUnsupported) {
      return kExitUnavailable;
    }
    return ExitFor(r.status());
  }
  if (global.json) {
    std::fputs((agents::RunSummaryToJson(*r) + "\n").c_str(), stdout);
    return kExitOk;
  }
  std::string out = fmt::format(
      "backend {}: considered {}, proposed {}, written {}, rejected by the verifier {}, by the "
      "economy {}, skipped (locked or confident) {}{}\n",
      r->backend, r->considered, r->proposed, r->written, r->rejected_by_verifier,
      r->rejected_by_economy, r->skipped_existing, args.dry_run ? " (dry run)" : "");
  for (const agents::RunDetail& d : r->details) {
    out += fmt::format("  func[{}] {} {} {} {}\n", d.func_index, agents::OutcomeName(d.outcome),
                       d.name.value_or("-"), Conf(d.confidence), d.reason);
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int RunMcp(base::Env& env, const GlobalOptions& global, const McpArgs& args) {
  // No empty database is ever created here (§2.1): discovery or --db, then open existing.
  Result<std::string> path = kb::FindDatabase(env, global.db, global.cwd);
  if (!path.ok()) {
    Error(path.status().message());
    return kExitKb;
  }
  server::McpRunOptions options;
  options.db_path = *path;
  options.transport = args.transport;
  options.listen = args.listen;
  if (args.http_port) {
    options.transport = "http";
    options.listen = fmt::format("127.0.0.1:{}", *args.http_port);
  }
  options.log_level = args.log_level;
  server::PrepareMcpProcess();
  return server::RunWardenMcp(env, options);
}

namespace {

// §2.1's keys; anything else is a usage error.
constexpr std::string_view kConfigKeys[] = {
    "agent.backend",     "openai.api_key",  "openai.model",       "openai.base_url",
    "anthropic.api_key", "anthropic.model", "anthropic.base_url", "oracle.store"};

bool IsSecretKey(std::string_view key) { return key.ends_with(".api_key"); }

// The config file `config set/get` use: the project's (.warden/config.json of the KB found per
// §2.1) with --project, else $XDG_CONFIG_HOME/warden/config.json ($HOME/.config/...).
Result<std::string> ConfigPath(base::Env& env, const GlobalOptions& global, bool project) {
  if (project) {
    Result<std::string> db = kb::FindDatabase(env, global.db, global.cwd);
    const std::string dir = db.ok() ? pass::ProjectDirOfDb(*db) : std::string();
    if (dir.empty()) {
      return Status::NotFound(
          "config --project: no WARDEN project (.warden/) found here or above (run 'warden "
          "init')");
    }
    return dir + "/.warden/config.json";
  }
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/warden/config.json";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.config/warden/config.json";
  }
  return Status::NotFound("config: neither XDG_CONFIG_HOME nor HOME is set");
}

// Replaces `path` with `text`, created with mode 0600 (it may hold API keys): a temporary file
// beside it, synced, then renamed over it.
Status WritePrivateFile(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Io(fmt::format("{}: cannot create: {}", tmp, std::strerror(errno)));
  bool ok = ::fchmod(fd, 0600) == 0;  // an old .tmp keeps its mode through O_TRUNC
  for (std::size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::Io(fmt::format("{}: cannot write: {}", path, why));
  }
  return {};
}

Result<std::map<std::string, std::string>> ReadConfigFile(base::Env& env, const std::string& path) {
  if (!env.FileExists(path)) return std::map<std::string, std::string>();
  ASSIGN_OR_RETURN(std::string text, env.ReadFile(path));
  Result<std::map<std::string, std::string>> parsed = agents::ParseConfigJson(text);
  if (!parsed.ok()) return std::move(parsed).status().WithContext(path);
  return parsed;
}

}  // namespace

int RunConfig(base::Env& env, const GlobalOptions& global, const ConfigArgs& args) {
  if (std::find(std::begin(kConfigKeys), std::end(kConfigKeys), args.key) ==
      std::end(kConfigKeys)) {
    std::string known;
    for (std::string_view k : kConfigKeys) known += (known.empty() ? "" : ", ") + std::string(k);
    Error(fmt::format("unknown config key '{}' (one of {})", args.key, known));
    return kExitUsage;
  }
  Result<std::string> path = ConfigPath(env, global, args.project);
  if (!path.ok()) {
    Error(path.status().message());
    return kExitKb;
  }
  Result<std::map<std::string, std::string>> values = ReadConfigFile(env, *path);
  if (!values.ok()) {
    Error(values.status().message());
    return kExitMalformed;
  }
  if (!args.value) {  // config get
    auto it = values->find(args.key);
    if (it == values->end()) {
      Error(fmt::format("{} is not set in {}", args.key, *path));
      return kExitUnknown;
    }
    // Secrets are never printed (§2.1).
    std::fputs(fmt::format("{}\n", IsSecretKey(args.key) ? "<set>" : it->second).c_str(), stdout);
    return kExitOk;
  }
  if (args.key == "agent.backend" && !agents::CanonicalBackendName(*args.value).ok()) {
    Error(
        fmt::format("agent.backend: unknown backend '{}' (auto, offline, openai, codex, oai or "
                    "anthropic)",
                    *args.value));
    return kExitUsage;
  }
  (*values)[args.key] = *args.value;
  Json doc = Json::object();
  for (const auto& [k, v] : *values) doc[k] = v;
  const std::size_t slash = path->rfind('/');
  if (slash != std::string::npos && slash > 0) {
    std::error_code ec;
    std::filesystem::create_directories(path->substr(0, slash), ec);
  }
  Status s =
      WritePrivateFile(*path, doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
  if (!s.ok()) {
    Error(s.message());
    return kExitKb;
  }
  return kExitOk;
}

}  // namespace trove::warden::cli
