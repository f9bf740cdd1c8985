#include "kodo/trust/policy.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>

#include "kodo/trust/annotations.h"

namespace trove::kodo::trust {
namespace {

using diag::Diagnostic;
using diag::Kind;

const ast::MetaEntry* MetaEntry(const ast::Module& module, std::string_view key) {
  if (!module.meta) return nullptr;
  for (const ast::MetaEntry& e : module.meta->entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

SourceRange Range(const SourceBuffer& source, ast::Span span) {
  return SourceRange{source.id(), span.start, span.end};
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool ContainsFolded(const std::vector<std::string>& names, const std::string& lowered) {
  for (const std::string& n : names) {
    if (Lower(n) == lowered) return true;
  }
  return false;
}

std::optional<Diagnostic> HighSecurity(const SourceBuffer& source, const ast::Function& fn) {
  std::string message;
  if (!HasAnnotation(fn, "authored_by")) {
    message = fmt::format(
        "function `{}` is missing `@authored_by` annotation (required by trust_policy)", fn.name);
  } else if (const ast::Annotation* c = FindAnnotation(fn, "confidence"); c == nullptr) {
    message = fmt::format(
        "function `{}` is missing `@confidence` annotation (required by trust_policy)", fn.name);
  } else if (std::optional<double> v = ConfidenceValue(*c); v && *v < 0.85 && !HasHumanReview(fn)) {
    message = fmt::format(
        "function `{}` has @confidence({}) below 0.85 threshold and is missing `@reviewed_by` "
        "with human reviewer",
        fn.name, RustDisplay(*v));
  } else {
    return std::nullopt;
  }
  return diag::Make(Kind::kE0350, Range(source, fn.span), message);
}

std::optional<Diagnostic> Annotations(const SourceBuffer& source, const ast::Function& fn) {
  if (const ast::Annotation* c = FindAnnotation(fn, "confidence")) {
    if (std::optional<double> v = ConfidenceValue(*c); v && *v < 0.8 && !HasHumanReview(fn)) {
      Diagnostic d = diag::Make(Kind::kE0260, Range(source, fn.span), fn.name, RustDisplay(*v));
      d.suggestion =
          fmt::format("add `@reviewed_by(human: \"reviewer_name\")` to function `{}`", fn.name);
      return d;
    }
  }
  if (HasAnnotation(fn, "security_sensitive") && fn.requires_.empty() && fn.ensures.empty()) {
    Diagnostic d = diag::Make(Kind::kE0262, Range(source, fn.span), fn.name);
    d.suggestion =
        fmt::format("add `requires {{ ... }}` or `ensures {{ ... }}` to function `{}`", fn.name);
    return d;
  }
  return std::nullopt;
}

std::optional<Diagnostic> Reviewers(const SourceBuffer& source, const ast::Function& fn,
                                    const TrustConfig& config) {
  for (const HumanReviewer& r : HumanReviewers(fn)) {
    const std::string lowered = Lower(r.name);
    if (ContainsFolded(config.known_agents, lowered)) {
      Diagnostic d = diag::Make(Kind::kE0263, Range(source, r.span), fn.name, r.name);
      d.suggestion = fmt::format(
          "change `@reviewed_by(human: \"{0}\")` to `@reviewed_by(agent: \"{0}\")`, or remove the "
          "annotation — AI agents cannot claim human review",
          r.name);
      // Withdrawing the false claim is safe to apply mechanically (policy.h). The name is
      // written back as a Kōdo string literal.
      std::string literal;
      for (char ch : r.name) {
        if (ch == '"' || ch == '\\') literal += '\\';
        literal += ch;
      }
      d.fix_patch =
          diag::FixPatch{fmt::format("mark `{}` as an agent reviewer", r.name), r.span.start,
                         r.span.end, fmt::format("@reviewed_by(agent: \"{}\")", literal)};
      return d;
    }
    if (!config.human_reviewers.empty() && !ContainsFolded(config.human_reviewers, lowered)) {
      Diagnostic d = diag::Make(Kind::kE0264, Range(source, r.span), fn.name, r.name);
      d.suggestion = fmt::format(
          "add `\"{}\"` to `[trust].human_reviewers` in `kodo.toml`, or use a reviewer already "
          "in the allowlist",
          r.name);
      return d;
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<Diagnostic> CheckPolicies(const SourceBuffer& source, const ast::Module& module,
                                      const TrustConfig* config) {
  std::vector<Diagnostic> out;
  const ast::MetaEntry* policy = MetaEntry(module, "trust_policy");
  if (policy != nullptr && policy->value == "high_security") {
    for (const ast::Function& fn : module.functions) {
      if (std::optional<Diagnostic> d = HighSecurity(source, fn)) out.push_back(std::move(*d));
    }
  }
  for (const ast::Function& fn : module.functions) {
    if (std::optional<Diagnostic> d = Annotations(source, fn)) out.push_back(std::move(*d));
  }
  if (config != nullptr && config->active()) {
    for (const ast::Function& fn : module.functions) {
      if (std::optional<Diagnostic> d = Reviewers(source, fn, *config)) {
        out.push_back(std::move(*d));
      }
    }
  }
  const ast::MetaEntry* min_entry = MetaEntry(module, "min_confidence");
  const std::optional<double> threshold =
      min_entry == nullptr ? std::nullopt : ParseRustFloat(min_entry->value);
  if (threshold) {
    const CallGraph graph = CallGraph::Build(module);
    for (const ast::Function& fn : module.functions) {
      const double computed = graph.Computed(fn.name);
      if (!(computed < *threshold)) continue;
      const WeakestLink weakest = graph.Weakest(fn.name);
      Diagnostic d =
          diag::Make(Kind::kE0261, Range(source, fn.span), TwoDecimals(computed),
                     TwoDecimals(*threshold), weakest.name, TwoDecimals(weakest.declared));
      d.suggestion = fmt::format(
          "increase the confidence of `{}` to at least {}, or lower `min_confidence` in the "
          "module meta block",
          weakest.name, TwoDecimals(*threshold));
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace trove::kodo::trust
