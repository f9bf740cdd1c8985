// kodo_check_bench: throughput of the Kōdo front end on a large generated T0-T1 program that
// checks clean, on one core, as medians of several runs. Four figures, each over the same text:
// lexing alone, lexing + parsing (fail-fast, as check/build/MCP parse), type checking alone
// (the collecting checker over the parsed module) and end to end (kodo/driver's CompileSource:
// buffer, lex, parse, check, as kodo.check and `kodoc check` run them). Time is the thread's
// CPU time, so MB/s means per core. The ownership rules' share of checking (docs/kodo.md §7.3,
// kodo/ownership) is the check with them less the check without them (CheckOptions::ownership),
// over the former.
//   kodo_check_bench [MB] [runs] [e2e]     (default 12 MB, 5 runs)
// With `e2e`, only the end-to-end figure is measured (for profiling CompileSource alone).
#include <fmt/core.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "kodo/driver/front.h"
#include "kodo/lex/lexer.h"
#include "kodo/parse/parser.h"
#include "kodo/sema/check.h"
#include "kodo/source/source_buffer.h"

namespace {

// T0-T1 constructs only: structs, enums, match, tuples, String methods, f-strings, aliases,
// let/mut, loops, calls, arithmetic and logic; each block with distinct names.
std::string Generate(std::size_t bytes) {
  std::string out =
      "module bench {\n  meta { purpose: \"checker benchmark\", version: \"1.0\" }\n\n"
      "  type Count = Int\n\n";
  for (int i = 0; out.size() < bytes; ++i) {
    out += fmt::format(
        "  struct Point{0} {{ x: Int, y: Int }}\n"
        "  enum Shape{0} {{ Circle(Int), Rect(Int, Int), Empty }}\n"
        "  fn area_{0}(s: Shape{0}) -> Int {{\n"
        "    let a: Int = match s {{ Shape{0}::Circle(r) => r * r, Shape{0}::Rect(w, h) => w * h,"
        " Shape{0}::Empty => 0 }}\n"
        "    return a\n"
        "  }}\n"
        "  fn compute_{0}(a: Int, b: Int) -> Int {{\n"
        "    let mut total: Count = a * 2 + b - 17\n"
        "    let p = Point{0} {{ x: a, y: b }}\n"
        "    let t = (p.x, p.y)\n"
        "    let msg: String = f\"total={{total}} for {{p.x}}\"\n"
        "    let n: Int = msg.length() + \"abc\".to_upper().length()\n"
        "    for i in 0..10 {{ total = total + i % 3 }}\n"
        "    while total > 1000 {{ total = total / 2 }}\n"
        "    let s = Shape{0}::Rect(a, b)\n"
        "    if total >= 10 && b != 3 || a == {0} {{\n"
        "      return total % 7 + area_{0}(s) + t.0 + n\n"
        "    }} else {{\n"
        "      return compute_{1}(total, p.y)\n"
        "    }}\n"
        "  }}\n\n",
        i, i > 0 ? i - 1 : 0);
  }
  out += "  fn main() -> Int {\n    return compute_0(1, 2)\n  }\n}\n";
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The calling thread's CPU time in seconds. CPU time, not wall time: the figures are per core
// and stay meaningful on a machine shared with other work (wall time there measures the queue).
double CpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Seconds(double start) { return std::max(CpuNow() - start, 1e-9); }

// The calling thread's minor page faults so far: pages touched for the first time since they
// were mapped (or since the kernel took them back). Each costs a fault and a page clear, so a
// run that reuses its memory shows few.
double FaultsNow() {
  rusage usage{};
#if defined(RUSAGE_THREAD)
  getrusage(RUSAGE_THREAD, &usage);
#else
  getrusage(RUSAGE_SELF, &usage);
#endif
  return static_cast<double>(usage.ru_minflt);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trove::kodo;
  const std::size_t mb = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 12;
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const bool only_e2e = argc > 3 && std::string_view(argv[3]) == "e2e";
  const std::string text = Generate(mb << 20);
  auto source = SourceBuffer::Create(FileId{0}, "bench.ko", text);
  if (!source.ok()) {
    std::fprintf(stderr, "kodo_check_bench: %s\n", source.status().ToString().c_str());
    return 1;
  }
  driver::FrontOptions options;
  options.parse.lex.max_source_bytes = text.size() + 1;
  options.parse.lex.max_tokens = text.size();
  const double size_mb = static_cast<double>(text.size()) / 1e6;
  std::vector<double> lex_mbps, parse_mbps, check_mbps, total_mbps, no_own_mbps, total_faults;
  std::size_t functions = 0;
  for (int r = 0; r < runs; ++r) {
    double start = CpuNow();
    if (only_e2e) {
      const double faults = FaultsNow();
      auto compiled = driver::CompileSource(text, "bench.ko", options);
      total_mbps.push_back(size_mb / Seconds(start));
      total_faults.push_back(FaultsNow() - faults);
      if (!compiled.ok() || !compiled->ok()) {
        std::fprintf(stderr, "kodo_check_bench: end to end failed\n");
        return 1;
      }
      continue;
    }
    auto lexed = lex::Lex(*source, options.parse.lex);
    lex_mbps.push_back(size_mb / Seconds(start));
    if (!lexed.ok() || !lexed->errors.empty()) {
      std::fprintf(stderr, "kodo_check_bench: lexing failed\n");
      return 1;
    }

    start = CpuNow();
    auto parsed = parse::ParseModule(*source, options.parse);
    parse_mbps.push_back(size_mb / Seconds(start));
    if (!parsed.ok() || !parsed->ok()) {
      std::fprintf(stderr, "kodo_check_bench: parsing failed: %s\n",
                   parsed.ok() ? parsed->diagnostics[0].message.c_str()
                               : parsed.status().ToString().c_str());
      return 1;
    }
    functions = parsed->module->functions.size();

    start = CpuNow();
    sema::CheckResult checked = sema::Check(*source, *parsed->module);
    check_mbps.push_back(size_mb / Seconds(start));
    if (!checked.ok()) {
      std::fprintf(stderr, "kodo_check_bench: the program does not check clean: %s\n",
                   checked.diagnostics[0].message.c_str());
      return 1;
    }

    start = CpuNow();
    sema::CheckOptions no_ownership;
    no_ownership.ownership = false;
    sema::CheckResult unowned = sema::Check(*source, *parsed->module, no_ownership);
    no_own_mbps.push_back(size_mb / Seconds(start));
    if (!unowned.ok()) return 1;

    start = CpuNow();
    const double faults = FaultsNow();
    auto compiled = driver::CompileSource(text, "bench.ko", options);
    total_mbps.push_back(size_mb / Seconds(start));
    total_faults.push_back(FaultsNow() - faults);
    if (!compiled.ok() || !compiled->ok()) {
      std::fprintf(stderr, "kodo_check_bench: end to end failed\n");
      return 1;
    }
  }
  if (only_e2e) {
    for (std::size_t r = 0; r < total_mbps.size(); ++r) {
      fmt::print("run {}: {:.1f} MB/s, {:.0f} minor page faults\n", r + 1, total_mbps[r],
                 total_faults[r]);
    }
    fmt::print("end to end (check): median {:7.1f} MB/s, {:.0f} minor page faults a run\n",
               Median(total_mbps), Median(total_faults));
    return 0;
  }
  fmt::print(
      "kodo front end: {:.1f} MB (10^6 bytes) of T0-T1 source, {} functions, {} runs, "
      "CPU time of one thread\n",
      size_mb, functions, runs);
  fmt::print("lex alone:          median {:7.1f} MB/s\n", Median(lex_mbps));
  fmt::print("lex + parse:        median {:7.1f} MB/s\n", Median(parse_mbps));
  fmt::print("check alone:        median {:7.1f} MB/s\n", Median(check_mbps));
  const double with = 1 / Median(check_mbps);
  const double without = 1 / Median(no_own_mbps);
  fmt::print("check, no ownership: median {:7.1f} MB/s (ownership rules: {:.1f}% of check time)\n",
             Median(no_own_mbps), 100 * std::max(0.0, (with - without) / with));
  fmt::print("end to end (check): median {:7.1f} MB/s (CompileSource: copy, lex, parse, check)\n",
             Median(total_mbps));
  fmt::print("end to end: median {:.0f} minor page faults a run (first run: {:.0f})\n",
             Median(total_faults), total_faults[0]);
  return 0;
}
