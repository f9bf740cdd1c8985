// Fuzzes the Kōdo parser (docs/conventions.md §11). Any input must parse without reaching a CHECK,
// a crash or a stack overflow (nesting is bounded), and:
//   fail-fast: either a module and no diagnostic, or exactly one diagnostic and no module;
//   recovering: always a module, at most 100 diagnostics, the same tree as fail-fast when
//   fail-fast succeeded, and otherwise fail-fast's error first (or an E0104 wrapping it);
//   every diagnostic has a code, a message and an in-bounds range (E0101 has none);
//   the describe printer renders whatever was parsed;
//   every tree returned is within the depth every walk relies on (ast::kMaxTreeDepth), and the
//   describe printer never had to cut it short.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "kodo/ast/describe.h"
#include "kodo/parse/parser.h"
#include "kodo/source/source_buffer.h"

namespace {

using trove::kodo::SourceBuffer;
using trove::kodo::parse::ParseDiagnostic;
using trove::kodo::parse::ParseModule;
using trove::kodo::parse::ParseOptions;
using trove::kodo::parse::ParseResult;

void CheckDiagnostics(const SourceBuffer& source, const ParseResult& result) {
  for (const ParseDiagnostic& d : result.diagnostics) {
    TROVE_CHECK(!d.code.empty() && !d.message.empty());
    TROVE_CHECK(d.code == "E0001" || d.code == "E0100" || d.code == "E0101" || d.code == "E0104");
    TROVE_CHECK(d.range.has_value() == (d.code != "E0101"));
    if (d.range) TROVE_CHECK(d.range->begin <= d.range->end && d.range->end <= source.size());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  trove::Result<SourceBuffer> source = SourceBuffer::Create(3, "fuzz.ko", std::move(text));
  TROVE_CHECK(source.ok());

  trove::Result<ParseResult> strict = ParseModule(*source);
  TROVE_CHECK(strict.ok());
  CheckDiagnostics(*source, *strict);
  if (strict->module) {
    TROVE_CHECK(strict->diagnostics.empty());
  } else {
    TROVE_CHECK(strict->diagnostics.size() == 1);
  }

  ParseOptions recover;
  recover.recover = true;
  trove::Result<ParseResult> recovering = ParseModule(*source, recover);
  TROVE_CHECK(recovering.ok());
  CheckDiagnostics(*source, *recovering);
  TROVE_CHECK(recovering->module.has_value());
  TROVE_CHECK(recovering->diagnostics.size() <= 100);
  TROVE_CHECK(trove::kodo::ast::TreeDepth(*recovering->module) <= trove::kodo::ast::kMaxTreeDepth);
  const std::string described = trove::kodo::ast::DescribeModule(*recovering->module);
  TROVE_CHECK(!described.empty());
  if (strict->module) {
    TROVE_CHECK(trove::kodo::ast::TreeDepth(*strict->module) <= trove::kodo::ast::kMaxTreeDepth);
    TROVE_CHECK(recovering->diagnostics.empty());
    TROVE_CHECK(trove::kodo::ast::DescribeModule(*strict->module) == described);
  } else {
    // Recovery reports upstream's fail-fast error first, unless it folded it into an E0104.
    TROVE_CHECK(!recovering->diagnostics.empty());
    const ParseDiagnostic& first = recovering->diagnostics[0];
    TROVE_CHECK(first.code == "E0104" || first.message == strict->diagnostics[0].message);
  }
  return 0;
}
