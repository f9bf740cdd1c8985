// Fuzzes the Kōdo front end end to end (docs/conventions.md §11): lexer, fail-fast parser and the
// collecting checker, as `kodoc check` and the MCP tools run them. Any input must check without
// reaching a CHECK, a crash or unbounded recursion, and:
//   a parse failure yields exactly one parse-phase diagnostic and no module;
//   every diagnostic has a known code, a message and, when it has a span, an in-bounds one;
//   every fix patch and repair-plan patch lies within the source, and applying the fix patch
//   succeeds;
//   the fail-fast check reports the collecting check's first diagnostic;
//   the docs/kodo.md §6.2 envelope and the MCP objects render;
//   a parsed module is within the depth the checker's walk relies on (ast::kMaxTreeDepth).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "kodo/ast/ast.h"
#include "kodo/diag/diagnostic.h"
#include "kodo/diag/mcp_json.h"
#include "kodo/sema/check.h"
#include "kodo/source/source_buffer.h"

namespace {

using trove::kodo::SourceBuffer;
using trove::kodo::diag::Diagnostic;
using trove::kodo::diag::FixPatch;

void CheckPatch(const SourceBuffer& source, const FixPatch& patch) {
  TROVE_CHECK(patch.start_offset <= patch.end_offset && patch.end_offset <= source.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  trove::Result<SourceBuffer> source = SourceBuffer::Create(5, "fuzz.ko", std::move(text));
  TROVE_CHECK(source.ok());

  trove::Result<trove::kodo::sema::SourceCheck> checked = trove::kodo::sema::CheckSource(*source);
  TROVE_CHECK(checked.ok());
  if (checked->phase == trove::kodo::sema::Phase::kParse) {
    TROVE_CHECK(checked->diagnostics.size() == 1 && !checked->module.has_value());
  } else {
    TROVE_CHECK(checked->module.has_value());
    TROVE_CHECK(trove::kodo::ast::TreeDepth(*checked->module) <= trove::kodo::ast::kMaxTreeDepth);
  }
  for (const Diagnostic& d : checked->diagnostics) {
    TROVE_CHECK(trove::kodo::diag::FindKind(d.code()).has_value());
    TROVE_CHECK(!d.message.empty());
    if (d.span) TROVE_CHECK(d.span->begin <= d.span->end && d.span->end <= source->size());
    if (d.fix_patch) {
      CheckPatch(*source, *d.fix_patch);
      TROVE_CHECK(trove::kodo::diag::ApplyPatches(source->text(), {*d.fix_patch}).ok());
    }
    for (const trove::kodo::diag::RepairStep& step : d.repair_plan) {
      for (const FixPatch& p : step.patches) CheckPatch(*source, p);
    }
    TROVE_CHECK(!trove::kodo::diag::RenderText(*source, "fuzz.ko", d).empty());
  }
  if (checked->module) {
    trove::kodo::sema::CheckOptions fail_fast;
    fail_fast.fail_fast = true;
    const trove::kodo::sema::CheckResult first =
        trove::kodo::sema::Check(*source, *checked->module, fail_fast);
    TROVE_CHECK(first.diagnostics.size() == (checked->diagnostics.empty() ? 0u : 1u));
    if (!first.diagnostics.empty()) {
      TROVE_CHECK(first.diagnostics[0].message == checked->diagnostics[0].message);
    }
  }
  const trove::kodo::diag::ModuleSummary summary =
      checked->module ? trove::kodo::sema::Summarize(*checked->module)
                      : trove::kodo::diag::ModuleSummary{};
  TROVE_CHECK(!trove::kodo::diag::RenderCheckJson(*source, "fuzz.ko", checked->diagnostics, summary)
                   .empty());
  (void)trove::kodo::diag::McpFixResult(checked->diagnostics);
  return 0;
}
