"""stride.compat: PyTorch programs run unchanged on stride.

    python -m stride.compat train.py --batch_size=8   # its `import torch` is stride

    import stride.compat
    stride.compat.install()     # in a notebook, before the first `import torch`
    import torch                # stride, under torch's names

install() puts a finder first on sys.meta_path that answers `import torch`
and `import torch.X.Y` with stride's module of the same path (stride.nn for
torch.nn, stride.nn.functional for torch.nn.functional, stride.amp for
torch.amp, ...), seen through a thin module that carries the torch name.
Every object is stride's own: torch.Tensor is stride.Tensor, a model
subclasses stride.nn.Module, and `torch.backends.cudnn.benchmark = True`
sets stride.backends.cudnn.benchmark. A name stride lacks fails where the
program uses it, naming it: AttributeError "torch.fft.rfft is not in stride
yet", or ModuleNotFoundError for a module.
"""

import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
import types

__all__ = ["install", "main"]

_USAGE = """usage: python -m stride.compat SCRIPT [ARGS...]

Runs the PyTorch program SCRIPT with its `import torch` (and torch.nn,
torch.optim, torch.utils.data, torch.amp, ...) resolving to stride. SCRIPT
sees sys.argv as [SCRIPT, ARGS...], as under `python SCRIPT ARGS...`."""


def _not_in_stride(torch_name):
    return f"{torch_name} is not in stride yet (this program's torch is stride, via stride.compat)."


def _stride_name(torch_name):
    return "stride" + torch_name[len("torch") :]


def _torch_name(stride_name):
    return "torch" + stride_name[len("stride") :]


class _TorchModule(types.ModuleType):
    """stride's module `target` under the torch name `name`: reads and
    writes go to target, and a name target lacks raises AttributeError
    naming the torch name."""

    def __init__(self, name, target):
        super().__init__(name, target.__doc__)
        self.__dict__["_stride_module"] = target
        # Python's "cannot import name X from torch.nn (FILE)" reads __file__
        # from the module's own dict.
        if hasattr(target, "__file__"):
            self.__dict__["__file__"] = target.__file__

    def __getattr__(self, attr):
        if attr.startswith("__"):
            # The import system and introspection probe for dunders
            # (__path__, __file__); absent ones are absent, not a gap.
            return getattr(self.__dict__["_stride_module"], attr)
        try:
            value = getattr(self.__dict__["_stride_module"], attr)
        except AttributeError:
            raise AttributeError(_not_in_stride(f"{self.__name__}.{attr}")) from None
        if isinstance(value, types.ModuleType) and value.__name__.startswith("stride."):
            return _alias(f"{self.__name__}.{attr}", value)
        return value

    def __setattr__(self, attr, value):
        # The import system's bookkeeping (__spec__, __loader__, ...) and the
        # submodules it binds stay on this alias; the program's writes
        # (torch.backends.cudnn.benchmark = True) reach stride's module.
        if attr.startswith("__") or isinstance(value, _TorchModule):
            self.__dict__[attr] = value
        else:
            setattr(self.__dict__["_stride_module"], attr, value)

    def __dir__(self):
        return sorted(set(dir(self.__dict__["_stride_module"])) | set(self.__dict__))


def _alias(torch_name, stride_module):
    """The one _TorchModule for torch_name, made and registered on first use
    (by import or by attribute), so that both reach the same object."""
    existing = sys.modules.get(torch_name)
    if isinstance(existing, _TorchModule):
        return existing
    alias = _TorchModule(torch_name, stride_module)
    sys.modules[torch_name] = alias
    return alias


def _import_stride_module(torch_name):
    """stride's module for torch_name; ModuleNotFoundError naming the torch
    module when stride has none."""
    stride_name = _stride_name(torch_name)
    try:
        return importlib.import_module(stride_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if missing != "stride" and not missing.startswith("stride."):
            raise  # a dependency of stride's own module, not a torch name
        raise ModuleNotFoundError(
            f"No module named '{torch_name}': {_not_in_stride(_torch_name(missing))}",
            name=torch_name,
        ) from None


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers imports of torch and torch.* with stride's modules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        stride_module = _import_stride_module(fullname)
        # A package spec (empty search path) keeps every torch.X.Y import
        # coming to this finder, never to a search of stride's directories.
        spec = importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        spec.loader_state = stride_module
        return spec

    def create_module(self, spec):
        return _alias(spec.name, spec.loader_state)

    def exec_module(self, module):
        """Nothing to run: stride's module ran when it was imported."""


_finder = _TorchFinder()


def install():
    """Makes `import torch` (and every torch.X module) give stride from now
    on in this process. Call it before the first `import torch`; calling it
    again does nothing."""
    if _finder in sys.meta_path:
        return
    torch = sys.modules.get("torch")
    if torch is not None and not isinstance(torch, _TorchModule):
        raise RuntimeError(
            "stride.compat.install(): PyTorch is imported already, so `import torch` would "
            "keep giving it; call install() before the first `import torch` (in a fresh "
            "process or notebook kernel)."
        )
    sys.meta_path.insert(0, _finder)


def main(argv=None):
    """python -m stride.compat SCRIPT [ARGS...]: runs SCRIPT as `python
    SCRIPT ARGS...` would, with torch resolving to stride."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    script = args[0]
    if not os.path.isfile(script):
        print(f"python -m stride.compat: can't open file {script!r}: not a file", file=sys.stderr)
        return 2
    install()
    sys.argv = args
    # As `python SCRIPT` does: the script's directory comes first on the path.
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    return 0
