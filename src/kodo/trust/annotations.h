// Trust annotations (docs/kodo.md §7.5): reading `@confidence`,
// `@reviewed_by`, `@authored_by` and `@security_sensitive` off a function, as upstream kodoc
// 1.14.1 reads them (crates/kodo_types/src/confidence.rs). Unknown annotation names are ignored
// everywhere; only the first `@confidence` of a function counts.
//
// Also the two number renderings trust messages use: Rust's `{}` for f64 (the shortest decimal
// that round-trips, never in exponent form: `0.5`, `1`, `0.0000001`) and `{:.2}`.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kodo/ast/ast.h"

namespace trove::kodo::trust {

// Returns the first annotation of `fn` named `name`, or null.
const ast::Annotation* FindAnnotation(const ast::Function& fn, std::string_view name);
bool HasAnnotation(const ast::Function& fn, std::string_view name);

// Returns the value of a `@confidence(...)` annotation: its first argument (positional or
// named) that is a float literal (`0.95`), an int literal (`95` -> 0.95) or a string literal
// (`"0.9"`, parsed as Rust parses an f64). A string that does not parse gives no value, even if
// a later argument would: upstream stops at the first literal argument.
std::optional<double> ConfidenceValue(const ast::Annotation& annotation);

// Returns the value of `fn`'s first `@confidence`, or nullopt when it has none or it has no
// value.
std::optional<double> DeclaredConfidence(const ast::Function& fn);

// Whether some `@reviewed_by` of `fn` claims a human review: a named argument `human: ...`
// (whatever its value) or a positional string literal starting with `human:`.
bool HasHumanReview(const ast::Function& fn);

// A human reviewer named by a string: `@reviewed_by(human: "alice")` or
// `@reviewed_by("human:alice")`. `span` is the whole annotation's.
struct HumanReviewer {
  std::string name;
  ast::Span span;
};
// Returns the reviewers of every `@reviewed_by` of `fn`, in source order.
std::vector<HumanReviewer> HumanReviewers(const ast::Function& fn);

// Parses `text` as Rust's `f64::from_str` does: an optional sign, decimal digits with an
// optional point and exponent, or inf/infinity/nan in any case; no surrounding blanks.
std::optional<double> ParseRustFloat(std::string_view text);

// Returns `value` as Rust's `{}` prints an f64: the shortest decimal that round-trips, in fixed
// notation, without a trailing `.0` (`1`, `0.75`, `-0`, `NaN`, `inf`).
std::string RustDisplay(double value);

// Returns `value` as Rust's `{:.2}` prints it.
std::string TwoDecimals(double value);

}  // namespace trove::kodo::trust
