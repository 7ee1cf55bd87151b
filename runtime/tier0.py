"""Tier 0 of tiered compilation (runtime/tiers.py): the first calls of a shape specialisation
run the trace on the reference interpreter (backends/interpreter.py) while its compiled code
is built on the background thread, as V8's Ignition and the JVM's interpreter do.

The interpreter runs the ops' numpy kernels: the meaning compiled code is tested against,
and what eager execution runs. It serves a call only where that is transparent, so a
function may run on it only if (`ineligible` says why not):

  - every op is pure and on a list of ops whose kernels are one numpy call or a few
    (elementwise math, constants, matmul, transposes, reshapes, broadcasts, reductions,
    softmax) or `func.call`/`func.return` of functions in the module: no loops (a loop
    whose trip count depends on values could run long on the interpreter), no variables,
    no host callbacks or prints, no random ops, no strings;
  - every value is a ranked tensor of float32, float64 or bool (integer division and
    overflow are where kernels and compiled code could disagree on errors);
  - the Function's pipeline is the default one, or none: a pipeline the user chose, even of
    Ember's and upstream passes, compiles at the first call, so what it does (and how it
    fails) shows there, not in a background compile's warning.

A call that raises on the interpreter (a shape that does not broadcast, say) is run again on
compiled code, compiled then and there, so every error is the compiled code's, as without
tier 0; ops without side effects make the repeat safe. Results never share memory with the
inputs or with each other (as compiled code's buffers do not).
"""

from __future__ import annotations

import functools
import threading
import time
from typing import Callable

import numpy as np
from mlir import ir

from ember.backends.interpreter import Interpreter, InterpreterError
from ember.dialects.ember.base import REGISTRY, Trait
from ember.dialects.ember.errors import EmberError

# Non-elementwise ember ops tier 0 runs (elementwise pure ops run too).
_OPS = frozenset({
    "ember.constant", "ember.matmul", "ember.transpose", "ember.reshape", "ember.broadcast_to",
    "ember.expand_dims", "ember.reduce_sum", "ember.reduce_mean", "ember.reduce_max",
    "ember.reduce_min", "ember.softmax", "ember.log_softmax"})
_UPSTREAM = frozenset({"func.return", "func.call"})


def _tier0_op(name: str) -> bool:
    if name in _OPS or name in _UPSTREAM:
        return True
    spec = REGISTRY.get(name)
    return (spec is not None and spec.has(Trait.ELEMENTWISE) and spec.has(Trait.PURE)
            and not spec.has(Trait.RANDOM))


def _type_ok(t: ir.Type) -> bool:
    if not isinstance(t, ir.RankedTensorType):
        return False
    et = t.element_type
    return (isinstance(et, (ir.F32Type, ir.F64Type))
            or (isinstance(et, ir.IntegerType) and et.width == 1))


def ineligible(module: ir.Module, callbacks: dict) -> str | None:
    """Why tier 0 may not run `module` (the rules of the module docstring), or None."""
    if callbacks:
        return "it calls back into Python"
    funcs = {}
    for op in module.body.operations:
        if op.operation.name != "func.func":
            return f"the module holds '{op.operation.name}'"
        if not op.regions[0].blocks:
            return "it calls a function the module only declares"
        funcs[ir.StringAttr(op.attributes["sym_name"]).value] = op
    checked: dict = {}
    for fn in funcs.values():
        block = fn.regions[0].blocks[0]
        values = list(block.arguments)
        for op in block.operations:
            op = op.operation
            if not _tier0_op(op.name):
                return f"'{op.name}' is not among the ops it runs"
            if op.name == "func.call" and (
                    ir.FlatSymbolRefAttr(op.attributes["callee"]).value not in funcs):
                return "it calls a function the module does not define"
            values += op.operands
            values += op.results
        for v in values:
            t = v.type
            ok = checked.get(t)
            if ok is None:
                ok = checked[t] = _type_ok(t)
            if not ok:
                return f"a value of type {t} (only ranked float32, float64, bool tensors)"
    return None


