"""LSTM and GRU (torch.nn.LSTM / GRU), written in Python over stride's ops:
each time step is a few matmuls and elementwise ops, so autograd gives the
gradients through time. PyTorch's parameter names, shapes, gate order (LSTM
i, f, g, o; GRU r, z, n), default initialisation and (output, h_n) layout,
so a torch state_dict loads and gives the same outputs and gradients.
PackedSequence and LSTM's proj_size are not supported."""

import math

from .. import _stride
from . import functional as F
from . import init
from .layers import _factory_kwargs, _int_arg
from .module import Module
from .parameter import Parameter


class _RNNBase(Module):
    """The parameters and the layer/direction loop shared by LSTM and GRU;
    a subclass gives its gate count and its cell."""

    _gates = 0
    _name = ""

    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.input_size = _int_arg(input_size, self._name, "input_size")
        self.hidden_size = _int_arg(hidden_size, self._name, "hidden_size")
        self.num_layers = _int_arg(num_layers, self._name, "num_layers")
        if self.hidden_size <= 0 or self.num_layers <= 0:
            raise ValueError(
                f"{self._name}(): hidden_size and num_layers must be positive; got "
                f"{self.hidden_size} and {self.num_layers}."
            )
        if not 0 <= dropout <= 1:
            raise ValueError(f"{self._name}(): dropout must be in [0, 1]; got {dropout}.")
        self.bias, self.batch_first = bool(bias), bool(batch_first)
        self.dropout, self.bidirectional = float(dropout), bool(bidirectional)
        kw = _factory_kwargs(device, dtype)
        gate_size = self._gates * self.hidden_size
        directions = 2 if self.bidirectional else 1
        # Registered in PyTorch's order (layer, direction, ih/hh, weight/bias),
        # so that parameters() and state_dict() list them as torch does.
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
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(_stride.empty(*shape, **kw)))
        self.reset_parameters()

    def reset_parameters(self):
        """Redraws every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction else "")
        get = lambda name: getattr(self, name + suffix)  # noqa: E731
        if not self.bias:
            return get("weight_ih"), get("weight_hh"), None, None
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _run_direction(self, x, state, weights, reverse):
        """x (T, N, in) through one direction of one layer from `state`;
        returns the outputs (T, N, H) and the final state."""
        w_ih, w_hh, b_ih, b_hh = weights
        # The input projection of every time step at once.
        projected = F.linear(x, w_ih, b_ih)
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outputs = [None] * x.shape[0]
        for t in steps:
            state = self._cell(projected[t], state, w_hh, b_hh)
            outputs[t] = self._output(state)
        return _stride.stack(outputs, 0), state

    def _check_input(self, input):
        if not isinstance(input, _stride.Tensor):
            raise TypeError(
                f"{self._name}.forward: input must be a Tensor; got {type(input).__name__} "
                "(PackedSequence is not supported)."
            )
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{self._name}: expected input of 2 (unbatched) or 3 dims; got {input.dim()}."
            )
        if input.shape[-1] != self.input_size:
            raise ValueError(
                f"{self._name}: input.size(-1) must be input_size {self.input_size}; "
                f"got {input.shape[-1]}."
            )

    def _forward(self, input, hx):
        """(output, final states) with hx a tuple of (layers * dirs, N, H)
        tensors (or None for zeros)."""
        self._check_input(input)
        batched = input.dim() == 3
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        directions = 2 if self.bidirectional else 1
        n = x.shape[1]
        if hx is None:
            zeros = _stride.zeros(
                self.num_layers * directions, n, self.hidden_size, dtype=x.dtype, device=x.device
            )
            hx = tuple(zeros for _ in range(self._states))
        elif not batched:
            hx = tuple(h.unsqueeze(1) for h in hx)
        finals = [[] for _ in range(self._states)]
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                index = layer * directions + direction
                state = tuple(h[index] for h in hx)
                out, state = self._run_direction(
                    x, state, self._weights(layer, direction), reverse=direction == 1
                )
                outs.append(out)
                for k, s in enumerate(state):
                    finals[k].append(s)
            x = outs[0] if directions == 1 else _stride.cat(outs, 2)
            if self.dropout > 0 and self.training and layer + 1 < self.num_layers:
                x = F.dropout(x, self.dropout, True)
        finals = tuple(_stride.stack(f, 0) for f in finals)
        if not batched:
            return x.squeeze(1), tuple(f.squeeze(1) for f in finals)
        if self.batch_first:
            x = x.transpose(0, 1)
        return x, finals

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


class LSTM(_RNNBase):
    """A multi-layer LSTM: input (L, N, input_size) ((N, L, ...) with
    batch_first; (L, input_size) unbatched) -> output (L, N, D * hidden_size),
    (h_n, c_n) each (D * num_layers, N, hidden_size)."""

    _gates, _states, _name = 4, 2, "LSTM"

    def __init__(self, *args, proj_size=0, **kwargs):
        if proj_size:
            raise NotImplementedError("LSTM: proj_size is not supported; pass proj_size=0.")
        super().__init__(*args, **kwargs)

    def _cell(self, projected, state, w_hh, b_hh):
        h, c = state
        gates = projected + F.linear(h, w_hh, b_hh)
        i, f, g, o = gates.chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        return o.sigmoid() * c.tanh(), c

    @staticmethod
    def _output(state):
        return state[0]

    def forward(self, input, hx=None):
        """(output, (h_n, c_n)); hx = (h_0, c_0), zeros when None."""
        output, (h, c) = self._forward(input, hx)
        return output, (h, c)


class GRU(_RNNBase):
    """A multi-layer GRU: input (L, N, input_size) ((N, L, ...) with
    batch_first; (L, input_size) unbatched) -> output (L, N, D * hidden_size),
    h_n (D * num_layers, N, hidden_size)."""

    _gates, _states, _name = 3, 1, "GRU"

    def _cell(self, projected, state, w_hh, b_hh):
        (h,) = state
        hidden = F.linear(h, w_hh, b_hh)
        x_r, x_z, x_n = projected.chunk(3, 1)
        h_r, h_z, h_n = hidden.chunk(3, 1)
        r = (x_r + h_r).sigmoid()
        z = (x_z + h_z).sigmoid()
        n = (x_n + r * h_n).tanh()
        return ((1 - z) * n + z * h,)

    @staticmethod
    def _output(state):
        return state[0]

    def forward(self, input, hx=None):
        """(output, h_n); hx = h_0, zeros when None."""
        output, (h,) = self._forward(input, None if hx is None else (hx,))
        return output, h
