/* The Kōdo native runtime; see kodo_rt.h. Each builtin mirrors the interpreter's
 * (src/kodo/interp/runtime.cc) of the same name: keep the two in step. */
#define _GNU_SOURCE
#include "kodo_rt.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int64_t kr_depth = 0;
static uint64_t kr_rng = 0x2545F4914F6CDD1DULL;
static int kr_argc = 0;
static char** kr_argv = NULL;

/* ---- memory: a bump allocator; objects live until the process ends ---------------------- */

static char* kr_chunk = NULL;
static size_t kr_chunk_left = 0;

static void* kr_oom(void) {
  fflush(stdout);
  fputs("out of memory\n", stderr);
  _exit(134);
}

static void* kr_alloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n > 65536) {
    void* p = malloc(n);
    return p ? p : kr_oom();
  }
  if (n > kr_chunk_left) {
    /* Chunks double from 1 MiB to 64 MiB; from 4 MiB on they ask for transparent huge pages,
     * so an allocation-heavy program takes one page fault per 2 MiB rather than per 4 KiB. */
    static size_t next = 1u << 20;
    void* c = mmap(NULL, next, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED) return kr_oom();
#ifdef MADV_HUGEPAGE
    if (next >= (4u << 20)) madvise(c, next, MADV_HUGEPAGE);
#endif
    kr_chunk = (char*)c;
    kr_chunk_left = next;
    if (next < (64u << 20)) next *= 2;
  }
  void* p = kr_chunk;
  kr_chunk += n;
  kr_chunk_left -= n;
  return p;
}

static void* kr_realloc(void* p, size_t n) {
  void* q = realloc(p, n);
  return q ? q : kr_oom();
}

/* ---- output and traps --------------------------------------------------------------------- */

static void kr_out(const char* s, size_t n) { fwrite(s, 1, n, stdout); }
static void kr_outs(const char* s) { kr_out(s, strlen(s)); }

void kr_trap(int code, const char* message) {
  fflush(stdout);
  if (message && *message) {
    fputs(message, stderr);
    fputc('\n', stderr);
  }
  fflush(stderr);
  _exit(code);
}

static void kr_trapf(int code, const char* fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
#include <stdarg.h>
static void kr_trapf(int code, const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  kr_trap(code, buf);
}

void kr_div_zero(int is_mod) {
  kr_trap(136, is_mod ? "attempt to calculate the remainder with a divisor of zero"
                      : "attempt to divide by zero");
}
void kr_div_overflow(int is_mod) {
  kr_trap(136, is_mod ? "attempt to calculate the remainder with overflow"
                      : "attempt to divide with overflow");
}
void kr_stack_overflow(const char* fn) {
  kr_trapf(134, "stack overflow: more than %d nested calls (in function `%s`)", KR_MAX_FRAMES, fn);
}
void kr_unreachable(const char* fn) {
  kr_trapf(134, "entered unreachable code in function `%s`", fn);
}
void kr_no_function_value(const char* fn) { kr_trapf(134, "function `%s` as a value", fn); }
void kr_type_mismatch(const char* want, KV v) {
  kr_trapf(134, "native build: expected a value of type %s, found %s", want, kr_type_name(v));
}
void kr_few_args(const char* name) {
  kr_trapf(134, "builtin `%s` called with too few arguments", name);
}

/* ---- strings ------------------------------------------------------------------------------ */

static KStr* kr_str_alloc(size_t n) {
  KStr* s = (KStr*)kr_alloc(sizeof(KStr) + n + 1);
  s->len = (int64_t)n;
  s->data[n] = 0;
  return s;
}
static KV kr_str(const char* p, size_t n) {
  KStr* s = kr_str_alloc(n);
  memcpy(s->data, p, n);
  return kv_obj(KT_STR, s);
}
static KV kr_cstr(const char* p) { return kr_str(p, strlen(p)); }
static const KStr kr_empty_str = {0};
static const KStr* kv_s(KV v) { return v.t == KT_STR ? (const KStr*)v.u.p : &kr_empty_str; }
/* The interpreter's RValue keeps an integer and a double apart; a value of another type reads
 * as 0 there. */
static int64_t kv_i(KV v) {
  return (v.t == KT_INT || v.t == KT_BOOL || v.t == KT_FUNC) ? v.u.i : 0;
}
static double kv_f(KV v) { return v.t == KT_FLOAT ? v.u.f : 0; }

/* A growable byte buffer (text building). */
typedef struct KBuf {
  char* p;
  size_t n, cap;
} KBuf;
static void kb_put(KBuf* b, const char* s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t c = b->cap ? b->cap * 2 : 64;
    while (c < b->n + n + 1) c *= 2;
    b->p = (char*)kr_realloc(b->p, c);
    b->cap = c;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}
static void kb_puts(KBuf* b, const char* s) { kb_put(b, s, strlen(s)); }
static KV kb_take(KBuf* b) {
  KV v = kr_str(b->p ? b->p : "", b->n);
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
  return v;
}

/* Rust's Display for f64: shortest round-trip digits, never an exponent. */
static void kr_format_float(double x, char* out, size_t cap) {
  if (isnan(x)) {
    snprintf(out, cap, "NaN");
    return;
  }
  if (isinf(x)) {
    snprintf(out, cap, x < 0 ? "-inf" : "inf");
    return;
  }
  if (x == 0) {
    snprintf(out, cap, signbit(x) ? "-0" : "0");
    return;
  }
  char sci[64];
  for (int prec = 0; prec < 17; ++prec) {
    snprintf(sci, sizeof sci, "%.*e", prec, x);
    if (strtod(sci, NULL) == x) break;
  }
  const char* p = sci;
  int neg = 0;
  if (*p == '-') {
    neg = 1;
    ++p;
  }
  char digits[40];
  int nd = 0;
  const char* e = strchr(p, 'e');
  for (const char* q = p; q < e; ++q)
    if (*q != '.') digits[nd++] = *q;
  digits[nd] = 0;
  const int exp = atoi(e + 1);
  const int point = exp + 1;
  char* o = out;
  char* end = out + cap - 1;
  if (neg && o < end) *o++ = '-';
  if (point <= 0) {
    if (o < end) *o++ = '0';
    if (o < end) *o++ = '.';
    for (int i = 0; i < -point && o < end; ++i) *o++ = '0';
    for (int i = 0; i < nd && o < end; ++i) *o++ = digits[i];
  } else if (point >= nd) {
    for (int i = 0; i < nd && o < end; ++i) *o++ = digits[i];
    for (int i = nd; i < point && o < end; ++i) *o++ = '0';
  } else {
    for (int i = 0; i < point && o < end; ++i) *o++ = digits[i];
    if (o < end) *o++ = '.';
    for (int i = point; i < nd && o < end; ++i) *o++ = digits[i];
  }
  *o = 0;
}

/* ---- collections -------------------------------------------------------------------------- */

typedef struct KList {
  int64_t n, cap;
  KV* items;
} KList;

static KList* kr_list_alloc(void) {
  KList* l = (KList*)kr_alloc(sizeof(KList));
  l->n = l->cap = 0;
  l->items = NULL;
  return l;
}
static void kr_list_push(KList* l, KV v) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 4;
    l->items = (KV*)kr_realloc(l->items, (size_t)l->cap * sizeof(KV));
  }
  l->items[l->n++] = v;
}
static KV kr_new_list(void) { return kv_obj(KT_LIST, kr_list_alloc()); }

