// Two versions of one sample application with planted edits (docs/warden.md §9.3), for the diff
// tests and the MCP tests: each planted function is built to be caught by exactly one pass.
//
//   key       v1 -> v2                                       expected
//   f0        same body, same index                          unchanged (exact)
//   f1, f5-f9 same body, other index                         moved (exact)
//   logger    same body (calls env.log), other index         moved (exact)
//   f2        one constant changed (masked in stable_id)     moved (stable_id)
//   f3        one snippet inserted                           modified (fuzzy)
//   A, B      a local index changed (same structure, size)   modified (normalised)
//   w_a, w_b  identical wrappers of A and B                  modified (call_graph, round 1)
//   ww_a,ww_b identical wrappers of w_a and w_b              modified (call_graph, round 2)
//   f4        removed                                        deleted
//   g         added                                          new
//
// v1 carries a name section naming every function by its key except f3 and f5 (left for
// agent and Oracle names in tests); v2 is stripped except that it names B "B_v2".
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "warden/samples/samples.h"

namespace trove::warden::diff::testing {

// A deterministic body of `snippets` pieces drawn from a dozen instruction patterns, picked by
// `seed`; the function has signature (i32, i32) -> i32 and two i32 locals.
// `insert_at` plants one more snippet before that position; `const_shift` is added to every
// constant (a change the stable_id masks).
inline samples::Function Generated(const std::string& key, std::uint64_t seed, int snippets,
                                   int insert_at = -1, std::int32_t const_shift = 0) {
  samples::Function f;
  f.key = key;
  f.name = key;
  f.sig = {{samples::kI32, samples::kI32}, {samples::kI32}};
  f.locals = {samples::kI32, samples::kI32};
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
  auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(x >> 33);
  };
  samples::Body& b = f.body;
  auto snippet = [&b](std::uint32_t kind, std::int32_t c) {
    switch (kind % 12) {
      case 0:
        b.LocalGet(0).I32Const(c).Op(0x6a).LocalSet(2);
        break;  // add
      case 1:
        b.LocalGet(2).LocalGet(1).Op(0x73).LocalSet(3);
        break;  // xor
      case 2:
        b.LocalGet(3).I32Const(c).Op(0x6c).LocalSet(2);
        break;  // mul
      case 3:
        b.LocalGet(1).Memory(0x28, 2, 8).LocalSet(3);
        break;  // load
      case 4:
        b.LocalGet(2).LocalGet(3).Memory(0x36, 2, 4);
        break;  // store
      case 5:
        b.LocalGet(2).I32Const(c).Op(0x74).LocalSet(1);
        break;  // shl
      case 6:
        b.LocalGet(0).LocalGet(3).Op(0x6b).LocalSet(0);
        break;  // sub
      case 7:
        b.Block().LocalGet(2).BrIf(0).LocalGet(3).I32Const(c).Op(0x71).LocalSet(2).End();
        break;
      case 8:
        b.LocalGet(3).LocalGet(2).Op(0x4b).If().LocalGet(2).LocalSet(3).End();
        break;
      case 9:
        b.LocalGet(1).I32Const(c).Op(0x76).LocalTee(2).LocalGet(0).Op(0x72).LocalSet(3);
        break;
      case 10:
        b.LocalGet(0).Memory(0x2d, 0, 1).LocalGet(1).Op(0x46).LocalSet(2);
        break;
      default:
        b.LocalGet(3).I32Const(c).Op(0x77).LocalGet(2).Op(0x70).LocalSet(1);
        break;
    }
  };
  for (int i = 0; i < snippets; ++i) {
    if (i == insert_at) snippet(4, 99);  // the planted insertion: a store, no control flow
    const std::uint32_t kind = next();
    snippet(kind, static_cast<std::int32_t>(next() % 1000) + const_shift);
  }
  b.LocalGet(2).LocalGet(3).Op(0x72);  // i32.or
  return f;
}

