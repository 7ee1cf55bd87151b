"""What every system's cases share: the programs, their inputs, the numpy reference, the
timer and the command line. A system file supplies only how to convert inputs, compile a
function, run it to completion and read the result back (see numpy_cases.py).

    python bench/systems/SYSTEM_cases.py steady A B C D --out FILE   # steady-state timings
    python bench/systems/SYSTEM_cases.py first B --out FILE          # first call in this process
    python bench/systems/SYSTEM_cases.py steady G1024x1024x1024 --out FILE   # case G, one shape

Case E (a training step) changes state, so a system supplies `train_step(arrays)` for it
instead: it makes the parameters its own (Variables, tensors, ...) and returns `(step,
weights)`, where `step()` runs one step to completion and returns the loss, and `weights()`
the parameters as numpy arrays. The loss and the weights after the first step are checked
against numpy's (`numpy_train_step`) before timing.

A system file may define a dict INFO, added to the JSON's "info" (ember's says whether it
has its own GEMM kernels). The result is JSON written to FILE (rewritten after every case,
so a crash keeps the cases before it); libraries are free to print on stdout/stderr.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import traceback
import warnings

import numpy as np

T_IMPORT0 = time.perf_counter()  # set before the system file imports its library

MLP_DIMS = (784, 1024, 1024, 10)
MLP_BATCH = 256
C_SIZE = 10_000_000
B_STEPS = 50
LEARNING_RATE = 0.01  # case E's SGD step
# Case G: one float32 product x @ w per (m, k, n): 1024^3, then case D's three products.
GEMM_SHAPES = ((1024, 1024, 1024), (256, 784, 1024), (256, 1024, 1024), (256, 1024, 10))


def gemm_case(m: int, k: int, n: int) -> str:
    """Case G's name for one shape, e.g. 'G256x784x1024'; a system process runs it as a case."""
    return f"G{m}x{k}x{n}"


def gemm_shape(case: str) -> tuple[int, int, int]:
    m, k, n = (int(d) for d in case[1:].split("x"))
    return m, k, n


GEMM_CASES = tuple(gemm_case(*s) for s in GEMM_SHAPES)

# Per case: (rtol, atol as a fraction of max |reference|) for the check against numpy.
TOLERANCE = {"A": (1e-6, 1e-7), "B": (1e-4, 1e-5), "C": (1e-4, 1e-5), "D": (1e-3, 1e-4),
             "E": (1e-3, 1e-4), "G": (1e-3, 1e-4)}


def programs(tanh, sin, relu, matmul):
    """Cases A-D and G's shapes, written once over a library's ops (so every system runs the
    same program); arithmetic operators and Python float constants are the library's own."""
    def A(x, y):
        return x + y

    def B(x):
        for _ in range(B_STEPS):
            x = tanh(x) * 0.5 + 0.1
        return x

    def C(x):
        return ((x * 2 + 1) * x - 3) / (x + 4) + sin(x)

    def D(x, w1, b1, w2, b2, w3, b3):
        h = relu(matmul(x, w1) + b1)
        h = relu(matmul(h, w2) + b2)
        return matmul(h, w3) + b3

    def G(x, w):
        return matmul(x, w)

    return {"A": A, "B": B, "C": C, "D": D, **{case: G for case in GEMM_CASES}}


NUMPY_PROGRAMS = programs(np.tanh, np.sin, lambda h: np.maximum(h, 0), np.matmul)


def inputs(case: str) -> list[np.ndarray]:
    rng = np.random.default_rng(2024)
    f32 = np.float32
    if case == "A":
        return [rng.standard_normal((2, 2), dtype=f32) for _ in range(2)]
    if case == "B":
        return [rng.standard_normal(1000, dtype=f32)]
    if case == "C":  # in [-1, 1): x + 4 stays away from 0
        return [rng.uniform(-1.0, 1.0, C_SIZE).astype(f32)]
    if case == "D":
        arrays = [rng.standard_normal((MLP_BATCH, MLP_DIMS[0]), dtype=f32)]
        for n_in, n_out in zip(MLP_DIMS[:-1], MLP_DIMS[1:]):
            arrays.append(rng.standard_normal((n_in, n_out), dtype=f32) * f32(n_in ** -0.5))
            arrays.append(rng.standard_normal(n_out, dtype=f32) * f32(0.1))
        return arrays
    if case == "E":  # x, integer labels, then D's weights
        x, *params = inputs("D")
        return [x, rng.integers(0, MLP_DIMS[-1], MLP_BATCH, dtype=np.int32), *params]
    if case in GEMM_CASES:  # scaled as D's weights: the product's entries stay near 1
        m, k, n = gemm_shape(case)
        return [rng.standard_normal((m, k), dtype=f32),
                rng.standard_normal((k, n), dtype=f32) * f32(k ** -0.5)]
    raise ValueError(f"unknown case {case!r}")


