"""nn.MultiheadAttention, nn.TransformerEncoderLayer, nn.RNN, nn.LSTM, nn.GRU and the cells
against torch.nn: the same weights (loaded from the torch module's
state_dict under PyTorch's names), the same inputs, outputs and gradients of
inputs and weights to float64 rounding. Skipped when torch is not installed
(make venv-torch)."""

import numpy as np
import pytest
import stride
from stride import nn

torch = pytest.importorskip("torch", reason="torch is not installed (make venv-torch)")


def to_stride(t, requires_grad=False):
    return stride.tensor(
        t.detach().numpy().tolist(), dtype=stride.float64, requires_grad=requires_grad
    )


def copy_weights(module, t_module):
    """torch's parameters into the stride module, by name; the names must
    be the same set."""
    t_params = dict(t_module.named_parameters())
    s_params = dict(module.named_parameters())
    assert sorted(s_params) == sorted(t_params)
    module.load_state_dict({k: to_stride(v) for k, v in t_params.items()})


def close(s, t, tol=1e-10):
    return np.allclose(np.array(s.detach().tolist()), t.detach().numpy(), rtol=tol, atol=tol)


def inputs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for shape in shapes:
        a = rng.standard_normal(shape)
        out.append(
            (
                stride.tensor(a.tolist(), dtype=stride.float64, requires_grad=True),
                torch.tensor(a, dtype=torch.float64, requires_grad=True),
            )
        )
    return out


def check_backward(s_out, t_out, s_inputs, t_inputs, module, t_module):
    rng = np.random.default_rng(99)
    weight = rng.standard_normal(tuple(t_out.shape))
    (s_out * stride.tensor(weight.tolist(), dtype=stride.float64)).sum().backward()
    (t_out * torch.tensor(weight)).sum().backward()
    for s, t in zip(s_inputs, t_inputs):
        assert close(s.grad, t.grad)
    t_params = dict(t_module.named_parameters())
    for name, p in module.named_parameters():
        assert close(p.grad, t_params[name].grad), name


MHA_CASES = {
    "default": ({}, {}),
    "batch_first_no_bias": ({"batch_first": True, "bias": False}, {}),
    "kdim_vdim": ({"kdim": 5, "vdim": 3}, {}),
    "masks_per_head_weights": (
        {"batch_first": True},
        {"key_padding_mask": True, "attn_mask": "bool", "average_attn_weights": False},
    ),
    "float_mask_no_weights": ({}, {"attn_mask": "float", "need_weights": False}),
    "bias_kv_zero_attn_masks": (
        {"add_bias_kv": True, "add_zero_attn": True},
        {"key_padding_mask": True, "attn_mask": "float"},
    ),
}


@pytest.mark.parametrize("case", sorted(MHA_CASES))
def test_multihead_attention_matches_torch(case):
    ctor, call = MHA_CASES[case]
    e, h, n, tgt, src = 8, 2, 3, 4, 5
    torch.manual_seed(0)
    t_mha = torch.nn.MultiheadAttention(e, h, dtype=torch.float64, **ctor)
    mha = nn.MultiheadAttention(e, h, dtype=stride.float64, **ctor)
    copy_weights(mha, t_mha)
    kdim, vdim = ctor.get("kdim", e), ctor.get("vdim", e)
    bf = ctor.get("batch_first", False)
    shape = (lambda length, d: (n, length, d)) if bf else (lambda length, d: (length, n, d))
    (q, tq), (k, tk), (v, tv) = inputs(shape(tgt, e), shape(src, kdim), shape(src, vdim))
    s_kw, t_kw = {}, {}
    if call.get("key_padding_mask"):
        pad = np.zeros((n, src), dtype=bool)
        pad[0, -2:] = True
        s_kw["key_padding_mask"] = stride.tensor(pad.tolist())
        t_kw["key_padding_mask"] = torch.tensor(pad)
    if call.get("attn_mask") == "bool":
        causal = np.triu(np.ones((tgt, src), dtype=bool), 1)
        s_kw["attn_mask"], t_kw["attn_mask"] = stride.tensor(causal.tolist()), torch.tensor(causal)
    elif call.get("attn_mask") == "float":
        m = np.random.default_rng(3).standard_normal((n * h, tgt, src))
        s_kw["attn_mask"] = stride.tensor(m.tolist(), dtype=stride.float64)
        t_kw["attn_mask"] = torch.tensor(m)
    for key in ("need_weights", "average_attn_weights"):
        if key in call:
            s_kw[key] = t_kw[key] = call[key]
    out, weights = mha(q, k, v, **s_kw)
    t_out, t_weights = t_mha(tq, tk, tv, **t_kw)
    assert tuple(out.shape) == tuple(t_out.shape)
    assert close(out, t_out)
    if t_weights is None:
        assert weights is None
    else:
        assert close(weights, t_weights)
    check_backward(out, t_out, [q, k, v], [tq, tk, tv], mha, t_mha)


