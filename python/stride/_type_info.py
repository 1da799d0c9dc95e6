"""stride.finfo and stride.iinfo: the limits of a dtype, as torch.finfo and
torch.iinfo give them (the same fields, values and printed form).

    stride.finfo(stride.float16).max       # 65504.0
    scores.masked_fill(mask, stride.finfo(scores.dtype).min)
    stride.iinfo(stride.int32).max         # 2147483647
"""

from . import _stride

# bits, eps, max, smallest normal, resolution (10 ** -decimal digits).
_FLOATS = {
    "float64": (64, 2.220446049250313e-16, 1.7976931348623157e308, 2.2250738585072014e-308, 1e-15),
    "float32": (32, 1.1920928955078125e-07, 3.4028234663852886e38, 1.1754943508222875e-38, 1e-06),
    "float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
    "bfloat16": (16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01),
}
# A complex dtype's limits are those of its parts.
_PARTS = {"complex128": "float64", "complex64": "float32"}
_INTEGERS = {
    "uint8": (8, 0, 255),
    "int32": (32, -(2**31), 2**31 - 1),
    "int64": (64, -(2**63), 2**63 - 1),
}


def _name(dtype):
    if not isinstance(dtype, _stride.dtype):
        raise TypeError(f"expected a stride.dtype; got {type(dtype).__name__}.")
    return str(dtype).removeprefix("stride.")


class finfo:  # noqa: N801  (torch.finfo's name)
    """A floating-point (or complex) dtype's limits: bits, eps (the gap above
    1), max, min (= -max), tiny and smallest_normal (the smallest positive
    normal number), resolution, and dtype (its name; a complex dtype gives
    its parts'). Default: float32."""

    def __init__(self, dtype=None):
        name = "float32" if dtype is None else _name(dtype)
        name = _PARTS.get(name, name)
        if name not in _FLOATS:
            raise TypeError(
                f"stride.finfo() requires a floating point input type; got {name}. Use "
                "stride.iinfo for an integer type."
            )
        self.bits, self.eps, self.max, self.smallest_normal, self.resolution = _FLOATS[name]
        self.min = -self.max
        self.tiny = self.smallest_normal
        self.dtype = name

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:  # noqa: N801  (torch.iinfo's name)
    """An integer dtype's limits: bits, min, max, and dtype (its name)."""

    def __init__(self, dtype):
        name = _name(dtype)
        if name not in _INTEGERS:
            raise TypeError(
                f"stride.iinfo() requires an integer input type; got {name}. Use stride.finfo "
                "for a floating point type."
            )
        self.bits, self.min, self.max = _INTEGERS[name]
        self.dtype = name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
