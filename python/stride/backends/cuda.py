"""stride.backends.cuda: torch.backends.cuda's matmul switches (no effect in
stride) and whether stride was built with its CUDA backend."""

from .. import _settings
from .._stride import _cuda

# src/backends/no_cuda.cpp's reason, given only by a build without the backend.
_NOT_BUILT = "this build of stride has no cuda backend"


def is_built():
    """Whether this build of stride has the CUDA backend (a GPU may still be
    missing: see stride.cuda.is_available)."""
    return _cuda.unavailable_reason() != _NOT_BUILT


class _MatmulSwitches:
    """torch.backends.cuda.matmul: allow_tf32 reads and writes the float32
    matmul precision, as in PyTorch ('high' allows TF32, 'highest' not)."""

    _switches = (
        "allow_tf32",
        "allow_fp16_reduced_precision_reduction",
        "allow_bf16_reduced_precision_reduction",
    )

    def __init__(self):
        object.__setattr__(self, "allow_fp16_reduced_precision_reduction", True)
        object.__setattr__(self, "allow_bf16_reduced_precision_reduction", True)

    @property
    def allow_tf32(self):
        return _settings.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        _settings.set_float32_matmul_precision("high" if value else "highest")

    def __setattr__(self, name, value):
        if name not in self._switches:
            raise AttributeError(
                f"Unknown attribute {name} of torch.backends.cuda.matmul; it has "
                f"{', '.join(self._switches)}."
            )
        object.__setattr__(self, name, value)


matmul = _MatmulSwitches()
