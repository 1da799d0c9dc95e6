"""complex64 and complex128 in stride: dtypes and promotion, construction
from Python complex numbers and NumPy, printing, copies between real and
complex, the views of the parts (sharing storage, as PyTorch's), complex
arithmetic and its gradients in PyTorch's convention, torch.fft against
PyTorch (values and gradients), and the errors of ops without complex
support. The PyTorch comparisons skip when torch is not installed."""

import numpy as np
import pytest
import stride

try:
    import torch
except ImportError:  # the comparisons skip; the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (make venv-torch)")


def complex_values(seed=0, shape=(3, 6)):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def test_dtypes_and_aliases():
    assert stride.cfloat is stride.complex64 and stride.cdouble is stride.complex128
    assert stride.complex64.itemsize == 8 and stride.complex128.itemsize == 16
    assert stride.complex64.is_complex and not stride.complex64.is_floating_point
    assert not stride.float32.is_complex


def test_promotion_follows_pytorch():
    f32, f64 = stride.ones(2), stride.ones(2, dtype=stride.float64)
    c64 = stride.ones(2, dtype=stride.complex64)
    assert (f32 + c64).dtype is stride.complex64
    assert (f64 + c64).dtype is stride.complex128
    assert (stride.ones(2, dtype=stride.int64) * c64).dtype is stride.complex64
    assert (f32 * 1j).dtype is stride.complex64
    assert (f64 * 1j).dtype is stride.complex128
    # A complex 0-d tensor beside a float64 one with dims widens its parts.
    assert (f64 + stride.tensor(1j)).dtype is stride.complex128


def test_tensor_of_python_complex_numbers():
    t = stride.tensor([1 + 2j, 3.5, -1j])
    assert t.dtype is stride.complex64
    assert t.tolist() == [1 + 2j, 3.5 + 0j, -1j]
    assert stride.tensor(2 - 1j).item() == 2 - 1j
    assert stride.tensor([1, 2], dtype=stride.complex128).tolist() == [1 + 0j, 2 + 0j]
    with pytest.raises(TypeError, match="complex numbers"):
        stride.tensor([1j], dtype=stride.float32)


def test_numpy_round_trip_shares_nothing_unexpected():
    a = complex_values()
    t = stride.from_numpy(a)
    assert t.dtype is stride.complex128
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(
        np.asarray(stride.tensor(a.astype(np.complex64))), a.astype(np.complex64)
    )


def test_printing_as_pytorch():
    assert repr(stride.tensor([1 + 2j, 3 - 1j])) == "tensor([1.+2.j, 3.-1.j])"
    assert repr(stride.tensor([1.5 + 2j], dtype=stride.complex128)) == (
        "tensor([1.5000+2.j], dtype=stride.complex128)"
    )


def test_copies_between_real_and_complex():
    x = stride.tensor([1.0, -2.0])
    assert x.to(stride.complex64).tolist() == [1 + 0j, -2 + 0j]
    z = stride.tensor([1 + 2j, 3 - 4j])
    # As PyTorch's copy_: the imaginary part is discarded.
    assert z.to(stride.float32).tolist() == [1.0, 3.0]


def test_views_share_storage():
    z = stride.tensor([1 + 2j, 3 - 4j])
    r = stride.view_as_real(z)
    assert r.shape == (2, 2) and r.dtype is stride.float32
    r[0, 1] = 7.0
    assert z.tolist()[0] == 1 + 7j
    z.real[1] = 0.5
    assert z.imag.tolist() == [7.0, -4.0]
    assert z.tolist()[1] == 0.5 - 4j
    c = stride.view_as_complex(stride.zeros(3, 2))
    assert c.dtype is stride.complex64 and c.shape == (3,)


def test_view_as_complex_refuses_bad_layouts():
    with pytest.raises(Exception, match="view_as_complex"):
        stride.view_as_complex(stride.zeros(3, 3))
    with pytest.raises(Exception, match="stride"):
        stride.view_as_complex(stride.zeros(2, 3).t())


def test_unsupported_ops_name_themselves():
    z = stride.tensor([1 + 2j])
    for name in ("sin", "log", "sqrt", "tanh"):
        with pytest.raises(TypeError, match=name):
            getattr(stride, name)(z)
    with pytest.raises(TypeError, match="maximum"):
        stride.maximum(z, z)
    with pytest.raises(TypeError, match="imag"):
        stride.imag(stride.ones(2))
    with pytest.raises(TypeError, match="rfft"):
        stride.fft.rfft(z)


