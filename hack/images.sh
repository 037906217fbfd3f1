#!/usr/bin/env bash
# images.sh builds OCI image tarballs of the manager and the webhook on a
# machine with no Docker engine and no registry access (`make images`):
#
#   1. a base image is built from nothing with crane: /etc/passwd and
#      /etc/group naming the non-root user 65532, a world-writable /tmp, and
#      the host's CA bundle (the binaries call HTTPS APIs); no shell, no
#      package manager, nothing else;
#   2. `crane registry serve` holds it on loopback, the only registry ko
#      talks to;
#   3. ko builds each static binary (CGO off, -trimpath) onto that base and
#      pushes it to the loopback registry;
#   4. crane pulls each image as an OCI image layout, tarred into
#      $OUT/<name>.tar (load it with `skopeo copy oci-archive:…` or
#      `podman load`, or untar it and `crane push DIR REF`).
#
# The tag is the chart's appVersion (charts/switchboard/Chart.yaml), the
# one place the version is written. Environment: KO, CRANE (the tools),
# OUT (default dist/images), PLATFORM (default linux/<go env GOARCH>).
set -euo pipefail
cd "$(dirname "$0")/.."

KO=${KO:-bin/ko}
CRANE=${CRANE:-bin/crane}
OUT=${OUT:-dist/images}
PLATFORM=${PLATFORM:-linux/$(go env GOARCH)}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
# The name the tarballs carry (the chart's default image.repository).
REPOSITORY=${REPOSITORY:-ghcr.io/switchboard-dev/switchboard}
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/switchboard/Chart.yaml)
[[ -n "$version" ]] || { echo "images.sh: no appVersion in charts/switchboard/Chart.yaml" >&2; exit 1; }
[[ -r "$CA_BUNDLE" ]] || { echo "images.sh: no CA bundle at $CA_BUNDLE (install ca-certificates or set CA_BUNDLE)" >&2; exit 1; }

log() { echo "images.sh: $*" >&2; }

# A loopback registry (sets work and reg).
# shellcheck source=hack/registry.sh
source hack/registry.sh

# 1. The base: one layer, files owned by root, fixed times, so the same
# CA bundle gives the same digest.
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
"$CRANE" append --oci-empty-base -f "$work/base.tar" -t "$reg/base:build" >/dev/null
"$CRANE" mutate "$reg/base:build" --set-platform "$PLATFORM" --user 65532:65532 --workdir / \
  --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt -t "$reg/base:build" >/dev/null
log "base image $("$CRANE" digest "$reg/base:build") ($PLATFORM, user 65532, no shell)"

# 2-4. The binaries on the base, pulled back as OCI layouts and tarred.
mkdir -p "$OUT"
for name in manager webhook; do
  ref=$(KO_DOCKER_REPO="$reg/switchboard/$name" KO_DEFAULTBASEIMAGE="$reg/base:build" \
    GOFLAGS=-mod=mod "$KO" build --bare --platform="$PLATFORM" --sbom=none --tags="$version" \
      --image-label="org.opencontainers.image.version=$version" \
      --image-label="org.opencontainers.image.title=switchboard-$name" \
      "./cmd/$name")
  rm -rf "$work/$name"
  "$CRANE" pull --format=oci "$reg/switchboard/$name:$version" "$work/$name"
  # Named, so podman load and ctr images import tag what they load.
  go run ./hack/ocitag "$work/$name" "$REPOSITORY/$name:$version"
  tar -C "$work/$name" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$OUT/$name.tar" .
  log "$OUT/$name.tar: $ref ($(du -h "$OUT/$name.tar" | cut -f1))"
done
