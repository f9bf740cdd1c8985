#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) { size_t cap = 1 << 20, len = 0; char* s = malloc(cap); char buf[32];
  for (long i = 0; i < 100000; i++) { int n = snprintf(buf, sizeof buf, "%ld", i); if (len + n >= cap) { cap *= 2; s = realloc(s, cap); } memcpy(s + len, buf, n); len += n; }
  printf("%zu\n", len); free(s); return 0; }
