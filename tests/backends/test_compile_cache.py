"""The compile cache: hits in memory and on disk, atomic entries, corrupt entries rebuilt."""

import os

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import cache, compiler
from ember.backends.cpu.compiler import compile_function
from ember.dialects.ember.types import TensorType

F32x4 = TensorType(em.float32, (4,))


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


def _entry_of(path) -> tuple[bytes, dict]:
    return cache._decode(open(path, "rb").read())


def _f_and_g_entries(cache_dir):
    compile_function(_module("f"), "f", [F32x4])
    (f_path,) = _entries(cache_dir)
    compile_function(_module("g"), "g", [F32x4])
    (g_path,) = [p for p in _entries(cache_dir) if p != f_path]
    return f_path, g_path


def _damaged(kind: str, f_path, g_path) -> bytes:
    f_obj, f_meta = _entry_of(f_path)
    g_obj, g_meta = _entry_of(g_path)
    if kind == "copied":  # a whole valid entry, stored under another key
        return open(g_path, "rb").read()
    if kind == "foreign_code":  # checksum and key right, but the code defines @g, not @f
        return cache._encode(g_obj, {**g_meta, "key": f_meta["key"], "symbol": "f"})
    if kind == "truncated_object":  # the loader would read past the end (a segfault)
        return cache._encode(f_obj[:len(f_obj) * 3 // 4], f_meta)
    if kind == "missing_results":
        return cache._encode(f_obj, {k: v for k, v in f_meta.items() if k != "results"})
    if kind == "other_symbol":
        return cache._encode(f_obj, {**f_meta, "symbol": "g"})
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["copied", "foreign_code", "missing_results",
                                  "other_symbol"])
def test_valid_checksum_but_unusable_entry_is_discarded_and_rebuilt(cache_dir, monkeypatch,
                                                                    kind):
    f_path, g_path = _f_and_g_entries(cache_dir)
    damaged = _damaged(kind, f_path, g_path)
    with open(f_path, "wb") as f:
        f.write(damaged)
    _fresh_memory_cache(monkeypatch)
    disk = cache.disk_cache()
    before = disk.discarded
    _check(compile_function(_module("f"), "f", [F32x4]))
    assert disk.discarded == before + 1, disk.last_discard_reason
    assert open(f_path, "rb").read() != damaged  # rebuilt in place
    _fresh_memory_cache(monkeypatch)  # and the rebuilt entry loads as it is
    monkeypatch.setattr(compiler, "specialize", _fail)
    _check(compile_function(_module("f"), "f", [F32x4]))
    assert disk.discarded == before + 1


_LOAD_F = f"""
import numpy as np, ember as em
from ember.backends.cpu import cache
from ember.backends.cpu.compiler import compile_function
from ember.dialects.ember.types import TensorType
exe = compile_function({_module("f")!r}, "f", [TensorType(em.float32, (4,))])
x = np.linspace(-2, 2, 4, dtype=np.float32)
print(np.allclose(exe([x])[0], np.tanh(x) * x), cache.disk_cache().discarded)
"""


def test_truncated_object_with_a_valid_checksum_is_rebuilt_not_loaded(cache_dir):
    import subprocess
    import sys
    f_path, g_path = _f_and_g_entries(cache_dir)
    damaged = _damaged("truncated_object", f_path, g_path)
    with open(f_path, "wb") as f:
        f.write(damaged)
    run = subprocess.run([sys.executable, "-c", _LOAD_F], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]  # LLVM's loader segfaulted on it
    assert run.stdout.split() == ["True", "1"]


def test_truncated_objects_are_refused_before_loading():
    from ember.backends.cpu.backend import CpuBackend
    obj, _ = compiler._build(_module("t"), "t", [F32x4], CpuBackend())
    assert compiler.object_is_whole(obj)
    assert not any(compiler.object_is_whole(obj[:n]) for n in range(0, len(obj), 97))


_CALL_SITE = """
import sys
import numpy as np, ember as em
def poly(x):
    return em.tanh(x) * 0.5 + x * x
f = em.function(poly)
x = em.constant(np.linspace(-1, 1, 6, dtype=np.float32))
if sys.argv[1] == "first":
    y = f(x)
else:
    # the same function, called from another line
    y = f(x)
print(y.numpy().tolist())
print("optimised" if f.get_concrete_function(x)._optimized is not None else "not optimised")
"""


def test_the_disk_cache_key_does_not_depend_on_the_calling_line(cache_dir):
    import subprocess
    import sys
    runs = [subprocess.run([sys.executable, "-c", _CALL_SITE, where], capture_output=True,
                           text=True, check=True).stdout.splitlines()
            for where in ("first", "second")]
    assert runs[0][0] == runs[1][0]
    assert runs[0][1] == "optimised"
    assert runs[1][1] == "not optimised"  # found on disk although called from elsewhere
