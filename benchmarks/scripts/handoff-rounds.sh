#!/usr/bin/env bash
# Runs LeaseHandoff in interleaved rounds (every implementation once per round, in the given order),
# then prints the median of each figure over the rounds and writes all rounds to one JSON array.
#   usage: handoff-rounds.sh <rounds> <out.json> <implementation@database>,...
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=$1 out=$2 runs=$3
jar=$(mktemp --suffix=.jar) tmp=$(mktemp -d)
cp benchmarks/target/benchmarks.jar "$jar" # a rebuild during the rounds does not change what runs
for round in $(seq 1 "$rounds"); do
  flock /tmp/holdfast-bench.lock java -cp "$jar" dev.holdfast.benchmarks.LeaseHandoff "$tmp/$round.json" "$runs" \
    > "$tmp/$round.log" 2>&1
done
python3 - "$out" "$tmp"/*.json <<'PY'
import json, statistics, sys
every = [r for f in sys.argv[2:] for r in json.load(open(f))]
json.dump(every, open(sys.argv[1], "w"), indent=1)
rows = [r for r in every if "acquisitionsPerSecond" in r]
floors = {}
for r in every:
    if "acquisitionsPerSecond" not in r:
        floors.setdefault(r["implementation"], []).append(r)
for impl, rs in floors.items():  # notifyFloor*, commitFloor: medians of their latencies
    print(f"{impl:30} {rs[0]['database']:10} rounds {len(rs):2}  " + "  ".join(
        f"{k} {statistics.median(r[k] for r in rs):6.3f}" for k in rs[0] if k.endswith("Ms")))
by = {}
for r in rows:
    by.setdefault((r["implementation"], r["database"]), []).append(r)
for (impl, db), rs in by.items():
    med = lambda k: statistics.median(r[k] for r in rs if r[k] is not None) if any(r[k] is not None for r in rs) else float("nan")
    print(f"{impl:30} {db:10} rounds {len(rs):2}  grants/s {med('acquisitionsPerSecond'):7.1f}  p50 {med('handoffP50Ms'):6.3f}"
          f"  p99 {med('handoffP99Ms'):6.3f} ms  statements/grant {med('statementsPerAcquisition'):6.3f}"
          f"  max/min {med('maxMinSpread'):5.3f} (worst {max(r['maxMinSpread'] or 0 for r in rs):5.3f})"
          + (f"  longest run of one service {med('longestServiceRun'):.0f} (worst {max(r['longestServiceRun'] for r in rs)})"
             if rs[0].get("longestServiceRun") is not None else ""))
PY
rm -rf "$tmp" "$jar"
