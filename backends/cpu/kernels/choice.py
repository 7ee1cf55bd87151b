"""Which GEMM a JIT-compiled product calls: Ember's own kernel, or numpy's OpenBLAS where
that was measured faster for the product's shape.

`EMBER_BLAS` (or `CpuOptions.gemm`) sets the policy:
  - `auto` (the default): per shape (element type, transposes, m, n, k), both are timed once
    on this machine with the threads the process uses (kept in memory and in the disk
    cache, so a shape is measured once per machine), and a function's products all call
    OpenBLAS if it took at most `MARGIN` of Ember's time for them together, else all call
    Ember's (`retarget`: one library per function);
  - `off` (or `ember`): always Ember's own kernels (what an AOT library runs, bit for bit);
  - `openblas`: OpenBLAS wherever numpy has one (else Ember's own);
  - `loops`: no GEMM calls at all, products stay loop nests (for debugging the lowering).
After `ember-linalg-to-blas` every product calls `@ember_sgemm`/`@ember_dgemm`; `retarget`
renames the calls that go to OpenBLAS to `@ember_openblas_sgemm`/`@ember_openblas_dgemm`,
which blas_library.bind() resolves.
"""

from __future__ import annotations

import ctypes
import threading
import time

import numpy as np
from mlir import ir
from mlir.dialects import func

from ember.backends.cpu.kernels.driver_ir import ENTRY

from ember.backends.cpu.options import (BLAS_ENV as ENV, GEMM_ALIASES as _ALIASES,  # noqa
                                        GEMM_MODES as MODES, OPENBLAS, gemm_policy as policy)

# OpenBLAS must take at most this fraction of Ember's time to be chosen: timings on a
# shared machine move by more than 5%, and mixing both libraries in one program costs
# (OpenBLAS's threads spin after its calls while Ember's run)
MARGIN = 0.85
# Products of more multiply-adds than this are not timed (seconds per call, and operands
# as large): both libraries run them at the machine's peak, and Ember's kernel is kept.
MAX_MEASURED_MACS = 1 << 28
NO_TRANS = 111
# How long OpenBLAS's threads spin after a call before they sleep (its THREAD_TIMEOUT:
# 2**28 cycles, ~0.09 s at 3 GHz), slowing Ember's kernel on the other cores meanwhile
OPENBLAS_SPIN_S = 0.1


def retarget(module: ir.Module, mode: str, timings) -> int:
    """Renames the GEMM calls in `module` that should go to OpenBLAS: all of them in
    `openblas` mode; in `auto` mode all of them if, by `timings([(element, ta, tb, m, n,
    k), ...])` (seconds per call of each library per shape, measured once per shape:
    Chooser.timings_of), OpenBLAS takes at most
    MARGIN of Ember's time for the function's products together, else none (and none if a
    product's shape is known only at run time). One library per function: with both,
    OpenBLAS's threads spin after its calls while Ember's threads run the next product
    (case D with its last, 10-wide product on OpenBLAS: 8.4 ms, against 6.6 ms on either
    library alone). Returns how many were renamed."""
    if mode not in ("auto", "openblas"):
        return 0
    calls: list[tuple[ir.Operation, str]] = []
    by_symbol = {symbol: element for element, symbol in ENTRY.items()}

    def visit(op):
        if op.name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee in by_symbol:
                calls.append((op, by_symbol[callee]))
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    if mode == "auto" and calls:
        shapes = [[_constant(op.operands[i]) for i in (1, 2, 3, 4, 5)] for op, _ in calls]
        if any(None in shape for shape in shapes):
            return 0
        total = {"ember": 0.0, "openblas": 0.0}
        for times in timings([(element, *shape) for (_, element), shape in zip(calls, shapes)]):
            for library, seconds in times.items():
                total[library] += seconds
        if not total["openblas"] < MARGIN * total["ember"]:
            return 0
    renamed = 0
    declared: set[str] = set()
    for op, element in calls:
        with op.context:
            op.attributes["callee"] = ir.FlatSymbolRefAttr.get(OPENBLAS[element])
        if element not in declared:
            _declare_like(module, ENTRY[element], OPENBLAS[element])
            declared.add(element)
        renamed += 1
    return renamed


def _constant(value: ir.Value):
    owner = value.owner
    op = owner.operation if isinstance(owner, ir.OpView) else owner
    if not isinstance(op, ir.Operation) or op.name != "arith.constant":
        return None
    return ir.IntegerAttr(op.attributes["value"]).value


def _declare_like(module: ir.Module, existing: str, name: str) -> None:
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and \
                ir.StringAttr(op.attributes["sym_name"]).value == existing:
            with ir.InsertionPoint.at_block_begin(module.body), op.location:
                ftype = ir.TypeAttr(op.attributes["function_type"]).value
                func.FuncOp(name, ftype, visibility="private")
            return


