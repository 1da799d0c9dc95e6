"""stride.amp: autocast and GradScaler with torch.amp's names and semantics
(and their older spellings stride.cuda.amp and stride.cpu.amp)."""

import importlib
import math
import warnings

import pytest
import stride
from stride.amp import GradScaler, autocast

no_gpu = pytest.mark.skipif(stride.cuda.is_available(), reason="a CUDA device is present")


def bf16(t):
    return t.to(stride.bfloat16).to(stride.float32)


# ---- autocast ----------------------------------------------------------------


def test_autocast_multiplies_bfloat16_operands_in_its_block_only():
    a, b = stride.randn(16, 32), stride.randn(32, 8)
    with stride.autocast("cpu"):
        inside = a @ b
        with stride.autocast("cpu", enabled=False):
            nested_off = a @ b
    assert inside.dtype == stride.float32  # Note [Autocast results are float32]
    assert stride.allclose(inside, bf16(a) @ bf16(b), rtol=1e-5, atol=1e-5)
    assert stride.equal(nested_off, a @ b)
    assert not stride._stride._autocast.is_enabled()  # restored after the block


def test_autocast_decorates_a_function():
    a, b = stride.randn(16, 32), stride.randn(32, 8)

    @stride.amp.autocast(device_type="cpu", dtype=stride.bfloat16)
    def product(x, y):
        return x @ y

    assert stride.allclose(product(a, b), bf16(a) @ bf16(b), rtol=1e-5, atol=1e-5)
    assert not stride._stride._autocast.is_enabled()


def test_autocast_blocks_restore_the_switch_per_thread_and_pops_match_pushes():
    with stride.autocast("cpu"):
        assert stride._stride._autocast.is_enabled()
    assert not stride._stride._autocast.is_enabled()
    with pytest.raises(ValueError, match="no autocast block is open"):
        stride._stride._autocast.pop()


def test_a_disabled_autocast_changes_nothing():
    a, b = stride.randn(4, 5), stride.randn(5, 3)
    with stride.autocast("cpu", dtype=stride.bfloat16, enabled=False):
        product = a @ b
    assert stride.equal(product, a @ b)


def test_autocast_in_float32_warns_and_disables_as_pytorch():
    with pytest.warns(UserWarning, match="target dtype is not supported. Disabling autocast"):
        context = autocast("cpu", dtype=stride.float32)
    with context:
        pass
    assert context._enabled is False


def test_autocast_in_float16_is_refused_with_the_fix():
    with pytest.raises(NotImplementedError, match=r"dtype=float16.*dtype=stride\.bfloat16"):
        autocast("cpu", dtype=stride.float16)


@no_gpu
def test_cuda_autocast_without_a_gpu_warns_and_disables_as_pytorch():
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling autocast"):
        context = autocast("cuda", dtype=stride.bfloat16)
    with context:
        product = stride.ones(2, 2) @ stride.ones(2, 2)
    assert stride.equal(product, stride.full((2, 2), 2.0))


def test_autocast_arguments_are_checked():
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        autocast("tpu")
    with pytest.raises(ValueError, match="device_type"):
        autocast(stride.device("cpu"))
    with pytest.raises(TypeError, match="requires a callable"):
        autocast("cpu", enabled=False)(3)


def test_autocast_defaults_are_pytorch_s():
    assert autocast("cpu", enabled=False).fast_dtype == stride.bfloat16
    assert autocast("cuda", enabled=False).fast_dtype == stride.float16
    assert stride.autocast is autocast
    assert stride.amp.is_autocast_available("cpu")
    assert not stride.amp.is_autocast_available("mps")


def test_the_older_spellings_warn_as_pytorch_and_are_importable():
    cuda_amp = importlib.import_module("stride.cuda.amp")
    assert cuda_amp is stride.cuda.amp
    with pytest.warns(FutureWarning, match=r"stride\.amp\.autocast\('cpu', args\.\.\.\)"):
        context = stride.cpu.amp.autocast(enabled=False)
    assert isinstance(context, autocast) and context.fast_dtype == stride.bfloat16
    with pytest.warns(FutureWarning, match=r"stride\.amp\.GradScaler\('cuda', args\.\.\.\)"):
        scaler = stride.cuda.amp.GradScaler(enabled=False)
    assert isinstance(scaler, GradScaler) and not scaler.is_enabled()


