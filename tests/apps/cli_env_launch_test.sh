#!/usr/bin/env bash
# The command line data-parallel under a launcher that is not MPI's (Note
# [Launching without MPI]): the same training at 1, 2 and 4 processes (bit
# for bit, deterministic shards); a rank that hangs or dies stops the job
# within the timeout and leaves a checkpoint that resumes; a world whose
# ranks do not all arrive, or whose variables are wrong, fails with an error
# that says so instead of waiting.
# Usage: cli_env_launch_test.sh STRIDE ENV_LAUNCH
set -euo pipefail
stride="$1"
launch="$2"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
cleanup() {
  jobs -p | xargs -r kill -KILL 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# shellcheck source=cli_distributed_fixture.sh
source "$here/cli_distributed_fixture.sh"
# A port no other test's rendezvous holds: the kernel's pick.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'; }

# The same training at every world size; rank 0 alone reports.
"$stride" train --config tiny.json --data corpus.txt --out np1 --sample 0 >np1.log
for np in 2 4; do
  "$launch" -np "$np" "$stride" train --config tiny.json --data corpus.txt --out "np$np" \
    --sample 0 >"np$np.log" 2>&1 || fail "$np processes: $(tail -5 "np$np.log")"
  [ "$(grep -c "val loss over the whole split" "np$np.log")" -eq 1 ] ||
    fail "$np processes: not exactly one report"
  diff <(losses np1) <(losses "np$np") >/dev/null || fail "1 and $np processes trained differently"
done

# A rank that never comes: rank 0 alone gives up after the timeout.
start=$SECONDS
if STRIDE_DIST_TIMEOUT=2 WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) \
  "$stride" train --config tiny.json --data corpus.txt --out alone --sample 0 >alone.log 2>&1; then
  fail "rank 0 trained without rank 1"
fi
[ $((SECONDS - start)) -lt 30 ] || fail "rank 0 waited $((SECONDS - start)) s for a missing rank"
grep -q "rank 0 of 2 could not connect" alone.log || fail "no rendezvous error: $(tail -3 alone.log)"

# Wrong variables: named.
if WORLD_SIZE=2 RANK=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 "$stride" train --config tiny.json \
  --data corpus.txt --out wrong --sample 0 >wrong.log 2>&1; then
  fail "RANK 2 of 2 was accepted"
fi
grep -q "RANK must be an integer in \[0, 1\]" wrong.log || fail "RANK not named: $(cat wrong.log)"

# Faults. A long run of two ranks started here (a launcher would kill the
# others itself); once it has a checkpoint, rank 1 is stopped (hangs) or
# killed (dies). Rank 0 must stop with an error naming the cause, and the
# checkpoint must resume.
fault() {  # fault NAME SIGNAL
  local name="$1" signal="$2" rank0 rank1 waited=0 rank
  local port
  port=$(free_port)
  for rank in 0 1; do
    STRIDE_DIST_TIMEOUT=3 WORLD_SIZE=2 RANK=$rank MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$stride" train --config tiny.json --data corpus.txt --out "$name" --steps 1000000 \
      --sample 0 --set train.checkpoint_interval=10 --set train.eval_interval=1000000 \
      >"$name.$rank.log" 2>&1 &
    [ "$rank" -eq 0 ] && rank0=$! || rank1=$!
  done
  until [ -s "$name/checkpoint.safetensors" ]; do
    sleep 0.2
    waited=$((waited + 1))
    [ "$waited" -lt 300 ] || fail "$name: no checkpoint after 60 s: $(tail -5 "$name.0.log")"
  done
  kill "-$signal" "$rank1"
  waited=0
  while kill -0 "$rank0" 2>/dev/null; do
    sleep 0.5
    waited=$((waited + 1))
    [ "$waited" -lt 60 ] || fail "$name: rank 0 still runs 30 s after rank 1 got SIG$signal"
  done
  local status=0
  wait "$rank0" || status=$?
  # 2: the error below. Not a signal: a write to the dead rank's socket
  # (SIGPIPE, 141) or a destructor throwing while the error unwinds (SIGABRT,
  # 134) once ended rank 0 without it, now and then.
  [ "$status" -eq 2 ] || fail "$name: rank 0 ended with status $status after rank 1 got SIG$signal"
  kill -KILL "$rank1" 2>/dev/null || true
  wait "$rank1" 2>/dev/null || true
  grep -q "a rank of its group has died or hangs" "$name.0.log" ||
    fail "$name: no error naming the lost rank: $(tail -5 "$name.0.log")"
  local step
  step="$(grep -o '"step":[0-9]*' "$name/metrics.jsonl" | tail -1 | cut -d: -f2)"
  "$stride" train --resume "$name" --steps "$((step + 3))" --data corpus.txt \
    --sample 0 >"$name.resume.log" || fail "$name: the checkpoint did not resume"
}
fault hang STOP
fault death KILL
echo "ok: data-parallel command line under the environment-variable launcher"
