"""The image layers of stride.nn (torch.nn.Conv2d, MaxPool2d, Upsample,
GroupNorm, ...), each a Module over its stride.nn.functional op, with
PyTorch's constructor arguments, parameter names and shapes, and default
initialisation (kaiming_uniform_ with a=sqrt(5) for the weight, U(-1/sqrt(fan_in),
1/sqrt(fan_in)) for the bias, drawn in PyTorch's order)."""

import math

from .. import _stride
from . import functional as F
from . import init
from .layers import BatchNorm1d, _factory_kwargs, _int_arg
from .module import Module
from .parameter import Parameter


def _tuple(value, n):
    """An int or a sequence as an n-tuple, as PyTorch's layers store sizes."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """The parameters of a convolution: weight (out_channels, in_channels /
    groups, *kernel_size), or (in_channels, out_channels / groups, *kernel)
    when transposed, and bias (out_channels)."""

    def __init__(
        self,
        name,
        dims,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        dilation,
        groups,
        bias,
        padding_mode,
        transposed,
        output_padding,
        device,
        dtype,
    ):
        super().__init__()
        self.in_channels = _int_arg(in_channels, name, "in_channels")
        self.out_channels = _int_arg(out_channels, name, "out_channels")
        self.groups = _int_arg(groups, name, "groups")
        if self.groups <= 0 or self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(
                f"{name}(): in_channels ({self.in_channels}) and out_channels "
                f"({self.out_channels}) must be divisible by groups ({self.groups})."
            )
        if padding_mode != "zeros":
            raise NotImplementedError(
                f"{name}(): padding_mode={padding_mode!r} is not supported; only 'zeros'. "
                "Pad the input with F.pad instead."
            )
        self.kernel_size = _tuple(kernel_size, dims)
        self.stride = _tuple(stride, dims)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, dims)
        self.dilation = _tuple(dilation, dims)
        self.output_padding = _tuple(output_padding, dims)
        self.transposed = transposed
        self.padding_mode = padding_mode
        kw = _factory_kwargs(device, dtype)
        if transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        self.weight = Parameter(_stride.empty(*shape, **kw))
        if bias:
            self.bias = Parameter(_stride.empty(self.out_channels, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraws weight and bias with PyTorch's default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return self._functional(
            input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    def extra_repr(self):
        s = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    """1-d convolution of (N, C_in, L) or (C_in, L) (torch.nn.Conv1d)."""

    _functional = staticmethod(F.conv1d)

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            "Conv1d", 1, in_channels, out_channels, kernel_size, stride, padding, dilation,
            groups, bias, padding_mode, False, 0, device, dtype,
        )  # fmt: skip


class Conv2d(_ConvNd):
    """2-d convolution of (N, C_in, H, W) or (C_in, H, W) (torch.nn.Conv2d)."""

    _functional = staticmethod(F.conv2d)

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            "Conv2d", 2, in_channels, out_channels, kernel_size, stride, padding, dilation,
            groups, bias, padding_mode, False, 0, device, dtype,
        )  # fmt: skip


class Conv3d(_ConvNd):
    """3-d convolution of (N, C_in, D, H, W) or (C_in, D, H, W) (torch.nn.Conv3d)."""

    _functional = staticmethod(F.conv3d)

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            "Conv3d", 3, in_channels, out_channels, kernel_size, stride, padding, dilation,
            groups, bias, padding_mode, False, 0, device, dtype,
        )  # fmt: skip


class _ConvTransposeNd(_ConvNd):
    def forward(self, input, output_size=None):
        if output_size is not None:
            raise NotImplementedError(
                f"{type(self).__name__}.forward(): output_size is not supported; "
                "set output_padding in the constructor instead."
            )
        return self._functional(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            self.output_padding,
            self.groups,
            self.dilation,
        )


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-d convolution (torch.nn.ConvTranspose1d)."""

    _functional = staticmethod(F.conv_transpose1d)

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            "ConvTranspose1d", 1, in_channels, out_channels, kernel_size, stride, padding,
            dilation, groups, bias, padding_mode, True, output_padding, device, dtype,
        )  # fmt: skip


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-d convolution (torch.nn.ConvTranspose2d)."""

    _functional = staticmethod(F.conv_transpose2d)

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            "ConvTranspose2d", 2, in_channels, out_channels, kernel_size, stride, padding,
            dilation, groups, bias, padding_mode, True, output_padding, device, dtype,
        )  # fmt: skip


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-d convolution (torch.nn.ConvTranspose3d)."""

    _functional = staticmethod(F.conv_transpose3d)

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        super().__init__(
            "ConvTranspose3d", 3, in_channels, out_channels, kernel_size, stride, padding,
            dilation, groups, bias, padding_mode, True, output_padding, device, dtype,
        )  # fmt: skip


