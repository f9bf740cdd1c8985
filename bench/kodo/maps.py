m = {}
for i in range(200000):
    k = i * 7 % 1000
    if k in m:
        m[k] = m[k] + 1
    else:
        m[k] = 1
print(len(m))
print(m[7])
