"""Cached code as a shared library (backends/cpu/shared.py): a disk-cache hit loads it
through the dynamic loader, agrees with the object MCJIT loads, and falls back to MCJIT
wherever the library cannot be used. The machine needs `ld` (binutils), as AOT does."""

import gc
import os

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import cache, compiler, jit, shared
from ember.backends.cpu.backend import CpuBackend, CpuOptions
from ember.backends.cpu.compiler import compile_function
from ember.dialects.ember.types import TensorType

F32x4 = TensorType(em.float32, (4,))
X = np.linspace(-2, 2, 4, dtype=np.float32)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EMBER_CACHE_DISABLE", raising=False)
    monkeypatch.delenv(shared.LD_ENV, raising=False)
    _fresh_memory(monkeypatch)
    return tmp_path


def _fresh_memory(monkeypatch, capacity: int = cache.SHARED_EXECUTABLES):
    monkeypatch.setattr(cache, "memory_cache", cache.MemoryCache(capacity))
    monkeypatch.setattr(compiler, "memory_cache", cache.memory_cache)


def _module(name: str, body: str) -> str:
    return (f"func.func @{name}(%x: tensor<?xf32>) -> tensor<?xf32> {{\n{body}"
            "  return %1 : tensor<?xf32>\n}\n")


TANH_TIMES_X = ('  %0 = "ember.tanh"(%x) : (tensor<?xf32>) -> tensor<?xf32>\n'
                '  %1 = "ember.mul"(%0, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n')
SQUARE_PLUS_X = ('  %0 = "ember.mul"(%x, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n'
                 '  %1 = "ember.add"(%0, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n')


def _entries(directory) -> list:
    out = []
    for folder, _, files in os.walk(directory):
        for name in files:
            if name.endswith(".obj"):
                with open(os.path.join(folder, name), "rb") as f:
                    out.append(cache._decode(f.read()))
    return out


def test_a_disk_hit_runs_the_shared_library_and_agrees_with_mcjit(cache_dir, monkeypatch):
    cold = compile_function(_module("f", TANH_TIMES_X), "f", [F32x4])
    ((obj, meta),) = _entries(cache_dir)
    assert meta["shared_bytes"] > 0
    _fresh_memory(monkeypatch)
    monkeypatch.setattr(compiler, "specialize", None)  # a hit compiles nothing
    warm = compile_function(_module("f", TANH_TIMES_X), "f", [F32x4])
    assert isinstance(warm._engine, shared.SharedCode)
    mcjit = jit.Executable(jit.load_object(CpuBackend(), obj), "f", [F32x4], [F32x4])
    np.testing.assert_array_equal(warm([X])[0], mcjit([X])[0])
    np.testing.assert_array_equal(warm([X])[0], cold([X])[0])
    np.testing.assert_allclose(warm([X])[0], np.tanh(X) * X, rtol=1e-6)


def test_a_function_named_like_libc_calls_its_own_code(cache_dir, monkeypatch):
    """`-Bsymbolic`: the entry's call of @exp is this library's exp, not libm's."""
    compile_function(_module("exp", SQUARE_PLUS_X), "exp", [F32x4])
    _fresh_memory(monkeypatch)
    warm = compile_function(_module("exp", SQUARE_PLUS_X), "exp", [F32x4])
    assert isinstance(warm._engine, shared.SharedCode)
    np.testing.assert_allclose(warm([X])[0], X * X + X, rtol=1e-6)


def test_a_library_that_does_not_load_falls_back_to_the_object(cache_dir):
    compile_function(_module("g", TANH_TIMES_X), "g", [F32x4])
    ((obj, _),) = _entries(cache_dir)
    engine = shared.load_code(CpuBackend(), obj, b"\x7fELF but not a shared library")
    assert not isinstance(engine, shared.SharedCode)
    exe = jit.Executable(engine, "g", [F32x4], [F32x4])
    np.testing.assert_allclose(exe([X])[0], np.tanh(X) * X, rtol=1e-6)


def _damage_object(cache_dir) -> str:
    """Flips a byte in the middle of the one entry's object, its digests left as they are;
    returns the entry's path."""
    (path,) = [os.path.join(folder, name) for folder, _, files in os.walk(cache_dir)
               for name in files if name.endswith(".obj")]
    with open(path, "rb") as f:
        blob = bytearray(f.read())
    _, meta = cache._decode(bytes(blob))
    start = len(cache.MAGIC) + 65
    code = start + 8 + int.from_bytes(blob[start:start + 8], "little")
    middle = code + (len(blob) - code - meta["shared_bytes"]) // 2
    blob[middle] ^= 0xFF
    with open(path, "wb") as f:
        f.write(blob)
    return path