def numpy_train_step(x, labels, w1, b1, w2, b2, w3, b3, lr=LEARNING_RATE):
    """Case E in numpy, the backward pass written out: relu MLP, softmax cross-entropy of
    the integer labels averaged over the batch, one SGD step applied to the weights in
    place. Returns the loss (before the step)."""
    h1 = np.maximum(x @ w1 + b1, 0)
    h2 = np.maximum(h1 @ w2 + b2, 0)
    logits = h2 @ w3 + b3
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(labels))
    loss = -logp[rows, labels].mean()
    d3 = np.exp(logp)
    d3[rows, labels] -= 1
    d3 *= np.float32(1 / len(labels))
    d2 = (d3 @ w3.T) * (h2 > 0)
    d1 = (d2 @ w2.T) * (h1 > 0)
    grads = [x.T @ d1, d1.sum(0), h1.T @ d2, d2.sum(0), h2.T @ d3, d3.sum(0)]
    for w, g in zip((w1, b1, w2, b2, w3, b3), grads):
        w -= np.float32(lr) * g
    return np.float32(loss)


def check(case: str, got, want) -> None:
    rtol, atol = TOLERANCE[case[0]]
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (
        f"result {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}")
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * float(np.max(np.abs(want))))


def measure(call, min_repeats=7, max_repeats=21, block_s=0.05, spend_s=1.5) -> dict:
    """Median per-call time over repeated blocks of calls, after warm-up. A block is as
    many calls as take about block_s; at least min_repeats blocks, more while under spend_s."""
    call()  # warm-up (the first call was made, and checked, before this)
    t0 = time.perf_counter()
    n = 0
    while True:
        call()
        n += 1
        if time.perf_counter() - t0 >= min(block_s / 5, 0.01) or n >= 10_000:
            break
    per_call = (time.perf_counter() - t0) / n
    number = max(1, int(block_s / max(per_call, 1e-9)))
    times = []
    gc.collect()
    gc_was = gc.isenabled()
    gc.disable()
    start = time.perf_counter()
    try:
        while len(times) < min_repeats or (len(times) < max_repeats
                                           and time.perf_counter() - start < spend_s):
            t = time.perf_counter()
            for _ in range(number):
                call()
            times.append((time.perf_counter() - t) / number)
    finally:
        if gc_was:
            gc.enable()
    return {"median": statistics.median(times), "min": min(times), "max": max(times),
            "repeats": len(times), "number": number}


def _openblas_by_ctypes() -> list | None:
    """numpy's OpenBLAS asked directly (its kernel, version, threads), where threadpoolctl is
    not installed (the project's .venv, which runs ember's processes): the same fields."""
    import ctypes
    import glob
    folder = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(folder, "libscipy_openblas*.so*"))):
        lib = ctypes.CDLL(path)
        suffix = "64_" if "openblas64_" in path else ""  # e.g. scipy_openblas_get_config64_
        try:
            name, config, threads = (getattr(lib, f"scipy_openblas_get_{what}{suffix}")
                                     for what in ("corename", "config", "num_threads"))
        except AttributeError:
            continue
        name.restype = config.restype = ctypes.c_char_p
        return [{"internal_api": "openblas", "architecture": name().decode(),
                 "version": config().decode().split()[1], "num_threads": threads(),
                 "filepath": path}]
    return None


def blas_info() -> list | None:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return _openblas_by_ctypes()
    return [{k: d.get(k) for k in ("internal_api", "architecture", "version", "num_threads",
                                   "filepath")} for d in threadpool_info()]


class _Recorder:
    def __init__(self, path, system, info):
        self.path = path
        self.data = {"system": system, "info": info, "cases": {}}
        self.flush()

    def flush(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1)
        os.replace(tmp, self.path)


