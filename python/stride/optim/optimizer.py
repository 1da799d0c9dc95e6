"""Optimizer (torch.optim.optimizer): PyTorch's Python surface over a C++
optimizer, param groups as dicts, state_dict in PyTorch's layout."""

from collections.abc import MutableMapping

from .. import _stride
from .._stride import Tensor


class _ParamGroup(MutableMapping):
    """One param group as PyTorch shows it: a dict of its hyperparameters and
    "params". Reads and writes go to the C++ optimizer, so a write takes
    effect at the next step (this is how schedulers written in Python work)."""

    def __init__(self, optimizer, index):
        self._optimizer = optimizer
        self._index = index

    def _values(self):
        return self._optimizer._impl.group_options(self._index)

    def __getitem__(self, key):
        if key == "params":
            return self._optimizer._params[self._index]
        values = self._values()
        if key == "betas" and "beta1" in values:
            return (values["beta1"], values["beta2"])
        if key not in values or key in ("beta1", "beta2"):
            raise KeyError(key)
        value = values[key]
        return bool(value) if key in self._optimizer._flags else value

    def __setitem__(self, key, value):
        if key == "params":
            raise ValueError("a group's params cannot be replaced; use add_param_group.")
        for k, v in _to_cpp({key: value}).items():
            self._optimizer._impl.set_group_option(self._index, k, v)

    def __delitem__(self, key):
        raise TypeError("hyperparameters of a param group cannot be deleted.")

    def __iter__(self):
        yield "params"
        for key in self._values():
            if key == "beta1":
                yield "betas"
            elif key != "beta2":
                yield key

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return repr({k: (f"<{len(v)} tensors>" if k == "params" else v) for k, v in self.items()})


def _to_cpp(options):
    """Python hyperparameters as the C++ options' keys: betas split in two,
    flags as numbers."""
    out = {}
    for key, value in options.items():
        if key == "betas":
            beta1, beta2 = value
            out["beta1"], out["beta2"] = float(beta1), float(beta2)
        elif isinstance(value, Tensor):
            out[key] = float(value.item())
        else:
            out[key] = float(value)
    return out


# Group keys of a torch.optim state_dict that choose how PyTorch runs a step
# (multi-tensor, CUDA graphs, autograd through the step), not what it
# computes; stride's steps have one implementation, so loading skips them.
_TORCH_EXECUTION_KEYS = frozenset({"foreach", "capturable", "differentiable"})


def _reject_unsupported(optimizer, capturable=False, differentiable=False):
    """PyTorch's execution flags that stride cannot honour, as
    NotImplementedError naming the optimizer and the argument."""
    for name, value in (("capturable", capturable), ("differentiable", differentiable)):
        if value:
            raise NotImplementedError(
                f"{optimizer}: {name}=True is not supported; stride's optimizer steps run "
                f"eagerly without autograd. Pass {name}=False."
            )


def _as_stride_tensor(value):
    """A state buffer from a stride or a torch state_dict (any DLPack
    tensor), as a stride tensor; load_state_dict copies it."""
    return value if isinstance(value, Tensor) else _stride.from_dlpack(value)


def _as_groups(params):
    """PyTorch's params argument (tensors, (name, tensor) pairs, or dicts
    with "params") as a list of group dicts."""
    if isinstance(params, Tensor):
        raise TypeError(
            "params argument given to the optimizer should be an iterable of "
            "Tensors or dicts, but got a Tensor."
        )
    try:
        params = list(params)
    except TypeError:
        raise TypeError(
            "params argument given to the optimizer should be an iterable of Tensors or dicts, "
            f"but got {type(params).__name__}."
        ) from None
    if not params:
        raise ValueError("optimizer got an empty parameter list.")
    if not isinstance(params[0], dict):
        params = [{"params": params}]
    groups = []
    for group in params:
        group = dict(group)
        tensors = group["params"]
        tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
        group["params"] = [t[1] if isinstance(t, tuple) else t for t in tensors]
        for t in group["params"]:
            if not isinstance(t, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is "
                    f"{type(t).__name__}."
                )
        groups.append(group)
    return groups


