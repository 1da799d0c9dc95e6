"""stride.backends.cudnn: torch.backends.cudnn's switches, settable and
readable with PyTorch's defaults and no effect (stride has no cuDNN)."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    """False: stride does not use cuDNN."""
    return False


def version():
    """None, as PyTorch answers without cuDNN."""
    return None
