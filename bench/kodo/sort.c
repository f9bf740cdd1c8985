#include <stdio.h>
#include <stdlib.h>
static int cmp(const void* a, const void* b) { long x = *(const long*)a, y = *(const long*)b; return (x > y) - (x < y); }
int main(void) { long* xs = malloc(100000 * sizeof(long)); long x = 12345;
  for (int i = 0; i < 100000; i++) { x = (x * 1103515245 + 12345) % 2147483648L; xs[i] = x; }
  qsort(xs, 100000, sizeof(long), cmp); printf("%ld\n%ld\n", xs[0], xs[99999]); free(xs); return 0; }
