"""`Dataset.map` and `Dataset.filter`: the function traced once over the input's element_spec
and compiled with `em.function`, as tf.data traces it into a graph function.

tf.data always traces: the function sees symbolic tensors, once, when `map` is called,
converted by AutoGraph as `em.function` converts (Python `if`/`while`/`for` on tensors
staged; lambdas run as written), so a function that needs values (`x.numpy()`, `int(x)`)
fails then, with the tracer's error and a note on what to do (em ops, or `em.py_function`
for Python code run per element). Each element
then runs the compiled function. With `num_parallel_calls`, that many pool threads map runs
of consecutive elements at once and the results come out in the input's order (an element
that fails raises after the ones before it). Functions over strings (host-only tensors) run
on the interpreter backend. Each call goes straight to the compiled entry (fastcall.py); a
`map` before a `batch` may instead run once per batch (optimize.py).
"""

import collections
import concurrent.futures
import inspect
import itertools
import os
import threading

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend.autograph import convert as convert_control_flow
from ember.frontend.shape import TensorShape, TensorSpec

from ember.runtime.data import structure
from ember.runtime.data.dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY,
                                        _count)
from ember.runtime.data.fastcall import CompiledCall, flattener, packer
from ember.runtime.data.transforms import _Unary


def _call(fn, element):
    if isinstance(element, tuple) and not hasattr(element, "_fields"):
        return fn(*element)
    return fn(element)


def _name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


# Parallel calls are handed to the pool in runs of this many elements: one task per element
# costs more in the pool's bookkeeping than a small compiled function takes to run.
_CHUNK = 16


