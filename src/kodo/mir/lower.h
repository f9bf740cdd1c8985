// Lowering of a checked Kōdo module to MIR (docs/kodo.md §7.6), the CLI way:
// impl methods are lifted to free functions `Type_method` (trait default methods copied per
// implementing type), method calls are rewritten to `Type_method(obj, ...)` where the
// receiver's type is known, `Type.m(a)` to `Type_m(a)`, and builtin methods that take closures
// (`List_map`, `List_filter`, `List_fold`, ...) are injected as functions written in Kōdo.
// Desugared here: for-range and for-in loops (list/map/set/string iterator protocols), `??`,
// `?`, `?.`, `is`, `if let`, f-strings, short-circuit `&&`/`||`, match (to discriminant tests),
// closures (lambda-lifted into `__closure_N` with captured values as leading parameters),
// runtime contract checks (requires/ensures with upstream's messages, module invariants first,
// `validate_F` functions) and refinement checks on `let v: Alias = e`.
//
// Generic functions are lowered once, not monomorphised: the interpreter is dynamically typed,
// so one body serves every instantiation (docs/decisions/0062-kodo-mir-interp.md).
//
// Not lowered (an Unsupported status naming the construct): `select` over other than 2 or 3
// channels, `forall` outside tests. Concurrency (docs/decisions/0067): `spawn` lowers to a
// closure passed to `kodo_spawn`; `parallel` to `g = kodo_parallel_begin()`, its spawns to
// `kodo_parallel_spawn(g, closure)` and its end to `kodo_parallel_join(g)`; `select` to
// `channel_select_2/3(channels...)` giving the arm's index, then `channel_recv*` in the arm;
// `.await` to `kodo_await(value)`. An `async fn` is marked Function::is_async and an actor
// handler Function::actor_handler: the interpreter turns their calls into a task (a future) and
// a queued message.
//
// Thread safety: pure function of its arguments.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "base/status.h"
#include "kodo/ast/ast.h"
#include "kodo/mir/mir.h"

namespace trove::kodo::mir {

struct LowerOptions {
  // `--contracts=recoverable`: a failed check prints a warning and continues (docs/kodo.md §7.6).
  bool recoverable_contracts = false;
  // Inject the builtin methods written in Kōdo (docs/kodo.md §7.6). They are marked
  // Function::injected and not printed.
  bool inject_builtins = true;
  // Resolve intents as upstream's `build` does (docs/kodo.md §4.7): `console_app` and
  // `math_module` generate functions the module lacks; an unknown intent or key is an error.
  // Off for `kodo.build`, which ignores intents as upstream's MCP server does.
  bool resolve_intents = false;
};

// Lowers `module`, which the checker accepted. Errors: Unsupported for a construct the
// lowering does not handle, InvalidArgument for a name it cannot resolve; each message says in
// which function.
Result<Program> Lower(const ast::Module& module, const LowerOptions& options = {});

// A module that the lowered program imports (docs/kodo.md §4.3): its tree and what it imports,
// transitively, as indexes into the list of imports (each smaller than its own), ascending.
struct Import {
  const ast::Module* module = nullptr;
  std::vector<std::size_t> deps;
};

// Lowers a program of several modules into one Program (docs/decisions/0074): `imports` in
// load order (dependencies first, as driver::Compiled::imports) and `main`, which sees them
// all; the checker accepted each. Types, impls and traits of every module share one namespace,
// as in the checker, and a struct, enum or method that two modules declare is an
// InvalidArgument error. A free function keeps its name unless another module declares one of
// the same name: then the main module's keeps it and an imported module's is named `MOD::f`
// (MOD its declared name). In each module a plain name resolves as the checker resolved it:
// the module's own function, else the last of its imports that declares it; `MOD::f(...)` and
// `MOD.f(...)` call the `f` of the imported module named MOD. Intents are resolved for `main`
// only; each module's invariants guard its own functions. Program::module is main's name.
Result<Program> LowerProgram(const ast::Module& main, std::span<const Import> imports,
                             const LowerOptions& options = {});

}  // namespace trove::kodo::mir
