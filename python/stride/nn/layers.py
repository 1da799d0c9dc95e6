"""The layers of stride.nn, each a Module over one stride.nn.functional op,
with PyTorch's constructor arguments, parameter names, shapes and default
initialisation (drawn in PyTorch's order from the default generator, so the
same seed gives the same weights as stride's C++ layers)."""

import math
import numbers
import operator

from .. import _stride
from ..autograd import no_grad
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _factory_kwargs(device, dtype):
    return {"device": device, "dtype": dtype}


def _int_arg(value, layer, name):
    """value as an int (Python's or NumPy's), or a TypeError naming the
    layer and the argument."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{layer}(): {name} must be an int; got {type(value).__name__}.") from None


class Identity(Module):
    """Returns its input."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b: (..., in_features) -> (..., out_features).
    weight (out_features, in_features) and bias (out_features) are drawn
    from U(-1/sqrt(in_features), 1/sqrt(in_features)), as in PyTorch."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = _int_arg(in_features, "Linear", "in_features")
        self.out_features = _int_arg(out_features, "Linear", "out_features")
        kw = _factory_kwargs(device, dtype)
        self.weight = Parameter(_stride.empty(self.out_features, self.in_features, **kw))
        if bias:
            self.bias = Parameter(_stride.empty(self.out_features, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraws weight and bias with PyTorch's default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Embedding(Module):
    """A lookup table: integer ids (...) -> (..., embedding_dim); weight
    (num_embeddings, embedding_dim) ~ N(0, 1), its padding_idx row zero and
    never trained; max_norm, norm_type, scale_grad_by_freq and sparse as in
    F.embedding."""

    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.num_embeddings = _int_arg(num_embeddings, "Embedding", "num_embeddings")
        self.embedding_dim = _int_arg(embedding_dim, "Embedding", "embedding_dim")
        if padding_idx is not None:
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise ValueError(
                    f"Embedding(): padding_idx must be within num_embeddings "
                    f"({self.num_embeddings}); got {padding_idx}."
                )
            padding_idx %= self.num_embeddings
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.weight = Parameter(
            _stride.empty(self.num_embeddings, self.embedding_dim, **_factory_kwargs(device, dtype))
        )
        self.reset_parameters()

    def reset_parameters(self):
        """Redraws the weight from N(0, 1), the padding_idx row zero."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].zero_()

    def forward(self, input):
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self):
        padding = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{padding}"


def _as_shape(normalized_shape, layer):
    """An int or a sequence of ints as a tuple, or a TypeError naming the layer."""
    try:
        return (operator.index(normalized_shape),)
    except TypeError:
        pass
    try:
        return tuple(operator.index(n) for n in normalized_shape)
    except TypeError:
        raise TypeError(
            f"{layer}(): normalized_shape must be an int or a sequence of ints; got "
            f"{type(normalized_shape).__name__}."
        ) from None


class RMSNorm(Module):
    """x / sqrt(mean(x^2 over the last dims) + eps) * weight (torch.nn.RMSNorm).
    stride's fused kernel normalises the last dim, so normalized_shape is
    one dim. eps=None takes the dtype's machine epsilon, as PyTorch."""

    def __init__(
        self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None
    ):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape, "RMSNorm")
        if len(self.normalized_shape) != 1:
            raise ValueError(
                f"RMSNorm normalises the last dim; got normalized_shape {self.normalized_shape}."
            )
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(
                _stride.ones(self.normalized_shape, **_factory_kwargs(device, dtype))
            )
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        """Sets the weight back to ones."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LayerNorm(Module):
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing
    normalized_shape dims (torch.nn.LayerNorm)."""

    def __init__(
        self,
        normalized_shape,
        eps=1e-5,
        elementwise_affine=True,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape, "LayerNorm")
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        kw = _factory_kwargs(device, dtype)
        if elementwise_affine:
            self.weight = Parameter(_stride.ones(self.normalized_shape, **kw))
            if bias:
                self.bias = Parameter(_stride.zeros(self.normalized_shape, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class BatchNorm1d(Module):
    """Batch normalisation of (N, C) or (N, C, L) per channel
    (torch.nn.BatchNorm1d): batch statistics in training (updating the
    running ones), running statistics in eval. momentum=None keeps a
    cumulative average."""

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=True,
        track_running_stats=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.num_features = _int_arg(num_features, "BatchNorm1d", "num_features")
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        kw = _factory_kwargs(device, dtype)
        if affine:
            self.weight = Parameter(_stride.ones(self.num_features, **kw))
            self.bias = Parameter(_stride.zeros(self.num_features, **kw))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _stride.zeros(self.num_features, **kw))
            self.register_buffer("running_var", _stride.ones(self.num_features, **kw))
            self.register_buffer(
                "num_batches_tracked", _stride.tensor(0, dtype=_stride.int64, device=device)
            )
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def forward(self, x):
        factor = 0.0
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / self.num_batches_tracked.item()
            else:
                factor = self.momentum
        batch_stats = self.training or not self.track_running_stats
        return F.batch_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            batch_stats,
            factor,
            self.eps,
        )

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, track_running_stats={self.track_running_stats}"
        )


