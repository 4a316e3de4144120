#!/usr/bin/env bash
# A release of version 0.1.0 as RELEASING.md makes it, up to the upload, then scripts/check-release.sh on
# its staging directory. Nothing leaves this machine and the checkout is left as it is:
#   - the key is a throwaway one, made in a temporary GNUPGHOME;
#   - the version is set (scripts/set-version.sh) in a temporary copy of the working tree: tracked and
#     untracked files, no build output;
#   - deploy writes to the copy's target/staging-deploy; install is skipped, so ~/.m2 gets no 0.1.0 either.
# The temporary directories are removed on exit; RELEASE_DRY_RUN_KEEP=1 keeps them (their paths are printed).
#
# Usage: scripts/release-dry-run.sh [version]   (0.1.0 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-0.1.0}
# The published modules; -am adds the parent POM, which they all name.
published=holdfast-bom,holdfast-core,holdfast-test-databases,holdfast-testing,holdfast-hibernate,holdfast-shedlock,holdfast-spring-boot-starter

work=$(mktemp -d /tmp/holdfast-release.XXXXXX)
export GNUPGHOME=$work/gnupg
copy=$work/tree
cleanup() {
  gpgconf --kill gpg-agent >/dev/null 2>&1 || true
  if [ "${RELEASE_DRY_RUN_KEEP:-}" = 1 ]; then
    echo "kept: $work (staging: $copy/target/staging-deploy, GNUPGHOME: $GNUPGHOME)"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
start=$SECONDS

echo "--- throwaway signing key in $GNUPGHOME"
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key 'Holdfast release dry run <dry-run@holdfast.invalid>' ed25519 sign 1d
key=$(gpg --batch --with-colons --list-secret-keys | awk -F: '$1 == "fpr" { print $10; exit }')

echo "--- copy of the working tree in $copy, version $version"
mkdir "$copy"
git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | tar --null -T - -cf - | tar -xf - -C "$copy"
(cd "$copy" && scripts/set-version.sh "$version")

echo "--- mvn deploy -Prelease for $published (tests skipped: the main build runs them)"
(cd "$copy" && env -u MAVEN_GPG_PASSPHRASE mvn -B -Prelease -DskipTests -Dmaven.install.skip=true \
  -Dgpg.keyname="$key" -pl "$published" -am deploy)

echo "--- scripts/check-release.sh"
staging=$copy/target/staging-deploy
scripts/check-release.sh "$staging" "$version"

echo "--- the check refuses what Central would refuse: each broken copy fails, naming the file"
# refuses WHAT EXPECTED COMMAND...: COMMAND breaks a copy of the staging directory (run inside it); the
# check must fail and its output must contain EXPECTED.
refuses() {
  local what=$1 expected=$2 broken=$work/broken out
  shift 2
  rm -rf "$broken" && cp -r "$staging" "$broken"
  (cd "$broken" && "$@")
  if out=$(scripts/check-release.sh "$broken" "$version" 2>&1); then
    echo "FAIL: check-release.sh accepted $what" >&2
    exit 1
  fi
  if ! grep -qF -- "$expected" <<<"$out"; then
    printf 'FAIL: check-release.sh refused %s without naming %s:\n%s\n' "$what" "$expected" "$out" >&2
    exit 1
  fi
  echo "refused $what: $expected"
}
core=dev/holdfast/holdfast-core/$version/holdfast-core-$version
refuses "a missing signature" "$core.jar.asc: missing" rm "$core.jar.asc"
refuses "a signature of another file" "$core.jar.asc: does not verify" cp "$core-sources.jar.asc" "$core.jar.asc"
refuses "a checksum that does not match" "$core.pom.sha1: does not match" cp "$core.jar.sha1" "$core.pom.sha1"
refuses "a missing javadoc jar" "$core-javadoc.jar: missing" rm "$core-javadoc.jar"
refuses "a POM without description" "$core.pom: no description" sed -i '/<description>/d' "$core.pom"
refuses "a parent POM without licenses" "$core.pom: no licenses" \
  sed -i '/<licenses>/,/<\/licenses>/d' "dev/holdfast/holdfast-parent/$version/holdfast-parent-$version.pom"
refuses "a tests jar" "$core-tests.jar: not a published file" cp "$core.jar" "$core-tests.jar"
refuses "an unpublished module" "dev/holdfast/holdfast-shop/$version/holdfast-shop-$version.jar: not a published file" \
  install -D "$core.jar" "dev/holdfast/holdfast-shop/$version/holdfast-shop-$version.jar"
echo "release dry run of $version: passed in $((SECONDS - start)) s"
