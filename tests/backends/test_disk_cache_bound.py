"""The disk cache's bound (EMBER_CACHE_MAX_MB): least recently used entries go first, per
group of folders, never the entry just stored; hits count as uses; 0 means no bound."""

import os

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import cache
from ember.runtime import tiers

SHARE = 4096  # bytes per group: a bound of 16 * SHARE


def _key(group: str, n: int) -> str:
    return group + f"{n:x}".rjust(63, "0")


def _store(disk: cache.DiskCache, key: str, nbytes: int = 1500, age_s: float = 0) -> str:
    disk.store(key, b"\x90" * nbytes, {"n": 1})
    path = disk._path(key)
    if age_s:
        t = os.stat(path).st_mtime - age_s
        os.utime(path, (t, t))
    return path


def _bounded(tmp_path) -> cache.DiskCache:
    return cache.DiskCache(str(tmp_path), limit=16 * SHARE)


def test_a_full_group_loses_its_least_recently_used_entries(tmp_path):
    disk = _bounded(tmp_path)
    old = _store(disk, _key("a", 1), age_s=300)
    middle = _store(disk, _key("a", 2), age_s=200)
    assert disk.evicted == 0  # ~3.2 KB of a 4 KB share
    new = _store(disk, _key("a", 3))
    assert not os.path.exists(old) and os.path.exists(middle) and os.path.exists(new)
    assert disk.evicted == 1
    assert disk.load(_key("a", 1)) is None and disk.load(_key("a", 3)) is not None


def test_a_hit_makes_an_entry_the_most_recently_used(tmp_path):
    disk = _bounded(tmp_path)
    first = _store(disk, _key("b", 1), age_s=300)
    second = _store(disk, _key("b", 2), age_s=200)
    assert disk.load(_key("b", 1)) is not None  # used now: `second` is the oldest
    _store(disk, _key("b", 3))
    assert os.path.exists(first) and not os.path.exists(second)


def test_groups_are_bounded_apart_and_folders_of_a_group_together(tmp_path):
    disk = _bounded(tmp_path)
    elsewhere = _store(disk, _key("c", 1), age_s=900)  # another group: untouched
    # one group ("d"), three of its folders ("d0", "d5", "df")
    paths = [_store(disk, "d" + h + "0" * 62, age_s=age)
             for h, age in (("0", 300), ("5", 200), ("f", 0))]
    assert os.path.exists(elsewhere)
    assert [os.path.exists(p) for p in paths] == [False, True, True]


def test_an_entry_larger_than_its_share_is_kept_alone(tmp_path):
    disk = _bounded(tmp_path)
    small = _store(disk, _key("e", 1), nbytes=100, age_s=60)
    big = _store(disk, _key("e", 2), nbytes=3 * SHARE)
    assert os.path.exists(big) and not os.path.exists(small)
    assert disk.load(_key("e", 2)) is not None


def test_temporary_files_of_dead_writers_go_and_live_ones_stay(tmp_path):
    disk = _bounded(tmp_path)
    folder = tmp_path / "f0"
    folder.mkdir()
    dead, live = folder / "x.tmp", folder / "y.tmp"
    dead.write_bytes(b"half an entry")
    live.write_bytes(b"being written")
    t = os.stat(dead).st_mtime - cache.STALE_TMP_S - 60
    os.utime(dead, (t, t))
    _store(disk, _key("f", 1), nbytes=10)
    assert not dead.exists() and live.exists()


def test_no_bound_keeps_everything(tmp_path):
    disk = cache.DiskCache(str(tmp_path), limit=None)
    paths = [_store(disk, _key("a", n), nbytes=20 * SHARE) for n in range(4)]
    assert all(os.path.exists(p) for p in paths) and disk.evicted == 0


@pytest.mark.parametrize("raw, limit", [("", cache.DEFAULT_MAX_MB << 20), ("0", None),
                                        ("1", 1 << 20), (" 0.5 ", 1 << 19),
                                        ("2048", 2048 << 20)])
def test_the_bound_is_read_in_mib(raw, limit):
    assert cache.max_bytes(raw) == limit


@pytest.mark.parametrize("raw", ["abc", "-1", "nan", "inf", "1e400", "10MB"])
def test_a_malformed_bound_says_what_to_give(raw):
    with pytest.raises(ValueError, match=r"EMBER_CACHE_MAX_MB=.* is not a size: give the "
                                         r"disk cache's bound in MiB"):
        cache.max_bytes(raw)


def test_compiles_under_a_small_bound_keep_the_cache_within_it(tmp_path, monkeypatch):
    """End to end: em.function's compiles store through the bounded cache of
    EMBER_CACHE_DIR/EMBER_CACHE_MAX_MB, and every group keeps within its share (or holds
    one entry)."""
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EMBER_CACHE_MAX_MB", "0.05")  # ~3.3 KB a group: about one entry
    monkeypatch.delenv("EMBER_CACHE_DISABLE", raising=False)
    assert cache.disk_cache().limit == int(0.05 * (1 << 20))
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    for k in range(12):
        f = em.function(lambda v, k=k: v * (k + 2) + 1.0)
        np.testing.assert_allclose(f(x).numpy(), x * (k + 2) + 1.0, rtol=1e-6)
    tiers.wait()
    share = cache.disk_cache().limit // cache.GROUPS
    for group in "0123456789abcdef":
        sizes = [os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(tmp_path)
                 if os.path.basename(d).startswith(group) and len(os.path.basename(d)) == 2
                 for f in files if f.endswith(".obj")]
        assert sum(sizes) <= share or len(sizes) == 1, (group, sizes)
    assert cache.disk_cache().evicted > 0
