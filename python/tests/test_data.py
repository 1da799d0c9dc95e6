"""stride.utils.data: the DataLoader over Python datasets, on threads, with
randomness that cannot repeat across workers, samples or epochs."""

import collections
import gc
import random
import threading
import time

import numpy as np
import pytest
import stride
from stride import _stride
from stride.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Subset,
    TensorDataset,
    default_collate,
    get_worker_info,
    random_split,
)


class NoisyDataset(Dataset):
    """Draws NumPy numbers inside __getitem__: the seed-001 pattern, which in
    PyTorch's forked workers repeats the same numbers in every worker."""

    def __len__(self):
        return 23

    def __getitem__(self, index, generator):
        return generator.numpy().random(4), index


class IndexDataset(Dataset):
    def __init__(self, n, sleep=0.0):
        self.n = n
        self.sleep = sleep
        self.calls = 0
        self.lock = threading.Lock()

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        with self.lock:
            self.calls += 1
        if self.sleep:
            time.sleep(random.random() * self.sleep)
        return index


def worker_threads():
    return [t for t in threading.enumerate() if t.name.startswith("stride DataLoader worker")]


def noisy_epochs(num_workers, seed=7, epochs=2):
    loader = DataLoader(
        NoisyDataset(), batch_size=5, shuffle=True, num_workers=num_workers, seed=seed
    )
    return [[(x.numpy().copy(), i.tolist()) for x, i in loader] for _ in range(epochs)]


def rows_by_index(epoch):
    return {i: row.tobytes() for x, idx in epoch for row, i in zip(x, idx)}


# ---- the seed bug, as a regression test ----


def test_numpy_randomness_is_identical_for_every_num_workers():
    reference = noisy_epochs(0)
    for num_workers in (1, 3):
        got = noisy_epochs(num_workers)
        assert len(got) == len(reference)
        for epoch_got, epoch_ref in zip(got, reference):
            assert [i for _, i in epoch_got] == [i for _, i in epoch_ref]
            for (x, _), (y, _) in zip(epoch_got, epoch_ref):
                assert np.array_equal(x, y)


def test_numpy_randomness_differs_across_samples_and_epochs():
    epochs = noisy_epochs(3)
    first, second = rows_by_index(epochs[0]), rows_by_index(epochs[1])
    assert sorted(first) == list(range(23))
    assert len(set(first.values())) == 23  # no two samples share numbers
    assert all(first[i] != second[i] for i in range(23))  # nor does a sample across epochs
    assert [i for _, i in epochs[0]] != [i for _, i in epochs[1]]  # a new order each epoch


def test_the_same_seed_reproduces_and_another_seed_does_not():
    a, b, c = noisy_epochs(2, seed=1), noisy_epochs(2, seed=1), noisy_epochs(2, seed=2)
    assert rows_by_index(a[0]) == rows_by_index(b[0])
    assert rows_by_index(a[0]) != rows_by_index(c[0])


def test_a_sample_gets_the_cpp_loaders_generator():
    seen = {}

    class Recording(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, index, generator=None):
            seen[index] = generator.get_state()
            return index

    loader = DataLoader(Recording(), batch_size=2, num_workers=2, seed=99)
    for epoch in range(2):
        seen.clear()
        list(loader)
        for i in range(6):
            assert seen[i] == _stride._data.sample_generator(99, epoch, i).get_state()


def test_a_getitem_without_a_generator_is_called_with_the_index_alone():
    loader = DataLoader(list(range(10, 20)), batch_size=4)
    assert [b.tolist() for b in loader] == [[10, 11, 12, 13], [14, 15, 16, 17], [18, 19]]


# ---- order, seeding and the C++ loader ----


