#!/usr/bin/env python3
# The hierarchical-mixture weights of docs/astar.md (Beyond 128 points):
# writes mix128.csv, mix400.csv and mix1000.csv in the current directory.
import random, math
# A hierarchical Gaussian mixture: 6 groups x 4 subgroups in 16-d; weights =
# cosine similarity minus its mean (the ALOI recipe), zero diagonal.
def mixture(n, seed):
    r = random.Random(seed)
    d = 16
    top = [[r.gauss(0, 1) for _ in range(d)] for _ in range(6)]
    sub = [[t + r.gauss(0, 0.6) for t in top[g]] for g in range(6) for _ in range(4)]
    xs = []
    for _ in range(n):
        c = sub[r.randrange(24)]
        x = [v + r.gauss(0, 0.7) for v in c]
        nm = math.sqrt(sum(v * v for v in x))
        xs.append([v / nm for v in x])
    s = [[sum(a * b for a, b in zip(xs[i], xs[j])) for j in range(n)] for i in range(n)]
    mean = sum(map(sum, s)) / (n * n)
    return [[0.0 if i == j else s[i][j] - mean for j in range(n)] for i in range(n)]
for n in [128, 400, 1000]:
    s = mixture(n, n)
    with open(f"mix{n}.csv", "w") as f:
        for row in s:
            f.write(",".join(repr(v) for v in row) + "\n")
