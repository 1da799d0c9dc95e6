"""The values side of opinfo.py's walk: OpInfo samples copied from torch to
stride (tensors with their strides and storage offsets, modules, options,
dtypes), outputs brought back as plain data, and the comparison of
stride's outputs with torch's at PyTorch's own tolerances (its per-op
overrides included), with the reason a difference gets in the report.
Imported by opinfo.py once torch is there."""

import dataclasses
import math
import re

import numpy as np
import stride
import torch

# Where an output of these dtypes differs from torch's by more than the
# tolerance, it passes if it is as close as torch's to torch's float64 result.
LOW_PRECISION = ("float32", "bfloat16")

# The test classes of PyTorch whose per-op tolerance overrides apply to a
# comparison of values or gradients with a reference (not the compilers',
# TorchScript's or other devices' ones).
REFERENCE_TEST_CLASSES = {
    "TestCommon",
    "TestUnaryUfuncs",
    "TestBinaryUfuncs",
    "TestBinaryUfuncsDevice",
    "TestReductions",
    "TestFFT",
    "TestGradients",
    "TestBwdGradients",
    "TestOperators",
}

# A sample whose tensors hold more elements than this is skipped: none of
# op_db's CPU samples does today; the bound keeps a future one from slowing
# the walk.
MAX_SAMPLE_ELEMENTS = 1 << 22


# --- Copying samples --------------------------------------------------------


class Unsupported(Exception):
    """A sample stride cannot be given (a dtype it lacks)."""


class Skipped(Exception):
    """A sample outside the walk: complex, sparse or huge, or one torch
    itself fails on."""


def dtype_name(dtype):
    """float32 for torch.float32 and stride.float32."""
    return str(dtype).split(".")[-1]


def stride_dtype(dtype):
    found = getattr(stride, dtype_name(dtype), None)
    if not isinstance(found, stride.dtype):
        raise Unsupported(f"stride has no dtype {dtype_name(dtype)}.")
    return found


def storage_elements(tensor):
    return tensor.untyped_storage().nbytes() // tensor.element_size()


def is_compact(tensor):
    """Whether a tensor is the whole of its storage, in order."""
    whole = tensor.storage_offset() == 0 and tensor.numel() == storage_elements(tensor)
    return whole and tensor.is_contiguous()


def copy_tensor(tensor, make_storage, take_view):
    """A copy of a torch tensor: make_storage(detached storage) copies the
    storage (and sets requires_grad as the tensor's); a view takes the same
    view of it with take_view, so that strides, offsets and overlaps (which
    as_strided and in-place ops see) are torch's."""
    if tensor.layout != torch.strided:
        raise Skipped("sparse")
    if is_compact(tensor):
        return make_storage(tensor.detach())
    storage = tensor.detach().as_strided((storage_elements(tensor),), (1,), 0)
    view = (tuple(tensor.shape), tensor.stride(), tensor.storage_offset())
    return take_view(make_storage(storage), *view)


def tensor_to_stride(tensor, requires_grad=False):
    """A stride copy of a torch tensor, through NumPy (bfloat16 through
    float32, which holds it exactly)."""
    target = stride_dtype(tensor.dtype)

    def make_storage(storage):
        if storage.dtype == torch.bfloat16:
            storage = storage.float()
        result = stride.from_numpy(np.array(storage.numpy()))
        if target is stride.bfloat16:
            result = result.to(stride.bfloat16)
        return result.requires_grad_(True) if requires_grad else result

    return copy_tensor(tensor, make_storage, stride.as_strided)


def promoted_tensor(tensor):
    """A torch copy with float32 and bfloat16 promoted to float64."""
    low = dtype_name(tensor.dtype) in LOW_PRECISION

    def make_storage(storage):
        result = storage.double() if low else storage.clone()
        return result.requires_grad_(tensor.requires_grad)

    return copy_tensor(tensor, make_storage, torch.Tensor.as_strided)


def stride_module(module):
    """stride's module of the same class and settings as a torch module a
    sample hands over as a callable (triplet_margin_with_distance_loss's
    distance_function), or None where stride has none."""
    settings = {
        "PairwiseDistance": lambda m: dict(p=m.norm, eps=m.eps, keepdim=m.keepdim),
        "CosineSimilarity": lambda m: dict(dim=m.dim, eps=m.eps),
    }
    name = type(module).__name__
    if name not in settings or not hasattr(stride.nn, name):
        return None
    return getattr(stride.nn, name)(**settings[name](module))


def stride_options(options):
    """stride's LinearCrossEntropyOptions with the fields of torch's."""
    fields = {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}
    return stride.nn.LinearCrossEntropyOptions(**{k: stride_value(v) for k, v in fields.items()})


