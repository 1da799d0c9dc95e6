"""stride.backends.cpu: torch.backends.cpu's query of the CPU kernels' level."""

from .. import _stride

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """The instruction-set level of the CPU kernels in use, as PyTorch spells
    it: "DEFAULT", "AVX2" or "AVX512". STRIDE_CPU_CAPABILITY=default|avx2|avx512
    forces a lower one when the library loads."""
    return _stride._cpu_capability().upper()
