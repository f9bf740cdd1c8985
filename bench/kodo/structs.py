class Point:
    __slots__ = ("x", "y")
    def __init__(self, x, y):
        self.x = x
        self.y = y
def add(a, b):
    return Point(a.x + b.x, a.y + b.y)
acc = Point(0, 0)
for i in range(200000):
    acc = add(acc, Point(i, 1))
print(acc.x)
print(acc.y)
