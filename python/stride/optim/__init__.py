"""stride.optim: optimizers and learning-rate schedulers (torch.optim).

    opt = stride.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    sched = stride.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=1000)
    for x, y in loader:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
        sched.step()

The updates are stride's C++ optimizers (PyTorch's single-tensor formulas,
fused per parameter, correct for parameters of any layout); this module
gives them PyTorch's Python surface: parameter groups as dicts that can be
read and written (`opt.param_groups[0]["lr"] = 1e-4`), add_param_group, a
closure for step, and state_dict / load_state_dict in PyTorch's layout.
"""

from . import lr_scheduler  # noqa: F401
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = [
    "Adagrad",
    "Adam",
    "Adamax",
    "AdamW",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "SGD",
    "lr_scheduler",
]
