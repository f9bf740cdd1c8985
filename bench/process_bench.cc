// process_bench: runs whole commands interleaved, run by run, and prints per command the
// median [min..max] of wall time, CPU time (user + system) and peak RSS, read with wait4(2),
// plus the ratio of each command's median to the first one's (the peer).
//
//   process_bench --runs 7 --setup 'rm -f /tmp/x.db'
//       --cmd 'objdump=wasm-objdump -x f.wasm' --cmd 'warden=warden ingest --db /tmp/x.db f.wasm'
//
// Each --cmd is NAME=COMMAND, run with /bin/sh -c and stdout sent to /dev/null; --setup runs
// before every run of every command (not measured). The starting command rotates per run, so
// neither always runs first. Exit status: 0, or 1 when a command failed (its status printed).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Sample {
  double wall_s = 0;
  double cpu_s = 0;
  double rss_mib = 0;
};

struct Command {
  std::string name;
  std::string command;
  std::vector<Sample> samples;
};

// Runs `command` with /bin/sh -c; returns false when it did not exit 0.
bool Run(const std::string& command, bool quiet, Sample* sample) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (quiet) {
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, 1);
    }
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) < 0) return false;
  const auto end = std::chrono::steady_clock::now();
  if (sample != nullptr) {
    sample->wall_s = std::chrono::duration<double>(end - start).count();
    sample->cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    sample->rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "process_bench: '%s' failed (status %d)\n", command.c_str(), status);
    return false;
  }
  return true;
}

struct Stat {
  double median = 0, min = 0, max = 0;
};

Stat Summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stat s;
  if (v.empty()) return s;
  s.min = v.front();
  s.max = v.back();
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return s;
}

int Usage() {
  std::fprintf(stderr,
               "usage: process_bench [--runs N] [--warmup N] [--setup CMD] --cmd NAME=CMD "
               "--cmd NAME=CMD...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  int warmup = 1;
  std::string setup;
  std::vector<Command> commands;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return Usage();
    const std::string value = argv[++i];
    if (arg == "--runs") {
      runs = std::atoi(value.c_str());
    } else if (arg == "--warmup") {
      warmup = std::atoi(value.c_str());
    } else if (arg == "--setup") {
      setup = value;
    } else if (arg == "--cmd") {
      const std::size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) return Usage();
      commands.push_back({value.substr(0, eq), value.substr(eq + 1), {}});
    } else {
      return Usage();
    }
  }
  if (commands.size() < 2 || runs < 1) return Usage();

  // Warm-up runs (file cache), not measured.
  for (int w = 0; w < warmup; ++w) {
    for (Command& c : commands) {
      if (!setup.empty() && !Run(setup, true, nullptr)) return 1;
      if (!Run(c.command, true, nullptr)) return 1;
    }
  }
  for (int r = 0; r < runs; ++r) {
    for (std::size_t k = 0; k < commands.size(); ++k) {
      Command& c = commands[(k + static_cast<std::size_t>(r)) % commands.size()];
      if (!setup.empty() && !Run(setup, true, nullptr)) return 1;
      Sample s;
      if (!Run(c.command, true, &s)) return 1;
      c.samples.push_back(s);
      std::fprintf(stderr, "run %d/%d %-10s wall %.3f s, cpu %.3f s, peak RSS %.1f MiB\n", r + 1,
                   runs, c.name.c_str(), s.wall_s, s.cpu_s, s.rss_mib);
    }
  }

  std::printf("%d interleaved runs per command; median [min..max]; ratio = median / %s's\n", runs,
              commands[0].name.c_str());
  std::printf("%-10s %-28s %-28s %-28s\n", "command", "wall (s)", "cpu (s)", "peak RSS (MiB)");
  Stat base_wall, base_cpu, base_rss;
  for (std::size_t k = 0; k < commands.size(); ++k) {
    std::vector<double> wall, cpu, rss;
    for (const Sample& s : commands[k].samples) {
      wall.push_back(s.wall_s);
      cpu.push_back(s.cpu_s);
      rss.push_back(s.rss_mib);
    }
    const Stat w = Summarise(wall), c = Summarise(cpu), m = Summarise(rss);
    if (k == 0) {
      base_wall = w;
      base_cpu = c;
      base_rss = m;
    }
    char a[64], b[64], d[64];
    std::snprintf(a, sizeof a, "%.3f [%.3f..%.3f]", w.median, w.min, w.max);
    std::snprintf(b, sizeof b, "%.3f [%.3f..%.3f]", c.median, c.min, c.max);
    std::snprintf(d, sizeof d, "%.1f [%.1f..%.1f]", m.median, m.min, m.max);
    std::printf("%-10s %-28s %-28s %-28s\n", commands[k].name.c_str(), a, b, d);
    if (k > 0) {
      std::printf("%-10s wall %.2fx, cpu %.2fx, peak RSS %.2fx of %s\n", "  ratio",
                  w.median / base_wall.median, c.median / base_cpu.median,
                  m.median / base_rss.median, commands[0].name.c_str());
    }
  }
  return 0;
}
