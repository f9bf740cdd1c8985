// The builtins of the native runtime's C++ part (runtime/kodo_rt_ext.{h,cc}; docs/decisions/
// 0076-kodo-native-builtins-speed.md): JSON with nlohmann-json and regular expressions with
// std::regex (ECMAScript), the libraries the interpreter uses, so that results are identical.
// A program that calls one of them is linked with that part, compiled by the C++ compiler;
// other programs need only the C compiler.
//
// Thread safety: the table is immutable.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kodo/mir/mir.h"

namespace trove::kodo::native {

struct ExtBuiltin {
  const char* name;  // the MIR callee
  const char* cfn;   // the runtime function
  int arity;
  // The tag of every result: 'i' Int, 'f' Float64, 'b' Bool, 0 any.
  char result;
};

// Every builtin of the C++ part.
std::span<const ExtBuiltin> ExtBuiltins();

// Returns the C++-part builtin called `name`, or null.
const ExtBuiltin* FindExtBuiltin(std::string_view name);

// Returns whether `program` calls a builtin of the C++ part.
bool UsesExtBuiltins(const mir::Program& program);

// The C++ part's header and source, embedded in the binary (runtime_ext_embed.cc, generated).
std::string_view RuntimeExtHeader();
std::string_view RuntimeExtSource();

}  // namespace trove::kodo::native
