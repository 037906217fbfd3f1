#!/usr/bin/env bash
# previous-release.sh COMMIT prints a directory holding the release make e2e
# upgrades from: the chart and both images of COMMIT, an earlier commit of
# main, built from git the way a person installs the last release from its
# tag (docs/e2e.md, "Upgrade from the previous release"):
#
#   DIR/chart/           COMMIT's charts/switchboard
#   DIR/images/*.tar     COMMIT's images, built by COMMIT's own hack/images.sh
#                        for this machine's platform and named
#                        $PREVIOUS_REPOSITORY/{manager,webhook}:<its appVersion>,
#                        so that containerd holds them beside the current
#                        images, which have the same appVersion
#   DIR/commit           COMMIT, for the log
#
# The build takes a few minutes, so it is kept in the user's cache
# directory, one directory per commit, like the envtest pair; a partly
# built directory is never used (it is renamed into place at the end).
# Needs KO and CRANE (the tools COMMIT's images.sh calls) and the commit in
# this clone's history.
set -euo pipefail
cd "$(dirname "$0")/../.."

commit=${1:?usage: $0 COMMIT}
KO=${KO:-$PWD/bin/ko}
CRANE=${CRANE:-$PWD/bin/crane}
PREVIOUS_REPOSITORY=${PREVIOUS_REPOSITORY:-ghcr.io/switchboard-dev/switchboard-previous}

log() { echo "previous-release.sh: $*" >&2; }

full=$(git rev-parse --verify "$commit^{commit}") || {
  log "$commit is not in this clone's history (a shallow clone? fetch main's history)"
  exit 1
}
dir="${XDG_CACHE_HOME:-$HOME/.cache}/switchboard/previous-release/$full"
if [[ -f "$dir/commit" ]]; then
  echo "$dir"
  exit 0
fi
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "$(dirname "$dir")/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

log "building the release of ${full:0:12} (once; cached in $dir)"
mkdir -p "$tmp/src"
git archive "$full" | tar -x -C "$tmp/src"
mkdir -p "$tmp/out"
cp -r "$tmp/src/charts/switchboard" "$tmp/out/chart"
# COMMIT's own script, with this machine's tools: its images as it built
# them. BUILDVCS=false: the archive has no .git to stamp from (scripts from
# before the VCS stamp ignore it).
(cd "$tmp/src" && BUILDVCS=false KO="$KO" CRANE="$CRANE" OUT="$tmp/out/images" REPOSITORY="$PREVIOUS_REPOSITORY" ./hack/images.sh)
echo "$full" >"$tmp/out/commit"
rm -rf "$dir"
mv "$tmp/out" "$dir"
echo "$dir"
