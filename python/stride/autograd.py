"""stride.autograd: gradients as torch.autograd computes them.

    with stride.no_grad(): ...            # record nothing
    stride.autograd.grad(y, [x], create_graph=True)
    with stride.autograd.detect_anomaly(): ...
    stride.autograd.gradcheck(f, (x,))    # float64 finite differences
"""

import functools

from ._stride import _autograd

grad = _autograd.grad
backward = _autograd.backward
is_grad_enabled = _autograd.is_grad_enabled


class _ModeGuard:
    """A context manager (and decorator) that sets a mode and restores it."""

    _get = None
    _set = None

    def __init__(self, mode):
        self._mode = mode
        self._previous = []

    def _fresh(self):
        """A guard of the same mode for one call of a decorated function
        (calls may nest or run on several threads)."""
        guard = object.__new__(type(self))
        _ModeGuard.__init__(guard, self._mode)
        return guard

    def __enter__(self):
        self._previous.append(type(self)._get())
        type(self)._set(self._mode)
        return self

    def __exit__(self, *exc):
        type(self)._set(self._previous.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._fresh():
                return fn(*args, **kwargs)

        return wrapper


class set_grad_enabled(_ModeGuard):
    """Turns recording on or off in a block: `with set_grad_enabled(False):`."""

    _get = staticmethod(_autograd.is_grad_enabled)
    _set = staticmethod(_autograd.set_grad_enabled)


class no_grad(set_grad_enabled):
    """Records no graph in a block or a decorated function (torch.no_grad)."""

    def __init__(self):
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """Records the graph again inside a no_grad block (torch.enable_grad)."""

    def __init__(self):
        super().__init__(True)


class inference_mode(set_grad_enabled):
    """Inference: nothing is recorded (stride has no separate inference
    tensors, so this is no_grad)."""

    def __init__(self, mode=True):
        super().__init__(not mode)


class detect_anomaly(_ModeGuard):
    """Names the forward op whose backward first produced NaN or Inf."""

    _get = staticmethod(_autograd.is_anomaly_enabled)
    _set = staticmethod(_autograd.set_anomaly_enabled)

    def __init__(self, mode=True):
        super().__init__(mode)


set_detect_anomaly = detect_anomaly


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3):
    """Compares func's analytic gradients with central finite differences
    (inputs in float64). True, or RuntimeError naming the first entry that
    differs."""
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    return _autograd.gradcheck(lambda xs: func(*xs), list(inputs), eps, atol, rtol)
