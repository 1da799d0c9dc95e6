"""Bad input from Python: wrong types, shapes, dtypes, devices and values
raise a Python exception of the right class with a message, and nothing
crashes the interpreter. The constructors are fuzzed with Hypothesis against
NumPy (the indexing is fuzzed in test_indexing.py)."""

import contextlib
import inspect
import math
import re

import numpy as np
import pytest
import stride
from hypothesis import HealthCheck, assume, given, settings
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
    ok = all(isinstance(x, (bool, int, float, complex)) for x in a.flat)
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
    # A range of millions to trillions of elements is valid and would be
    # built, with NumPy's float64 copy beside it: more memory than a test may
    # take. Fewer elements are compared; more must be refused.
    count = (end - start) / step if step else 0
    assume(not (math.isfinite(count) and 1e6 < abs(count) < 1e13))
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


# ---- Every public entry point, given types it cannot take ----------------
#
# Each public function and class of the package, and each method of
# stride.Tensor, found by enumeration (so that a new one is covered without
# an edit here), is first called with arguments that work, found by trying
# candidates. Then its first argument is swapped for NumPy and other
# stand-ins: the call must work or raise TypeError, ValueError or
# NotImplementedError (never RuntimeError, SystemError or a crash), and a
# TypeError must name the function or the argument.

WALKED_MODULES = (
    stride,
    stride.autograd,
    stride.cuda,
    stride.doctor,
    stride.masked,
    stride.nn,
    stride.nn.functional,
    stride.nn.init,
    stride.nn.utils,
    stride.optim,
    stride.utils.data,
)

# Entry points the walk leaves out, and why.
SKIPPED = {
    "stride.set_num_threads": "resizes the thread pool every later test runs on",
    "stride.save": "writes a file named by its second argument",
    "stride.load": "reads a file: a string is a path, and a missing file an OSError",
}


def _x():
    return stride.ones(2, 2)


def _index():
    return stride.zeros(2, 2, dtype=stride.int64)


def _mask():
    return stride.ones(2, 2, dtype=stride.bool)


def _rows():
    return stride.zeros(2, dtype=stride.int64)


def _batch():
    return stride.ones(2, 2, 2)


def _scalar_with_graph():
    return stride.ones(2, requires_grad=True).sum()


# Candidates for the first argument (for a method: for self), then for the
# others, as factories: an in-place call must not change the next one's
# inputs.
FIRST_CANDIDATES = (
    _x,
    _scalar_with_graph,
    _mask,
    _index,
    _batch,
    lambda: [_x(), _x()],
    lambda: [stride.ones(2, requires_grad=True)],
    lambda: (2, 2),
    lambda: 2,
    lambda: 1.5,
)
SELF_CANDIDATES = (_x, _scalar_with_graph, _mask, _batch)
REST_CANDIDATES = (
    (),
    (_x,),
    (_mask,),
    (_batch,),
    (_rows,),
    (lambda: 0,),
    (lambda: 1,),
    (lambda: 0.5,),
    (lambda: (1, 0),),
    (lambda: (2,),),
    (lambda: (4,),),
    (lambda: (_rows(),),),
    (_x, _x),
    (lambda: 0, lambda: 1),
    (lambda: 0, _rows),
    (lambda: 0, _index),
    (_mask, lambda: 0.0),
    (lambda: (_rows(),), _x),
    (lambda: (2, 2), lambda: (2, 1)),
    (lambda: 3, lambda: (2, 2)),
    (lambda: 0, lambda: 0, lambda: 1),
    (lambda: 0, _index, _x),
    (_x, lambda: 0.5),
    (lambda: 2, lambda: 2),
)


def _numpy_lists(values):
    """values (a NumPy array of one dim or more) as nested lists of NumPy scalars."""
    return [_numpy_lists(v) if v.ndim else v[()] for v in values]


def _stand_ins(good):
    """Types the argument `good` stands in for cannot be, with the same
    values where they have them: a NumPy array, a NumPy scalar, nested lists
    of NumPy scalars, None and a string. No NumPy scalar has a sequence's
    value: 1.5 stands in for one, which is no valid int either."""
    if isinstance(good, stride.Tensor):
        values = good.detach().float().numpy()
    elif isinstance(good, (list, tuple)) and all(isinstance(v, stride.Tensor) for v in good):
        values = np.stack([v.detach().float().numpy() for v in good])
    else:
        values = np.asarray(good)
    if isinstance(good, (bool, int, float)) or (isinstance(good, stride.Tensor) and values.size):
        scalar = values.reshape(-1)[0]
    else:
        scalar = np.float32(1.5)
    return {
        "numpy array": values,
        "numpy scalar": scalar,
        "nested list of numpy scalars": _numpy_lists(values) if values.ndim else [scalar],
        "None": None,
        "str": "text",
    }


