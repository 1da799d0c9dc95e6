"""stride.optim.lr_scheduler: learning-rate schedules (torch.optim.lr_scheduler).

Each scheduler is stride's C++ one, setting the lr of its optimizer's
groups in closed form from the step count; `step()` once per optimizer
step (or epoch), as in PyTorch.
"""

from .._stride import _optim


class LRScheduler:
    """The base of the schedulers: step(), get_last_lr(), last_epoch,
    base_lrs, state_dict() / load_state_dict()."""

    def __init__(self, optimizer, impl):
        self.optimizer = optimizer
        self._impl = impl

    def step(self):
        """Advances the schedule by one step (or epoch) and sets every group's lr."""
        self._impl.step()

    def get_last_lr(self):
        """The lr this scheduler set last, one per param group."""
        return list(self._impl.get_last_lr())

    @property
    def last_epoch(self):
        """How many times step() has run (0 right after construction)."""
        return self._impl.last_epoch

    @property
    def base_lrs(self):
        """Each group's lr when the first scheduler was built on the optimizer."""
        return list(self._impl.base_lrs)

    def state_dict(self):
        """The schedule's position and hyperparameters, as a dict of numbers."""
        return dict(self._impl.state_dict())

    def load_state_dict(self, state_dict):
        """Restores a state_dict() of the same kind of scheduler (the optimizer's lr is restored
        with the optimizer)."""
        self._impl.load_state_dict(state_dict)


def _cpp(optimizer):
    impl = getattr(optimizer, "_impl", None)
    if impl is None:
        raise TypeError(f"{type(optimizer).__name__} is not a stride.optim optimizer.")
    return impl


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (epoch // step_size)."""

    def __init__(self, optimizer, step_size, gamma=0.1):
        super().__init__(optimizer, _optim.StepLR(_cpp(optimizer), step_size, gamma))


class LinearLR(LRScheduler):
    """The lr factor moves linearly from start_factor to end_factor over
    total_iters steps."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5):
        super().__init__(
            optimizer, _optim.LinearLR(_cpp(optimizer), start_factor, end_factor, total_iters)
        )


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2."""

    def __init__(self, optimizer, T_max, eta_min=0.0):
        super().__init__(optimizer, _optim.CosineAnnealingLR(_cpp(optimizer), T_max, eta_min))


class LambdaLR(LRScheduler):
    """lr = base_lr * lr_lambda(epoch); one function, or one per group."""

    def __init__(self, optimizer, lr_lambda):
        fns = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]
        super().__init__(optimizer, _optim.LambdaLR(_cpp(optimizer), fns))


class SequentialLR(LRScheduler):
    """Runs `schedulers` one after another, switching at the milestones."""

    def __init__(self, optimizer, schedulers, milestones):
        self._schedulers = list(schedulers)
        impls = [s._impl for s in self._schedulers]
        super().__init__(optimizer, _optim.SequentialLR(_cpp(optimizer), impls, list(milestones)))


class WarmupCosineLR(LRScheduler):
    """Linear warm-up over warmup_steps, then a cosine decay to
    min_lr_ratio * base_lr at total_steps (stride's; no torch equivalent)."""

    def __init__(self, optimizer, warmup_steps, total_steps, min_lr_ratio=0.1):
        super().__init__(
            optimizer,
            _optim.WarmupCosineLR(_cpp(optimizer), warmup_steps, total_steps, min_lr_ratio),
        )