class Dropout(Module):
    """Zeroes elements with probability p and scales the rest by 1/(1-p) in
    training; the identity in eval."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not isinstance(p, numbers.Real):
            raise TypeError(f"Dropout(): p must be a number; got {type(p).__name__}.")
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}.")
        if inplace:
            raise ValueError(
                "Dropout(inplace=True) is not supported; stride's dropout returns a new tensor."
            )
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class ReLU(Module):
    """ReLU, max(x, 0), elementwise (inplace is accepted for PyTorch's
    signature; the result is a new tensor)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input)


class SiLU(Module):
    """SiLU (swish), x * sigmoid(x), elementwise (inplace is accepted for
    PyTorch's signature; the result is a new tensor)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input)


class GELU(Module):
    """The exact (erf) GELU, PyTorch's default."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate='{self.approximate}'"


class Softmax(Module):
    """exp(x) / sum(exp(x)) along dim."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class CrossEntropyLoss(Module):
    """F.cross_entropy as a module."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(
            input,
            target,
            self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class MSELoss(Module):
    """F.mse_loss as a module."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class _Activation(Module):
    """An activation over F.<_fn>, its constructor arguments kept as
    attributes in PyTorch's names. extra_repr is PyTorch's: the arguments,
    inplace only when True (and never where _repr_inplace is False, as
    PyTorch's Hardswish, Hardsigmoid and Mish)."""

    _fn = None
    _args = ()
    _repr_inplace = True

    def forward(self, input):
        return getattr(F, self._fn)(input, *(getattr(self, a) for a in self._args))

    def extra_repr(self):
        parts = [f"{a}={getattr(self, a)}" for a in self._args if a != "inplace"]
        if self._repr_inplace and getattr(self, "inplace", False):
            parts.append("inplace=True")
        return ", ".join(parts)


class LeakyReLU(_Activation):
    """x where x > 0, negative_slope * x elsewhere (torch.nn.LeakyReLU)."""

    _fn, _args = "leaky_relu", ("negative_slope", "inplace")

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace


class ELU(_Activation):
    """x where x > 0, alpha * (exp(x) - 1) elsewhere (torch.nn.ELU)."""

    _fn, _args = "elu", ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace


class SELU(_Activation):
    """scale * elu(x, alpha) with SELU's constants (torch.nn.SELU)."""

    _fn, _args = "selu", ("inplace",)

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class CELU(_Activation):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (torch.nn.CELU)."""

    _fn, _args = "celu", ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace


class Softplus(_Activation):
    """log(1 + exp(beta x)) / beta, linear above threshold (torch.nn.Softplus)."""

    _fn, _args = "softplus", ("beta", "threshold")

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold


class Hardtanh(_Activation):
    """x clamped into [min_val, max_val] (torch.nn.Hardtanh)."""

    _fn, _args = "hardtanh", ("min_val", "max_val", "inplace")

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        for name, value in (("min_val", min_val), ("max_val", max_val)):
            if not isinstance(value, numbers.Real):
                raise TypeError(f"Hardtanh(): {name} must be a number; got {type(value).__name__}.")
        if min_val > max_val:
            raise ValueError(
                f"Hardtanh(): min_val ({min_val}) cannot be greater than max_val ({max_val})."
            )
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace


class ReLU6(_Activation):
    """min(max(0, x), 6) (torch.nn.ReLU6)."""

    _fn, _args = "relu6", ("inplace",)

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class Hardswish(_Activation):
    """x * relu6(x + 3) / 6 (torch.nn.Hardswish)."""

    _fn, _args = "hardswish", ("inplace",)
    _repr_inplace = False

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class Hardsigmoid(_Activation):
    """relu6(x + 3) / 6 (torch.nn.Hardsigmoid)."""

    _fn, _args = "hardsigmoid", ("inplace",)
    _repr_inplace = False

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class Mish(_Activation):
    """x * tanh(softplus(x)) (torch.nn.Mish)."""

    _fn, _args = "mish", ("inplace",)
    _repr_inplace = False

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class LogSigmoid(_Activation):
    """log(sigmoid(x)), computed stably (torch.nn.LogSigmoid)."""

    _fn = "logsigmoid"


class Softsign(_Activation):
    """x / (1 + |x|) (torch.nn.Softsign)."""

    _fn = "softsign"


class Tanhshrink(_Activation):
    """x - tanh(x) (torch.nn.Tanhshrink)."""

    _fn = "tanhshrink"


class Softshrink(_Activation):
    """x -+ lambd outside [-lambd, lambd], 0 inside (torch.nn.Softshrink)."""

    _fn, _args = "softshrink", ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(_Activation):
    """x outside [-lambd, lambd], 0 inside (torch.nn.Hardshrink)."""

    _fn, _args = "hardshrink", ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return str(self.lambd)


class Threshold(_Activation):
    """x where x > threshold, value elsewhere (torch.nn.Threshold)."""

    _fn, _args = "threshold", ("threshold", "value", "inplace")

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace


class GLU(_Activation):
    """a * sigmoid(b) of input's two halves along dim (torch.nn.GLU)."""

    _fn, _args = "glu", ("dim",)

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim


class Softmin(_Activation):
    """softmax(-x) along dim (torch.nn.Softmin)."""

    _fn, _args = "softmin", ("dim",)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim


class PReLU(Module):
    """x where x > 0, a * x elsewhere, with a learnable: one value or one per
    channel (num_parameters), initialised to init (torch.nn.PReLU)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = _int_arg(num_parameters, "PReLU", "num_parameters")
        self.init = init
        self.weight = Parameter(
            _stride.empty(self.num_parameters, **_factory_kwargs(device, dtype))
        )
        self.reset_parameters()

    def reset_parameters(self):
        """Sets every weight back to init."""
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


def _legacy_reduction(size_average, reduce, reduction):
    """PyTorch's _Loss: the deprecated size_average= and reduce=, when either
    is given, decide the reduction."""
    if size_average is None and reduce is None:
        return reduction
    mean = True if size_average is None else size_average
    reduced = True if reduce is None else reduce
    return ("mean" if mean else "sum") if reduced else "none"


class L1Loss(Module):
    """F.l1_loss as a module."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = _legacy_reduction(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(Module):
    """F.smooth_l1_loss as a module."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__()
        self.reduction = _legacy_reduction(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(Module):
    """F.huber_loss as a module."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__()
        self.reduction = reduction
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(Module):
    """F.binary_cross_entropy as a module; weight is a buffer, as PyTorch's."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.register_buffer("weight", weight)
        self.reduction = _legacy_reduction(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(Module):
    """F.binary_cross_entropy_with_logits as a module; weight and pos_weight
    are buffers, as PyTorch's."""

    def __init__(
        self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None
    ):
        super().__init__()
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.reduction = _legacy_reduction(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


class KLDivLoss(Module):
    """F.kl_div as a module."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__()
        self.reduction = _legacy_reduction(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one (torch.nn.Flatten)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim into unflattened_size (torch.nn.Unflatten)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input):
        dim = self.dim + input.ndim if self.dim < 0 else self.dim
        shape = tuple(input.shape)
        return input.reshape(shape[:dim] + self.unflattened_size + shape[dim + 1 :])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
