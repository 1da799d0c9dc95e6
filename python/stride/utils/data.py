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

import collections
import collections.abc
import functools
import inspect
import math
import threading

import numpy as np

from .. import _stride

_data = _stride._data

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

_U64 = (1 << 64) - 1

# ---- datasets ----


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


# ---- samplers ----


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


# ---- worker info ----


class WorkerInfo:
    """Which worker runs a dataset's code: `id` in [0, num_workers), the
    `epoch`, `seed` (this worker's generator's seed), `generator` (this
    worker's own stride.Generator, from the C++
    `worker_generator(worker_base_seed(seed, epoch), id)`) and `dataset`.
    With num_workers=0 the consumer thread runs the dataset as worker 0 of 1
    (`in_consumer_thread` is True), as the C++ loader does, so sharding code
    `index % num_workers == id` stays valid; PyTorch returns None there."""

    __slots__ = ("id", "num_workers", "epoch", "seed", "generator", "dataset", "in_consumer_thread")

    def __init__(self, worker_id, num_workers, epoch, base_seed, dataset, in_consumer_thread):
        self.id = worker_id
        self.num_workers = num_workers
        self.epoch = epoch
        self.generator = _data.worker_generator(base_seed, worker_id)
        self.seed = self.generator.initial_seed()
        self.dataset = dataset
        self.in_consumer_thread = in_consumer_thread

    def __repr__(self):
        return (
            f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, epoch={self.epoch}, "
            f"seed={self.seed})"
        )


_worker_local = threading.local()


def get_worker_info():
    """The WorkerInfo of the calling thread while it runs dataset code for a
    DataLoader; None anywhere else."""
    return getattr(_worker_local, "info", None)


class _WorkerInfoScope:
    """Installs a WorkerInfo for the calling thread, restoring the previous
    one on exit (the consumer thread may run several loaders)."""

    def __init__(self, info):
        self._info = info

    def __enter__(self):
        self._previous = get_worker_info()
        _worker_local.info = self._info

    def __exit__(self, *exc):
        _worker_local.info = self._previous


# ---- collate ----


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def _collate_numpy(batch):
    elem = batch[0]
    if elem.dtype.kind in "OSUV":
        raise TypeError(f"default_collate: numpy arrays of dtype {elem.dtype} cannot be collated.")
    # np.stack makes one new contiguous array, which the tensor then shares.
    return _stride.from_numpy(np.ascontiguousarray(np.stack(batch)))


def _collate_sequences(batch):
    elem = batch[0]
    size = len(elem)
    for i, item in enumerate(batch):
        if len(item) != size:
            raise RuntimeError(
                f"default_collate: each element in the batch should be of equal size; item 0 "
                f"has {size} and item {i} has {len(item)}."
            )
    columns = [default_collate(list(samples)) for samples in zip(*batch)]
    if _is_namedtuple(elem):
        return type(elem)(*columns)
    if isinstance(elem, tuple):
        return columns  # PyTorch returns a list for tuples
    try:
        return type(elem)(columns)
    except TypeError:
        return columns


def default_collate(batch):
    """Turns a list of samples into a batch, as torch's default_collate:
    tensors are stacked into (B, ...); NumPy arrays and NumPy scalars become
    tensors of their dtype; Python floats a float64 tensor, ints an int64 one,
    bools a bool one; strings and bytes stay a list; dicts, named tuples,
    tuples and lists are collated field by field (tuples give lists)."""
    if not isinstance(batch, (collections.abc.Sequence, np.ndarray)) or isinstance(
        batch, (str, bytes)
    ):
        raise TypeError(
            f"default_collate: batch must be a sequence of samples; got {type(batch).__name__}."
        )
    elem = batch[0]
    if isinstance(elem, _stride.Tensor):
        return _stride.stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        return _collate_numpy([np.asarray(x) for x in batch])
    if isinstance(elem, bool):
        return _stride.tensor(list(batch), dtype=_stride.bool)
    if isinstance(elem, int):
        return _stride.tensor(list(batch), dtype=_stride.int64)
    if isinstance(elem, float):
        return _stride.tensor(list(batch), dtype=_stride.float64)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, collections.abc.Sequence):
        return _collate_sequences(batch)
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
        f"lists; found {type(elem).__name__}."
    )


