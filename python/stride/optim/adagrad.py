"""Adagrad (torch.optim.adagrad)."""

from .._stride import _optim
from .optimizer import Optimizer, _reject_unsupported


class Adagrad(Optimizer):
    """Adagrad (torch.optim.Adagrad): the gradient scaled by the root of the
    sum of its past squares."""

    _make = staticmethod(_optim.Adagrad)
    _flags = frozenset({"maximize"})

    def __init__(
        self,
        params,
        lr=1e-2,
        lr_decay=0,
        weight_decay=0,
        initial_accumulator_value=0,
        eps=1e-10,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        fused=None,
    ):
        _reject_unsupported("Adagrad", differentiable=differentiable)
        super().__init__(
            params,
            dict(
                lr=lr,
                lr_decay=lr_decay,
                weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value,
                eps=eps,
                maximize=maximize,
            ),
        )