/* Maps and sets: insertion-ordered arrays plus an open-addressing index (docs/decisions/0062:
 * keys are equal when the interpreter's key strings are: Int, String, Bool and Float by value,
 * anything else by its text). */
typedef struct KMap {
  int64_t n, cap;
  KV* keys;
  KV* vals;
  int64_t* slots; /* -1 empty; else position */
  int64_t nslots;
} KMap;

static void kr_text(KV v, KBuf* b, int depth);

static uint64_t kr_hash_bytes(const char* p, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; ++i) {
    h ^= (unsigned char)p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}
static uint64_t kr_mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}
static uint64_t kr_key_hash(KV k) {
  switch (k.t) {
    case KT_INT:
      return kr_mix((uint64_t)k.u.i);
    case KT_STR: {
      const KStr* s = kv_s(k);
      return kr_hash_bytes(s->data, (size_t)s->len, 0xcbf29ce484222325ULL);
    }
    case KT_BOOL:
      return 0x9e37 + (uint64_t)k.u.i;
    case KT_FLOAT: {
      if (isnan(k.u.f)) return signbit(k.u.f) ? 7 : 11;
      uint64_t b;
      memcpy(&b, &k.u.f, sizeof b);
      return kr_mix(b ^ 0x5555);
    }
    default: {
      KBuf b = {0};
      kr_text(k, &b, 0);
      uint64_t h = kr_hash_bytes(b.p ? b.p : "", b.n, 0x84222325ULL);
      free(b.p);
      return h;
    }
  }
}
static int kr_key_class(KV k) {
  return k.t == KT_INT || k.t == KT_STR || k.t == KT_BOOL || k.t == KT_FLOAT ? (int)k.t : -1;
}
static int kr_key_eq(KV a, KV b) {
  const int ca = kr_key_class(a), cb = kr_key_class(b);
  if (ca != cb) return 0;
  switch (ca) {
    case KT_INT:
    case KT_BOOL:
      return a.u.i == b.u.i;
    case KT_STR: {
      const KStr *x = kv_s(a), *y = kv_s(b);
      return x->len == y->len && memcmp(x->data, y->data, (size_t)x->len) == 0;
    }
    case KT_FLOAT:
      if (isnan(a.u.f) || isnan(b.u.f))
        return isnan(a.u.f) && isnan(b.u.f) && signbit(a.u.f) == signbit(b.u.f);
      return memcmp(&a.u.f, &b.u.f, sizeof(double)) == 0;
    default: {
      KBuf x = {0}, y = {0};
      kr_text(a, &x, 0);
      kr_text(b, &y, 0);
      const int eq = x.n == y.n && (x.n == 0 || memcmp(x.p, y.p, x.n) == 0);
      free(x.p);
      free(y.p);
      return eq;
    }
  }
}

static KMap* kr_map_alloc(void) {
  KMap* m = (KMap*)kr_alloc(sizeof(KMap));
  memset(m, 0, sizeof *m);
  return m;
}
static void kr_map_reindex(KMap* m, int64_t nslots) {
  free(m->slots);
  m->nslots = nslots;
  m->slots = (int64_t*)kr_realloc(NULL, (size_t)nslots * sizeof(int64_t));
  for (int64_t i = 0; i < nslots; ++i) m->slots[i] = -1;
  for (int64_t i = 0; i < m->n; ++i) {
    uint64_t h = kr_key_hash(m->keys[i]) & (uint64_t)(nslots - 1);
    while (m->slots[h] >= 0) h = (h + 1) & (uint64_t)(nslots - 1);
    m->slots[h] = i;
  }
}
static int64_t kr_map_find(const KMap* m, KV k) {
  if (m->n == 0) return -1;
  uint64_t h = kr_key_hash(k) & (uint64_t)(m->nslots - 1);
  while (m->slots[h] >= 0) {
    if (kr_key_eq(m->keys[m->slots[h]], k)) return m->slots[h];
    h = (h + 1) & (uint64_t)(m->nslots - 1);
  }
  return -1;
}
static void kr_map_put(KMap* m, KV k, KV v) {
  const int64_t at = kr_map_find(m, k);
  if (at >= 0) {
    m->vals[at] = v;
    return;
  }
  if (m->n == m->cap) {
    m->cap = m->cap ? m->cap * 2 : 8;
    m->keys = (KV*)kr_realloc(m->keys, (size_t)m->cap * sizeof(KV));
    m->vals = (KV*)kr_realloc(m->vals, (size_t)m->cap * sizeof(KV));
  }
  m->keys[m->n] = k;
  m->vals[m->n] = v;
  m->n++;
  if (m->n * 2 > m->nslots) {
    kr_map_reindex(m, m->nslots ? m->nslots * 2 : 16);
  } else {
    uint64_t h = kr_key_hash(k) & (uint64_t)(m->nslots - 1);
    while (m->slots[h] >= 0) h = (h + 1) & (uint64_t)(m->nslots - 1);
    m->slots[h] = m->n - 1;
  }
}
static int kr_map_del(KMap* m, KV k) {
  const int64_t at = kr_map_find(m, k);
  if (at < 0) return 0;
  memmove(m->keys + at, m->keys + at + 1, (size_t)(m->n - at - 1) * sizeof(KV));
  memmove(m->vals + at, m->vals + at + 1, (size_t)(m->n - at - 1) * sizeof(KV));
  m->n--;
  kr_map_reindex(m, m->nslots);
  return 1;
}

typedef struct KIter {
  KList* src;
  int64_t next;
  KV current;
} KIter;

typedef struct KClosure {
  int64_t fn;
  int64_t ncaps;
  KV caps[];
} KClosure;

typedef struct KBuilder {
  KBuf b;
} KBuilder;

/* ---- text, equality, type names ------------------------------------------------------------ */

const char* kr_type_name(KV v) {
  switch (v.t) {
    case KT_INT:
      return "Int";
    case KT_FLOAT:
      return "Float64";
    case KT_BOOL:
      return "Bool";
    case KT_STR:
      return "String";
    case KT_LIST:
      return "List";
    case KT_MAP:
      return "Map";
    case KT_SET:
      return "Set";
    case KT_STRUCT:
      return ((KStruct*)v.u.p)->d->name;
    case KT_ENUM:
      return ((KEnum*)v.u.p)->d->enum_name;
    case KT_TUPLE:
      return "Tuple";
    default:
      return "?";
  }
}