# ---- the loader ----


def _annotate(error, worker_id, in_consumer_thread, epoch, step, sample_index, batch_index):
    """Adds the C++ loader's wording of where the failure happened."""
    error.add_note(
        _data.worker_error_message(
            worker_id, in_consumer_thread, epoch, step, sample_index, batch_index, str(error)
        )
    )
    return error


class _Fetcher:
    """Builds batches of a map-style dataset: each sample with its generator
    (when __getitem__ takes one), then the collate function."""

    def __init__(self, dataset, mode, collate_fn, seed, epoch):
        self.dataset = dataset
        self.mode = mode  # _generator_mode(dataset)
        self.collate_fn = collate_fn
        self.seed = seed
        self.epoch = epoch

    def sample(self, index):
        generator = None
        if self.mode is not None:
            generator = _data.sample_generator(self.seed, self.epoch, index)
        return _call_getitem(self.dataset, self.mode, index, generator)

    def batch(self, k, indices, info, stopping=lambda: False):
        """Batch k, or an annotated exception; None when stopped."""
        samples = []
        for index in indices:
            if stopping():
                return None
            try:
                samples.append(self.sample(index))
            except Exception as e:
                return _annotate(e, info.id, info.in_consumer_thread, self.epoch, "get", index, k)
        try:
            return _Batch(self.collate_fn(samples))
        except Exception as e:
            return _annotate(e, info.id, info.in_consumer_thread, self.epoch, "collate", -1, k)