def test_shuffle_visits_the_cpp_loaders_order():
    loader = DataLoader(IndexDataset(50), batch_size=8, shuffle=True, seed=3, num_workers=2)
    for epoch in range(3):
        order = [i for batch in loader for i in batch.tolist()]
        generator = _stride._data.sampler_generator(3, epoch)
        assert order == _stride._data.RandomSampler(50).indices(generator)
        assert sorted(order) == list(range(50))


def test_batches_arrive_in_sampler_order_whatever_order_they_finish_in():
    dataset = IndexDataset(40, sleep=0.005)
    expected = [list(range(i, min(i + 3, 40))) for i in range(0, 40, 3)]
    got = [b.tolist() for b in DataLoader(dataset, batch_size=3, num_workers=4)]
    assert got == expected
    shuffled = [
        DataLoader(dataset, batch_size=3, shuffle=True, seed=5, num_workers=w) for w in (0, 4)
    ]
    assert [b.tolist() for b in shuffled[0]] == [b.tolist() for b in shuffled[1]]


def test_without_a_seed_the_loader_draws_one_from_the_default_generator():
    stride.manual_seed(21)
    a = DataLoader(IndexDataset(30), shuffle=True)
    stride.manual_seed(21)
    b = DataLoader(IndexDataset(30), shuffle=True)
    stride.manual_seed(22)
    c = DataLoader(IndexDataset(30), shuffle=True)
    assert a.seed == b.seed != c.seed
    assert [x.item() for x in a] == [x.item() for x in b]
    g = stride.Generator(4)
    assert DataLoader(IndexDataset(3), generator=g).seed == stride.Generator(4).next_u64()
    with pytest.raises(ValueError, match="seed or generator"):
        DataLoader(IndexDataset(3), seed=1, generator=g)


def test_set_epoch_replays_an_epoch():
    loader = DataLoader(NoisyDataset(), batch_size=4, shuffle=True, seed=8)
    first = [x.numpy().copy() for x, _ in loader]
    loader.set_epoch(0)
    assert loader.epoch == 0
    again = [x.numpy().copy() for x, _ in loader]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))


def test_at_most_prefetch_factor_times_num_workers_batches_are_in_flight():
    dataset = IndexDataset(300)
    it = iter(DataLoader(dataset, batch_size=3, num_workers=2, prefetch_factor=2))
    assert next(it).tolist() == [0, 1, 2]
    # Batch 0 consumed: batches 1..4 may be dispatched, 5 batches built in all.
    deadline = time.monotonic() + 10
    while dataset.calls < 5 * 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)  # time to overshoot, were the bound not kept
    assert dataset.calls == 5 * 3
    it.close()


def test_breaking_out_of_a_loop_stops_and_joins_the_workers():
    dataset = IndexDataset(1000, sleep=0.002)
    for batch in DataLoader(dataset, batch_size=4, num_workers=3):
        if batch[0].item() >= 8:
            break
    gc.collect()
    assert worker_threads() == []
    calls = dataset.calls
    assert calls <= (3 + 1 + 3 * 2) * 4  # consumed + in flight, nothing after the break
    time.sleep(0.05)
    assert dataset.calls == calls


def test_a_finished_or_closed_epoch_leaves_no_threads():
    loader = DataLoader(IndexDataset(20), batch_size=4, num_workers=2)
    assert len(list(loader)) == 5
    it = iter(loader)
    next(it)
    it.close()
    with pytest.raises(StopIteration):
        next(it)
    del it
    gc.collect()
    assert worker_threads() == []


def test_an_epoch_stopped_from_its_own_worker_ends_without_deadlock():
    # What the garbage collector does when it finalises a dropped iterator on
    # one of that epoch's worker threads.
    iterators = []

    class SelfStopping(Dataset):
        def __len__(self):
            return 100

        def __getitem__(self, index):
            if index == 10:
                iterators[0].close()
            return index

    iterators.append(iter(DataLoader(SelfStopping(), batch_size=2, num_workers=2)))
    got = [i for batch in iterators[0] for i in batch.tolist()]
    assert got == list(range(len(got))) and len(got) <= 10
    iterators.clear()
    gc.collect()
    assert worker_threads() == []


