#include "warden/cli/kb_command.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/env.h"
#include "base/pg.h"
#include "warden/cli/cli_support.h"
#include "warden/kb/kb.h"

namespace trove::warden::cli {

namespace {

using base::StatusCode;

// The exit code of a failed copy: a target that is not empty is the caller's mistake (2);
// anything else leaves the KBs as they were and is the KB's (3).
int CopyExit(const Status& s) {
  return s.code() == StatusCode::kAlreadyExists ? kExitUsage : kExitKb;
}

// The files a SQLite KB at `path` may have.
std::vector<std::string> SqliteFiles(const std::string& path) {
  return {path, path + "-wal", path + "-shm", path + "-journal"};
}

void RemoveSqliteFiles(const std::string& path) {
  for (const std::string& file : SqliteFiles(path)) ::unlink(file.c_str());
}

// Renames `from` to `to` unless `to` exists (then kAlreadyExists), and makes the rename
// durable.
Status RenameNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) != 0) {
    if (errno == EEXIST) {
      return Status::AlreadyExists(fmt::format("{} appeared during the copy; it is kept", to));
    }
    if (errno != EINVAL && errno != ENOSYS) {
      return Status::Io(fmt::format("rename {} to {}: {}", from, to, std::strerror(errno)));
    }
    // A file system without RENAME_NOREPLACE: link (fails on an existing name), then unlink.
    if (::link(from.c_str(), to.c_str()) != 0) {
      if (errno == EEXIST) {
        return Status::AlreadyExists(fmt::format("{} appeared during the copy; it is kept", to));
      }
      return Status::Io(fmt::format("link {} to {}: {}", from, to, std::strerror(errno)));
    }
    ::unlink(from.c_str());
  }
  const std::string dir = std::filesystem::path(to).parent_path().string();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  return Status::Ok();
}

// Copies `source` into the SQLite file `target`, which does not exist: into a temporary file
// beside it first, renamed into place once the copy is committed, closed, reopened as a
// WARDEN KB holding the copied versions, and without a journal left over. On any failure the
// temporary file goes and `target` is untouched.
Result<std::vector<kb::TableCopy>> CopyToNewFile(base::Env& env, kb::Kb& source,
                                                 const std::string& project,
                                                 const std::string& target,
                                                 const kb::Kb::CopyProgress& progress) {
  const std::string tmp = fmt::format("{}.migrate-{}.tmp", target, ::getpid());
  RemoveSqliteFiles(tmp);
  auto fail = [&tmp](Status s) -> Status {
    RemoveSqliteFiles(tmp);
    return s;
  };
  std::vector<kb::TableCopy> tables;
  {
    Result<std::unique_ptr<kb::Kb>> copy =
        kb::Kb::Open(env, tmp, kb::KbOptions{.create_if_missing = true, .project = project});
    if (!copy.ok()) return fail(copy.status().WithContext(fmt::format("create {}", tmp)));
    Result<std::vector<kb::TableCopy>> copied = source.CopyInto(**copy, progress);
    if (!copied.ok()) return fail(copied.status());
    tables = std::move(*copied);
  }  // closed: SQLite checkpoints the WAL into the file and removes it
  {
    Result<std::unique_ptr<kb::Kb>> reopened = kb::Kb::Open(env, tmp);
    if (!reopened.ok()) return fail(reopened.status().WithContext(fmt::format("reopen {}", tmp)));
    Result<std::vector<kb::VersionInfo>> versions = (*reopened)->ListVersions();
    if (!versions.ok()) return fail(versions.status().WithContext(fmt::format("read {}", tmp)));
    if (static_cast<std::int64_t>(versions->size()) != tables[1].target) {
      return fail(Status::DataLoss(fmt::format("{} holds {} versions after the copy, not {}", tmp,
                                               versions->size(), tables[1].target)));
    }
  }
  for (const std::string& file : SqliteFiles(tmp)) {
    if (file != tmp && env.FileExists(file)) {
      return fail(Status::Io(fmt::format("{} is left after closing the copy", file)));
    }
  }
  if (Status s = RenameNoReplace(tmp, target); !s.ok()) return fail(s);
  return tables;
}

}  // namespace

int RunKbMigrate(base::Env& env, const GlobalOptions& global, const KbMigrateArgs& args) {
  Result<std::string> from = kb::FindDatabase(env, global.db, global.cwd);
  if (!from.ok()) {
    Error(from.status().message());
    return kExitKb;
  }
  const bool from_url = base::pg::IsPostgresUrl(*from);
  const bool to_url = base::pg::IsPostgresUrl(args.to);
  if (args.to.empty()) {
    Error("kb migrate: --to needs a postgresql:// URL or a SQLite file path");
    return kExitUsage;
  }
  // Messages name a URL without its password.
  const std::string from_name = from_url ? base::pg::RedactUrl(*from) : *from;
  const std::string to_target = to_url ? args.to : AbsolutePath(global.cwd, args.to);
  const std::string to_name = to_url ? base::pg::RedactUrl(args.to) : to_target;
  if (from_url ? *from == args.to : (!to_url && AbsolutePath(global.cwd, *from) == to_target)) {
    Error(fmt::format("kb migrate: the target {} is the KB itself", to_name));
    return kExitUsage;
  }

  Result<std::unique_ptr<kb::Kb>> source = kb::Kb::Open(env, *from);
  if (!source.ok()) {
    Error(fmt::format("{}: {}", from_name, source.status().message()));
    return kExitKb;
  }
  Result<std::string> project = (*source)->Project();
  if (!project.ok()) {
    Error(fmt::format("{}: {}", from_name, project.status().message()));
    return kExitKb;
  }

  TerminalProgress bar(global.stderr_is_terminal && !global.json);
  const kb::Kb::CopyProgress progress = [&bar](std::string_view table, std::int64_t done,
                                               std::int64_t total) {
    bar.Draw(static_cast<double>(done), static_cast<double>(total), fmt::format("copy {}", table));
  };
  const auto copy = [&]() -> Result<std::vector<kb::TableCopy>> {
    if (!to_url && !env.FileExists(to_target)) {
      return CopyToNewFile(env, **source, *project, to_target, progress);
    }
    // A database (its schema is created when it has none), or an existing KB file, which must
    // be an empty WARDEN KB: written in place, in the copy's one transaction.
    ASSIGN_OR_RETURN(std::unique_ptr<kb::Kb> target,
                     kb::Kb::Open(env, to_target,
                                  kb::KbOptions{.create_if_missing = to_url, .project = *project}));
    return (*source)->CopyInto(*target, progress);
  };
  Result<std::vector<kb::TableCopy>> copied = copy();
  bar.Clear();
  if (!copied.ok()) {
    Error(fmt::format("kb migrate {} -> {}: {}", from_name, to_name, copied.status().message()));
    return CopyExit(copied.status());
  }

  if (global.json) {
    Json tables = Json::object();
    for (const kb::TableCopy& t : *copied) {
      tables[t.table] = Json{{"source", t.source}, {"copied", t.copied}, {"target", t.target}};
    }
    PrintJson(
        Json{{"from", from_name}, {"to", to_name}, {"tables", tables}, {"counts_match", true}});
    return kExitOk;
  }
  std::string out = fmt::format("migrated {} to {} in one transaction\n", from_name, to_name);
  for (const kb::TableCopy& t : *copied) {
    out +=
        fmt::format("  {:<16} {:>12} {}\n", t.table, Grouped(static_cast<std::uint64_t>(t.target)),
                    t.target == 1 ? "row" : "rows");
  }
  out += "row counts match: every table holds as many rows in the target as in the source\n";
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace trove::warden::cli
