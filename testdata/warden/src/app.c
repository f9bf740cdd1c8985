// WARDEN test fixture: a small application, built by scripts/build_wasm_fixtures with Debian's
// Emscripten 3.1.6. It exercises string routines, allocation, exported functions, a table of
// function pointers (so call_indirect appears), loops and float arithmetic. Keep it small and
// deterministic: the committed fixtures are built from it, and tests check facts that follow
// from this source (see src/warden/wasm/fixtures_test.cc).
#include <emscripten/emscripten.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// --- strings ---

EMSCRIPTEN_KEEPALIVE size_t app_strlen(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}

EMSCRIPTEN_KEEPALIVE void app_reverse(char* s) {
  size_t n = app_strlen(s);
  for (size_t i = 0; i < n / 2; ++i) {
    char t = s[i];
    s[i] = s[n - 1 - i];
    s[n - 1 - i] = t;
  }
}

EMSCRIPTEN_KEEPALIVE int app_count_char(const char* s, int c) {
  int count = 0;
  for (; *s; ++s) count += (*s == (char)c);
  return count;
}

// Returns a new upper-case copy of `s`; the caller frees it with app_free.
EMSCRIPTEN_KEEPALIVE char* app_upper_dup(const char* s) {
  size_t n = strlen(s);
  char* out = (char*)malloc(n + 1);
  if (out == NULL) return NULL;
  for (size_t i = 0; i <= n; ++i) {
    char ch = s[i];
    out[i] = (ch >= 'a' && ch <= 'z') ? (char)(ch - 'a' + 'A') : ch;
  }
  return out;
}

// --- allocation ---

typedef struct {
  int* items;
  int size;
  int capacity;
} IntVec;

EMSCRIPTEN_KEEPALIVE IntVec* app_vec_new(void) { return (IntVec*)calloc(1, sizeof(IntVec)); }

EMSCRIPTEN_KEEPALIVE int app_vec_push(IntVec* v, int value) {
  if (v->size == v->capacity) {
    int capacity = v->capacity ? v->capacity * 2 : 4;
    int* items = (int*)realloc(v->items, (size_t)capacity * sizeof(int));
    if (items == NULL) return -1;
    v->items = items;
    v->capacity = capacity;
  }
  v->items[v->size++] = value;
  return v->size;
}

EMSCRIPTEN_KEEPALIVE void app_vec_free(IntVec* v) {
  if (v == NULL) return;
  free(v->items);
  free(v);
}

EMSCRIPTEN_KEEPALIVE void app_free(void* p) { free(p); }

// --- a table of function pointers: call_indirect ---

typedef int (*BinaryOp)(int, int);

static int op_add(int a, int b) { return a + b; }
static int op_sub(int a, int b) { return a - b; }
static int op_mul(int a, int b) { return a * b; }
static int op_xor(int a, int b) { return a ^ b; }

static BinaryOp const kOps[] = {op_add, op_sub, op_mul, op_xor};

EMSCRIPTEN_KEEPALIVE int app_apply(int op, int a, int b) {
  if (op < 0 || op >= (int)(sizeof(kOps) / sizeof(kOps[0]))) return 0;
  return kOps[op](a, b);
}

// Folds `values` with the operation `op` (an index into the table), left to right.
EMSCRIPTEN_KEEPALIVE int app_fold(int op, const int* values, int count) {
  if (count <= 0) return 0;
  int acc = values[0];
  for (int i = 1; i < count; ++i) acc = app_apply(op, acc, values[i]);
  return acc;
}

// --- loops and floats ---

EMSCRIPTEN_KEEPALIVE unsigned app_checksum(const unsigned char* data, int size) {
  unsigned a = 1, b = 0;
  for (int i = 0; i < size; ++i) {
    a = (a + data[i]) % 65521u;
    b = (b + a) % 65521u;
  }
  return (b << 16) | a;
}

EMSCRIPTEN_KEEPALIVE double app_mean(const double* values, int count) {
  if (count <= 0) return 0.0;
  double sum = 0.0;
  for (int i = 0; i < count; ++i) sum += values[i];
  return sum / count;
}

EMSCRIPTEN_KEEPALIVE float app_dot(const float* a, const float* b, int count) {
  float sum = 0.0f;
  for (int i = 0; i < count; ++i) sum += a[i] * b[i];
  return sum;
}

int main(int argc, char** argv) {
  (void)argv;
  char word[] = "warden";
  app_reverse(word);
  char* upper = app_upper_dup(word);
  IntVec* v = app_vec_new();
  for (int i = 1; i <= 10; ++i) app_vec_push(v, i * argc);
  double mean_in[3] = {1.5, 2.5, 3.5};
  float dot_a[2] = {1.0f, 2.0f}, dot_b[2] = {3.0f, 4.0f};
  printf("%s %d %d %u %.2f %.1f\n", upper ? upper : "", app_count_char(upper ? upper : "", 'N'),
         app_fold(argc % 4, v->items, v->size),
         app_checksum((const unsigned char*)word, (int)app_strlen(word)), app_mean(mean_in, 3),
         (double)app_dot(dot_a, dot_b, 2));
  app_vec_free(v);
  app_free(upper);
  return 0;
}
