"""stride.optim's RMSprop, Adagrad, Adamax, NAdam, RAdam and learning-rate
schedulers against torch.optim on the same parameters and gradients: 20
steps over two param groups, every option, maximize, the groups' dicts, and
state_dict round trips (stride's own, and torch's loaded into stride).
Skipped when torch is not installed (make venv-torch)."""

import math

import numpy as np
import pytest
import stride

torch = pytest.importorskip("torch", reason="torch is not installed (make venv-torch)")

STEPS = 20
SHAPES = [(4, 3), (5,), (2, 3)]
MISSING = {(4, 1)}  # (step, parameter): no gradient there, so the step skips it


def initial_values():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s) for s in SHAPES]


def gradient(step, i):
    rng = np.random.default_rng(1000 + 10 * step + i)
    return rng.standard_normal(SHAPES[i]) * (0.1 + step % 4)


def make_params(lib, dtype_name):
    dtype = getattr(lib, dtype_name)
    return [lib.tensor(v.tolist(), dtype=dtype, requires_grad=True) for v in initial_values()]


def make_optimizer(lib, name, params, options, group1):
    groups = [{"params": params[:2]}, {"params": params[2:], **group1}]
    extra = {"foreach": False} if lib is torch else {}
    return getattr(lib.optim, name)(groups, **options, **extra)


def run(lib, opt, params, steps, dtype_name):
    dtype = getattr(lib, dtype_name)
    for t in steps:
        for i, p in enumerate(params):
            missing = (t, i) in MISSING
            p.grad = None if missing else lib.tensor(gradient(t, i).tolist(), dtype=dtype)
        opt.step()


def values(t):
    return np.array(t.detach().tolist(), dtype=np.float64)


def assert_close(s_params, t_params, tol):
    for i, (s, t) in enumerate(zip(s_params, t_params)):
        np.testing.assert_allclose(values(s), values(t), rtol=tol, atol=tol, err_msg=f"p{i}")


CASES = {
    "rmsprop": ("RMSprop", {"lr": 0.01}, {}),
    "rmsprop_all": (
        "RMSprop",
        {
            "lr": 0.01,
            "alpha": 0.9,
            "eps": 1e-6,
            "weight_decay": 0.1,
            "momentum": 0.5,
            "centered": True,
            "maximize": True,
        },
        {"lr": 0.02, "centered": False, "momentum": 0.0},
    ),
    "adagrad": ("Adagrad", {"lr": 0.1}, {}),
    "adagrad_all": (
        "Adagrad",
        {
            "lr": 0.1,
            "lr_decay": 0.01,
            "weight_decay": 0.1,
            "initial_accumulator_value": 0.2,
            "eps": 1e-8,
            "maximize": True,
        },
        {"lr": 0.05, "lr_decay": 0.0},
    ),
    "adamax": ("Adamax", {}, {}),
    "adamax_all": (
        "Adamax",
        {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1, "maximize": True},
        {"lr": 0.002, "weight_decay": 0.0},
    ),
    "nadam": ("NAdam", {}, {}),
    "nadam_all": (
        "NAdam",
        {
            "lr": 0.01,
            "betas": (0.8, 0.99),
            "eps": 1e-6,
            "weight_decay": 0.1,
            "momentum_decay": 0.01,
            "maximize": True,
        },
        {"lr": 0.005, "decoupled_weight_decay": True},
    ),
    "radam": ("RAdam", {}, {}),
    "radam_all": (
        "RAdam",
        {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.1, "maximize": True},
        {"lr": 0.005, "decoupled_weight_decay": True},
    ),
}


