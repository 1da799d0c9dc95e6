"""stride.nn's image layers (Conv2d, MaxPool2d, Upsample, GroupNorm, ...)
beside torch.nn's: the same state_dict names and shapes, PyTorch's default
initialisation bounds, and, with torch's weights loaded, the same outputs and
gradients."""

import math

import numpy as np
import pytest
import stride
import stride.nn.functional as F
from stride import nn

torch = pytest.importorskip("torch")


def to_stride(t):
    return stride.tensor(t.detach().numpy().copy())


def to_numpy(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "numpy") else t)


# (name, constructor arguments, input shape); the class is nn.<name> on both sides.
LAYERS = [
    ("Conv1d", (4, 6, 3), {"stride": 2, "padding": 1, "groups": 2}, (2, 4, 9)),
    ("Conv2d", (3, 4, (2, 3)), {"padding": "same", "dilation": (1, 2)}, (2, 3, 6, 7)),
    ("Conv2d", (4, 6, 3), {"stride": 2, "groups": 2, "bias": False}, (4, 7, 8)),
    ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "output_padding": 1, "groups": 2}, (2, 4, 5)),
    ("ConvTranspose2d", (3, 2, (3, 2)), {"stride": (2, 1), "padding": 1}, (2, 3, 4, 5)),
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, (2, 3, 8)),
    ("MaxPool2d", (2,), {}, (2, 3, 6, 7)),
    ("MaxPool2d", ((2, 3),), {"padding": 1, "ceil_mode": True, "dilation": (2, 1)}, (3, 7, 6)),
    ("AvgPool1d", (3,), {"stride": 2, "count_include_pad": False}, (2, 3, 8)),
    ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 6, 7)),
    ("AvgPool2d", (2,), {"divisor_override": 3}, (2, 3, 6, 7)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 8)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 7, 5)),
    ("AdaptiveMaxPool1d", (3,), {}, (2, 3, 8)),
    ("AdaptiveMaxPool2d", ((4, 3),), {}, (2, 3, 7, 5)),
    (
        "Conv3d",
        (4, 6, (2, 3, 2)),
        {"stride": (1, 2, 1), "padding": 1, "groups": 2},
        (2, 4, 4, 6, 5),
    ),
    ("Conv3d", (3, 2, 3), {"padding": "same", "dilation": (1, 2, 1), "bias": False}, (3, 4, 6, 5)),
    (
        "ConvTranspose3d",
        (4, 2, (3, 2, 2)),
        {"stride": 2, "output_padding": (1, 0, 1)},
        (2, 4, 3, 4, 3),
    ),
    ("MaxPool3d", ((2, 3, 2),), {"padding": 1, "ceil_mode": True}, (2, 3, 5, 6, 5)),
    ("AvgPool3d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, (2, 3, 5, 6, 7)),
    ("AdaptiveAvgPool3d", ((3, None, 2),), {}, (2, 3, 7, 5, 6)),
    ("AdaptiveMaxPool3d", ((2, 4, 3),), {}, (2, 3, 7, 5, 6)),
    ("Upsample", (), {"scale_factor": 2, "mode": "nearest"}, (2, 3, 4, 5)),
    ("Upsample", ((5, 9),), {"mode": "bilinear", "align_corners": True}, (2, 3, 4, 5)),
    ("Upsample", (), {"scale_factor": 1.5, "mode": "bicubic"}, (1, 2, 4, 5)),
    ("PixelShuffle", (2,), {}, (2, 8, 3, 4)),
    ("PixelUnshuffle", (2,), {}, (2, 2, 4, 6)),
    ("GroupNorm", (3, 6), {}, (2, 6, 4, 5)),
    ("InstanceNorm2d", (3,), {"affine": True}, (2, 3, 4, 5)),
    ("BatchNorm2d", (3,), {}, (4, 3, 2, 5)),
    ("Unfold", ((2, 3),), {"padding": 1, "stride": 2}, (2, 3, 5, 6)),
    ("Fold", ((4, 5), 2), {"padding": 1, "stride": 2}, (2, 12, 9)),
]


