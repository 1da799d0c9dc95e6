"""NAdam (torch.optim.nadam)."""

from .._stride import _optim
from .optimizer import Optimizer, _reject_unsupported


class NAdam(Optimizer):
    """NAdam (torch.optim.NAdam): Adam with Nesterov momentum, L2 or
    decoupled weight decay."""

    _make = staticmethod(_optim.NAdam)
    _flags = frozenset({"decoupled_weight_decay", "maximize"})
    _scalar_state = frozenset({"step", "mu_product"})

    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        momentum_decay=4e-3,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        _reject_unsupported("NAdam", capturable, differentiable)
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                momentum_decay=momentum_decay,
                decoupled_weight_decay=decoupled_weight_decay,
                maximize=maximize,
            ),
        )
