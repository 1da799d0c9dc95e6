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
        if isinstance(lr_lambda, (list, tuple)):
            fns = list(lr_lambda)
        else:  # one function for every group, as PyTorch
            fns = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, _optim.LambdaLR(_cpp(optimizer), fns))


class SequentialLR(LRScheduler):
    """Runs `schedulers` one after another, switching at the milestones."""

    def __init__(self, optimizer, schedulers, milestones):
        self._schedulers = list(schedulers)
        impls = [s._impl for s in self._schedulers]
        super().__init__(optimizer, _optim.SequentialLR(_cpp(optimizer), impls, list(milestones)))


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones reached)."""

    def __init__(self, optimizer, milestones, gamma=0.1):
        super().__init__(
            optimizer, _optim.MultiStepLR(_cpp(optimizer), [int(m) for m in milestones], gamma)
        )


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** epoch."""

    def __init__(self, optimizer, gamma):
        super().__init__(optimizer, _optim.ExponentialLR(_cpp(optimizer), gamma))


class ConstantLR(LRScheduler):
    """lr = base_lr * factor until epoch total_iters, base_lr from then on."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5):
        super().__init__(optimizer, _optim.ConstantLR(_cpp(optimizer), factor, total_iters))


class CosineAnnealingWarmRestarts(LRScheduler):
    """A cosine from base_lr to eta_min over T_i epochs, then a restart;
    T_0 epochs in the first cycle, T_mult times more in each next one."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0):
        for name, value, low in (("T_0", T_0, 1), ("T_mult", T_mult, 1)):
            if not isinstance(value, int) or value < low:
                raise ValueError(
                    f"CosineAnnealingWarmRestarts: {name} must be an integer >= {low}; "
                    f"got {value!r}."
                )
        impl = _optim.make_CosineAnnealingWarmRestarts(_cpp(optimizer), T_0, T_mult, eta_min)
        super().__init__(optimizer, impl)

    def step(self, epoch=None):
        """Advances by one epoch, or to `epoch` (fractional epochs allowed,
        e.g. epoch + i / iters for a restart schedule within epochs)."""
        if epoch is None:
            self._impl.step()
        else:
            self._impl.step_epoch(float(epoch))

    @property
    def T_cur(self):
        """The epochs since the last restart."""
        return self._impl.T_cur

    @property
    def T_i(self):
        """The length of the current cycle, in epochs."""
        return self._impl.T_i


def _one_value(name, value):
    if isinstance(value, (list, tuple)):
        if len(set(value)) != 1:
            raise NotImplementedError(
                f"OneCycleLR: a {name} per param group is not supported; pass one number."
            )
        return float(value[0])
    return float(value)


class OneCycleLR(LRScheduler):
    """The 1cycle policy: lr up from max_lr / div_factor to max_lr over
    pct_start of the steps, then down to max_lr / (div_factor *
    final_div_factor), the momentum (SGD's momentum, Adam's beta1) moving the
    other way."""

    def __init__(
        self,
        optimizer,
        max_lr,
        total_steps=None,
        epochs=None,
        steps_per_epoch=None,
        pct_start=0.3,
        anneal_strategy="cos",
        cycle_momentum=True,
        base_momentum=0.85,
        max_momentum=0.95,
        div_factor=25.0,
        final_div_factor=1e4,
        three_phase=False,
    ):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError(
                    "OneCycleLR: pass total_steps, or both epochs and steps_per_epoch."
                )
            total_steps = epochs * steps_per_epoch
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"OneCycleLR: anneal_strategy must be 'cos' or 'linear'; got {anneal_strategy!r}."
            )
        max_lrs = list(max_lr) if isinstance(max_lr, (list, tuple)) else [max_lr]
        impl = _optim.OneCycleLR(
            _cpp(optimizer),
            [float(v) for v in max_lrs],
            int(total_steps),
            float(pct_start),
            anneal_strategy == "linear",
            bool(cycle_momentum),
            _one_value("base_momentum", base_momentum),
            _one_value("max_momentum", max_momentum),
            float(div_factor),
            float(final_div_factor),
            bool(three_phase),
        )
        super().__init__(optimizer, impl)
        self.total_steps = int(total_steps)


class ReduceLROnPlateau:
    """Reduces every group's lr by `factor` once the metric given to step()
    has not improved for more than `patience` epochs (torch.optim.lr_scheduler.
    ReduceLROnPlateau)."""

    def __init__(
        self,
        optimizer,
        mode="min",
        factor=0.1,
        patience=10,
        threshold=1e-4,
        threshold_mode="rel",
        cooldown=0,
        min_lr=0,
        eps=1e-8,
    ):
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max'; got {mode!r}.")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs'; got {threshold_mode!r}."
            )
        min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr]
        self.optimizer = optimizer
        self.mode, self.threshold_mode = mode, threshold_mode
        self._impl = _optim.make_ReduceLROnPlateau(
            _cpp(optimizer),
            mode == "max",
            factor,
            patience,
            threshold,
            threshold_mode == "abs",
            cooldown,
            [float(v) for v in min_lrs],
            eps,
        )

    def step(self, metrics):
        """Records an epoch's metric (a number or a one-element tensor) and
        reduces the lr when it has plateaued."""
        self._impl.step(float(metrics.item() if hasattr(metrics, "item") else metrics))

    def get_last_lr(self):
        """Every group's lr after the last step."""
        return list(self._impl.get_last_lr())

    @property
    def last_epoch(self):
        """How many times step() has run."""
        return self._impl.last_epoch

    @property
    def best(self):
        """The best metric seen so far."""
        return self._impl.best

    @property
    def num_bad_epochs(self):
        """The epochs since the metric last improved (reset after a reduction)."""
        return self._impl.num_bad_epochs

    @property
    def in_cooldown(self):
        """Whether the scheduler is waiting out its cooldown."""
        return self._impl.in_cooldown

    def state_dict(self):
        """The scheduler's position (best, counters, last lrs), as a dict of numbers."""
        return dict(self._impl.state_dict())

    def load_state_dict(self, state_dict):
        """Restores a state_dict() of a ReduceLROnPlateau over the same optimizer."""
        self._impl.load_state_dict(state_dict)


class WarmupCosineLR(LRScheduler):
    """Linear warm-up over warmup_steps, then a cosine decay to
    min_lr_ratio * base_lr at total_steps (stride's; no torch equivalent)."""

    def __init__(self, optimizer, warmup_steps, total_steps, min_lr_ratio=0.1):
        super().__init__(
            optimizer,
            _optim.WarmupCosineLR(_cpp(optimizer), warmup_steps, total_steps, min_lr_ratio),
        )
