"""`em.function` and `Function`: polymorphic dispatch over traced concrete functions.

`Function.__call__`: bind the arguments (`inspect.Signature`) -> the call's trace type -> look
up the cache -> on a miss, trace -> run the concrete function. Dispatch, as in TensorFlow:

  1. A cached trace serves a call if the call's type is a subtype of the trace's type.
  2. Among those, the most specific one (a subtype of all the others) is used.
  3. On a miss, trace with the call's type — or, with `reduce_retracing=True`, with the
     most specific common supertype of it and an earlier trace, so one trace serves both.

First, a call whose cheap key (fast_path.py) served before runs its compiled entry at once.
`input_signature` fixes the type (input_signature.py); retracing.py logs and warns of retraces.
Traces live as long as the Function, except one keyed on an object compared by weak reference
(trace_types.py), dropped when that object dies. Each trace keeps a bounded number of
compiled shape specialisations (executor.py, `config.set_compile_cache_limits`).

Only a first trace may create Variables; one that does is traced again and discarded (as in
TF); if that creates variables again, the call raises ValueError."""

from __future__ import annotations

import collections
import functools
import inspect
import threading
import types
import weakref
from typing import Any, Callable, Optional

from ember import backends
from ember.backends import compile_log
from ember.dialects.ember.types import TensorType
from ember.frontend import nest
from ember.frontend.autodiff import recording
from ember.frontend.autograph import convert as convert_control_flow
from ember.frontend.tensor import Tensor
from ember.frontend.trace_types import (PlaceholderContext, SequenceTraceType, TensorTraceType,
                                        TraceType, weak_referents)
from ember.frontend.tracing import FuncGraph, current_graph, graph_scope
from ember.frontend.user_code import definition_site
from ember.passes.pipeline import Pipeline
from ember.runtime import config
from ember.runtime.call_gradients import call_recorded
from ember.runtime.compiler_ir import CompilerIR
from ember.runtime.concrete import ConcreteFunction
from ember.runtime.structures import is_result, output_leaf, result_index
from ember.runtime.fast_path import MAX_FAST_ENTRIES, drop_entry, fast_key
from ember.runtime.input_signature import (check_call, check_signature, per_parameter,
                                           type_of_argument, unexpected_keyword)
from ember.runtime.retracing import RetraceLog
from ember.runtime.traceback_filter import filtered
from ember.runtime.type_hints import convert_hinted, tensor_parameters

DEFAULT_PIPELINE = "builtin.module(ember-optimize)"
_MAX_TRACE_DEPTH = 64


class _Tracing(threading.local):
    def __init__(self):
        self.keys: list = []  # (Function, key) being traced on this thread, outermost first


_tracing = _Tracing()


