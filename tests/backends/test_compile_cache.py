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


def _fresh_memory_cache(monkeypatch):
    monkeypatch.setattr(cache, "memory_cache", cache.MemoryCache())
    from ember.backends.cpu import compiler
    monkeypatch.setattr(compiler, "memory_cache", cache.memory_cache)


def _poly(x):
    return em.tanh(x) * 0.5 + x * x


_FRESH_PROCESS = """
import sys
import numpy as np, ember as em
def poly(x):
    return em.tanh(x) * 0.5 + x * x
f = em.function(poly, **({"pipeline": sys.argv[1]} if len(sys.argv) > 1 else {}))
x = em.constant(np.linspace(-1, 1, 6, dtype=np.float32))
print(f(x).numpy().tolist())
concrete = f.get_concrete_function(x)
print("optimised" if concrete._optimized is not None else "not optimised")
print("ember.tanh" in concrete.mlir("optimized"))
"""


def _new_process(*args) -> list[str]:
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-c", _FRESH_PROCESS, *args], capture_output=True,
                          text=True, check=True).stdout.splitlines()


def test_a_disk_hit_in_a_new_process_skips_the_optimisation_pipeline(cache_dir):
    runs = [_new_process() for _ in range(2)]
    assert runs[0][0] == runs[1][0]  # same results
    assert runs[0][1] == "optimised"  # compiled: the pipeline had to run
    assert runs[1][1] == "not optimised"  # found on disk under the traced text + pipeline
    assert runs[1][2] == "True"  # and the optimised IR is still there when asked for
    other = _new_process("builtin.module(ember-canonicalize,ember-cse)")
    assert other[0] == runs[0][0] and other[1] == "optimised"  # the pipeline is in the key


def test_user_passes_key_the_cache_by_the_optimised_text(cache_dir):
    import dataclasses
    from typing import ClassVar
    from ember.passes.base import Pass
    from ember.passes.registry import register_pass

    @register_pass
    @dataclasses.dataclass(frozen=True)
    class CountingPass(Pass):
        name: ClassVar[str] = "test-counting"
        runs: ClassVar[list] = []

        def run(self, module, stats):
            CountingPass.runs.append(1)

    x = em.constant(np.linspace(-1, 1, 6, dtype=np.float32))
    mine = em.function(_poly, pipeline="builtin.module(test-counting,ember-optimize)")
    concrete = mine.get_concrete_function(x)
    assert CountingPass.runs == [1]  # run at trace time, as for the interpreter
    assert concrete._executor._source_key is None  # its code is not in any key
    builtin = em.function(_poly).get_concrete_function(x)
    assert builtin._executor._source_key.startswith("builtin.module(ember-optimize)\n")
    np.testing.assert_allclose(mine(x).numpy(), builtin(x).numpy(), rtol=1e-6)
