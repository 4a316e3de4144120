#!/usr/bin/env python3
"""How sure a BatchingWorkloads cell is: for each cell, each implementation's median of per-round ratios to a
yardstick, with a 95 % bootstrap interval of that median (4,000 resamples of the rounds, a fixed seed), and the
ratio of the summed rates. A cell whose interval spans 0.95 cannot tell a 5 % loss from none.
usage: workload-intervals.py <out.json> [<yardstick> [<implementation>...]]   (yardstick: unbatched)"""
import json, random, statistics, sys

result = json.load(open(sys.argv[1]))
yardstick = sys.argv[2] if len(sys.argv) > 2 else "unbatched"
chosen = sys.argv[3:]
rng = random.Random(31)


def interval(ratios):
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(4000))
    return medians[99], medians[3899]


print(f"median of per-round ratios x {yardstick} [95 % bootstrap interval] and the ratio of summed rates")
for cell in result["cells"]:
    rates = {r["implementation"]: r["rates"] for r in cell["results"]}
    theirs = rates[yardstick]
    parts = []
    for impl in chosen or [i for i in rates if i != yardstick]:
        ratios = [a / b for a, b in zip(rates[impl], theirs)]
        low, high = interval(ratios)
        parts.append(f"{impl} {statistics.median(ratios):.2f} [{low:.2f}-{high:.2f}] sum {sum(rates[impl]) / sum(theirs):.2f}")
    print(f"{cell['database']:10} {cell['threads']:2} threads {cell['holdMillis']:4g} ms  " + " | ".join(parts))
