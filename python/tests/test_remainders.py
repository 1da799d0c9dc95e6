"""fmod, remainder (and %), floor division and frexp against PyTorch:
tensors and numbers on either side, the in-place forms, signed zeros and
infinities, integer division by zero. Skipped, with a message, when torch is
not installed (make venv-torch)."""

import math

import pytest
import stride

torch = pytest.importorskip("torch", reason="torch is not installed (make venv-torch)")

A = [5.0, -5.0, 5.0, -5.0, 0.0, -0.0, 3.0, -3.0, 7.5, math.inf, 1.0, math.nan]
B = [3.0, 3.0, -3.0, -3.0, 2.0, -2.0, 3.0, -3.0, 0.0, 2.0, math.inf, 1.0]
# (PyTorch's trunc division of the most negative int64 by -1 traps.)
INTS_A = [7, -7, 7, -7, 0, 9, -9, 2**31 - 1]
INTS_B = [3, 3, -3, -3, 5, 1, -1, -2]


def both(values, dtype):
    return (
        stride.tensor(values, dtype=getattr(stride, dtype)),
        torch.tensor(values, dtype=getattr(torch, dtype)),
    )


def same(s, t):
    """The same dtype and values, signed zeros and NaN included."""
    assert str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    expected = t.float().tolist() if t.dtype == torch.bfloat16 else t.tolist()
    actual = s.to(stride.float32).tolist() if t.dtype == torch.bfloat16 else s.tolist()
    assert [repr(x) for x in actual] == [repr(x) for x in expected]


FORMS = [
    lambda m, a, b: m.fmod(a, b),
    lambda m, a, b: m.remainder(a, b),
    lambda m, a, b: a % b,
    lambda m, a, b: m.floor_divide(a, b),
    lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_float_tensors_match_torch(form, dtype):
    (sa, ta), (sb, tb) = both(A, dtype), both(B, dtype)
    same(form(stride, sa, sb), form(torch, ta, tb))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_tensors_match_torch(form, dtype):
    (sa, ta), (sb, tb) = both(INTS_A, dtype), both(INTS_B, dtype)
    same(form(stride, sa, sb), form(torch, ta, tb))


def test_numbers_on_either_side_match_torch():
    sa, ta = both([5.5, -5.5, 0.25, -7.0], "bfloat16")
    same(sa % 0.3, ta % 0.3)
    same(1.5 % sa, 1.5 % ta)
    same(stride.remainder(2, sa), torch.remainder(2, ta))
    same(sa.fmod(-0.3), ta.fmod(-0.3))
    si, ti = both([5, -5, 9], "int64")
    same(si % 2.5, ti % 2.5)  # a float number promotes the integers
    same(7 % si, 7 % ti)


def test_in_place_forms_match_torch():
    for name in ["fmod_", "remainder_", "__imod__"]:
        (sa, ta), (sb, tb) = both(A, "float32"), both(B, "float32")
        getattr(sa, name)(sb)
        getattr(ta, name)(tb)
        same(sa, ta)
        getattr(sa, name)(-1.5)
        getattr(ta, name)(-1.5)
        same(sa, ta)


@pytest.mark.parametrize("op", ["fmod", "remainder", "floor_divide"])
def test_integer_division_by_zero_raises_as_torch(op):
    sa, sb = stride.tensor([4, 5]), stride.tensor([1, 0])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(stride, op)(sa, sb)


def test_bool_is_refused_naming_the_op():
    mask = stride.tensor([True, False])
    with pytest.raises(TypeError, match="fmod"):
        stride.fmod(mask, mask)


def test_gradients_match_torch():
    values_a, values_b = [1.5, -2.5, 4.25, -0.75], [0.7, 0.6, -1.25, -0.5]
    for op in ["fmod", "remainder"]:
        sa = stride.tensor(values_a, dtype=stride.float64, requires_grad=True)
        sb = stride.tensor(values_b, dtype=stride.float64, requires_grad=True)
        ta = torch.tensor(values_a, dtype=torch.float64, requires_grad=True)
        tb = torch.tensor(values_b, dtype=torch.float64, requires_grad=True)
        getattr(stride, op)(sa, sb).sum().backward()
        getattr(torch, op)(ta, tb).sum().backward()
        assert sa.grad.tolist() == ta.grad.tolist()
        assert sb.grad.tolist() == tb.grad.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_frexp_matches_torch(dtype):
    values = [0.0, -0.0, 1.0, 0.5, -8.0, 3.75, 1e-30, math.inf, -math.inf, math.nan]
    sx, tx = both(values, dtype)
    mantissa, exponent = stride.frexp(sx)
    expected = torch.frexp(tx)
    same(mantissa, expected.mantissa)
    same(exponent, expected.exponent)
    assert sx.frexp().exponent.tolist() == expected.exponent.tolist()