@functools.lru_cache(maxsize=32)
def default_pipeline(pipeline: str) -> bool:
    """Whether `pipeline` (its text; "" for none) is em.function's default, or none."""
    from ember.passes.pipeline import Pipeline
    from ember.runtime.function import DEFAULT_PIPELINE
    try:
        return not pipeline or str(Pipeline.parse(pipeline)) == str(
            Pipeline.parse(DEFAULT_PIPELINE))
    except Exception:  # noqa: BLE001 - a pipeline it cannot read: not the default, surely
        return False


def plan(module: ir.Module, symbol: str, callbacks: dict) -> Callable | None:
    """`run(arrays)` -> the results of `@symbol` of `module` on the interpreter, its plan
    built now; None where tier 0 may not run it."""
    if ineligible(module, callbacks) is not None:
        return None
    interpreter = Interpreter(module)
    try:
        interpreter._plan(symbol)  # decodes every op once, now, on the caller's thread
    except (InterpreterError, EmberError, ValueError, TypeError, KeyError):
        return None  # IR it cannot decode: the compiled tiers run it
    return functools.partial(interpreter.call, symbol)


# The call of a tier-0 specialisation whose end queues its compile: the second. A function
# called once (a script's, a test's) never compiles, nor keeps its trace alive compiling,
# nor makes the process wait at exit for a compile; the first call never competes with one.
COMPILE_AT_CALL = 2


class Interpreted:
    """Tier-0 code of one shape specialisation: runs as an executable (`exe(arrays)` ->
    arrays) on the interpreter (`run`, from `plan`). At the end of call COMPILE_AT_CALL it
    calls `start(self)` once, which queues `compile_in_background(self)`; a call that
    raises runs again on `recover(self)`'s compiled code (None: the interpreter's error
    stands)."""

    tier = "interp"
    fast_path = False  # the Function's fast path needs compiled code: it is not kept
    variables = ()

    def __init__(self, run: Callable[[list], tuple],
                 start: Callable[["Interpreted"], None] | None,
                 recover: Callable[["Interpreted"], object],
                 compile_in_background: Callable[["Interpreted"], None]):
        self._run = run
        self._start = start
        self._recover = recover
        self.compile_in_background = compile_in_background  # the job `start` queues
        self._lock = threading.Lock()
        self.calls = 0
        self.shortest = float("inf")  # seconds of the shortest call (tiers.HOT_SECONDS)
        self.replaced = False  # set once compiled code took its place (`successor`)
        self.successor = None

    def __call__(self, arrays: list) -> list:
        self.calls += 1
        start = time.perf_counter()
        try:
            try:
                outs, failed = self._run(arrays), None
                self.shortest = min(self.shortest, time.perf_counter() - start)
            except Exception as error:  # noqa: BLE001 - the compiled code's error instead
                failed = error
            if failed is not None:  # (outside the handler: its error is not chained to this)
                exe = self._recover(self)
                if exe is None:
                    raise failed
                return exe(arrays)
        finally:
            if self._start is not None and self.calls >= COMPILE_AT_CALL:
                self._started()
        return _own_buffers(outs, arrays)

    def _started(self) -> None:
        with self._lock:
            start, self._start = self._start, None
        if start is not None:
            start(self)


def _own_buffers(outs, arrays) -> list:
    """The results as C-contiguous arrays of their own: a view (of an input, or of another
    result) is copied."""
    seen: set = set()
    inputs = {id(a) for a in arrays}
    result = []
    for out in outs:
        arr = np.asarray(out)
        if (arr.base is not None or id(arr) in seen or id(arr) in inputs
                or not arr.flags.c_contiguous or not arr.flags.writeable):
            arr = np.array(arr, order="C", copy=True)
        seen.add(id(arr))
        result.append(arr)
    return result
