/* The Kōdo native runtime (docs/kodo.md §7.8, docs/decisions/0065-kodo-native-c.md): the value
 * representation and the entry points that C code generated from MIR (kodo/native/emit_c.h)
 * calls. It mirrors the interpreter (kodo/interp/runtime.cc) builtin by builtin: the same
 * output, the same messages and exit statuses (134 abort, 136 division by zero).
 *
 * A value is a tag plus a 64-bit payload (an integer, a double or a heap pointer), passed by
 * value. Heap objects are never freed: a native Kōdo program is short-lived, and a bump
 * allocator makes allocation cheap (the decision record says why).
 *
 * Thread safety: one program thread; the runtime keeps process-wide state (output buffer,
 * call depth, random state). */
#ifndef KODO_RT_H_
#define KODO_RT_H_

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  KT_UNIT = 0,
  KT_INT,
  KT_FLOAT,
  KT_BOOL,
  KT_STR,
  KT_LIST,
  KT_MAP,
  KT_SET,
  KT_STRUCT,
  KT_ENUM,
  KT_TUPLE,
  KT_CLOSURE,
  KT_FUNC,
  KT_ITER,
  KT_BUILDER
};

typedef struct KV {
  int64_t t;
  union {
    int64_t i;
    double f;
    void* p;
  } u;
} KV;

typedef KV (*KTramp)(KV* args, int n);

typedef struct KStr {
  int64_t len;
  char data[];
} KStr;

typedef struct KStructDesc {
  const char* name;
  int nfields;
  const char* const* fields;
  const int16_t* slot_of; /* global field id -> slot, -1 when absent */
} KStructDesc;

typedef struct KStruct {
  const KStructDesc* d;
  KV fields[];
} KStruct;

typedef struct KEnumDesc {
  const char* enum_name;
  const char* variant;
} KEnumDesc;

typedef struct KEnum {
  const KEnumDesc* d;
  int64_t disc;
  int64_t n;
  KV payload[];
} KEnum;

/* Filled in by the generated program. */
extern KTramp kr_funcs[];
extern int kr_func_count;

extern int64_t kr_depth;
#define KR_MAX_FRAMES 100000

