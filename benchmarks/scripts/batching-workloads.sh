#!/usr/bin/env bash
# Runs BatchingWorkloads (the lease batching workload matrix, then the four-workers-per-service chaos
# run) under the shared benchmark lock, from a copy of the jar (a rebuild meanwhile changes nothing).
#   usage: batching-workloads.sh [--loaded] <out-prefix> [BatchingWorkloads options, e.g. --quick]
# --loaded: `stress-ng --cpu 2` runs beside the harness the whole time (both cores saturated by
# other processes), started 10 s before it and stopped after it.
# Writes <out-prefix>.json and .md (the harness), .log (its output) and .uptime (uptime before,
# once loaded, and after; the stress-ng command). Every cell also records the load average itself.
set -euo pipefail
cd "$(dirname "$0")/../.."
loaded=false
if [[ ${1:-} == --loaded ]]; then
  loaded=true
  shift
  # Without it the run would be labelled loaded yet measure an idle machine.
  command -v stress-ng > /dev/null || { echo "--loaded needs stress-ng (apt-get install -y stress-ng)" >&2; exit 2; }
fi
out=${1:?usage: batching-workloads.sh [--loaded] <out-prefix> [options]}
shift
mkdir -p "$(dirname "$out")"
exec 9>/tmp/holdfast-bench.lock
flock 9
jar=$(mktemp --suffix=.jar)
cp benchmarks/target/benchmarks.jar "$jar"
stress=
cleanup() {
  if [[ -n $stress ]]; then
    kill "$stress" 2>/dev/null || true
    wait "$stress" 2>/dev/null || true
  fi
  rm -f "$jar"
}
trap cleanup EXIT
echo "before: $(uptime)" > "$out.uptime"
if $loaded; then
  # The timeout only bounds a run whose script was killed before it could stop stress-ng.
  stress-ng --cpu 2 --timeout 6h --quiet &
  stress=$!
  echo "stress-ng --cpu 2 (pid $stress)" >> "$out.uptime"
  sleep 10
  echo "loaded: $(uptime)" >> "$out.uptime"
fi
start=$(date +%s)
java -cp "$jar" dev.holdfast.benchmarks.BatchingWorkloads --out "$out" "$@" 2>&1 | tee "$out.log"
echo "after: $(uptime)" >> "$out.uptime"
echo "took $(( $(date +%s) - start )) s: java -cp benchmarks.jar dev.holdfast.benchmarks.BatchingWorkloads --out $out $*" >> "$out.uptime"
cat "$out.uptime"
