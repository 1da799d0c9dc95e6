"""stride.utils: helpers beside the core, as torch.utils (stride.utils.data:
datasets and the DataLoader)."""

from . import data  # noqa: F401