static inline KV kv_unit(void) {
  KV v;
  v.t = KT_UNIT;
  v.u.i = 0;
  return v;
}
static inline KV kv_int(int64_t x) {
  KV v;
  v.t = KT_INT;
  v.u.i = x;
  return v;
}
static inline KV kv_float(double x) {
  KV v;
  v.t = KT_FLOAT;
  v.u.f = x;
  return v;
}
static inline KV kv_bool(int x) {
  KV v;
  v.t = KT_BOOL;
  v.u.i = x ? 1 : 0;
  return v;
}
static inline KV kv_obj(int64_t t, void* p) {
  KV v;
  v.t = t;
  v.u.p = p;
  return v;
}
static inline KV kv_func(int64_t idx) {
  KV v;
  v.t = KT_FUNC;
  v.u.i = idx;
  return v;
}
static inline double kr_bits2f(uint64_t b) {
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

void kr_type_mismatch(const char* want, KV v) __attribute__((noreturn));
static inline int64_t kv_as_int(KV v) {
  if (__builtin_expect(v.t != KT_INT, 0)) kr_type_mismatch("Int", v);
  return v.u.i;
}
static inline double kv_as_float(KV v) {
  if (__builtin_expect(v.t != KT_FLOAT, 0)) kr_type_mismatch("Float64", v);
  return v.u.f;
}
static inline int kv_as_bool(KV v) {
  if (__builtin_expect(v.t != KT_BOOL && v.t != KT_INT, 0)) kr_type_mismatch("Bool", v);
  return v.u.i != 0;
}
static inline int kv_truthy(KV v) { return (v.t == KT_BOOL || v.t == KT_INT) && v.u.i != 0; }

void kr_trap(int code, const char* message) __attribute__((noreturn));
void kr_div_zero(int is_mod) __attribute__((noreturn));
void kr_div_overflow(int is_mod) __attribute__((noreturn));
void kr_stack_overflow(const char* fn) __attribute__((noreturn));
void kr_unreachable(const char* fn) __attribute__((noreturn));
void kr_no_function_value(const char* fn) __attribute__((noreturn));

static inline int64_t kr_div(int64_t a, int64_t b) {
  if (__builtin_expect(b == 0, 0)) kr_div_zero(0);
  if (__builtin_expect(b == -1 && a == INT64_MIN, 0)) kr_div_overflow(0);
  return a / b;
}
static inline int64_t kr_mod(int64_t a, int64_t b) {
  if (__builtin_expect(b == 0, 0)) kr_div_zero(1);
  if (__builtin_expect(b == -1 && a == INT64_MIN, 0)) kr_div_overflow(1);
  return a % b;
}
static inline int64_t kr_wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t kr_wsub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t kr_wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t kr_wneg(int64_t a) { return (int64_t)(0 - (uint64_t)a); }

/* Binary operators on tagged values, exactly as the interpreter's Machine::Binary. op: the
 * ast::BinOp order: Add Sub Mul Div Mod Eq Ne Lt Gt Le Ge And Or. */
KV kr_binop(int op, KV a, KV b);
KV kr_neg(KV a);
/* kr_binop with its Int-Int case inline (struct fields and other tagged values): `op` is a
 * constant in generated code, so the switch folds away. */
static inline KV kr_binop_inl(int op, KV a, KV b) {
  if (__builtin_expect(a.t == KT_INT && b.t == KT_INT, 1)) {
    const int64_t x = a.u.i, y = b.u.i;
    switch (op) {
      case 0:
        return kv_int(kr_wadd(x, y));
      case 1:
        return kv_int(kr_wsub(x, y));
      case 2:
        return kv_int(kr_wmul(x, y));
      case 5:
        return kv_bool(x == y);
      case 6:
        return kv_bool(x != y);
      case 7:
        return kv_bool(x < y);
      case 8:
        return kv_bool(x > y);
      case 9:
        return kv_bool(x <= y);
      case 10:
        return kv_bool(x >= y);
      default:
        break;
    }
  }
  return kr_binop(op, a, b);
}

KV kr_struct_new(const KStructDesc* d, int n, const KV* fields);
KV kr_field(KV obj, int fid, const char* field);
KV kr_enum_new(const KEnumDesc* d, int64_t disc, int n, const KV* payload);
int64_t kr_enum_disc(KV v);
KV kr_enum_payload(KV v, int64_t i);
KV kr_tuple_new(int n, const KV* items);
KV kr_tuple_get(KV v, int64_t i);
KV kr_closure_new(KV fn, int ncaps, const KV* caps);
KV kr_call_value(KV callee, int n, const KV* args);
const char* kr_type_name(KV v);
void kr_no_method(const char* method, KV recv) __attribute__((noreturn));
void kr_few_args(const char* name) __attribute__((noreturn));

/* Runs `entry` (the program's main) on a thread with a large stack, then flushes and exits. */
int kr_main(int argc, char** argv, KV (*entry)(void));

/* Builtins: each takes its arguments as values and returns a value (unit when none). */
#define KR_B0(n) KV n(void)
#define KR_B1(n) KV n(KV)
#define KR_B2(n) KV n(KV, KV)
#define KR_B3(n) KV n(KV, KV, KV)
KR_B1(kb_println);
KR_B1(kb_print);
KR_B1(kb_print_int);
KR_B1(kb_print_float);
KR_B1(kb_println_float);
KR_B1(kb_to_string);
KR_B1(kb_abs);
KR_B2(kb_min);
KR_B2(kb_max);
KR_B3(kb_clamp);
KR_B1(kb_sqrt);
KR_B1(kb_sin);
KR_B1(kb_cos);
KR_B1(kb_log);
KR_B1(kb_floor);
KR_B1(kb_ceil);
KR_B1(kb_round);
KR_B2(kb_pow);
KR_B2(kb_rand_int);
KR_B1(kb_str_length);
KR_B1(kb_str_byte_length);
KR_B2(kb_str_contains);
KR_B2(kb_str_starts_with);
KR_B2(kb_str_ends_with);
KR_B1(kb_str_trim);
KR_B1(kb_str_upper);
KR_B1(kb_str_lower);
KR_B3(kb_str_substring);
KR_B2(kb_str_split);
KR_B1(kb_str_lines);
KR_B1(kb_str_parse_int);
KR_B2(kb_str_char_at);
KR_B2(kb_str_repeat);
KR_B1(kb_str_chars);
KR_B1(kb_int_to_float);
KR_B1(kb_float_to_int);
KR_B1(kb_is_first);
KR_B1(kb_is_second);
KR_B1(kb_option_unwrap);
KR_B1(kb_result_unwrap);
KR_B1(kb_result_unwrap_err);
KR_B2(kb_unwrap_or);
KR_B0(kb_list_new);
KR_B2(kb_list_push);
KR_B2(kb_list_get);
KR_B3(kb_list_set);
KR_B1(kb_list_length);
KR_B1(kb_list_is_empty);
KR_B2(kb_list_contains);
KR_B1(kb_list_pop);
KR_B2(kb_list_remove);
KR_B1(kb_list_reverse);
KR_B3(kb_list_slice);
KR_B1(kb_list_sort);
KR_B2(kb_list_join);
KR_B1(kb_iter);
KR_B1(kb_map_values);
KR_B1(kb_iter_advance);
KR_B1(kb_iter_value);
KR_B1(kb_iter_next);
KR_B1(kb_noop);
KR_B0(kb_map_new);
KR_B3(kb_map_insert);
KR_B2(kb_map_get);
KR_B2(kb_map_contains);
KR_B2(kb_map_remove);
KR_B1(kb_map_length);
KR_B1(kb_map_is_empty);
KR_B2(kb_map_merge);
KR_B0(kb_set_new);
KR_B2(kb_set_add);
KR_B2(kb_set_union);
KR_B2(kb_set_intersection);
KR_B2(kb_set_difference);
KR_B1(kb_set_to_list);
KR_B1(kb_char_from_code);
KR_B1(kb_is_alpha);
KR_B1(kb_is_digit);
KR_B1(kb_is_alnum);
KR_B1(kb_is_space);
KR_B0(kb_builder_new);
KR_B2(kb_builder_push);
KR_B2(kb_builder_push_char);
KR_B1(kb_builder_to_string);
KR_B1(kb_builder_len);
KR_B2(kb_format_int);
KR_B0(kb_args);
KR_B0(kb_readln);
KR_B1(kb_exit);
KR_B1(kb_file_read);
KR_B2(kb_file_write);
KR_B2(kb_file_append);
KR_B1(kb_file_exists);
KR_B1(kb_file_delete);
KR_B1(kb_dir_exists);
KR_B1(kb_dir_list);
KR_B1(kb_env_get);
KR_B2(kb_env_set);
KR_B0(kb_time_now);
KR_B0(kb_time_now_ms);
KR_B1(kb_time_elapsed);
KR_B1(kb_time_format);
KR_B1(kb_sleep);
KR_B0(kb_http_not_available);
KR_B0(kb_not_available);
KR_B1(kb_assert);
KR_B1(kb_assert_false);
KR_B2(kb_assert_eq);
KR_B2(kb_assert_ne);
KR_B1(kb_contract_fail);
KR_B1(kb_contract_fail_recoverable);

/* For the runtime's C++ part (kodo_rt_ext.cc): values it builds. */
KV kr_str_new(const char* p, int64_t n);
KV kr_list_make(void);
void kr_list_append(KV list, KV v);
KV kr_some(KV v);
KV kr_none(void);

#ifdef __cplusplus
}
#endif

#endif /* KODO_RT_H_ */