def stride_value(value):
    """stride's counterpart of a non-tensor argument: a torch module is
    stride's module of its class and settings where stride has one (else it
    is passed on as it is, and the op gets torch's module)."""
    if isinstance(value, torch.nn.Module):
        return stride_module(value) or value
    if type(value).__name__ == "LinearCrossEntropyOptions":
        return stride_options(value)
    if isinstance(value, torch.dtype):
        return stride_dtype(value)
    if isinstance(value, torch.device):
        return stride.device(str(value))
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, torch.memory_format):  # torch.contiguous_format -> stride's
        return getattr(stride, str(value).removeprefix("torch."))
    return value


class SampleCopy:
    """A sample's input, args and kwargs with each tensor replaced by
    copy(tensor) and each other value by convert(value); of(tensor) is the
    copy of a tensor of the sample (one that occurs twice is copied once)."""

    def __init__(self, sample, copy, convert=lambda value: value):
        self._copy, self._convert, self._copies = copy, convert, {}
        self.input, self.args, self.kwargs = self._replace(
            [sample.input, sample.args, sample.kwargs]
        )

    def _replace(self, value):
        if isinstance(value, torch.Tensor):
            if id(value) not in self._copies:
                self._copies[id(value)] = self._copy(value)
            return self._copies[id(value)]
        if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
            return type(value)(self._replace(item) for item in value)
        if isinstance(value, dict):
            return {key: self._replace(item) for key, item in value.items()}
        return self._convert(value)

    def of(self, tensor):
        return self._copies[id(tensor)]


def stride_sample(sample):
    return SampleCopy(sample, lambda t: tensor_to_stride(t, t.requires_grad), stride_value)


