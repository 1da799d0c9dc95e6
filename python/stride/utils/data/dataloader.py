"""DataLoader (torch.utils.data.dataloader): batches in sampler order from
worker threads, each sample's randomness its own (see the package's
docstring)."""

import collections
import functools
import threading

from ... import _stride
from ._worker import WorkerInfo, _worker_local, _WorkerInfoScope
from .collate import default_collate
from .dataset import IterableDataset, _call_getitem, _generator_mode, _length
from .sampler import RandomSampler, SequentialSampler, _batch_indices

_data = _stride._data

_U64 = (1 << 64) - 1


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
    pin_memory, persistent_workers: accepted for PyTorch's programs; a CPU
      batch needs no pinning, and stride's worker threads cost nothing to
      start each epoch.
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
        pin_memory=False,
        persistent_workers=False,
    ):
        self.dataset = dataset
        self.pin_memory = bool(pin_memory)
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
