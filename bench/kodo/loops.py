total = 0
for i in range(1000000):
    total = total + i % 7 * 3
print(total)
