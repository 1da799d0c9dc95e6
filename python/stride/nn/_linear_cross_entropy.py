"""torch.nn.functional.linear_cross_entropy and its options: the
cross-entropy of a linear layer's logits, either composed of linear and
cross_entropy (options=None, PyTorch's reference path) or chunked by the C++
op, which never holds the whole (N, C) logits (Note [Chunked linear
cross-entropy] in src/nn/linear_cross_entropy.cpp)."""

import dataclasses
import math

from .._stride import _nn
from ._losses import _check_tensors, cross_entropy

_CHUNKING_METHODS = ("auto", "aspect_ratio")


@dataclasses.dataclass
class LinearCrossEntropyOptions:
    """How linear_cross_entropy chunks its rows
    (torch.nn.LinearCrossEntropyOptions).

    batch_chunk_size rows go through the logits at a time; without it,
    chunking_method "auto" or "aspect_ratio[:N]" sizes a chunk's (rows, C)
    logits like the (N, in_features) input (divided by N), and None takes
    all rows at once. stride's backward recomputes each chunk's logits from
    the saved inputs, so retain_graph always works and allow_retain_graph
    changes nothing. acc_policy and acc_dtype are PyTorch's precision knobs:
    stride computes float16 and bfloat16 inputs in float32 in every policy,
    so only acc_dtype None or float32 is accepted."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def rows_per_chunk(self, num_batches, in_features, num_classes):
        """The chunk size the options ask for (0: one chunk of all rows)."""
        method = self.chunking_method
        if self.batch_chunk_size is not None:
            if method not in (None, "auto"):
                raise ValueError(
                    "linear_cross_entropy(): options set both batch_chunk_size and "
                    f"chunking_method={method!r}; set chunking_method=None to use "
                    "batch_chunk_size."
                )
            if self.batch_chunk_size < 1:
                raise ValueError(
                    "linear_cross_entropy(): options.batch_chunk_size must be positive; got "
                    f"{self.batch_chunk_size}."
                )
            return self.batch_chunk_size
        if method is None:
            return 0
        return _aspect_ratio_rows(method, num_batches, in_features, num_classes)


def _aspect_ratio_rows(method, num_batches, in_features, num_classes):
    """PyTorch's aspect-ratio heuristic: a chunk's logits as large as the
    input, next_pow2(ceil(N / ceil(C / in_features))), divided by N for
    "aspect_ratio:N"."""
    name, _, factor = method.partition(":")
    if name not in _CHUNKING_METHODS or (name == "auto" and factor):
        raise ValueError(
            "linear_cross_entropy(): options.chunking_method must be 'auto', 'aspect_ratio', "
            f"'aspect_ratio:N' or None; got {method!r}."
        )
    divisor = int(factor) if factor else 1
    if divisor < 1:
        raise ValueError(
            f"linear_cross_entropy(): options.chunking_method {method!r} needs N >= 1."
        )
    ratio = max(1, math.ceil(num_classes / max(1, in_features)))
    rows = math.ceil(max(1, num_batches) / ratio)
    return max(1, (1 << (rows - 1).bit_length()) // divisor)


def _check_options(options, input):
    if not isinstance(options, LinearCrossEntropyOptions):
        raise TypeError(
            "linear_cross_entropy(): options must be a stride.nn.LinearCrossEntropyOptions or "
            f"None; got {type(options).__name__}."
        )
    if options.acc_policy not in ("auto", "accurate", "compact"):
        raise ValueError(
            "linear_cross_entropy(): options.acc_policy must be 'auto', 'accurate' or 'compact'; "
            f"got {options.acc_policy!r}."
        )
    if options.acc_dtype is not None and str(options.acc_dtype) not in (
        "float32",
        "stride.float32",
        "torch.float32",
    ):
        raise NotImplementedError(
            "linear_cross_entropy(): options.acc_dtype must be None or float32; stride "
            f"accumulates 16-bit inputs in float32 only; got {options.acc_dtype}."
        )


def _reference(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, ls):
    """PyTorch's reference: the logits of linear, reshaped to (*N, C,
    *out_features), into cross_entropy."""
    num_classes, *out_features, in_features = linear_weight.shape
    bias = None if linear_bias is None else linear_bias.reshape(-1)
    logits = _nn.linear(input, linear_weight.reshape(-1, in_features), bias)
    logits = logits.reshape(*input.shape[:-1], num_classes, *out_features)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        ignore_index=ignore_index,
        reduction=reduction,
        label_smoothing=ls,
    )


def _check_shapes(input, linear_weight, linear_bias):
    if input.ndim not in (1, 2):
        raise ValueError(
            "linear_cross_entropy(): input must be (in_features) or (N, in_features); got "
            f"{tuple(input.shape)}. Flatten (B, T, in_features) to (B * T, in_features)."
        )
    if linear_weight.ndim < 2:
        raise ValueError(
            "linear_cross_entropy(): linear_weight must be (C, in_features) or "
            f"(C, d_1, ..., d_K, in_features); got {tuple(linear_weight.shape)}."
        )
    if linear_weight.shape[-1] != input.shape[-1]:
        raise ValueError(
            "linear_cross_entropy(): input and linear_weight must end in one in_features; got "
            f"{tuple(input.shape)} and {tuple(linear_weight.shape)}."
        )
    expected = tuple(linear_weight.shape[:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != expected:
        raise ValueError(
            f"linear_cross_entropy(): linear_bias must have shape {expected}; got "
            f"{tuple(linear_bias.shape)}."
        )
    if linear_weight.ndim > 2 and input.ndim == 1:
        raise ValueError(
            "linear_cross_entropy(): a K-dimensional loss (linear_weight "
            f"{tuple(linear_weight.shape)}) needs a batched input (N, in_features); got "
            f"{tuple(input.shape)}."
        )


def linear_cross_entropy(
    input,
    linear_weight,
    target,
    *,
    linear_bias=None,
    weight=None,
    reduction="mean",
    ignore_index=None,
    label_smoothing=0.0,
    options=None,
):
    """cross_entropy(linear(input, linear_weight, linear_bias), target)
    (torch.nn.functional.linear_cross_entropy). With options (a
    LinearCrossEntropyOptions) the loss and its gradients are computed a
    chunk of rows at a time without the whole (N, C) logits, which for an
    LLM's vocabulary head is the largest tensor of a training step; without,
    it is the composition. A K-dimensional linear_weight, or class weights
    that require grad, take the composition either way."""
    _check_tensors("linear_cross_entropy", input=input, linear_weight=linear_weight, target=target)
    _check_shapes(input, linear_weight, linear_bias)
    logits_shape = (*input.shape[:-1], *linear_weight.shape[:-1])
    probabilities = tuple(target.shape) == logits_shape and target.is_floating_point()
    if probabilities and ignore_index is not None:
        raise ValueError(
            "linear_cross_entropy(): ignore_index cannot be given when target holds class "
            "probabilities."
        )
    ignore_index = -100 if ignore_index is None else ignore_index
    chunkable = linear_weight.ndim == 2 and not (weight is not None and weight.requires_grad)
    if options is None or not chunkable:
        if options is not None:
            _check_options(options, input)
        return _reference(
            input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
            label_smoothing,
        )  # fmt: skip
    _check_options(options, input)
    num_batches = input.shape[0] if input.ndim == 2 else 1
    rows = options.rows_per_chunk(num_batches, input.shape[-1], linear_weight.shape[0])
    return _nn.linear_cross_entropy_chunked(
        input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
        label_smoothing, rows,
    )  # fmt: skip
