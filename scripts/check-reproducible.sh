#!/usr/bin/env bash
# Builds the published modules twice, each time in a fresh copy of the working tree under a different path,
# and compares the SHA-256 of every jar they would publish (main, sources, javadoc). Exit 0 if every jar
# is byte-identical; else names each jar that differs, with the entries that differ, and exits 1.
#
#   scripts/check-reproducible.sh
#
# The copies hold the files git tracks, plus new files it does not ignore, as they are in the working tree
# (uncommitted changes included), and nothing built. Tests are neither compiled nor run
# (-Dmaven.test.skip=true): they are not in any published jar. The build runs offline (-o) when every
# dependency is in the local repository already, else online. Settings: HOLDFAST_REPRO_DIR (a new directory
# under /tmp) keeps the copies and build logs; MAVEN_ARGS_EXTRA adds Maven arguments to both builds.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PUBLISHED=(holdfast-bom holdfast-core holdfast-test-databases holdfast-testing holdfast-hibernate holdfast-shedlock
           holdfast-spring-boot-starter)
WORK=${HOLDFAST_REPRO_DIR:-$(mktemp -d /tmp/holdfast-repro.XXXXXX)}
mkdir -p "$WORK"

# the working tree's files, as git sees them (tracked, or new and not ignored), without target/ or .git
copy_tree() {
  local to=$1
  rm -rf "$to"
  mkdir -p "$to"
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard \
      | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done \
      | tar --null -T - -cf -) | tar -xf - -C "$to"
}

pl=$(IFS=,; echo "${PUBLISHED[*]}")
# -am adds the parent; the core's test jar is for the reactor's HA tests only and is never published
mvn_args=(-B -pl "$pl" -am -Dmaven.test.skip=true -Dholdfast.testJar.skip=true ${MAVEN_ARGS_EXTRA:-} package)
offline=-o

build() {
  local name=$1
  local dir=$WORK/$name
  copy_tree "$dir"
  echo "building the published modules in $dir"
  if ! (cd "$dir" && mvn $offline "${mvn_args[@]}") >"$WORK/$name.log" 2>&1; then
    if [ -n "$offline" ] && grep -q 'offline mode' "$WORK/$name.log"; then
      echo "offline build failed on a missing dependency: building online"
      offline=
      (cd "$dir" && mvn "${mvn_args[@]}") >"$WORK/$name.log" 2>&1 || { tail -n 40 "$WORK/$name.log"; return 1; }
    else
      tail -n 40 "$WORK/$name.log"
      return 1
    fi
  fi
}

# every jar a published module builds, with its SHA-256, as "<sha256>  <module>/target/<jar>"
checksums() {
  local dir=$1
  (cd "$dir" && for m in "${PUBLISHED[@]}"; do
     for jar in "$m"/target/*.jar; do
       [ -e "$jar" ] && sha256sum "$jar"
     done
   done) | sort -k 2
}

# The two builds run side by side (two cores; each is mostly one javac at a time), each in its own copy.
build first & first=$!
build second & second=$!
built=0
wait "$first" || built=1
wait "$second" || built=1
[ "$built" -eq 0 ] || { echo "a build failed (logs in $WORK)"; exit 1; }

checksums "$WORK/first" >"$WORK/first.sha256"
checksums "$WORK/second" >"$WORK/second.sha256"

status=0
jars=$(wc -l <"$WORK/first.sha256")
# a jar module without its three jars is a build that went wrong, not a reproducible one
for m in "${PUBLISHED[@]}"; do
  [ "$m" = holdfast-bom ] && continue # a POM only
  built=$(awk -v m="$m" 'index($2, m "/target/") == 1 {print $2}' "$WORK/first.sha256")
  for kind in main sources javadoc; do
    case $kind in
      main) found=$(grep -vE -- '-(sources|javadoc|tests)\.jar$' <<<"$built" || true) ;;
      *) found=$(grep -E -- "-$kind\.jar\$" <<<"$built" || true) ;;
    esac
    if [ -z "$found" ]; then
      echo "MISSING: $m built no $kind jar"
      status=1
    fi
  done
done
if ! diff -q <(awk '{print $2}' "$WORK/first.sha256") <(awk '{print $2}' "$WORK/second.sha256") >/dev/null; then
  echo "DIFFERENT SETS OF JARS:"
  diff <(awk '{print $2}' "$WORK/first.sha256") <(awk '{print $2}' "$WORK/second.sha256") || true
  status=1
fi
while read -r sum jar; do
  other=$(awk -v j="$jar" '$2 == j {print $1}' "$WORK/second.sha256")
  if [ -n "$other" ] && [ "$other" != "$sum" ]; then
    echo "DIFFERS: $jar ($sum vs $other); entries that differ (size, CRC, time, name):"
    diff <(unzip -v "$WORK/first/$jar" | sed 1d) <(unzip -v "$WORK/second/$jar" | sed 1d) | grep '^[<>]' | head -n 20 || true
    status=1
  fi
done <"$WORK/first.sha256"

if [ "$status" -eq 0 ]; then
  echo "reproducible: $jars jars byte-identical across two clean builds ($WORK)"
  [ -n "${HOLDFAST_REPRO_DIR:-}" ] || rm -rf "$WORK"
else
  echo "NOT reproducible (copies and logs kept in $WORK)"
fi
exit "$status"
