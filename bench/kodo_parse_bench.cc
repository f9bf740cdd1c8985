// kodo_parse_bench: throughput of lexing + parsing (fail-fast, as check/build/MCP use it) a large
// generated Kōdo program on one core, median of several runs; lexing alone is measured in the
// same run as the named peer, so the figure reads as "parse costs N x lexing".
//   kodo_parse_bench [MB] [runs]
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kodo/lex/lexer.h"
#include "kodo/parse/parser.h"
#include "kodo/source/source_buffer.h"

namespace {

// A T0-T2 style program: structs, enums, functions with lets, arithmetic, loops, matches,
// closures, method calls and f-strings, repeated with distinct names until `bytes` is reached.
std::string Generate(std::size_t bytes) {
  std::string out =
      "module bench {\n  meta { purpose: \"parser benchmark\", version: \"1.0\" }\n\n";
  for (int i = 0; out.size() < bytes; ++i) {
    out += fmt::format(
        "  // block {0}\n"
        "  struct Point{0} {{ x: Int, y: Int }}\n"
        "  enum Shape{0} {{ Circle(Int), Rect(Int, Int), Empty }}\n"
        "  @confidence(0.9)\n"
        "  fn compute_{0}(a: Int, b: Int) -> Int requires {{ b != 0 }} ensures {{ result >= 0 }} "
        "{{\n"
        "    let mut total: Int = a * 2 + b - 17\n"
        "    let p = Point{0} {{ x: a, y: b }}\n"
        "    let msg: String = f\"total={{total}} for {{p.x}}\"\n"
        "    for i in 0..10 {{ total = total + i % 3 }}\n"
        "    while total > 1000 {{ total = total / 2 }}\n"
        "    let s = Shape{0}::Rect(a, b)\n"
        "    let area = match s {{ Shape{0}::Circle(r) => r * r, Shape{0}::Rect(w, h) => w * h, _ "
        "=> 0 }}\n"
        "    let f = |x: Int| -> Int {{ x + area }}\n"
        "    if total >= 10 && b != 3 || a == {0} {{\n"
        "      return f(total) % 7\n"
        "    }} else {{\n"
        "      return compute_{1}(total, p.y.abs())\n"
        "    }}\n"
        "  }}\n\n",
        i, i > 0 ? i - 1 : 0);
  }
  out += "}\n";
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trove::kodo;
  const std::size_t mb = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 8;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string text = Generate(mb << 20);
  auto source = SourceBuffer::Create(FileId{0}, "bench.ko", text);
  if (!source.ok()) {
    std::fprintf(stderr, "kodo_parse_bench: %s\n", source.status().ToString().c_str());
    return 1;
  }
  parse::ParseOptions options;
  options.lex.max_source_bytes = text.size() + 1;
  options.lex.max_tokens = text.size();
  const double size_mb = static_cast<double>(text.size()) / (1 << 20);
  std::vector<double> lex_mbps;
  std::vector<double> parse_mbps;
  std::size_t functions = 0;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    auto lexed = lex::Lex(*source, options.lex);
    lex_mbps.push_back(
        size_mb / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!lexed.ok() || !lexed->errors.empty()) {
      std::fprintf(stderr, "kodo_parse_bench: lexing failed\n");
      return 1;
    }
    start = std::chrono::steady_clock::now();
    auto parsed = parse::ParseModule(*source, options);
    parse_mbps.push_back(
        size_mb / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!parsed.ok() || !parsed->ok()) {
      std::fprintf(stderr, "kodo_parse_bench: parsing failed: %s\n",
                   parsed.ok() ? parsed->diagnostics[0].message.c_str()
                               : parsed.status().ToString().c_str());
      return 1;
    }
    functions = parsed->module->functions.size();
  }
  fmt::print("kodo parser: {:.1f} MiB source, {} functions, {} runs on one core\n", size_mb,
             functions, runs);
  const double lex = Median(lex_mbps);
  const double parse = Median(parse_mbps);
  fmt::print("lex alone (peer): median {:.0f} MB/s\n", lex);
  fmt::print("lex + parse:      median {:.0f} MB/s ({:.1f}x the time of lexing alone)\n", parse,
             lex / parse);
  return 0;
}
