#!/usr/bin/env bash
# check-images.sh checks the OCI image tarballs `make images` wrote (CI
# runs it): each loads into a loopback `crane registry serve`, and crane
# reads back its config and files. An image passes when
#   - its entrypoint is /ko-app/<name> (the static binary, run directly),
#   - it runs as user 65532 (non-root, named in /etc/passwd),
#   - it holds no shell and no other program: nothing under bin/, sbin/,
#     usr/ but the binary in ko-app/,
#   - /tmp is there and world-writable (sticky),
#   - its index.json names it (podman load and ctr images import tag it).
# Environment: CRANE (default bin/crane), DIR (default dist/images).
set -euo pipefail
cd "$(dirname "$0")/.."

CRANE=${CRANE:-bin/crane}
DIR=${DIR:-dist/images}

fail=0
bad() { echo "check-images.sh: $1: $2" >&2; fail=1; }

# A loopback registry (sets work and reg).
# shellcheck source=hack/registry.sh
source hack/registry.sh

for name in manager webhook; do
  tarball=$DIR/$name.tar
  [[ -f "$tarball" ]] || { bad "$name" "no $tarball (run make images)"; continue; }
  mkdir -p "$work/$name"
  tar -C "$work/$name" -xf "$tarball"
  version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/switchboard/Chart.yaml)
  want="${REPOSITORY:-ghcr.io/switchboard-dev/switchboard}/$name:$version"
  for key in org.opencontainers.image.ref.name io.containerd.image.name; do
    grep -q "\"$key\":\"$want\"" "$work/$name/index.json" || bad "$name" "index.json does not name the image $want ($key)"
  done
  ref=$reg/check/$name:latest
  "$CRANE" push "$work/$name" "$ref" >/dev/null 2>"$work/push.log" || { cat "$work/push.log" >&2; bad "$name" "not an OCI image layout"; continue; }

  config=$("$CRANE" config "$ref")
  entrypoint=$(grep -o '"Entrypoint":\[[^]]*\]' <<<"$config" || true)
  [[ "$entrypoint" == "\"Entrypoint\":[\"/ko-app/$name\"]" ]] || bad "$name" "entrypoint is ${entrypoint:-unset}, want [\"/ko-app/$name\"]"
  user=$(grep -o '"User":"[^"]*"' <<<"$config" || true)
  [[ "$user" == '"User":"65532:65532"' || "$user" == '"User":"65532"' ]] || bad "$name" "user is ${user:-unset}, want 65532"

  "$CRANE" export "$ref" "$work/$name.fs.tar"
  files=$(tar -tvf "$work/$name.fs.tar" 2>/dev/null)
  programs=$(awk '{print $6}' <<<"$files" | sed -E 's|^\.?/||' | grep -E '^(bin|sbin|usr|busybox)(/|$)|(^|/)(sh|bash|ash|dash|busybox)$' || true)
  [[ -z "$programs" ]] || bad "$name" "holds programs besides its binary: $(tr '\n' ' ' <<<"$programs")"
  awk '{print $6}' <<<"$files" | sed -E 's|^\.?/||' | grep -qx "ko-app/$name" || bad "$name" "no ko-app/$name"
  grep -Eq '^drwxrwxrwt .* \.?/?tmp/?$' <<<"$files" || bad "$name" "no world-writable /tmp"
  tar -xOf "$work/$name.fs.tar" etc/passwd 2>/dev/null | grep -q '^nonroot:x:65532:65532:' || bad "$name" "no user 65532 in /etc/passwd"

  size=$(du -h "$tarball" | cut -f1)
  [[ $fail -ne 0 ]] || echo "check-images.sh: $name ok: entrypoint /ko-app/$name, user 65532, no shell, $size"
done
exit $fail
