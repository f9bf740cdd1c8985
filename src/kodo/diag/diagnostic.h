// Kōdo diagnostics: the kinds table (kinds.def) as an enum with its metadata, the Diagnostic
// model every phase reports with, and the renderings upstream kodoc 1.14.1 shows to agents:
// the `kodoc check --json-errors` envelope (docs/kodo.md §6.2), the `kodo.check`/`kodo.fix` objects
// of the MCP tools (§3.3, §3.4) and a human-readable text form.
//
// A Diagnostic carries everything §6.2's JSON needs: code, severity, message (upstream's
// template with its " at Span { start: S, end: E }" suffix, issue 5 decision 6), span (byte
// offsets; line/column are computed only when rendering), suggestion, one fix patch, a repair
// plan (ordered steps), fixability and see_also.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kodo/source/source_buffer.h"

namespace trove::kodo::diag {

enum class Severity : std::uint8_t { kError, kWarning };
// Which upstream entry points produce a code (kinds.def "Emitted").
enum class Emitted : std::uint8_t { kAll, kRecovery, kBuild, kCliOnly, kNever };
enum class Suffix : std::uint8_t { kSpanSuffix, kNoSuffix };

enum class Kind : std::uint16_t {
#define KODO_DIAG(code, name, severity, emitted, tier, suffix, format, title) k##code,
#include "kodo/diag/kinds.def"
#undef KODO_DIAG
};

struct KindInfo {
  Kind kind;
  std::string_view code;  // "E0214"
  std::string_view name;  // "MissingStructField"
  Severity severity;
  Emitted emitted;
  int tier;  // §7.1 tier that first emits it; 9 = never emitted
  Suffix suffix;
  std::string_view format;  // fmt template, positional `{}`
  std::string_view title;   // `kodoc explain` title
};

// Returns the table row of `kind`.
const KindInfo& Info(Kind kind);
// Returns every row, in table order.
std::span<const KindInfo> AllKinds();
// Returns the kind whose code is `code` ("E0200"), exactly as spelled; nullopt if none.
std::optional<Kind> FindKind(std::string_view code);

// Returns " at Span { start: S, end: E }", the Rust Debug suffix upstream appends.
std::string SpanSuffix(std::uint32_t start, std::uint32_t end);

// A machine-applicable edit: replace [start_offset, end_offset) of the checked source with
// `replacement`.
struct FixPatch {
  std::string description;
  std::uint32_t start_offset = 0;
  std::uint32_t end_offset = 0;
  std::string replacement;
  friend bool operator==(const FixPatch&, const FixPatch&) = default;
};

// One step of a repair plan; steps are applied in order. A step may have no patches (upstream's
// "empty marker" step, §6.1 "Plan").
struct RepairStep {
  std::string description;
  std::vector<FixPatch> patches;
};

enum class Fixability : std::uint8_t { kAuto, kAssisted, kManual };
std::string_view FixabilityName(Fixability fixability);  // "auto", "assisted", "manual"

struct Diagnostic {
  Kind kind = Kind::kE0200;
  std::string message;  // complete, suffix included
  // The primary location; absent for E0101 and E0210. E0001 has one, but upstream's JSON shows
  // null (the span is lost when the lexer error is wrapped, §4.1): `span_in_json` says so.
  std::optional<SourceRange> span;
  bool span_in_json = true;
  std::optional<std::string> suggestion;
  std::optional<FixPatch> fix_patch;
  std::vector<RepairStep> repair_plan;
  // Set when the checker's patch failed verification (sema/verify_fixes.h): the patch moved to
  // the first repair-plan step, whose description gives the reason, and the diagnostic is
  // `manual` even with a suggestion (docs/decisions/0050-kodo-verified-fixes.md).
  bool fix_withheld = false;

  std::string_view code() const { return Info(kind).code; }
  Severity severity() const { return Info(kind).severity; }
  // auto when a fix patch exists, else manual when a patch was withheld, else assisted when a
  // suggestion exists, else manual (§6.1).
  Fixability fixability() const;
  // "docs/error_index.md#CODE" (§6.2).
  std::string see_also() const;
};

// Returns the message of `kind` with `args` substituted into its template, plus the span
// suffix when the kind has one. REQUIRES: as many args as the template has `{}`.
template <typename... Args>
std::string FormatMessage(Kind kind, std::optional<SourceRange> span, Args&&... args) {
  const KindInfo& info = Info(kind);
  std::string text = fmt::format(fmt::runtime(info.format), std::forward<Args>(args)...);
  if (info.suffix == Suffix::kSpanSuffix && span) text += SpanSuffix(span->begin, span->end);
  return text;
}

// Returns a diagnostic of `kind` at `span` with its formatted message; the caller adds
// suggestion, patch and plan.
template <typename... Args>
[[nodiscard]] Diagnostic Make(Kind kind, std::optional<SourceRange> span, Args&&... args) {
  Diagnostic d;
  d.kind = kind;
  d.span = span;
  d.message = FormatMessage(kind, span, std::forward<Args>(args)...);
  return d;
}

// What `kodoc check --json-errors` echoes on success (§6.2 "meta").
struct ModuleSummary {
  std::string module;
  std::optional<std::string> purpose;
  std::optional<std::string> version;
};

// Returns the §6.2 envelope, pretty-printed with two-space indentation as upstream prints it:
// {"errors": [DIAG...], "warnings": [], "status": "failed", "count": N} when `diagnostics` is
// non-empty, else {"errors": [], "warnings": [], "status": "ok", "count": 0, "meta": {...}}.
// `path` is the file name exactly as passed on the command line (span.file); `source` gives
// line and column. No trailing newline.
// A diagnostic of another file than the one a report is about: an imported module's warning
// (docs/kodo.md §4.3), shown with that file's text and path.
struct FileDiagnostic {
  const SourceBuffer* source = nullptr;
  std::string_view path;
  const Diagnostic* diagnostic = nullptr;
};

// `warnings` (ours, W09xx) fill the `warnings` array, which upstream always leaves empty;
// `other_warnings` (imported modules' warnings) follow them, each with its own file's
// span.file, line and column.
std::string RenderCheckJson(const SourceBuffer& source, std::string_view path,
                            std::span<const Diagnostic> diagnostics, const ModuleSummary& summary,
                            std::span<const Diagnostic> warnings = {},
                            std::span<const FileDiagnostic> other_warnings = {});

// Returns the human-readable form of one diagnostic (kodoc's stderr rendering without colour):
//   error[E0214]: missing field `y` in struct `Point` at Span { start: 301, end: 316 }
//     --> path:15:24
//      |
//   15 |     let p = Point { x: 1 }
//      |             ^^^^^^^^^^^^^^
//      = help: add `y: <value>` to the struct literal
// ending with a newline.
std::string RenderText(const SourceBuffer& source, std::string_view path,
                       const Diagnostic& diagnostic);

// Applies `patches` to `text` from the end backwards (as `kodoc fix` does), so that earlier
// offsets stay valid. Fails with kInvalidArgument naming the patch when one is out of bounds or
// two overlap.
Result<std::string> ApplyPatches(std::string_view text, std::vector<FixPatch> patches);

}  // namespace trove::kodo::diag
