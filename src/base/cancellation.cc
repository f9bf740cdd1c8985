#include "base/cancellation.h"

namespace trove::base {

void Cancellation::Cancel() {
  std::vector<std::function<void()>> run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (flag_.exchange(true, std::memory_order_acq_rel)) return;
    run.swap(callbacks_);
  }
  for (auto& fn : run) fn();
}

void Cancellation::OnCancel(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!flag_.load(std::memory_order_acquire)) {
      callbacks_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

}  // namespace trove::base
