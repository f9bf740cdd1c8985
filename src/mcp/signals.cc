#include "mcp/signals.h"

#include <pthread.h>
#include <signal.h>

namespace trove::mcp {

namespace {
sigset_t TermAndInt() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}
}  // namespace

void BlockShutdownSignals() {
  sigset_t set = TermAndInt();
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

ShutdownSignalWatcher::ShutdownSignalWatcher(std::function<void()> on_signal) {
  sigset_t current;
  pthread_sigmask(SIG_BLOCK, nullptr, &current);
  if (!sigismember(&current, SIGTERM) || !sigismember(&current, SIGINT)) return;
  thread_ = std::thread([this, on_signal = std::move(on_signal)] {
    const sigset_t set = TermAndInt();
    int sig = 0;
    sigwait(&set, &sig);
    if (stopping_.load()) return;  // woken by the destructor
    on_signal();
  });
}

ShutdownSignalWatcher::~ShutdownSignalWatcher() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  pthread_kill(thread_.native_handle(), SIGINT);
  thread_.join();
}

}  // namespace trove::mcp
