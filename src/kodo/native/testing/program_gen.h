// Test helper: random well-typed Kōdo programs for the differential test of native builds
// against the interpreter (native_test.cc). A seed gives one program, always the same for a
// given build (a private xorshift generator, no std::random distributions; the order in which
// one fmt::format call's sub-expressions draw numbers is the compiler's, so gcc and clang
// builds may generate different, equally valid programs). The programs use integer arithmetic
// (wrapping, truncating division with non-zero divisors), comparisons and boolean logic, if/else,
// for-range and while loops, functions calling earlier functions, structs and field access, an enum
// with payloads and `match`, lists, maps, closures with captures (called directly and through a
// function parameter), strings and f-strings; every loop is bounded, so every program terminates.
#pragma once

#include <cstdint>
#include <string>

namespace trove::kodo::native::testing {

// Returns the source of program number `seed` (module `gen`).
std::string GenerateProgram(std::uint64_t seed);

// Returns the source of JSON and regex program number `seed` (module `gen`): JSON documents
// parsed (some invalid), read with every getter, changed with every setter and freed; regex
// match, find and replace with patterns from a fixed set (ECMAScript classes, quantifiers,
// lazy quantifiers, alternation, groups, back-references, lookahead, invalid patterns) and
// replacement formats ($1, $&, $$, $`, $') over random subjects.
std::string GenerateJsonRegexProgram(std::uint64_t seed);

}  // namespace trove::kodo::native::testing
