#include "warden/oracle/testing/scratch_store.h"

#include <gtest/gtest.h>

#ifdef TROVE_ORACLE_TEST_PG
#include "base/testing/pg_server.h"
#endif

namespace trove::warden::oracle::testing {

#ifdef TROVE_ORACLE_TEST_PG
struct ScratchStore::Pg {
  base::testing::PgDatabase db;
};
#else
struct ScratchStore::Pg {};
#endif

ScratchStore::ScratchStore(Backend backend) : backend_(backend) {
  if (backend_ == Backend::kSqlite) {
    target_ = dir_.path() + "/oracle.db";
    return;
  }
#ifdef TROVE_ORACLE_TEST_PG
  pg_ = std::make_unique<Pg>();
  if (pg_->db.ok()) target_ = pg_->db.url();
#else
  ADD_FAILURE() << "this test binary was built without the PostgreSQL backend";
#endif
}

ScratchStore::~ScratchStore() = default;

}  // namespace trove::warden::oracle::testing
