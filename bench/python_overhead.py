"""Python-side overhead per op, stride beside PyTorch in the same run:
`a + b` on 128 floats without and with autograd, and one training step of a
small MLP written in plain ops (matmul, relu, mean, backward, SGD update)
and written as users write it (nn.Sequential of nn.Linear modules,
F.cross_entropy, optim.SGD).

    OMP_NUM_THREADS=1 build-venv/bin/python bench/python_overhead.py [--rounds 7]

Each round times every case on both sides back to back (alternating which
goes first) and records torch's time / stride's (above 1: stride is
faster, as bench/RESULTS.md reads every ratio); the table shows the median
of the paired ratios and each side's median time per call.
"""

import argparse

from paired import compare, print_table


def cases(lib):
    a = lib.randn(128)
    b = lib.randn(128)
    ag = lib.randn(128, requires_grad=True)
    w1 = (lib.randn(32, 64) * 0.1).requires_grad_()
    w2 = (lib.randn(64, 10) * 0.1).requires_grad_()
    x = lib.randn(16, 32)

    def mlp_step():
        loss = (x @ w1).relu().matmul(w2).square().mean()
        loss.backward()
        with lib.no_grad():
            for w in (w1, w2):
                w.sub_(w.grad * 0.01)
                w.grad = None

    model = lib.nn.Sequential(lib.nn.Linear(32, 64), lib.nn.ReLU(), lib.nn.Linear(64, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    y = lib.randint(0, 10, (16,))

    def module_step():
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return {
        "a + b (128 floats)": (lambda: a + b, 20000),
        "a + b, a requires grad": (lambda: ag + b, 20000),
        "MLP step (16x32 -> 64 -> 10)": (mlp_step, 2000),
        "MLP step (nn.Linear modules, cross_entropy, optim.SGD)": (module_step, 2000),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    opts = parser.parse_args()
    import stride
    import torch

    torch.set_num_threads(1)
    sides = {"stride": cases(stride), "torch": cases(torch)}
    results = compare(sides, opts.rounds, warmup_calls=lambda calls: calls // 10)
    print(f"torch {torch.__version__}, {opts.rounds} rounds, one thread")
    print_table(results, "us")


if __name__ == "__main__":
    main()
