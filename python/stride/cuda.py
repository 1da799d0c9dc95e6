"""stride.cuda: torch.cuda's queries about NVIDIA GPUs.

    device = "cuda" if stride.cuda.is_available() else "cpu"
    x = stride.randn(4, 3).to(device)

A build without the CUDA backend, or a machine without a GPU or driver, has
no device: is_available() is False and unavailable_reason() says why; the
queries about one device (get_device_name, ...) raise NotImplementedError, a
RuntimeError as PyTorch's error is, with that reason, and synchronize,
empty_cache and the seeds are no-ops.
stride.cuda.amp is torch.cuda.amp (stride.amp's autocast and GradScaler).
"""

from . import _device_amp
from ._stride._cuda import (
    device_count,
    empty_cache,
    is_available,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    reset_peak_memory_stats,
    synchronize,
    unavailable_reason,
)

amp = _device_amp.module("cuda")

__all__ = [
    "amp",
    "current_device",
    "device_count",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "is_available",
    "is_bf16_supported",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "set_device",
    "synchronize",
    "unavailable_reason",
]


def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 tensors can be computed on the GPU: True wherever
    there is a device (stride's CUDA kernels take bfloat16), False without."""
    return is_available()


def manual_seed(seed):
    """A no-op: stride draws every device's numbers from the one default
    generator, which stride.manual_seed seeds."""


def manual_seed_all(seed):
    """A no-op, as manual_seed: the default generator serves every device."""


def _device_query(name):
    """A query about one device, which stride cannot answer: without a GPU
    there is none (PyTorch raises RuntimeError, of which NotImplementedError
    is a subclass, so a program's `except RuntimeError` still catches it);
    with one, include/stride/cuda.h has no such query yet."""

    def query(device=None):
        if not is_available():
            raise NotImplementedError(
                f"stride.cuda.{name}(): there is no CUDA device ({unavailable_reason()}); "
                "check stride.cuda.is_available() first."
            )
        raise NotImplementedError(
            f"stride.cuda.{name}() is not in stride yet: include/stride/cuda.h has no "
            f"stride::cuda::{name}."
        )

    query.__name__ = query.__qualname__ = name
    query.__doc__ = f"torch.cuda.{name}: raises NotImplementedError (a RuntimeError) without a GPU."
    return query


current_device = _device_query("current_device")
set_device = _device_query("set_device")
get_device_name = _device_query("get_device_name")
get_device_capability = _device_query("get_device_capability")
get_device_properties = _device_query("get_device_properties")
