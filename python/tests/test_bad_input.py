"""Bad input from Python: wrong types, shapes, dtypes, devices and values
raise a Python exception of the right class with a message, and nothing
crashes the interpreter. The constructors are fuzzed with Hypothesis against
NumPy (the indexing is fuzzed in test_indexing.py)."""

import numpy as np
import pytest
import stride
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# What any call may raise on bad input; anything else (or a crash) fails.
EXPECTED = (TypeError, ValueError, IndexError, RuntimeError, OverflowError, MemoryError)

scalars = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.complex_numbers(max_magnitude=10),
)
nested = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4), max_leaves=24)
dtypes = st.sampled_from(
    [
        None,
        stride.float32,
        stride.float64,
        stride.int64,
        stride.int32,
        stride.bool,
        stride.uint8,
        stride.float16,
        stride.bfloat16,
        "float32",
        3,
    ]
)


def numpy_shape(data):
    """The shape NumPy gives a regular nested list of numbers, or None."""
    try:
        a = np.array(data, dtype=object)
    except ValueError:
        return None
    if a.dtype != object or any(isinstance(x, list) for x in a.flat):
        return a.shape if a.dtype != object else None
    ok = all(isinstance(x, (bool, int, float)) and not isinstance(x, complex) for x in a.flat)
    return a.shape if ok else None


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=nested, dtype=dtypes)
def test_tensor_from_any_nested_data_builds_or_raises(data, dtype):
    try:
        t = stride.tensor(data, dtype=dtype)
    except EXPECTED:
        return
    shape = numpy_shape(data)
    assert shape is not None, f"stride.tensor accepted {data!r}"
    assert t.shape == shape
    if dtype is None and t.dtype == stride.float32:
        with np.errstate(over="ignore"):  # values beyond float32 become inf, as in stride
            expected = np.array(data, dtype=np.float64).astype(np.float32)
        assert np.array_equal(t.numpy(), expected, equal_nan=True)


sizes = st.one_of(
    st.integers(-3, 5), st.floats(-2, 3), st.none(), st.text(max_size=2), st.integers(2**40, 2**64)
)


@settings(max_examples=1500, deadline=None)
@given(
    args=st.lists(sizes, max_size=4),
    factory=st.sampled_from(["zeros", "ones", "empty", "rand", "randn"]),
    dtype=dtypes,
    device=st.sampled_from([None, "cpu", "meta", "cuda:0", "gpu", 7]),
)
def test_shaped_factories_build_or_raise(args, factory, dtype, device):
    try:
        t = getattr(stride, factory)(*args, dtype=dtype, device=device)
    except EXPECTED:
        return
    assert all(isinstance(a, int) and a >= 0 for a in args)
    assert t.shape == tuple(args)


@settings(max_examples=1000, deadline=None)
@given(
    start=st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.just(float("nan"))),
    end=st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.just(float("inf"))),
    step=st.one_of(st.integers(-3, 3), st.floats(-2, 2)),
)
def test_arange_matches_numpy_or_raises(start, end, step):
    try:
        t = stride.arange(start, end, step)
    except EXPECTED:
        return
    expected = np.arange(start, end, step)
    assert t.shape == expected.shape
    assert np.allclose(t.numpy().astype(np.float64), expected, atol=1e-5)


@settings(max_examples=500, deadline=None)
@given(
    low=st.integers(-(2**65), 10),
    high=st.integers(-5, 2**65),
    size=st.lists(st.integers(-2, 4), max_size=3),
)
def test_randint_draws_in_range_or_raises(low, high, size):
    try:
        t = stride.randint(low, high, tuple(size))
    except EXPECTED:
        return
    if t.numel():
        assert low <= t.min().item() and t.max().item() < high


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: stride.ones(2, 3) @ stride.ones(2, 3), RuntimeError),
        (lambda: stride.ones(2) + stride.ones(3), RuntimeError),
        (lambda: stride.ones(2).view(3), RuntimeError),
        (lambda: stride.ones(2, dtype=stride.int64).exp_(), TypeError),
        (lambda: stride.ones(2)[5], IndexError),
        (lambda: stride.ones(2)["a"], IndexError),
        (lambda: stride.ones(2, 2).sum(dim=4), IndexError),
        (lambda: stride.ones(2).item(), ValueError),
        (lambda: stride.ones(2, device="meta").tolist(), RuntimeError),
        (lambda: stride.ones(2) + stride.ones(2, device="meta"), RuntimeError),
        (lambda: stride.zeros("a"), TypeError),
        (lambda: stride.tensor([[1, 2], [3]]), ValueError),
        (lambda: stride.nn.Linear(3, 2)(stride.ones(2, 4)), RuntimeError),
        (lambda: stride.nn.functional.cross_entropy(stride.ones(2, 3), stride.ones(2)), TypeError),
    ],
)
def test_bad_calls_raise_the_right_class_with_a_message(call, error):
    with pytest.raises(error) as info:
        call()
    assert str(info.value)
