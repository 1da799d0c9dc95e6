"""SGD (torch.optim.sgd)."""

from .._stride import _optim
from .optimizer import Optimizer


class SGD(Optimizer):
    """Stochastic gradient descent with momentum (torch.optim.SGD)."""

    _make = staticmethod(_optim.SGD)
    _flags = frozenset({"nesterov", "maximize", "fused"})

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        fused=None,
    ):
        super().__init__(
            params,
            dict(
                lr=lr,
                momentum=momentum,
                dampening=dampening,
                weight_decay=weight_decay,
                nesterov=nesterov,
                maximize=maximize,
                fused=fused is not False,
            ),
        )
