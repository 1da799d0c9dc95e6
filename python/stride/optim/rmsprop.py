"""RMSprop (torch.optim.rmsprop)."""

from .._stride import _optim
from .optimizer import Optimizer, _reject_unsupported


class RMSprop(Optimizer):
    """RMSprop (torch.optim.RMSprop): the gradient scaled by a running RMS of
    its past values, optionally centered and with momentum."""

    _make = staticmethod(_optim.RMSprop)
    _flags = frozenset({"centered", "maximize"})

    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _reject_unsupported("RMSprop", capturable, differentiable)
        super().__init__(
            params,
            dict(
                lr=lr,
                alpha=alpha,
                eps=eps,
                weight_decay=weight_decay,
                momentum=momentum,
                centered=centered,
                maximize=maximize,
            ),
        )
