/* The native runtime's cooperative scheduler; see kodo_sched.h. Each piece mirrors
 * Machine::{Invoke, CallResolved, Schedule, Ready, Describe, Finish} in
 * src/kodo/interp/interp.cc and the channel builtins in src/kodo/interp/runtime.cc: keep them
 * in step. CMake appends this file to kodo_rt.c; it uses only kodo_rt.h's interface. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kodo_rt.h"

/* A task's saved machine state. On x86-64 a switch saves the callee-saved registers on the
 * task's stack and swaps stack pointers (kodo_rt_switch below): no system call, where
 * swapcontext makes two (the signal mask). Elsewhere, or with -DKODO_SCHED_UCONTEXT, ucontext. */
#if !defined(KODO_SCHED_UCONTEXT) && !defined(__x86_64__)
#define KODO_SCHED_UCONTEXT 1
#endif
#ifdef KODO_SCHED_UCONTEXT
#include <ucontext.h>
typedef ucontext_t KCtx;
#else
typedef struct KCtx {
  void* sp;
} KCtx;
/* Saves rbp, rbx, r12-r15 on the current stack and its pointer in *save, then restores the
 * same from `to` and returns there (SysV: every other register is caller-saved). */
void kodo_rt_switch(void** save, void* to);
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl kodo_rt_switch\n"
    ".hidden kodo_rt_switch\n"
    ".type kodo_rt_switch,@function\n"
    "kodo_rt_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size kodo_rt_switch, .-kodo_rt_switch\n");
#endif

enum { KQ_NONE = 0, KQ_CHANNEL, KQ_SELECT, KQ_FUTURE, KQ_GROUP };

typedef struct KFuture {
  int done;
  KV value;
} KFuture;

typedef struct KTask {
  int64_t id;
  const char* origin; /* "main", "spawn", "parallel", "async", "message" */
  const char* fn;     /* for "async" and "message": the function */
  /* What the task runs: body(args, nargs), or the closure/function value `callee`. */
  KTramp body;
  KV* args;
  int nargs;
  KV callee;
  KFuture* future; /* async calls */
  int64_t group;   /* its `parallel` group, or -1 */
  int wait;
  int64_t wait_ids[3];
  int nwait;
  KFuture* wait_future;
  const char* where; /* the function it blocked in */
  int started;
  int64_t depth; /* kr_depth while switched out */
  char* stack;
  KCtx ctx;
} KTask;

typedef struct KChan {
  KV* items;
  int64_t head, n, cap;
  int freed;
} KChan;

typedef struct KGroup {
  KTask** queued;
  int64_t nqueued, cap;
  int64_t pending;
} KGroup;

/* A FIFO of tasks (ready and deferred). */
typedef struct KQueue {
  KTask** items;
  int64_t head, n, cap;
} KQueue;

const char* kr_where = "main";

static KTask kq_main_task = {.id = 0, .origin = "main", .group = -1, .started = 1};
static KTask* kq_cur = &kq_main_task;
static int64_t kq_next_id = 1;
static KQueue kq_ready, kq_deferred;
static KTask** kq_blocked; /* in the order they blocked */
static int64_t kq_nblocked, kq_blocked_cap;
static KChan* kq_chans;
static int64_t kq_nchans, kq_chans_cap;
static KGroup* kq_groups;
static int64_t kq_ngroups, kq_groups_cap;
static KCtx kq_home;          /* main's thread after `main` returned */
static KCtx kq_abandoned;     /* where a finished task's state goes */
static KTask* kq_dead = NULL; /* a finished task whose stack is still in use */
static char** kq_free_stacks; /* stacks of finished tasks, for reuse */
static int64_t kq_nfree, kq_free_cap;
static size_t kq_stack_size = 0;

static void* kq_grow(void* p, int64_t* cap, int64_t need, size_t elem) {
  if (need <= *cap) return p;
  int64_t c = *cap ? *cap * 2 : 16;
  while (c < need) c *= 2;
  void* q = realloc(p, (size_t)c * elem);
  if (!q) kr_trap(134, "out of memory");
  *cap = c;
  return q;
}
static void* kq_new(size_t n) {
  void* p = calloc(1, n);
  if (!p) kr_trap(134, "out of memory");
  return p;
}

