"""stride.Generator: explicit, reproducible streams, and NumPy drawn from them."""

import numpy as np
import pytest
import stride


def test_a_new_generator_starts_from_pytorchs_default_seed_or_the_given_one():
    assert stride.Generator().initial_seed() == 67280421310721
    assert stride.Generator(5).initial_seed() == 5
    g = stride.Generator(1)
    assert g.manual_seed(9) is g and g.initial_seed() == 9 and g.get_state() == (9, 0)


def test_the_same_seed_gives_the_same_numbers_and_leaves_the_default_generator_alone():
    before = stride.default_generator.get_state()
    a = stride.rand(4, 3, generator=stride.Generator(7))
    b = stride.rand(4, 3, generator=stride.Generator(7))
    c = stride.rand(4, 3, generator=stride.Generator(8))
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()
    assert stride.default_generator.get_state() == before


def test_every_random_function_takes_a_generator():
    def draws(seed):
        g = stride.Generator(seed)
        x = stride.zeros(6)
        return [
            stride.rand(3, generator=g).tolist(),
            stride.randn(3, generator=g).tolist(),
            stride.randint(0, 100, (3,), generator=g).tolist(),
            stride.rand_like(x, generator=g).tolist(),
            stride.randn_like(x, generator=g).tolist(),
            x.clone().uniform_(2, 3, generator=g).tolist(),
            x.clone().normal_(0, 1, generator=g).tolist(),
            x.clone().bernoulli_(0.5, generator=g).tolist(),
        ]

    assert draws(3) == draws(3)
    assert all(a != b for a, b in zip(draws(3)[:7], draws(4)[:7]))
    assert stride.randint(5, 6, (4,), generator=stride.Generator(0)).tolist() == [5] * 4


def test_generator_none_means_the_default_generator():
    stride.manual_seed(11)
    a = stride.rand(5, generator=None)
    stride.manual_seed(11)
    assert stride.rand(5).tolist() == a.tolist()


def test_state_round_trips_and_replays_the_stream():
    g = stride.Generator(2)
    stride.randn(10, generator=g)
    state = g.get_state()
    assert state[0] == 2 and state[1] > 0
    first = stride.randn(10, generator=g).tolist()
    assert g.set_state(state) is g
    assert stride.randn(10, generator=g).tolist() == first


def test_manual_seed_seeds_the_default_generator():
    stride.manual_seed(1234)
    assert stride.default_generator.initial_seed() == 1234
    assert stride.default_generator.get_state() == (1234, 0)


def test_seed_reseeds_from_entropy_and_reports_it():
    g = stride.Generator(0)
    seed = g.seed()
    assert g.initial_seed() == seed and g.get_state() == (seed, 0)


def test_fork_is_a_function_of_seed_and_stream_only():
    g = stride.Generator(5)
    stride.rand(3, generator=g)
    state = g.get_state()
    f1, f2 = g.fork(1), stride.Generator(5).fork(1)
    assert g.get_state() == state  # forking does not consume
    assert f1.get_state() == f2.get_state()
    assert f1.initial_seed() not in (5, g.fork(2).initial_seed())


def test_numpy_draws_one_number_and_gives_independent_reproducible_streams():
    g = stride.Generator(3)
    rng1 = g.numpy()
    assert isinstance(rng1, np.random.Generator)
    assert g.get_state() == (3, 1)  # one 64-bit draw
    rng2 = g.numpy()
    a, b = rng1.random(8), rng2.random(8)
    assert not np.array_equal(a, b)
    again = stride.Generator(3).numpy().random(8)
    assert np.array_equal(a, again)


def test_next_u64_is_a_64_bit_draw():
    g = stride.Generator(4)
    values = {g.next_u64() for _ in range(100)}
    assert len(values) == 100 and all(0 <= v < 2**64 for v in values)
    assert g.get_state() == (4, 100)


def test_generators_cannot_be_copied_by_accident():
    import copy

    with pytest.raises(TypeError):
        copy.copy(stride.Generator(1))


def test_randperm_is_the_cpp_random_samplers_permutation():
    from stride import _stride

    p = stride.randperm(50, generator=stride.Generator(6))
    assert p.dtype is stride.int64 and sorted(p.tolist()) == list(range(50))
    assert p.tolist() == _stride._data.RandomSampler(50).indices(stride.Generator(6))
    assert stride.randperm(5, dtype=stride.int32).dtype is stride.int32
    assert stride.randperm(0).shape == (0,)
    with pytest.raises(ValueError, match="non-negative"):
        stride.randperm(-1)