class Chooser:
    """Times Ember's kernel against OpenBLAS per shape, once per machine (`timings`)."""

    def __init__(self, own, openblas: dict[str, int], context: tuple):
        """`own(element)`: the address of Ember's GEMM (loaded on first use); `openblas`:
        OpenBLAS's by element; `context`: what else the timings depend on (cache key)."""
        self.own, self.openblas, self.context = own, openblas, context
        self._memory: dict[tuple, dict] = {}
        self._lock = threading.Lock()
        self._openblas_ran = -OPENBLAS_SPIN_S  # when `measure` last called OpenBLAS

    def timings(self, element: str, ta: int, tb: int, m: int, n: int, k: int) -> dict:
        """Seconds per call of each library for this shape (`timings_of`)."""
        return self.timings_of([(element, ta, tb, m, n, k)])[0]

    def timings_of(self, shapes: list[tuple]) -> list[dict]:
        """Seconds per call of each library for each (element, ta, tb, m, n, k), measured
        once per machine (memory, then disk cache); products beyond MAX_MEASURED_MACS count
        as equal. The shapes not known yet are timed together: Ember's kernel for all of
        them, then OpenBLAS's (after each of its calls OpenBLAS's threads spin for a while
        and slow whatever runs next on the other cores: timed one shape after another,
        Ember's kernel took 1.8x its time on the shapes after the first, and case D's
        products went to OpenBLAS though Ember's ran the function 10% faster)."""
        from ember.backends.cpu.cache import cache_key, disk_cache
        keys = [(e, ta != NO_TRANS, tb != NO_TRANS, m, n, k) for e, ta, tb, m, n, k in shapes]
        with self._lock:
            missing = {}
            for shape in keys:
                if shape in self._memory or shape in missing:
                    continue
                key = cache_key("gemm-timing", *self.context, *shape)
                entry = disk_cache().load(key)
                times = entry[1].get("seconds") if entry is not None else None
                if isinstance(times, dict) and \
                        all(isinstance(times.get(x), float) for x in ("ember", "openblas")):
                    self._memory[shape] = times
                elif shape[3] * shape[4] * shape[5] > MAX_MEASURED_MACS:
                    self._memory[shape] = {"ember": 1.0, "openblas": 1.0}
                else:
                    missing[shape] = key
            if missing:
                measured = self.measure(list(missing))
                for (shape, key), times in zip(missing.items(), measured):
                    disk_cache().store(key, b"", {"seconds": times})
                    self._memory[shape] = times
            return [self._memory[shape] for shape in keys]

    def measure(self, shapes: list[tuple]) -> list[dict]:
        """Median seconds per call of each GEMM on random operands of each shape (element,
        ta, tb, m, n, k): Ember's for every shape first, then OpenBLAS's (`timings_of`)."""
        import statistics  # here: ~4 ms of a warm start's first call, which times nothing
        calls = [self._call(*shape) for shape in shapes]  # (fns, args, operands kept alive)
        wait = self._openblas_ran + OPENBLAS_SPIN_S - time.perf_counter()
        if wait > 0:  # this chooser's last OpenBLAS call: its threads may still spin
            time.sleep(wait)
        times: list[dict] = [{} for _ in shapes]
        for name in ("ember", "openblas"):
            for out, (fns, args, _) in zip(times, calls):
                fn = fns[name]
                fn(*args)  # warm-up: pages, threads, caches
                runs: list[float] = []
                budget = time.perf_counter() + 0.025  # a first call waits, once per shape
                while len(runs) < 3 or (len(runs) < 7 and time.perf_counter() < budget):
                    t0 = time.perf_counter()
                    fn(*args)
                    runs.append(time.perf_counter() - t0)
                out[name] = statistics.median(runs)
        self._openblas_ran = time.perf_counter()
        return times

    def _call(self, element: str, ta: bool, tb: bool, m: int, n: int, k: int):
        """({library: its GEMM as a ctypes function}, the arguments of one call of this
        shape, the random operands they point into)."""
        dtype = np.float32 if element == "f32" else np.float64
        scalar = ctypes.c_float if element == "f32" else ctypes.c_double
        rng = np.random.default_rng(0)
        a = rng.standard_normal((k, m) if ta else (m, k)).astype(dtype)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(dtype)
        c = np.zeros((m, n), dtype)
        proto = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                                 ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, scalar,
                                 ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                 ctypes.c_int64, scalar, ctypes.c_void_p, ctypes.c_int64)
        args = (101, 112 if ta else NO_TRANS, 112 if tb else NO_TRANS, m, n, k, 1.0,
                a.ctypes.data, max(a.shape[1], 1), b.ctypes.data, max(b.shape[1], 1), 0.0,
                c.ctypes.data, max(n, 1))
        fns = {"ember": proto(self.own(element)), "openblas": proto(self.openblas[element])}
        return fns, args, (a, b, c)
