"""stride against PyTorch on the same inputs: op values, gradients, printing,
and a module's state_dict through safetensors into torch and back. Skipped,
with a message, when torch is not installed (make venv-torch)."""

import numpy as np
import pytest
import stride
import stride.nn.functional as F
from stride import nn

torch = pytest.importorskip("torch", reason="torch is not installed (make venv-torch)")
TF = torch.nn.functional


def pair(*shape, positive=False, seed=0):
    """The same float64 values as a stride and a torch tensor, both leaves
    that require grad."""
    a = np.random.default_rng(seed).standard_normal(shape)
    if positive:
        a = np.abs(a) + 0.1
    return (
        stride.tensor(a.tolist(), dtype=stride.float64, requires_grad=True),
        torch.tensor(a, dtype=torch.float64, requires_grad=True),
    )


def close(s, t, tol=1e-10):
    if s is None or t is None:  # an unused input: no gradient on either side
        return s is None and t is None
    return np.allclose(s.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


UNARY = [
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "sin",
    "cos",
    "abs",
    "neg",
    "relu",
    "reciprocal",
]


@pytest.mark.parametrize("name", UNARY)
def test_unary_ops_and_their_gradients(name):
    s, t = pair(3, 4, positive=name in ("log", "sqrt", "rsqrt", "reciprocal"))
    ys, yt = getattr(s, name)(), getattr(t, name)()
    assert close(ys, yt)
    ys.sum().backward()
    yt.sum().backward()
    assert close(s.grad, t.grad)


@pytest.mark.parametrize(
    "expr",
    [
        "a + b",
        "a - b",
        "a * b",
        "a / b",
        "a @ b.T",
        "a ** 2",
        "(a * b).sum(1)",
        "a.max(1)[0]",
        "a.mean(0)",
        "a.softmax(-1)",
        "a.log_softmax(1)",
        "a.var(1)",
        "a.transpose(0, 1).reshape(-1)",
        "a[:, 1:] * b[:, :-1]",
        "a.clamp(-0.5, 0.5)",
        "a.where(a > 0, b)",
    ],
)
def test_expressions_and_their_gradients(expr):
    (a, ta), (b, tb) = pair(3, 4, seed=1), pair(3, 4, seed=2)
    ys = eval(expr, {}, {"a": a, "b": b})
    yt = eval(expr, {}, {"a": ta, "b": tb})
    assert close(ys, yt)
    ys.sum().backward()
    yt.sum().backward()
    assert close(a.grad, ta.grad) and close(b.grad, tb.grad)


def test_fused_layer_ops_match_torch_with_gradients():
    (x, tx), (w, tw) = pair(2, 5, 8, seed=3), pair(8, seed=4)
    cases = [
        (F.rms_norm(x, (8,), w, eps=1e-6), TF.rms_norm(tx, (8,), tw, eps=1e-6)),
        (F.layer_norm(x, (8,), w), TF.layer_norm(tx, (8,), tw)),
        (F.silu(x) * x, TF.silu(tx) * tx),
        (F.gelu(x), TF.gelu(tx)),
    ]
    for ys, yt in cases:
        assert close(ys, yt, 1e-9)
        (gs,) = stride.autograd.grad(ys.sum(), [x])
        (gt,) = torch.autograd.grad(yt.sum(), [tx])
        assert close(gs, gt, 1e-9)


def test_cross_entropy_and_attention_match_torch_with_gradients():
    (logits, tlogits) = pair(6, 5, seed=5)
    target = [0, 4, 2, -100, 1, 3]
    loss = F.cross_entropy(logits, stride.tensor(target), label_smoothing=0.1)
    tloss = TF.cross_entropy(tlogits, torch.tensor(target), label_smoothing=0.1)
    assert close(loss, tloss)
    loss.backward()
    tloss.backward()
    assert close(logits.grad, tlogits.grad)

    (q, tq), (k, tk), (v, tv) = (pair(2, 3, 5, 8, seed=s) for s in (6, 7, 8))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    tout = TF.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    assert close(out, tout)
    out.sum().backward()
    tout.sum().backward()
    for s, t in ((q, tq), (k, tk), (v, tv)):
        assert close(s.grad, t.grad)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib, p: lib.optim.AdamW([p], lr=0.1, weight_decay=0.1),
        lambda lib, p: lib.optim.Adam([p], lr=0.1, weight_decay=0.1),
        lambda lib, p: lib.optim.Adam([p], lr=0.1, weight_decay=0.1, decoupled_weight_decay=True),
    ],
    ids=["AdamW", "Adam", "Adam-decoupled"],
)
def test_adam_steps_match_torch(make):
    s, t = pair(4, 3, seed=9)
    opt, topt = make(stride, s), make(torch, t)
    for _ in range(5):
        for o, p in ((opt, s), (topt, t)):
            o.zero_grad()
            (p * p).sum().backward()
            o.step()
    assert close(s, t, 1e-12)
    # The group's hyperparameters as torch names them, decoupled_weight_decay
    # included.
    group, tgroup = opt.param_groups[0], topt.param_groups[0]
    for key in ("lr", "betas", "eps", "weight_decay", "amsgrad", "decoupled_weight_decay"):
        assert group[key] == tgroup[key], key


