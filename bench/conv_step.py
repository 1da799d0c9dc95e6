"""A small CNN's training step, stride beside PyTorch in the same run: the
forward and backward of conv2d layers (with ReLU, max_pool2d and a linear
head, cross_entropy loss, SGD step), then conv2d alone, forward and
backward.

    OMP_NUM_THREADS=2 build-venv/bin/python bench/conv_step.py [--rounds 7]

Both sides start from the same weights (copied from torch's layers) and
the same batch. Each round times every case on both sides back to back
(alternating which goes first) and records torch's time / stride's (above 1:
stride is faster, as bench/RESULTS.md reads every ratio); the table shows
the median of the paired ratios and each side's median time per call.
"""

import argparse

import numpy as np
from paired import compare, print_table


def build_torch_model(torch):
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 8 * 8, 10),
    )


def as_lib(lib, array):
    return lib.tensor(np.ascontiguousarray(array))


def stride_model(stride, reference):
    """reference's layers in stride, with its weights."""
    nn = stride.nn
    layers = []
    for layer in reference:
        name = type(layer).__name__
        if name == "Conv2d":
            copy = nn.Conv2d(layer.in_channels, layer.out_channels, layer.kernel_size, padding=1)
        elif name == "Linear":
            copy = nn.Linear(layer.in_features, layer.out_features)
        elif name == "MaxPool2d":
            copy = nn.MaxPool2d(layer.kernel_size)
        else:
            copy = getattr(nn, name)()
        for pname, p in layer.named_parameters():
            getattr(copy, pname).data.copy_(as_lib(stride, p.detach().numpy()))
        layers.append(copy)
    return nn.Sequential(*layers)


def cases(lib, model, images, labels, conv_input, conv_weight):
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = as_lib(lib, images)
    y = as_lib(lib, labels)
    xc = as_lib(lib, conv_input).requires_grad_()
    wc = as_lib(lib, conv_weight).requires_grad_()

    def train_step():
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    def conv_forward():
        with lib.no_grad():
            lib.nn.functional.conv2d(xc, wc, padding=1)

    def conv_forward_backward():
        lib.nn.functional.conv2d(xc, wc, padding=1).sum().backward()
        xc.grad = None
        wc.grad = None

    return {
        "CNN step (32x3x32x32, conv 16 and 32 channels, SGD)": (train_step, 20),
        "conv2d 3x3 forward (32x64x32x32 -> 64 channels)": (conv_forward, 10),
        "conv2d 3x3 forward + backward (input and weight)": (conv_forward_backward, 5),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    opts = parser.parse_args()
    import stride
    import torch

    rng = np.random.default_rng(0)
    images = rng.standard_normal((32, 3, 32, 32), dtype=np.float32)
    labels = rng.integers(0, 10, 32)
    conv_input = rng.standard_normal((32, 64, 32, 32), dtype=np.float32)
    conv_weight = rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05
    reference = build_torch_model(torch)
    sides = {
        "stride": cases(
            stride, stride_model(stride, reference), images, labels, conv_input, conv_weight
        ),
        "torch": cases(torch, reference, images, labels, conv_input, conv_weight),
    }
    results = compare(sides, opts.rounds)
    print(f"torch {torch.__version__}, {opts.rounds} rounds, {torch.get_num_threads()} threads")
    print_table(results, "ms")


if __name__ == "__main__":
    main()
