"""stride.backends: torch.backends' switches and queries, so that programs
written for PyTorch run unchanged.

    stride.backends.cuda.matmul.allow_tf32 = True   # accepted, read back, no effect
    stride.backends.cudnn.benchmark = True          # likewise
    stride.backends.mps.is_available()              # False
    stride.backends.cpu.get_cpu_capability()        # "AVX512", "AVX2" or "DEFAULT"

The switches are settable and readable but change nothing stride computes:
on the CPU there is no TF32, cuDNN or autotuning, and stride's CUDA backend
has none of them either. The queries answer truthfully.
"""

from . import cpu, cuda, cudnn, mps  # noqa: F401
