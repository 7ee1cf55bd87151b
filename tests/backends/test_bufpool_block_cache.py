"""The caching allocator for big blocks (backends/cpu/block_cache.py): outputs and compiled
code's own allocations reuse blocks instead of faulting fresh pages in, and a block is
reused only once nothing refers to it any more."""

import os
import threading
import warnings

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import block_cache
from ember.runtime import tiers
from ember.runtime.executor import InterpreterFallbackWarning

BIG = block_cache.MIN_BYTES // 4 * 2  # float32 elements of a 2 MiB array


def _compiled(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        return fn(*args)


def test_a_block_goes_back_to_the_cache_when_its_last_view_dies():
    a = block_cache.empty((BIG,), np.float32)
    address = a.ctypes.data
    assert address % block_cache.HUGE == 0
    live = block_cache.live_blocks()
    a[:] = 7.0
    view = a[10:20]
    del a
    assert block_cache.live_blocks() == live  # the view keeps it
    b = block_cache.empty((BIG,), np.float32)
    assert b.ctypes.data != address and view[0] == 7.0
    del view
    assert block_cache.live_blocks() == live  # b's
    c = block_cache.empty((BIG,), np.float32)
    assert c.ctypes.data == address  # the same size class, handed out again
    del b, c


def test_small_arrays_are_numpys_own():
    a = block_cache.empty((4, 4), np.float64)
    assert a.shape == (4, 4) and a.flags.owndata


def test_results_kept_by_the_caller_stay_valid_and_steady_calls_reuse_blocks():
    f = em.function(lambda x: x * 2.0 + 1.0)
    x = em.constant(np.arange(BIG, dtype=np.float32))
    want = np.arange(BIG, dtype=np.float32) * 2 + 1
    kept = [f(x) for _ in range(3)]
    assert len({k._value.ctypes.data for k in kept}) == 3
    for k in kept:
        np.testing.assert_array_equal(k.numpy(), want)
    del kept
    tiers.wait()  # the full tier swapped in: its outputs from here on
    y = f(x)
    addresses = set()
    for _ in range(10):  # `y = f(x)`: the old y dies after the call, so two blocks alternate
        y = f(x)
        addresses.add(y._value.ctypes.data)
    assert len(addresses) == 2
    np.testing.assert_array_equal(y.numpy(), want)


def test_compiled_codes_big_intermediates_are_reused_and_freed():
    f = em.function(lambda x: em.cumsum(x * 2.0 + 1.0, axis=0) * 3.0)
    x = np.linspace(-1, 1, BIG).astype(np.float32)
    want = np.cumsum(x.astype(np.float64) * 2 + 1) * 3
    live = block_cache.live_blocks()
    for _ in range(3):
        block_cache.release()
        got = _compiled(f, em.constant(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
        del got
        # the output's block and at least one of the code's own (a 2 MiB intermediate)
        assert block_cache.cached_bytes() >= 2 * block_cache.HUGE
    assert block_cache.live_blocks() == live


def _doubling(i, x):
    return i + 1, em.concat([x, x], 0)


def test_big_results_of_dynamic_shape_own_their_blocks():
    f = em.function(lambda a, n: em.while_loop(
        lambda i, x: i < n, _doubling, (0, a),
        shape_invariants=(em.TensorShape([]), em.TensorShape([None])))[1])
    a = np.arange(BIG // 8, dtype=np.float32)
    live = block_cache.live_blocks()
    first = _compiled(f, a, np.int32(3)).numpy()
    view = first[5:9]
    del first
    second = _compiled(f, a, np.int32(3)).numpy()
    np.testing.assert_array_equal(view, np.tile(a, 8)[5:9])
    np.testing.assert_array_equal(second, np.tile(a, 8))
    del view, second
    assert block_cache.live_blocks() == live


def test_the_cache_stays_within_its_bound():
    block_cache.release()
    old = block_cache.set_limit(block_cache.HUGE)
    try:
        arrays = [block_cache.empty((BIG,), np.float32) for _ in range(4)]
        del arrays
        assert block_cache.cached_bytes() <= block_cache.HUGE
        block_cache.set_limit(0)
        a = block_cache.empty((BIG,), np.float32)
        block_cache.release()
        del a
        assert block_cache.cached_bytes() == 0
    finally:
        block_cache.set_limit(old)


def test_threads_never_share_a_live_block():
    seen, lock, errors = [], threading.Lock(), []

    def work(k):
        try:
            for _ in range(20):
                a = block_cache.empty((BIG,), np.float32)
                a[:] = k
                with lock:
                    seen.append(a.ctypes.data)
                assert (a == k).all()
        except AssertionError as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(seen) == 80


def test_a_forked_child_allocates_from_its_own_copy():
    a = block_cache.empty((BIG,), np.float32)
    a[:] = 3.0
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            b = block_cache.empty((BIG,), np.float32)
            b[:] = 1.0
            ok = a[0] == 3.0 and b.ctypes.data != a.ctypes.data
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.close(read)
    os.waitpid(pid, 0)


def test_route_calls_malloc_and_free_through_the_table():
    text = ("declare ptr @malloc(i64)\ndeclare void @free(ptr)\n"
            "define void @g() {\n  %p = call ptr @malloc(i64 8)\n  call void @free(ptr %p)\n"
            "  call void @free_list(ptr %p)\n  ret void\n}\ndeclare void @free_list(ptr)\n")
    routed = block_cache.route(text)
    assert "@malloc(" not in routed and "@free(" not in routed and "@free_list(" in routed
    assert routed.count(f"@{block_cache.JIT_MALLOC}(") == 2  # the call and the wrapper
    assert block_cache.uses(routed) and not block_cache.uses(text)
    import llvmlite.binding as llvm
    llvm.parse_assembly(routed).verify()
    assert block_cache.route("define void @h() {\n  ret void\n}\n").count("@") == 1


def test_bad_cache_bound_says_how_to_fix(monkeypatch):
    monkeypatch.setenv("EMBER_BLOCK_CACHE_MB", "lots")
    with pytest.raises(ValueError, match="EMBER_BLOCK_CACHE_MB"):
        block_cache.default_limit()
    monkeypatch.setenv("EMBER_BLOCK_CACHE_MB", "64")
    assert block_cache.default_limit() == 64 << 20


def test_more_live_blocks_than_the_table_holds_fall_back_to_libc():
    live = block_cache.live_blocks()
    arrays = [block_cache.empty((block_cache.MIN_BYTES // 4,), np.float32)
              for _ in range(block_cache.SLOTS + 6)]
    for k, a in enumerate(arrays):
        a[:] = k
    assert len({a.ctypes.data for a in arrays}) == len(arrays)
    assert all(a[0] == k and a[-1] == k for k, a in enumerate(arrays))
    assert block_cache.live_blocks() <= block_cache.SLOTS
    del arrays
    assert block_cache.live_blocks() == live


def _run(script: str, cache: str, **env) -> list[str]:
    import subprocess
    import sys
    environ = {k: v for k, v in os.environ.items() if k != "EMBER_CACHE_DISABLE"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**environ, "EMBER_CACHE_DIR": cache, "EMBER_TIER": "full",
                              **env}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


_CALLS_MALLOC = (
    "import sys, numpy as np, ember as em\n"
    "from ember.backends.cpu import block_cache\n"
    "f = em.function(lambda a, b: em.matmul(em.tanh(em.matmul(a, b)), b))\n"
    "a = em.constant(np.ones((64, 64), np.float32))\n"
    "want = np.tanh(np.ones((64, 64), np.float32) @ np.ones((64, 64), np.float32)) @ \\\n"
    "    np.ones((64, 64), np.float32)\n"
    "print(np.allclose(f(a, a).numpy(), want), block_cache.loaded(),\n"
    "      type(block_cache._pool.code).__name__ if block_cache.loaded() else None,\n"
    "      'llvmlite' in sys.modules)\n")


@pytest.mark.parametrize("ld", [None, ""], ids=["linker", "no-linker"])
def test_code_that_calls_malloc_loads_the_allocator_a_warm_start_without_llvm(tmp_path, ld):
    """Compiled code whose malloc goes through the table gets the allocator with it: its
    intermediates come from cached blocks from the first call on. The process that
    compiles links it once; a warm start loads that library (a dlopen), not LLVM. Without
    a linker (EMBER_LD=""), code and allocator load through MCJIT from their objects."""
    from ember.backends.cpu.shared import linker
    env = {} if ld is None else {"EMBER_LD": ld}
    cache = str(tmp_path)
    cold = _run(_CALLS_MALLOC, cache, **env)
    assert cold[:2] == ["True", "True"] and cold[3] == "True", cold
    warm = ["True", "True", "SharedCode", "False"] if ld is None and linker() else \
        ["True", "True", "ExecutionEngine", "True"]
    assert _run(_CALLS_MALLOC, cache, **env) == warm


_FORGE = (  # the allocator's entry with another library (libm) in place of its own
    "from ember.backends.cpu import block_cache as b\n"
    "from ember.backends.cpu.cache import disk_cache\n"
    "obj, meta = disk_cache().load(b._key())\n"
    "libm = next(line.split()[-1] for line in open('/proc/self/maps') if '/libm.' in line)\n"
    "meta.pop('shared', None)\n"
    "disk_cache().store(b._key(), obj, meta, open(libm, 'rb').read())\n"
    "print(b._entry() is not None)\n")


def test_an_allocator_library_without_its_symbols_is_discarded(tmp_path):
    """A cached library that loads but lacks the allocator's symbols is never called (a
    null pointer): the entry is discarded and the code runs on libc's allocator."""
    cache = str(tmp_path)
    assert _run(_CALLS_MALLOC, cache)[:2] == ["True", "True"]
    assert _run(_FORGE, cache) == ["True"]
    assert _run(_CALLS_MALLOC, cache) == ["True", "False", "None", "False"]
    assert _run("from ember.backends.cpu import block_cache as b\nprint(b._entry())",
                cache) == ["None"]


def test_a_malformed_cache_bound_leaves_compiled_code_on_libc(tmp_path):
    """EMBER_BLOCK_CACHE_MB is checked where a big array needs the allocator (`empty`, a
    ValueError naming it): code that only calls malloc stays compiled, on libc's."""
    script = _CALLS_MALLOC + (
        "print(sorted(set(f.get_concrete_function(a, a).compiled_tiers.values())))\n"
        "try:\n    block_cache.empty((1 << 20,), np.float32)\n"
        "except ValueError as e:\n    print('EMBER_BLOCK_CACHE_MB' in str(e))\n")
    out = _run(script, str(tmp_path), EMBER_BLOCK_CACHE_MB="lots")
    assert out == ["True", "False", "None", "True", "['full']", "True"], out


def test_code_without_malloc_leaves_the_allocator_to_a_big_output(tmp_path):
    """Loading it costs a warm start a dlopen (LLVM where it has no library): code that
    allocates nothing (outputs are the caller's) keeps libc's until a big array is made."""
    script = (
        "import numpy as np, ember as em\n"
        "from ember.backends.cpu import block_cache\n"
        "f = em.function(lambda x: x * 2.0)\n"
        "f(em.constant(np.ones(64, np.float32)))\n"
        "print(block_cache.loaded(), end=' ')\n"
        "g = em.function(lambda x: x + 1.0)\n"
        "g(em.constant(np.ones(1 << 20, np.float32)))\n"
        "print(block_cache.loaded())\n")
    assert _run(script, str(tmp_path)) == ["False", "True"]


def test_results_alive_at_interpreter_exit_free_into_a_loaded_allocator(tmp_path):
    """The allocator's library is never unloaded: a result of dynamic shape (its buffer
    from compiled code's malloc) held by a module that outlives ember's at shutdown frees
    into it as the interpreter exits (this was a segfault)."""
    (tmp_path / "early.py").write_text("keep = []\n")
    script = ("import early, numpy as np, ember as em\n"
              "f = em.function(lambda x: em.boolean_mask(x, x > 0))\n"
              "g = em.function(lambda x: x + 1.0)\n"
              "g(em.constant(np.ones(1 << 20, np.float32)))\n"
              "early.keep.append(f(em.constant(np.arange(-5, 64, dtype=np.float32))).numpy())\n"
              "print(len(early.keep[0]))\n")
    for _ in range(2):  # the cold process, then a warm one (the allocator's library)
        assert _run(script, str(tmp_path / "cache"), PYTHONPATH=str(tmp_path)) == ["63"]


def test_a_child_forked_while_the_allocator_loads_can_load_it(tmp_path):
    """A fork while another thread holds the allocator's lock (loading it) leaves the
    child a lock of its own, not one nobody will release (this hung)."""
    script = ("import os, signal, numpy as np\n"
              "from ember.backends.cpu import block_cache\n"
              "with block_cache._pool_lock:\n"
              "    pid = os.fork()\n"
              "    if pid == 0:\n"
              "        signal.alarm(60)\n"
              "        a = block_cache.empty((1 << 20,), np.float32)\n"
              "        a[:] = 3\n"
              "        os._exit(0 if block_cache.loaded() and a[-1] == 3 else 1)\n"
              "print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n")
    assert _run(script, str(tmp_path)) == ["0"]
