// Upstream's similar-name rule (docs/kodo.md §5.4), shared by the checker's "did you mean" hints
// and the front end's unresolved-import hint.
#ifndef TROVE_KODO_DIAG_NEAR_NAME_H_
#define TROVE_KODO_DIAG_NEAR_NAME_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trove::kodo::diag {

// The Levenshtein distance between `a` and `b` (two rows, O(|a|·|b|) time).
std::size_t Levenshtein(std::string_view a, std::string_view b);

// The candidate at the smallest distance d with 1 <= d <= max(len(name)/2, 3), the first one on
// ties; nullopt when none qualifies.
std::optional<std::string> NearName(std::string_view name,
                                    const std::vector<std::string_view>& candidates);

}  // namespace trove::kodo::diag

#endif  // TROVE_KODO_DIAG_NEAR_NAME_H_
