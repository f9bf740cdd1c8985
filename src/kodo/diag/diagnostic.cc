#include "kodo/diag/diagnostic.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace trove::kodo::diag {
namespace {

constexpr std::array kKinds = {
#define KODO_DIAG(code, name, severity, emitted, tier, suffix, format, title)         \
  KindInfo{Kind::k##code,  #code,  #name, Severity::severity, Emitted::emitted, tier, \
           Suffix::suffix, format, title},
#include "kodo/diag/kinds.def"
#undef KODO_DIAG
};

using OrderedJson = nlohmann::ordered_json;

OrderedJson PatchJson(const FixPatch& patch) {
  OrderedJson j;
  j["description"] = patch.description;
  j["file"] = "";  // always "" in this output (docs/kodo.md §6.2)
  j["start_offset"] = patch.start_offset;
  j["end_offset"] = patch.end_offset;
  j["replacement"] = patch.replacement;
  return j;
}

OrderedJson DiagnosticJson(const SourceBuffer& source, std::string_view path, const Diagnostic& d) {
  OrderedJson j;
  j["code"] = d.code();
  j["severity"] = d.severity() == Severity::kWarning ? "warning" : "error";
  j["message"] = d.message;
  if (d.span && d.span_in_json) {
    const LineColumn lc = source.Locate(std::min(d.span->begin, source.size()));
    OrderedJson span;
    span["file"] = std::string(path);
    span["start"] = d.span->begin;
    span["end"] = d.span->end;
    span["line"] = lc.line;
    span["column"] = lc.column;
    j["span"] = std::move(span);
  } else {
    j["span"] = nullptr;
  }
  j["suggestion"] = d.suggestion ? OrderedJson(*d.suggestion) : OrderedJson(nullptr);
  j["fixability"] = FixabilityName(d.fixability());
  if (d.fix_patch) j["fix_patch"] = PatchJson(*d.fix_patch);
  if (!d.repair_plan.empty()) {
    OrderedJson plan = OrderedJson::array();
    for (const RepairStep& step : d.repair_plan) {
      OrderedJson s;
      s["description"] = step.description;
      OrderedJson patches = OrderedJson::array();
      for (const FixPatch& p : step.patches) patches.push_back(PatchJson(p));
      s["patches"] = std::move(patches);
      plan.push_back(std::move(s));
    }
    j["repair_plan"] = std::move(plan);
  }
  j["see_also"] = d.see_also();
  return j;
}

}  // namespace

const KindInfo& Info(Kind kind) { return kKinds[static_cast<std::size_t>(kind)]; }

std::span<const KindInfo> AllKinds() { return kKinds; }

std::optional<Kind> FindKind(std::string_view code) {
  for (const KindInfo& info : kKinds) {
    if (info.code == code) return info.kind;
  }
  return std::nullopt;
}

std::string SpanSuffix(std::uint32_t start, std::uint32_t end) {
  return fmt::format(" at Span {{ start: {}, end: {} }}", start, end);
}

std::string_view FixabilityName(Fixability fixability) {
  switch (fixability) {
    case Fixability::kAuto:
      return "auto";
    case Fixability::kAssisted:
      return "assisted";
    case Fixability::kManual:
      return "manual";
  }
  return "manual";
}

Fixability Diagnostic::fixability() const {
  if (fix_patch) return Fixability::kAuto;
  if (fix_withheld) return Fixability::kManual;
  if (suggestion) return Fixability::kAssisted;
  return Fixability::kManual;
}

std::string Diagnostic::see_also() const { return fmt::format("docs/error_index.md#{}", code()); }

std::string RenderCheckJson(const SourceBuffer& source, std::string_view path,
                            std::span<const Diagnostic> diagnostics, const ModuleSummary& summary,
                            std::span<const Diagnostic> warnings,
                            std::span<const FileDiagnostic> other_warnings) {
  OrderedJson out;
  OrderedJson errors = OrderedJson::array();
  for (const Diagnostic& d : diagnostics) errors.push_back(DiagnosticJson(source, path, d));
  out["errors"] = std::move(errors);
  OrderedJson warning_list = OrderedJson::array();
  for (const Diagnostic& d : warnings) warning_list.push_back(DiagnosticJson(source, path, d));
  for (const FileDiagnostic& d : other_warnings) {
    warning_list.push_back(DiagnosticJson(*d.source, d.path, *d.diagnostic));
  }
  out["warnings"] = std::move(warning_list);
  out["status"] = diagnostics.empty() ? "ok" : "failed";
  out["count"] = diagnostics.size();
  if (diagnostics.empty()) {
    // An ad-hoc object upstream (json!), so its keys are sorted (docs/kodo.md §6.2).
    OrderedJson meta;
    meta["module"] = summary.module;
    meta["purpose"] = summary.purpose ? OrderedJson(*summary.purpose) : OrderedJson(nullptr);
    meta["version"] = summary.version ? OrderedJson(*summary.version) : OrderedJson(nullptr);
    out["meta"] = std::move(meta);
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string RenderText(const SourceBuffer& source, std::string_view path,
                       const Diagnostic& diagnostic) {
  std::string out =
      fmt::format("{}[{}]: {}\n", diagnostic.severity() == Severity::kWarning ? "warning" : "error",
                  diagnostic.code(), diagnostic.message);
  if (diagnostic.span && diagnostic.span->begin <= source.size()) {
    const std::uint32_t begin = diagnostic.span->begin;
    const std::uint32_t end = std::min(std::max(diagnostic.span->end, begin), source.size());
    const LineColumn lc = source.Locate(begin);
    out += fmt::format("  --> {}:{}:{}\n", path, lc.line, lc.column);
    // The line holding `begin`, and carets under the part of the span on that line.
    const std::string_view text = source.text();
    std::size_t line_start = text.rfind('\n', begin == 0 ? 0 : begin - 1);
    line_start = (begin == 0 || line_start == std::string_view::npos) ? 0 : line_start + 1;
    std::size_t line_end = text.find('\n', begin);
    if (line_end == std::string_view::npos) line_end = text.size();
    const std::string gutter(fmt::format("{}", lc.line).size(), ' ');
    out += fmt::format("{} |\n{} | {}\n", gutter, lc.line,
                       text.substr(line_start, line_end - line_start));
    const std::size_t caret_end = std::min<std::size_t>(end, line_end);
    const std::size_t carets = caret_end > begin ? caret_end - begin : 1;
    out += fmt::format("{} | {}{}\n", gutter, std::string(lc.column - 1, ' '),
                       std::string(carets, '^'));
  } else {
    out += fmt::format("  --> {}\n", path);
  }
  if (diagnostic.suggestion) out += fmt::format("  = help: {}\n", *diagnostic.suggestion);
  return out;
}

Result<std::string> ApplyPatches(std::string_view text, std::vector<FixPatch> patches) {
  std::stable_sort(patches.begin(), patches.end(), [](const FixPatch& a, const FixPatch& b) {
    return a.start_offset > b.start_offset;
  });
  std::string out(text);
  std::uint32_t limit = static_cast<std::uint32_t>(text.size());
  for (const FixPatch& p : patches) {
    if (p.start_offset > p.end_offset || p.end_offset > limit) {
      return Status::InvalidArgument(
          fmt::format("fix patch `{}`: range {}..{} is out of bounds or overlaps another patch",
                      p.description, p.start_offset, p.end_offset));
    }
    out.replace(p.start_offset, p.end_offset - p.start_offset, p.replacement);
    limit = p.start_offset;
  }
  return out;
}

}  // namespace trove::kodo::diag
