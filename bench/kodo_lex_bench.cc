// kodo_lex_bench: lexing throughput of the Kōdo lexer on a large generated program (issue 5's
// "lexing alone ≥ 300 MB/s"), on one core, median of several runs.
//   kodo_lex_bench [MB] [runs]
// Two figures per run: wall-clock time, and the CPU time of this thread. On a shared machine the
// wall clock also counts the time other processes hold the core; the CPU time does not (it still
// counts this thread's page faults, which the kernel handles on its behalf).
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "kodo/lex/lexer.h"
#include "kodo/source/source_buffer.h"

namespace {

// Seconds of CPU time used by the calling thread.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// A T0-T1 style program: functions with lets, arithmetic, comparisons, strings, f-strings,
// structs and comments, repeated with distinct names until `bytes` is reached.
std::string Generate(std::size_t bytes) {
  std::string out = "module bench {\n  meta { version: \"1.0\" }\n\n";
  for (int i = 0; out.size() < bytes; ++i) {
    out += fmt::format(
        "  // function {0}: arithmetic, branches and strings\n"
        "  struct Point{0} {{ x: Int, y: Int }}\n"
        "  fn compute_{0}(a: Int, b: Int) -> Int {{\n"
        "    let mut total: Int = a * 2 + b - 17\n"
        "    let label: String = \"value of compute\\n\"\n"
        "    let msg: String = f\"total={{total}} for {0}\"\n"
        "    let ratio: Float64 = 3.25\n"
        "    while total > 1000 {{ total = total / 2 }}\n"
        "    if total >= 10 && b != 3 || a == {0} {{\n"
        "      return total % 7\n"
        "    }} else {{\n"
        "      return compute_{1}(total, b)\n"
        "    }}\n"
        "  }}\n\n",
        i, i > 0 ? i - 1 : 0);
  }
  out += "}\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trove::kodo;
  const std::size_t mb = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 12;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 7;
  const std::string text = Generate(mb << 20);
  auto source = SourceBuffer::Create(FileId{0}, "bench.ko", text);
  if (!source.ok()) {
    std::fprintf(stderr, "kodo_lex_bench: %s\n", source.status().ToString().c_str());
    return 1;
  }
  lex::LexOptions options;
  options.max_source_bytes = text.size() + 1;
  options.max_tokens = text.size();
  std::vector<double> mbps;
  std::vector<double> cpu_mbps;
  std::size_t tokens = 0;
  for (int r = 0; r < runs; ++r) {
    const double cpu_start = ThreadCpuSeconds();
    auto start = std::chrono::steady_clock::now();
    auto result = lex::Lex(*source, options);
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu_secs = ThreadCpuSeconds() - cpu_start;
    if (!result.ok() || !result->errors.empty()) {
      std::fprintf(stderr, "kodo_lex_bench: lexing failed\n");
      return 1;
    }
    tokens = result->tokens.size();
    mbps.push_back(static_cast<double>(text.size()) / (1 << 20) / secs);
    cpu_mbps.push_back(static_cast<double>(text.size()) / (1 << 20) / cpu_secs);
  }
  const double cpu_median = Median(cpu_mbps);
  std::sort(mbps.begin(), mbps.end());
  fmt::print("kodo lexer: {:.1f} MiB source ({} bytes), {} tokens, {} runs on one core\n",
             static_cast<double>(text.size()) / (1 << 20), text.size(), tokens, runs);
  fmt::print("lex throughput: median {:.0f} MB/s [{:.0f}..{:.0f}] (target >= 300 MB/s)\n",
             mbps[mbps.size() / 2], mbps.front(), mbps.back());
  fmt::print("lex throughput by thread CPU time: median {:.0f} MB/s\n", cpu_median);
  return 0;
}
