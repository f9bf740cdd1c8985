// Export: writes a workspace's index to one file (docs/librarian.md §3.6; the seed's
// `export_index`), in one of three formats:
//
//   * json: {schemaVersion, exportedAt, identity, runs, files, symbols, edges, packs, claims},
//     every array sorted by its id, packs with their code snippets, claims with their evidence
//     and typed confidence. `exportedAt` is the finish time of the index's last run (the
//     snapshot's time), so exporting an unchanged index twice gives the same bytes.
//   * sqlite: a consistent copy of the store through `VACUUM INTO` (one read transaction, so an
//     active bootstrap in another connection cannot tear it).
//   * markdown: identity and last run, then per directory and module the summary, key facts and
//     functions with line references, then the ADRs found in the index and the latest audit.
//
// Packs here are built from the index alone (definition, signature, documentation, module
// contents); the query engine's call-graph key facts depend on a query and are left out.
//
// Output: `output_path` is workspace-relative (§8.6 rules: crawl::ResolveInWorkspace, absolute
// paths and escapes refused, field `outputPath`); empty means
// `.librarian/exports/index-<runId>.<json|sqlite|md>`. An existing file is overwritten only
// inside `.librarian/exports/`. Every format is written to a temporary name beside the target
// and renamed over it once complete, so a reader never sees a partial export.
//
// Thread safety: uses `store` and `env` from the calling thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace trove::base {
class Env;
}
namespace trove::librarian::store {
class Store;
}

namespace trove::librarian::exports {

enum class Format : std::uint8_t { kJson, kSqlite, kMarkdown };
// "json", "sqlite", "markdown".
std::string_view FormatName(Format format);
std::optional<Format> ParseFormat(std::string_view name);

// The export directory, relative to the workspace root.
inline constexpr std::string_view kExportDir = ".librarian/exports";

struct ExportRequest {
  std::string root;          // canonical workspace root
  std::string workspace_id;  // ws_..., for the identity section
  Format format = Format::kJson;
  std::string output_path;  // workspace-relative, or "" for the default
};

struct ExportCounts {
  std::uint64_t files = 0;
  std::uint64_t symbols = 0;
  std::uint64_t packs = 0;
  std::uint64_t claims = 0;
};

struct ExportResult {
  bool success = false;
  std::string workspace;    // canonical root
  std::string format;       // FormatName
  std::string output_path;  // workspace-relative
  std::uint64_t bytes = 0;
  ExportCounts counts;
  std::int64_t duration_ms = 0;
  std::optional<std::string> error;
};

// Returns the workspace-relative output path `request` names (default or confined), without
// writing anything; errors name `outputPath`.
Result<std::string> OutputPathFor(store::Store& store, const ExportRequest& request);

// Writes the export. kInvalidArgument for a bad or escaping output path, kAlreadyExists for an
// existing file outside the export directory, store and I/O errors otherwise. A workspace
// without an index is the caller's concern (it has no store to pass).
Result<ExportResult> ExportIndex(base::Env& env, store::Store& store, const ExportRequest& request);

}  // namespace trove::librarian::exports