# ---- errors ----


class Failing(Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, index):
        if index == 7:
            raise KeyError(f"no sample {index}")
        return index


@pytest.mark.parametrize("num_workers", [0, 2])
def test_a_dataset_error_reraises_as_itself_with_a_note_naming_worker_and_sample(num_workers):
    it = iter(DataLoader(Failing(), batch_size=2, num_workers=num_workers))
    assert [next(it).tolist() for _ in range(3)] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(KeyError, match="no sample 7") as info:
        next(it)
    note = "\n".join(info.value.__notes__)
    assert "[DataLoader] worker" in note and "loading sample 7 (batch 3, epoch 0)" in note
    if num_workers == 0:
        assert "the consumer thread" in note
    with pytest.raises(StopIteration):
        next(it)  # the epoch ended with its error
    del it
    gc.collect()
    assert worker_threads() == []


@pytest.mark.parametrize("num_workers", [0, 3])
def test_a_collate_error_reraises_with_a_note(num_workers):
    def collate(samples):
        if 6 in samples:
            raise ValueError("bad batch")
        return samples

    loader = DataLoader(IndexDataset(10), batch_size=3, num_workers=num_workers, collate_fn=collate)
    with pytest.raises(ValueError, match="bad batch") as info:
        list(loader)
    assert "collating batch 2 (epoch 0)" in "\n".join(info.value.__notes__)


def test_bad_options_raise_the_cpp_loaders_errors():
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        DataLoader(IndexDataset(3), batch_size=0)
    with pytest.raises(ValueError, match="num_workers must be non-negative"):
        DataLoader(IndexDataset(3), num_workers=-1)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(IndexDataset(3), shuffle=True, sampler=[0, 1])
    with pytest.raises(ValueError, match="shuffle needs a map-style dataset"):
        DataLoader(Shards(6), shuffle=True)
    with pytest.raises(IndexError, match="yielded index 5"):
        list(DataLoader(IndexDataset(3), sampler=[0, 5]))


# ---- iterable datasets ----


