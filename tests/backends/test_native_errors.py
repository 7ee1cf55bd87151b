"""Errors inside compiled code raise what eager mode raises (backends/cpu/native.py): integer
division by zero, negative integer powers, gather indices out of range, allocation failure.
Each case runs eagerly and compiled, in this process and from the disk cache in new ones."""

import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import parallel
from ember.backends.cpu.backend import CpuBackend, CpuOptions
from ember.backends.cpu.compiler import compile_function
from ember.backends.cpu.parallel import SplitExecutable
from ember.dialects.ember.types import TensorType


def _t(values, dtype):
    return em.constant(np.array(values, dtype=dtype))


# id -> (function, arguments): each must raise eagerly
FAILING = {
    "floordiv_by_zero": (lambda x, y: x // y, ([7, -8, 9], "int32"), ([2, 0, 1], "int32")),
    "mod_by_zero": (lambda x, y: x % y, ([7, 8], "int64"), ([0, 3], "int64")),
    "uint8_floordiv_by_zero": (lambda x, y: x // y, ([7, 8], "uint8"), ([3, 0], "uint8")),
    "scalar_zero_divisor": (lambda x, y: x % y, ([[1, 2], [3, 4]], "int32"), (0, "int32")),
    # the kernel checks the divisor itself: a zero raises even where the result is empty
    "zero_divisor_empty_result": (lambda x, y: x // y, (np.zeros((0, 2)), "int32"),
                                  ([1, 0], "int32")),
    "constant_divisor_with_zero": (lambda x: x // em.constant([1, 0]), ([5, 6], "int32")),
    "int_pow_negative": (lambda x, y: x ** y, ([0, 2], "int32"), ([-1, 2], "int32")),
    "int64_pow_negative_scalar": (lambda x, y: x ** y, ([3, 2], "int64"), (-2, "int64")),
    "gather_above": (lambda p, i: em.gather(p, i), ([1., 2., 3., 4., 5.], "float32"),
                     ([2, 9, -1], "int32")),
    "gather_below": (lambda p, i: em.gather(p, i), ([1., 2., 3.], "float32"),
                     ([-1, 7], "int64")),
    "gather_axis_1_nested": (lambda p, i: em.gather(p, i, axis=1),
                             ([[1, 2, 3], [4, 5, 6]], "int32"), ([[0], [3]], "int32")),
    "gather_empty_axis": (lambda p, i: em.gather(p, i), (np.zeros((0, 3)), "float32"),
                          ([0], "int32")),
    "gather_empty_result": (lambda p, i: em.gather(p, i, axis=1),
                            (np.zeros((0, 4)), "float32"), ([7], "int32")),
}

# valid edge values: the checks must not fire, and values must match eager
PASSING = {
    "floordiv_by_minus_one": (lambda x, y: (x // y, x % y),
                              ([-2**31, 7, -7], "int32"), ([-1, -2, 2], "int32")),
    "uint8_mod": (lambda x, y: x % y, ([250, 7], "uint8"), ([255, 1], "uint8")),
    "int_pow_zero": (lambda x, y: x ** y, ([0, 3, -2], "int32"), ([0, 0, 3], "int32")),
    "gather_edges": (lambda p, i: em.gather(p, i), ([1., 2., 3.], "float32"),
                     ([0, 2, 1], "int32")),
    "gather_empty_indices": (lambda p, i: em.gather(p, i), (np.zeros((0,)), "float32"),
                             (np.zeros((0,)), "int32")),
}


def _args(case):
    return [_t(v, d) for v, d in case[1:]]


def _outcome(fn, args):
    try:
        result = fn(*args)
    except Exception as e:  # noqa: BLE001 (compared below)
        return type(e), getattr(e, "op_message", str(e))  # (the message but for its line)
    return None, [np.asarray(r).tolist() for r in (result if isinstance(result, tuple)
                                                   else (result,))]


def _compiled(fn, args):
    f = em.function(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an interpreter fallback would fail the test
        outcome = _outcome(f, args)
    executor = f.get_concrete_function(*args)._executor
    assert executor.fallback_reason is None and executor.compiled_shapes
    return outcome


@pytest.mark.parametrize("name", FAILING)
def test_compiled_code_raises_what_eager_raises(name):
    case = FAILING[name]
    eager_error, eager_message = _outcome(case[0], _args(case))
    assert eager_error is em.InvalidArgumentError
    error, message = _compiled(case[0], _args(case))
    assert error is eager_error
    assert message == eager_message  # the same message (both name the user's line: below)
    with pytest.raises(em.InvalidArgumentError) as raised:
        em.function(case[0])(*_args(case))
    assert str(raised.value).endswith(f"{os.path.basename(__file__)}:{_line_of(name)})")


def _line_of(name: str) -> int:
    with open(__file__) as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith(f'"{name}"'):
                return number
    raise AssertionError(name)


@pytest.mark.parametrize("name", PASSING)
def test_checks_pass_valid_edge_values(name):
    case = PASSING[name]
    eager = _outcome(case[0], _args(case))
    assert eager[0] is None
    assert _compiled(case[0], _args(case)) == eager


def test_gather_reports_the_first_bad_index_in_row_major_order():
    f = em.function(lambda p, i: em.gather(p, i))
    with pytest.raises(em.InvalidArgumentError, match=r"gather index -3 is out of range \[0, 4\)"):
        f(_t([1, 2, 3, 4], "int32"), _t([[0, 1], [-3, 9]], "int32"))


def test_errors_of_concurrent_calls_stay_in_their_thread():
    f = em.function(lambda x, y: x // y)
    x, good, bad = _t([6, 9], "int32"), _t([3, 3], "int32"), _t([3, 0], "int32")
    f(x, good)  # compile once
    failures = []

    def worker(k):
        for i in range(200):
            fails = (i + k) % 2 == 0
            try:
                out = f(x, bad if fails else good)
                if fails or out.numpy().tolist() != [2, 3]:
                    failures.append((k, i, "no error" if fails else out))
            except em.InvalidArgumentError as e:
                if not fails or "integer division by zero" not in str(e):
                    failures.append((k, i, e))
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


BIG = parallel.MIN_ELEMENTS_PER_THREAD * 2


def _split(fn, *arrays):
    concrete = em.function(fn).get_concrete_function(*[em.constant(a) for a in arrays])
    types = [TensorType(em.as_dtype(a.dtype), a.shape) for a in arrays]
    exe = compile_function(concrete._executor._text, concrete._executor._symbol, types,
                           CpuBackend(CpuOptions(threads=2)))
    assert isinstance(exe, SplitExecutable)
    return exe


@pytest.mark.parametrize("where", [0, BIG // 2 - 1, BIG // 2, BIG - 1])
def test_split_function_raises_once_for_a_zero_in_any_block(where):
    x = np.arange(BIG, dtype=np.int32) - 1000
    y = np.full(BIG, 7, np.int32)
    exe = _split(lambda x, y: x // y + x % y, x, y)
    np.testing.assert_array_equal(exe([x, y])[0], x // y + x % y)
    y[where] = 0
    with pytest.raises(em.InvalidArgumentError, match="'ember.floordiv' op integer division "
                                                      "by zero"):
        exe([x, y])
    y[where] = 7  # the executable still works after the error
    np.testing.assert_array_equal(exe([x, y])[0], x // y + x % y)


def test_split_function_checks_a_divisor_broadcast_to_every_block():
    x = np.arange(2 * BIG, dtype=np.int64).reshape(BIG, 2)
    exe = _split(lambda x, y: x % y, x, np.array([3, 5], np.int64))
    with pytest.raises(em.InvalidArgumentError, match="integer division by zero"):
        exe([x, np.array([3, 0], np.int64)])


_REPORT = """
import runpy, sys, warnings
cases = runpy.run_path(sys.argv[1])
for table in ("FAILING", "PASSING"):
    for name, case in cases[table].items():
        f = cases["em"].function(case[0])
        args = cases["_args"](case)
        outcome = cases["_outcome"](f, args)
        hit = f.get_concrete_function(*args)._optimized is None
        print(name, "disk" if hit else "built", outcome[0] and outcome[0].__name__,
              outcome[1])
"""


def test_errors_survive_the_disk_cache_in_new_processes(tmp_path):
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", _REPORT, __file__], env=env, text=True,
                           capture_output=True, check=True).stdout.splitlines()
            for _ in range(2)]
    assert len(runs[0]) == len(FAILING) + len(PASSING)
    for first, second in zip(*runs):
        assert first.split()[1] == "built" and second.split()[1] == "disk"
        assert first.split()[2:] == second.split()[2:]
    errors = [line.split()[2] for line in runs[1]]
    assert errors == ["InvalidArgumentError"] * len(FAILING) + ["None"] * len(PASSING)


_OUT_OF_MEMORY = """
import warnings
import ember as em
N = 1 << 24  # N * N float32: 1 PiB, more than any address space
programs = {
    "fill": (lambda: em.reduce_sum(em.fill([N, N], 1.0)), []),
    "broadcast": (lambda x: em.reduce_sum(em.broadcast_to(x, [N, N])), [em.ones([N])]),
    "random": (lambda: em.reduce_sum(em.stateless_random_uniform([N, N], seed=[1, 2])), []),
    "matmul": (lambda a, b: em.reduce_sum(em.matmul(a, b)), [em.ones([N, 1]), em.ones([1, N])]),
    # 2**64 elements: no i64 size arithmetic holds it; runs on the interpreter
    "overflow": (lambda: em.reduce_sum(em.fill([1 << 32, 1 << 32], 1.0)), []),
}
warnings.simplefilter("ignore")
for name, (fn, args) in programs.items():
    for mode, f in (("eager", fn), ("compiled", em.function(fn))):
        try:
            f(*args)
            print(name, mode, "no error")
        except Exception as e:
            print(name, mode, type(e).__name__, str(e).split(" for ")[0].split(" in ")[0])
print(em.function(lambda x: x * 2.0)(em.ones([3])).numpy().tolist())
"""


def test_allocation_failure_in_compiled_code_raises_memory_error():
    run = subprocess.run([sys.executable, "-c", _OUT_OF_MEMORY], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]  # it used to segfault
    lines = run.stdout.splitlines()
    for name in ("fill", "broadcast", "random", "matmul"):
        assert f"{name} eager MemoryError Unable to allocate" in "\n".join(lines)
        assert f"{name} compiled MemoryError Unable to allocate" in "\n".join(lines)
    assert "fill compiled MemoryError Unable to allocate 1.00 PiB" in lines
    # the shape is refused while tracing, as eagerly, before MLIR sees it (item 3)
    too_big = "InvalidArgumentError 'ember.fill' op result shape [4294967296, 4294967296]"
    overflow = [line.split(" ", 2) for line in lines if line.startswith("overflow ")]
    assert [mode for _, mode, _ in overflow] == ["eager", "compiled"]
    assert overflow[0][2] == overflow[1][2] and overflow[0][2].startswith(too_big)
    assert lines[-1] == "[2.0, 2.0, 2.0]"  # and the process carries on