def test_multihead_attention_unbatched_and_errors():
    torch.manual_seed(1)
    t_mha = torch.nn.MultiheadAttention(6, 3, dtype=torch.float64)
    mha = nn.MultiheadAttention(6, 3, dtype=stride.float64)
    copy_weights(mha, t_mha)
    ((x, tx),) = inputs((4, 6))
    out, weights = mha(x, x, x)
    t_out, t_weights = t_mha(tx, tx, tx)
    assert close(out, t_out) and close(weights, t_weights)
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiheadAttention(7, 2)
    with pytest.raises(RuntimeError, match="is_causal needs attn_mask"):
        mha(x, x, x, is_causal=True)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_layer_matches_torch(norm_first, activation):
    torch.manual_seed(2)
    kw = {"dim_feedforward": 16, "activation": activation, "norm_first": norm_first}
    t_layer = torch.nn.TransformerEncoderLayer(8, 2, batch_first=True, dtype=torch.float64, **kw)
    layer = nn.TransformerEncoderLayer(8, 2, batch_first=True, dtype=stride.float64, **kw)
    copy_weights(layer, t_layer)
    layer.eval()
    t_layer.eval()
    ((x, tx),) = inputs((2, 5, 8))
    mask = np.triu(np.ones((5, 5), dtype=bool), 1)
    pad = np.zeros((2, 5), dtype=bool)
    pad[1, -1] = True
    out = layer(
        x, src_mask=stride.tensor(mask.tolist()), src_key_padding_mask=stride.tensor(pad.tolist())
    )
    t_out = t_layer(tx, src_mask=torch.tensor(mask), src_key_padding_mask=torch.tensor(pad))
    assert close(out, t_out)
    # Training mode with dropout 0 takes torch's non-fast path: gradients too.
    layer.train()
    t_layer.train()
    for m in (layer, t_layer):
        for name in ("dropout", "dropout1", "dropout2"):
            getattr(m, name).p = 0.0
        m.self_attn.dropout = 0.0
    out, t_out = layer(x), t_layer(tx)
    assert close(out, t_out)
    check_backward(out, t_out, [x], [tx], layer, t_layer)


RNN_CASES = {
    "one_layer": {},
    "two_layers_batch_first": {"num_layers": 2, "batch_first": True},
    "bidirectional_no_bias": {"bidirectional": True, "bias": False},
    "deep_bidirectional": {"num_layers": 2, "bidirectional": True},
}


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("case", sorted(RNN_CASES))
def test_recurrent_layers_match_torch(kind, case):
    kw = RNN_CASES[case]
    torch.manual_seed(3)
    t_rnn = getattr(torch.nn, kind)(4, 5, dtype=torch.float64, **kw)
    rnn = getattr(nn, kind)(4, 5, dtype=stride.float64, **kw)
    copy_weights(rnn, t_rnn)
    assert [n for n, _ in rnn.named_parameters()] == [n for n, _ in t_rnn.named_parameters()]
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    shape = (2, 6, 4) if kw.get("batch_first") else (6, 2, 4)
    (x, tx), (h0, th0), (c0, tc0) = inputs(shape, (layers, 2, 5), (layers, 2, 5), seed=4)
    if kind == "LSTM":
        out, (h, c) = rnn(x, (h0, c0))
        t_out, (th, tc) = t_rnn(tx, (th0, tc0))
        assert close(c, tc)
        grads_of = [x, h0, c0], [tx, th0, tc0]
    else:
        out, h = rnn(x, h0)
        t_out, th = t_rnn(tx, th0)
        grads_of = [x, h0], [tx, th0]
    assert close(out, t_out) and close(h, th)
    check_backward(out, t_out, *grads_of, rnn, t_rnn)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_layers_unbatched_and_zero_state(kind):
    torch.manual_seed(5)
    t_rnn = getattr(torch.nn, kind)(3, 4, dtype=torch.float64)
    rnn = getattr(nn, kind)(3, 4, dtype=stride.float64)
    copy_weights(rnn, t_rnn)
    ((x, tx),) = inputs((7, 3))
    out, t_out = rnn(x)[0], t_rnn(tx)[0]
    assert tuple(out.shape) == (7, 4)
    assert close(out, t_out)
    with pytest.raises(ValueError, match="input_size 3"):
        rnn(stride.zeros(7, 2, dtype=stride.float64))


