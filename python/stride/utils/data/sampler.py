"""Samplers (torch.utils.data.sampler): the orders of an epoch, drawn by the
C++ samplers from the loader's seed, and their batches."""

from ... import _stride
from .dataset import _index_list, _length

_data = _stride._data


class Sampler:
    """An order of a map-style dataset's indices: iterable, with a length.
    A sampler with an `indices(generator)` method is given the loader's epoch
    generator (the C++ `sampler_generator(seed, epoch)`) by DataLoader; any
    other iterable of indices is iterated once per epoch."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")


class _CppSampler(Sampler):
    """A Python face for one of the C++ samplers (`self._sampler`)."""

    generator = None

    def indices(self, generator):
        """One epoch's indices, every random choice drawn from `generator`."""
        return self._sampler.indices(generator)

    def __iter__(self):
        # Outside a loader, as PyTorch: the sampler's own generator, else a
        # fresh one seeded by one draw of the default generator.
        generator = self.generator
        if generator is None:
            generator = _stride.Generator(_stride.default_generator.next_u64())
        return iter(self.indices(generator))

    def __len__(self):
        return len(self._sampler)


class SequentialSampler(_CppSampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self._sampler = _data.SequentialSampler(
            _length(data_source, "SequentialSampler", "data_source")
        )


class RandomSampler(_CppSampler):
    """A random permutation of the indices (Fisher-Yates), or with
    `replacement` num_samples independent uniform draws. `generator` serves
    iteration outside a loader; a DataLoader draws every epoch's order from
    its own seed instead (sampler_generator(seed, epoch)), so that the order
    is a function of the loader's seed and epoch alone."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self._sampler = _data.RandomSampler(
            _length(data_source, "RandomSampler", "data_source"), replacement, num_samples
        )
        self.generator = generator


class SubsetRandomSampler(_CppSampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self._sampler = _data.SubsetRandomSampler(_index_list(indices, "SubsetRandomSampler"))
        self.generator = generator


def _batch_indices(indices, batch_size, drop_last):
    """Consecutive groups of batch_size (the C++ BatchSampler's grouping)."""
    batches = [indices[i : i + batch_size] for i in range(0, len(indices), batch_size)]
    if drop_last and batches and len(batches[-1]) < batch_size:
        batches.pop()
    return batches


class BatchSampler(Sampler):
    """Groups a sampler's indices into lists of batch_size, the last shorter
    unless drop_last."""

    def __init__(self, sampler, batch_size, drop_last):
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        return iter(_batch_indices(list(self.sampler), self.batch_size, self.drop_last))

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