class _Batch:
    """A built batch (so that a batch which is itself an exception object
    cannot be mistaken for a failure)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _unwrap(item):
    if isinstance(item, BaseException):
        raise item
    return item.value


class _MapConsumerRun:
    """One epoch of a map-style dataset with num_workers=0: the consumer
    builds each batch when asked."""

    def __init__(self, fetcher, batches, info):
        self._fetcher = fetcher
        self._batches = batches
        self._info = info
        self._next = 0

    def next(self):
        if self._next >= len(self._batches):
            raise StopIteration
        k = self._next
        self._next += 1
        with _WorkerInfoScope(self._info):
            item = self._fetcher.batch(k, self._batches[k], self._info)
        if isinstance(item, BaseException):
            self._next = len(self._batches)  # the epoch ends with its error
        return _unwrap(item)

    def stop(self):
        self._next = len(self._batches)


class _ThreadRun:
    """What the threaded runs share: a condition guarding their state, the
    stop flag, and the workers, which notify the condition when they exit."""

    def _start(self, targets):
        self._threads = [
            threading.Thread(
                target=self._run_worker,
                args=(w, target),
                daemon=True,
                name=f"stride DataLoader worker {w}",
            )
            for w, target in enumerate(targets)
        ]
        for thread in self._threads:
            thread.start()

    def _run_worker(self, w, target):
        try:
            target()
        finally:
            with self._cv:
                self._cv.notify_all()  # a stop raised without the lock reaches the others

    def stop(self):
        """Stops the workers (each finishes at most its current sample) and
        joins them."""
        if threading.current_thread() in self._threads:
            # A worker finalising a dropped iterator of its own run (the garbage
            # collector runs wherever memory is allocated, maybe while this
            # thread holds self._cv): taking the lock or joining would deadlock
            # here, so only raise the flag; the worker wakes the others on exit.
            self._stopping = True
            return
        with self._cv:
            self._stopping = True
            self._drop_pending()
            self._cv.notify_all()
        for thread in self._threads:
            thread.join()


class _MapThreadRun(_ThreadRun):
    """One epoch of a map-style dataset on worker threads (Note [DataLoader
    workers] in include/stride/data/dataloader.h): workers take batch indices
    in order from a shared counter, at most `capacity` batches are dispatched
    and not yet consumed, and the consumer takes batch k from `results` when
    it is there, whatever order they finish in."""

    def __init__(self, fetcher, batches, num_workers, prefetch_factor, base_seed, dataset):
        self._fetcher = fetcher
        self._batches = batches
        self._capacity = num_workers * prefetch_factor
        self._cv = threading.Condition()
        self._results = {}
        self._next_dispatch = 0
        self._next_consume = 0
        self._stopping = False
        self._start(
            [
                functools.partial(
                    self._work, WorkerInfo(w, num_workers, fetcher.epoch, base_seed, dataset, False)
                )
                for w in range(num_workers)
            ]
        )

    def _take_batch_index(self):
        """The next batch to build, waiting for room; None when done."""
        with self._cv:
            self._cv.wait_for(
                lambda: (
                    self._stopping
                    or self._next_dispatch >= len(self._batches)
                    or self._next_dispatch < self._next_consume + self._capacity
                )
            )
            if self._stopping or self._next_dispatch >= len(self._batches):
                return None
            k = self._next_dispatch
            self._next_dispatch += 1
            return k

    def _work(self, info):
        _worker_local.info = info
        while (k := self._take_batch_index()) is not None:
            try:
                item = self._fetcher.batch(k, self._batches[k], info, lambda: self._stopping)
            except BaseException as e:  # SystemExit and the like: the consumer must not wait
                item = _annotate(e, info.id, False, info.epoch, "other", -1, k)
            if item is None:
                return
            with self._cv:
                self._results[k] = item
                self._cv.notify_all()

    def next(self):
        with self._cv:
            if self._stopping or self._next_consume >= len(self._batches):
                raise StopIteration
            k = self._next_consume
            self._cv.wait_for(lambda: self._stopping or k in self._results)
            if k not in self._results:
                raise StopIteration
            item = self._results.pop(k)
            self._next_consume += 1
            self._cv.notify_all()
        if isinstance(item, BaseException):
            self.stop()
        return _unwrap(item)

    def _drop_pending(self):
        self._results.clear()


class _Stream:
    """One worker's stream of an iterable dataset, cut into batches."""

    def __init__(self, dataset, collate_fn, batch_size, drop_last, info):
        self._dataset = dataset
        self._collate_fn = collate_fn
        self._batch_size = batch_size
        self._drop_last = drop_last
        self._info = info
        self._iterator = None
        self._position = 0  # examples taken so far
        self.ended = False

    def next_batch(self, stopping=lambda: False):
        """The next batch, an annotated exception, or None at the end (or
        when stopped)."""
        info = self._info
        if self._iterator is None:
            try:
                self._iterator = iter(self._dataset)
            except Exception as e:
                self.ended = True
                return _annotate(
                    e, info.id, info.in_consumer_thread, info.epoch, "start_stream", -1, -1
                )
        examples = []
        while not self.ended and len(examples) < self._batch_size:
            if stopping():
                return None
            try:
                examples.append(next(self._iterator))
            except StopIteration:
                self.ended = True
            except Exception as e:
                self.ended = True
                return _annotate(
                    e,
                    info.id,
                    info.in_consumer_thread,
                    info.epoch,
                    "next_example",
                    self._position,
                    -1,
                )
            else:
                self._position += 1
        if not examples or (len(examples) < self._batch_size and self._drop_last):
            self.ended = True
            return None
        try:
            return _Batch(self._collate_fn(examples))
        except Exception as e:
            self.ended = True
            return _annotate(e, info.id, info.in_consumer_thread, info.epoch, "collate", -1, -1)


