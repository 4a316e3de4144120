#!/usr/bin/env bash
# Sets the version of every module: replaces the root POM's version wherever a POM names it as its own or
# its parent's (each POM names it once), and sets project.build.outputTimestamp to now. Runs on the Maven here (3.8), which versions-maven-plugin no longer
# supports.
#
# Usage: scripts/set-version.sh <new-version>   (in the directory of the tree to change)
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 <new-version>" >&2
  exit 2
fi
new=$1
# The root POM's own version: the first <version> after <artifactId>holdfast-parent</artifactId>.
old=$(awk '/<artifactId>holdfast-parent<\/artifactId>/ { found = 1 } found && /<version>/ { gsub(/.*<version>|<\/version>.*/, ""); print; exit }' pom.xml)
if [ -z "$old" ]; then
  echo "no version found in pom.xml" >&2
  exit 1
fi
mapfile -t poms < <(find . -name pom.xml -not -path '*/target/*' | sort)
sed -i "s#<version>$old</version>#<version>$new</version>#" "${poms[@]}"
# The time every jar entry carries (reproducible builds): the time this version was set.
sed -i "s#<project.build.outputTimestamp>[^<]*</project.build.outputTimestamp>#<project.build.outputTimestamp>$(date -u +%Y-%m-%dT%H:%M:%SZ)</project.build.outputTimestamp>#" pom.xml
if grep -l -F -- "$old" "${poms[@]}"; then
  echo "FAIL: $old is still named in the POMs above" >&2
  exit 1
fi
echo "version $old -> $new in ${#poms[@]} POMs"
