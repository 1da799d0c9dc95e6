"""stride.nn from Python: Modules subclassed as in PyTorch, the layers and the
functional ops."""

import math
from collections import OrderedDict

import numpy as np
import pytest
import stride
import stride.nn.functional as F
from stride import nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.scale = nn.Parameter(stride.ones(3))
        self.register_buffer("offset", stride.zeros(3))
        self.register_buffer("scratch", stride.zeros(2), persistent=False)
        self.not_registered = stride.zeros(1)

    def forward(self, x):
        return self.fc(x) * self.scale + self.offset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(OrderedDict([("first", Scaled()), ("act", nn.ReLU())]))
        self.heads = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 2, bias=False)])
        self.extra = nn.ModuleDict({"norm": nn.LayerNorm(2)})

    def forward(self, x):
        h = self.body(x)
        return self.extra["norm"](self.heads[0](h) + self.heads[1](h))


def test_attributes_register_parameters_buffers_and_modules():
    net = Net()
    names = [name for name, _ in net.named_parameters()]
    # A module's own parameters come before its children's, as in PyTorch.
    assert names == [
        "body.first.scale",
        "body.first.fc.weight",
        "body.first.fc.bias",
        "heads.0.weight",
        "heads.0.bias",
        "heads.1.weight",
        "extra.norm.weight",
        "extra.norm.bias",
    ]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    assert [n for n, _ in net.named_buffers()] == ["body.first.offset", "body.first.scratch"]
    # state_dict: each module's parameters, then its persistent buffers, then its children.
    assert list(net.state_dict()) == names[:1] + ["body.first.offset"] + names[1:]
    assert [n for n, _ in net.named_modules()][:4] == ["", "body", "body.first", "body.first.fc"]
    assert net.get_parameter("heads.0.bias") is net.heads[0].bias
    assert net.heads[1].bias is None
    assert "not_registered" not in dict(net.named_buffers())


def test_shared_parameters_are_listed_once():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3)
            self.b = self.a

    assert len(list(Tied().parameters())) == 2
    assert len(list(Tied().named_parameters(remove_duplicate=False))) == 4


def test_call_runs_forward_and_hooks_in_order():
    model = nn.Linear(3, 2)
    seen = []
    pre = model.register_forward_pre_hook(lambda m, args: seen.append("pre") or (args[0] * 2,))
    model.register_forward_hook(lambda m, args, out: seen.append("post") or out + 1)
    x = stride.ones(1, 3)
    y = model(x)
    expected = F.linear(x * 2, model.weight, model.bias) + 1
    assert seen == ["pre", "post"]
    assert stride.allclose(y, expected)
    pre.remove()
    assert stride.allclose(model(x), F.linear(x, model.weight, model.bias) + 1)


def test_full_backward_hook_sees_and_replaces_grad_input():
    model = nn.Linear(3, 2)
    x = stride.randn(4, 3, requires_grad=True)
    captured = {}

    def hook(module, grad_input, grad_output):
        captured["in"], captured["out"] = grad_input, grad_output
        return (grad_input[0] * 0,)

    model.register_full_backward_hook(hook)
    model(x).sum().backward()
    assert captured["out"][0].shape == (4, 2)
    assert stride.allclose(captured["in"][0], stride.ones(4, 2) @ model.weight)
    assert x.grad.abs().sum().item() == 0  # replaced
    assert model.weight.grad is not None


def test_full_backward_hook_runs_when_the_input_needs_no_grad():
    model = nn.Linear(3, 2)
    calls = []
    model.register_full_backward_hook(lambda m, gi, go: calls.append((gi, go)))
    model(stride.randn(2, 3)).sum().backward()
    assert len(calls) == 1 and calls[0][0] == (None,)


def test_state_dict_round_trip_and_strictness():
    a, b = Net(), Net()
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    x = stride.randn(5, 4)
    assert stride.allclose(a(x), b(x))
    partial = OrderedDict(a.state_dict())
    del partial["heads.0.bias"]
    partial["unused"] = stride.zeros(1)
    with pytest.raises(RuntimeError, match='Missing key.*"heads.0.bias"'):
        b.load_state_dict(partial)
    result = b.load_state_dict(partial, strict=False)
    assert result.missing_keys == ["heads.0.bias"] and result.unexpected_keys == ["unused"]
    wrong = a.state_dict()
    wrong["heads.0.weight"] = stride.zeros(5, 5)
    with pytest.raises(RuntimeError, match="size mismatch for heads.0.weight"):
        b.load_state_dict(wrong)