def _entry_points():
    """(qualified name, callable) of every public function and class of the
    walked modules, and (qualified name, method name) of every method of
    stride.Tensor."""
    seen, found = set(), []
    for module in WALKED_MODULES:
        for name in dir(module):
            obj = getattr(module, name)
            if name.startswith("_") or not callable(obj) or inspect.ismodule(obj):
                continue
            owner = getattr(obj, "__module__", "") or ""
            if not owner.startswith("stride") or id(obj) in seen:
                continue
            seen.add(id(obj))
            found.append((f"{module.__name__}.{name}", obj))
    for name in dir(stride.Tensor):
        method = getattr(stride.Tensor, name)
        if type(method).__name__ == "nb_method" and name not in ("__init__", "__new__"):
            found.append((f"stride.Tensor.{name}", name))
    return found


class _Call:
    """A call of a function or a method whose arguments come from factories;
    `with_first(value)` makes it with the first argument after self replaced
    (or given, if there was none)."""

    def __init__(self, fn, self_factory, factories):
        self.fn, self.self_factory, self.factories = fn, self_factory, factories

    def good_args(self):
        return [f() for f in self.factories]

    def __call__(self, args):
        if self.self_factory is None:
            return self.fn(*args)
        return getattr(self.self_factory(), self.fn)(*args)

    def with_first(self, value):
        return self([value, *self.good_args()[1:]])


def _working_call(fn):
    """A _Call of fn with arguments that work, else one with a plain tensor
    (for a method: as self) and no other argument."""
    if isinstance(fn, str):
        candidates = [(s, rest) for s in SELF_CANDIDATES for rest in REST_CANDIDATES]
    else:
        candidates = [(None, (f, *rest)) for f in FIRST_CANDIDATES for rest in REST_CANDIDATES]
    for self_factory, factories in candidates:
        call = _Call(fn, self_factory, factories)
        try:
            call(call.good_args())
        except Exception:  # a candidate that does not fit
            continue
        return call
    return _Call(fn, _x if isinstance(fn, str) else None, () if isinstance(fn, str) else (_x,))


# The ops that the bitwise operators run, which their errors name.
OPERATOR_OPS = {
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift",
}


def _op_names(name):
    """The op an operator (`__rand__`, `__ixor__`) or an in-place method
    (`gcd_`) runs, named in its errors."""
    if name.startswith("__") and name.endswith("__"):
        core = name[2:-2]
        cores = (core, core[1:]) if core[:1] in ("i", "r") else (core,)
        return {OPERATOR_OPS[c] for c in cores if c in OPERATOR_OPS}
    return {name[:-1]} if name.endswith("_") else set()


def _names_of(fn, qualified):
    """Words a TypeError of fn may name it by: its name (and its op's) and
    its parameters'."""
    name = qualified.rsplit(".", 1)[1]
    words = {name} | _op_names(name)
    target = getattr(stride.Tensor, fn) if isinstance(fn, str) else fn
    signatures = getattr(target, "__nb_signature__", None)
    if signatures:
        for signature, *_ in signatures:
            parameters = signature.split("(", 1)[1].rsplit(")", 1)[0]
            words.update(re.findall(r"(?:^|,)\s*\**(\w+)", parameters))
    else:
        with contextlib.suppress(TypeError, ValueError):
            words.update(inspect.signature(target).parameters)
    return words - {"self"}


def test_the_skipped_entry_points_exist():
    assert set(SKIPPED) <= {name for name, _ in _entry_points()}


# IndexError is what x[...] raises for an index of the wrong type (as torch).
INDEX_METHODS = ("stride.Tensor.__getitem__", "stride.Tensor.__setitem__")


@pytest.mark.parametrize(
    "qualified, fn", [pytest.param(*entry, id=entry[0]) for entry in _entry_points()]
)
def test_every_entry_point_takes_or_refuses_numpy_none_and_strings(qualified, fn):
    if qualified in SKIPPED:
        pytest.skip(SKIPPED[qualified])
    call = _working_call(fn)
    good = call.good_args()
    allowed = (TypeError, ValueError, NotImplementedError)
    if qualified in INDEX_METHODS:
        allowed += (IndexError,)
    names = _names_of(fn, qualified)
    for what, bad in _stand_ins(good[0] if good else _x()).items():
        try:
            call.with_first(bad)
        except allowed as e:
            if isinstance(e, TypeError):
                message = str(e)
                assert any(re.search(rf"\b{re.escape(n)}\b", message) for n in names), (
                    f"{qualified} with a {what}: the TypeError names neither the function nor an "
                    f"argument ({sorted(names)}): {message}"
                )
        except Exception as e:  # the failure this test reports
            pytest.fail(f"{qualified} with a {what}: {type(e).__name__}: {e}")
