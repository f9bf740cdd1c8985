#include <stdio.h>
int main(void) { volatile long total = 0; for (long i = 0; i < 1000000; i++) total = total + i % 7 * 3; printf("%ld\n", total); return 0; }
