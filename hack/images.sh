#!/usr/bin/env bash
# images.sh builds the manager's and the webhook's images, one OCI image
# index each holding every platform asked for, on a machine with no Docker
# engine and no registry access (`make images` for this machine's platform,
# `make release` for linux/amd64 and linux/arm64; docs/release.md):
#
#   1. a base image is built from nothing with crane, once per platform
#      (the same single layer: /etc/passwd and /etc/group naming the
#      non-root user 65532, a world-writable /tmp, the host's CA bundle, as
#      the binaries call HTTPS APIs; no shell, no package manager), each
#      with its platform in its config, gathered into one index;
#   2. `crane registry serve` holds it on loopback, the only registry ko
#      talks to;
#   3. ko builds each static binary (CGO off, -trimpath, the VCS stamp on,
#      so the binary names the git revision it is built from) for every
#      platform onto the base's image of that platform, and pushes one
#      index (a single platform's image is wrapped in an index of one, so
#      every tarball has the same shape);
#   4. crane pulls each index back as an OCI image layout, named with
#      hack/ocitag for `podman load` and `ctr -n k8s.io images import`
#      (which also drops ko's annotations naming the loopback base, so the
#      same commit, Go and CA bundle give the same digests), tarred into
#      $OUT/<name>.tar;
#   5. each platform's binary is taken out of its image and its SBOM
#      written to $SBOM_OUT/<name>_<os>_<arch>.spdx.json (SPDX 2.3 JSON, by
#      `go run ./hack/release sbom`: its modules and toolchain from the
#      binary's build info, the revision, and the platform image's digest).
#      ko's own SBOM stays off (--sbom=none): it leaves out the toolchain
#      and the revision and has no version on the main module, and with
#      several platforms --sbom-dir names files after ko's platform string,
#      not this layout.
#
# The tag is the chart's appVersion (charts/switchboard/Chart.yaml), the
# one place the version is written. Environment: KO, CRANE (the tools),
# OUT (default dist/images), SBOM_OUT (default OUT's sibling sbom/),
# PLATFORMS (comma-separated, default linux/<go env GOARCH>; PLATFORM, one
# platform, is read when PLATFORMS is unset), REPOSITORY (the name the
# tarballs carry), BUILDVCS (default true; false builds outside a git
# checkout, without the revision).
set -euo pipefail
cd "$(dirname "$0")/.."

KO=${KO:-bin/ko}
CRANE=${CRANE:-bin/crane}
OUT=${OUT:-dist/images}
SBOM_OUT=${SBOM_OUT:-$(dirname "$OUT")/sbom}
PLATFORMS=${PLATFORMS:-${PLATFORM:-linux/$(go env GOARCH)}}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
BUILDVCS=${BUILDVCS:-true}
# The name the tarballs carry (the chart's default image.repository).
REPOSITORY=${REPOSITORY:-ghcr.io/switchboard-dev/switchboard}
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/switchboard/Chart.yaml)
[[ -n "$version" ]] || { echo "images.sh: no appVersion in charts/switchboard/Chart.yaml" >&2; exit 1; }
[[ -r "$CA_BUNDLE" ]] || { echo "images.sh: no CA bundle at $CA_BUNDLE (install ca-certificates or set CA_BUNDLE)" >&2; exit 1; }
IFS=, read -r -a platforms <<<"$PLATFORMS"

log() { echo "images.sh: $*" >&2; }
started=$SECONDS
took() { echo "$((SECONDS - $1))s"; }

# A loopback registry (sets work and reg).
# shellcheck source=hack/registry.sh
source hack/registry.sh

# The index reader and the SBOM writer, built once.
go build -o "$work/imagecheck" ./hack/imagecheck
go build -o "$work/release" ./hack/release