@pytest.mark.parametrize(
    "name, args, kwargs, shape", LAYERS, ids=[f"{n}-{i}" for i, (n, *_) in enumerate(LAYERS)]
)
def test_layer_matches_torch_with_its_weights(name, args, kwargs, shape):
    torch.manual_seed(0)
    reference = getattr(torch.nn, name)(*args, **kwargs).double()
    layer = getattr(nn, name)(*args, **kwargs).double()
    expected_state = reference.state_dict()
    assert list(layer.state_dict()) == list(expected_state)
    for key, value in layer.state_dict().items():
        assert tuple(value.shape) == tuple(expected_state[key].shape), key
    layer.load_state_dict({k: to_stride(v) for k, v in expected_state.items()})
    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    xs = to_stride(x).requires_grad_()
    y, ys = reference(x), layer(xs)
    np.testing.assert_allclose(to_numpy(ys), to_numpy(y), rtol=1e-10, atol=1e-12)
    g = torch.randn(*y.shape, dtype=torch.float64)
    y.backward(g)
    ys.backward(to_stride(g))
    np.testing.assert_allclose(to_numpy(xs.grad), to_numpy(x.grad), rtol=1e-10, atol=1e-12)
    for (key, p), (_, ps) in zip(reference.named_parameters(), layer.named_parameters()):
        np.testing.assert_allclose(to_numpy(ps.grad), to_numpy(p.grad), rtol=1e-10, err_msg=key)


def test_return_indices_are_torch_s():
    x = torch.randn(2, 3, 7, 6)
    for fn, args in [
        ("max_pool2d", (3, 2, 1)),
        ("max_pool1d", (3, 2, 1)),
        ("adaptive_max_pool2d", ((4, 3),)),
        ("adaptive_max_pool1d", (4,)),
        ("max_pool3d", ((2, 3, 2), 2, 1)),
        ("adaptive_max_pool3d", ((2, 4, 3),)),
    ]:
        xt = {"1d": x.flatten(2), "2d": x, "3d": x.unsqueeze(0)}[fn[-2:]]
        values, indices = getattr(torch.nn.functional, fn)(xt, *args, return_indices=True)
        got_values, got_indices = getattr(F, fn)(to_stride(xt), *args, return_indices=True)
        np.testing.assert_array_equal(to_numpy(got_values), values.numpy(), err_msg=fn)
        np.testing.assert_array_equal(to_numpy(got_indices), indices.numpy(), err_msg=fn)


def test_conv_layers_initialise_within_pytorch_s_bounds():
    stride.manual_seed(1)
    conv = nn.Conv2d(4, 6, 3)
    bound = 1 / math.sqrt(4 * 3 * 3)  # kaiming_uniform with a=sqrt(5)
    assert conv.weight.abs().max().item() <= bound
    assert conv.weight.abs().max().item() > 0.8 * bound
    assert conv.bias.abs().max().item() <= bound
    transposed = nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert tuple(transposed.weight.shape) == (4, 3, 3, 3)
    fan_in = 3 * 3 * 3  # PyTorch's fan_in of the transposed weight: its dim 1 times the kernel
    assert transposed.bias.abs().max().item() <= 1 / math.sqrt(fan_in)
    volume = nn.Conv3d(2, 4, (3, 2, 2))
    bound = 1 / math.sqrt(2 * 3 * 2 * 2)
    assert tuple(volume.weight.shape) == (4, 2, 3, 2, 2)
    assert bound * 0.8 < volume.weight.abs().max().item() <= bound
    assert volume.bias.abs().max().item() <= bound


def test_unsupported_arguments_name_the_op_and_argument():
    with pytest.raises(NotImplementedError, match="padding_mode"):
        nn.Conv2d(3, 4, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(TypeError, match="antialias"):
        F.interpolate(stride.zeros(1, 1, 4, 4), scale_factor=0.5, mode="bilinear", antialias=True)
    with pytest.raises(ValueError, match="strided"):
        F.conv2d(stride.zeros(1, 1, 5, 5), stride.zeros(1, 1, 2, 2), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="conv2d"):
        F.conv2d(stride.zeros(1, 2, 5, 5), stride.zeros(1, 3, 2, 2))
