#!/usr/bin/env bash
# Checks a staging directory that `mvn deploy -Prelease` filled (laid out like Maven Central) against what
# Central accepts, before anything is uploaded:
#   - every published artifact is there, and nothing else (no example, benchmark or test module, no tests jar);
#   - each POM has, itself or through its parent, name, description, url, licenses, scm and developers;
#   - each artifact has its jar (not the BOM and the parent: POMs only), a -sources.jar and a -javadoc.jar;
#   - every file has an .asc signature that gpg verifies and .md5/.sha1 checksums that match (checksums of
#     the signatures are not required, but checked where they exist).
# The signatures are verified with the keys of the current GNUPGHOME (the release key must be in it).
#
# Usage: scripts/check-release.sh <staging-dir> [version]   (version: the single one found, by default)
# Prints one line per problem, naming the file, and exits 1 if there is any.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 <staging-dir> [version]" >&2
  exit 2
fi
staging=$(cd "$1" && pwd)
group_path=dev/holdfast
# Jars with sources and javadoc; then the POM-only artifacts. holdfast-parent is published because every
# module's POM names it as parent: a consumer's Maven reads it for the inherited metadata and versions.
jar_artifacts=(holdfast-core holdfast-hibernate holdfast-shedlock holdfast-spring-boot-starter holdfast-testing holdfast-test-databases)
pom_artifacts=(holdfast-bom holdfast-parent)

problems=0
problem() { echo "FAIL: $*"; problems=$((problems + 1)); }

if [ $# -ge 2 ]; then
  version=$2
else
  mapfile -t versions < <(find "$staging/$group_path" -mindepth 2 -maxdepth 2 -type d -printf '%f\n' 2>/dev/null | sort -u)
  if [ "${#versions[@]}" -ne 1 ]; then
    echo "FAIL: expected one version under $staging/$group_path, found: ${versions[*]:-none}"
    exit 1
  fi
  version=${versions[0]}
fi
case $version in *-SNAPSHOT) problem "version $version is a snapshot: Central takes releases only" ;; esac
echo "checking $staging, version $version"

# Files each artifact must have, relative to the staging directory.
declare -A expected=()
for a in "${jar_artifacts[@]}" "${pom_artifacts[@]}"; do
  expected["$group_path/$a/$version/$a-$version.pom"]=1
done
for a in "${jar_artifacts[@]}"; do
  for suffix in .jar -sources.jar -javadoc.jar; do
    expected["$group_path/$a/$version/$a-$version$suffix"]=1
  done
done

# 1. Every expected file, with a signature that verifies and checksums that match.
for f in $(printf '%s\n' "${!expected[@]}" | sort); do
  path=$staging/$f
  if [ ! -s "$path" ]; then
    problem "$f: missing or empty"
    continue
  fi
  if [ ! -f "$path.asc" ]; then
    problem "$f.asc: missing"
  elif ! gpg --batch --verify "$path.asc" "$path" >/dev/null 2>&1; then
    problem "$f.asc: does not verify (gpg --verify)"
  fi
  # Central needs no checksums of the signatures, but refuses wrong ones.
  for sum in md5 sha1; do
    for target in "$path" "$path.asc"; do
      if [ ! -f "$target.$sum" ]; then
        [ "$target" = "$path" ] && problem "$f.$sum: missing"
      elif [ "$(awk '{ print $1; exit }' "$target.$sum")" != "$("${sum}sum" "$target" | cut -d' ' -f1)" ]; then
        problem "${target#"$staging"/}.$sum: does not match the file"
      fi
    done
  done
done

# 2. The jars hold what their name says: classes, sources, javadoc pages.
for a in "${jar_artifacts[@]}"; do
  dir=$staging/$group_path/$a/$version
  check_entries() { # file, pattern, what
    [ -s "$dir/$1" ] || return 0
    # grep reads the whole listing: with -q it would stop early and fail the pipe (pipefail).
    if ! unzip -Z1 "$dir/$1" 2>/dev/null | grep -E "$2" >/dev/null; then
      problem "$group_path/$a/$version/$1: holds no $3"
    fi
  }
  check_entries "$a-$version.jar" '\.class$' 'class file'
  check_entries "$a-$version-sources.jar" '\.java$' 'Java source'
  check_entries "$a-$version-javadoc.jar" '^index\.html$' 'index.html'