# ---- GradScaler ----------------------------------------------------------------


def model_and_optimizer(lr=0.1):
    model = stride.nn.Linear(3, 1)
    return model, stride.optim.SGD(model.parameters(), lr=lr)


def backward(model, scaler, scale_input=1.0):
    loss = model(stride.ones(2, 3) * scale_input).sum()
    scaler.scale(loss).backward()
    return loss


def test_a_disabled_scaler_is_a_no_op():
    model, optimizer = model_and_optimizer()
    scaler = GradScaler("cpu", enabled=False)
    loss = model(stride.ones(2, 3)).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    before = model.weight.detach().clone()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    assert not stride.equal(model.weight, before)  # optimizer.step() ran
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {}


@no_gpu
def test_a_cuda_scaler_without_a_gpu_warns_and_disables_as_pytorch():
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling"):
        scaler = GradScaler()
    assert not scaler.is_enabled()


def test_scaling_multiplies_the_loss_and_unscale_divides_the_gradients():
    model, optimizer = model_and_optimizer()
    scaler = GradScaler("cpu", init_scale=1024.0)
    loss = model(stride.ones(2, 3)).sum()
    assert stride.equal(scaler.scale(loss), loss * 1024.0)
    assert [t.item() for t in scaler.scale([loss, (loss,)])[1]] == [loss.item() * 1024.0]
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    assert stride.allclose(model.weight.grad, stride.full((1, 3), 2.0))
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(optimizer)


def test_a_step_with_inf_gradients_is_skipped_and_the_scale_backs_off():
    model, optimizer = model_and_optimizer()
    scaler = GradScaler("cpu", init_scale=4.0, growth_interval=2)
    before = model.weight.detach().clone()
    backward(model, scaler, scale_input=math.inf)
    assert scaler.step(optimizer) is None
    scaler.update()
    assert stride.equal(model.weight, before) and scaler.get_scale() == 2.0
    for expected in (2.0, 4.0):  # grows after growth_interval clean steps
        optimizer.zero_grad()
        backward(model, scaler)
        scaler.step(optimizer)
        scaler.update()
        assert scaler.get_scale() == expected
    assert not stride.equal(model.weight, before)


def test_the_iteration_order_is_enforced():
    model, optimizer = model_and_optimizer()
    scaler = GradScaler("cpu")
    with pytest.raises(RuntimeError, match="no step"):
        scaler.update()
    backward(model, scaler)
    scaler.step(optimizer)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(optimizer)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(optimizer)
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(optimizer, closure=lambda: None)


def test_state_dict_round_trips_with_pytorch_s_keys():
    scaler = GradScaler("cpu", init_scale=8.0, growth_interval=7)
    state = scaler.state_dict()
    assert state == {
        "scale": 8.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 7,
        "_growth_tracker": 0,
    }
    other = GradScaler("cpu")
    other.load_state_dict(dict(state, scale=32.0, _growth_tracker=3))
    assert other.get_scale() == 32.0 and other.get_growth_interval() == 7
    with pytest.raises(RuntimeError, match="disabled instance"):
        other.load_state_dict({})
    with pytest.raises(ValueError, match="growth_factor must be > 1.0"):
        GradScaler("cpu", growth_factor=1.0)


def test_the_scale_follows_pytorch_s_over_skips_and_growth():
    torch = pytest.importorskip("torch")
    inputs = [1.0, math.inf, 1.0, 1.0, math.nan, 1.0, 1.0, 1.0]
    ours, theirs = (
        GradScaler("cpu", 3.0, 2.5, 0.25, 2),
        torch.amp.GradScaler("cpu", 3.0, 2.5, 0.25, 2),
    )
    model, optimizer = model_and_optimizer()
    torch_model = torch.nn.Linear(3, 1)
    torch_optimizer = torch.optim.SGD(torch_model.parameters(), lr=0.1)
    for x in inputs:
        optimizer.zero_grad()
        backward(model, ours, x)
        ours.step(optimizer)
        ours.update()
        torch_optimizer.zero_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs.scale(torch_model(torch.ones(2, 3) * x).sum()).backward()
            theirs.step(torch_optimizer)
            theirs.update()
        assert ours.get_scale() == theirs.get_scale()
    assert ours.state_dict() == theirs.state_dict()
