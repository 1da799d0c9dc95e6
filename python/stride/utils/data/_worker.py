"""The worker a dataset's code runs in (get_worker_info, as
torch.utils.data's)."""

import threading

from ... import _stride

_data = _stride._data


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
