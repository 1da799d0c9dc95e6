"""Datasets and the DataLoader, as torch.utils.data, with stride's randomness.

    from stride.utils.data import Dataset, DataLoader

    class Noisy(Dataset):
        def __len__(self):
            return 1000
        def __getitem__(self, index, generator):       # generator: optional
            rng = generator.numpy()                      # numpy.random.Generator
            return stride.tensor(rng.normal(size=3)), index

    for x, i in DataLoader(Noisy(), batch_size=32, shuffle=True, num_workers=4, seed=0):
        ...

Randomness (Note [Loader randomness] in include/stride/data/dataloader.h):
every number a loader uses derives from its seed (seed=, else one draw from
`generator=`, else one draw from the default generator when the loader is
made, so `stride.manual_seed` fixes it). Epoch e's order comes from the C++
`sampler_generator(seed, e)` and the C++ samplers, so this loader and the C++
one visit a dataset in the same order. A `__getitem__` whose signature takes
a second positional argument, or one named `generator`, receives the C++
`sample_generator(seed, e, index)`: a stride.Generator of that sample alone,
from which `generator.numpy()` seeds a NumPy generator. Its numbers are
therefore the same for every `num_workers` and thread timing, and different
for every sample and epoch; the bug of PyTorch's forked workers, which all
inherit one copy of NumPy's global state and draw the same numbers, cannot
happen. The signature is read once, when the loader is made.

Workers are threads of this process (docs/design.md, "Python"): they share
the one dataset object, run while the consumer waits (waiting releases the
GIL), and hand batches over in sampler order whatever order they finish in,
with at most `prefetch_factor * num_workers` batches in flight. Threads
overlap what runs without the GIL (file and network reads, NumPy's larger
kernels); pure-Python `__getitem__` code takes turns on the GIL, so there
num_workers=0 is as fast. Leaving a loop early (`break`) stops the epoch's
workers and joins them once its iterator is dropped (or `close()`d). An
exception raised by a dataset or the collate function is re-raised in the
consumer, when it reaches that batch, as the same exception with a note
naming the worker, the sample and the epoch.

Each `iter(loader)` starts a new epoch (0, 1, ...; `set_epoch` to resume), and
iterators are independent of each other, as in PyTorch.
"""

from ._worker import WorkerInfo, get_worker_info
from .collate import default_collate
from .dataloader import DataLoader
from .dataset import Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
)

__all__ = [
    "BatchSampler",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WorkerInfo",
    "default_collate",
    "get_worker_info",
    "random_split",
]