static void kq_push(KQueue* q, KTask* t) {
  if (q->head > 0 && q->head + q->n == q->cap) {
    memmove(q->items, q->items + q->head, (size_t)q->n * sizeof(KTask*));
    q->head = 0;
  }
  q->items = (KTask**)kq_grow(q->items, &q->cap, q->head + q->n + 1, sizeof(KTask*));
  q->items[q->head + q->n++] = t;
}
static KTask* kq_pop(KQueue* q) {
  KTask* t = q->items[q->head++];
  if (--q->n == 0) q->head = 0;
  return t;
}

/* ---- channels (runtime.cc: Int handles from 0, unbounded queues) ------------------------- */

static KChan* kq_chan(KV h) {
  if (h.t != KT_INT || h.u.i < 0 || h.u.i >= kq_nchans) return NULL;
  KChan* c = &kq_chans[h.u.i];
  return c->freed ? NULL : c;
}
static int kq_valid(int64_t ch) { return ch >= 0 && ch < kq_nchans && !kq_chans[ch].freed; }
static int kq_has_value(int64_t ch) { return kq_valid(ch) && kq_chans[ch].n > 0; }

KV kb_channel_new(void) {
  kq_chans = (KChan*)kq_grow(kq_chans, &kq_chans_cap, kq_nchans + 1, sizeof(KChan));
  memset(&kq_chans[kq_nchans], 0, sizeof(KChan));
  return kv_int(kq_nchans++);
}
KV kb_channel_send(KV h, KV v) {
  /* Upstream's send to a closed or unknown channel is a silent no-op. */
  KChan* c = kq_chan(h);
  if (!c) return kv_unit();
  if (c->head > 0 && c->head + c->n == c->cap) {
    memmove(c->items, c->items + c->head, (size_t)c->n * sizeof(KV));
    c->head = 0;
  }
  c->items = (KV*)kq_grow(c->items, &c->cap, c->head + c->n + 1, sizeof(KV));
  c->items[c->head + c->n++] = v;
  return kv_unit();
}
KV kb_channel_free(KV h) {
  KChan* c = kq_chan(h);
  if (c) {
    c->head = c->n = 0;
    c->freed = 1;
  }
  return kv_unit();
}

/* ---- the scheduler ------------------------------------------------------------------------ */

static int kq_ready_to_run(const KTask* t) {
  switch (t->wait) {
    case KQ_CHANNEL:
      /* A receive from a channel freed meanwhile gives 0, as upstream's. */
      return !kq_valid(t->wait_ids[0]) || kq_has_value(t->wait_ids[0]);
    case KQ_SELECT:
      for (int i = 0; i < t->nwait; ++i)
        if (kq_has_value(t->wait_ids[i])) return 1;
      return 0;
    case KQ_FUTURE:
      return t->wait_future == NULL || t->wait_future->done;
    case KQ_GROUP:
      return kq_groups[t->wait_ids[0]].pending == 0;
    default:
      return 1;
  }
}

/* Appends `s` to the growable buffer (*p, *n, *cap). */
static void kq_append(char** p, size_t* n, size_t* cap, const char* s) {
  const size_t k = strlen(s);
  if (*n + k + 1 > *cap) {
    size_t c = *cap ? *cap * 2 : 256;
    while (c < *n + k + 1) c *= 2;
    char* q = (char*)realloc(*p, c);
    if (!q) kr_trap(134, "out of memory");
    *p = q;
    *cap = c;
  }
  memcpy(*p + *n, s, k + 1);
  *n += k;
}

static void kq_append_int(char** p, size_t* n, size_t* cap, int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  kq_append(p, n, cap, buf);
}

