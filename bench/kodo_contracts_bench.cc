// kodo_contracts_bench: `kodoc check` throughput with contracts in `runtime` mode (validation
// and counting only, Z3 never loaded) against `static` mode (every clause proved by Z3), on the
// same generated program, plus `static` on a program whose clauses repeat (the formula cache:
// docs/kodo-contracts.md §3). Each figure is the median wall time of several runs of type check
// + contract verification (Z3 works on the calling thread; its watchdog thread sleeps).
//   kodo_contracts_bench [functions] [runs]     (default 200 functions, 3 runs)
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "kodo/contracts/contracts.h"
#include "kodo/driver/front.h"

namespace {

using trove::kodo::contracts::ContractMode;

// `n` functions with three clauses each: two tautologies Z3 proves (one nonlinear) and an
// untranslatable one (a float), so that `static` mode verifies every function. With `repeat`, every
// function has the same clauses; otherwise each mentions its index, so no two formulas are equal.
std::string Generate(int n, bool repeat) {
  std::string out = "module bench {\n  meta { purpose: \"contracts benchmark\" }\n";
  for (int i = 0; i < n; ++i) {
    const int k = repeat ? 7 : i + 7;
    out += fmt::format(
        "  fn f{0}(x: Int, y: Int) -> Int\n"
        "    requires {{ x * {1} + y - y == {1} * x }}\n"
        "    ensures {{ (x + {1}) * (x + {1}) >= 0 - {1} || result == result }}\n"
        "    ensures {{ 1.5 > 0.5 }}\n"
        "  {{\n    return x + y + {1}\n  }}\n",
        i, k);
  }
  return out + "}\n";
}

struct Figure {
  double ms = 0;
  std::size_t verified = 0;
  std::size_t runtime = 0;
  std::size_t solved = 0;
};

Figure Run(const std::string& source, ContractMode mode, int runs) {
  std::vector<double> times;
  Figure f;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto compiled = trove::kodo::driver::CompileSource(source, "bench.ko");
    if (!compiled.ok() || !compiled->ok()) {
      fmt::print(stderr, "the generated program does not check\n");
      std::exit(1);
    }
    trove::kodo::contracts::SmtCache cache;
    auto report = trove::kodo::contracts::VerifyModule(*compiled->module, {.mode = mode}, cache);
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    f.verified = report.static_verified;
    f.runtime = report.runtime_checks;
    f.solved = cache.solved();
  }
  std::sort(times.begin(), times.end());
  f.ms = times[times.size() / 2];
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string distinct = Generate(n, false);
  const std::string repeated = Generate(n, true);
  fmt::print("kodo_contracts_bench: {} functions, 3 clauses each, {:.1f} KB, median of {} runs\n",
             n, distinct.size() / 1024.0, runs);
  struct Row {
    const char* name;
    const std::string* source;
    ContractMode mode;
  };
  const Row rows[] = {{"runtime (no z3)", &distinct, ContractMode::kRuntime},
                      {"both", &distinct, ContractMode::kBoth},
                      {"static, distinct", &distinct, ContractMode::kStatic},
                      {"static, repeated", &repeated, ContractMode::kStatic}};
  for (const Row& row : rows) {
    const Figure f = Run(*row.source, row.mode, runs);
    fmt::print(
        "  {:<18} {:9.1f} ms  {:9.0f} functions/s  verified {:4}  runtime {:4}  z3 calls {}\n",
        row.name, f.ms, f.ms > 0 ? n * 1000.0 / f.ms : 0.0, f.verified, f.runtime, f.solved);
  }
  return 0;
}