class Function(CompilerIR):
    """A Python function compiled per input signature (tf.function's Function)."""

    def __init__(self, python_function: Callable, input_signature=None, autograph: bool = True,
                 reduce_retracing: bool = False, backend: str = "cpu",
                 jit_compile: bool = True, name: Optional[str] = None,
                 pipeline: Optional[str] = DEFAULT_PIPELINE, follow_type_hints: bool = False):
        if not callable(python_function):
            raise TypeError(f"em.function needs a callable, got {python_function!r}")
        backend = backends.check_backend(backend, runs=jit_compile)
        self._pipeline_text = pipeline
        self._pipeline = Pipeline.parse(pipeline) if pipeline else None
        self._python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self._signature = inspect.signature(python_function)
        self._definition = definition_site(python_function)
        self._input_signature = check_signature(input_signature, self._signature, self._name)
        self._covered = per_parameter(self._input_signature, self._signature)  # (for *args)
        self._follow_type_hints = bool(follow_type_hints)  # ignored with a signature, as TF
        self._hinted = tensor_parameters(python_function) \
            if follow_type_hints and input_signature is None else frozenset()
        self._autograph = autograph
        self._reduce_retracing = reduce_retracing
        self._backend = backend
        self._jit_compile = jit_compile
        self._traces: list[tuple[TraceType, ConcreteFunction]] = []
        self._exact: dict[TraceType, ConcreteFunction] = {}
        self._lock = threading.RLock()
        self._log = RetraceLog(self._name)
        self._bound: Any = weakref.WeakKeyDictionary()
        self._fast: dict = {}  # cheap call key -> compiled entry (fast_path.py)
        self._weak_keys: dict = {}  # trace key -> weakrefs to the objects it is keyed on
        self._dead_keys: list = []  # trace keys whose objects died, not yet dropped
        self._tracing_depth = 0  # > 0 while this thread, holding _lock, traces
        functools.update_wrapper(self, python_function)

    # -- public API ---------------------------------------------------------------------------

    @property
    def python_function(self) -> Callable:
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

    def experimental_get_tracing_count(self) -> int:
        """How many times the function was traced (dropped traces included)."""
        return len(self._log.retraces)

    def __call__(self, *args, **kwargs):
        try:
            if config.functions_run_eagerly():
                return self._python_function(*args, **kwargs)
            if recording.recording():
                return call_recorded(self, args, kwargs)  # as one op: call_gradients.py
            cheap = None if kwargs or current_graph() is not None else fast_key(args)
            if cheap is not None:
                entry = self._fast.get(cheap)
                if entry is not None:
                    log = self._log  # no lock on the fast path: a count may be lost, not more
                    log.calls += 1
                    log.recent.append(False)
                    return entry(args)
            concrete = self._concrete_for(bound := self._bind(args, kwargs))
            result = concrete(*bound.args, **bound.kwargs)
        except Exception as error:
            raise filtered(error)  # (this frame stays: Ember's one, as TensorFlow's does)
        if cheap is not None and any(a is not b for a, b in zip(bound.args, args)):
            cheap = None  # converted to the input_signature's dtypes: the general path
        if cheap is not None and len(self._fast) < MAX_FAST_ENTRIES:
            entry = concrete.fast_entry(args)
            if entry is not None:
                self._fast[cheap] = entry
                concrete.watch_fast_entry(entry, functools.partial(drop_entry, self._fast,
                                                                   cheap, entry))
        return result

    def _concrete_for(self, bound: inspect.BoundArguments) -> ConcreteFunction:
        """The concrete function a call with `bound` arguments runs (traced on a miss)."""
        key = self._call_type(bound)
        concrete = self._lookup(key)
        if concrete is not None:
            self._log.count_call(traced=False)
        return concrete or self._trace(key, bound, count_call=True)

    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The concrete function for these arguments (tensors, TensorSpecs or Python values),
        tracing it if needed. With an input_signature and no arguments, the signature's."""
        if not args and not kwargs and self._input_signature is not None:
            args = self._input_signature
        try:
            bound = self._bind(args, kwargs, specs_allowed=True)
            key = self._call_type(bound)
            return self._lookup(key) or self._trace(key, bound, count_call=False)
        except Exception as error:
            raise filtered(error)

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        return "\n\n".join(cf.signature_summary(verbose) for _, cf in self._traces)

    def explain_retrace(self) -> str:
        """Every trace of this function and why it was made (which argument changed how)."""
        return self._log.explain()

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:  # unhashable instance: one Function per call site is still right
            bound = None
        if bound is None:
            bound = Function(types.MethodType(self._python_function, instance),
                             input_signature=self._input_signature,
                             autograph=self._autograph, reduce_retracing=self._reduce_retracing,
                             backend=self._backend, jit_compile=self._jit_compile,
                             name=self._name, pipeline=self._pipeline_text,
                             follow_type_hints=self._follow_type_hints)
            try:
                self._bound[instance] = bound
            except TypeError:
                pass
        return bound

    def __repr__(self) -> str:
        return f"<em.function {self._name} ({len(self._traces)} traces)>"

    # -- binding and types ----------------------------------------------------------------

    def _bind(self, args, kwargs, specs_allowed: bool = False) -> inspect.BoundArguments:
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self._name}{self._signature}: "
                            f"{unexpected_keyword(self._signature, kwargs) or e}") from None
        if self._hinted:  # before the defaults: only what the caller passed (as TF)
            convert_hinted(bound, self._hinted, self._name, self._definition)
        bound.apply_defaults()
        if self._covered is not None:
            check_call(bound, self._signature, self._covered, self._name)
        return bound

    def _call_type(self, bound: inspect.BoundArguments) -> SequenceTraceType:
        names, parts = [], []
        for i, name in enumerate(self._signature.parameters):
            value = bound.arguments[name]
            if self._covered is not None and i < len(self._covered):
                value = self._covered[i]
            names.append(name)
            parts.append(type_of_argument(value))
        return SequenceTraceType(tuple, tuple(parts), tuple(names))

    # -- the cache ------------------------------------------------------------------------

    def _lookup(self, key: TraceType) -> Optional[ConcreteFunction]:
        hit = self._exact.get(key)
        if hit is not None:
            return hit
        matches = [(k, cf) for k, cf in list(self._traces) if key.is_subtype_of(k)]
        if not matches:
            return None
        for k, cf in matches:
            if all(k.is_subtype_of(other) for other, _ in matches):
                return cf
        return matches[0][1]

    def _trace(self, key, bound, count_call: bool) -> ConcreteFunction:
        with self._lock:
            found = self._lookup(key)
            if found is not None:
                if count_call:
                    self._log.count_call(traced=False)
                return found
            self._check_recursion(key)
            trace_key = self._relaxed(key) if self._reduce_retracing else key
            first = not self._traces
            _tracing.keys.append((self, key))
            self._tracing_depth += 1
            try:
                with compile_log.stage(f"trace {self._name}"):
                    concrete = self._make_concrete(trace_key, bound)
                if first and concrete.created_variables:
                    self._check_no_new_variables(trace_key, bound)
                self._log.record(trace_key, count_call)
                self._traces.append((trace_key, concrete))
                self._exact[trace_key] = concrete
                self._watch_weak_keys(trace_key)
            finally:
                _tracing.keys.pop()
                self._tracing_depth -= 1
                if not self._tracing_depth:
                    self._drop_dead_traces()
            return concrete

    def _watch_weak_keys(self, key: TraceType) -> None:
        """Drops the trace of `key` when an object it is keyed on by weak reference dies."""
        objects = weak_referents(key)
        if objects:
            died = functools.partial(_object_died, weakref.ref(self), key)
            self._weak_keys[key] = [weakref.ref(obj, died) for obj in objects]

    def _key_died(self, key: TraceType) -> None:
        # Runs wherever the garbage collector runs, possibly inside this Function's own
        # tracing: the trace lists are only rebuilt when no trace is under way.
        self._dead_keys.append(key)
        if self._lock.acquire(blocking=False):
            try:
                if not self._tracing_depth:
                    self._drop_dead_traces()
            finally:
                self._lock.release()

    def _drop_dead_traces(self) -> None:
        if not self._dead_keys:
            return
        dead = set()
        while self._dead_keys:  # pop: a key appended meanwhile by another thread stays
            dead.add(id(self._dead_keys.pop()))
        # dead keys equal nothing, not even themselves: match them by identity
        self._traces = [(k, cf) for k, cf in self._traces if id(k) not in dead]
        self._exact = {k: cf for k, cf in self._exact.items() if id(k) not in dead}
        self._weak_keys = {k: r for k, r in self._weak_keys.items() if id(k) not in dead}

    def _check_no_new_variables(self, key, bound) -> None:
        """Traces again, as a later call would, and discards the trace: if it creates
        variables too, they would be created anew on every call, which raises ValueError
        (TensorFlow checks a first call that creates variables the same way)."""
        self._make_concrete(key, bound, checking_variables=True)

    def _check_recursion(self, key) -> None:
        if len(_tracing.keys) >= _MAX_TRACE_DEPTH:
            raise RecursionError(f"em.function '{self._name}': more than {_MAX_TRACE_DEPTH} "
                                 "nested traces; is a Function recursing without end?")
        if any(fn is self and k == key for fn, k in _tracing.keys):
            raise RecursionError(
                f"em.function '{self._name}' calls itself with the same input types {key!r} "
                "while it is being traced, so tracing would never end. Recursion over tensors "
                "is not supported: write the loop with em.while_loop (or a Python `while` on "
                "tensors, converted by AutoGraph). Recursion on Python values is fine: it "
                "traces once per value.")

    def _relaxed(self, key: TraceType) -> TraceType:
        for old, _ in reversed(self._traces):
            joined = key.most_specific_common_supertype([old])
            if joined is not None:
                return joined
        return key

    # -- tracing --------------------------------------------------------------------------

    def _make_concrete(self, key: SequenceTraceType, bound,
                       checking_variables: bool = False) -> ConcreteFunction:
        graph = FuncGraph(self._name,
                          allow_variable_creation=not self._traces and not checking_variables,
                          checking_variables=checking_variables)
        templates = collections.OrderedDict()
        for name, ttype in zip(key.names, key.components):
            counter = [0]

            def make_tensor(t: TensorTraceType, name=name, counter=counter):
                label = name if counter[0] == 0 else f"{name}_{counter[0]}"
                counter[0] += 1
                return graph.placeholder(TensorType(t.dtype, t.shape), label,
                                         self._definition)
            value = bound.arguments[name]
            templates[name] = ttype.placeholder_value(PlaceholderContext(make_tensor, value))
        call = inspect.BoundArguments(self._signature, templates)
        with graph_scope(graph):
            try:
                traced = convert_control_flow(self._python_function) if self._autograph \
                    else self._python_function
                outputs = traced(*call.args, **call.kwargs)
                # inside the trace: a returned variable is read when the function runs
                outputs = nest.map_structure(output_leaf, outputs)
            except BaseException:
                graph.finalized = True
                raise
        leaves, returned = [], []
        for leaf in nest.flatten(outputs):
            if isinstance(leaf, Tensor):
                leaves.append(result_index(len(returned)))
                returned.append(leaf)
            else:
                leaves.append(leaf)
        graph.finalize(returned)
        returned_values = iter(graph.block.operations[-1].operands)  # (listing the ops: ~0.3 ms)
        final = nest.pack_sequence_as(outputs, [
            graph.wrap(next(returned_values), "Identity") if is_result(leaf) else leaf
            for leaf in leaves])
        compiles = self._jit_compile and backends.get(self._backend).compiles
        return ConcreteFunction(self._name, graph, self._signature, dict(templates), final,
                                leaves, pipeline=self._pipeline, compile_enabled=compiles,
                                backend=self._backend, owner=self)


def _object_died(function_ref, key, _) -> None:
    function = function_ref()
    if function is not None:
        function._key_died(key)
