"""`ConcreteFunction`: one trace of a Python function, for one input signature.

It owns the traced module (a `func.func` and its callees), maps a call's arguments onto its
parameters (tensors become arguments; Python values are fixed at trace time and must be
passed again unchanged), and runs: through its executor (executor.py: compiled code per input
shapes, else the reference interpreter), or inside another trace as a `func.call`. Its
optimisation stages are stages.py, what it keeps of arguments and results structures.py,
its fast entry fast_path.py, its input and output tensors concrete_io.py.
"""

from __future__ import annotations

import inspect
import io
import threading
from typing import Any, Callable

import numpy as np
from mlir import ir
from mlir.dialects import func

from ember import backends
from ember.backends.cpu import host_calls
from ember.backends.interpreter import Interpreter
from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend import nest
from ember.frontend.autodiff import recording
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tracing import FuncGraph, OutOfScopeError, SymbolicTensor, current_graph
from ember.frontend.variables import Variable
from ember.passes.ir_utils import symbol_name
from ember.passes.pipeline import Pipeline
from ember.runtime.call_gradients import call_recorded
from ember.runtime.concrete_io import ConcreteIO
from ember.runtime.executor import Executor, constant_digests
from ember.runtime.fast_path import make_entry
from ember.runtime.structures import (WeakValue, describe, hold_weakly, is_result, live,
                                      same_python_value)
from ember.runtime.traceback_filter import filtered


