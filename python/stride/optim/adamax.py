"""Adamax (torch.optim.adamax)."""

from .._stride import _optim
from .optimizer import Optimizer, _reject_unsupported


class Adamax(Optimizer):
    """Adamax (torch.optim.Adamax): Adam with the infinity norm in place of
    the second moment."""

    _make = staticmethod(_optim.Adamax)
    _flags = frozenset({"maximize"})

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _reject_unsupported("Adamax", capturable, differentiable)
        super().__init__(
            params,
            dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize),
        )