static void kr_text(KV v, KBuf* b, int depth) {
  char buf[64];
  if (depth > 1000) {
    kb_puts(b, "...");
    return;
  }
  switch (v.t) {
    case KT_UNIT:
      kb_puts(b, "()");
      return;
    case KT_INT:
      snprintf(buf, sizeof buf, "%" PRId64, v.u.i);
      kb_puts(b, buf);
      return;
    case KT_FLOAT:
      kr_format_float(v.u.f, buf, sizeof buf);
      kb_puts(b, buf);
      return;
    case KT_BOOL:
      kb_puts(b, v.u.i ? "true" : "false");
      return;
    case KT_STR:
      kb_put(b, kv_s(v)->data, (size_t)kv_s(v)->len);
      return;
    case KT_LIST:
    case KT_TUPLE: {
      KList* l = (KList*)v.u.p;
      kb_puts(b, v.t == KT_LIST ? "[" : "(");
      for (int64_t i = 0; i < l->n; ++i) {
        if (i > 0) kb_puts(b, ", ");
        kr_text(l->items[i], b, depth + 1);
      }
      kb_puts(b, v.t == KT_LIST ? "]" : ")");
      return;
    }
    case KT_STRUCT: {
      KStruct* s = (KStruct*)v.u.p;
      kb_puts(b, s->d->name);
      kb_puts(b, " { ");
      for (int i = 0; i < s->d->nfields; ++i) {
        if (i > 0) kb_puts(b, ", ");
        kb_puts(b, s->d->fields[i]);
        kb_puts(b, ": ");
        kr_text(s->fields[i], b, depth + 1);
      }
      kb_puts(b, " }");
      return;
    }
    case KT_ENUM: {
      KEnum* e = (KEnum*)v.u.p;
      kb_puts(b, e->d->variant);
      if (e->n > 0) {
        kb_puts(b, "(");
        for (int64_t i = 0; i < e->n; ++i) {
          if (i > 0) kb_puts(b, ", ");
          kr_text(e->payload[i], b, depth + 1);
        }
        kb_puts(b, ")");
      }
      return;
    }
    case KT_BUILDER: {
      KBuilder* sb = (KBuilder*)v.u.p;
      kb_put(b, sb->b.p ? sb->b.p : "", sb->b.n);
      return;
    }
    default:
      kb_puts(b, "<handle>");
      return;
  }
}

static KV kr_to_text(KV v) {
  if (v.t == KT_STR) return v;
  KBuf b = {0};
  kr_text(v, &b, 0);
  return kb_take(&b);
}

static int kr_equal_at(KV a, KV b, int depth) {
  if (depth > 1000) return 0;
  if (a.t != b.t) return 0;
  switch (a.t) {
    case KT_UNIT:
      return 1;
    case KT_INT:
    case KT_BOOL:
    case KT_FUNC:
      return a.u.i == b.u.i;
    case KT_FLOAT:
      return a.u.f == b.u.f;
    case KT_STR: {
      const KStr *x = kv_s(a), *y = kv_s(b);
      return x->len == y->len && memcmp(x->data, y->data, (size_t)x->len) == 0;
    }
    case KT_LIST:
    case KT_TUPLE: {
      KList *x = (KList*)a.u.p, *y = (KList*)b.u.p;
      if (x->n != y->n) return 0;
      for (int64_t i = 0; i < x->n; ++i)
        if (!kr_equal_at(x->items[i], y->items[i], depth + 1)) return 0;
      return 1;
    }
    case KT_STRUCT: {
      KStruct *x = (KStruct*)a.u.p, *y = (KStruct*)b.u.p;
      if (strcmp(x->d->name, y->d->name) != 0 || x->d->nfields != y->d->nfields) return 0;
      for (int i = 0; i < x->d->nfields; ++i)
        if (!kr_equal_at(x->fields[i], y->fields[i], depth + 1)) return 0;
      return 1;
    }
    case KT_ENUM: {
      KEnum *x = (KEnum*)a.u.p, *y = (KEnum*)b.u.p;
      if (x->disc != y->disc || x->n != y->n) return 0;
      for (int64_t i = 0; i < x->n; ++i)
        if (!kr_equal_at(x->payload[i], y->payload[i], depth + 1)) return 0;
      return 1;
    }
    default:
      return a.u.p == b.u.p;
  }
}
static int kr_equal(KV a, KV b) { return kr_equal_at(a, b, 0); }

static int kr_str_cmp(KV a, KV b) {
  const KStr *x = kv_s(a), *y = kv_s(b);
  const size_t n = (size_t)(x->len < y->len ? x->len : y->len);
  const int c = memcmp(x->data, y->data, n);
  if (c != 0) return c < 0 ? -1 : 1;
  return x->len < y->len ? -1 : x->len > y->len ? 1 : 0;
}

/* ---- operators ----------------------------------------------------------------------------- */

enum {
  OP_ADD,
  OP_SUB,
  OP_MUL,
  OP_DIV,
  OP_MOD,
  OP_EQ,
  OP_NE,
  OP_LT,
  OP_GT,
  OP_LE,
  OP_GE,
  OP_AND,
  OP_OR
};

KV kr_binop(int op, KV a, KV b) {
  if (a.t == KT_INT && b.t == KT_INT) {
    const int64_t x = a.u.i, y = b.u.i;
    switch (op) {
      case OP_ADD:
        return kv_int(kr_wadd(x, y));
      case OP_SUB:
        return kv_int(kr_wsub(x, y));
      case OP_MUL:
        return kv_int(kr_wmul(x, y));
      case OP_DIV:
        return kv_int(kr_div(x, y));
      case OP_MOD:
        return kv_int(kr_mod(x, y));
      case OP_EQ:
        return kv_bool(x == y);
      case OP_NE:
        return kv_bool(x != y);
      case OP_LT:
        return kv_bool(x < y);
      case OP_GT:
        return kv_bool(x > y);
      case OP_LE:
        return kv_bool(x <= y);
      case OP_GE:
        return kv_bool(x >= y);
      default:
        break;
    }
  }
  if (a.t == KT_FLOAT && b.t == KT_FLOAT) {
    const double x = a.u.f, y = b.u.f;
    switch (op) {
      case OP_ADD:
        return kv_float(x + y);
      case OP_SUB:
        return kv_float(x - y);
      case OP_MUL:
        return kv_float(x * y);
      case OP_DIV:
        return kv_float(x / y);
      case OP_MOD:
        return kv_float(fmod(x, y));
      case OP_EQ:
        return kv_bool(x == y);
      case OP_NE:
        return kv_bool(x != y);
      case OP_LT:
        return kv_bool(x < y);
      case OP_GT:
        return kv_bool(x > y);
      case OP_LE:
        return kv_bool(x <= y);
      case OP_GE:
        return kv_bool(x >= y);
      default:
        break;
    }
  }
  if (a.t == KT_STR && b.t == KT_STR) {
    switch (op) {
      case OP_ADD: {
        const KStr *x = kv_s(a), *y = kv_s(b);
        KStr* s = kr_str_alloc((size_t)(x->len + y->len));
        memcpy(s->data, x->data, (size_t)x->len);
        memcpy(s->data + x->len, y->data, (size_t)y->len);
        return kv_obj(KT_STR, s);
      }
      case OP_EQ:
        return kv_bool(kr_str_cmp(a, b) == 0);
      case OP_NE:
        return kv_bool(kr_str_cmp(a, b) != 0);
      case OP_LT:
        return kv_bool(kr_str_cmp(a, b) < 0);
      case OP_GT:
        return kv_bool(kr_str_cmp(a, b) > 0);
      case OP_LE:
        return kv_bool(kr_str_cmp(a, b) <= 0);
      case OP_GE:
        return kv_bool(kr_str_cmp(a, b) >= 0);
      default:
        break;
    }
  }
  switch (op) {
    case OP_AND:
      return kv_bool(kv_truthy(a) && kv_truthy(b));
    case OP_OR:
      return kv_bool(kv_truthy(a) || kv_truthy(b));
    case OP_EQ:
      return kv_bool(kr_equal(a, b));
    case OP_NE:
      return kv_bool(!kr_equal(a, b));
    default:
      break;
  }
  kr_trapf(134, "unsupported operands for a binary operator: %s and %s", kr_type_name(a),
           kr_type_name(b));
}

KV kr_neg(KV a) {
  if (a.t == KT_FLOAT) return kv_float(-a.u.f);
  return kv_int(kr_wneg(kv_i(a)));
}

/* ---- structs, enums, tuples, closures -------------------------------------------------------- */

