"""stride.nn.Parameter: a tensor that a Module registers as a parameter."""

from .._stride import Tensor


class Parameter(Tensor):
    """A tensor that is a module's parameter (torch.nn.Parameter).

    Assigning a Parameter to an attribute of a `stride.nn.Module` registers
    it, so that `parameters()`, `state_dict()` and optimizers see it. It
    shares memory with `data` (detached from any graph) and requires grad
    unless told otherwise:

        self.scale = stride.nn.Parameter(stride.ones(128))
    """

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            from .._stride import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter takes a stride.Tensor; got {type(data).__name__}.")
        super().__init__(data.detach())
        self.requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when assigned to one of
    its attributes (torch.nn.Buffer): saved in `state_dict()` (unless
    `persistent=False`) and moved by `to()`, but not a parameter."""

    def __init__(self, data, *, persistent=True):
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer takes a stride.Tensor; got {type(data).__name__}.")
        super().__init__(data.detach())
        self.persistent = persistent
