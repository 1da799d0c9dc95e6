"""torch.nn.functional entries with PyTorch's Python signatures over
stride's C++ composites (src/nn/composed_layers.cpp): the channel-wise and
alpha dropouts, rrelu, bilinear, channel_shuffle, pdist and
local_response_norm; and max_unpool and embedding_bag, composed here from
stride's ops (scatter, index_add, scatter_reduce)."""

import math

import stride

from .._stride import Tensor, _nn


def _check_tensor(name, arg, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): {arg} must be a stride.Tensor; got {type(value).__name__}.")


def _refuse_inplace(name, inplace):
    if inplace:
        raise NotImplementedError(
            f"{name}(): inplace=True is not supported; stride's dropouts return a new tensor."
        )


def _dropout(name, input, p, training, inplace):
    _check_tensor(name, "input", input)
    _refuse_inplace(name, inplace)
    out = getattr(_nn, name)(input, p, training)
    # The same Python object where nothing is dropped, as PyTorch's.
    return input if not training or p == 0 else out


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, L) or (C, L) with probability p
    (torch.nn.functional.dropout1d)."""
    return _dropout("dropout1d", input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) with probability p
    (torch.nn.functional.dropout2d)."""
    return _dropout("dropout2d", input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) with
    probability p (torch.nn.functional.dropout3d)."""
    return _dropout("dropout3d", input, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps a SELU network's mean and variance
    (torch.nn.functional.alpha_dropout)."""
    return _dropout("alpha_dropout", input, p, training, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels of (N, C, *)
    (torch.nn.functional.feature_alpha_dropout)."""
    return _dropout("feature_alpha_dropout", input, p, training, inplace)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """x where x >= 0, else x * a: a drawn uniformly from [lower, upper] per
    element in training, (lower + upper) / 2 in eval
    (torch.nn.functional.rrelu)."""
    _check_tensor("rrelu", "input", input)
    _refuse_inplace("rrelu", inplace)
    return _nn.rrelu(input, lower, upper, training)


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1^T W_o x2 + b_o: input1 (..., in1), input2 (..., in2), weight
    (out, in1, in2) -> (..., out) (torch.nn.functional.bilinear)."""
    for arg, value in (("input1", input1), ("input2", input2), ("weight", weight)):
        _check_tensor("bilinear", arg, value)
    return _nn.bilinear(input1, input2, weight, bias)


def channel_shuffle(input, groups):
    """(N, C, *) with its channels regrouped: channel g * (C / groups) + i
    moves to i * groups + g (torch.nn.functional.channel_shuffle)."""
    _check_tensor("channel_shuffle", "input", input)
    return _nn.channel_shuffle(input, groups)


def pdist(input, p=2.0):
    """The p-norm distance between each pair of rows i < j of input (N, M),
    in row-major order of the pairs: N * (N - 1) / 2 values
    (torch.nn.functional.pdist)."""
    _check_tensor("pdist", "input", input)
    return _nn.pdist(input, p)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of input^2 over a window of size
    neighbouring channels)^beta, the window zero-padded at the edges
    (torch.nn.functional.local_response_norm)."""
    _check_tensor("local_response_norm", "input", input)
    return _nn.local_response_norm(input, size, alpha, beta, k)


def _tuple_of(value, dims, name, arg):
    if isinstance(value, int):
        return (value,) * dims
    value = tuple(value)
    if len(value) != dims:
        raise ValueError(f"{name}(): {arg} must be an int or {dims} ints; got {value}.")
    return value


def _unpooled_size(name, input, kernel, step, padding, output_size, dims):
    """The output's spatial size: output_size (with or without its leading
    dims) or, without it, the inverse of max_pool's size formula."""
    default = tuple(
        (size - 1) * s - 2 * p + k
        for size, k, s, p in zip(input.shape[-dims:], kernel, step, padding)
    )
    if output_size is None:
        return default
    size = tuple(output_size)[-dims:] if len(output_size) >= dims else tuple(output_size)
    if len(size) != dims:
        raise ValueError(f"{name}(): output_size must end in {dims} spatial sizes; got {size}.")
    return size


