"""stride.cuda: torch.cuda's queries about NVIDIA GPUs.

    device = "cuda" if stride.cuda.is_available() else "cpu"
    x = stride.randn(4, 3).to(device)

A build without the CUDA backend, or a machine without a GPU or driver, has
no device: is_available() is False and unavailable_reason() says why.
"""

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

__all__ = [
    "device_count",
    "empty_cache",
    "is_available",
    "max_memory_allocated",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "synchronize",
    "unavailable_reason",
]
