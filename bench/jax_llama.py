#!/usr/bin/env python3
"""JAX's side of bench/compare_pytorch: the correct Llama's training steps under jax.jit.

    build-jax-venv/bin/python bench/jax_llama.py --workload correct --threads 2 --warmup 2 --reps 5

Same CLI and the same one-line JSON output as llama_bench. Workloads, the
models and optimizers of bench/pytorch_llama.py (which says where the
architecture comes from):
  correct   the correct Llama at the article's size (820,608 params), B 32 x
            T 16, AdamW(1e-3, betas (0.9, 0.95), weight decay 0.1 on matrices
            only), ms per step
  large     the correct Llama d 384, 6 layers, 6 heads, T 256, hidden 1024
            (10,671,744 params), B 16, AdamW as above, ms per step

One step is one call of a jax.jit-compiled function that runs the forward,
the cross-entropy, the gradients (jax.value_and_grad) and optax's AdamW
update, with the parameters and optimizer state donated (updated in place,
as PyTorch's optimizer does), then reads the loss (as loss.item()). The
first call compiles, so at least one warm-up rep runs and its time is
reported as first_call_ms. Attention is jax.nn.dot_product_attention
(causal). Token ids are the splitmix64 stream llama_bench.cpp also draws.
Threads: the process's CPU affinity is cut to --threads CPUs before jax is
imported; XLA sizes its thread pool by the CPUs it may run on.
"""

import json
import os
import resource
import statistics
import sys

from llama_workloads import correct_config, parser, time_reps, token_stream

WORKLOADS = ("correct", "large")


def parse_args():
    p = parser(__doc__, WORKLOADS)
    a = p.parse_args()
    if a.threads < 1 or a.warmup < 0 or a.reps < 1:
        p.error("expected --threads >= 1, --warmup >= 0, --reps >= 1")
    cpus = sorted(os.sched_getaffinity(0))
    if a.threads > len(cpus):
        p.error(f"--threads {a.threads}: this process may run on {len(cpus)} CPUs")
    os.sched_setaffinity(0, cpus[: a.threads])
    return a


ARGS = parse_args()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402

IMPORT_RSS_KB = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def init_params(cfg, key):
    """PyTorch's layouts: linear weights (out, in); nn.Linear's and nn.Embedding's inits."""
    d, hidden, vocab = cfg["d_model"], cfg["hidden"], cfg["vocab_size"]
    keys = iter(jax.random.split(key, 2 + 7 * cfg["n_layers"]))

    def linear(out_features, in_features):
        bound = in_features**-0.5
        return jax.random.uniform(
            next(keys), (out_features, in_features), jnp.float32, -bound, bound
        )

    layers = []
    for _ in range(cfg["n_layers"]):
        layers.append(
            dict(
                wq=linear(d, d),
                wk=linear(d, d),
                wv=linear(d, d),
                wo=linear(d, d),
                w1=linear(hidden, d),
                w2=linear(d, hidden),
                w3=linear(hidden, d),
                attention_norm=jnp.ones(d),
                ffn_norm=jnp.ones(d),
            )
        )
    return dict(
        tok_embeddings=jax.random.normal(next(keys), (vocab, d)),
        layers=layers,
        norm=jnp.ones(d),
        output=linear(vocab, d),
    )


def rope_tables(cfg):
    dh = cfg["d_model"] // cfg["n_heads"]
    freqs = 1.0 / (cfg["rope_theta"] ** (jnp.arange(0, dh, 2, dtype=jnp.float32) / dh))
    angle = jnp.outer(jnp.arange(cfg["context"], dtype=jnp.float32), freqs)
    return jnp.cos(angle), jnp.sin(angle)


def rms_norm(x, weight, eps):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rotate(x, cos, sin):
    # x (B, T, H, Dh); adjacent pairs times e^{+i p theta_j}; cos, sin (T, Dh/2).
    a, b = x[..., 0::2], x[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    return jnp.stack((a * c - b * s, a * s + b * c), axis=-1).reshape(x.shape)


def forward(params, tokens, cfg, cos, sin):
    B, T = tokens.shape
    H, dh, eps = cfg["n_heads"], cfg["d_model"] // cfg["n_heads"], cfg["norm_eps"]
    h = params["tok_embeddings"][tokens]
    for layer in params["layers"]:
        x = rms_norm(h, layer["attention_norm"], eps)
        q, k, v = ((x @ layer[w].T).reshape(B, T, H, dh) for w in ("wq", "wk", "wv"))
        y = jax.nn.dot_product_attention(
            rotate(q, cos, sin), rotate(k, cos, sin), v, is_causal=True
        )
        h = h + y.reshape(B, T, H * dh) @ layer["wo"].T
        x = rms_norm(h, layer["ffn_norm"], eps)
        h = h + (jax.nn.silu(x @ layer["w1"].T) * (x @ layer["w3"].T)) @ layer["w2"].T
    return rms_norm(h, params["norm"], eps) @ params["output"].T


def main():
    cfg, batch = (
        (correct_config(128, 4, 8, 16), 32)
        if ARGS.workload == "correct"
        else (correct_config(384, 6, 6, 256), 16)
    )
    T, V = cfg["context"], cfg["vocab_size"]
    params = init_params(cfg, jax.random.PRNGKey(0))
    count = sum(p.size for p in jax.tree_util.tree_leaves(params))
    embedding = params["tok_embeddings"].size
    cos, sin = rope_tables(cfg)
    x = jnp.array(token_stream(1, batch * T, V), dtype=jnp.int32).reshape(batch, T)
    y = jnp.array(token_stream(2, batch * T, V), dtype=jnp.int32).reshape(batch, T)
    # As stride's make_optimizer: only matrices (ndim >= 2) decay.
    opt = optax.adamw(
        1e-3,
        b1=0.9,
        b2=0.95,
        eps=1e-8,
        weight_decay=0.1,
        mask=lambda p: jax.tree_util.tree_map(lambda a: a.ndim >= 2, p),
    )
    state = [params, opt.init(params)]

    def loss_fn(p):
        logits = forward(p, x, cfg, cos, sin)
        return optax.softmax_cross_entropy_with_integer_labels(
            logits.reshape(-1, V), y.reshape(-1)
        ).mean()

    def step(p, opt_state):
        loss, grads = jax.value_and_grad(loss_fn)(p)
        updates, opt_state = opt.update(grads, opt_state, p)
        return optax.apply_updates(p, updates), opt_state, loss

    step = jax.jit(step, donate_argnums=(0, 1))
    loss = [None]

    def run():
        state[0], state[1], value = step(state[0], state[1])
        loss[0] = float(value)

    warmup = max(ARGS.warmup, 1)
    times, first = time_reps(run, warmup, ARGS.reps)
    line = {
        "system": "jax",
        "version": jax.__version__,
        "mode": "jit",
        "workload": ARGS.workload,
        "threads": ARGS.threads,
        "warmup": warmup,
        "reps": ARGS.reps,
        "unit": "ms",
        "median": statistics.median(times),
        "values": times,
        "times_ms": times,
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "maxrss_after_import_kb": IMPORT_RSS_KB,
        "first_call_ms": first,
        "params": int(count),
        "params_embedding": int(embedding),
        "batch": batch,
        "context": T,
        "tokens_per_step": batch * T,
        "final_loss": loss[0],
    }
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    sys.exit(main())
