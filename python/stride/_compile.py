"""stride.compile: torch.compile's call, for programs that make it.

stride runs eagerly: each op runs its C++ kernel when called, and there is
no graph capture, so compiling changes nothing about what runs or how
fast. A module comes back wrapped as PyTorch wraps it, so that programs
which save `model.state_dict()` of the compiled model (keys prefixed with
`_orig_mod.`, which nanoGPT's sample.py strips) or reach `model._orig_mod`
behave as under PyTorch; a function comes back as it is.
"""

from .nn import Module


def compile(
    model=None,
    *,
    fullgraph=False,
    dynamic=None,
    backend="inductor",
    mode=None,
    options=None,
    disable=False,
):
    """Returns model ready to call (torch.compile). stride is eager, so this
    compiles nothing: a Module comes back as an OptimizedModule over it (its
    attributes reached through, state_dict keys under `_orig_mod.`), a
    function as itself. Without model it returns a decorator. The other
    arguments are PyTorch's and are accepted as given."""
    if model is None:
        return lambda fn: compile(fn, disable=disable)  # nothing else changes the result
    if not callable(model):
        raise TypeError(f"compile(): model must be a Module or a function; got {type(model)}.")
    if disable or not isinstance(model, Module):
        return model
    return OptimizedModule(model)


class OptimizedModule(Module):
    """What compile returns for a module (torch._dynamo's OptimizedModule):
    calls run the module, attributes other than _orig_mod read and write the
    module's, and train()/eval() reach it."""

    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod

    @property
    def training(self):
        return self._modules["_orig_mod"].training

    @training.setter
    def training(self, value):
        # Module.__init__ sets the default before _orig_mod exists: the
        # wrapped module's own flag is the one that counts.
        if "_orig_mod" in self.__dict__.get("_modules", {}):
            self._orig_mod.training = value

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        modules = self.__dict__.get("_modules", {})
        if "_orig_mod" not in modules:
            raise AttributeError(f"'OptimizedModule' object has no attribute '{name}'")
        return modules["_orig_mod"] if name == "_orig_mod" else getattr(modules["_orig_mod"], name)

    def __setattr__(self, name, value):
        if name == "_orig_mod" or hasattr(type(self), name):
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if name == "_orig_mod" or hasattr(type(self), name):
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)
