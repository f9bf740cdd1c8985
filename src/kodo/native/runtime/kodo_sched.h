/* The Kōdo native runtime's concurrency (docs/decisions/0075-kodo-native-concurrency.md):
 * `spawn`, `parallel`, `async`/`.await`, channels, `select` and actor messages, with the
 * interpreter's cooperative scheduler (src/kodo/interp/interp.cc, docs/decisions/0067) copied
 * order for order, so a native program prints exactly what `kodoc run` prints.
 *
 * CMake appends this header to kodo_rt.h and kodo_sched.c to kodo_rt.c (the embedded runtime
 * stays two files). Each task runs on its own stack (ucontext); a task runs until it blocks
 * (receive, select, await, join), yields or ends. The next task is then: the first blocked
 * task whose condition now holds (in the order they blocked), else the first ready task (async
 * calls in call order, `parallel` tasks from their join in spawn order, yielded tasks), else
 * the first deferred task (`spawn` and actor messages in send order). When every remaining
 * task is blocked the program stops with exit 134 and the interpreter's `deadlock:` message.
 *
 * Thread safety: one program thread, like the rest of the runtime. */
#ifndef KODO_SCHED_H_
#define KODO_SCHED_H_

#include "kodo_rt.h"

/* The future of an `async fn` call (a tag beyond kodo_rt.h's, which prints as `<handle>`). */
#define KT_FUTURE 100

/* The function a blocking hook is called from (the deadlock message names it); generated
 * code sets it before each blocking call. */
extern const char* kr_where;

/* A call of an `async fn` (is_async: a task started now, its future returned) or an actor
 * handler (a message queued, unit returned). `body` runs the function's body with `args`. */
KV kr_sched_call(KTramp body, const char* fn, int is_async, int n, const KV* args);
/* After `main` returns: runs the remaining tasks, as the interpreter does. */
void kr_sched_main_done(void);
/* MIR `yield`: lets the other ready tasks run. */
void kr_sched_yield(void);

KR_B1(kb_spawn);
KR_B0(kb_parallel_begin);
KR_B2(kb_parallel_spawn);
KR_B1(kb_parallel_join);
KR_B1(kb_await);
KR_B0(kb_yield);
KR_B0(kb_channel_new);
KR_B2(kb_channel_send);
KR_B1(kb_channel_free);
KR_B1(kb_channel_recv);
KR_B2(kb_channel_select_2);
KR_B3(kb_channel_select_3);

#endif /* KODO_SCHED_H_ */