/* Machine::Schedule's deadlock trap, with Machine::Describe's line per blocked task. */
static void kq_deadlock(void) {
  char* msg = NULL;
  size_t n = 0, cap = 0;
  kq_append(&msg, &n, &cap, "deadlock: all ");
  kq_append_int(&msg, &n, &cap, kq_nblocked);
  kq_append(&msg, &n, &cap, " remaining tasks are blocked");
  for (int64_t i = 0; i < kq_nblocked; ++i) {
    const KTask* t = kq_blocked[i];
    kq_append(&msg, &n, &cap, "\n  task ");
    kq_append_int(&msg, &n, &cap, t->id);
    kq_append(&msg, &n, &cap, " (");
    kq_append(&msg, &n, &cap, t->origin);
    if (t->fn) {
      kq_append(&msg, &n, &cap, " `");
      kq_append(&msg, &n, &cap, t->fn);
      kq_append(&msg, &n, &cap, "`");
    }
    kq_append(&msg, &n, &cap, ") ");
    switch (t->wait) {
      case KQ_CHANNEL:
        kq_append(&msg, &n, &cap, "receiving from channel ");
        kq_append_int(&msg, &n, &cap, t->wait_ids[0]);
        break;
      case KQ_SELECT:
        kq_append(&msg, &n, &cap, "in a select over channels");
        for (int k = 0; k < t->nwait; ++k) {
          kq_append(&msg, &n, &cap, k == 0 ? " " : ", ");
          kq_append_int(&msg, &n, &cap, t->wait_ids[k]);
        }
        break;
      case KQ_FUTURE:
        kq_append(&msg, &n, &cap, "awaiting a future");
        break;
      case KQ_GROUP:
        kq_append(&msg, &n, &cap, "joining a parallel block");
        break;
      default:
        kq_append(&msg, &n, &cap, "running");
        break;
    }
    kq_append(&msg, &n, &cap, " in function `");
    kq_append(&msg, &n, &cap, t->where ? t->where : "?");
    kq_append(&msg, &n, &cap, "`");
  }
  kr_trap(134, msg);
}

/* The next task to run (Machine::Schedule), or NULL when none is left; traps on a deadlock. */
static KTask* kq_pick(void) {
  for (int64_t i = 0; i < kq_nblocked; ++i) {
    KTask* t = kq_blocked[i];
    if (kq_ready_to_run(t)) {
      memmove(kq_blocked + i, kq_blocked + i + 1, (size_t)(kq_nblocked - i - 1) * sizeof(KTask*));
      --kq_nblocked;
      t->wait = KQ_NONE;
      t->wait_future = NULL;
      return t;
    }
  }
  if (kq_ready.n > 0) return kq_pop(&kq_ready);
  if (kq_deferred.n > 0) return kq_pop(&kq_deferred);
  if (kq_nblocked > 0) kq_deadlock();
  return NULL;
}

/* Recycles the stack of the task that finished before this switch. */
static void kq_reap(void) {
  if (!kq_dead) return;
  kq_free_stacks = (char**)kq_grow(kq_free_stacks, &kq_free_cap, kq_nfree + 1, sizeof(char*));
  kq_free_stacks[kq_nfree++] = kq_dead->stack;
  kq_dead->stack = NULL;
  kq_dead = NULL;
}

/* A task's stack: as large as main's (KR_MAX_FRAMES nested calls fit), reserved lazily by the
 * kernel, with a guard page at its end. */
static char* kq_stack(void) {
  if (kq_nfree > 0) return kq_free_stacks[--kq_nfree];
  static const size_t kSizes[] = {(size_t)1 << 31, (size_t)1 << 28, (size_t)1 << 24};
  for (size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; ++i) {
    if (kq_stack_size != 0 && kSizes[i] != kq_stack_size) continue;
    void* p = mmap(NULL, kSizes[i], PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) {
      if (kq_stack_size != 0) break;
      continue;
    }
    mprotect(p, 4096, PROT_NONE);
    kq_stack_size = kSizes[i];
    return (char*)p;
  }
  kr_trap(134, "out of memory: no stack for a new task");
}

static void kq_finish_current(KV result);

static void kq_entry(void) {
  kq_reap();
  KTask* t = kq_cur;
  KV r = t->body ? t->body(t->args, t->nargs) : kr_call_value(t->callee, 0, NULL);
  kq_finish_current(r);
}

