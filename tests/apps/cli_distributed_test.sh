#!/usr/bin/env bash
# The command line data-parallel (`stride train --nproc N`, `mpirun -np N
# stride ...`): rank 0 alone reports and writes the run; the same training at
# 1, 2 and 4 processes (deterministic shards, bit for bit); a run resumed at
# another world size goes on exactly; a rank that hangs or dies stops the
# job within the timeout and leaves a checkpoint that resumes.
# Usage: cli_distributed_test.sh STRIDE MPIRUN [MPIRUN ARGS...]
set -euo pipefail
stride="$1"
shift
mpirun=("$@")
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
# Marks this test's processes, so that cleaning up spares other tests'.
export STRIDE_CLI_TEST_MARK="$work"
ours() {  # the pids of this test's `stride train` processes, with $1 in their environment
  local p
  for p in $(pgrep -f "$stride train"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "STRIDE_CLI_TEST_MARK=$work" &&
      tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "$1" && echo "$p"
  done
  return 0
}
cleanup() {
  ours "STRIDE_CLI_TEST_MARK=$work" | xargs -r kill -KILL 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# shellcheck source=cli_distributed_fixture.sh
source "$here/cli_distributed_fixture.sh"

# --nproc: one report, one set of files, rank 0's.
"$stride" train --nproc 2 --config tiny.json --data corpus.txt --out np2 --sample 0 >np2.log 2>&1 ||
  fail "train --nproc 2: $(cat np2.log)"
[ "$(grep -c "val loss over the whole split" np2.log)" -eq 1 ] || fail "not exactly one report"
for f in config.json checkpoint.safetensors metrics.jsonl loss.svg; do
  [ -s "np2/$f" ] || fail "train --nproc 2 did not write np2/$f"
done

# The same training at every world size.
"$stride" train --config tiny.json --data corpus.txt --out np1 --sample 0 >np1.log
"${mpirun[@]}" -np 4 "$stride" train --config tiny.json --data corpus.txt --out np4 --sample 0 \
  >np4.log 2>&1 || fail "mpirun -np 4 stride train: $(tail -5 np4.log)"
diff <(losses np1) <(losses np2) >/dev/null || fail "1 and 2 processes trained differently"
diff <(losses np1) <(losses np4) >/dev/null || fail "1 and 4 processes trained differently"

# ZeRO-1: the optimizer state sharded, the training the same; its checkpoint
# holds the full state, so a run without sharding resumes it.
"$stride" train --nproc 2 --config tiny.json --data corpus.txt --out zero --sample 0 \
  --set train.zero_stage=1 >zero.log 2>&1 || fail "zero_stage 1: $(tail -5 zero.log)"
grep -q "ZeRO-1: rank 0 held" zero.log || fail "zero_stage 1 reported no sharded state"
diff <(losses np1) <(losses zero) >/dev/null || fail "ZeRO-1 trained differently"
"$stride" train --resume zero --steps 35 --set train.zero_stage=0 --data corpus.txt --sample 0 \
  >zero_resumed.log || fail "an unsharded run did not resume a ZeRO-1 checkpoint"

# Resumed at another world size: as if never interrupted.
"$stride" train --nproc 2 --config tiny.json --data corpus.txt --out half --steps 20 --sample 0 \
  --set train.schedule=constant >half.log 2>&1
"$stride" train --resume half --steps 30 --data corpus.txt --sample 0 >resumed.log
"$stride" train --config tiny.json --data corpus.txt --out whole --sample 0 \
  --set train.schedule=constant >whole.log
diff <(losses half) <(losses whole) >/dev/null || fail "a resume at another world size diverged"

# Other commands run once, on rank 0.
"${mpirun[@]}" -np 2 "$stride" eval --ckpt np2 --data corpus.txt >eval.log 2>&1
[ "$(grep -c "whole split" eval.log)" -eq 1 ] || fail "eval under mpirun did not run once"

# Faults. A long run; once it has a checkpoint, one rank is stopped (hangs)
# or killed (dies). The job must end, and the checkpoint must resume.
rank_pid() {  # the pid of rank $1 of the running `stride train`
  ours "OMPI_COMM_WORLD_RANK=$1" | head -1
}
fault() {  # fault NAME SIGNAL
  local name="$1" signal="$2" job pid waited=0
  STRIDE_DIST_TIMEOUT=3 "${mpirun[@]}" -np 2 "$stride" train --config tiny.json --data corpus.txt \
    --out "$name" --steps 1000000 --sample 0 --set train.checkpoint_interval=10 \
    --set train.eval_interval=1000000 >"$name.log" 2>&1 &
  job=$!
  until [ -s "$name/checkpoint.safetensors" ]; do
    sleep 0.2
    waited=$((waited + 1))
    [ "$waited" -lt 300 ] || fail "$name: no checkpoint after 60 s: $(tail -5 "$name.log")"
  done
  pid="$(rank_pid 1)"
  [ -n "$pid" ] || fail "$name: rank 1 not found"
  kill "-$signal" "$pid"
  waited=0
  while kill -0 "$job" 2>/dev/null; do
    sleep 0.5
    waited=$((waited + 1))
    [ "$waited" -lt 60 ] || fail "$name: the job still runs 30 s after rank 1 got SIG$signal"
  done
  if wait "$job"; then fail "$name: the job succeeded after rank 1 got SIG$signal"; fi
  "$stride" train --resume "$name" --steps "$(($(step_of "$name") + 3))" --data corpus.txt \
    --sample 0 >"$name.resume.log" || fail "$name: the checkpoint did not resume"
}
step_of() {  # run $1's last metrics step: its checkpoint's, or 10 past it (both every 10)
  grep -o '"step":[0-9]*' "$1/metrics.jsonl" | tail -1 | cut -d: -f2
}
fault hang STOP
grep -q "timed out" hang.log || fail "a hung rank gave no timeout error: $(tail -5 hang.log)"
fault death KILL
echo "ok: data-parallel command line"
