// An evaluation twin for the WARDEN Oracle (bench/warden_oracle_eval): a small program that pulls
// in a broad slice of libc (stdio formatting, string and memory routines, qsort, strtod, math,
// time, malloc) so that its named and stripped builds label many runtime functions.
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  char buf[256];
  double values[16];
  for (int i = 0; i < 16; ++i) {
    snprintf(buf, sizeof buf, "%d.%03d", (i * 37) % 11, (i * 91) % 1000);
    values[i] = strtod(buf, NULL) + sqrt((double)i) + sin(i) * pow(1.5, i % 4);
  }
  qsort(values, 16, sizeof values[0], cmp_double);
  char* copy = strdup(argc > 1 ? argv[1] : "Hello, Oracle");
  for (char* p = copy; *p; ++p) *p = (char)toupper((unsigned char)*p);
  char* joined = malloc(strlen(copy) + 64);
  strcpy(joined, copy);
  strcat(joined, " / ");
  strncat(joined, "runtime", 4);
  const char* found = strstr(joined, "ORACLE");
  long parsed = strtol("0x7f", NULL, 16) + atoi("42") + labs(-3);
  time_t now = (time_t)1700000000;
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  void* block = calloc(8, 32);
  block = realloc(block, 1024);
  memset(block, 0x5a, 1024);
  memmove((char*)block + 1, block, 512);
  printf("%s %s %ld %.6g %.6g %s %d %s\n", joined, found ? found : "-", parsed, values[0],
         values[15], buf, memcmp(block, copy, 4) > 0, strerror(ERANGE));
  fprintf(stderr, "%e %a %x %o %c\n", exp(1.0), log(10.0), 255u, 8u, 'W');
  puts(strchr(copy, 'O') ? "O" : "-");
  free(block);
  free(joined);
  free(copy);
  return 0;
}