def test_a_hit_that_loads_the_library_reads_no_object(cache_dir, monkeypatch):
    """The object is checked where it is used: a hit whose library loads never hashes it
    (as big as the library), so damage to it alone does not matter there."""
    compile_function(_module("m", TANH_TIMES_X), "m", [F32x4])
    with open(_damage_object(cache_dir), "rb") as f:
        assert cache._decode(f.read()) is None  # a full check sees the damage
    _fresh_memory(monkeypatch)
    disk = cache.disk_cache()
    before = disk.discarded
    warm = compile_function(_module("m", TANH_TIMES_X), "m", [F32x4])
    assert isinstance(warm._engine, shared.SharedCode) and disk.discarded == before
    np.testing.assert_allclose(warm([X])[0], np.tanh(X) * X, rtol=1e-6)


def test_a_damaged_object_is_found_where_the_library_does_not_load(cache_dir, monkeypatch):
    compile_function(_module("n", TANH_TIMES_X), "n", [F32x4])
    _damage_object(cache_dir)
    _fresh_memory(monkeypatch)

    def refuse(*args, **kwargs):
        raise OSError("cannot map it here")
    monkeypatch.setattr(shared, "SharedCode", refuse)
    disk = cache.disk_cache()
    before = disk.discarded
    exe = compile_function(_module("n", TANH_TIMES_X), "n", [F32x4])  # rebuilt
    assert disk.discarded == before + 1
    assert disk.last_discard_reason == "checksum or format mismatch"
    np.testing.assert_allclose(exe([X])[0], np.tanh(X) * X, rtol=1e-6)


def _library_bytes(cache_dir, name: str) -> bytes:
    """The shared library of @`name` (TANH_TIMES_X), compiled into the disk cache."""
    compile_function(_module(name, TANH_TIMES_X), name, [F32x4])
    ((code, meta),) = _entries(cache_dir)  # (its object, then its library)
    return code[len(code) - meta["shared_bytes"]:]


def _recording_dlopen(monkeypatch, refuse: str | None = None) -> list:
    """Records the folder of each library `dlopen`ed; those in `refuse` fail to map."""
    opened, real = [], shared._ctypes.dlopen

    def dlopen(path, mode):
        opened.append(os.path.dirname(path))
        if refuse is not None and opened[-1] == refuse:
            raise OSError(f"{path}: failed to map segment from shared object")
        return real(path, mode)
    monkeypatch.setattr(shared._ctypes, "dlopen", dlopen)
    return opened


def test_libraries_load_from_dev_shm_where_it_may_hold_code(cache_dir, monkeypatch):
    """A tmpfs: a library's file costs less to create there than on a disk's /tmp."""
    library = _library_bytes(cache_dir, "q")
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(shared, "_shm_refused", False)
    monkeypatch.setattr(shared, "_shm_usable", lambda: True)
    opened = _recording_dlopen(monkeypatch)
    assert shared.SharedCode(library).get_function_address("q")
    assert opened == [shared.SHM]
    monkeypatch.setenv("TMPDIR", str(cache_dir))  # $TMPDIR, where it is set
    assert shared.SharedCode(library).get_function_address("q")
    assert opened == [shared.SHM, str(cache_dir)]
    assert not [n for n in os.listdir(cache_dir) if n.startswith("ember-code-")]


def test_dev_shm_refusing_code_is_not_asked_again(cache_dir, monkeypatch):
    """Where /dev/shm does not load a library that /tmp does (a noexec mount the probe
    missed, a security policy), /tmp takes it and every later one."""
    library = _library_bytes(cache_dir, "r")
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(shared, "_shm_refused", False)
    monkeypatch.setattr(shared, "_shm_usable", lambda: True)
    opened = _recording_dlopen(monkeypatch, refuse=shared.SHM)
    assert shared.SharedCode(library).get_function_address("r")
    assert opened == [shared.SHM, "/tmp"] and shared._shm_refused
    assert shared.SharedCode(library).get_function_address("r")
    assert opened == [shared.SHM, "/tmp", "/tmp"]


def test_a_library_no_folder_loads_raises(monkeypatch):
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(shared, "_shm_refused", False)
    monkeypatch.setattr(shared, "_shm_usable", lambda: True)
    opened = _recording_dlopen(monkeypatch)
    with pytest.raises(OSError):
        shared.SharedCode(b"\x7fELF but not a shared library")
    assert opened == [shared.SHM, "/tmp"]
    assert not shared._shm_refused  # not /dev/shm's fault


