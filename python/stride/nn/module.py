"""stride.nn.Module: the base class of every layer, as torch.nn.Module.

Subclass it exactly as in PyTorch:

    class MLP(stride.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = stride.nn.Linear(4, 8)      # registers "fc"
            self.scale = stride.nn.Parameter(stride.ones(8))

        def forward(self, x):
            return self.fc(x) * self.scale

Assigning a Parameter, a Module or (to a registered name) a tensor buffer
registers it; `model(x)` calls `forward` through `__call__`, so hooks run.
Names, order and the state_dict layout are PyTorch's, so a state_dict moves
between stride and torch unchanged.
"""

import itertools
from collections import OrderedDict, namedtuple

from .._stride import Tensor, _autograd
from ..autograd import no_grad
from .parameter import Buffer, Parameter


class RemovableHandle:
    """Removes the hook it was returned for: `handle.remove()`, or use it as
    a context manager."""

    _next_id = itertools.count()

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        """Removes the hook; removing twice does nothing."""
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def _add_hook(hooks, hook, prepend):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it did not find and the keys
    it did not use."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


def _tensors_in(value):
    """The tensors of a forward argument or output, with a function that
    rebuilds the value from replacements (a tensor, or a tuple or list of
    values)."""
    if isinstance(value, Tensor):
        return [value], lambda new: new[0]
    if isinstance(value, (tuple, list)):
        positions = [i for i, v in enumerate(value) if isinstance(v, Tensor)]

        def rebuild(new):
            out = list(value)
            for i, t in zip(positions, new):
                out[i] = t
            return type(value)(out)

        return [value[i] for i in positions], rebuild
    return [], lambda new: value


class _BackwardHooks:
    """Full backward hooks of one call (torch's register_full_backward_hook).

    Each tensor input and output that requires grad is replaced by an
    identity view whose tensor hook records its gradient. Every gradient of
    the outputs reaches the module before any of its inputs' does, so the
    user hooks run when the last input gradient arrives, seeing
    (grad_input, grad_output); when no input requires grad they run once the
    output gradients are in."""

    def __init__(self, module, hooks):
        self.module = module
        self.hooks = hooks
        self.grad_input = []
        self.grad_output = []
        self.inputs_pending = 0
        self.outputs_pending = 0
        self.ran = False

    def wrap_inputs(self, args):
        tensors, rebuild = _tensors_in(args)
        self.grad_input = [None] * len(tensors)
        wrapped = []
        for i, t in enumerate(tensors):
            if t.requires_grad:
                t = t.view(t.shape)
                t.register_hook(self._input_hook(i))
                self.inputs_pending += 1
            wrapped.append(t)
        return rebuild(wrapped)

    def wrap_outputs(self, output):
        tensors, rebuild = _tensors_in(output)
        self.grad_output = [None] * len(tensors)
        wrapped = []
        for j, t in enumerate(tensors):
            if t.requires_grad:
                t = t.view(t.shape)
                t.register_hook(self._output_hook(j))
                self.outputs_pending += 1
            wrapped.append(t)
        return rebuild(wrapped)

    def _output_hook(self, j):
        def hook(grad):
            self.grad_output[j] = grad
            self.outputs_pending -= 1
            if self.outputs_pending == 0 and self.inputs_pending == 0:
                self._run()

        return hook

    def _input_hook(self, i):
        def hook(grad):
            self.grad_input[i] = grad
            self.inputs_pending -= 1
            if self.inputs_pending > 0:
                return None
            replaced = self._run()
            if replaced is None:
                return None
            for k, (old, new) in enumerate(zip(self.grad_input, replaced)):
                if k != i and new is not old:
                    raise RuntimeError(
                        f"a backward hook of {type(self.module).__name__} replaced the gradient "
                        f"of input {k}, which was already passed on; with several tensor inputs "
                        "only the last one's gradient can be replaced."
                    )
            return replaced[i]

        return hook

    def _run(self):
        if self.ran:
            return None
        self.ran = True
        grad_input, grad_output = tuple(self.grad_input), tuple(self.grad_output)
        replaced = None
        for hook in list(self.hooks.values()):
            result = hook(self.module, grad_input, grad_output)
            if result is None:
                continue
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grad_input):
                raise RuntimeError(
                    f"a backward hook of {type(self.module).__name__} returned "
                    f"{len(result)} gradients for {len(grad_input)} inputs."
                )
            grad_input = replaced = result
        return replaced


