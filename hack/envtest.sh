#!/usr/bin/env bash
# envtest.sh prints a directory holding kube-apiserver and etcd for
# controller-runtime's envtest (the value for KUBEBUILDER_ASSETS).
#
# Order of preference:
#   1. KUBEBUILDER_ASSETS, when it already points at both binaries;
#   2. the cache in the user's cache directory (XDG_CACHE_HOME or ~/.cache),
#      so a fresh clone on the same machine (CI's) reuses earlier builds;
#   3. setup-envtest's normal download, where the network allows it;
#   4. a build from the Go module proxy: kube-apiserver from k8s.io/kubernetes
#      (every k8s.io staging module replaced with its published twin) and etcd
#      from go.etcd.io/etcd/server/v3. About 5 minutes on 2 cores, once.
#
# The versions are pinned next to the k8s.io/* version in go.mod (see the
# ENVTEST_* variables in the Makefile).
set -euo pipefail

K8S_VERSION="${ENVTEST_K8S_VERSION:-1.37.1}"
ETCD_VERSION="${ENVTEST_ETCD_VERSION:-3.6.16}"
SETUP_ENVTEST="${SETUP_ENVTEST:-}"

log() { echo "envtest: $*" >&2; }

has_both() { [[ -x "$1/kube-apiserver" && -x "$1/etcd" ]]; }

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]] && has_both "$KUBEBUILDER_ASSETS"; then
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/switchboard/envtest"
dir="$cache_root/k8s-$K8S_VERSION-etcd-$ETCD_VERSION"
if has_both "$dir"; then
  echo "$dir"
  exit 0
fi
mkdir -p "$dir"

# 3. The normal way: setup-envtest downloads the release archive.
if [[ -n "$SETUP_ENVTEST" && -x "$SETUP_ENVTEST" ]]; then
  log "trying setup-envtest download of $K8S_VERSION"
  if got=$(timeout 60 "$SETUP_ENVTEST" use "$K8S_VERSION" --bin-dir "$cache_root/download" -p path 2>/dev/null) \
      && has_both "$got"; then
    echo "$got"
    exit 0
  fi
  log "download unavailable; building from the Go module proxy"
fi

# 4. Build from the module proxy in throwaway modules.
export GOFLAGS=-mod=mod GONOSUMDB=k8s.io GOWORK=off CGO_ENABLED=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build_etcd() {
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init envtest-etcd >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >get.log 2>&1 || { cat get.log >&2; return 1; }
  go build -trimpath -ldflags=-s -o "$dir/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$dir/etcd.tmp" "$dir/etcd"
}

build_apiserver() {
  mkdir -p "$work/apiserver" && cd "$work/apiserver"
  local minor="0.${K8S_VERSION#1.}"
  # The staging modules k8s.io/kubernetes replaces with local paths are
  # published under the same number as v0.X.Y: use those.
  local gomod mods
  gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -s "$gomod" ]] || { log "cannot read the go.mod of k8s.io/kubernetes@v$K8S_VERSION"; return 1; }
  mods=$(awk '/^replace \(/{r=1;next} r&&/^\)/{r=0} r&&/=>/{print $1}' "$gomod")
  {
    echo "module envtest-apiserver"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    echo "replace ("
    for m in $mods; do echo "	$m => $m v$minor"; done
    echo ")"
  } > go.mod
  printf 'package main\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver/app"\n' > tools.go
  go mod tidy >/dev/null 2>&1 || true
  go build -trimpath -ldflags=-s -o "$dir/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
  mv "$dir/kube-apiserver.tmp" "$dir/kube-apiserver"
}

if [[ ! -x "$dir/etcd" ]]; then
  log "building etcd v$ETCD_VERSION (about 1 minute)"
  (build_etcd) || { log "building etcd failed"; exit 1; }
fi
if [[ ! -x "$dir/kube-apiserver" ]]; then
  log "building kube-apiserver v$K8S_VERSION (about 4 minutes)"
  (build_apiserver) || { log "building kube-apiserver failed"; exit 1; }
fi
log "cached in $dir"
echo "$dir"
