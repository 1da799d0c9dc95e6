"""stride.amp: mixed precision with torch.amp's names.

    with stride.amp.autocast(device_type="cpu", dtype=stride.bfloat16):
        logits, loss = model(x, y)     # matmul-class ops on bfloat16 operands
    scaler.scale(loss).backward()      # scaler: stride.amp.GradScaler
    scaler.step(optimizer)
    scaler.update()

autocast is include/stride/autocast.h's: inside it the matmul-class ops
(matmul, mm, bmm, linear, hence nn.Linear) round their float32 operands to
bfloat16 and multiply on a bfloat16 GEMM that accumulates in float32; every
other op, the parameters, their gradients and the optimizer state stay
float32. Two differences from PyTorch: those ops return float32, not
bfloat16 (one rounding fewer; Note [Autocast results are float32] there),
and the switch is one per thread, covering every device's ops. bfloat16 is
the only autocast dtype stride has: float16 raises NotImplementedError.
Where PyTorch warns and disables autocast (device_type="cuda" without a GPU,
a dtype that is neither bfloat16 nor float16) stride does the same.

GradScaler is PyTorch's dynamic loss scaling, needed for float16 gradients;
nanoGPT and llama2.c make it with enabled=False unless they train in
float16, and a disabled scaler changes nothing.
"""

import functools
import math
import struct
import warnings
from collections import defaultdict

from . import _stride
from ._stride import Tensor, _cuda, bfloat16, float16
from .autograd import no_grad

__all__ = ["GradScaler", "autocast", "is_autocast_available"]

# PyTorch's default autocast dtypes (torch.get_autocast_dtype).
_DEFAULT_DTYPE = {"cpu": bfloat16, "cuda": float16}


def is_autocast_available(device_type):
    """Whether autocast takes this device_type: 'cpu' and 'cuda'."""
    return device_type in _DEFAULT_DTYPE