KV kr_struct_new(const KStructDesc* d, int n, const KV* fields) {
  KStruct* s = (KStruct*)kr_alloc(sizeof(KStruct) + (size_t)n * sizeof(KV));
  s->d = d;
  if (n > 0) memcpy(s->fields, fields, (size_t)n * sizeof(KV));
  return kv_obj(KT_STRUCT, s);
}
KV kr_field(KV obj, int fid, const char* field) {
  if (obj.t != KT_STRUCT) kr_trapf(134, "field `%s` of a non-struct value", field);
  KStruct* s = (KStruct*)obj.u.p;
  const int slot = s->d->slot_of[fid];
  if (slot < 0) kr_trapf(134, "struct `%s` has no field `%s`", s->d->name, field);
  return s->fields[slot];
}
KV kr_enum_new(const KEnumDesc* d, int64_t disc, int n, const KV* payload) {
  KEnum* e = (KEnum*)kr_alloc(sizeof(KEnum) + (size_t)n * sizeof(KV));
  e->d = d;
  e->disc = disc;
  e->n = n;
  if (n > 0) memcpy(e->payload, payload, (size_t)n * sizeof(KV));
  return kv_obj(KT_ENUM, e);
}
int64_t kr_enum_disc(KV v) {
  if (v.t != KT_ENUM) kr_trap(134, "discriminant of a non-enum value");
  return ((KEnum*)v.u.p)->disc;
}
KV kr_enum_payload(KV v, int64_t i) {
  if (v.t != KT_ENUM) kr_trap(134, "payload of a non-enum value");
  KEnum* e = (KEnum*)v.u.p;
  if (i < 0 || i >= e->n) kr_trapf(134, "variant `%s` has no payload %" PRId64, e->d->variant, i);
  return e->payload[i];
}
KV kr_tuple_new(int n, const KV* items) {
  KList* l = kr_list_alloc();
  for (int i = 0; i < n; ++i) kr_list_push(l, items[i]);
  return kv_obj(KT_TUPLE, l);
}
KV kr_tuple_get(KV v, int64_t i) {
  if (v.t != KT_TUPLE) kr_trap(134, "tuple index of a non-tuple value");
  KList* l = (KList*)v.u.p;
  if (i < 0 || i >= l->n) kr_trap(134, "tuple index out of range");
  return l->items[i];
}
KV kr_closure_new(KV fn, int ncaps, const KV* caps) {
  KClosure* c = (KClosure*)kr_alloc(sizeof(KClosure) + (size_t)ncaps * sizeof(KV));
  c->fn = kv_i(fn);
  c->ncaps = ncaps;
  if (ncaps > 0) memcpy(c->caps, caps, (size_t)ncaps * sizeof(KV));
  return kv_obj(KT_CLOSURE, c);
}
KV kr_call_value(KV callee, int n, const KV* args) {
  if (callee.t == KT_FUNC) return kr_funcs[callee.u.i]((KV*)args, n);
  if (callee.t == KT_CLOSURE) {
    KClosure* c = (KClosure*)callee.u.p;
    const int total = (int)c->ncaps + n;
    KV stack_all[16];
    KV* all = total <= 16 ? stack_all : (KV*)kr_alloc((size_t)total * sizeof(KV));
    memcpy(all, c->caps, (size_t)c->ncaps * sizeof(KV));
    if (n > 0) memcpy(all + c->ncaps, args, (size_t)n * sizeof(KV));
    return kr_funcs[c->fn](all, total);
  }
  kr_trap(134, "call of a value that is not a function");
}
void kr_no_method(const char* method, KV recv) {
  kr_trapf(134, "no method `%s` on type `%s`", method, kr_type_name(recv));
}

/* ---- builtins: printing and math ------------------------------------------------------------ */

KV kb_println(KV a) {
  if (a.t == KT_STR) {
    kr_out(kv_s(a)->data, (size_t)kv_s(a)->len);
  } else {
    KBuf b = {0};
    kr_text(a, &b, 0);
    kr_out(b.p ? b.p : "", b.n);
    free(b.p);
  }
  kr_out("\n", 1);
  return kv_unit();
}
KV kb_print(KV a) {
  KBuf b = {0};
  kr_text(a, &b, 0);
  kr_out(b.p ? b.p : "", b.n);
  free(b.p);
  return kv_unit();
}
KV kb_print_int(KV a) {
  char buf[32];
  const int n = snprintf(buf, sizeof buf, "%" PRId64 "\n", kv_i(a));
  kr_out(buf, (size_t)n);
  return kv_unit();
}
KV kb_print_float(KV a) {
  char buf[64];
  kr_format_float(kv_f(a), buf, sizeof buf);
  kr_outs(buf);
  return kv_unit();
}
KV kb_println_float(KV a) {
  kb_print_float(a);
  kr_out("\n", 1);
  return kv_unit();
}
KV kb_to_string(KV a) { return kr_to_text(a); }
KV kb_abs(KV a) {
  const int64_t x = kv_i(a);
  return kv_int(x < 0 ? kr_wneg(x) : x);
}
KV kb_min(KV a, KV b) { return kv_int(kv_i(a) < kv_i(b) ? kv_i(a) : kv_i(b)); }
KV kb_max(KV a, KV b) { return kv_int(kv_i(a) > kv_i(b) ? kv_i(a) : kv_i(b)); }
KV kb_clamp(KV a, KV lo, KV hi) {
  const int64_t m = kv_i(a) < kv_i(hi) ? kv_i(a) : kv_i(hi);
  return kv_int(kv_i(lo) > m ? kv_i(lo) : m);
}
KV kb_sqrt(KV a) { return kv_float(sqrt(kv_f(a))); }
KV kb_sin(KV a) { return kv_float(sin(kv_f(a))); }
KV kb_cos(KV a) { return kv_float(cos(kv_f(a))); }
KV kb_log(KV a) { return kv_float(log(kv_f(a))); }
KV kb_floor(KV a) { return kv_float(floor(kv_f(a))); }
KV kb_ceil(KV a) { return kv_float(ceil(kv_f(a))); }
KV kb_round(KV a) { return kv_float(round(kv_f(a))); }
KV kb_pow(KV a, KV b) { return kv_float(pow(kv_f(a), kv_f(b))); }
KV kb_rand_int(KV a, KV b) {
  kr_rng ^= kr_rng << 13;
  kr_rng ^= kr_rng >> 7;
  kr_rng ^= kr_rng << 17;
  const int64_t lo = kv_i(a), hi = kv_i(b);
  if (hi <= lo) return kv_int(lo);
  const uint64_t span = (uint64_t)(hi - lo) + 1;
  return kv_int(lo + (int64_t)(span == 0 ? kr_rng : kr_rng % span));
}

/* ---- builtins: strings -------------------------------------------------------------------- */

/* The interpreter's UTF-8 decoding (runtime.cc Decode), quirks included. */
static uint32_t* kr_decode(const KStr* s, int64_t* count) {
  uint32_t* out = (uint32_t*)kr_realloc(NULL, ((size_t)s->len + 1) * sizeof(uint32_t));
  int64_t n = 0;
  const size_t len = (size_t)s->len;
  for (size_t i = 0; i < len;) {
    const unsigned char c = (unsigned char)s->data[i];
    uint32_t cp = c;
    size_t k = 1;
    if (c >= 0xf0 && i + 3 < len) {
      cp = c & 0x07;
      k = 4;
    } else if (c >= 0xe0) {
      cp = c & 0x0f;
      k = 3;
    } else if (c >= 0xc0) {
      cp = c & 0x1f;
      k = 2;
    }
    if (i + k > len) k = len - i;
    for (size_t j = 1; j < k; ++j) cp = (cp << 6) | ((unsigned char)s->data[i + j] & 0x3f);
    out[n++] = cp;
    i += k;
  }
  *count = n;
  return out;
}
static size_t kr_encode(uint32_t cp, char* o) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xc0 | (cp >> 6));
    o[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | (cp >> 18));
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

