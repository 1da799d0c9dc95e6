"""torch.signal.windows: window functions of length M (C++ composites of
linspace and the elementwise ops, src/ops/windows.cpp), with PyTorch's
keyword arguments: sym=, dtype= (float32 or float64), device= and
requires_grad=."""

from .._stride._signal_windows import (  # noqa: F401  (the public API, re-exported)
    bartlett,
    blackman,
    cosine,
    exponential,
    gaussian,
    general_cosine,
    general_hamming,
    hamming,
    hann,
    kaiser,
    nuttall,
)

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]
