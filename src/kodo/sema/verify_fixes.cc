#include "kodo/sema/verify_fixes.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace trove::kodo::sema {
namespace {

// The message without upstream's " at Span { start: S, end: E }" suffix: a patch moves the
// offsets of everything after it, so the same error has another suffix in the patched file.
std::string_view Stripped(const diag::Diagnostic& d) {
  const std::string_view m = d.message;
  return m.substr(0, m.find(" at Span {"));
}

std::size_t CountSame(const std::vector<diag::Diagnostic>& diags, const diag::Diagnostic& d) {
  return static_cast<std::size_t>(std::count_if(
      diags.begin(), diags.end(),
      [&](const diag::Diagnostic& x) { return x.kind == d.kind && Stripped(x) == Stripped(d); }));
}

// Checks `text` as CheckSource does, collecting every error, without verifying its patches.
Result<SourceCheck> Recheck(const SourceBuffer& original, std::string text,
                            const parse::ParseOptions& parse_options,
                            const trust::TrustConfig* trust_config) {
  ASSIGN_OR_RETURN(SourceBuffer patched,
                   SourceBuffer::Create(original.id(), original.name(), std::move(text),
                                        parse_options.lex.max_source_bytes));
  return CheckSource(
      patched,
      CheckOptions{.fail_fast = false, .verify_fixes = false, .trust_config = trust_config},
      parse_options);
}

class Verifier {
 public:
  Verifier(const SourceBuffer& source, bool from_parse, std::vector<diag::Diagnostic>& diags,
           const CheckOptions& options, const parse::ParseOptions& parse_options)
      : source_(source),
        from_parse_(from_parse),
        diags_(diags),
        options_(options),
        parse_options_(parse_options) {}

  void Run() {
    for (diag::Diagnostic& d : diags_) {
      if (!d.fix_patch) continue;
      if (std::optional<std::string> reason = Verify(d)) WithholdFix(d, *reason);
    }
  }

 private:
  // Returns why `d`'s patch cannot be offered as automatic, or nullopt when it can.
  std::optional<std::string> Verify(const diag::Diagnostic& d) {
    Result<std::string> patched = diag::ApplyPatches(source_.text(), {*d.fix_patch});
    if (!patched.ok()) {
      return fmt::format("the patch does not apply: {}", patched.status().message());
    }
    if (!Spend(patched->size())) return BudgetReason();
    Result<SourceCheck> again =
        Recheck(source_, std::move(patched).value(), parse_options_, options_.trust_config);
    if (!again.ok()) {
      return fmt::format("the patched file crosses a bound: {}", again.status().message());
    }
    if (again->phase == Phase::kParse) {
      const diag::Diagnostic& first = again->diagnostics.front();
      return fmt::format("the patched file does not parse ({}: {})", first.code(), first.message);
    }
    if (from_parse_) return std::nullopt;  // it parses now: the parse error is gone
    const std::vector<diag::Diagnostic>* before = Baseline();
    if (before == nullptr) return BudgetReason();
    const std::size_t had = std::max<std::size_t>(CountSame(*before, d), 1);
    if (CountSame(again->diagnostics, d) >= had) {
      return std::string("the patched file still reports this error");
    }
    return std::nullopt;
  }

  // The type errors of the unpatched file, collected: the diagnostics themselves unless they
  // came from the fail-fast checker. Null when the budget does not cover checking it again.
  const std::vector<diag::Diagnostic>* Baseline() {
    if (!options_.fail_fast) return &diags_;
    if (!baseline_) {
      if (!Spend(source_.size())) return nullptr;
      Result<SourceCheck> all =
          Recheck(source_, std::string(source_.text()), parse_options_, options_.trust_config);
      baseline_.emplace();
      if (all.ok()) *baseline_ = std::move(all->diagnostics);
    }
    return &*baseline_;
  }

  bool Spend(std::size_t bytes) {
    if (bytes > options_.max_verify_bytes - std::min(spent_, options_.max_verify_bytes)) {
      return false;
    }
    spent_ += bytes;
    return true;
  }

  std::string BudgetReason() const {
    return fmt::format(
        "it could not be verified: re-checking it would pass the {} bytes verified per file",
        options_.max_verify_bytes);
  }

  const SourceBuffer& source_;
  const bool from_parse_;
  std::vector<diag::Diagnostic>& diags_;
  const CheckOptions& options_;
  const parse::ParseOptions& parse_options_;
  std::size_t spent_ = 0;
  std::optional<std::vector<diag::Diagnostic>> baseline_;
};

}  // namespace

void WithholdFix(diag::Diagnostic& d, std::string_view reason) {
  diag::FixPatch patch = std::move(*d.fix_patch);
  d.fix_patch.reset();
  d.fix_withheld = true;
  std::vector<diag::RepairStep> plan;
  std::string description =
      fmt::format("{} by hand, then review the file: not offered as an automatic fix because {}",
                  patch.description, reason);
  plan.push_back(diag::RepairStep{std::move(description), {patch}});
  for (diag::RepairStep& step : d.repair_plan) {
    if (step.patches.size() == 1 && step.patches[0] == patch) continue;
    plan.push_back(std::move(step));
  }
  d.repair_plan = std::move(plan);
}

void VerifyFixes(const SourceBuffer& source, bool from_parse,
                 std::vector<diag::Diagnostic>& diagnostics, const CheckOptions& options,
                 const parse::ParseOptions& parse_options) {
  Verifier(source, from_parse, diagnostics, options, parse_options).Run();
}

}  // namespace trove::kodo::sema
