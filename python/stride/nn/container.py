"""Containers of modules: Sequential, ModuleList and ModuleDict, with
PyTorch's child names ("0", "1", ... or the given keys) and so its
state_dict keys."""

import operator
from collections import OrderedDict

from .module import Module


def _iterable(value, method, name):
    """iter(value), or a TypeError naming the method and its argument."""
    try:
        return iter(value)
    except TypeError:
        raise TypeError(
            f"{method}(): {name} must be iterable; got {type(value).__name__}."
        ) from None


def _index(i, n, what):
    i = operator.index(i)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for a {what} of length {n}.")
    return i + n if i < 0 else i


class Sequential(Module):
    """Calls its modules in order, each on the previous one's output:
    Sequential(a, b, c), or Sequential(OrderedDict([("a", a), ...])) to name
    them."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx):
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return type(self)(OrderedDict(items[idx]))
        return items[_index(idx, len(items), "Sequential")][1]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        if isinstance(idx, slice):
            doomed = keys[idx]
        else:
            doomed = [keys[_index(idx, len(keys), "Sequential")]]
        for key in doomed:
            del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        """Adds a module at the end, named by its position; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Appends every module of an iterable; returns self."""
        for module in _iterable(modules, "Sequential.extend", "modules"):
            self.append(module)
        return self

    def forward(self, input):
        """Calls the modules in order, each on the previous one's output."""
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered as children "0", "1", ...; it has no
    forward of its own."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        modules = list(self._modules.values())
        if isinstance(idx, slice):
            return type(self)(modules[idx])
        return modules[_index(idx, len(modules), "ModuleList")]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        modules = list(self._modules.values())
        if isinstance(idx, slice):
            del modules[idx]
        else:
            del modules[_index(idx, len(modules), "ModuleList")]
        self._modules.clear()
        self.extend(modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def append(self, module):
        """Adds a module at the end, named by its position; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Appends every module of an iterable; returns self."""
        for module in _iterable(modules, "ModuleList.extend", "modules"):
            self.append(module)
        return self

    def insert(self, index, module):
        """Inserts a module before position index; the children are renamed by position."""
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        self.extend(modules)


class ModuleDict(Module):
    """A dict of modules, registered under their keys, in insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self):
        """(key, module) pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def pop(self, key):
        """Removes the module under key and returns it."""
        return self._modules.pop(key)

    def clear(self):
        """Removes every module."""
        self._modules.clear()

    def update(self, modules):
        """Adds (or replaces) modules from a mapping or an iterable of (key, module) pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for item in _iterable(items, "ModuleDict.update", "modules"):
            try:
                key, module = item
            except (TypeError, ValueError):
                raise TypeError(
                    "ModuleDict.update(): modules must be a mapping or an iterable of "
                    f"(key, module) pairs; got an item of type {type(item).__name__}."
                ) from None
            self[key] = module
