"""torch.signal: the window functions (stride.signal.windows)."""

from . import windows  # noqa: F401
