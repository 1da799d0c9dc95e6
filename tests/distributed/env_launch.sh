#!/usr/bin/env bash
# A launcher that is not MPI's (Note [Launching without MPI]): starts
# PROGRAM N times on this machine with RANK, WORLD_SIZE, MASTER_ADDR and
# MASTER_PORT set, as torchrun does; when one process fails, the others are
# killed and the launcher fails.
#
#   env_launch.sh -np N PROGRAM [ARGS...]
set -uo pipefail

if [ $# -lt 3 ] || [ "$1" != "-np" ]; then
  echo "usage: $0 -np N PROGRAM [ARGS...]" >&2
  exit 2
fi
np=$2
shift 2

# A free port for rank 0's rendezvous, unless the caller chose one.
: "${MASTER_ADDR:=127.0.0.1}"
: "${MASTER_PORT:=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')}"
export MASTER_ADDR MASTER_PORT WORLD_SIZE=$np LOCAL_WORLD_SIZE=$np

pids=()
for ((rank = 0; rank < np; ++rank)); do
  RANK=$rank "$@" &
  pids+=($!)
done
# As torchrun and mpirun: the first process that fails ends the job (a
# stopped one too: SIGKILL).
status=0
while [ ${#pids[@]} -gt 0 ]; do
  wait -n -p finished "${pids[@]}"
  rc=$?
  for i in "${!pids[@]}"; do [ "${pids[$i]}" = "$finished" ] && unset "pids[$i]"; done
  if [ $rc -ne 0 ]; then
    status=$rc
    kill -KILL "${pids[@]}" 2>/dev/null
    wait
    break
  fi
done
exit $status
