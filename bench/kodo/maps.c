#include <stdio.h>
int main(void) { static long counts[1000]; static char seen[1000]; long n = 0;
  for (long i = 0; i < 200000; i++) { long k = i * 7 % 1000; if (!seen[k]) { seen[k] = 1; n++; } counts[k]++; }
  printf("%ld\n%ld\n", n, counts[7]); return 0; }
