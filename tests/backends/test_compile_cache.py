"""The compile cache: hits in memory and on disk, atomic entries, corrupt entries rebuilt."""

import os

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import cache
from ember.backends.cpu.compiler import compile_function
from ember.dialects.ember.types import TensorType

F32x4 = TensorType(em.float32, (4,))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EMBER_CACHE_DISABLE", raising=False)
    monkeypatch.setattr(cache, "memory_cache", cache.MemoryCache())
    from ember.backends.cpu import compiler
    monkeypatch.setattr(compiler, "memory_cache", cache.memory_cache)
    return tmp_path


def _module(name: str) -> str:
    return (f'func.func @{name}(%x: tensor<?xf32>) -> tensor<?xf32> {{\n'
            '  %0 = "ember.tanh"(%x) : (tensor<?xf32>) -> tensor<?xf32>\n'
            '  %1 = "ember.mul"(%0, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n'
            '  return %1 : tensor<?xf32>\n}\n')


def _entries(directory) -> list:
    return [os.path.join(d, f) for d, _, files in os.walk(directory) for f in files
            if f.endswith(".obj")]


def _check(exe):
    x = np.linspace(-2, 2, 4, dtype=np.float32)
    np.testing.assert_allclose(exe([x])[0], np.tanh(x) * x, rtol=1e-6)


def test_compiled_code_is_stored_and_reused_from_disk(cache_dir, monkeypatch):
    exe = compile_function(_module("f"), "f", [F32x4])
    _check(exe)
    assert len(_entries(cache_dir)) == 1
    assert compile_function(_module("f"), "f", [F32x4]) is exe  # memory hit
    monkeypatch.setattr(cache, "memory_cache", cache.MemoryCache())
    from ember.backends.cpu import compiler
    monkeypatch.setattr(compiler, "memory_cache", cache.memory_cache)
    monkeypatch.setattr(compiler, "specialize", _fail)  # a disk hit must not recompile
    again = compile_function(_module("f"), "f", [F32x4])
    assert again is not exe
    _check(again)


def _fail(*args, **kwargs):
    raise AssertionError("recompiled although the disk cache had the entry")


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_corrupt_entry_is_discarded_and_rebuilt(cache_dir, monkeypatch, damage):
    compile_function(_module("g"), "g", [F32x4])
    (path,) = _entries(cache_dir)
    blob = open(path, "rb").read()
    damaged = {"truncate": blob[:len(blob) // 2],
               "flip": blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:],
               "garbage": b"not an ember cache entry",
               "empty": b""}[damage]
    with open(path, "wb") as f:
        f.write(damaged)
    monkeypatch.setattr(cache, "memory_cache", cache.MemoryCache())
    from ember.backends.cpu import compiler
    monkeypatch.setattr(compiler, "memory_cache", cache.memory_cache)
    disk = cache.disk_cache()
    before = disk.discarded
    exe = compile_function(_module("g"), "g", [F32x4])
    _check(exe)
    assert disk.discarded == before + 1
    (rebuilt,) = _entries(cache_dir)
    assert open(rebuilt, "rb").read().startswith(cache.MAGIC) and open(rebuilt, "rb").read() != \
        damaged


def test_keys_change_with_types_and_module(cache_dir):
    compile_function(_module("h"), "h", [F32x4])
    compile_function(_module("h"), "h", [TensorType(em.float32, (8,))])
    compile_function(_module("h2"), "h2", [F32x4])
    assert len(_entries(cache_dir)) == 3


def test_disable_switch_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EMBER_CACHE_DISABLE", "1")
    monkeypatch.setattr(cache, "memory_cache", cache.MemoryCache())
    from ember.backends.cpu import compiler
    monkeypatch.setattr(compiler, "memory_cache", cache.memory_cache)
    _check(compile_function(_module("k"), "k", [F32x4]))
    assert _entries(tmp_path) == []
