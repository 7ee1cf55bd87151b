"""Ember's own GEMM library (backends/cpu/kernels/), called directly through its CBLAS entries.

Differential against a float64 numpy reference on seeded random calls covering the whole
CBLAS contract the entries promise: row- and column-major, both transposes, leading
dimensions wider than the matrix, alpha (0 included) and beta (0 must not read C, which
is NaN there), empty m/n and k = 0, sizes crossing every block (KC, MC, NC) and register
tile, and 1-3 threads; for the host's ISA, AVX2 (x86-64-v3) and plain x86-64 (SSE), which
this host can all run. Error bound per element: the GEMM bound rtol * (|alpha| |A||B| +
|beta| |C|).
"""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from ember.backends.cpu import kernels
from ember.backends.cpu.kernels import choice
from ember.backends.cpu.kernels.library import isa_params

import gemm_entries
from gemm_entries import HOST, SSE, entry

TARGETS = gemm_entries.TARGETS + SSE


def _entry(target, element):
    fn, addresses = entry(target, element)
    return fn, addresses[kernels.THREADS_SYMBOL]


def _gemm(fn, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    fn(101 if order == "R" else 102, 112 if ta else 111, 112 if tb else 111, m, n, k,
       alpha, a.ctypes.data, lda, b.ctypes.data, ldb, beta, c.ctypes.data, ldc)


def _random_case(rng, big):
    if big:
        m, n, k = (int(rng.choice(s)) for s in ([1, 13, 300, 500], [1, 33, 70, 4100],
                                               [1, 7, 300, 520]))
        if m * n * k > 3e7:
            n = 33
    else:
        m, n, k = (int(rng.integers(0, 40)) for _ in range(3))
    return dict(order=str(rng.choice(["R", "C"])), ta=bool(rng.integers(2)),
                tb=bool(rng.integers(2)), m=m, n=n, k=k,
                alpha=float(rng.choice([1.0, -0.5, 0.0, 2.0])),
                beta=float(rng.choice([0.0, 1.0, 0.75])), pad=int(rng.integers(0, 3)),
                threads=int(rng.integers(1, 4)))


def _run_case(target, element, case, seed):
    rng = np.random.default_rng(seed)
    dtype = np.float32 if element == "f32" else np.float64
    fn, threads_at = _entry(target, element)
    ctypes.c_int32.from_address(threads_at).value = case["threads"]
    m, n, k, pad, order = case["m"], case["n"], case["k"], case["pad"], case["order"]
    # logical op(A) m x k, op(B) k x n, C m x n; stored per order and transpose
    a_rows, a_cols = (k, m) if case["ta"] else (m, k)
    b_rows, b_cols = (n, k) if case["tb"] else (k, n)

    def stored(rows, cols):
        """A matrix of rows x cols in the call's order, with `pad` unused columns (rows)."""
        if order == "R":
            full = rng.standard_normal((rows, cols + pad)).astype(dtype)
            return full, full[:, :cols], max(cols + pad, 1)
        full = rng.standard_normal((cols, rows + pad)).astype(dtype)
        return full, full[:, :rows].T, max(rows + pad, 1)
    a_mem, a, lda = stored(a_rows, a_cols)
    b_mem, b, ldb = stored(b_rows, b_cols)
    c_mem, c, ldc = stored(m, n)
    if case["beta"] == 0.0:
        c[...] = np.nan  # must not be read
    c_before = np.nan_to_num(c.astype(np.float64))
    opa = (a.T if case["ta"] else a).astype(np.float64)
    opb = (b.T if case["tb"] else b).astype(np.float64)
    padding = c_mem.copy()
    _gemm(fn, order, case["ta"], case["tb"], m, n, k, case["alpha"], a_mem, lda, b_mem, ldb,
          case["beta"], c_mem, ldc)
    want = case["alpha"] * (opa @ opb) + case["beta"] * c_before
    bound = (abs(case["alpha"]) * (np.abs(opa) @ np.abs(opb)) +
             abs(case["beta"]) * np.abs(c_before))
    rtol = 1e-5 if element == "f32" else 1e-13
    got = c.astype(np.float64)
    assert not np.isnan(got).any(), f"NaN in C: {case}"
    assert np.all(np.abs(got - want) <= 2 * rtol * bound + 1e-30), case
    # the padding around C is untouched
    mask = np.ones(c_mem.shape, bool)
    if order == "R":
        mask[:, :n] = False
    else:
        mask[:, :m] = False
    assert np.array_equal(c_mem[mask], padding[mask], equal_nan=True), f"wrote padding: {case}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f32", "f64"])
@pytest.mark.parametrize("seed", range(40))
def test_small_random_calls_match_the_reference(target, element, seed):
    case = _random_case(np.random.default_rng(seed), big=False)
    _run_case(target, element, case, seed)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f32", "f64"])
