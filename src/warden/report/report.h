// The HTML report of a module version (`warden report [<version>] --html FILE`, issue 24): one
// self-contained page (inline CSS, inline SVG, one inline script; nothing loaded from
// elsewhere) showing what the KB knows:
//   * the version: label, SHA-256, size, Emscripten version, functions imported and defined;
//   * coverage by provenance over every version of the KB, as an inline SVG stacked-bar chart,
//     and the coverage figures of this version (the `coverage` tool's numbers);
//   * the imports and the exports;
//   * every function, with filters (text, provenance, locked) run by the script, and for each
//     its facts (type, body, fingerprint, calls, strings, exports) and its evidence trail.
//   * the changelog into this version from the newest earlier version it was diffed against
//     (`warden diff FROM TO` stores it; docs/warden.md §9), shown as its Markdown text.
//
// Everything that comes from the module or the KB (names, strings, summaries, reasons) is
// escaped (base/markup.h), and the script reads the table rather than any embedded data, so a
// hostile name cannot end a tag, an attribute or the script. The Content-Security-Policy lets
// only the one script whose hash it names run, which would stop an injected script even if
// escaping failed.
//
// Thread safety: CollectReport uses `kb` on the calling thread; RenderHtml is a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"
#include "warden/kb/kb.h"
#include "warden/kb/records.h"

namespace trove::warden::report {

struct VersionCoverage {
  kb::VersionInfo version;
  kb::Coverage coverage;
};

struct FunctionEntry {
  kb::FunctionRecord record;
  std::optional<kb::SymbolRecord> symbol;  // with its evidence, oldest first
  std::vector<std::uint32_t> callers;
};

struct ReportData {
  std::string project;
  std::string generator;                  // e.g. "warden (trove) 0.1.0 (abc1234)"
  std::vector<VersionCoverage> versions;  // every version, oldest first
  std::size_t selected = 0;               // index into `versions` of the version reported
  std::vector<FunctionEntry> functions;   // of the selected version, imports first, by index
  // The stored changelog of the diff into the selected version from the newest earlier
  // version (the largest from_version); nullopt when no diff into it is stored.
  std::optional<kb::DiffRecord> changelog;
};

// Reads everything the report shows about `version_id` from `kb`. Reports one step per
// function on `progress`; stops with kCancelled when `cancel` is requested.
Result<ReportData> CollectReport(kb::Kb& kb, std::int64_t version_id,
                                 const base::Cancellation& cancel,
                                 const base::Progress& progress = {});

// Returns the page. Deterministic for the same data.
std::string RenderHtml(const ReportData& data);

}  // namespace trove::warden::report
