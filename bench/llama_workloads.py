"""What bench/pytorch_llama.py and bench/jax_llama.py share with llama_bench.cpp: its
command line, the token stream and the correct Llama's configuration, without importing
either framework."""

import argparse
import time


def parser(doc, workloads):
    """llama_bench's options --workload, --threads, --warmup and --reps."""
    p = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--workload", required=True, choices=workloads)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--reps", type=int, default=5)
    return p


def token_stream(seed, count, vocab):
    """splitmix64, as token_stream() in llama_bench.cpp."""
    mask = (1 << 64) - 1
    state, out = seed, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        out.append(z % vocab)
    return out


def correct_config(d, n_layers, n_heads, context):
    """The correct Llama after Meta's reference model: SwiGLU's hidden size rounded up to 32."""
    multiple_of = 32
    hidden = multiple_of * ((int(2 * 4 * d / 3) + multiple_of - 1) // multiple_of)  # d 128 -> 352
    return dict(
        vocab_size=65,
        d_model=d,
        n_layers=n_layers,
        n_heads=n_heads,
        context=context,
        hidden=hidden,
        norm_eps=1e-6,
        rope_theta=10000.0,
    )


def time_reps(fn, warmup, reps):
    """(timed reps in ms, first warm-up call in ms or None)."""
    first = None
    for i in range(warmup):
        t0 = time.perf_counter()
        fn()
        if i == 0:
            first = (time.perf_counter() - t0) * 1e3
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times, first