KV kb_str_length(KV a) {
  const KStr* s = kv_s(a);
  int64_t n = 0;
  for (int64_t i = 0; i < s->len; ++i) n += ((unsigned char)s->data[i] & 0xc0) != 0x80;
  return kv_int(n);
}
KV kb_str_byte_length(KV a) { return kv_int(kv_s(a)->len); }
static int64_t kr_find(const KStr* s, const KStr* t, int64_t from) {
  if (t->len == 0) return from <= s->len ? from : -1;
  if (from > s->len) return -1;
  const char* p =
      (const char*)memmem(s->data + from, (size_t)(s->len - from), t->data, (size_t)t->len);
  return p ? (int64_t)(p - s->data) : -1;
}
KV kb_str_contains(KV a, KV b) { return kv_bool(kr_find(kv_s(a), kv_s(b), 0) >= 0); }
KV kb_str_starts_with(KV a, KV b) {
  const KStr *s = kv_s(a), *t = kv_s(b);
  return kv_bool(t->len <= s->len && memcmp(s->data, t->data, (size_t)t->len) == 0);
}
KV kb_str_ends_with(KV a, KV b) {
  const KStr *s = kv_s(a), *t = kv_s(b);
  return kv_bool(t->len <= s->len &&
                 memcmp(s->data + s->len - t->len, t->data, (size_t)t->len) == 0);
}
static int kr_is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
KV kb_str_trim(KV a) {
  const KStr* s = kv_s(a);
  int64_t b = 0, e = s->len;
  while (b < e && kr_is_ws(s->data[b])) ++b;
  while (e > b && kr_is_ws(s->data[e - 1])) --e;
  return kr_str(s->data + b, (size_t)(e - b));
}
KV kb_str_upper(KV a) {
  const KStr* s = kv_s(a);
  KStr* r = kr_str_alloc((size_t)s->len);
  for (int64_t i = 0; i < s->len; ++i) {
    const char c = s->data[i];
    r->data[i] = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
  }
  return kv_obj(KT_STR, r);
}
KV kb_str_lower(KV a) {
  const KStr* s = kv_s(a);
  KStr* r = kr_str_alloc((size_t)s->len);
  for (int64_t i = 0; i < s->len; ++i) {
    const char c = s->data[i];
    r->data[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
  }
  return kv_obj(KT_STR, r);
}
KV kb_str_substring(KV a, KV from, KV to) {
  int64_t n = 0;
  uint32_t* cps = kr_decode(kv_s(a), &n);
  int64_t s = kv_i(from), e = kv_i(to);
  s = s < 0 ? 0 : s > n ? n : s;
  e = e < s ? s : e > n ? n : e;
  KBuf b = {0};
  char enc[4];
  for (int64_t i = s; i < e; ++i) kb_put(&b, enc, kr_encode(cps[i], enc));
  free(cps);
  return kb_take(&b);
}
KV kb_str_split(KV a, KV sep) {
  const KStr *s = kv_s(a), *t = kv_s(sep);
  KV list = kr_new_list();
  KList* l = (KList*)list.u.p;
  if (t->len == 0) {
    int64_t n = 0;
    uint32_t* cps = kr_decode(s, &n);
    char enc[4];
    for (int64_t i = 0; i < n; ++i) kr_list_push(l, kr_str(enc, kr_encode(cps[i], enc)));
    free(cps);
    return list;
  }
  int64_t start = 0;
  for (;;) {
    const int64_t p = kr_find(s, t, start);
    if (p < 0) {
      kr_list_push(l, kr_str(s->data + start, (size_t)(s->len - start)));
      break;
    }
    kr_list_push(l, kr_str(s->data + start, (size_t)(p - start)));
    start = p + t->len;
  }
  return list;
}
KV kb_str_lines(KV a) {
  const KStr* s = kv_s(a);
  KV list = kr_new_list();
  int64_t start = 0;
  while (start < s->len) {
    int64_t e = start;
    while (e < s->len && s->data[e] != '\n') ++e;
    int64_t end = e;
    if (end > start && s->data[end - 1] == '\r') --end;
    kr_list_push((KList*)list.u.p, kr_str(s->data + start, (size_t)(end - start)));
    start = e + 1;
  }
  return list;
}
KV kb_str_parse_int(KV a) {
  const KStr* s = kv_s(a);
  int64_t i = 0;
  if (s->len > 0 && s->data[0] == '+') i = 1;
  int neg = 0;
  if (i < s->len && s->data[i] == '-') {
    neg = 1;
    ++i;
  }
  if (i >= s->len) return kv_int(0);
  uint64_t v = 0;
  const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; i < s->len; ++i) {
    const char c = s->data[i];
    if (c < '0' || c > '9') return kv_int(0);
    const uint64_t d = (uint64_t)(c - '0');
    if (v > (limit - d) / 10) return kv_int(0);
    v = v * 10 + d;
  }
  return kv_int(neg ? (int64_t)(0 - v) : (int64_t)v);
}
KV kb_str_char_at(KV a, KV idx) {
  int64_t n = 0;
  uint32_t* cps = kr_decode(kv_s(a), &n);
  const int64_t i = kv_i(idx);
  const int64_t r = i >= 0 && i < n ? (int64_t)cps[i] : -1;
  free(cps);
  return kv_int(r);
}
KV kb_str_repeat(KV a, KV times) {
  const KStr* s = kv_s(a);
  const int64_t k = kv_i(times);
  if (k <= 0) return kr_str("", 0);
  if ((uint64_t)s->len * (uint64_t)k > ((uint64_t)1 << 30))
    kr_trap(124, "repeat: result larger than 1 GiB");
  KStr* r = kr_str_alloc((size_t)(s->len * k));
  for (int64_t i = 0; i < k; ++i) memcpy(r->data + i * s->len, s->data, (size_t)s->len);
  return kv_obj(KT_STR, r);
}
static KV kr_make_iter(KList* src) {
  KIter* it = (KIter*)kr_alloc(sizeof(KIter));
  it->src = src;
  it->next = 0;
  it->current = kv_unit();
  return kv_obj(KT_ITER, it);
}
static KList* kr_code_points(const KStr* s) {
  int64_t n = 0;
  uint32_t* cps = kr_decode(s, &n);
  KList* l = kr_list_alloc();
  for (int64_t i = 0; i < n; ++i) kr_list_push(l, kv_int(cps[i]));
  free(cps);
  return l;
}
KV kb_str_chars(KV a) { return kr_make_iter(kr_code_points(kv_s(a))); }

KV kb_int_to_float(KV a) { return kv_float((double)kv_i(a)); }
KV kb_float_to_int(KV a) {
  const double x = kv_f(a);
  if (isnan(x)) return kv_int(0);
  if (x >= 9.2233720368547758e18) return kv_int(INT64_MAX);
  if (x <= -9.2233720368547758e18) return kv_int(INT64_MIN);
  return kv_int((int64_t)x);
}

