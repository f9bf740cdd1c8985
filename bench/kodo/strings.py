parts = []
for i in range(100000):
    parts.append(str(i))
print(len("".join(parts)))
