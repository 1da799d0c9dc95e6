"""RNN, LSTM and GRU (torch.nn.RNN / LSTM / GRU) and their cells (RNNCell,
LSTMCell, GRUCell), over the C++ recurrent ops (src/nn/rnn.cpp): a layer's
input projections are one matmul over every time step, the steps are
composed of stride's ops, so autograd gives the gradients through time.
PyTorch's parameter names, shapes, gate order (LSTM i, f, g, o; GRU r, z,
n), default initialisation and (output, h_n) layout, so a torch state_dict
loads and gives the same outputs and gradients. PackedSequence and LSTM's
proj_size are not supported.

The ops themselves are torch's top-level functions of the same names
(stride.lstm, stride.gru_cell, ...), with ATen's arguments."""

import math

from .. import _stride
from .._stride import _nn
from . import init
from .layers import _factory_kwargs, _int_arg
from .module import Module
from .parameter import Parameter

# torch.rnn_tanh_cell, torch.lstm, ...: one step, and whole sequences.
rnn_tanh_cell = _nn.rnn_tanh_cell
rnn_relu_cell = _nn.rnn_relu_cell
lstm_cell = _nn.lstm_cell
gru_cell = _nn.gru_cell
rnn_tanh = _nn.rnn_tanh
rnn_relu = _nn.rnn_relu
lstm = _nn.lstm
gru = _nn.gru

# The gates each mode stacks in its weights, and the sequence op it runs.
_MODES = {
    "RNN_TANH": (1, _nn.rnn_tanh),
    "RNN_RELU": (1, _nn.rnn_relu),
    "LSTM": (4, _nn.lstm),
    "GRU": (3, _nn.gru),
}


def _check_sizes(layer, input_size, hidden_size):
    input_size = _int_arg(input_size, layer, "input_size")
    hidden_size = _int_arg(hidden_size, layer, "hidden_size")
    if hidden_size <= 0:
        raise ValueError(f"{layer}(): hidden_size must be positive; got {hidden_size}.")
    return input_size, hidden_size


def _reset_uniform(module):
    """PyTorch's reset_parameters of every recurrent module: each weight and
    bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
    bound = 1.0 / math.sqrt(module.hidden_size)
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


def _check_tensor(layer, input):
    if not isinstance(input, _stride.Tensor):
        raise TypeError(
            f"{layer}.forward: input must be a Tensor; got {type(input).__name__} "
            "(PackedSequence is not supported)."
        )


class RNNBase(Module):
    """The parameters of RNN, LSTM and GRU, registered in PyTorch's order
    (layer, direction, ih/hh, weight/bias), which is also the order the
    sequence ops take them in."""

    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if mode not in _MODES:
            raise ValueError(f"RNNBase(): mode must be one of {sorted(_MODES)}; got {mode!r}.")
        name = type(self).__name__
        if proj_size:
            raise NotImplementedError(f"{name}: proj_size is not supported; pass proj_size=0.")
        self.mode = mode
        self.input_size, self.hidden_size = _check_sizes(name, input_size, hidden_size)
        self.num_layers = _int_arg(num_layers, name, "num_layers")
        if self.num_layers <= 0:
            raise ValueError(f"{name}(): num_layers must be positive; got {self.num_layers}.")
        if not 0 <= dropout <= 1:
            raise ValueError(f"{name}(): dropout must be in [0, 1]; got {dropout}.")
        self.bias, self.batch_first = bool(bias), bool(batch_first)
        self.dropout, self.bidirectional = float(dropout), bool(bidirectional)
        self.proj_size = 0
        kw = _factory_kwargs(device, dtype)
        gate_size = _MODES[mode][0] * self.hidden_size
        directions = 2 if self.bidirectional else 1
        self._flat_weights_names = []
        for layer in range(self.num_layers):
            layer_input = self.input_size if layer == 0 else self.hidden_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = [
                    ("weight_ih", (gate_size, layer_input)),
                    ("weight_hh", (gate_size, self.hidden_size)),
                ]
                if self.bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                for param, shape in shapes:
                    setattr(self, param + suffix, Parameter(_stride.empty(*shape, **kw)))
                    self._flat_weights_names.append(param + suffix)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraws every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        _reset_uniform(self)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    def _check_input(self, input):
        name = type(self).__name__
        _check_tensor(name, input)
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{name}: expected input of 2 (unbatched) or 3 dims; got {input.dim()}."
            )
        if input.shape[-1] != self.input_size:
            raise ValueError(
                f"{name}: input.size(-1) must be input_size {self.input_size}; "
                f"got {input.shape[-1]}."
            )

    def _run(self, input, hx):
        """The mode's sequence op on input from hx (None: zeros)."""
        self._check_input(input)
        return _MODES[self.mode][1](
            input,
            hx,
            self._flat_weights,
            self.bias,
            self.num_layers,
            self.dropout,
            self.training,
            self.bidirectional,
            self.batch_first,
        )

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(RNNBase):
    """A multi-layer Elman RNN, h' = tanh or relu(x W_ih^T + b_ih + h W_hh^T
    + b_hh): input (L, N, input_size) ((N, L, ...) with batch_first;
    (L, input_size) unbatched) -> output (L, N, D * hidden_size), h_n
    (D * num_layers, N, hidden_size)."""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        nonlinearity="tanh",
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN(): nonlinearity must be 'tanh' or 'relu'; got {nonlinearity!r}.")
        super().__init__(
            "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            device=device,
            dtype=dtype,
        )
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """(output, h_n); hx = h_0, zeros when None."""
        return self._run(input, hx)