class Shards(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        return iter(range(info.id, self.n, info.num_workers))


def test_an_iterable_dataset_shards_with_get_worker_info():
    got = [b.tolist() for b in DataLoader(Shards(20), batch_size=2, num_workers=3)]
    assert sorted(i for b in got for i in b) == list(range(20))
    # Round-robin over the workers: 0, 3, 6, ... from worker 0, then worker 1, ...
    streams = [list(range(w, 20, 3)) for w in range(3)]
    batches = [[s[i : i + 2] for i in range(0, len(s), 2)] for s in streams]
    expected = [b[k] for k in range(max(map(len, batches))) for b in batches if k < len(b)]
    assert got == expected


def test_an_iterable_dataset_runs_in_the_consumer_as_worker_0_of_1():
    infos = []

    class Recording(IterableDataset):
        def __iter__(self):
            infos.append(get_worker_info())
            yield from range(5)

    assert [b.tolist() for b in DataLoader(Recording(), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert infos[0].id == 0 and infos[0].num_workers == 1 and infos[0].in_consumer_thread
    assert get_worker_info() is None


def test_worker_generators_make_iterable_streams_reproducible():
    class Random(IterableDataset):
        def __iter__(self):
            rng = get_worker_info().generator.numpy()
            for _ in range(4):
                yield rng.random()

    def run(seed):
        loader = DataLoader(Random(), batch_size=2, num_workers=2, seed=seed)
        return [[b.tolist() for b in loader] for _ in range(2)]

    a = run(1)
    assert a == run(1) and a != run(2)
    assert a[0] != a[1]  # a fresh base seed each epoch
    flat = [x for b in a[0] for x in b]
    assert len(set(flat)) == len(flat)  # the two workers' streams differ


def test_an_iterable_error_names_the_stream_position():
    class Broken(IterableDataset):
        def __iter__(self):
            yield 1
            raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone") as info:
        list(DataLoader(Broken(), batch_size=4, num_workers=1))
    assert "reading example 1 of its stream" in "\n".join(info.value.__notes__)


# ---- datasets and collate ----


def test_tensor_dataset_batches_stack_its_rows():
    x = stride.arange(12, dtype=stride.float32).reshape(6, 2)
    y = stride.arange(6)
    batches = list(DataLoader(TensorDataset(x, y), batch_size=4, drop_last=True))
    assert len(batches) == 1
    xb, yb = batches[0]
    assert xb.tolist() == x[:4].tolist() and yb.tolist() == [0, 1, 2, 3]
    assert len(DataLoader(TensorDataset(x, y), batch_size=4)) == 2
    with pytest.raises(ValueError, match="first dimensions differ"):
        TensorDataset(x, stride.arange(5))


def test_random_split_partitions_the_dataset_reproducibly():
    parts = random_split(IndexDataset(10), [0.7, 0.3], generator=stride.Generator(1))
    again = random_split(IndexDataset(10), [7, 3], generator=stride.Generator(1))
    assert [len(p) for p in parts] == [7, 3]
    assert [p.indices for p in parts] == [p.indices for p in again]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    with pytest.raises(ValueError, match="sum to 9"):
        random_split(IndexDataset(10), [4, 5])


def test_subset_hands_the_sample_generator_on():
    sub = Subset(NoisyDataset(), [5, 2, 9])
    loader = DataLoader(sub, batch_size=3, seed=4)
    x, idx = next(iter(loader))
    assert idx.tolist() == [5, 2, 9]
    expected = _stride._data.sample_generator(4, 0, 1).numpy().random(4)
    assert np.array_equal(x.numpy()[1], expected)  # Subset's index 1, not dataset index 2


def test_random_sampler_alone_draws_from_its_generator():
    a = list(RandomSampler(range(10), generator=stride.Generator(3)))
    b = list(RandomSampler(range(10), generator=stride.Generator(3)))
    assert a == b and sorted(a) == list(range(10))
    assert len(list(RandomSampler(range(10), replacement=True, num_samples=25))) == 25


def test_default_collate_follows_pytorch():
    Point = collections.namedtuple("Point", "x y")
    batch = default_collate(
        [
            {
                "t": stride.ones(2),
                "n": 1,
                "f": 0.5,
                "b": True,
                "s": "a",
                "a": np.zeros(3, np.float32),
                "p": Point(1, 2.0),
                "seq": (1, [2, 3]),
            },
            {
                "t": stride.zeros(2),
                "n": 2,
                "f": 1.5,
                "b": False,
                "s": "b",
                "a": np.ones(3, np.float32),
                "p": Point(3, 4.0),
                "seq": (4, [5, 6]),
            },
        ]
    )
    assert batch["t"].shape == (2, 2) and batch["t"].tolist() == [[1, 1], [0, 0]]
    assert batch["n"].dtype is stride.int64 and batch["n"].tolist() == [1, 2]
    assert batch["f"].dtype is stride.float64 and batch["f"].tolist() == [0.5, 1.5]
    assert batch["b"].dtype is stride.bool and batch["b"].tolist() == [True, False]
    assert batch["s"] == ["a", "b"]
    assert batch["a"].dtype is stride.float32 and batch["a"].shape == (2, 3)
    assert isinstance(batch["p"], Point) and batch["p"].x.tolist() == [1, 3]
    assert isinstance(batch["seq"], list)  # tuples collate to lists, as in PyTorch
    assert batch["seq"][0].tolist() == [1, 4]
    assert [t.tolist() for t in batch["seq"][1]] == [[2, 5], [3, 6]]
    assert default_collate([np.float32(1), np.float32(2)]).dtype is stride.float32
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="found object"):
        default_collate([object(), object()])
