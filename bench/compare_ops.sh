#!/usr/bin/env bash
# stride vs PyTorch on the workloads of bench/ops_bench.cpp, side by side.
#
#   bench/compare_ops.sh [BUILD_DIR]        (default: build-bench)
#
# Runs the stride benchmark and bench/pytorch_ops.py interleaved in one
# invocation (stride, torch, stride, torch ...) for each thread count, ROUNDS
# times, so that a burst of load on the machine hits both sides alike. Each
# run reports per workload the median of REPS repetitions of about MIN_TIME
# seconds; the table shows the median of those medians over the rounds, in
# microseconds of wall time per call, and ratio = PyTorch / stride (> 1: stride
# is faster). Both processes get OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set
# to the thread count (PyTorch's GEMM is OpenBLAS, whose pool
# torch.set_num_threads does not size). Prints one markdown table on stdout.
#
# Environment: ROUNDS (3), REPS (5), MIN_TIME (0.1), THREADS ("1 2"),
#              PYTHON (/usr/bin/python3, Debian's python3-torch),
#              RAW_DIR (keep every run's raw output there; default: discard).
# Other variables pass through to both sides, e.g. OMP_WAIT_POLICY=passive on
# a machine shared with other work (libgomp's spin-waiting otherwise costs
# milliseconds per parallel region when threads outnumber free cores).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build-bench}
exe=$build/bench/ops_bench
rounds=${ROUNDS:-3}
reps=${REPS:-5}
min_time=${MIN_TIME:-0.1}
threads=${THREADS:-"1 2"}
python=${PYTHON:-/usr/bin/python3}

if [[ ! -x $exe ]]; then
  echo "compare_ops.sh: no benchmark at $exe" >&2
  echo "hint: cmake -S . -B build-bench -G Ninja -DSTRIDE_BUILD_BENCH=ON && ninja -C build-bench ops_bench" >&2
  exit 1
fi

if [[ -n ${RAW_DIR:-} ]]; then
  tmp=$RAW_DIR
  mkdir -p "$tmp"
  rm -f "$tmp"/stride_*.json "$tmp"/torch_*.jsonl
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
fi

for round in $(seq "$rounds"); do
  for t in $threads; do
    echo "round $round/$rounds, threads $t: stride" >&2
    STRIDE_NUM_THREADS=$t OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t "$exe" \
      --benchmark_filter="/threads:$t\$" --benchmark_repetitions="$reps" \
      --benchmark_report_aggregates_only=true --benchmark_min_time="$min_time" \
      --benchmark_format=json >"$tmp/stride_${round}_$t.json" 2>"$tmp/stride_${round}_$t.err" ||
      { cat "$tmp/stride_${round}_$t.err" >&2; exit 1; }
    echo "round $round/$rounds, threads $t: pytorch" >&2
    OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t "$python" "$here/pytorch_ops.py" \
      --threads "$t" --repetitions "$reps" --min-time "$min_time" >"$tmp/torch_${round}_$t.jsonl"
  done
done

"$python" - "$tmp" <<'EOF'
import glob, json, statistics, sys

tmp = sys.argv[1]
stride, torch, order = {}, {}, []
for path in sorted(glob.glob(f"{tmp}/stride_*.json")):
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
        stride.setdefault(name, []).append(b["real_time"] * scale)
for path in sorted(glob.glob(f"{tmp}/torch_*.jsonl")):
    for line in open(path):
        r = json.loads(line)
        torch.setdefault(r["name"], []).append(r["median_us"])
        if r["name"] not in order:
            order.append(r["name"])

print("| op | shape | threads | stride median µs | PyTorch median µs | ratio (PyTorch/stride) |")
print("|---|---|---:|---:|---:|---:|")
names = sorted(set(order) | set(stride), key=lambda n: (int(n.rsplit(":", 1)[1]),
               order.index(n) if n in order else len(order)))
for name in names:
    op, shape, t = name.split("/", 2)
    s = statistics.median(stride[name]) if name in stride else None
    p = statistics.median(torch[name]) if name in torch else None
    fmt = lambda v: "n/a" if v is None else f"{v:.1f}"
    ratio = f"{p / s:.2f}" if s and p else "n/a"
    print(f"| {op} | {shape} | {t.split(':')[1]} | {fmt(s)} | {fmt(p)} | {ratio} |")
    rounds = lambda v: " ".join(f"{x:.0f}" for x in v)
    print(f"{name}: per-round medians (us) stride {rounds(stride.get(name, []))}; "
          f"pytorch {rounds(torch.get(name, []))}", file=sys.stderr)
EOF
