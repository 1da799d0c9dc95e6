"""torch.nn.functional entries with PyTorch's Python signatures over
stride's C++ composites (src/nn/composed_layers.cpp): the channel-wise and
alpha dropouts, rrelu, bilinear, channel_shuffle, pdist and
local_response_norm; and max_unpool and embedding_bag
(src/nn/unpool_and_bags.cpp)."""

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


def _max_unpool(name, input, indices, kernel_size, stride, padding, output_size):
    _check_tensor(name, "input", input)
    _check_tensor(name, "indices", indices)
    return getattr(_nn, name)(input, indices, kernel_size, stride, padding, output_size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: (N, C, L) values at their indices
    in zeros (torch.nn.functional.max_unpool1d)."""
    return _max_unpool("max_unpool1d", input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: (N, C, H, W) values at their flat
    indices in zeros (torch.nn.functional.max_unpool2d)."""
    return _max_unpool("max_unpool2d", input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d: (N, C, D, H, W) values at their flat
    indices in zeros (torch.nn.functional.max_unpool3d)."""
    return _max_unpool("max_unpool3d", input, indices, kernel_size, stride, padding, output_size)


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
    _check_tensor("embedding_bag", "input", input)
    _check_tensor("embedding_bag", "weight", weight)
    return _nn.embedding_bag(
        input,
        weight,
        offsets,
        max_norm,
        norm_type,
        scale_grad_by_freq,
        mode,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )
