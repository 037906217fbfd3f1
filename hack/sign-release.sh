#!/usr/bin/env bash
# sign-release.sh is the last step of `make release` (docs/release.md,
# "Signatures and provenance"). A platform team verifies what it installs
# before it installs it, possibly offline, so the release directory alone
# must carry everything cosign needs. This script:
#
#   1. packages the chart into $RELEASE_DIR/charts/;
#   2. pushes the image layouts ($RELEASE_DIR/images/<name>.tar, each one
#      image index) and the chart to an OCI registry;
#   3. writes the SLSA provenance (hack/provenance): its subjects are the
#      image indexes, the chart and every file of the release;
#   4. signs each image and the chart by digest, attests the provenance on
#      each and each image's SBOMs ($RELEASE_DIR/sbom/<name>_*.spdx.json);
#   5. signs every file (<file>.bundle) and attests its provenance
#      (<file>.provenance.bundle);
#   6. saves the signed images and chart, signatures and attestations
#      included, as OCI layouts in $RELEASE_DIR/oci/<name>/ (`cosign load`
#      puts them into any registry);
#   7. writes digests.txt (each artifact, its digest and the commands that
#      verify it), then sha256sums.txt over every file, and signs it.
#
# Where it pushes: by default a registry on loopback (hack/registry.sh),
# gone when the script ends: the oci/ layouts are what stays. PUBLISH=1
# pushes to $REPOSITORY itself (the hosted release workflow, logged in).
#
# How it signs:
#   (default)   with a key pair made once per machine in
#               ${XDG_CACHE_HOME:-$HOME/.cache}/switchboard/release-key/,
#               encrypted with COSIGN_PASSWORD (empty when unset; give the
#               same one every time);
#   COSIGN_KEY  with that key (a file or a KMS URI); COSIGN_PASSWORD is its
#               password;
#   KEYLESS=1   keyless: a Fulcio certificate for the CI's OIDC identity and
#               Rekor entries (the release workflow); CERT_IDENTITY is that
#               identity, which the verify commands name.
# A key-signed release is signed with no transparency log (everything stays
# on this machine): its verify commands say --insecure-ignore-tlog=true.
#
# Environment: COSIGN, CRANE, HELM (the tools), RELEASE_DIR; REPOSITORY
# (default ghcr.io/switchboard-dev/switchboard); for the provenance
# BUILDER_ID, SOURCE_REPOSITORY, SOURCE_REF, INVOCATION_ID, STARTED_ON.
set -euo pipefail
cd "$(dirname "$0")/.."