def test_isreal_angle_conj():
    z = stride.tensor([1 + 0j, 1j, -2 + 0j])
    assert stride.isreal(z).tolist() == [True, False, True]
    np.testing.assert_allclose(stride.angle(z).numpy(), np.angle(z.numpy()), rtol=1e-6)
    assert stride.conj(z).tolist() == [1 + 0j, -1j, -2 + 0j]
    np.testing.assert_allclose(stride.angle(stride.tensor([-1.0, 2.0])).numpy(), [np.pi, 0.0])


def pair(a, dtype=None):
    """The same values as a stride and a torch leaf requiring grad."""
    return (
        stride.tensor(np.asarray(a).tolist(), dtype=dtype, requires_grad=True),
        torch.tensor(np.asarray(a), requires_grad=True),
    )


@needs_torch
def test_complex_arithmetic_and_gradient_convention():
    a = complex_values(1)
    b = complex_values(2)
    sa, ta = pair(a, stride.complex128)
    sb, tb = pair(b, stride.complex128)

    def loss(lib, x, y):
        w = (x * y - x / (y + 3.0) + lib.exp(x) + lib.reciprocal(x + 4.0) - x).sum(0)
        return lib.view_as_real(w).square().sum() + lib.abs(x).mean()

    ls, lt = loss(stride, sa, sb), loss(torch, ta, tb)
    np.testing.assert_allclose(ls.item(), lt.item(), rtol=1e-12)
    ls.backward()
    lt.backward()
    np.testing.assert_allclose(sa.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sb.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)