# ---- nn.RNN, the cells and torch's top-level recurrent ops (src/nn/rnn.cpp) ----
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
@pytest.mark.parametrize("case", sorted(RNN_CASES))
def test_rnn_matches_torch(nonlinearity, case):
    kw = RNN_CASES[case]
    torch.manual_seed(6)
    t_rnn = torch.nn.RNN(4, 5, nonlinearity=nonlinearity, dtype=torch.float64, **kw)
    rnn = nn.RNN(4, 5, nonlinearity=nonlinearity, dtype=stride.float64, **kw)
    copy_weights(rnn, t_rnn)
    assert [n for n, _ in rnn.named_parameters()] == [n for n, _ in t_rnn.named_parameters()]
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    shape = (2, 6, 4) if kw.get("batch_first") else (6, 2, 4)
    (x, tx), (h0, th0) = inputs(shape, (layers, 2, 5), seed=7)
    (out, h), (t_out, th) = rnn(x, h0), t_rnn(tx, th0)
    assert close(out, t_out) and close(h, th)
    check_backward(out, t_out, [x, h0], [tx, th0], rnn, t_rnn)


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_torch(kind, bias):
    kw = {"nonlinearity": "relu"} if kind == "RNNCell" and not bias else {}
    torch.manual_seed(8)
    t_cell = getattr(torch.nn, kind)(4, 5, bias=bias, dtype=torch.float64, **kw)
    cell = getattr(nn, kind)(4, 5, bias=bias, dtype=stride.float64, **kw)
    copy_weights(cell, t_cell)
    (x, tx), (h0, th0), (c0, tc0) = inputs((3, 4), (3, 5), (3, 5), seed=9)
    if kind == "LSTMCell":
        (h, c), (th, tc) = cell(x, (h0, c0)), t_cell(tx, (th0, tc0))
        assert close(c, tc)
        grads_of = [x, h0, c0], [tx, th0, tc0]
    else:
        h, th = cell(x, h0), t_cell(tx, th0)
        grads_of = [x, h0], [tx, th0]
    assert close(h, th)
    check_backward(h, th, *grads_of, cell, t_cell)
    # Unbatched, from the default zero state.
    ((v, tv),) = inputs((4,), seed=10)
    out, t_out = cell(v), t_cell(tv)
    if kind == "LSTMCell":
        assert close(out[1], t_out[1])
        out, t_out = out[0], t_out[0]
    assert tuple(out.shape) == (5,) and close(out, t_out)


def test_top_level_recurrent_ops_match_torch():
    torch.manual_seed(11)
    t_lstm = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, dtype=torch.float64)
    params = [to_stride(p) for p in t_lstm._flat_weights]
    (x, tx), (h0, th0), (c0, tc0) = inputs((5, 2, 3), (4, 2, 4), (4, 2, 4), seed=12)
    args = (True, 2, 0.0, False, True, False)
    got = stride.lstm(x, (h0, c0), params, *args)
    want = torch.lstm(tx, (th0, tc0), t_lstm._flat_weights, *args)
    assert all(close(s, t) for s, t in zip(got, want))
    t_gru = torch.nn.GRUCell(3, 4, dtype=torch.float64)
    weights = [t_gru.weight_ih, t_gru.weight_hh, t_gru.bias_ih, t_gru.bias_hh]
    got = stride.gru_cell(x[0], h0[0], *[to_stride(w) for w in weights])
    assert close(got, torch.gru_cell(tx[0], th0[0], *weights))


def test_recurrent_errors_name_the_argument():
    with pytest.raises(NotImplementedError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(RuntimeError, match=r"\[gru_cell\] hx must be \(2, 4\)"):
        nn.GRUCell(3, 4)(stride.zeros(2, 3), stride.zeros(3, 4))