def cpu_count() -> int:
    """The CPUs this process may run on (what AUTOTUNE resolves to)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def parallelism(value, where: str) -> int:
    """The number of parallel calls: 1 for None, the CPU count for AUTOTUNE."""
    if value is None:
        return 1
    n = _count(value, f"{where}: num_parallel_calls")
    if n == AUTOTUNE:
        return cpu_count()
    if n <= 0:
        raise ValueError(f"{where}: num_parallel_calls must be positive or "
                         f"em.data.AUTOTUNE, got {n}")
    return n


def trace_map_function(fn, spec, where: str):
    """`fn` compiled over the element `spec`: returns (call, output spec), where `call(element)`
    runs the compiled function on an element and returns the output structure."""
    from ember.runtime.function import Function
    if not callable(fn):
        what = "predicate" if where == "Dataset.filter" else "map_func"
        raise TypeError(f"{where}: {what} must be callable, got {type(fn).__name__}")
    name = _name(fn)
    if not all(isinstance(s, TensorSpec) for s in structure.flatten(spec)):
        raise TypeError(f"{where}: the elements hold datasets ({spec}, from `window`), which "
                        f"{name} cannot be traced over; read the windows with flat_map or "
                        "interleave (`ds.window(n).flat_map(lambda w: w.batch(n))`), or "
                        "iterate them with `for`")
    outputs = {}
    converted = convert_control_flow(fn)  # AutoGraph, as em.function converts what it traces

    def mapped(*leaves):
        result = _call(converted, structure.pack_as(spec, list(leaves)))
        if isinstance(result, list):
            result = tuple(result)
        result = structure.to_tensors(result, f"{where}: {name} returned")
        outputs["structure"] = result
        return structure.flatten(result)

    mapped.__signature__ = inspect.Signature([
        inspect.Parameter(f"component_{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for i in range(len(structure.flatten(spec)))])
    # String tensors run only on the host: such a function goes to the interpreter backend
    # directly, instead of warning on every pipeline that it falls back there.
    host = any(s.dtype.is_string for s in structure.flatten(spec))
    compiled = Function(mapped, input_signature=structure.flatten(spec), name=name,
                        backend="interpreter" if host else "cpu", jit_compile=not host)
    try:
        compiled.get_concrete_function()
    except Exception as error:  # noqa: BLE001 - the tracer's own error, with a note
        if not str(error).startswith(f"{where}: {name} returned"):
            error.add_note(_note(name, where, spec, error))
        raise
    out = structure.map_structure(lambda t: TensorSpec(t.shape, t.dtype), outputs["structure"])

    run = CompiledCall(compiled, structure.flatten(spec), structure.flatten(out))
    flatten, pack = flattener(spec), packer(out)

    def call(element):
        return pack(run(flatten(element)))

    call.function = compiled  # its traced IR decides map vectorisation (optimize.py)
    return call, out


def _needs_values(error) -> bool:
    """Whether `error` is the tracer's: a value asked of a symbolic tensor (numpy(), bool(),
    int(), float(), np.asarray() of it)."""
    from ember.frontend.tracing import SymbolicValueError
    return isinstance(error, SymbolicValueError) or (
        isinstance(error, TypeError) and "needs a value, but" in str(error))


def _note(name, where, spec, error) -> str:
    """Where the error arose; with what to do when it asked a symbolic tensor for a value."""
    note = f"{where}: while tracing {name} with the element_spec {spec}."
    if not _needs_values(error):
        return note
    note += (" tf.data traces the mapped function once with symbolic tensors and compiles "
             "it: compute with em ops, or wrap Python code that needs values in "
             "em.py_function.")
    if name == "<lambda>" and "Python bool" in str(error):
        note += (" AutoGraph converts `a if c else b` in a lambda only where it can read its "
                 "source (not one typed at a prompt or made by exec): use a def in a file, "
                 "or em.where.")
    return note


class MapDataset(_Unary):
    def __init__(self, source, fn, num_parallel_calls):
        super().__init__(source)
        self._parallel = parallelism(num_parallel_calls, "Dataset.map")
        self._fn = fn
        self._name = _name(fn)
        self._call, self._spec = trace_map_function(fn, source.element_spec, "Dataset.map")
        self._vectorized_plan = None
        self._lock = threading.Lock()

    def _vectorized(self):
        """The batched form of the function, or why there is none (optimize.py), decided
        on first need: a second trace, over batches."""
        with self._lock:
            if self._vectorized_plan is None:
                from ember.runtime.data.optimize import vectorize
                self._vectorized_plan = vectorize(self)
            return self._vectorized_plan

    @property
    def element_spec(self):
        return self._spec

    def _iterate(self):
        if self._parallel == 1:
            for element in self._source._iterate():
                yield self._call(element)
            return
        pool = concurrent.futures.ThreadPoolExecutor(self._parallel,
                                                     thread_name_prefix="ember-data-map")
        elements = self._source._iterate()
        pending = collections.deque()
        try:
            while True:
                while len(pending) < self._parallel:
                    chunk = list(itertools.islice(elements, _CHUNK))
                    if not chunk:
                        break
                    pending.append(pool.submit(self._call_chunk, chunk))
                if not pending:
                    return
                results, error = pending.popleft().result()
                yield from results
                if error is not None:
                    raise error
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def _call_chunk(self, chunk):
        """The results of a run of elements, and the error that stopped it (or None): the
        elements before a failing one still come out, in order, before its error."""
        results = []
        try:
            for element in chunk:
                results.append(self._call(element))
        except Exception as error:  # noqa: BLE001 - re-raised in order by the consumer
            return results, error
        return results, None


class FilterDataset(_Unary):
    def __init__(self, source, predicate):
        super().__init__(source)
        self._predicate = predicate
        self._call, spec = trace_map_function(predicate, source.element_spec,
                                              "Dataset.filter")
        # TF's rule: the result need only be compatible with a scalar bool (a py_function's
        # result has an unknown shape); each value is checked as it arrives.
        if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.bool_ or \
                not spec.shape.is_compatible_with(TensorShape([])):
            raise ValueError("Dataset.filter: invalid `predicate`: it must return a scalar "
                             f"bool tensor, but its return type is {spec}")
        self._checked = spec.shape.rank != 0

    def _iterate(self):
        for element in self._source._iterate():
            keep = self._call(element)
            if self._checked and keep.shape.rank != 0:
                raise InvalidArgumentError(
                    "FilterDataset", f"Filter predicate `{_name(self._predicate)}` must "
                    f"return a scalar bool, but it returned a tensor of shape {keep.shape}")
            if bool(keep.numpy()):
                yield element

    def _cardinality(self):
        n = self._source._cardinality()
        return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY
