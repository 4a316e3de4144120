#!/usr/bin/env python3
"""Medians of per-round ratios from a LeaseInterleaved result: each implementation over each given yardstick.
usage: interleaved-ratios.py <result.json> <yardstick>[,<yardstick>...] [<implementation>...]"""
import json, statistics, sys

result = json.load(open(sys.argv[1]))
blocks = {r["implementation"]: r["blocks"] for r in result["results"]}
yardsticks = sys.argv[2].split(",")
chosen = sys.argv[3:] or list(blocks)
print(f"{result['database']}, {result['threads']} threads, {result['rounds']} rounds of {result['blockMillis']} ms")
print(f"{'implementation':20} {'pairs/s':>8} " + " ".join(f"{'x ' + y:>14}" for y in yardsticks) + "  (min-max of per-round ratios)")
for impl in chosen:
    cells = []
    for y in yardsticks:
        ratios = [a / b for a, b in zip(blocks[impl], blocks[y])]
        cells.append(f"{statistics.median(ratios):6.3f} ({min(ratios):.2f}-{max(ratios):.2f})")
    print(f"{impl:20} {statistics.median(blocks[impl]):8.0f} " + " ".join(f"{c:>14}" for c in cells))