/* Makes `c` start kq_entry on `stack`. */
static void kq_ctx_make(KCtx* c, char* stack, size_t size) {
#ifdef KODO_SCHED_UCONTEXT
  getcontext(c);
  c->uc_stack.ss_sp = stack;
  c->uc_stack.ss_size = size;
  c->uc_link = NULL;
  makecontext(c, kq_entry, 0);
#else
  /* The frame kodo_rt_switch pops: six registers, then kq_entry as the return address, then
   * a null return address for kq_entry, which never returns. At kq_entry's first instruction
   * the stack pointer is 8 mod 16, as after a call. */
  void** frame = (void**)((((uintptr_t)(stack + size)) & ~(uintptr_t)15) - 8 * sizeof(void*));
  for (int i = 0; i < 6; ++i) frame[i] = NULL;
  frame[6] = (void*)kq_entry;
  frame[7] = NULL;
  c->sp = frame;
#endif
}

static void kq_ctx_swap(KCtx* save, KCtx* to) {
#ifdef KODO_SCHED_UCONTEXT
  swapcontext(save, to);
#else
  kodo_rt_switch(&save->sp, to->sp);
#endif
}

/* Switches from the current context (saved in `save`, or abandoned when NULL) to `next`. */
static void kq_resume(KCtx* save, KTask* next) {
  kq_cur = next;
  kr_depth = next->depth;
  if (!next->started) {
    next->started = 1;
    next->stack = kq_stack();
    kq_ctx_make(&next->ctx, next->stack, kq_stack_size);
  }
  kq_ctx_swap(save ? save : &kq_abandoned, &next->ctx);
  kq_reap();
}

/* Machine::Finish, then the next task; after the last one, back to main's thread. */
static void kq_finish_current(KV result) {
  KTask* t = kq_cur;
  if (t->future) {
    t->future->done = 1;
    t->future->value = result;
  }
  if (t->group >= 0) --kq_groups[t->group].pending;
  kq_dead = t;
  KTask* next = kq_pick();
  if (next) kq_resume(NULL, next);
  /* No task is left: `main` has returned (it would be blocked or ready otherwise). */
  kq_cur = &kq_main_task;
  kr_depth = 0;
  kq_ctx_swap(&kq_abandoned, &kq_home);
  kr_trap(134, "native runtime: could not return to the main thread");
}

/* The current task stopped (it is queued as blocked or ready): runs the next one. */
static void kq_switch(void) {
  KTask* me = kq_cur;
  me->depth = kr_depth;
  KTask* next = kq_pick();
  if (next == me || next == NULL) {
    kr_depth = me->depth;
    return;
  }
  kq_resume(&me->ctx, next);
  /* Resumed: kq_resume set kq_cur and kr_depth. */
}

static void kq_block(int wait, const int64_t* ids, int nids, KFuture* future) {
  KTask* me = kq_cur;
  me->wait = wait;
  me->nwait = nids;
  for (int i = 0; i < nids && i < 3; ++i) me->wait_ids[i] = ids[i];
  me->wait_future = future;
  me->where = kr_where;
  kq_blocked = (KTask**)kq_grow(kq_blocked, &kq_blocked_cap, kq_nblocked + 1, sizeof(KTask*));
  kq_blocked[kq_nblocked++] = me;
  kq_switch();
}

static KTask* kq_new_task(const char* origin, const char* fn) {
  KTask* t = (KTask*)kq_new(sizeof(KTask));
  t->id = kq_next_id++;
  t->origin = origin;
  t->fn = fn;
  t->group = -1;
  t->callee = kv_unit();
  return t;
}

/* Machine::StartTask: a task that calls `callee` (a closure or function value) with no
 * arguments. */
static KTask* kq_start_task(KV callee, const char* origin) {
  KTask* t = kq_new_task(origin, NULL);
  if (callee.t != KT_FUNC && callee.t != KT_CLOSURE)
    kr_trap(134, "spawn of a value that is not a function");
  t->callee = callee;
  return t;
}

