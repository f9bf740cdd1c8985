// Splits one WARDEN ingest into its phases (read, prepare, store, close) and prints the wall
// and process CPU time of each, so a change to one phase can be measured without the noise of
// the whole process. Not a test: bench/run_warden_ingest gives the figures of record.
//
//   warden_ingest_phases <module.wasm> <fresh.db> [runs]
//
// Each run removes <fresh.db> and its -wal/-shm first.
#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/env.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"

namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Resident set size now, in MiB (/proc/self/statm; 0 elsewhere).
double RssMib() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

struct Clock {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = CpuSeconds();
  void Lap(const char* phase) {
    const auto now = std::chrono::steady_clock::now();
    const double c = CpuSeconds();
    fmt::print("  {:<8} wall {:.3f} s  cpu {:.3f} s  rss {:.1f} MiB\n", phase,
               std::chrono::duration<double>(now - wall).count(), c - cpu, RssMib());
    wall = now;
    cpu = c;
  }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace trove;
  if (argc < 3) {
    std::fputs("usage: warden_ingest_phases <module.wasm> <fresh.db> [runs]\n", stderr);
    return 2;
  }
  const std::string wasm = argv[1];
  const std::string db = argv[2];
  const int runs = argc > 3 ? std::atoi(argv[3]) : 1;
  base::PosixEnv env;
  for (int run = 0; run < runs; ++run) {
    for (const char* suffix : {"", "-wal", "-shm"}) unlink((db + suffix).c_str());
    fmt::print("run {}\n", run + 1);
    Clock clock;
    Result<std::string> data = env.ReadFile(wasm);
    if (!data.ok()) {
      fmt::print(stderr, "{}\n", data.status().ToString());
      return 1;
    }
    clock.Lap("read");
    const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(data->data()),
                                              data->size());
    Result<warden::ingest::PreparedVersion> prepared =
        warden::ingest::PrepareVersion(bytes, wasm, warden::ingest::IngestOptions{});
    if (!prepared.ok()) {
      fmt::print(stderr, "{}\n", prepared.status().ToString());
      return 1;
    }
    clock.Lap("prepare");
    {
      Result<std::unique_ptr<warden::kb::Kb>> kb =
          warden::kb::Kb::Open(env, db, warden::kb::KbOptions{.create_if_missing = true});
      if (!kb.ok()) {
        fmt::print(stderr, "{}\n", kb.status().ToString());
        return 1;
      }
      clock.Lap("open");
      Result<warden::kb::StoreResult> stored =
          (*kb)->StoreVersion(prepared->version, prepared->functions.span(), prepared->seeds);
      if (!stored.ok()) {
        fmt::print(stderr, "{}\n", stored.status().ToString());
        return 1;
      }
      clock.Lap("store");
    }
    clock.Lap("close");
    *prepared = warden::ingest::PreparedVersion{};
    clock.Lap("free");
  }
  return 0;
}
