"""stride.random: the default generator's state with torch.random's names.

    state = stride.get_rng_state()     # save it (stride.save takes it too)
    a = stride.randn(3)
    stride.set_rng_state(state)
    b = stride.randn(3)                # the same numbers as a

The state is stride's Philox generator's (seed, offset), as 16 bytes in a
uint8 tensor (PyTorch's CPU state is a 5056-byte Mersenne Twister; neither
can be restored into the other).
"""

import struct

from ._stride import Tensor, default_generator, manual_seed, tensor, uint8

__all__ = ["get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]

_STATE_FORMAT = "<QQ"  # seed, then offset: little-endian unsigned 64-bit
_STATE_BYTES = struct.calcsize(_STATE_FORMAT)


def get_rng_state():
    """The default generator's state as a uint8 tensor of 16 bytes."""
    packed = struct.pack(_STATE_FORMAT, *default_generator.get_state())
    return tensor(list(packed), dtype=uint8)


def set_rng_state(new_state):
    """Restores a state from get_rng_state(): the default generator then
    replays the numbers it drew from there."""
    if not isinstance(new_state, Tensor) or new_state.dtype != uint8:
        raise TypeError(
            "set_rng_state(): new_state must be the uint8 tensor stride.get_rng_state() "
            f"returns; got {_describe(new_state)}."
        )
    if new_state.numel() != _STATE_BYTES:
        raise RuntimeError(
            f"set_rng_state(): stride's generator state is {_STATE_BYTES} bytes (Philox seed "
            f"and offset); got {new_state.numel()} (a PyTorch CPU state is 5056 and cannot be "
            "restored into stride's generator)."
        )
    default_generator.set_state(struct.unpack(_STATE_FORMAT, bytes(new_state.tolist())))


def initial_seed():
    """The seed the default generator started from."""
    return default_generator.initial_seed()


def seed():
    """Reseeds the default generator from the OS's entropy and returns the
    seed."""
    return default_generator.seed()


def _describe(value):
    if isinstance(value, Tensor):
        return f"a {value.dtype} tensor"
    return type(value).__name__
