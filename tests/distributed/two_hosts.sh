#!/usr/bin/env bash
# The distributed suite across two "hosts": two network namespaces joined by
# a veth pair, each with its own address, and Open MPI's own launcher between
# them over TCP. mpirun starts its remote daemon through its rsh agent as it
# would through ssh; here the agent (written below) enters the other
# namespace instead of logging in. The ranks must then run in different
# namespaces and talk over the veth link only (btl tcp on that subnet).
# With `gloo`, the suite then runs across them again under the
# environment-variable launcher (Note [Launching without MPI]): one process
# started in each namespace with RANK, WORLD_SIZE and rank 0's address, over
# Gloo.
# Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) for `ip netns`; skips (exit 77)
# without it.
# Usage: two_hosts.sh TEST_PROGRAM [gloo]
set -euo pipefail
program="$1"
backends="${2:-}"
tag="st$$"
a="${tag}a" b="${tag}b"
net="10.$((RANDOM % 200 + 20)).$((RANDOM % 250)).0"
ip_a="${net%.0}.1" ip_b="${net%.0}.2"
work="$(mktemp -d)"
cleanup() {
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

if ! ip netns add "$a" 2>/dev/null; then
  echo "skipped: cannot create network namespaces here (needs root)"
  exit 77
fi
ip netns add "$b"
ip link add "${tag}va" type veth peer name "${tag}vb"
ip link set "${tag}va" netns "$a"
ip link set "${tag}vb" netns "$b"
ip -n "$a" addr add "$ip_a/24" dev "${tag}va"
ip -n "$b" addr add "$ip_b/24" dev "${tag}vb"
for ns in "$a" "$b"; do
  ip -n "$ns" link set lo up
done
ip -n "$a" link set "${tag}va" up
ip -n "$b" link set "${tag}vb" up

cat >"$work/agent" <<AGENT
#!/bin/sh
# mpirun's rsh agent: "agent HOST COMMAND..." runs COMMAND in HOST's namespace.
host="\$1"
shift
case "\$host" in
  $ip_a) ns=$a ;;
  $ip_b) ns=$b ;;
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" sh -c "\$*"
AGENT
chmod +x "$work/agent"
printf '%s slots=1\n%s slots=1\n' "$ip_a" "$ip_b" >"$work/hosts"

mpirun=(ip netns exec "$a" mpirun --allow-run-as-root --hostfile "$work/hosts" -np 2
        --mca plm_rsh_agent "$work/agent" --mca btl self,tcp
        --mca btl_tcp_if_include "$net/24" --mca oob_tcp_if_include "$net/24")

# One rank per namespace.
placement="$("${mpirun[@]}" sh -c 'echo "$OMPI_COMM_WORLD_RANK $(ip netns identify $$)"' | sort)"
expected="$(printf '0 %s\n1 %s' "$a" "$b")"
if [ "$placement" != "$expected" ]; then
  echo "FAIL: ranks did not run one per namespace: $placement"
  exit 1
fi
echo "ranks: $(echo "$placement" | tr '\n' ';')"
# The "remote" daemon starts as over ssh, with a fresh environment: pass on
# the sanitizers' options.
forward=(-x STRIDE_DIST_TIMEOUT=120)
for name in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS; do
  if [ -n "${!name:-}" ]; then forward+=(-x "$name"); fi
done
"${mpirun[@]}" "${forward[@]}" "$program"

[ "$backends" = gloo ] || exit 0
# The environment-variable launcher: rank 0 in the first namespace serves the
# rendezvous at its address; the ranks then reach each other over the veth
# link, the only one between them. The first that fails ends the other.
echo "environment-variable launcher, over Gloo:"
port=$((20000 + RANDOM % 20000))
pids=()
for rank in 0 1; do
  ns=$a
  [ "$rank" -eq 1 ] && ns=$b
  ip netns exec "$ns" env RANK=$rank WORLD_SIZE=2 MASTER_ADDR="$ip_a" MASTER_PORT=$port \
    STRIDE_DIST_TIMEOUT=120 "$program" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do
  if ! wait "$pid"; then
    status=1
    kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
done
exit $status
