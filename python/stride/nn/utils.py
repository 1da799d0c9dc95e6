"""stride.nn.utils: gradient clipping (torch.nn.utils)."""

from .._stride import Tensor, _nn


def _parameter_list(parameters, op):
    if isinstance(parameters, Tensor):
        return [parameters]
    try:
        return list(parameters)
    except TypeError:
        raise TypeError(
            f"{op}(): parameters must be a tensor or an iterable of tensors; got "
            f"{type(parameters).__name__}."
        ) from None


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales the gradients of `parameters` together so that their total
    norm is at most max_norm; returns the total norm before clipping (a 0-d
    tensor). norm_type=float('inf') uses the largest |g|."""
    return _nn.clip_grad_norm_(
        _parameter_list(parameters, "clip_grad_norm_"),
        float(max_norm),
        float(norm_type),
        error_if_nonfinite,
    )


def clip_grad_value_(parameters, clip_value):
    """Clamps every gradient element into [-clip_value, clip_value]."""
    _nn.clip_grad_value_(_parameter_list(parameters, "clip_grad_value_"), float(clip_value))
