#include "base/process.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string_view>

extern char** environ;

namespace trove::base {
namespace {

std::int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int ExitCodeOf(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return -1;
}

void KillAndReap(pid_t pid) {
  kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
}

Status OverTime(const std::string& program, std::int64_t timeout_micros) {
  return Status::DeadlineExceeded(
      fmt::format("{} exceeded the time limit of {} ms", program, timeout_micros / 1000));
}

}  // namespace

Result<std::string> FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  const std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::string candidate;
  for (std::size_t i = 0; i <= dirs.size(); ++i) {
    if (i < dirs.size() && dirs[i] != ':') {
      candidate.push_back(dirs[i]);
      continue;
    }
    if (candidate.empty()) candidate.push_back('.');
    candidate.push_back('/');
    candidate.append(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    candidate.clear();
  }
  return Status::NotFound(fmt::format("`{}` was not found in PATH", name));
}

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const ProcessOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("no program to run");
  const std::string& program = argv[0];
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return Status::Io(fmt::format("run {}: pipe: {}", program, strerror(errno)));
  }
  if (options.capture_stderr && pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int saved = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Status::Io(fmt::format("run {}: pipe: {}", program, strerror(saved)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  if (options.capture_stderr) {
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = options.search_path
                     ? posix_spawnp(&pid, program.c_str(), &actions, nullptr, args.data(), environ)
                     : posix_spawn(&pid, program.c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  if (options.capture_stderr) close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    if (options.capture_stderr) close(err_pipe[0]);
    return Status::NotFound(fmt::format("could not start `{}`: {}", program, strerror(rc)));
  }

  ProcessResult result;
  const std::int64_t deadline =
      options.timeout_micros > 0 ? NowMicros() + options.timeout_micros : 0;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = options.capture_stderr ? 2 : 1;
  Status failure;
  char buf[65536];
  while (open_fds > 0 && failure.ok()) {
    int wait_ms = -1;
    if (deadline != 0) {
      const std::int64_t left = deadline - NowMicros();
      if (left <= 0) {
        failure = OverTime(program, options.timeout_micros);
        break;
      }
      wait_ms = static_cast<int>(std::min<std::int64_t>((left + 999) / 1000, 1 << 30));
    }
    const int ready = poll(fds, 2, wait_ms);  // a negative fd is ignored by poll
    if (ready < 0) {
      if (errno == EINTR) continue;
      failure = Status::Io(fmt::format("run {}: poll: {}", program, strerror(errno)));
      break;
    }
    for (int i = 0; i < 2 && failure.ok(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        if (result.out.size() + result.err.size() + static_cast<std::size_t>(n) >
            options.max_output_bytes) {
          failure = Status::ResourceExhausted(
              fmt::format("{} wrote more than {} bytes", program, options.max_output_bytes));
          break;
        }
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  if (!failure.ok()) {
    KillAndReap(pid);
    return failure;
  }
  // The pipes are closed; a child that keeps running after that still gets the time limit.
  for (;;) {
    int wstatus = 0;
    const pid_t w = waitpid(pid, &wstatus, deadline != 0 ? WNOHANG : 0);
    if (w == pid) {
      result.exit_code = ExitCodeOf(wstatus);
      return result;
    }
    if (w < 0 && errno != EINTR) {
      return Status::Io(fmt::format("run {}: wait: {}", program, strerror(errno)));
    }
    if (deadline != 0 && NowMicros() > deadline) {
      KillAndReap(pid);
      return OverTime(program, options.timeout_micros);
    }
    if (w == 0) usleep(1000);
  }
}

}  // namespace trove::base
