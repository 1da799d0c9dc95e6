"""Program-wide switches that PyTorch programs set: the float32 matmul
precision and deterministic algorithms. stride accepts and records them;
neither changes what it computes. Its float32 GEMMs are float32 (there is
no TF32 or bfloat16 shortcut to allow), and its kernels are deterministic
already: the same inputs and thread count give the same bits, with no
atomics to reorder sums."""

import warnings

_MATMUL_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = "highest"
_deterministic = False
_deterministic_warn_only = False


def set_float32_matmul_precision(precision):
    """Records 'highest', 'high' or 'medium' (torch.set_float32_matmul_precision).
    No effect: stride's float32 matmuls always compute in float32. Another
    value warns and changes nothing, as in PyTorch."""
    global _matmul_precision
    if not isinstance(precision, str):
        raise TypeError(
            "set_float32_matmul_precision(): precision must be 'highest', 'high' or 'medium'; "
            f"got {type(precision).__name__}."
        )
    if precision not in _MATMUL_PRECISIONS:
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "set_float32_matmul_precision call has no effect.",
            stacklevel=2,
        )
        return
    _matmul_precision = precision


def get_float32_matmul_precision():
    """The precision last set: 'highest' (the default), 'high' or 'medium'."""
    return _matmul_precision


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Records the request (torch.use_deterministic_algorithms). stride's ops
    are deterministic whatever it says, so there is nothing to refuse."""
    global _deterministic, _deterministic_warn_only
    if not isinstance(mode, bool):
        raise TypeError(
            f"use_deterministic_algorithms(): mode must be a bool; got {type(mode).__name__}."
        )
    _deterministic, _deterministic_warn_only = mode, bool(warn_only)


def are_deterministic_algorithms_enabled():
    """The mode last given to use_deterministic_algorithms (False at first)."""
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled():
    """The warn_only last given to use_deterministic_algorithms."""
    return _deterministic_warn_only
