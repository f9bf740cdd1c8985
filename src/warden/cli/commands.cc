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
#include "base/pg.h"
#include "base/status.h"
#include "warden/cli/cli_support.h"
#include "warden/cli/glue_input.h"
#include "warden/export/export.h"
#include "warden/export/lifter.h"
#include "warden/identity/identity.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"
#include "warden/report/report.h"
#include "warden/views/json_views.h"
#include "warden/wasm/reader.h"

namespace trove::warden::cli {

namespace {

using base::StatusCode;
using views::Json;

// Lifts every function of a version (docs/warden.md §10.2 pseudo, `show --lift`). The lifter needs
// the module itself: the recorded path, with its SHA-256 checked; calls use the current names.
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

int RunInitAtUrl(base::Env& env, const GlobalOptions& global, const std::string& project) {
  const std::string& url = *global.db;
  const std::string shown = base::pg::RedactUrl(url);
  std::string root = global.cwd;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  std::string name = project;
  if (name.empty()) {
    name = std::filesystem::path(root).lexically_normal().filename().string();
    if (name.empty()) name = "warden";
  }
  // The database first (its schema created when empty): a server that cannot be reached leaves
  // no project behind.
  Result<std::unique_ptr<kb::Kb>> opened =
      kb::Kb::Open(env, url, kb::KbOptions{.create_if_missing = true, .project = name});
  if (!opened.ok()) {
    Error(fmt::format("{}: {}", shown, opened.status().message()));
    return ExitFor(opened.status());
  }
  Result<std::string> stored_project = (*opened)->Project();
  if (!stored_project.ok()) {
    Error(fmt::format("{}: {}", shown, stored_project.status().message()));
    return ExitFor(stored_project.status());
  }
  // The project's config names the KB (kb.url), its other keys kept as they are.
  const std::string config = root + "/.warden/config.json";
  Json doc = Json::object();
  if (env.FileExists(config)) {
    Result<std::string> text = env.ReadFile(config);
    if (text.ok()) doc = Json::parse(*text, nullptr, false);
    if (!text.ok() || !doc.is_object()) {
      Error(fmt::format("{}: not a JSON object", config));
      return kExitMalformed;
    }
  }
  const bool created = !doc.contains("kb.url") || doc["kb.url"] != url;
  if (created) {
    std::error_code ec;
    std::filesystem::create_directories(root + "/.warden", ec);
    doc.erase("kb");  // the nested form of kb.url, replaced by the flat key
    doc["kb.url"] = url;
    Status s =
        WritePrivateFile(config, doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
    if (!s.ok()) {
      Error(s.message());
      return kExitKb;
    }
  }
  if (global.json) {
    PrintJson(Json{{"db_path", shown}, {"project", *stored_project}, {"created", created}});
  } else if (created) {
    std::fputs(fmt::format("initialized WARDEN project '{}' in .warden/ (KB at {})\n",
                           *stored_project, shown)
                   .c_str(),
               stdout);
  } else {
    std::fputs("already initialized\n", stdout);
  }
  return kExitOk;
}

int RunInit(base::Env& env, const GlobalOptions& global, const std::string& project) {
  if (global.db.has_value() && base::pg::IsPostgresUrl(*global.db)) {
    return RunInitAtUrl(env, global, project);
  }
  if (global.db.has_value()) {
    Error(
        "init --db: a file KB is created by 'warden init' as .warden/warden.db, or by "
        "'warden ingest --db FILE'; --db here takes a postgresql:// URL");
    return kExitUsage;
  }
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

namespace {

// Returns why the input at `path` (shown as `shown`) cannot be read as a file, or nothing: it
// does not exist, is a directory, or is not readable. Checked before any KB is opened, so that
// such a command creates none (exit 2, a usage error).
std::optional<std::string> UnreadableInput(base::Env& env, const std::string& path,
                                           std::string_view shown) {
  if (!env.FileExists(path)) return fmt::format("cannot read {}: no such file", shown);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return fmt::format("cannot read {}: is a directory", shown);
  }
  if (::access(path.c_str(), R_OK) != 0 && errno != ENOENT) {
    return fmt::format("cannot read {}: {}", shown, std::strerror(errno));
  }
  return std::nullopt;
}

}  // namespace

int RunIngest(base::Env& env, const GlobalOptions& global, const IngestArgs& args) {
  // Paths are recorded absolute and canonical, so that `show --lift` and `export pseudo` find
  // the module from any directory.
  const std::string wasm_path = AbsolutePath(global.cwd, args.wasm);
  const std::optional<std::string> glue_path =
      args.glue ? std::optional<std::string>(AbsolutePath(global.cwd, *args.glue)) : std::nullopt;
  // The inputs first: a failed ingest creates no database.
  if (std::optional<std::string> why = UnreadableInput(env, wasm_path, args.wasm)) {
    Error(*why);
    return kExitUsage;
  }
  if (glue_path) {
    if (std::optional<std::string> why =
            UnreadableInput(env, *glue_path, fmt::format("glue {}", *args.glue))) {
      Error(*why);
      return kExitUsage;
    }
  }
  // Only `ingest --db PATH` may create a database (docs/warden.md §2.1), and a failed ingest leaves
  // nothing that was not there before: which of the database's files exist now is noted, and a KB
  // this command created is removed again when it fails (Kb::RemoveCreated).
  const std::optional<kb::DatabaseFiles> files_before =
      global.db ? std::optional<kb::DatabaseFiles>(kb::ExistingDatabaseFiles(*global.db))
                : std::nullopt;
  // The KB is opened (created, for a new one: two fsyncs), and an empty one switched to the
  // rollback journal its first version is written with (Kb::PrepareToStore: more fsyncs), on
  // a thread of its own while the module is read and fingerprinted; its errors still come
  // first, as when it was opened before the read.
  Result<std::unique_ptr<kb::Kb>> opened = Status::Internal("ingest: the kb was not opened");
  std::jthread opener([&env, &global, &opened] {
    kb::KbOptions kb_options;
    kb_options.create_if_missing = global.db.has_value();
    opened = FindAndOpenKb(env, global, kb_options);
    // A failure here is StoreVersion's to meet and report.
    if (opened.ok()) (void)(*opened)->PrepareToStore();
  });
  // Joins the opener; when the open failed, prints its error as OpenKb does and returns true.
  auto open_failed = [&]() {
    if (opener.joinable()) opener.join();
    if (opened.ok()) return false;
    Error(opened.status().message());
    return true;
  };
  // Ends a failed ingest whose KB opened: removes the KB when this command created it.
  auto fail = [&](int code) {
    if (opener.joinable()) opener.join();
    if (opened.ok() && files_before && !files_before->db) {
      Result<bool> removed = kb::Kb::RemoveCreated(std::move(opened).value(), *files_before);
      if (!removed.ok()) Error(removed.status().message());
    }
    return code;
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
      return fail(parsed.status().code() == StatusCode::kMalformed ? kExitMalformed : kExitUsage);
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
  // The module is mapped, not copied into fresh memory (decision 0046); a module that another
  // process truncates meanwhile ends the command with exit 4.
  options.map_module = true;
  std::optional<ExitOnSigbus> on_sigbus(std::in_place, wasm_path);
  Result<ingest::PreparedVersion> prepared = ingest::ReadAndPrepare(env, wasm_path, options);
  on_sigbus.reset();
  opener.join();
  if (!opened.ok()) progress.Clear();
  if (open_failed()) return kExitKb;
  if (!prepared.ok()) {
    progress.Clear();
    const Status& s = prepared.status();
    if (s.code() == StatusCode::kIo || s.code() == StatusCode::kNotFound) {
      // The module could not be read (it went away, or a read failed): not a KB problem.
      Error(fmt::format("cannot read {}: {}", args.wasm, s.message()));
      return fail(kExitUsage);
    }
  }
  std::unique_ptr<kb::Kb>& k = opened.value();
  Result<ingest::IngestReport> r =
      prepared.ok() ? ingest::StorePrepared(*k, std::move(prepared).value(), options)
                    : Result<ingest::IngestReport>(prepared.status());
  progress.Clear();
  if (!r.ok()) {
    const Status& s = r.status();
    if (s.code() == StatusCode::kMalformed || s.code() == StatusCode::kUnsupported ||
        s.code() == StatusCode::kResourceExhausted) {
      Error(MalformedWasmMessage(s));
      return fail(kExitMalformed);
    }
    Error(s.message());
    return fail(ExitFor(s));
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
                   {"names", Json::parse(ingest::NamesJson(rep.module.names))},
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
  // The producers section (non-Emscripten toolchains keep one) ends each line.
  std::string out = fmt::format("{:>4}  {:<12} {:>10} {:>8}  {:<10} {:<6}  {:<12}  {:<24}  {}\n",
                                "id", "label", "functions", "defined", "emscripten", "shared",
                                "sha256", "ingested_at", "producers");
  for (const kb::VersionInfo& v : *list) {
    out += fmt::format("{:>4}  {:<12} {:>10} {:>8}  {:<10} {:<6}  {:<12}  {:<24}  {}\n", v.id,
                       v.label, Grouped(static_cast<std::uint64_t>(v.functions)),
                       Grouped(static_cast<std::uint64_t>(v.defined)), OrDash(v.emscripten_version),
                       v.shared_memory ? "yes" : "no", v.sha256.substr(0, 12), v.ingested_at,
                       views::ProducersText(v));
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
    Json out = views::CoverageJson(*c);
    // The module's toolchain (its producers and target_features sections) beside the figures.
    if (Result<kb::VersionInfo> v = k->GetVersion(*id); v.ok()) {
      const Json toolchain = views::ToolchainJson(*v);
      for (const auto& [key, value] : toolchain.items()) out[key] = value;
    }
    PrintJson(out);
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
  // Placeholders (sub_<hex>) are named but say nothing: shown apart, so 100 % hides none.
  out += fmt::format("placeholders {} (sub_<hex>, counted in named)\n",
                     Grouped(static_cast<std::uint64_t>(c->placeholder_named)));
  out += fmt::format("real names   {} ({:.1f} %)\n",
                     Grouped(static_cast<std::uint64_t>(c->real_named)), c->real_coverage_pct);
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
  Result<kb::VersionInfo> version = k->GetVersion(*id);
  std::optional<std::string> lifted;
  if (args.lift && !r.is_import) {
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
    if (version.ok()) out["module"] = views::ToolchainJson(*version);
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
  if (version.ok()) {
    out += fmt::format("  module        producers {}; target features {}\n",
                       views::ProducersText(*version), views::FeaturesText(*version));
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
  // A human write is refused only as an invalid write (docs/warden.md §6.2 rule 1: an empty name,
  // one over
  // 512 bytes, text that is not UTF-8): a bad value, exit 2 (docs/warden.md §2.4). The gate decides
  // and records it, as every attempt.
  const int refused = d->rule == 1 ? kExitUsage : kExitCheckFailed;
  if (global.json) {
    PrintJson(Json{{"written", d->accepted}, {"reason", d->reason}});
  } else if (!d->accepted) {
    Error(d->reason);
    return refused;
  } else if (args.clear) {
    std::fputs(fmt::format("func[{}] {} -> cleared [human]\n", *index, stable_id).c_str(), stdout);
  } else {
    std::fputs(
        fmt::format("func[{}] {} -> {} [human, locked]\n", *index, stable_id, *args.name).c_str(),
        stdout);
  }
  return d->accepted ? kExitOk : refused;
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
  // docs/warden.md §5.5: fingerprint twice, on one thread and on several, and compare every output.
  wasm::ReadOptions one;
  wasm::ReadOptions many;
  many.decode_threads = 4;
  std::optional<TerminalProgress> progress;
  progress.emplace(global.stderr_is_terminal && !global.json);
  progress->Draw(0, 3, "fingerprint (1 thread)");
  Result<identity::ModuleIdentity> a = identity::ComputeModuleIdentity(bytes, one);
  if (!a.ok()) {
    Error(MalformedWasmMessage(a.status()));
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
      out += global.stdout_colour ? fmt::format("\x1b[31munstable: func[{}]\x1b[0m\n", f)
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
      // The note names no path: exports carry no absolute paths (docs/warden.md §10.2), and the
      // path is this machine's, not the KB's.
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

int RunReport(base::Env& env, const GlobalOptions& global, const ReportArgs& args) {
  int exit = kExitOk;
  std::optional<OpenedVersion> opened = OpenVersion(env, global, args.version, &exit);
  if (!opened) return exit;
  TerminalProgress progress(global.stderr_is_terminal && !global.json);
  const base::Progress sink = progress.Sink();
  base::Cancellation cancel;
  Result<report::ReportData> data =
      report::CollectReport(*opened->kb, opened->version_id, cancel, sink);
  progress.Clear();
  if (!data.ok()) {
    Error(data.status().message());
    return ExitFor(data.status());
  }
  data->generator = args.generator;
  const std::string html = report::RenderHtml(*data);
  // Env::WriteFile writes a temporary file beside the target and renames it over the target,
  // so a reader never sees half a page and a failed write leaves the old file.
  const std::string path = AbsolutePath(global.cwd, args.html);
  if (Status s = env.WriteFile(path, html); !s.ok()) {
    Error(fmt::format("cannot write {}: {}", args.html, s.message()));
    return kExitUsage;
  }
  const kb::VersionInfo& v = data->versions[data->selected].version;
  if (global.json) {
    PrintJson(Json{{"version_id", v.id},
                   {"label", v.label},
                   {"out", path},
                   {"bytes", html.size()},
                   {"functions", v.functions},
                   {"versions", data->versions.size()}});
  } else {
    std::fputs(fmt::format("wrote the report of {} ({} functions, {} version{} charted) to {}\n",
                           v.label, Grouped(static_cast<std::uint64_t>(v.functions)),
                           data->versions.size(), data->versions.size() == 1 ? "" : "s", args.html)
                   .c_str(),
               stdout);
  }
  return kExitOk;
}

}  // namespace trove::warden::cli
