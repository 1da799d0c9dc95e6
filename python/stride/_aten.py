"""ATen-level functions that PyTorch programs and libraries call
(torch.native_layer_norm, torch._softmax_backward_data, torch.ops.aten.X,
...), with ATen's arguments and results.

Why Python: each is a thin composition of stride's existing ops and fused
kernels (layer_norm, batch_norm, group_norm, index, scatter_add, ...), not a
kernel of its own, and PyTorch programs reach them through Python only; the
gradients follow from the ops', as ATen's derivatives do. Where ATen's
result carries statistics that its autograd treats as constants
(native_layer_norm's and native_batch_norm's mean and rstd), they are
computed without recording.
"""

from . import autograd
from ._stride import Tensor, bfloat16, cat, empty, float16, nonzero_static, uint8
from .autograd import Function, enable_grad, is_grad_enabled, no_grad
from .nn import functional as F

__all__ = [
    "_batch_norm_with_update",
    "_chunk_cat",
    "_native_batch_norm_legit",
    "_softmax_backward_data",
    "_unsafe_masked_index",
    "_unsafe_masked_index_put_accumulate",
    "constant_pad_nd",
    "max_pool2d_with_indices_backward",
    "native_batch_norm",
    "native_dropout_backward",
    "native_group_norm",
    "native_layer_norm",
    "nonzero_static",
    "ops",
    "unsafe_chunk",
    "unsafe_split",
]


def _check_tensor(name, argument, value):
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{name}(): {argument} must be a stride.Tensor; got {type(value).__name__}."
        )


# --- chunks, splits and pads -------------------------------------------------


def unsafe_chunk(input, chunks, dim=0):
    """input.chunk(chunks, dim) (torch.unsafe_chunk). PyTorch's unsafe form
    skips view tracking for speed; stride's views are tracked either way."""
    _check_tensor("unsafe_chunk", "input", input)
    return input.chunk(chunks, dim)


def unsafe_split(input, split_size, dim=0):
    """input.split(split_size, dim) (torch.unsafe_split); see unsafe_chunk."""
    _check_tensor("unsafe_split", "input", input)
    return input.split(split_size, dim)


def constant_pad_nd(input, pad, value=0):
    """input padded with value (torch.constant_pad_nd): pad holds (before,
    after) pairs from the last dim backwards; negative amounts crop."""
    _check_tensor("constant_pad_nd", "input", input)
    return F.pad(input, pad, "constant", value)


