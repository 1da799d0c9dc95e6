"""torch.memory_format's values. Conversions take preserve_format (keep the
layout), contiguous_format (make it contiguous), and channels_last (4 dims)
and channels_last_3d (5 dims): the same dims, stored with the channels (dim
1) innermost, as strides of an ordinary strided tensor."""

__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "memory_format",
    "preserve_format",
]


class memory_format:  # noqa: N801  (torch's name)
    """A memory layout a conversion may ask for (torch.memory_format)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"stride.{self._name}"


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