@pytest.mark.parametrize(
    "data",
    [
        np.arange(6, dtype=np.int32).reshape(2, 3),
        np.ones(3),
        np.float32(1.5),
        np.int64(3),
        np.bool_(True),
        [np.float32(1), np.float32(2)],
        [1, np.float64(2.5)],
        [np.int32(1), 2.5],
        [np.uint8(1), np.int32(2)],
        [np.float16(1), 2],
    ],
)
def test_tensor_infers_pytorch_s_dtype_from_numpy_values(data):
    expected = torch.tensor(data)
    t = stride.tensor(data)
    assert repr(t.dtype).split(".")[1] == repr(expected.dtype).split(".")[1]
    assert t.tolist() == expected.tolist()


@pytest.mark.parametrize(
    "values",
    [
        [1.0, -2.0, 30.0],
        [0.5, -1e-5],
        [1e10, 1.0],
        [3.25],
        [[1.0, 2.0], [3.0, 4.0]],
        [float("nan"), 1.5, float("inf")],
        (np.arange(30.0) / 7).tolist(),
    ],
)
def test_repr_is_pytorch_s(values):
    expected = repr(torch.tensor(values, dtype=torch.float32))
    assert repr(stride.tensor(values)) == expected
    assert repr(stride.tensor([1, -20, 3])) == repr(torch.tensor([1, -20, 3]))


def test_state_dict_round_trips_through_safetensors_into_torch_and_back(tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")

    def stride_model():
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.LayerNorm(8), nn.Linear(8, 2))

    def torch_model():
        tn = torch.nn
        return tn.Sequential(tn.Linear(4, 8), tn.ReLU(), tn.LayerNorm(8), tn.Linear(8, 2))

    model = stride_model()
    path = str(tmp_path / "model.safetensors")
    stride.save(model.state_dict(), path)
    twin = torch_model()
    twin.load_state_dict(safetensors_torch.load_file(path), strict=True)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    y = model(stride.from_numpy(x)).detach().numpy()
    ty = twin(torch.from_numpy(x)).detach().numpy()
    assert np.allclose(y, ty, rtol=1e-6, atol=1e-6)

    with torch.no_grad():
        for p in twin.parameters():
            p.add_(0.5)
    back = str(tmp_path / "back.safetensors")
    safetensors_torch.save_file(twin.state_dict(), back)
    model.load_state_dict(stride.load(back))
    y = model(stride.from_numpy(x)).detach().numpy()
    ty = twin(torch.from_numpy(x)).detach().numpy()
    assert np.allclose(y, ty, rtol=1e-6, atol=1e-6)
