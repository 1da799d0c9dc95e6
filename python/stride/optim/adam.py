"""Adam (torch.optim.adam), L2 or decoupled weight decay."""

from .._stride import _optim
from .optimizer import Optimizer


class Adam(Optimizer):
    """Adam (torch.optim.Adam): L2 weight decay added to the gradient, or
    AdamW's decoupled decay with decoupled_weight_decay=True."""

    _make = staticmethod(_optim.Adam)
    _flags = frozenset({"amsgrad", "maximize", "fused", "decoupled_weight_decay"})

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        maximize=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        super().__init__(
            params,
            dict(
                lr=lr,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                amsgrad=amsgrad,
                maximize=maximize,
                fused=fused is not False,
                decoupled_weight_decay=decoupled_weight_decay,
            ),
        )