class _MaxPoolNd(Module):
    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return self._functional(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool1d(_MaxPoolNd):
    """Max pooling of (N, C, L) or (C, L) (torch.nn.MaxPool1d)."""

    _functional = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Max pooling of (N, C, H, W) or (C, H, W) (torch.nn.MaxPool2d)."""

    _functional = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) (torch.nn.MaxPool3d)."""

    _functional = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    """Average pooling of (N, C, L) or (C, L) (torch.nn.AvgPool1d)."""

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
    ):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if stride is not None else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
        )

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return self._functional(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """Average pooling of (N, C, H, W) or (C, H, W) (torch.nn.AvgPool2d)."""

    _functional = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) (torch.nn.AvgPool3d)."""

    _functional = staticmethod(F.avg_pool3d)


class _AdaptivePoolNd(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return self._functional(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePoolNd):
    """Adaptive average pooling of (N, C, L) (torch.nn.AdaptiveAvgPool1d)."""

    _functional = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePoolNd):
    """Adaptive average pooling of (N, C, H, W) (torch.nn.AdaptiveAvgPool2d)."""

    _functional = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptivePoolNd):
    """Adaptive average pooling of (N, C, D, H, W) (torch.nn.AdaptiveAvgPool3d)."""

    _functional = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(_AdaptivePoolNd):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return self._functional(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling of (N, C, L) (torch.nn.AdaptiveMaxPool1d)."""

    _functional = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling of (N, C, H, W) (torch.nn.AdaptiveMaxPool2d)."""

    _functional = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Adaptive max pooling of (N, C, D, H, W) (torch.nn.AdaptiveMaxPool3d)."""

    _functional = staticmethod(F.adaptive_max_pool3d)


class Unfold(Module):
    """The sliding blocks of (N, C, H, W) as columns (torch.nn.Unfold)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )


class Fold(Module):
    """Blocks summed back into (N, C, *output_size) (torch.nn.Fold)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self):
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class BatchNorm2d(BatchNorm1d):
    """Batch normalisation of (N, C, H, W) per channel (torch.nn.BatchNorm2d):
    BatchNorm1d over the (N, C, H * W) view."""

    def forward(self, x):
        if x.ndim != 4:
            raise ValueError(f"BatchNorm2d: expected a 4-d input (N, C, H, W); got {x.ndim}-d.")
        return super().forward(x.flatten(2)).view(x.shape)


class Upsample(Module):
    """interpolate as a layer (torch.nn.Upsample)."""

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode="nearest",
        align_corners=None,
        recompute_scale_factor=None,
    ):
        super().__init__()
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, int) else scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            self.recompute_scale_factor,
        )

    def extra_repr(self):
        shape = (
            f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}"
        )
        return f"{shape}, mode='{self.mode}'"


class PixelShuffle(Module):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r) (torch.nn.PixelShuffle)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W) (torch.nn.PixelUnshuffle)."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class GroupNorm(Module):
    """Normalisation over groups of channels (torch.nn.GroupNorm): weight 1
    and bias 0 (num_channels) when affine."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        self.num_groups = _int_arg(num_groups, "GroupNorm", "num_groups")
        self.num_channels = _int_arg(num_channels, "GroupNorm", "num_channels")
        if self.num_groups <= 0 or self.num_channels % self.num_groups:
            raise ValueError(
                f"GroupNorm(): num_channels ({self.num_channels}) must be divisible by "
                f"num_groups ({self.num_groups})."
            )
        self.eps = eps
        self.affine = affine
        kw = _factory_kwargs(device, dtype)
        if affine:
            self.weight = Parameter(_stride.ones(self.num_channels, **kw))
            self.bias = Parameter(_stride.zeros(self.num_channels, **kw))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(Module):
    """Each channel of each sample normalised over its spatial dims; weight 1
    and bias 0 (num_features) when affine. Running statistics are not
    supported."""

    _spatial_dims = 0

    def __init__(
        self,
        num_features,
        eps=1e-5,
        momentum=0.1,
        affine=False,
        track_running_stats=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        name = type(self).__name__
        if track_running_stats:
            raise NotImplementedError(f"{name}(): track_running_stats=True is not supported.")
        self.num_features = _int_arg(num_features, name, "num_features")
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

    def forward(self, input):
        unbatched = input.ndim == self._spatial_dims + 1
        x = input.unsqueeze(0) if unbatched else input
        y = F.instance_norm(x, weight=self.weight, bias=self.bias, eps=self.eps)
        return y.squeeze(0) if unbatched else y

    def extra_repr(self):
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"
        )


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) (torch.nn.InstanceNorm1d)."""

    _spatial_dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) (torch.nn.InstanceNorm2d)."""

    _spatial_dims = 2
