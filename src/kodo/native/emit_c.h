// MIR → C for native Kōdo builds (docs/kodo.md §7.8, docs/decisions/0065-kodo-native-c.md).
// EmitC turns a lowered program (kodo/mir/lower.h) into one C translation unit that includes
// the runtime's header (runtime/kodo_rt.h) and is linked with the runtime (runtime/kodo_rt.c);
// build.h drives the C compiler.
//
// The generated code keeps the interpreter's semantics (kodo/interp/interp.h): a value is a
// tagged `KV`; locals whose MIR type is `Int`, `Bool` or `Float64` are unboxed C scalars (a
// value of another tag reaching one stops the program with a message rather than being
// misread); calls to user functions are direct C calls with a call-depth count (the
// interpreter's "stack overflow" limit); `__method.NAME` calls dispatch on the receiver's
// runtime type; closures and function values go through per-function trampolines. Generic
// functions are not monomorphised: one body serves every instantiation, as in the interpreter.
//
// A struct type whose literals all name the same fields in one order is unboxed where its MIR
// type is known: a C struct of tagged fields (`KS_N`) passed and returned by value, boxed only
// where it meets tagged code (docs/decisions/0076). JSON and regex calls go to the runtime's
// C++ part (ext_builtins.h), included only when the program uses them.
//
// Concurrency (`spawn`, `parallel`, `async`/`.await`, channels, `select`, actor messages) runs
// on the runtime's cooperative scheduler (runtime/kodo_sched.c), in the interpreter's order: a
// call of an `async fn` or an actor handler hands its arguments to the scheduler, and the
// blocking hooks switch tasks (docs/decisions/0075-kodo-native-concurrency.md).
//
// Not supported (EmitC returns Unsupported naming the construct and the function): the
// low-level `kodo_future_*` and `channel_generic_*` hooks and any callee that is neither a
// function of the program nor a builtin of the runtime.
//
// Thread safety: pure function of its arguments.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "kodo/mir/mir.h"

namespace trove::kodo::native {

struct EmitOptions {
  // Unboxed C scalars for locals typed Int, Bool and Float64 (off: every local is a tagged
  // value; slower, kept for checking the unboxed code against).
  bool unbox = true;
};

// Returns the C source of `program`. REQUIRES: `program` came from mir::Lower.
Result<std::string> EmitC(const mir::Program& program, const EmitOptions& options = {});

// Returns whether `name` is a builtin the native runtime provides (as a callee of a MIR Call).
bool IsNativeBuiltin(const std::string& name);

// The runtime's header and source, embedded in the binary (runtime/kodo_rt.h, kodo_rt.c).
std::string_view RuntimeHeader();
std::string_view RuntimeSource();

}  // namespace trove::kodo::native
