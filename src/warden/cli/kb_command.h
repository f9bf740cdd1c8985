// `warden kb migrate --to TARGET` (docs/warden.md §2.2, §10.1;
// docs/decisions/0091-warden-kb-migrate.md): the KB found per §2.1 copied into an empty
// PostgreSQL database or SQLite file, in either direction.
#pragma once

#include <string>

#include "warden/cli/commands.h"

namespace trove::warden::cli {

struct KbMigrateArgs {
  std::string to;  // a postgresql:// (postgres://) URL or a SQLite file path
};

// Copies every row of the KB (kb::Kb::CopyInto) into TARGET in one transaction, ids kept, and
// compares the row counts of every table. A SQLite TARGET that does not exist is written as a
// temporary file beside it and renamed into place only once complete and reopened; an existing
// one must be an empty WARDEN KB. A PostgreSQL TARGET is an existing database, empty or
// holding an empty WARDEN KB (the schema is created when missing). Exit 2 when TARGET is not
// empty or is the KB itself, 3 when a KB cannot be opened or the copy fails (nothing is
// committed then). URLs are printed without their password.
int RunKbMigrate(base::Env& env, const GlobalOptions& global, const KbMigrateArgs& args);

}  // namespace trove::warden::cli
