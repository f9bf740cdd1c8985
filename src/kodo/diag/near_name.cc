#include "kodo/diag/near_name.h"

#include <algorithm>

namespace trove::kodo::diag {

std::size_t Levenshtein(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> NearName(std::string_view name,
                                    const std::vector<std::string_view>& candidates) {
  const std::size_t limit = std::max<std::size_t>(name.size() / 2, 3);
  std::optional<std::string> best;
  std::size_t best_d = limit + 1;
  for (std::string_view c : candidates) {
    // The distance is at least the difference in length: such candidates cannot qualify or
    // beat the best so far, and are skipped without computing it (about 200 builtins are bound
    // besides a module's names).
    const std::size_t gap =
        c.size() > name.size() ? c.size() - name.size() : name.size() - c.size();
    if (gap > limit || gap >= best_d) continue;
    const std::size_t d = Levenshtein(name, c);
    if (d >= 1 && d <= limit && d < best_d) {
      best_d = d;
      best = std::string(c);
    }
  }
  return best;
}

}  // namespace trove::kodo::diag
