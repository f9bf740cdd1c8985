#include "warden/oracle/testing/scratch_store.h"

#include <gtest/gtest.h>

namespace trove::warden::oracle::testing {

struct ScratchStore::Pg {};

ScratchStore::ScratchStore(Backend backend) : backend_(backend) {
  if (backend_ == Backend::kSqlite) {
    target_ = dir_.path() + "/oracle.db";
    return;
  }
  ADD_FAILURE() << "this test binary was built without the PostgreSQL backend";
}

ScratchStore::~ScratchStore() = default;

}  // namespace trove::warden::oracle::testing