def _chunked_rows(tensor, dim, num_chunks):
    """tensor padded with zeros along dim to a multiple of num_chunks, as
    (leading dims..., num_chunks, the rest of each chunk flattened)."""
    chunk = -(-tensor.shape[dim] // num_chunks)
    missing = chunk * num_chunks - tensor.shape[dim]
    if missing:
        tensor = F.pad(tensor, (0, 0) * (tensor.ndim - dim - 1) + (0, missing))
    return tensor.reshape(*tensor.shape[:dim], num_chunks, -1)


def _chunk_cat(tensors, dim, num_chunks):
    """Each tensor chunked into num_chunks along dim (the chunks padded with
    zeros to one size), the chunks flattened, and the i-th chunks of every
    tensor concatenated into row i of dim (torch._chunk_cat, FSDP's)."""
    if not tensors:
        raise ValueError("_chunk_cat(): tensors must not be empty.")
    if num_chunks < 1:
        raise ValueError(f"_chunk_cat(): num_chunks must be at least 1; got {num_chunks}.")
    for tensor in tensors:
        _check_tensor("_chunk_cat", "tensors", tensor)
    if dim < 0 and len({t.ndim for t in tensors}) > 1:
        raise ValueError(
            "_chunk_cat(): dim must be non-negative when the tensors have different numbers "
            f"of dims; got {dim}."
        )
    wrapped = dim + tensors[0].ndim if dim < 0 else dim
    if not 0 <= wrapped < min(t.ndim for t in tensors):
        raise IndexError(
            f"_chunk_cat(): dim {dim} is out of range for the tensors' "
            f"{min(t.ndim for t in tensors)} dims."
        )
    return cat([_chunked_rows(t, wrapped, num_chunks) for t in tensors], wrapped + 1)


# --- normalisation --------------------------------------------------------


def _mean_and_rstd(input, dims, eps):
    """The biased mean and 1 / sqrt(var + eps) over dims, kept."""
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, keepdim=True, correction=0)
    return mean, (var + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(layer_norm(input), mean, rstd) (torch.native_layer_norm): mean and
    rstd over the normalized dims, shaped input.shape[:axis] + (1,) * len.
    ATen's autograd treats them as constants; so does this."""
    _check_tensor("native_layer_norm", "input", input)
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    with no_grad():
        mean, rstd = _mean_and_rstd(input, dims, eps)
    return out, mean, rstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(group_norm(input), mean, rstd) (torch.native_group_norm): mean and
    rstd of each sample's groups, (N, group). They are differentiable, as
    ATen's are."""
    _check_tensor("native_group_norm", "input", input)
    if input.numel() != N * C * HxW:
        raise ValueError(
            f"native_group_norm(): input of shape {tuple(input.shape)} does not hold "
            f"N * C * HxW = {N} * {C} * {HxW} elements."
        )
    return _NativeGroupNorm.apply(input, weight, bias, (N, C, HxW, group, eps))


def _group_norm_with_statistics(input, weight, bias, N, C, HxW, group, eps):
    out = F.group_norm(input, group, weight, bias, eps)
    mean, rstd = _mean_and_rstd(input.reshape(N, group, C // group * HxW), (2,), eps)
    return out, mean.view(N, group), rstd.view(N, group)


class _NativeGroupNorm(Function):
    """native_group_norm as one node, as ATen's: all three results require
    grad when any input does (mean and rstd then get a zero gradient from
    weight and bias). backward differentiates the ops again, so the
    gradients are group_norm's and the statistics', to any order."""

    @staticmethod
    def forward(ctx, input, weight, bias, arguments):
        ctx.save_for_backward(input, weight, bias)
        ctx.arguments = arguments
        return _group_norm_with_statistics(input, weight, bias, *arguments)

    @staticmethod
    def backward(ctx, *grads):
        # The saved inputs themselves, so that under create_graph the
        # gradients' graph reaches them.
        inputs = ctx.saved_tensors
        wanted = [t for t in inputs if t is not None and t.requires_grad]
        with enable_grad():
            outputs = _group_norm_with_statistics(*inputs, *ctx.arguments)
            # Without input, mean and rstd are constants.
            pairs = [(o, g) for o, g in zip(outputs, grads) if o.requires_grad]
            found = iter(
                autograd.grad(
                    [o for o, _ in pairs],
                    wanted,
                    [g for _, g in pairs],
                    allow_unused=True,
                    create_graph=is_grad_enabled(),
                )
            )
        return (*(next(found) if t is not None and t.requires_grad else None for t in inputs), None)


def _batch_statistics(input, training, eps):
    """native_batch_norm's save_mean and save_invstd: the batch's per-channel
    mean and 1 / sqrt(biased var + eps) in training, empty otherwise."""
    if not training:
        return input.new_empty(0), input.new_empty(0)
    dims = (0,) + tuple(range(2, input.ndim))
    with no_grad():
        mean, rstd = _mean_and_rstd(input, dims, eps)
    return mean.reshape(-1), rstd.reshape(-1)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(batch_norm(input), save_mean, save_invstd) (torch.native_batch_norm),
    updating the running statistics in training as batch_norm does."""
    _check_tensor("native_batch_norm", "input", input)
    if input.dtype in (bfloat16, float16):
        out = _batch_norm_in_float32(
            input, weight, bias, running_mean, running_var, training, momentum, eps
        )
    else:
        out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return (out, *_batch_statistics(input, training, eps))


def _batch_norm_in_float32(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """batch_norm of a 16-bit input computed on float32 copies and rounded
    once, as ATen's CPU kernel computes 16-bit floats; the running
    statistics are updated in float32 and written back."""

    def widened(t):
        return None if t is None else t.float()

    stats = [widened(running_mean), widened(running_var)]
    out = F.batch_norm(
        input.float(), *stats, widened(weight), widened(bias), training, momentum, eps
    )
    with no_grad():
        for running, updated in zip((running_mean, running_var), stats):
            if running is not None:
                running.copy_(updated)
    return out.to(input.dtype)


def _native_batch_norm_legit(input, weight, bias, *args):
    """native_batch_norm (torch._native_batch_norm_legit), with or without
    the running statistics: (input, weight, bias, running_mean, running_var,
    training, momentum, eps) or (input, weight, bias, training, momentum,
    eps)."""
    if len(args) == 3:
        return native_batch_norm(input, weight, bias, None, None, *args)
    return native_batch_norm(input, weight, bias, *args)


def _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """Training batch_norm updating the running statistics
    (torch.ops.aten._batch_norm_with_update): (out, save_mean, save_invstd,
    reserve), reserve an empty uint8 tensor (cuDNN's workspace in ATen)."""
    out = native_batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps)
    return (*out, empty(0, dtype=uint8))


# --- backward functions ---------------------------------------------------


def _softmax_backward_data(grad_output, output, dim, input_dtype):
    """The gradient of softmax's input given its output's gradient and its
    output y: y * (g - sum(g * y, dim)), in input_dtype
    (torch._softmax_backward_data)."""
    _check_tensor("_softmax_backward_data", "grad_output", grad_output)
    _check_tensor("_softmax_backward_data", "output", output)
    if grad_output.dtype in (bfloat16, float16):  # ATen's CPU kernel computes these in float
        grad_output, output = grad_output.float(), output.float()
    grad = output * (grad_output - (grad_output * output).sum(dim, keepdim=True))
    return grad.to(input_dtype)


def native_dropout_backward(grad_output, mask, scale):
    """grad_output * mask * scale (torch.native_dropout_backward): dropout's
    gradient from its keep mask and 1 / (1 - p)."""
    _check_tensor("native_dropout_backward", "grad_output", grad_output)
    _check_tensor("native_dropout_backward", "mask", mask)
    return grad_output * (mask.to(grad_output.dtype) * scale)


def _scatter_into_planes(values, indices, shape):
    """Zeros of shape with each plane's values added at the flat positions
    (within the plane, the last two dims) that indices give."""
    zeros = values.new_zeros(shape).flatten(-2)
    return zeros.scatter_add(-1, indices.flatten(-2), values.flatten(-2)).view(shape)


class _MaxPool2dBackward(Function):
    """max_pool2d's input gradient: grad_output added at the positions of
    the maxima. Differentiable in grad_output (its gradient gathers at the
    same positions); input only lends its shape, so its gradient is zero,
    as ATen's (zeros_like(self))."""

    @staticmethod
    def forward(ctx, grad_output, input, indices):
        ctx.save_for_backward(indices)
        ctx.grad_shape = tuple(grad_output.shape)
        return _scatter_into_planes(grad_output, indices, tuple(input.shape))

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        flat = grad.flatten(-2).gather(-1, indices.flatten(-2))
        return flat.view(ctx.grad_shape), None, None


def max_pool2d_with_indices_backward(
    grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, indices
):
    """max_pool2d's input gradient from indices, the argmax positions
    max_pool2d(..., return_indices=True) gave
    (torch.ops.aten.max_pool2d_with_indices_backward); the pooling
    arguments only describe how indices were made."""
    _check_tensor("max_pool2d_with_indices_backward", "grad_output", grad_output)
    _check_tensor("max_pool2d_with_indices_backward", "input", input)
    _check_tensor("max_pool2d_with_indices_backward", "indices", indices)
    if tuple(indices.shape) != tuple(grad_output.shape):
        raise ValueError(
            "max_pool2d_with_indices_backward(): indices of shape "
            f"{tuple(indices.shape)} must have grad_output's shape {tuple(grad_output.shape)}."
        )
    del kernel_size, stride, padding, dilation, ceil_mode
    return _MaxPool2dBackward.apply(grad_output, input, indices)


# --- masked indexing ------------------------------------------------------


def _clamped_indices(input, indices, name):
    """ATen's indices for input (None: the whole dim) clamped into range:
    the masked ops read or write masked-out positions harmlessly."""
    if len(indices) > input.ndim:
        raise IndexError(f"{name}(): {len(indices)} indices for a {input.ndim}-d input.")
    return tuple(
        slice(None) if index is None else index.clamp(-size, size - 1)
        for index, size in zip(indices, input.shape)
    )


def _unsafe_masked_index(input, mask, indices, fill):
    """input[indices] where mask is true and fill elsewhere
    (torch._unsafe_masked_index); indices are clamped, so masked-out ones
    may be out of range."""
    _check_tensor("_unsafe_masked_index", "input", input)
    _check_tensor("_unsafe_masked_index", "mask", mask)
    values = input[_clamped_indices(input, indices, "_unsafe_masked_index")]
    return values.masked_fill(mask.logical_not(), fill)


def _unsafe_masked_index_put_accumulate(input, mask, indices, values):
    """input with values added at indices where mask is true
    (torch._unsafe_masked_index_put_accumulate); indices are clamped, so
    masked-out ones may be out of range."""
    name = "_unsafe_masked_index_put_accumulate"
    _check_tensor(name, "input", input)
    _check_tensor(name, "mask", mask)
    kept = values.masked_fill(mask.logical_not(), 0)
    return input.index_put(_clamped_indices(input, indices, name), kept, accumulate=True)


# --- torch.ops.aten -------------------------------------------------------


class _Overload:
    """An ATen op's overload packet (torch.ops.aten.X): callable, with its
    .default overload the same function."""

    def __init__(self, name, function):
        self.__name__ = name
        self._function = function
        self.default = function

    def __call__(self, *args, **kwargs):
        return self._function(*args, **kwargs)


class _AtenNamespace:
    """torch.ops.aten: each ATen op stride has, by its ATen name."""

    def __getattr__(self, name):
        import stride

        function = getattr(stride, name, None)
        if not callable(function) or isinstance(function, type):
            raise AttributeError(f"torch.ops.aten.{name} is not in stride yet.")
        return _Overload(name, function)


class _Ops:
    """torch.ops: the aten namespace only."""

    aten = _AtenNamespace()


ops = _Ops()
