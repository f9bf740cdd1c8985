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
// Not lowered (an Unsupported status naming the construct): `select`, `forall` outside tests,
// intents. `spawn` lowers to a queued closure (`kodo_spawn`), `parallel` joins its tasks
// (`kodo_join`), async calls run eagerly and `.await` is the identity, actor handlers are plain
// functions called synchronously.
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
};

// Lowers `module`, which the checker accepted. Errors: Unsupported for a construct the
// lowering does not handle, InvalidArgument for a name it cannot resolve; each message says in
// which function.
Result<Program> Lower(const ast::Module& module, const LowerOptions& options = {});

}  // namespace trove::kodo::mir
