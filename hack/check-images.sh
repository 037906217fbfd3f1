#!/usr/bin/env bash
# check-images.sh checks the image tarballs hack/images.sh wrote (`make
# images`, `make release`; CI runs it), and the kubectl plugin's release
# tarballs when there are any, against what they say they are. Each image
# tarball is an OCI image layout whose index.json names it (podman load and
# ctr images import tag it) and lists ONE image index, holding exactly the
# platforms asked for, each image's config saying its platform
# (hack/imagecheck platforms). It loads into a loopback `crane registry
# serve`, and for each platform's image crane reads back its config and
# files. An image passes when
#   - its entrypoint is /ko-app/<name> (the static binary, run directly),
#   - it runs as user 65532 (non-root, named in /etc/passwd),
#   - it holds no shell and no other program: nothing under bin/, sbin/,
#     usr/ but the binary in ko-app/,
#   - /tmp is there and world-writable (sticky),
#   - its binary is an ELF executable of the platform's machine, static,
#     its SBOM ($SBOM_DIR/<name>_<os>_<arch>.spdx.json) lists exactly the
#     modules, versions, toolchain and revision of its build info and names
#     the image's digest (hack/imagecheck binary),
#   - the binary runs `--help`: natively on this machine's architecture,
#     under qemu user emulation (Debian's qemu-user-static, `make qemu`)
#     on the other.
# Each kubectl-switchboard_<v>_<os>_<arch>.tar.gz in $CLI_DIR passes when
# its binary is of its platform and its .spdx.json beside it matches it the
# same way (hack/imagecheck tarball).
# Environment: CRANE (default bin/crane), DIR (default dist/images),
# SBOM_DIR (default DIR's sibling sbom/), PLATFORMS (the platforms each
# index must hold, comma-separated; default whatever it holds), CLI_DIR
# (default DIR's parent), QEMU_AARCH64 and QEMU_X86_64 (the emulators).
set -euo pipefail
cd "$(dirname "$0")/.."

CRANE=${CRANE:-bin/crane}
DIR=${DIR:-dist/images}
SBOM_DIR=${SBOM_DIR:-$(dirname "$DIR")/sbom}
CLI_DIR=${CLI_DIR:-$(dirname "$DIR")}
PLATFORMS=${PLATFORMS:-}
declare -A emulators=([arm64]=${QEMU_AARCH64:-/usr/bin/qemu-aarch64-static} [amd64]=${QEMU_X86_64:-/usr/bin/qemu-x86_64-static})
host_arch=$(go env GOARCH)

fail=0
bad() { echo "check-images.sh: $1: $2" >&2; fail=1; }

# A loopback registry (sets work and reg).
# shellcheck source=hack/registry.sh
source hack/registry.sh
go build -o "$work/imagecheck" ./hack/imagecheck

# runs_help AT BINARY ARCH: the binary prints its usage ("Usage: <its
# name> [flags]") and exits 0.
runs_help() {
  local how=() out
  if [[ $3 != "$host_arch" ]]; then
    [[ -x ${emulators[$3]:-} ]] || { bad "$1" "no emulator for $3 at ${emulators[$3]:-?} (as root: make qemu)"; return; }
    how=("${emulators[$3]}")
  fi
  if ! out=$("${how[@]}" "$2" --help 2>&1) || ! grep -q "^Usage: $(basename "$2") " <<<"$out"; then
    bad "$1" "linux/$3 binary does not run --help${how:+ under ${how[0]}}: $(head -3 <<<"$out")"
  fi
}

