#include "warden/cli/oracle_command.h"

#include <fmt/core.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/env.h"
#include "base/pg.h"
#include "warden/cli/cli_support.h"
#include "warden/oracle/oracle.h"
#include "warden/oracle/target.h"

namespace trove::warden::cli {

std::string OracleStorePath(base::Env& env, const GlobalOptions& global,
                            const std::optional<std::string>& flag) {
  Result<std::string> db = kb::FindDatabase(env, global.db, global.cwd);
  std::string project = global.cwd;
  if (db.ok() && base::pg::IsPostgresUrl(*db)) {
    // A KB at a URL has no directory: the working directory's project (or the directory).
    project = kb::FindProjectDir(env, global.cwd);
    if (project.empty()) project = global.cwd;
  } else if (db.ok()) {
    project = oracle::ProjectDirOfKb(AbsolutePath(global.cwd, *db));
  }
  return oracle::ResolveStorePath(env, flag, project, global.cwd);
}

int RunOracleBuild(base::Env& env, const GlobalOptions& global, const OracleBuildArgs& args) {
  const std::string target = OracleStorePath(env, global, args.store);
  // Messages name a URL without its password.
  const std::string path = oracle::StoreDisplayName(target);
  if (!oracle::IsStoreUrl(target)) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(target).parent_path(), ec);
  }
  Result<std::unique_ptr<oracle::OracleStore>> store = oracle::OracleStore::Open(target, true);
  if (!store.ok()) {
    Error(fmt::format("oracle store {}: {}", path, store.status().message()));
    return kExitKb;
  }
  oracle::BuildOptions options{.library = args.library,
                               .emscripten_version = args.emscripten_version,
                               .opt_level = args.opt_level,
                               .flags = args.flags,
                               .source_ref = args.source_ref};
  oracle::BuildCounts counts;
  for (const std::string& module : args.modules) {
    const std::string abs = AbsolutePath(global.cwd, module);
    Result<std::string> bytes = env.ReadFile(abs);
    if (!bytes.ok()) {
      Error(fmt::format("cannot read {}: {}", module, bytes.status().message()));
      return kExitUsage;
    }
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes->data());
    Status s = oracle::AddModule(**store, std::span<const std::uint8_t>(data, bytes->size()), abs,
                                 options, counts);
    if (!s.ok()) {
      if (s.code() == base::StatusCode::kMalformed || s.code() == base::StatusCode::kUnsupported ||
          s.code() == base::StatusCode::kResourceExhausted) {
        Error(fmt::format("{}: {}", module, MalformedWasmMessage(s)));
        return kExitMalformed;
      }
      Error(fmt::format("oracle store {}: {}", path, s.message()));
      return kExitKb;
    }
  }
  if (global.json) {
    PrintJson(Json{{"store", path},
                   {"modules", counts.modules},
                   {"functions", counts.functions},
                   {"added", counts.added},
                   {"unnamed", counts.unnamed},
                   {"below_minimum", counts.too_small},
                   {"duplicates", counts.duplicates}});
    return kExitOk;
  }
  std::fputs(fmt::format("added {} signatures ({} unnamed skipped, {} below minimum size, {} "
                         "duplicates)\n",
                         Grouped(static_cast<std::uint64_t>(counts.added)), counts.unnamed,
                         counts.too_small, counts.duplicates)
                 .c_str(),
             stdout);
  return kExitOk;
}

int RunOracleIdentify(base::Env& env, const GlobalOptions& global, const OracleIdentifyArgs& args) {
  int exit = kExitOk;
  std::optional<OpenedVersion> opened = OpenVersion(env, global, args.version, &exit);
  if (!opened) return exit;
  const std::string path = OracleStorePath(env, global, args.store);
  Result<std::unique_ptr<oracle::OracleStore>> store = oracle::OracleStore::Open(path, false);
  if (!store.ok()) {
    Error(store.status().message());
    return kExitKb;
  }
  TerminalProgress bar(global.stderr_is_terminal && !global.json);
  base::Progress progress = bar.Sink();
  progress.Report(0, 1, "matching against the Oracle store");
  oracle::IdentifyOptions options;
  options.dry_run = args.dry_run;
  Result<oracle::IdentifyReport> report =
      oracle::Identify(*opened->kb, opened->version_id, **store, options);
  bar.Clear();
  if (!report.ok()) {
    Error(report.status().message());
    return ExitFor(report.status());
  }
  if (global.json) {
    PrintJson(Json::parse(oracle::ReportJson(*report)));
    return kExitOk;
  }
  // The text names the store relative to the working directory when it lies below it, as
  // `--store` would be typed (and so `warden demo`'s output is the same in every directory).
  const std::string below = global.cwd + "/";
  if (report->store_path.rfind(below, 0) == 0) report->store_path.erase(0, below.size());
  std::fputs(oracle::ReportText(*report).c_str(), stdout);
  return kExitOk;
}

}  // namespace trove::warden::cli
