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


class FunctionCtx:
    """The ctx of a custom Function: what forward hands to backward.

    Besides the methods below, any attribute may be set on it in forward
    (`ctx.k = k`) and read in backward.
    """

    def __init__(self, inputs):
        self._cpp = _autograd._FunctionContext(inputs)

    @property
    def needs_input_grad(self):
        """One bool per forward argument: whether its gradient is wanted
        (False for arguments that are not tensors)."""
        return self._cpp.needs_input_grad

    def save_for_backward(self, *tensors):
        """Keeps tensors (inputs, outputs or None) for backward. Reading them
        back raises RuntimeError if one was modified in place since."""
        self._cpp.save_for_backward(list(tensors))

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward, as a tuple."""
        return self._cpp.saved_tensors

    def mark_non_differentiable(self, *outputs):
        """Outputs that get no gradient (indices, masks): they do not require
        grad, and their gradient in backward is zeros (or None, see
        set_materialize_grads)."""
        self._cpp.mark_non_differentiable(list(outputs))

    def set_materialize_grads(self, value):
        """True (the default) passes zeros to backward for outputs that got no
        gradient; False passes None."""
        self._cpp.set_materialize_grads(bool(value))


class Function:
    """A differentiable operation written as a forward and a backward, as
    torch.autograd.Function:

        class Exp(stride.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                (y,) = ctx.saved_tensors
                return grad * y

        y = Exp.apply(x)          # y.grad_fn.name() == "ExpBackward"

    forward runs under no_grad and returns a tensor or a tuple of tensors;
    its arguments may be anything. backward gets one gradient per output
    and returns one per forward argument (None for arguments that are not
    tensors or need no gradient). Under create_graph backward runs with grad
    mode on, so a backward written with stride ops can be differentiated
    again. An exception raised in backward comes out of .backward() as is.
    """

    @staticmethod
    def forward(ctx, *args):
        """The computation, run without recording; returns a tensor or a
        tuple of tensors. Save what backward needs with
        ctx.save_for_backward."""
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """One gradient per output in, one per forward argument out (None
        for arguments that are not tensors or need no gradient)."""
        raise NotImplementedError("a Function subclass must define backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args):
        """Runs forward on args and records the result in the graph."""
        from ._stride import Tensor

        inputs = [a if isinstance(a, Tensor) else None for a in args]
        ctx = FunctionCtx(inputs)
        with no_grad():
            result = cls.forward(ctx, *args)
        single = isinstance(result, Tensor)
        outputs = (result,) if single else result
        if not isinstance(outputs, tuple) or not all(isinstance(o, Tensor) for o in outputs):
            raise TypeError(
                f"{cls.__name__}.forward must return a tensor or a tuple of tensors; "
                f"got {type(result).__name__}."
            )
        name = cls.__name__ + "Backward"
        recorded = _autograd._record_function(
            name, ctx._cpp, inputs, list(outputs), functools.partial(_run_backward, cls, ctx)
        )
        return recorded[0] if single else recorded


def _run_backward(cls, ctx, grads):
    """Calls cls.backward and returns its gradients as a tuple."""
    result = cls.backward(ctx, *grads)
    if not isinstance(result, (tuple, list)):
        result = (result,)
    return tuple(result)
