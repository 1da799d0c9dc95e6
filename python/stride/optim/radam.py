"""RAdam (torch.optim.radam)."""

from .._stride import _optim
from .optimizer import Optimizer, _reject_unsupported


class RAdam(Optimizer):
    """RAdam (torch.optim.RAdam): Adam with the adaptive term rectified for
    its variance, L2 or decoupled weight decay."""

    _make = staticmethod(_optim.RAdam)
    _flags = frozenset({"decoupled_weight_decay", "maximize"})

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        _reject_unsupported("RAdam", capturable, differentiable)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                decoupled_weight_decay=decoupled_weight_decay,
                maximize=maximize,
            ),
        )