class Module:
    """Base class for all neural network modules (torch.nn.Module)."""

    training: bool

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments; Module.__init__ "
                "takes none."
            )
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", set())
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", set())
        setattr_(self, "_backward_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        """The module's computation; subclasses define it and call the module, not forward, so that
        hooks run."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function.'
        )

    # ---- registration ----

    def _check_name(self, name, kind):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign a {kind} before Module.__init__() is called.")
        if not isinstance(name, str):
            raise TypeError(
                f"{type(self).__name__}: {kind} name must be a string; got {type(name).__name__}."
            )
        if name == "" or "." in name:
            raise KeyError(f'{kind} name can\'t be empty or contain ".": got "{name}".')

    def register_parameter(self, name, param):
        """Adds a parameter (a Parameter, or None for an absent one)."""
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists.")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' as parameter '{name}' "
                "(stride.nn.Parameter or None expected)."
            )
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer: state that is saved and moved but not trained
        (BatchNorm's running_mean). Non-persistent buffers are left out of
        state_dict()."""
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists.")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' as buffer '{name}' "
                "(stride.Tensor or None expected)."
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name, module):
        """Adds a child module, reachable as an attribute named `name`."""
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists.")
        if module is not None and not isinstance(module, Module):
            raise TypeError(
                f"{type(self).__name__}.add_module(): module must be a stride.nn.Module or None; "
                f"got {type(module).__name__}."
            )
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call.")
            self._forget(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(stride.nn.Parameter or None expected)."
                )
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call.")
            self._forget(name)
            self._modules[name] = value
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(stride.nn.Module or None expected)."
                )
            self._modules[name] = None
        elif isinstance(value, Buffer):
            self._forget(name)
            self.register_buffer(name, Tensor(value), value.persistent)
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(stride.Tensor or None expected)."
                )
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name):
        """Removes `name` from every registry and the instance dict."""
        self.__dict__.pop(name, None)
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        self._non_persistent_buffers.discard(name)

    def __getattr__(self, name):
        # Only called when normal lookup fails: the registries.
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                self._non_persistent_buffers.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = set(super().__dir__())
        keys.update(self._parameters, self._buffers, self._modules)
        return sorted(k for k in keys if not k[0].isdigit())

    def get_submodule(self, target):
        """The module at a dotted path: model.get_submodule("layers.0.attn")."""
        module = self
        for part in target.split(".") if target else []:
            if part not in module._modules or module._modules[part] is None:
                raise AttributeError(f"{type(module).__name__} has no submodule '{part}'.")
            module = module._modules[part]
        return module

    def get_parameter(self, target):
        """The parameter at a dotted path: model.get_parameter("fc.weight")."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._parameters:
            raise AttributeError(f"{type(module).__name__} has no parameter '{name}'.")
        return module._parameters[name]

    def get_buffer(self, target):
        """The buffer at a dotted path: model.get_buffer("bn.running_mean")."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._buffers:
            raise AttributeError(f"{type(module).__name__} has no buffer '{name}'.")
        return module._buffers[name]

    # ---- walking the tree ----

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for this module and every descendant, each
        once (unless remove_duplicate=False), parents before children."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        """Every module of the tree, this one first (each once)."""
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        """(name, module) for the direct children, each once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        """The direct child modules, each once."""
        for _, module in self.named_children():
            yield module

    def _named_members(self, members_of, prefix, recurse, remove_duplicate):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        if not recurse:
            modules = [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in members_of(module):
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, parameter), PyTorch's names and order: "fc.weight"."""
        return self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def parameters(self, recurse=True):
        """Every parameter (of the submodules too, unless recurse=False), each once, in
        named_parameters' order."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, buffer) for every buffer, as named_parameters."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """Every buffer (of the submodules too, unless recurse=False)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        """Calls fn on every submodule (children first), then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients ----

    def train(self, mode=True):
        """Sets training mode (mode=True) or evaluation mode on this module and every descendant;
        returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean.")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Evaluation mode: train(False). Dropout becomes the identity and BatchNorm uses its
        running statistics."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets requires_grad on every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Clears every parameter's .grad: None (the default, as PyTorch 2),
        or zeros in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_().zero_()

    # ---- devices and dtypes ----

    def _apply(self, fn):
        """Converts every parameter (in place: the Parameter objects, and so
        an optimizer's references, stay valid), its gradient and every
        buffer."""
        for module in self.children():
            module._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                p.data = fn(p.data)
                if p.grad is not None:
                    p.grad = fn(p.grad)
            for name, b in self._buffers.items():
                if b is not None:
                    self._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """Moves and/or casts the parameters and buffers: to(device),
        to(dtype), to(device, dtype), to(tensor). Only floating-point
        tensors change dtype, as in PyTorch."""
        device, dtype = _parse_to(args, kwargs)

        def convert(t):
            if dtype is not None and t.is_floating_point():
                t = t.to(dtype)
            return t.to(device) if device is not None else t

        return self._apply(convert)

    def cpu(self):
        """Moves the parameters and buffers to the CPU; returns self."""
        return self.to("cpu")

    def float(self):
        """Casts floating-point parameters and buffers to float32; returns self."""
        from .. import float32

        return self._apply(lambda t: t.to(float32) if t.is_floating_point() else t)

    def double(self):
        """Casts floating-point parameters and buffers to float64; returns self."""
        from .. import float64

        return self._apply(lambda t: t.to(float64) if t.is_floating_point() else t)

    def half(self):
        """Casts floating-point parameters and buffers to float16; returns self."""
        from .. import float16

        return self._apply(lambda t: t.to(float16) if t.is_floating_point() else t)

    def bfloat16(self):
        """Casts floating-point parameters and buffers to bfloat16; returns self."""
        from .. import bfloat16

        return self._apply(lambda t: t.to(bfloat16) if t.is_floating_point() else t)

    # ---- state_dict ----

    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """An OrderedDict from dotted names to parameters and persistent
        buffers, detached unless keep_vars (PyTorch's keys and order)."""
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        return destination

    def load_state_dict(self, state_dict, strict=True):
        """Copies parameters and buffers from state_dict into this module
        (in place, converting dtype). With strict, a missing or unexpected
        key is an error; a shape mismatch always is. Returns the
        (missing_keys, unexpected_keys) named tuple."""
        if not hasattr(state_dict, "items"):
            raise TypeError(f"expected a mapping for state_dict; got {type(state_dict).__name__}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict:
            if unexpected:
                errors.append(
                    "Unexpected key(s) in state_dict: "
                    + ", ".join(f'"{k}"' for k in unexpected)
                    + ". "
                )
            if missing:
                errors.append(
                    "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". "
                )
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected a tensor '
                    f"from the checkpoint but received {type(value).__name__}."
                )
            elif tuple(value.shape) != tuple(target.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{_shape(value)} from checkpoint, the shape in current model is "
                    f"{_shape(target)}."
                )
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        with no_grad():
            for key, target in own.items():
                if key in state_dict:
                    target.copy_(state_dict[key])
        return _IncompatibleKeys(missing, unexpected)

    # ---- hooks and calls ----

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args; with_kwargs:
        hook(module, args, kwargs) -> None or (args, kwargs)."""
        handle = _add_hook(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args, output) -> None or a new output; with_kwargs:
        hook(module, args, kwargs, output)."""
        handle = _add_hook(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or new grad_input,
        run when the gradients with respect to the module's tensor inputs
        are computed (None for an input that does not require grad)."""
        return _add_hook(self._backward_hooks, hook, prepend)

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks):
            return self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward = None
        if self._backward_hooks and _autograd.is_grad_enabled():
            backward = _BackwardHooks(self, self._backward_hooks)
            args = backward.wrap_inputs(args)
        output = self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = result
        if backward is not None:
            output = backward.wrap_outputs(output)
        return output

    __call__ = _call_impl

    # ---- printing ----

    def extra_repr(self):
        """The module's own settings, shown inside its repr's parentheses."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = self.extra_repr().split("\n") if self.extra_repr() else []
        for name, module in self._modules.items():
            body = _indent(repr(module), 2)
            lines.append(f"({name}): {body}")
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _indent(text, spaces):
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


def _shape(t):
    return "stride.Size([" + ", ".join(str(s) for s in t.shape) + "])"


def _parse_to(args, kwargs):
    """(device, dtype) from Module.to's arguments."""
    from .._stride import device as device_type
    from .._stride import dtype as dtype_type

    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}.")
    for arg in args:
        if isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, dtype_type):
            dtype = arg
        elif isinstance(arg, (str, device_type)):
            device = arg
        else:
            raise TypeError(f"to() takes a device, a dtype or a tensor; got {type(arg).__name__}.")
    if dtype is not None and not dtype.is_floating_point:
        raise TypeError(f"nn.Module.to only accepts floating point dtypes; got {dtype}.")
    return device, dtype
