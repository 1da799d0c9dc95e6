"""stride.backends.mps: stride has no Apple Metal backend."""


def is_available():
    """False: stride has no MPS backend."""
    return False


def is_built():
    """False: stride has no MPS backend."""
    return False