@needs_torch
def test_real_to_complex_ops_have_real_gradients():
    rng = np.random.default_rng(3)
    r, th = rng.random((4,)) + 0.5, rng.standard_normal(4)
    sr, tr = pair(r, stride.float64)
    st, tt = pair(th, stride.float64)
    z_s, z_t = stride.polar(sr, st), torch.polar(tr, tt)
    (stride.view_as_real(z_s * z_s).sum()).backward()
    (torch.view_as_real(z_t * z_t).sum()).backward()
    assert sr.grad.dtype is stride.float64
    np.testing.assert_allclose(sr.grad.numpy(), tr.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(st.grad.numpy(), tt.grad.numpy(), rtol=1e-12)


ONE_DIM = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_INPUT = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


def fft_input(name, seed=0, shape=(4, 6)):
    if name in REAL_INPUT:
        return np.random.default_rng(seed).standard_normal(shape)
    return complex_values(seed, shape)


def compare_transform(name, kwargs, shape=(4, 6)):
    a = fft_input(name, shape=shape)
    dtype = stride.float64 if name in REAL_INPUT else stride.complex128
    sx, tx = pair(a, dtype)
    ys = getattr(stride.fft, name)(sx, **kwargs)
    yt = getattr(torch.fft, name)(tx, **kwargs)
    expected = yt.detach().resolve_conj().numpy()
    np.testing.assert_allclose(ys.detach().numpy(), expected, rtol=1e-10, atol=1e-10)
    # A real loss of the output: its gradient in PyTorch's convention.
    weights = np.random.default_rng(9).standard_normal(tuple(yt.shape))
    ls = (stride.abs(ys) * stride.tensor(weights.tolist(), dtype=stride.float64)).sum()
    lt = (torch.abs(yt) * torch.tensor(weights)).sum()
    ls.backward()
    lt.backward()
    expected_grad = tx.grad.resolve_conj().numpy()
    np.testing.assert_allclose(sx.grad.numpy(), expected_grad, rtol=1e-8, atol=1e-10)


@needs_torch
@pytest.mark.parametrize("name", ONE_DIM)
@pytest.mark.parametrize(
    "kwargs", [{}, {"n": 5}, {"n": 8, "dim": 0, "norm": "ortho"}, {"norm": "forward", "dim": -1}]
)
def test_one_dimensional_transforms_match_pytorch(name, kwargs):
    compare_transform(name, kwargs)


@needs_torch
@pytest.mark.parametrize(
    "name",
    [
        "fft2",
        "ifft2",
        "rfft2",
        "irfft2",
        "hfft2",
        "ihfft2",
        "fftn",
        "ifftn",
        "rfftn",
        "irfftn",
        "hfftn",
        "ihfftn",
    ],
)
@pytest.mark.parametrize("kwargs", [{}, {"s": (3, 7)}, {"dim": (0,), "norm": "ortho"}])
def test_multidimensional_transforms_match_pytorch(name, kwargs):
    if name.endswith("2") and "dim" in kwargs:
        kwargs = {"dim": (1, 0), "norm": "ortho"}
    compare_transform(name, kwargs, shape=(2, 4, 6))


@needs_torch
def test_frequencies_and_shifts():
    for n, d in [(7, 1.0), (6, 0.5), (1, 2.0)]:
        np.testing.assert_allclose(
            stride.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy()
        )
        np.testing.assert_allclose(
            stride.fft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy()
        )
    x = np.arange(30.0).reshape(5, 6)
    for fn in ("fftshift", "ifftshift"):
        for dim in (None, 0, (1,)):
            np.testing.assert_array_equal(
                getattr(stride.fft, fn)(stride.tensor(x.tolist()), dim=dim).numpy(),
                getattr(torch.fft, fn)(torch.tensor(x, dtype=torch.float32), dim=dim).numpy(),
            )


def test_fft_errors():
    with pytest.raises(ValueError, match="norm"):
        stride.fft.fft(stride.ones(4), norm="sideways")
    with pytest.raises(ValueError, match="data points"):
        stride.fft.fft(stride.ones(4), n=0)
    with pytest.raises(TypeError, match="bfloat16"):
        stride.fft.fft(stride.ones(4, dtype=stride.bfloat16))


def test_llama_rotary_idiom():
    """Meta's Llama reference code: polar frequencies, view_as_complex of
    the pairs, a complex product, view_as_real and flatten."""
    dim, seq = 8, 5
    freqs = 1.0 / (10000.0 ** (stride.arange(0, dim, 2)[: dim // 2].float() / dim))
    t = stride.arange(seq).float()
    angles = stride.outer(t, freqs)
    cis = stride.polar(stride.ones_like(angles), angles)
    x = stride.randn(2, seq, 3, dim)
    xc = stride.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    out = stride.view_as_real(xc * cis.view(1, seq, 1, dim // 2)).flatten(3)
    assert out.shape == x.shape and out.dtype is stride.float32
    # Rotations keep each pair's length.
    np.testing.assert_allclose(
        stride.abs(stride.view_as_complex(out.reshape(2, seq, 3, -1, 2).contiguous())).numpy(),
        stride.abs(xc).numpy(),
        rtol=1e-5,
    )


def test_backward_of_a_complex_output_needs_a_real_loss():
    z = stride.ones(3, dtype=stride.complex64, requires_grad=True)
    with pytest.raises(TypeError, match="real scalar"):
        (z * z).sum().backward()
    stride.abs((z * z).sum()).backward()
    assert z.grad.dtype is stride.complex64


@needs_torch
def test_torch_format_round_trips_complex(tmp_path):
    z = stride.tensor([[1 + 2j, 3j], [0.5, -1 - 1j]], dtype=stride.complex128)
    stride.save({"z": z, "w": z.to(stride.complex64).t()}, tmp_path / "s.pt")
    loaded = torch.load(tmp_path / "s.pt")
    np.testing.assert_array_equal(loaded["z"].numpy(), z.numpy())
    np.testing.assert_array_equal(loaded["w"].numpy(), z.to(stride.complex64).t().numpy())
    torch.save({"y": torch.tensor([[1 + 2j, 3j]]).t()}, tmp_path / "t.pt")
    y = stride.load(tmp_path / "t.pt")["y"]
    assert y.dtype is stride.complex64 and y.tolist() == [[1 + 2j], [3j]]


def test_safetensors_holds_complex64_and_names_complex128(tmp_path):
    z = stride.tensor([1 + 2j, -3j])
    stride.save({"z": z}, tmp_path / "z.safetensors")
    assert stride.load(tmp_path / "z.safetensors")["z"].tolist() == z.tolist()
    with pytest.raises(TypeError, match="complex128"):
        stride.save({"z": z.to(stride.complex128)}, tmp_path / "w.safetensors")
