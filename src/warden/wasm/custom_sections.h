// Parsers of two tool-convention custom sections (docs/warden.md §4.1, §10.4), each a pure
// function of the section's payload, bounded by it:
//   producers        vec(field name, vec(value name, value version)); the fields the tool
//                    conventions define are "language", "processed-by" and "sdk"
//   target_features  vec(prefix byte '+' | '-' | '=', feature name)
// Non-Emscripten toolchains leave these in release builds (rustc, walrus and wasm-bindgen in
// @resvg/resvg-wasm; Go in esbuild-wasm), where Emscripten release builds drop them, so they
// are how `versions`, `show` and `coverage --json` say which toolchain made a module.
// Errors are kMalformed with the absolute offset (`offset` is the payload's offset in the
// module). Counts are bounded by the bytes left, so no input allocates more than its size.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace trove::warden::wasm {

struct ProducerValue {
  std::string name;
  std::string version;  // may be empty
  friend bool operator==(const ProducerValue&, const ProducerValue&) = default;
};
struct ProducerField {
  std::string field;  // "language", "processed-by", "sdk", or any other name as written
  std::vector<ProducerValue> values;
  friend bool operator==(const ProducerField&, const ProducerField&) = default;
};
using Producers = std::vector<ProducerField>;  // in section order

Result<Producers> ParseProducers(std::span<const std::uint8_t> payload, std::uint64_t offset = 0);

// Each entry as written: the prefix character then the name ("+simd128", "-atomics").
Result<std::vector<std::string>> ParseTargetFeatures(std::span<const std::uint8_t> payload,
                                                     std::uint64_t offset = 0);

// One line for people: every value of every field in section order, "name version" (or the
// name alone), repeats dropped, joined by ", "; e.g. "Rust, rustc 1.76.0-nightly, walrus
// 0.20.3, wasm-bindgen 0.2.92". Empty for no producers.
std::string ProducersSummary(const Producers& producers);

}  // namespace trove::warden::wasm