@pytest.mark.parametrize("dtype_name,tol", [("float64", 1e-12), ("float32", 1e-5)])
@pytest.mark.parametrize("case", sorted(CASES))
def test_steps_match_torch(case, dtype_name, tol):
    name, options, group1 = CASES[case]
    s_params, t_params = make_params(stride, dtype_name), make_params(torch, dtype_name)
    s_opt = make_optimizer(stride, name, s_params, options, group1)
    t_opt = make_optimizer(torch, name, t_params, options, group1)
    run(stride, s_opt, s_params, range(STEPS), dtype_name)
    run(torch, t_opt, t_params, range(STEPS), dtype_name)
    assert_close(s_params, t_params, tol)
    # The groups as torch shows them, under torch's names.
    for s_group, t_group in zip(s_opt.param_groups, t_opt.param_groups):
        for key in s_group:
            if key != "params":
                assert s_group[key] == pytest.approx(t_group[key]), key
    # The state under torch's names, step included.
    for s_p, t_p in zip(s_params, t_params):
        s_state, t_state = s_opt.state[s_p], t_opt.state[t_p]
        assert set(s_state) == set(t_state)
        for key, value in t_state.items():
            np.testing.assert_allclose(
                np.array(
                    s_state[key].tolist() if hasattr(s_state[key], "tolist") else s_state[key]
                ),
                values(value),
                rtol=tol,
                atol=tol,
                err_msg=key,
            )


@pytest.mark.parametrize("case", sorted(CASES))
def test_state_dict_round_trips_and_torch_s_state_dict_loads(case):
    name, options, group1 = CASES[case]
    # stride's own state_dict: 10 steps, save, a new optimizer loads it, 10 more.
    straight = make_params(stride, "float64")
    opt = make_optimizer(stride, name, straight, options, group1)
    run(stride, opt, straight, range(STEPS), "float64")
    resumed = make_params(stride, "float64")
    first = make_optimizer(stride, name, resumed, options, group1)
    run(stride, first, resumed, range(10), "float64")
    saved = first.state_dict()
    assert saved["param_groups"][1]["params"] == [2]
    second = make_optimizer(stride, name, resumed, {}, {})
    second.load_state_dict(saved)
    run(stride, second, resumed, range(10, STEPS), "float64")
    assert_close(resumed, straight, 0)

    # torch's state_dict, with its tensors and extra group keys, into stride.
    t_params = make_params(torch, "float64")
    t_opt = make_optimizer(torch, name, t_params, options, group1)
    run(torch, t_opt, t_params, range(10), "float64")
    from_torch = [
        stride.tensor(values(p).tolist(), dtype=stride.float64, requires_grad=True)
        for p in t_params
    ]
    for p, shape in zip(from_torch, SHAPES):
        assert tuple(p.shape) == shape
    loaded = make_optimizer(stride, name, from_torch, {}, {})
    loaded.load_state_dict(t_opt.state_dict())
    run(stride, loaded, from_torch, range(10, STEPS), "float64")
    run(torch, t_opt, t_params, range(10, STEPS), "float64")
    assert_close(from_torch, t_params, 1e-12)


def test_defaults_and_signatures_are_torch_s():
    import inspect

    for name in ("RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam"):
        s_sig = inspect.signature(getattr(stride.optim, name))
        t_sig = inspect.signature(getattr(torch.optim, name))
        for param in s_sig.parameters.values():
            t_param = t_sig.parameters[param.name]
            assert param.default == t_param.default, (name, param.name)
            assert param.kind == t_param.kind, (name, param.name)
        p = stride.zeros(2, requires_grad=True)
        tp = torch.zeros(2, requires_grad=True)
        s_group = getattr(stride.optim, name)([p]).param_groups[0]
        t_group = getattr(torch.optim, name)([tp]).param_groups[0]
        for key in s_group:
            if key != "params":
                assert s_group[key] == t_group[key], (name, key)


def test_unsupported_flags_raise_naming_the_optimizer():
    p = stride.zeros(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="RMSprop: capturable=True"):
        stride.optim.RMSprop([p], capturable=True)
    with pytest.raises(NotImplementedError, match="NAdam: differentiable=True"):
        stride.optim.NAdam([p], differentiable=True)
    with pytest.raises(ValueError, match=r"\[Adagrad\] param group 0: lr_decay must be >= 0"):
        stride.optim.Adagrad([p], lr_decay=-1)


