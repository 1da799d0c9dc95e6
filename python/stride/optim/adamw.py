"""AdamW (torch.optim.adamw): Adam with decoupled weight decay."""

from .._stride import _optim
from .adam import Adam


class AdamW(Adam):
    """AdamW (torch.optim.AdamW): decoupled weight decay."""

    _make = staticmethod(_optim.AdamW)

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=1e-2,
        amsgrad=False,
        *,
        maximize=False,
        fused=None,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            maximize=maximize,
            fused=fused,
            decoupled_weight_decay=True,
        )