class LSTM(RNNBase):
    """A multi-layer LSTM: input (L, N, input_size) ((N, L, ...) with
    batch_first; (L, input_size) unbatched) -> output (L, N, D * hidden_size),
    (h_n, c_n) each (D * num_layers, N, hidden_size)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):
        """(output, (h_n, c_n)); hx = (h_0, c_0), zeros when None."""
        output, h, c = self._run(input, hx)
        return output, (h, c)


class GRU(RNNBase):
    """A multi-layer GRU: input (L, N, input_size) ((N, L, ...) with
    batch_first; (L, input_size) unbatched) -> output (L, N, D * hidden_size),
    h_n (D * num_layers, N, hidden_size)."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        """(output, h_n); hx = h_0, zeros when None."""
        return self._run(input, hx)


class RNNCellBase(Module):
    """weight_ih (gates * hidden_size, input_size), weight_hh (gates *
    hidden_size, hidden_size) and, with bias, bias_ih and bias_hh; input
    (N, input_size) or unbatched (input_size), the state zeros when None."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        self.input_size, self.hidden_size = _check_sizes(name, input_size, hidden_size)
        self.bias = bool(bias)
        kw = _factory_kwargs(device, dtype)
        rows = num_chunks * self.hidden_size
        self.weight_ih = Parameter(_stride.empty(rows, self.input_size, **kw))
        self.weight_hh = Parameter(_stride.empty(rows, self.hidden_size, **kw))
        if self.bias:
            self.bias_ih = Parameter(_stride.empty(rows, **kw))
            self.bias_hh = Parameter(_stride.empty(rows, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraws every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        _reset_uniform(self)

    def _batched(self, input, states):
        """input as (N, input_size) and each state as (N, hidden_size)
        (zeros when None), and whether the input was batched."""
        name = type(self).__name__
        _check_tensor(name, input)
        if input.dim() not in (1, 2):
            raise ValueError(
                f"{name}: expected input of 1 (unbatched) or 2 dims; got {input.dim()}."
            )
        if input.shape[-1] != self.input_size:
            raise ValueError(
                f"{name}: input.size(-1) must be input_size {self.input_size}; "
                f"got {input.shape[-1]}."
            )
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        zeros = lambda: _stride.zeros(  # noqa: E731
            x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device
        )
        states = [zeros() if s is None else s if batched else s.unsqueeze(0) for s in states]
        return x, states, batched

    def _weights(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = tanh or relu(x W_ih^T + b_ih + h W_hh^T + b_hh)."""

    def __init__(
        self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None
    ):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"RNNCell(): nonlinearity must be 'tanh' or 'relu'; got {nonlinearity!r}."
            )
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, (h,), batched = self._batched(input, [hx])
        cell = _nn.rnn_tanh_cell if self.nonlinearity == "tanh" else _nn.rnn_relu_cell
        out = cell(x, h, *self._weights())
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h, c) -> (h', c'), gates i, f, g, o."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, (h, c), batched = self._batched(input, [None, None] if hx is None else list(hx))
        h, c = _nn.lstm_cell(x, (h, c), *self._weights())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step, gates r, z, n: h' = (1 - z) * n + z * h."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, (h,), batched = self._batched(input, [hx])
        out = _nn.gru_cell(x, h, *self._weights())
        return out if batched else out.squeeze(0)