class ConcreteFunction(ConcreteIO):
    """A traced function with a fixed input signature (tf.types.experimental.ConcreteFunction).

    Call it with the same arguments as the Python function: tensors (or values convertible
    to tensors of the traced dtype and a compatible shape) where it was traced with tensors,
    and the very Python values it was traced with elsewhere.
    """

    def __init__(self, name: str, graph: FuncGraph, signature: inspect.Signature,
                 templates: dict[str, Any], outputs: Any, output_leaves: list,
                 pipeline: Pipeline | None = None, compile_enabled: bool = True,
                 backend: str = "cpu", owner=None):
        self.name, self._owner = name, owner  # owner: the Function that traced it
        self._graph, self._signature = graph, signature
        # parameter -> its trace-time value (placeholders inside); objects the trace is
        # keyed on by weak reference are held weakly here too (see WeakValue)
        self._stored_templates = {n: hold_weakly(t) for n, t in templates.items()}
        self._any_weak = any(type(leaf) is WeakValue for t in self._stored_templates.values()
                             for leaf in nest.flatten(t))
        self._outputs = outputs  # structured outputs, with SymbolicTensors
        self._output_leaves = output_leaves  # per leaf: index into results, or a Python value
        self._pipeline = pipeline
        self._optimized: Optimized | None = None  # on first need (stages.py)
        self._optimized_lock = threading.Lock()
        self._interpreter: Interpreter | None = None
        self._call_gradients: dict = {}  # runtime/call_gradients.py
        # Compiled code is cached under the traced module (its bytecode, locations included:
        # 20x faster to write than its text) and the pipeline when the pipeline is Ember's
        # own (its code is in the cache key): a cache hit never runs the pipeline. A user's
        # pass could change without the key changing: then the optimised text is the key.
        # Large captured constants are arguments (tracing.py): their bytes' hash is keyed.
        source = None
        constants = constant_digests(graph)
        if compile_enabled and (pipeline is None or pipeline.is_builtin()):
            traced = io.BytesIO()
            graph.module.operation.write_bytecode(traced)
            source = f"{pipeline or ''}\n{traced.getvalue().hex()}{constants}"
        else:
            self._ensure_optimized()
            if compile_enabled and constants:
                source = f"optimized\n{self._optimized_text()}{constants}"
        self._executor = Executor(name, self._optimized_text, graph.symbol,
                                  self._get_interpreter, compile_enabled, source_key=source,
                                  pipeline=str(pipeline) if pipeline else "", tier0=graph,
                                  backend=host_calls.bound(backends.get(backend), graph))

    @property
    def _templates(self) -> dict:
        if not self._any_weak:
            return self._stored_templates
        return {n: live(t) for n, t in self._stored_templates.items()}

    def _ensure_optimized(self) -> Optimized:
        """Runs the pipeline on first need (a compile that misses the caches, the interpreter,
        `mlir("optimized")`, statistics) and keeps the result."""
        if self._optimized is None:
            with self._optimized_lock:
                if self._optimized is None:
                    from ember.runtime.stages import optimize  # (not needed by a cached call)
                    self._optimized = optimize(self._graph, self._pipeline)
        return self._optimized

    def _optimized_text(self) -> str:
        return self._ensure_optimized().module.operation.get_asm(enable_debug_info=True)

    def _get_interpreter(self) -> Interpreter:
        if self._interpreter is None:
            module = self._ensure_optimized().module
            self._interpreter = Interpreter(module, callbacks=self._graph.callbacks)
        return self._interpreter

    # -- introspection ----------------------------------------------------------------------
    def ir_diff_report(self, path: str) -> str:  # what each pass did, one HTML page
        from ember.runtime.graph_view import ir_diff_report  # (graph_view.py: its docs)
        return ir_diff_report(self, path)

    @property
    def graph(self) -> GraphView:
        from ember.runtime.graph_view import GraphView
        return GraphView(self._graph)

    @property
    def created_variables(self) -> tuple:
        """The em.Variables this trace created (only a first trace may create any)."""
        return tuple(self._graph.created_variables)

    @property
    def variables(self) -> tuple:
        return tuple(obj for kind, obj in self._graph.extra_args if kind == "variable")

    def mlir(self, stage: str = "optimized") -> str:
        """The module text at `stage`: "traced" (as recorded from Python), "optimized"
        (after the Function's pipeline, `ember-optimize` by default) or one of the
        backend's stages ("linalg", "bufferized", "llvm", "llvmir", "asm" on the CPU):
        compiler_ir.py."""
        stages = self._ensure_optimized().stages
        if stage not in stages:
            from ember.runtime.compiler_ir import lowered
            return lowered(self, stage)
        return stages[stage]

    def pass_statistics(self) -> dict[str, dict[str, int]]:
        """Per pass of the optimisation pipeline, its counters (ops folded, hoisted, ...)."""
        report = self._ensure_optimized().report
        if report is None:
            return {}
        out: dict[str, dict[str, int]] = {}
        for stats in report.statistics:
            merged = out.setdefault(stats.pass_name, {})
            for key, value in stats.as_dict().items():
                merged[key] = merged.get(key, 0) + value
        return out

    @property
    def compiled_tiers(self) -> dict:
        """Per compiled specialisation (its inputs' (shape, dtype)s): "fast" or "full"."""
        return self._executor.tiers()

    def pass_timings(self) -> list[tuple[str, float]]:
        """(pass, seconds) for each step of the optimisation pipeline."""
        report = self._ensure_optimized().report
        return [] if report is None else list(report.timings)

    def pretty_printed_signature(self, verbose: bool = True) -> str:
        """`ConcreteFunction name(args)`, then the argument and return types."""
        return f"ConcreteFunction {self.signature_summary(verbose)}"

    def signature_summary(self, verbose: bool = True) -> str:
        """`name(args)`, then the argument and return types (per trace, as TF lists them)."""
        params, arg_lines = [], []
        for name, param in self._signature.parameters.items():
            template = self._templates[name]
            if _has_tensor(template):
                params.append(name)
                arg_lines.append(f"    {name}: {describe(template)}")
            else:
                params.append(f"{name}={template!r}")
        lines = [f"{self.name}({', '.join(params)})"]
        if arg_lines:
            lines += ["  Args:", *arg_lines]
        lines += ["  Returns:", f"    {describe(self._outputs)}"]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.pretty_printed_signature()

    __str__ = __repr__

    # -- calling -----------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        try:
            if recording.recording() and self._owner is not None:
                return call_recorded(self._owner, args, kwargs, self)  # one op for the tapes
            graph = current_graph()
            borrowed = [] if graph is None else None  # a call's numpy arrays: not copied
            flat = self._flat_inputs(self.call_arguments(args, kwargs), borrowed)
            if graph is not None:
                return self.call_in_graph(graph, flat)
            return self.call_flat(flat, borrowed)
        except Exception as error:
            raise filtered(error)  # (traceback_filter.py)

    def call_arguments(self, args, kwargs) -> dict:
        """A call's arguments by parameter name, taken as TensorFlow does: like a call of the
        Python function (Python-valued parameters may be left out), or else with only the
        tensor parameters, in order (`cf = f.get_concrete_function(model, x); cf(x)`)."""
        try:
            return self._bind(args, kwargs)
        except TypeError as structured_error:
            try:
                return self._bind_tensor_parameters(args, kwargs)
            except TypeError:
                raise structured_error from None

    def _bind(self, args, kwargs) -> dict:
        """Binds a call like one of the Python function; a Python-valued parameter left out
        keeps its traced value (`square = pow.get_concrete_function(a=spec, b=2); square(x)`)."""
        try:
            bound = self._signature.bind_partial(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"ConcreteFunction {self._pretty_name()}: {e}") from None
        bound.apply_defaults()
        arguments = {}
        for name, template in self._templates.items():
            if name in bound.arguments:
                arguments[name] = bound.arguments[name]
            elif _has_tensor(template):
                raise TypeError(f"ConcreteFunction {self._pretty_name()}: missing a required "
                                f"tensor argument '{name}'")
            else:
                arguments[name] = template
        return arguments

    def _bind_tensor_parameters(self, args, kwargs) -> dict:
        """Binds a call that passes only the tensor parameters (positionally, in order, or
        by name); the Python-valued ones keep their traced values."""
        names = [n for n, t in self._templates.items() if _has_tensor(t)]
        flat_name = f"{self.name}({', '.join(names)})"
        if len(args) > len(names):
            raise TypeError(f"{flat_name} takes {len(names)} tensor arguments but "
                            f"{len(args)} were given")
        given = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in given:
                raise TypeError(f"{flat_name} got an unexpected or repeated keyword "
                                f"argument: {key}")
            given[key] = value
        missing = [n for n in names if n not in given]
        if missing:
            raise TypeError(f"{flat_name} is missing tensor arguments: {', '.join(missing)}")
        return {n: given.get(n, t) for n, t in self._templates.items()}

    def _pretty_name(self) -> str:
        """`name(a, b)`: the function and its parameters, as errors show it."""
        return f"{self.name}({', '.join(self._templates)})"

    def fast_entry(self, args: tuple):
        """A callable running exactly these argument types on compiled code with no Python
        work beyond data pointers and output allocation, or None if this call needs the
        general path (keyword or default arguments, variables, interpreter fallback)."""
        return make_entry(args, list(self._signature.parameters.values()), self._templates,
                          self._graph.extra_args, self._executor.compiled, self._fast_pack)

    def watch_fast_entry(self, entry, dropped: Callable[[], None]) -> None:
        """Calls `dropped()` when the executable behind `entry` (from fast_entry) leaves
        this function's cache or is replaced by another tier (tiers.py): the holder of
        `entry` must drop it then, so that the machine code can be freed."""
        self._executor.watch(entry.shapes, dropped, entry.exe)

    def _fast_pack(self):
        leaves = self._output_leaves
        if len(leaves) == 1 and is_result(leaves[0]) and isinstance(self._outputs,
                                                                    SymbolicTensor):
            dtype = self._outputs.dtype
            return lambda outs: Tensor._of_output(outs[0], dtype)
        return lambda outs: self._pack(self._wrap_results(outs))

    def _wrap_results(self, arrays) -> list[Tensor]:
        """The results as Tensors of the traced result dtypes (checked by the constructor)."""
        dtypes_ = self._graph.result_dtypes
        return [Tensor(np.asarray(a), dt) for a, dt in zip(arrays, dtypes_)]

    def _flat_inputs(self, arguments: dict, borrowed: list | None = None) -> list:
        """The call's tensors; given a `borrowed` list, numpy arrays' indices (not copied)."""
        flat = []
        for name, template in self._templates.items():
            actual = arguments[name]
            if nest.structure(actual) != nest.structure(template):
                raise TypeError(f"ConcreteFunction {self._pretty_name()}: argument {name} has "
                                f"structure {actual!r}, but it was traced with {template!r}")
            for expected, value in zip(nest.flatten(template), nest.flatten(actual)):
                if isinstance(expected, SymbolicTensor):
                    flat.append(self._check_tensor(name, len(flat), expected, value, borrowed))
                elif not same_python_value(expected, value):
                    raise TypeError(
                        f"ConcreteFunction {self._pretty_name()} was constructed with "
                        f"{type(expected).__name__} value {expected!r} in {name}, but was "
                        f"called with {type(value).__name__} value {value!r}.")
        return flat

    def _check_tensor(self, name: str, index: int, expected: SymbolicTensor, value,
                      borrowed: list | None = None) -> Tensor:
        if isinstance(value, Variable):
            value = value.read_value()
        try:
            if borrowed is not None and type(value) is np.ndarray and \
                    value.dtype is expected.dtype.np_dtype and value.dtype.kind != "O":
                t = Tensor(value, expected.dtype)  # what convert_to_tensor makes, uncopied
                borrowed.append(index)
            else:
                t = convert_to_tensor(value, dtype_hint=expected.dtype)
        except TypeError as e:
            raise InvalidArgumentError(self.name, f"input #{index} ({name}): {e}") from None
        if t.dtype is not expected.dtype:
            raise InvalidArgumentError(
                self.name, f"cannot compute {self.name} as input #{index} ({name}, zero-based) "
                f"was expected to be a {expected.dtype.name} tensor but is a {t.dtype.name} "
                "tensor")
        if not expected.shape.is_compatible_with(t.shape):
            raise InvalidArgumentError(
                self.name, f"input #{index} ({name}) has shape {t.shape}, incompatible with "
                f"the traced shape {expected.shape}")
        return t

    def call_flat(self, flat: list[Tensor], borrowed=()):
        """Runs the function on the flat tensor inputs (`borrowed`: see Executor.run)."""
        args = [t._value if not isinstance(t, SymbolicTensor) else _eager_error(t) for t in flat]
        for kind, obj in self._graph.extra_args:
            if kind == "variable":
                args.append(obj.handle)
            elif kind == "constant":
                args.append(obj._value)
            else:
                raise OutOfScopeError(
                    f"{self.name} captured {obj!r} from the trace of '{obj.graph.name}' and can "
                    "only be called inside that trace")
        extra = args[len(flat):]
        results = self._executor.run(args[:len(flat)], extra, borrowed, self._graph.extra_args)
        return self._pack(self._wrap_results(results))

    def call_in_graph(self, graph: FuncGraph, flat: list[Tensor]):
        """Emits a `func.call` of this function into `graph` (a nested call while tracing)."""
        self._copy_into(graph)
        operands = [graph.resolve(t) for t in flat] + graph.captures_of(self._graph)
        signature = ir.FunctionType(
            ir.TypeAttr(self._graph.func.attributes["function_type"]).value)
        with graph.context, graph.insertion_point(), graph.location():
            # a callee traced for `None` dims takes `?` where the caller knows the size
            operands = [v if v.type == t else
                        ir.Operation.create("tensor.cast", results=[t], operands=[v]).result
                        for v, t in zip(operands, signature.inputs)]
            call = func.CallOp(list(signature.results), self._graph.symbol, operands)
        return self._pack([graph.wrap(r, self.name) for r in call.results])

    def _copy_into(self, graph: FuncGraph) -> None:
        if self._graph.symbol in graph.callees:
            return
        with graph.context, ir.InsertionPoint(graph.module.body):
            for op in self._graph.module.body.operations:
                if (symbol := symbol_name(op)) not in graph.callees:
                    copy = op.clone()
                    if copy.regions[0].blocks:  # a nested function: only its caller uses it
                        copy.attributes["sym_visibility"] = ir.StringAttr.get("private")
                    graph.callees.add(symbol)
        graph.callbacks.update(self._graph.callbacks)

    def _pack(self, results: list):
        leaves = [results[leaf] if is_result(leaf) else leaf for leaf in self._output_leaves]
        return nest.pack_sequence_as(self._outputs, leaves)


def _has_tensor(template) -> bool:
    return any(isinstance(leaf, SymbolicTensor) for leaf in nest.flatten(template))


def _eager_error(t: SymbolicTensor):
    from ember.frontend.tracing import eager_use_error
    raise eager_use_error(t)
