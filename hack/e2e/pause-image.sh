#!/usr/bin/env bash
# pause-image.sh OUT.tar builds the e2e node's pause image (the pod sandbox
# containerd starts for every pod) with no registry and no Docker, the way
# hack/images.sh builds its base: a static binary from hack/e2e/pause on an
# empty base with crane, held by a loopback `crane registry serve`, pulled
# back as an OCI layout, named (hack/ocitag) and tarred for
# `ctr -n k8s.io images import`. The name is $PAUSE_IMAGE
# (default localhost/switchboard-e2e/pause:1). Needs CRANE.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=${1:?usage: $0 OUT.tar}
CRANE=${CRANE:-bin/crane}
PAUSE_IMAGE=${PAUSE_IMAGE:-localhost/switchboard-e2e/pause:1}
PLATFORM=${PLATFORM:-linux/$(go env GOARCH)}

# A loopback registry (sets work and reg).
# shellcheck source=hack/registry.sh
source hack/registry.sh

mkdir -p "$work/rootfs"
CGO_ENABLED=0 GOOS=linux GOARCH="${PLATFORM#linux/}" go build -trimpath -ldflags=-s -o "$work/rootfs/pause" ./hack/e2e/pause
tar -C "$work/rootfs" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$work/pause-layer.tar" pause
"$CRANE" append --oci-empty-base -f "$work/pause-layer.tar" -t "$reg/pause:build" >/dev/null
# 65535, as Kubernetes' pause image runs.
"$CRANE" mutate "$reg/pause:build" --set-platform "$PLATFORM" --entrypoint /pause --user 65535:65535 -t "$reg/pause:build" >/dev/null
"$CRANE" pull --format=oci "$reg/pause:build" "$work/layout"
go run ./hack/ocitag "$work/layout" "$PAUSE_IMAGE"
mkdir -p "$(dirname "$out")"
tar -C "$work/layout" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$out.tmp" .
mv "$out.tmp" "$out"
echo "pause-image.sh: $out ($PAUSE_IMAGE, $PLATFORM)" >&2
