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
# `envtest.sh node` prints instead a directory holding what a node adds to
# that pair: kube-controller-manager, kube-scheduler, kube-proxy, kubelet
# and kubectl (make e2e, hack/e2e). They are built by the same build_k8s,
# at the same version, and cached beside the pair. About 2 to 6 minutes on
# 2 cores, once (less when kube-apiserver was just built: they share most
# packages).
#
# The versions are pinned next to the k8s.io/* version in go.mod (see the
# ENVTEST_* variables in the Makefile).
set -euo pipefail

K8S_VERSION="${ENVTEST_K8S_VERSION:-1.37.1}"
ETCD_VERSION="${ENVTEST_ETCD_VERSION:-3.6.16}"
SETUP_ENVTEST="${SETUP_ENVTEST:-}"
MODE="${1:-envtest}"
# What a node needs beside kube-apiserver and etcd, from k8s.io/kubernetes/cmd.
NODE_CMDS=(kube-controller-manager kube-scheduler kube-proxy kubelet kubectl)

log() { echo "envtest: $*" >&2; }

has_both() { [[ -x "$1/kube-apiserver" && -x "$1/etcd" ]]; }

# Builds run from the Go module proxy in throwaway modules under $work.
build_env() {
  export GOFLAGS=-mod=mod GONOSUMDB=k8s.io GOWORK=off CGO_ENABLED=0
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

build_etcd() {
  local out=$1
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init envtest-etcd >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >get.log 2>&1 || { cat get.log >&2; return 1; }
  go build -trimpath -ldflags=-s -o "$out/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$out/etcd.tmp" "$out/etcd"
}

# build_k8s OUTDIR CMD... builds k8s.io/kubernetes/cmd/CMD at K8S_VERSION
# into OUTDIR/CMD for each CMD, in one go build (they share most packages).
# Each binary is written under a temporary name and renamed into place, so
# nobody runs a half-written file.
build_k8s() {
  local out=$1
  shift
  mkdir -p "$work/k8s" && cd "$work/k8s"
  local minor="0.${K8S_VERSION#1.}"
  # The staging modules k8s.io/kubernetes replaces with local paths are
  # published under the same number as v0.X.Y: use those.
  local gomod mods
  gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -s "$gomod" ]] || { log "cannot read the go.mod of k8s.io/kubernetes@v$K8S_VERSION"; return 1; }
  mods=$(awk '/^replace \(/{r=1;next} r&&/^\)/{r=0} r&&/=>/{print $1}' "$gomod")
  {
    echo "module envtest-k8s"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    echo "replace ("
    for m in $mods; do echo "	$m => $m v$minor"; done
    echo ")"
  } > go.mod
  # tools.go imports each command's library (a main package cannot be
  # imported) so that go mod tidy keeps what the build needs.
  local cmd pkgs=()
  {
    printf 'package main\n\nimport (\n'
    for cmd in "$@"; do
      case $cmd in
        kubectl) printf '\t_ "k8s.io/kubectl/pkg/cmd"\n' ;;
        *) printf '\t_ "k8s.io/kubernetes/cmd/%s/app"\n' "$cmd" ;;
      esac
      pkgs+=("k8s.io/kubernetes/cmd/$cmd")
    done
    printf ')\n'
  } > tools.go
  go mod tidy >/dev/null 2>&1 || true
  mkdir -p bin
  # The version the programs report (kubelet's in its Node, each one's
  # /version), as Kubernetes' own build stamps it.
  local v=k8s.io/component-base/version
  local ldflags="-s -X $v.gitVersion=v$K8S_VERSION -X $v.gitMajor=${K8S_VERSION%%.*} -X $v.gitMinor=$(cut -d. -f2 <<<"$K8S_VERSION") -X $v.gitTreeState=clean"
  go build -trimpath -ldflags="$ldflags" -o bin/ "${pkgs[@]}"
  for cmd in "$@"; do
    mv "bin/$cmd" "$out/.$cmd.tmp.$$"
    mv "$out/.$cmd.tmp.$$" "$out/$cmd"
  done
}

case $MODE in
  envtest) ;;
  node)
    dir="${XDG_CACHE_HOME:-$HOME/.cache}/switchboard/node/k8s-$K8S_VERSION"
    missing=()
    for cmd in "${NODE_CMDS[@]}"; do [[ -x "$dir/$cmd" ]] || missing+=("$cmd"); done
    if ((${#missing[@]})); then
      mkdir -p "$dir"
      build_env
      log "building ${missing[*]} v$K8S_VERSION (about 2 to 6 minutes on 2 cores, once)"
      (build_k8s "$dir" "${missing[@]}") || { log "building ${missing[*]} failed"; exit 1; }
      log "cached in $dir"
    fi
    echo "$dir"
    exit 0
    ;;
  *)
    echo "usage: $0 [node]" >&2
    exit 2
    ;;
esac

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

# 4. Build from the module proxy.
build_env
if [[ ! -x "$dir/etcd" ]]; then
  log "building etcd v$ETCD_VERSION (about 1 minute)"
  (build_etcd "$dir") || { log "building etcd failed"; exit 1; }
fi
if [[ ! -x "$dir/kube-apiserver" ]]; then
  log "building kube-apiserver v$K8S_VERSION (about 4 minutes)"
  (build_k8s "$dir" kube-apiserver) || { log "building kube-apiserver failed"; exit 1; }
fi
log "cached in $dir"
echo "$dir"
