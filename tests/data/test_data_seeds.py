"""Random transformations under `em.random.set_seed` (TF's `random_seed.get_seed` rules):
a global seed set before `shuffle` (or `sample_from_datasets`, `list_files`) is made fixes
its order in every run and every process; an op seed is used together with the global
seed; with neither, the order is nondeterministic. Keras's `fit(shuffle=True)` follows the
same rule (tests/training/test_keras_fit_seed.py)."""

import subprocess
import sys
import textwrap

import pytest

import ember as em
from ember.frontend import random_seed

D = em.data.Dataset


def _order(ds):
    return [int(x) for x in ds.as_numpy_iterator()]


def _epochs(global_seed, n=2, **kwargs):
    em.random.set_seed(global_seed)
    ds = D.range(20).shuffle(10, **kwargs)
    return [_order(ds) for _ in range(n)]


def test_shuffle_without_seed_follows_the_global_seed():
    first = _epochs(7)
    assert _epochs(7) == first
    assert sorted(first[0]) == list(range(20)) and first[0] != list(range(20))
    assert first[0] != first[1]  # reshuffled each pass, the same sequence of orders
    assert _epochs(8) != first
    fixed = _epochs(7, n=3, reshuffle_each_iteration=False)
    assert fixed[0] == fixed[1] == fixed[2]


def test_two_shuffles_made_after_one_set_seed_differ():
    em.random.set_seed(7)
    a, b = D.range(20).shuffle(20), D.range(20).shuffle(20)
    assert _order(a) != _order(b)


def test_an_op_seed_is_used_with_the_global_seed():
    assert _epochs(1, seed=3) == _epochs(1, seed=3)
    assert _epochs(1, seed=3) != _epochs(2, seed=3)
    assert _epochs(1, seed=3) != _epochs(1, seed=4)


def test_without_any_seed_the_order_is_nondeterministic(monkeypatch):
    monkeypatch.setitem(random_seed._global, "seed", None)
    orders = {tuple(_order(D.range(30).shuffle(30))) for _ in range(4)}
    assert len(orders) > 1
    ds = D.range(30).shuffle(30, reshuffle_each_iteration=False)
    assert _order(ds) == _order(ds)


def test_sample_from_datasets_and_list_files_follow_the_global_seed(tmp_path):
    for name in "abcdefgh":
        (tmp_path / f"{name}.txt").write_text(name)

    def picks():
        em.random.set_seed(5)
        sampled = D.sample_from_datasets([D.range(10), D.range(100, 110)])
        files = D.list_files(str(tmp_path / "*.txt"))
        return _order(sampled), [bytes(f) for f in files.as_numpy_iterator()]
    assert picks() == picks()


def _fold(ds):
    """The order of `ds`'s elements as one number (a function that iterates it)."""
    total = em.constant(0, em.int64)
    for x in ds:
        total = total * 31 + x
    return total


def test_a_shuffle_made_inside_a_function_matches_eager_after_set_seed():
    def shuffled():
        return _fold(D.range(12).shuffle(12))
    em.random.set_seed(11)
    eager = int(shuffled())
    em.random.set_seed(11)
    compiled = int(em.function(shuffled)())
    em.random.set_seed(11)
    assert int(em.function(shuffled)()) == compiled == eager


def test_the_order_is_the_same_in_another_process():
    code = """
        import ember as em
        em.random.set_seed(7)
        ds = em.data.Dataset.range(20).shuffle(10)
        for _ in range(2):
            print([int(x) for x in ds.as_numpy_iterator()])
        """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(order) for order in _epochs(7)]


@pytest.mark.parametrize("seed", [None, 3])
def test_autoshard_copies_keep_the_shuffle_seed(seed):
    em.random.set_seed(4)
    ds = D.range(10).shuffle(10, seed=seed, reshuffle_each_iteration=False)
    copy = ds._replace_inputs(ds._inputs())
    assert _order(copy) == _order(ds)