@pytest.mark.parametrize("seed", range(6))
def test_calls_crossing_every_block_match_the_reference(target, element, seed):
    case = _random_case(np.random.default_rng(1000 + seed), big=True)
    _run_case(target, element, case, seed)


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_every_split_covers_c_exactly_once(threads):
    """Products big enough to start threads, split by rows and by columns."""
    for m, n in ((2000, 40), (40, 2000), (333, 333), (3000, 10), (10, 3000)):
        case = dict(order="R", ta=False, tb=False, m=m, n=n, k=300, alpha=1.0, beta=0.0,
                    pad=1, threads=threads)
        _run_case((HOST.cpu, HOST.features), "f32", case, m)


def test_register_tiles_per_isa():
    f32, f64 = isa_params("+avx512f,+avx2,+fma")
    assert (f32.lanes, f32.mr, f32.nr) == (16, 6, 64) and f64.lanes == 8
    f32, _ = isa_params("", "x86-64-v3")
    assert (f32.lanes, f32.mr, f32.nr) == (8, 6, 16)
    f32, _ = isa_params("", "x86-64")
    assert f32.lanes == 4
    for p in isa_params("+avx512f") + isa_params("", "x86-64-v3"):
        assert p.mc % p.mr == 0 and p.nc % p.nr == 0
        # the tile, the B vectors and a broadcast fit the vector registers
        assert p.mr * p.nrv + p.nrv + 1 <= (32 if p.lanes * (4 if p.element == "f32" else 8)
                                            == 64 else 16)


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_the_library_object_needs_only_libc_and_pthreads(tmp_path):
    path = tmp_path / "gemm.o"
    path.write_bytes(kernels.library_object(HOST.cpu, HOST.features))
    out = subprocess.run(["nm", "-u", str(path)], capture_output=True, text=True, check=True)
    undefined = {line.split()[-1] for line in out.stdout.splitlines() if line.strip()}
    assert undefined <= {"malloc", "aligned_alloc", "free", "sysconf", "pthread_create",
                         "pthread_join",
                         "memcpy", "memset", "memmove",
                         # the kept workers (pool_ir.py)
                         "pthread_mutex_lock", "pthread_mutex_unlock", "pthread_cond_wait",
                         "pthread_cond_broadcast", "sched_yield", "getpid"}, undefined
    out = subprocess.run(["nm", "-g", "--defined-only", str(path)], capture_output=True,
                         text=True, check=True)
    defined = {line.split()[-1] for line in out.stdout.splitlines() if line.strip()}
    assert defined == {"ember_sgemm", "ember_dgemm", kernels.THREADS_SYMBOL,
                       kernels.KEEP_SYMBOL}, defined


def test_the_policy_names():
    assert choice.policy("off") == "ember" and choice.policy("") == "auto"
    assert choice.policy("openblas") == "openblas" and choice.policy("loops") == "loops"
    with pytest.raises(ValueError, match="not a GEMM policy"):
        choice.policy("fast")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f32", "f64"])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
def test_products_of_a_few_rows_read_in_place_match_the_reference(target, element, m):
    """m <= 4 with B by rows skips packing (wide tiles, then NR-wide ones, then the packed
    path for the last columns): every column count around those widths."""
    for n in (16, 32, 40, 96, 128, 200, 260):
        for ta in (False, True):
            case = dict(order="R", ta=ta, tb=False, m=m, n=n, k=37, alpha=1.5,
                        beta=float(n % 2) * 0.5, pad=1, threads=1 + n % 3)
            _run_case(target, element, case, n)


def test_auto_policy_times_a_shape_once(monkeypatch, tmp_path):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    calls = []
    chooser = choice.Chooser({"f32": 1, "f64": 2}.get, {"f32": 3, "f64": 4}, ("test",))

    def measure(shapes):
        calls.extend(shapes)
        return [{"ember": 1.0, "openblas": 0.5} for _ in shapes]
    monkeypatch.setattr(chooser, "measure", measure)
    assert chooser.timings("f32", 111, 111, 7, 64, 64) == {"ember": 1.0, "openblas": 0.5}
    chooser.timings("f32", 111, 111, 7, 64, 64)
    assert len(calls) == 1
    fresh = choice.Chooser({}.get, {}, ("test",))  # another process: from the disk cache
    monkeypatch.setattr(fresh, "measure", measure)
    assert fresh.timings("f32", 111, 111, 7, 64, 64)["openblas"] == 0.5 and len(calls) == 1
    big = choice.MAX_MEASURED_MACS  # not timed: seconds per call
    assert fresh.timings("f32", 111, 111, big, 2, 1) == {"ember": 1.0, "openblas": 1.0}
    assert len(calls) == 1


