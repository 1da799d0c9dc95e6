"""stride.optim from Python: PyTorch's surface over the C++ optimizers."""

import math

import pytest
import stride
from stride import nn


def quadratic_step(opt, params):
    opt.zero_grad()
    loss = sum(((p - 1) ** 2).sum() for p in params)
    loss.backward()
    opt.step()
    return loss


def test_adam_updates_a_transposed_parameter_exactly_like_its_contiguous_copy():
    # The seed bug: Adam silently skipping non-contiguous parameters.
    base = stride.randn(4, 3, dtype=stride.float64)
    transposed = nn.Parameter(base.T.contiguous().T)  # (4, 3), column-major
    assert not transposed.is_contiguous()
    contiguous = nn.Parameter(base.clone())
    opts = [stride.optim.Adam([p], lr=0.1) for p in (transposed, contiguous)]
    for _ in range(5):
        for opt, p in zip(opts, (transposed, contiguous)):
            quadratic_step(opt, [p])
    assert not stride.allclose(transposed, base)  # it moved
    assert transposed.tolist() == contiguous.tolist()  # bit for bit


def test_param_groups_are_dicts_that_write_through():
    a, b = nn.Parameter(stride.zeros(2)), nn.Parameter(stride.zeros(3))
    opt = stride.optim.AdamW(
        [{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, betas=(0.8, 0.9)
    )
    groups = opt.param_groups
    assert groups[0]["lr"] == 0.1 and groups[1]["lr"] == 0.5
    assert groups[0]["betas"] == (0.8, 0.9)
    assert groups[0]["weight_decay"] == 0.01 and groups[0]["amsgrad"] is False
    assert groups[1]["params"][0] is b
    for group in opt.param_groups:
        group["lr"] *= 2
    assert [g["lr"] for g in opt.param_groups] == [0.2, 1.0]
    assert set(groups[0]) >= {"params", "lr", "betas", "eps", "weight_decay", "amsgrad"}


def test_sgd_matches_the_formula_and_step_takes_a_closure():
    p = nn.Parameter(stride.tensor([2.0], dtype=stride.float64))
    opt = stride.optim.SGD([p], lr=0.1, momentum=0.9)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 4.0
    assert p.item() == pytest.approx(2.0 - 0.1 * 4.0)
    opt.step(closure)
    buf = 0.9 * 4.0 + 2 * 1.6
    assert p.item() == pytest.approx(1.6 - 0.1 * buf)


def test_state_dict_round_trip_continues_identically():
    def make():
        stride.manual_seed(0)
        model = nn.Linear(3, 2)
        return model, stride.optim.Adam(model.parameters(), lr=0.05)

    model, opt = make()
    x = stride.randn(4, 3)
    for _ in range(3):
        quadratic_step(opt, [model(x)])
    state = opt.state_dict()
    assert sorted(state["state"]) == [0, 1]
    assert set(state["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    assert state["param_groups"][0]["params"] == [0, 1]

    clone, clone_opt = make()
    clone.load_state_dict(model.state_dict())
    clone_opt.load_state_dict(state)
    for m, o in ((model, opt), (clone, clone_opt)):
        quadratic_step(o, [m(x)])
    assert model.weight.tolist() == clone.weight.tolist()


def test_load_state_dict_of_another_optimizer_is_refused():
    p = nn.Parameter(stride.zeros(2))
    sgd = stride.optim.SGD([p], lr=0.1)
    adam = stride.optim.Adam([p])
    with pytest.raises(ValueError):
        adam.load_state_dict(sgd.state_dict())


def test_bad_arguments_raise_python_exceptions():
    p = nn.Parameter(stride.zeros(2))
    with pytest.raises(ValueError):
        stride.optim.Adam([p], lr=-1.0)
    with pytest.raises(ValueError, match="empty"):
        stride.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError):
        stride.optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError):
        stride.optim.SGD([p, p], lr=0.1)  # a parameter listed twice


def test_schedulers_set_the_groups_lr():
    p = nn.Parameter(stride.zeros(1))
    opt = stride.optim.SGD([p], lr=1.0)
    sched = stride.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(5):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25]
    assert sched.get_last_lr() == [0.25]  # last_epoch 5: 0.5 ** (5 // 2)

    opt = stride.optim.SGD([p], lr=1.0)
    cosine = stride.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    for _ in range(2):
        cosine.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.5)

    opt = stride.optim.SGD([p], lr=2.0)
    lam = stride.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1 / (epoch + 1))
    lam.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(1.0)
    assert lam.state_dict()["last_epoch"] == 1

    opt = stride.optim.SGD([p], lr=1.0)
    warm = stride.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=2)
    cos = stride.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    seq = stride.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[2])
    seen = []
    for _ in range(4):
        seen.append(opt.param_groups[0]["lr"])
        seq.step()
    assert seen[0] == pytest.approx(0.1) and seen[2] == pytest.approx(1.0)
    assert math.isfinite(seen[3])


def test_add_param_group_and_zero_grad():
    a, b = nn.Parameter(stride.zeros(2)), nn.Parameter(stride.zeros(2))
    opt = stride.optim.SGD([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert opt.param_groups[1]["lr"] == 0.01
    (a.sum() + b.sum()).backward()
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None and b.grad is None
