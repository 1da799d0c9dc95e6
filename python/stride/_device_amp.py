"""stride.cuda.amp and stride.cpu.amp: PyTorch's older per-device spellings
of stride.amp (torch.cuda.amp.GradScaler(enabled=...) is nanoGPT's and
llama2.c's), deprecated with PyTorch's FutureWarning."""

import sys
import types
import warnings

from .amp import GradScaler, autocast


def _deprecated(device_type, name):
    warnings.warn(
        f"`stride.{device_type}.amp.{name}(args...)` is deprecated. Please use "
        f"`stride.amp.{name}('{device_type}', args...)` instead.",
        FutureWarning,
        stacklevel=3,
    )


class _DeviceAutocast(autocast):
    """autocast(device_type, ...) under its older per-device name."""

    _device_type = None

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        _deprecated(self._device_type, "autocast")
        super().__init__(self._device_type, dtype, enabled, cache_enabled)


class _CudaAutocast(_DeviceAutocast):
    """autocast('cuda', ...) (torch.cuda.amp.autocast; float16 by default)."""

    _device_type = "cuda"


class _CpuAutocast(_DeviceAutocast):
    """autocast('cpu', ...) (torch.cpu.amp.autocast; bfloat16 by default)."""

    _device_type = "cpu"


class _DeviceGradScaler(GradScaler):
    """GradScaler(device, ...) under its older per-device name."""

    _device_type = None

    def __init__(
        self,
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        _deprecated(self._device_type, "GradScaler")
        super().__init__(
            self._device_type, init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )


class _CudaGradScaler(_DeviceGradScaler):
    """GradScaler('cuda', ...) (torch.cuda.amp.GradScaler)."""

    _device_type = "cuda"


class _CpuGradScaler(_DeviceGradScaler):
    """GradScaler('cpu', ...) (torch.cpu.amp.GradScaler)."""

    _device_type = "cpu"


_CLASSES = {"cuda": (_CudaAutocast, _CudaGradScaler), "cpu": (_CpuAutocast, _CpuGradScaler)}


def module(device_type):
    """The module stride.<device_type>.amp, registered so that `import
    stride.cuda.amp` finds it (stride.cuda is a module, not a package)."""
    name = f"stride.{device_type}.amp"
    amp = types.ModuleType(name, f"torch.{device_type}.amp's names over stride.amp.")
    amp.autocast, amp.GradScaler = _CLASSES[device_type]
    amp.__all__ = ["GradScaler", "autocast"]
    sys.modules.setdefault(name, amp)
    return sys.modules[name]
