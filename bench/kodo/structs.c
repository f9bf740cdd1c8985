#include <stdio.h>
typedef struct { long x, y; } Point;
static Point add(Point a, Point b) { Point r = {a.x + b.x, a.y + b.y}; return r; }
int main(void) { Point acc = {0, 0}; for (long i = 0; i < 200000; i++) { Point p = {i, 1}; acc = add(acc, p); } printf("%ld\n%ld\n", acc.x, acc.y); return 0; }