class autocast:
    """Mixed precision in a block or a decorated function (torch.autocast).

    device_type: 'cpu' or 'cuda'. dtype: bfloat16, the default for 'cpu'
    (the 'cuda' default, float16, is not one stride computes in). enabled=
    False turns autocast off inside (a no-op where it was off).
    cache_enabled is accepted for PyTorch's signature: stride always keeps
    one bfloat16 copy of each parameter per outermost block, dropped when the
    block ends or the parameter changes, so the results are the same.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise ValueError(
                f"autocast(device_type={device_type!r}): stride's autocast takes 'cpu' or 'cuda'."
            )
        self.device = device_type
        self.fast_dtype = _DEFAULT_DTYPE[device_type] if dtype is None else dtype
        self._enabled = bool(enabled) and _autocast_can_run(device_type, self.fast_dtype)
        self._pushed = []

    def __enter__(self):
        # A disabled 'cuda' block leaves the switch alone: in PyTorch it does
        # not touch the CPU's autocast either.
        touches_switch = self._enabled or self.device == "cpu"
        self._pushed.append(touches_switch and _push_switch(self._enabled))
        return self

    def __exit__(self, *exc):
        if self._pushed.pop():
            _stride._autocast.pop()
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}; as a "
                "context manager write `with stride.autocast(device_type=...):`."
            )

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def _autocast_can_run(device_type, dtype):
    """False (with PyTorch's warning) where PyTorch disables autocast;
    NotImplementedError where PyTorch would compute but stride cannot."""
    if device_type == "cuda" and not _cuda.is_available():
        warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=3)
        return False
    if dtype not in (bfloat16, float16):
        name = device_type.upper()
        warnings.warn(
            f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
            f"{name} Autocast only supports dtypes of stride.bfloat16, stride.float16 currently.",
            stacklevel=3,
        )
        return False
    if dtype == float16:
        raise NotImplementedError(
            f"autocast(device_type={device_type!r}, dtype=float16): stride's autocast "
            "computes in bfloat16 only; pass dtype=stride.bfloat16, or enabled=False to stay "
            "in float32."
        )
    return True


def _push_switch(enabled):
    """Turns the thread's autocast switch on or off until the matching pop
    (a stride::AutocastGuard held by the extension); returns True: a switch
    was pushed."""
    _stride._autocast.push(enabled)
    return True


def _float32(x):
    """x rounded to float32, as PyTorch keeps the scale (a float32 tensor)."""
    return struct.unpack("f", struct.pack("f", x))[0]


class GradScaler:
    """Dynamic loss scaling (torch.amp.GradScaler).

        scaler = stride.amp.GradScaler("cpu")
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)               # optional: to clip true gradients
        stride.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)                   # skipped if a gradient is inf or NaN
        scaler.update()                          # backoff on inf, growth after growth_interval

    enabled=False makes every method a no-op (step calls optimizer.step()).
    A 'cuda' scaler without a GPU warns and disables itself, as PyTorch's.
    """

    def __init__(
        self,
        device="cuda",
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _cuda.is_available():
            warnings.warn(
                "GradScaler is enabled for 'cuda', but CUDA is not available. Disabling.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError(f"GradScaler: growth_factor must be > 1.0; got {growth_factor}.")
            if backoff_factor >= 1.0:
                raise ValueError(f"GradScaler: backoff_factor must be < 1.0; got {backoff_factor}.")
        self._scale = _float32(init_scale)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._per_optimizer = defaultdict(_OptimizerProgress)

    def is_enabled(self):
        """Whether this scaler scales (False once disabled)."""
        return self._enabled

    def scale(self, outputs):
        """outputs (a tensor, or nested lists and tuples of them) times the
        scale; unchanged when disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError(
            f"GradScaler.scale: outputs must be a Tensor or an iterable of Tensors; got "
            f"{type(outputs).__name__}."
        )

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale in place and notes
        whether any is inf or NaN; once per optimizer between updates."""
        if not self._enabled:
            return
        state = self._per_optimizer[id(optimizer)]
        if state.stage == "unscaled":
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state.stage == "stepped":
            raise RuntimeError("unscale_() is being called after step().")
        state.found_inf = _unscale_grads(optimizer, 1.0 / self._scale)
        state.stage = "unscaled"

    def step(self, optimizer, *args, **kwargs):
        """Unscales (unless unscale_ did) and calls optimizer.step(*args,
        **kwargs), skipping it when a gradient is inf or NaN; returns what
        optimizer.step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._per_optimizer[id(optimizer)]
        if state.stage == "stepped":
            raise RuntimeError("step() has already been called since the last update().")
        if state.stage == "ready":
            self.unscale_(optimizer)
        result = None if state.found_inf else optimizer.step(*args, **kwargs)
        state.stage = "stepped"
        return result

    def update(self, new_scale=None):
        """Backs the scale off if any step this iteration saw inf or NaN,
        grows it after growth_interval clean steps in a row; new_scale (a
        float or a 1-element tensor) sets it instead."""
        if not self._enabled:
            return
        if new_scale is not None:
            value = new_scale.item() if isinstance(new_scale, Tensor) else new_scale
            self._scale = _float32(float(value))
        else:
            if not self._per_optimizer:
                raise RuntimeError(
                    "GradScaler.update: no step() or unscale_() was recorded since the last "
                    "update(); call scaler.step(optimizer) first."
                )
            self._advance(any(s.found_inf for s in self._per_optimizer.values()))
        self._per_optimizer.clear()

    def _advance(self, found_inf):
        """PyTorch's _amp_update_scale_."""
        if found_inf:
            self._scale = _float32(self._scale * self._backoff_factor)
            self._growth_tracker = 0
            return
        self._growth_tracker += 1
        if self._growth_tracker == self._growth_interval:
            self._scale = _float32(self._scale * self._growth_factor)
            self._growth_tracker = 0

    def get_scale(self):
        """The current scale as a float (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self):
        """The factor the scale grows by after growth_interval clean steps."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Sets the growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """The factor the scale shrinks by after a step with inf or NaN."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Sets the backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """How many clean steps in a row grow the scale."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Sets the growth interval."""
        self._growth_interval = new_interval

    def state_dict(self):
        """PyTorch's keys: scale, growth_factor, backoff_factor,
        growth_interval and _growth_tracker ({} when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state_dict):
        """Restores a state_dict() (a no-op when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled "
                "instance of GradScaler."
            )
        self._scale = _float32(float(state_dict["scale"]))
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


class _OptimizerProgress:
    """One optimizer's progress through an iteration: ready, unscaled or
    stepped, and whether its gradients held inf or NaN."""

    def __init__(self):
        self.stage = "ready"
        self.found_inf = False


def _unscale_grads(optimizer, inv_scale):
    """Multiplies every gradient of the optimizer by inv_scale in place;
    returns whether any (before scaling) held inf or NaN."""
    checks = []
    with no_grad():
        for group in optimizer.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if grad.dtype == float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                # inf * 0 and NaN * 0 are NaN, so the sum is NaN exactly when
                # some element is not finite (a plain sum could overflow).
                checks.append(grad.mul(0.0).sum())
                grad.mul_(inv_scale)
    return bool(checks) and not math.isfinite(sum(checks).item())