def test_without_a_linker_entries_hold_the_object_only(cache_dir, monkeypatch):
    monkeypatch.setenv(shared.LD_ENV, "")
    exe = compile_function(_module("h", TANH_TIMES_X), "h", [F32x4])
    ((_, meta),) = _entries(cache_dir)
    assert "shared_bytes" not in meta
    assert not isinstance(exe._engine, shared.SharedCode)
    np.testing.assert_allclose(exe([X])[0], np.tanh(X) * X, rtol=1e-6)


def test_code_calling_a_host_callback_keeps_the_object_only(cache_dir):
    """A host callback (em.print) is bound at run time by llvmlite, which only MCJIT
    resolves: the library would not load, so none is stored, and MCJIT runs the code."""
    @em.function
    def shout(x):
        em.print("x =", x)
        return x * 2.0

    out = shout(em.constant(X)).numpy()
    np.testing.assert_allclose(out, X * 2)
    entries = _entries(cache_dir)
    assert entries and all("shared_bytes" not in meta for _, meta in entries)


def _mapped_libraries() -> int:
    with open("/proc/self/maps") as f:
        return len({line.split()[-2] if line.rstrip().endswith("(deleted)") else
                    line.split()[-1] for line in f if "ember-code-" in line})


def test_a_library_is_closed_when_its_last_executable_goes(cache_dir, monkeypatch):
    _fresh_memory(monkeypatch, capacity=0)  # the memory cache keeps nothing alive
    compile_function(_module("k", TANH_TIMES_X), "k", [F32x4])
    gc.collect()
    before = _mapped_libraries()
    _fresh_memory(monkeypatch, capacity=0)
    exe = compile_function(_module("k", TANH_TIMES_X), "k", [F32x4])
    assert isinstance(exe._engine, shared.SharedCode)
    assert _mapped_libraries() == before + 1
    del exe
    gc.collect()
    assert _mapped_libraries() == before


MATMUL = ('func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {\n'
          '  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : '
          '(tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>\n'
          '  return %0 : tensor<?x?xf32>\n}\n')


def _product(cache_dir, monkeypatch, options: CpuOptions, symbol: str):
    """Compiles MATMUL (a 64x64 product) with `options`, then loads it from disk (and
    checks it)."""
    types = [TensorType(em.float32, (64, 64))] * 2
    compile_function(MATMUL, "mm", types, CpuBackend(options))
    ((obj, meta),) = [e for e in _entries(cache_dir) if e[1].get("symbol") == "mm"]
    assert symbol.encode() in obj and meta["shared_bytes"] > 0
    _fresh_memory(monkeypatch)
    warm = compile_function(MATMUL, "mm", types, CpuBackend(options))
    assert isinstance(warm._engine, shared.SharedCode)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((64, 64), dtype=np.float32) for _ in range(2))
    np.testing.assert_allclose(warm([a, b])[0], a @ b, rtol=1e-4, atol=1e-4)


def test_a_product_on_openblas_runs_from_the_library_through_its_thunk(cache_dir, monkeypatch):
    """ember_openblas_sgemm is a jump through a slot the loader fills with numpy's
    OpenBLAS (found through ctypes: no LLVM)."""
    _product(cache_dir, monkeypatch, CpuOptions(gemm="openblas"), "ember_openblas_sgemm")


@pytest.mark.slow
def test_a_product_on_embers_kernels_runs_from_the_library_through_its_thunk(cache_dir,
                                                                              monkeypatch):
    """ember_sgemm's slot gets the kernel MCJIT's code would get (kernels.bind_jit); a
    cold cache builds the GEMM library first (seconds). A process that finds the library
    in the cache loads it as a shared library too (linked when it was built, and kept in
    its entry: a warm start runs no linker)."""
    from ember.backends.cpu import kernels
    monkeypatch.setattr(kernels, "_engines", {})  # as in a new process: not built yet
    _product(cache_dir, monkeypatch, CpuOptions(gemm="ember"), "ember_sgemm")
    (library,) = [meta for _, meta in _entries(cache_dir) if meta.get("library") == "gemm"]
    assert library["shared_bytes"] > 0  # linked as it was built (loaded through MCJIT)
    for _ in range(2):  # as in new processes: loaded as stored
        monkeypatch.setattr(kernels, "_engines", {})
        _product(cache_dir, monkeypatch, CpuOptions(gemm="ember"), "ember_sgemm")
        assert all(isinstance(e, shared.SharedCode) for e in kernels._engines.values())
    (library,) = [meta for _, meta in _entries(cache_dir) if meta.get("library") == "gemm"]
    assert library["shared_bytes"] > 0