def test_load_state_dict_copies_in_place_so_optimizers_keep_their_parameters():
    model = nn.Linear(2, 2)
    weight = model.weight
    model.load_state_dict({"weight": stride.ones(2, 2), "bias": stride.zeros(2)})
    assert model.weight is weight and weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_train_eval_zero_grad_requires_grad_and_to():
    net = Net()
    net.eval()
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net(stride.randn(2, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    weight = net.heads[0].weight
    net.to(stride.float64)
    assert net.heads[0].weight is weight and weight.dtype == stride.float64
    assert net.get_buffer("body.first.offset").dtype == stride.float64
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_assignment_errors_are_pytorch_s():
    model = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign"):
        model.weight = stride.zeros(2, 2)
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = model.missing
    with pytest.raises(KeyError):
        model.register_parameter("a.b", None)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(stride.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(stride.zeros(1))


def test_sequential_from_ordered_dict_and_containers():
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
    assert [n for n, _ in seq.named_children()] == ["fc", "act"]
    assert isinstance(seq[0], nn.Linear) and isinstance(seq[-1], nn.ReLU)
    assert len(seq[1:]) == 1
    seq.append(nn.Linear(3, 1))
    assert seq(stride.ones(4, 2)).shape == (4, 1)
    layers = nn.ModuleList(nn.Linear(2, 2) for _ in range(3))
    layers.insert(0, nn.Identity())
    assert [n for n, _ in layers.named_children()] == ["0", "1", "2", "3"]
    assert isinstance(layers[0], nn.Identity)
    d = nn.ModuleDict({"a": nn.ReLU()})
    d["b"] = nn.SiLU()
    assert list(d.keys()) == ["a", "b"] and "b" in d


def test_repr_matches_pytorch_layout():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    assert repr(seq) == (
        "Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n)"
    )
    assert repr(nn.Parameter(stride.zeros(1))).startswith("Parameter containing:\ntensor(")


def test_layers_initialise_as_the_cpp_layers_and_pytorch_do():
    stride.manual_seed(3)
    linear = nn.Linear(16, 4)
    bound = 1 / math.sqrt(16)
    assert linear.weight.abs().max().item() <= bound
    assert linear.bias.abs().max().item() <= bound
    emb = nn.Embedding(1000, 8)
    assert abs(emb.weight.mean().item()) < 0.05
    assert abs(emb.weight.std().item() - 1) < 0.05
    # The same seed, the same weights.
    stride.manual_seed(3)
    assert stride.allclose(nn.Linear(16, 4).weight, linear.weight)


def test_batchnorm_tracks_running_stats_like_pytorch():
    bn = nn.BatchNorm1d(3).double()
    x = stride.randn(6, 3, dtype=stride.float64) * 2 + 1
    y = bn(x)
    mean, var = x.mean(0), x.var(0, correction=0)
    assert stride.allclose(y, (x - mean) / (var + 1e-5).sqrt())
    assert stride.allclose(bn.running_mean, mean * 0.1)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    y = bn(x)
    expected = (x - bn.running_mean) / (bn.running_var + 1e-5).sqrt()
    assert stride.allclose(y, expected)
    assert list(bn.state_dict()) == [
        "weight",
        "bias",
        "running_mean",
        "running_var",
        "num_batches_tracked",
    ]


def test_dropout_follows_training_mode():
    drop = nn.Dropout(0.5)
    x = stride.ones(1000)
    y = drop(x)
    assert set(np.unique(y.numpy()).tolist()) <= {0.0, 2.0}
    drop.eval()
    assert stride.allclose(drop(x), x)


def test_functional_fused_ops_match_composed_references():
    x = stride.randn(2, 5, 8, dtype=stride.float64)
    w = stride.randn(8, dtype=stride.float64)
    ref = x / (x.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt() * w
    assert stride.allclose(F.rms_norm(x, (8,), w, eps=1e-6), ref)
    gate, up = stride.randn(3, 4), stride.randn(3, 4)
    assert stride.allclose(F.swiglu(gate, up), F.silu(gate) * up, atol=1e-6)
    logits, target = stride.randn(6, 5), stride.tensor([0, 1, 2, 3, 4, 0])
    composed = -F.log_softmax(logits, 1).gather(1, target.view(-1, 1)).mean()
    assert stride.allclose(F.cross_entropy(logits, target), composed, atol=1e-6)
    q, k, v = (stride.randn(2, 3, 4, 8) for _ in range(3))
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(8)
    mask = stride.ones(4, 4, dtype=stride.bool).tril()
    probs = F.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert stride.allclose(out, probs @ v, atol=1e-5)
    rotated = F.rope(stride.randn(2, 4, 8), position_offset=0)
    assert rotated.shape == (2, 4, 8)


def test_functional_errors_are_python_exceptions():
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(stride.randn(2, 3), stride.tensor([0, 1]), reduction="avg")
    with pytest.raises(IndexError):
        F.cross_entropy(stride.randn(2, 3), stride.tensor([0, 7]))
    with pytest.raises(ValueError, match="rms_norm.*trailing dims"):
        F.rms_norm(stride.randn(2, 3), (3, 2))
    with pytest.raises(ValueError, match="cross_entropy.*weight.*per class"):
        F.cross_entropy(stride.randn(2, 3), stride.tensor([0, 1]), stride.ones(4))
    with pytest.raises(TypeError):
        F.linear("x", stride.ones(2, 2))


def test_init_returns_the_same_tensor_and_fills_in_place():
    w = nn.Parameter(stride.empty(3, 4))
    assert nn.init.zeros_(w) is w and w.abs().sum().item() == 0
    nn.init.xavier_uniform_(w)
    bound = math.sqrt(6 / 7)
    assert w.abs().max().item() <= bound and w.requires_grad
    assert nn.init.calculate_gain("relu") == pytest.approx(math.sqrt(2))


def test_clip_grad_norm_scales_all_gradients_together():
    a = nn.Parameter(stride.zeros(2))
    b = nn.Parameter(stride.zeros(1))
    a.grad, b.grad = stride.tensor([3.0, 0.0]), stride.tensor([4.0])
    total = nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    assert a.grad.tolist() == pytest.approx([0.6, 0.0], rel=1e-5)
    assert b.grad.tolist() == pytest.approx([0.8], rel=1e-5)