class _StreamConsumerRun:
    """One epoch of an iterable dataset with num_workers=0: the consumer
    reads the stream as worker 0 of 1."""

    def __init__(self, stream, info):
        self._stream = stream
        self._info = info

    def next(self):
        with _WorkerInfoScope(self._info):
            item = None if self._stream.ended else self._stream.next_batch()
        if item is None:
            raise StopIteration
        return _unwrap(item)

    def stop(self):
        self._stream.ended = True


class _StreamThreadRun(_ThreadRun):
    """One epoch of an iterable dataset on worker threads: worker w fills its
    own queue (at most prefetch_factor batches) from its stream, and the
    consumer takes batches round-robin over the workers, skipping a worker
    once its stream has ended, so the order depends only on what each stream
    yields (the C++ StreamRun's rule)."""

    _END = object()

    def __init__(self, streams, prefetch_factor):
        self._prefetch_factor = prefetch_factor
        self._cv = threading.Condition()
        self._queues = [collections.deque() for _ in streams]
        self._live = list(range(len(streams)))
        self._cursor = 0
        self._stopping = False
        self._start([functools.partial(self._work, w, stream) for w, stream in enumerate(streams)])

    def _push(self, w, item):
        """Appends to worker w's queue, waiting for room; False when stopping."""
        with self._cv:
            queue = self._queues[w]
            self._cv.wait_for(lambda: self._stopping or len(queue) < self._prefetch_factor)
            if self._stopping:
                return False
            queue.append(item)
            self._cv.notify_all()
            return True

    def _work(self, w, stream):
        _worker_local.info = stream._info
        while True:
            try:
                item = stream.next_batch(lambda: self._stopping)
            except BaseException as e:  # SystemExit and the like: the consumer must not wait
                item = _annotate(e, w, False, stream._info.epoch, "other", -1, -1)
            if item is None:
                self._push(w, self._END)
                return
            if not self._push(w, item) or isinstance(item, BaseException):
                return

    def next(self):
        while True:
            with self._cv:
                if self._stopping or not self._live:
                    raise StopIteration
                w = self._live[self._cursor]
                queue = self._queues[w]
                self._cv.wait_for(lambda queue=queue: self._stopping or queue)
                if self._stopping:
                    raise StopIteration
                item = queue.popleft()
                self._cv.notify_all()
                if item is self._END:
                    self._live.remove(w)
                    self._cursor = self._cursor % len(self._live) if self._live else 0
                    continue
                self._cursor = (self._cursor + 1) % len(self._live)
            if isinstance(item, BaseException):
                self.stop()
            return _unwrap(item)

    def _drop_pending(self):
        for queue in self._queues:
            queue.clear()


class _EpochIterator:
    """An epoch's batches. Dropping it (or `close()`) stops and joins the
    epoch's workers; the workers hold the run, never this object, so it is
    dropped as soon as the consumer lets go of it (e.g. `break`)."""

    def __init__(self, run, length):
        self._run = run
        self._length = length

    def __iter__(self):
        return self

    def __next__(self):
        return self._run.next()

    def __len__(self):
        if self._length is None:
            raise TypeError("this DataLoader's iterable dataset has no len()")
        return self._length

    def close(self):
        """Stops the epoch: its workers finish their current sample and are
        joined; the iterator then yields nothing more."""
        self._run.stop()

    def __del__(self):
        run = getattr(self, "_run", None)
        if run is not None:
            run.stop()


