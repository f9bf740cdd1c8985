// WARDEN test fixture: the pthread variant. Worker threads sum slices of an array into an
// atomic total, so the module has shared memory, atomics and the pthread runtime. Built with
// -pthread by scripts/build_wasm_fixtures; see app.c for the single-threaded application.
#include <emscripten/emscripten.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define kThreads 2

typedef struct {
  const int* values;
  int begin;
  int end;
} Slice;

static atomic_long g_total;

static void* sum_slice(void* arg) {
  const Slice* slice = (const Slice*)arg;
  long sum = 0;
  for (int i = slice->begin; i < slice->end; ++i) sum += slice->values[i];
  atomic_fetch_add(&g_total, sum);
  return NULL;
}

// Sums `values` on kThreads threads; returns -1 if a thread cannot be started.
EMSCRIPTEN_KEEPALIVE long app_parallel_sum(const int* values, int count) {
  pthread_t threads[kThreads];
  Slice slices[kThreads];
  atomic_store(&g_total, 0);
  for (int t = 0; t < kThreads; ++t) {
    slices[t].values = values;
    slices[t].begin = count * t / kThreads;
    slices[t].end = count * (t + 1) / kThreads;
    if (pthread_create(&threads[t], NULL, sum_slice, &slices[t]) != 0) return -1;
  }
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  return atomic_load(&g_total);
}

EMSCRIPTEN_KEEPALIVE double app_scale(double value, float factor) { return value * factor; }

int main(void) {
  int* values = (int*)malloc(100 * sizeof(int));
  if (values == NULL) return 1;
  for (int i = 0; i < 100; ++i) values[i] = i;
  printf("%ld %.1f\n", app_parallel_sum(values, 100), app_scale(2.0, 1.5f));
  free(values);
  return 0;
}