def _warning_list(caught) -> list:
    return [{"category": w.category.__name__, "message": str(w.message)} for w in caught]


def _run_train_case(sys_mod, case: str, mode: str) -> dict:
    arrays = inputs(case)
    want_weights = [a.copy() for a in arrays[2:]]
    want_loss = numpy_train_step(*arrays[:2], *want_weights)
    res: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        step, weights = sys_mod.train_step(arrays)
        loss = step()
        res["first_call"] = time.perf_counter() - t
    res["warnings"] = _warning_list(caught)
    try:
        check(case, np.asarray(sys_mod.to_numpy(loss)), np.asarray(want_loss))
        got = weights()
        assert len(got) == len(want_weights), f"{len(got)} weights, expected {len(want_weights)}"
        for i, (g, w) in enumerate(zip(got, want_weights)):
            try:
                check(case, g, w)
            except AssertionError as e:
                raise AssertionError(f"weight {i} after one step: {e}") from None
    except AssertionError as e:
        res["status"] = "wrong"
        res["error"] = str(e).strip()[:800]
        return res
    res["status"] = "ok"
    res.update(settle(sys_mod, step, mode))  # after the check: it trains on
    if mode == "steady":
        res.update(measure(step))
    return res


def _run_case(sys_mod, case: str, mode: str) -> dict:
    if case == "E":
        return _run_train_case(sys_mod, case, mode)
    arrays = inputs(case)
    want = NUMPY_PROGRAMS[case](*arrays)
    args = sys_mod.convert(arrays)
    res: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        fn = sys_mod.compile(case)
        out = sys_mod.run(fn, args)
        res["first_call"] = time.perf_counter() - t
    res["warnings"] = _warning_list(caught)
    try:
        check(case, sys_mod.to_numpy(out), want)
    except AssertionError as e:
        res["status"] = "wrong"
        res["error"] = str(e).strip()[:800]
        return res
    res["status"] = "ok"
    res.update(settle(sys_mod, lambda: sys_mod.run(fn, args), mode, fn, args))
    if mode == "steady":
        res.update(measure(lambda: sys_mod.run(fn, args)))
        if case == "C":
            res.update(copy_baseline(arrays[0]))
    return res


def copy_baseline(x: np.ndarray) -> dict:
    """Case C's memory-bound floor, measured in the same process right after the case: a
    numpy copy of x's bytes into a buffer already faulted in (one read and one write, as C
    does), on one thread and on two (halves; numpy's copy releases the GIL)."""
    import threading
    out = np.empty_like(x)
    out[...] = 0  # faulted in
    half = len(x) // 2

    def two():
        t = threading.Thread(target=np.copyto, args=(out[half:], x[half:]))
        t.start()
        np.copyto(out[:half], x[:half])
        t.join()
    return {"copy_1t": measure(lambda: np.copyto(out, x), spend_s=0.5)["median"],
            "copy_2t": measure(two, spend_s=0.5)["median"]}


def settle(sys_mod, call, mode: str, fn=None, args=None) -> dict:
    """A system's `settle(call, mode, fn, args)`, if it has one, after the first call: a
    system whose code changes as it runs (Ember's tiered compilation) gets there before
    anything is timed, and reports figures of its own (merged into the case's result)."""
    hook = getattr(sys_mod, "settle", None)
    return hook(call, mode, fn, args) if hook is not None else {}


def main(sys_mod, name: str, version: str) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["steady", "first"])
    p.add_argument("cases", nargs="+")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    info = {"name": name, "version": version, "python": sys.version.split()[0],
            "numpy": np.__version__, "import_s": time.perf_counter() - T_IMPORT0,
            "blas": blas_info(),
            "env": {k: os.environ[k] for k in sorted(os.environ)
                    if k.startswith(("OPENBLAS_", "EMBER_BLAS"))},
            **getattr(sys_mod, "INFO", {})}
    rec = _Recorder(a.out, name, info)
    for case in a.cases:
        try:
            rec.data["cases"][case] = _run_case(sys_mod, case, a.mode)
        except Exception as e:  # reported in the table, not fatal to the other cases
            rec.data["cases"][case] = {"status": "error",
                                       "error": f"{type(e).__name__}: {e}"[:800],
                                       "traceback": traceback.format_exc()[-3000:]}
        rec.flush()