# ---- schedulers ----

GROUP_LRS = [0.1, 0.01]


def scheduler_pair(make, optimizer="SGD", **opt_kwargs):
    out = []
    for lib in (stride, torch):
        params = [lib.zeros(1, requires_grad=True) for _ in GROUP_LRS]
        groups = [{"params": [p], "lr": lr} for p, lr in zip(params, GROUP_LRS)]
        opt = getattr(lib.optim, optimizer)(groups, lr=1.0, **opt_kwargs)
        out.append((opt, make(lib, opt)))
    return out


SCHEDULES = {
    "multistep": lambda lib, o: lib.optim.lr_scheduler.MultiStepLR(o, [3, 8, 8, 15], gamma=0.5),
    "exponential": lambda lib, o: lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    "constant": lambda lib, o: lib.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=4),
    "constant_defaults": lambda lib, o: lib.optim.lr_scheduler.ConstantLR(o),
    "step": lambda lib, o: lib.optim.lr_scheduler.StepLR(o, 4, gamma=0.3),
    "linear": lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, 0.2, 1.0, 6),
    "cosine": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, 12, eta_min=1e-3),
    "lambda": lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)),
    "warm_restarts": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 5),
    "warm_restarts_mult": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, 2, T_mult=3, eta_min=1e-3
    ),
    "one_cycle": lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=30),
    "one_cycle_linear_three_phase": lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(
        o,
        [0.5, 0.05],
        epochs=5,
        steps_per_epoch=6,
        pct_start=0.2,
        anneal_strategy="linear",
        three_phase=True,
        div_factor=10.0,
        final_div_factor=50.0,
        base_momentum=0.8,
        max_momentum=0.9,
    ),
    "sequential": lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o,
        [
            lib.optim.lr_scheduler.ConstantLR(o, factor=0.1, total_iters=3),
            lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 4, T_mult=2),
            lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.8),
        ],
        milestones=[3, 20],
    ),
}


def momentum_of(opt):
    group = opt.param_groups[0]
    return group["betas"][0] if "betas" in group else group["momentum"]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
@pytest.mark.parametrize("case", sorted(SCHEDULES))
def test_schedules_match_torch(case, optimizer):
    (s_opt, s_sched), (t_opt, t_sched) = scheduler_pair(SCHEDULES[case], optimizer)
    for epoch in range(30):
        assert s_sched.last_epoch == t_sched.last_epoch
        assert s_sched.get_last_lr() == pytest.approx(t_sched.get_last_lr(), rel=1e-12, abs=1e-15)
        for s_group, t_group in zip(s_opt.param_groups, t_opt.param_groups):
            assert s_group["lr"] == pytest.approx(t_group["lr"], rel=1e-12, abs=1e-15)
        assert momentum_of(s_opt) == pytest.approx(momentum_of(t_opt), rel=1e-12), epoch
        s_opt.step()
        t_opt.step()
        s_sched.step()
        t_sched.step()


@pytest.mark.filterwarnings("ignore")
def test_warm_restarts_take_fractional_epochs_like_torch():
    make = SCHEDULES["warm_restarts_mult"]
    (s_opt, s_sched), (t_opt, t_sched) = scheduler_pair(make)
    epochs = [0.0, 0.5, 1.25, 2.0, 3.7, 7.9, 8.0, 8.3, 25.5, 26.0]
    for epoch in epochs + [None, None, 3.0, None]:
        s_sched.step(epoch)
        t_sched.step(epoch)
        assert s_sched.last_epoch == t_sched.last_epoch
        assert s_sched.T_cur == pytest.approx(t_sched.T_cur, abs=1e-12)
        assert s_sched.T_i == t_sched.T_i
        assert s_sched.get_last_lr() == pytest.approx(t_sched.get_last_lr(), rel=1e-12)


