"""Datasets (torch.utils.data.dataset): map-style and iterable datasets,
TensorDataset, Subset and random_split."""

import inspect
import math

from ... import _stride

_data = _stride._data


class Dataset:
    """A map-style dataset: define `__len__()` and `__getitem__(index)`, or
    `__getitem__(index, generator)` to receive the sample's own generator
    (see the module's docstring)."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index)")


class IterableDataset(Dataset):
    """An iterable dataset: define `__iter__()`. With several workers each
    worker iterates its own copy of the stream, so shard it with
    `get_worker_info()` (its `id` and `num_workers`) or every worker yields the
    same examples; take randomness from `get_worker_info().generator`."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")


def _length(data_source, who, name):
    """len(data_source), or a TypeError naming the caller and argument."""
    try:
        return len(data_source)
    except TypeError:
        raise TypeError(
            f"[{who}] {name} must have a length (a dataset or a sequence); got "
            f"{type(data_source).__name__}."
        ) from None


def _index_list(indices, who):
    """indices as a list, or a TypeError naming the caller."""
    try:
        return list(indices)
    except TypeError:
        raise TypeError(
            f"[{who}] indices must be an iterable of ints; got {type(indices).__name__}."
        ) from None


class TensorDataset(Dataset):
    """Rows of tensors sharing their first dimension: sample i is
    `tuple(t[i] for t in tensors)`, each row a view."""

    def __init__(self, *tensors):
        for t in tensors:
            if not isinstance(t, _stride.Tensor):
                raise TypeError(
                    f"[TensorDataset] tensors must be stride tensors; got {type(t).__name__}. "
                    "Hint: stride.tensor(a) converts a NumPy array."
                )
        sizes = {len(t) for t in tensors}
        if len(sizes) > 1:
            shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
            raise ValueError(f"[TensorDataset] the tensors' first dimensions differ; got {shapes}.")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return len(self.tensors[0]) if self.tensors else 0


def _generator_mode(dataset):
    """How `dataset.__getitem__` takes the sample's generator: "keyword" when
    it has a parameter named `generator`, "positional" when it accepts a
    second positional argument, None when it takes the index alone (or its
    signature cannot be read, as for some C types)."""
    getitem = getattr(dataset, "__getitem__", None)
    if getitem is None:
        return None
    try:
        signature = inspect.signature(getitem)
    except (TypeError, ValueError):
        return None
    if "generator" in signature.parameters:
        return "keyword"
    try:
        signature.bind(0, None)
    except TypeError:
        return None
    return "positional"


def _call_getitem(dataset, mode, index, generator):
    if mode == "keyword":
        return dataset.__getitem__(index, generator=generator)
    if mode == "positional":
        return dataset.__getitem__(index, generator)
    return dataset[index]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order. The sample
    generator a loader hands Subset's item i goes on to `dataset` when its
    `__getitem__` takes one."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = _index_list(indices, "Subset")
        self._mode = _generator_mode(dataset)

    def __getitem__(self, index, generator=None):
        return _call_getitem(self.dataset, self._mode, self.indices[index], generator)

    def __len__(self):
        return len(self.indices)


def _split_lengths(lengths, n):
    """PyTorch's rule: fractions summing to 1 become counts (floors, then the
    remainder one by one from the first); counts must sum to n."""
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(
            f"[random_split] the lengths sum to {sum(lengths)} but the dataset has {n} samples."
        )
    return lengths


def random_split(dataset, lengths, generator=None):
    """Splits `dataset` into non-overlapping Subsets of the given lengths (or
    fractions summing to 1) after a random permutation drawn from
    `generator` (default: stride.default_generator) by the C++
    RandomSampler."""
    n = _length(dataset, "random_split", "dataset")
    lengths = _split_lengths(lengths, n)
    generator = _stride.default_generator if generator is None else generator
    order = _data.RandomSampler(n).indices(generator)
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start : start + length]))
        start += length
    return subsets
