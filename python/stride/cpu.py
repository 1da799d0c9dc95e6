"""stride.cpu: torch.cpu's queries (the CPU is always there) and
stride.cpu.amp, torch.cpu.amp's spelling of stride.amp."""

from . import _device_amp

amp = _device_amp.module("cpu")

__all__ = ["amp", "current_device", "device_count", "is_available", "synchronize"]


def is_available():
    """True: stride always computes on the CPU."""
    return True


def device_count():
    """1: the CPU is one device."""
    return 1


def current_device():
    """'cpu', as torch.cpu.current_device()."""
    return "cpu"


def synchronize(device=None):
    """A no-op: CPU ops have finished when they return."""
