// Internal: the store's DDL and its creation/version check.
// Thread safety: functions of one Database; see base/sqlite.h.
#pragma once

#include "base/sqlite.h"
#include "base/status.h"

namespace trove::librarian::store::internal {

struct SchemaState {
  bool trigram = false;   // chunk_tri exists
  bool rebuilt = false;   // an incompatible schema was dropped
  bool migrated = false;  // a schema-3 store was migrated in place, keeping its rows
};

// Creates the schema when missing; migrates a schema-3 or -4 store in place (MigrateTo4, MigrateTo5
// in schema.cc); drops and recreates any other schema whose meta.schema_version differs.
// `want_trigram` applies to a new schema only.
Result<SchemaState> EnsureSchema(base::Database& db, bool want_trigram);

}  // namespace trove::librarian::store::internal