// A loop; `variant` 1 counts down local 1 where variant 0 counts down local 0 (same structure
// and size, so only the normalised pass can pair the two); `extra` adds that many xor steps.
inline samples::Function Leaf(const std::string& key, int variant, std::int32_t salt, int extra) {
  samples::Function f;
  f.key = key;
  f.name = key;
  f.sig = {{samples::kI32, samples::kI32}, {samples::kI32}};
  f.locals = {samples::kI32};
  samples::Body& b = f.body;
  b.I32Const(salt).LocalSet(2).Block().Loop();
  b.LocalGet(variant == 0 ? 0 : 1).I32Const(1).Op(0x6b).LocalTee(variant == 0 ? 0 : 1);
  b.Op(0x45).BrIf(1);
  b.LocalGet(2).I32Const(salt).Op(0x6c).LocalGet(1).Op(0x6a).LocalSet(2).Br(0).End().End();
  for (int i = 0; i < extra; ++i) b.LocalGet(2).I32Const(salt + i).Op(0x73).LocalSet(2);
  b.LocalGet(2);
  return f;
}

// A wrapper: (a, b) -> callee(a, b) + 1; every wrapper has the same opcode stream.
inline samples::Function Wrapper(const std::string& key, const std::string& callee) {
  samples::Function f;
  f.key = key;
  f.name = key;
  f.sig = {{samples::kI32, samples::kI32}, {samples::kI32}};
  f.body.LocalGet(0).LocalGet(1).Call(callee).I32Const(1).Op(0x6a);
  return f;
}

inline samples::Function Logger() {
  samples::Function f;
  f.key = "logger";
  f.name = "logger";
  f.sig = {{samples::kI32, samples::kI32}, {samples::kI32}};
  f.body.I32Const(64).Call("log").LocalGet(0).LocalGet(1).Op(0x6a).I32Const(3).Op(0x6c);
  f.body.I32Const(64).Memory(0x28, 2, 0).Op(0x6a).I32Const(7).Op(0x71).LocalGet(0).Op(0x6a);
  return f;
}

inline samples::Module Base() {
  samples::Module m;
  m.imports.push_back(
      {.key = "log", .module = "env", .field = "log", .sig = {{samples::kI32}, {}}});
  m.data.push_back({.address = 64, .bytes = std::string("planted edits\0", 14)});
  return m;
}

inline samples::Module PlantedV1() {
  samples::Module m = Base();
  for (int i = 0; i < 10; ++i) {
    m.functions.push_back(Generated("f" + std::to_string(i), 100 + i, 10 + i));
  }
  m.functions[3].name.reset();
  m.functions[5].name.reset();
  m.functions.push_back(Leaf("A", 0, 31, 0));
  m.functions.push_back(Leaf("B", 0, 57, 1));
  m.functions.push_back(Wrapper("w_a", "A"));
  m.functions.push_back(Wrapper("w_b", "B"));
  m.functions.push_back(Wrapper("ww_a", "w_a"));
  m.functions.push_back(Wrapper("ww_b", "w_b"));
  m.functions.push_back(Logger());
  return m;
}

inline samples::Module PlantedV2() {
  samples::Module m = Base();
  m.name_section = true;
  m.functions.push_back(Generated("f0", 100, 10));
  m.functions.push_back(Wrapper("ww_b", "w_b"));
  m.functions.push_back(Wrapper("ww_a", "w_a"));
  m.functions.push_back(Logger());
  m.functions.push_back(Leaf("B", 1, 57, 1));
  m.functions.push_back(Generated("g", 777, 14));
  m.functions.push_back(Wrapper("w_b", "B"));
  m.functions.push_back(Leaf("A", 1, 31, 0));
  m.functions.push_back(Wrapper("w_a", "A"));
  for (int i : {9, 8, 7, 6, 5}) {
    m.functions.push_back(Generated("f" + std::to_string(i), 100 + i, 10 + i));
  }
  m.functions.push_back(Generated("f3", 103, 13, /*insert_at=*/6));
  m.functions.push_back(Generated("f2", 102, 12, -1, /*const_shift=*/5));
  m.functions.push_back(Generated("f1", 101, 11));
  for (samples::Function& f : m.functions) f.name.reset();
  for (samples::Function& f : m.functions) {
    if (f.key == "B") f.name = "B_v2";
  }
  return m;
}

}  // namespace trove::warden::diff::testing
