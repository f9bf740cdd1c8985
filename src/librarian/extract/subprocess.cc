#include "librarian/extract/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

extern char** environ;

namespace trove::librarian::extract::internal {
namespace {

std::int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int WaitFor(pid_t pid) {
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return -1;
}

}  // namespace

Result<ProgramResult> RunProgram(const std::vector<std::string>& argv, std::int64_t timeout_micros,
                                 std::size_t max_output_bytes) {
  if (argv.empty()) return Status::InvalidArgument("run: empty command");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return Status::Io(fmt::format("run {}: pipe: {}", argv[0], strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return Status::NotFound(fmt::format("run {}: {}", argv[0], strerror(rc)));
  }

  ProgramResult result;
  std::int64_t deadline = timeout_micros > 0 ? NowMicros() + timeout_micros : 0;
  Status failure;
  char buf[65536];
  for (;;) {
    int wait_ms = -1;
    if (deadline != 0) {
      std::int64_t left = deadline - NowMicros();
      if (left <= 0) {
        failure = Status::DeadlineExceeded(
            fmt::format("{} exceeded the time limit of {} ms", argv[0], timeout_micros / 1000));
        break;
      }
      wait_ms = static_cast<int>(std::min<std::int64_t>((left + 999) / 1000, 1 << 30));
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = poll(&p, 1, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      failure = Status::Io(fmt::format("run {}: poll: {}", argv[0], strerror(errno)));
      break;
    }
    if (n == 0) continue;  // the deadline check above ends the loop
    ssize_t got = read(fds[0], buf, sizeof(buf));
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      failure = Status::Io(fmt::format("run {}: read: {}", argv[0], strerror(errno)));
      break;
    }
    if (got == 0) break;  // EOF: the child closed stdout
    if (result.out.size() + static_cast<std::size_t>(got) > max_output_bytes) {
      failure = Status::ResourceExhausted(
          fmt::format("{} wrote more than {} bytes", argv[0], max_output_bytes));
      break;
    }
    result.out.append(buf, static_cast<std::size_t>(got));
  }
  close(fds[0]);
  if (!failure.ok()) {
    kill(pid, SIGKILL);
    WaitFor(pid);
    return failure;
  }
  // stdout is closed; a child that keeps running after that still gets the limit.
  for (;;) {
    int wstatus = 0;
    pid_t w = waitpid(pid, &wstatus, WNOHANG);
    if (w == pid) {
      result.exit_code = WIFEXITED(wstatus)     ? WEXITSTATUS(wstatus)
                         : WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus)
                                                : -1;
      return result;
    }
    if (w < 0 && errno != EINTR)
      return Status::Io(fmt::format("run {}: wait: {}", argv[0], strerror(errno)));
    if (deadline != 0 && NowMicros() > deadline) {
      kill(pid, SIGKILL);
      WaitFor(pid);
      return Status::DeadlineExceeded(
          fmt::format("{} exceeded the time limit of {} ms", argv[0], timeout_micros / 1000));
    }
    usleep(1000);
  }
}

}  // namespace trove::librarian::extract::internal