class Optimizer:
    """The base of stride's optimizers; see SGD, Adam and AdamW."""

    _make = None
    _flags = frozenset()
    # The per-parameter state entries that are numbers (PyTorch stores them
    # as 0-d tensors); the others are buffers of the parameter's shape.
    _scalar_state = frozenset({"step"})

    def __init__(self, params, defaults):
        groups = _as_groups(params)
        self.defaults = dict(defaults)
        specs = [
            (g["params"], _to_cpp({k: v for k, v in g.items() if k != "params"})) for g in groups
        ]
        self._impl = type(self)._make(specs, _to_cpp(self.defaults))
        self._params = [list(g["params"]) for g in groups]

    @property
    def param_groups(self):
        """The parameter groups, as dicts of hyperparameters and 'params' whose writes reach the
        optimizer."""
        return [_ParamGroup(self, i) for i in range(self._impl.num_groups())]

    def add_param_group(self, param_group):
        """Adds a group (a dict with "params" and any hyperparameters to
        override); its parameters are numbered after the existing ones."""
        (group,) = _as_groups([param_group])
        options = _to_cpp({k: v for k, v in group.items() if k != "params"})
        self._impl.add_param_group(group["params"], options)
        self._params.append(list(group["params"]))

    def zero_grad(self, set_to_none=True):
        """Clears every parameter's gradient: None by default, zeros in place
        otherwise."""
        self._impl.zero_grad(set_to_none)

    def step(self, closure=None):
        """Updates every parameter that has a gradient. closure, if given,
        re-evaluates the model (with grad enabled) and returns the loss,
        which step returns."""
        loss = None
        if closure is not None:
            previous = _stride._autograd.is_grad_enabled()
            _stride._autograd.set_grad_enabled(True)
            try:
                loss = closure()
            finally:
                _stride._autograd.set_grad_enabled(previous)
        self._impl.step()
        return loss

    @property
    def state(self):
        """Per-parameter state: {param: {"step": n, "exp_avg": tensor, ...}}
        for the parameters updated so far."""
        out = {}
        for params in self._params:
            for p in params:
                entry = self._impl.state(p)
                if entry is not None:
                    tensors, scalars = entry
                    out[p] = {**scalars, **tensors}
        return out

    def state_dict(self):
        """PyTorch's layout: {"state": {index: {...}}, "param_groups":
        [{hyperparameters..., "params": [indices]}]}. Tensors alias the live
        buffers, as in PyTorch."""
        _, tensors, scalars = self._impl.state_dict()
        state = {}
        for key, value in list(tensors) + [
            (k, v) for k, v in scalars.items() if k.startswith("state.")
        ]:
            _, index, name = key.split(".", 2)
            state.setdefault(int(index), {})[name] = value
        groups, first = [], 0
        for g, group in enumerate(self.param_groups):
            entry = {k: v for k, v in group.items() if k != "params"}
            count = len(self._params[g])
            entry["params"] = list(range(first, first + count))
            first += count
            groups.append(entry)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restores a state_dict() of the same kind of optimizer over
        parameters of the same shapes, groups and order (validated before
        anything changes)."""
        tensors, scalars = [], {}
        for index, entry in state_dict["state"].items():
            for name, value in entry.items():
                key = f"state.{int(index)}.{name}"
                if name in self._scalar_state:
                    scalars[key] = float(value)
                else:
                    tensors.append((key, _as_stride_tensor(value)))
        for g, group in enumerate(state_dict["param_groups"]):
            scalars[f"param_groups.{g}.num_params"] = float(len(group["params"]))
            options = _to_cpp(
                {
                    k: v
                    for k, v in group.items()
                    if k != "params" and k not in _TORCH_EXECUTION_KEYS and v is not None
                }
            )
            for key, value in options.items():
                scalars[f"param_groups.{g}.{key}"] = value
        self._impl.load_state_dict(self._impl.name, tensors, scalars)

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"