done

# 3. The POM fields Central requires, read through the parent chain as Maven reads them.
pom_problems=$(python3 - "$staging" "$group_path" "$version" "${jar_artifacts[@]}" "${pom_artifacts[@]}" <<'EOF'
import os, sys
import xml.etree.ElementTree as ET

staging, group_path, version, artifacts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
NS = {"m": "http://maven.apache.org/POM/4.0.0"}

def load(artifact, ver):
    path = os.path.join(staging, group_path, artifact, ver, f"{artifact}-{ver}.pom")
    return ET.parse(path).getroot() if os.path.isfile(path) else None

def text(root, xpath):
    node = root.find(xpath, NS)
    return node.text.strip() if node is not None and node.text and node.text.strip() else None

# name and description belong to each POM (Maven does not inherit name); the rest may come from the parent.
OWN = {"name": "m:name", "description": "m:description"}
INHERITED = {
    "url": "m:url",
    "licenses (name and url)": "m:licenses/m:license",
    "scm (url and connection)": "m:scm",
    "developers": "m:developers/m:developer",
}

def complete(field, node):
    if node is None:
        return False
    if field.startswith("licenses"):
        return bool(text(node, "m:name")) and bool(text(node, "m:url"))
    if field.startswith("scm"):
        return bool(text(node, "m:url")) and bool(text(node, "m:connection"))
    if field == "developers":
        return bool(text(node, "m:name") or text(node, "m:id"))
    return bool(node.text and node.text.strip())

for artifact in artifacts:
    pom_file = f"{group_path}/{artifact}/{version}/{artifact}-{version}.pom"
    root = load(artifact, version)
    if root is None:
        continue  # reported as missing above
    for field, xpath in OWN.items():
        if not text(root, xpath):
            print(f"{pom_file}: no {field}")
    for field, xpath in INHERITED.items():
        current, found = root, False
        while current is not None and not found:
            found = complete(field, current.find(xpath, NS))
            parent = current.find("m:parent", NS)
            if found or parent is None:
                break
            if text(parent, "m:groupId") != group_path.replace("/", "."):
                break
            current = load(text(parent, "m:artifactId"), text(parent, "m:version"))
        if not found:
            print(f"{pom_file}: no {field}, neither here nor in a published parent")
    if text(root, "m:version") and text(root, "m:version").endswith("-SNAPSHOT"):
        print(f"{pom_file}: snapshot version")
    for dep in root.findall(".//m:dependency", NS):
        v = text(dep, "m:version")
        if v and v.endswith("-SNAPSHOT"):
            print(f"{pom_file}: depends on a snapshot: {text(dep, 'm:artifactId')} {v}")
EOF
)
if [ -n "$pom_problems" ]; then
  while IFS= read -r line; do problem "$line"; done <<<"$pom_problems"
fi

# 4. Nothing else: every file is an expected one, its signature or checksum, or Maven's metadata.
while IFS= read -r f; do
  base=$f
  for ext in .md5 .sha1 .sha256 .sha512; do base=${base%"$ext"}; done
  base=${base%.asc}
  [ -n "${expected[$base]:-}" ] && continue
  case $base in
    "$group_path"/*/maven-metadata.xml) a=${base#"$group_path"/}; a=${a%/maven-metadata.xml}
      case " ${jar_artifacts[*]} ${pom_artifacts[*]} " in *" $a "*) continue ;; esac ;;
  esac
  problem "$f: not a published file (only ${jar_artifacts[*]} ${pom_artifacts[*]} are published)"
done < <(cd "$staging" && find . -type f -printf '%P\n' | sort)

if [ "$problems" -ne 0 ]; then
  echo "check-release: $problems problem(s) in $staging"
  exit 1
fi
echo "check-release: OK: ${#jar_artifacts[@]} jar artifacts and ${#pom_artifacts[@]} POM-only artifacts, version $version, signed and checksummed"
