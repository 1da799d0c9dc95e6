"""stride.nn.init: in-place initialisers (torch.nn.init). Each fills its
tensor in place without recording gradients, for any layout, and returns
that same tensor; the random ones draw from `generator` or the default
generator."""

from .._stride import _nn

calculate_gain = _nn.init.calculate_gain
_calculate_fan_in_and_fan_out = _nn.init.calculate_fan_in_and_fan_out


def _in_place(fill):
    def initialiser(tensor, *args, **kwargs):
        fill(tensor, *args, **kwargs)
        return tensor

    initialiser.__name__ = fill.__name__
    initialiser.__doc__ = fill.__doc__
    return initialiser


uniform_ = _in_place(_nn.init.uniform_)
normal_ = _in_place(_nn.init.normal_)
constant_ = _in_place(_nn.init.constant_)
zeros_ = _in_place(_nn.init.zeros_)
ones_ = _in_place(_nn.init.ones_)
xavier_uniform_ = _in_place(_nn.init.xavier_uniform_)
xavier_normal_ = _in_place(_nn.init.xavier_normal_)
kaiming_uniform_ = _in_place(_nn.init.kaiming_uniform_)
kaiming_normal_ = _in_place(_nn.init.kaiming_normal_)