def _max_unpool(name, input, indices, kernel_size, step, padding, output_size, dims):
    """Each value of input written at its flat index (within its channel's
    output plane) of a zero output: max_pool's inverse on the kept maxima."""
    _check_tensor(name, "input", input)
    _check_tensor(name, "indices", indices)
    if input.ndim not in (dims + 1, dims + 2) or indices.shape != input.shape:
        raise ValueError(
            f"{name}(): input must have {dims + 1} (unbatched) or {dims + 2} dims and indices "
            f"its shape; got {tuple(input.shape)} and {tuple(indices.shape)}."
        )
    kernel = _tuple_of(kernel_size, dims, name, "kernel_size")
    step = kernel if step is None else _tuple_of(step, dims, name, "stride")
    padding = _tuple_of(padding, dims, name, "padding")
    size = _unpooled_size(name, input, kernel, step, padding, output_size, dims)
    lead = tuple(input.shape[:-dims])
    plane = math.prod(size)
    flat_indices = indices.reshape(lead + (-1,))
    if flat_indices.numel() and not (
        (flat_indices >= 0).all().item() and (flat_indices < plane).all().item()
    ):
        raise ValueError(
            f"{name}(): indices must lie in [0, {plane}), the output plane of size {size}."
        )
    zeros = stride.zeros(lead + (plane,), dtype=input.dtype)
    out = zeros.scatter(-1, flat_indices, input.reshape(lead + (-1,)))
    return out.reshape(lead + size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: (N, C, L) values at their indices
    in zeros (torch.nn.functional.max_unpool1d)."""
    return _max_unpool("max_unpool1d", input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: (N, C, H, W) values at their flat
    indices in zeros (torch.nn.functional.max_unpool2d)."""
    return _max_unpool("max_unpool2d", input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: (N, C, D, H, W) values at their flat
    indices in zeros (torch.nn.functional.max_unpool3d)."""
    return _max_unpool("max_unpool3d", input, indices, kernel_size, stride, padding, output_size, 3)


def _bag_of_each_index(name, input, offsets, include_last_offset):
    """The flat ids and the bag each belongs to (a list), and the number
    of bags: a (B, N) input's rows, or a 1-d input cut at offsets."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{name}(): offsets must be None for a 2-d input; each row is a bag.")
        bags, per_bag = input.shape
        return input.reshape(-1), [b for b in range(bags) for _ in range(per_bag)], bags
    if input.ndim != 1 or offsets is None or offsets.ndim != 1:
        raise ValueError(
            f"{name}(): input must be (B, N), or 1-d with 1-d offsets; got input of shape "
            f"{tuple(input.shape)} and offsets {None if offsets is None else tuple(offsets.shape)}."
        )
    # With include_last_offset the last offset closes the last bag, which
    # (as in PyTorch's kernel) still runs to the end of input.
    starts = offsets.tolist()[:-1] if include_last_offset else offsets.tolist()
    end = input.shape[0]
    if starts and (starts[0] != 0 or starts != sorted(starts) or starts[-1] > end):
        raise ValueError(
            f"{name}(): offsets must start at 0 and not decrease, within the input; got "
            f"{offsets.tolist()}."
        )
    ends = starts[1:] + [end]
    bag_ids = [b for b, (s, e) in enumerate(zip(starts, ends)) for _ in range(s, e)]
    return input.narrow(0, 0, len(bag_ids)), bag_ids, len(starts)


def embedding_bag(
    input,
    weight,
    offsets=None,
    max_norm=None,
    norm_type=2,
    scale_grad_by_freq=False,
    mode="mean",
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """The sum, mean or max of each bag's rows of weight
    (torch.nn.functional.embedding_bag): bags are the rows of a 2-d input,
    or a 1-d input cut at offsets. Ids equal to padding_idx are left out
    (an empty bag gives zeros); per_sample_weights scale each row in mode
    'sum'. stride has no sparse tensors: with sparse=True weight's gradient
    holds the same values, dense."""
    from .functional import embedding

    name = "embedding_bag"
    _check_tensor(name, "input", input)
    _check_tensor(name, "weight", weight)
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{name}(): mode must be 'sum', 'mean' or 'max'; got {mode!r}.")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            f"{name}(): per_sample_weights is only supported for mode='sum'; got mode={mode!r}."
        )
    if per_sample_weights is not None and per_sample_weights.shape != input.shape:
        raise ValueError(
            f"{name}(): per_sample_weights must have input's shape {tuple(input.shape)}; got "
            f"{tuple(per_sample_weights.shape)}."
        )
    ids, bag_ids, bags = _bag_of_each_index(name, input, offsets, include_last_offset)
    rows = embedding(ids, weight, None, max_norm, norm_type, scale_grad_by_freq)
    kept = [
        i
        for i, v in enumerate(ids.tolist())
        if padding_idx is None or v != padding_idx % len(weight)
    ]
    positions = stride.tensor(kept, dtype=stride.int64)
    rows = rows.index_select(0, positions)
    bag = stride.tensor([bag_ids[i] for i in kept], dtype=stride.int64)
    out = stride.zeros((bags, weight.shape[1]), dtype=weight.dtype)
    if mode == "max":
        index = bag.unsqueeze(1).expand(len(kept), weight.shape[1])
        return out.scatter_reduce(0, index, rows, "amax", include_self=False)
    if weight.dtype in (stride.bfloat16, stride.float16):
        # One rounding at the end, as PyTorch's float-accumulating kernel.
        rows, out = rows.float(), out.float()
    if per_sample_weights is not None:
        scale = per_sample_weights.reshape(-1).narrow(0, 0, len(bag_ids)).index_select(0, positions)
        rows = rows * scale.unsqueeze(1).to(rows.dtype)
    summed = out.index_add(0, bag, rows)
    if mode == "mean":
        summed = summed / stride.bincount(bag, minlength=bags).clamp_min(1).unsqueeze(1)
    return summed.to(weight.dtype)