def test_auto_policy_times_ember_for_every_shape_before_openblas(monkeypatch, tmp_path):
    """OpenBLAS's threads spin after its calls: timed shape by shape, Ember's kernel ran
    next to them from the second shape on (1.8x its time; case D went to OpenBLAS though
    Ember's kernels ran it 10% faster)."""
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    order = []
    chooser = choice.Chooser({"f32": 1}.get, {"f32": 3}, ("test",))

    def call(element, ta, tb, m, n, k):
        return ({name: (lambda *_, name=name, n=n: order.append((name, n)))
                 for name in ("ember", "openblas")}, (), None)
    monkeypatch.setattr(chooser, "_call", call)
    got = chooser.timings_of([("f32", 111, 111, 8, n, 8) for n in (1, 2, 1)])
    assert len(got) == 3 and got[0] is got[2]  # one shape timed once
    libraries = [name for name, _ in order]
    assert libraries == sorted(libraries) and {n for _, n in order} == {1, 2}


def _products_module(shapes) -> "ir.Module":
    from mlir import ir
    from ember.dialects.ember.irdl import default_context
    lines = ["func.func private @ember_sgemm(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, "
             "i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)", "func.func @f(%p: !llvm.ptr) {"]
    for i, (m, n, k) in enumerate(shapes):
        lines += [f"  %o{i} = arith.constant 101 : i32", f"  %t{i} = arith.constant 111 : i32",
                  f"  %m{i} = arith.constant {m} : i64", f"  %n{i} = arith.constant {n} : i64",
                  f"  %k{i} = arith.constant {k} : i64", f"  %a{i} = arith.constant 1.0 : f32",
                  f"  call @ember_sgemm(%o{i}, %t{i}, %t{i}, %m{i}, %n{i}, %k{i}, %a{i}, %p, "
                  f"%k{i}, %p, %n{i}, %a{i}, %p, %n{i}) : (i32, i32, i32, i64, i64, i64, f32, "
                  "!llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()"]
    lines += ["  return", "}"]
    with default_context():
        return ir.Module.parse("\n".join(lines))


@pytest.mark.parametrize("times,renamed", [
    ({64: (1.0, 0.5), 10: (1.0, 0.5)}, 2),  # OpenBLAS faster for all: all go
    ({64: (1.0, 1.0), 10: (0.1, 0.02)}, 0),  # faster for the small one only: none go
    ({64: (1.0, 0.9), 10: (1.0, 0.9)}, 0),  # within the margin: none go
])
def test_auto_policy_picks_one_library_per_function(times, renamed):
    module = _products_module([(256, 64, 512), (256, 10, 512)])

    def timings(shapes):
        return [dict(zip(("ember", "openblas"), times[n])) for _, _, _, _, n, _ in shapes]
    with module.context:
        assert choice.retarget(module, "auto", timings) == renamed
    text = str(module)
    assert text.count("call @ember_openblas_sgemm(") == renamed
    assert text.count("call @ember_sgemm(") == 2 - renamed


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f32", "f64"])
@pytest.mark.parametrize("tb", [False, True])
def test_narrow_products_with_a_by_rows_match_the_reference(target, element, tb):
    """n < NR with A by rows runs as dot products along k (4 x 5 blocks of C, the last
    steps of k masked, the last rows and columns repeated but not stored), split by rows
    over threads."""
    for m, n, k in ((1, 1, 1), (5, 3, 17), (256, 10, 1024), (13, 15, 40), (7, 9, 33),
                    (300, 2, 5000)):
        case = dict(order="R", ta=False, tb=tb, m=m, n=n, k=k, alpha=0.5,
                    beta=float(m % 2), pad=2, threads=1 + m % 3)
        _run_case(target, element, case, m * n)


def test_calls_from_many_threads_share_the_workspace_pool_safely():
    """Each call takes its packing buffers from a pool of blocks kept across calls (atomic
    exchange to take, compare-and-swap to give back); calls from 6 threads at once, each
    starting threads of its own, all get right results."""
    import concurrent.futures
    fn, threads_at = _entry((HOST.cpu, HOST.features), "f32")
    ctypes.c_int32.from_address(threads_at).value = 2
    rng = np.random.default_rng(7)
    cases = []
    for i in range(12):
        m, n, k = 200 + 13 * i, 150 + 7 * i, 300 - 11 * i
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        cases.append((a, b, a.astype(np.float64) @ b.astype(np.float64)))

    def run(case):
        a, b, want = case
        for _ in range(5):
            c = np.full((a.shape[0], b.shape[1]), np.nan, np.float32)
            _gemm(fn, "R", False, False, a.shape[0], b.shape[1], a.shape[1], 1.0, a,
                  a.shape[1], b, b.shape[1], 0.0, c, b.shape[1])
            if not np.allclose(c, want, rtol=1e-4, atol=1e-3):
                return False
        return True
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        assert all(pool.map(run, cases))
