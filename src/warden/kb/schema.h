// The WARDEN KB schema (docs/warden.md §10.1) and the checks run on every open. Internal to
// kb/: Kb::Open calls PrepareDatabase; nothing else should.
// Thread safety: operates on one connection, used by one thread.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace trove::base {
class Database;
}  // namespace trove::base

namespace trove::warden::kb::internal {

// The §10.1 tables, indexes and the append-only triggers on `evidence`, every statement
// idempotent (CREATE ... IF NOT EXISTS), except the four indexes on `functions`' stable_id
// and hashes, which are FunctionIndexSql(): the first version stored into an empty KB drops
// them (DropFunctionIndexSql()) and builds them again after its rows, in its transaction
// (docs/decisions/0042-warden-index-after-rows.md). Both are made from one list of columns.
extern const std::string_view kSchemaSql;
const std::string& FunctionIndexSql();
const std::string& DropFunctionIndexSql();

// Makes `db` a usable WARDEN KB of this schema version:
//   * a database with no table at all is initialised when `allow_init` (schema, meta rows
//     schema_version, producer, project = `project`), else refused as not WARDEN;
//   * a database without a `meta` table, or whose meta.producer is not "trove-warden", is
//     refused: kMalformed, "not a WARDEN database (...)";
//   * a schema_version above kSchemaVersion is refused: kUnsupported;
//   * otherwise the schema is (re)applied with CREATE ... IF NOT EXISTS.
// The connection pragmas (WAL, foreign_keys, synchronous, busy_timeout) are set by
// base::Database::Open and checked here.
Status PrepareDatabase(base::Database& db, bool allow_init, std::string_view project);

}  // namespace trove::warden::kb::internal