COSIGN=${COSIGN:-bin/cosign}
CRANE=${CRANE:-bin/crane}
HELM=${HELM:-bin/helm}
RELEASE_DIR=${RELEASE_DIR:-dist/release}
REPOSITORY=${REPOSITORY:-ghcr.io/switchboard-dev/switchboard}
BUILDER_ID=${BUILDER_ID:-https://github.com/switchboard-dev/switchboard/Makefile#release}
SOURCE_REPOSITORY=${SOURCE_REPOSITORY:-https://github.com/switchboard-dev/switchboard}
KEY_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/switchboard/release-key
export COSIGN_PASSWORD=${COSIGN_PASSWORD-}

log() { echo "sign-release.sh: $*" >&2; }
die() { log "$*"; exit 1; }
# quiet runs a command, showing its output only when it fails.
quiet() {
  local out
  if ! out=$("$@" 2>&1 >/dev/null); then echo "$out" >&2; die "failed: $*"; fi
}

[[ -d "$RELEASE_DIR" ]] || die "no $RELEASE_DIR: run make release"
RELEASE_DIR=$(cd "$RELEASE_DIR" && pwd)
shopt -s nullglob
images=("$RELEASE_DIR"/images/*.tar)
((${#images[@]} > 0)) || die "no image layouts in $RELEASE_DIR/images (hack/images.sh writes them)"
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/switchboard/Chart.yaml)
chart_version=$(sed -n 's/^version: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/switchboard/Chart.yaml)
[[ -n "$version" && -n "$chart_version" ]] || die "no version or appVersion in charts/switchboard/Chart.yaml"

# The signer: sign (for cosign sign, attest, sign-blob, attest-blob) and
# identity (for the verify commands).
if [[ "${KEYLESS:-}" == 1 ]]; then
  [[ -z "${COSIGN_KEY:-}" ]] || die "KEYLESS=1 and COSIGN_KEY both set: choose one"
  [[ -n "${CERT_IDENTITY:-}" ]] || die "KEYLESS=1 needs CERT_IDENTITY (the workflow's identity, for the verify commands)"
  sign=(--yes)
  identity=(--certificate-identity "$CERT_IDENTITY")
else
  key=${COSIGN_KEY:-$KEY_DIR/cosign.key}
  if [[ -z "${COSIGN_KEY:-}" && ! -f "$key" ]]; then
    # Made in a directory of its own and renamed into place, so two
    # releases at once end with one key.
    mkdir -p "$(dirname "$KEY_DIR")"
    tmp=$(mktemp -d "$KEY_DIR.XXXXXX")
    quiet "$COSIGN" generate-key-pair --output-key-prefix "$tmp/cosign"
    mv -T "$tmp" "$KEY_DIR" 2>/dev/null || rm -rf "$tmp"
    log "made the release key pair $KEY_DIR/cosign.{key,pub} (password: COSIGN_PASSWORD)"
  fi
  public_key=$("$COSIGN" public-key --key "$key" 2>/dev/null) || die "cannot read the key $key (is COSIGN_PASSWORD its password?)"
  sign=(--key "$key" --tlog-upload=false --yes)
  identity=(--key cosign.pub)
fi

# What an earlier run wrote goes, so nothing stale is signed or saved.
rm -rf "$RELEASE_DIR/charts" "$RELEASE_DIR/oci"
rm -f "$RELEASE_DIR"/{cosign.pub,digests.txt,provenance.intoto.json}
find "$RELEASE_DIR" -name '*.bundle' -delete
[[ -z "${public_key:-}" ]] || echo "$public_key" >"$RELEASE_DIR/cosign.pub"

# 1. The chart.
"$HELM" package charts/switchboard --destination "$RELEASE_DIR/charts" >/dev/null
chart=charts/switchboard-$chart_version.tgz
[[ -f "$RELEASE_DIR/$chart" ]] || die "helm package wrote no $chart"

# 2. The registry: repo is where this run pushes, REPOSITORY what the
# release names. reg_flags and helm_flags let cosign and helm speak plain
# HTTP to the loopback one.
if [[ "${PUBLISH:-}" == 1 ]]; then
  repo=$REPOSITORY reg_flags=() helm_flags=()
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
else
  # shellcheck source=hack/registry.sh
  source hack/registry.sh
  repo=$reg/${REPOSITORY#*/} reg_flags=(--allow-http-registry) helm_flags=(--plain-http)
fi
go build -o "$work/provenance" ./hack/provenance

names=() digests=() platforms=
for tarball in "${images[@]}"; do
  name=$(basename "$tarball" .tar)
  read -r layout_digest layout_platforms < <("$work/provenance" layout "$tarball")
  mkdir -p "$work/layout-$name"
  tar -C "$work/layout-$name" -xf "$tarball"
  pushed=$("$CRANE" push "$work/layout-$name" "$repo/$name:$version" 2>"$work/crane.log") || { cat "$work/crane.log" >&2; die "crane push $tarball failed"; }
  [[ "${pushed#*@}" == "$layout_digest" ]] || die "$tarball holds $layout_digest, but crane pushed $pushed"
  [[ -z "$platforms" || "$platforms" == "$layout_platforms" ]] || die "$tarball is $layout_platforms, the others $platforms"
  names+=("$name") digests+=("$layout_digest") platforms=$layout_platforms
  log "$REPOSITORY/$name:$version $layout_digest ($layout_platforms)"
done
quiet "$HELM" push "$RELEASE_DIR/$chart" "oci://$repo/charts" "${helm_flags[@]}"
chart_digest=$("$CRANE" digest "$repo/charts/switchboard:$chart_version")
log "$REPOSITORY/charts/switchboard:$chart_version $chart_digest"

# 3. The provenance: subjects are the images, the chart and these files.
blobs=()
for f in "$RELEASE_DIR"/kubectl-switchboard_*.tar.gz "$RELEASE_DIR"/kubectl-switchboard_*.spdx.json \
  "$RELEASE_DIR"/switchboard.yaml "$RELEASE_DIR"/images/*.tar "$RELEASE_DIR"/sbom/*.spdx.json "$RELEASE_DIR/$chart"; do
  [[ -f "$f" ]] && blobs+=("${f#"$RELEASE_DIR"/}")
done
revision=$(git rev-parse HEAD)
dirty=false
[[ -z "$(git status --porcelain)" ]] || { dirty=true; log "the working tree has uncommitted changes: the provenance says so"; }
ref=${SOURCE_REF:-${GITHUB_REF:-}}
if [[ -z "$ref" ]]; then
  ref=$(git describe --exact-match --tags 2>/dev/null | sed 's|^|refs/tags/|') || ref=$(git symbolic-ref -q HEAD) || ref=
fi
args=(--dir "$RELEASE_DIR" --predicate "$work/provenance.json" --chart "$REPOSITORY/charts/switchboard:$chart_version@$chart_digest"
  --builder-id "$BUILDER_ID" --source "$SOURCE_REPOSITORY" --ref "$ref" --revision "$revision" --dirty="$dirty"
  --invocation-id "${INVOCATION_ID:-}" --started-on "${STARTED_ON:-}" --version "$version" --chart-version "$chart_version"
  --platforms "$platforms" "${identity[@]}")
for i in "${!names[@]}"; do args+=(--image "$REPOSITORY/${names[$i]}:$version@${digests[$i]}"); done
for b in "${blobs[@]}"; do args+=(--blob "$b"); done
"$work/provenance" write "${args[@]}"

# 4. The images and the chart: signed, attested, saved (6).
sign_oci() { # sign_oci REPOSITORY_PATH DIGEST SBOM...
  local path=$1 digest=$2
  shift 2
  local at=$repo/$path@$digest
  quiet "$COSIGN" sign "${sign[@]}" "${reg_flags[@]}" --sign-container-identity "$REPOSITORY/$path" "$at"
  quiet "$COSIGN" attest "${sign[@]}" "${reg_flags[@]}" --type slsaprovenance1 --predicate "$work/provenance.json" "$at"
  for sbom in "$@"; do
    quiet "$COSIGN" attest "${sign[@]}" "${reg_flags[@]}" --type spdxjson --predicate "$sbom" "$at"
  done
  quiet "$COSIGN" save "${reg_flags[@]}" --dir "$RELEASE_DIR/oci/$(basename "$path")" "$at"
}
for i in "${!names[@]}"; do
  sboms=("$RELEASE_DIR/sbom/${names[$i]}"_*.spdx.json)
  ((${#sboms[@]} > 0)) || die "no SBOM for ${names[$i]} in $RELEASE_DIR/sbom (hack/images.sh writes them)"
  sign_oci "${names[$i]}" "${digests[$i]}" "${sboms[@]}"
done
sign_oci charts/switchboard "$chart_digest"

# 5. Every file: a signature and a provenance attestation beside it.
for b in "${blobs[@]}"; do
  quiet "$COSIGN" sign-blob "${sign[@]}" --bundle "$RELEASE_DIR/$b.bundle" "$RELEASE_DIR/$b"
  quiet "$COSIGN" attest-blob "${sign[@]}" --type slsaprovenance1 --predicate "$work/provenance.json" \
    --bundle "$RELEASE_DIR/$b.provenance.bundle" "$RELEASE_DIR/$b"
done

# 7. The checksums of every file (digests.txt included), signed.
find "$RELEASE_DIR" -name '*.bundle' -exec chmod 0644 {} +
(cd "$RELEASE_DIR" && find . -type f ! -name sha256sums.txt ! -name sha256sums.txt.bundle -printf '%P\n' |
  LC_ALL=C sort | xargs -d '\n' sha256sum) >"$work/sha256sums.txt"
mv "$work/sha256sums.txt" "$RELEASE_DIR/sha256sums.txt"
quiet "$COSIGN" sign-blob "${sign[@]}" --bundle "$RELEASE_DIR/sha256sums.txt.bundle" "$RELEASE_DIR/sha256sums.txt"
chmod 0644 "$RELEASE_DIR/sha256sums.txt.bundle"
log "signed ${#names[@]} images, the chart and ${#blobs[@]} files; verify with make verify-release, or the commands in $RELEASE_DIR/digests.txt"