KV kr_sched_call(KTramp body, const char* fn, int is_async, int n, const KV* args) {
  KTask* t = kq_new_task(is_async ? "async" : "message", fn);
  t->body = body;
  t->nargs = n;
  if (n > 0) {
    t->args = (KV*)kq_new((size_t)n * sizeof(KV));
    memcpy(t->args, args, (size_t)n * sizeof(KV));
  }
  if (is_async) {
    /* An async call starts a task and gives its future (docs/kodo.md §4.9). */
    t->future = (KFuture*)kq_new(sizeof(KFuture));
    kq_push(&kq_ready, t);
    return kv_obj(KT_FUTURE, t->future);
  }
  /* An actor handler call queues a message; messages run when nothing else can. */
  kq_push(&kq_deferred, t);
  return kv_unit();
}

void kr_sched_main_done(void) {
  kq_main_task.depth = kr_depth;
  KTask* next = kq_pick();
  if (next) kq_resume(&kq_home, next);
}

void kr_sched_yield(void) {
  kq_push(&kq_ready, kq_cur);
  kq_switch();
}

KV kb_yield(void) {
  kr_sched_yield();
  return kv_unit();
}

KV kb_spawn(KV callee) {
  kq_push(&kq_deferred, kq_start_task(callee, "spawn"));
  return kv_unit();
}

KV kb_parallel_begin(void) {
  kq_groups = (KGroup*)kq_grow(kq_groups, &kq_groups_cap, kq_ngroups + 1, sizeof(KGroup));
  memset(&kq_groups[kq_ngroups], 0, sizeof(KGroup));
  return kv_int(kq_ngroups++);
}

KV kb_parallel_spawn(KV group, KV callee) {
  if (group.t != KT_INT || group.u.i < 0 || group.u.i >= kq_ngroups)
    kr_trap(134, "`kodo_parallel_spawn` without a parallel group");
  KTask* t = kq_start_task(callee, "parallel");
  t->group = group.u.i;
  KGroup* g = &kq_groups[group.u.i];
  g->queued = (KTask**)kq_grow(g->queued, &g->cap, g->nqueued + 1, sizeof(KTask*));
  g->queued[g->nqueued++] = t;
  ++g->pending;
  return kv_unit();
}

KV kb_parallel_join(KV group) {
  if (group.t != KT_INT || group.u.i < 0 || group.u.i >= kq_ngroups)
    kr_trap(134, "`kodo_parallel_join` without a parallel group");
  for (;;) {
    KGroup* g = &kq_groups[group.u.i];
    /* The group's tasks start at the join, in spawn order, before any deferred task. */
    for (int64_t i = 0; i < g->nqueued; ++i) kq_push(&kq_ready, g->queued[i]);
    g->nqueued = 0;
    if (g->pending == 0) return kv_unit();
    kq_block(KQ_GROUP, &group.u.i, 1, NULL);
  }
}

KV kb_await(KV v) {
  if (v.t != KT_FUTURE) return v;
  KFuture* f = (KFuture*)v.u.p;
  while (!f->done) kq_block(KQ_FUTURE, NULL, 0, f);
  return f->value;
}

KV kb_channel_recv(KV h) {
  for (;;) {
    KChan* c = kq_chan(h);
    if (!c) return kv_int(0); /* upstream: 0 from an unknown channel */
    if (c->n > 0) {
      KV v = c->items[c->head++];
      if (--c->n == 0) c->head = 0;
      return v;
    }
    kq_block(KQ_CHANNEL, &h.u.i, 1, NULL);
  }
}

static KV kq_select(int n, const KV* chans) {
  int64_t ids[3];
  for (;;) {
    for (int i = 0; i < n; ++i) {
      const int64_t h = chans[i].t == KT_INT ? chans[i].u.i : -1;
      ids[i] = h;
      if (h >= 0 && h < kq_nchans && kq_chans[h].n > 0) return kv_int(i);
    }
    kq_block(KQ_SELECT, ids, n, NULL);
  }
}
KV kb_channel_select_2(KV a, KV b) {
  const KV chans[2] = {a, b};
  return kq_select(2, chans);
}
KV kb_channel_select_3(KV a, KV b, KV c) {
  const KV chans[3] = {a, b, c};
  return kq_select(3, chans);
}
