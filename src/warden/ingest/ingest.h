// WARDEN ingest (docs/warden.md §4, §4.5, §10.1): reads a .wasm file completely, fingerprints
// every function in memory (one ReadModule pass, bodies decoded on several threads), then
// stores the version, its functions, the seeded names and their evidence in one KB
// transaction. A malformed module writes nothing; a module already ingested writes nothing.
//
// Thread safety: IngestFile uses `kb` from the calling thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/cancellation.h"
#include "base/parallel_array.h"
#include "base/status.h"
#include "warden/ingest/module_facts.h"
#include "warden/kb/records.h"

namespace trove::base {
class Env;
}
namespace trove::warden::kb {
class Kb;
}

namespace trove::warden::ingest {

struct IngestOptions {
  std::string label;  // empty: the KB's default "v<N>"
  bool seed = true;   // false: --no-seed
  // Threads decoding function bodies; 0: the hardware's concurrency, at most 8.
  std::uint32_t threads = 0;
  // What the caller parsed from the JS glue (--glue), if any.
  std::optional<std::string> glue_path;
  std::optional<std::string> glue_json;
  const GlueBindings* glue = nullptr;
  // An Emscripten version and where it was found (the glue, or a producers entry).
  std::optional<std::string> emscripten_version;
  std::optional<std::string> emscripten_version_source;
  // Reports on a scale of 3: "read" at 0; "fingerprint" at 1, then "fingerprint <k>/<n>
  // functions" up to 2 at each whole percent of the defined functions decoded; "store" at 2,
  // then "store <k>/<n> rows" up to 3 at each whole percent of the function rows written;
  // "done" at 3 of 3. done never decreases.
  // Called from a decode thread during fingerprinting, but never from two threads at once.
  const base::Progress* progress = nullptr;
  // ReadAndPrepare maps the module (base::MappedFile) instead of reading it through the Env:
  // no copy into fresh memory. The caller then handles SIGBUS, which a module that shrinks
  // while it is prepared raises (the CLI does: docs/decisions/0046-warden-mapped-module.md).
  bool map_module = false;
};

struct IngestReport {
  kb::StoreResult store;
  std::string sha256;
  std::uint64_t size = 0;
  std::uint32_t imported = 0;
  std::uint32_t defined = 0;
  ModuleFacts module;
  std::optional<std::string> emscripten_version;
  std::optional<std::string> emscripten_version_source;
  std::size_t seeds_planned = 0;
};

// A version ready to store: everything StoreVersion takes, built in memory from the bytes.
struct PreparedVersion {
  kb::VersionRecord version;
  // Imports first, then defined, by index; built on the decode threads (parallel_array.h).
  base::ParallelArray<kb::FunctionRecord> functions;
  std::vector<kb::SeedName> seeds;
  ModuleFacts module;
};

// Parses and fingerprints `bytes` (the file at `wasm_path`). Errors are the reader's, with
// the byte offset (kMalformed, kUnsupported, kResourceExhausted).
Result<PreparedVersion> PrepareVersion(std::span<const std::uint8_t> bytes,
                                       const std::string& wasm_path, const IngestOptions& options);

// Reads the file at `wasm_path` and ingests it into `kb`: ReadAndPrepare, then StorePrepared.
Result<IngestReport> IngestFile(base::Env& env, kb::Kb& kb, const std::string& wasm_path,
                                const IngestOptions& options);

// The two halves of IngestFile, for a caller that opens the KB while the module is read and
// fingerprinted (the CLI: creating a KB waits for two fsyncs). ReadAndPrepare reports the
// read and fingerprint phases; StorePrepared the store phase and "done", and frees
// `prepared` before it returns.
Result<PreparedVersion> ReadAndPrepare(base::Env& env, const std::string& wasm_path,
                                       const IngestOptions& options);
Result<IngestReport> StorePrepared(kb::Kb& kb, PreparedVersion prepared,
                                   const IngestOptions& options);

}  // namespace trove::warden::ingest