/* ---- builtins: Option / Result ---------------------------------------------------------- */

static const KEnumDesc kr_ok = {"Result", "Ok"};
static const KEnumDesc kr_err = {"Result", "Err"};
static KV kr_mk_ok(KV v) { return kr_enum_new(&kr_ok, 0, 1, &v); }
static KV kr_mk_err(const char* msg) {
  KV s = kr_cstr(msg);
  return kr_enum_new(&kr_err, 1, 1, &s);
}
static const KEnumDesc kr_some_d = {"Option", "Some"};
static const KEnumDesc kr_none_d = {"Option", "None"};
KV kr_some(KV v) { return kr_enum_new(&kr_some_d, 0, 1, &v); }
KV kr_none(void) { return kr_enum_new(&kr_none_d, 1, 0, NULL); }
KV kr_str_new(const char* p, int64_t n) { return kr_str(p, (size_t)n); }
KV kr_list_make(void) { return kr_new_list(); }
void kr_list_append(KV list, KV v) { kr_list_push((KList*)list.u.p, v); }
static KEnum* kr_as_enum(KV v) { return v.t == KT_ENUM ? (KEnum*)v.u.p : NULL; }

KV kb_is_first(KV a) {
  KEnum* e = kr_as_enum(a);
  return kv_bool(e && e->disc == 0);
}
KV kb_is_second(KV a) {
  KEnum* e = kr_as_enum(a);
  return kv_bool(e && e->disc == 1);
}
KV kb_option_unwrap(KV a) {
  KEnum* e = kr_as_enum(a);
  if (!e || e->disc != 0 || e->n == 0) kr_trap(134, "called `Option::unwrap()` on a `None` value");
  return e->payload[0];
}
KV kb_result_unwrap(KV a) {
  KEnum* e = kr_as_enum(a);
  if (!e || e->disc != 0 || e->n == 0) {
    KBuf b = {0};
    kb_puts(&b, "called `Result::unwrap()` on an `Err` value: ");
    if (e && e->n > 0) kr_text(e->payload[0], &b, 0);
    kr_trap(134, b.p);
  }
  return e->payload[0];
}
KV kb_result_unwrap_err(KV a) {
  KEnum* e = kr_as_enum(a);
  if (!e || e->disc != 1 || e->n == 0)
    kr_trap(134, "called `Result::unwrap_err()` on an `Ok` value");
  return e->payload[0];
}
KV kb_unwrap_or(KV a, KV dflt) {
  KEnum* e = kr_as_enum(a);
  return e && e->disc == 0 && e->n > 0 ? e->payload[0] : dflt;
}

/* ---- builtins: lists and iterators ------------------------------------------------------- */

static KList* kr_need_list(KV v, const char* name) {
  if (v.t != KT_LIST && v.t != KT_TUPLE) kr_trapf(134, "`%s` of a value that is not a list", name);
  return (KList*)v.u.p;
}
KV kb_list_new(void) { return kr_new_list(); }
KV kb_list_push(KV l, KV v) {
  kr_list_push(kr_need_list(l, "list_push"), v);
  return kv_unit();
}
KV kb_list_get(KV lv, KV iv) {
  KList* l = kr_need_list(lv, "list_get");
  const int64_t i = kv_i(iv);
  if (i < 0 || i >= l->n)
    kr_trapf(134, "index out of bounds: the len is %" PRId64 " but the index is %" PRId64, l->n, i);
  return l->items[i];
}
KV kb_list_set(KV lv, KV iv, KV v) {
  KList* l = kr_need_list(lv, "list_set");
  const int64_t i = kv_i(iv);
  const int ok = i >= 0 && i < l->n;
  if (ok) l->items[i] = v;
  return kv_bool(ok);
}
KV kb_list_length(KV l) { return kv_int(kr_need_list(l, "list_length")->n); }
KV kb_list_is_empty(KV l) { return kv_bool(kr_need_list(l, "list_is_empty")->n == 0); }
KV kb_list_contains(KV lv, KV v) {
  KList* l = kr_need_list(lv, "list_contains");
  for (int64_t i = 0; i < l->n; ++i)
    if (kr_equal(l->items[i], v)) return kv_bool(1);
  return kv_bool(0);
}
KV kb_list_pop(KV lv) {
  KList* l = kr_need_list(lv, "list_pop");
  if (l->n == 0) return kv_int(0);
  return l->items[--l->n];
}
KV kb_list_remove(KV lv, KV iv) {
  KList* l = kr_need_list(lv, "list_remove");
  const int64_t i = kv_i(iv);
  const int ok = i >= 0 && i < l->n;
  if (ok) {
    memmove(l->items + i, l->items + i + 1, (size_t)(l->n - i - 1) * sizeof(KV));
    l->n--;
  }
  return kv_bool(ok);
}
KV kb_list_reverse(KV lv) {
  KList* l = kr_need_list(lv, "list_reverse");
  for (int64_t i = 0, j = l->n - 1; i < j; ++i, --j) {
    KV t = l->items[i];
    l->items[i] = l->items[j];
    l->items[j] = t;
  }
  return kv_unit();
}
KV kb_list_slice(KV lv, KV sv, KV ev) {
  KList* l = kr_need_list(lv, "list_slice");
  const int64_t n = l->n;
  int64_t s = kv_i(sv), e = kv_i(ev);
  s = s < 0 ? 0 : s > n ? n : s;
  e = e < 0 ? 0 : e > n ? n : e;
  if (e < s) e = s;
  KV r = kr_new_list();
  for (int64_t i = s; i < e; ++i) kr_list_push((KList*)r.u.p, l->items[i]);
  return r;
}
static int kr_less(KV x, KV y) {
  if (x.t == KT_INT && y.t == KT_INT) return x.u.i < y.u.i;
  if (x.t == KT_FLOAT && y.t == KT_FLOAT) return x.u.f < y.u.f;
  if (x.t == KT_STR && y.t == KT_STR) return kr_str_cmp(x, y) < 0;
  return 0;
}
/* A stable merge sort (std::stable_sort in the interpreter). */
static void kr_merge_sort(KV* a, KV* tmp, int64_t n) {
  if (n < 2) return;
  if (n <= 16) {
    for (int64_t i = 1; i < n; ++i) {
      KV key = a[i];
      int64_t j = i - 1;
      while (j >= 0 && kr_less(key, a[j])) {
        a[j + 1] = a[j];
        --j;
      }
      a[j + 1] = key;
    }
    return;
  }
  const int64_t h = n / 2;
  kr_merge_sort(a, tmp, h);
  kr_merge_sort(a + h, tmp, n - h);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = kr_less(a[j], a[i]) ? a[j++] : a[i++];
  while (i < h) tmp[k++] = a[i++];
  while (j < n) tmp[k++] = a[j++];
  memcpy(a, tmp, (size_t)n * sizeof(KV));
}
KV kb_list_sort(KV lv) {
  KList* l = kr_need_list(lv, "list_sort");
  if (l->n > 1) {
    KV* tmp = (KV*)kr_realloc(NULL, (size_t)l->n * sizeof(KV));
    kr_merge_sort(l->items, tmp, l->n);
    free(tmp);
  }
  return kv_unit();
}
KV kb_list_join(KV lv, KV sep) {
  KList* l = kr_need_list(lv, "list_join");
  KBuf b = {0};
  const KStr* s = kv_s(sep);
  for (int64_t i = 0; i < l->n; ++i) {
    if (i > 0) kb_put(&b, s->data, (size_t)s->len);
    kr_text(l->items[i], &b, 0);
  }
  return kb_take(&b);
}
static KList* kr_snapshot(const KV* items, int64_t n) {
  KList* l = kr_list_alloc();
  for (int64_t i = 0; i < n; ++i) kr_list_push(l, items[i]);
  return l;
}
KV kb_iter(KV a) {
  switch (a.t) {
    case KT_LIST:
      return kr_make_iter((KList*)a.u.p);
    case KT_MAP:
    case KT_SET: {
      KMap* m = (KMap*)a.u.p;
      return kr_make_iter(kr_snapshot(m->keys, m->n));
    }
    case KT_ITER:
      return a;
    case KT_STR:
      return kr_make_iter(kr_code_points(kv_s(a)));
    default:
      kr_trap(134, "for-in over a value that is not a collection");
  }
}
KV kb_map_values(KV a) {
  if (a.t != KT_MAP && a.t != KT_SET) kr_trap(134, "`values` of a value that is not a map");
  KMap* m = (KMap*)a.u.p;
  return kr_make_iter(kr_snapshot(m->vals, m->n));
}
KV kb_iter_advance(KV a) {
  if (a.t != KT_ITER) kr_trap(134, "advance of a non-iterator");
  KIter* it = (KIter*)a.u.p;
  if (it->next < it->src->n) {
    it->current = it->src->items[it->next++];
    return kv_int(1);
  }
  return kv_int(0);
}
KV kb_iter_value(KV a) {
  if (a.t != KT_ITER) kr_trap(134, "value of a non-iterator");
  return ((KIter*)a.u.p)->current;
}
KV kb_iter_next(KV a) {
  KV r = kb_iter_advance(a);
  if (r.u.i == 0) return r;
  return kb_iter_value(a);
}
KV kb_noop(KV a) {
  (void)a;
  return kv_unit();
}