class DataLoader:
    """Batches from a dataset, as torch.utils.data.DataLoader, built by
    worker threads when num_workers > 0.

    dataset: map-style (`__len__`, `__getitem__(index[, generator])`) or
      iterable (an IterableDataset, or anything with `__iter__` and no
      `__getitem__`).
    batch_size, drop_last: batches of batch_size samples; the last is shorter
      unless drop_last.
    shuffle: a new random order each epoch (a RandomSampler); sampler: a
      custom order instead (an iterable of indices; see Sampler).
    num_workers: worker threads (0: the consumer builds each batch);
      prefetch_factor: batches in flight per worker.
    collate_fn: turns a list of samples into a batch (default_collate).
    seed: the loader's seed; without it, one draw from `generator` when given,
      else from the default generator (stride.manual_seed fixes it).
    The module's docstring describes the randomness, threads and errors."""

    def __init__(
        self,
        dataset,
        batch_size=1,
        shuffle=False,
        sampler=None,
        drop_last=False,
        num_workers=0,
        prefetch_factor=2,
        collate_fn=None,
        seed=None,
        generator=None,
    ):
        self.dataset = dataset
        self._iterable = isinstance(dataset, IterableDataset) or (
            not hasattr(dataset, "__getitem__") and hasattr(dataset, "__iter__")
        )
        size = -1 if self._iterable else _length(dataset, "DataLoader", "dataset")
        _data.check_options(
            batch_size,
            bool(shuffle),
            bool(drop_last),
            num_workers,
            prefetch_factor,
            sampler is not None,
            self._iterable,
            size,
        )
        self.batch_size = batch_size
        self.drop_last = bool(drop_last)
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.seed = self._resolve_seed(seed, generator)
        self.sampler = None
        self._generator_mode = None if self._iterable else _generator_mode(dataset)
        if not self._iterable:
            if sampler is None:
                sampler = RandomSampler(dataset) if shuffle else SequentialSampler(dataset)
            self.sampler = sampler
        self._epoch = 0

    @staticmethod
    def _resolve_seed(seed, generator):
        if seed is not None and generator is not None:
            raise ValueError("[DataLoader] pass seed or generator, not both.")
        if seed is not None:
            return int(seed) & _U64
        if generator is not None:
            return generator.next_u64()
        return _data.default_loader_seed()

    @property
    def epoch(self):
        """The epoch the next iter() starts (0 for a new loader)."""
        return self._epoch

    def set_epoch(self, epoch):
        """Sets the epoch the next iter() starts, e.g. to resume a run."""
        self._epoch = int(epoch)

    def __len__(self):
        """Batches per epoch (map-style datasets, or iterable ones with a len())."""
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _epoch_batches(self, epoch):
        if hasattr(self.sampler, "indices"):
            indices = list(self.sampler.indices(_data.sampler_generator(self.seed, epoch)))
        else:
            indices = [int(i) for i in self.sampler]
        batches = _batch_indices(indices, self.batch_size, self.drop_last)
        _data.check_batch_indices(batches, len(self.dataset))
        return batches

    def _map_run(self, epoch):
        batches = self._epoch_batches(epoch)
        fetcher = _Fetcher(self.dataset, self._generator_mode, self.collate_fn, self.seed, epoch)
        base_seed = _data.worker_base_seed(self.seed, epoch)
        if self.num_workers == 0:
            info = WorkerInfo(0, 1, epoch, base_seed, self.dataset, True)
            return _MapConsumerRun(fetcher, batches, info), len(batches)
        run = _MapThreadRun(
            fetcher, batches, self.num_workers, self.prefetch_factor, base_seed, self.dataset
        )
        return run, len(batches)

    def _stream_run(self, epoch):
        base_seed = _data.worker_base_seed(self.seed, epoch)
        workers = max(self.num_workers, 1)
        streams = [
            _Stream(
                self.dataset,
                self.collate_fn,
                self.batch_size,
                self.drop_last,
                WorkerInfo(w, workers, epoch, base_seed, self.dataset, self.num_workers == 0),
            )
            for w in range(workers)
        ]
        if self.num_workers == 0:
            return _StreamConsumerRun(streams[0], streams[0]._info), None
        return _StreamThreadRun(streams, self.prefetch_factor), None

    def __iter__(self):
        """Starts the next epoch and returns its iterator."""
        epoch = self._epoch
        self._epoch += 1
        run, length = self._stream_run(epoch) if self._iterable else self._map_run(epoch)
        return _EpochIterator(run, length)
