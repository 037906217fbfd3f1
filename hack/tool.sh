#!/usr/bin/env bash
# tool.sh NAME PACKAGE VERSION builds a pinned Go program once into the
# user's cache directory and prints the binary's path, so that every clone
# on the machine (CI's workspaces, a second checkout) reuses one build. The
# Makefile links the result into ./bin:
#
#   hack/tool.sh versitygw github.com/versity/versitygw/cmd/versitygw v1.8.0
#   -> ${XDG_CACHE_HOME:-$HOME/.cache}/switchboard/tools/versitygw-v1.8.0/versitygw
#
# The build runs outside this module (`go install PACKAGE@VERSION` uses the
# tool's own go.mod, not ours), so a tool's dependencies never enter go.mod.
# Concurrent callers are safe: the binary is written under a temporary name
# and renamed into place, so nobody runs a half-written file.
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 NAME PACKAGE VERSION" >&2
  exit 2
fi
name=$1 pkg=$2 version=$3

log() { echo "tool.sh: $*" >&2; }

# TOOL_LDFLAGS are extra -ldflags (helm's build stamps the Kubernetes
# version it assumes, as helm's own Makefile does); a build with them is
# cached apart from one without, under a hash of them.
ldflags=${TOOL_LDFLAGS:-}
suffix=
if [[ -n "$ldflags" ]]; then suffix=-$(printf '%s' "$ldflags" | sha256sum | cut -c1-8); fi
dir="${XDG_CACHE_HOME:-$HOME/.cache}/switchboard/tools/$name-$version$suffix"
bin="$dir/$name"
if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$dir"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log "building $pkg@$version (once; cached in $dir)"
# -mod=mod: the caller's GOFLAGS may say -mod=vendor or readonly, which
# `go install pkg@version` refuses. GOWORK=off: a go.work around the
# checkout must not leak into the tool's build. -trimpath and -s keep the
# binary reproducible and small.
if ! (cd "$work" && GOBIN="$work" GOWORK=off GOFLAGS=-mod=mod \
      go install -trimpath -ldflags="-s $ldflags" "$pkg@$version" >"$work/build.log" 2>&1); then
  cat "$work/build.log" >&2
  log "building $pkg@$version failed"
  exit 1
fi
# The binary is named after the package's last element (helm for
# helm.sh/helm/v3/cmd/helm); take whatever single program go install left.
built=$(find "$work" -maxdepth 1 -type f -perm -u+x | head -n1)
[[ -n "$built" ]] || { log "go install left no binary in $work"; exit 1; }
mv "$built" "$dir/.$name.tmp.$$"
mv "$dir/.$name.tmp.$$" "$bin"
log "cached $bin"
echo "$bin"