def tensors_in(value):
    """The torch tensors of a nested structure, in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in tensors_in(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in tensors_in(item)]
    return []


def sample_tensors(sample):
    return tensors_in([sample.input, sample.args, sample.kwargs])


def skip_reason(sample):
    """Why a sample is left out, or None."""
    tensors = sample_tensors(sample)
    values = [sample.input, *sample.args, *sample.kwargs.values()]
    complex_dtype = any(isinstance(v, torch.dtype) and v.is_complex for v in values)
    if complex_dtype or any(t.is_complex() for t in tensors):
        return "complex"
    if any(t.layout != torch.strided for t in tensors):
        return "sparse"
    if sum(t.numel() for t in tensors) > MAX_SAMPLE_ELEMENTS:
        return "huge"
    return None


def stride_to_torch(tensor):
    detached = tensor.detach()
    if detached.dtype is stride.bfloat16:
        return torch.from_numpy(np.array(detached.float().numpy())).to(torch.bfloat16)
    return torch.from_numpy(np.array(detached.numpy()))


def comparable(value):
    """An output as plain data: torch tensors, lists, numbers, dtype names.
    Copies: an in-place op's next call must not change this one's output."""
    if isinstance(value, stride.Tensor):
        return stride_to_torch(value)
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (stride.dtype, torch.dtype)):
        return dtype_name(value)
    if isinstance(value, (list, tuple)):
        return [comparable(item) for item in value]
    return value


def flat_outputs(value):
    """The leaves of an output (a tensor or a nested tuple), in order."""
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in flat_outputs(item)]
    return [value]


# --- Comparing -------------------------------------------------------------


def default_tolerance(dtype):
    """(rtol, atol) of torch.testing.assert_close, which test_ops uses."""
    return torch.testing._comparison.default_tolerances(dtype)


def entry_tolerance(op, dtype):
    """PyTorch's tolerance for the dtype, loosened where the entry overrides
    it on CPU for a test that compares with a reference."""
    from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride
    from torch.testing._internal.opinfo.core import DecorateInfo

    rtol, atol = default_tolerance(dtype)
    for decoration in op.decorators:
        decorators = [decoration]
        if isinstance(decoration, DecorateInfo):
            if decoration.cls_name not in REFERENCE_TEST_CLASSES | {None}:
                continue
            if not decoration.is_active(decoration.cls_name, None, "cpu", dtype, {}):
                continue
            decorators = decoration.decorators
        for decorator in decorators:
            if isinstance(decorator, toleranceOverride) and dtype in decorator.d:
                atol = max(atol, decorator.d[dtype].atol)
                rtol = max(rtol, decorator.d[dtype].rtol)
            elif isinstance(decorator, precisionOverride) and dtype in decorator.d:
                atol = max(atol, decorator.d[dtype])
    return rtol, atol


def shape_text(tensor):
    return str(tuple(tensor.shape)).replace(",)", ")")


def compare(actual, expected, tolerance, values=True, precise=None):
    """Why stride's output is not torch's, or None. Where values differ and
    precise is given, they pass if stride's are within twice torch's
    distance of precise() (torch's float64 result), as PyTorch's
    test_python_ref judges its references (it allows no factor).
    Complex outputs (torch.fft's of the walk's real samples) compare as
    complex tensors. values=False compares shapes and dtypes (random ops)."""
    reason = difference(actual, expected, tolerance, values)
    if reason is not None and precise is not None and precise() is not None:
        reason = difference(actual, expected, tolerance, values, precise())
    return reason


def part(precise, index, length):
    aligned = isinstance(precise, list) and len(precise) == length
    return precise[index] if aligned else None


def difference(actual, expected, tolerance, values, precise=None):
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"returns {type(actual).__name__} where torch returns a sequence."
        if len(actual) != len(expected):
            return f"returns {len(actual)} outputs where torch returns {len(expected)}."
        for index, (a, e) in enumerate(zip(actual, expected)):
            p = part(precise, index, len(expected))
            reason = difference(a, e, tolerance, values, p)
            if reason is not None:
                return reason if len(expected) == 1 else f"output {index}: {reason}"
        return None
    if isinstance(expected, torch.Tensor):
        return tensor_difference(actual, expected, tolerance, values, precise)
    if isinstance(actual, torch.Tensor) or type(actual) is not type(expected):
        return f"returns {type(actual).__name__} where torch returns {type(expected).__name__}."
    if not values or expected == actual:
        return None
    if isinstance(expected, float) and math.isclose(
        actual, expected, rel_tol=tolerance[0], abs_tol=tolerance[1]
    ):
        return None
    return f"returns {actual!r} where torch returns {expected!r}."


def tensor_difference(actual, expected, tolerance, values, precise):
    if not isinstance(actual, torch.Tensor):
        return f"returns {type(actual).__name__} where torch returns a tensor."
    if actual.shape != expected.shape:
        return f"shape {shape_text(actual)} where torch has {shape_text(expected)}."
    if actual.dtype != expected.dtype:
        return f"dtype {dtype_name(actual.dtype)} where torch has {dtype_name(expected.dtype)}."
    if not values:
        return None
    # The entry's tolerance, or the output dtype's where that is looser (an
    # int64 sample's mean is float32).
    rtol, atol = (max(pair) for pair in zip(tolerance, default_tolerance(expected.dtype)))
    try:
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
        return None
    except AssertionError:
        if isinstance(precise, torch.Tensor) and precise.shape == expected.shape:
            if distance(actual, precise) <= 2 * distance(expected, precise):
                return None
        return values_differ(actual, expected)


def real_parts(tensor):
    """A tensor as float64 numbers: a complex one as its (real, imag) pairs."""
    if tensor.is_complex():
        return torch.view_as_real(tensor.to(torch.complex128))
    return tensor.double()


def distance(tensor, precise):
    """test_python_ref's distance: the summed absolute error, NaN matching
    NaN."""
    a, b = real_parts(tensor), real_parts(precise)
    same = (a == b) | (a.isnan() & b.isnan())
    return float(torch.where(same, 0.0, (a - b).abs()).sum())


def values_differ(actual, expected):
    if expected.dtype.is_floating_point or expected.dtype.is_complex:
        diff = (real_parts(actual) - real_parts(expected)).abs().nan_to_num(nan=math.inf)
        return f"values differ: max abs diff {diff.max().item():.2g}."
    wrong = int((actual != expected).sum())
    return f"values differ at {wrong} of {expected.numel()} elements."


def short_reason(error):
    """The class and the first line of an exception's message, without
    addresses, at most about 80 characters."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    message = binding_mismatch(str(error)) or (lines[0] if lines else "")
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    text = re.sub(r"0x[0-9a-fA-F]+", "0x…", text)
    return text if len(text) <= 80 else text[:79] + "…"


def binding_mismatch(message):
    """nanobind's "f(): incompatible function arguments" error says in its
    last line what the call passed; the reason says that instead of the
    first line, which every such error shares: `f() takes no (Tensor, dim=int)`."""
    name = re.match(r"([\w.]+)\(\): incompatible function arguments", message)
    passed = re.search(r"Invoked with types: (.*)", message)
    if name is None or passed is None:
        return None
    positional, _, keywords = passed.group(1).replace("stride._stride.", "").partition("kwargs = {")
    arguments = [a.strip() for a in positional.split(",") if a.strip()]
    pairs = [item.split(":", 1) for item in keywords.rstrip("} ").split(",") if ":" in item]
    arguments += [f"{key.strip()}={kind.strip()}" for key, kind in pairs]
    return f"{name.group(1)}() takes no ({', '.join(arguments)})"
