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

}  // namespace trove::kodo::mir