# 1. The base: one layer, files owned by root, fixed times, so the same
# CA bundle gives the same digest; one image a platform, then their index.
root=$work/rootfs
mkdir -p "$root/etc/ssl/certs" "$root/tmp"
chmod 1777 "$root/tmp"
cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
nonroot:x:65532:
GROUP
cp "$CA_BUNDLE" "$root/etc/ssl/certs/ca-certificates.crt"
chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/ssl/certs/ca-certificates.crt"
tar -C "$root" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$work/base.tar" etc tmp
bases=()
for platform in "${platforms[@]}"; do
  tag=$reg/base:${platform//\//-}
  "$CRANE" append --oci-empty-base -f "$work/base.tar" -t "$tag" >/dev/null
  "$CRANE" mutate "$tag" --set-platform "$platform" --user 65532:65532 --workdir / \
    --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt -t "$tag" >/dev/null
  bases+=(-m "$tag")
done
# crane index append takes each entry's platform from its config.
"$CRANE" index append "${bases[@]}" -t "$reg/base:build" >/dev/null 2>"$work/index.log" || { cat "$work/index.log" >&2; exit 1; }
log "base index $("$CRANE" digest "$reg/base:build") ($PLATFORMS, user 65532, no shell)"

# 2-5. The binaries on the base, pulled back as OCI layouts, tarred, and
# each platform's SBOM.
mkdir -p "$OUT" "$SBOM_OUT"
for name in manager webhook; do
  step=$SECONDS
  image=$reg/switchboard/$name:$version
  # GOFLAGS: -buildvcs=true fails the build rather than leave the
  # revision out (ko passes GOFLAGS to go build).
  ref=$(KO_DOCKER_REPO="$reg/switchboard/$name" KO_DEFAULTBASEIMAGE="$reg/base:build" \
    GOFLAGS="-mod=mod -buildvcs=$BUILDVCS" "$KO" build --bare --platform="$PLATFORMS" --sbom=none --tags="$version" \
      --image-label="org.opencontainers.image.version=$version" \
      --image-label="org.opencontainers.image.title=switchboard-$name" \
      "./cmd/$name")
  if [[ ${#platforms[@]} -eq 1 ]]; then
    # ko pushes a single platform's image, not an index: wrap it.
    "$CRANE" index append -m "$ref" -t "$image" >/dev/null 2>"$work/index.log" || { cat "$work/index.log" >&2; exit 1; }
  fi
  rm -rf "$work/$name"
  "$CRANE" pull --format=oci "$image" "$work/$name"
  # Named, so podman load and ctr images import tag what they load, and
  # without ko's annotations naming the loopback base (its random port
  # would change every digest each build); pushed back as rewritten.
  go run ./hack/ocitag "$work/$name" "$REPOSITORY/$name:$version"
  "$CRANE" push "$work/$name" "$image" >/dev/null 2>"$work/push.log" || { cat "$work/push.log" >&2; exit 1; }
  "$work/imagecheck" platforms --layout "$work/$name" --ref "$REPOSITORY/$name:$version" --want "$PLATFORMS" >"$work/$name.platforms"
  while read -r platform digest; do
    sbom=$SBOM_OUT/${name}_${platform//\//_}.spdx.json
    mkdir -p "$work/bin"
    # ko writes the binary as /ko-app/<name>, with its leading slash (-P
    # keeps tar from saying it drops it; -O writes nowhere else).
    "$CRANE" export "$reg/switchboard/$name@$digest" - | tar -xOPf - --no-anchored "ko-app/$name" >"$work/bin/$name"
    "$work/release" sbom --binary "$work/bin/$name" --out "$sbom" --name "${name}_${platform//\//_}" \
      --version "$version" --image "$REPOSITORY/$name:$version" --digest "$digest" --platform "$platform"
    log "$sbom: $platform $digest"
  done <"$work/$name.platforms"
  tar -C "$work/$name" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$OUT/$name.tar" .
  log "$OUT/$name.tar: index $("$CRANE" digest "$image") ($PLATFORMS, $(du -h "$OUT/$name.tar" | cut -f1), $(took "$step"))"
done
log "done in $(took "$started")"
