#!/usr/bin/env python3
"""Prints, per benchmark method, the median score of its rounds, and each method's ratio to the first given method.
usage: ratios.py <results.json> <baseline-method> [<method>...]"""
import json, statistics, sys
results = json.load(open(sys.argv[1]))
scores = {}
for r in results:
    scores.setdefault(r["benchmark"].rsplit(".", 1)[1], []).append(r["primaryMetric"]["score"])
base = statistics.median(scores[sys.argv[2]])
for method in sys.argv[2:]:
    m = statistics.median(scores[method])
    rounds = ", ".join(f"{s:.0f}" for s in scores[method])
    print(f"{sys.argv[1].rsplit('/', 1)[-1]:32} {method:22} median {m:10.1f} ops/s  ratio {m / base:5.3f}  rounds [{rounds}]")
