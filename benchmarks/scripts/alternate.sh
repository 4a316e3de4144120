#!/usr/bin/env bash
# Runs the methods of one JMH benchmark in alternating short rounds (plain, ours, plain, ours, …),
# each round in its own fork under the shared benchmark lock, and merges every round into one JMH
# JSON array. On a shared, noisy machine this spreads load changes over all methods alike; compare
# medians of the rounds (benchmarks/scripts/ratios.py).
#   usage: alternate.sh <BenchmarkClass> <database> <rounds> <out.json> <method>...
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=$1 db=$2 rounds=$3 out=$4; shift 4
tmp=$(mktemp -d)
for round in $(seq 1 "$rounds"); do
  for method in "$@"; do
    flock /tmp/holdfast-bench.lock java -jar benchmarks/target/benchmarks.jar "$bench.$method\$" -p database="$db" \
      -wi 1 -w 2s -i 2 -r 2s -f 1 -rf json -rff "$tmp/$round-$method.json" > "$tmp/$round-$method.log" 2>&1
  done
done
python3 - "$out" "$tmp"/*.json <<'PY'
import json, sys
merged = []
for f in sys.argv[2:]:
    merged += json.load(open(f))
json.dump(merged, open(sys.argv[1], "w"), indent=1)
PY
rm -rf "$tmp"
