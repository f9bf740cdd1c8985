// KbTestPeer: test access to Kb internals (the store, the SQLite connection and the raw gate).
// Test-only.
// Thread safety: as Kb.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/sqlite.h"
#include "warden/kb/finisher.h"
#include "warden/kb/kb.h"
#include "warden/kb/sqlite/kb_sqlite.h"
#include "warden/kb/store.h"

namespace trove::warden::kb {

class KbTestPeer {
 public:
  static KbStore& Store(Kb& kb) { return *kb.store_; }
  // The connection of a SQLite KB; aborts for another back end (a test bug).
  static SqliteKbStore& Sqlite(Kb& kb) {
    auto* store = dynamic_cast<SqliteKbStore*>(kb.store_.get());
    if (store == nullptr) std::abort();
    return *store;
  }
  static base::Database& SqliteDb(Kb& kb) { return Sqlite(kb).db(); }
  // The private gate, for writes no public path can build (an unknown provenance).
  static Result<Decision> Upsert(Kb& kb, std::string_view stable_id, const SymbolWrite& write) {
    return kb.UpsertSymbol(stable_id, write);
  }
  // Waits for the last StoreVersion's background checkpoint and returns its outcome.
  static Status WaitForFinisher(Kb& kb) {
    VersionFinisher* finisher = Sqlite(kb).finisher();
    if (finisher == nullptr) return Status::NotFound("no version finisher");
    return finisher->Wait();
  }
};

namespace testing {

// A version with `defined` defined functions (stable ids from `ids`, or "w1:" + 32 hex digits
// made from the index) after `imported` imports.
inline std::vector<FunctionRecord> MakeFunctions(std::uint32_t imported, std::uint32_t defined,
                                                 const std::vector<std::string>& ids = {}) {
  std::vector<FunctionRecord> out;
  for (std::uint32_t i = 0; i < imported; ++i) {
    FunctionRecord f;
    f.func_index = i;
    f.is_import = true;
    f.import_module = "env";
    f.import_field = "imp" + std::to_string(i);
    f.type_signature = "(i32) -> ()";
    f.stable_id = "import:env.imp" + std::to_string(i);
    out.push_back(std::move(f));
  }
  for (std::uint32_t d = 0; d < defined; ++d) {
    FunctionRecord f;
    f.func_index = imported + d;
    f.type_signature = d % 2 == 0 ? "(i32, i32) -> i32" : "() -> ()";
    if (d < ids.size()) {
      f.stable_id = ids[d];
    } else {
      char hex[33];
      std::snprintf(hex, sizeof hex, "%08x%024x", 0x10000000u + d, d);
      f.stable_id = std::string("w1:") + hex;
    }
    f.norm_hash = f.stable_id.substr(3);
    f.exact_hash = std::string(64, 'e');
    f.structural_hash = std::string(32, 's');
    for (std::size_t k = 0; k < kMinHashValues; ++k)
      f.minhash[k] = 0x0102030405060708ull * (k + d + 1);
    for (std::size_t k = 0; k < kHistogramClasses; ++k)
      f.histogram[k] = static_cast<std::uint32_t>(k * d);
    f.call_outs = {"env.imp0"};
    if (d > 0) f.defined_callees = {imported + d - 1, imported + d - 1};
    f.instruction_count = 10 + d;
    f.body_offset = 100 + 20 * d;
    f.body_size = 20;
    f.call_targets = {"env.imp0", "<indirect>"};
    f.referenced_strings = {"hello world"};
    // local.get, i32.const, call, i32.add, then a prefixed one: i32x4.add (0xfd 0xae 0x01)
    // and "select t", whose mnemonic has a space.
    f.opcodes = std::string("\x20\x41\x10\x6a\xfd\xae\x01\x1c", 8);
    out.push_back(std::move(f));
  }
  return out;
}

inline VersionRecord MakeVersion(std::string label, std::string sha, std::uint32_t imported,
                                 std::uint32_t defined) {
  VersionRecord v;
  v.label = std::move(label);
  v.wasm_path = "/tmp/m.wasm";
  v.sha256 = std::move(sha);
  v.size = 1234;
  v.imported_count = imported;
  v.defined_count = defined;
  v.memory_count = 1;
  return v;
}

}  // namespace testing
}  // namespace trove::warden::kb