def test_one_cycle_past_total_steps_raises():
    opt = stride.optim.SGD([stride.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    sched = stride.optim.lr_scheduler.OneCycleLR(opt, 1.0, total_steps=2)
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="tried to step 3 times"):
        sched.step()
    with pytest.raises(ValueError, match="total_steps, or both epochs and steps_per_epoch"):
        stride.optim.lr_scheduler.OneCycleLR(opt, 1.0)
    adagrad = stride.optim.Adagrad([stride.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match="momentum or betas"):
        stride.optim.lr_scheduler.OneCycleLR(adagrad, 1.0, total_steps=5)


PLATEAUS = [
    {},
    {"mode": "max", "factor": 0.5, "patience": 2},
    {"threshold_mode": "abs", "threshold": 0.3, "patience": 1, "cooldown": 2},
    {"mode": "max", "threshold_mode": "abs", "patience": 0, "min_lr": [0.02, 0.0]},
    {"factor": 0.2, "patience": 1, "min_lr": 0.005, "eps": 1e-3},
]


@pytest.mark.parametrize("kwargs", PLATEAUS, ids=[str(i) for i in range(len(PLATEAUS))])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    metrics = [5.0, 4.0, 4.1, 4.0, 3.9, 3.95, 3.9, 3.9, 4.5, 1.0, 1.0, 1.2, 1.1, 1.0, 0.9] * 3
    make = lambda lib, o: lib.optim.lr_scheduler.ReduceLROnPlateau(o, **kwargs)  # noqa: E731
    (s_opt, s_sched), (t_opt, t_sched) = scheduler_pair(make)
    for i, metric in enumerate(metrics):
        s_sched.step(stride.tensor(metric) if i % 2 else metric)
        t_sched.step(metric)
        assert s_sched.get_last_lr() == pytest.approx(t_sched.get_last_lr(), rel=1e-12), i
        assert s_sched.num_bad_epochs == t_sched.num_bad_epochs, i
        assert s_sched.in_cooldown == t_sched.in_cooldown, i
        assert s_sched.best == t_sched.best
        assert s_sched.last_epoch == t_sched.last_epoch
    for s_group, t_group in zip(s_opt.param_groups, t_opt.param_groups):
        assert s_group["lr"] == pytest.approx(t_group["lr"], rel=1e-12)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("case", ["multistep", "warm_restarts_mult", "one_cycle", "sequential"])
def test_scheduler_state_dict_resumes_exactly(case):
    make = SCHEDULES[case]
    (opt, sched), _ = scheduler_pair(make)
    for _ in range(7):
        opt.step()
        sched.step()
    saved, opt_saved = sched.state_dict(), opt.state_dict()
    (opt2, sched2), _ = scheduler_pair(make)
    sched2.load_state_dict(saved)
    opt2.load_state_dict(opt_saved)
    for _ in range(10):
        sched.step()
        sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr()
        assert sched2.last_epoch == sched.last_epoch


def test_reduce_lr_on_plateau_state_dict_round_trip_and_errors():
    (opt, sched), _ = scheduler_pair(
        lambda lib, o: lib.optim.lr_scheduler.ReduceLROnPlateau(o, patience=1)
    )
    for metric in (3.0, 3.0, 3.0, 2.0, 2.5):
        sched.step(metric)
    saved = sched.state_dict()
    assert saved["best"] == 2.0 and saved["num_bad_epochs"] == 1
    (opt2, sched2), _ = scheduler_pair(
        lambda lib, o: lib.optim.lr_scheduler.ReduceLROnPlateau(o, patience=1)
    )
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(saved)
    sched.step(2.5)
    sched2.step(2.5)
    assert sched2.get_last_lr() == sched.get_last_lr()
    assert sched.get_last_lr() == pytest.approx([0.001, 0.0001])
    with pytest.raises(ValueError, match="mode must be 'min' or 'max'"):
        stride.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="up")
    with pytest.raises(ValueError, match="factor must be < 1"):
        stride.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=2.0)
    assert math.isinf(stride.optim.lr_scheduler.ReduceLROnPlateau(opt).best)
