// The version facts the Oracle reads and writes (docs/warden.md §8.3): a version's producers
// section, and the Emscripten version it infers with its source.
#include <fmt/core.h>

#include "base/sqlite.h"
#include "warden/kb/kb.h"

namespace trove::warden::kb {

Result<std::string> Kb::VersionProducersJson(std::int64_t version_id) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT producers_json FROM module_versions WHERE id = ?"));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Status::NotFound(fmt::format("unknown version_id {}", version_id));
  return stmt.ColumnText(0);
}

Status Kb::SetEmscriptenVersion(std::int64_t version_id, std::string_view version,
                                std::string_view source) {
  ASSIGN_OR_RETURN(base::Transaction txn, db_->Begin());
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("UPDATE module_versions SET emscripten_version = ?, "
                                "emscripten_version_source = ? WHERE id = ?"));
  RETURN_IF_ERROR(stmt.Bind(1, version));
  RETURN_IF_ERROR(stmt.Bind(2, source));
  RETURN_IF_ERROR(stmt.Bind(3, version_id));
  RETURN_IF_ERROR(stmt.Step().status());
  if (db_->Changes() == 0) {
    return Status::NotFound(fmt::format("unknown version_id {}", version_id));
  }
  return txn.Commit();
}

}  // namespace trove::warden::kb
