#!/usr/bin/env bash
# host-deps.sh installs what the e2e node runs from Debian's packages, when
# missing: containerd, runc and containernetworking-plugins (the bridge,
# host-local and loopback CNI plugins in /usr/lib/cni), and iptables and
# nftables (kube-proxy's and kubelet's rules, and the run's listing of the
# host's rules before and after; a fresh machine has neither). It must run as root
# (make e2e does; the machines it is written for run everything as root).
#
# The versions are what Debian bookworm ships (containerd 1.6, runc 1.1,
# plugins 1.1, iptables 1.8, nftables 1.0): the script checks the series and prints the exact versions
# it found, so each run's log records them. A machine with another series
# fails here with the reason rather than later with a puzzle.
#
# Packages stay installed after the run (like the Go tools cached in
# ~/.cache/switchboard); nothing here starts a service: the e2e run starts
# its own containerd with its own config, socket and directories.
set -euo pipefail

log() { echo "host-deps.sh: $*" >&2; }

# package => the version series make e2e is written against.
declare -A series=(
  [containerd]=1.6.
  [runc]=1.1.
  [containernetworking-plugins]=1.1.
  [iptables]=1.8.
  [nftables]=1.0.
)

if [[ $(id -u) -ne 0 ]]; then
  log "must run as root: it installs Debian packages, and the node needs root (mounts, cgroups, iptables)"
  exit 1
fi

missing=()
for pkg in "${!series[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  log "installing ${missing[*]} from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # --no-install-recommends: containerd recommends nothing needed here.
  # policy-rc.d is not touched: on these machines no init system starts
  # the packaged containerd service (PID 1 is not systemd).
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

for pkg in "${!series[@]}"; do
  v=$(dpkg-query -W -f='${Version}' "$pkg")
  if [[ "$v" != "${series[$pkg]}"* ]]; then
    log "$pkg $v is installed; make e2e is written for the ${series[$pkg]}x series Debian bookworm ships"
    exit 1
  fi
  log "$pkg $v"
done
for f in /usr/bin/containerd /usr/bin/containerd-shim-runc-v2 /usr/bin/ctr /usr/sbin/runc \
         /usr/lib/cni/bridge /usr/lib/cni/host-local /usr/lib/cni/loopback \
         /usr/sbin/iptables /usr/sbin/iptables-save /usr/sbin/iptables-restore /usr/sbin/ip6tables-save /usr/sbin/nft; do
  [[ -x "$f" ]] || { log "$f is missing after the install"; exit 1; }
done
