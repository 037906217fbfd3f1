# registry.sh is sourced by images.sh and check-images.sh: it starts
# `crane registry serve` on a loopback port the kernel picks, in a
# temporary directory removed on exit, and sets
#   work  the temporary directory
#   reg   the registry's host:port
# Needs CRANE.
work=$(mktemp -d)
registry_pid=
cleanup() {
  if [[ -n "$registry_pid" ]]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/registry"
# Created before the server starts: the loop below may read it before the
# background shell's redirection has.
: >"$work/registry.log"
"$CRANE" registry serve --address 127.0.0.1:0 --disk "$work/registry" >"$work/registry.log" 2>&1 &
registry_pid=$!
reg=
for _ in $(seq 100); do
  port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/registry.log")
  if [[ -n "$port" ]]; then reg=127.0.0.1:$port; break; fi
  if ! kill -0 "$registry_pid" 2>/dev/null; then cat "$work/registry.log" >&2; echo "registry.sh: crane registry serve exited" >&2; exit 1; fi
  sleep 0.1
done
[[ -n "$reg" ]] || { cat "$work/registry.log" >&2; echo "registry.sh: crane registry serve did not start" >&2; exit 1; }
