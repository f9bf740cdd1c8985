// Architecture decision records found in a workspace (spec §2.5; decision 0069).
//
// Recognised layouts: Markdown files (`.md`, `.markdown`) under a directory named `adr`,
// `adrs`, `decisions`, `decision-records` or `architecture-decisions` at any depth (so
// `docs/decisions/`, `doc/adr/`, `docs/adr/`, `adr/`, `docs/architecture/decisions/`), and
// Markdown files whose name contains `ADR` (`ADR-001-cache.md`, `0003-ADR-auth.md`) or starts with
// `adr-` / `adr_`. README and index files in those directories are not records.
//
// Parsed: title (first `#` heading, else the file name), status and date (`Status: x`,
// `* Status: x`, `**Status**: x`, or the first line of a `## Status` / `## Date` section), the
// decision (first sentence of a `Decision` section, else of the first paragraph after the title)
// and the files it names (back-quoted or bare tokens that are indexed workspace paths).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace trove::librarian::packs {

struct Adr {
  std::string path;  // workspace-relative
  std::string title;
  std::string status;  // lower-cased, "" when none
  std::string date;
  std::string decision;            // first sentence, "" when none
  std::vector<std::string> files;  // named workspace files, in first-mention order, at most 20
};

// Whether `path` (workspace-relative) is an ADR by the layouts above.
bool IsAdrPath(std::string_view path);

// Parses `text` (the file's content). `files` are the workspace's indexed paths, for `files`.
Adr ParseAdr(std::string_view path, std::string_view text, const std::set<std::string>& files);

}  // namespace trove::librarian::packs