/* ---- builtins: maps and sets -------------------------------------------------------------- */

static KMap* kr_need_map(KV v, const char* name) {
  if (v.t != KT_MAP && v.t != KT_SET) kr_trapf(134, "`%s` of a value that is not a map", name);
  return (KMap*)v.u.p;
}
KV kb_map_new(void) { return kv_obj(KT_MAP, kr_map_alloc()); }
KV kb_map_insert(KV m, KV k, KV v) {
  kr_map_put(kr_need_map(m, "map_insert"), k, v);
  return kv_unit();
}
KV kb_map_get(KV mv, KV k) {
  KMap* m = kr_need_map(mv, "map_get");
  const int64_t at = kr_map_find(m, k);
  return at < 0 ? kv_int(0) : m->vals[at];
}
KV kb_map_contains(KV m, KV k) {
  return kv_bool(kr_map_find(kr_need_map(m, "map_contains_key"), k) >= 0);
}
KV kb_map_remove(KV m, KV k) { return kv_bool(kr_map_del(kr_need_map(m, "map_remove"), k)); }
KV kb_map_length(KV m) { return kv_int(kr_need_map(m, "map_length")->n); }
KV kb_map_is_empty(KV m) { return kv_bool(kr_need_map(m, "map_is_empty")->n == 0); }
KV kb_map_merge(KV a, KV b) {
  KMap* m = kr_need_map(a, "map_merge");
  if (b.t != KT_MAP && b.t != KT_SET) kr_trap(134, "map_merge of a non-map");
  KMap* n = (KMap*)b.u.p;
  KV r = kb_map_new();
  for (int64_t i = 0; i < m->n; ++i) kr_map_put((KMap*)r.u.p, m->keys[i], m->vals[i]);
  for (int64_t i = 0; i < n->n; ++i) kr_map_put((KMap*)r.u.p, n->keys[i], n->vals[i]);
  return r;
}
KV kb_set_new(void) { return kv_obj(KT_SET, kr_map_alloc()); }
KV kb_set_add(KV s, KV k) {
  kr_map_put(kr_need_map(s, "set_add"), k, kv_unit());
  return kv_unit();
}
KV kb_set_to_list(KV s) {
  KMap* m = kr_need_map(s, "set_to_list");
  return kv_obj(KT_LIST, kr_snapshot(m->keys, m->n));
}
static KV kr_set_op(KV a, KV b, int which) {
  KMap* x = kr_need_map(a, "set operation");
  if (b.t != KT_MAP && b.t != KT_SET) kr_trap(134, "set operation of a non-set");
  KMap* y = (KMap*)b.u.p;
  KV r = kb_set_new();
  KMap* m = (KMap*)r.u.p;
  if (which == 0) {
    for (int64_t i = 0; i < x->n; ++i) kr_map_put(m, x->keys[i], kv_unit());
    for (int64_t i = 0; i < y->n; ++i) kr_map_put(m, y->keys[i], kv_unit());
  } else {
    for (int64_t i = 0; i < x->n; ++i) {
      const int in_y = kr_map_find(y, x->keys[i]) >= 0;
      if ((which == 1) == in_y) kr_map_put(m, x->keys[i], kv_unit());
    }
  }
  return r;
}
KV kb_set_union(KV a, KV b) { return kr_set_op(a, b, 0); }
KV kb_set_intersection(KV a, KV b) { return kr_set_op(a, b, 1); }
KV kb_set_difference(KV a, KV b) { return kr_set_op(a, b, 2); }

/* ---- builtins: characters and the string builder ----------------------------------------- */

