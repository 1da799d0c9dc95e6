"""The integer ops (bitwise logic, shifts, gcd, lcm) and their Python
operators against PyTorch: tensors and numbers on either side, the in-place
forms, bool, and shift counts outside [0, width). Skipped, with a message,
when torch is not installed (make venv-torch)."""

import pytest
import stride

torch = pytest.importorskip("torch", reason="torch is not installed (make venv-torch)")

A = [-1000, -7, -1, 0, 1, 3, 1000, 5, -5, 2**40]
B = [-3, -1, 0, 1, 2, 5, 31, 63, 64, 100]
MASK_A = [True, True, False, False]
MASK_B = [True, False, True, False]


def both(values, dtype):
    return stride.tensor(values, dtype=getattr(stride, dtype)), torch.tensor(
        values, dtype=getattr(torch, dtype)
    )


def same(s, t):
    assert str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert s.tolist() == t.tolist()


BINARY = [
    lambda a, b: a & b,
    lambda a, b: a | b,
    lambda a, b: a ^ b,
    lambda a, b: a << b,
    lambda a, b: a >> b,
]


@pytest.mark.parametrize("op", BINARY)
def test_operators_on_int64_tensors_match_torch(op):
    (sa, ta), (sb, tb) = both(A, "int64"), both(B, "int64")
    same(op(sa, sb), op(ta, tb))


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("number", [3, -2])
def test_a_number_on_either_side_matches_torch(op, number):
    sa, ta = both(A[:8], "int32")
    same(op(sa, number), op(ta, number))
    same(op(number, sa), op(number, ta))


@pytest.mark.parametrize("op", BINARY[:3])
def test_bitwise_logic_on_bool_matches_torch(op):
    (sa, ta), (sb, tb) = both(MASK_A, "bool"), both(MASK_B, "bool")
    same(op(sa, sb), op(ta, tb))
    same(op(sa, True), op(ta, True))
    same(op(1, sa), op(1, ta))


def test_invert_matches_torch():
    for values, dtype in [(A, "int64"), (MASK_A, "bool"), ([0, 1, 255], "uint8")]:
        s, t = both(values, dtype)
        same(~s, ~t)
        same(stride.bitwise_not(s), torch.bitwise_not(t))


@pytest.mark.parametrize("op", ["__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"])
def test_in_place_operators_write_self(op):
    (sa, ta), (sb, tb) = both(A, "int64"), both(B, "int64")
    assert getattr(sa, op)(sb) is sa
    getattr(ta, op)(tb)
    same(sa, ta)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_and_lcm_match_torch(name):
    (sa, ta), (sb, tb) = (
        both([0, 0, 12, -12, 7, 35], "int64"),
        both([0, 5, 18, 18, 0, -14], "int64"),
    )
    same(getattr(stride, name)(sa, sb), getattr(torch, name)(ta, tb))
    same(getattr(sa, name)(sb), getattr(ta, name)(tb))


def test_floats_are_refused_naming_the_op():
    with pytest.raises(Exception, match="bitwise_and"):
        stride.tensor([1.0]) & 1
    with pytest.raises(Exception, match="bitwise_not"):
        ~stride.tensor([1.0])
