"""The article's Llama trained from Python against the same model from C++,
in one run: ms per training step (zero_grad, forward, loss, backward, Adam
step) on a fixed batch of 32 x 16 tokens, alternating rounds of the C++
benchmark (`llama_bench --workload article`) and the Python model of
examples/python/llama_from_scratch.py, and the median of the per-round
ratios python / C++.

    build-venv/bin/python bench/python_llama.py --llama-bench build-bench/bench/llama_bench \
        --threads 2 --rounds 5 --reps 10
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import time

import stride

HERE = os.path.dirname(os.path.abspath(__file__))


def load_example():
    path = os.path.join(HERE, "..", "examples", "python", "llama_from_scratch.py")
    spec = importlib.util.spec_from_file_location("llama_from_scratch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def python_step_ms(example, reps, warmup):
    config = example.MASTER_CONFIG
    stride.manual_seed(0)
    model = example.Llama(config)
    optimizer = stride.optim.Adam(model.parameters())
    shape = (config["batch_size"], config["context_window"])
    x = stride.randint(0, config["vocab_size"], shape)
    y = stride.randint(0, config["vocab_size"], shape)
    model.train()
    times = []
    for rep in range(warmup + reps):
        start = time.perf_counter()
        optimizer.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        optimizer.step()
        loss.item()
        if rep >= warmup:
            times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def cpp_step_ms(binary, threads, reps, warmup):
    out = subprocess.run(
        [
            binary,
            "--workload",
            "article",
            "--threads",
            str(threads),
            "--warmup",
            str(warmup),
            "--reps",
            str(reps),
        ],
        check=True,
        capture_output=True,
        text=True,
        env=dict(os.environ, OMP_WAIT_POLICY="passive"),
    ).stdout
    return json.loads(out.strip().splitlines()[-1])["median"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--llama-bench", default=os.path.join("build-bench", "bench", "llama_bench")
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    stride.set_num_threads(args.threads)
    example = load_example()
    rows = []
    for _ in range(args.rounds):
        cpp = cpp_step_ms(args.llama_bench, args.threads, args.reps, args.warmup)
        py = python_step_ms(example, args.reps, args.warmup)
        rows.append((cpp, py))
        print(f"C++ {cpp:7.2f} ms   Python {py:7.2f} ms   python/C++ {py / cpp:.3f}", flush=True)
    ratios = [py / cpp for cpp, py in rows]
    print(
        f"median C++ {statistics.median(c for c, _ in rows):.2f} ms, "
        f"Python {statistics.median(p for _, p in rows):.2f} ms, "
        f"median ratio python/C++ {statistics.median(ratios):.3f} "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f})"
    )


if __name__ == "__main__":
    main()
