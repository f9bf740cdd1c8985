// What `check` did not check (issue 20: "nothing hides behind any"). A program that uses a
// feature whose rules this checker does not apply yet still passes, but never silently: the
// check result carries one W0901 warning per such feature, at its first use, and `kodoc check`
// (the `warnings` array and the text form) and `kodo.check` (its `notes`) show it
// (docs/kodo.md §6.5).
//
// The features are a fixed list (Feature). A phase that does check one of them later removes
// its warning in one of two ways:
//   - it runs inside the check and the feature is always covered: flip the feature's `checked`
//     entry in kFeatures (unchecked.cc) to true, and the warning is never made;
//   - it runs after the check, only in some modes (Z3 contracts in `static`/`both`, trust
//     policies with a kodo.toml): call MarkChecked(warnings, feature) on the result it covered.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kodo/ast/ast.h"
#include "kodo/diag/diagnostic.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::sema {

enum class Feature : std::uint8_t {
  kContracts,      // requires/ensures, refinement types, module invariants (tier T3, §7.4)
  kTrustPolicies,  // annotations, trust_policy, min_confidence, confidence (T3, §7.5)
  kTests,          // test and describe bodies (T3, §4.8): `check` does not type them
  kConcurrency,    // spawn, parallel, select, actors, async/await, channels, intents (T5, §4.7)
};

struct FeatureInfo {
  Feature feature;
  std::string_view name;  // "contracts"; also the word after "not checked: " in the warning
  std::string_view what;  // the rest of the warning: what exactly was not checked
  bool checked;           // true once a phase inside the check covers it (no warning then)
};

// The table, in Feature order.
std::span<const FeatureInfo> Features();

// Returns the W0901 warnings for the features `module` uses and no phase checks, in Feature
// order, each at the feature's first use in source order. Depth-bounded (ast::kMaxTreeDepth).
std::vector<diag::Diagnostic> UncheckedFeatures(const SourceBuffer& source,
                                                const ast::Module& module);

// Removes the warning of `feature` from `warnings` (a later phase checked it).
void MarkChecked(std::vector<diag::Diagnostic>& warnings, Feature feature);

// Returns the feature a W0901 warning is about, if `d` is one.
std::optional<Feature> FeatureOf(const diag::Diagnostic& d);

}  // namespace trove::kodo::sema
