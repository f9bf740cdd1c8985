xs = []
x = 12345
for i in range(100000):
    x = (x * 1103515245 + 12345) % 2147483648
    xs.append(x)
xs.sort()
print(xs[0])
print(xs[99999])