# check_platform NAME REF PLATFORM DIGEST: one platform's image.
check_platform() {
  local name=$1 ref=$2 platform=$3 digest=$4 arch=${3#*/} at="$1 ($3)" config entrypoint user files programs
  config=$("$CRANE" config "$ref@$digest")
  entrypoint=$(grep -o '"Entrypoint":\[[^]]*\]' <<<"$config" || true)
  [[ "$entrypoint" == "\"Entrypoint\":[\"/ko-app/$name\"]" ]] || bad "$at" "entrypoint is ${entrypoint:-unset}, want [\"/ko-app/$name\"]"
  user=$(grep -o '"User":"[^"]*"' <<<"$config" || true)
  [[ "$user" == '"User":"65532:65532"' || "$user" == '"User":"65532"' ]] || bad "$at" "user is ${user:-unset}, want 65532"

  "$CRANE" export "$ref@$digest" "$work/fs.tar"
  files=$(tar -tvf "$work/fs.tar" 2>/dev/null)
  programs=$(awk '{print $6}' <<<"$files" | sed -E 's|^\.?/||' | grep -E '^(bin|sbin|usr|busybox)(/|$)|(^|/)(sh|bash|ash|dash|busybox)$' || true)
  [[ -z "$programs" ]] || bad "$at" "holds programs besides its binary: $(tr '\n' ' ' <<<"$programs")"
  grep -Eq '^drwxrwxrwt .* \.?/?tmp/?$' <<<"$files" || bad "$at" "no world-writable /tmp"
  tar -xOf "$work/fs.tar" etc/passwd 2>/dev/null | grep -q '^nonroot:x:65532:65532:' || bad "$at" "no user 65532 in /etc/passwd"
  # ko writes the binary as /ko-app/<name>, with its leading slash (-P
  # keeps tar from saying it drops it; -O writes nowhere else).
  mkdir -p "$work/bin"
  tar -xOPf "$work/fs.tar" --no-anchored "ko-app/$name" >"$work/bin/$name" 2>/dev/null || { bad "$at" "no ko-app/$name"; return; }

  local sbom=$SBOM_DIR/${name}_${platform//\//_}.spdx.json
  [[ -f "$sbom" ]] || { bad "$at" "no SBOM $sbom"; return; }
  "$work/imagecheck" binary --binary "$work/bin/$name" --platform "$platform" --sbom "$sbom" --image "$digest" || bad "$at" "binary or SBOM (above)"
  chmod +x "$work/bin/$name"
  runs_help "$at" "$work/bin/$name" "$arch"
  [[ $fail -ne 0 ]] || echo "check-images.sh: $at ok: $digest, ELF of $arch, SBOM matches, --help runs"
}

version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' charts/switchboard/Chart.yaml)
for name in manager webhook; do
  tarball=$DIR/$name.tar
  [[ -f "$tarball" ]] || { bad "$name" "no $tarball (run make images)"; continue; }
  mkdir -p "$work/$name"
  tar -C "$work/$name" -xf "$tarball"
  want="${REPOSITORY:-ghcr.io/switchboard-dev/switchboard}/$name:$version"
  "$work/imagecheck" platforms --layout "$work/$name" --ref "$want" --want "$PLATFORMS" >"$work/$name.platforms" ||
    { bad "$name" "not one image index named $want${PLATFORMS:+ of $PLATFORMS} (above)"; continue; }
  ref=$reg/check/$name:latest
  "$CRANE" push "$work/$name" "$ref" >/dev/null 2>"$work/push.log" || { cat "$work/push.log" >&2; bad "$name" "not an OCI image layout"; continue; }
  while read -r platform digest; do
    check_platform "$name" "$ref" "$platform" "$digest"
  done <"$work/$name.platforms"
  [[ $fail -ne 0 ]] || echo "check-images.sh: $name ok: $(du -h "$tarball" | cut -f1), $(cut -d' ' -f1 "$work/$name.platforms" | paste -sd,)"
done

# The plugin's tarballs, when this is a release directory.
shopt -s nullglob
clis=("$CLI_DIR"/kubectl-switchboard_*.tar.gz)
[[ ${#clis[@]} -gt 0 ]] || echo "check-images.sh: no kubectl-switchboard tarballs in $CLI_DIR: plugin not checked"
for tgz in "${clis[@]}"; do
  base=${tgz%.tar.gz}
  platform=$(sed -E 's/.*_([a-z0-9]+)_([a-z0-9]+)$/\1\/\2/' <<<"$base")
  if "$work/imagecheck" tarball --tarball "$tgz" --platform "$platform" --sbom "$base.spdx.json"; then
    echo "check-images.sh: $(basename "$tgz") ok: $platform, SBOM matches"
  else
    bad "$(basename "$tgz")" "binary or SBOM (above)"
  fi
done
exit $fail
