#include "base/pg.h"

#include <gtest/gtest.h>

#include "base/testing/pg_server.h"

namespace trove::base::pg {
namespace {

using testing::PgDatabase;

TEST(PgTest, ConnectsAndSelects) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  auto conn = db.Connect();
  ASSERT_NE(conn, nullptr);
  auto stmt = conn->Query("SELECT ?1::bigint + 1", 41);
  ASSERT_TRUE(stmt.ok()) << stmt.status().ToString();
  auto row = stmt->Step();
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  ASSERT_TRUE(*row);
  EXPECT_EQ(stmt->ColumnInt64(0), 42);
}

}  // namespace
}  // namespace trove::base::pg
