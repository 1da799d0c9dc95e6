"""stride.finfo and stride.iinfo: each dtype's limits from first principles
(powers of two, the formats' widths), and torch's fields and printed form
where torch is installed."""

import sys

import pytest
import stride

FLOATS = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128"]
INTEGERS = ["uint8", "int32", "int64"]


def test_float_limits_follow_from_the_formats():
    # mantissa bits m, exponent bias: eps = 2^-m, max = (2 - 2^-m) 2^bias,
    # smallest normal = 2^(1 - bias).
    for dtype, mantissa, bias in [
        (stride.float32, 23, 127),
        (stride.float16, 10, 15),
        (stride.bfloat16, 7, 127),
    ]:
        info = stride.finfo(dtype)
        assert info.eps == 2.0**-mantissa
        assert info.max == (2 - 2.0**-mantissa) * 2.0**bias == -info.min
        assert info.tiny == info.smallest_normal == 2.0 ** (1 - bias)
    assert stride.finfo(stride.float64).max == sys.float_info.max
    assert stride.finfo(stride.float64).eps == sys.float_info.epsilon
    assert stride.finfo(stride.complex64).dtype == "float32" == stride.finfo().dtype
    # The lowest value fills masked scores: finite, and exactly representable.
    for name in ("float32", "float16", "bfloat16"):
        dtype = getattr(stride, name)
        lowest = stride.finfo(dtype).min
        assert stride.full((1,), lowest, dtype=dtype).item() == lowest


def test_integer_limits_and_wrong_kinds():
    assert (stride.iinfo(stride.int64).min, stride.iinfo(stride.int64).max) == (-(2**63), 2**63 - 1)
    assert (stride.iinfo(stride.uint8).min, stride.iinfo(stride.uint8).max) == (0, 255)
    assert stride.iinfo(stride.int32).bits == 32
    with pytest.raises(TypeError, match="stride.iinfo"):
        stride.finfo(stride.int32)
    with pytest.raises(TypeError, match="stride.finfo"):
        stride.iinfo(stride.float32)
    with pytest.raises(TypeError, match="stride.dtype"):
        stride.finfo("float32")


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_is_torch_s(name):
    torch = pytest.importorskip("torch")
    ours, theirs = stride.finfo(getattr(stride, name)), torch.finfo(getattr(torch, name))
    assert repr(ours) == repr(theirs)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert ours.dtype == str(theirs.dtype)


@pytest.mark.parametrize("name", INTEGERS)
def test_iinfo_is_torch_s(name):
    torch = pytest.importorskip("torch")
    ours, theirs = stride.iinfo(getattr(stride, name)), torch.iinfo(getattr(torch, name))
    assert repr(ours) == repr(theirs)
    assert (ours.bits, ours.min, ours.max, ours.dtype) == (
        theirs.bits,
        theirs.min,
        theirs.max,
        str(theirs.dtype),
    )