KV kb_char_from_code(KV a) {
  const int64_t c = kv_i(a);
  if (c < 0 || c > 0x10ffff) return kr_str("", 0);
  char enc[4];
  return kr_str(enc, kr_encode((uint32_t)c, enc));
}
KV kb_is_alpha(KV a) {
  const int64_t c = kv_i(a);
  return kv_bool((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}
KV kb_is_digit(KV a) { return kv_bool(kv_i(a) >= '0' && kv_i(a) <= '9'); }
KV kb_is_alnum(KV a) {
  const int64_t c = kv_i(a);
  return kv_bool((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
}
KV kb_is_space(KV a) {
  const int64_t c = kv_i(a);
  return kv_bool(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0b || c == 0x0c);
}
KV kb_builder_new(void) {
  KBuilder* b = (KBuilder*)kr_alloc(sizeof(KBuilder));
  memset(b, 0, sizeof *b);
  return kv_obj(KT_BUILDER, b);
}
static KBuilder* kr_need_builder(KV v, const char* name) {
  if (v.t != KT_BUILDER) kr_trapf(134, "`%s` of a value that is not a string builder", name);
  return (KBuilder*)v.u.p;
}
KV kb_builder_push(KV b, KV s) {
  KBuilder* sb = kr_need_builder(b, "string_builder_push");
  kb_put(&sb->b, kv_s(s)->data, (size_t)kv_s(s)->len);
  return kv_unit();
}
KV kb_builder_push_char(KV b, KV c) {
  KBuilder* sb = kr_need_builder(b, "string_builder_push_char");
  const int64_t cp = kv_i(c);
  if (cp >= 0 && cp <= 0x10ffff) {
    char enc[4];
    kb_put(&sb->b, enc, kr_encode((uint32_t)cp, enc));
  }
  return kv_unit();
}
KV kb_builder_to_string(KV b) {
  KBuilder* sb = kr_need_builder(b, "string_builder_to_string");
  return kr_str(sb->b.p ? sb->b.p : "", sb->b.n);
}
KV kb_builder_len(KV b) { return kv_int((int64_t)kr_need_builder(b, "string_builder_len")->b.n); }
KV kb_format_int(KV a, KV basev) {
  const int64_t base = kv_i(basev), v = kv_i(a);
  char buf[80];
  if (base < 2 || base > 36) {
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return kr_cstr(buf);
  }
  const int neg = v < 0;
  uint64_t u = neg ? 0 - (uint64_t)v : (uint64_t)v;
  int n = 0;
  do {
    const int d = (int)(u % (uint64_t)base);
    buf[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    u /= (uint64_t)base;
  } while (u != 0);
  if (neg) buf[n++] = '-';
  for (int i = 0, j = n - 1; i < j; ++i, --j) {
    char t = buf[i];
    buf[i] = buf[j];
    buf[j] = t;
  }
  return kr_str(buf, (size_t)n);
}

/* ---- builtins: system --------------------------------------------------------------------- */

KV kb_args(void) {
  KV r = kr_new_list();
  for (int i = 0; i < kr_argc; ++i) kr_list_push((KList*)r.u.p, kr_cstr(kr_argv[i]));
  return r;
}
KV kb_readln(void) {
  KBuf b = {0};
  int c;
  while ((c = getchar()) != EOF && c != '\n') {
    char ch = (char)c;
    kb_put(&b, &ch, 1);
  }
  return kb_take(&b);
}
KV kb_exit(KV code) {
  fflush(stdout);
  fflush(stderr);
  _exit((int)kv_i(code));
}
KV kb_file_read(KV path) {
  FILE* f = fopen(kv_s(path)->data, "rb");
  if (!f) {
    KBuf b = {0};
    kb_puts(&b, "could not read file `");
    kb_put(&b, kv_s(path)->data, (size_t)kv_s(path)->len);
    kb_puts(&b, "`");
    KV r = kr_mk_err(b.p);
    free(b.p);
    return r;
  }
  KBuf b = {0};
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) kb_put(&b, chunk, n);
  fclose(f);
  return kr_mk_ok(kb_take(&b));
}
static KV kr_write_file(KV path, KV text, int append) {
  FILE* f = fopen(kv_s(path)->data, append ? "ab" : "wb");
  if (!f) {
    KBuf b = {0};
    kb_puts(&b, "could not write file `");
    kb_put(&b, kv_s(path)->data, (size_t)kv_s(path)->len);
    kb_puts(&b, "`");
    KV r = kr_mk_err(b.p);
    free(b.p);
    return r;
  }
  fwrite(kv_s(text)->data, 1, (size_t)kv_s(text)->len, f);
  fclose(f);
  return kr_mk_ok(kv_unit());
}
KV kb_file_write(KV p, KV t) { return kr_write_file(p, t, 0); }
KV kb_file_append(KV p, KV t) { return kr_write_file(p, t, 1); }
KV kb_file_exists(KV p) {
  struct stat st;
  return kv_bool(stat(kv_s(p)->data, &st) == 0 && S_ISREG(st.st_mode));
}
KV kb_dir_exists(KV p) {
  struct stat st;
  return kv_bool(stat(kv_s(p)->data, &st) == 0 && S_ISDIR(st.st_mode));
}
KV kb_file_delete(KV p) { return kv_bool(remove(kv_s(p)->data) == 0); }
static int kr_cmp_cstr(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}
KV kb_dir_list(KV p) {
  KV r = kr_new_list();
  DIR* d = opendir(kv_s(p)->data);
  if (!d) return r;
  char** names = NULL;
  size_t n = 0, cap = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      names = (char**)kr_realloc(names, cap * sizeof(char*));
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof(char*), kr_cmp_cstr);
  for (size_t i = 0; i < n; ++i) {
    kr_list_push((KList*)r.u.p, kr_cstr(names[i]));
    free(names[i]);
  }
  free(names);
  return r;
}
KV kb_env_get(KV name) {
  const char* v = getenv(kv_s(name)->data);
  return kr_cstr(v ? v : "");
}
KV kb_env_set(KV name, KV value) {
  setenv(kv_s(name)->data, kv_s(value)->data, 1);
  return kv_unit();
}
KV kb_time_now(void) { return kv_int((int64_t)time(NULL)); }
KV kb_time_now_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return kv_int((int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000);
}
KV kb_time_elapsed(KV since) { return kv_int(kb_time_now_ms().u.i - kv_i(since)); }
KV kb_time_format(KV t) {
  const time_t tt = (time_t)kv_i(t);
  struct tm tm;
  gmtime_r(&tt, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return kr_cstr(buf);
}
KV kb_sleep(KV ms) {
  (void)ms;
  return kv_unit();
}
KV kb_http_not_available(void) { return kr_mk_err("HTTP is not available in this build"); }
KV kb_not_available(void) {
  kr_trap(1, "this builtin (HTTP, database, JSON) is not available in this build");
}

/* ---- builtins: assertions and contracts ---------------------------------------------------- */

KV kb_assert(KV a) {
  if (!kv_truthy(a)) kr_trap(134, "assertion failed");
  return kv_unit();
}
KV kb_assert_false(KV a) {
  if (kv_truthy(a)) kr_trap(134, "assertion failed: assert_false");
  return kv_unit();
}
static void kr_assert_fail(const char* what, KV a, KV b) __attribute__((noreturn));
static void kr_assert_fail(const char* what, KV a, KV b) {
  KBuf m = {0};
  kb_puts(&m, "assertion failed: ");
  kb_puts(&m, what);
  kb_puts(&m, "\n  left: ");
  kr_text(a, &m, 0);
  kb_puts(&m, "\n right: ");
  kr_text(b, &m, 0);
  kr_trap(134, m.p);
}
KV kb_assert_eq(KV a, KV b) {
  if (!kr_equal(a, b)) kr_assert_fail("assert_eq", a, b);
  return kv_unit();
}
KV kb_assert_ne(KV a, KV b) {
  if (kr_equal(a, b)) kr_assert_fail("assert_ne", a, b);
  return kv_unit();
}
KV kb_contract_fail(KV msg) {
  KBuf m = {0};
  kb_puts(&m, "contract violation: ");
  kb_put(&m, kv_s(msg)->data, (size_t)kv_s(msg)->len);
  kr_trap(134, m.p);
}
KV kb_contract_fail_recoverable(KV msg) {
  fflush(stdout);
  fputs("WARNING: contract violation (recoverable): ", stderr);
  fwrite(kv_s(msg)->data, 1, (size_t)kv_s(msg)->len, stderr);
  fputc('\n', stderr);
  fflush(stderr);
  return kv_unit();
}

/* ---- entry ---------------------------------------------------------------------------------- */

static KV (*kr_entry)(void) = NULL;

static void* kr_thread_main(void* arg) {
  (void)arg;
  kr_entry();
  return NULL;
}

int kr_main(int argc, char** argv, KV (*entry)(void)) {
  static char outbuf[1 << 16];
  setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
  kr_argc = argc;
  kr_argv = argv;
  kr_entry = entry;
  /* Deep Kōdo recursion (up to KR_MAX_FRAMES calls) needs more than the default 8 MiB stack:
   * main runs on a thread with a 2 GiB stack, reserved lazily by the kernel. */
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)1 << 31);
  pthread_t th;
  if (pthread_create(&th, &attr, kr_thread_main, NULL) != 0) {
    kr_thread_main(NULL);
  } else {
    pthread_join(th, NULL);
  }
  fflush(stdout);
  return 0;
}
